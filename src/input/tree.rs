//! A position-keeping document tree for YAML and JSON, and the small typed getters every reader
//! uses (a mapping, a string, a bool, a number, a list of names), each failing with an
//! [`InputError`] that names the key, the shape it expects and the one it found.
//!
//! YAML is read with `marked-yaml` (which keeps a 1-based line and a 1-based character column for
//! every node, and tells plain scalars from quoted ones). JSON is first read with `serde_json`, so a
//! syntax error is reported as `serde_json` words it, at its line and column; the tree itself then
//! comes from the small JSON reader below. JSON is YAML 1.2, but `marked-yaml`'s scanner
//! (yaml-rust2) rejects some valid JSON that real exports contain (a tab after `:`, a
//! surrogate-pair `\u` escape), so JSON gets its own position-keeping reader.
//!
//! Scalars keep their text and whether they were written plain (unquoted): only a plain `null`, `~`
//! or empty value is null, only a plain `true`/`false` is a bool, only a plain number is a number.
//! A quoted `"true"` is text.

use std::path::Path;

use crate::input::error::InputError;
use crate::input::ir::Named;
use crate::input::source::{FileId, Loc, SourceMap};

/// Nesting deeper than this is refused (a guard against stack exhaustion on hostile input).
const MAX_DEPTH: usize = 200;
/// A JSON map with this many keys finds a repeated key by hash rather than by scan.
const KEYS_BY_HASH: usize = 16;

/// A node of a document with where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// Where the node starts (for a quoted scalar: its opening quote).
    pub(crate) loc: Loc,
    /// The node.
    pub(crate) value: Value,
}

/// The three shapes a node can have.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// A scalar: its text (escapes resolved) and whether it was written plain (unquoted).
    Scalar { text: String, plain: bool },
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, in written order.
    Map(Vec<Entry>),
}

/// One `key: value` of a mapping.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The key's text.
    pub(crate) key: String,
    /// Where the key was written.
    pub(crate) key_loc: Loc,
    /// The value.
    pub(crate) value: Node,
}

impl Entry {
    /// The key as a [`Named`].
    pub(crate) fn named(&self) -> Named {
        Named {
            name: self.key.clone(),
            loc: self.key_loc,
        }
    }
}

impl Node {
    /// True for a plain `null`, `~` or empty scalar.
    pub(crate) fn is_null(&self) -> bool {
        match &self.value {
            Value::Scalar { text, plain } => {
                *plain && matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL")
            }
            _ => false,
        }
    }

    /// The bool of a plain `true`/`false` scalar.
    pub(crate) fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar { text, plain: true } => match text.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// The entries of a mapping.
    pub(crate) fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The text of a scalar that is neither null nor a plain bool.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } if !self.is_null() && self.as_bool().is_none() => Some(text),
            _ => None,
        }
    }

    /// What the node is, for messages: `a mapping`, `a list`, `null`, `the text "x"`, ...
    pub(crate) fn describe(&self) -> String {
        match &self.value {
            Value::Map(_) => "a mapping".to_string(),
            Value::Seq(_) => "a list".to_string(),
            Value::Scalar { text, plain } => {
                if self.is_null() {
                    "null".to_string()
                } else if let Some(b) = self.as_bool() {
                    format!("`{b}`")
                } else if *plain && text.parse::<f64>().is_ok() {
                    format!("the number {text}")
                } else {
                    let short: String = text.chars().take(40).collect();
                    let more = if text.chars().count() > 40 { "..." } else { "" };
                    if *plain {
                        format!("the text `{short}{more}`")
                    } else {
                        format!("the quoted text \"{short}{more}\"")
                    }
                }
            }
        }
    }

    /// The node as JSON (plain scalars become null, bools and numbers where they read as such).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Map(m) => J::Object(
                m.iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            ),
            Value::Seq(s) => J::Array(s.iter().map(Node::to_json).collect()),
            Value::Scalar { text, plain } => {
                if self.is_null() {
                    J::Null
                } else if let Some(b) = self.as_bool() {
                    J::Bool(b)
                } else if *plain {
                    if let Ok(i) = text.parse::<i64>() {
                        J::from(i)
                    } else if let Ok(u) = text.parse::<u64>() {
                        J::from(u)
                    } else if let Some(n) = text
                        .parse::<f64>()
                        .ok()
                        .filter(|_| looks_numeric(text))
                        .and_then(serde_json::Number::from_f64)
                    {
                        J::Number(n)
                    } else {
                        J::String(text.clone())
                    }
                } else {
                    J::String(text.clone())
                }
            }
        }
    }
}

