//! Errors that stop a run before the proof starts (SPEC 1: exit status 2).
//!
//! An [`InputError`] is a `miette` diagnostic: its message starts with `file:line:column` (so it
//! reads well without the fancy renderer, in CI logs and in tests), it carries the file's text as a
//! [`NamedSource`] with a labelled span over the offending word, and a `help` saying the fix.
//! Errors about a file that could not be read, or with no place in a file, carry no source.

use std::ops::Range;
use std::path::Path;

use miette::{
    Diagnostic, LabeledSpan, MietteError, MietteSpanContents, NamedSource, SourceCode, SourceSpan,
    SpanContents,
};

use crate::input::files::ReadError;
use crate::input::source::{Loc, SourceFile, SourceMap};
use crate::input::visible::{visible, visible_lines};

/// Bad or unreadable input: the run cannot prove anything (exit 2).
///
/// `Display` is the whole message, `file:line:column: what is wrong` when the error has a place
/// (e.g. `graph.json:12:5: unknown node kind 'toolz'`); [`Diagnostic::help`] says the fix,
/// [`Diagnostic::source_code`] is the file and [`Diagnostic::labels`] mark the offending word (and
/// any related place in the same file). Boxed, so a `Result` carrying it stays small.
///
/// Everything it shows is safe to print (issue 14): text from an input is escaped
/// ([`crate::input::visible`]), and a file whose labelled lines are long (a minified export) or hold
/// control characters is shown through a clipped, escaped window of those lines (`Window`, in
/// `src/input/source/window.rs`), with the file's own line numbers.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.message)]
pub struct InputError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    /// The full message, with its `file:line:column: ` prefix when it has a place.
    message: String,
    /// The file the error points into, as read.
    file: Option<SourceFile>,
    /// The labels as byte spans of `file` (primary first).
    raw: Vec<(Option<String>, Range<usize>)>,
    /// What the renderer draws: the file, or a window of it.
    source_code: Option<Shown>,
    /// `raw`, mapped into `source_code`.
    labels: Vec<LabeledSpan>,
    /// The fix.
    help: Option<String>,
    /// `(file as displayed, line, column)` of the primary place, when there is one.
    location: Option<(String, u32, u32)>,
}

/// The text a renderer reads: the whole file, or a window of its lines numbered as in the file.
#[derive(Debug)]
enum Shown {
    Whole(NamedSource<String>),
    Window {
        name: String,
        text: String,
        /// Lines before the window's first (0-based line of its first line).
        skip: usize,
        /// The primary label's span in `text`, with its 0-based line and column in the file,
        /// which a renderer's `[file:line:column]` heading shows.
        primary: Option<(SourceSpan, usize, usize)>,
    },
}

impl SourceCode for Shown {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        match self {
            Shown::Whole(s) => s.read_span(span, before, after),
            Shown::Window {
                name,
                text,
                skip,
                primary,
            } => {
                let inner = text.read_span(span, before, after)?;
                let (line, column) = match primary {
                    Some((p, line, column)) if p == span && before == 0 && after == 0 => {
                        (*line, *column)
                    }
                    _ => (inner.line() + skip, inner.column()),
                };
                Ok(Box::new(MietteSpanContents::new_named(
                    name.clone(),
                    inner.data(),
                    *inner.span(),
                    line,
                    column,
                    inner.line_count(),
                )))
            }
        }
    }
}

impl Inner {
    /// Recomputes what the renderer draws from `file` and `raw`.
    fn draw(&mut self) {
        let Some(file) = &self.file else {
            self.source_code = None;
            self.labels.clear();
            return;
        };
        let spans: Vec<Range<usize>> = self.raw.iter().map(|(_, s)| s.clone()).collect();
        let name = visible(&file.display).into_owned();
        let label = |i: usize, (text, span): (&Option<String>, Range<usize>)| {
            let text = text.as_deref().map(|t| visible(t).into_owned());
            if i == 0 {
                LabeledSpan::new_primary_with_span(text, span)
            } else {
                LabeledSpan::new_with_span(text, span)
            }
        };
        if file.drawable(&spans) {
            self.source_code = Some(Shown::Whole(NamedSource::new(name, file.text.clone())));
            self.labels = self
                .raw
                .iter()
                .enumerate()
                .map(|(i, (t, s))| label(i, (t, s.clone())))
                .collect();
        } else {
            let w = file.window(&spans);
            self.labels = self
                .raw
                .iter()
                .zip(&w.spans)
                .enumerate()
                .filter_map(|(i, ((t, _), s))| s.clone().map(|s| label(i, (t, s))))
                .collect();
            let primary = match (w.spans.first(), self.raw.first()) {
                (Some(Some(ws)), Some((_, fs))) => {
                    let (line, column) = file.line_col(fs.start);
                    Some((
                        SourceSpan::from(ws.clone()),
                        line as usize - 1,
                        column as usize - 1,
                    ))
                }
                _ => None,
            };
            self.source_code = Some(Shown::Window {
                name,
                text: w.text,
                skip: w.first_line as usize - 1,
                primary,
            });
        }
    }
}

impl Diagnostic for InputError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new("stalwart::input"))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.0
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display + 'a>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.0.source_code.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.0.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.0.labels.iter().cloned()))
        }
    }
}

