//! Findings from the obligation verdicts (SPEC 3.1, 4): QG001 (O1, O2), QG014 (O3-O5), QG011 and
//! QG012 (O6), QG013 (O7), QG105 (O8), QG003 for O1-O6 first broken at a later turn, and QG006 for
//! an instance the search could not decide.

use super::{builder_name, finding, finding_in, Subject};
use crate::engine::{InstanceResult, Violation};
use crate::findings::{DrawnFrom, Finding, Obligation, Primary};
use crate::input::ir::{Framework, NodeKind};
use crate::model::obligation::Judges;
use crate::model::{FlatModel, NodeIx, ToolIx};
use crate::rules::RuleId;
use std::collections::BTreeMap;

/// Turns the verdicts into findings, their fixes in the terms of the `framework` the export
/// was made with (SPEC 12: a LangGraph export is told the LangGraph remedy).
pub(crate) fn findings(
    m: &FlatModel,
    results: &[InstanceResult],
    framework: Framework,
) -> Vec<Finding> {
    let mut out = Vec::new();
    // QG003 candidates merged per (obligation, tool, node): the earliest turn wins.
    let mut later: BTreeMap<(Obligation, ToolIx, NodeIx), &Violation> = BTreeMap::new();
    for r in results {
        if let Some(why) = r.undecided() {
            let tool = r.instance.tool.map(|t| &m.tools[t]);
            let subject = tool
                .map(|t| t.name.clone())
                .unwrap_or_else(|| "graph".to_string());
            let detail = format!(
                "{} ({}) is undecided, not clean: {}",
                r.instance.obligation.as_str(),
                r.instance.obligation.describe(),
                why
            );
            let mut f = finding(
                Subject {
                    rule: RuleId::QG006,
                    obligation: Some(r.instance.obligation),
                    subject,
                    tool: None,
                    node: None,
                    location: Primary::at(tool.map(|t| t.loc)),
                },
                None,
                Vec::new(),
                &[("detail", &detail)],
            );
            // The rule's fix speaks of a subgraph node; an obligation has none.
            f.fix = "Raise the bound the message names and re-scan, or make the graph smaller \
                     (fewer tools a node routes to); until then this obligation is unproved."
                .to_string();
            f.unproved = r.instance.obligation.spec().rules();
            out.push(f);
        }
        for v in &r.violations {
            let spec = v.obligation.spec();
            let early = !spec.later_turn_is_qg003() || v.turn == 1;
            if !early {
                let key = (v.obligation, v.tool, v.node);
                let keep = later
                    .get(&key)
                    .is_none_or(|w| (v.turn, v.class) < (w.turn, w.class));
                if keep {
                    later.insert(key, v);
                }
                continue;
            }
            if confirmed_by_the_guard(m, v) {
                continue;
            }
            out.push(violation_finding(m, v, spec.rule_for(v.class), framework));
        }
    }
    for v in later.values() {
        out.push(violation_finding(m, v, RuleId::QG003, framework));
    }
    out
}

/// The LangGraph fix for a call a step's own code makes: keep the step (its logic), and route the
/// call through the guard where it is made (`guard.call`, `guard.acall`, SPEC 12.1).
fn step_fix(tool: &str, name: &str) -> String {
    format!(
        "'{name}' is a step whose own code calls '{tool}': keep the step and send the call \
         through the guard where it is made: `from stalwart_export import Guard`, \
         `guard = Guard(\"catalogue.json\")`, then in the step `guard.call({tool}, args, state)` \
         (in an `async def` step, `await guard.acall({tool}, args, state)`) instead of calling \
         '{tool}' itself, with `stalwart_guard: GuardHistory` in the graph's state. Re-export, and \
         the step's call of '{tool}' goes through the tool check. Where the graph pauses for a \
         person to confirm '{tool}', pause before the step: \
         `builder.compile(interrupt_before=[\"{name}\"])`."
    )
}

