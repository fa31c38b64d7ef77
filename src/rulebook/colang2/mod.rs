//! Colang 2.x (SPEC 2.4): the parser, its syntax tree, and the lowering onto [`super::flows`].
//!
//! [`parse`] reads a file as NeMo Guardrails' own Colang 2.x parser (its Lark grammar, indenter
//! and transformer) does, into a [`File`]: imports, and flows with their decorators, parameters,
//! return members and statements. Expressions are kept as written (the exact source text NeMo
//! keeps). [`to_oracle_json`] writes the tree in the shape of the corpus oracle
//! (`shared/corpus/colang/oracle.py`), which the conformance test compares with what NeMo read;
//! [`lower`] maps it onto the language-neutral [`super::flows::FileFlows`].
//!
//! Lines and columns are 1-based; columns count characters.

mod expr;
mod lexer;
mod literal;
mod lower;
mod oracle;
mod parser;
mod spec;
mod stmt;

pub use lower::lower;
pub use oracle::to_oracle_json;

use super::SyntaxError;

/// The deepest nesting of blocks, brackets and spec groups the parser follows; deeper input is
/// a [`SyntaxError`] (it keeps the recursion bounded).
pub(crate) const MAX_DEPTH: usize = 64;

/// A parsed Colang 2.x file.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// `import` statements in file order.
    pub(crate) imports: Vec<Import>,
    /// The raw `import ...` lines of the file, trimmed (as the oracle collects them, docstrings
    /// included).
    pub(crate) import_lines: Vec<String>,
    /// Flows in file order.
    pub(crate) flows: Vec<FlowDef>,
    /// The file has a line starting `# meta: exclude from llm` (NeMo marks all its flows).
    pub(crate) exclude_from_llm: bool,
}

/// An `import`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    /// As NeMo records it: a package `a.b` as the path `a/b`; a quoted path with its quotes.
    pub(crate) path: String,
    /// The package or path as written (`core`, `a.b`, `"x/y"`).
    pub(crate) written: String,
    /// 1-based line of the `import` keyword.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
}

/// A flow definition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlowDef {
    /// The name: its words joined by one space (`bot say`).
    pub(crate) name: String,
    /// 1-based line where the definition starts: its first decorator, else `flow`.
    pub(crate) line: usize,
    /// 1-based column of the same.
    pub(crate) column: usize,
    /// 1-based line of the `flow` keyword.
    pub(crate) flow_line: usize,
    /// 1-based column of the `flow` keyword.
    pub(crate) flow_column: usize,
    /// Decorators in order.
    pub(crate) decorators: Vec<Decorator>,
    /// Parameters (`$text`, `$x=1`).
    pub(crate) params: Vec<Param>,
    /// Return members (`-> $a, $b = 2`).
    pub(crate) returns: Vec<Param>,
    /// Statements (a leading docstring is the first statement).
    pub(crate) body: Vec<Stmt>,
}

impl FlowDef {
    /// The flow's docstring (its first statement, if a `"""` string), as written with quotes.
    pub(crate) fn docstring(&self) -> Option<&str> {
        match self.body.first().map(|s| &s.kind) {
            Some(StmtKind::Docstring { text }) => Some(text),
            _ => None,
        }
    }
}

/// A decorator (`@active`, `@meta(user_intent=True)`, `@loop("x")`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decorator {
    /// Its name.
    pub(crate) name: String,
    /// Its arguments, evaluated as Python literals (positional ones named `$0`, `$1`, ...).
    pub(crate) params: Vec<(String, serde_json::Value)>,
}

/// A flow parameter or return member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    /// The name without `$`.
    pub(crate) name: String,
    /// The default value as written.
    pub(crate) default: Option<String>,
}

/// A statement with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stmt {
    /// 1-based line of its first token.
    pub(crate) line: usize,
    /// 1-based column of its first token.
    pub(crate) column: usize,
    /// Its first line as written, trimmed.
    pub(crate) text: String,
    /// What it says.
    pub(crate) kind: StmtKind,
}

