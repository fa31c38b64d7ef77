//! Colang 2.x expressions (SPEC 2.4), NeMo's `test`/`expr` rules: read for their extent only,
//! since NeMo keeps an expression as its source text. The grammar is NeMo's, narrower than
//! Python's: no parenthesised sub-expressions, list items are plain values, a bare word is no
//! value (only `word(...)` calls are).

use super::lexer::Tok;
use super::parser::{PResult, Parser};

/// Where an expression was written: character offsets, first token to last.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

const VALUE_HELP: &str =
    "write a value: a `$variable`, a number, a \"string\", a [list], a {dict}, True/False/None or a call `f(...)`";

impl Parser<'_> {
    /// The source text of a span.
    pub(crate) fn span_text(&self, s: Span) -> String {
        self.slice(s.start, s.end)
    }

    /// NeMo's `test`: `or`/`and`/`not` over comparisons.
    pub(crate) fn test(&mut self) -> PResult<Span> {
        self.enter()?;
        let r = self.or_test();
        self.leave();
        r
    }

    fn or_test(&mut self) -> PResult<Span> {
        let mut s = self.and_test()?;
        while self.is_op_word("or") {
            self.bump();
            s.end = self.and_test()?.end;
        }
        Ok(s)
    }

    fn and_test(&mut self) -> PResult<Span> {
        let mut s = self.not_test()?;
        while self.is_op_word("and") {
            self.bump();
            s.end = self.not_test()?.end;
        }
        Ok(s)
    }

    fn not_test(&mut self) -> PResult<Span> {
        if self.is_word("not") {
            let t = self.bump();
            self.enter()?;
            let inner = self.not_test();
            self.leave();
            return Ok(Span {
                start: t.start,
                end: inner?.end,
            });
        }
        self.comparison()
    }

    fn comp_op(&mut self) -> bool {
        if let Tok::Punct(p) = self.peek().tok {
            if matches!(p, "<" | ">" | "==" | ">=" | "<=" | "<>" | "!=") {
                self.bump();
                return true;
            }
            return false;
        }
        if self.is_word("in") {
            self.bump();
            return true;
        }
        if self.is_word("not") && self.word_at(1, "in") {
            self.bump();
            self.bump();
            return true;
        }
        if self.is_word("is") {
            self.bump();
            if self.is_word("not") {
                self.bump();
            }
            return true;
        }
        false
    }

    fn comparison(&mut self) -> PResult<Span> {
        let mut s = self.expr()?;
        while self.comp_op() {
            s.end = self.expr()?.end;
        }
        Ok(s)
    }

    /// NeMo's `expr`: arithmetic and bitwise operators over values (no comparison, `and`, `or`).
    pub(crate) fn expr(&mut self) -> PResult<Span> {
        let mut s = self.factor()?;
        loop {
            let is_bin = matches!(self.peek().tok, Tok::Punct(p) if matches!(p,
                "|" | "^" | "&" | "<<" | ">>" | "+" | "-" | "*" | "@" | "/" | "%" | "//"));
            if !is_bin {
                return Ok(s);
            }
            self.bump();
            s.end = self.factor()?.end;
        }
    }

    fn factor(&mut self) -> PResult<Span> {
        if matches!(self.peek().tok, Tok::Punct("+" | "-" | "~")) {
            let t = self.bump();
            self.enter()?;
            let inner = self.factor();
            self.leave();
            return Ok(Span {
                start: t.start,
                end: inner?.end,
            });
        }
        let mut s = self.atom_expr()?;
        if self.is_punct("**") {
            self.bump();
            self.enter()?;
            let f = self.factor();
            self.leave();
            s.end = f?.end;
        }
        Ok(s)
    }

    /// Whether the current token can start an `expr`.
    pub(crate) fn starts_expr(&self) -> bool {
        let t = self.peek();
        match t.tok {
            Tok::Var | Tok::Num | Tok::Str | Tok::LongStr => true,
            Tok::Punct(p) => matches!(p, "[" | "{" | "+" | "-" | "~"),
            Tok::Name => {
                self.is_word("None")
                    || self.is_word("True")
                    || self.is_word("False")
                    || matches!(self.peek_at(1).tok, Tok::Punct("("))
            }
            _ => false,
        }
    }

    /// NeMo's `atom_expr`: a value with calls, `[subscripts]` and `.attributes` after it.
    pub(crate) fn atom_expr(&mut self) -> PResult<Span> {
        self.enter()?;
        let r = self.atom_expr_inner();
        self.leave();
        r
    }

    fn atom_expr_inner(&mut self) -> PResult<Span> {
        let t = self.peek();
        let mut s = Span {
            start: t.start,
            end: t.end,
        };
        match t.tok {
            Tok::Var | Tok::Num | Tok::Str | Tok::LongStr => {
                self.bump();
            }
            Tok::Name if self.is_word("None") || self.is_word("True") || self.is_word("False") => {
                self.bump();
            }
            Tok::Name if matches!(self.peek_at(1).tok, Tok::Punct("(")) => {
                self.bump();
                s.end = self.call_args()?;
            }
            Tok::Punct("[") => {
                self.bump();
                while !self.is_punct("]") {
                    self.atom_expr()?;
                    if !self.is_punct(",") {
                        break;
                    }
                    self.bump();
                }
                s.end = self
                    .expect_punct(
                        "]",
                        "`,` or `]` in the list",
                        "list items are values separated by `,`",
                    )?
                    .end;
            }
            Tok::Punct("{") => {
                self.bump();
                s.end = self.braces()?;
            }
            Tok::Name => {
                return Err(self.error_at(
                    t,
                    format!("expected a value, found the word {}", self.describe(t)),
                    "a bare word is no value here: quote it as a \"string\", or write `$variable`",
                ))
            }
            _ => return Err(self.unexpected("a value", VALUE_HELP)),
        }
        loop {
            if self.is_punct("[") {
                self.bump();
                self.subscripts()?;
                s.end = self
                    .expect_punct("]", "`]`", "close the subscript with `]`")?
                    .end;
            } else if self.is_punct(".") && self.peek_at(1).tok == Tok::Name {
                self.bump();
                s.end = self.bump().end;
                if self.is_punct("(") {
                    s.end = self.call_args()?;
                }
            } else {
                return Ok(s);
            }
        }
    }

    /// `{ ... }`: a dict (`key: value`, `**x`) or a set (values). Returns the end offset.
    fn braces(&mut self) -> PResult<usize> {
        let mut is_dict: Option<bool> = None;
        while !self.is_punct("}") {
            if self.is_punct("**") && is_dict != Some(false) {
                self.bump();
                self.expr()?;
                is_dict = Some(true);
            } else if is_dict == Some(false) {
                self.atom_expr()?;
            } else {
                self.test()?;
                if self.is_punct(":") {
                    self.bump();
                    self.test()?;
                    is_dict = Some(true);
                } else if is_dict == Some(true) {
                    return Err(
                        self.unexpected("`:` after the key", "write dict entries as `key: value`")
                    );
                } else {
                    is_dict = Some(false);
                }
            }
            if !self.is_punct(",") {
                break;
            }
            self.bump();
        }
        Ok(self
            .expect_punct(
                "}",
                "`,` or `}`",
                "separate entries with `,` and close with `}`",
            )?
            .end)
    }

    fn subscripts(&mut self) -> PResult<()> {
        loop {
            if !self.is_punct(":") {
                self.test()?;
            }
            let mut colons = 0;
            while self.is_punct(":") && colons < 2 {
                self.bump();
                colons += 1;
                if !self.is_punct(":") && !self.is_punct("]") && !self.is_punct(",") {
                    self.test()?;
                }
            }
            if !self.is_punct(",") {
                return Ok(());
            }
            self.bump();
            if self.is_punct("]") {
                return Ok(());
            }
        }
    }

    /// `( arguments )` of a call, at `(`. Returns the end offset of `)`.
    fn call_args(&mut self) -> PResult<usize> {
        self.bump();
        while !self.is_punct(")") {
            if self.is_punct("*") || self.is_punct("**") {
                self.bump();
                self.test()?;
            } else {
                self.argvalue()?;
            }
            if !self.is_punct(",") {
                break;
            }
            self.bump();
        }
        Ok(self
            .expect_punct(
                ")",
                "`,` or `)`",
                "separate arguments with `,` and close with `)`",
            )?
            .end)
    }

    /// NeMo's `argvalue`: `expr` or `name = expr`. Returns the name (if any) and the value.
    pub(crate) fn argvalue(&mut self) -> PResult<(Option<String>, Span)> {
        if self.peek().tok == Tok::Name && self.peek_at(1).tok == Tok::Punct("=") {
            let name = self.bump();
            self.bump();
            let v = self.expr()?;
            return Ok((Some(self.text(name)), v));
        }
        Ok((None, self.expr()?))
    }
}
