//! `--replay FINDING` (SPEC 10): one finding's witness walked on the concrete interpreter
//! ([`crate::engine::interp`]), every tool a stub that records its call and a scripted model making
//! the witness's choices, with the latches each step changed.
//!
//! [`select`] finds the finding the user named (its number in the report, or its fingerprint or a
//! unique prefix of it); [`walk`] replays its witness into a [`Walkthrough`]; a witness that does
//! not reproduce carries a QG312 finding. The outputs ([`crate::output::replay`]) print it as a
//! numbered walkthrough over the source lines, or as the JSON script a harness around the real
//! graph replays with its own stubs.

use crate::engine::interp::{self, Latches, ReplayError};
use crate::findings::{Evidence, Step};
use crate::model::FlatModel;
use crate::report::{Report, WalkStep, Walkthrough};

/// Why a finding cannot be replayed (exit 2, with the fix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReplayable {
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: String,
}

fn not(message: String, help: &str) -> NotReplayable {
    NotReplayable {
        message,
        help: help.to_string(),
    }
}

/// The index (0-based) of the finding `spec` names in `report`: its number as the report lists
/// findings (`1`, `2`, ...), or its fingerprint, whole or a unique prefix of at least 4 hex digits.
/// Errors: no finding, or several, match.
pub fn select(report: &Report, spec: &str) -> Result<usize, NotReplayable> {
    let spec = spec.trim();
    let n = report.findings.len();
    let listing = "`stalwart verify ... --format json` lists each finding's fingerprint; findings are numbered from 1 in the order the report lists them";
    if let Ok(k) = spec.parse::<usize>() {
        let prefix_of_some = report
            .findings
            .iter()
            .any(|f| f.fingerprint.starts_with(spec));
        if spec.len() < 4 || !prefix_of_some {
            let help = if prefix_of_some {
                "a number is a finding's place in the report; give 4 or more hex digits of a fingerprint"
            } else {
                listing
            };
            return match k {
                1.. if k <= n => Ok(k - 1),
                _ => Err(not(
                    format!("no finding {k}: this run has {n} finding(s)"),
                    help,
                )),
            };
        }
    }
    let lower = spec.to_ascii_lowercase();
    if lower.len() < 4 || !lower.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not(
            format!("'{spec}' is neither a finding number (from 1) nor 4 or more hex digits of a fingerprint"),
            listing,
        ));
    }
    let hits: Vec<usize> = (0..n)
        .filter(|&i| report.findings[i].fingerprint.starts_with(&lower))
        .collect();
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => Err(not(
            format!("no finding of this run has a fingerprint starting '{spec}'"),
            listing,
        )),
        _ => Err(not(
            format!(
                "{} findings have fingerprints starting '{spec}'",
                hits.len()
            ),
            "give more digits of the fingerprint",
        )),
    }
}

/// Replays finding `index` (0-based) of `report` on `m`, the model it was drawn from.
/// Errors: the finding has no witness on the graph (a declaration or rulebook finding), or
/// names a tool or node the model lacks.
pub fn walk(m: &FlatModel, report: &Report, index: usize) -> Result<Walkthrough, NotReplayable> {
    let f = &report.findings[index];
    let help = "replay a finding whose witness is a route through the graph (QG001, QG003, QG011-QG014, QG019, QG021, QG105, QG312); the report shows the others' reasons";
    // The engines' key the finding was drawn from: its obligation, tool, node and class.
    let (Some(key), Evidence::GraphRoute) = (f.drawn_from, f.evidence) else {
        return Err(not(
            format!(
                "finding {} ({}) has no route through the graph to replay",
                index + 1,
                f.rule
            ),
            help,
        ));
    };
    if key.tool >= m.tools.len() || key.node >= m.nodes.len() {
        return Err(not(
            format!(
                "finding {} names '{}' at '{}', which the model does not have",
                index + 1,
                f.subject,
                f.node.as_deref().unwrap_or("")
            ),
            "re-run verify on the same input",
        ));
    }
    let mut before = Latches::new(m);
    let mut steps: Vec<WalkStep> = Vec::new();
    let result = interp::replay_observed(
        m,
        &f.witness,
        key.obligation,
        key.tool,
        key.node,
        key.class,
        &mut |i, l| {
            steps.push(WalkStep {
                step: on_standing(m, &before, &f.witness[i]),
                changes: changes(m, &before, l),
                node_kind: "",
            });
            before = l.clone();
        },
    );
    // `before` now holds the latches after the last observed step.
    let at = before;
    // The step the walk stopped at is shown too, unobserved (it changed nothing).
    let stopped = result
        .as_ref()
        .err()
        .and_then(ReplayError::step)
        .unwrap_or(f.witness.len() - 1);
    if stopped == steps.len() {
        steps.push(WalkStep {
            step: on_standing(m, &at, &f.witness[stopped]),
            changes: Vec::new(),
            node_kind: "",
        });
    }
    // Node steps as the engines count them (SPEC 3.1), whoever made the witness.
    let mut walked: Vec<Step> = steps.iter().map(|s| s.step.clone()).collect();
    crate::engine::steps::number_run_steps(m, &mut walked);
    for (s, w) in steps.iter_mut().zip(walked) {
        s.step.run_steps = w.run_steps;
        s.node_kind = m
            .node_ix(&s.step.node)
            .map_or("", |n| m.nodes[n].kind.as_str());
    }
    let unreproduced = result.err().map(|e| {
        let step = e.step();
        let why = match &e {
            ReplayError::GuardDiffers { step, tool } => format!(
                "step {}: the tool check decides the call of '{}' otherwise",
                step + 1,
                m.tools[*tool].name
            ),
            other => other.to_string(),
        };
        (
            crate::checks::engines::unreproduced(m, f, index + 1, &why),
            step,
        )
    });
    Ok(Walkthrough {
        index: index + 1,
        finding: f.clone(),
        steps,
        at_violation: state(m, &at),
        unreproduced,
        recursion_limit: m.recursion_limit,
    })
}

