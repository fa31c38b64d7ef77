//! Slicing (SPEC 9): the latches one obligation reads, and those their updates read.
//!
//! A [`Slice`] starts from what the obligation itself reads (SPEC 4's table) and closes over the
//! latch update rules of SPEC 3 (an irreversible call sets `irreversible_unconfirmed` only without
//! its confirmation, so that confirmation is kept too). Whether a guarded call is refused by its
//! tool check (its order rules and the rulebook's gate, [`FlatModel::tool_check`]) is decided
//! exactly only for the tools in [`Slice::exact_guards`] (their check's latches are kept: for a
//! gate, `ran` of every tool of its sets) and for checks that read no latch; for the others the
//! search lets the check allow or refuse (an over-approximation). Every violation found is then
//! replayed on the concrete interpreter, and a tool whose refusal made a witness fail is added to
//! `exact_guards` (counterexample-guided refinement), so reported witnesses are always real.

use crate::findings::Obligation;
use crate::model::{FlatModel, Latch as Var, ToolIx};
use std::collections::BTreeSet;

/// The latches kept for one obligation instance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Slice {
    /// Tools whose `ran` latch is kept.
    pub(crate) ran: Vec<ToolIx>,
    /// Tools whose `count` is kept: (tool, cap, resets each turn).
    pub(crate) count: Vec<(ToolIx, u32, bool)>,
    /// `tainted` with its origin regions.
    pub(crate) tainted: bool,
    /// Tools whose `confirmed` latch is kept.
    pub(crate) confirmed: Vec<ToolIx>,
    /// Tools whose `confirmed_clean` latch is kept.
    pub(crate) conf_clean: Vec<ToolIx>,
    /// `irreversible_unconfirmed`.
    pub(crate) irrev_unconf: bool,
    /// `wrote` (a write ran in this run).
    pub(crate) wrote: bool,
    /// The unrecoverable tool whose call node is kept (O8).
    pub(crate) unrec: Option<ToolIx>,
    /// Tools whose guarded refusal is decided exactly (the latches their tool check reads are
    /// kept, SPEC 3).
    pub(crate) exact_guards: Vec<ToolIx>,
    /// Tools whose `ran_seen` twin is kept (SPEC 3.1 "The guard's view"; only tools some plain
    /// call can run, [`crate::model::Unseen`]: for the others it is `ran`).
    pub(crate) ran_seen: Vec<ToolIx>,
    /// Tools whose `count_seen` twin is kept: (tool, cap, resets each turn), as [`Slice::count`].
    pub(crate) count_seen: Vec<(ToolIx, u32, bool)>,
    /// `tainted_seen` (kept only where taint can enter unseen).
    pub(crate) tainted_seen: bool,
    /// Tools whose standing approval is kept (SPEC 3.1 "Standing approvals"): those whose
    /// `confirmed` is kept and some `standing` review names; none in a graph without one.
    pub(crate) standing: Vec<ToolIx>,
    /// Tools whose standing approval on clean content is kept: those whose `confirmed_clean` is
    /// kept and some `standing` review names.
    pub(crate) standing_clean: Vec<ToolIx>,
}

impl Slice {
    /// The slice of obligation `ob` about `tool` (`None`: O1 for every tool), with the guarded
    /// refusals of `exact` tools decided exactly.
    pub fn new(
        model: &FlatModel,
        ob: Obligation,
        tool: Option<ToolIx>,
        exact: &BTreeSet<ToolIx>,
    ) -> Slice {
        Slice::build(model, ob, tool, exact, None)
    }

    /// [`Slice::new`], given the model's [`irrev_confirmations`] (worked out once for the
    /// thousands of instances of a wide graph, not a scan of every tool each).
    pub fn with_confirmations(
        model: &FlatModel,
        ob: Obligation,
        tool: Option<ToolIx>,
        exact: &BTreeSet<ToolIx>,
        irrev: &[ToolIx],
    ) -> Slice {
        Slice::build(model, ob, tool, exact, Some(irrev))
    }

