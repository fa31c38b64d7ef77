//! The unrolling (SPEC 9 `z3`): SPEC 3's transition system as frames of Z3 variables, asserted
//! one turn at a time on one incremental solver.
//!
//! A **frame** is one node visit: entering the node (its step and its `before`/`inside` pauses),
//! its batch of calls, and leaving it along one edge (commit, `clears`/`sets`, `after` pauses, a
//! remote node's taint). Each turn has [`Plan::frames`] frames, enough for any run of at most
//! `recursion_limit` steps; a run that reaches the top end idles in the `DONE` mode to the turn's
//! last frame, and a route may be abandoned (`DEAD`) at any frame, so a violation at frame i needs
//! only frames up to i to be a legal route. A frame's variables are:
//!
//! - `nd`: the node (one Boolean per node the frame can be at, plus `DONE` and `DEAD`, exactly one
//!   true), `st`: node steps in the run after entering it (a thermometer, only where subgraphs
//!   make steps differ from frames), `ed`: the edge it leaves by (one Boolean per edge of the
//!   frame's list, plus "none");
//! - the state on arrival: flags, `exit_after` counters, and the latches the slice keeps (`ran`,
//!   `count`, taint bits, `confirmed`, `confirmed_clean`, `irreversible_unconfirmed`, `wrote`, the
//!   node where the unrecoverable tool last ran);
//! - the choices: each `inside` pause's answer, and per counted tool the number of its calls in
//!   the batch that run (`x`) and whether one more ran nothing (`y`: refused by the tool check,
//!   or declined by the person at a guarded write or a call the node reviews, SPEC 12.2).
//!
//! Everything is propositional (see [`super::bits`]). Batch semantics follow SPEC 3.1 exactly:
//! calls see the batch's starting `ran`, taint and `confirmed`; `count` and the per-run write
//! latches change per call, so a violation inside a batch is a condition on the numbers of calls
//! (see [`Unrolling::part`]); a guarded call runs only when its tool check (order rules and the
//! rulebook's gate) allows it at that call (for the tools the plan decides exactly; for the others
//! the check may allow or refuse), and a refused call changes nothing.

use super::bits::{width, Code, OneHot, Therm};
use super::plan::{Part, Plan};
use crate::engine::Class;
use crate::findings::Obligation;
use crate::input::ir::{FlagScope, NotAfter, When};
use crate::model::obligation::Judges;
use crate::model::{CheckLit, FlatGuard, FlatModel, FlatNode, NodeIx, ToolIx};
use z3::ast::Bool;
use z3::{Params, Solver};

fn t() -> Bool {
    Bool::from_bool(true)
}

fn f() -> Bool {
    Bool::from_bool(false)
}

fn or(v: &[Bool]) -> Bool {
    match v.len() {
        0 => f(),
        1 => v[0].clone(),
        _ => Bool::or(v),
    }
}

fn and(v: &[Bool]) -> Bool {
    match v.len() {
        0 => t(),
        1 => v[0].clone(),
        _ => Bool::and(v),
    }
}

/// The state on arriving at a frame (before its node is entered).
#[derive(Clone)]
pub(crate) struct State {
    /// State flags.
    pub(crate) flags: Vec<Bool>,
    /// `exit_after` counters.
    pub(crate) ctr: Vec<Therm>,
    /// `ran[t]`, for tools the slice keeps.
    pub(crate) ran: Vec<Option<Bool>>,
    /// `count[t]` (saturating at its cap), for tools the slice keeps.
    pub(crate) cnt: Vec<Option<Therm>>,
    /// Taint bits.
    pub(crate) taint: Vec<Bool>,
    /// `confirmed[t]`.
    pub(crate) conf: Vec<Option<Bool>>,
    /// `confirmed_clean[t]`.
    pub(crate) clean: Vec<Option<Bool>>,
    /// `irreversible_unconfirmed`.
    pub(crate) irrev: Bool,
    /// `wrote`.
    pub(crate) wrote: Bool,
    /// 1 + the node where the unrecoverable tool last ran in this run, 0 for none.
    pub(crate) unrec: Code,
    /// `ran_seen[t]` (SPEC 3.1 "The guard's view"), for tools the slice keeps the twin of.
    pub(crate) ran_seen: Vec<Option<Bool>>,
    /// `count_seen[t]` (saturating at its cap), for tools the slice keeps the twin of.
    pub(crate) cnt_seen: Vec<Option<Therm>>,
    /// `tainted_seen`, where the slice keeps it.
    pub(crate) taint_seen: Option<Bool>,
    /// A standing approval of t (SPEC 3.1 "Standing approvals"), where the slice keeps it.
    pub(crate) stand: Vec<Option<Bool>>,
    /// The standing approval on clean content, where the slice keeps it.
    pub(crate) sclean: Vec<Option<Bool>>,
}

/// One frame: a node visit.
pub(crate) struct Frame {
    /// Turn (1-based).
    pub(crate) turn: u32,
    /// Frame index within its turn.
    pub(crate) offset: usize,
    /// The node, or `DONE`/`DEAD`.
    pub(crate) nd: OneHot,
    /// Node steps in the run after entering the node (`None`: the plan's fixed steps).
    pub(crate) st: Option<Therm>,
    /// State on arrival.
    pub(crate) s: State,
    /// `inside` answers, by the node's inside pause index.
    pub(crate) ans: Vec<Bool>,
    /// Per tool: running calls in the batch (counted tools only).
    pub(crate) x: Vec<Option<Therm>>,
    /// Per tool: one more call refused by the check or the person.
    pub(crate) y: Vec<Option<Bool>>,
    /// Per tool: one of its running calls got a yes for the rest of the run (SPEC 3.1
    /// "Standing approvals"), where a node may give one and the slice keeps it.
    pub(crate) z: Vec<Option<Bool>>,
    /// Per tool with `z`: at a model node, its standing yes came after the visit's reads (its
    /// hosted calls are made one after another, in any order), so they do not clear it.
    pub(crate) zlast: Vec<Option<Bool>>,
    /// The edge left by: an index into `edges`, `edges.len()` for none.
    pub(crate) ed: OneHot,
    /// The edges this frame may leave by.
    pub(crate) edges: Vec<usize>,
    /// Per node: `nd == node`, for nodes allowed at this offset.
    pub(crate) at: Vec<Option<Bool>>,
    /// `confirmed` after entering (the batch reads it).
    pub(crate) conf_e: Vec<Option<Bool>>,
    /// `confirmed_clean` after entering.
    pub(crate) clean_e: Vec<Option<Bool>>,
    /// Flags after entering.
    pub(crate) flags_e: Vec<Bool>,
}

impl Frame {
    /// Node steps at this frame are at most `j`.
    pub(crate) fn steps_at_most(&self, p: &Plan, j: u32) -> Bool {
        match &self.st {
            Some(st) => st.at_least(j as usize + 1).not(),
            None => Bool::from_bool(p.fixed_steps(self.offset) <= j),
        }
    }

    /// Node steps at this frame in `model`.
    pub(crate) fn steps_in(&self, p: &Plan, model: &z3::Model) -> u32 {
        match &self.st {
            Some(st) => st.value(model) as u32,
            None => p.fixed_steps(self.offset),
        }
    }