/// True when `text` is spelled as a decimal number (not `inf`, `nan`, ...).
fn looks_numeric(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
        && text.chars().any(|c| c.is_ascii_digit())
}

/// Reads `path` into `sources` under `display` and returns its id, through the one reader
/// ([`crate::input::files::read_text`]: a regular file of at most 64 MiB, UTF-8, a byte-order mark
/// dropped).
pub(crate) fn read_file(
    sources: &mut SourceMap,
    path: &Path,
    display: String,
) -> Result<FileId, crate::input::files::ReadError> {
    let text = crate::input::files::read_text(path)?;
    Ok(sources.add(display, path.to_path_buf(), text))
}

/// True when the file should be read as JSON: a `.json` name, or any other name whose text starts
/// with `{` or `[` and is valid JSON (JSON is YAML, but the YAML scanner rejects some valid JSON).
pub(crate) fn is_json(path: &Path, text: &str) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if ext.as_deref() == Some("json") {
        return true;
    }
    matches!(text.trim_start().chars().next(), Some('{') | Some('['))
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Parses file `file` of `sources` (JSON or YAML by [`is_json`]) into a tree.
pub(crate) fn parse(sources: &SourceMap, file: FileId) -> Result<Node, InputError> {
    let Some(f) = sources.files.get(file) else {
        return Err(InputError::plain("internal error: unknown source file", ""));
    };
    if is_json(&f.path, &f.text) {
        parse_json(sources, file, &f.text)
    } else {
        parse_yaml(sources, file, &f.text)
    }
}

// ---------------------------------------------------------------------------------------------
// YAML

fn marker_loc(file: FileId, m: Option<&marked_yaml::Marker>) -> Loc {
    match m {
        Some(m) => Loc::new(
            file,
            u32::try_from(m.line()).unwrap_or(u32::MAX).max(1),
            u32::try_from(m.column()).unwrap_or(u32::MAX).max(1),
        ),
        None => Loc::new(file, 1, 1),
    }
}