    fn build(
        model: &FlatModel,
        ob: Obligation,
        tool: Option<ToolIx>,
        exact: &BTreeSet<ToolIx>,
        irrev: Option<&[ToolIx]>,
    ) -> Slice {
        let mut need: BTreeSet<Var> = BTreeSet::new();
        if let Some(t) = tool {
            let mut seed = Vec::new();
            (ob.spec().latches)(model, t, &mut seed);
            need.extend(seed);
        }
        // Close over the update rules, and over the order latches of exactly-decided guards.
        let mut work: Vec<Var> = need.iter().copied().collect();
        let add = |v: Var, need: &mut BTreeSet<Var>, work: &mut Vec<Var>| {
            if need.insert(v) {
                work.push(v);
            }
        };
        // The latches a tool check reads (SPEC 3: order rules and the rulebook's gate): the seen
        // twins where they can differ (SPEC 3.1 "The guard's view").
        let guard_vars = |u: ToolIx| -> Vec<Var> {
            model
                .tool_check(u)
                .reads()
                .map(|lit| model.check_latch(u, lit))
                .collect()
        };
        for &u in exact {
            for v in guard_vars(u) {
                add(v, &mut need, &mut work);
            }
        }
        while let Some(v) = work.pop() {
            if v == Var::IrrevUnconf {
                let found;
                let irrev = match irrev {
                    Some(i) => i,
                    None => {
                        found = irrev_confirmations(model);
                        &found
                    }
                };
                for &w in irrev {
                    add(Var::Confirmed(w), &mut need, &mut work);
                }
            }
        }
        // A standing approval counts as `confirmed` and `confirmed_clean` (SPEC 3.1 "Standing
        // approvals"): kept beside them, only for tools a standing review names.
        let standing: Vec<Var> = need
            .iter()
            .filter_map(|&v| match v {
                Var::Confirmed(t) if model.standing(t) => Some(Var::Standing(t)),
                Var::ConfClean(t) if model.standing(t) => Some(Var::StandingClean(t)),
                _ => None,
            })
            .collect();
        // Whether a review of t still asks (no standing approval held) decides whether a call
        // there is clean: the clean one needs the standing one.
        let asks: Vec<Var> = standing
            .iter()
            .filter_map(|&v| match v {
                Var::StandingClean(t) => Some(Var::Standing(t)),
                _ => None,
            })
            .collect();
        need.extend(asks);
        need.extend(standing);
        let mut s = Slice {
            exact_guards: exact.iter().copied().collect(),
            ..Slice::default()
        };
        let count_of = |t: ToolIx| {
            let am = model.tools[t].order.at_most.clone();
            let (cap, per_turn) = am
                .map(|a| (a.count, a.per_turn))
                .unwrap_or((u32::MAX, false));
            (t, cap, per_turn)
        };
        for v in need {
            match v {
                Var::Ran(t) => s.ran.push(t),
                Var::Count(t) => s.count.push(count_of(t)),
                Var::Tainted => s.tainted = true,
                Var::RanSeen(t) => s.ran_seen.push(t),
                Var::CountSeen(t) => s.count_seen.push(count_of(t)),
                Var::TaintedSeen => s.tainted_seen = true,
                Var::Confirmed(t) => s.confirmed.push(t),
                Var::ConfClean(t) => s.conf_clean.push(t),
                Var::IrrevUnconf => s.irrev_unconf = true,
                Var::Wrote => s.wrote = true,
                Var::Unrec(t) => s.unrec = Some(t),
                Var::Standing(t) => s.standing.push(t),
                Var::StandingClean(t) => s.standing_clean.push(t),
            }
        }
        s
    }

    /// No slicing: every latch of SPEC 3 kept and every guarded refusal decided exactly. Slower
    /// by far; the tests compare it with [`Slice::new`]'s refined slices to show slicing loses
    /// no violation and changes no verdict.
    pub fn full(model: &FlatModel, ob: Obligation, tool: Option<ToolIx>) -> Slice {
        let all: BTreeSet<ToolIx> = (0..model.tools.len()).collect();
        let mut s = Slice::new(model, ob, tool, &all);
        s.ran = (0..model.tools.len()).collect();
        s.count = (0..model.tools.len())
            .filter_map(|t| {
                model.tools[t]
                    .order
                    .at_most
                    .as_ref()
                    .map(|a| (t, a.count, a.per_turn))
            })
            .collect();
        s.tainted = true;
        s.confirmed = (0..model.tools.len()).collect();
        s.conf_clean = (0..model.tools.len()).collect();
        s.irrev_unconf = true;
        s.wrote = true;
        let unseen = &model.unseen;
        s.ran_seen = (0..model.tools.len()).filter(|&t| unseen.tool(t)).collect();
        s.count_seen = s
            .count
            .iter()
            .copied()
            .filter(|c| unseen.tool(c.0))
            .collect();
        s.tainted_seen = unseen.taint;
        s.standing = (0..model.tools.len())
            .filter(|&t| model.standing(t))
            .collect();
        s.standing_clean = s.standing.clone();
        s
    }
}

