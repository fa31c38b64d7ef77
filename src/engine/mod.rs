//! The engines: answer each obligation's reachability question (SPEC 4, 9).
//!
//! [`instances`] lists the obligation instances a model has (SPEC 4's table, one per tool it
//! applies to; O1 is one search for every tool). [`explicit`] answers each by breadth-first search
//! over (node, latches, turn) with the latches [`mod@slice`] keeps, instances of one search shape
//! together ([`share`]); [`interp`] is the plain concrete
//! interpreter every witness is replayed on. [`run`] runs all instances in parallel (rayon) and
//! returns the results sorted, so the output is deterministic.

pub mod bmc;
pub(crate) mod compare;
pub mod explicit;
pub mod interp;
pub mod share;
pub mod slice;
pub(crate) mod steps;

pub use crate::findings::Engine;
use crate::findings::{Obligation, Step};
use crate::model::obligation::{Facts, Scope, TABLE};
use crate::model::{FlatModel, NodeIx, ToolIx};
use rayon::prelude::*;
use std::sync::OnceLock;

/// One question: obligation `obligation` about `tool` (`None` only for O1: every tool at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instance {
    /// The obligation.
    pub obligation: Obligation,
    /// The tool it is about.
    pub tool: Option<ToolIx>,
}

pub use crate::rules::obligation::Class;

/// A reachable violation, with its shortest witness.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The obligation broken.
    pub obligation: Obligation,
    /// The tool the finding is on.
    pub tool: ToolIx,
    /// The node where the violating call happens (O8: where the unrecoverable tool was called).
    pub node: NodeIx,
    /// QG011/QG012 for O6.
    pub class: Class,
    /// The smallest turn (1-based) at which it is reachable.
    pub turn: u32,
    /// The shortest witness within that turn.
    pub witness: Vec<Step>,
}

/// What an instance's search concluded where it found no violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The set of states that start a turn stopped growing: it holds at every depth.
    Every,
    /// Holds up to the bound: this many turns of at most `recursion_limit` steps.
    Bound(u32),
    /// The search ran out of a budget (its states, Z3's resource units, the run's budget).
    Undecided,
    /// The engine did not run (`--engine` chose the other): the stand-in result the answers of
    /// the engine that ran are compared with.
    NotRun,
}

/// What one engine (or both, merged) concluded about one instance: the one shape every reader
/// of a result matches on (issue 17), drawn from [`InstanceResult`]'s fields by
/// [`InstanceResult::verdict`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Verdict<'a> {
    /// No violation: at every depth ([`Depth::Every`]) or up to the bound ([`Depth::Bound`]).
    Holds(Depth),
    /// Violated (its violations are in the result). `undecided` is why the search did not finish,
    /// when it found these before a budget ran out (the rest of the obligation is unproved: QG006).
    Violated {
        /// Why the search did not finish, if it did not.
        undecided: Option<&'a str>,
    },
    /// No violation found and the search did not finish: why.
    Undecided(&'a str),
    /// The engine did not run it.
    NotRun,
}

/// The result of one instance.
#[derive(Debug, Clone)]
pub struct InstanceResult {
    /// The question.
    pub instance: Instance,
    /// Every violation found, one per (tool, node, class), sorted.
    pub violations: Vec<Violation>,
    /// How far the search reached.
    pub depth: Depth,
    /// States explored (explicit engine): the distinct states kept.
    pub states: u64,
    /// States generated (explicit engine): every successor made, a state reached again counted
    /// again (TLC's "states generated"), the measure of the search's work the run's budget
    /// counts ([`Limits::max_run_states`]).
    pub(crate) generated: u64,
    /// Solver queries asked (Z3 engine).
    pub queries: u64,
    /// Z3's resource units its queries spent (Z3 engine; see [`bmc::budget`]): what the run's
    /// budget counts ([`bmc::Config::run_rlimit`]).
    pub rlimit: u64,
    /// The most resource units one of its queries spent (Z3 engine).
    pub(crate) rlimit_peak: u64,
    /// Why the instance is undecided, when it is.
    pub note: Option<String>,
}

