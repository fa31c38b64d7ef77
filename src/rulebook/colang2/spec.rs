//! Colang 2.x specs (SPEC 2.4): `bot say "hi"`, `UtteranceBotAction(script="hi").Finished()`,
//! `$ref.Stop()`, `... as $x`, and their `or`/`and` groups, as NeMo's `spec_expr` rules read them.

use super::expr::Span;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use super::{spec_type_of, Member, Spec, SpecExpr, SpecType};

const SPEC_HELP: &str =
    "name a flow (`bot say \"hi\"`), an action or event (`UtteranceBotAction(script=\"hi\")`), or a `$reference`";

impl Parser<'_> {
    /// A word that ends a spec name (NeMo lexes it as a keyword there).
    fn ends_name(&self) -> bool {
        self.is_op_word("and")
            || self.is_op_word("or")
            || self.is_word("as")
            || self.is_word("None")
            || self.is_word("True")
            || self.is_word("False")
    }

    /// NeMo's `spec_expr` (`allow_var`: a `$reference` may be named) or `non_var_spec_expr`.
    pub(crate) fn spec_expr(&mut self, allow_var: bool) -> PResult<SpecExpr> {
        self.enter()?;
        let r = self.spec_or(allow_var);
        self.leave();
        r
    }

    fn spec_or(&mut self, allow_var: bool) -> PResult<SpecExpr> {
        let first = self.spec_and(allow_var)?;
        if !self.is_op_word("or") {
            return Ok(first);
        }
        let mut all = vec![first];
        while self.is_op_word("or") {
            self.bump();
            all.push(self.spec_and(allow_var)?);
        }
        Ok(SpecExpr::Or(all))
    }

    fn spec_and(&mut self, allow_var: bool) -> PResult<SpecExpr> {
        let first = self.spec_atom(allow_var)?;
        if !self.is_op_word("and") {
            return Ok(first);
        }
        let mut all = vec![first];
        while self.is_op_word("and") {
            self.bump();
            all.push(self.spec_atom(allow_var)?);
        }
        Ok(SpecExpr::And(all))
    }

    fn spec_atom(&mut self, allow_var: bool) -> PResult<SpecExpr> {
        if self.is_punct("(") {
            self.bump();
            let inner = self.spec_expr(allow_var)?;
            self.expect_punct(")", "`)` closing the group", "close the group with `)`")?;
            // `(name args).Member() as $x`: NeMo's parenthesised spec.
            if let SpecExpr::One(mut s) = inner {
                if s.members.is_empty() && s.capture.is_none() {
                    self.members_and_capture(&mut s)?;
                }
                return Ok(SpecExpr::One(s));
            }
            return Ok(inner);
        }
        Ok(SpecExpr::One(self.spec(allow_var)?))
    }

    /// One spec: a name with arguments, or a `$reference`, then members and `as $x`.
    pub(crate) fn spec(&mut self, allow_var: bool) -> PResult<Spec> {
        let t = self.peek();
        let mut spec = Spec {
            name: None,
            var: None,
            spec_type: SpecType::Reference,
            args: Vec::new(),
            members: Vec::new(),
            capture: None,
            line: t.line,
            column: t.col,
        };
        match t.tok {
            Tok::Var if allow_var => {
                self.bump();
                spec.var = Some(self.text(t));
            }
            Tok::Var => {
                return Err(self.error_at(
                    t,
                    format!("a statement cannot start with the reference {}", self.describe(t)),
                    "write `await`, `match`, `send`, `start` or `stop` before a `$reference` (`send $ref.Stop()`), or `$x = ...` to assign",
                ))
            }
            Tok::Name if !self.ends_name() => {
                let mut words = Vec::new();
                while self.peek().tok == Tok::Name && !self.ends_name() {
                    let w = self.bump();
                    words.push(self.text(w));
                }
                let name = words.join(" ");
                spec.spec_type = spec_type_of(&name);
                spec.name = Some(name);
                if self.is_punct("(") {
                    spec.args = self.classic_args()?;
                } else {
                    spec.args = self.simple_args()?;
                }
            }
            _ => return Err(self.unexpected("a flow, action or event", SPEC_HELP)),
        }
        self.members_and_capture(&mut spec)?;
        Ok(spec)
    }

    fn members_and_capture(&mut self, spec: &mut Spec) -> PResult<()> {
        while self.is_punct(".") {
            self.bump();
            let t = self.peek();
            if t.tok != Tok::Name {
                return Err(self.unexpected(
                    "a member name after `.`",
                    "write a member such as `.Finished()` or `.Stop`",
                ));
            }
            self.bump();
            let args = if self.is_punct("(") {
                self.classic_args()?
            } else {
                Vec::new()
            };
            spec.members.push(Member {
                name: self.text(t),
                args,
            });
        }
        if self.is_word("as") {
            self.bump();
            let t = self.peek();
            if t.tok != Tok::Var {
                return Err(self.unexpected(
                    "a `$variable` after `as`",
                    "capture the reference into a variable: `... as $ref`",
                ));
            }
            self.bump();
            spec.capture = Some(self.text(t));
        }
        Ok(())
    }

    /// `(a, name=b)`: NeMo's `classic_arguments`; positional ones are named `$0`, `$1`, ...
    pub(crate) fn classic_args(&mut self) -> PResult<Vec<(String, String)>> {
        self.bump();
        let mut out = Args::default();
        let mut positional = 0;
        if !self.is_punct(")") {
            loop {
                let (name, v) = self.argvalue()?;
                let key = match name {
                    Some(n) => n,
                    None => {
                        positional += 1;
                        format!("${}", positional - 1)
                    }
                };
                let text = self.span_text(v);
                out.push(key, text);
                if !self.is_punct(",") {
                    break;
                }
                self.bump();
            }
        }
        self.expect_punct(
            ")",
            "`,` or `)` in the arguments",
            "separate arguments with `,` and close them with `)`",
        )?;
        Ok(out.list)
    }

    /// `"hi" $x=1`: NeMo's `simple_arguments` (no parentheses, no commas).
    fn simple_args(&mut self) -> PResult<Vec<(String, String)>> {
        let mut out = Args::default();
        let mut positional = 0;
        loop {
            let t = self.peek();
            if t.tok == Tok::Var && self.peek_at(1).tok == Tok::Punct("=") {
                self.bump();
                self.bump();
                let v: Span = self.expr()?;
                let name: String = self.text(t).chars().skip(1).collect();
                let text = self.span_text(v);
                out.push(name, text);
            } else if self.starts_expr() && !self.ends_name_keyword_only() {
                let v = self.expr()?;
                positional += 1;
                let text = self.span_text(v);
                out.push(format!("${}", positional - 1), text);
            } else {
                return Ok(out.list);
            }
        }
    }

    /// `and`/`or`/`as` never start an argument.
    fn ends_name_keyword_only(&self) -> bool {
        self.is_op_word("and") || self.is_op_word("or") || self.is_word("as")
    }
}

/// Arguments in order, found by name: a Python dict's behaviour, without a scan per argument.
#[derive(Default)]
struct Args {
    list: Vec<(String, String)>,
    index: std::collections::HashMap<String, usize>,
}

impl Args {
    /// Adds an argument; a repeated name keeps its first place and takes the last value.
    fn push(&mut self, key: String, value: String) {
        match self.index.get(&key) {
            Some(&k) => self.list[k].1 = value,
            None => {
                self.index.insert(key.clone(), self.list.len());
                self.list.push((key, value));
            }
        }
    }
}
