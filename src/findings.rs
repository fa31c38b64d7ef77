//! Findings: what the rules conclude, before any output formats them (SPEC 7).
//!
//! A [`Finding`] is built by the checks ([`crate::checks`]) and the obligation verdicts
//! ([`crate::engine`]) with a symbolic subject (a tool, `cycle:<node>`, `edge:<from>`) and a [`Loc`];
//! the outputs in [`crate::output`] only read it. The [`crate::report::Report`] is everything one run concluded.

use crate::input::source::Loc;
use serde::Serialize;

pub use crate::rules::obligation::Obligation;
pub use crate::rules::Severity;

/// The kind of one witness step (SPEC 4, 8 `witness[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A node entered.
    Enter,
    /// A choice made at a node: the destination taken.
    Choose,
    /// A tool called (guarded or plain; a refused guarded call runs nothing).
    Call,
    /// A person answering an interrupt (`yes` confirms its tool).
    Confirm,
    /// A turn ending at the top `end`; the next starts at the entry.
    TurnEnd,
    /// A rulebook line passed on the way to an `execute` (`node` holds the line's words:
    /// `flow refunds`, `if $order_paid`), located in the rulebook (SPEC 5 witnesses).
    Flow,
    /// A fact's value in a rulebook witness: `node` is the fact (or the condition atom), `yes`
    /// its value (SPEC 5: Z3's model of the path condition).
    Fact,
}

/// One step of a witness.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Step {
    /// What happened.
    pub kind: StepKind,
    /// The qualified node id where it happened (for `choose`, the node left).
    pub node: String,
    /// For `choose`: the destination chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// For `call` and `confirm`: the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// For `call`: whether the call went through the tool check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guarded: Option<bool>,
    /// For a `call`: true when it ran nothing: the check (or the person, for a guarded write)
    /// refused it, or the person declined a call its node reviews (SPEC 12.2).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// For `confirm`: the person's answer (`true` is yes). A `before`/`after` no pauses the run
    /// for good, so only `inside` interrupts show `false`. For a `call` its node reviews: the
    /// person's answer to that call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yes: Option<bool>,
    /// For a `call` its node reviews with `standing` (SPEC 3.1 "Standing approvals"): the
    /// person's yes is for the rest of the run. In `--replay`'s walk, on a call without `when`:
    /// the call was not asked, and ran on a standing approval given earlier in the run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub standing: bool,
    /// For `confirm`: `before`, `after` or `inside`; `call` on a call its node reviews.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<&'static str>,
    /// The turn (1-based) the step is in.
    pub turn: u32,
    /// True on the call that breaks the obligation (the last step).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub violation: bool,
    /// For `enter` in a traced run's witness (QG016): the node the run came from by a transition
    /// the export does not have (`to` this step's node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmodelled_from: Option<String>,
    /// Node steps taken in this turn's run when the step happens (SPEC 3.1: entering any node
    /// but a start or an end is one step), to compare with `recursion_limit`.
    #[serde(skip)]
    pub run_steps: u32,
    /// Where the node was declared.
    #[serde(skip)]
    pub loc: Option<Loc>,
    /// For `choose`: the index of the flattened edge taken, when the engine knows it (two edges
    /// can lead to the same destination, one counting `exit_after` and one not).
    #[serde(skip)]
    pub edge: Option<usize>,
}

impl Step {
    /// True on a call its node reviews (SPEC 12.2): `when` is `call`.
    pub fn reviewed(&self) -> bool {
        self.when == Some(crate::input::ir::When::Call.as_str())
    }

    /// A step of `kind` at `node` in `turn`, every optional part empty.
    pub fn new(kind: StepKind, node: &str, turn: u32) -> Step {
        Step {
            kind,
            node: node.to_string(),
            to: None,
            tool: None,
            guarded: None,
            refused: false,
            yes: None,
            standing: false,
            when: None,
            turn,
            violation: false,
            unmodelled_from: None,
            run_steps: 0,
            loc: None,
            edge: None,
        }
    }
}

/// One of the two engines (SPEC 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The explicit-state search.
    Explicit,
    /// The Z3 bounded model checker.
    Z3,
}

impl Engine {
    /// Both, in the order they run and are reported.
    pub(crate) const ALL: [Engine; 2] = [Engine::Explicit, Engine::Z3];

