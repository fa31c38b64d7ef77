//! Shared searches (issue 19): the explicit engine's instances that would search the same
//! states in the same order, found so that one search answers them all.
//!
//! The explicit engine's search of an instance (SPEC 9) reads the instance in three places
//! only: its [`Slice`] (the latches kept), its taint bits
//! ([`taint_bits`](super::slice::taint_bits)), and the violation predicate judged at each call,
//! with when to stop (every violation it could have found). Two instances of one obligation with
//! equal slices and taint bits therefore generate the same records in the same order until each
//! stops, and one search can carry them all, judging each
//! at its own tool's calls and concluding each where its own search would (see
//! [`super::explicit::search_shared`]): their witnesses, verdicts and state counts are the
//! ones their own searches give. What is shared is the first search, with no guard decided
//! exactly; an instance whose witness then needs a refined slice (SPEC 9's refinement) is
//! searched again on its own, when it is reached, as before.
//!
//! The saga (O7) asks one slice of every compensable tool, and an order rule `not_after:
//! [untrusted]` one slice of every tool that has it (O4): on the benchmark's subgraph family
//! at 10,000 nodes, 134 and 84 instances a search.
//!
//! Only obligations judged at calls of the instance's own tool share: O1 is one instance, and
//! O8 also judges the writes after its tool's call (and its slice names its tool, so never
//! two are equal). The Z3 engine asks every instance on its own, as before: the engines stay
//! independent.

use super::slice::{irrev_confirmations, own_regions, plain_regions, Slice};
use super::Instance;
use crate::findings::Obligation;
use crate::model::FlatModel;
use std::collections::{BTreeSet, HashMap};

/// The groups of instances that share a search, in the order of their first member.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// Per instance (by its index in the list given): its group and its place in it, or `None`
    /// when it is searched alone.
    pub of: Vec<Option<(usize, usize)>>,
    /// Each group's instances (indices into the list given, ascending), at least two a group.
    pub members: Vec<Vec<usize>>,
}

/// What two instances must share to share a search: the obligation, the slice with no exact
/// guards, and each region's taint bit with their number, held as the regions with a bit of
/// their own ([`own_regions`]), which decide them (a model's regions can number thousands).
type Shape = (Obligation, Slice, Vec<usize>);

/// Groups `insts` (of `model`) by the search they would make (see the module's text).
pub fn groups(model: &FlatModel, insts: &[Instance]) -> Groups {
    let none = BTreeSet::new();
    let plain = plain_regions(model);
    let irrev = irrev_confirmations(model);
    let mut by_shape: HashMap<Shape, Vec<usize>> = HashMap::new();
    let mut order: Vec<Shape> = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        if inst.tool.is_none() || matches!(inst.obligation, Obligation::O1 | Obligation::O8) {
            continue;
        }
        let shape = (
            inst.obligation,
            Slice::with_confirmations(model, inst.obligation, inst.tool, &none, &irrev),
            own_regions(&plain, *inst).to_vec(),
        );
        let group = by_shape.entry(shape).or_insert_with_key(|s| {
            order.push(s.clone());
            Vec::new()
        });
        group.push(i);
    }
    let mut out = Groups {
        of: vec![None; insts.len()],
        members: Vec::new(),
    };
    for shape in order {
        let members = by_shape.remove(&shape).unwrap_or_default();
        if members.len() < 2 {
            continue;
        }
        let g = out.members.len();
        for (place, &i) in members.iter().enumerate() {
            out.of[i] = Some((g, place));
        }
        out.members.push(members);
    }
    out
}