    /// `x[u] >= k` (false for a tool not counted).
    pub(crate) fn calls_at_least(&self, u: ToolIx, k: usize) -> Bool {
        match &self.x[u] {
            Some(x) => x.at_least(k),
            None => f(),
        }
    }

    /// `nd == n`, false where `n` cannot be at this offset.
    pub(crate) fn at(&self, n: NodeIx) -> Bool {
        self.at[n].clone().unwrap_or_else(f)
    }

    /// True when some taint bit is set on arrival.
    pub(crate) fn tainted(&self) -> Bool {
        or(&self.s.taint)
    }
}

/// The unrolling of one instance on one solver.
pub(crate) struct Unrolling<'a> {
    /// The model.
    pub(crate) m: &'a FlatModel,
    /// The instance's plan.
    pub(crate) p: &'a Plan,
    /// The solver, every frame's transition asserted.
    pub(crate) solver: Solver,
    /// Frames so far, turn after turn.
    pub(crate) frames: Vec<Frame>,
    /// Node code width.
    pub(crate) wn: usize,
    /// True: the first turn starts from any state a turn can start from (k-induction).
    arbitrary: bool,
    /// Per tool: the largest count kept (`at_most` N; 0 for tools not counted).
    cap: Vec<usize>,
}

impl<'a> Unrolling<'a> {
    /// An empty unrolling. Its queries are bounded by Z3's resource limit, set per query
    /// ([`super::budget::Budget::ask`]); `timeout_ms`, when given, is a wall-clock safety net a
    /// query.
    pub(crate) fn new(
        m: &'a FlatModel,
        p: &'a Plan,
        timeout_ms: Option<u32>,
        arbitrary: bool,
    ) -> Self {
        // The formula is propositional with "exactly one" (pseudo-Boolean) constraints: the
        // finite-domain solver answers it with Z3's SAT core. (The QF_UF-configured solver was a
        // third faster but mishandles the pseudo-Boolean constraints: a route it should have
        // found, it refuted; tests/it/engines.rs keeps that case.)
        let solver = Solver::new_for_logic("QF_FD").unwrap_or_default();
        if let Some(ms) = timeout_ms {
            let mut params = Params::new();
            params.set_u32("timeout", ms.max(1));
            solver.set_params(&params);
        }
        let n = m.nodes.len() as u64;
        let mut cap = vec![0usize; m.tools.len()];
        for &(u, c, _) in &p.slice.count {
            cap[u] = c as usize;
        }
        Unrolling {
            m,
            p,
            solver,
            frames: Vec::new(),
            wn: width(n + 1),
            arbitrary,
            cap,
        }
    }

    /// The code of the idle mode after a turn's end.
    pub(crate) fn done(&self) -> u64 {
        self.m.nodes.len() as u64
    }

    /// The code of an abandoned route.
    pub(crate) fn dead(&self) -> u64 {
        self.m.nodes.len() as u64 + 1
    }

    /// Number of turns unrolled.
    pub(crate) fn turns(&self) -> u32 {
        (self.frames.len() / self.p.frames) as u32
    }

    /// The frame indices of turn `turn` (1-based).
    pub(crate) fn turn_frames(&self, turn: u32) -> std::ops::Range<usize> {
        let f = self.p.frames;
        (turn as usize - 1) * f..turn as usize * f
    }

    /// Appends one turn's frames and asserts their transitions.
    pub(crate) fn add_turn(&mut self) {
        let turn = self.turns() + 1;
        for offset in 0..self.p.frames {
            let fr = self.frame(turn, offset);
            let i = self.frames.len();
            if offset == 0 {
                self.link_turn_start(&fr, i);
            } else {
                self.link(i - 1, &fr);
            }
            self.frames.push(fr);
        }
    }

    fn fresh_state(&self) -> State {
        let m = self.m;
        let p = self.p;
        let nt = m.tools.len();
        let pick = |keep: &[ToolIx], name: &str| -> Vec<Option<Bool>> {
            (0..nt)
                .map(|u| keep.contains(&u).then(|| Bool::fresh_const(name)))
                .collect()
        };
        let mut cnt = vec![None; nt];
        for &(u, _, _) in &p.slice.count {
            cnt[u] = Some(self.therm("cnt", self.cap[u]));
        }
        let mut cnt_seen = vec![None; nt];
        for &(u, c, _) in &p.slice.count_seen {
            cnt_seen[u] = Some(self.therm("cnt_seen", c as usize));
        }
        State {
            flags: (0..m.flags.len())
                .map(|_| Bool::fresh_const("flag"))
                .collect(),
            ctr: p
                .counter_caps
                .iter()
                .map(|&cap| self.therm("ctr", cap as usize))
                .collect(),
            ran: pick(&p.slice.ran, "ran"),
            cnt,
            taint: (0..p.taint_bits)
                .map(|_| Bool::fresh_const("taint"))
                .collect(),
            conf: pick(&p.slice.confirmed, "conf"),
            clean: pick(&p.slice.conf_clean, "clean"),
            irrev: Bool::fresh_const("irrev"),
            wrote: Bool::fresh_const("wrote"),
            unrec: Code::fresh("unrec", self.wn),
            ran_seen: pick(&p.slice.ran_seen, "ran_seen"),
            cnt_seen,
            taint_seen: p
                .slice
                .tainted_seen
                .then(|| Bool::fresh_const("taint_seen")),
            stand: pick(&p.slice.standing, "stand"),
            sclean: pick(&p.slice.standing_clean, "sclean"),
        }
    }

    /// A fresh count up to `max`, kept a thermometer.
    fn therm(&self, prefix: &str, max: usize) -> Therm {
        let (t, mono) = Therm::fresh(prefix, max);
        self.solver.assert(&mono);
        t
    }

