//! Errors that stop a run before the proof starts (SPEC 1: exit status 2).
//!
//! An [`InputError`] is a `miette` diagnostic: its message starts with `file:line:column` (so it
//! reads well without the fancy renderer, in CI logs and in tests), it carries the file's text as a
//! [`NamedSource`] with a labelled span over the offending word, and a `help` saying the fix.
//! Errors about a file that could not be read, or with no place in a file, carry no source.

use std::path::Path;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};

use crate::source::{Loc, SourceMap};

/// Bad or unreadable input: the run cannot prove anything (exit 2).
///
/// `Display` is the whole message, `file:line:column: what is wrong` when the error has a place
/// (e.g. `graph.json:12:5: unknown node kind 'toolz'`); [`Diagnostic::help`] says the fix,
/// [`Diagnostic::source_code`] is the file and [`Diagnostic::labels`] mark the offending word (and
/// any related place in the same file). Boxed, so a `Result` carrying it stays small.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.message)]
pub struct InputError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    /// The full message, with its `file:line:column: ` prefix when it has a place.
    message: String,
    /// The file the error points into.
    source_code: Option<NamedSource<String>>,
    /// The offending word (primary label first), and any related place in the same file.
    labels: Vec<LabeledSpan>,
    /// The fix.
    help: Option<String>,
    /// `(file as displayed, line, column)` of the primary place, when there is one.
    location: Option<(String, u32, u32)>,
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

impl InputError {
    /// An error at `loc` in a file of `sources`: the message is prefixed with `file:line:column`
    /// and the word starting at `loc` is labelled. `help` says how to fix it.
    pub fn at(
        sources: &SourceMap,
        loc: Loc,
        msg: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        let msg = msg.into();
        let help = help.into();
        let help = (!help.is_empty()).then_some(help);
        match sources.files.get(loc.file) {
            Some(file) => {
                let line = loc.line.max(1);
                let column = loc.column.max(1);
                let span = file.word_span(Loc::new(loc.file, line, column));
                InputError(Box::new(Inner {
                    message: format!("{}:{}:{}: {}", file.display, line, column, msg),
                    source_code: Some(NamedSource::new(file.display.clone(), file.text.clone())),
                    labels: vec![LabeledSpan::new_primary_with_span(
                        Some("here".to_string()),
                        span.start..span.end,
                    )],
                    help,
                    location: Some((file.display.clone(), line, column)),
                }))
            }
            None => InputError(Box::new(Inner {
                message: msg,
                source_code: None,
                labels: Vec::new(),
                help,
                location: None,
            })),
        }
    }

    /// Like [`InputError::at`], but the label covers exactly `width` characters from `loc`
    /// (for a word inside a longer text, such as a flag inside a guard).
    pub fn at_width(
        sources: &SourceMap,
        loc: Loc,
        width: usize,
        msg: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        let mut e = InputError::at(sources, loc, msg, help);
        if let (Some(file), Some(first)) = (sources.files.get(loc.file), e.0.labels.first_mut()) {
            let start = file.offset(loc.line.max(1), loc.column.max(1));
            let len: usize = file.text.get(start..).map_or(0, |rest| {
                rest.chars().take(width.max(1)).map(char::len_utf8).sum()
            });
            *first = LabeledSpan::new_primary_with_span(
                first.label().map(str::to_string),
                start..start + len,
            );
        }
        e
    }

    /// A file that could not be read (missing, unreadable, not UTF-8): names it.
    pub fn io(path: &Path, err: std::io::Error) -> InputError {
        let what = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::InvalidData => "it is not UTF-8 text".to_string(),
            _ => err.to_string(),
        };
        InputError(Box::new(Inner {
            message: format!("cannot read {}: {}", path.display(), what),
            source_code: None,
            labels: Vec::new(),
            help: Some("check the path, and that the file is readable UTF-8 text".to_string()),
            location: None,
        }))
    }

    /// An error with no place in a file.
    pub fn plain(msg: impl Into<String>, help: impl Into<String>) -> InputError {
        let help = help.into();
        InputError(Box::new(Inner {
            message: msg.into(),
            source_code: None,
            labels: Vec::new(),
            help: (!help.is_empty()).then_some(help),
            location: None,
        }))
    }

    /// Replaces the primary label's text (default `here`).
    pub fn with_label(mut self, label: impl Into<String>) -> InputError {
        if let Some(first) = self.0.labels.first_mut() {
            first.set_label(Some(label.into()));
        }
        self
    }

    /// Adds a secondary label at `loc` when it lies in the same file as the primary place
    /// (e.g. "first declared here" for a duplicate).
    pub fn also_at(
        mut self,
        sources: &SourceMap,
        loc: Loc,
        label: impl Into<String>,
    ) -> InputError {
        let Some(file) = sources.files.get(loc.file) else {
            return self;
        };
        let same = matches!(&self.0.location, Some((display, _, _)) if *display == file.display);
        if same && !self.0.labels.is_empty() {
            let span = file.word_span(loc);
            self.0.labels.push(LabeledSpan::new_with_span(
                Some(label.into()),
                span.start..span.end,
            ));
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
