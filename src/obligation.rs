//! The obligations of SPEC 4, declared once: [`TABLE`] says, per obligation, what every part of
//! the verifier that is not a violation predicate needs to know about it.
//!
//! Which tools an obligation is asked about ([`crate::engine::instances`]), which calls it judges
//! (the explicit engine's early exit, both engines' count of what can break), its rule and
//! classes (the findings, `--replay`, SARIF's precision), whether a later turn makes it QG003,
//! the latches a slice starts from ([`crate::engine::slice`]), the in-batch calls of its own tool
//! the Z3 unrolling must allow, and the clause its message ends with: all read from here.
//!
//! What a violation *is* is deliberately not here: the explicit engine
//! ([`crate::engine::explicit`]), the Z3 unrolling ([`crate::engine::bmc`]) and the plain
//! interpreter every witness replays on ([`crate::engine::interp`]) each say it in their own
//! words, because their independence is what the engines' agreement checks (SPEC 9). Adding an
//! obligation is a row of `obligations!` here (which makes the variant, its place in
//! [`Obligation::ALL`] and its row of [`TABLE`]) and the three predicates, which the compiler
//! asks for (their matches are exhaustive).

use crate::input::ir::{Compensation, NotAfter};
use crate::model::{FlatModel, Latch, ToolIx};
use crate::rules::RuleId;
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

/// Which calls of its tool an obligation judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judges {
    /// Plain calls (a guarded call is the tool check's to refuse), and guarded calls only where
    /// [`Spec::guarded_when`] says the check may not have seen what the obligation reads (SPEC
    /// 3.1 "The guard's view"): otherwise, with no plain node binding the tool, nothing can
    /// break.
    Plain,
    /// Every call that runs, guarded or plain.
    Running,
}

/// The rule a violation is reported under (SPEC 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleOf {
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

/// What [`Spec::applies`] may read about the whole model, found once per model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    /// Some plain node binds an irreversible write (O7 needs one).
    pub any_plain_irreversible: bool,
    /// Some tool is declared `confidential` (O9 needs one).
    pub any_confidential: bool,
}

impl Facts {
    /// The facts of `model`.
    pub(crate) fn of(model: &FlatModel) -> Facts {
        Facts {
            any_plain_irreversible: model.nodes.iter().any(|n| {
                n.plain_calls()
                    .any(|t| model.tools[t].irreversible && model.tools[t].is_write())
            }),
            any_confidential: model.confidential().next().is_some(),
        }
    }
}

/// Which tools an obligation is asked about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope {
    /// One question about every tool at once (O1: every plain call).
    AllTools,
    /// One question per tool for which the predicate holds.
    EachTool(fn(&FlatModel, &Facts, ToolIx) -> bool),
}

/// One row of SPEC 4's table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    /// The obligation.
    pub obligation: Obligation,
    /// `O1`..`O10`.
    pub id: &'static str,
    /// What it says, in a few words (for messages).
    pub describe: &'static str,
    /// Which calls it judges.
    pub judges: Judges,
    /// For one judging [`Judges::Plain`]: true when a guarded call of the tool can break it too
    /// (SPEC 3.1 "The guard's view"), because a latch it reads can be set where the tool check
    /// does not see it (a plain call, a `remote` node), so the guard decides over its seen twin.
    pub guarded_when: fn(&FlatModel, ToolIx) -> bool,
    /// The rule its violations are reported under.
    pub rule: RuleOf,
    /// True when a violation first reachable at a later turn than the first is reported as
    /// QG003 (the state a session carries), not under [`Spec::rule`].
    pub later_turn_is_qg003: bool,
    /// True when a node reviewing each call of the tool (`when: "call"`, SPEC 12.2) confirms
    /// the call on clean content, so the obligation cannot break at that node.
    pub confirmed_by_review: bool,
    /// Which tools it is asked about.
    pub scope: Scope,
    /// The latches it reads about `tool` (a slice's seed, SPEC 9), added to the set.
    pub latches: fn(&FlatModel, ToolIx, &mut Vec<Latch>),
    /// Calls of its own tool one tool batch must allow for a violation to show (the Z3
    /// unrolling's call caps): a second call of the tool itself can be the one that breaks.
    pub own_calls: u32,
    /// The clause a finding's message ends with, about `tool` (empty when the rule's message
    /// says it all).
    pub detail: fn(&FlatModel, ToolIx) -> String,
}

