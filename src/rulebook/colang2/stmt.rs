//! Colang 2.x statements and flow definitions (SPEC 2.4), as NeMo's grammar reads them: the
//! file, `import`, decorators and `flow` headers, indented blocks, and each statement.

use super::lexer::{Tok, Token};
use super::parser::{PResult, Parser};
use super::{literal, Decorator, FlowDef, Import, Param, SpecOp, Stmt, StmtKind};

/// Reads the whole file: its flows and imports. Statements outside flows are read (the grammar
/// allows them) and dropped, as NeMo drops them.
pub(crate) fn file(p: &mut Parser) -> PResult<(Vec<FlowDef>, Vec<Import>)> {
    let mut flows = Vec::new();
    let mut imports = Vec::new();
    loop {
        let t = p.peek();
        match t.tok {
            Tok::Eof => return Ok((flows, imports)),
            Tok::Newline => {
                p.bump();
            }
            Tok::Indent | Tok::Dedent => {
                return Err(p.error_at(
                    t,
                    "unexpected indentation outside a flow".to_string(),
                    "start top-level lines (`flow`, `import`, decorators) at column 1",
                ))
            }
            Tok::Punct("@") => flows.push(p.flow_def()?),
            Tok::Name if p.is_flow_keyword() => flows.push(p.flow_def()?),
            _ => {
                let s = p.stmt()?;
                if let StmtKind::Import(i) = s.kind {
                    imports.push(i);
                }
            }
        }
    }
}

fn header_help(what: &str) -> String {
    format!("expected {what}")
}