    /// `explicit` or `z3`, as the reports and `--engine` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Explicit => "explicit",
            Engine::Z3 => "z3",
        }
    }

    /// The other engine.
    pub(crate) fn other(self) -> Engine {
        match self {
            Engine::Explicit => Engine::Z3,
            Engine::Z3 => Engine::Explicit,
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a finding's witness is, by where it came from (SPEC 7, 10): the outputs say so from
/// this, never from the rule's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// No witness: the finding is a declaration of the graph, the catalogue or the rulebook.
    Declaration,
    /// Where the rulebook's compiler stopped (QG005): no witness, the line is the evidence.
    CompilerStop,
    /// A route through the graph an engine found; it replays on the interpreter (`--replay`).
    GraphRoute,
    /// A route through the rulebook (`Flow` steps), with the facts that let it through.
    RulebookRoute,
    /// A traced run of the real agent (`--traces`, QG016).
    TracedRun,
    /// A pattern in a tool's own Python code, read by a code check (`rules/code_checks.toml`):
    /// evidence about the code, not a proof about the graph, so it never fails a gate.
    ToolCode,
}

/// Where a finding points: exactly one primary location (issue 17; zizmor's rule), a line or,
/// for a finding about the run as a whole, none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Primary {
    /// The line that declares what it is about (1-based line and column).
    Line(Loc),
    /// No one line: the run as a whole (an engine's cross-check that could not be made, QG006),
    /// or a rulebook error its compiler placed nowhere (QG005). The text report names no line;
    /// SARIF and GitHub place it at the input's first line (`output::primary_loc`).
    NoLine,
}

impl Primary {
    /// The line, when it points at one.
    pub fn line(self) -> Option<Loc> {
        match self {
            Primary::Line(l) => Some(l),
            Primary::NoLine => None,
        }
    }

    /// At `loc` when there is one, else [`Primary::NoLine`].
    pub(crate) fn at(loc: Option<Loc>) -> Primary {
        loc.map_or(Primary::NoLine, Primary::Line)
    }
}

/// What a finding is (issue 17): the proof's (a route, a declaration, the rulebook's compiler),
/// a traced run's, or a code check's. The outputs list each kind in its own place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A finding of the proof about the graph, the catalogue or the rulebook.
    Proof,
    /// A traced run's (`--traces`, QG016).
    Trace,
    /// A code check's, on a Python tool module (`Code checks:` in the text report).
    Code,
}

impl Evidence {
    /// What `witness` is by its shape: none, a route through the rulebook (its first step a
    /// `Flow` or `Fact`), or a route through the graph. A traced run and a compiler's stop are
    /// said so by the check that makes them.
    pub(crate) fn of(witness: &[Step]) -> Evidence {
        match witness.first() {
            None => Evidence::Declaration,
            Some(s) if matches!(s.kind, StepKind::Flow | StepKind::Fact) => Evidence::RulebookRoute,
            Some(_) => Evidence::GraphRoute,
        }
    }
}

/// The engines' key a finding was drawn from (SPEC 4, 9): the obligation instance's violation,
/// which `--replay` walks and QG312 names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawnFrom {
    /// The obligation broken.
    pub obligation: Obligation,
    /// The tool, an index into the model's tools.
    pub tool: usize,
    /// The node where the violating call happens, an index into the model's nodes.
    pub node: usize,
    /// The violation's class (QG011/QG012 for O6).
    pub class: crate::rules::obligation::Class,
}

/// One finding (SPEC 7).
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule id (`QG011`).
    pub rule: crate::rules::RuleId,
    /// The obligation broken, for graph rules (for QG003 the one it names).
    pub obligation: Option<Obligation>,
    /// The tool, `cycle:<node>`, `edge:<from>`, or the rulebook line; for a code finding the
    /// tool whose function holds it, empty for module-level code ([`Finding::code_tool`]).
    pub subject: String,
    /// The qualified node id where the violating call happens, when there is one.
    pub node: Option<String>,
    /// The turn at which it is first reachable (1-based), for reachability findings.
    pub depth: Option<u32>,
    /// Where it points: the declaring line of the node, edge, tool or rulebook line, or no one
    /// line (exactly one of the two: [`Primary`]).
    pub location: Primary,
    /// Other places worth showing (the catalogue entry of the tool, ...).
    pub related: Vec<(Loc, String)>,
    /// The message: what is wrong, lowercase first, no trailing period.
    pub message: String,
    /// The fix, in the catalogue's or graph's terms.
    pub fix: String,
    /// The severity.
    pub severity: Severity,
    /// The shortest witness, when the finding is a reachability question.
    pub witness: Vec<Step>,
    /// What the witness is, by where it came from.
    pub evidence: Evidence,
    /// The engines' key the finding was drawn from, for a finding on an obligation's violation.
    pub drawn_from: Option<DrawnFrom>,
    /// QG312: the other engine's witness, with the engine's name, when both found one.
    pub other_witness: Option<(Engine, Vec<Step>)>,
    /// Stable hash of (rule, obligation, subject, node) - no lines, no contents. Empty for a
    /// code finding: SARIF derives its fingerprint from the module's repository-relative URI,
    /// which is known only when the SARIF is written.
    pub fingerprint: String,
    /// When the project accepted it, with a reason ([`crate::project::triage`]): it is still reported,
    /// and does not fail the gate.
    pub accepted: Option<Acceptance>,
    /// For a QG006 on an obligation no engine decided: the rules its violations are reported
    /// under. Such a finding fails the gate when one of them does, unless the configuration says
    /// `undecided = "pass"` (SPEC 8.1: undecided does not pass). Empty for every other finding.
    pub unproved: Vec<crate::rules::RuleId>,
}

