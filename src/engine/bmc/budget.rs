//! Z3's deterministic budgets (SPEC 9 `z3`, issue 19): the work one obligation's queries may do,
//! counted in Z3's own resource units (its `rlimit`: the solver counts propagations, conflicts and
//! the like, the same on every machine for the same formula), never in wall-clock time.
//!
//! Three budgets bound the Z3 engine ([`super::Config`]):
//!
//! - a **query** may spend [`super::Config::query_rlimit`] units (`--solver-rlimit`);
//! - an **obligation**'s queries together (every refinement and the k-induction included) may
//!   spend [`super::Config::obligation_rlimit`] (`--solver-obligation-rlimit`): a query is given
//!   no more than is left of it;
//! - the **run**'s obligations together may spend [`super::Config::run_rlimit`]
//!   (`--solver-run-rlimit`), counted by [`crate::engine::run`] in batches in instance order.
//!
//! A query past its limit answers `unknown`: the obligation is undecided (QG006), never clean,
//! and its note names the budget that ran out and the flag that raises it. [`Budget`] keeps one
//! obligation's account and asks its queries.

use super::profile::{self, timed, Phase};
use super::Config;
use z3::ast::Bool;
use z3::{Model, Params, SatResult, Solver, StatisticsValue};

/// Z3's statistic of the resource units its context has spent so far (it counts up, and one
/// query's work is the difference across its `check`).
const RLIMIT_COUNT: &str = "rlimit count";

/// One obligation's account of Z3's resource units, and the queries it asked.
#[derive(Debug)]
pub struct Budget<'c> {
    cfg: &'c Config,
    /// Units spent by the queries asked so far.
    pub used: u64,
    /// The most units one query spent.
    pub peak: u64,
    /// Queries asked.
    pub queries: u64,
    /// Why the last query that answered `unknown` did: the budget that ran out, and its flag.
    pub why: Option<String>,
}

impl<'c> Budget<'c> {
    /// A fresh account for one obligation under `cfg`'s limits.
    pub fn new(cfg: &'c Config) -> Budget<'c> {
        Budget {
            cfg,
            used: 0,
            peak: 0,
            queries: 0,
            why: None,
        }
    }

    /// Asks `q` on `solver` under a fresh assumption literal, within the query's limit and what
    /// is left of the obligation's: `Some(Some(model))` satisfiable, `Some(None)` unsatisfiable,
    /// `None` unknown (a budget ran out, or the `--solver-timeout-ms` safety net fired; [`Self::why`]
    /// says which). A query the obligation has nothing left for is not asked (`None`).
    pub fn ask(&mut self, solver: &Solver, q: &Bool) -> Option<Option<Model>> {
        let left = self.cfg.obligation_rlimit.saturating_sub(self.used);
        if left == 0 {
            self.why = Some(self.obligation_spent());
            return None;
        }
        let limit = u64::from(self.cfg.query_rlimit).min(left);
        let mut params = Params::new();
        params.set_u32("rlimit", u32::try_from(limit).unwrap_or(u32::MAX));
        solver.set_params(&params);
        let a = timed(Phase::Encode, || {
            let a = Bool::fresh_const("q");
            solver.assert(a.implies(q));
            a
        });
        // Z3 keeps the count as a 32-bit statistic: one query's difference is exact (a query's
        // limit is below 2^32), even where the context's total has wrapped.
        let before = timed(Phase::Stats, || rlimit_count(solver));
        let r = timed(Phase::Check, || solver.check_assumptions(&[a]));
        let after = timed(Phase::Stats, || rlimit_count(solver));
        profile::query();
        let spent = if after >= before {
            after - before
        } else {
            after + (1u64 << 32) - before
        };
        self.used = self.used.saturating_add(spent);
        self.peak = self.peak.max(spent);
        self.queries += 1;
        match r {
            SatResult::Sat => Some(timed(Phase::Model, || solver.get_model())),
            SatResult::Unsat => Some(None),
            SatResult::Unknown => {
                self.why = Some(self.unknown_why(solver, limit));
                None
            }
        }
    }

    /// The note of a query that answered `unknown` with `limit` units.
    fn unknown_why(&self, solver: &Solver, limit: u64) -> String {
        let reason = solver.get_reason_unknown().unwrap_or_default();
        if let Some(ms) = self
            .cfg
            .timeout_ms
            .filter(|_| reason.contains("timeout") || reason.contains("canceled"))
        {
            return format!(
                "Z3 answered unknown: a query ran past the safety net of {ms} ms (--solver-timeout-ms)"
            );
        }
        if limit < u64::from(self.cfg.query_rlimit) {
            return self.obligation_spent();
        }
        format!(
            "Z3 answered unknown: a query ran past its resource limit of {} (--solver-rlimit)",
            self.cfg.query_rlimit
        )
    }

    fn obligation_spent(&self) -> String {
        format!(
            "Z3 answered unknown: the obligation's queries spent its resource budget of {} \
             (--solver-obligation-rlimit)",
            self.cfg.obligation_rlimit
        )
    }
}

/// The resource units `solver`'s context has spent so far (0 where Z3 does not say).
fn rlimit_count(solver: &Solver) -> u64 {
    match solver.get_statistics().value(RLIMIT_COUNT) {
        Some(StatisticsValue::UInt(n)) => u64::from(n),
        Some(StatisticsValue::Double(d)) => d as u64,
        None => 0,
    }
}
