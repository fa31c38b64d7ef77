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
//! A query Z3 answers `unknown` (past its resource limit, [`budget`]) makes the instance
//! undecided: QG006, never clean. The limits are Z3's own work units, not wall-clock time, so the
//! same input gets the same answers on any machine, however loaded.

pub(crate) mod bits;
pub mod budget;
pub(crate) mod decode;
pub(crate) mod induct;
pub(crate) mod plan;
pub mod profile;
pub(crate) mod unroll;

use super::{Depth, Instance, InstanceResult, Violation};
use crate::engine::slice::Slice;
use crate::model::{FlatModel, NodeIx, ToolIx};
use budget::Budget;
pub use plan::Common;
use plan::{Group, Plan};
use profile::{timed, Phase};
use std::collections::{BTreeMap, BTreeSet};
use unroll::Unrolling;
use z3::ast::Bool;
use z3::Model;

/// A violation key: (tool, node, class), as the engines key their violations.
pub(crate) type Key = (ToolIx, NodeIx, super::Class);

/// What another engine found, used only to order the queries (every answer is still Z3's own).
#[derive(Debug, Clone, Default)]
pub struct Hints {
    /// Per key: the turn and node steps of its shortest witness.
    pub(crate) found: BTreeMap<Key, (u32, u32)>,
    /// True when the instance was proved at every depth already (k-induction is then skipped).
    pub(crate) every_depth: bool,
}

/// The largest `at_most` count the Z3 engine encodes (as a thermometer of that many variables a
/// frame); an obligation that keeps a larger one is left undecided.
pub(crate) const MAX_COUNT: u32 = 64;

/// The default `--solver-rlimit`: resource units one query may spend. The largest query of the
/// test suite spends 3.1 million, of the corpus and the benchmark families at 10 and 100 nodes
/// 15.7 million (the 100-node mesh); on this project's 2-core machine Z3 does 1.2-3.1 million
/// units a second of `check` (BENCHMARKS.md, "Z3's budgets").
pub(crate) const DEFAULT_QUERY_RLIMIT: u32 = 100_000_000;

/// The default `--solver-obligation-rlimit`: resource units one obligation's queries may spend
/// (the largest measured: 7.9 million in the tests, 30.8 million on the 100-node mesh).
pub(crate) const DEFAULT_OBLIGATION_RLIMIT: u64 = 300_000_000;

/// The default `--solver-run-rlimit`: resource units all obligations' queries may spend (the
/// largest measured: 81 million in the tests, 184 million on the 100-node mesh with `--engine
/// z3`, 131 million with `both`).
pub(crate) const DEFAULT_RUN_RLIMIT: u64 = 1_000_000_000;