impl Finding {
    /// What the finding is, from its evidence.
    pub(crate) fn kind(&self) -> Kind {
        match self.evidence {
            Evidence::TracedRun => Kind::Trace,
            Evidence::ToolCode => Kind::Code,
            Evidence::Declaration
            | Evidence::CompilerStop
            | Evidence::GraphRoute
            | Evidence::RulebookRoute => Kind::Proof,
        }
    }

    /// For a code finding, the tool whose function holds it (`None`: module-level code).
    pub fn code_tool(&self) -> Option<&str> {
        (self.kind() == Kind::Code && !self.subject.is_empty()).then_some(self.subject.as_str())
    }

    /// True when its rule is `always_shown` (QG312): listed first, never hidden by a baseline,
    /// an accept, a rule or obligation turned off, or `min-severity`.
    pub(crate) fn always_shown(&self) -> bool {
        self.rule.rule().always_shown
    }
}

/// How a finding was accepted (issue 18): by an `[[accept]]` of the project configuration
/// (SARIF suppression kind `external`) or by a `# stalwart: accept RULE -- reason` comment on
/// the line it points at (`inSource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acceptance {
    /// Why.
    pub reason: String,
    /// Where it was accepted.
    pub(crate) kind: AcceptKind,
    /// The line that accepts it (the `[[accept]]` entry, or the comment).
    pub at: Loc,
    /// The last day it is accepted, when the entry gives one.
    pub until: Option<String>,
}

/// Where an acceptance was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AcceptKind {
    /// In the project configuration (`stalwart.toml`).
    External,
    /// In a comment on the finding's own line.
    InSource,
}

impl AcceptKind {
    /// `external` or `inSource`, as SARIF's `suppression.kind` spells it.
    pub(crate) fn sarif(self) -> &'static str {
        match self {
            AcceptKind::External => "external",
            AcceptKind::InSource => "inSource",
        }
    }
}

/// The key of a finding's fingerprint in SARIF's `partialFingerprints`, which a baseline reads
/// back (SPEC 7).
pub(crate) const FINGERPRINT_KEY: &str = "stalwartFingerprint/v1";

/// Computes a finding's fingerprint: the first 16 hex digits of SHA-256 over rule, obligation,
/// subject and qualified node id, separated by NULs (SPEC 7). No line numbers or file contents
/// enter it, so unrelated edits leave it unchanged.
pub fn fingerprint(
    rule: &str,
    obligation: Option<Obligation>,
    subject: &str,
    node: Option<&str>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [
        rule,
        obligation.map(|o| o.as_str()).unwrap_or(""),
        subject,
        node.unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A runtime lint (SPEC 6): never blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lint {
    /// `write_not_retry_safe`, `write_without_result_schema`, ...
    pub id: &'static str,
    /// The tool it is on.
    pub tool: String,
    /// The message (after `on <tool>: `).
    pub message: String,
    /// Where the tool (or word) was declared.
    #[serde(skip)]
    pub loc: Option<Loc>,
}

/// How the gate is held (SPEC 1 `--gate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum GateMode {
    /// Fails on the rules whose "Fails the gate" is yes.
    Ci,
    /// Fails on the rules whose "Stops Agent(...)" is yes.
    Start,
}

impl GateMode {
    /// `ci` or `start`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GateMode::Ci => "ci",
            GateMode::Start => "start",
        }
    }
}

/// What the code checks concluded over every module read (the report's `Code checks:` line;
/// built by [`crate::checks::code::check`]).
#[derive(Debug, Clone)]
pub struct CodeChecks {
    /// The module files read.
    pub files: usize,
    /// [`crate::rules::code::rules_hash`].
    pub rules_hash: String,
    /// The findings, by file, then line, then column, then check.
    /// Each a [`Finding`] of a code check's rule (`RuleId::CC001`..), with [`Evidence::ToolCode`].
    pub findings: Vec<Finding>,
}

/// What the traces of real runs showed (`--traces RUNS.jsonl`, SPEC 2.4; JSON `traces`; built by
/// [`crate::checks::traces::unmodelled_paths`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TracesInfo {
    /// The traces file, as named.
    pub path: String,
    /// Runs read (non-blank lines).
    pub runs: usize,
    /// Runs that took at least one transition the export does not have.
    pub unmodelled: usize,
    /// Of those, runs that then called a write or a privileged tool (each gives, or adds to, a
    /// QG016 finding).
    pub privileged_after: usize,
}
