//! A satisfying model of a violation query, read back as a witness in the explicit engine's
//! vocabulary (SPEC 4): the entries with their pauses' answers, each batch's calls, the choices,
//! the turns' ends, and last the call that breaks the obligation.

use super::plan::{Group, Part};
use super::unroll::{Frame, Unrolling};
use crate::engine::steps::{call_step, call_step_as, enter_steps, leave_steps, number_run_steps};
use crate::engine::Violation;
use crate::findings::{Obligation, Step, StepKind};
use crate::input::ir::NotAfter;
use crate::model::{NodeIx, ToolIx};
use z3::ast::Bool;
use z3::Model;

fn truth(model: &Model, v: &Bool) -> bool {
    model
        .eval(v, true)
        .and_then(|x| x.as_bool())
        .unwrap_or(false)
}

/// The answers to frame `fr`'s `inside` pauses as a bitmask (bit j: the j-th said yes).
fn branch(model: &Model, fr: &Frame) -> u32 {
    fr.ans
        .iter()
        .enumerate()
        .filter(|(_, a)| truth(model, a))
        .fold(0, |b, (j, _)| b | 1 << j.min(31))
}

fn calls(model: &Model, fr: &Frame, u: ToolIx) -> u64 {
    fr.x[u].as_ref().map(|x| x.value(model)).unwrap_or(0)
}

/// The calls of a batch that does not break the obligation: the running calls, then the refused
/// ones; with none, one call of a tool whose calls the encoding leaves out, with the outcome the
/// check gives it.
fn batch(un: &Unrolling, model: &Model, fr: &Frame, n: NodeIx, steps: &mut Vec<Step>) {
    let m = un.m;
    let mut tools = m.nodes[n].called().to_vec();
    tools.sort_unstable();
    tools.dedup();
    let before = steps.len();
    // A standing yes (SPEC 3.1) goes to one running call of its tool. A model node's hosted
    // calls are made one after another, so there it comes before the visit's other calls, or
    // after them where the encoding chose so (`zlast`: the visit's reads do not clear it; a
    // standing yes to a read before the others).
    let standing = |u: ToolIx| fr.z[u].as_ref().is_some_and(|z| truth(model, z));
    let after_reads = |u: ToolIx| fr.zlast[u].as_ref().is_some_and(|z| truth(model, z));
    let hosted = !m.nodes[n].calls_tools();
    let (mut first, mut last): (Vec<ToolIx>, Vec<ToolIx>) = (Vec::new(), Vec::new());
    let mut rest = Vec::new();
    for &u in &tools {
        let k = calls(model, fr, u);
        let z = standing(u) && k > 0;
        for j in 0..k {
            if z && hosted && j == 0 {
                if after_reads(u) {
                    last.push(u);
                } else {
                    first.push(u);
                }
            } else {
                rest.push(call_step_as(m, n, u, fr.turn, false, z && j == 0));
            }
        }
    }
    last.sort_by_key(|&u| !m.tools[u].reads_outside);
    for u in first {
        steps.push(call_step_as(m, n, u, fr.turn, false, true));
    }
    steps.extend(rest);
    for u in last {
        steps.push(call_step_as(m, n, u, fr.turn, false, true));
    }
    for &u in &tools {
        let decided = m.nodes[n].guarded() || m.nodes[n].reviews_calls_of(u);
        if fr.y[u].as_ref().is_some_and(|y| truth(model, y)) && decided {
            steps.push(call_step(m, n, u, fr.turn, true));
        }
    }
    // A tool node's batch is never empty; a model node's hosted calls may be none.
    if steps.len() == before && m.nodes[n].calls_tools() {
        if let Some(&u) = tools.iter().find(|&&u| un.p.xcap[u] == 0) {
            // Its outcome changes nothing the obligation reads: a refusal (or a person's no)
            // wherever one can happen, since it changes nothing at all.
            let refused = m.nodes[n].reviews_calls_of(u)
                || (m.nodes[n].guarded()
                    && (m.tools[u].is_write() || !truth(model, &un.order_static(fr, u))));
            steps.push(call_step(m, n, u, fr.turn, refused));
        }
    }
}

