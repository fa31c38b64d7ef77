//! The line reader: NeMo's `ColangParser.parse` loop (namespaces, branches, `if`/`else`
//! matching by indentation, `define`), with the statements in `statements.rs`.

use std::collections::HashSet;

use serde_json::Map;

use super::build::{Arena, IfData, Item, Raw, RawKind};
use super::normalize::{self, main_token, remove_token};
use super::text::{numbered_lines, string_hash, Line, Lines};
use super::{ElementKind, File, FlowDef, Import, SyntaxError, MAX_DEPTH};

/// The main tokens NeMo knows (`VALID_MAIN_TOKENS`).
const VALID: &[&str] = &[
    "import",
    "include",
    "use",
    "define",
    "when",
    "else when",
    "user",
    "bot",
    "event",
    "do",
    "flow",
    "allow",
    "accept",
    "disallow",
    "deny",
    "reject",
    "goto",
    "go to",
    "run",
    "set",
    "expect",
    "label",
    "checkpoint",
    "if",
    "else",
    "else if",
    "any",
    "infer",
    "pass",
    "continue",
    "break",
    "stop",
    "abort",
    "return",
    "done",
    "context",
    "meta",
    "log",
    "while",
    "for",
    "foreach",
];

/// The tokens that open a flow when none is open (`_check_flow_exists`).
const OPENS_FLOW: &[&str] = &[
    "user", "bot", "event", "if", "while", "for", "when", "any", "run", "label", "set", "goto",
    "go to", "do", "flow", "continue", "break", "stop", "abort", "done", "return", "check", "meta",
    "global", "var", "local", "param", "log",
];

/// An open list and the indentation of its statements.
#[derive(Debug, Clone, Copy)]
pub(super) struct Branch {
    pub(crate) list: usize,
    pub(crate) indentation: usize,
}

/// An open `if`.
#[derive(Debug, Clone, Copy)]
pub(super) struct IfRef {
    pub(crate) id: usize,
    pub(crate) indentation: usize,
    pub(crate) keyword_indentation: usize,
}

/// A flow being read.
#[derive(Debug, Clone)]
pub(super) struct FlowSlot {
    pub(crate) name: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) list: usize,
}

/// The reader's state (NeMo's `ColangParser` fields).
pub(super) struct Parser {
    pub(crate) lines: Lines,
    pub(crate) idx: usize,
    pub(crate) cur: Line,
    pub(crate) cur_ind: usize,
    pub(crate) next: Option<Line>,
    pub(crate) text: String,
    pub(crate) token: String,
    pub(crate) params_ind: u8,
    namespaces: Vec<String>,
    indentations: Vec<usize>,
    namespace: String,
    namespace_at: (usize, usize),
    pub(crate) branches: Vec<Branch>,
    pub(crate) ifs: Vec<IfRef>,
    pub(crate) arena: Arena,
    pub(crate) flows: Vec<FlowSlot>,
    /// The names in `flows`, to find one without a scan.
    flow_names: HashSet<String>,
    /// The packages in `file.imports`.
    import_names: HashSet<String>,
    pub(crate) file: File,
}

impl Parser {
    /// Read a whole file.
    pub(super) fn run(src: &str) -> Result<File, SyntaxError> {
        let lines = numbered_lines(src).map_err(|(line, column, message)| SyntaxError {
            line,
            column: column.max(1),
            message,
            help: Some("end the line without 'or' or '\\', or continue it on the next line".into()),
        })?;
        let budget = lines.len().saturating_mul(8).saturating_add(1000);
        let lines = Lines::new(lines);
        let mut p = Parser {
            cur: Line {
                text: String::new(),
                number: 1,
                indentation: 0,
                column: 1,
            },
            lines,
            idx: 0,
            cur_ind: 0,
            next: None,
            text: String::new(),
            token: String::new(),
            params_ind: 1,
            namespaces: Vec::new(),
            indentations: Vec::new(),
            namespace: String::new(),
            namespace_at: (1, 1),
            branches: Vec::new(),
            ifs: Vec::new(),
            arena: Arena::default(),
            flows: Vec::new(),
            flow_names: HashSet::new(),
            import_names: HashSet::new(),
            file: File::default(),
        };
        let mut steps = 0usize;
        while p.idx < p.lines.len() {
            steps += 1;
            if steps > budget {
                return Err(p.error(
                    "this file makes the reader go round in circles".into(),
                    "check the indentation of the lines around here",
                ));
            }
            p.step()?;
        }
        Ok(p.finish())
    }

