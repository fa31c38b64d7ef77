//! Colang 2.x tokens (SPEC 2.4): the lexer and the indenter, as NeMo Guardrails' Lark grammar
//! reads a file.
//!
//! Positions are character offsets into the file; lines and columns are 1-based, columns count
//! characters. What the grammar ignores (spaces, `# comments`) makes no token. A line break ends
//! a statement unless it is inside `(`, `[` or `{`, or the next line starts with `or ` / `and `
//! (NeMo's `_OR`/`_AND` terminals swallow such a break). The indenter then turns each line break
//! into `Newline` and `Indent`/`Dedent` tokens as Lark's `Indenter` does (a tab counts 8).
//! A line that starts with spaces and `...` (NeMo's pre-parsing expansion into a generated flow)
//! is one `Ellipsis` token.

use super::super::SyntaxError;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A word (`bot`, `match`, `True`): keywords are decided by the parser, in context.
    Name,
    /// `$name`.
    Var,
    /// A one-line string (`"x"`, `'x'`, `..."x"`).
    Str,
    /// A `"""` or `'''` string, may span lines.
    LongStr,
    /// A number.
    Num,
    /// Punctuation or an operator.
    Punct(&'static str),
    /// The end of a logical line.
    Newline,
    /// The next line is indented deeper.
    Indent,
    /// The next line is indented less (one per level closed).
    Dedent,
    /// A bare `...` line.
    Ellipsis,
    /// The end of the file.
    Eof,
}

/// A token with where it was written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    /// Character offset of its first character.
    pub(crate) start: usize,
    /// Character offset just past its last character.
    pub(crate) end: usize,
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column in characters.
    pub(crate) col: usize,
    /// How many spaces and tabs follow it directly; for a `Newline`, the indentation width of
    /// the next line (spaces, 8 per tab).
    pub(crate) space_after: usize,
    /// The line it ends on (a `Newline`: the line its indentation belongs to).
    pub(crate) end_line: usize,
}

const PUNCTS: [&str; 37] = [
    "->", "==", "!=", "<>", "<=", ">=", "<<", ">>", "**", "//", "+=", "-=", "(", ")", "[", "]",
    "{", "}", ",", ":", ".", "=", "+", "-", "*", "/", "%", "@", "|", "^", "&", "~", "<", ">", "!",
    ";", "?",
];

fn is_name_start(c: char) -> bool {
    (c.is_alphanumeric() && !c.is_numeric()) || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The lines NeMo expands as `...` (its `_apply_pre_parsing_expansions`, docstring tracking and
/// all): 1-based line numbers.
fn ellipsis_lines(src: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_doc = false;
    for (i, line) in src.split('\n').enumerate() {
        let s = line.trim();
        if !in_doc && s.starts_with("\"\"\"") && s.ends_with("\"\"\"") && s != "\"\"\"" {
        } else if !in_doc && s.starts_with("\"\"\"") {
            in_doc = true;
        } else if in_doc && s.ends_with("\"\"\"") {
            in_doc = false;
        } else if !in_doc {
            let rest = line.trim_start_matches(' ');
            if rest.len() < line.len() && rest.starts_with("...") {
                out.push(i + 1);
            }
        }
    }
    out
}

/// A token as the parser's list keeps it: [`Token`] with its positions in 32 bits (a file
/// the verifier reads is at most 64 MiB), so a file's tokens take 48 bytes each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packed {
    tok: Tok,
    start: u32,
    end: u32,
    line: u32,
    col: u32,
    space_after: u32,
    end_line: u32,
}

impl Packed {
    fn of(t: Token) -> Packed {
        let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Packed {
            tok: t.tok,
            start: n(t.start),
            end: n(t.end),
            line: n(t.line),
            col: n(t.col),
            space_after: n(t.space_after),
            end_line: n(t.end_line),
        }
    }

    /// The token.
    pub(crate) fn token(self) -> Token {
        Token {
            tok: self.tok,
            start: self.start as usize,
            end: self.end as usize,
            line: self.line as usize,
            col: self.col as usize,
            space_after: self.space_after as usize,
            end_line: self.end_line as usize,
        }
    }
}

/// The lexer: raw tokens one at a time ([`Lexer::next_raw`]), so that only the indented
/// tokens are ever held whole.
struct Lexer<'a> {
    c: &'a [char],
    i: usize,
    line: usize,
    line_start: usize,
    depth: usize,
    /// Tokens read and not yet taken (one statement of the loop makes at most a few).
    out: std::collections::VecDeque<Token>,
    ellipsis: Vec<usize>,
    /// The first line's indentation was skipped.
    started: bool,
    /// The next character starts a line.
    line_began: bool,
}