/// The keyword of a spec statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecOp {
    /// `await` (also what a bare spec means).
    Await,
    /// `match`.
    Match,
    /// `send`.
    Send,
    /// `start`.
    Start,
    /// `stop`.
    Stop,
    /// `activate`.
    Activate,
    /// `deactivate`.
    Deactivate,
}

impl SpecOp {
    /// The keyword as written.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SpecOp::Await => "await",
            SpecOp::Match => "match",
            SpecOp::Send => "send",
            SpecOp::Start => "start",
            SpecOp::Stop => "stop",
            SpecOp::Activate => "activate",
            SpecOp::Deactivate => "deactivate",
        }
    }

    pub(crate) fn from_word(w: &str) -> Option<SpecOp> {
        Some(match w {
            "await" => SpecOp::Await,
            "match" => SpecOp::Match,
            "send" => SpecOp::Send,
            "start" => SpecOp::Start,
            "stop" => SpecOp::Stop,
            "activate" => SpecOp::Activate,
            "deactivate" => SpecOp::Deactivate,
            _ => return None,
        })
    }
}

/// What a statement says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StmtKind {
    /// `await|match|send|start|stop|activate|deactivate SPEC`, a bare spec (`bot say "hi"`,
    /// an implicit `await`), or `$x = await SPEC`.
    Spec {
        /// The keyword (`Await` for a bare spec).
        op: SpecOp,
        /// What it names.
        spec: SpecExpr,
        /// `$x = ...`: the variable, without `$`.
        assign: Option<String>,
        /// No keyword was written.
        implicit: bool,
    },
    /// `$x = expr`, `$x += expr`, `$x -= expr`.
    Assign {
        /// The variable, without `$`.
        var: String,
        /// `=`, `+=` or `-=`.
        op: &'static str,
        /// The expression as written.
        expr: String,
    },
    /// `if`/`elif`/`else`.
    If {
        /// The condition as written.
        cond: String,
        /// The `if` block.
        then: Vec<Stmt>,
        /// The `else` block (an `elif` is an `If` alone in it); `None` when there is no else.
        else_: Option<Vec<Stmt>>,
        /// This `If` was written `elif` (NeMo gives it no source line).
        elif: bool,
    },
    /// `while cond`.
    While {
        /// The condition as written.
        cond: String,
        /// Its block.
        body: Vec<Stmt>,
    },
    /// `when`/`or when`/`else`.
    When {
        /// Each branch: what it waits for, and its block.
        branches: Vec<(SpecExpr, Vec<Stmt>)>,
        /// The `else` block.
        else_: Option<Vec<Stmt>>,
    },
    /// `return [expr]`.
    Return {
        /// What it returns, as written (`None` when nothing is given; NeMo then writes `None`).
        expr: Option<String>,
    },
    /// `abort`.
    Abort,
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `pass`.
    Pass,
    /// A `"""docstring"""` statement, with its quotes.
    Docstring {
        /// The string as written.
        text: String,
    },
    /// `log expr`.
    Log {
        /// The expression as written.
        expr: String,
    },
    /// `print expr`.
    Print {
        /// The expression as written.
        expr: String,
    },
    /// `priority expr`.
    Priority {
        /// The expression as written.
        expr: String,
    },
    /// `global $x`.
    Global {
        /// The variable, with its `$`.
        var: String,
    },
    /// `name:` (a label).
    Label {
        /// The label.
        name: String,
    },
    /// `(expr)`, an expression evaluated for its effect.
    Expr {
        /// The expression inside the parentheses, as written.
        expr: String,
    },
    /// A bare `...`: NeMo generates a flow with the LLM here and runs it.
    Ellipsis,
    /// `import` inside a flow (allowed by the grammar; NeMo ignores it there).
    Import(Import),
}

/// What a spec names: one spec, or an `or`/`and` of them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SpecExpr {
    /// One spec.
    One(Spec),
    /// `a or b or ...`: the first to happen.
    Or(Vec<SpecExpr>),
    /// `a and b and ...`: all of them.
    And(Vec<SpecExpr>),
}