    /// A syntax error at the current line.
    pub(super) fn error(&self, message: String, help: &str) -> SyntaxError {
        SyntaxError {
            line: self.cur.number.max(1),
            column: self.cur.column.max(1),
            message,
            help: (!help.is_empty()).then(|| help.to_string()),
        }
    }

    /// NeMo's `_fetch_current_line` in colang mode.
    pub(super) fn fetch(&mut self) {
        let Some(cur) = self.lines.get(self.idx).cloned() else {
            return;
        };
        self.cur = cur;
        self.cur_ind = self.cur.indentation;
        self.params_ind = 1;
        self.next = self.lines.get(self.idx + 1).cloned();
        let pre = main_token(&self.cur.text);
        let (lines, idx, ind) = (&self.lines, self.idx, self.cur.indentation);
        let anonymous = || {
            let body: String = lines
                .iter_from(idx + 1)
                .take_while(|l| l.indentation > ind)
                .map(|l| l.text.as_str())
                .collect();
            string_hash(&body)
        };
        self.text = normalize::colang(&self.cur.text, &anonymous);
        if pre == "else"
            && self
                .ifs
                .last()
                .is_none_or(|i| i.indentation <= self.cur_ind)
        {
            self.text = "else when flow resuming".into();
        }
        self.token = main_token(&self.text);
    }

    fn step(&mut self) -> Result<(), SyntaxError> {
        self.fetch();
        match self.token.as_str() {
            "import" | "include" => {
                self.record_import()?;
                return Ok(());
            }
            "define" => return self.define(),
            _ => {}
        }
        self.pop_finished();
        let indented_next = self
            .next
            .as_ref()
            .is_some_and(|n| n.indentation > self.cur.indentation);
        if !VALID.contains(&self.token.as_str()) && indented_next {
            let empty = self
                .branches
                .last()
                .is_none_or(|b| self.arena.lists.get(b.list).is_none_or(Vec::is_empty));
            if empty {
                let ns = self
                    .text
                    .strip_prefix(':')
                    .unwrap_or(&self.text)
                    .to_string();
                self.create_namespace(ns);
                return Ok(());
            }
        }
        self.check_flow_exists()?;
        if self.token == "when" || self.token == "else when" {
            self.parse_when()?;
        }
        self.statement()?;
        self.idx += 1;
        Ok(())
    }

    fn record_import(&mut self) -> Result<(), SyntaxError> {
        let rest = remove_token(&self.text);
        let mut name: &str = &rest;
        if name.starts_with(['"', '\'']) {
            let n = name.chars().count();
            name = if n >= 2 {
                let start = name.char_indices().nth(1).map_or(name.len(), |(i, _)| i);
                let end = name
                    .char_indices()
                    .nth(n - 1)
                    .map_or(name.len(), |(i, _)| i);
                &name[start..end.max(start)]
            } else {
                ""
            };
        } else if name.is_empty() {
            return Err(self.error(
                format!("'{}' names no package", self.token),
                "write the package after it: `import core`",
            ));
        }
        let name = name.strip_prefix("bot/").unwrap_or(name).to_string();
        if self.import_names.insert(name.clone()) {
            self.file.imports.push(Import {
                package: name,
                line: self.cur.number,
                column: self.cur.column,
            });
        }
        self.idx += 1;
        Ok(())
    }