/// The witnesses of `group`, which breaks at frame `iv` in `model`: one violation per key.
pub(crate) fn violations(
    un: &Unrolling,
    model: &Model,
    iv: usize,
    group: &Group,
) -> Vec<Violation> {
    let m = un.m;
    let mut steps = Vec::new();
    for i in 0..=iv {
        let fr = &un.frames[i];
        let n = fr.nd.value(model) as usize;
        if n >= m.nodes.len() {
            continue;
        }
        if fr.offset == 0 {
            enter_steps(m, m.entry, branch(model, fr), fr.turn, &mut steps);
        }
        if i == iv {
            break;
        }
        if !m.nodes[n].called().is_empty() {
            batch(un, model, fr, n, &mut steps);
        }
        let j = fr.ed.value(model) as usize;
        let Some(&e) = fr.edges.get(j) else { continue };
        let edge = &m.edges[e];
        leave_steps(m, edge.from, fr.turn, &mut steps);
        let mut c = Step::new(StepKind::Choose, &m.nodes[edge.from].qid, fr.turn);
        c.to = Some(m.nodes[edge.to].qid.clone());
        c.edge = Some(e);
        c.loc = Some(m.nodes[edge.from].loc);
        steps.push(c);
        if m.top_ends.contains(&edge.to) {
            let mut t = Step::new(StepKind::TurnEnd, &m.nodes[edge.to].qid, fr.turn);
            t.loc = Some(m.nodes[edge.to].loc);
            steps.push(t);
        } else {
            enter_steps(
                m,
                edge.to,
                branch(model, &un.frames[i + 1]),
                fr.turn,
                &mut steps,
            );
        }
    }
    let fr = &un.frames[iv];
    let n = fr.nd.value(model) as usize;
    let turn = fr.turn;
    let part = group
        .parts
        .iter()
        .copied()
        .find(|&p| truth(model, &un.part(iv, p)))
        .unwrap_or(group.parts[0]);
    let finals: Vec<(ToolIx, Calls, ToolIx)> = group
        .keys
        .iter()
        .map(|&(key_tool, _, _)| {
            let (pre, last) = final_calls(un, model, fr, n, part, key_tool);
            (key_tool, pre, last)
        })
        .collect();
    group
        .keys
        .iter()
        .zip(finals)
        .map(|(&(tool, node, class), (_, pre, last))| {
            let mut w = steps.clone();
            for (u, standing) in pre {
                w.push(call_step_as(m, n, u, turn, false, standing));
            }
            let mut v = call_step(m, n, last, turn, false);
            v.violation = true;
            w.push(v);
            number_run_steps(m, &mut w);
            Violation {
                obligation: un.p.inst.obligation,
                tool,
                node,
                class,
                turn,
                witness: w,
            }
        })
        .collect()
}

/// Calls of a breaking batch, each with whether the person answered it yes for the rest of the
/// run (SPEC 3.1 "Standing approvals").
type Calls = Vec<(ToolIx, bool)>;

/// The calls made in the breaking batch before the breaking one (each with whether the person
/// answered it yes for the rest of the run, SPEC 3.1), and the breaking call's tool.
fn final_calls(
    un: &Unrolling,
    model: &Model,
    fr: &Frame,
    n: NodeIx,
    part: Part,
    key_tool: ToolIx,
) -> (Calls, ToolIx) {
    if !un.m.nodes[n].calls_tools() {
        if let Part::At { .. } = part {
            return (hosted_pre_calls(un, model, fr, n, key_tool), key_tool);
        }
    }
    let (pre, last) = batch_final_calls(un, model, fr, n, part, key_tool);
    (pre.into_iter().map(|u| (u, false)).collect(), last)
}

/// [`final_calls`] at a tool node, where no standing yes comes before the breaking call.
fn batch_final_calls(
    un: &Unrolling,
    model: &Model,
    fr: &Frame,
    n: NodeIx,
    part: Part,
    key_tool: ToolIx,
) -> (Vec<ToolIx>, ToolIx) {
    let m = un.m;
    let ob = un.p.inst.obligation;
    let here: Vec<ToolIx> = m.nodes[n].called().to_vec();
    let writes_called = |skip: Option<ToolIx>| {
        here.iter()
            .copied()
            .find(|&u| Some(u) != skip && m.tools[u].is_write() && calls(model, fr, u) >= 1)
    };
    match (part, ob) {
        (Part::Unrec { .. }, _) => (Vec::new(), writes_called(None).unwrap_or(key_tool)),
        (_, Obligation::O5) => {
            let cap = m.tools[key_tool]
                .order
                .at_most
                .as_ref()
                .map(|a| u64::from(a.count))
                .unwrap_or(0);
            let have = fr.s.cnt[key_tool]
                .as_ref()
                .map(|c| c.value(model))
                .unwrap_or(0);
            let pre = cap.saturating_sub(have) as usize;
            (vec![key_tool; pre], key_tool)
        }
        (_, Obligation::O7) => {
            if truth(model, &fr.s.irrev) {
                return (Vec::new(), key_tool);
            }
            let w = here.iter().copied().find(|&w| {
                let d = &m.tools[w];
                let conf = un.confirmed_at(fr, w).is_some_and(|c| truth(model, &c));
                let need = if w == key_tool { 2 } else { 1 };
                d.is_write() && d.irreversible && !conf && calls(model, fr, w) >= need
            });
            (w.into_iter().collect(), key_tool)
        }
        (_, Obligation::O8) => {
            if truth(model, &fr.s.wrote) {
                return (Vec::new(), key_tool);
            }
            match writes_called(Some(key_tool)) {
                Some(u) => (vec![u], key_tool),
                None => (vec![key_tool], key_tool),
            }
        }
        // The violating call alone shows these (exhaustive, so a new obligation is asked here).
        (
            _,
            Obligation::O1
            | Obligation::O2
            | Obligation::O3
            | Obligation::O4
            | Obligation::O6
            | Obligation::O9
            | Obligation::O10,
        ) => (Vec::new(), key_tool),
    }
}

