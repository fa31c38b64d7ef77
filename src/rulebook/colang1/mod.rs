//! Colang 1.0 (SPEC 2.4): the parser, its syntax tree, NeMo's normalised reading of it
//! ([`to_oracle_json`]) and the lowering onto [`super::flows`] ([`lower`]).
//!
//! The parser follows NeMo Guardrails' own Colang 1.0 reader (`colang_parser.py`, an
//! indentation-based line reader with line rewrites) step by step, so a file reads here as it
//! reads in NeMo: the corpus of NeMo's own files checks it (`tests/it/colang1_corpus.rs`). Where NeMo
//! would loop forever or read a block that is not indented as the body of an `if`, this reader
//! stops with a [`SyntaxError`] instead.
//!
//! Lines and columns are 1-based; columns count characters. A statement on a continued line
//! (`\` or a trailing ` or`) has the line number of its last physical line, as in NeMo.

mod bot;
mod build;
mod lower;
mod markdown;
mod normalize;
mod oracle;
mod params;
mod parser;
mod statements;
mod text;
mod values;

use serde_json::{Map, Value};

pub use lower::lower;
pub use oracle::to_oracle_json;

use super::SyntaxError;

/// How deep blocks may nest (`if` in `while` in `when` ...) before the file is refused.
pub(crate) const MAX_DEPTH: usize = 64;

/// A parsed Colang 1.0 file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct File {
    /// `define user X` blocks in file order, each with its example utterances as NeMo keeps
    /// them (`$name` → `{name}`, a line naming another intent → `{intent:a|b}`).
    pub user_messages: Vec<Message>,
    /// `define bot X` blocks (and `bot X "text"` lines, which define X inline), in file order.
    pub(crate) bot_messages: Vec<Message>,
    /// `import`/`include` lines, first occurrence of each package.
    pub(crate) imports: Vec<Import>,
    /// Flows in the order NeMo records them (at their first statement).
    pub(crate) flows: Vec<FlowDef>,
}

/// A `define user|bot` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The intent or message name (`ask refund`).
    pub(crate) name: String,
    /// The line of its `define` (or of the `bot` line that defines it).
    pub(crate) line: usize,
    /// 1-based column of that line's first character.
    pub(crate) column: usize,
    /// The utterances, as NeMo keeps them (quotes stripped, escapes as written).
    pub texts: Vec<String>,
}

/// An `import`/`include` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    /// The package (quotes and a leading `bot/` removed).
    pub(crate) package: String,
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
}

/// A `define flow|subflow` (or an anonymous `define flow`, named `anonymous-<hash>` as NeMo
/// names it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlowDef {
    /// The flow's name.
    pub(crate) name: String,
    /// The line of its `define`.
    pub(crate) line: usize,
    /// 1-based column of its `define`.
    pub(crate) column: usize,
    /// Its meta: the define modifiers (`subflow`, `allow_multiple` for `parallel`,
    /// `is_extension`, `is_interruption_flow`, `is_test`, `interruptable`, `is_sample`,
    /// `is_response`) and `priority N` / `meta` lines.
    pub(crate) meta: Map<String, Value>,
    /// Its statements.
    pub(crate) elements: Vec<Element>,
}

/// A statement of a flow.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Element {
    /// 1-based line (for a statement NeMo writes out of another, the line it came from).
    pub(crate) line: usize,
    /// 1-based column of the line's first character.
    pub(crate) column: usize,
    /// What it is.
    pub(crate) kind: ElementKind,
}

/// One branch of a `when` / `else when` group.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WhenBranch {
    /// `when` or `else when` (none when NeMo wrote the branch's first statement itself).
    pub(crate) keyword: Option<String>,
    /// The line of the branch's event (none when the branch starts with a nested `when`).
    pub(crate) line: Option<usize>,
    /// The event it waits for (`user X`, an `event`, ...).
    pub(crate) on: Option<Box<Element>>,
    /// What runs after it.
    pub(crate) body: Vec<Element>,
}

