//! Text helpers with the exact semantics of NeMo Guardrails' Colang 1.0 helpers
//! (`nemoguardrails/colang/v1_0/lang/utils.py`): Python's `strip`, `split`, the quote-aware
//! `word_split`, the flow-name hash, and the file's numbered lines. Indices count characters.

/// Python's `str.isspace()`, near enough: Unicode white space and the four separators.
pub(super) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(super) fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python's `\w` (Unicode word character).
pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// NeMo's `split_max`: `text.split(sep)` with at most `max` splits.
pub(super) fn split_max(text: &str, sep: &str, max: usize) -> Vec<String> {
    text.splitn(max + 1, sep).map(str::to_string).collect()
}

/// What follows the first `sep` (NeMo's `split_max(text, sep, 1)[1]`), if any.
pub(super) fn after_first<'a>(text: &'a str, sep: &str) -> Option<&'a str> {
    text.split_once(sep).map(|(_, r)| r)
}

/// NeMo's `word_split`: split on `word` outside double-quoted strings, parts stripped, empty
/// parts dropped (its quirks kept: the last character never splits; a trailing `word` is cut).
pub(super) fn word_split(text: &str, word: &str) -> Vec<String> {
    if text.is_empty() {
        return vec![String::new()];
    }
    let t: Vec<char> = text.chars().collect();
    let w: Vec<char> = word.chars().collect();
    let mut parts = Vec::new();
    let (mut i, mut s) = (0usize, 0usize);
    let mut in_string = false;
    while i + w.len() < t.len() {
        if in_string {
            if t[i] == '"' {
                in_string = false;
            }
            i += 1;
        } else {
            if t[i] == '"' {
                in_string = true;
            }
            if t[i..i + w.len()] == w[..] {
                let part: String = t[s..i].iter().collect();
                let part = py_strip(&part);
                if !part.is_empty() {
                    parts.push(part.to_string());
                }
                i += w.len();
                s = i;
            } else {
                i += 1;
            }
        }
    }
    if s < t.len() {
        let part: String = t[s..].iter().collect();
        let mut part = py_strip(&part).to_string();
        if !w.is_empty() && part.ends_with(word) {
            part.truncate(part.len() - word.len());
        }
        if !part.is_empty() {
            parts.push(part);
        }
    }
    parts
}

/// NeMo's `params_tokenize`: split on spaces and on `-`, `:`, `,`, `=` (kept as tokens),
/// outside double-quoted strings.
pub(super) fn params_tokenize(text: &str) -> Vec<String> {
    let t: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut s) = (0usize, 0usize);
    let mut in_string = false;
    while i < t.len() {
        if in_string {
            if t[i] == '"' {
                in_string = false;
            }
            i += 1;
        } else {
            if t[i] == '"' {
                in_string = true;
            }
            if matches!(t[i], ' ' | '-' | ':' | ',' | '=') {
                let tok: String = t[s..i].iter().collect();
                let tok = py_strip(&tok);
                if !tok.is_empty() {
                    tokens.push(tok.to_string());
                }
                if t[i] != ' ' {
                    tokens.push(t[i].to_string());
                }
                i += 1;
                s = i;
            } else {
                i += 1;
            }
        }
    }
    if s < t.len() {
        let tok: String = t[s..].iter().collect();
        let tok = py_strip(&tok);
        if !tok.is_empty() {
            tokens.push(tok.to_string());
        }
    }
    tokens
}

/// NeMo's `string_hash` (the name of an anonymous `define flow`): a 32-bit Java-style hash of
/// the code points, its absolute value in lower-case hex (`0` for the empty string).
pub(super) fn string_hash(s: &str) -> String {
    if s.is_empty() {
        return "0".to_string();
    }
    let mut h: u32 = 0;
    for c in s.chars() {
        h = (h << 5).wrapping_sub(h).wrapping_add(c as u32);
    }
    let v: u64 = if h >= 1 << 31 {
        (1u64 << 32) - u64::from(h)
    } else {
        u64::from(h)
    };
    format!("{v:x}")
}

/// One logical line of the file, as NeMo numbers it (`get_numbered_lines`): comments, blank
/// lines and docstrings dropped, trailing `# comment` cut, `\`/` or` continuations joined.
#[derive(Debug, Clone)]
pub(super) struct Line {
    /// The stripped text.
    pub(crate) text: String,
    /// 1-based line number (of the last physical line of a continued line, as NeMo counts).
    pub(crate) number: usize,
    /// Leading spaces (tabs do not count, as in NeMo).
    pub(crate) indentation: usize,
    /// 1-based column of the first character of the text.
    pub(crate) column: usize,
}

/// The file's logical lines as the reader reads and rewrites them: a gap buffer (`head` the
/// lines before the gap, `tail` the rest in reverse), so that NeMo's insertions just after the
/// line being read cost what it takes to move the gap there, not a shift of the whole file.
#[derive(Debug, Clone, Default)]
pub(super) struct Lines {
    head: Vec<Line>,
    tail: Vec<Line>,
}