impl Parser<'_> {
    /// `flow` as NeMo's `_FLOW` keyword: not followed by `(`.
    fn is_flow_keyword(&self) -> bool {
        self.is_word("flow") && !matches!(self.peek_at(1).tok, Tok::Punct("("))
    }

    fn flow_def(&mut self) -> PResult<FlowDef> {
        let first = self.peek();
        let mut decorators = Vec::new();
        while self.is_punct("@") {
            self.bump();
            let name = self.peek();
            if name.tok != Tok::Name {
                return Err(self.unexpected(
                    "a decorator name after `@`",
                    "write a decorator such as `@active` or `@meta(user_intent=True)`",
                ));
            }
            self.bump();
            let mut params = Vec::new();
            if self.is_punct("(") {
                let at = self.peek();
                for (k, v) in self.classic_args()? {
                    let value = literal::eval(&v).ok_or_else(|| {
                        self.error_at(
                            at,
                            format!("decorator argument `{k}` is not a literal: {v}"),
                            "decorator arguments must be literals (strings, numbers, True/False/None, lists, dicts)",
                        )
                    })?;
                    params.push((k, value));
                }
            }
            decorators.push(Decorator {
                name: self.text(name),
                params,
            });
            if self.peek().tok != Tok::Newline {
                return Err(self.unexpected(
                    "the end of the line after the decorator",
                    "put each decorator on its own line, directly above `flow`",
                ));
            }
            self.bump();
        }
        if !self.is_flow_keyword() {
            return Err(self.unexpected(
                "`flow` after the decorators",
                "decorators must be directly followed by the `flow` line (no blank comment lines between)",
            ));
        }
        let kw = self.bump();
        let name = self.flow_name()?;
        let mut params = Vec::new();
        if self.is_punct("(") {
            self.bump();
            loop {
                params.push(self.param_def("a parameter `$name`")?);
                if !self.is_punct(",") {
                    break;
                }
                self.bump();
            }
            self.expect_punct(
                ")",
                "`,` or `)` after the parameter",
                "separate parameters with `,` and close with `)`",
            )?;
        } else {
            while self.peek().tok == Tok::Var {
                params.push(self.param_def("a parameter `$name`")?);
            }
        }
        let mut returns = Vec::new();
        if self.is_punct("->") {
            self.bump();
            loop {
                returns.push(self.param_def("a return value `$name` after `->`")?);
                if !self.is_punct(",") {
                    break;
                }
                self.bump();
            }
            if self.peek().tok == Tok::Var {
                return Err(self.unexpected(
                    "`,` or the end of the line after the return value",
                    "separate return values with commas: `-> $a, $b = 2`",
                ));
            }
        }
        let body = self.suite(&format!("`flow {name}`"))?;
        Ok(FlowDef {
            name,
            line: first.line,
            column: first.col,
            flow_line: kw.line,
            flow_column: kw.col,
            decorators,
            params,
            returns,
            body,
        })
    }

    fn flow_name(&mut self) -> PResult<String> {
        let paren = self.is_punct("(");
        if paren {
            self.bump();
        }
        let mut words = Vec::new();
        while self.peek().tok == Tok::Name {
            let w = self.bump();
            words.push(self.text(w));
        }
        if words.is_empty() {
            return Err(self.unexpected(
                &header_help("the flow's name after `flow`"),
                "name the flow with words: `flow bot greet user`",
            ));
        }
        if paren {
            self.expect_punct(")", "`)` closing the flow name", "close the name with `)`")?;
        }
        Ok(words.join(" "))
    }

    fn param_def(&mut self, what: &str) -> PResult<Param> {
        let t = self.peek();
        if t.tok != Tok::Var {
            return Err(self.unexpected(what, "write parameters as `$name` or `$name=default`"));
        }
        self.bump();
        let mut default = None;
        if self.is_punct("=") {
            self.bump();
            let v = self.test()?;
            default = Some(self.span_text(v));
        }
        Ok(Param {
            name: self.text(t).chars().skip(1).collect(),
            default,
        })
    }

    /// An indented block after a header line (`after` names the header for errors).
    fn suite(&mut self, after: &str) -> PResult<Vec<Stmt>> {
        if self.peek().tok != Tok::Newline {
            return Err(self.unexpected(
                &format!("the end of the line after {after}"),
                "end the header line here and put the block on the next lines, indented",
            ));
        }
        self.bump();
        if self.peek().tok != Tok::Indent {
            let t = self.peek();
            return Err(self.error_at(
                t,
                format!("expected an indented block after {after}"),
                "indent the block's lines more than the header line",
            ));
        }
        self.bump();
        self.enter()?;
        let mut body = Vec::new();
        loop {
            match self.peek().tok {
                Tok::Dedent => {
                    self.bump();
                    break;
                }
                Tok::Eof => break,
                Tok::Newline => {
                    self.bump();
                }
                Tok::Indent => {
                    let t = self.peek();
                    return Err(self.error_at(
                        t,
                        "unexpected indentation".to_string(),
                        "indent this line as the lines before it (comments too)",
                    ));
                }
                _ => body.push(self.stmt()?),
            }
        }
        self.leave();
        Ok(body)
    }

    fn colon_opt(&mut self) {
        if self.is_punct(":") {
            self.bump();
        }
    }

    /// `elif` or `else if` (NeMo's `_ELSE_IF`).
    fn at_elif(&self) -> bool {
        self.is_word("elif") || (self.is_word("else") && self.word_at(1, "if"))
    }

    /// `or when` / `orwhen` (NeMo's `_OR_WHEN`).
    fn at_or_when(&self) -> bool {
        self.is_word("orwhen")
            || (self.is_word("or") && self.peek().space_after <= 1 && self.word_at(1, "when"))
    }

    /// One statement, from its first token to the end of its line.
    pub(crate) fn stmt(&mut self) -> PResult<Stmt> {
        let t = self.peek();
        let kind = self.stmt_kind(t)?;
        Ok(Stmt {
            line: t.line,
            column: t.col,
            text: self.line_text(t.start),
            kind,
        })
    }

    fn word(&self, t: Token) -> String {
        if t.tok == Tok::Name {
            self.text(t)
        } else {
            String::new()
        }
    }

    fn stmt_kind(&mut self, t: Token) -> PResult<StmtKind> {
        match t.tok {
            Tok::LongStr => {
                self.bump();
                self.expect_newline("the docstring")?;
                return Ok(StmtKind::Docstring { text: self.text(t) });
            }
            Tok::Ellipsis => {
                self.bump();
                self.expect_newline("`...`")?;
                return Ok(StmtKind::Ellipsis);
            }
            Tok::Var => return self.set_stmt(),
            Tok::Punct("(") => {
                // `((bot a or bot b) and bot c)`: a group of specs; `($x.f())`: an expression.
                let mut k = 1;
                while matches!(self.peek_at(k).tok, Tok::Punct("(")) && k < 1000 {
                    k += 1;
                }
                let n = self.peek_at(k);
                let word = self.word(n);
                let spec_like = n.tok == Tok::Name
                    && !matches!(self.peek_at(k + 1).tok, Tok::Punct("("))
                    && !matches!(word.as_str(), "None" | "True" | "False" | "not");
                if spec_like {
                    return self.spec_stmt(None, t);
                }
                self.bump();
                let v = self.test()?;
                self.expect_punct(")", "`)` closing the expression", "close the expression with `)`")?;
                return Ok(StmtKind::Expr {
                    expr: self.span_text(v),
                });
            }
            Tok::Name => {}
            _ => {
                return Err(self.unexpected(
                    "a statement",
                    "start a statement with a keyword (`await`, `match`, `if`, ...), a flow name or `$var =`",
                ))
            }
        }
        let w = self.word(t);
        if let Some(rest) = fused_keyword(&w, "if") {
            return self.fused_if(t, &w, rest);
        }
        if let Some(op) = SpecOp::from_word(&w) {
            self.bump();
            let spec = self.spec_expr(true)?;
            self.expect_newline(&format!("the `{w}` statement"))?;
            return Ok(StmtKind::Spec {
                op,
                spec,
                assign: None,
                implicit: false,
            });
        }
        match w.as_str() {
            "return" => {
                self.bump();
                let expr = if matches!(self.peek().tok, Tok::Newline | Tok::Eof | Tok::Dedent) {
                    None
                } else {
                    let v = self.test()?;
                    Some(self.span_text(v))
                };
                self.expect_newline("`return`")?;
                Ok(StmtKind::Return { expr })
            }
            "abort" | "break" | "continue" | "pass" => {
                self.bump();
                self.expect_newline(&format!("`{w}`"))?;
                Ok(match w.as_str() {
                    "abort" => StmtKind::Abort,
                    "break" => StmtKind::Break,
                    "continue" => StmtKind::Continue,
                    _ => StmtKind::Pass,
                })
            }
            "log" | "print" => {
                self.bump();
                let v = if self.is_punct("(") {
                    self.bump();
                    let v = self.expr()?;
                    self.expect_punct(")", "`)`", "close the parentheses")?;
                    v
                } else {
                    self.expr()?
                };
                self.expect_newline(&format!("the `{w}` expression"))?;
                let expr = self.span_text(v);
                Ok(if w == "log" {
                    StmtKind::Log { expr }
                } else {
                    StmtKind::Print { expr }
                })
            }
            "priority" => {
                self.bump();
                let v = self.expr()?;
                self.expect_newline("the priority")?;
                Ok(StmtKind::Priority {
                    expr: self.span_text(v),
                })
            }
            "global" => {
                self.bump();
                let v = self.peek();
                if v.tok != Tok::Var {
                    return Err(
                        self.unexpected("a `$variable` after `global`", "write `global $name`")
                    );
                }
                self.bump();
                self.expect_newline("the global variable")?;
                Ok(StmtKind::Global { var: self.text(v) })
            }
            "import" => self.import_stmt(t),
            "if" => self.if_stmt(),
            "while" => {
                self.bump();
                let v = self.test()?;
                self.colon_opt();
                let body = self.suite("`while`")?;
                Ok(StmtKind::While {
                    cond: self.span_text(v),
                    body,
                })
            }
            "when" => self.when_stmt(),
            "elif" | "else" => Err(self.error_at(
                t,
                format!("`{w}` without an `if` (or `when`) just before it"),
                "put it at the same indentation as its `if`, directly after the `if` block",
            )),
            "orwhen" => Err(self.error_at(
                t,
                "`or when` without a `when` just before it".to_string(),
                "put it at the same indentation as its `when`, directly after the `when` block",
            )),
            "flow" if self.is_flow_keyword() => Err(self.error_at(
                t,
                "a flow cannot be defined inside another flow".to_string(),
                "start `flow` at column 1",
            )),
            _ if self.at_or_when() => Err(self.error_at(
                t,
                "`or when` without a `when` just before it".to_string(),
                "put it at the same indentation as its `when`, directly after the `when` block",
            )),
            _ if matches!(self.peek_at(1).tok, Tok::Punct(":")) => {
                self.bump();
                self.bump();
                self.expect_newline("the label")?;
                Ok(StmtKind::Label { name: w })
            }
            _ => self.spec_stmt(None, t),
        }
    }

    /// A statement that is a spec with no keyword (an implicit `await`), or `$x = spec`.
    fn spec_stmt(&mut self, assign: Option<String>, first: Token) -> PResult<StmtKind> {
        let spec = self.spec_expr(false)?;
        if self.peek().tok != Tok::Newline && !matches!(self.peek().tok, Tok::Eof | Tok::Dedent) {
            return Err(self.unexpected(
                "the end of the line after the flow or action",
                if first.tok == Tok::Punct("(") {
                    "a group `( ... )` of flows must hold flows joined by `or`/`and`"
                } else {
                    "arguments are values (`bot say \"hi\"`, `$x=1`); join specs with `or`/`and`"
                },
            ));
        }
        self.bump();
        Ok(StmtKind::Spec {
            op: SpecOp::Await,
            spec,
            assign,
            implicit: true,
        })
    }

    fn set_stmt(&mut self) -> PResult<StmtKind> {
        let var_tok = self.bump();
        let var: String = self.text(var_tok).chars().skip(1).collect();
        let op = match self.peek().tok {
            Tok::Punct("=") => "=",
            Tok::Punct("+=") => "+=",
            Tok::Punct("-=") => "-=",
            _ => {
                return Err(self.unexpected(
                    "`=`, `+=` or `-=` after the variable",
                    "assign with `$x = value`; a `$reference` alone is no statement",
                ))
            }
        };
        self.bump();
        let t = self.peek();
        if t.tok == Tok::Name {
            let w = self.word(t);
            if let Some(sop) = SpecOp::from_word(&w) {
                self.bump();
                let spec = self.spec_expr(true)?;
                self.expect_newline(&format!("the `{w}` statement"))?;
                return Ok(StmtKind::Spec {
                    op: sop,
                    spec,
                    assign: Some(var),
                    implicit: false,
                });
            }
            let value_word = matches!(w.as_str(), "None" | "True" | "False" | "not");
            if !value_word && !matches!(self.peek_at(1).tok, Tok::Punct("(")) {
                return self.spec_stmt(Some(var), t);
            }
        }
        if t.tok == Tok::Punct("(") {
            return self.spec_stmt(Some(var), t);
        }
        let v = self.test()?;
        self.expect_newline("the assigned value")?;
        Ok(StmtKind::Assign {
            var,
            op,
            expr: self.span_text(v),
        })
    }

    fn import_stmt(&mut self, kw: Token) -> PResult<StmtKind> {
        self.bump();
        let t = self.peek();
        let (path, written) = match t.tok {
            Tok::Str => {
                self.bump();
                (self.text(t), self.text(t))
            }
            Tok::Name => {
                let first = self.bump();
                let mut parts = vec![self.text(first)];
                while self.is_punct(".") && self.peek_at(1).tok == Tok::Name {
                    self.bump();
                    let w = self.bump();
                    parts.push(self.text(w));
                }
                (parts.join("/"), parts.join("."))
            }
            _ => {
                return Err(self.unexpected(
                    "a package name or a quoted path after `import`",
                    "write `import core` or `import \"path/to/file\"`",
                ))
            }
        };
        self.expect_newline("the import")?;
        Ok(StmtKind::Import(Import {
            path,
            written,
            line: kw.line,
            column: kw.col,
        }))
    }

    fn if_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let v = self.test()?;
        let cond = self.span_text(v);
        self.if_rest(cond)
    }

    /// A statement whose first word begins with `if` but is longer (`ifx`, `if2`): NeMo's lexer
    /// takes any such word as the keyword `if` (`_IF.1: /if/`) followed by the rest, so `if2`
    /// is `if 2` and `ifx`, `if_ready`, whose rest is a bare name, are its syntax errors.
    fn fused_if(&mut self, t: Token, w: &str, rest: &str) -> PResult<StmtKind> {
        let cond = self.fused_cond(t, w, "if", rest)?;
        self.if_rest(cond)
    }

    /// The condition of a fused `if`/`elif` word (`if2` → `2`), the word taken; an error at the
    /// word unless its rest is a number ending the condition.
    fn fused_cond(&mut self, t: Token, w: &str, kw: &str, rest: &str) -> PResult<String> {
        let next = self.peek_at(1).tok;
        if rest.chars().all(|c| c.is_ascii_digit())
            && matches!(next, Tok::Punct(":") | Tok::Newline | Tok::Eof)
        {
            self.bump();
            return Ok(rest.to_string());
        }
        Err(self.error_at(
            t,
            format!("`{w}` begins with the keyword `{kw}`: NeMo Guardrails' lexer reads it as `{kw} {rest}`, which is not a condition it accepts"),
            &format!("rename it so it does not begin with `{kw}` (at the start of a statement NeMo takes any word beginning with `{kw}` as the keyword), or write the `{kw}` with a space and a condition"),
        ))
    }

    /// What follows an `if`'s condition: its block, `elif`s and `else`.
    fn if_rest(&mut self, cond: String) -> PResult<StmtKind> {
        self.colon_opt();
        let then = self.suite("`if`")?;
        let mut elifs = Vec::new();
        loop {
            let kw = self.peek();
            let w = self.word(kw);
            // `elifx` / `else ifx`: NeMo's `_ELSE_IF.1: /(elif|else[^\S\r\n]+if)/` takes the
            // keyword from the front of the word, as `_IF` does.
            let fused = if let Some(rest) = fused_keyword(&w, "elif") {
                Some((kw, format!("elif{rest}"), "elif", rest.to_string()))
            } else if w == "else" {
                let n = self.peek_at(1);
                let nw = self.word(n);
                fused_keyword(&nw, "if")
                    .map(|rest| (n, format!("else {nw}"), "else if", rest.to_string()))
            } else {
                None
            };
            if let Some((word_tok, word, k, rest)) = fused {
                if w == "else" {
                    self.bump();
                }
                let c = self.fused_cond(word_tok, &word, k, &rest)?;
                self.colon_opt();
                let body = self.suite("`elif`")?;
                elifs.push((kw, c, body));
                continue;
            }
            if !self.at_elif() {
                break;
            }
            if self.is_word("else") {
                self.bump();
            }
            self.bump();
            let c = self.test()?;
            self.colon_opt();
            let body = self.suite("`elif`")?;
            elifs.push((kw, self.span_text(c), body));
        }
        let mut else_ = None;
        if self.is_word("else") {
            self.bump();
            self.colon_opt();
            else_ = Some(self.suite("`else`")?);
        }
        // NeMo nests each `elif` as an `If` alone in the else block of the one before.
        for (kw, cond, then) in elifs.into_iter().rev() {
            let nested = Stmt {
                line: kw.line,
                column: kw.col,
                text: self.line_text(kw.start),
                kind: StmtKind::If {
                    cond,
                    then,
                    else_,
                    elif: true,
                },
            };
            else_ = Some(vec![nested]);
        }
        Ok(StmtKind::If {
            cond,
            then,
            else_,
            elif: false,
        })
    }

    fn when_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let mut branches = Vec::new();
        let spec = self.spec_expr(true)?;
        self.colon_opt();
        branches.push((spec, self.suite("`when`")?));
        while self.at_or_when() {
            if self.is_word("or") {
                self.bump();
            }
            self.bump();
            let spec = self.spec_expr(true)?;
            self.colon_opt();
            branches.push((spec, self.suite("`or when`")?));
        }
        let mut else_ = None;
        if self.is_word("else") {
            self.bump();
            self.colon_opt();
            else_ = Some(self.suite("`else`")?);
        }
        Ok(StmtKind::When { branches, else_ })
    }
}

/// The rest of `w` when it begins with the keyword `kw` and is longer (`ifx` → `x`).
fn fused_keyword<'w>(w: &'w str, kw: &str) -> Option<&'w str> {
    w.strip_prefix(kw).filter(|rest| !rest.is_empty())
}
