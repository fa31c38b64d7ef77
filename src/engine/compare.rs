//! Two engines, one verdict (SPEC 9 `both`): the explicit engine's and the Z3 engine's answers
//! compared instance by instance and violation by violation, every witness replayed on the plain
//! interpreter ([`super::interp`]).
//!
//! A violation (tool, node, class) that one engine finds and the other, having decided the
//! instance, does not - or finds first at another turn - is a [`Disagreement`] (QG312), and so is a
//! witness that does not replay. The merged verdicts keep every violation whose witness replays
//! (a replayed witness is a real route whichever engine found it); an instance either engine
//! could not decide stays undecided (QG006); one either engine proved at every depth holds at
//! every depth.

use super::{interp, Depth, Engine, InstanceResult, Verdict, Violation};
use crate::engine::bmc::Key;
use crate::engine::Instance;
use std::collections::BTreeMap;

/// One engine's answer on one violation key.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// It holds (no violation with this key within the bound).
    Holds,
    /// It breaks, first at this violation's turn, with this witness.
    Breaks(Violation),
    /// The engine did not run.
    NotRun,
}

/// True unless `r` stands for an engine that did not run (see [`not_run`]).
fn ran(r: &InstanceResult) -> bool {
    !matches!(r.verdict(), Verdict::NotRun)
}

/// The stand-in result of an engine that did not run, to compare one engine's witnesses with
/// the interpreter alone.
pub(crate) fn not_run(instance: Instance) -> InstanceResult {
    InstanceResult {
        depth: Depth::NotRun,
        ..InstanceResult::holds(instance)
    }
}

/// Where the engines (or a replay) disagree.
#[derive(Debug, Clone)]
pub struct Disagreement {
    /// The instance.
    pub instance: Instance,
    /// The violation key (tool, node, class).
    pub key: Key,
    /// The explicit engine's answer.
    pub(crate) explicit: Answer,
    /// The Z3 engine's answer.
    pub(crate) z3: Answer,
    /// What else is wrong (a witness that does not replay), in a sentence; empty when the
    /// answers alone differ.
    pub why: String,
}

/// The engine a witness came from, for messages.
fn replay_note(engine: Engine, v: &Violation, m: &crate::model::FlatModel) -> Option<String> {
    interp::replay_violation(m, v)
        .err()
        .map(|e| format!("the {engine} engine's witness does not replay: {e}"))
}

/// An obligation one engine decided and the other could not: its verdict is not cross-checked.
#[derive(Debug, Clone)]
pub(crate) struct Unchecked {
    /// The instance.
    pub(crate) instance: Instance,
    /// The engine that could not decide it.
    pub(crate) engine: Engine,
    /// Why (its timeout, its size limit, its state budget).
    pub(crate) why: String,
}

/// What the comparison concluded.
#[derive(Debug, Clone)]
pub(crate) struct Compared {
    /// The merged verdicts.
    pub(crate) merged: Vec<InstanceResult>,
    /// Where the engines or a replay disagree (QG312).
    pub(crate) disagreements: Vec<Disagreement>,
    /// Obligations decided by one engine alone.
    pub(crate) unchecked: Vec<Unchecked>,
}

/// Compares the two engines' results (both sorted by instance, one per instance) and merges them.
pub(crate) fn compare(
    m: &crate::model::FlatModel,
    explicit: &[InstanceResult],
    z3: &[InstanceResult],
) -> Compared {
    let mut merged = Vec::new();
    let mut out = Vec::new();
    let mut unchecked = Vec::new();
    for (e, z) in explicit.iter().zip(z3) {
        debug_assert_eq!(e.instance, z.instance);
        let ev: BTreeMap<Key, &Violation> = e
            .violations
            .iter()
            .map(|v| ((v.tool, v.node, v.class), v))
            .collect();
        let zv: BTreeMap<Key, &Violation> = z
            .violations
            .iter()
            .map(|v| ((v.tool, v.node, v.class), v))
            .collect();
        let mut keys: Vec<Key> = ev.keys().chain(zv.keys()).copied().collect();
        keys.sort_unstable();
        keys.dedup();
        let mut kept = Vec::new();
        let e_decided = e.depth != Depth::Undecided && ran(e);
        let z_decided = z.depth != Depth::Undecided && ran(z);
        for k in keys {
            let a = ev.get(&k).copied();
            let b = zv.get(&k).copied();
            let answer = |v: Option<&Violation>, r: &InstanceResult| match v {
                Some(v) => Answer::Breaks(v.clone()),
                None if !ran(r) => Answer::NotRun,
                None => Answer::Holds,
            };
            let mut whys = Vec::new();
            let mut replayed = Vec::new();
            for (name, v) in [(Engine::Explicit, a), (Engine::Z3, b)] {
                let Some(v) = v else { continue };
                match replay_note(name, v, m) {
                    Some(n) => whys.push(n),
                    None => replayed.push(v),
                }
            }
            // Answers that differ need no more words than the answers themselves.
            let differ = match (a, b) {
                (Some(x), Some(y)) => x.turn != y.turn,
                (Some(_), None) => z_decided,
                (None, Some(_)) => e_decided,
                (None, None) => false,
            };
            // A replayed witness is a real route: the earliest is kept (the explicit one on a tie).
            let real = replayed.into_iter().min_by_key(|v| v.turn);
            if let Some(r) = real {
                kept.push(r.clone());
            }
            if differ || !whys.is_empty() {
                out.push(Disagreement {
                    instance: e.instance,
                    key: k,
                    explicit: answer(a, e),
                    z3: answer(b, z),
                    why: whys.join("; "),
                });
            }
        }
        let (e_depth, z_depth) = (
            if ran(e) { e.depth } else { z.depth },
            if ran(z) { z.depth } else { e.depth },
        );
        // Undecided only when no engine decided it; decided by one engine alone, it keeps that
        // engine's verdict and is listed as not cross-checked.
        let depth = match (e_depth, z_depth) {
            (Depth::Undecided, Depth::Undecided) => Depth::Undecided,
            (Depth::Undecided, d) | (d, Depth::Undecided) => d,
            (Depth::Every, _) | (_, Depth::Every) => Depth::Every,
            (d, _) => d,
        };
        let notes: Vec<String> = [(e, Engine::Explicit), (z, Engine::Z3)]
            .iter()
            .filter(|(r, _)| ran(r) && r.depth == Depth::Undecided)
            .map(|(r, name)| format!("{} (the {name} engine)", r.note.clone().unwrap_or_default()))
            .collect();
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        if depth != Depth::Undecided && ran(e) && ran(z) {
            for (r, name) in [(e, Engine::Explicit), (z, Engine::Z3)] {
                if r.depth == Depth::Undecided {
                    unchecked.push(Unchecked {
                        instance: e.instance,
                        engine: name,
                        why: r.note.clone().unwrap_or_default(),
                    });
                }
            }
        }
        merged.push(InstanceResult {
            instance: e.instance,
            violations: kept,
            depth,
            states: e.states,
            generated: e.generated,
            queries: z.queries,
            rlimit: z.rlimit,
            rlimit_peak: z.rlimit_peak,
            note,
        });
    }
    Compared {
        merged,
        disagreements: out,
        unchecked,
    }
}