fn err(line: usize, col: usize, message: String, help: Option<&str>) -> SyntaxError {
    SyntaxError {
        line,
        column: col.max(1),
        message,
        help: help.map(str::to_string),
    }
}

impl Lexer<'_> {
    fn at(&self, k: usize) -> Option<char> {
        self.c.get(self.i + k).copied()
    }

    fn col(&self, pos: usize) -> usize {
        pos - self.line_start + 1
    }

    fn push(&mut self, tok: Tok, start: usize, line: usize, col: usize) {
        let mut space_after = 0;
        while matches!(self.c.get(self.i + space_after), Some(' ' | '\t')) {
            space_after += 1;
        }
        self.out.push_back(Token {
            tok,
            start,
            end: self.i,
            line,
            col,
            space_after,
            end_line: self.line,
        });
    }

    /// Reads a run of line breaks with the indentation after it; returns the indentation width
    /// (spaces + 8 per tab) of the last line of the run.
    fn newline_run(&mut self) -> usize {
        let mut indent = 0;
        loop {
            match self.at(0) {
                Some('\r') if self.at(1) == Some('\n') => self.i += 1,
                Some('\n') => {}
                _ => break,
            }
            self.i += 1;
            self.line += 1;
            self.line_start = self.i;
            indent = 0;
            while let Some(c @ (' ' | '\t')) = self.at(0) {
                indent += if c == '\t' { 8 } else { 1 };
                self.i += 1;
            }
        }
        indent
    }

    fn string(&mut self, start: usize, line: usize, col: usize) -> Result<(), SyntaxError> {
        let q = self.at(0).unwrap_or('"');
        if self.at(1) == Some(q) && self.at(2) == Some(q) {
            self.i += 3;
            loop {
                match self.at(0) {
                    None => {
                        return Err(err(
                            line,
                            col,
                            format!("this {q}{q}{q} string is never closed"),
                            Some("close it with the same three quotes"),
                        ))
                    }
                    Some('\\') if self.at(1) != Some('\n') => self.i += 2,
                    Some(c) if c == q && self.at(1) == Some(q) && self.at(2) == Some(q) => {
                        self.i += 3;
                        break;
                    }
                    Some('\n') => {
                        self.i += 1;
                        self.line += 1;
                        self.line_start = self.i;
                    }
                    Some(_) => self.i += 1,
                }
            }
            self.push(Tok::LongStr, start, line, col);
            return Ok(());
        }
        self.i += 1;
        loop {
            match self.at(0) {
                None | Some('\n') => {
                    return Err(err(
                        line,
                        col,
                        "this string is not closed on its line".to_string(),
                        Some("close it with the same quote before the line ends (use \"\"\" for text over several lines)"),
                    ))
                }
                Some('\\') if self.at(1).is_some_and(|c| c != '\n') => self.i += 2,
                Some(c) if c == q => {
                    self.i += 1;
                    break;
                }
                Some(_) => self.i += 1,
            }
        }
        self.push(Tok::Str, start, line, col);
        Ok(())
    }

    fn number(&mut self, start: usize, line: usize, col: usize) {
        let digits = |lx: &mut Self| {
            while lx.at(0).is_some_and(|c| c.is_ascii_digit() || c == '_') {
                lx.i += 1;
            }
        };
        digits(self);
        if self.at(0) == Some('.')
            && self
                .at(1)
                .is_none_or(|c| c.is_ascii_digit() || !is_name_start(c))
        {
            self.i += 1;
            digits(self);
        }
        if matches!(self.at(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.at(1), Some('+' | '-')));
            if self.at(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1 + sign;
                digits(self);
            }
        }
        self.push(Tok::Num, start, line, col);
    }

    /// The next raw token (line breaks inside brackets dropped, none yet swallowed by a
    /// continuing `and`/`or`), or `None` at the end of the file.
    fn next_raw(&mut self) -> Result<Option<Token>, SyntaxError> {
        if !self.started {
            // The grammar ignores spaces, so the first line's indentation is not seen.
            self.started = true;
            while self.at(0) == Some(' ') {
                self.i += 1;
            }
        }
        loop {
            if let Some(t) = self.out.pop_front() {
                return Ok(Some(t));
            }
            if self.at(0).is_none() {
                return Ok(None);
            }
            self.step()?;
        }
    }

    /// Reads what starts at the current character: nothing (a space, a comment), or a token.
    fn step(&mut self) -> Result<(), SyntaxError> {
        let line_began = self.line_began;
        if let Some(c) = self.at(0) {
            let (start, line, col) = (self.i, self.line, self.col(self.i));
            if line_began && self.ellipsis.binary_search(&line).is_ok() && c == '.' {
                self.i += 3;
                let rest: String = self
                    .c
                    .get(self.i..)
                    .unwrap_or(&[])
                    .iter()
                    .take_while(|&&c| c != '\n')
                    .collect();
                if !rest.trim().is_empty() {
                    return Err(err(
                        line,
                        col + 3,
                        "nothing may follow a bare `...` on its line".to_string(),
                        Some("put `...` alone on its line (NeMo expands it into a generated flow)"),
                    ));
                }
                self.push(Tok::Ellipsis, start, line, col);
                self.line_began = false;
                return Ok(());
            }
            self.line_began = false;
            match c {
                ' ' => self.i += 1,
                '#' => {
                    while self.at(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\n' | '\r' if c == '\n' || self.at(1) == Some('\n') => {
                    let indent = self.newline_run();
                    self.line_began = true;
                    if self.depth > 0 {
                        return Ok(());
                    }
                    self.out.push_back(Token {
                        tok: Tok::Newline,
                        start,
                        end: self.i,
                        line,
                        col,
                        space_after: indent,
                        end_line: self.line,
                    });
                }
                '$' => {
                    self.i += 1;
                    if !self.at(0).is_some_and(is_name_start) {
                        return Err(err(
                            line,
                            col,
                            "`$` must start a variable name".to_string(),
                            Some("write a variable as `$name` (a letter or `_` after the `$`)"),
                        ));
                    }
                    while self.at(0).is_some_and(is_name_char) {
                        self.i += 1;
                    }
                    self.push(Tok::Var, start, line, col);
                }
                '"' | '\'' => self.string(start, line, col)?,
                '.' if self.at(1) == Some('.') && self.at(2) == Some('.') => {
                    let mut k = 3;
                    while matches!(self.c.get(self.i + k), Some(' ' | '\t')) {
                        k += 1;
                    }
                    if !matches!(self.c.get(self.i + k), Some('"' | '\'')) {
                        return Err(err(
                            line,
                            col,
                            "`...` must be followed by a string here".to_string(),
                            Some("write `...\"instruction\"`, or put `...` alone on its own indented line"),
                        ));
                    }
                    self.i += k;
                    self.string(start, line, col)?;
                }
                c if c.is_ascii_digit()
                    || (c == '.' && self.at(1).is_some_and(|d| d.is_ascii_digit())) =>
                {
                    self.number(start, line, col)
                }
                c if is_name_start(c) => {
                    while self.at(0).is_some_and(is_name_char) {
                        self.i += 1;
                    }
                    self.push(Tok::Name, start, line, col);
                }
                _ => {
                    let Some(p) = PUNCTS.iter().find(|p| {
                        p.chars()
                            .enumerate()
                            .all(|(k, pc)| self.c.get(self.i + k) == Some(&pc))
                    }) else {
                        let what = match c {
                            '\t' => "a tab".to_string(),
                            '\r' => "a carriage return".to_string(),
                            c => format!("`{}`", c.escape_debug()),
                        };
                        return Err(err(
                            line,
                            col,
                            format!("unexpected character {what}"),
                            Some("Colang 2.x separates words with spaces only; remove or quote it"),
                        ));
                    };
                    if matches!(*p, "!" | ";" | "?") {
                        return Err(err(
                            line,
                            col,
                            format!("unexpected `{p}`"),
                            Some("remove it; Colang 2.x has no such operator"),
                        ));
                    }
                    self.i += p.chars().count();
                    match *p {
                        "(" | "[" | "{" => self.depth += 1,
                        ")" | "]" | "}" => self.depth = self.depth.saturating_sub(1),
                        _ => {}
                    }
                    self.push(Tok::Punct(p), start, line, col);
                }
            }
        }
        Ok(())
    }
}