/// `st` as the walk shows it given the latches `l` before it: a call its node reviews, made
/// while a standing approval of its tool holds (SPEC 3.1 "Standing approvals"), was not asked:
/// it runs on that approval (shown so, without a yes of its own).
fn on_standing(m: &FlatModel, l: &Latches, st: &Step) -> Step {
    let mut st = st.clone();
    let tool = st.tool.as_deref().and_then(|t| m.tool_ix(t));
    let node = m.node_ix(&st.node);
    if let (crate::findings::StepKind::Call, Some(t), Some(n)) = (st.kind, tool, node) {
        if !st.standing && !st.refused && l.standing[t] && m.nodes[n].reviews_calls_of(t) {
            st.when = None;
            st.yes = None;
            st.standing = true;
        }
    }
    st
}

/// The latches that differ between `a` and `b`, as `b` has them, in SPEC 3's names.
fn changes(m: &FlatModel, a: &Latches, b: &Latches) -> Vec<String> {
    let tool = |t: usize| m.tools[t].name.as_str();
    let mut out = Vec::new();
    for (i, (name, _)) in m.flags.iter().enumerate() {
        if a.flags[i] != b.flags[i] {
            out.push(format!("flag {name} = {}", b.flags[i]));
        }
    }
    for (i, name) in m.counters.iter().enumerate() {
        if a.counters[i] != b.counters[i] {
            out.push(format!("exit_after[{name}] = {}", b.counters[i]));
        }
    }
    for t in 0..m.tools.len() {
        if a.ran[t] != b.ran[t] {
            out.push(format!("ran[{}] = {}", tool(t), b.ran[t]));
        }
        if a.count[t] != b.count[t] {
            out.push(format!("count[{}] = {}", tool(t), b.count[t]));
        }
        if a.confirmed[t] != b.confirmed[t] {
            out.push(format!("confirmed[{}] = {}", tool(t), b.confirmed[t]));
        }
        if a.clean[t] != b.clean[t] {
            out.push(format!("confirmed_clean[{}] = {}", tool(t), b.clean[t]));
        }
        // A standing approval (SPEC 3.1 "Standing approvals"), where some review can give one.
        if m.standing(t) && a.standing[t] != b.standing[t] {
            out.push(format!("standing[{}] = {}", tool(t), b.standing[t]));
        }
        if m.standing(t) && a.standing_clean[t] != b.standing_clean[t] {
            out.push(format!(
                "standing_clean[{}] = {}",
                tool(t),
                b.standing_clean[t]
            ));
        }
        // The seen twins (SPEC 3.1 "The guard's view"), where they can differ from the latches.
        if m.unseen.tool(t) && a.ran_seen[t] != b.ran_seen[t] {
            out.push(format!("ran_seen[{}] = {}", tool(t), b.ran_seen[t]));
        }
        if m.unseen.tool(t) && a.count_seen[t] != b.count_seen[t] {
            out.push(format!("count_seen[{}] = {}", tool(t), b.count_seen[t]));
        }
    }
    for r in b.tainted.difference(&a.tainted) {
        out.push(format!("tainted += {}", m.region_label(*r)));
    }
    for r in a.tainted.difference(&b.tainted) {
        out.push(format!("tainted -= {}", m.region_label(*r)));
    }
    if m.unseen.taint && a.tainted_seen != b.tainted_seen {
        out.push(format!("tainted_seen = {}", b.tainted_seen));
    }
    if a.irrev_unconf != b.irrev_unconf {
        out.push(format!("irreversible_unconfirmed = {}", b.irrev_unconf));
    }
    if a.wrote != b.wrote {
        out.push(format!("wrote = {}", b.wrote));
    }
    out
}

/// Every latch that is set (true or nonzero) in `l`, in SPEC 3's names (`tainted = {desk}`);
/// `[]` when none is.
fn state(m: &FlatModel, l: &Latches) -> Vec<String> {
    let mut out: Vec<String> = changes(m, &Latches::new(m), l)
        .into_iter()
        .filter(|c| !c.starts_with("tainted +=") && !c.starts_with("tainted -="))
        .collect();
    if !l.tainted.is_empty() {
        let r: Vec<String> = l.tainted.iter().map(|&r| m.region_label(r)).collect();
        out.push(format!("tainted = {{{}}}", r.join(", ")));
    }
    out
}