/// True for a QG019 violation (O9) at a guarded call of a write: the tool check confirms every
/// write with the person, shown the call's arguments (SPEC 3, section 12.1's rule 8), so the send
/// is confirmed and O9 holds for that call. A guarded `sends_out` read is not confirmed by the
/// guard and stays a finding.
fn confirmed_by_the_guard(m: &FlatModel, v: &Violation) -> bool {
    v.obligation == Obligation::O9 && m.nodes[v.node].guarded() && m.tools[v.tool].is_write()
}

fn violation_finding(m: &FlatModel, v: &Violation, rule: RuleId, framework: Framework) -> Finding {
    let tool = &m.tools[v.tool];
    let node = &m.nodes[v.node];
    let detail = (v.obligation.spec().detail)(m, v.tool);
    let obligation = format!("{} ({})", v.obligation.as_str(), v.obligation.describe());
    let depth = v.turn.to_string();
    let mut f = finding_in(
        Subject {
            rule,
            obligation: Some(v.obligation),
            subject: tool.name.clone(),
            tool: Some(tool),
            node: Some(node.qid.clone()),
            location: Primary::Line(node.loc),
        },
        framework,
        Some(v.turn),
        v.witness.clone(),
        &[
            ("detail", &detail),
            ("obligation", &obligation),
            ("depth", &depth),
        ],
    );
    if node.kind == NodeKind::Step && f.fix.contains("guard.tool_node") {
        // Issue 28: replacing a step with a tool node would delete its logic; its calls are
        // guarded where it makes them.
        f.fix = step_fix(&tool.name, builder_name(&node.qid));
    }
    if let Some(why) = node.guard_not_credited.as_deref() {
        // SPEC 2.2 `guard_not_credited`: the author did fit the guard; the fix is what keeps it.
        f.message.push_str(
            "; its calls do pass a guard, which the export does not credit: the guard does not \
             hold there as the proof assumes",
        );
        f.fix = format!(
            "'{}' runs its calls through the guard, but the export does not credit it: {}. \
             Re-export and re-scan once that is done: the node is then a guarded `tools` node.",
            builder_name(&node.qid),
            why.trim_end_matches('.')
        );
    }
    if node.guarded() && v.obligation.spec().judges == Judges::Plain {
        // SPEC 3.1 "The guard's view": a guarded call breaks O4-O6 only on what the tool check
        // never saw; the rule's own fix (bind it to a guarded node) is already done.
        f.message.push_str(
            "; the call goes through the tool check, which never saw the plain calls or remote \
             answers before it (the guard's view, docs/how-it-decides.md)",
        );
        f.fix = format!(
            "The tool check on '{}' decides over the calls it saw: make the calls that break the \
             rule here through the guard too (a guarded `tools` node, not a `tools_plain` node, a \
             step's own code or a provider's hosted tools), or declare what reached the session \
             unseen (`input.reads_outside`), and re-scan.",
            node.qid
        );
    }
    if node.hosted.contains(&v.tool) && !node.calls_tools() {
        // SPEC 2.2 `hosted`: the call is made during the model node's visit - by the model's
        // provider, or by the node's own code (an exporter writes those there too) - where no
        // guard sits.
        f.message.push_str(
            "; the model node makes this call itself during its visit (a provider-hosted tool, or \
             the node's own code running it), so no tool check can decide it",
        );
        f.fix = format!(
            "'{}' is called by '{}' itself. Where the node's own code runs it, pass the call to the \
             guard in that code (`guard.call({}, args, state)`) or run it from a guarded `tools` \
             node; where it is a provider-hosted tool, its provider runs it inside the model call, \
             outside any guard: use a function tool bound to a guarded `tools` node in its place. \
             Then re-scan.",
            tool.name, node.qid, tool.name
        );
    }
    f.drawn_from = Some(DrawnFrom {
        obligation: v.obligation,
        tool: v.tool,
        node: v.node,
        class: v.class,
    });
    f
}