    /// A new frame's variables and the constraints within it (entering, the batch).
    fn frame(&self, turn: u32, offset: usize) -> Frame {
        let m = self.m;
        let p = self.p;
        let nt = m.tools.len();
        let n_all = m.nodes.len();
        let (nd, one) = OneHot::fresh("nd", n_all + 2, &|v| v >= n_all || p.allowed(v, offset));
        self.solver.assert(&one);
        let st = p
            .counted_steps
            .then(|| self.therm("st", m.recursion_limit as usize + 1));
        let s = self.fresh_state();
        let ans: Vec<Bool> = (0..p.inside_max)
            .map(|_| Bool::fresh_const("ans"))
            .collect();
        let at: Vec<Option<Bool>> = (0..m.nodes.len()).map(|n| nd.var(n).cloned()).collect();
        let mut x = vec![None; nt];
        let mut y = vec![None; nt];
        let mut z = vec![None; nt];
        let mut zlast = vec![None; nt];
        for u in 0..nt {
            if p.xcap[u] == 0 {
                continue;
            }
            if p.slice.standing.contains(&u)
                && p.binders[u].iter().any(|&n| m.nodes[n].stands_for(u))
            {
                z[u] = Some(Bool::fresh_const("z"));
                zlast[u] = Some(Bool::fresh_const("zlast"));
            }
            x[u] = Some(self.therm("x", p.xcap[u] as usize));
            // A call can be refused where the check or a person decides it.
            let decided = p.binders[u]
                .iter()
                .any(|&n| m.nodes[n].guarded() || m.nodes[n].reviews_calls_of(u));
            if decided {
                y[u] = Some(Bool::fresh_const("y"));
            }
        }
        // The edges a visit at this offset may leave by.
        let edges: Vec<usize> = (0..m.edges.len())
            .filter(|&e| {
                let ed = &m.edges[e];
                p.allowed(ed.from, offset)
                    && (m.top_ends.contains(&ed.to) || p.allowed(ed.to, offset + 1))
            })
            .collect();
        let (ed, one) = OneHot::fresh("ed", edges.len() + 1, &|_| true);
        self.solver.assert(&one);
        // Entering: `before` confirms, `inside` answers.
        let mut conf_e = s.conf.clone();
        let mut clean_e = s.clean.clone();
        let mut flags_e = s.flags.clone();
        for (n, a) in at.iter().enumerate() {
            let Some(a) = a else { continue };
            let mut inside = 0;
            for pause in &m.nodes[n].on_enter {
                let yes = if pause.when == When::Inside {
                    let v = ans[inside].clone();
                    inside += 1;
                    v
                } else {
                    t()
                };
                if let Some(u) = pause.tool {
                    let c = Bool::and(&[a, &yes]);
                    if let Some(v) = &conf_e[u] {
                        conf_e[u] = Some(Bool::or(&[v, &c]));
                    }
                    if let Some(v) = &clean_e[u] {
                        clean_e[u] = Some(Bool::or(&[v, &c]));
                    }
                }
                if let Some(fl) = pause.answer {
                    flags_e[fl] = a.ite(&yes, &flags_e[fl]);
                }
            }
        }
        let fr = Frame {
            turn,
            offset,
            nd,
            st,
            s,
            ans,
            x,
            y,
            z,
            zlast,
            ed,
            edges,
            at,
            conf_e,
            clean_e,
            flags_e,
        };
        self.assert_frame(&fr);
        fr
    }

    /// Constraints within a frame: its node's domain, the step limit, and the batch.
    fn assert_frame(&self, fr: &Frame) {
        let m = self.m;
        let p = self.p;
        let slv = &self.solver;
        let modes: Vec<Bool> = fr.at.iter().flatten().cloned().collect();
        let run = or(&modes);
        if let Some(st) = &fr.st {
            slv.assert(run.implies(st.at_least(m.recursion_limit as usize + 1).not()));
        }
        for u in 0..m.tools.len() {
            if fr.x[u].is_none() {
                continue;
            }
            let nz = fr.calls_at_least(u, 1);
            let plain_at = self.binds_at(fr, u, false);
            let guard_at = self.binds_at(fr, u, true);
            // A node reviewing `u`'s calls: the person may decline any of them (SPEC 12.2).
            let review_at = self.reviews_at(fr, u);
            slv.assert(nz.implies(Bool::or(&[&plain_at, &guard_at])));
            // A standing yes is a yes to a running call at a node that may give one, while no
            // approval of `u` holds (a held one is not asked for again).
            if let Some(z) = &fr.z[u] {
                let free = fr.s.stand[u].as_ref().map_or_else(t, |h| h.not());
                let here = self.binder_at(fr, u, &|n| n.stands_for(u));
                slv.assert(z.implies(Bool::and(&[&nz, &here, &free])));
            }
            // A guarded call runs only while its tool check (order rules and gate) allows it
            // (where the plan decides its guard; elsewhere the check may allow or refuse it).
            let exact = p.decides_guard(u);
            if exact {
                let ok = self.order_static(fr, u);
                let room = self.count_room(fr, u);
                slv.assert(Bool::and(&[&guard_at, &nz]).implies(Bool::and(&[&ok, &room.0])));
                if let Some(y) = &fr.y[u] {
                    let can_refuse = if m.tools[u].is_write() {
                        t()
                    } else {
                        Bool::or(&[&ok.not(), &room.1])
                    };
                    slv.assert(y.implies(Bool::or(&[
                        &Bool::and(&[&guard_at, &can_refuse]),
                        &review_at,
                    ])));
                }
            } else if let Some(y) = &fr.y[u] {
                slv.assert(y.implies(Bool::or(&[&guard_at, &review_at])));
            }
        }
        // A batch is never empty: where every bound tool is counted, one is called.
        for (n, a) in fr.at.iter().enumerate() {
            let Some(a) = a else { continue };
            let node = &m.nodes[n];
            if !node.calls_tools() || node.tools.iter().any(|&u| p.xcap[u] == 0) {
                continue;
            }
            let some: Vec<Bool> = node
                .tools
                .iter()
                .flat_map(|&u| {
                    let mut v = vec![fr.calls_at_least(u, 1)];
                    if node.guarded() || node.reviews_calls_of(u) {
                        if let Some(y) = &fr.y[u] {
                            v.push(y.clone());
                        }
                    }
                    v
                })
                .collect();
            slv.assert(a.implies(or(&some)));
        }
    }

    /// True when the frame is at a node binding `u` that is guarded (`guarded`) or plain.
    pub(crate) fn binds_at(&self, fr: &Frame, u: ToolIx, guarded: bool) -> Bool {
        self.binder_at(fr, u, &|n| n.guarded() == guarded)
    }

    /// True when the frame is at a node binding `u` that reviews its calls (SPEC 12.2).
    pub(crate) fn reviews_at(&self, fr: &Frame, u: ToolIx) -> Bool {
        self.binder_at(fr, u, &|n| n.reviews_calls_of(u))
    }

    /// True when the frame is at a node binding `u` whose calls of `u` run unconfirmed: plain
    /// and not reviewing them.
    fn unconfirmed_at(&self, fr: &Frame, u: ToolIx) -> Bool {
        self.binder_at(fr, u, &|n| !n.guarded() && !n.reviews_calls_of(u))
    }

    /// `confirmed[u]` as the batch reads it, or a standing approval of `u` (SPEC 3.1 "Standing
    /// approvals"); `None` where neither is kept (read as false). Where no standing approval is
    /// kept it is `confirmed[u]` itself, so a graph without one is encoded as before.
    pub(crate) fn confirmed_at(&self, fr: &Frame, u: ToolIx) -> Option<Bool> {
        either(&fr.conf_e[u], &fr.s.stand[u])
    }

    /// `confirmed_clean[u]` as the batch reads it, or a standing approval of `u` on clean
    /// content, as [`Unrolling::confirmed_at`].
    pub(crate) fn clean_at(&self, fr: &Frame, u: ToolIx) -> Option<Bool> {
        either(&fr.clean_e[u], &fr.s.sclean[u])
    }

    /// Where `node` reviews `u`'s calls, the condition that a call there is not asked: a
    /// standing approval of `u` holds on arrival (SPEC 3.1), so it runs on that approval.
    /// `None` where every call there is unasked (no review).
    fn unasked(&self, fr: &Frame, node: NodeIx, u: ToolIx) -> Option<Bool> {
        self.m.nodes[node]
            .reviews_calls_of(u)
            .then(|| fr.s.stand[u].clone().unwrap_or_else(f))
    }

