//! The explicit engine (SPEC 9): breadth-first search over (node, latches, turn) per obligation.
//!
//! Within a turn the search is a uniform-cost search on (node steps, witness steps): entering a
//! node costs one step (SPEC 3.1), a call within a batch or a pause costs none, and each event the
//! witness would show counts as a tie-break (SPEC 4). Each state is first expanded at its fewest
//! steps in the run, and a state is kept once per turn (reaching it again with more steps can do
//! no more under the step limit; with as many steps and more events, no shorter witness). Turns are searched one after another from the states that
//! start them; when no new turn-start state appears, every later turn would repeat an earlier one
//! and the verdict holds at every depth (the fixpoint of SPEC 9).
//!
//! A call a node reviews (SPEC 12.2) branches on the person's answer like a guarded write: a yes
//! runs it confirmed on clean content, a no runs nothing. With `input.reads_outside` the turn's
//! first state is tainted in the top graph's region. The top end's own flags apply on the edge
//! into it, before the turn's reset.
//!
//! One search can answer several instances (issue 19): those [`super::share`] groups search the
//! same states in the same order, so each is judged at its own tool's calls and concluded where
//! its own search would stop (its violations found, the budget, the fixpoint or the bound), with
//! the `states` and `generated` its own search reports ([`search_shared`]).
//!
//! A state is a vector of 64-bit words: word 0 packs the node, the phase and whether the batch
//! has made a call; then the flags, the `exit_after` counters and the sliced latches of
//! [`Slice`], laid out by `Layout`.

use super::slice::Slice;
use super::steps::{call_step, call_step_as, enter_steps, leave_steps, number_run_steps};
use super::{interp, Class, Depth, Instance, InstanceResult, Limits, Violation};
use crate::findings::{Obligation, Step, StepKind};
use crate::input::ir::{FlagScope, NotAfter, When};
use crate::model::obligation::Judges;
use crate::model::{CheckLit, FlatModel, NodeIx, ToolCheck, ToolIx};
use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap as HashMap, FxHashSet as HashSet};
use smallvec::SmallVec;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::BuildHasher;

/// Checks one instance, refining the slice until every witness replays (see [`super::slice`]).
///
/// `checks` is [`FlatModel::tool_checks`] of `model`, worked out once for every instance.
pub fn check(
    model: &FlatModel,
    checks: &[ToolCheck],
    inst: Instance,
    limits: Limits,
) -> InstanceResult {
    let first = one(search(model, checks, &[inst], &BTreeSet::new(), limits));
    refine(model, checks, first, limits)
}

/// The first search of instances of one search shape (see [`super::share`]), made once for
/// them all: each result is the one its own first search gives (its violations, witnesses,
/// depth, `states` and `generated`), to be finished by [`refine`]. One search over their common
/// slice judges each instance at its own tool's calls and concludes each where its own search
/// would stop.
///
/// `insts` share an obligation judged only at calls of the instance's own tool (not O1 or O8),
/// their [`Slice::new`] with no exact guards and their [`super::slice::taint_bits`]. Panics on
/// an empty `insts`.
pub fn search_shared(
    model: &FlatModel,
    checks: &[ToolCheck],
    insts: &[Instance],
    limits: Limits,
) -> Vec<InstanceResult> {
    search(model, checks, insts, &BTreeSet::new(), limits)
}

/// Finishes an instance from its first search's result (no exact guards): while a witness
/// fails to replay on a guard, searches again with that guard decided exactly (see
/// [`super::slice`]). The `states` and `generated` returned add up every search.
pub fn refine(
    model: &FlatModel,
    checks: &[ToolCheck],
    first: InstanceResult,
    limits: Limits,
) -> InstanceResult {
    let mut exact = BTreeSet::new();
    let (mut states, mut generated) = (first.states, first.generated);
    let mut res = first;
    loop {
        let more = refinements(model, &res, &exact);
        if more.is_empty() {
            res.states = states;
            res.generated = generated;
            return res;
        }
        exact.extend(more);
        res = one(search(model, checks, &[res.instance], &exact, limits));
        states += res.states;
        generated += res.generated;
    }
}

/// One search of `insts` (one, or a group of [`search_shared`]) over their slice with the
/// guards of `exact` decided exactly.
fn search(
    model: &FlatModel,
    checks: &[ToolCheck],
    insts: &[Instance],
    exact: &BTreeSet<ToolIx>,
    limits: Limits,
) -> Vec<InstanceResult> {
    let slice = Slice::new(model, insts[0].obligation, insts[0].tool, exact);
    Search::new(model, checks, insts, &slice, limits).run()
}

/// The tools, not yet in `exact`, whose guarded refusal made one of `res`'s witnesses fail to
/// replay: the next slice decides them exactly.
fn refinements(
    model: &FlatModel,
    res: &InstanceResult,
    exact: &BTreeSet<ToolIx>,
) -> BTreeSet<ToolIx> {
    let mut refine = BTreeSet::new();
    for v in &res.violations {
        if let Err(interp::ReplayError::GuardDiffers { tool, .. }) =
            interp::replay_violation(model, v)
        {
            if !exact.contains(&tool) {
                refine.insert(tool);
            }
        }
    }
    refine
}

/// The one result of a search of one instance.
fn one(mut results: Vec<InstanceResult>) -> InstanceResult {
    results
        .pop()
        .expect("a search of one instance has one result")
}

/// A state: its words inline up to eight (the common case), so states cost no allocation.
type Key = SmallVec<[u64; 8]>;

/// Searches one instance with a given slice, without refinement: for tests comparing slices.
pub fn check_with(
    model: &FlatModel,
    inst: Instance,
    slice: &Slice,
    limits: Limits,
) -> InstanceResult {
    let checks = model.tool_checks();
    one(Search::new(model, &checks, &[inst], slice, limits).run())
}

/// Record `r`'s state in `keys`, `len` words a state.
fn key_at(keys: &[u64], len: usize, r: u32) -> &[u64] {
    let at = r as usize * len;
    &keys[at..at + len]
}

/// A state's hash in the table of seen states.
fn hash_key(k: &[u64]) -> u64 {
    FxBuildHasher.hash_one(k)
}

/// The records to expand, popped by (node steps, events, record index), smallest first: a
/// uniform-cost search's queue in buckets, one per (node steps, events). Every push is into a
/// bucket after the one being popped (each transition adds at least one event, see
/// `Search::label_events`), so a bucket is sorted once, when its turn comes, and the pops are
/// those of a binary heap on the triple, in the same order, at a fraction of its cost.
#[derive(Default)]
struct Buckets {
    /// The buckets not yet reached.
    later: BTreeMap<(u32, u32), Vec<u32>>,
    /// The bucket being popped (sorted), its measure and how far it is popped.
    now: Vec<u32>,
    at: (u32, u32),
    next: usize,
    /// Emptied buckets, for their room.
    spare: Vec<Vec<u32>>,
}

impl Buckets {
    fn clear(&mut self) {
        let later = std::mem::take(&mut self.later);
        self.spare.extend(later.into_values().map(|mut b| {
            b.clear();
            b
        }));
        self.now.clear();
        self.at = (0, 0);
        self.next = 0;
    }

