//! The report: everything one `stalwart verify` run concluded, in the order the outputs print it.
//!
//! Built once by [`crate::run::verify`] from the checks and the engines; read by every output module
//! (text, JSON, SARIF and the rest), which read nothing but the report floor. So the
//! report carries what a renderer would otherwise fetch: the code checks' results and the traces
//! read ([`CodeChecks`], [`TracesInfo`], declared with the findings so the checks can build them),
//! Z3's version ([`Report::z3_version`]), and, built after the run, `--replay`'s [`Walkthrough`]
//! ([`crate::replay::walk`]) and the graph's [`picture`] ([`picture::Picture::of`], the one part
//! of this floor that reads the model). The gate decision (SPEC 1 `--gate`) lives here so all
//! outputs agree.

pub(crate) use crate::findings::{CodeChecks, TracesInfo};
use crate::findings::{Finding, GateMode, Lint, Step};
use crate::input::source::{Loc, SourceMap};
use serde::Serialize;

pub(crate) mod picture;

/// The verdict counts and time of one engine, or of the engines' merged verdicts (SPEC 8
/// `engines`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct EngineStats {
    /// `explicit`, `z3`, or for the merged verdicts the engines that ran (`explicit and z3`).
    pub name: String,
    /// Obligation instances searched.
    pub obligations: usize,
    /// Instances that hold at every depth (the turn-start states stopped growing).
    pub holds_every_depth: usize,
    /// Instances that hold up to the bound (`session_steps` turns of `recursion_limit` steps).
    pub holds_to_bound: usize,
    /// Instances decided, with a reachable violation.
    pub violated: usize,
    /// Instances the engine could not decide (a budget or size limit ran out: QG006), counted
    /// here also where it found some of their violations first.
    pub undecided: usize,
    /// States explored, over all instances (explicit engine).
    pub states: u64,
    /// Solver queries asked, over all instances (Z3 engine).
    pub queries: u64,
    /// Z3's resource units spent, over all instances (Z3 engine; `--solver-run-rlimit` bounds it).
    pub rlimit: u64,
    /// The most resource units one instance's queries spent (`--solver-obligation-rlimit`).
    pub rlimit_obligation_peak: u64,
    /// The most resource units one query spent (`--solver-rlimit`).
    pub rlimit_query_peak: u64,
    /// Wall time in milliseconds.
    pub millis: u64,
}

/// What the proof covered: the bound it holds to.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProofScope {
    /// Turns searched.
    pub session_steps: u32,
    /// Node steps per run.
    pub recursion_limit: u32,
    /// Nodes after flattening.
    pub nodes: usize,
    /// Edges after flattening (sends and expanded `null` destinations included).
    pub edges: usize,
    /// Tools in the catalogue.
    pub tools: usize,
}

/// What the run read of the rulebook (JSON `rulebook_info`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RulebookInfo {
    /// The rulebook as named.
    pub path: String,
    /// False when it does not compile (QG005).
    pub compiled: bool,
    /// `colang`, `sheet` or `record`.
    pub kind: String,
    /// The Colang version read (`1.0`, `2.x`), if Colang.
    pub colang_version: Option<String>,
    /// Why that version.
    pub version_from: Option<String>,
    /// The record's content hash, when a record was read.
    pub record_hash: Option<String>,
    /// Its files.
    pub files: Vec<String>,
    /// Routes to an execute.
    pub routes: usize,
    /// Catalogue tools some route executes (the rulebook governs them).
    pub governed: Vec<String>,
}