    /// True when the frame is at a node binding `u` for which `which` holds.
    fn binder_at(&self, fr: &Frame, u: ToolIx, which: &dyn Fn(&FlatNode) -> bool) -> Bool {
        let v: Vec<Bool> = self.p.binders[u]
            .iter()
            .filter(|&&n| which(&self.m.nodes[n]))
            .filter_map(|&n| fr.at[n].clone())
            .collect();
        or(&v)
    }

    /// `u`'s tool check (SPEC 3) holds at the batch's start, but for its `at_most` rule, which
    /// `Unrolling::count_room` reads call by call: the `after` and `not_after` rules and the
    /// rulebook's gate. A latch the plan does not keep is read as allowing.
    pub(crate) fn order_static(&self, fr: &Frame, u: ToolIx) -> Bool {
        // The check reads what the guard saw (SPEC 3.1 "The guard's view").
        let ran = |x: ToolIx| self.seen_ran(&fr.s, x);
        self.p.checks[u].eval(
            &|lit| match lit {
                CheckLit::Ran(x) => ran(x).unwrap_or_else(t),
                CheckLit::NotRan(x) => ran(x).map(|r| r.not()).unwrap_or_else(t),
                CheckLit::Untainted => self.seen_taint(fr).map(|v| v.not()).unwrap_or_else(t),
                CheckLit::CountBelow(_) => t(),
            },
            &|v| and(&v.collect::<Vec<_>>()),
            &|v| or(&v.collect::<Vec<_>>()),
        )
    }

    /// For `u`'s `at_most`: (every counted call had room: `count + x <= N`, the next call would
    /// not: `count + x >= N`); (true, false) without the rule.
    fn count_room(&self, fr: &Frame, u: ToolIx) -> (Bool, Bool) {
        let (Some(am), Some(c), Some(x)) = (
            &self.m.tools[u].order.at_most,
            self.seen_cnt(&fr.s, u),
            &fr.x[u],
        ) else {
            return (t(), f());
        };
        let n = am.count as usize;
        let sum = c.add(x, c.max() + x.max());
        (sum.at_least(n + 1).not(), sum.at_least(n))
    }

    /// `ran_seen[x]` as the tool check reads it (SPEC 3.1 "The guard's view"): its twin where `x`
    /// can run unseen, else `ran[x]`, which it equals; `None` where neither is kept.
    fn seen_ran(&self, s: &State, x: ToolIx) -> Option<Bool> {
        if self.m.unseen.tool(x) {
            s.ran_seen[x].clone()
        } else {
            s.ran[x].clone()
        }
    }

