//! Path conditions decided with Z3 (SPEC 5: "Path conditions are decided with Z3"): each atom a
//! Boolean constant, a formula asserted, and a satisfying model read back as the atoms' values
//! (the witness: which facts let the call through).

use std::collections::BTreeMap;

use z3::ast::Bool;
use z3::{SatResult, Solver};

use super::cond::Cond;

/// A satisfying assignment: `(atom, value)` for every atom the asked formulas mention, sorted.
pub type Assignment = Vec<(usize, bool)>;

/// The answer to a satisfiability question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Satisfiable, with a model.
    Sat(Assignment),
    /// Unsatisfiable.
    Unsat,
    /// Z3 could not decide (never expected for these small propositional formulas).
    Unknown,
}

fn encode(c: &Cond, vars: &mut BTreeMap<usize, Bool>) -> Bool {
    match c {
        Cond::True => Bool::from_bool(true),
        Cond::False => Bool::from_bool(false),
        Cond::Atom(i) => var(*i, vars),
        Cond::Not(x) => encode(x, vars).not(),
        Cond::And(xs) => {
            let parts: Vec<Bool> = xs.iter().map(|x| encode(x, vars)).collect();
            Bool::and(&parts)
        }
        Cond::Or(xs) => {
            let parts: Vec<Bool> = xs.iter().map(|x| encode(x, vars)).collect();
            Bool::or(&parts)
        }
    }
}

fn var(i: usize, vars: &mut BTreeMap<usize, Bool>) -> Bool {
    vars.entry(i)
        .or_insert_with(|| Bool::new_const(format!("atom{i}")))
        .clone()
}

/// Is the conjunction of `formulas` satisfiable? The model gives every atom they mention.
pub fn sat(formulas: &[&Cond]) -> Answer {
    let solver = Solver::new();
    let mut vars: BTreeMap<usize, Bool> = BTreeMap::new();
    for f in formulas {
        let b = encode(f, &mut vars);
        solver.assert(&b);
    }
    match solver.check() {
        SatResult::Unsat => Answer::Unsat,
        SatResult::Unknown => Answer::Unknown,
        SatResult::Sat => {
            let Some(model) = solver.get_model() else {
                return Answer::Unknown;
            };
            let mut out = Vec::new();
            for (&i, v) in &vars {
                let value = model
                    .eval(v, true)
                    .and_then(|x| x.as_bool())
                    .unwrap_or(false);
                out.push((i, value));
            }
            Answer::Sat(out)
        }
    }
}

/// True when `a` implies `b` (`a ∧ ¬b` unsatisfiable). Unknown counts as not implied.
pub fn implies(a: &Cond, b: &Cond) -> bool {
    let not_b = b.clone().negate();
    matches!(sat(&[a, &not_b]), Answer::Unsat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rulebook::cond::Atoms;

    #[test]
    fn implication_and_models() {
        let mut atoms = Atoms::default();
        let strong = atoms.read("$paid and $open");
        let weak = atoms.read("$paid");
        assert!(implies(&strong, &weak));
        assert!(!implies(&weak, &strong));
        let not_open = atoms.read("not $open");
        match sat(&[&weak, &not_open]) {
            Answer::Sat(m) => assert_eq!(m, vec![(0, true), (1, false)]),
            other => panic!("{other:?}"),
        }
        assert_eq!(sat(&[&strong, &not_open]), Answer::Unsat);
    }
}
