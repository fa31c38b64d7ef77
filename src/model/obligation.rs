//! What the verifier asks of each obligation of SPEC 4 about a model, declared once: [`TABLE`] says,
//! per obligation, what every part of the verifier that is not a violation predicate needs to know
//! about it. Its names and rules ([`Obligation`], [`Class`], [`RuleOf`]) are the rule metadata's
//! ([`crate::rules::obligation`]), so the findings can speak of obligations without reading a model.
//!
//! Which tools an obligation is asked about ([`crate::engine::instances`]), which calls it judges
//! (the explicit engine's early exit, both engines' count of what can break), whether a node's
//! review settles it, the latches a slice starts from ([`crate::engine::slice`]), the in-batch
//! calls of its own tool the Z3 unrolling must allow, and the clause its message ends with: all
//! read from here.
//!
//! What a violation *is* is deliberately not here: the explicit engine
//! ([`crate::engine::explicit`]), the Z3 unrolling ([`crate::engine::bmc`]) and the plain
//! interpreter every witness replays on ([`crate::engine::interp`]) each say it in their own
//! words, because their independence is what the engines' agreement checks (SPEC 9). Adding an
//! obligation is a row of `obligations!` in [`crate::rules::obligation`], a row of `specs!` here
//! (which fills [`TABLE`], whose length is [`Obligation::ALL`]'s, so the compiler asks for it) and
//! the three predicates, which the compiler asks for too (their matches are exhaustive).

use crate::input::ir::{Compensation, NotAfter};
use crate::model::{FlatModel, Latch, ToolIx};
use crate::rules::obligation::COUNT;
pub use crate::rules::obligation::{Class, Obligation, RuleOf};
use crate::rules::RuleId;

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

/// One row of SPEC 4's table: what is asked of the obligation about a model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    /// The obligation.
    pub obligation: Obligation,
    /// Which calls it judges.
    pub judges: Judges,
    /// For one judging [`Judges::Plain`]: true when a guarded call of the tool can break it too
    /// (SPEC 3.1 "The guard's view"), because a latch it reads can be set where the tool check
    /// does not see it (a plain call, a `remote` node), so the guard decides over its seen twin.
    pub guarded_when: fn(&FlatModel, ToolIx) -> bool,
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

/// Fills [`TABLE`] with a row per obligation, in [`Obligation`]'s order: a row gives every field
/// of [`Spec`] but `obligation`, which the macro fills from the row's name.
macro_rules! specs {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident : $value:expr),+ $(,)? } ),+ $(,)?) => {
        /// Every obligation's row, in [`Obligation`]'s order.
        pub(crate) static TABLE: [Spec; COUNT] = [$(
            Spec {
                obligation: Obligation::$name,
                $($field: $value),+
            }
        ),+];
    };
}

specs! {
    /// The tool check: the call is plain.
    O1 {
        judges: Judges::Plain,
        guarded_when: |_, _| false,
        confirmed_by_review: false,
        scope: Scope::AllTools,
        latches: |_, _, _| {},
        own_calls: 0,
        detail: |_, _| "without the tool check: a plain call skips it (O1)".to_string(),
    },
    /// The confirmation: a write the graph has an interrupt for runs plain, unconfirmed.
    O2 {
        judges: Judges::Plain,
        guarded_when: |_, _| false,
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
        judges: Judges::Plain,
        guarded_when: |_, _| false,
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
        judges: Judges::Plain,
        guarded_when: |m, t| {
            m.tools[t].order.not_after.iter().any(|b| match b {
                NotAfter::Tool(n) => m.tool_ix(&n.name).is_some_and(|b| m.unseen.tool(b)),
                NotAfter::Untrusted => m.unseen.taint,
            })
        },
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
        judges: Judges::Plain,
        guarded_when: |m, t| m.unseen.tool(t),
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
        judges: Judges::Plain,
        guarded_when: |m, _| m.unseen.taint,
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
        judges: Judges::Running,
        guarded_when: |_, _| true,
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
        judges: Judges::Running,
        guarded_when: |_, _| true,
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
        judges: Judges::Running,
        guarded_when: |_, _| true,
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
        judges: Judges::Running,
        guarded_when: |_, _| true,
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
}

impl Spec {
    /// The rule a violation of class `class` is reported under when it is not a QG003.
    pub(crate) fn rule_for(&self, class: Class) -> RuleId {
        self.obligation.terms().rule_for(class)
    }

    /// Every rule its violations can be reported under ([`crate::rules::obligation::Terms::rules`]).
    pub(crate) fn rules(&self) -> Vec<RuleId> {
        self.obligation.terms().rules()
    }

    /// The classes its violations come in: [`Class::Plain`], or local and cascade.
    pub(crate) fn classes(&self) -> &'static [Class] {
        self.obligation.terms().classes()
    }

    /// True when its violations are split by region (QG011/QG012): the taint bits then tell
    /// the acting node's regions apart (SPEC 3.1).
    pub(crate) fn split_by_region(&self) -> bool {
        self.obligation.terms().split_by_region()
    }

    /// True when a violation first reachable at a later turn than the first is reported as
    /// QG003 (the state a session carries), not under its own rule.
    pub(crate) fn later_turn_is_qg003(&self) -> bool {
        self.obligation.terms().later_turn_is_qg003
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_obligation_in_order() {
        assert_eq!(TABLE.len(), Obligation::ALL.len());
        for (k, (s, o)) in TABLE.iter().zip(Obligation::ALL).enumerate() {
            assert_eq!(s.obligation, o, "row {k}");
            assert_eq!(o as usize, k, "{o:?} is row {k}");
        }
    }

    #[test]
    fn only_o1_is_asked_about_every_tool_at_once() {
        for s in &TABLE {
            assert_eq!(
                matches!(s.scope, Scope::AllTools),
                s.obligation == Obligation::O1,
                "{}",
                s.obligation.as_str()
            );
        }
    }

    #[test]
    fn only_the_taint_rule_is_split_by_region() {
        for s in &TABLE {
            let split = s.classes().len() == 2;
            assert_eq!(split, s.split_by_region(), "{}", s.obligation.as_str());
            assert_eq!(
                split,
                s.obligation == Obligation::O6,
                "{}",
                s.obligation.as_str()
            );
            assert_eq!(
                s.rule_for(Class::Plain),
                s.rule_for(Class::Local),
                "{}",
                s.obligation.as_str()
            );
        }
        let o6 = Obligation::O6.spec();
        assert_eq!(o6.rule_for(Class::Cascade), RuleId::QG012);
        assert_eq!(o6.classes(), &[Class::Local, Class::Cascade]);
        assert_eq!(o6.rule_for(Class::Local), RuleId::QG011);
    }
}
