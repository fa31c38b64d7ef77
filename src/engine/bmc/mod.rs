//! The Z3 engine (SPEC 9 `z3`): bounded model checking of SPEC 3's transition system, the second
//! engine beside the explicit search.
//!
//! Per obligation instance, [`plan`] works out what the unrolling keeps, [`unroll`] asserts the
//! transition relation turn by turn on one incremental solver, and each question is asked under
//! a fresh assumption literal, so the unrolling is shared by every query of the instance:
//!
//! 1. For turn k = 1..=`session_steps`: violations another engine reports at turn k (the
//!    [`Hints`] of `--engine both`) are asked about first: "broken within its j node steps?" and
//!    "within j - 1?"; then "does some violation not yet found break in turn k?" Unsatisfiable:
//!    none does; go to the next turn. Satisfiable: the model names a violation group; the fewest
//!    node steps at which it breaks in turn k is found by asking "within j steps?", and the model
//!    of the last satisfiable query is decoded ([`decode`]) into the witness. A hint only orders
//!    the queries: both bounds are Z3's answers, and whatever it misses the open search finds.
//! 2. Where no latch outlives a turn, later turns start as the first did and are not searched
//!    (the obligation's verdict then holds at every depth); where no violation is found, k-induction
//!    over turns ([`induct`]) tries to prove the obligation at every depth.
//! 3. Guarded calls whose refusal the slice does not decide are over-approximated; a witness that
//!    the plain interpreter finds the tool check would have decided otherwise makes that guard
//!    exact and the instance is asked again (refinement, as in the explicit engine).
//!
//! A query Z3 answers `unknown` (its timeout, say) makes the instance undecided: QG006, never
//! clean.

pub mod bits;
pub mod decode;
pub mod induct;
pub mod plan;
pub mod unroll;

use super::{Depth, Instance, InstanceResult, Violation};
use crate::engine::slice::Slice;
use crate::model::{FlatModel, NodeIx, ToolIx};
pub use plan::Common;
use plan::{Group, Plan};
use std::collections::{BTreeMap, BTreeSet};
use unroll::Unrolling;
use z3::ast::Bool;
use z3::{Model, SatResult};

/// A violation key: (tool, node, class), as the engines key their violations.
pub type Key = (ToolIx, NodeIx, super::Class);

/// What another engine found, used only to order the queries (every answer is still Z3's own).
#[derive(Debug, Clone, Default)]
pub struct Hints {
    /// Per key: the turn and node steps of its shortest witness.
    pub found: BTreeMap<Key, (u32, u32)>,
    /// True when the instance was proved at every depth already (k-induction is then skipped).
    pub every_depth: bool,
}

/// The largest `at_most` count the Z3 engine encodes (as a thermometer of that many variables a
/// frame); an obligation that keeps a larger one is left undecided.
pub const MAX_COUNT: u32 = 64;

/// Settings of the Z3 engine.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Milliseconds Z3 may spend on one query before it answers `unknown`.
    pub timeout_ms: u32,
    /// Frames x (nodes + edges) one instance's unrolling may hold; past it the instance is left
    /// undecided (QG006) at once rather than handed to a solver that would time out on it.
    pub max_size: usize,
    /// Test-only: report every instance as holding, to show that a disagreement is caught.
    pub broken: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout_ms: 10_000,
            max_size: 150_000,
            broken: false,
        }
    }
}

/// Answers one instance with Z3. Guarded calls whose refusal the slice does not decide are
/// over-approximated; a witness the plain interpreter finds the check would have decided
/// otherwise makes every guard exact, and the instance is asked again (counterexample-guided
/// refinement), so reported witnesses are real.
///
/// `common` is [`Common::new`] of `m`. An instance with nothing to break, or one its unrolling
/// or counts put past the engine's limits, is answered before any Z3 context is made (issue 14:
/// making one costs milliseconds, and a wide graph has tens of thousands of instances); the others
/// get a fresh context each, so an answer does not depend on which instances ran before.
pub fn check(
    m: &FlatModel,
    common: &Common,
    inst: Instance,
    cfg: &Config,
    hints: &Hints,
) -> InstanceResult {
    let none = BTreeSet::new();
    let slice = Slice::new(m, inst.obligation, inst.tool, &none);
    let groups = plan::groups(m, &common.binders, inst);
    if let Some(r) = declined(m, common, inst, &slice, &groups, cfg) {
        return r;
    }
    let first = Plan::with(m, common, inst, &none, slice, groups);
    z3::with_z3_config(&z3::Config::new(), || refine(m, common, first, cfg, hints))
}

