//! The outputs: every format a [`crate::report::Report`] can be printed in (SPEC 8).
//!
//! Rules and engines never print; only these modules do. Each format is one module with one
//! `render` function that reads the report and returns the whole document as a `String`. The
//! outputs read only the report floor, never the model, the engines or the checks: the
//! [`crate::report`] (with what it carries: the code checks, the traces read, Z3's version, the
//! walkthrough of `--replay`, the [`crate::report::picture`] built from the model before output),
//! the [`crate::findings`] vocabulary, the rule metadata ([`crate::rules`], where the code checks'
//! and the obligations' descriptors are too), the [`crate::input::source`] map and [`crate::input::visible`].
//! `tests/it/layers.rs` fails when a module here names any other `crate::` path.
//!
//!
//! - [`text`]: the human report, the shape of the seed's `stalwart verify` output, with each
//!   finding's source lines and witness rendered by codespan-reporting.
//! - [`json`]: a stable, documented schema of the same content (the schema is the module's doc).
//! - [`sarif`]: SARIF 2.1.0 for GitHub code scanning (the only module that uses `serde_sarif`).
//! - [`github`]: GitHub Actions workflow commands, one annotation per finding.
//! - [`concise`]: one line a finding (`--format concise`), and a count per rule (`--statistics`).
//! - [`picture`]: the graph in Mermaid or Graphviz DOT, with one finding's witness highlighted.
//! - [`summary`]: the Markdown job summary (`--summary FILE`), with the picture of the first
//!   blocking finding's route.
//! - [`rules_cmd`]: `stalwart rules list|explain`.
//!
//! Every renderer is deterministic: the same report gives the same bytes (no times, no absolute
//! paths).

pub(crate) mod concise;
pub(crate) mod github;
pub mod json;
pub(crate) mod picture;
pub mod replay;
pub(crate) mod rules_cmd;
pub mod sarif;
pub mod summary;
pub mod text;

use crate::findings::{Finding, Step, StepKind};
use crate::input::source::Loc;
use crate::report::Report;
use crate::rules::RuleType;

/// `1 finding`, `2 findings`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// How loudly a finding is shown, the same in SARIF (`level`) and in workflow commands (SPEC 8):
/// `Error` when it fails the report's gate, `Note` for a Security hotspot, else `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// Fails the gate.
    Error,
    /// Does not fail the gate.
    Warning,
    /// A Security hotspot, for a person to weigh.
    Note,
}

/// The [`Level`] of `f` in `report`.
pub(crate) fn level(report: &Report, f: &Finding) -> Level {
    if report.blocks(f) {
        Level::Error
    } else if f.rule.rule().rule_type == RuleType::SecurityHotspot {
        Level::Note
    } else {
        Level::Warning
    }
}

/// Where a finding is shown in GitHub: its declaring line, else the first line of the input (the
/// first file read), so that every finding lands somewhere. `None` only when no file was read.
pub(crate) fn primary_loc(report: &Report, f: &Finding) -> Option<Loc> {
    f.location
        .line()
        .filter(|l| l.file < report.sources.files.len())
        .or_else(|| (!report.sources.files.is_empty()).then(|| Loc::new(0, 1, 1)))
}

/// One witness step in words, as the text report's labels and SARIF's thread-flow messages say
/// it: `enter desk`, `choose -> billing`, `call read_inbox (plain)`, `confirm refund_card (yes,
/// before)`, `turn 1 ends`. `obligation` (`O6`, or a rule id when the finding has no obligation)
/// is named on the violating call: `call charge_card (plain), violates O6`. A traced run's step
/// that came by a transition the export does not have (QG016) says so: `enter tools from agent, a
/// transition the export does not have`.
pub(crate) fn describe_step(step: &Step, obligation: &str) -> String {
    let mut s = match step.kind {
        StepKind::Enter => match &step.unmodelled_from {
            Some(from) => format!(
                "enter {} from {from}, a transition the export does not have",
                step.node
            ),
            None => format!("enter {}", step.node),
        },
        StepKind::Choose => match &step.to {
            Some(to) => format!("choose -> {to}"),
            None => format!("choose at {}", step.node),
        },
        StepKind::Call => {
            let tool = step.tool.as_deref().unwrap_or("?");
            // A reviewed call (SPEC 12.2) says the person's answer.
            let reviewed = step.reviewed();
            let how = match (step.guarded, step.refused, reviewed) {
                // A standing yes (SPEC 3.1 "Standing approvals") covers the run's later calls.
                (Some(true), false, true) if step.standing => {
                    "guarded, reviewed: yes for the rest of the run"
                }
                (Some(false), false, true) if step.standing => {
                    "plain, reviewed: yes for the rest of the run"
                }
                // A call not asked: it runs on a standing approval given earlier in the run.
                (Some(true), false, false) if step.standing => {
                    "guarded, not asked: on the standing approval"
                }
                (Some(false), false, false) if step.standing => {
                    "plain, not asked: on the standing approval"
                }
                (Some(true), true, true) => "guarded, refused or declined",
                (Some(true), false, true) => "guarded, reviewed: yes",
                (Some(false), true, true) => "plain, reviewed: no, not run",
                (Some(false), false, true) => "plain, reviewed: yes",
                (Some(true), true, _) => "guarded, refused",
                (Some(true), false, _) => "guarded",
                (Some(false), _, _) => "plain",
                (None, true, _) => "refused",
                (None, false, _) => "",
            };
            if how.is_empty() {
                format!("call {tool}")
            } else {
                format!("call {tool} ({how})")
            }
        }
        StepKind::Confirm => {
            let tool = step.tool.as_deref().unwrap_or("nothing");
            let answer = match step.yes {
                Some(false) => "no",
                _ => "yes",
            };
            match step.when {
                Some(when) => format!("confirm {tool} ({answer}, {when})"),
                None => format!("confirm {tool} ({answer})"),
            }
        }
        StepKind::TurnEnd => format!("turn {} ends", step.turn),
        StepKind::Flow => step.node.clone(),
        StepKind::Fact => format!(
            "{} is {}",
            step.node,
            if step.yes == Some(true) {
                "true"
            } else {
                "false"
            }
        ),
    };
    if step.violation {
        s.push_str(", violates ");
        s.push_str(obligation);
    }
    s
}