    /// NeMo's `_check_ifs_and_branches`: close the blocks this line is outdented from.
    fn pop_finished(&mut self) {
        while self
            .branches
            .last()
            .is_some_and(|b| self.cur_ind < b.indentation)
        {
            self.branches.pop();
        }
        let is_else = self.token == "else" || self.token == "else if";
        while let Some(i) = self.ifs.last() {
            if self.cur_ind < i.indentation && (!is_else || self.cur_ind < i.keyword_indentation) {
                self.ifs.pop();
            } else {
                break;
            }
        }
    }

    fn create_namespace(&mut self, ns: String) {
        while self
            .indentations
            .last()
            .is_some_and(|&i| i > self.cur.indentation)
        {
            self.indentations.pop();
            self.namespaces.pop();
        }
        self.namespaces.push(ns);
        self.namespace = self.namespaces.join(".");
        let next_ind = self.next.as_ref().map_or(0, |n| n.indentation);
        self.cur_ind = next_ind;
        self.indentations.push(next_ind);
        self.namespace_at = self
            .lines
            .get(self.idx)
            .map_or((self.cur.number, self.cur.column), |l| (l.number, l.column));
        self.branches.clear();
        self.ifs.clear();
        self.idx += 1;
    }

    fn check_flow_exists(&mut self) -> Result<(), SyntaxError> {
        if !OPENS_FLOW.contains(&self.token.as_str()) {
            return Ok(());
        }
        if self.flow_names.contains(&self.namespace) {
            return Ok(());
        }
        let list = self.arena.new_list();
        let (line, column) = self.namespace_at;
        self.flow_names.insert(self.namespace.clone());
        self.flows.push(FlowSlot {
            name: self.namespace.clone(),
            line,
            column,
            list,
        });
        self.branches = vec![Branch {
            list,
            indentation: self.cur.indentation,
        }];
        Ok(())
    }

    /// The list statements go into now.
    pub(super) fn current_list(&self) -> Result<usize, SyntaxError> {
        match self.branches.last() {
            Some(b) => Ok(b.list),
            None => {
                let defined = self.flow_names.contains(&self.namespace);
                Err(if defined && !self.namespace.is_empty() {
                    self.error(
                        format!(
                            "'{}' is outside any flow (or flow '{}' is defined twice)",
                            self.cur.text, self.namespace
                        ),
                        "indent the statement under a `define flow`, and give each flow its own name",
                    )
                } else {
                    self.error(
                        format!("'{}' is outside any flow", self.cur.text),
                        "put the statement in an indented block under `define flow <name>`",
                    )
                })
            }
        }
    }

    /// Append an element built from the current line.
    pub(super) fn add(&mut self, kind: RawKind) -> Result<(), SyntaxError> {
        let list = self.current_list()?;
        let raw = self.raw(kind);
        self.arena.push(list, Item::El(raw));
        Ok(())
    }

    /// An element at the current line.
    pub(super) fn raw(&self, kind: RawKind) -> Raw {
        let t = &self.cur.text;
        let kw = if t.starts_with("else when") {
            Some("else when")
        } else if t.starts_with("when") {
            Some("when")
        } else {
            None
        };
        Raw {
            line: self.cur.number,
            column: self.cur.column,
            kw,
            kind,
        }
    }

    /// Open a block whose statements are indented like the next line.
    pub(super) fn open(&mut self, list: usize, keyword: &str) -> Result<usize, SyntaxError> {
        let ind = match &self.next {
            Some(n) if n.indentation > self.cur_ind => n.indentation,
            _ => {
                return Err(self.error(
                    format!("expected an indented block after '{keyword}'"),
                    &format!("indent the statements that belong to this '{keyword}' under it"),
                ))
            }
        };
        if self.branches.len() >= MAX_DEPTH {
            return Err(self.error(
                format!("blocks nest more than {MAX_DEPTH} deep here"),
                "move the inner part into a subflow and call it with `do`",
            ));
        }
        self.branches.push(Branch {
            list,
            indentation: ind,
        });
        Ok(ind)
    }

