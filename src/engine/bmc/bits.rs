//! Small numbers as plain Boolean formulas, so the unrolling is purely propositional: Z3 then
//! answers it with its core solver, without bit-vector theory or bit-blasting (which made every
//! satisfiable query pay for rebuilding its model).
//!
//! [`Code`] is a number in binary (a node, an edge choice), only ever compared with constants;
//! [`Therm`] is a small count in thermometer form (`ge[k]` is "at least k + 1"), for counters,
//! the calls of a tool in a batch and node steps, where sums and bounds are needed.

use z3::ast::Bool;
use z3::Model;

fn lit(b: bool) -> Bool {
    Bool::from_bool(b)
}

fn truth(model: &Model, v: &Bool) -> bool {
    model
        .eval(v, true)
        .and_then(|x| x.as_bool())
        .unwrap_or(false)
}

/// A number in binary, least significant bit first.
#[derive(Clone)]
pub(crate) struct Code {
    bits: Vec<Bool>,
}

/// Bits to hold every value up to `max`.
pub(crate) fn width(max: u64) -> usize {
    (64 - max.leading_zeros()).max(1) as usize
}

impl Code {
    /// A fresh number of `w` bits.
    pub(crate) fn fresh(prefix: &str, w: usize) -> Code {
        Code {
            bits: (0..w).map(|_| Bool::fresh_const(prefix)).collect(),
        }
    }

    /// The constant `v` in `w` bits.
    pub(crate) fn constant(v: u64, w: usize) -> Code {
        Code {
            bits: (0..w).map(|k| lit(v >> k & 1 == 1)).collect(),
        }
    }

    /// The number equals the constant `v` (false when `v` needs more bits).
    pub(crate) fn is(&self, v: u64) -> Bool {
        if width(v) > self.bits.len() && v != 0 {
            return lit(false);
        }
        let l: Vec<Bool> = self
            .bits
            .iter()
            .enumerate()
            .map(|(k, b)| if v >> k & 1 == 1 { b.clone() } else { b.not() })
            .collect();
        Bool::and(&l)
    }

    /// Bit by bit equal.
    pub(crate) fn eq(&self, o: &Code) -> Bool {
        let l: Vec<Bool> = self
            .bits
            .iter()
            .zip(&o.bits)
            .map(|(a, b)| a.iff(b))
            .collect();
        Bool::and(&l)
    }

    /// `c ? a : b`, bit by bit.
    pub(crate) fn ite(c: &Bool, a: &Code, b: &Code) -> Code {
        Code {
            bits: a
                .bits
                .iter()
                .zip(&b.bits)
                .map(|(x, y)| c.ite(x, y))
                .collect(),
        }
    }
}

/// A count from 0 to `ge.len()` in thermometer form: `ge[k]` is "at least k + 1".
#[derive(Clone)]
pub(crate) struct Therm {
    ge: Vec<Bool>,
}

impl Therm {
    /// A fresh count up to `max`, and the constraint that keeps it a thermometer.
    pub(crate) fn fresh(prefix: &str, max: usize) -> (Therm, Bool) {
        let ge: Vec<Bool> = (0..max).map(|_| Bool::fresh_const(prefix)).collect();
        let mono: Vec<Bool> = ge.windows(2).map(|w| w[1].implies(&w[0])).collect();
        (Therm { ge }, Bool::and(&mono))
    }

    /// The count `v`, up to `max`.
    pub(crate) fn constant(v: usize, max: usize) -> Therm {
        Therm {
            ge: (0..max).map(|k| lit(k < v)).collect(),
        }
    }

    /// The largest count it holds.
    pub(crate) fn max(&self) -> usize {
        self.ge.len()
    }

    /// "At least `k`": true for 0, false past its largest count.
    pub(crate) fn at_least(&self, k: usize) -> Bool {
        match k {
            0 => lit(true),
            k if k > self.ge.len() => lit(false),
            k => self.ge[k - 1].clone(),
        }
    }

    /// The sum, saturating at `cap`.
    pub(crate) fn add(&self, o: &Therm, cap: usize) -> Therm {
        let ge = (1..=cap)
            .map(|m| {
                let mut ways = Vec::new();
                for a in 0..=m.min(self.max()) {
                    let b = m - a;
                    if b <= o.max() {
                        ways.push(Bool::and(&[&self.at_least(a), &o.at_least(b)]));
                    }
                }
                Bool::or(&ways)
            })
            .collect();
        Therm { ge }
    }

    /// One more when `c`, saturating at its largest count.
    pub(crate) fn plus_one_if(&self, c: &Bool) -> Therm {
        let ge = (0..self.ge.len())
            .map(|k| {
                let up = if k == 0 {
                    lit(true)
                } else {
                    self.ge[k - 1].clone()
                };
                c.ite(&up, &self.ge[k])
            })
            .collect();
        Therm { ge }
    }

    /// Equal counts (both of the same largest count).
    pub(crate) fn eq(&self, o: &Therm) -> Bool {
        let l: Vec<Bool> = self.ge.iter().zip(&o.ge).map(|(a, b)| a.iff(b)).collect();
        Bool::and(&l)
    }

    /// `c ? a : b`.
    pub(crate) fn ite(c: &Bool, a: &Therm, b: &Therm) -> Therm {
        Therm {
            ge: a.ge.iter().zip(&b.ge).map(|(x, y)| c.ite(x, y)).collect(),
        }
    }

    /// Its value in `model`.
    pub(crate) fn value(&self, model: &Model) -> u64 {
        self.ge.iter().take_while(|b| truth(model, b)).count() as u64
    }
}

/// A choice of one value among a few, one Boolean per possible value.
#[derive(Clone)]
pub(crate) struct OneHot {
    vars: Vec<Option<Bool>>,
}

impl OneHot {
    /// A fresh choice among the values `v < size` for which `allowed(v)`, and the constraint
    /// that exactly one holds.
    pub(crate) fn fresh(
        prefix: &str,
        size: usize,
        allowed: &dyn Fn(usize) -> bool,
    ) -> (OneHot, Bool) {
        let vars: Vec<Option<Bool>> = (0..size)
            .map(|v| allowed(v).then(|| Bool::fresh_const(prefix)))
            .collect();
        let all: Vec<(&Bool, i32)> = vars.iter().flatten().map(|b| (b, 1)).collect();
        let one = if all.is_empty() {
            lit(false)
        } else {
            Bool::pb_eq(&all, 1)
        };
        (OneHot { vars }, one)
    }

    /// The choice is `v` (false for a value it cannot take).
    pub(crate) fn is(&self, v: u64) -> Bool {
        self.vars
            .get(v as usize)
            .and_then(|b| b.clone())
            .unwrap_or_else(|| lit(false))
    }

    /// The variable of value `v`, when it can be taken.
    pub(crate) fn var(&self, v: usize) -> Option<&Bool> {
        self.vars.get(v).and_then(|b| b.as_ref())
    }

    /// Its value in `model`.
    pub(crate) fn value(&self, model: &Model) -> u64 {
        self.vars
            .iter()
            .position(|b| b.as_ref().is_some_and(|b| truth(model, b)))
            .unwrap_or(usize::MAX) as u64
    }
}