/// The hosted calls (SPEC 2.2) a model node makes before the one of `t0` that breaks the
/// obligation at frame `fr` (see `Unrolling::hosted_part`): none where the state on arrival
/// breaks it already, else the earlier calls of the same visit that make it break.
fn hosted_pre_calls(un: &Unrolling, model: &Model, fr: &Frame, n: NodeIx, t0: ToolIx) -> Calls {
    let m = un.m;
    let node = &m.nodes[n];
    // A standing yes to t0 given in this visit, then a read (SPEC 3.1): where the node reviews
    // t0 and no approval held on arrival, a later call is unasked only so.
    let held = |u: ToolIx| fr.s.stand[u].as_ref().is_some_and(|v| truth(model, v));
    if matches!(un.p.inst.obligation, Obligation::O6 | Obligation::O10)
        && node.reviews_calls_of(t0)
        && !held(t0)
    {
        let read = node
            .hosted
            .iter()
            .copied()
            .find(|&u| m.tools[u].reads_outside);
        let mut pre = vec![(t0, true)];
        pre.extend(read.map(|r| (r, false)));
        return pre;
    }
    hosted_plain_pre_calls(un, model, fr, n, t0)
        .into_iter()
        .map(|u| (u, false))
        .collect()
}

/// [`hosted_pre_calls`] where no standing yes is given before the breaking call.
fn hosted_plain_pre_calls(
    un: &Unrolling,
    model: &Model,
    fr: &Frame,
    n: NodeIx,
    t0: ToolIx,
) -> Vec<ToolIx> {
    let m = un.m;
    let node = &m.nodes[n];
    let is = |v: &Option<Bool>| v.as_ref().is_some_and(|v| truth(model, v));
    let first = |p: &dyn Fn(ToolIx) -> bool| node.hosted.iter().copied().find(|&u| p(u));
    let read = first(&|u| m.tools[u].reads_outside);

    match un.p.inst.obligation {
        Obligation::O1 | Obligation::O3 => Vec::new(),
        // An earlier call of t0 spends its confirmation.
        Obligation::O2 => {
            if is(&fr.conf_e[t0]) {
                vec![t0]
            } else {
                Vec::new()
            }
        }
        Obligation::O4 => {
            let o = &m.tools[t0].order;
            let broken = o.not_after.iter().any(|b| match b {
                NotAfter::Tool(x) => m.tool_ix(&x.name).is_some_and(|b| is(&fr.s.ran[b])),
                NotAfter::Untrusted => truth(model, &fr.tainted()),
            });
            if broken {
                return Vec::new();
            }
            o.not_after
                .iter()
                .find_map(|b| match b {
                    NotAfter::Tool(x) => m.tool_ix(&x.name).filter(|b| node.hosted.contains(b)),
                    NotAfter::Untrusted => read,
                })
                .into_iter()
                .collect()
        }
        Obligation::O5 => {
            let cap = m.tools[t0]
                .order
                .at_most
                .as_ref()
                .map(|a| u64::from(a.count))
                .unwrap_or(0);
            let have = fr.s.cnt[t0].as_ref().map(|c| c.value(model)).unwrap_or(0);
            vec![t0; cap.saturating_sub(have) as usize]
        }
        // Taint, then t0's confirmation on clean content spent by an earlier call of itself; a
        // standing approval on clean content is not spent, only cleared by a read.
        Obligation::O6 | Obligation::O10 => {
            if !truth(model, &fr.tainted()) || is(&fr.s.sclean[t0]) {
                read.into_iter().collect()
            } else if is(&fr.clean_e[t0]) {
                vec![t0]
            } else {
                Vec::new()
            }
        }
        // An irreversible write run unconfirmed: once if unconfirmed, else twice (the first
        // spends its confirmation).
        Obligation::O7 => {
            if truth(model, &fr.s.irrev) {
                return Vec::new();
            }
            let held = |w: ToolIx| fr.s.stand[w].as_ref().is_some_and(|v| truth(model, v));
            let w = first(&|w| {
                let d = &m.tools[w];
                d.is_write() && d.irreversible && !node.reviews_calls_of(w) && !held(w)
            });
            match w {
                Some(w) if is(&fr.conf_e[w]) => vec![w, w],
                Some(w) => vec![w],
                None => Vec::new(),
            }
        }
        Obligation::O8 => {
            if truth(model, &fr.s.wrote) {
                Vec::new()
            } else {
                vec![t0]
            }
        }
        Obligation::O9 => {
            let mut pre = Vec::new();
            if !m.confidential().any(|c| is(&fr.s.ran[c])) {
                pre.extend(first(&|c| m.tools[c].confidential));
            }
            if is(&fr.conf_e[t0]) {
                pre.push(t0);
            }
            pre
        }
    }
}