    /// `count_seen[u]`, as [`Unrolling::seen_ran`] reads `ran_seen`.
    fn seen_cnt<'s>(&self, s: &'s State, u: ToolIx) -> Option<&'s Therm> {
        if self.m.unseen.tool(u) {
            s.cnt_seen[u].as_ref()
        } else {
            s.cnt[u].as_ref()
        }
    }

    /// `tainted_seen` on arrival at `fr`, as [`Unrolling::seen_ran`] reads `ran_seen`.
    fn seen_taint(&self, fr: &Frame) -> Option<Bool> {
        if self.m.unseen.taint {
            fr.s.taint_seen.clone()
        } else {
            (self.p.taint_bits > 0).then(|| fr.tainted())
        }
    }

    /// The tool check lets one more guarded call of `u` run at `fr`'s batch start, where the
    /// plan decides its guard (elsewhere the check may allow it: an over-approximation that
    /// refinement narrows).
    fn guard_lets(&self, fr: &Frame, u: ToolIx) -> Bool {
        if !self.p.decides_guard(u) {
            return t();
        }
        let mut c = vec![self.order_static(fr, u)];
        if let (Some(am), Some(cs)) = (&self.m.tools[u].order.at_most, self.seen_cnt(&fr.s, u)) {
            c.push(cs.at_least(am.count as usize).not());
        }
        and(&c)
    }

    /// The turn's first frame: at the entry, from the previous turn's `DONE` state (or the first
    /// turn's start).
    fn link_turn_start(&self, fr: &Frame, i: usize) {
        let m = self.m;
        let slv = &self.solver;
        slv.assert(fr.nd.is(m.entry as u64));
        let c = u64::from(m.nodes[m.entry].costs_step());
        if let Some(st) = &fr.st {
            slv.assert(st.eq(&Therm::constant(c as usize, st.max())));
        }
        if i == 0 {
            slv.assert(self.start_state(&fr.s));
        } else {
            let prev = &self.frames[i - 1];
            slv.assert(prev.nd.is(self.done()));
            slv.assert(state_eq(&prev.s, &fr.s));
        }
    }

    /// The first turn's start: every latch clear, or (k-induction) any state a turn can start
    /// from: per-turn latches clear, session latches free.
    fn start_state(&self, s: &State) -> Bool {
        let mut c = Vec::new();
        for (i, (_, scope)) in self.m.flags.iter().enumerate() {
            if !self.arbitrary || *scope == FlagScope::Turn {
                c.push(s.flags[i].not());
            }
        }
        for x in &s.ctr {
            c.push(x.at_least(1).not());
        }
        for (u, cnt) in s.cnt.iter().enumerate() {
            let Some(cnt) = cnt else { continue };
            let per_turn = self.p.slice.count.iter().any(|&(v, _, pt)| v == u && pt);
            if !self.arbitrary || per_turn {
                c.push(cnt.at_least(1).not());
            } else if let Some(am) = &self.m.tools[u].order.at_most {
                c.push(cnt.at_least(am.count as usize + 1).not());
            }
        }
        let input = self.input_taint_bit();
        if !self.arbitrary {
            c.extend(s.ran.iter().flatten().map(|r| r.not()));
            c.extend(
                s.taint
                    .iter()
                    .enumerate()
                    .filter(|(b, _)| Some(*b) != input)
                    .map(|(_, r)| r.not()),
            );
        }
        if let Some(b) = input {
            c.push(s.taint[b].clone());
        }
        // The seen twins (SPEC 3.1): clear, per-turn counts at every turn start; the guard is
        // told of the turn's outside input.
        for (u, cnt) in s.cnt_seen.iter().enumerate() {
            let Some(cnt) = cnt else { continue };
            let per_turn = self
                .p
                .slice
                .count_seen
                .iter()
                .any(|&(v, _, pt)| v == u && pt);
            if !self.arbitrary || per_turn {
                c.push(cnt.at_least(1).not());
            }
        }
        if !self.arbitrary {
            c.extend(s.ran_seen.iter().flatten().map(|r| r.not()));
        }
        if let Some(ts) = &s.taint_seen {
            if self.m.input_taint.is_some() {
                c.push(ts.clone());
            } else if !self.arbitrary {
                c.push(ts.not());
            }
        }
        c.extend(s.conf.iter().flatten().map(|r| r.not()));
        c.extend(s.clean.iter().flatten().map(|r| r.not()));
        c.extend(s.stand.iter().chain(&s.sclean).flatten().map(|r| r.not()));
        c.push(s.irrev.not());
        c.push(s.wrote.not());
        c.push(s.unrec.is(0));
        and(&c)
    }

    // Tool-indexed vectors (calls, latches, confirmations) are read side by side: indexing by tool
    // reads more plainly than zipping five of them.
    #[allow(clippy::needless_range_loop)]
    /// Frame `i` to the next frame `nx` of the same turn: the batch's effects, leaving along the
    /// chosen edge, and the turn's end.
    fn link(&self, i: usize, nx: &Frame) {
        let m = self.m;
        let p = self.p;
        let slv = &self.solver;
        let fr = &self.frames[i];
        let nt = m.tools.len();
        let is_done = fr.nd.is(self.done());
        let is_dead = fr.nd.is(self.dead());
        let ran_call: Vec<Bool> = (0..nt).map(|u| fr.calls_at_least(u, 1)).collect();
        // The batch.
        let mut s = fr.s.clone();
        for (u, cnt) in s.cnt.iter_mut().enumerate() {
            let (Some(c), Some(x)) = (cnt.as_ref(), &fr.x[u]) else {
                continue;
            };
            let cap = p
                .slice
                .count
                .iter()
                .find(|e| e.0 == u)
                .map(|e| e.1)
                .unwrap_or(0);
            *cnt = Some(c.add(x, cap as usize));
        }
        // What the guard sees (SPEC 3.1 "The guard's view"): its own calls, committed with the
        // batch as `ran` and taint are; its counts per call.
        let guard_at: Vec<Bool> = (0..nt)
            .map(|u| {
                if fr.x[u].is_some() {
                    self.binds_at(fr, u, true)
                } else {
                    f()
                }
            })
            .collect();
        for &(u, cap, _) in &p.slice.count_seen {
            let (Some(c), Some(x)) = (s.cnt_seen[u].as_ref(), &fr.x[u]) else {
                continue;
            };
            s.cnt_seen[u] = Some(Therm::ite(&guard_at[u], &c.add(x, cap as usize), c));
        }
        for u in 0..nt {
            if let Some(r) = &s.ran_seen[u] {
                s.ran_seen[u] = Some(Bool::or(&[r, &Bool::and(&[&ran_call[u], &guard_at[u]])]));
            }
        }
        if let Some(ts) = &s.taint_seen {
            let mut v = vec![ts.clone()];
            v.extend(
                (0..nt)
                    .filter(|&u| m.tools[u].reads_outside)
                    .map(|u| Bool::and(&[&ran_call[u], &guard_at[u]])),
            );
            s.taint_seen = Some(or(&v));
        }
        if p.slice.wrote {
            let mut w = vec![s.wrote.clone()];
            w.extend(
                (0..nt)
                    .filter(|&u| m.tools[u].is_write())
                    .map(|u| ran_call[u].clone()),
            );
            s.wrote = or(&w);
        }
        if p.slice.irrev_unconf {
            let mut w = vec![s.irrev.clone()];
            for u in 0..nt {
                let d = &m.tools[u];
                if d.is_write() && d.irreversible && fr.x[u].is_some() {
                    let confirmed = self.confirmed_at(fr, u).unwrap_or_else(f);
                    w.push(Bool::and(&[
                        &self.unconfirmed_at(fr, u),
                        &ran_call[u],
                        &confirmed.not(),
                    ]));
                    // Hosted calls are made one after another (SPEC 2.2): a second sees the
                    // first's confirmation spent (a standing approval is never spent).
                    let mut second = vec![
                        self.binder_at(fr, u, &|n| !n.calls_tools() && !n.reviews_calls_of(u)),
                        fr.calls_at_least(u, 2),
                    ];
                    second.extend(fr.s.stand[u].as_ref().map(|h| h.not()));
                    w.push(Bool::and(&second));
                }
            }
            s.irrev = or(&w);
        }
        if let Some(t0) = p.slice.unrec {
            // 1 + the node where it runs: a choice among the nodes binding it, no arithmetic.
            let mut here = s.unrec.clone();
            for &n in &p.binders[t0] {
                if let Some(a) = &fr.at[n] {
                    here = Code::ite(a, &Code::constant(n as u64 + 1, self.wn), &here);
                }
            }
            s.unrec = Code::ite(&ran_call[t0], &here, &s.unrec);
        }
        // Commit: ran, spent confirmations, taint read in the batch.
        let mut pend = vec![f(); p.taint_bits];
        if p.taint_bits > 0 {
            let reads: Vec<Bool> = (0..nt)
                .filter(|&u| m.tools[u].reads_outside)
                .map(|u| ran_call[u].clone())
                .collect();
            let read = or(&reads);
            for (b, pb) in pend.iter_mut().enumerate() {
                let here: Vec<Bool> = fr
                    .at
                    .iter()
                    .enumerate()
                    .filter(|(n, a)| a.is_some() && p.region_bit[m.nodes[*n].region] == b)
                    .filter_map(|(_, a)| a.clone())
                    .collect();
                *pb = Bool::and(&[&read, &or(&here)]);
            }
        }
        let any_pend = or(&pend);
        for u in 0..nt {
            if let Some(r) = &s.ran[u] {
                s.ran[u] = Some(Bool::or(&[r, &ran_call[u]]));
            }
            if let Some(c) = &fr.conf_e[u] {
                s.conf[u] = Some(Bool::and(&[c, &ran_call[u].not()]));
            }
            if let Some(c) = &fr.clean_e[u] {
                s.clean[u] = Some(Bool::and(&[c, &ran_call[u].not(), &any_pend.not()]));
            }
        }
        // Standing approvals (SPEC 3.1): given by a yes in the batch, never spent; on clean
        // content until new taint. A tool node's calls are made together, so its batch's taint
        // clears them; a model node's hosted calls one after another, in any order: a standing
        // yes given after the visit's reads (`zlast`) is cleared only by its own read, one given
        // before them by any.
        let tool_at: Vec<Bool> = fr
            .at
            .iter()
            .enumerate()
            .filter(|(n, a)| a.is_some() && m.nodes[*n].calls_tools())
            .filter_map(|(_, a)| a.clone())
            .collect();
        let tool_at = or(&tool_at);
        for u in 0..nt {
            let Some(z) = &fr.z[u] else { continue };
            if let Some(h) = &s.stand[u] {
                s.stand[u] = Some(Bool::or(&[h, z]));
            }
            if let Some(c) = &s.sclean[u] {
                let own = Bool::from_bool(!m.tools[u].reads_outside);
                s.sclean[u] = Some(Bool::or(&[
                    &Bool::and(&[c, &any_pend.not()]),
                    &Bool::and(&[z, &tool_at, &any_pend.not()]),
                    &Bool::and(&[
                        z,
                        &tool_at.not(),
                        &own,
                        &Bool::or(&[&any_pend.not(), fr.zlast[u].as_ref().unwrap_or(z)]),
                    ]),
                ]));
            }
        }
        for u in 0..nt {
            if fr.z[u].is_some() {
                continue;
            }
            if let Some(c) = &s.sclean[u] {
                s.sclean[u] = Some(Bool::and(&[c, &any_pend.not()]));
            }
        }
        for (b, tb) in s.taint.iter_mut().enumerate() {
            *tb = Bool::or(&[&*tb, &pend[b]]);
        }
        // Leaving: clears, sets, a remote node's taint, then its `after` pauses (a person
        // confirming there has seen the remote's answer).
        s.flags = fr.flags_e.clone();
        let mut remote = Vec::new();
        for (n, a) in fr.at.iter().enumerate() {
            let Some(a) = a else { continue };
            let node = &m.nodes[n];
            if node.taints_on_leave && p.taint_bits > 0 {
                let b = p.region_bit[node.region];
                s.taint[b] = Bool::or(&[&s.taint[b], a]);
                remote.push(a.clone());
            }
        }
        if !remote.is_empty() {
            let r = or(&remote);
            for c in s.clean.iter_mut().chain(s.sclean.iter_mut()).flatten() {
                *c = Bool::and(&[&*c, &r.not()]);
            }
        }
        for (n, a) in fr.at.iter().enumerate() {
            let Some(a) = a else { continue };
            let node = &m.nodes[n];
            for &fl in &node.clears {
                s.flags[fl] = a.ite(&f(), &s.flags[fl]);
            }
            for &fl in &node.sets {
                s.flags[fl] = a.ite(&t(), &s.flags[fl]);
            }
            for pause in &node.on_leave {
                if let Some(u) = pause.tool {
                    if let Some(c) = &s.conf[u] {
                        s.conf[u] = Some(Bool::or(&[c, a]));
                    }
                    if let Some(c) = &s.clean[u] {
                        s.clean[u] = Some(Bool::or(&[c, a]));
                    }
                }
                if let Some(fl) = pause.answer {
                    s.flags[fl] = a.ite(&t(), &s.flags[fl]);
                }
            }
        }
        // The edge.
        let mut ctr_inc: Vec<Vec<Bool>> = vec![Vec::new(); s.ctr.len()];
        let mut ends = Vec::new();
        for (j, &e) in fr.edges.iter().enumerate() {
            let edge = &m.edges[e];
            let sel = fr.ed.is(j as u64);
            let mut need = vec![fr.at(edge.from)];
            if let Some(g) = &edge.guard {
                need.push(guard(g, &s.flags));
            }
            if let Some((c, cap)) = edge.exit_after {
                let v = &s.ctr[c];
                need.push(v.at_least(cap as usize).not());
                ctr_inc[c].push(sel.clone());
            }
            slv.assert(sel.implies(and(&need)));
            let to = if m.top_ends.contains(&edge.to) {
                ends.push(sel.clone());
                self.done()
            } else {
                edge.to as u64
            };
            slv.assert(sel.implies(nx.nd.is(to)));
        }
        let none = fr.ed.is(fr.edges.len() as u64);
        slv.assert(Bool::or(&[&is_done, &is_dead]).implies(&none));
        slv.assert(none.implies(is_done.ite(&nx.nd.is(self.done()), &nx.nd.is(self.dead()))));
        for (c, inc) in ctr_inc.iter().enumerate() {
            if !inc.is_empty() {
                s.ctr[c] = s.ctr[c].plus_one_if(&or(inc));
            }
        }
        // The turn's end: the top end's own flags (SPEC 3.1), then what a turn resets; an idle
        // frame keeps its state.
        let mut at_end = s.clone();
        for &end in &m.top_ends {
            let into: Vec<Bool> = fr
                .edges
                .iter()
                .enumerate()
                .filter(|(_, &e)| m.edges[e].to == end)
                .map(|(j, _)| fr.ed.is(j as u64))
                .collect();
            if into.is_empty() {
                continue;
            }
            let here = or(&into);
            for &fl in &m.nodes[end].clears {
                at_end.flags[fl] = here.ite(&f(), &at_end.flags[fl]);
            }
            for &fl in &m.nodes[end].sets {
                at_end.flags[fl] = here.ite(&t(), &at_end.flags[fl]);
            }
        }
        let reset = self.reset(&at_end);
        let ended = or(&ends);
        slv.assert(is_done.ite(
            &state_eq(&nx.s, &fr.s),
            &ended.ite(&state_eq(&nx.s, &reset), &state_eq(&nx.s, &s)),
        ));
        // Steps: entering a node that is not a start or an end costs one.
        let free: Vec<Bool> = nx
            .at
            .iter()
            .enumerate()
            .filter(|(n, a)| a.is_some() && !m.nodes[*n].costs_step())
            .filter_map(|(_, a)| a.clone())
            .collect();
        if let (Some(st), Some(next)) = (&fr.st, &nx.st) {
            slv.assert(next.eq(&Therm::ite(&or(&free), st, &st.plus_one_if(&t()))));
        }
    }

    /// What a new turn resets (SPEC 3's latch table).
    fn reset(&self, s: &State) -> State {
        let mut r = s.clone();
        for (i, (_, scope)) in self.m.flags.iter().enumerate() {
            if *scope == FlagScope::Turn {
                r.flags[i] = f();
            }
        }
        for c in r.ctr.iter_mut() {
            *c = Therm::constant(0, c.max());
        }
        for &(u, _, per_turn) in &self.p.slice.count {
            if per_turn {
                if let Some(c) = &r.cnt[u] {
                    r.cnt[u] = Some(Therm::constant(0, c.max()));
                }
            }
        }
        for &(u, _, per_turn) in &self.p.slice.count_seen {
            if per_turn {
                if let Some(c) = &r.cnt_seen[u] {
                    r.cnt_seen[u] = Some(Therm::constant(0, c.max()));
                }
            }
        }
        if let (Some(_), true) = (&r.taint_seen, self.m.input_taint.is_some()) {
            r.taint_seen = Some(t());
        }
        for c in r.conf.iter_mut().chain(r.clean.iter_mut()).flatten() {
            *c = f();
        }
        // A standing approval ends with the run (SPEC 3.1).
        for c in r.stand.iter_mut().chain(r.sclean.iter_mut()).flatten() {
            *c = f();
        }
        r.irrev = f();
        r.wrote = f();
        r.unrec = Code::constant(0, self.wn);
        if let Some(b) = self.input_taint_bit() {
            r.taint[b] = t();
        }
        r
    }

    /// SPEC 2.2 `input.reads_outside`: the taint bit every turn starts with (the top graph's
    /// region), where the plan keeps taint.
    fn input_taint_bit(&self) -> Option<usize> {
        self.m
            .input_taint
            .filter(|_| self.p.taint_bits > 0)
            .map(|r| self.p.region_bit[r])
    }

    /// The condition under which `part` breaks the obligation at frame `i` (see the module doc).
    pub(crate) fn part(&self, i: usize, part: Part) -> Bool {
        let m = self.m;
        let fr = &self.frames[i];
        let ob = self.p.inst.obligation;
        let tool = self.p.inst.tool;
        let nt = m.tools.len();
        match part {
            Part::Unrec { node } => {
                let writes: Vec<Bool> = (0..nt)
                    .filter(|&u| m.tools[u].is_write())
                    .map(|u| fr.calls_at_least(u, 1))
                    .collect();
                Bool::and(&[&fr.s.unrec.is(node as u64 + 1), &or(&writes)])
            }
            Part::At { node, class } => {
                let a = fr.at(node);
                let Some(t0) = tool else { return a };
                if !m.nodes[node].calls_tools() {
                    return Bool::and(&[&a, &self.hosted_part(fr, t0, node, class)]);
                }
                if m.nodes[node].guarded() && ob.spec().judges == Judges::Plain {
                    return Bool::and(&[&a, &self.unseen_part(fr, t0, node, class)]);
                }
                let cond = match ob {
                    Obligation::O1 | Obligation::O5 => t(),
                    Obligation::O2 => self.confirmed_at(fr, t0).map(|c| c.not()).unwrap_or_else(t),
                    Obligation::O3 => self.after_unmet(fr, t0),
                    Obligation::O4 => {
                        let v: Vec<Bool> = m.tools[t0]
                            .order
                            .not_after
                            .iter()
                            .filter_map(|b| match b {
                                NotAfter::Tool(n) => {
                                    m.tool_ix(&n.name).and_then(|b| fr.s.ran[b].clone())
                                }
                                NotAfter::Untrusted => Some(fr.tainted()),
                            })
                            .collect();
                        or(&v)
                    }
                    Obligation::O6 => {
                        let clean = self.clean_at(fr, t0).unwrap_or_else(f);
                        let mut c = vec![fr.tainted(), clean.not(), self.class_is(fr, node, class)];
                        c.extend(self.unasked(fr, node, t0));
                        Bool::and(&c)
                    }
                    Obligation::O7 => {
                        let mut why = vec![fr.s.irrev.clone()];
                        let n = &m.nodes[node];
                        if !n.guarded() {
                            for &w in &n.tools {
                                let d = &m.tools[w];
                                // A reviewed call that ran was confirmed (SPEC 12.2).
                                if d.is_write() && d.irreversible && !n.reviews_calls_of(w) {
                                    let conf = self.confirmed_at(fr, w).unwrap_or_else(f);
                                    let need = if w == t0 { 2 } else { 1 };
                                    why.push(Bool::and(&[
                                        &conf.not(),
                                        &fr.calls_at_least(w, need),
                                    ]));
                                }
                            }
                        }
                        Bool::and(&[&fr.calls_at_least(t0, 1), &or(&why)])
                    }
                    Obligation::O9 => {
                        let conf = self.confirmed_at(fr, t0).unwrap_or_else(f);
                        let ran: Vec<Bool> = m
                            .confidential()
                            .filter_map(|c| fr.s.ran[c].clone())
                            .collect();
                        Bool::and(&[&fr.calls_at_least(t0, 1), &conf.not(), &or(&ran)])
                    }
                    Obligation::O10 => {
                        let clean = self.clean_at(fr, t0).unwrap_or_else(f);
                        let mut c = vec![fr.calls_at_least(t0, 1), fr.tainted(), clean.not()];
                        c.extend(self.unasked(fr, node, t0));
                        Bool::and(&c)
                    }
                    Obligation::O8 => {
                        let mut why = vec![fr.s.wrote.clone(), fr.calls_at_least(t0, 2)];
                        for &u in &m.nodes[node].tools {
                            if u != t0 && m.tools[u].is_write() {
                                why.push(fr.calls_at_least(u, 1));
                            }
                        }
                        Bool::and(&[&fr.calls_at_least(t0, 1), &or(&why)])
                    }
                };
                Bool::and(&[&a, &cond])
            }
        }
    }
}