impl Lines {
    /// The lines in order.
    pub(super) fn new(lines: Vec<Line>) -> Lines {
        Lines {
            head: lines,
            tail: Vec::new(),
        }
    }

    /// How many lines.
    pub(super) fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Line `i` (0-based).
    pub(super) fn get(&self, i: usize) -> Option<&Line> {
        match i.checked_sub(self.head.len()) {
            None => self.head.get(i),
            Some(j) => self
                .tail
                .len()
                .checked_sub(j + 1)
                .and_then(|k| self.tail.get(k)),
        }
    }

    /// Line `i` (0-based), to change.
    pub(super) fn get_mut(&mut self, i: usize) -> Option<&mut Line> {
        match i.checked_sub(self.head.len()) {
            None => self.head.get_mut(i),
            Some(j) => match self.tail.len().checked_sub(j + 1) {
                Some(k) => self.tail.get_mut(k),
                None => None,
            },
        }
    }

    /// Inserts `line` as line `i` (at the end when `i` is past it).
    pub(super) fn insert(&mut self, i: usize, line: Line) {
        let i = i.min(self.len());
        while self.head.len() > i {
            if let Some(l) = self.head.pop() {
                self.tail.push(l);
            }
        }
        while self.head.len() < i {
            match self.tail.pop() {
                Some(l) => self.head.push(l),
                None => break,
            }
        }
        self.tail.push(line);
    }

    /// The lines from line `i` on.
    pub(super) fn iter_from(&self, i: usize) -> impl Iterator<Item = &Line> + '_ {
        (i..self.len()).filter_map(move |k| self.get(k))
    }
}

/// A line-splitting failure: (1-based line, 1-based column, message).
pub(super) type LineError = (usize, usize, String);

/// The file's logical lines (NeMo's `get_numbered_lines`): comments and blank lines dropped,
/// `\` and ` or` continued, and a line that opens a `"` string it does not close joined with
/// the lines up to the one that ends in `"` (numbered as that last line, indented as the first;
/// one never closed is dropped, as NeMo drops it).
pub(super) fn numbered_lines(content: &str) -> Result<Vec<Line>, LineError> {
    let raw: Vec<&str> = content.split('\n').collect();
    let mut lines = Vec::new();
    let mut i = 0usize;
    let mut multiline = false;
    // A quoted string that spans lines (NeMo 0.24's `multiline_string`): its text so far, and
    // the indentation and column of its first line.
    let mut string: Option<(String, usize, usize)> = None;
    while i < raw.len() {
        let stripped = py_strip(raw[i]);
        if let Some((mut text, ind, column)) = string.take() {
            text.push('\n');
            text.push_str(stripped);
            if stripped.ends_with('"') {
                lines.push(Line {
                    text,
                    number: i + 1,
                    indentation: ind,
                    column,
                });
            } else {
                string = Some((text, ind, column));
            }
            i += 1;
            continue;
        }
        if stripped.starts_with('"') && !stripped.starts_with("\"\"\"") && !stripped.ends_with('"')
        {
            let lead = raw[i].chars().take_while(|&c| is_py_space(c)).count();
            string = Some((stripped.to_string(), lead, lead + 1));
            i += 1;
            continue;
        }
        if stripped.is_empty() || stripped.starts_with('#') {
            i += 1;
            continue;
        }
        let parts = word_split(stripped, "#");
        let Some(line) = parts.into_iter().next() else {
            i += 1;
            continue;
        };
        if !multiline && line.starts_with("\"\"\"") {
            if line == "\"\"\"" || !line.ends_with("\"\"\"") {
                multiline = true;
            }
            i += 1;
            continue;
        }
        if multiline {
            if line.ends_with("\"\"\"") {
                multiline = false;
            }
            i += 1;
            continue;
        }
        let ind = raw[i].chars().take_while(|&c| c == ' ').count();
        let column = raw[i].chars().take_while(|&c| is_py_space(c)).count() + 1;
        let first = i;
        let mut text = line;
        while (i + 1 < raw.len() && text.ends_with('\\')) || text.ends_with(" or") {
            if i + 1 >= raw.len() {
                return Err((
                    i + 1,
                    text.chars().count() + column - 2,
                    "the line ends in 'or', which continues it on the next line, but the file ends here"
                        .to_string(),
                ));
            }
            i += 1;
            if text.ends_with('\\') {
                text.pop();
            }
            if text.is_empty() {
                return Err((
                    first + 1,
                    column,
                    "a line holding only '\\' continues nothing".to_string(),
                ));
            }
            if !text.ends_with(' ') {
                text.push(' ');
            }
            text.push_str(py_strip(raw[i]));
        }
        lines.push(Line {
            text,
            number: i + 1,
            indentation: ind,
            column,
        });
        i += 1;
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_split_keeps_strings() {
        assert_eq!(word_split("a \"b c\" d", " "), vec!["a", "\"b c\"", "d"]);
        assert_eq!(word_split("x # y", "#"), vec!["x", "y"]);
    }

    #[test]
    fn hash_matches_nemo() {
        // "abc": 96354 = 0x17862
        assert_eq!(string_hash("abc"), "17862");
    }
}
