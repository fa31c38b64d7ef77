//! The obligations' names and rules (SPEC 4 and 6), declared once: [`Obligation`], its id, the few
//! words messages call it, the rule its violations are reported under ([`RuleOf`]) and whether a
//! later turn makes it QG003. This is the vocabulary the findings, `--replay` and SARIF speak; it
//! reads nothing above the rule metadata.
//!
//! What the verifier asks of each obligation about a model (its scope, latches, the calls it
//! judges, its message's clause) is [`crate::model::obligation`]'s table, one row per variant
//! here, in this order. Adding an obligation is a row of `obligations!` here (the variant, its
//! place in [`Obligation::ALL`] and its row of [`TERMS`]), the row the model's table then lacks
//! (the compiler asks: the table's length is [`Obligation::ALL`]'s), and the three predicates.

use super::RuleId;
use serde::Serialize;

/// How a violation relates to the acting node's region (SPEC 3.1 Regions): only the taint rule
/// (O6) is split, into QG011 and QG012.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Not a taint violation.
    Plain,
    /// Every origin is in the acting node's region: QG011.
    Local,
    /// Some origin is in another region: QG012.
    Cascade,
}

/// The rule a violation is reported under (SPEC 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOf {
    /// One rule, [`Class::Plain`].
    One(RuleId),
    /// Split by region (SPEC 3.1): `local` for [`Class::Local`], `cascade` for
    /// [`Class::Cascade`].
    ByRegion {
        /// Every origin in the acting node's region.
        local: RuleId,
        /// Some origin in another region.
        cascade: RuleId,
    },
}

/// One obligation's names and rules: the part of SPEC 4's table that does not read a model.
#[derive(Debug, Clone, Copy)]
pub struct Terms {
    /// The obligation.
    pub obligation: Obligation,
    /// `O1`..`O10`.
    pub id: &'static str,
    /// What it says, in a few words (for messages).
    pub describe: &'static str,
    /// The rule its violations are reported under.
    pub rule: RuleOf,
    /// True when a violation first reachable at a later turn than the first is reported as
    /// QG003 (the state a session carries), not under [`Terms::rule`].
    pub later_turn_is_qg003: bool,
}

/// Declares the obligations once: each variant of [`Obligation`] with its doc and its row of
/// [`TERMS`], so the enum, [`Obligation::ALL`] and the terms cannot disagree. A row gives every
/// field of [`Terms`] but the two the macro fills: `obligation` and `id` (the variant's name).
macro_rules! obligations {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident : $value:expr),+ $(,)? } ),+ $(,)?) => {
        /// The obligations of SPEC 4, the graph rules' questions. Their order is [`TERMS`]'s.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Obligation {
            $( $(#[$doc])* $name, )+
        }

        impl Obligation {
            /// Every obligation, in order.
            pub const ALL: [Obligation; COUNT] = [$(Obligation::$name),+];
        }

        /// How many obligations there are.
        pub const COUNT: usize = [$(stringify!($name)),+].len();

        /// Every obligation's names and rules, in [`Obligation`]'s order.
        pub static TERMS: [Terms; COUNT] = [$(
            Terms {
                obligation: Obligation::$name,
                id: stringify!($name),
                $($field: $value),+
            }
        ),+];
    };
}

obligations! {
    /// The tool check: the call is plain.
    O1 { describe: "the tool check", rule: RuleOf::One(RuleId::QG001), later_turn_is_qg003: true },
    /// The confirmation: a write the graph has an interrupt for runs plain, unconfirmed.
    O2 { describe: "the confirmation", rule: RuleOf::One(RuleId::QG001), later_turn_is_qg003: true },
    /// Order `after`.
    O3 { describe: "the order rule `after`", rule: RuleOf::One(RuleId::QG014), later_turn_is_qg003: true },
    /// Order `not_after`.
    O4 { describe: "the order rule `not_after`", rule: RuleOf::One(RuleId::QG014), later_turn_is_qg003: true },
    /// Order `at_most`.
    O5 { describe: "the order rule `at_most`", rule: RuleOf::One(RuleId::QG014), later_turn_is_qg003: true },
    /// Taint.
    O6 {
        describe: "the taint rule",
        rule: RuleOf::ByRegion { local: RuleId::QG011, cascade: RuleId::QG012 },
        later_turn_is_qg003: true,
    },
    /// The saga: a compensable write after an unconfirmed irreversible one.
    O7 { describe: "the saga", rule: RuleOf::One(RuleId::QG013), later_turn_is_qg003: false },
    /// Recovery: an unrecoverable write with another write in the run.
    O8 { describe: "recovery", rule: RuleOf::One(RuleId::QG105), later_turn_is_qg003: false },
    /// QG019 (SPEC 6), a reachability question numbered after SPEC 4's table: a `sends_out`
    /// tool runs after a `confidential` tool ran in the session, and the send is not confirmed.
    O9 { describe: "confidential data stays in", rule: RuleOf::One(RuleId::QG019), later_turn_is_qg003: false },
    /// QG021 (SPEC 6): a tool that writes a `persistent` store runs while the run is tainted
    /// and the call was not confirmed on clean content.
    O10 { describe: "nothing untrusted persisted", rule: RuleOf::One(RuleId::QG021), later_turn_is_qg003: false },
}

