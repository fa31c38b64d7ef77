//! The engines: answer each obligation's reachability question (SPEC 4, 9).
//!
//! [`instances`] lists the obligation instances a model has (SPEC 4's table, one per tool it
//! applies to; O1 is one search for every tool). [`explicit`] answers each by breadth-first search
//! over (node, latches, turn) with the latches [`mod@slice`] keeps; [`interp`] is the plain concrete
//! interpreter every witness is replayed on. [`run`] runs all instances in parallel (rayon) and
//! returns the results sorted, so the output is deterministic.

pub mod explicit;
pub mod interp;
pub mod slice;

use crate::findings::{Obligation, Step};
use crate::ir::Compensation;
use crate::model::{FlatModel, NodeIx, ToolIx};
use rayon::prelude::*;

/// One question: obligation `obligation` about `tool` (`None` only for O1: every tool at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instance {
    /// The obligation.
    pub obligation: Obligation,
    /// The tool it is about.
    pub tool: Option<ToolIx>,
}

/// How a taint violation (O6) relates to the acting node's region (SPEC 3.1 Regions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Not a taint violation.
    Plain,
    /// Every origin is in the acting node's region: QG011.
    Local,
    /// Some origin is in another region: QG012.
    Cascade,
}

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
    /// The search ran out of its state budget.
    Undecided,
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
    /// States explored.
    pub states: u64,
}

/// Limits on one search.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// States per instance before it is undecided.
    pub max_states: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 4_000_000,
        }
    }
}

/// Lists the obligation instances of `model` (SPEC 4's table). Instances that no plain node can
/// break (O1-O6 need a plain call of the tool) are still listed; the search answers them at once.
pub fn instances(model: &FlatModel) -> Vec<Instance> {
    let mut out = vec![Instance {
        obligation: Obligation::O1,
        tool: None,
    }];
    let any_plain_irreversible = model.nodes.iter().any(|n| {
        n.calls_tools()
            && !n.guarded()
            && n.tools
                .iter()
                .any(|&t| model.tools[t].irreversible && model.tools[t].is_write())
    });
    for (t, d) in model.tools.iter().enumerate() {
        let tool = Some(t);
        if d.is_write() && model.interrupted[t] {
            out.push(Instance {
                obligation: Obligation::O2,
                tool,
            });
        }
        if !d.order.after.is_empty() {
            out.push(Instance {
                obligation: Obligation::O3,
                tool,
            });
        }
        if !d.order.not_after.is_empty() {
            out.push(Instance {
                obligation: Obligation::O4,
                tool,
            });
        }
        if d.order.at_most.is_some() {
            out.push(Instance {
                obligation: Obligation::O5,
                tool,
            });
        }
        if model.write_or_privileged(t) {
            out.push(Instance {
                obligation: Obligation::O6,
                tool,
            });
        }
        if matches!(d.compensation, Compensation::Tool(_)) && any_plain_irreversible {
            out.push(Instance {
                obligation: Obligation::O7,
                tool,
            });
        }
        if d.is_write() && d.compensation == Compensation::Absent && !d.irreversible {
            out.push(Instance {
                obligation: Obligation::O8,
                tool,
            });
        }
    }
    out
}

/// Answers every instance of `model` with the explicit engine, in parallel; sorted by instance.
pub fn run(model: &FlatModel, limits: Limits) -> Vec<InstanceResult> {
    let mut results: Vec<InstanceResult> = instances(model)
        .into_par_iter()
        .map(|i| explicit::check(model, i, limits))
        .collect();
    results.sort_by_key(|r| r.instance);
    results
}

/// The version of the system Z3 library this binary links (`Z3 4.8.12.0`): the solver of the
/// second engine (SPEC 9), which a later version runs beside the explicit one.
pub fn z3_version() -> String {
    z3::full_version().to_string()
}