/// Declares the obligations once: each variant of [`Obligation`] with its doc and its row of
/// [`TABLE`], so the enum, [`Obligation::ALL`] and the table cannot disagree (clippy's
/// `declare_clippy_lint!` shape). A row gives every field of [`Spec`] but the two the macro
/// fills: `obligation` and `id` (the variant's name).
macro_rules! obligations {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident : $value:expr),+ $(,)? } ),+ $(,)?) => {
        /// The obligations of SPEC 4, the graph rules' questions. Their order is [`TABLE`]'s.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Obligation {
            $( $(#[$doc])* $name, )+
        }

        impl Obligation {
            /// Every obligation, in order.
            pub const ALL: [Obligation; COUNT] = [$(Obligation::$name),+];
        }

        /// How many obligations there are.
        const COUNT: usize = [$(stringify!($name)),+].len();

        /// Every obligation's row, in [`Obligation`]'s order.
        pub(crate) static TABLE: [Spec; COUNT] = [$(
            Spec {
                obligation: Obligation::$name,
                id: stringify!($name),
                $($field: $value),+
            }
        ),+];
    };
}

obligations! {
    /// The tool check: the call is plain.
    O1 {
        describe: "the tool check",
        judges: Judges::Plain,
        guarded_when: |_, _| false,
        rule: RuleOf::One(RuleId::QG001),
        later_turn_is_qg003: true,
        confirmed_by_review: false,
        scope: Scope::AllTools,
        latches: |_, _, _| {},
        own_calls: 0,
        detail: |_, _| "without the tool check: a plain call skips it (O1)".to_string(),
    },
    /// The confirmation: a write the graph has an interrupt for runs plain, unconfirmed.
    O2 {
        describe: "the confirmation",
        judges: Judges::Plain,
        guarded_when: |_, _| false,
        rule: RuleOf::One(RuleId::QG001),
        later_turn_is_qg003: true,
        confirmed_by_review: true,
        scope: Scope::EachTool(|m, _, t| m.tools[t].is_write() && m.interrupted[t]),
        latches: |_, t, out| out.push(Latch::Confirmed(t)),
        own_calls: 0,
        detail: |m, t| {
            format!(
                "before a person confirmed it, though the graph pauses elsewhere for a person \
                 to confirm '{}' (O2)",
                m.tools[t].name
            )
        },
    },
    /// Order `after`.
    O3 {
        describe: "the order rule `after`",
        judges: Judges::Plain,
        guarded_when: |_, _| false,
        rule: RuleOf::One(RuleId::QG014),
        later_turn_is_qg003: true,
        confirmed_by_review: false,
        scope: Scope::EachTool(|m, _, t| !m.tools[t].order.after.is_empty()),
        latches: |m, t, out| {
            let after = &m.tools[t].order.after;
            out.extend(
                after
                    .iter()
                    .filter_map(|a| m.tool_ix(&a.name))
                    .map(Latch::Ran),
            );
        },
        own_calls: 0,
        detail: |m, t| {
            let a: Vec<String> = m.tools[t]
                .order
                .after
                .iter()
                .map(|a| format!("'{}'", a.name))
                .collect();
            format!(
                "it can run before {} has run, though its rule says after (O3)",
                a.join(", ")
            )
        },
    },
    /// Order `not_after`.
    O4 {
        describe: "the order rule `not_after`",
        judges: Judges::Plain,
        guarded_when: |m, t| {
            m.tools[t].order.not_after.iter().any(|b| match b {
                NotAfter::Tool(n) => m.tool_ix(&n.name).is_some_and(|b| m.unseen.tool(b)),
                NotAfter::Untrusted => m.unseen.taint,
            })
        },
        rule: RuleOf::One(RuleId::QG014),
        later_turn_is_qg003: true,
        confirmed_by_review: false,
        scope: Scope::EachTool(|m, _, t| !m.tools[t].order.not_after.is_empty()),
        latches: |m, t, out| {
            for b in &m.tools[t].order.not_after {
                // The seen twins only where they can differ (SPEC 3.1 "The guard's view").
                match b {
                    NotAfter::Tool(n) => {
                        if let Some(b) = m.tool_ix(&n.name) {
                            out.push(Latch::Ran(b));
                            if m.unseen.tool(b) {
                                out.push(Latch::RanSeen(b));
                            }
                        }
                    }
                    NotAfter::Untrusted => {
                        out.push(Latch::Tainted);
                        if m.unseen.taint {
                            out.push(Latch::TaintedSeen);
                        }
                    }
                }
            }
        },
        own_calls: 0,
        detail: |m, t| {
            let b: Vec<String> = m.tools[t]
                .order
                .not_after
                .iter()
                .map(|b| match b {
                    NotAfter::Tool(n) => format!("'{}'", n.name),
                    NotAfter::Untrusted => "content from outside".to_string(),
                })
                .collect();
            format!(
                "it can run after {}, which its rule says it must never follow (O4)",
                b.join(" or ")
            )
        },
    },
    /// Order `at_most`.
    O5 {
        describe: "the order rule `at_most`",
        judges: Judges::Plain,
        guarded_when: |m, t| m.unseen.tool(t),
        rule: RuleOf::One(RuleId::QG014),
        later_turn_is_qg003: true,
        confirmed_by_review: false,
        scope: Scope::EachTool(|m, _, t| m.tools[t].order.at_most.is_some()),
        latches: |m, t, out| {
            out.push(Latch::Count(t));
            if m.unseen.tool(t) {
                out.push(Latch::CountSeen(t));
            }
        },
        own_calls: 1,
        detail: |m, t| {
            let n = m.tools[t]
                .order
                .at_most
                .as_ref()
                .map(|a| a.count)
                .unwrap_or(0);
            format!("it can run more than {n} time(s), past its at_most rule (O5)")
        },
    },
    /// Taint.
    O6 {
        describe: "the taint rule",
        judges: Judges::Plain,
        guarded_when: |m, _| m.unseen.taint,
        rule: RuleOf::ByRegion {
            local: RuleId::QG011,
            cascade: RuleId::QG012,
        },
        later_turn_is_qg003: true,
        confirmed_by_review: true,
        scope: Scope::EachTool(|m, _, t| m.write_or_privileged(t)),
        latches: |m, t, out| {
            out.extend([Latch::Tainted, Latch::ConfClean(t)]);
            if m.unseen.taint {
                out.push(Latch::TaintedSeen);
            }
        },
        own_calls: 0,
        detail: |_, _| String::new(),
    },
    /// The saga: a compensable write after an unconfirmed irreversible one.
    O7 {
        describe: "the saga",
        judges: Judges::Running,
        guarded_when: |_, _| true,
        rule: RuleOf::One(RuleId::QG013),
        later_turn_is_qg003: false,
        confirmed_by_review: false,
        scope: Scope::EachTool(|m, f, t| {
            matches!(m.tools[t].compensation, Compensation::Tool(_)) && f.any_plain_irreversible
        }),
        latches: |_, _, out| out.push(Latch::IrrevUnconf),
        own_calls: 2,
        detail: |_, _| String::new(),
    },
    /// Recovery: an unrecoverable write with another write in the run.
    O8 {
        describe: "recovery",
        judges: Judges::Running,
        guarded_when: |_, _| true,
        rule: RuleOf::One(RuleId::QG105),
        later_turn_is_qg003: false,
        confirmed_by_review: false,
        scope: Scope::EachTool(|m, _, t| {
            let d = &m.tools[t];
            d.is_write() && d.compensation == Compensation::Absent && !d.irreversible
        }),
        latches: |_, t, out| out.extend([Latch::Wrote, Latch::Unrec(t)]),
        own_calls: 2,
        detail: |_, _| String::new(),
    },
    /// QG019 (SPEC 6), a reachability question numbered after SPEC 4's table: a `sends_out`
    /// tool runs after a `confidential` tool ran in the session, and the send is not confirmed.
    O9 {
        describe: "confidential data stays in",
        judges: Judges::Running,
        guarded_when: |_, _| true,
        rule: RuleOf::One(RuleId::QG019),
        later_turn_is_qg003: false,
        confirmed_by_review: true,
        scope: Scope::EachTool(|m, f, t| m.tools[t].sends_out && f.any_confidential),
        latches: |m, t, out| {
            out.push(Latch::Confirmed(t));
            out.extend(m.confidential().map(Latch::Ran));
        },
        own_calls: 0,
        detail: |_, _| String::new(),
    },
    /// QG021 (SPEC 6): a tool that writes a `persistent` store runs while the run is tainted
    /// and the call was not confirmed on clean content.
    O10 {
        describe: "nothing untrusted persisted",
        judges: Judges::Running,
        guarded_when: |_, _| true,
        rule: RuleOf::One(RuleId::QG021),
        later_turn_is_qg003: false,
        confirmed_by_review: true,
        scope: Scope::EachTool(|m, _, t| m.persists[t]),
        latches: |_, t, out| out.extend([Latch::Tainted, Latch::ConfClean(t)]),
        own_calls: 0,
        detail: |_, _| String::new(),
    },
}