/// The statement kinds, named as NeMo's reading names them (the oracle's `kind`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ElementKind {
    /// `user X` (`user "text"`: an example, resolved to an intent at run time).
    User {
        /// The intent, or the example text.
        name: String,
        /// Its parameters (`user X with $p`-style `(a=1)` parameters).
        params: Map<String, Value>,
        /// True for `user "text"`.
        example: bool,
        /// `user X as $v`: the variable, without `$`.
        as_var: Option<String>,
    },
    /// `bot X` or `bot "text"`.
    Bot {
        /// The message name (`refuse`, `execute_refund_card`, `$var`); none for inline text.
        name: Option<String>,
        /// The inline text of `bot "text"`.
        text: Option<String>,
        /// Parameters (`bot inform with $value` → `value: "$value"`), values as written.
        params: Map<String, Value>,
    },
    /// `stop`.
    Stop,
    /// `abort`.
    Abort,
    /// `execute x(a=$b)` / `$r = execute x` / `run x`.
    Execute {
        /// The action.
        name: String,
        /// Its arguments (literals read, `$var` kept, positional ones as `$1`, `$2`...).
        args: Map<String, Value>,
        /// The variable its result is stored in, without `$`.
        result: Option<String>,
    },
    /// `$x = expr` / `set $x = expr` / `$x += e`.
    Set {
        /// The variable, without `$`.
        var: String,
        /// The expression as written (spaces collapsed).
        expr: String,
    },
    /// `if` / `else if` / `else`.
    If {
        /// The condition.
        cond: String,
        /// True when this `if` is an `else if`.
        elif: bool,
        /// The `then` statements.
        then: Vec<Element>,
        /// The `else` statements (an `else if` is an `If` alone in here), if any.
        else_: Option<Vec<Element>>,
    },
    /// `while cond`.
    While {
        /// The condition.
        cond: String,
        /// The body.
        body: Vec<Element>,
    },
    /// `when X` / `else when Y`: whichever happens first.
    When {
        /// The branches in order.
        branches: Vec<WhenBranch>,
    },
    /// `user a or user b`.
    Any {
        /// The alternatives.
        body: Vec<Element>,
    },
    /// `do flow name` / `$r = do x`.
    Do {
        /// The flow.
        name: String,
        /// Its arguments.
        args: Map<String, Value>,
        /// Its result variables, without `$`.
        result: Vec<String>,
    },
    /// `event Name(a=1)` (or `when X` naming something that is not a user/bot/flow).
    Event {
        /// The event's name.
        name: String,
        /// Its arguments.
        args: Map<String, Value>,
    },
    /// `create event X` / `new X` / `infer X`: the events it creates.
    CreateEvent {
        /// The events (usually one `Event`).
        body: Vec<Element>,
    },
    /// `return` / `done` with its values as written.
    Return {
        /// The values.
        values: Vec<String>,
    },
    /// `continue` / `pass`.
    Continue,
    /// `break`.
    Break,
    /// `label name` / `checkpoint name` (with a value).
    Label {
        /// The label.
        name: String,
        /// Its value.
        value: Option<String>,
    },
    /// `goto label` / `go to label`.
    Goto {
        /// The label.
        label: String,
    },
    /// `expect x` / `check x`.
    Generic {
        /// `expect` or `check`.
        keyword: String,
        /// The rest of the line.
        value: String,
        /// Parameters from indented lines.
        params: Map<String, Value>,
    },
    /// A `meta` that is not the flow's own (inside a block).
    Meta {
        /// Its values.
        meta: Map<String, Value>,
    },
}

/// Parse a Colang 1.0 file.
///
/// Errors: the first line NeMo would refuse (an unknown statement, `else` without `if`, a
/// `define` or block without an indented body, a value that is not a literal, a statement
/// outside any flow, nesting deeper than [`MAX_DEPTH`]), with its 1-based line and column, a
/// message in the file's terms and the fix. Never panics.
pub fn parse(src: &str) -> Result<File, SyntaxError> {
    parser::Parser::run(src)
}