impl InstanceResult {
    /// Its verdict.
    pub(crate) fn verdict(&self) -> Verdict<'_> {
        let why = || {
            self.note
                .as_deref()
                .unwrap_or("an engine could not decide it")
        };
        match (self.depth, self.violations.is_empty()) {
            (Depth::NotRun, _) => Verdict::NotRun,
            (Depth::Undecided, true) => Verdict::Undecided(why()),
            (Depth::Undecided, false) => Verdict::Violated {
                undecided: Some(why()),
            },
            (d @ (Depth::Every | Depth::Bound(_)), true) => Verdict::Holds(d),
            (Depth::Every | Depth::Bound(_), false) => Verdict::Violated { undecided: None },
        }
    }

    /// Why the verdict is undecided in part or whole (its search did not finish), when it is.
    pub(crate) fn undecided(&self) -> Option<&str> {
        match self.verdict() {
            Verdict::Undecided(why)
            | Verdict::Violated {
                undecided: Some(why),
                ..
            } => Some(why),
            _ => None,
        }
    }

    /// No violation and nothing searched or asked, holding at every depth: what an instance with
    /// nothing to break gets, and the start every other result is built from.
    pub(crate) fn holds(instance: Instance) -> InstanceResult {
        InstanceResult {
            instance,
            violations: Vec::new(),
            depth: Depth::Every,
            states: 0,
            generated: 0,
            queries: 0,
            rlimit: 0,
            rlimit_peak: 0,
            note: None,
        }
    }
}

/// Limits on the explicit engine's searches.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// States per instance before it is undecided.
    pub max_states: usize,
    /// States all instances' searches together may generate (`--max-run-states`; see
    /// [`InstanceResult::generated`]): instances are searched in batches of [`RUN_BATCH`] in
    /// [`instances`]' order, and once the batches searched have generated this many, the rest are
    /// undecided without a search (QG006 naming the budget). A whole batch is searched or none of
    /// it, so which instances are searched depends only on the input. An instance answered by a
    /// shared search ([`share`]) counts what its own search would generate.
    pub max_run_states: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 4_000_000,
            max_run_states: 20_000_000,
        }
    }
}

/// Instances an engine answers in parallel between two looks at the run's budget (the explicit
/// engine's states, [`Limits::max_run_states`]; Z3's resource units, [`bmc::Config::run_rlimit`]).
pub const RUN_BATCH: usize = 16;

/// Lists the obligation instances of `model` (SPEC 4's table, [`crate::model::obligation::TABLE`]):
/// one per obligation asked about every tool at once, then per tool (in catalogue order) one per
/// obligation that applies to it, in obligation order. Instances that no plain node can break are
/// still listed; the search answers them at once.
pub fn instances(model: &FlatModel) -> Vec<Instance> {
    let facts = Facts::of(model);
    let mut out: Vec<Instance> = TABLE
        .iter()
        .filter(|s| matches!(s.scope, Scope::AllTools))
        .map(|s| Instance {
            obligation: s.obligation,
            tool: None,
        })
        .collect();
    for t in 0..model.tools.len() {
        out.extend(
            TABLE
                .iter()
                .filter(|s| s.applies(model, &facts, t))
                .map(|s| Instance {
                    obligation: s.obligation,
                    tool: Some(t),
                }),
        );
    }
    out
}

/// Which engine(s) answer (SPEC 1 `--engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// The explicit-state search only.
    Explicit,
    /// The Z3 bounded model checker only.
    Z3,
    /// Both, compared (the default).
    Both,
}

/// One engine's results and wall time.
#[derive(Debug, Clone)]
pub struct EngineRun {
    /// Which engine.
    pub name: Engine,
    /// Its results, sorted by instance.
    pub results: Vec<InstanceResult>,
    /// Wall time in milliseconds.
    pub(crate) millis: u64,
}

/// What the engines concluded.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The verdicts the findings are drawn from: violations whose witnesses replay.
    pub results: Vec<InstanceResult>,
    /// Where the engines or a replay disagree (QG312).
    pub disagreements: Vec<compare::Disagreement>,
    /// Obligations one engine decided and the other could not (QG006, not cross-checked).
    pub(crate) unchecked: Vec<compare::Unchecked>,
    /// Each engine that ran, in the order explicit, z3.
    pub runs: Vec<EngineRun>,
}

