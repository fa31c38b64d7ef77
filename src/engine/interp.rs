//! The plain interpreter (SPEC 10): walks a witness on the flattened graph with every latch
//! concrete and no slicing, and says whether it reproduces the violation.
//!
//! It is written apart from the explicit engine on purpose: a witness the engine produced is
//! trusted only when this interpreter, reading SPEC 3 on its own, agrees that every step is legal
//! (the node entered is a destination of a usable edge, the step limit holds, the pauses are
//! answered, the call is bound, a guarded call's outcome is one the tool check can give, only a
//! call its node reviews (SPEC 12.2) or a guarded one runs nothing) and that the last call breaks
//! the obligation. [`Run`] drives the same walk step by step for a harness that decides each call
//! as the interpreter reads it ([`call_outcomes`]), as `tests/it/guard_parity.rs` does against the
//! Python guard.

use super::{Class, Violation};
use crate::findings::{Obligation, Step, StepKind};
use crate::input::ir::{FlagScope, NotAfter, When};
use crate::model::{CheckLit, FlatModel, NodeIx, ToolIx};
use std::collections::BTreeSet;

/// Why a witness does not reproduce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayError {
    /// Step `step` cannot happen where it stands.
    Illegal {
        /// Index of the step.
        step: usize,
        /// What is wrong.
        why: String,
    },
    /// A guarded call's outcome differs from what the tool check decides at that point.
    GuardDiffers {
        /// Index of the step.
        step: usize,
        /// The tool called.
        tool: ToolIx,
    },
    /// The walk is legal but its last call does not break the obligation.
    NoViolation(String),
}

impl ReplayError {
    /// The step (0-based) the walk stopped at; `None` when every step was legal.
    pub(crate) fn step(&self) -> Option<usize> {
        match self {
            ReplayError::Illegal { step, .. } | ReplayError::GuardDiffers { step, .. } => {
                Some(*step)
            }
            ReplayError::NoViolation(_) => None,
        }
    }
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Illegal { step, why } => write!(f, "step {}: {why}", step + 1),
            ReplayError::GuardDiffers { step, tool } => {
                write!(
                    f,
                    "step {}: the tool check decides the call of tool #{tool} otherwise",
                    step + 1
                )
            }
            ReplayError::NoViolation(why) => {
                write!(f, "the last call does not break the obligation: {why}")
            }
        }
    }
}

/// One latch per tool, indexed by tool: each tool's value is the default (false, zero, none)
/// until set. Only the tools set are held, so a replay costs what its witness touches, not the
/// catalogue's size (issue 26: every one of 20,000 violations is replayed, and a latch vector per
/// tool for each was quadratic in the tools).
#[derive(Debug, Clone, Default)]
pub(crate) struct PerTool<T> {
    set: rustc_hash::FxHashMap<ToolIx, T>,
    default: T,
}

impl<T: Copy + Default> PerTool<T> {
    /// Every tool at the default.
    pub(crate) fn new() -> PerTool<T> {
        PerTool {
            set: Default::default(),
            default: T::default(),
        }
    }

    /// Every tool back to the default.
    pub(crate) fn clear(&mut self) {
        self.set.clear();
    }

    /// Back to the default the tools `reset` says.
    pub(crate) fn reset_where(&mut self, reset: impl Fn(ToolIx) -> bool) {
        self.set.retain(|&t, _| !reset(t));
    }
}

impl<T> std::ops::Index<ToolIx> for PerTool<T> {
    type Output = T;
    fn index(&self, t: ToolIx) -> &T {
        self.set.get(&t).unwrap_or(&self.default)
    }
}

impl<T: Copy> std::ops::IndexMut<ToolIx> for PerTool<T> {
    fn index_mut(&mut self, t: ToolIx) -> &mut T {
        self.set.entry(t).or_insert(self.default)
    }
}

