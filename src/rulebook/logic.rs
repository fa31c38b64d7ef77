//! Path conditions decided with Z3 (SPEC 5: "Path conditions are decided with Z3"): each atom a
//! Boolean constant, a formula asserted, and a satisfying model read back as the atoms' values
//! (the witness: which facts let the call through).

use std::collections::BTreeMap;

use z3::ast::Bool;
use z3::{SatResult, Solver};

use super::cond::Cond;

/// A satisfying assignment: `(atom, value)` for every atom the asked formulas mention, sorted.
pub(crate) type Assignment = Vec<(usize, bool)>;

/// The answer to a satisfiability question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
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
///
/// One solver per thread answers every question, each in its own `push`/`pop` scope: creating a
/// Z3 solver costs far more than these small formulas take to decide.
pub(crate) fn sat(formulas: &[&Cond]) -> Answer {
    SOLVER.with(|solver| {
        solver.push();
        let answer = decide(solver, formulas);
        solver.pop(1);
        answer
    })
}

thread_local! {
    static SOLVER: Solver = Solver::new();
}

/// One formula asserted once, on a solver of its own, asked about under several sets of atom
/// values (Z3's assumptions): many questions about one large formula cost one encoding, and Z3
/// keeps what it learnt between them. (Not on the thread's shared solver: what a large formula
/// leaves there would slow every later small question.)
pub(crate) struct Asserted {
    solver: Solver,
    vars: BTreeMap<usize, Bool>,
}

impl Asserted {
    /// `formula`, asserted.
    pub(crate) fn new(formula: &Cond) -> Asserted {
        let solver = Solver::new();
        let mut vars = BTreeMap::new();
        let b = encode(formula, &mut vars);
        solver.assert(&b);
        Asserted { solver, vars }
    }

    /// Is the formula satisfiable with each atom of `literals` taking its value? (No model:
    /// the answer is `Sat` with an empty assignment.)
    pub(crate) fn sat_with(&mut self, literals: &[(usize, bool)]) -> Answer {
        let lits: Vec<Bool> = literals
            .iter()
            .map(|&(a, v)| {
                let b = var(a, &mut self.vars);
                if v {
                    b
                } else {
                    b.not()
                }
            })
            .collect();
        match self.solver.check_assumptions(&lits) {
            SatResult::Sat => Answer::Sat(Vec::new()),
            SatResult::Unsat => Answer::Unsat,
            SatResult::Unknown => Answer::Unknown,
        }
    }
}

fn decide(solver: &Solver, formulas: &[&Cond]) -> Answer {
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

/// The values of `c` under 64 fixed sample assignments of its atoms, one per bit: bit `k` is
/// `c`'s value when each atom takes bit `k` of its own pseudo-random word. A cheap, sound
/// refutation filter: when `samples(a) & !samples(b)` is non-zero, some assignment makes `a` true
/// and `b` false, so `a` does not imply `b` and Z3 need not be asked. (Zero proves nothing.)
pub(crate) fn samples(c: &Cond) -> u64 {
    samples_with(c, &|_| None)
}

/// [`samples`] with the atoms `fixed` gives a value taking it in every sample. A non-zero
/// answer is an assignment (with those values) that satisfies `c`: a proof it is satisfiable.
pub(crate) fn samples_with(c: &Cond, fixed: &dyn Fn(usize) -> Option<bool>) -> u64 {
    match c {
        Cond::True => u64::MAX,
        Cond::False => 0,
        Cond::Atom(i) => match fixed(*i) {
            Some(true) => u64::MAX,
            Some(false) => 0,
            None => atom_word(*i),
        },
        Cond::Not(x) => !samples_with(x, fixed),
        Cond::And(xs) => xs
            .iter()
            .fold(u64::MAX, |acc, x| acc & samples_with(x, fixed)),
        Cond::Or(xs) => xs.iter().fold(0, |acc, x| acc | samples_with(x, fixed)),
    }
}

/// Atom `i`'s 64 sample values (splitmix64 of its index): fixed, so answers are reproducible.
fn atom_word(i: usize) -> u64 {
    let mut z = (i as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// True when `c` is satisfiable. A sample assignment satisfying it ([`samples`]) answers yes
/// without asking Z3; Z3's unknown counts as satisfiable.
pub(crate) fn satisfiable(c: &Cond) -> bool {
    samples(c) != 0 || !matches!(sat(&[c]), Answer::Unsat)
}

/// True when `a` implies `b` (`a ∧ ¬b` unsatisfiable). Unknown counts as not implied. A sample
/// assignment making `a` true and `b` false ([`samples`]) answers no without asking Z3.
pub(crate) fn implies(a: &Cond, b: &Cond) -> bool {
    implies_sampled(a, samples(a), b, samples(b))
}

/// [`implies`] with both conditions' [`samples`] already computed (callers comparing many pairs).
/// Decided in order of cost: a refuting sample, then equal conditions, then Z3.
pub(crate) fn implies_sampled(a: &Cond, sa: u64, b: &Cond, sb: u64) -> bool {
    if sa & !sb != 0 {
        return false;
    }
    if a == b {
        return true;
    }
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

    #[test]
    fn samples_only_refute() {
        let mut atoms = Atoms::default();
        let a = atoms.read("$a");
        let b = atoms.read("$b");
        let ab = atoms.read("$a and $b");
        // Sampled values are the formula's values: a ∧ b is a subset of a, never the reverse.
        assert_eq!(samples(&ab) & !samples(&a), 0);
        assert_ne!(samples(&a) & !samples(&ab), 0);
        assert_ne!(samples(&a), samples(&b));
        assert_eq!(samples(&atoms.read("$a or not $a")), u64::MAX);
        // A refuted pair is decided without Z3, the rest by Z3.
        assert!(!implies(&a, &b));
        assert!(implies(&ab, &b));
    }
}
