//! QG312 (SPEC 9 `both`, SPEC 10): one finding per violation key on which the engines, or a
//! witness's replay, disagree. It names the obligation, says both answers, and carries both
//! witnesses (the explicit engine's first); it fails the gate and is listed first. And QG006 for
//! the obligations one engine decided alone (the other timed out or passed its size limit): one
//! finding per engine that left some, so a large graph does not drown the report.

use super::{finding, Subject};
use crate::engine::compare::{Answer, Disagreement, Unchecked};
use crate::findings::{DrawnFrom, Engine, Finding, Primary};
use crate::model::FlatModel;
use crate::rules::RuleId;

/// The QG312 findings of `disagreements`.
pub(crate) fn disagreements(m: &FlatModel, disagreements: &[Disagreement]) -> Vec<Finding> {
    disagreements
        .iter()
        .map(|d| {
            let (tool, node, _) = d.key;
            let t = &m.tools[tool];
            let n = &m.nodes[node];
            let ob = d.instance.obligation;
            let obligation = format!("{} ({})", ob.as_str(), ob.describe());
            let say = |a: &Answer| match a {
                Answer::Holds => "holds".to_string(),
                Answer::Breaks(v) => format!("breaks at turn {}", v.turn),
                Answer::NotRun => "was not run".to_string(),
            };
            let mut detail = format!(
                "at '{}' the explicit engine says it {} and the z3 engine says it {}",
                n.qid,
                say(&d.explicit),
                say(&d.z3),
            );
            if !d.why.is_empty() {
                detail.push_str(", but ");
                detail.push_str(&d.why);
            }
            let witness = |a: &Answer| match a {
                Answer::Breaks(v) => Some(v.witness.clone()),
                _ => None,
            };
            let (first, other) = match (witness(&d.explicit), witness(&d.z3)) {
                (Some(e), Some(z)) => (e, Some((Engine::Z3, z))),
                (Some(e), None) => (e, None),
                (None, Some(z)) => (z, None),
                (None, None) => (Vec::new(), None),
            };
            let depth = [&d.explicit, &d.z3]
                .iter()
                .filter_map(|a| match a {
                    Answer::Breaks(v) => Some(v.turn),
                    _ => None,
                })
                .min();
            let mut f = finding(
                Subject {
                    rule: RuleId::QG312,
                    obligation: Some(ob),
                    subject: t.name.clone(),
                    tool: Some(t),
                    node: Some(n.qid.clone()),
                    location: Primary::Line(n.loc),
                },
                depth,
                first,
                &[("detail", &detail), ("obligation", &obligation)],
            );
            f.other_witness = other;
            f.drawn_from = Some(DrawnFrom {
                obligation: ob,
                tool,
                node,
                class: d.key.2,
            });
            f
        })
        .collect()
}

/// One QG006 finding per engine that left obligations to the other alone.
pub(crate) fn unchecked(list: &[Unchecked]) -> Vec<Finding> {
    let mut out = Vec::new();
    for engine in Engine::ALL {
        let mine: Vec<&Unchecked> = list.iter().filter(|u| u.engine == engine).collect();
        let Some(first) = mine.first() else { continue };
        let other = engine.other();
        let detail = format!(
            "the {engine} engine could not decide {} (the first, {}: {}), so the {other} engine's \
             verdict on {} stands without a cross-check",
            plural(mine.len()),
            first.instance.obligation.as_str(),
            first.why,
            if mine.len() == 1 { "it" } else { "them" }
        );
        let mut f = finding(
            Subject {
                rule: RuleId::QG006,
                obligation: None,
                subject: format!("the {engine} engine's cross-check"),
                tool: None,
                node: None,
                location: Primary::NoLine,
            },
            None,
            Vec::new(),
            &[("detail", &detail)],
        );
        let room = if engine == Engine::Z3 {
            "`--solver-rlimit`, `--solver-obligation-rlimit`, `--solver-run-rlimit`, \
             `--solver-max-unrolling`"
        } else {
            "`--max-states`, `--max-run-states`"
        };
        f.fix = format!(
            "Give the {engine} engine more room ({room}) and re-scan, or accept the {other} engine's verdict alone with \
             `--engine {other}`; until then these verdicts are proved once, not twice."
        );
        out.push(f);
    }
    out
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 obligation".to_string()
    } else {
        format!("{n} obligations")
    }
}

/// QG312 for a finding whose witness the concrete interpreter does not reproduce (SPEC 10,
/// `--replay`): finding `number` of the report, `why` the interpreter's reason. It carries the
/// witness that failed and is located where the finding is.
pub(crate) fn unreproduced(m: &FlatModel, f: &Finding, number: usize, why: &str) -> Finding {
    let ob = f.obligation.unwrap_or(crate::findings::Obligation::O1);
    let obligation = format!("{} ({})", ob.as_str(), ob.describe());
    let detail = format!(
        "the concrete interpreter does not reproduce the witness of finding {number} ({}): {why}",
        f.rule
    );
    let mut q = finding(
        Subject {
            rule: RuleId::QG312,
            obligation: Some(ob),
            subject: f.subject.clone(),
            tool: m.tool_ix(&f.subject).map(|t| &m.tools[t]),
            node: f.node.clone(),
            location: f.location,
        },
        f.depth,
        f.witness.clone(),
        &[("detail", &detail), ("obligation", &obligation)],
    );
    q.drawn_from = f.drawn_from;
    q
}
