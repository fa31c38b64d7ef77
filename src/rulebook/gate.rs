//! The rulebook's gates on the model's tools (SPEC 3 `fact[f]`, SPEC 5; seed chapter 45, "The
//! rulebook's facts"): for each tool some route executes, the minimal sets of fact tools whose
//! answers let some route's path condition hold.
//!
//! A fact read from a tool (agent.yaml `facts: {f: {from: tool.field}}`) is false until that tool
//! has answered, then either; a fact from the caller (`from: caller`) and any variable no fact
//! declares may be either at every check. So with the fact tools in a set `S` having run, the
//! tool may run when `(route₁ ∨ route₂ ∨ …) ∧ ⋀{¬$f : f's tool ∉ S}` is satisfiable (Z3). The
//! answer grows with `S`; the gate keeps the minimal sets (see [`crate::model::RuleGate`]).

use std::collections::{HashMap, HashSet};

use crate::input::ir::{Fact, FactSource, ToolDef};
use crate::model::{RuleGate, ToolIx};

use super::compile::Compiled;
use super::cond::Cond;
use super::logic::{samples_with, Answer, Asserted};

/// Fact tools one gate may depend on before it is read as "always allowed" (an
/// over-approximation, which can only add routes, never hide one).
pub(crate) const MAX_FACT_TOOLS: usize = 12;

/// The catalogue's tools by name, to map many actions to tools without a scan each.
#[derive(Debug, Clone)]
pub(crate) struct ToolNames<'a>(HashMap<&'a str, ToolIx>);

impl<'a> ToolNames<'a> {
    /// The index of `tools` (the first of a repeated name).
    pub(crate) fn new(tools: &'a [ToolDef]) -> ToolNames<'a> {
        let mut m = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            m.entry(t.name.as_str()).or_insert(i);
        }
        ToolNames(m)
    }

    /// The catalogue tool an action names: the tool itself (`refund_card`), `execute_refund_card`
    /// (1.0 `bot execute_x`, already lowered), or a 2.x action `RefundCardAction`.
    pub(crate) fn of(&self, action: &str) -> Option<ToolIx> {
        let find = |n: &str| self.0.get(n).copied();
        if let Some(i) = find(action) {
            return Some(i);
        }
        if let Some(i) = action.strip_prefix("execute_").and_then(find) {
            return Some(i);
        }
        if !action.ends_with("Action") {
            return None;
        }
        find(&super::library::action_key(action))
    }
}

/// The gates of every tool (indexed like `tools`): `None` for a tool no route executes.
pub(crate) fn gates(c: &Compiled, tools: &[ToolDef], facts: &[Fact]) -> Vec<Option<RuleGate>> {
    let names = ToolNames::new(tools);
    // Each tool's distinct route conditions, in route order.
    let mut conds: Vec<Vec<&Cond>> = vec![Vec::new(); tools.len()];
    let mut seen: HashSet<(ToolIx, &Cond)> = HashSet::new();
    for r in &c.routes {
        if let Some(u) = names.of(&r.action) {
            if seen.insert((u, &r.cond)) {
                conds[u].push(&r.cond);
            }
        }
    }
    conds
        .iter()
        .map(|cs| (!cs.is_empty()).then(|| gate(c, tools, facts, cs)))
        .collect()
}

fn gate(c: &Compiled, tools: &[ToolDef], facts: &[Fact], conds: &[&Cond]) -> RuleGate {
    let any = Cond::Or(conds.iter().map(|c| (*c).clone()).collect());
    // The bare fact atoms the conditions read, with their fact tool.
    let mut mentioned = Vec::new();
    for cd in conds {
        cd.atoms(&mut mentioned);
    }
    let mut fact_atoms: Vec<(usize, ToolIx)> = Vec::new();
    for (a, _) in mentioned {
        let Some(atom) = c.atoms.list.get(a) else {
            continue;
        };
        let Some(var) = &atom.var else { continue };
        if atom.text != format!("${var}") {
            continue;
        }
        let Some(f) = facts.iter().find(|f| &f.name.name == var) else {
            continue;
        };
        if let FactSource::Tool { tool, .. } = &f.source {
            if let Some(t) = tools.iter().position(|d| d.name == tool.name) {
                if !fact_atoms.contains(&(a, t)) {
                    fact_atoms.push((a, t));
                }
            }
        }
    }
    let mut srcs: Vec<ToolIx> = fact_atoms.iter().map(|&(_, t)| t).collect();
    srcs.sort_unstable();
    srcs.dedup();
    if srcs.len() > MAX_FACT_TOOLS {
        return RuleGate {
            any_of: vec![Vec::new()],
        };
    }
    let mut minimal: Vec<Vec<ToolIx>> = Vec::new();
    // Subsets in order of size, then lexicographically: the first satisfiable ones are minimal.
    let n = srcs.len();
    let mut masks: Vec<u32> = (0..(1u32 << n)).collect();
    masks.sort_by_key(|m| (m.count_ones(), *m));
    // A sample assignment with the unread facts false that satisfies a route answers at once;
    // only the rest is asked of Z3, the routes' OR asserted once (when first needed).
    let mut z3: Option<Asserted> = None;
    for mask in masks {
        let set: Vec<ToolIx> = (0..n)
            .filter(|k| mask & (1 << k) != 0)
            .map(|k| srcs[k])
            .collect();
        if minimal.iter().any(|m| m.iter().all(|t| set.contains(t))) {
            continue;
        }
        let unread: Vec<(usize, bool)> = fact_atoms
            .iter()
            .filter(|(_, t)| !set.contains(t))
            .map(|&(a, _)| (a, false))
            .collect();
        let fixed = |a: usize| unread.iter().any(|&(u, _)| u == a).then_some(false);
        let sampled = conds.iter().any(|c| samples_with(c, &fixed) != 0);
        if sampled
            || !matches!(
                z3.get_or_insert_with(|| Asserted::new(&any))
                    .sat_with(&unread),
                Answer::Unsat
            )
        {
            minimal.push(set);
        }
    }
    RuleGate { any_of: minimal }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_names_map_to_tools() {
        let tools: Vec<ToolDef> = ["refund_card", "get_order"]
            .iter()
            .map(|n| {
                ToolDef::new(
                    n,
                    crate::input::ir::ToolKind::Read,
                    crate::input::source::Loc::new(0, 1, 1),
                )
            })
            .collect();
        let names = ToolNames::new(&tools);
        assert_eq!(names.of("refund_card"), Some(0));
        assert_eq!(names.of("execute_get_order"), Some(1));
        assert_eq!(names.of("RefundCardAction"), Some(0));
        assert_eq!(names.of("SelfCheckInputAction"), None);
    }
}