/// Every latch of SPEC 3, concrete.
#[derive(Debug, Clone)]
pub struct Latches {
    /// State flags.
    pub(crate) flags: Vec<bool>,
    /// `exit_after` counters.
    pub(crate) counters: Vec<u32>,
    /// `ran[t]`.
    pub(crate) ran: PerTool<bool>,
    /// `count[t]` (not saturated: exact).
    pub(crate) count: PerTool<u32>,
    /// Taint origin regions (empty: untainted).
    pub(crate) tainted: BTreeSet<usize>,
    /// `confirmed[W]`.
    pub(crate) confirmed: PerTool<bool>,
    /// `confirmed_clean[W]`.
    pub(crate) clean: PerTool<bool>,
    /// `irreversible_unconfirmed`.
    pub(crate) irrev_unconf: bool,
    /// `wrote`.
    pub(crate) wrote: bool,
    /// Where each tool last ran in this run (for O8).
    pub(crate) ran_at: PerTool<Option<NodeIx>>,
    /// `ran_seen[t]` (SPEC 3.1 "The guard's view"): a guarded call of t ran.
    pub(crate) ran_seen: PerTool<bool>,
    /// `count_seen[t]`: the guarded calls of t that ran (not saturated: exact).
    pub(crate) count_seen: PerTool<u32>,
    /// `tainted_seen`: a guarded call of a `reads_outside` tool ran, or the turn's input reads
    /// outside.
    pub tainted_seen: bool,
    /// A standing approval of t (SPEC 3.1 "Standing approvals"): `confirmed[t]` for the rest of
    /// the run, never spent by a batch.
    pub(crate) standing: PerTool<bool>,
    /// The standing approval's `confirmed_clean[t]`: cleared by any new taint.
    pub(crate) standing_clean: PerTool<bool>,
}

impl Latches {
    /// The latches a session starts with: every flag, counter and `ran` false or zero, nothing
    /// tainted or confirmed.
    pub(crate) fn new(m: &FlatModel) -> Latches {
        Latches {
            flags: vec![false; m.flags.len()],
            counters: vec![0; m.counters.len()],
            ran: PerTool::new(),
            count: PerTool::new(),
            tainted: BTreeSet::new(),
            confirmed: PerTool::new(),
            clean: PerTool::new(),
            irrev_unconf: false,
            wrote: false,
            ran_at: PerTool::new(),
            ran_seen: PerTool::new(),
            count_seen: PerTool::new(),
            tainted_seen: false,
            standing: PerTool::new(),
            standing_clean: PerTool::new(),
        }
    }
}

/// True when the tool check lets a guarded call of `u` run over `l` (SPEC 3: order rules and the
/// rulebook's gate, as [`FlatModel::tool_check`] reads them), over what the guard saw: the seen
/// twins (SPEC 3.1 "The guard's view").
pub(crate) fn order_allows(m: &FlatModel, l: &Latches, u: ToolIx) -> bool {
    m.tool_check(u).allows(&|lit| match lit {
        CheckLit::Ran(t) => l.ran_seen[t],
        CheckLit::NotRan(t) => !l.ran_seen[t],
        CheckLit::Untainted => !l.tainted_seen,
        CheckLit::CountBelow(n) => l.count_seen[u] < n,
    })
}

/// What SPEC 3 lets a call of a tool at a node do, given the latches before it: whether it may
/// run, whether it may run nothing (refused by the tool check, or declined by the person), and
/// whether the person is asked when the check lets it through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallOutcomes {
    /// The call may run: a plain call always; a guarded one when its tool check allows it.
    pub may_run: bool,
    /// The call may run nothing: a guarded call the check refuses, a guarded write the person
    /// declines (SPEC 3.1 "Declined guarded writes"), a reviewed call the person declines
    /// (SPEC 12.2).
    pub may_refuse: bool,
    /// A person is asked before it runs: a guarded write the check allows (the tool check
    /// confirms every write), or a call its node reviews (`call` interrupt) that may run.
    pub asks: bool,
}

