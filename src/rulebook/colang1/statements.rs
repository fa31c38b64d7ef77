//! One statement per line (NeMo's `_parse_user`, `_parse_bot`, `_parse_run`, ... and
//! `_process_define`), each turned into an element of the open block.

use serde_json::{Map, Value};

use super::build::RawKind;
use super::markdown::Symbol;
use super::normalize::{main_token, remove_token};
use super::parser::Parser;
use super::text::{after_first, py_strip, split_max, word_split, Line};
use super::values::{inline_params, to_value, with_params, Dict, Param, IS_NOT_NONE};
use super::{ElementKind, SyntaxError};

impl Parser {
    /// `define ...` (NeMo's `_process_define`).
    pub(super) fn define(&mut self) -> Result<(), SyntaxError> {
        let next_indented = self
            .next
            .as_ref()
            .is_some_and(|n| n.indentation > self.cur.indentation);
        if self.next.is_none() || !next_indented && self.text.starts_with("define user") {
            if !self.text.starts_with("define user") && !self.text.contains(" bot ") {
                return Err(self.error(
                    format!("expected an indented block after '{}'", self.text),
                    "indent the flow's statements under its `define`",
                ));
            }
            let line = Line {
                text: self.text.replace("define user", ""),
                number: self.cur.number,
                indentation: self.cur.indentation + 2,
                column: self.cur.column,
            };
            self.lines.insert(self.idx + 1, line.clone());
            self.next = Some(line);
        }
        if self
            .next
            .as_ref()
            .is_none_or(|n| n.indentation <= self.cur.indentation)
        {
            return Err(self.error(
                "Expected indented block after define statement.".into(),
                "indent the body (utterances, or the flow's statements) under the `define` line",
            ));
        }
        let mut text = remove_token(&self.text);
        let mut token = main_token(&text);
        let mut modifiers: Vec<(&'static str, bool)> = Vec::new();
        while !["bot", "user", "flow", "subflow", "action"].contains(&token.as_str()) {
            let m = match token.as_str() {
                "interruption" | "repair" => ("is_interruption_flow", true),
                "test" => ("is_test", true),
                "non-interruptable" | "noninterruptable" | "continuous" => ("interruptable", false),
                "recursive" | "parallel" => ("allow_multiple", true),
                "extension" => ("is_extension", true),
                "sample" => ("is_sample", true),
                "response" => ("is_response", true),
                _ => {
                    return Err(self.error(
                        format!("Unknown token: \"{token}\""),
                        "write `define user X`, `define bot X`, `define flow X` or `define subflow X` (modifiers: parallel, extension, interruption, test, sample, response, non-interruptable)",
                    ))
                }
            };
            if let Some(slot) = modifiers.iter_mut().find(|(k, _)| *k == m.0) {
                slot.1 = m.1;
            } else {
                modifiers.push(m);
            }
            text = remove_token(&text);
            token = main_token(&text);
        }
        let name = remove_token(&text);
        let at = (self.cur.number, self.cur.column);
        match token.as_str() {
            "action" => {
                self.idx += 1;
                while self.lines.get(self.idx).is_some_and(|l| l.indentation > 0) {
                    self.idx += 1;
                }
                Ok(())
            }
            "flow" | "subflow" => {
                if let Some(l) = self.lines.get_mut(self.idx) {
                    l.text = format!(":{name}:");
                }
                if token == "subflow" {
                    modifiers.push(("subflow", true));
                }
                if !modifiers.is_empty() {
                    let next_ind = self.next.as_ref().map_or(0, |n| n.indentation);
                    let meta_ind = if self
                        .lines
                        .get(self.idx + 1)
                        .is_some_and(|l| l.text == "meta")
                    {
                        self.lines
                            .get(self.idx + 2)
                            .map_or(next_ind + 2, |l| l.indentation)
                    } else {
                        self.lines.insert(
                            self.idx + 1,
                            Line {
                                text: "meta".into(),
                                number: self.cur.number,
                                indentation: next_ind,
                                column: self.cur.column,
                            },
                        );
                        next_ind + 2
                    };
                    for (k, v) in modifiers {
                        let v = if v { "True" } else { "False" };
                        self.lines.insert(
                            self.idx + 2,
                            Line {
                                text: format!("{k}: {v}"),
                                number: self.cur.number,
                                indentation: meta_ind,
                                column: self.cur.column,
                            },
                        );
                    }
                }
                Ok(())
            }
            "user" => {
                let name = word_split(&name, " ").join(" ").replace('|', " ");
                self.markdown(Symbol::Intent, name, at)
            }
            _ => self.markdown(Symbol::Utterance, name, at),
        }
    }

    /// The statement on the current line (NeMo's dispatch on the main token).
    pub(super) fn statement(&mut self) -> Result<(), SyntaxError> {
        let token = self.token.clone();
        match token.as_str() {
            "user" => self.user(),
            "bot" => self.bot(),
            "event" => self.event(),
            "do" => self.call(),
            "goto" | "go to" => {
                let n = if token == "goto" { 1 } else { 2 };
                let label = split_max(&self.text, " ", n).get(n).cloned().unwrap_or_default();
                self.add(RawKind::Leaf(ElementKind::Goto { label }))
            }
            "meta" => self.meta(),
            "set" | "expect" | "check" => self.generic(&token),
            "run" => self.execute(),
            "label" | "checkpoint" => self.label(),
            "if" => {
                let cond = after_first(&self.text, " ").map(py_strip).unwrap_or("").to_string();
                self.parse_if(cond, false)
            }
            "while" => {
                let cond = after_first(&self.text, " ").map(py_strip).unwrap_or("").to_string();
                let body = self.arena.new_list();
                self.add(RawKind::While { cond, body })?;
                self.open(body, "while").map(|_| ())
            }
            "else" | "else if" => self.parse_else(),
            "any" => {
                let body = self.arena.new_list();
                self.add(RawKind::Any(body))?;
                self.open(body, "any").map(|_| ())
            }
            "infer" => self.infer(),
            "pass" | "continue" => self.add(RawKind::Leaf(ElementKind::Continue)),
            "stop" => self.add(RawKind::Leaf(ElementKind::Stop)),
            "abort" => self.add(RawKind::Leaf(ElementKind::Abort)),
            "break" => self.add(RawKind::Leaf(ElementKind::Break)),
            "return" | "done" => {
                let values = after_first(&self.text, " ")
                    .map(|r| r.split(',').map(|v| py_strip(v).to_string()).collect())
                    .unwrap_or_default();
                self.add(RawKind::Leaf(ElementKind::Return { values }))
            }
            "flow" if self.cur.text.starts_with("else") => Err(self.error(
                format!("'{}' has no 'if' to belong to", self.cur.text),
                "put the 'else' at the indentation of its 'if', right after the if's block",
            )),
            _ => Err(self.error(
                format!("Unknown main token '{token}'"),
                "a flow statement starts with user, bot, execute, do, if, else, when, while, $var =, create event, stop, abort, return, break or continue",
            )),
        }
    }

    fn fail(&self, msg: String) -> SyntaxError {
        self.error(msg, "check the statement against Colang 1.0's syntax")
    }

    fn user(&mut self) -> Result<(), SyntaxError> {
        if self.text.contains(" or ") {
            let parts = word_split(&self.text, " or ");
            if parts.len() > 1 {
                let (number, column) = (self.cur.number, self.cur.column);
                let mut at = self.idx + 1;
                self.lines.insert(
                    at,
                    Line {
                        text: "any".into(),
                        number,
                        indentation: self.cur_ind,
                        column,
                    },
                );
                for part in parts {
                    at += 1;
                    self.lines.insert(
                        at,
                        Line {
                            text: part,
                            number,
                            indentation: self.cur_ind + 8,
                            column,
                        },
                    );
                }
                return Ok(());
            }
        }
        let mut value = after_first(&self.text, " ")
            .map(py_strip)
            .unwrap_or("")
            .to_string();
        let mut as_var = None;
        if let Some(p) = value.find(" as $") {
            if value.len() > p + 5 {
                as_var = Some(value[p + 5..].to_string());
                value.truncate(p);
            }
        }
        value = with_params(&value);
        if value.starts_with('[') {
            return Err(
                self.fail("a list of intents after 'user' is not supported by this reader".into())
            );
        }
        let Some(first) = value.chars().next() else {
            return Err(self.error("'user' names no intent".into(), "write `user <intent>`"));
        };
        let example = first == '"' || first == '\'';
        if example {
            let n = value.chars().count();
            value = value.chars().skip(1).take(n.saturating_sub(2)).collect();
        }
        let extra = self.params_if_indented()?;
        let (name, inline) = if value.contains('(') {
            inline_params(&value).map_err(|e| self.fail(e))?
        } else {
            (value, Vec::new())
        };
        let mut params = Map::new();
        for (k, v) in extra {
            if !k.starts_with('_') {
                params.insert(k, v);
            }
        }
        for (k, p) in inline {
            if let Param::Given(v) = p {
                params.insert(k.strip_prefix('$').unwrap_or(&k).to_string(), v);
            }
        }
        self.add(RawKind::Leaf(ElementKind::User {
            name,
            params,
            example,
            as_var,
        }))
    }

    fn event(&mut self) -> Result<(), SyntaxError> {
        let text = with_params(after_first(&self.text, " ").unwrap_or(""));
        let extra = self.params_if_indented()?;
        let (name, inline) = if text.contains('(') {
            inline_params(&text).map_err(|e| self.fail(e))?
        } else {
            (text, Vec::new())
        };
        let mut args = Map::new();
        for (k, v) in extra {
            args.insert(k, self.reval(v)?);
        }
        for (k, p) in inline {
            let v = match p {
                Param::Given(v) => v,
                Param::Bare(_) => Value::String(IS_NOT_NONE.into()),
            };
            args.insert(k, v);
        }
        self.add(RawKind::Leaf(ElementKind::Event { name, args }))
    }

    /// NeMo's `_to_value` on a value that is already read: strings are read again.
    fn reval(&self, v: Value) -> Result<Value, SyntaxError> {
        match v {
            Value::String(s) => to_value(&s).map_err(|e| self.fail(e)),
            other => Ok(other),
        }
    }

    fn call(&mut self) -> Result<(), SyntaxError> {
        let value = with_params(after_first(&self.text, " ").map(py_strip).unwrap_or(""));
        let (mut head, tail) = match value.find('(') {
            Some(p) => (value[..p].to_string(), value[p..].to_string()),
            None => (value.clone(), String::new()),
        };
        let mut result = Vec::new();
        if let Some((vars, name)) = head.clone().split_once('=') {
            result = vars
                .split(',')
                .map(|v| {
                    let v = py_strip(v);
                    v.strip_prefix('$').unwrap_or(v).to_string()
                })
                .collect();
            head = py_strip(name).to_string();
            if result.iter().any(String::is_empty) {
                return Err(self.fail(format!("'{}' assigns to no variable", self.cur.text)));
            }
        }
        let full = format!("{}{tail}", py_strip(&head));
        let extra = self.params_if_indented()?;
        let (name, inline) = if full.contains('(') {
            inline_params(&full).map_err(|e| self.fail(e))?
        } else {
            (full, Vec::new())
        };
        let mut args = Map::new();
        for (k, v) in extra {
            args.insert(k, self.reval(v)?);
        }
        for (i, (k, p)) in inline.into_iter().enumerate() {
            match p {
                Param::Given(v) => {
                    args.insert(k, self.reval(v)?);
                }
                Param::Bare(key) => {
                    args.insert(format!("${i}"), self.reval(key)?);
                }
            }
        }
        self.add(RawKind::Leaf(ElementKind::Do { name, args, result }))
    }

    fn execute(&mut self) -> Result<(), SyntaxError> {
        let value = with_params(after_first(&self.text, " ").map(py_strip).unwrap_or(""));
        let extra = self.params_if_indented()?;
        let (mut name, inline) = if value.contains('(') {
            inline_params(&value).map_err(|e| self.fail(e))?
        } else {
            (value, Vec::new())
        };
        let mut given: Dict<Value> = Dict::default();
        let mut positional = Vec::new();
        for (k, p) in inline {
            match p {
                Param::Given(v) => given.set(k, v),
                Param::Bare(key) => positional.push(key),
            }
        }
        for (i, key) in positional.into_iter().enumerate() {
            given.set(format!("${}", i + 1), key);
        }
        let mut result = None;
        if let Some((r, n)) = name.clone().split_once('=') {
            let r = py_strip(r);
            let Some(first) = r.chars().next() else {
                return Err(self.fail(format!("'{}' assigns to no variable", self.cur.text)));
            };
            result = Some(if first == '$' {
                r[1..].to_string()
            } else {
                r.to_string()
            });
            name = py_strip(n).to_string();
        }
        let mut args = Map::new();
        for (k, v) in extra {
            args.insert(k, self.reval(v)?);
        }
        for (k, v) in given.into_vec() {
            args.insert(k, v);
        }
        self.add(RawKind::Leaf(ElementKind::Execute { name, args, result }))
    }

    fn generic(&mut self, token: &str) -> Result<(), SyntaxError> {
        let mut value = after_first(&self.text, " ")
            .map(py_strip)
            .unwrap_or("")
            .to_string();
        let Some(first) = value.chars().next() else {
            return Err(self.error(
                format!("'{token}' has nothing after it"),
                "write `$name = value`",
            ));
        };
        if first == '"' || first == '\'' {
            let n = value.chars().count();
            value = value.chars().skip(1).take(n.saturating_sub(2)).collect();
        }
        let params: Map<String, Value> = self.params_if_indented()?.into_iter().collect();
        if token == "set" {
            let Some((k, e)) = value.split_once('=') else {
                return Err(self.error(
                    format!("'{}' assigns nothing", self.cur.text),
                    "write `$name = expression`",
                ));
            };
            let k = py_strip(k);
            if k.is_empty() {
                return Err(self.error(
                    format!("'{}' assigns to no variable", self.cur.text),
                    "write `$name = expression`",
                ));
            }
            let var = k.strip_prefix('$').unwrap_or(k).to_string();
            return self.add(RawKind::Leaf(ElementKind::Set {
                var,
                expr: py_strip(e).to_string(),
            }));
        }
        self.add(RawKind::Leaf(ElementKind::Generic {
            keyword: token.to_string(),
            value,
            params,
        }))
    }

    fn label(&mut self) -> Result<(), SyntaxError> {
        let rest = after_first(&self.text, " ")
            .map(py_strip)
            .unwrap_or("")
            .to_string();
        let cut = rest.find(['$', '"']).unwrap_or(rest.len());
        let name = py_strip(&rest[..cut]).to_string();
        if name.is_empty() {
            return Err(self.error("Invalid label syntax.".into(), "write `label <name>`"));
        }
        let mut value = None;
        let v = &rest[cut..];
        if let Some(q) = v.strip_prefix('"') {
            let inner = q.rfind('"').map_or(q, |e| &q[..e]);
            value = Some(inner.to_string());
        } else if !v.is_empty() {
            value = Some(v.to_string());
        }
        self.params_if_indented()?;
        self.add(RawKind::Leaf(ElementKind::Label { name, value }))
    }

    fn meta(&mut self) -> Result<(), SyntaxError> {
        let rest = remove_token(&self.text);
        let mut meta: Map<String, Value> = Map::new();
        if rest.starts_with('{') {
            meta = serde_json::from_str(&rest).map_err(|_| {
                self.error(
                    format!("Bad meta value: {rest}"),
                    "write the meta as JSON, e.g. `meta {\"priority\": 2}`",
                )
            })?;
        }
        for (k, v) in self.params_if_indented()? {
            meta.insert(k, v);
        }
        let list = self.current_list()?;
        if let Some(items) = self.arena.lists.get_mut(list) {
            use super::build::{Item, Raw};
            let has = matches!(
                items.first(),
                Some(Item::El(Raw {
                    kind: RawKind::Leaf(ElementKind::Meta { .. }),
                    ..
                }))
            );
            if !has {
                items.insert(
                    0,
                    Item::El(Raw {
                        line: self.cur.number,
                        column: self.cur.column,
                        kw: None,
                        kind: RawKind::Leaf(ElementKind::Meta { meta: Map::new() }),
                    }),
                );
            }
            if let Some(Item::El(Raw {
                kind: RawKind::Leaf(ElementKind::Meta { meta: m }),
                ..
            })) = items.first_mut()
            {
                for (k, v) in meta {
                    m.insert(k, v);
                }
            }
        }
        Ok(())
    }

    fn infer(&mut self) -> Result<(), SyntaxError> {
        let rest = remove_token(&self.text);
        if !rest.is_empty() {
            let line = Line {
                text: rest,
                number: self.cur.number,
                indentation: self.cur_ind + 1,
                column: self.cur.column,
            };
            self.lines.insert(self.idx + 1, line.clone());
            self.next = Some(line);
        }
        let body = self.arena.new_list();
        self.add(RawKind::Infer(body))?;
        self.open(body, "create event").map(|_| ())
    }
}