/// What NeMo takes a spec to be (from its name's case and ending).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecType {
    /// A lower-case name: a flow.
    Flow,
    /// A name ending in `Action` (not starting `Start`, `Change`, `Stop`): an action.
    Action,
    /// Any other name: an event.
    Event,
    /// `$ref`: a reference.
    Reference,
}

impl SpecType {
    /// As NeMo spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SpecType::Flow => "flow",
            SpecType::Action => "action",
            SpecType::Event => "event",
            SpecType::Reference => "reference",
        }
    }
}

/// One spec: a flow, action or event with arguments, or a `$reference`, with members and an
/// `as $ref` capture.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    /// The name's words joined by one space (`None` for a reference).
    pub(crate) name: Option<String>,
    /// The reference variable with its `$` (`None` for a named spec).
    pub(crate) var: Option<String>,
    /// What NeMo takes it to be.
    pub(crate) spec_type: SpecType,
    /// Arguments: name (positional ones `$0`, `$1`, ...) and the expression as written.
    pub(crate) args: Vec<(String, String)>,
    /// Members (`.Finished()`, `.Stop`).
    pub(crate) members: Vec<Member>,
    /// `as $x`: the variable with its `$`.
    pub(crate) capture: Option<String>,
    /// 1-based line of its first token.
    pub(crate) line: usize,
    /// 1-based column of its first token.
    pub(crate) column: usize,
}

/// A member of a spec (`.Finished(final_transcript=$t)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// Its name.
    pub(crate) name: String,
    /// Its arguments as written.
    pub(crate) args: Vec<(String, String)>,
}

/// NeMo's rule for a spec's type from its name (`islower()` → flow; ends in `Action` and not
/// `Start…`/`Change…`/`Stop…` → action; else event).
pub(crate) fn spec_type_of(name: &str) -> SpecType {
    let cased = name.chars().any(|c| c.is_lowercase() || c.is_uppercase());
    if cased && !name.chars().any(char::is_uppercase) {
        SpecType::Flow
    } else if name.ends_with("Action")
        && !name.starts_with("Start")
        && !name.starts_with("Change")
        && !name.starts_with("Stop")
    {
        SpecType::Action
    } else {
        SpecType::Event
    }
}

/// Parses a Colang 2.x file (SPEC 2.4).
///
/// # Errors
/// The first syntax error, with its 1-based line and column (characters), a message in the
/// file's terms and, where one can be said, the fix. NeMo Guardrails rejects such a file too
/// (the grammar is NeMo's; see the conformance test for the corpus).
pub fn parse(src: &str) -> Result<File, SyntaxError> {
    let (tokens, chars) = lexer::tokenize(src)?;
    let mut p = parser::Parser::new(&tokens, &chars);
    let (flows, imports) = stmt::file(&mut p)?;
    Ok(File {
        imports,
        import_lines: import_lines(src),
        flows,
        exclude_from_llm: src
            .split('\n')
            .any(|l| l.starts_with("# meta: exclude from llm")),
    })
}

/// The oracle's `import_lines`: matches of `(?m)^\s*import\s+.*$`, trimmed (`\s` matches line
/// breaks too, as in Python).
fn import_lines(src: &str) -> Vec<String> {
    let skip_space = |from: usize| {
        let rest = &src[from..];
        from + (rest.len() - rest.trim_start().len())
    };
    let mut out = Vec::new();
    // `i` is a line start (a byte offset).
    let mut i = 0;
    while i < src.len() {
        let j = skip_space(i);
        let kw = src[j..].starts_with("import")
            && src[j + 6..].chars().next().is_some_and(char::is_whitespace);
        if kw {
            let k = skip_space(j + 6);
            let k = src[k..].find('\n').map_or(src.len(), |p| k + p);
            out.push(src[j..k].trim().to_string());
            i = k;
        }
        // Next line start.
        i = src[i..].find('\n').map_or(src.len(), |p| i + p + 1);
    }
    out
}