fn parse_yaml(sources: &SourceMap, file: FileId, text: &str) -> Result<Node, InputError> {
    use marked_yaml::LoadError as E;
    let options = marked_yaml::LoaderOptions::default()
        .prevent_coercion(true)
        .error_on_duplicate_keys(true);
    // The loader asserts on event orders its parser never produces; a panic there is a bug in a
    // dependency, reported as an input error rather than a crash.
    let parsed =
        std::panic::catch_unwind(|| marked_yaml::parse_yaml_with_options(file, text, options));
    let parsed = match parsed {
        Ok(p) => p,
        Err(_) => {
            return Err(InputError::at(
                sources,
                Loc::new(file, 1, 1),
                "the YAML reader failed on this file",
                "simplify the file's YAML (plain mappings, lists and scalars) and try again",
            ))
        }
    };
    let yaml_help =
        "fix the YAML syntax here: indentation, a missing `:` or space after it, or an \
                     unclosed quote or bracket are the usual causes";
    let node = parsed.map_err(|e| match e {
        E::TopLevelMustBeMapping(m) | E::TopLevelMustBeSequence(m) => InputError::at(
            sources,
            marker_loc(file, Some(&m)),
            "the top level of this file must be a mapping of `key: value` lines",
            "start the file with its keys (for example `tools:`), not a list or a lone value",
        ),
        E::UnexpectedAnchor(m) => InputError::at(
            sources,
            marker_loc(file, Some(&m)),
            "YAML anchors and aliases (`&name`, `*name`) are not supported",
            "write the value out in full where it is used",
        ),
        E::MappingKeyMustBeScalar(m) => InputError::at(
            sources,
            marker_loc(file, Some(&m)),
            "a mapping key must be a plain word, not a list or a mapping",
            "use a word (or a quoted text) as the key",
        ),
        E::UnexpectedTag(m) => InputError::at(
            sources,
            marker_loc(file, Some(&m)),
            "YAML tags (`!!str`, `!name`) are not supported",
            "remove the tag; quote the value if it must be read as text",
        ),
        E::ScanError(m, se) => InputError::at(
            sources,
            marker_loc(file, Some(&m)),
            format!("invalid YAML: {}", se.info()),
            yaml_help,
        ),
        E::DuplicateKey(inner) => {
            let first = marker_loc(file, inner.prev_key.span().start());
            let second = marker_loc(file, inner.key.span().start());
            InputError::at(
                sources,
                second,
                format!(
                    "duplicate key '{}' (first written at line {})",
                    inner.key.as_str(),
                    first.line
                ),
                "remove one of the two, or merge them into one",
            )
            .with_label("written twice")
            .also_at(sources, first, "first written here")
        }
    })?;
    from_marked(sources, file, &node, 0)
}