/// Asks Z3 about `plan`, refining it until every witness replays (see [`check`]).
fn refine(
    m: &FlatModel,
    common: &Common,
    plan: Plan,
    cfg: &Config,
    hints: &Hints,
) -> InstanceResult {
    let inst = plan.inst;
    let mut plan = plan;
    let mut exact: BTreeSet<ToolIx> = BTreeSet::new();
    let mut queries = 0;
    loop {
        let mut res = check_plan(m, common, &plan, cfg, hints);
        queries += res.queries;
        let refine: BTreeSet<ToolIx> = res
            .violations
            .iter()
            .filter_map(|v| match super::interp::replay_violation(m, v) {
                Err(super::interp::ReplayError::GuardDiffers { tool, .. }) => Some(tool),
                _ => None,
            })
            .filter(|t| !exact.contains(t))
            .collect();
        if refine.is_empty() {
            res.queries = queries;
            return res;
        }
        // One refinement makes every guard exact: asking again tool by tool costs more than
        // the latches it would save.
        exact = (0..m.tools.len()).collect();
        plan = Plan::new(m, common, inst, &exact);
    }
}

/// The answer for an instance Z3 is not asked about: nothing to break (it holds at every
/// depth), a count past [`MAX_COUNT`], or an unrolling past `cfg.max_size` (undecided, with the
/// reason). `None` when Z3 is to be asked.
fn declined(
    m: &FlatModel,
    common: &Common,
    inst: Instance,
    slice: &Slice,
    groups: &[Group],
    cfg: &Config,
) -> Option<InstanceResult> {
    let mut result = InstanceResult::holds(inst);
    if groups.is_empty() || cfg.broken {
        return Some(result);
    }
    // A frame holds a variable per node and edge, and a thermometer of steps where they are
    // counted; counts past `MAX_COUNT` would need thermometers as long.
    let size = common.unrolling_size(m);
    if let Some(&(t, cap, _)) = slice.count.iter().find(|c| c.1 > MAX_COUNT) {
        result.depth = Depth::Undecided;
        result.note = Some(format!(
            "the z3 engine counts calls up to {MAX_COUNT}, and '{}' may run {cap} times",
            m.tools[t].name
        ));
        return Some(result);
    }
    if size > cfg.max_size {
        result.depth = Depth::Undecided;
        result.note = Some(format!(
            "the z3 engine's unrolling would hold {size} frame-nodes and frame-edges, past its limit of {} (--solver-max-unrolling)",
            cfg.max_size
        ));
        return Some(result);
    }
    None
}

/// Answers one instance with one plan.
fn check_plan(
    m: &FlatModel,
    common: &Common,
    plan: &Plan,
    cfg: &Config,
    hints: &Hints,
) -> InstanceResult {
    let inst = plan.inst;
    if let Some(r) = declined(m, common, inst, &plan.slice, &plan.groups, cfg) {
        return r;
    }
    let mut result = InstanceResult::holds(inst);
    let mut un = Unrolling::new(m, plan, cfg.timeout_ms, false);
    let mut open: Vec<bool> = vec![true; plan.groups.len()];
    let mut found: Vec<Violation> = Vec::new();
    let mut queries = 0u64;
    for turn in 1..=m.session_steps {
        // Where no latch outlives a turn, every turn starts as the first did: nothing breaks in a
        // later turn that did not in the first, at any depth.
        if turn > 1 && !plan.has_session_state(m) {
            result.violations = sorted(found);
            result.queries = queries;
            return result;
        }
        un.add_turn();
        // Groups another engine found at this turn are asked about directly: broken within its
        // node steps (the witness), and not within fewer. Whatever the hint missed or got wrong
        // is left open for the search below, so every answer is still Z3's.
        for (g, grp) in plan.groups.iter().enumerate() {
            let Some(h) = hint_for(grp, hints, turn) else {
                continue;
            };
            if !open[g] {
                continue;
            }
            queries += 1;
            let Some(answer) = ask(&un, &broken_within(&un, grp, turn, h)) else {
                return undecided(result, found, queries, cfg);
            };
            let Some(model) = answer else { continue };
            match shortest(&un, grp, turn, h, model, Some(h), &mut queries) {
                Some((model, iv)) => {
                    found.extend(decode::violations(&un, &model, iv, grp));
                    open[g] = false;
                }
                None => return undecided(result, found, queries, cfg),
            }
        }
        loop {
            if !open.iter().any(|&o| o) {
                result.violations = sorted(found);
                result.queries = queries;
                return result;
            }
            let q = any_open(&un, plan, &open, turn, None);
            queries += 1;
            let Some(model) = ask(&un, &q) else {
                return undecided(result, found, queries, cfg);
            };
            let Some(model) = model else { break };
            // The first open group the model breaks, and at how many steps.
            // A model of the query breaks some open group; never read one that seems not to as
            // "holds".
            let Some((g, j0)) = first_broken(&un, plan, &open, turn, &model) else {
                return undecided(result, found, queries, cfg);
            };
            let hint = hint_for(&plan.groups[g], hints, turn);
            match shortest(&un, &plan.groups[g], turn, j0, model, hint, &mut queries) {
                Some((model, iv)) => {
                    found.extend(decode::violations(&un, &model, iv, &plan.groups[g]));
                    open[g] = false;
                }
                None => return undecided(result, found, queries, cfg),
            }
        }
    }
    result.violations = sorted(found);
    result.queries = queries;
    result.depth = if !open.iter().any(|&o| o) {
        Depth::Every
    } else if result.violations.is_empty() && !hints.every_depth {
        match induct::every_depth(m, plan, cfg) {
            Some(true) => Depth::Every,
            _ => Depth::Bound(m.session_steps),
        }
    } else {
        Depth::Bound(m.session_steps)
    };
    result
}

