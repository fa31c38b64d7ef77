//! The language-neutral flow tree both Colang parsers lower into (SPEC 2.4, 5): what the rulebook
//! compiler and the rulebook rules read. It keeps what decides which tool runs under which
//! condition, and where each statement is; everything else a flow says is kept as
//! [`StmtKind::Other`] with its keyword, so nothing is dropped silently.
//!
//! Lines and columns are 1-based; columns count characters. Expressions are kept as written
//! (`$order_paid`, `not $a and $b == "paid"`); the compiler parses them.

/// Which Colang a file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// Colang 1.0 (`define flow ...`).
    V1,
    /// Colang 2.x (`flow ...`).
    V2,
}

impl Version {
    /// `1.0` or `2.x`, as NeMo Guardrails' `colang_version` setting spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "1.0",
            Version::V2 => "2.x",
        }
    }
}

/// A place in the rulebook: the file (index into the compiled rulebook's files), 1-based line
/// and column.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Place {
    /// Index into the compiled rulebook's files (`Compiled::files`).
    pub file: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub(crate) column: usize,
}

/// A name with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The name as written (a message, an intent, a package).
    pub name: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub(crate) column: usize,
}

/// One file's flows and definitions, lowered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFlows {
    /// Flows (1.0 `define flow|subflow`, 2.x `flow`) in file order.
    pub flows: Vec<Flow>,
    /// 1.0 `define bot X` messages (2.x: none; its bot messages are flows).
    pub(crate) bot_messages: Vec<Named>,
    /// 1.0 `define user X` intents (2.x: none).
    pub user_messages: Vec<Named>,
    /// `import` lines: the package as written (`core`, `guardrails`, `llm`).
    pub imports: Vec<Named>,
}

/// A flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    /// Its name (`refunds`, `bot express greeting`).
    pub name: String,
    /// The line and column of its `define`/`flow` keyword.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// 1.0 `define subflow` (run only when another flow calls it with `do`).
    pub subflow: bool,
    /// 2.x parameters (`$x`, without defaults), empty for 1.0.
    pub params: Vec<String>,
    /// Its statements in order.
    pub body: Vec<Stmt>,
}

/// A statement with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    /// 1-based line of the statement's first word.
    pub line: usize,
    /// 1-based column of the statement's first word.
    pub column: usize,
    /// What it does.
    pub kind: StmtKind,
}

/// What a statement does.
#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    /// 1.0 `user X` (the user's turn matched the intent); 2.x `match user ...`/`await user ...`.
    User {
        /// The intent or user flow (`ask refund`).
        intent: String,
    },
    /// 1.0 `bot X`: the bot says message X (`bot execute_x` is lowered to [`StmtKind::Execute`]).
    Bot {
        /// The message name as written, or the inline text for `bot "..."`.
        message: String,
        /// True when the message was given inline as text (`bot "hello"`).
        inline: bool,
    },
    /// A tool or action runs: 1.0 `execute x`, `$r = execute x(a=$b)`, `bot execute_x`; 2.x an
    /// action (`await XAction(...)`, `start XAction`, `$r = await XAction`).
    Execute {
        /// The action as written (`refund_card`, `RefundCardAction`).
        action: String,
        /// Its arguments as written (name or `$1`.., expression text), in order.
        args: Vec<(String, String)>,
        /// The variable its result is assigned to, without `$`.
        result: Option<String>,
        /// True when written `bot execute_x` (1.0), so `action` is `x`.
        via_bot: bool,
    },
    /// `$x = expr` (1.0 `$x = ...`, 2.x `$x = ...`, `+=`, `-=`; also `global $x`).
    Set {
        /// The variable, without `$`.
        var: String,
        /// The expression as written.
        expr: String,
    },
    /// `if cond` / `else if` / `elif` / `else`; an else-if is an `If` alone in `else_`.
    If {
        /// The condition as written (without the keyword).
        cond: String,
        /// The statements run when it holds.
        then: Vec<Stmt>,
        /// The statements run when it does not (empty when there is no else).
        else_: Vec<Stmt>,
    },
    /// `while cond`.
    While {
        /// The condition as written.
        cond: String,
        /// Its body.
        body: Vec<Stmt>,
    },
    /// 1.0 `when`/`else when`, 2.x `when`/`or when`/`else`: the first event that happens decides.
    When {
        /// Each branch: the event it waits for (one statement, e.g. a `User`) and its body.
        branches: Vec<(Stmt, Vec<Stmt>)>,
        /// 2.x `else` body (none in 1.0).
        else_: Option<Vec<Stmt>>,
    },
    /// Either of several events (1.0 `user a` `or user b`; 2.x `match a or b`).
    Any {
        /// The alternatives.
        alternatives: Vec<Stmt>,
    },
    /// Another flow runs here: 1.0 `do x`; 2.x `await x`, `start x`, `activate x`, or a flow
    /// named as a statement.
    Call {
        /// The flow's name as written (`check facts`, `bot say`).
        flow: String,
        /// Its arguments as written.
        args: Vec<(String, String)>,
        /// The keyword (`do`, `await`, `start`, `activate`, or `` when none was written).
        how: String,
    },
    /// `stop` (1.0; NeMo stores it as `bot stop`): the flow ends here.
    Stop,
    /// `abort`: the flow (and its caller) ends here, failed.
    Abort,
    /// `return` (with its expression as written, if any): the flow ends here.
    Return {
        /// What it returns, as written.
        value: Option<String>,
    },
    /// `break` out of the innermost `while`.
    Break,
    /// `continue` the innermost `while`.
    Continue,
    /// Anything else (an event, `send`, `match` of a non-user event, `log`, `pass`, a label):
    /// kept with its keyword so it is located, and read as doing nothing the compiler governs.
    Other {
        /// The statement's keyword or kind (`send`, `match`, `event`, `log`, `pass`, ...).
        what: String,
        /// The statement's text as written (first line).
        text: String,
    },
}