/// One run's conclusions.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was verified, as the user named it (`agent.yaml`, or the graph file).
    pub input: String,
    /// Every file read, for locations.
    pub sources: SourceMap,
    /// The rulebook line, when the input names one.
    pub rulebook: Option<String>,
    /// What was read of the rulebook, when one was given.
    pub rulebook_info: Option<RulebookInfo>,
    /// The exporter's own warnings (SPEC 2.2 `warnings`).
    pub export_warnings: Vec<String>,
    /// The framework the export was made with (its `producer` metadata): the SARIF rules' help
    /// gives the fix in its terms, as the findings do (SPEC 12).
    pub framework: crate::input::ir::Framework,
    /// Runtime lints, in the seed's order.
    pub lints: Vec<Lint>,
    /// Findings: QG312 first, then by rule, subject, node.
    pub findings: Vec<Finding>,
    /// Rules that had nothing to read, with why.
    pub nothing_to_read: Vec<(&'static str, String)>,
    /// Rules this version does not check yet and that had something to read.
    pub not_yet_checked: Vec<&'static str>,
    /// The gate held.
    pub gate: GateMode,
    /// What the proof covered.
    pub scope: ProofScope,
    /// The merged verdicts' figures (what the proof line says).
    pub proof: EngineStats,
    /// Each engine's own figures, explicit first.
    pub engines: Vec<EngineStats>,
    /// Obligations (violation keys) on which the engines disagreed.
    pub disagreements: usize,
    /// Obligations one engine decided alone (the other could not).
    pub unchecked: usize,
    /// The Z3 version linked in (JSON `engines.z3.version`, said whether Z3 ran or not), filled
    /// when the report is built, so no output asks the engine.
    pub z3_version: String,
    /// Known limits of the reading, printed at the end of the text report.
    pub limits: Vec<String>,
    /// The baseline compared against (`--baseline`), when one was given.
    pub baseline: Option<BaselineInfo>,
    /// What was read of the traces (`--traces`), when they were given.
    pub traces: Option<TracesInfo>,
    /// The code checks over the Python tool modules (CC001-CC003); `None` when no module was
    /// read (then no `Code checks:` line is printed). They never change the gate.
    pub code_checks: Option<CodeChecks>,
    /// What the project settled ([`crate::project::triage`]): rules and obligations it is not held to,
    /// findings below the shown severity, accepts that matched nothing or expired.
    pub triage: Triage,
    /// Findings a baseline already has (`--baseline`): not shown and not gating, but kept for
    /// SARIF, where they are results with `baselineState: "unchanged"`, so uploading the log does
    /// not close alerts that are still there.
    pub known: Vec<Finding>,
    /// Everything that makes this run's proof weaker than the defaults (SPEC 8.1), in the
    /// order [`crate::project::weaken`] lists them; every output says each one.
    pub weakened: Vec<Weakening>,
}

/// What kind of thing weakens a proof (SPEC 8.1); JSON and SARIF spell it in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WeakKind {
    /// A change a pull request makes to the configuration, the baseline or an accept comment,
    /// named and not applied (`--base-ref`).
    PullRequest,
    /// An obligation, or a region, no engine decided (QG006).
    Undecided,
    /// `undecided = "pass"`: undecided obligations do not fail the gate.
    UndecidedPass,
    /// A rule or obligation turned off (`[off]`).
    Off,
    /// A finding accepted, by the configuration or by a comment in the source.
    Accept,
    /// A state, solver or unrolling limit below its default, a solver timeout, fewer turns.
    Limit,
    /// One engine instead of both.
    Engine,
    /// The `start` gate instead of `ci`.
    Gate,
    /// `min-severity`: findings below it are not shown.
    MinSeverity,
    /// A baseline, and how many findings it hid.
    Baseline,
}

impl WeakKind {
    /// The snake-case name JSON and SARIF give it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WeakKind::PullRequest => "pull_request",
            WeakKind::Undecided => "undecided",
            WeakKind::UndecidedPass => "undecided_pass",
            WeakKind::Off => "off",
            WeakKind::Accept => "accept",
            WeakKind::Limit => "limit",
            WeakKind::Engine => "engine",
            WeakKind::Gate => "gate",
            WeakKind::MinSeverity => "min_severity",
            WeakKind::Baseline => "baseline",
        }
    }
}

/// One thing that weakens the proof (SPEC 8.1): what, in a sentence, and the line that makes it,
/// when one does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weakening {
    /// Its kind.
    pub(crate) kind: WeakKind,
    /// What it is, a sentence without its final period (`O1 (the tool check) is off: ...`).
    pub message: String,
    /// The line that makes it (a configuration key, an accept comment), when there is one.
    pub at: Option<Loc>,
}

/// What a project configuration settled about a run's findings (issue 18).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Triage {
    /// The configuration read, as displayed; `None` when there was none.
    pub config: Option<String>,
    /// Rules and obligations turned off: the id (`O1`, `QG023`), what it is, the reason, and how
    /// many findings it removed.
    pub(crate) off: Vec<OffNote>,
    /// Findings not shown because they are below `min-severity`, and that severity.
    pub below: Option<(crate::findings::Severity, usize)>,
    /// Accepts that matched nothing, or expired, or were malformed (each a warning).
    pub(crate) warnings: Vec<AcceptWarning>,
    /// `strict-accepts` (`--strict-accepts`): a warning above fails the gate.
    pub strict: bool,
    /// `undecided = "pass"`, with its reason: an obligation no engine decided does not fail the
    /// gate (SPEC 8.1).
    pub(crate) undecided_pass: Option<UndecidedPass>,
    /// Accept comments a pull request added (`--base-ref`): they accept nothing (SPEC 8.1).
    pub(crate) added_accepts: Vec<AcceptWarning>,
}

