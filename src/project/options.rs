//! The settings of one run (what `verify` is given): the turns to search, the gate, the engines
//! and their budgets, the rulebook and the extra inputs. The command line ([`crate::run::cli`])
//! fills them from its flags and the project's configuration; [`crate::project::weaken`] reads
//! them to say what weakens the proof, so they sit on the project's floor, below the run.

use std::path::PathBuf;

use crate::engine::{bmc, EngineChoice, Limits};
use crate::findings::GateMode;
use crate::rulebook::budget::Budgets;

/// Options of one run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Turns to search (1..=16, already chosen).
    pub(crate) session_steps: u32,
    /// The gate.
    pub(crate) gate: GateMode,
    /// A rulebook given on the command line, overriding the input's.
    pub(crate) rulebook: Option<String>,
    /// States one obligation's search may keep before it is undecided (QG006).
    pub(crate) max_states: usize,
    /// States all obligations' searches together may generate; past it the obligations not yet
    /// searched are undecided (QG006, [`Limits::max_run_states`]).
    pub max_run_states: u64,
    /// The engine(s) to run.
    pub engine: EngineChoice,
    /// The Z3 engine's settings (its per-query timeout).
    pub z3: bmc::Config,
    /// A team's own advisory list, added to `rules/advisories.toml` (QG022).
    pub advisories: Option<PathBuf>,
    /// Traces of real runs, JSON Lines (`--traces RUNS.jsonl`, SPEC 2.4), for QG016.
    pub traces: Option<PathBuf>,
    /// The rulebook's budgets (its compile, and QG002's comparisons).
    pub(crate) rulebook_budgets: Budgets,
}

impl Options {
    /// Options for `session_steps` turns under the `ci` gate, with the default state budget.
    pub fn new(session_steps: u32) -> Options {
        Options {
            session_steps,
            gate: GateMode::Ci,
            rulebook: None,
            max_states: Limits::default().max_states,
            max_run_states: Limits::default().max_run_states,
            engine: EngineChoice::Both,
            z3: bmc::Config::default(),
            advisories: None,
            traces: None,
            rulebook_budgets: Budgets::default(),
        }
    }
}