    fn push(&mut self, measure: (u32, u32), r: u32) {
        debug_assert!(measure >= self.at, "a push before the bucket being popped");
        if measure == self.at && self.next < self.now.len() {
            // Not made by the search (see above), but kept in order if it were.
            let rest = self.now[self.next..].partition_point(|&x| x < r);
            self.now.insert(self.next + rest, r);
            return;
        }
        let spare = &mut self.spare;
        self.later
            .entry(measure)
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push(r);
    }

    fn pop(&mut self) -> Option<((u32, u32), u32)> {
        while self.next == self.now.len() {
            let (at, mut bucket) = self.later.pop_first()?;
            bucket.sort_unstable();
            let mut done = std::mem::replace(&mut self.now, bucket);
            done.clear();
            self.spare.push(done);
            self.at = at;
            self.next = 0;
        }
        let r = self.now[self.next];
        self.next += 1;
        Some((self.at, r))
    }
}

const PHASE_START: u64 = 0;
const PHASE_AT: u64 = 1;

/// Where each part of a state lives in its word vector.
struct Layout {
    flags: usize,
    ctr: usize,
    ran: usize,
    cnt: usize,
    taint: usize,
    region_words: usize,
    conf: usize,
    conf_words: usize,
    clean: usize,
    clean_words: usize,
    misc: usize,
    p_ran: usize,
    track_words: usize,
    p_taint: usize,
    /// `ran_seen` of the slice's tools (SPEC 3.1 "The guard's view").
    ran_seen: usize,
    /// `count_seen` of the slice's tools, a word each.
    cnt_seen: usize,
    /// `tainted_seen` (bit 0) and its pending bit (bit 1), where kept.
    seen: Option<usize>,
    /// Standing approvals of the slice's tools (SPEC 3.1 "Standing approvals").
    stand: usize,
    /// Standing approvals on clean content, and how many words they take.
    sclean: usize,
    sclean_words: usize,
    len: usize,
}

fn words(bits: usize) -> usize {
    bits.div_ceil(64)
}

fn get(s: &[u64], off: usize, bit: usize) -> bool {
    s[off + bit / 64] >> (bit % 64) & 1 == 1
}

fn put(s: &mut [u64], off: usize, bit: usize, v: bool) {
    let w = &mut s[off + bit / 64];
    if v {
        *w |= 1 << (bit % 64);
    } else {
        *w &= !(1 << (bit % 64));
    }
}

fn any(s: &[u64], off: usize, n: usize) -> bool {
    s[off..off + n].iter().any(|&w| w != 0)
}

/// How a record was reached from its parent, for rebuilding the witness.
#[derive(Debug, Clone, Copy)]
enum Label {
    /// The first state of the search.
    Root,
    /// A turn started at the entry; `end_edge` is the edge into the top end that ended the last
    /// turn (`None` for the first turn); `branch` holds the entry's inside answers.
    TurnStart { end_edge: Option<u32>, branch: u32 },
    /// A call in a batch; `standing`: the person's yes is for the rest of the run.
    Call {
        tool: u32,
        refused: bool,
        standing: bool,
    },
    /// Leaving a node along an edge, entering its destination with inside answers `branch`.
    Move { edge: u32, branch: u32 },
}

struct Rec {
    parent: u32,
    label: Label,
    /// Node steps in this turn's run (SPEC 3.1), the first measure of a shortest witness.
    dist: u32,
    /// Witness steps (events) in this turn, the tie-break between routes of as many node steps.
    events: u32,
    turn: u32,
    expanded: bool,
}

/// One instance a search answers: its violations so far, and its result once its own search
/// would have stopped.
struct Member {
    inst: Instance,
    /// Every violation key the instance could have: once all are found, its search stops.
    possible: usize,
    /// Some plain node binds the instance's tool (for O1, some tool): an obligation judging
    /// plain calls has nothing to search without one.
    binds_plain: bool,
    found: BTreeMap<(ToolIx, NodeIx, Class), Violation>,
    result: Option<InstanceResult>,
}

struct Search<'a> {
    m: &'a FlatModel,
    /// The obligation its members share.
    ob: Obligation,
    s: &'a Slice,
    lay: Layout,
    limits: Limits,
    ran_ix: Vec<Option<usize>>,
    /// Per tool: its place among the kept `ran_seen` twins.
    ran_seen_ix: Vec<Option<usize>>,
    /// Per tool: its place among the kept `count_seen` twins.
    cnt_seen_ix: Vec<Option<usize>>,
    cnt_ix: Vec<Option<usize>>,
    conf_ix: Vec<Option<usize>>,
    clean_ix: Vec<Option<usize>>,
    /// Per tool: its place among the kept standing approvals.
    stand_ix: Vec<Option<usize>>,
    /// Per tool: its place among the kept standing approvals on clean content.
    sclean_ix: Vec<Option<usize>>,
    track_ix: Vec<Option<usize>>,
    /// The tools whose pending `ran` a batch tracks, ascending (see `track_ix`).
    track: Vec<ToolIx>,
    /// The confidential tools (O9), found once rather than per call.
    confidential: Vec<ToolIx>,
    exact: Vec<bool>,
    /// Per tool: its tool check (SPEC 3).
    checks: &'a [ToolCheck],
    region_bit: Vec<usize>,
    recs: Vec<Rec>,
    /// Each record's state, `lay.len` words apiece, in record order (one allocation for all).
    keys: Vec<u64>,
    /// The instances answered, in the order given (one, or a group of [`search_shared`]).
    members: Vec<Member>,
    /// Per tool: the member about it, for a group (each judged only at its own tool's calls).
    member_of: Vec<Option<usize>>,
    /// Members without a result yet.
    active: usize,
    /// Members whose every violation was found while the current record was expanded.
    filled: Vec<usize>,
    /// The current turn's ends as next turns' starts (see `Search::settle`): the distinct ones
    /// no earlier turn started from, and how many of the ends they cover.
    fresh: HashSet<Key>,
    fresh_upto: usize,
    /// Successor states made so far (see [`InstanceResult::generated`]).
    generated: u64,
    /// The current turn's states: (hash, record index), compared by the record's words in
    /// `keys` (see `Search::turn`); kept between turns for its room.
    seen: HashTable<(u64, u32)>,
    /// The current turn's records to expand (see `Search::turn`), kept for its room.
    queue: Buckets,
}

fn index_of(n: usize, list: &[ToolIx]) -> Vec<Option<usize>> {
    let mut v = vec![None; n];
    for (i, &t) in list.iter().enumerate() {
        v[t] = Some(i);
    }
    v
}