/// [`CallOutcomes`] of a call of `u` at node `n` over `l` (SPEC 3, 3.1, 12.2): the one reading
/// the replay and the guard parity test share.
pub(crate) fn call_outcomes(m: &FlatModel, l: &Latches, n: NodeIx, u: ToolIx) -> CallOutcomes {
    let node = &m.nodes[n];
    let reviewed = node.reviews_calls_of(u);
    if !node.guarded() {
        return CallOutcomes {
            may_run: true,
            may_refuse: reviewed,
            asks: reviewed,
        };
    }
    let allowed = order_allows(m, l, u);
    let asks = allowed && (m.tools[u].is_write() || reviewed);
    CallOutcomes {
        may_run: allowed,
        may_refuse: !allowed || asks,
        asks,
    }
}

/// Replays a violation's witness and checks it breaks its obligation at its node and class.
pub fn replay_violation(m: &FlatModel, v: &Violation) -> Result<(), ReplayError> {
    replay(m, &v.witness, v.obligation, v.tool, v.node, v.class)
}

struct Walk<'a> {
    m: &'a FlatModel,
    l: Latches,
    node: NodeIx,
    steps: u32,
    turn: u32,
    pending_ran: Vec<ToolIx>,
    pending_taint: BTreeSet<usize>,
    /// The batch being made is guarded (its `ran` and taint are seen when it ends).
    pending_seen: bool,
    made: bool,
    left: bool,
    expect_enter: Option<NodeIx>,
    pauses_left: Vec<usize>,
    /// Steps taken so far (the index of the next one).
    taken: usize,
}

/// A concrete run of the flattened graph driven step by step, every latch kept (SPEC 10's
/// interpreter, as `--replay` walks a witness). A harness feeds it the steps of a run it builds
/// (entering nodes, choices, calls, answers, turn ends) and reads, before each call, what the
/// interpreter lets that call do ([`Run::call_outcomes`]); each step is checked as a witness's
/// would be.
pub struct Run<'a>(Walk<'a>);