/// Settings of the Z3 engine. The three resource limits are in Z3's `rlimit` units (see
/// [`budget`]); a query or an obligation past its limit is undecided (QG006).
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Units one query may spend (`--solver-rlimit`).
    pub query_rlimit: u32,
    /// Units one obligation's queries may spend together (`--solver-obligation-rlimit`).
    pub obligation_rlimit: u64,
    /// Units every obligation's queries may spend together (`--solver-run-rlimit`): obligations
    /// are asked in batches of [`crate::engine::RUN_BATCH`] in instance order, a whole batch or
    /// none, and once the batches asked have spent this many the rest are undecided unasked.
    pub run_rlimit: u64,
    /// A wall-clock safety net per query in milliseconds (`--solver-timeout-ms`), off (`None`)
    /// by default: where it fires, the answer depends on the machine's load.
    pub timeout_ms: Option<u32>,
    /// Frames x (nodes + edges) one instance's unrolling may hold; past it the instance is left
    /// undecided (QG006) at once rather than handed to a solver that would time out on it.
    pub max_size: usize,
    /// Test-only: report every instance as holding, to show that a disagreement is caught.
    pub broken: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            query_rlimit: DEFAULT_QUERY_RLIMIT,
            obligation_rlimit: DEFAULT_OBLIGATION_RLIMIT,
            run_rlimit: DEFAULT_RUN_RLIMIT,
            timeout_ms: None,
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
    let first = timed(Phase::Plan, || {
        let slice = Slice::with_confirmations(m, inst.obligation, inst.tool, &none, &common.irrev);
        let groups = plan::groups(m, &common.binders, inst);
        match declined(m, common, inst, &slice, &groups, cfg) {
            Some(r) => Err(r),
            None => Ok(Plan::with(m, common, inst, &none, slice, groups)),
        }
    });
    let first = match first {
        Ok(p) => p,
        Err(r) => return r,
    };
    profile::obligation_asked();
    // The context's making and dropping is the time around `refine` (the z3 crate makes it).
    profile::around(Phase::Context, || {
        z3::with_z3_config(&z3::Config::new(), || refine(m, common, first, cfg, hints))
    })
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
    let mut budget = Budget::new(cfg);
    loop {
        let mut res = check_plan(m, common, &plan, cfg, hints, &mut budget);
        res.queries = budget.queries;
        res.rlimit = budget.used;
        res.rlimit_peak = budget.peak;
        let refine: BTreeSet<ToolIx> = res
            .violations
            .iter()
            .filter_map(
                |v| match timed(Phase::Replay, || super::interp::replay_violation(m, v)) {
                    Err(super::interp::ReplayError::GuardDiffers { tool, .. }) => Some(tool),
                    _ => None,
                },
            )
            .filter(|t| !exact.contains(t))
            .collect();
        if refine.is_empty() {
            return res;
        }
        // One refinement makes every guard exact: asking again tool by tool costs more than
        // the latches it would save.
        exact = (0..m.tools.len()).collect();
        plan = timed(Phase::Plan, || Plan::new(m, common, inst, &exact));
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
    if let Some(&(t, cap, _)) = slice
        .count
        .iter()
        .chain(&slice.count_seen)
        .find(|c| c.1 > MAX_COUNT)
    {
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

/// Answers one instance with one plan, its queries asked within `budget` (which counts them).
fn check_plan(
    m: &FlatModel,
    common: &Common,
    plan: &Plan,
    cfg: &Config,
    hints: &Hints,
    budget: &mut Budget,
) -> InstanceResult {
    let inst = plan.inst;
    if let Some(r) = declined(m, common, inst, &plan.slice, &plan.groups, cfg) {
        return r;
    }
    let mut result = InstanceResult::holds(inst);
    let mut un = timed(Phase::Encode, || {
        Unrolling::new(m, plan, cfg.timeout_ms, false)
    });
    let mut open: Vec<bool> = vec![true; plan.groups.len()];
    let mut found: Vec<Violation> = Vec::new();
    for turn in 1..=m.session_steps {
        // Where no latch outlives a turn, every turn starts as the first did: nothing breaks in a
        // later turn that did not in the first, at any depth.
        if turn > 1 && !plan.has_session_state(m) {
            result.violations = sorted(found);
            return result;
        }
        timed(Phase::Encode, || un.add_turn());
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
            let q = timed(Phase::Encode, || broken_within(&un, grp, turn, h));
            let Some(answer) = budget.ask(&un.solver, &q) else {
                return undecided(result, found, budget);
            };
            let Some(model) = answer else { continue };
            match shortest(&un, grp, turn, h, model, Some(h), budget) {
                Some((model, iv)) => {
                    found.extend(timed(Phase::Model, || {
                        decode::violations(&un, &model, iv, grp)
                    }));
                    open[g] = false;
                }
                None => return undecided(result, found, budget),
            }
        }
        loop {
            if !open.iter().any(|&o| o) {
                result.violations = sorted(found);
                return result;
            }
            let q = timed(Phase::Encode, || any_open(&un, plan, &open, turn, None));
            let Some(model) = budget.ask(&un.solver, &q) else {
                return undecided(result, found, budget);
            };
            let Some(model) = model else { break };
            // The first open group the model breaks, and at how many steps.
            // A model of the query breaks some open group; never read one that seems not to as
            // "holds".
            let broken = timed(Phase::Model, || {
                first_broken(&un, plan, &open, turn, &model)
            });
            let Some((g, j0)) = broken else {
                budget.why = Some("a model of Z3's breaks no open violation group".into());
                return undecided(result, found, budget);
            };
            let hint = hint_for(&plan.groups[g], hints, turn);
            match shortest(&un, &plan.groups[g], turn, j0, model, hint, budget) {
                Some((model, iv)) => {
                    found.extend(timed(Phase::Model, || {
                        decode::violations(&un, &model, iv, &plan.groups[g])
                    }));
                    open[g] = false;
                }
                None => return undecided(result, found, budget),
            }
        }
    }
    result.violations = sorted(found);
    result.depth = if !open.iter().any(|&o| o) {
        Depth::Every
    } else if result.violations.is_empty() && !hints.every_depth {
        match induct::every_depth(m, plan, cfg, budget) {
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

/// `r` undecided with the violations `found` so far, its note the reason `budget` gives.
fn undecided(mut r: InstanceResult, found: Vec<Violation>, budget: &Budget) -> InstanceResult {
    r.violations = sorted(found);
    r.depth = Depth::Undecided;
    r.note = Some(
        budget
            .why
            .clone()
            .unwrap_or_else(|| "Z3 answered unknown".to_string()),
    );
    r
}

fn sorted(mut v: Vec<Violation>) -> Vec<Violation> {
    v.sort_by_key(|x| (x.tool, x.node, x.class));
    v
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

/// In `model`, the fewest node steps of a frame of `turn` where `grp` breaks.
fn broken_steps(un: &Unrolling, grp: &Group, turn: u32, model: &Model) -> Option<u32> {
    un.turn_frames(turn)
        .filter(|&i| holds(model, &broken_at(un, grp, i, None)))
        .map(|i| un.frames[i].steps_in(un.p, model))
        .min()
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
    budget: &mut Budget,
) -> Option<(Model, usize)> {
    let within = |j: u32| timed(Phase::Encode, || broken_within(un, grp, turn, j));
    let (mut lo, mut hi, mut best) = (0u32, hi, model);
    // The hint's two bounds first: broken within h steps, not within h - 1.
    if let Some(h) = hint.filter(|&h| h <= hi) {
        if h > 0 {
            match budget.ask(&un.solver, &within(h - 1))? {
                None => lo = h,
                Some(mdl) => {
                    best = mdl;
                    hi = h - 1;
                }
            }
        }
        if lo == h && h < hi {
            if let Some(mdl) = budget.ask(&un.solver, &within(h))? {
                best = mdl;
                hi = h;
            }
        }
    }
    // Without a hint, the model in hand is often already the shortest (on a chain, always): ask
    // "not within one step fewer" first, one query where halving needs log2 of the bound.
    if hint.is_none() && lo < hi {
        match budget.ask(&un.solver, &within(hi - 1))? {
            None => lo = hi,
            Some(mdl) => {
                hi = timed(Phase::Model, || broken_steps(un, grp, turn, &mdl))
                    .map_or(hi - 1, |s| s.clamp(lo, hi - 1));
                best = mdl;
            }
        }
    }
    // Halving, each model tightening the upper bound to the steps at which it breaks.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match budget.ask(&un.solver, &within(mid))? {
            Some(mdl) => {
                hi = timed(Phase::Model, || broken_steps(un, grp, turn, &mdl))
                    .map_or(mid, |s| s.clamp(lo, mid));
                best = mdl;
            }
            None => lo = mid + 1,
        }
    }
    let iv = timed(Phase::Model, || {
        un.turn_frames(turn)
            .find(|&i| holds(&best, &broken_at(un, grp, i, Some(hi))))
    })?;
    Some((best, iv))
}