impl<'a> Search<'a> {
    /// A search answering `insts` (at least one; more only as [`search_shared`] groups them)
    /// over slice `s`.
    fn new(
        m: &'a FlatModel,
        checks: &'a [ToolCheck],
        insts: &[Instance],
        s: &'a Slice,
        limits: Limits,
    ) -> Search<'a> {
        let inst = insts[0];
        let nt = m.tools.len();
        let mut track: Vec<ToolIx> = s
            .ran
            .iter()
            .chain(&s.confirmed)
            .chain(&s.conf_clean)
            .chain(&s.ran_seen)
            .copied()
            .collect();
        track.sort_unstable();
        track.dedup();
        let flag_words = words(m.flags.len());
        // Taint origins are kept only as finely as the obligation reads them (see
        // `slice::taint_bits`).
        let (region_bit, bits) = super::slice::taint_bits(m, inst);
        let region_words = if s.tainted { words(bits) } else { 0 };
        let mut off = 1;
        let mut take = |n: usize| {
            let o = off;
            off += n;
            o
        };
        let flags = take(flag_words);
        let ctr = take(m.counters.len());
        let ran_words = words(s.ran.len());
        let ran = take(ran_words);
        let cnt = take(s.count.len());
        let taint = take(region_words);
        let conf_words = words(s.confirmed.len());
        let conf = take(conf_words);
        let clean_words = words(s.conf_clean.len());
        let clean = take(clean_words);
        let misc = take(1);
        let track_words = words(track.len());
        let p_ran = take(track_words);
        let p_taint = take(region_words);
        // The seen twins (SPEC 3.1 "The guard's view") take no word where none is kept.
        let ran_seen = take(words(s.ran_seen.len()));
        let cnt_seen = take(s.count_seen.len());
        let seen = s.tainted_seen.then(|| take(1));
        // Standing approvals take no word in a graph without a standing review.
        let stand = take(words(s.standing.len()));
        let sclean_words = words(s.standing_clean.len());
        let sclean = take(sclean_words);
        let lay = Layout {
            flags,
            ctr,
            ran,
            cnt,
            taint,
            region_words,
            conf,
            conf_words,
            clean,
            clean_words,
            misc,
            p_ran,
            track_words,
            p_taint,
            ran_seen,
            cnt_seen,
            seen,
            stand,
            sclean,
            sclean_words,
            len: off,
        };
        let mut exact = vec![false; nt];
        for &t in &s.exact_guards {
            exact[t] = true;
        }
        // A group's members are each judged at their own tool's calls only (see `event`).
        let mut member_of = Vec::new();
        if insts.len() > 1 {
            member_of = vec![None; nt];
            for (i, x) in insts.iter().enumerate() {
                debug_assert!(
                    x.obligation == inst.obligation
                        && !matches!(x.obligation, Obligation::O1 | Obligation::O8),
                    "only instances judged at their own tool's calls share a search"
                );
                if let Some(t) = x.tool {
                    member_of[t] = Some(i);
                }
            }
        }
        Search {
            m,
            ob: inst.obligation,
            s,
            lay,
            limits,
            ran_ix: index_of(nt, &s.ran),
            ran_seen_ix: index_of(nt, &s.ran_seen),
            cnt_seen_ix: index_of(nt, &s.count_seen.iter().map(|c| c.0).collect::<Vec<_>>()),
            cnt_ix: index_of(nt, &s.count.iter().map(|c| c.0).collect::<Vec<_>>()),
            conf_ix: index_of(nt, &s.confirmed),
            clean_ix: index_of(nt, &s.conf_clean),
            stand_ix: index_of(nt, &s.standing),
            sclean_ix: index_of(nt, &s.standing_clean),
            track_ix: index_of(nt, &track),
            track,
            confidential: m.confidential().collect(),
            exact,
            checks,
            region_bit,
            recs: Vec::new(),
            keys: Vec::new(),
            members: {
                // A group's members look at the nodes binding their own tools, found in one
                // pass (a scan of every node per member is quadratic in a group of thousands).
                let binders = (insts.len() > 1).then(|| binders_of(m, &member_of));
                insts
                    .iter()
                    .map(|&i| {
                        let (possible, binds_plain) = match (&binders, i.tool) {
                            (Some(b), Some(t)) => {
                                let ns = b.get(&t).map(Vec::as_slice).unwrap_or_default();
                                (
                                    possible_keys_at(m, i, ns),
                                    ns.iter().any(|&n| !m.nodes[n].guarded()),
                                )
                            }
                            _ => (possible_keys(m, i), binds_plain(m, i)),
                        };
                        Member {
                            inst: i,
                            possible,
                            binds_plain,
                            found: BTreeMap::new(),
                            result: None,
                        }
                    })
                    .collect()
            },
            member_of,
            active: insts.len(),
            filled: Vec::new(),
            fresh: HashSet::default(),
            fresh_upto: 0,
            generated: 0,
            seen: HashTable::new(),
            queue: Buckets::default(),
        }
    }

    fn node_of(k: &[u64]) -> NodeIx {
        (k[0] & 0xffff_ffff) as NodeIx
    }

    fn phase_of(k: &[u64]) -> u64 {
        (k[0] >> 32) & 0xff
    }

    fn made_of(k: &[u64]) -> bool {
        (k[0] >> 40) & 1 == 1
    }

    fn set_head(k: &mut [u64], node: NodeIx, phase: u64, made: bool) {
        k[0] = node as u64 | phase << 32 | u64::from(made) << 40;
    }

    fn run(mut self) -> Vec<InstanceResult> {
        // An obligation judging plain calls (O1-O6) needs a plain call of the tool: with no plain
        // node binding it, nothing to search, unless a guarded call can break it too (SPEC 3.1
        // "The guard's view").
        let spec = self.ob.spec();
        if spec.judges == Judges::Plain {
            let m = self.m;
            for mb in &mut self.members {
                if !mb.binds_plain && !mb.inst.tool.is_some_and(|t| spec.judges_guarded(m, t)) {
                    mb.result = Some(InstanceResult::holds(mb.inst));
                    self.active -= 1;
                }
            }
        }
        // An instance with no violation to find stops before its search's first step.
        self.filled = (0..self.members.len())
            .filter(|&i| self.members[i].possible == 0)
            .collect();
        if self.active == 0 {
            return self.results();
        }
        let mut start: Key = SmallVec::from_elem(0, self.lay.len);
        self.input_taint(&mut start);
        Self::set_head(&mut start, self.m.entry, PHASE_START, false);
        let mut seen_starts: HashSet<Key> = HashSet::default();
        seen_starts.insert(start.clone());
        self.recs.push(Rec {
            parent: u32::MAX,
            label: Label::Root,
            dist: 0,
            events: 0,
            turn: 1,
            expanded: false,
        });
        self.keys.extend_from_slice(&start);
        let mut frontier: Vec<u32> = vec![0];
        let mut depth = Depth::Bound(self.m.session_steps);
        for turn in 1..=self.m.session_steps {
            let ends = match self.turn(turn, &frontier, &seen_starts) {
                Some(e) => e,
                None => {
                    depth = Depth::Undecided;
                    break;
                }
            };
            // Turn-start states of the next turn that no earlier turn started from.
            let mut next = Vec::new();
            for (rec, edge, mut k) in ends {
                self.reset_turn(&mut k);
                if seen_starts.insert(k.clone()) {
                    let dist = 0;
                    self.recs.push(Rec {
                        parent: rec,
                        label: Label::TurnStart {
                            end_edge: Some(edge),
                            branch: 0,
                        },
                        dist,
                        events: 0,
                        turn: turn + 1,
                        expanded: false,
                    });
                    self.keys.extend_from_slice(&k);
                    next.push((self.recs.len() - 1) as u32);
                }
            }
            if next.is_empty() {
                depth = Depth::Every;
                break;
            }
            if self.active == 0 {
                break;
            }
            frontier = next;
        }
        let states = self.recs.len() as u64;
        for i in 0..self.members.len() {
            self.conclude(i, depth, states);
        }
        self.results()
    }

    /// Member `i`'s result (unless it has one): what it found, with `depth` and `states`.
    fn conclude(&mut self, i: usize, depth: Depth, states: u64) {
        let mb = &mut self.members[i];
        if mb.result.is_some() {
            return;
        }
        self.active -= 1;
        mb.result = Some(InstanceResult {
            instance: mb.inst,
            violations: std::mem::take(&mut mb.found).into_values().collect(),
            depth,
            states,
            generated: self.generated,
            queries: 0,
            rlimit: 0,
            rlimit_peak: 0,
            note: (depth == Depth::Undecided)
                .then(|| format!("the search ran out of its state budget after {states} states")),
        });
    }

    /// Concludes the members that found every violation they could have, as their own search
    /// would: it stops within the turn, the turn's ends so far start the next turn's states
    /// (counted), and it holds at every depth beyond what it found.
    fn settle(&mut self, ends: &[(u32, u32, Key)], seen_starts: &HashSet<Key>) {
        if self.filled.is_empty() {
            return;
        }
        // The distinct new turn starts among the turn's ends, kept up to date from the ends
        // added since the last look (a group's members settle one after another).
        let mut fresh = std::mem::take(&mut self.fresh);
        for (_, _, k) in &ends[self.fresh_upto..] {
            let mut k = k.clone();
            self.reset_turn(&mut k);
            if !seen_starts.contains(&k) {
                fresh.insert(k);
            }
        }
        self.fresh_upto = ends.len();
        let states = (self.recs.len() + fresh.len()) as u64;
        self.fresh = fresh;
        for i in std::mem::take(&mut self.filled) {
            self.conclude(i, Depth::Every, states);
        }
    }

    fn results(self) -> Vec<InstanceResult> {
        self.members
            .into_iter()
            .map(|mb| mb.result.expect("every member is concluded"))
            .collect()
    }

    /// Searches one turn from `starts`; returns the records that reach the top end with the edge
    /// taken, or `None` when the state budget ran out. A member that finds every violation it
    /// could have is concluded within the turn ([`Search::settle`]); the turn ends when none is
    /// left.
    fn turn(
        &mut self,
        turn: u32,
        starts: &[u32],
        seen_starts: &HashSet<Key>,
    ) -> Option<Vec<(u32, u32, Key)>> {
        // The turn's states, each once: their hashes and record indices (the table is kept
        // between turns for its room).
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        // Ordered by (node steps, events): fewest node steps first (SPEC 3.1), then fewest
        // witness steps (SPEC 4), so the first violation found is the shortest in both.
        let mut dq = std::mem::take(&mut self.queue);
        dq.clear();
        let len = self.lay.len;
        for &r in starts {
            let h = hash_key(key_at(&self.keys, len, r));
            seen.insert_unique(h, (h, r), |&(h, _)| h);
            dq.push((0, 0), r);
        }
        let mut ends = Vec::new();
        self.fresh.clear();
        self.fresh_upto = 0;
        let mut succ: Vec<(Key, Label, u32)> = Vec::new();
        let limit = self.m.recursion_limit;
        let mut out_of_budget = false;
        loop {
            self.settle(&ends, seen_starts);
            if self.active == 0 {
                break;
            }
            let Some(((d, ev), r)) = dq.pop() else {
                break;
            };
            let rec = &self.recs[r as usize];
            if rec.expanded || rec.dist != d || rec.events != ev {
                continue;
            }
            self.recs[r as usize].expanded = true;
            if self.recs.len() > self.limits.max_states {
                out_of_budget = true;
                break;
            }
            let key = Key::from_slice(key_at(&self.keys, len, r));
            succ.clear();
            self.expand(r, &key, turn, &mut succ, &mut ends);
            self.generated += succ.len() as u64;
            for (k, label, cost) in succ.drain(..) {
                let nd = d + cost;
                if nd > limit {
                    continue;
                }
                let ne = ev + self.label_events(label);
                let h = hash_key(&k);
                let keys = &self.keys;
                match seen.find(h, |&(hx, ix)| hx == h && key_at(keys, len, ix) == &k[..]) {
                    Some(&(_, ix)) => {
                        let old = &mut self.recs[ix as usize];
                        if !old.expanded && (nd, ne) < (old.dist, old.events) {
                            old.dist = nd;
                            old.events = ne;
                            old.parent = r;
                            old.label = label;
                            dq.push((nd, ne), ix);
                        }
                    }
                    None => {
                        let ix = self.recs.len() as u32;
                        self.recs.push(Rec {
                            parent: r,
                            label,
                            dist: nd,
                            events: ne,
                            turn,
                            expanded: false,
                        });
                        self.keys.extend_from_slice(&k);
                        seen.insert_unique(h, (h, ix), |&(h, _)| h);
                        dq.push((nd, ne), ix);
                    }
                }
            }
        }
        self.seen = seen;
        self.queue = dq;
        (!out_of_budget).then_some(ends)
    }

    /// The witness steps a transition adds (as [`Search::witness`] writes them).
    fn label_events(&self, label: Label) -> u32 {
        let m = self.m;
        match label {
            Label::Root => 0,
            Label::Call { .. } => 1,
            Label::TurnStart { .. } => 1 + m.nodes[m.entry].on_enter.len() as u32,
            Label::Move { edge, .. } => {
                let e = &m.edges[edge as usize];
                (m.nodes[e.from].on_leave.len() + 2 + m.nodes[e.to].on_enter.len()) as u32
            }
        }
    }

    fn expand(
        &mut self,
        r: u32,
        k: &[u64],
        turn: u32,
        succ: &mut Vec<(Key, Label, u32)>,
        ends: &mut Vec<(u32, u32, Key)>,
    ) {
        let m = self.m;
        let n = Self::node_of(k);
        match Self::phase_of(k) {
            PHASE_START => {
                let cost = u32::from(m.nodes[n].costs_step());
                let end_edge = match self.recs[r as usize].label {
                    Label::TurnStart { end_edge, .. } => end_edge,
                    _ => None,
                };
                // The entered state carries the same label, with the entry's inside answers.
                for (branch, s2) in self.enter(k, n) {
                    succ.push((s2, Label::TurnStart { end_edge, branch }, cost));
                }
            }
            _ => {
                let node = &m.nodes[n];
                let made = Self::made_of(k);
                if node.calls_tools() {
                    let guarded = node.guarded();
                    for &u in &node.tools {
                        for &(runs, standing) in self.answers(k, n, u) {
                            if !standing {
                                self.event(r, k, n, u, guarded, runs, turn);
                            }
                            let mut s2 = Key::from_slice(k);
                            if runs {
                                self.apply_call(&mut s2, n, u, guarded);
                            }
                            if standing {
                                self.stand(&mut s2, u);
                            }
                            Self::set_head(&mut s2, n, PHASE_AT, true);
                            succ.push((
                                s2,
                                Label::Call {
                                    tool: u as u32,
                                    refused: !runs,
                                    standing,
                                },
                                0,
                            ));
                        }
                    }
                    if !made {
                        return;
                    }
                }
                // A model node's hosted calls (SPEC 2.2): before it chooses, any number, one
                // after another, each plain and a batch of its own (it sees the ones before).
                for &u in &node.hosted {
                    for &(runs, standing) in self.answers(k, n, u) {
                        if !standing {
                            self.event(r, k, n, u, false, runs, turn);
                        }
                        let mut s2 = Key::from_slice(k);
                        if runs {
                            self.apply_call(&mut s2, n, u, false);
                            if standing {
                                self.stand(&mut s2, u);
                            }
                            self.commit(&mut s2, false);
                        }
                        Self::set_head(&mut s2, n, PHASE_AT, made);
                        succ.push((
                            s2,
                            Label::Call {
                                tool: u as u32,
                                refused: !runs,
                                standing,
                            },
                            0,
                        ));
                    }
                }
                let mut s = Key::from_slice(k);
                self.commit(&mut s, node.guarded());
                self.leave(&mut s, n);
                for &e in &m.out[n] {
                    let edge = &m.edges[e];
                    let fl = self.lay.flags;
                    if let Some(g) = &edge.guard {
                        if !g.eval(&|f| get(&s, fl, *f)) {
                            continue;
                        }
                    }
                    let mut s2 = s.clone();
                    if let Some((c, cap)) = edge.exit_after {
                        let v = &mut s2[self.lay.ctr + c];
                        if *v >= u64::from(cap) {
                            continue;
                        }
                        *v += 1;
                    }
                    if m.top_ends.contains(&edge.to) {
                        // SPEC 3.1: the top end's own flags apply as the turn ends, before the
                        // turn's reset.
                        self.flags_of(&mut s2, edge.to);
                        ends.push((r, e as u32, s2));
                        continue;
                    }
                    let cost = u32::from(m.nodes[edge.to].costs_step());
                    for (branch, s3) in self.enter(&s2, edge.to) {
                        succ.push((
                            s3,
                            Label::Move {
                                edge: e as u32,
                                branch,
                            },
                            cost,
                        ));
                    }
                }
            }
        }
    }

    /// Entering node `to`: its `before` pauses confirm (a no would pause for good), its `inside`
    /// pauses branch on the answer. Returns (answers bitmask, state) pairs at phase AT.
    fn enter(&self, k: &[u64], to: NodeIx) -> SmallVec<[(u32, Key); 2]> {
        let node = &self.m.nodes[to];
        let mut out: SmallVec<[(u32, Key); 2]> = smallvec::smallvec![(0u32, Key::from_slice(k))];
        let mut inside = 0;
        for p in &node.on_enter {
            match p.when {
                When::Inside => {
                    let bit = 1u32 << inside.min(31);
                    inside += 1;
                    let mut next = SmallVec::with_capacity(out.len() * 2);
                    for (b, s) in out {
                        let mut yes = s.clone();
                        self.confirm(&mut yes, p.tool, p.answer, true);
                        next.push((b | bit, yes));
                        let mut no = s;
                        self.confirm(&mut no, None, p.answer, false);
                        next.push((b, no));
                    }
                    out = next;
                }
                _ => {
                    for (_, s) in out.iter_mut() {
                        self.confirm(s, p.tool, p.answer, true);
                    }
                }
            }
        }
        for (_, s) in out.iter_mut() {
            Self::set_head(s, to, PHASE_AT, false);
        }
        out
    }

    fn confirm(&self, s: &mut [u64], tool: Option<ToolIx>, answer: Option<usize>, yes: bool) {
        if let Some(t) = tool.filter(|_| yes) {
            if let Some(i) = self.conf_ix[t] {
                put(s, self.lay.conf, i, true);
            }
            if let Some(i) = self.clean_ix[t] {
                put(s, self.lay.clean, i, true);
            }
        }
        if let Some(a) = answer {
            put(s, self.lay.flags, a, yes);
        }
    }

    /// The answers a call of `u` at node `n` may have, as (runs, standing yes): those of
    /// [`Search::call_options`], and where the node reviews `u`'s calls with `standing` and the
    /// slice keeps the approval, a yes for the rest of the run (SPEC 3.1 "Standing approvals").
    fn answers(&self, k: &[u64], n: NodeIx, u: ToolIx) -> &'static [(bool, bool)] {
        // Once held, the approval is not asked for again (so not given again on new content).
        let standing = self.stand_ix[u].is_some_and(|i| !get(k, self.lay.stand, i))
            && self.m.nodes[n].stands_for(u);
        match (self.call_options(k, n, u), standing) {
            ([true], false) => &[(true, false)],
            ([false], _) => &[(false, false)],
            ([true, false], false) => &[(true, false), (false, false)],
            ([true], true) => &[(true, false), (true, true)],
            (_, true) => &[(true, false), (false, false), (true, true)],
            _ => &[],
        }
    }

    /// A standing yes to a call of `u`: its approval holds, on clean content, to the run's end.
    fn stand(&self, s: &mut [u64], u: ToolIx) {
        if let Some(i) = self.stand_ix[u] {
            put(s, self.lay.stand, i, true);
        }
        if let Some(i) = self.sclean_ix[u] {
            put(s, self.lay.sclean, i, true);
        }
    }

    /// `confirmed[u]`, or a standing approval of `u` (SPEC 3.1 "Standing approvals").
    fn confirmed(&self, k: &[u64], u: ToolIx) -> bool {
        self.conf_ix[u].is_some_and(|i| get(k, self.lay.conf, i))
            || self.stand_ix[u].is_some_and(|i| get(k, self.lay.stand, i))
    }

    /// `confirmed_clean[u]`, or a standing approval of `u` on clean content.
    fn clean(&self, k: &[u64], u: ToolIx) -> bool {
        self.clean_ix[u].is_some_and(|i| get(k, self.lay.clean, i))
            || self.sclean_ix[u].is_some_and(|i| get(k, self.lay.sclean, i))
    }

    /// The outcomes a call of `u` at node `n` may have: `true` runs, `false` is refused. A plain
    /// call runs, unless the node reviews it (SPEC 12.2: the person may decline it). A guarded
    /// call runs when its tool check (order rules and gate, SPEC 3) allows it, and may be refused
    /// when it does not, when it is a write (the person may say no) or when the node reviews it.
    /// Where the latches `u`'s check reads are not kept, both outcomes are allowed.
    fn call_options(&self, k: &[u64], n: NodeIx, u: ToolIx) -> &'static [bool] {
        let node = &self.m.nodes[n];
        let reviewed = node.reviews_calls_of(u);
        if !node.guarded() {
            return if reviewed { &[true, false] } else { &[true] };
        }
        let check = &self.checks[u];
        let allowed = if self.exact[u] || check.reads_nothing() {
            Some(self.check_ok(k, u))
        } else {
            None
        };
        match allowed {
            Some(true) if self.m.tools[u].is_write() || reviewed => &[true, false],
            Some(true) => &[true],
            Some(false) => &[false],
            None => &[true, false],
        }
    }

    /// True when `u`'s tool check allows a call over the kept latches (only called where they are
    /// all kept: exact guards, and checks that read none).
    fn check_ok(&self, k: &[u64], u: ToolIx) -> bool {
        // The check reads what the guard saw (SPEC 3.1 "The guard's view").
        self.checks[u].allows(&|lit| match lit {
            CheckLit::Ran(t) => self.ran_seen(k, t).unwrap_or(true),
            CheckLit::NotRan(t) => self.ran_seen(k, t).is_none_or(|r| !r),
            CheckLit::Untainted => !self.tainted_seen(k).unwrap_or(false),
            CheckLit::CountBelow(n) => self.count_seen(k, u).is_none_or(|c| c < u64::from(n)),
        })
    }

    /// `ran_seen[t]` (SPEC 3.1 "The guard's view"): its twin where `t` can run unseen, else
    /// `ran[t]`, which it equals; `None` where the slice keeps neither.
    fn ran_seen(&self, k: &[u64], t: ToolIx) -> Option<bool> {
        if self.m.unseen.tool(t) {
            self.ran_seen_ix[t].map(|i| get(k, self.lay.ran_seen, i))
        } else {
            self.ran_ix[t].map(|i| get(k, self.lay.ran, i))
        }
    }

    /// `count_seen[u]`, as [`Search::ran_seen`] reads `ran_seen`.
    fn count_seen(&self, k: &[u64], u: ToolIx) -> Option<u64> {
        if self.m.unseen.tool(u) {
            self.cnt_seen_ix[u].map(|i| k[self.lay.cnt_seen + i])
        } else {
            self.cnt_ix[u].map(|i| k[self.lay.cnt + i])
        }
    }

    /// `tainted_seen`, as [`Search::ran_seen`] reads `ran_seen`.
    fn tainted_seen(&self, k: &[u64]) -> Option<bool> {
        let lay = &self.lay;
        if self.m.unseen.taint {
            lay.seen.map(|w| k[w] & 1 == 1)
        } else {
            self.s.tainted.then(|| any(k, lay.taint, lay.region_words))
        }
    }

    /// True when the real latches say more than the guard saw at a guarded call of `u` (SPEC
    /// 3.1 "The guard's view"): for O4 some `not_after` tool ran unseen (or taint entered
    /// unseen, for `untrusted`), for O5 the count is at the limit the seen count is below, for
    /// O6 taint entered unseen. Twins that cannot differ are not kept, and break nothing.
    fn unseen_breaks(&self, k: &[u64], u: ToolIx) -> bool {
        let m = self.m;
        let lay = &self.lay;
        let tainted = || any(k, lay.taint, lay.region_words);
        let taint_unseen = || m.unseen.taint && tainted() && self.tainted_seen(k) == Some(false);
        match self.ob {
            Obligation::O4 => m.tools[u].order.not_after.iter().any(|b| match b {
                NotAfter::Tool(x) => m.tool_ix(&x.name).is_some_and(|t| {
                    m.unseen.tool(t)
                        && self.ran_ix[t].is_some_and(|i| get(k, lay.ran, i))
                        && self.ran_seen(k, t) == Some(false)
                }),
                NotAfter::Untrusted => taint_unseen(),
            }),
            Obligation::O5 => match (&m.tools[u].order.at_most, self.cnt_ix[u]) {
                (Some(am), Some(i)) if m.unseen.tool(u) => {
                    let n = u64::from(am.count);
                    k[lay.cnt + i] >= n && self.count_seen(k, u).is_some_and(|c| c < n)
                }
                _ => false,
            },
            Obligation::O6 => taint_unseen(),
            _ => false,
        }
    }

    fn apply_call(&self, s: &mut [u64], n: NodeIx, u: ToolIx, guarded: bool) {
        let def = &self.m.tools[u];
        let lay = &self.lay;
        if let Some(i) = self.cnt_ix[u] {
            let cap = u64::from(self.s.count[i].1);
            let v = &mut s[lay.cnt + i];
            *v = (*v + 1).min(cap);
        }
        if def.is_write() {
            if self.s.wrote {
                s[lay.misc] |= 2;
            }
            if self.s.unrec == Some(u) {
                s[lay.misc] = (s[lay.misc] & 0xffff_ffff) | ((n as u64 + 1) << 32);
            }
            // A reviewed call the person let run is confirmed (SPEC 12.2), as is one made on a
            // standing approval (SPEC 3.1).
            if !guarded
                && def.irreversible
                && self.s.irrev_unconf
                && !self.m.nodes[n].reviews_calls_of(u)
                && !self.confirmed(s, u)
            {
                s[lay.misc] |= 1;
            }
        }
        if let Some(i) = self.track_ix[u] {
            put(s, lay.p_ran, i, true);
        }
        // What the guard sees (SPEC 3.1): its own calls only.
        if guarded {
            if let Some(i) = self.cnt_seen_ix[u] {
                let cap = u64::from(self.s.count_seen[i].1);
                let v = &mut s[lay.cnt_seen + i];
                *v = (*v + 1).min(cap);
            }
            if let (true, Some(w)) = (def.reads_outside, lay.seen) {
                s[w] |= 2;
            }
        }
        if def.reads_outside && self.s.tainted {
            put(
                s,
                lay.p_taint,
                self.region_bit[self.m.nodes[n].region],
                true,
            );
        }
    }

    /// The end of a batch: `ran`, taint and spent confirmations take effect, and for a guarded
    /// batch their seen twins.
    fn commit(&self, s: &mut [u64], guarded: bool) {
        let lay = &self.lay;
        if let Some(w) = lay.seen {
            s[w] = (s[w] | s[w] >> 1) & 1;
        }
        if lay.track_words > 0 {
            // The tracked tools only (issue 14: a walk over every tool per state was quadratic
            // in a wide graph); `track_ix[t]` is `t`'s place in `track`.
            for (i, &t) in self.track.iter().enumerate() {
                if !get(s, lay.p_ran, i) {
                    continue;
                }
                if let Some(j) = self.ran_ix[t] {
                    put(s, lay.ran, j, true);
                }
                if let Some(j) = self.ran_seen_ix[t].filter(|_| guarded) {
                    put(s, lay.ran_seen, j, true);
                }
                if let Some(j) = self.conf_ix[t] {
                    put(s, lay.conf, j, false);
                }
                if let Some(j) = self.clean_ix[t] {
                    put(s, lay.clean, j, false);
                }
            }
            s[lay.p_ran..lay.p_ran + lay.track_words].fill(0);
        }
        if any(s, lay.p_taint, lay.region_words) {
            for w in 0..lay.region_words {
                s[lay.taint + w] |= s[lay.p_taint + w];
                s[lay.p_taint + w] = 0;
            }
            s[lay.clean..lay.clean + lay.clean_words].fill(0);
            s[lay.sclean..lay.sclean + lay.sclean_words].fill(0);
        }
    }

    /// Node `n`'s own `clears` then `sets`.
    fn flags_of(&self, s: &mut [u64], n: NodeIx) {
        let node = &self.m.nodes[n];
        for &f in &node.clears {
            put(s, self.lay.flags, f, false);
        }
        for &f in &node.sets {
            put(s, self.lay.flags, f, true);
        }
    }

    /// Leaving node `n`: its clears then sets, a remote node's taint, its `after` pauses.
    fn leave(&self, s: &mut [u64], n: NodeIx) {
        let node = &self.m.nodes[n];
        self.flags_of(s, n);
        // A remote node's answer taints the run as it is left, before its `after` pauses: a
        // person confirming there has seen that answer.
        if node.taints_on_leave && self.s.tainted {
            put(s, self.lay.taint, self.region_bit[node.region], true);
            s[self.lay.clean..self.lay.clean + self.lay.clean_words].fill(0);
            s[self.lay.sclean..self.lay.sclean + self.lay.sclean_words].fill(0);
        }
        for p in &node.on_leave {
            self.confirm(s, p.tool, p.answer, true);
        }
    }

    /// Resets what a new turn resets (SPEC 3 latches table) and moves to the entry.
    fn reset_turn(&self, k: &mut [u64]) {
        let lay = &self.lay;
        for (i, (_, scope)) in self.m.flags.iter().enumerate() {
            if *scope == FlagScope::Turn {
                put(k, lay.flags, i, false);
            }
        }
        k[lay.ctr..lay.ctr + self.m.counters.len()].fill(0);
        for (i, &(_, _, per_turn)) in self.s.count.iter().enumerate() {
            if per_turn {
                k[lay.cnt + i] = 0;
            }
        }
        for (i, &(_, _, per_turn)) in self.s.count_seen.iter().enumerate() {
            if per_turn {
                k[lay.cnt_seen + i] = 0;
            }
        }
        k[lay.conf..lay.conf + lay.conf_words].fill(0);
        k[lay.clean..lay.clean + lay.clean_words].fill(0);
        // A standing approval ends with the run (SPEC 3.1).
        k[lay.stand..lay.sclean + lay.sclean_words].fill(0);
        k[lay.misc] = 0;
        self.input_taint(k);
        Self::set_head(k, self.m.entry, PHASE_START, false);
    }

    /// SPEC 2.2 `input.reads_outside`: the turn starts tainted in the top graph's region.
    fn input_taint(&self, k: &mut [u64]) {
        if let (Some(r), true) = (self.m.input_taint, self.s.tainted) {
            put(k, self.lay.taint, self.region_bit[r], true);
        }
        // The guard is told the turn's input reads outside (SPEC 3.1 "The guard's view").
        if let (Some(_), Some(w)) = (self.m.input_taint, self.lay.seen) {
            k[w] |= 1;
        }
    }

    /// Checks the obligation at a call of `u` at `n` for each member judged there (in a group,
    /// the member about `u`) and records a violation's witness.
    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        r: u32,
        k: &[u64],
        n: NodeIx,
        u: ToolIx,
        guarded: bool,
        runs: bool,
        turn: u32,
    ) {
        // A call that runs nothing (refused, or declined by the person) is no call event.
        if !runs {
            return;
        }
        let judged = if self.members.len() == 1 {
            Some(0)
        } else {
            self.member_of[u]
        };
        let Some(i) = judged.filter(|&i| self.members[i].result.is_none()) else {
            return;
        };
        let m = self.m;
        for key in self.hits(k, n, u, guarded, self.members[i].inst.tool) {
            if self.members[i].found.contains_key(&key) {
                continue;
            }
            let mut witness = self.witness(r);
            let mut call = call_step(m, n, u, turn, false);
            call.violation = true;
            witness.push(call);
            number_run_steps(m, &mut witness);
            let (tool, node, class) = key;
            self.members[i].found.insert(
                key,
                Violation {
                    obligation: self.ob,
                    tool,
                    node,
                    class,
                    turn,
                    witness,
                },
            );
        }
        if self.members[i].found.len() >= self.members[i].possible {
            self.filled.push(i);
        }
    }

    /// The violations (tool, node, class) a running call of `u` at `n` in state `k` makes, for
    /// the instance about `target`.
    fn hits(
        &self,
        k: &[u64],
        n: NodeIx,
        u: ToolIx,
        guarded: bool,
        target: Option<ToolIx>,
    ) -> Vec<(ToolIx, NodeIx, Class)> {
        let lay = &self.lay;
        let m = self.m;
        let is_t = target == Some(u);
        // A call the person reviewed and let run is confirmed, on clean content (SPEC 12.2); one
        // made while a standing approval of its tool holds is not asked (SPEC 3.1 "Standing
        // approvals"): it runs on that approval.
        let reviewed = m.nodes[n].reviews_calls_of(u)
            && !self.stand_ix[u].is_some_and(|i| get(k, lay.stand, i));
        let mut hits: Vec<(ToolIx, NodeIx, Class)> = Vec::new();
        match self.ob {
            Obligation::O1 => {
                if !guarded && (target.is_none() || is_t) {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O2 => {
                if is_t && !guarded && !reviewed && !self.confirmed(k, u) {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O3 => {
                if is_t && !guarded {
                    let missing = m.tools[u]
                        .order
                        .after
                        .iter()
                        .filter_map(|a| m.tool_ix(&a.name))
                        .any(|a| self.ran_ix[a].is_some_and(|i| !get(k, lay.ran, i)));
                    if missing {
                        hits.push((u, n, Class::Plain));
                    }
                }
            }
            Obligation::O4 => {
                if is_t && !guarded {
                    let bad = m.tools[u].order.not_after.iter().any(|b| match b {
                        NotAfter::Tool(x) => m
                            .tool_ix(&x.name)
                            .and_then(|t| self.ran_ix[t])
                            .is_some_and(|i| get(k, lay.ran, i)),
                        NotAfter::Untrusted => any(k, lay.taint, lay.region_words),
                    });
                    if bad {
                        hits.push((u, n, Class::Plain));
                    }
                } else if is_t && self.unseen_breaks(k, u) {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O5 => {
                if is_t && !guarded {
                    if let (Some(i), Some(am)) = (self.cnt_ix[u], &m.tools[u].order.at_most) {
                        if k[lay.cnt + i] >= u64::from(am.count) {
                            hits.push((u, n, Class::Plain));
                        }
                    }
                } else if is_t && self.unseen_breaks(k, u) {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O6 => {
                let clean = reviewed || self.clean(k, u);
                // A guarded call breaks it only on taint the guard never saw (SPEC 3.1).
                let breaks = if guarded {
                    self.unseen_breaks(k, u)
                } else {
                    any(k, lay.taint, lay.region_words)
                };
                if is_t && breaks && !clean {
                    let region = self.region_bit[m.nodes[n].region];
                    let only_here = (0..lay.region_words).all(|w| {
                        let own = if region / 64 == w {
                            1u64 << (region % 64)
                        } else {
                            0
                        };
                        k[lay.taint + w] & !own == 0
                    });
                    hits.push((
                        u,
                        n,
                        if only_here {
                            Class::Local
                        } else {
                            Class::Cascade
                        },
                    ));
                }
            }
            Obligation::O7 => {
                if is_t && k[lay.misc] & 1 == 1 {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O9 => {
                let confirmed = reviewed || self.confirmed(k, u);
                let leaked = self
                    .confidential
                    .iter()
                    .any(|&c| self.ran_ix[c].is_some_and(|i| get(k, lay.ran, i)));
                if is_t && !confirmed && leaked {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O10 => {
                let clean = reviewed || self.clean(k, u);
                if is_t && any(k, lay.taint, lay.region_words) && !clean {
                    hits.push((u, n, Class::Plain));
                }
            }
            Obligation::O8 => {
                if let Some(t) = target {
                    if is_t && k[lay.misc] & 2 == 2 {
                        hits.push((u, n, Class::Plain));
                    }
                    let at = (k[lay.misc] >> 32) as usize;
                    if m.tools[u].is_write() && at > 0 {
                        hits.push((t, at - 1, Class::Plain));
                    }
                }
            }
        }
        hits
    }

    /// Rebuilds the steps from the first state to record `r`.
    fn witness(&self, r: u32) -> Vec<Step> {
        let mut chain = Vec::new();
        let mut i = r;
        while i != u32::MAX {
            chain.push(i);
            i = self.recs[i as usize].parent;
        }
        chain.reverse();
        let m = self.m;
        let mut steps = Vec::new();
        for &i in &chain {
            let rec = &self.recs[i as usize];
            let turn = rec.turn;
            match rec.label {
                Label::Root => {}
                Label::TurnStart { end_edge, branch } => {
                    if Self::phase_of(key_at(&self.keys, self.lay.len, i)) == PHASE_START {
                        // The turn-start record: the previous turn ended here.
                        if let Some(e) = end_edge {
                            let edge = &m.edges[e as usize];
                            leave_steps(m, edge.from, turn - 1, &mut steps);
                            let mut c =
                                Step::new(StepKind::Choose, &m.nodes[edge.from].qid, turn - 1);
                            c.to = Some(m.nodes[edge.to].qid.clone());
                            c.edge = Some(e as usize);
                            c.loc = Some(m.nodes[edge.from].loc);
                            steps.push(c);
                            let mut t =
                                Step::new(StepKind::TurnEnd, &m.nodes[edge.to].qid, turn - 1);
                            t.loc = Some(m.nodes[edge.to].loc);
                            steps.push(t);
                        }
                    } else {
                        enter_steps(m, m.entry, branch, turn, &mut steps);
                    }
                }
                Label::Call {
                    tool,
                    refused,
                    standing,
                } => {
                    let n = Self::node_of(key_at(&self.keys, self.lay.len, i));
                    steps.push(call_step_as(m, n, tool as usize, turn, refused, standing));
                }
                Label::Move { edge, branch } => {
                    let e = &m.edges[edge as usize];
                    leave_steps(m, e.from, turn, &mut steps);
                    let mut c = Step::new(StepKind::Choose, &m.nodes[e.from].qid, turn);
                    c.to = Some(m.nodes[e.to].qid.clone());
                    c.edge = Some(edge as usize);
                    c.loc = Some(m.nodes[e.from].loc);
                    steps.push(c);
                    enter_steps(m, e.to, branch, turn, &mut steps);
                }
            }
        }
        steps
    }
}

/// How many distinct (tool, node, class) violations `inst` could have at most: one per class at
/// each node binding the tool that the obligation judges (a plain node, or any node for one
/// judging guarded calls too, [`crate::model::obligation::Spec::judges_guarded`]), except where the node reviewing the tool's calls confirms each
/// (SPEC 12.2, [`crate::model::obligation::Spec::confirmed_by_review`]).
fn possible_keys(m: &FlatModel, inst: Instance) -> usize {
    let spec = inst.obligation.spec();
    let Some(t) = inst.tool else {
        // Asked about every tool at once (O1): each node calling plainly, once per tool.
        return m
            .nodes
            .iter()
            .map(|n| n.plain_calls().collect::<BTreeSet<_>>().len())
            .sum();
    };
    let guarded_too = spec.judges_guarded(m, t);
    let judged = |n: &crate::model::FlatNode| {
        n.can_call(t) && !spec.settled_by_review(m, n, t) && (guarded_too || !n.guarded())
    };
    spec.classes().len() * m.nodes.iter().filter(|n| judged(n)).count()
}

/// [`possible_keys`] for an instance about a tool, given `binders`: the nodes calling tools that
/// bind it, each once.
fn possible_keys_at(m: &FlatModel, inst: Instance, binders: &[NodeIx]) -> usize {
    let spec = inst.obligation.spec();
    let guarded_too = inst.tool.is_some_and(|t| spec.judges_guarded(m, t));
    let judged = |n: &crate::model::FlatNode| {
        inst.tool
            .is_some_and(|t| !spec.settled_by_review(m, n, t) && (guarded_too || !n.guarded()))
    };
    spec.classes().len() * binders.iter().filter(|&&n| judged(&m.nodes[n])).count()
}

/// True when some plain node binds `inst`'s tool (for O1, any tool).
fn binds_plain(m: &FlatModel, inst: Instance) -> bool {
    m.nodes
        .iter()
        .any(|n| n.plain_calls().any(|u| inst.tool.is_none_or(|t| u == t)))
}

/// The nodes calling tools that bind each tool `member_of` names (ascending, each once), in
/// one pass over the nodes.
fn binders_of(m: &FlatModel, member_of: &[Option<usize>]) -> HashMap<ToolIx, Vec<NodeIx>> {
    let mut out: HashMap<ToolIx, Vec<NodeIx>> = HashMap::default();
    for (ix, n) in m.nodes.iter().enumerate() {
        let bound: &[ToolIx] = if n.calls_tools() { &n.tools } else { &[] };
        for &t in bound.iter().chain(&n.hosted) {
            if member_of.get(t).is_some_and(Option::is_some) {
                let b = out.entry(t).or_default();
                if b.last() != Some(&ix) {
                    b.push(ix);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Buckets;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Pushes as the search does (each after the bucket being popped, a record pushed again with
    /// a smaller measure), popping between: the buckets give the binary heap's order exactly.
    #[test]
    fn buckets_pop_in_the_order_of_a_binary_heap() {
        let mut q = Buckets::default();
        let mut heap = BinaryHeap::new();
        let mut popped = (Vec::new(), Vec::new());
        // A small deterministic generator (no dependency on a random crate's stream).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..3 {
            q.clear();
            heap.clear();
            for r in 0..4 {
                q.push((0, 0), r);
                heap.push(Reverse((0, 0, r)));
            }
            let mut fresh = 4;
            while let Some(((d, e), r)) = q.pop() {
                let Reverse(h) = heap.pop().expect("the heap has as many entries");
                assert_eq!((d, e, r), h, "round {round}");
                popped.0.push((d, e, r));
                if fresh > 400 {
                    continue;
                }
                for _ in 0..next(4) {
                    // A new record, or one pushed again (smaller indices first come back).
                    let ix = if next(3) == 0 {
                        next(fresh) as u32
                    } else {
                        fresh as u32
                    };
                    fresh += 1;
                    let m = (d + next(2) as u32, e + 1 + next(3) as u32);
                    q.push(m, ix);
                    heap.push(Reverse((m.0, m.1, ix)));
                }
            }
            assert!(heap.is_empty());
            popped.1.push(popped.0.len());
            // A round left part-popped: the next round's `clear` must forget all of it.
            if round == 1 {
                q.push((5, 5), 7);
                q.push((6, 6), 8);
                assert_eq!(q.pop(), Some(((5, 5), 7)));
            }
        }
        assert!(popped.1[0] > 100, "the rounds popped {:?}", popped.1);
    }
}
