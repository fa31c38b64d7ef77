//! The files a run reads and positions in them.
//!
//! A [`Loc`] is symbolic until an output needs it: it names a file of the [`SourceMap`] by index and
//! a 1-based line and column. The outputs turn it into a `file:line`, a byte span (for miette,
//! codespan-reporting and ariadne) or a repository-relative SARIF URI, all in this one place.

use std::path::{Path, PathBuf};

mod window;
pub use window::MAX_WINDOW_LINE;

/// Index of a file in the [`SourceMap`].
pub(crate) type FileId = usize;

/// A position in a source file: 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Loc {
    /// The file, an index into [`SourceMap::files`].
    pub file: FileId,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl Loc {
    /// A position in `file`.
    pub fn new(file: FileId, line: u32, column: u32) -> Loc {
        Loc { file, line, column }
    }
}

/// One file that was read.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as the user gave it (or as resolved from another file), used in messages.
    pub display: String,
    /// The path on disk.
    pub path: PathBuf,
    /// The full text.
    pub(crate) text: String,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Byte offset of `line`:`column` (1-based), clamped into the file.
    pub(crate) fn offset(&self, line: u32, column: u32) -> usize {
        let li = (line.max(1) as usize - 1).min(self.line_starts.len().saturating_sub(1));
        let start = self.line_starts.get(li).copied().unwrap_or(0);
        let end = self
            .line_starts
            .get(li + 1)
            .copied()
            .unwrap_or(self.text.len());
        let line_text = &self.text[start..end];
        let col = column.max(1) as usize - 1;
        let within = line_text
            .char_indices()
            .nth(col)
            .map(|(i, _)| i)
            .unwrap_or_else(|| line_text.trim_end_matches(['\n', '\r']).len());
        start + within
    }

    /// 1-based line and column of byte `offset`.
    pub(crate) fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let li = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(li).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(0);
        (li as u32 + 1, col as u32 + 1)
    }

    /// The text of 1-based `line`, without its line break.
    pub(crate) fn line_text(&self, line: u32) -> &str {
        let li = line.max(1) as usize - 1;
        let Some(&start) = self.line_starts.get(li) else {
            return "";
        };
        let end = self
            .line_starts
            .get(li + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// The 1-based line a location's `line` lands on: clamped into the file, as [`Self::offset`]
    /// clamps it (a line past the end is the last line).
    pub(crate) fn clamp_line(&self, line: u32) -> u32 {
        let last = u32::try_from(self.line_starts.len())
            .unwrap_or(u32::MAX)
            .max(1);
        line.clamp(1, last)
    }

    /// True when 1-based `line` (clamped) has more than `max` characters; looks at no more than
    /// `max + 1` of them, so a 60 MB line costs no more than a short one.
    pub(crate) fn line_longer_than(&self, line: u32, max: usize) -> bool {
        let t = self.line_text(self.clamp_line(line));
        t.len() > max && t.chars().nth(max).is_some()
    }

    /// The line `loc` lands on, quoted (issue 26): at most [`MAX_QUOTE`] characters around its
    /// column, with `…` where the line was clipped (on character boundaries), and every character
    /// a terminal would act on escaped ([`crate::input::visible`]).
    pub fn quote(&self, loc: Loc) -> String {
        let t = self.line_text(self.clamp_line(loc.line));
        let col = loc.column.max(1) as usize - 1;
        let anchor = t.char_indices().nth(col).map_or(t.len(), |(i, _)| i);
        let before = MAX_QUOTE / 3;
        let from = t[..anchor]
            .char_indices()
            .rev()
            .take(before)
            .last()
            .map_or(anchor, |(i, _)| i);
        let shown: String = t[from..].chars().take(MAX_QUOTE).collect();
        let mut out = String::new();
        if from > 0 {
            out.push('…');
        }
        out.push_str(&crate::input::visible::visible(&shown));
        if from + shown.len() < t.len() {
            out.push('…');
        }
        out
    }

    /// Byte span of the word (up to whitespace, `:`, `,` or a bracket) that starts at `loc`.
    pub(crate) fn word_span(&self, loc: Loc) -> std::ops::Range<usize> {
        let start = self.offset(loc.line, loc.column);
        let rest = &self.text[start..];
        let len = rest
            .char_indices()
            .find(|&(i, c)| {
                c == '\n'
                    || (i > 0 && (c.is_whitespace() || matches!(c, ':' | ',' | ']' | '}' | '(')))
            })
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        start..start + len.max(usize::from(!rest.is_empty()))
    }
}

/// The most characters of one source line a report quotes where the line is too long to draw
/// whole ([`SourceFile::quote`]).
pub const MAX_QUOTE: usize = 200;

/// Every file a run read, so that any [`Loc`] can be shown.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    /// The files, indexed by [`FileId`].
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    /// Adds a file's text and returns its id. `display` is how messages name it.
    pub fn add(&mut self, display: String, path: PathBuf, text: String) -> FileId {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        self.files.push(SourceFile {
            display,
            path,
            text,
            line_starts,
        });
        self.files.len() - 1
    }

    /// The file with id `id`.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id]
    }

    /// `file:line`, as the report prints a location.
    pub(crate) fn file_line(&self, loc: Loc) -> String {
        format!("{}:{}", self.short_name(loc.file), loc.line)
    }

    /// The file's name as the report shows it: its last path component (`agent.yaml`).
    pub fn short_name(&self, id: FileId) -> String {
        let f = &self.files[id];
        Path::new(&f.display)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| f.display.clone())
    }
}