/// Answers every instance of `model` with the chosen engines, in parallel; every witness is
/// replayed on the plain interpreter. Under `Both` the explicit engine runs first and its
/// answers order the Z3 engine's queries (see [`bmc::Hints`]); every Z3 answer is still Z3's.
pub fn run(model: &FlatModel, choice: EngineChoice, limits: Limits, cfg: &bmc::Config) -> Outcome {
    let insts = instances(model);
    let mut runs = Vec::new();
    let timed = |f: &dyn Fn() -> Vec<InstanceResult>| {
        let t0 = std::time::Instant::now();
        let mut r = f();
        r.sort_by_key(|r| r.instance);
        (r, t0.elapsed().as_millis() as u64)
    };
    let explicit =
        (choice != EngineChoice::Z3).then(|| timed(&|| explicit_run(model, &insts, limits)));
    let z3 = (choice != EngineChoice::Explicit).then(|| {
        let common = bmc::Common::new(model);
        let hints: Vec<bmc::Hints> = insts
            .iter()
            .map(|&i| {
                // The explicit results are sorted by instance (`timed`): found by halving.
                explicit
                    .as_ref()
                    .and_then(|(rs, _)| {
                        let k = rs.binary_search_by_key(&i, |r| r.instance).ok()?;
                        rs.get(k)
                    })
                    .map(hints_of)
                    .unwrap_or_default()
            })
            .collect();
        timed(&|| z3_run(model, &common, &insts, &hints, cfg))
    });
    let stand_in = || -> Vec<InstanceResult> {
        let mut v: Vec<InstanceResult> = insts.iter().map(|&i| compare::not_run(i)).collect();
        v.sort_by_key(|r| r.instance);
        v
    };
    let e_res = explicit
        .as_ref()
        .map(|r| r.0.clone())
        .unwrap_or_else(stand_in);
    let z_res = z3.as_ref().map(|r| r.0.clone()).unwrap_or_else(stand_in);
    let compared = compare::compare(model, &e_res, &z_res);
    if let Some((r, ms)) = explicit {
        runs.push(EngineRun {
            name: Engine::Explicit,
            results: r,
            millis: ms,
        });
    }
    if let Some((r, ms)) = z3 {
        runs.push(EngineRun {
            name: Engine::Z3,
            results: r,
            millis: ms,
        });
    }
    Outcome {
        results: compared.merged,
        disagreements: compared.disagreements,
        unchecked: compared.unchecked,
        runs,
    }
}

/// The explicit engine's answers to `insts`, in their order: batch by batch in parallel until the
/// run's state budget is spent (see [`Limits::max_run_states`]), the rest undecided unsearched.
/// The first search of the instances of one search shape ([`share::groups`]) is made once, when
/// the first of them is reached, and each answers exactly as if searched alone.
fn explicit_run(model: &FlatModel, insts: &[Instance], limits: Limits) -> Vec<InstanceResult> {
    let checks = model.tool_checks();
    // Instances of one search shape are answered by one search, run when the first of them is
    // reached; each takes its own result, so the budget counts what each search would generate
    // alone and the same instances are searched (see `share`).
    let groups = share::groups(model, insts);
    let shared: Vec<OnceLock<Vec<InstanceResult>>> =
        groups.members.iter().map(|_| OnceLock::new()).collect();
    let answer = |ix: usize| match groups.of[ix] {
        Some((g, place)) => {
            let first = shared[g].get_or_init(|| {
                let group: Vec<Instance> = groups.members[g].iter().map(|&j| insts[j]).collect();
                explicit::search_shared(model, &checks, &group, limits)
            })[place]
                .clone();
            explicit::refine(model, &checks, first, limits)
        }
        None => explicit::check(model, &checks, insts[ix], limits),
    };
    let mut out = Vec::with_capacity(insts.len());
    let mut spent: u64 = 0;
    for (b, batch) in insts.chunks(RUN_BATCH).enumerate() {
        if spent >= limits.max_run_states {
            out.extend(batch.iter().map(|&i| InstanceResult {
                depth: Depth::Undecided,
                note: Some(format!(
                    "not searched: the obligations searched before it generated {spent} states, \
                     past the run's state budget of {} (--max-run-states)",
                    limits.max_run_states
                )),
                ..InstanceResult::holds(i)
            }));
            continue;
        }
        let rs: Vec<InstanceResult> = (0..batch.len())
            .into_par_iter()
            .map(|j| answer(b * RUN_BATCH + j))
            .collect();
        spent = spent.saturating_add(rs.iter().map(|r| r.generated).sum());
        out.extend(rs);
    }
    out
}