impl Unrolling<'_> {
    /// The condition under which a guarded call of `t0` at `node` breaks an obligation judging
    /// plain calls (O4-O6) at frame `fr` (SPEC 3.1 "The guard's view"): the call runs (the tool
    /// check, over the seen twins, lets it) and the real latches say more than the guard saw.
    /// The breaking batch is the call alone (for O5, the calls up to the limit, then it).
    fn unseen_part(&self, fr: &Frame, t0: ToolIx, node: NodeIx, class: Class) -> Bool {
        let m = self.m;
        let s = &fr.s;
        let unseen = &m.unseen;
        let taint_unseen = || match &s.taint_seen {
            Some(ts) if unseen.taint => Some(Bool::and(&[&fr.tainted(), &ts.not()])),
            _ => None,
        };
        let breaks = match self.p.inst.obligation {
            Obligation::O4 => {
                let v: Vec<Bool> = m.tools[t0]
                    .order
                    .not_after
                    .iter()
                    .filter_map(|b| match b {
                        NotAfter::Tool(n) => {
                            let b = m.tool_ix(&n.name).filter(|&b| unseen.tool(b))?;
                            let (r, rs) = (s.ran[b].as_ref()?, s.ran_seen[b].as_ref()?);
                            Some(Bool::and(&[r, &rs.not()]))
                        }
                        NotAfter::Untrusted => taint_unseen(),
                    })
                    .collect();
                or(&v)
            }
            Obligation::O5 => {
                // The guard lets calls run up to the limit over its own count: the real count
                // reaches the limit first exactly when the seen count is below it (both kept up
                // to the limit N).
                match (&m.tools[t0].order.at_most, &s.cnt[t0], &s.cnt_seen[t0]) {
                    (Some(am), Some(c), Some(cs)) if unseen.tool(t0) => {
                        let n = am.count as usize;
                        let v: Vec<Bool> = (1..=n)
                            .map(|j| Bool::and(&[&c.at_least(j), &cs.at_least(j).not()]))
                            .collect();
                        return Bool::and(&[&or(&v), &self.order_lets(fr, t0)]);
                    }
                    _ => f(),
                }
            }
            Obligation::O6 => {
                let Some(tu) = taint_unseen() else { return f() };
                let clean = self.clean_at(fr, t0).unwrap_or_else(f);
                let mut c = vec![tu, clean.not(), self.class_is(fr, node, class)];
                c.extend(self.unasked(fr, node, t0));
                Bool::and(&c)
            }
            _ => f(),
        };
        Bool::and(&[&breaks, &self.guard_lets(fr, t0)])
    }

    /// The condition under which a hosted call of `t0` at the model node `node` breaks the
    /// obligation at frame `fr` (SPEC 2.2): hosted calls are plain and made one after another, so
    /// the breaking call may follow others of the same visit, which it sees (a read that taints,
    /// a tool its order rule may not follow, an earlier call of itself spending its confirmation).
    /// Every plain call runs (a reviewed one on a yes), so what earlier calls can bring depends on
    /// the node alone. The decoder writes those earlier calls
    /// ([`super::decode`]'s `hosted_pre_calls`).
    fn hosted_part(&self, fr: &Frame, t0: ToolIx, node: NodeIx, class: Class) -> Bool {
        let m = self.m;
        let n = &m.nodes[node];
        let hosts = |p: &dyn Fn(ToolIx) -> bool| Bool::from_bool(n.hosted.iter().any(|&u| p(u)));
        let reads = hosts(&|u| m.tools[u].reads_outside);
        // A confirmation on clean content is spent by an earlier call of t0 itself, so only
        // taint matters: on arrival, or read by an earlier hosted call. A standing approval
        // (SPEC 3.1) is never spent: on arrival, only taint it did not see breaks it, and a
        // read after it (or after one given earlier in the visit, where the node may give one)
        // always does. Where the node reviews t0, only a call made on a standing approval is
        // not asked.
        let stand = |u: ToolIx| fr.s.stand[u].clone();
        let unstood = |u: ToolIx| stand(u).map(|h| h.not());
        let arrived = match &fr.s.sclean[t0] {
            Some(sc) => Bool::and(&[&fr.tainted(), &sc.not()]),
            None => fr.tainted(),
        };
        let taint = if n.reviews_calls_of(t0) {
            Bool::or(&[
                &Bool::and(&[&stand(t0).unwrap_or_else(f), &Bool::or(&[&arrived, &reads])]),
                &Bool::and(&[&Bool::from_bool(n.stands_for(t0)), &reads]),
            ])
        } else {
            Bool::or(&[&arrived, &reads])
        };
        match self.p.inst.obligation {
            // Every hosted call is plain; the calls up to the limit; t0 itself twice is another
            // write in the run.
            Obligation::O1 | Obligation::O5 | Obligation::O8 => t(),
            // An earlier call of t0 spends its confirmation, not a standing approval.
            Obligation::O2 => unstood(t0).unwrap_or_else(t),
            Obligation::O3 => self.after_unmet(fr, t0),
            Obligation::O4 => {
                let mut v = Vec::new();
                for b in &m.tools[t0].order.not_after {
                    match b {
                        NotAfter::Tool(x) => {
                            if let Some(b) = m.tool_ix(&x.name) {
                                v.push(Bool::from_bool(n.hosted.contains(&b)));
                                v.extend(fr.s.ran[b].clone());
                            }
                        }
                        NotAfter::Untrusted => {
                            v.push(reads.clone());
                            v.push(fr.tainted());
                        }
                    }
                }
                or(&v)
            }
            Obligation::O6 => Bool::and(&[&taint, &self.class_is(fr, node, class)]),
            Obligation::O10 => taint,
            Obligation::O7 => {
                // An earlier hosted call of an irreversible write the node does not review, not
                // made on a standing approval.
                let ws: Vec<ToolIx> = n
                    .hosted
                    .iter()
                    .copied()
                    .filter(|&w| {
                        let d = &m.tools[w];
                        d.is_write() && d.irreversible && !n.reviews_calls_of(w)
                    })
                    .collect();
                let unconfirmed = if ws.iter().any(|&w| stand(w).is_none()) {
                    t()
                } else if ws.is_empty() {
                    f()
                } else {
                    or(&ws.iter().filter_map(|&w| unstood(w)).collect::<Vec<_>>())
                };
                Bool::or(&[&fr.s.irrev, &unconfirmed])
            }
            Obligation::O9 => {
                let mut v: Vec<Bool> = m
                    .confidential()
                    .filter_map(|c| fr.s.ran[c].clone())
                    .collect();
                v.push(hosts(&|c| m.tools[c].confidential));
                match unstood(t0) {
                    Some(u) => Bool::and(&[&or(&v), &u]),
                    None => or(&v),
                }
            }
        }
    }

    /// The order rules and gate of `t0`'s tool check allow it at `fr` where the plan decides
    /// them (see [`Unrolling::guard_lets`], which adds its `at_most`).
    fn order_lets(&self, fr: &Frame, t0: ToolIx) -> Bool {
        if self.p.decides_guard(t0) {
            self.order_static(fr, t0)
        } else {
            t()
        }
    }

    /// The taint on arrival at `fr` is of `class` for an act at `node` (SPEC 3.1 Regions): only
    /// in `node`'s region (local), or also elsewhere (cascade).
    /// O3 at a call of `t0`: some tool of its `order.after` has not run (false when it has none).
    fn after_unmet(&self, fr: &Frame, t0: ToolIx) -> Bool {
        let m = self.m;
        let v: Vec<Bool> = m.tools[t0]
            .order
            .after
            .iter()
            .filter_map(|a| m.tool_ix(&a.name))
            .filter_map(|a| fr.s.ran[a].clone())
            .map(|r| r.not())
            .collect();
        or(&v)
    }

    fn class_is(&self, fr: &Frame, node: NodeIx, class: Class) -> Bool {
        let own = self.p.region_bit[self.m.nodes[node].region];
        let others: Vec<Bool> =
            fr.s.taint
                .iter()
                .enumerate()
                .filter(|(b, _)| *b != own)
                .map(|(_, v)| v.clone())
                .collect();
        let elsewhere = or(&others);
        if class == Class::Local {
            elsewhere.not()
        } else {
            elsewhere
        }
    }
}