/// The tools whose `confirmed` latch the update of `irreversible_unconfirmed` reads (SPEC 3):
/// the irreversible writes some interrupt names, ascending.
pub fn irrev_confirmations(model: &FlatModel) -> Vec<ToolIx> {
    model
        .tools
        .iter()
        .enumerate()
        .filter(|&(w, def)| def.is_write() && def.irreversible && model.interrupted[w])
        .map(|(w, _)| w)
        .collect()
}

/// Taint bits per region for instance `inst` (SPEC 3.1 Regions): for O6, one bit per region of a
/// node where its calls are judged ([`taint_judged`]) and one for every other region, enough to
/// tell QG011 from QG012; otherwise one bit, "tainted". Returns each region's bit and the number
/// of bits. Both engines keep taint this finely, so their classes agree.
pub fn taint_bits(model: &FlatModel, inst: crate::engine::Instance) -> (Vec<usize>, usize) {
    let own: Vec<usize> = match inst.tool {
        Some(t) if inst.obligation.spec().split_by_region() => {
            let mut own: Vec<usize> = model
                .nodes
                .iter()
                .filter(|n| taint_judged(model, n).any(|u| u == t))
                .map(|n| n.region)
                .collect();
            own.sort_unstable();
            own.dedup();
            own
        }
        _ => Vec::new(),
    };
    taint_bits_of(model, inst, &own)
}

/// The tools whose calls at `n` the taint rule (O6) judges: its plain calls (a model node's
/// hosted ones included), and where taint can enter unseen (SPEC 3.1 "The guard's view") its
/// guarded ones too.
pub(crate) fn taint_judged<'m>(
    model: &FlatModel,
    n: &'m crate::model::FlatNode,
) -> impl Iterator<Item = ToolIx> + 'm {
    let guarded: &[ToolIx] = if n.calls_tools() && n.guarded() && model.unseen.taint {
        &n.tools
    } else {
        &[]
    };
    n.plain_calls().chain(guarded.iter().copied())
}

/// Per tool, the regions of the nodes where the taint rule judges its calls ([`taint_judged`]),
/// ascending and without repeats: what [`taint_bits`] finds by a scan of every node, worked out
/// once for a model, so that the instances of thousands of tools cost a look each, not a scan
/// each (issue 26: one model routing to 20,000 tool nodes).
pub fn plain_regions(model: &FlatModel) -> Vec<Vec<usize>> {
    let mut own = vec![Vec::new(); model.tools.len()];
    for n in &model.nodes {
        for t in taint_judged(model, n) {
            if let Some(o) = own.get_mut(t) {
                o.push(n.region);
            }
        }
    }
    for o in &mut own {
        o.sort_unstable();
        o.dedup();
    }
    own
}

/// The regions of `inst` that get a taint bit of their own (SPEC 3.1 Regions), given the
/// model's [`plain_regions`]: those of the nodes judging its tool's calls, for an obligation split
/// by region; none otherwise. Two instances of a model have equal [`taint_bits`] exactly when
/// these are equal (each region's bit is its place here, every other region the next).
pub fn own_regions(plain: &[Vec<usize>], inst: crate::engine::Instance) -> &[usize] {
    match inst.tool {
        Some(t) if inst.obligation.spec().split_by_region() => {
            plain.get(t).map(Vec::as_slice).unwrap_or_default()
        }
        _ => &[],
    }
}

/// [`taint_bits`] from the instance's [`own_regions`] (ascending, without repeats).
pub fn taint_bits_of(
    model: &FlatModel,
    inst: crate::engine::Instance,
    own: &[usize],
) -> (Vec<usize>, usize) {
    let mut bit = vec![0usize; model.regions.len()];
    if !inst.obligation.spec().split_by_region() {
        return (bit, 1);
    }
    let other = own.len();
    for (r, b) in bit.iter_mut().enumerate() {
        *b = own.binary_search(&r).unwrap_or(other);
    }
    (bit, other + 1)
}
