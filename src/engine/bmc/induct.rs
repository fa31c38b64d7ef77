//! k-induction over turns (SPEC 9, "holds at every depth"): where bounded model checking found no
//! violation in `session_steps` turns, the obligation holds at every depth when no run of k + 1
//! turns from *any* state a turn can start from (per-turn latches clear, session latches free),
//! with k violation-free turns whose start states all differ, breaks it in its last turn. The base
//! case is the bounded check itself, so k goes up to `session_steps`.

use super::budget::Budget;
use super::plan::Plan;
use super::profile::{timed, Phase};
use super::unroll::{state_eq, Unrolling};
use super::{any_open, Config};
use crate::model::FlatModel;

/// `Some(true)`: proved at every depth; `Some(false)`: not proved within k = `session_steps`;
/// `None`: Z3 answered unknown. Its queries are asked within the obligation's `budget`.
pub(crate) fn every_depth(
    m: &FlatModel,
    plan: &Plan,
    cfg: &Config,
    budget: &mut Budget,
) -> Option<bool> {
    let mut un = timed(Phase::Encode, || {
        Unrolling::new(m, plan, cfg.timeout_ms, true)
    });
    let open = vec![true; plan.groups.len()];
    for k in 0..=m.session_steps {
        let q = timed(Phase::Encode, || {
            un.add_turn();
            let start = |b: u32| un.turn_frames(b + 1).start;
            for b in 0..k {
                let differ = state_eq(&un.frames[start(b)].s, &un.frames[start(k)].s).not();
                un.solver.assert(&differ);
            }
            any_open(&un, plan, &open, k + 1, None)
        });
        match budget.ask(&un.solver, &q)? {
            None => return Some(true),
            Some(_) => un.solver.assert(q.not()),
        }
    }
    Some(false)
}