/// `a || b` over the latches kept: the one kept, or `None` where neither is.
fn either(a: &Option<Bool>, b: &Option<Bool>) -> Option<Bool> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Bool::or(&[a, b])),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    }
}

/// A guard over the flags.
fn guard(g: &FlatGuard, flags: &[Bool]) -> Bool {
    use crate::input::ir::Guard;
    match g {
        Guard::Flag(x) => flags[*x].clone(),
        Guard::Not(a) => guard(a, flags).not(),
        Guard::And(a, b) => Bool::and(&[&guard(a, flags), &guard(b, flags)]),
        Guard::Or(a, b) => Bool::or(&[&guard(a, flags), &guard(b, flags)]),
    }
}

/// Two states are equal, latch by latch.
pub(crate) fn state_eq(a: &State, b: &State) -> Bool {
    let mut c = Vec::new();
    for (x, y) in a.flags.iter().zip(&b.flags) {
        c.push(x.iff(y));
    }
    for (x, y) in a.ctr.iter().zip(&b.ctr) {
        c.push(x.eq(y));
    }
    for (x, y) in a.ran.iter().zip(&b.ran) {
        if let (Some(x), Some(y)) = (x, y) {
            c.push(x.iff(y));
        }
    }
    for (x, y) in a.cnt.iter().zip(&b.cnt) {
        if let (Some(x), Some(y)) = (x, y) {
            c.push(x.eq(y));
        }
    }
    for (x, y) in a.taint.iter().zip(&b.taint) {
        c.push(x.iff(y));
    }
    for (x, y) in a
        .conf
        .iter()
        .zip(&b.conf)
        .chain(a.clean.iter().zip(&b.clean))
    {
        if let (Some(x), Some(y)) = (x, y) {
            c.push(x.iff(y));
        }
    }
    c.push(a.irrev.iff(&b.irrev));
    c.push(a.wrote.iff(&b.wrote));
    c.push(a.unrec.eq(&b.unrec));
    for (x, y) in a.ran_seen.iter().zip(&b.ran_seen) {
        if let (Some(x), Some(y)) = (x, y) {
            c.push(x.iff(y));
        }
    }
    for (x, y) in a.cnt_seen.iter().zip(&b.cnt_seen) {
        if let (Some(x), Some(y)) = (x, y) {
            c.push(x.eq(y));
        }
    }
    if let (Some(x), Some(y)) = (&a.taint_seen, &b.taint_seen) {
        c.push(x.iff(y));
    }
    for (x, y) in a
        .stand
        .iter()
        .zip(&b.stand)
        .chain(a.sclean.iter().zip(&b.sclean))
    {
        if let (Some(x), Some(y)) = (x, y) {
            c.push(x.iff(y));
        }
    }
    and(&c)
}
