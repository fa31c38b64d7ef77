//! The rulebook (SPEC 2.4 and 5; seed chapter 45, "The rulebook it runs under" and "The rulebook's
//! facts"): Colang 1.0 and 2.x read into one language-neutral flow tree ([`flows`]), compiled into
//! the record the tool check evaluates, and read by the rulebook rules.
//!
//! Data flows one way: a parser ([`colang1`], [`colang2`]) reads a file into its own syntax tree,
//! which mirrors NeMo Guardrails' reading of the file (checked against NeMo's own parsers on the
//! corpus); `lower` maps that tree onto [`flows::FileFlows`], which everything after reads.

pub(crate) mod actions;
pub(crate) mod advisories;
pub mod budget;
pub mod colang1;
pub mod colang2;
pub mod compile;
pub(crate) mod cond;
pub mod flows;
pub(crate) mod gate;
pub(crate) mod library;
pub(crate) mod load;
pub(crate) mod logic;
pub(crate) mod record;
pub(crate) mod sheet;

/// A syntax error in a Colang file: where, what, and how to fix it.
///
/// `line` and `column` are 1-based; `column` counts characters (not bytes) from the start of the
/// line. `message` says what is wrong in the file's own terms (`expected an indented block after
/// 'if'`); `help`, when given, says the fix. Turned into a miette diagnostic (and a QG005
/// finding) by the caller, which knows the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The fix, when one can be said.
    pub help: Option<String>,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}