/// The Z3 engine's answers to `insts` (with their `hints`), in their order: batch by batch in
/// parallel until the run's resource budget is spent (see [`bmc::Config::run_rlimit`]), the rest
/// undecided unasked. A whole batch is asked or none of it, and each instance gets a fresh Z3
/// context (`bmc::check`), so which instances are asked, and what Z3 answers, depend only on the
/// input.
fn z3_run(
    model: &FlatModel,
    common: &bmc::Common,
    insts: &[Instance],
    hints: &[bmc::Hints],
    cfg: &bmc::Config,
) -> Vec<InstanceResult> {
    let mut out = Vec::with_capacity(insts.len());
    let mut spent: u64 = 0;
    for (batch, hs) in insts.chunks(RUN_BATCH).zip(hints.chunks(RUN_BATCH)) {
        if spent >= cfg.run_rlimit {
            out.extend(batch.iter().map(|&i| InstanceResult {
                depth: Depth::Undecided,
                note: Some(format!(
                    "not asked: the obligations asked before it spent {spent} of Z3's resource \
                     units, past the run's budget of {} (--solver-run-rlimit)",
                    cfg.run_rlimit
                )),
                ..InstanceResult::holds(i)
            }));
            continue;
        }
        let rs: Vec<InstanceResult> = batch
            .par_iter()
            .zip(hs)
            .map(|(&i, h)| bmc::check(model, common, i, cfg, h))
            .collect();
        spent = spent.saturating_add(rs.iter().map(|r| r.rlimit).sum());
        out.extend(rs);
    }
    out
}

/// The explicit engine's answers as hints for the Z3 engine.
fn hints_of(r: &InstanceResult) -> bmc::Hints {
    bmc::Hints {
        found: r
            .violations
            .iter()
            .map(|v| {
                let steps = v.witness.last().map(|s| s.run_steps).unwrap_or(0);
                ((v.tool, v.node, v.class), (v.turn, steps))
            })
            .collect(),
        every_depth: r.depth == Depth::Every,
    }
}

/// The version of the system Z3 library this binary links (`Z3 4.8.12.0`): the solver of the
/// second engine (SPEC 9), which a later version runs beside the explicit one.
pub fn z3_version() -> String {
    z3::full_version().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(depth: Depth, violations: usize) -> InstanceResult {
        let i = Instance {
            obligation: Obligation::O6,
            tool: Some(0),
        };
        let v = Violation {
            obligation: Obligation::O6,
            tool: 0,
            node: 1,
            class: Class::Local,
            turn: 1,
            witness: Vec::new(),
        };
        InstanceResult {
            violations: vec![v; violations],
            depth,
            note: (depth == Depth::Undecided).then(|| "its state budget".to_string()),
            ..InstanceResult::holds(i)
        }
    }

    #[test]
    fn a_verdict_for_every_shape_of_result() {
        assert!(matches!(
            result(Depth::Every, 0).verdict(),
            Verdict::Holds(Depth::Every)
        ));
        assert!(matches!(
            result(Depth::Bound(3), 0).verdict(),
            Verdict::Holds(Depth::Bound(3))
        ));
        let violated = result(Depth::Bound(3), 2);
        assert!(matches!(
            violated.verdict(),
            Verdict::Violated { undecided: None }
        ));
        assert_eq!(violated.violations.len(), 2);
        // Violations found before the budget ran out: violated, and the rest undecided.
        let partly = result(Depth::Undecided, 1);
        assert!(matches!(
            partly.verdict(),
            Verdict::Violated {
                undecided: Some("its state budget")
            }
        ));
        assert_eq!(partly.violations.len(), 1);
        assert_eq!(partly.undecided(), Some("its state budget"));
        assert!(matches!(
            result(Depth::Undecided, 0).verdict(),
            Verdict::Undecided("its state budget")
        ));
        assert!(matches!(
            compare::not_run(partly.instance).verdict(),
            Verdict::NotRun
        ));
        assert_eq!(result(Depth::Every, 1).undecided(), None);
    }
}