/// `undecided = "pass"`: the reason the configuration gives, and where (read by
/// [`crate::project::config`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UndecidedPass {
    /// Why an undecided obligation may pass the gate.
    pub(crate) reason: String,
    /// The `undecided` key's line.
    pub(crate) loc: Loc,
}

/// One rule or obligation a project is not held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OffNote {
    /// `O1`, `QG023`.
    pub id: String,
    /// What it is (`the tool check`, the rule's title).
    pub what: String,
    /// Why, as the configuration says.
    pub reason: String,
    /// Findings it removed from this run.
    pub removed: usize,
}

/// An accept that did not apply: where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AcceptWarning {
    /// Where the accept is written.
    pub at: Loc,
    /// What is wrong (`matches no finding`, `expired on 2026-01-31`).
    pub message: String,
}

/// What a baseline hid (see [`crate::project::baseline`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineInfo {
    /// The baseline file, as named.
    pub path: String,
    /// Findings not shown because the baseline already has them.
    pub known: usize,
}

/// One step of the walk: the witness's step and what it changed.
#[derive(Debug, Clone)]
pub struct WalkStep {
    /// The witness's step, as the finding carries it (with its source location).
    pub step: Step,
    /// The latches the step changed, in SPEC 3's names (`ran[get_order] = true`,
    /// `tainted += desk`, `flag paid = true`), in a fixed order; empty when it changed none.
    pub changes: Vec<String>,
    /// The kind of the step's node as `qls-graph/1` spells it (`model`, `tools`, `router`, ...).
    pub node_kind: &'static str,
}

/// A finding's witness, replayed by `--replay` ([`crate::replay::walk`]); the outputs print it
/// ([`crate::output::replay`]).
#[derive(Debug, Clone)]
pub struct Walkthrough {
    /// The finding's number in the report (1-based, in the order every output lists them).
    pub index: usize,
    /// The finding replayed.
    pub finding: Finding,
    /// The steps taken, up to and including the one the interpreter stopped at.
    pub steps: Vec<WalkStep>,
    /// The latches when the last step happens (what the obligation is judged on).
    pub at_violation: Vec<String>,
    /// `None` when the last call breaks the obligation as the finding says; otherwise the
    /// QG312 finding (the witness does not reproduce) and the step the walk stopped at (0-based).
    pub unreproduced: Option<(Finding, Option<usize>)>,
    /// The model's recursion limit (node steps a run may take).
    pub recursion_limit: u32,
}

impl Walkthrough {
    /// True when the witness reproduces the finding.
    pub fn reproduces(&self) -> bool {
        self.unreproduced.is_none()
    }
}

impl Report {
    /// True when `finding` fails the gate in this report's mode (an accepted finding does not).
    /// A QG006 on an obligation no engine decided fails it when a rule the obligation's
    /// violations are reported under does, unless the configuration says `undecided = "pass"`
    /// (SPEC 8.1: undecided does not pass).
    pub fn blocks(&self, finding: &Finding) -> bool {
        if finding.accepted.is_some() {
            return false;
        }
        if !finding.unproved.is_empty() && self.triage.undecided_pass.is_none() {
            return finding.unproved.iter().any(|r| self.rule_blocks(r.rule()));
        }
        self.rule_blocks(finding.rule.rule())
    }

    /// True when a finding of rule `r` fails the gate in this report's mode.
    pub(crate) fn rule_blocks(&self, r: &crate::rules::Rule) -> bool {
        match self.gate {
            GateMode::Ci => r.gate,
            GateMode::Start => r.stops,
        }
    }

    /// The figures of the engine named `name` (`explicit`, `z3`), when it ran.
    pub fn engine(&self, name: &str) -> Option<&EngineStats> {
        self.engines.iter().find(|e| e.name == name)
    }

    /// The code checks' findings (none when no Python tool module was read): listed apart
    /// from the proof's, and never failing the gate.
    pub(crate) fn code_findings(&self) -> &[Finding] {
        self.code_checks
            .as_ref()
            .map_or(&[][..], |cc| cc.findings.as_slice())
    }

    /// True when no finding fails the gate (and, under `strict-accepts`, every accept applied).
    pub fn passed(&self) -> bool {
        let strict_failed = self.triage.strict && !self.triage.warnings.is_empty();
        !self.findings.iter().any(|f| self.blocks(f)) && !strict_failed
    }

    /// Findings accepted with a reason.
    pub(crate) fn accepted(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.accepted.is_some())
            .count()
    }

    /// The exit status: 0 passed, 1 failed (SPEC 1).
    pub fn exit_code(&self) -> i32 {
        if self.passed() {
            0
        } else {
            1
        }
    }
}
