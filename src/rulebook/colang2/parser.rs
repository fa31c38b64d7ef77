//! The parser's cursor over the tokens (SPEC 2.4): looking ahead, taking tokens, the source
//! text of a span, keywords in context, the nesting cap, and syntax errors at a token.

use super::super::SyntaxError;
use super::lexer::{Packed, Tok, Token};
use super::MAX_DEPTH;

/// A cursor over one file's tokens.
pub(crate) struct Parser<'a> {
    toks: &'a [Packed],
    chars: &'a [char],
    pos: usize,
    depth: usize,
}

/// A parse result.
pub(crate) type PResult<T> = Result<T, SyntaxError>;

impl<'a> Parser<'a> {
    /// A cursor at the first token. `toks` ends with `Eof`.
    pub(crate) fn new(toks: &'a [Packed], chars: &'a [char]) -> Self {
        Parser {
            toks,
            chars,
            pos: 0,
            depth: 0,
        }
    }

    /// The token `k` ahead (the last, `Eof`, past the end).
    pub(crate) fn peek_at(&self, k: usize) -> Token {
        let last = self.toks.len().saturating_sub(1);
        self.toks
            .get((self.pos + k).min(last))
            .map(|p| p.token())
            .unwrap_or(Token {
                tok: Tok::Eof,
                start: 0,
                end: 0,
                line: 1,
                col: 1,
                space_after: 0,
                end_line: 1,
            })
    }

    /// The current token.
    pub(crate) fn peek(&self) -> Token {
        self.peek_at(0)
    }

    /// Takes the current token.
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    /// The source text of a token.
    pub(crate) fn text(&self, t: Token) -> String {
        self.slice(t.start, t.end)
    }

    /// The source text between two character offsets.
    pub(crate) fn slice(&self, start: usize, end: usize) -> String {
        self.chars
            .get(start..end.max(start).min(self.chars.len()))
            .map(|c| c.iter().collect())
            .unwrap_or_default()
    }

    /// The rest of the line from a character offset, trimmed.
    pub(crate) fn line_text(&self, start: usize) -> String {
        let rest = self.chars.get(start..).unwrap_or(&[]);
        let line: String = rest.iter().take_while(|&&c| c != '\n').collect();
        line.trim().to_string()
    }

    /// The current token is the word `w`.
    pub(crate) fn is_word(&self, w: &str) -> bool {
        self.word_at(0, w)
    }

    /// The token `k` ahead is the word `w`.
    pub(crate) fn word_at(&self, k: usize, w: &str) -> bool {
        let t = self.peek_at(k);
        t.tok == Tok::Name
            && self
                .chars
                .get(t.start..t.end)
                .is_some_and(|c| c.iter().copied().eq(w.chars()))
    }

    /// The current token is punctuation `p`.
    pub(crate) fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }

    /// The current token is `and`/`or` as NeMo's `_AND`/`_OR` (a space or tab after it).
    pub(crate) fn is_op_word(&self, w: &str) -> bool {
        self.is_word(w) && self.peek().space_after > 0
    }

    /// Takes punctuation `p`, or fails saying what was expected.
    pub(crate) fn expect_punct(&mut self, p: &str, what: &str, help: &str) -> PResult<Token> {
        if self.is_punct(p) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(what, help))
        }
    }

    /// Takes the end of a statement's line.
    pub(crate) fn expect_newline(&mut self, after: &str) -> PResult<()> {
        match self.peek().tok {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof | Tok::Dedent => Ok(()),
            _ => Err(self.unexpected(
                &format!("the end of the line after {after}"),
                "end the statement here, or put what follows on its own line",
            )),
        }
    }

    /// How the current token reads in an error message.
    pub(crate) fn describe(&self, t: Token) -> String {
        match t.tok {
            Tok::Newline => "the end of the line".to_string(),
            Tok::Indent => "an indented line".to_string(),
            Tok::Dedent => "the end of the indented block".to_string(),
            Tok::Eof => "the end of the file".to_string(),
            Tok::Ellipsis => "`...`".to_string(),
            _ => {
                let s = self.text(t);
                let short: String = s.chars().take(40).collect();
                if short.len() < s.len() {
                    format!("`{short}…`")
                } else {
                    format!("`{short}`")
                }
            }
        }
    }

    /// An error at the current token: "expected X, found Y".
    pub(crate) fn unexpected(&self, expected: &str, help: &str) -> SyntaxError {
        let t = self.peek();
        self.error_at(
            t,
            format!("expected {expected}, found {}", self.describe(t)),
            help,
        )
    }

    /// An error at a token.
    pub(crate) fn error_at(&self, t: Token, message: String, help: &str) -> SyntaxError {
        SyntaxError {
            line: t.line.max(1),
            column: t.col.max(1),
            message,
            help: (!help.is_empty()).then(|| help.to_string()),
        }
    }

    /// Enters one level of nesting, failing past [`MAX_DEPTH`].
    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let t = self.peek();
            return Err(self.error_at(
                t,
                format!("nesting deeper than {MAX_DEPTH} levels"),
                "split the flow into smaller flows",
            ));
        }
        Ok(())
    }

    /// Leaves one level of nesting.
    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}