/// Reads `src` into tokens, with `Newline`/`Indent`/`Dedent` as Lark's indenter makes them, and
/// an `Eof` last.
///
/// # Errors
/// An unknown character, an unclosed string, or an indentation that matches no open level.
pub(crate) fn tokenize(src: &str) -> Result<(Vec<Packed>, Vec<char>), SyntaxError> {
    // NeMo parses the file with a line break appended.
    let mut chars: Vec<char> = src.chars().collect();
    chars.push('\n');
    let mut lx = Lexer {
        c: &chars,
        i: 0,
        line: 1,
        line_start: 0,
        depth: 0,
        out: std::collections::VecDeque::new(),
        ellipsis: ellipsis_lines(src),
        started: false,
        line_began: true,
    };
    let mut out = indent(&mut lx, &chars)?;
    let (end, line, col) = (lx.i, lx.line, lx.col(lx.i));
    out.push(Packed::of(Token {
        tok: Tok::Eof,
        start: end,
        end,
        line,
        col,
        space_after: 0,
        end_line: line,
    }));
    Ok((out, chars))
}

fn name_at<'a>(chars: &'a [char], t: &Token) -> &'a [char] {
    chars.get(t.start..t.end).unwrap_or(&[])
}

/// Takes the lexer's raw tokens, drops the line breaks NeMo's `_OR`/`_AND` swallow, and inserts
/// indentation tokens.
fn indent(lx: &mut Lexer<'_>, chars: &[char]) -> Result<Vec<Packed>, SyntaxError> {
    let mut out: Vec<Packed> = Vec::new();
    let mut levels = vec![0usize];
    // The raw tokens read ahead of the one at hand (a line break looks two ahead).
    let mut ahead: std::collections::VecDeque<Token> = std::collections::VecDeque::new();
    loop {
        let t = match ahead.pop_front() {
            Some(t) => t,
            None => match lx.next_raw()? {
                Some(t) => t,
                None => break,
            },
        };
        if t.tok != Tok::Newline {
            out.push(Packed::of(t));
            continue;
        }
        while ahead.len() < 2 {
            match lx.next_raw()? {
                Some(n) => ahead.push_back(n),
                None => break,
            }
        }
        if let Some(next) = ahead.front() {
            let w = name_at(chars, next);
            let cont_and = w == ['a', 'n', 'd'] && next.space_after > 0;
            let cont_or = w == ['o', 'r'] && next.space_after > 0 && {
                let after = ahead.get(1);
                let when =
                    after.is_some_and(|a| name_at(chars, a).starts_with(&['w', 'h', 'e', 'n']));
                !when || next.space_after > 1
            };
            if next.tok == Tok::Name && (cont_and || cont_or) {
                continue;
            }
        }
        out.push(Packed::of(t));
        let width = t.space_after;
        let here = *levels.last().unwrap_or(&0);
        let (line, col) = (t.end_line, width + 1);
        let mark = |tok| Token {
            tok,
            start: t.end,
            end: t.end,
            line,
            col,
            space_after: 0,
            end_line: line,
        };
        if width > here {
            levels.push(width);
            out.push(Packed::of(mark(Tok::Indent)));
        } else {
            while width < *levels.last().unwrap_or(&0) {
                levels.pop();
                out.push(Packed::of(mark(Tok::Dedent)));
            }
            if width != *levels.last().unwrap_or(&0) {
                return Err(err(
                    line,
                    width + 1,
                    "this line's indentation matches no enclosing block".to_string(),
                    Some("indent it exactly as the block it belongs to"),
                ));
            }
        }
    }
    while levels.len() > 1 {
        levels.pop();
        let (start, line, col) = out.last().map_or((0, 1, 1), |p| {
            (p.token().end, p.token().line, p.token().col)
        });
        let dedent = Token {
            tok: Tok::Dedent,
            start,
            end: start,
            line,
            col,
            space_after: 0,
            end_line: line,
        };
        out.push(Packed::of(dedent));
    }
    Ok(out)
}