impl Obligation {
    /// Its row of [`TABLE`].
    pub(crate) fn spec(self) -> &'static Spec {
        &TABLE[self as usize]
    }

    /// `O1`..`O10`.
    pub fn as_str(self) -> &'static str {
        self.spec().id
    }

    /// What the obligation says, in a few words (for messages).
    pub(crate) fn describe(self) -> &'static str {
        self.spec().describe
    }

    /// The obligation named `id` (`O1`..`O10`).
    pub(crate) fn parse(id: &str) -> Option<Obligation> {
        TABLE.iter().find(|s| s.id == id).map(|s| s.obligation)
    }
}

impl Spec {
    /// The rule a violation of class `class` is reported under when it is not a QG003.
    pub(crate) fn rule_for(&self, class: Class) -> RuleId {
        match self.rule {
            RuleOf::One(r) => r,
            RuleOf::ByRegion { cascade, .. } if class == Class::Cascade => cascade,
            RuleOf::ByRegion { local, .. } => local,
        }
    }

    /// Every rule its violations can be reported under: its own (both regions' for a split
    /// one), and QG003 when a later turn's violation is reported so. An undecided instance fails
    /// the gate when one of these does (SPEC 8.1).
    pub(crate) fn rules(&self) -> Vec<RuleId> {
        let mut out: Vec<RuleId> = self.classes().iter().map(|c| self.rule_for(*c)).collect();
        if self.later_turn_is_qg003 {
            out.push(RuleId::QG003);
        }
        out.sort();
        out.dedup();
        out
    }