impl<'a> Run<'a> {
    /// A run at the start of a session of `m`: the entry is the next node entered.
    pub fn new(m: &'a FlatModel) -> Run<'a> {
        Run(Walk::new(m))
    }

    /// Takes `st` (with the turn it names). Errors: the step cannot happen where the run
    /// stands ([`ReplayError::Illegal`]), or a guarded call's outcome is not one the tool check
    /// can give ([`ReplayError::GuardDiffers`]).
    pub fn take(&mut self, st: &Step) -> Result<(), ReplayError> {
        self.0.take(st, false).map(|_| ())
    }

    /// The latches now.
    pub fn latches(&self) -> &Latches {
        &self.0.l
    }

    /// What a call of `tool` at the node the run is at may do now (see [`call_outcomes`]).
    pub fn call_outcomes(&self, tool: ToolIx) -> CallOutcomes {
        call_outcomes(self.0.m, &self.0.l, self.0.node, tool)
    }
}

/// Replays `witness` and checks its last call breaks `ob` about `tool` at `node` with `class`.
pub(crate) fn replay(
    m: &FlatModel,
    witness: &[Step],
    ob: Obligation,
    tool: ToolIx,
    node: NodeIx,
    class: Class,
) -> Result<(), ReplayError> {
    replay_observed(m, witness, ob, tool, node, class, &mut |_, _| {})
}

/// [`replay`], calling `observe(i, latches)` after each step `i` but the last has been taken
/// (SPEC 10: `--replay` shows the latches each step changed). A step the walk refuses is not
/// observed; the last step (the call that breaks the obligation) changes nothing before it is
/// judged.
pub(crate) fn replay_observed(
    m: &FlatModel,
    witness: &[Step],
    ob: Obligation,
    tool: ToolIx,
    node: NodeIx,
    class: Class,
    observe: &mut dyn FnMut(usize, &Latches),
) -> Result<(), ReplayError> {
    let mut w = Walk::new(m);
    let last = witness
        .len()
        .checked_sub(1)
        .ok_or_else(|| ReplayError::NoViolation("empty witness".into()))?;
    for (i, st) in witness.iter().enumerate() {
        if let Some((t, runs)) = w.take(st, i == last)? {
            return w.check(ob, tool, node, class, t, runs);
        }
        observe(i, &w.l);
    }
    Err(ReplayError::NoViolation(
        "the witness does not end with a call".into(),
    ))
}

impl<'a> Walk<'a> {
    fn new(m: &'a FlatModel) -> Walk<'a> {
        let mut w = Walk {
            m,
            l: Latches::new(m),
            node: m.entry,
            steps: 0,
            turn: 1,
            pending_ran: Vec::new(),
            pending_taint: BTreeSet::new(),
            pending_seen: false,
            made: false,
            left: false,
            expect_enter: Some(m.entry),
            pauses_left: Vec::new(),
            taken: 0,
        };
        w.input_taint();
        w
    }

    /// SPEC 2.2 `input.reads_outside`: a turn starts tainted in the top graph's region (as if a
    /// `reads_outside` read had run before anything else).
    fn input_taint(&mut self) {
        if let Some(r) = self.m.input_taint {
            self.l.tainted.insert(r);
            // The guard is told (SPEC 3.1 "The guard's view").
            self.l.tainted_seen = true;
        }
    }

    /// Takes step `st`. When `last` and it is a call, the call is not made: returns its tool and
    /// whether it runs, for the obligation to be judged on the latches before it.
    fn take(&mut self, st: &Step, last: bool) -> Result<Option<(ToolIx, bool)>, ReplayError> {
        let i = self.taken;
        self.taken += 1;
        let m = self.m;
        let w = self;
        let bad = |why: String| ReplayError::Illegal { step: i, why };
        if st.turn != w.turn {
            return Err(bad(format!("says turn {} during turn {}", st.turn, w.turn)));
        }
        match st.kind {
            StepKind::Enter => {
                let n = m
                    .node_ix(&st.node)
                    .ok_or_else(|| bad(format!("no node '{}'", st.node)))?;
                if w.expect_enter != Some(n) {
                    return Err(bad(format!(
                        "enters '{}' without a choice leading there",
                        st.node
                    )));
                }
                w.expect_enter = None;
                w.node = n;
                if m.nodes[n].costs_step() {
                    w.steps += 1;
                    if w.steps > m.recursion_limit {
                        return Err(bad(format!("step {} passes the recursion limit", w.steps)));
                    }
                }
                w.made = false;
                w.left = false;
                w.pauses_left = (0..m.nodes[n].on_enter.len()).collect();
            }
            StepKind::Confirm => {
                let n = w.node;
                if st.when == Some(When::After.as_str()) {
                    w.leave_start();
                    let p = m.nodes[n]
                        .on_leave
                        .iter()
                        .find(|p| p.tool.map(|t| m.tools[t].name.as_str()) == st.tool.as_deref());
                    let p = p.ok_or_else(|| bad("no such after pause".into()))?.clone();
                    if st.yes != Some(true) {
                        return Err(bad(
                            "an after pause answered no pauses the run for good".into()
                        ));
                    }
                    w.confirm(p.tool, p.answer, true);
                } else {
                    let k = *w
                        .pauses_left
                        .first()
                        .ok_or_else(|| bad("no pause left at this node".into()))?;
                    w.pauses_left.remove(0);
                    let p = m.nodes[n].on_enter[k].clone();
                    if p.tool.map(|t| m.tools[t].name.as_str()) != st.tool.as_deref()
                        || Some(p.when.as_str()) != st.when
                    {
                        return Err(bad("the pause answered is not the node's next pause".into()));
                    }
                    let yes = st.yes.unwrap_or(true);
                    if p.when == When::Before && !yes {
                        return Err(bad(
                            "a before pause answered no pauses the run for good".into()
                        ));
                    }
                    w.confirm(if yes { p.tool } else { None }, p.answer, yes);
                }
            }
            StepKind::Call => {
                if !w.pauses_left.is_empty() {
                    return Err(bad("a call before the node's pauses were answered".into()));
                }
                if w.left {
                    return Err(bad("a call after the node's batch ended".into()));
                }
                let n = w.node;
                let nd = &m.nodes[n];
                let t = st
                    .tool
                    .as_deref()
                    .and_then(|t| m.tool_ix(t))
                    .ok_or_else(|| bad("unknown tool".into()))?;
                if !nd.can_call(t) {
                    return Err(bad(format!(
                        "'{}' does not call '{}'",
                        nd.qid, m.tools[t].name
                    )));
                }
                if st.guarded != Some(nd.guarded()) {
                    return Err(bad(
                        "the call's guarded flag differs from the node's kind".into()
                    ));
                }
                let runs = !st.refused;
                if st.when == Some(When::Call.as_str()) && !nd.reviews_calls_of(t) {
                    return Err(bad(format!(
                        "'{}' does not review the calls of '{}'",
                        nd.qid, m.tools[t].name
                    )));
                }
                if st.standing && !(runs && nd.stands_for(t) && !w.l.standing[t]) {
                    return Err(bad(format!(
                        "a yes for the rest of the run to a call of '{}' that '{}' does not review with `standing`, or that did not run",
                        m.tools[t].name, nd.qid
                    )));
                }
                if st.yes.is_some_and(|yes| yes != runs) {
                    return Err(bad(
                        "the person's answer to the call differs from whether it ran".into(),
                    ));
                }
                let o = call_outcomes(m, &w.l, n, t);
                if (runs && !o.may_run) || (!runs && !o.may_refuse) {
                    return Err(if nd.guarded() {
                        ReplayError::GuardDiffers { step: i, tool: t }
                    } else {
                        bad("a plain call the node does not review cannot be refused".into())
                    });
                }
                if last {
                    return Ok(Some((t, runs)));
                }
                if runs {
                    // A standing yes holds from this call to the run's end (SPEC 3.1).
                    if st.standing {
                        w.l.standing[t] = true;
                        w.l.standing_clean[t] = true;
                    }
                    w.call(t);
                    // A hosted call (SPEC 2.2) is a batch of its own: the next sees it.
                    if !nd.calls_tools() {
                        w.commit();
                    }
                }
                w.made = true;
            }
            StepKind::Choose => {
                if !w.pauses_left.is_empty() {
                    return Err(bad("leaves before the node's pauses were answered".into()));
                }
                if m.nodes[w.node].calls_tools() && !w.made {
                    return Err(bad("leaves a tool node without a call".into()));
                }
                w.leave_start();
                let n = w.node;
                let to = st
                    .to
                    .as_deref()
                    .and_then(|t| m.node_ix(t))
                    .ok_or_else(|| bad("unknown destination".into()))?;
                // The edge the witness names, else a usable edge to `to` (one that counts no
                // `exit_after` first).
                let usable = |e: usize| {
                    let ed = &m.edges[e];
                    ed.from == n
                        && ed.to == to
                        && ed.guard.as_ref().is_none_or(|g| g.eval(&|f| w.l.flags[*f]))
                        && ed.exit_after.is_none_or(|(c, cap)| w.l.counters[c] < cap)
                };
                let edge = match st.edge {
                    Some(e) => (e < m.edges.len() && usable(e)).then_some(e),
                    None => m.out[n]
                        .iter()
                        .copied()
                        .filter(|&e| usable(e))
                        .min_by_key(|&e| m.edges[e].exit_after.is_some()),
                };
                let e = edge.ok_or_else(|| {
                    bad(format!(
                        "no usable edge from '{}' to '{}'",
                        m.nodes[n].qid, m.nodes[to].qid
                    ))
                })?;
                if let Some((c, _)) = m.edges[e].exit_after {
                    w.l.counters[c] += 1;
                }
                w.expect_enter = Some(to);
                if m.top_ends.contains(&to) {
                    w.expect_enter = None;
                    w.node = to;
                    // SPEC 3.1: the top end's own flags apply as the turn ends, before the
                    // turn's reset.
                    w.own_flags(to);
                }
            }
            StepKind::Flow | StepKind::Fact => {
                return Err(bad("a rulebook step is not a step of the graph".into()));
            }
            StepKind::TurnEnd => {
                if !m.top_ends.contains(&w.node) {
                    return Err(bad("a turn ends away from the top end".into()));
                }
                w.turn += 1;
                if w.turn > m.session_steps {
                    return Err(bad("more turns than session_steps".into()));
                }
                w.new_turn();
            }
        }
        Ok(None)
    }

    fn confirm(&mut self, tool: Option<ToolIx>, answer: Option<usize>, yes: bool) {
        if let Some(t) = tool {
            self.l.confirmed[t] = true;
            self.l.clean[t] = true;
        }
        if let Some(a) = answer {
            self.l.flags[a] = yes;
        }
    }

    fn call(&mut self, t: ToolIx) {
        let m = self.m;
        let d = &m.tools[t];
        let node = &m.nodes[self.node];
        // A reviewed call the person let run is confirmed (SPEC 12.2).
        let confirmed =
            node.guarded() || node.reviews_calls_of(t) || self.l.confirmed[t] || self.l.standing[t];
        self.l.count[t] += 1;
        if node.guarded() {
            self.l.count_seen[t] += 1;
            self.pending_seen = true;
        }
        if d.is_write() {
            if d.irreversible && !confirmed {
                self.l.irrev_unconf = true;
            }
            self.l.wrote = true;
            self.l.ran_at[t] = Some(self.node);
        }
        self.pending_ran.push(t);
        if d.reads_outside {
            self.pending_taint.insert(m.nodes[self.node].region);
        }
    }

    /// The batch ends and the node is left: commit, clears, sets, remote taint (once).
    fn leave_start(&mut self) {
        if self.left {
            return;
        }
        self.left = true;
        self.commit();
        self.own_flags(self.node);
        let nd = &self.m.nodes[self.node];
        if nd.taints_on_leave {
            self.l.tainted.insert(nd.region);
            self.l.clean.clear();
            self.l.standing_clean.clear();
        }
    }

    /// The batch ends: its `ran`, taint and spent confirmations take effect (and for a guarded
    /// batch their seen twins).
    fn commit(&mut self) {
        let seen = std::mem::take(&mut self.pending_seen);
        for t in std::mem::take(&mut self.pending_ran) {
            self.l.ran[t] = true;
            self.l.ran_seen[t] |= seen;
            self.l.confirmed[t] = false;
            self.l.clean[t] = false;
        }
        if !self.pending_taint.is_empty() {
            self.l.tainted_seen |= seen;
            self.l
                .tainted
                .extend(std::mem::take(&mut self.pending_taint));
            self.l.clean.clear();
            self.l.standing_clean.clear();
        }
    }

    /// Node `n`'s own `clears`, then its `sets`.
    fn own_flags(&mut self, n: NodeIx) {
        let nd = &self.m.nodes[n];
        for &f in &nd.clears {
            self.l.flags[f] = false;
        }
        for &f in &nd.sets {
            self.l.flags[f] = true;
        }
    }

    fn new_turn(&mut self) {
        let m = self.m;
        for (i, (_, scope)) in m.flags.iter().enumerate() {
            if *scope == FlagScope::Turn {
                self.l.flags[i] = false;
            }
        }
        self.l.counters.iter_mut().for_each(|c| *c = 0);
        let per_turn = |t: ToolIx| {
            m.tools[t]
                .order
                .at_most
                .as_ref()
                .is_some_and(|a| a.per_turn)
        };
        self.l.count.reset_where(per_turn);
        self.l.count_seen.reset_where(per_turn);
        self.l.confirmed.clear();
        self.l.clean.clear();
        // A standing approval ends with the run (SPEC 3.1).
        self.l.standing.clear();
        self.l.standing_clean.clear();
        self.l.irrev_unconf = false;
        self.l.wrote = false;
        self.l.ran_at.clear();
        self.steps = 0;
        self.node = m.entry;
        self.expect_enter = Some(m.entry);
        self.input_taint();
    }

    /// Checks that the call of `u` (running or refused) breaks `ob` as claimed.
    fn check(
        &self,
        ob: Obligation,
        tool: ToolIx,
        node: NodeIx,
        class: Class,
        u: ToolIx,
        runs: bool,
    ) -> Result<(), ReplayError> {
        let m = self.m;
        let l = &self.l;
        let n = self.node;
        let plain = !m.nodes[n].guarded();
        // A call the person reviewed and let run is confirmed, on clean content (SPEC 12.2).
        // A call made while a standing approval of its tool holds is not asked (SPEC 3.1
        // "Standing approvals"): it runs on that approval, clean only until new taint.
        let reviewed = m.nodes[n].reviews_calls_of(u) && !l.standing[u];
        // A standing approval counts as confirmed, and on clean content until new taint (SPEC
        // 3.1 "Standing approvals").
        let confirmed = l.confirmed[u] || l.standing[u];
        let clean = l.clean[u] || l.standing_clean[u];
        let no = |why: &str| Err(ReplayError::NoViolation(why.to_string()));
        if !runs {
            return no("the last call runs nothing (refused or declined), so it breaks nothing");
        }
        if ob != Obligation::O8 && (u != tool || n != node) {
            return no("the last call is not the tool and node claimed");
        }
        let o = &m.tools[u].order;
        let ran = |name: &str| m.tool_ix(name).is_some_and(|t| l.ran[t]);
        let ok = match ob {
            Obligation::O1 => plain,
            Obligation::O2 => {
                plain && !reviewed && m.interrupted[u] && m.tools[u].is_write() && !confirmed
            }
            Obligation::O3 => plain && o.after.iter().any(|a| !ran(&a.name)),
            // A guarded call breaks O4-O6 where the latches say more than the guard saw (SPEC
            // 3.1 "The guard's view").
            Obligation::O4 => o.not_after.iter().any(|b| match b {
                NotAfter::Tool(x) => {
                    ran(&x.name) && (plain || m.tool_ix(&x.name).is_some_and(|t| !l.ran_seen[t]))
                }
                NotAfter::Untrusted => !l.tainted.is_empty() && (plain || !l.tainted_seen),
            }),
            Obligation::O5 => o
                .at_most
                .as_ref()
                .is_some_and(|a| l.count[u] >= a.count && (plain || l.count_seen[u] < a.count)),
            Obligation::O6 => {
                let region = m.nodes[n].region;
                let got = if l.tainted.iter().all(|&r| r == region) {
                    Class::Local
                } else {
                    Class::Cascade
                };
                (plain || !l.tainted_seen)
                    && m.write_or_privileged(u)
                    && !l.tainted.is_empty()
                    && !clean
                    && !reviewed
                    && got == class
            }
            Obligation::O7 => runs && u == tool && l.irrev_unconf,
            Obligation::O8 => {
                runs && ((u == tool && n == node && l.wrote)
                    || (m.tools[u].is_write() && l.ran_at[tool] == Some(node)))
            }
            Obligation::O9 => runs && !reviewed && !confirmed && m.confidential().any(|c| l.ran[c]),
            Obligation::O10 => runs && !reviewed && !l.tainted.is_empty() && !clean,
        };
        if ok {
            Ok(())
        } else {
            no(&format!("{} ({})", ob.as_str(), ob.describe()))
        }
    }
}