impl Obligation {
    /// Its row of [`TERMS`].
    pub fn terms(self) -> &'static Terms {
        &TERMS[self as usize]
    }

    /// `O1`..`O10`.
    pub fn as_str(self) -> &'static str {
        self.terms().id
    }

    /// What the obligation says, in a few words (for messages).
    pub fn describe(self) -> &'static str {
        self.terms().describe
    }

    /// The obligation named `id` (`O1`..`O10`).
    pub fn parse(id: &str) -> Option<Obligation> {
        TERMS.iter().find(|s| s.id == id).map(|s| s.obligation)
    }
}

impl Terms {
    /// The rule a violation of class `class` is reported under when it is not a QG003.
    pub fn rule_for(&self, class: Class) -> RuleId {
        match self.rule {
            RuleOf::One(r) => r,
            RuleOf::ByRegion { cascade, .. } if class == Class::Cascade => cascade,
            RuleOf::ByRegion { local, .. } => local,
        }
    }

    /// Every rule its violations can be reported under: its own (both regions' for a split
    /// one), and QG003 when a later turn's violation is reported so. An undecided instance fails
    /// the gate when one of these does (SPEC 8.1).
    pub fn rules(&self) -> Vec<RuleId> {
        let mut out: Vec<RuleId> = self.classes().iter().map(|c| self.rule_for(*c)).collect();
        if self.later_turn_is_qg003 {
            out.push(RuleId::QG003);
        }
        out.sort();
        out.dedup();
        out
    }

    /// The classes its violations come in: [`Class::Plain`], or local and cascade.
    pub fn classes(&self) -> &'static [Class] {
        match self.rule {
            RuleOf::One(_) => &[Class::Plain],
            RuleOf::ByRegion { .. } => &[Class::Local, Class::Cascade],
        }
    }

    /// True when its violations are split by region (QG011/QG012): the taint bits then tell
    /// the acting node's regions apart (SPEC 3.1).
    pub fn split_by_region(&self) -> bool {
        matches!(self.rule, RuleOf::ByRegion { .. })
    }
}

/// The rules an obligation's violation can be reported under (SPEC 6): each row's rules, and
/// QG003 for a later turn. These are reachability verdicts, replayed witnesses (SARIF's
/// `precision: very-high`).
pub fn reachability_rules() -> Vec<RuleId> {
    let mut out = vec![RuleId::QG003];
    for s in &TERMS {
        match s.rule {
            RuleOf::One(r) => out.push(r),
            RuleOf::ByRegion { local, cascade } => out.extend([local, cascade]),
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terms_have_every_obligation_in_order() {
        assert_eq!(TERMS.len(), Obligation::ALL.len());
        for (k, (s, o)) in TERMS.iter().zip(Obligation::ALL).enumerate() {
            assert_eq!(s.obligation, o, "row {k}");
            assert_eq!(o as usize, k, "{o:?} is row {k}");
            assert_eq!(s.id, format!("O{}", k + 1));
            assert_eq!(Obligation::parse(s.id), Some(o));
        }
        assert_eq!(Obligation::parse("O11"), None);
    }

    #[test]
    fn reachability_rules_are_the_obligations_rules_and_qg003() {
        let ids: Vec<&str> = reachability_rules().iter().map(|r| r.as_str()).collect();
        assert_eq!(
            ids,
            ["QG001", "QG003", "QG011", "QG012", "QG013", "QG014", "QG019", "QG021", "QG105"]
        );
    }

    #[test]
    fn only_the_taint_rule_is_split_by_region() {
        for s in &TERMS {
            let split = s.classes().len() == 2;
            assert_eq!(split, s.split_by_region(), "{}", s.id);
            assert_eq!(split, s.obligation == Obligation::O6, "{}", s.id);
            assert_eq!(
                s.rule_for(Class::Plain),
                s.rule_for(Class::Local),
                "{}",
                s.id
            );
        }
        let o6 = Obligation::O6.terms();
        assert_eq!(o6.rule_for(Class::Cascade), RuleId::QG012);
        assert_eq!(o6.classes(), &[Class::Local, Class::Cascade]);
        assert_eq!(o6.rule_for(Class::Local), RuleId::QG011);
        assert_eq!(
            Obligation::O2.terms().rules(),
            [RuleId::QG001, RuleId::QG003]
        );
        assert_eq!(Obligation::O7.terms().rules(), [RuleId::QG013]);
    }
}