/// A help text, escaped; `None` when empty.
fn help_of(help: String) -> Option<String> {
    (!help.is_empty()).then(|| visible_lines(&help).into_owned())
}

impl InputError {
    /// An error at `loc` in a file of `sources`: the message is prefixed with `file:line:column`
    /// and the word starting at `loc` is labelled. `help` says how to fix it.
    pub(crate) fn at(
        sources: &SourceMap,
        loc: Loc,
        msg: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        let msg = msg.into();
        let help = help_of(help.into());
        match sources.files.get(loc.file) {
            Some(file) => {
                let line = loc.line.max(1);
                let column = loc.column.max(1);
                let span = file.word_span(Loc::new(loc.file, line, column));
                let mut inner = Inner {
                    message: visible_lines(&format!(
                        "{}:{}:{}: {}",
                        file.display, line, column, msg
                    ))
                    .into_owned(),
                    file: Some(file.clone()),
                    raw: vec![(Some("here".to_string()), span)],
                    source_code: None,
                    labels: Vec::new(),
                    help,
                    location: Some((file.display.clone(), line, column)),
                };
                inner.draw();
                InputError(Box::new(inner))
            }
            None => InputError::plain(msg, help.unwrap_or_default()),
        }
    }

    /// Like [`InputError::at`], but the label covers exactly `width` characters from `loc`
    /// (for a word inside a longer text, such as a flag inside a guard).
    pub(crate) fn at_width(
        sources: &SourceMap,
        loc: Loc,
        width: usize,
        msg: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        let mut e = InputError::at(sources, loc, msg, help);
        if let (Some(file), Some(first)) = (sources.files.get(loc.file), e.0.raw.first_mut()) {
            let start = file.offset(loc.line.max(1), loc.column.max(1));
            let len: usize = file.text.get(start..).map_or(0, |rest| {
                rest.chars().take(width.max(1)).map(char::len_utf8).sum()
            });
            first.1 = start..start + len;
            e.0.draw();
        }
        e
    }

    /// A file that could not be read (missing, a FIFO, too large, not UTF-8, ...): names it.
    pub(crate) fn io(path: &Path, err: impl Into<ReadError>) -> InputError {
        let err = err.into();
        let help = err.help();
        let shown = path.display().to_string();
        match &err {
            ReadError::NotUtf8 { line, column } => {
                let mut e = InputError::plain(
                    format!("{shown}:{line}:{column}: cannot read {shown}: {err}"),
                    help,
                );
                e.0.location = Some((visible(&shown).into_owned(), *line, *column));
                e
            }
            _ => InputError::plain(format!("cannot read {shown}: {err}"), help),
        }
    }

    /// A file named at `loc` (the agent.yaml key that names it, such as `rulebook:`) that could
    /// not be read, or lies outside the workspace: located at `loc`, naming `what` (`the
    /// rulebook 'x'`) and the path as resolved, and printing nothing of the file itself.
    pub(crate) fn unreadable_at(
        sources: &SourceMap,
        loc: Loc,
        what: &str,
        shown: &str,
        err: &ReadError,
    ) -> InputError {
        let label = match err {
            ReadError::Outside(_) | ReadError::Escapes { .. } => "outside the repository",
            ReadError::GitFolder => "inside .git",
            ReadError::NotFound => "no such file",
            _ => "cannot read",
        };
        let help = match err {
            ReadError::NotFound => "check the path: it is read relative to agent.yaml's folder",
            _ => err.help(),
        };
        InputError::at(
            sources,
            loc,
            format!("cannot read {what} ({shown}): {err}"),
            help,
        )
        .with_label(label)
    }

    /// An error with no place in a file.
    pub(crate) fn plain(msg: impl Into<String>, help: impl Into<String>) -> InputError {
        InputError(Box::new(Inner {
            message: visible_lines(&msg.into()).into_owned(),
            file: None,
            raw: Vec::new(),
            source_code: None,
            labels: Vec::new(),
            help: help_of(help.into()),
            location: None,
        }))
    }

    /// Replaces the primary label's text (default `here`).
    pub(crate) fn with_label(mut self, label: impl Into<String>) -> InputError {
        if let Some(first) = self.0.raw.first_mut() {
            first.0 = Some(label.into());
            self.0.draw();
        }
        self
    }

    /// Adds a secondary label at `loc` when it lies in the same file as the primary place
    /// (e.g. "first declared here" for a duplicate).
    pub(crate) fn also_at(
        mut self,
        sources: &SourceMap,
        loc: Loc,
        label: impl Into<String>,
    ) -> InputError {
        let Some(file) = sources.files.get(loc.file) else {
            return self;
        };
        let same = matches!(&self.0.location, Some((display, _, _)) if *display == file.display);
        if same && !self.0.raw.is_empty() {
            let span = file.word_span(loc);
            self.0.raw.push((Some(label.into()), span));
            self.0.draw();
        }
        self
    }

    /// The message, with its `file:line:column: ` prefix when it has a place.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The fix, if any.
    pub fn help_text(&self) -> Option<&str> {
        self.0.help.as_deref()
    }

    /// `(file as displayed, 1-based line, 1-based column)` of the offending word, if any.
    pub fn location(&self) -> Option<(&str, u32, u32)> {
        self.0
            .location
            .as_ref()
            .map(|(f, l, c)| (f.as_str(), *l, *c))
    }
}