/// The fewest node steps another engine found `grp` broken with at `turn`, if it did.
fn hint_for(grp: &Group, hints: &Hints, turn: u32) -> Option<u32> {
    grp.keys
        .iter()
        .filter_map(|k| hints.found.get(k))
        .filter(|&&(t, _)| t == turn)
        .map(|&(_, s)| s)
        .min()
}

fn undecided(
    mut r: InstanceResult,
    found: Vec<Violation>,
    queries: u64,
    cfg: &Config,
) -> InstanceResult {
    r.violations = sorted(found);
    r.queries = queries;
    r.depth = Depth::Undecided;
    r.note = Some(format!(
        "Z3 answered unknown (its timeout is {} ms a query, --solver-timeout-ms)",
        cfg.timeout_ms
    ));
    r
}

fn sorted(mut v: Vec<Violation>) -> Vec<Violation> {
    v.sort_by_key(|x| (x.tool, x.node, x.class));
    v
}

/// Asks `q` under a fresh assumption: `Some(Some(model))` satisfiable, `Some(None)`
/// unsatisfiable, `None` unknown.
fn ask(un: &Unrolling, q: &Bool) -> Option<Option<Model>> {
    let a = Bool::fresh_const("q");
    un.solver.assert(a.implies(q));
    let r = un.solver.check_assumptions(&[a]);

    match r {
        SatResult::Sat => Some(un.solver.get_model()),
        SatResult::Unsat => Some(None),
        SatResult::Unknown => None,
    }
}

/// Some open group breaks at a frame of `turn` (within `steps` node steps when given).
fn any_open(un: &Unrolling, plan: &Plan, open: &[bool], turn: u32, steps: Option<u32>) -> Bool {
    let mut v = Vec::new();
    for i in un.turn_frames(turn) {
        for (g, grp) in plan.groups.iter().enumerate() {
            if open[g] {
                v.push(broken_at(un, grp, i, steps));
            }
        }
    }
    Bool::or(&v)
}

/// Group `grp` breaks at frame `i` (within `steps` node steps when given).
fn broken_at(un: &Unrolling, grp: &Group, i: usize, steps: Option<u32>) -> Bool {
    let parts: Vec<Bool> = grp.parts.iter().map(|&p| un.part(i, p)).collect();
    let b = Bool::or(&parts);
    match steps {
        Some(j) => Bool::and(&[&b, &un.frames[i].steps_at_most(un.p, j)]),
        None => b,
    }
}

/// Group `grp` breaks at some frame of `turn` within `j` node steps.
fn broken_within(un: &Unrolling, grp: &Group, turn: u32, j: u32) -> Bool {
    let v: Vec<Bool> = un
        .turn_frames(turn)
        .map(|i| broken_at(un, grp, i, Some(j)))
        .collect();
    Bool::or(&v)
}

/// In `model`, the first frame of `turn` where an open group breaks: (group, its node steps).
fn first_broken(
    un: &Unrolling,
    plan: &Plan,
    open: &[bool],
    turn: u32,
    model: &Model,
) -> Option<(usize, u32)> {
    for i in un.turn_frames(turn) {
        for (g, grp) in plan.groups.iter().enumerate() {
            if open[g] && holds(model, &broken_at(un, grp, i, None)) {
                return Some((g, un.frames[i].steps_in(un.p, model)));
            }
        }
    }
    None
}

fn holds(model: &Model, b: &Bool) -> bool {
    model
        .eval(b, true)
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// The fewest node steps at which `grp` breaks in `turn`, known to break within `hi`; returns
/// the model of that bound and the frame where it breaks. `None`: Z3 answered unknown.
fn shortest(
    un: &Unrolling,
    grp: &Group,
    turn: u32,
    hi: u32,
    model: Model,
    hint: Option<u32>,
    queries: &mut u64,
) -> Option<(Model, usize)> {
    let within = |j: u32| broken_within(un, grp, turn, j);
    let (mut lo, mut hi, mut best) = (0u32, hi, model);
    // The hint's two bounds first: broken within h steps, not within h - 1.
    if let Some(h) = hint.filter(|&h| h <= hi) {
        if h > 0 {
            *queries += 1;
            match ask(un, &within(h - 1))? {
                None => lo = h,
                Some(mdl) => {
                    best = mdl;
                    hi = h - 1;
                }
            }
        }
        if lo == h && h < hi {
            *queries += 1;
            if let Some(mdl) = ask(un, &within(h))? {
                best = mdl;
                hi = h;
            }
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        *queries += 1;
        match ask(un, &within(mid))? {
            Some(mdl) => {
                best = mdl;
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    let iv = un
        .turn_frames(turn)
        .find(|&i| holds(&best, &broken_at(un, grp, i, Some(hi))))?;
    Some((best, iv))
}