fn from_marked(
    sources: &SourceMap,
    file: FileId,
    node: &marked_yaml::Node,
    depth: usize,
) -> Result<Node, InputError> {
    let loc = marker_loc(file, node.span().start());
    if depth > MAX_DEPTH {
        return Err(InputError::at(
            sources,
            loc,
            format!("the document nests deeper than {MAX_DEPTH} levels"),
            "flatten the document",
        ));
    }
    Ok(match node {
        marked_yaml::Node::Scalar(s) => Node {
            loc,
            value: Value::Scalar {
                text: s.as_str().to_string(),
                plain: s.may_coerce(),
            },
        },
        marked_yaml::Node::Sequence(items) => {
            let mut out = Vec::new();
            for item in items.iter() {
                out.push(from_marked(sources, file, item, depth + 1)?);
            }
            Node {
                loc,
                value: Value::Seq(out),
            }
        }
        marked_yaml::Node::Mapping(map) => {
            let mut out = Vec::new();
            for (k, v) in map.iter() {
                out.push(Entry {
                    key: k.as_str().to_string(),
                    key_loc: marker_loc(file, k.span().start()),
                    value: from_marked(sources, file, v, depth + 1)?,
                });
            }
            // A block mapping's own mark falls after its first key; the first key is where it
            // starts as the user sees it.
            let loc = match out.first() {
                Some(e) if (e.key_loc.line, e.key_loc.column) < (loc.line, loc.column) => e.key_loc,
                _ => loc,
            };
            Node {
                loc,
                value: Value::Map(out),
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// JSON

/// `serde_json`'s syntax error `e`, as it words it, at `line` of `file` and `e`'s column.
fn syntax_error(
    sources: &SourceMap,
    file: FileId,
    line: u32,
    e: &serde_json::Error,
    help: &str,
) -> InputError {
    let column = json_char_column(sources, file, line, e.column());
    let full = e.to_string();
    let msg = match full.rfind(" at line ") {
        Some(i) => full.get(..i).unwrap_or(&full).to_string(),
        None => full,
    };
    InputError::at(
        sources,
        Loc::new(file, line, column),
        format!("invalid JSON: {msg}"),
        help,
    )
}

fn parse_json(sources: &SourceMap, file: FileId, text: &str) -> Result<Node, InputError> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let line = u32::try_from(e.line()).unwrap_or(u32::MAX).max(1);
        return Err(syntax_error(
            sources,
            file,
            line,
            &e,
            "fix the JSON syntax here: a missing comma, quote or bracket, or a trailing comma, is \
             the usual cause",
        ));
    }
    let mut p = JsonReader {
        text,
        pos: 0,
        line: 1,
        column: 1,
        file,
    };
    p.ws();
    let node = p.value(0).map_err(|(loc, msg)| {
        InputError::at(
            sources,
            loc,
            format!("invalid JSON: {msg}"),
            "fix the JSON syntax here",
        )
    })?;
    Ok(node)
}

/// Parses line `line` (1-based) of file `file` of `sources` as one JSON value, keeping where each
/// value starts in the whole file (JSON Lines: one value a line). `serde_json` checks the line first,
/// so a syntax error is reported as it words it, at its line and column; `what` names the line in
/// the help (e.g. "a trace line"). Trailing whitespace is allowed; anything else after the value is
/// an error.
pub(crate) fn parse_json_line(
    sources: &SourceMap,
    file: FileId,
    line: u32,
    help: &str,
) -> Result<Node, InputError> {
    let Some(f) = sources.files.get(file) else {
        return Err(InputError::plain("internal error: unknown source file", ""));
    };
    let text = f.line_text(line);
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        // The line is the whole text serde_json saw: its own line is always 1.
        return Err(syntax_error(sources, file, line, &e, help));
    }
    let start = f.offset(line, 1);
    let mut p = JsonReader {
        text: f.text.get(..start + text.len()).unwrap_or(""),
        pos: start,
        line,
        column: 1,
        file,
    };
    p.ws();
    p.value(0)
        .map_err(|(loc, msg)| InputError::at(sources, loc, format!("invalid JSON: {msg}"), help))
}

/// serde_json counts columns in bytes (0 at the start of a line for an empty input); [`Loc`]
/// columns count characters from 1.
fn json_char_column(sources: &SourceMap, file: FileId, line: u32, byte_col: usize) -> u32 {
    let Some(f) = sources.files.get(file) else {
        return 1;
    };
    let text = f.line_text(line);
    let mut end = byte_col.min(text.len());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    let chars = text.get(..end).map(|s| s.chars().count()).unwrap_or(0);
    // serde_json's column is that of the last character read (1-based), or 0 before any.
    u32::try_from(chars.max(1)).unwrap_or(u32::MAX)
}

/// A small JSON reader that keeps where each value starts. It runs only on text `serde_json` has
/// accepted, but still fails softly on anything unexpected.
struct JsonReader<'t> {
    text: &'t str,
    pos: usize,
    line: u32,
    column: u32,
    file: FileId,
}

type JsonResult<T> = Result<T, (Loc, String)>;

impl JsonReader<'_> {
    fn loc(&self) -> Loc {
        Loc::new(self.file, self.line, self.column)
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.bump();
        }
    }

    fn expect(&mut self, want: char) -> JsonResult<()> {
        match self.bump() {
            Some(c) if c == want => Ok(()),
            Some(c) => Err((self.loc(), format!("expected `{want}`, found `{c}`"))),
            None => Err((
                self.loc(),
                format!("expected `{want}`, found the end of the file"),
            )),
        }
    }

    fn value(&mut self, depth: usize) -> JsonResult<Node> {
        let loc = self.loc();
        if depth > MAX_DEPTH {
            return Err((
                loc,
                format!("the document nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        match self.peek() {
            Some('{') => {
                self.bump();
                let mut entries: Vec<Entry> = Vec::new();
                // Keys by hash once the map is past a few (issue 14: a scan per key is
                // quadratic in a wide export's maps); below that a scan is cheaper.
                let mut keys: Option<std::collections::HashMap<String, usize>> = None;
                self.ws();
                if self.peek() == Some('}') {
                    self.bump();
                    return Ok(Node {
                        loc,
                        value: Value::Map(entries),
                    });
                }
                loop {
                    self.ws();
                    let key_loc = self.loc();
                    let key = self.string()?;
                    if keys.is_none() && entries.len() >= KEYS_BY_HASH {
                        keys = Some(
                            entries
                                .iter()
                                .enumerate()
                                .map(|(i, e)| (e.key.clone(), i))
                                .collect(),
                        );
                    }
                    let first = match &keys {
                        Some(k) => k.get(&key).and_then(|&i| entries.get(i)),
                        None => entries.iter().find(|e| e.key == key),
                    };
                    if let Some(first) = first {
                        return Err((
                            key_loc,
                            format!(
                                "duplicate key \"{key}\" (first written at line {})",
                                first.key_loc.line
                            ),
                        ));
                    }
                    self.ws();
                    self.expect(':')?;
                    self.ws();
                    let value = self.value(depth + 1)?;
                    if let Some(k) = keys.as_mut() {
                        k.insert(key.clone(), entries.len());
                    }
                    entries.push(Entry {
                        key,
                        key_loc,
                        value,
                    });
                    self.ws();
                    match self.bump() {
                        Some(',') => continue,
                        Some('}') => break,
                        _ => return Err((self.loc(), "expected `,` or `}`".to_string())),
                    }
                }
                Ok(Node {
                    loc,
                    value: Value::Map(entries),
                })
            }
            Some('[') => {
                self.bump();
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(']') {
                    self.bump();
                    return Ok(Node {
                        loc,
                        value: Value::Seq(items),
                    });
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.bump() {
                        Some(',') => continue,
                        Some(']') => break,
                        _ => return Err((self.loc(), "expected `,` or `]`".to_string())),
                    }
                }
                Ok(Node {
                    loc,
                    value: Value::Seq(items),
                })
            }
            Some('"') => {
                let text = self.string()?;
                Ok(Node {
                    loc,
                    value: Value::Scalar { text, plain: false },
                })
            }
            Some(_) => {
                let start = self.pos;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                {
                    self.bump();
                }
                let text = self.text.get(start..self.pos).unwrap_or("").to_string();
                if text.is_empty() {
                    return Err((loc, "expected a value".to_string()));
                }
                Ok(Node {
                    loc,
                    value: Value::Scalar { text, plain: true },
                })
            }
            None => Err((
                loc,
                "expected a value, found the end of the file".to_string(),
            )),
        }
    }

    fn hex4(&mut self) -> JsonResult<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let c = self
                .bump()
                .ok_or_else(|| (self.loc(), "unfinished \\u escape".to_string()))?;
            let d = c
                .to_digit(16)
                .ok_or_else(|| (self.loc(), "bad \\u escape".to_string()))?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    fn string(&mut self) -> JsonResult<String> {
        if self.peek() != Some('"') {
            return Err((self.loc(), "expected a quoted key".to_string()));
        }
        self.bump();
        let mut out = String::new();
        loop {
            let c = self
                .bump()
                .ok_or_else(|| (self.loc(), "unclosed string".to_string()))?;
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let e = self
                        .bump()
                        .ok_or_else(|| (self.loc(), "unclosed string".to_string()))?;
                    match e {
                        '"' => out.push('"'),
                        '\\' => out.push('\\'),
                        '/' => out.push('/'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi)
                                && self
                                    .text
                                    .get(self.pos..)
                                    .is_some_and(|s| s.starts_with("\\u"))
                            {
                                let save = (self.pos, self.line, self.column);
                                self.bump();
                                self.bump();
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    (self.pos, self.line, self.column) = save;
                                    0xFFFD
                                }
                            } else {
                                hi
                            };
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        }
                        other => return Err((self.loc(), format!("bad escape `\\{other}`"))),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Typed getters

/// The typed getters, with the [`SourceMap`] their errors point into.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    /// The files read so far.
    pub(crate) sources: &'a SourceMap,
}

/// A mapping being read: its entries and where it starts.
#[derive(Clone, Copy)]
pub(crate) struct Map<'n> {
    /// Where the mapping starts.
    pub(crate) loc: Loc,
    /// Its entries in written order.
    pub(crate) entries: &'n [Entry],
}

impl<'n> Map<'n> {
    /// The entry for `key`, if written.
    pub(crate) fn entry(&self, key: &str) -> Option<&'n Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The value under `key`, if written.
    pub(crate) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// The value under `key` unless absent or null.
    pub(crate) fn get_some(&self, key: &str) -> Option<&'n Node> {
        self.get(key).filter(|n| !n.is_null())
    }
}

impl<'a> Reader<'a> {
    /// Refuses a key of `m` (the map of `owner`: "node 'agent'", "agent 'desk'") that is not one
    /// of `known` but a small edit away from one ([`crate::input::suggest::nearest`]: `opaqe`,
    /// `hands_of_to`). `format` names the words' format (`qls-graph/1`, `agent.yaml`) and
    /// `unknown` says what its reader does with a key it does not know: ignoring it would silently
    /// drop what a misspelt word says from the proof. Any other unknown key is left to the
    /// caller. Errors: at the key, naming the word meant.
    pub(crate) fn refuse_misspelt(
        &self,
        m: Map<'_>,
        known: &[&str],
        owner: &str,
        format: &str,
        unknown: &str,
    ) -> Result<(), InputError> {
        for e in m.entries {
            if known.contains(&e.key.as_str()) {
                continue;
            }
            if let Some(meant) = crate::input::suggest::nearest(&e.key, known.iter().copied()) {
                return Err(self
                    .err(
                        e.key_loc,
                        format!("`{}` on {owner} is not a word of {format}: did you mean `{meant}`?", e.key),
                        format!(
                            "write `{meant}`; {unknown}, so a misspelt word would silently drop what it says \
                             from the proof (the words here: {})",
                            known.join(", ")
                        ),
                    )
                    .with_label(format!("did you mean `{meant}`?")));
            }
        }
        Ok(())
    }

    /// An error at `loc`.
    pub(crate) fn err(
        &self,
        loc: Loc,
        msg: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        InputError::at(self.sources, loc, msg, help)
    }

    fn shape_err(&self, node: &Node, what: &str, expected: &str, help: &str) -> InputError {
        self.err(
            node.loc,
            format!("{what} must be {expected}, found {}", node.describe()),
            help,
        )
        .with_label(format!("expected {expected}"))
    }

    /// `node` as a mapping; `what` names it in the error (e.g. "`budget`").
    pub(crate) fn map<'n>(&self, node: &'n Node, what: &str) -> Result<Map<'n>, InputError> {
        match node.as_map() {
            Some(entries) => Ok(Map {
                loc: node.loc,
                entries,
            }),
            None => Err(self.shape_err(node, what, "a mapping", "write it as `key: value` pairs")),
        }
    }

    /// `node` as a mapping, or an empty one when null.
    pub(crate) fn map_or_null<'n>(
        &self,
        node: &'n Node,
        what: &str,
    ) -> Result<Map<'n>, InputError> {
        if node.is_null() {
            return Ok(Map {
                loc: node.loc,
                entries: &[],
            });
        }
        self.map(node, what)
    }

    /// `node` as a list; null reads as an empty list.
    pub(crate) fn seq<'n>(&self, node: &'n Node, what: &str) -> Result<&'n [Node], InputError> {
        match &node.value {
            Value::Seq(items) => Ok(items),
            _ if node.is_null() => Ok(&[]),
            _ => Err(self.shape_err(
                node,
                what,
                "a list",
                "write it as `[a, b]` or as `- a` lines",
            )),
        }
    }

    /// `node` as text (a scalar that is neither null nor a plain `true`/`false`).
    pub(crate) fn text(&self, node: &Node, what: &str) -> Result<Named, InputError> {
        match node.as_text() {
            Some(t) => Ok(Named {
                name: t.to_string(),
                loc: node.loc,
            }),
            None => Err(self.shape_err(node, what, "text", "write a word or a quoted text")),
        }
    }

    /// The text under `key`, or `None` when absent or null.
    /// The optional word `key`, one of `choices` (word, value); another word is an error at it,
    /// naming `whose` (e.g. "agent 'desk'") and the words allowed.
    pub(crate) fn opt_choice<T: Copy>(
        &self,
        map: Map<'_>,
        key: &str,
        whose: &str,
        choices: &[(&str, T)],
    ) -> Result<Option<T>, InputError> {
        let Some(w) = self.opt_text(map, key, &format!("`{key}` of {whose}"))? else {
            return Ok(None);
        };
        if let Some((_, v)) = choices.iter().find(|(c, _)| *c == w.name) {
            return Ok(Some(*v));
        }
        let words: Vec<String> = choices
            .iter()
            .map(|(c, _)| format!("`{key}: {c}`"))
            .collect();
        let names: Vec<&str> = choices.iter().map(|(c, _)| *c).collect();
        Err(self
            .err(
                w.loc,
                format!("unknown {} '{}' on {whose}", key.replace('_', " "), w.name),
                format!("write {}", words.join(" or ")),
            )
            .with_label(names.join(" or ")))
    }

    pub(crate) fn opt_text(
        &self,
        map: Map<'_>,
        key: &str,
        what: &str,
    ) -> Result<Option<Named>, InputError> {
        map.get_some(key).map(|n| self.text(n, what)).transpose()
    }

    /// The text under `key`, which must be written.
    pub(crate) fn req_text(
        &self,
        map: Map<'_>,
        key: &str,
        what: &str,
        help: &str,
    ) -> Result<Named, InputError> {
        match map.get_some(key) {
            Some(n) => self.text(n, what),
            None => Err(self.err(map.loc, format!("{what} is missing"), help)),
        }
    }

    /// `node` as a plain `true` or `false`.
    pub(crate) fn bool(&self, node: &Node, what: &str) -> Result<bool, InputError> {
        node.as_bool().ok_or_else(|| {
            self.shape_err(
                node,
                what,
                "true or false",
                "write true or false, without quotes",
            )
        })
    }

    /// The bool under `key`; absent or null is `false`.
    pub(crate) fn flag(&self, map: Map<'_>, key: &str, what: &str) -> Result<bool, InputError> {
        match map.get_some(key) {
            Some(n) => self.bool(n, what),
            None => Ok(false),
        }
    }

    /// `node` as a plain whole number that fits in a u64.
    pub(crate) fn u64(&self, node: &Node, what: &str) -> Result<u64, InputError> {
        match &node.value {
            Value::Scalar { text, plain: true } => text.parse::<u64>().ok(),
            _ => None,
        }
        .ok_or_else(|| {
            self.shape_err(
                node,
                what,
                "a whole number",
                "write a number such as 10, without quotes",
            )
        })
    }

    /// `node` as a plain whole number that fits in a u32.
    pub(crate) fn u32(&self, node: &Node, what: &str) -> Result<u32, InputError> {
        let n = self.u64(node, what)?;
        u32::try_from(n).map_err(|_| {
            self.err(
                node.loc,
                format!("{what} is too large ({n})"),
                "write a smaller number",
            )
        })
    }

    /// The u32 under `key`, or `None` when absent or null.
    pub(crate) fn opt_u32(
        &self,
        map: Map<'_>,
        key: &str,
        what: &str,
    ) -> Result<Option<u32>, InputError> {
        map.get_some(key).map(|n| self.u32(n, what)).transpose()
    }

    /// `node` as a list of texts (null reads as empty).
    pub(crate) fn names(&self, node: &Node, what: &str) -> Result<Vec<Named>, InputError> {
        let mut out = Vec::new();
        for item in self.seq(node, what)? {
            out.push(self.text(item, &format!("an entry of {what}"))?);
        }
        Ok(out)
    }

    /// The list of texts under `key` (absent or null: empty).
    pub(crate) fn opt_names(
        &self,
        map: Map<'_>,
        key: &str,
        what: &str,
    ) -> Result<Vec<Named>, InputError> {
        match map.get(key) {
            Some(n) => self.names(n, what),
            None => Ok(Vec::new()),
        }
    }
}