    /// The classes its violations come in: [`Class::Plain`], or local and cascade.
    pub(crate) fn classes(&self) -> &'static [Class] {
        match self.rule {
            RuleOf::One(_) => &[Class::Plain],
            RuleOf::ByRegion { .. } => &[Class::Local, Class::Cascade],
        }
    }

    /// True when its violations are split by region (QG011/QG012): the taint bits then tell
    /// the acting node's regions apart (SPEC 3.1).
    pub(crate) fn split_by_region(&self) -> bool {
        matches!(self.rule, RuleOf::ByRegion { .. })
    }

    /// True when a call of `tool` at `node` cannot break it because the node reviews the
    /// tool's calls (SPEC 12.2: a reviewed call is confirmed on clean content), unless a standing
    /// approval can end that review for a rule reading clean content.
    pub(crate) fn settled_by_review(
        &self,
        model: &FlatModel,
        node: &crate::model::FlatNode,
        tool: ToolIx,
    ) -> bool {
        if !(self.confirmed_by_review && node.reviews_calls_of(tool)) {
            return false;
        }
        // A standing approval (SPEC 3.1 "Standing approvals") ends the asking: a later call
        // there runs on it, confirmed, but clean only until new taint.
        if !model.standing(tool) {
            return true;
        }
        let mut reads = Vec::new();
        (self.latches)(model, tool, &mut reads);
        !reads.contains(&Latch::ConfClean(tool))
    }

    /// True when a guarded call of `tool` can break it: one judging every running call, or one
    /// judging plain calls whose latches the tool check may not have seen ([`Spec::guarded_when`],
    /// SPEC 3.1 "The guard's view").
    pub(crate) fn judges_guarded(&self, model: &FlatModel, tool: ToolIx) -> bool {
        self.judges == Judges::Running || (self.guarded_when)(model, tool)
    }

    /// True when it is asked about `tool`.
    pub(crate) fn applies(&self, model: &FlatModel, facts: &Facts, tool: ToolIx) -> bool {
        match self.scope {
            Scope::AllTools => false,
            Scope::EachTool(p) => p(model, facts, tool),
        }
    }
}

/// The rules an obligation's violation can be reported under (SPEC 6): each row's rules, and
/// QG003 for a later turn. These are reachability verdicts, replayed witnesses (SARIF's
/// `precision: very-high`).
pub(crate) fn reachability_rules() -> Vec<RuleId> {
    let mut out = vec![RuleId::QG003];
    for s in &TABLE {
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
    fn the_table_has_every_obligation_in_order() {
        assert_eq!(TABLE.len(), Obligation::ALL.len());
        for (k, (s, o)) in TABLE.iter().zip(Obligation::ALL).enumerate() {
            assert_eq!(s.obligation, o, "row {k}");
            assert_eq!(o as usize, k, "{o:?} is row {k}");
            assert_eq!(s.id, format!("O{}", k + 1));
            assert_eq!(Obligation::parse(s.id), Some(o));
        }
        assert_eq!(Obligation::parse("O11"), None);
    }

    #[test]
    fn only_o1_is_asked_about_every_tool_at_once() {
        for s in &TABLE {
            assert_eq!(
                matches!(s.scope, Scope::AllTools),
                s.obligation == Obligation::O1,
                "{}",
                s.id
            );
        }
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
        for s in &TABLE {
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
        let o6 = Obligation::O6.spec();
        assert_eq!(o6.rule_for(Class::Cascade), RuleId::QG012);
        assert_eq!(o6.classes(), &[Class::Local, Class::Cascade]);
        assert_eq!(o6.rule_for(Class::Local), RuleId::QG011);
    }
}