    /// `if cond` (also the `if` of `else if`).
    pub(super) fn parse_if(&mut self, cond: String, elif: bool) -> Result<(), SyntaxError> {
        let then = self.arena.new_list();
        let id = self.arena.ifs.len();
        self.arena.ifs.push(IfData {
            cond,
            elif,
            then,
            else_: None,
        });
        self.add(RawKind::If(id))?;
        let ind = self.open(then, "if")?;
        self.ifs.push(IfRef {
            id,
            indentation: ind,
            keyword_indentation: self.cur_ind,
        });
        Ok(())
    }

    /// `else` / `else if cond`.
    pub(super) fn parse_else(&mut self) -> Result<(), SyntaxError> {
        let Some(r) = self.ifs.last().copied() else {
            return Err(self.error(
                format!("'{}' has no 'if' to belong to", self.cur.text),
                "put the 'else' at the indentation of its 'if', right after the if's block",
            ));
        };
        let list = self.arena.new_list();
        if let Some(d) = self.arena.ifs.get_mut(r.id) {
            d.else_ = Some(list);
        }
        if self.branches.len() >= MAX_DEPTH {
            return Err(self.error(
                format!("blocks nest more than {MAX_DEPTH} deep here"),
                "move the inner part into a subflow and call it with `do`",
            ));
        }
        self.branches.push(Branch {
            list,
            indentation: r.indentation,
        });
        if self.token == "else if" {
            let cond = super::text::split_max(&self.text, " ", 2)
                .get(2)
                .map(|s| super::text::py_strip(s).to_string())
                .unwrap_or_default();
            self.parse_if(cond, true)?;
        } else if self
            .next
            .as_ref()
            .is_none_or(|n| n.indentation <= self.cur_ind)
        {
            return Err(self.error(
                "expected an indented block after 'else'".into(),
                "indent the statements that belong to this 'else' under it",
            ));
        }
        Ok(())
    }

    /// `when X` / `else when X`: open a branch and read X as its first statement.
    fn parse_when(&mut self) -> Result<(), SyntaxError> {
        if self
            .next
            .as_ref()
            .is_none_or(|n| n.indentation <= self.cur.indentation)
        {
            return Err(self.error(
                format!("expected an indented block after '{}'", self.token),
                "indent what happens after the event under the 'when'",
            ));
        }
        let parent = self.current_list()?;
        let list = self.arena.new_list();
        self.arena.push(parent, Item::When(list));
        if self.branches.len() >= MAX_DEPTH {
            return Err(self.error(
                format!("blocks nest more than {MAX_DEPTH} deep here"),
                "move the inner part into a subflow and call it with `do`",
            ));
        }
        self.text = if self.token == "when" {
            remove_token(&self.text)
        } else {
            remove_token(&remove_token(&self.text))
        };
        if self.token == "when" && self.text.starts_with("no ") {
            return Err(self.error(
                "'when no ...' is not supported by NeMo's Colang 1.0 reader".into(),
                "write the event the flow waits for (`when user X`), and the other case in `else when`",
            ));
        }
        let first = self.cur.indentation;
        let level = self
            .lines
            .iter_from(self.idx + 1)
            .take_while(|l| l.indentation > first)
            .map(|l| l.indentation)
            .min()
            .unwrap_or(first + 1);
        self.cur_ind = level;
        self.branches.push(Branch {
            list,
            indentation: level,
        });
        self.params_ind = 2;
        self.token = main_token(&self.text);
        Ok(())
    }

    fn finish(self) -> File {
        let mut file = self.file;
        for slot in &self.flows {
            let mut elements = self.arena.build(slot.list);
            let mut meta = Map::new();
            if let Some(first) = elements.first() {
                if let ElementKind::Meta { meta: m } = &first.kind {
                    meta = m.clone();
                    elements.remove(0);
                }
            }
            file.flows.push(FlowDef {
                name: slot.name.clone(),
                line: slot.line,
                column: slot.column,
                meta,
                elements,
            });
        }
        file
    }
}
