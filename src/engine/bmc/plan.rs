//! What one obligation instance's unrolling needs, worked out before Z3 is asked anything: the
//! latches it keeps (the [`Slice`], with the guards of the tools refinement made exact), the tools whose calls it
//! counts, the violations it can have (grouped so that keys which always break together are asked
//! once), the nodes a frame can be at, and how many frames one turn needs.

use crate::engine::slice::Slice;
use crate::engine::{Class, Instance};
use crate::findings::Obligation;
use crate::model::{FlatModel, NodeIx, ToolCheck, ToolIx};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

/// One way a group's violation can happen at a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The frame is at `node` and the obligation breaks at one of its calls (with `class` for O6).
    At { node: NodeIx, class: Class },
    /// O8 only: a write runs at the frame while the unrecoverable tool last ran at `node` in this
    /// run.
    Unrec { node: NodeIx },
}

/// Violation keys that break under one condition: found together, with one witness.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// (tool, node, class) keys, as the explicit engine keys its violations.
    pub(crate) keys: Vec<(ToolIx, NodeIx, Class)>,
    /// The ways it can happen; the group breaks when any does.
    pub(crate) parts: Vec<Part>,
}

/// The static plan of one instance.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The question.
    pub(crate) inst: Instance,
    /// Latches kept (see [`Slice`]).
    pub(crate) slice: Slice,
    /// Per tool: its guarded calls are allowed or refused by its tool check exactly; for the
    /// others the check may do either (an over-approximation that refinement narrows).
    pub(crate) exact: Vec<bool>,
    /// Per tool: its tool check (SPEC 3: order rules and the rulebook's gate).
    pub(crate) checks: Arc<Vec<ToolCheck>>,
    /// Per tool: how many of its running calls in one batch the encoding counts (0: its calls
    /// change nothing the obligation reads, so they are left out).
    pub(crate) xcap: Vec<u32>,
    /// Per region: its taint bit (see the explicit engine: O6 keeps one bit per region of a plain
    /// node binding the tool and one for every other region; other obligations one bit).
    pub(crate) region_bit: Vec<usize>,
    /// Taint bits kept (0 when the slice has no taint).
    pub(crate) taint_bits: usize,
    /// The violations the instance can have.
    pub(crate) groups: Vec<Group>,
    /// Frames per turn: the most node visits a run of at most `recursion_limit` steps can make,
    /// plus one frame after the turn has ended.
    pub(crate) frames: usize,
    /// Per node: the fewest frames from the turn's first (its entry) to a visit of it.
    pub(crate) min_frame: Arc<Vec<usize>>,
    /// Per node: the fewest frames from it to a frame where the obligation can break or the
    /// turn can end (guards ignored); `usize::MAX` when there is none.
    pub(crate) to_target: Vec<usize>,
    /// Per node: whether it can matter (reachable within the step limit, and some call or the
    /// turn's end reachable from it).
    pub(crate) usable: Arc<Vec<bool>>,
    /// The most `inside` pauses one node has.
    pub(crate) inside_max: usize,
    /// Per tool: the calling nodes that bind it.
    pub(crate) binders: Arc<Vec<Vec<NodeIx>>>,
    /// Per `exit_after` counter: its N.
    pub(crate) counter_caps: Arc<Vec<u32>>,
    /// True when some node other than the entry is free to enter (a subgraph's start or end): a
    /// frame's node steps are then a variable. Otherwise every frame after the entry costs one
    /// step, so the steps at a frame are its offset (plus one for a paid entry) and need no
    /// arithmetic.
    pub(crate) counted_steps: bool,
    /// 1 when entering the entry costs a step, else 0.
    pub(crate) entry_cost: u32,
    /// Node steps per run.
    pub(crate) recursion_limit: u32,
}

/// What every instance's plan over one model shares, worked out once per model (issue 14: worked
/// out per instance, the frame count alone cost the recursion limit times the graph's size for
/// every instance, quadratic in a wide graph's fan-out).
#[derive(Debug, Clone)]
pub struct Common {
    /// Per tool: its tool check (SPEC 3).
    pub(crate) checks: Arc<Vec<ToolCheck>>,
    /// See [`Plan::min_frame`].
    pub(crate) min_frame: Arc<Vec<usize>>,
    /// See [`Plan::usable`].
    pub(crate) usable: Arc<Vec<bool>>,
    /// See [`Plan::frames`].
    pub(crate) frames: usize,
    /// See [`Plan::inside_max`].
    pub(crate) inside_max: usize,
    /// See [`Plan::binders`].
    pub(crate) binders: Arc<Vec<Vec<NodeIx>>>,
    /// See [`Plan::counter_caps`].
    pub(crate) counter_caps: Arc<Vec<u32>>,
    /// See [`Plan::counted_steps`].
    pub(crate) counted_steps: bool,
    /// Per tool: some calling node binds it (a tool no calling node binds is never called).
    pub(crate) bound: Arc<Vec<bool>>,
    /// [`crate::engine::slice::irrev_confirmations`], for each instance's slice.
    pub(crate) irrev: Arc<Vec<ToolIx>>,
}

impl Common {
    /// The shared part of every plan over `m`.
    pub fn new(m: &FlatModel) -> Common {
        let (min_frame, usable) = domains(m);
        let frames = frames_per_turn(m, &usable);
        let inside_max = m
            .nodes
            .iter()
            .map(|n| {
                n.on_enter
                    .iter()
                    .filter(|p| p.when == crate::input::ir::When::Inside)
                    .count()
            })
            .max()
            .unwrap_or(0);
        let mut binders = vec![Vec::new(); m.tools.len()];
        let mut bound = vec![false; m.tools.len()];
        for (ix, n) in m.nodes.iter().enumerate() {
            // A tool node's or step's bound tools; a model node's hosted ones (SPEC 2.2).
            let mut tools = n.called().to_vec();
            tools.sort_unstable();
            tools.dedup();
            for u in tools {
                binders[u].push(ix);
                bound[u] = true;
            }
        }
        let mut counter_caps = vec![1u32; m.counters.len()];
        for e in &m.edges {
            if let Some((c, cap)) = e.exit_after {
                counter_caps[c] = cap;
            }
        }
        // A counter rises at most once a frame: past the frames of a turn its N never bites.
        for c in counter_caps.iter_mut() {
            *c = (*c).min(frames as u32);
        }
        let counted_steps = m
            .nodes
            .iter()
            .enumerate()
            .any(|(v, x)| v != m.entry && !x.costs_step() && usable[v]);
        Common {
            checks: Arc::new(m.tool_checks()),
            min_frame: Arc::new(min_frame),
            usable: Arc::new(usable),
            frames,
            inside_max,
            binders: Arc::new(binders),
            counter_caps: Arc::new(counter_caps),
            counted_steps,
            bound: Arc::new(bound),
            irrev: Arc::new(crate::engine::slice::irrev_confirmations(m)),
        }
    }

    /// Frame-nodes and frame-edges an unrolling of every turn holds: frames x turns x (nodes +
    /// edges + the step thermometer where steps are counted). The same for every instance.
    pub(crate) fn unrolling_size(&self, m: &FlatModel) -> usize {
        let per_frame = m.edges.len()
            + m.nodes.len()
            + if self.counted_steps {
                m.recursion_limit as usize + 1
            } else {
                0
            };
        self.frames
            .saturating_mul(m.session_steps as usize)
            .saturating_mul(per_frame)
    }
}

impl Plan {
    /// The plan of `inst` over `m` (whose shared part is `common`), deciding the guards of the
    /// `exact` tools exactly.
    pub(crate) fn new(
        m: &FlatModel,
        common: &Common,
        inst: Instance,
        exact: &BTreeSet<ToolIx>,
    ) -> Plan {
        let slice = Slice::with_confirmations(m, inst.obligation, inst.tool, exact, &common.irrev);
        let groups = groups(m, &common.binders, inst);
        Plan::with(m, common, inst, exact, slice, groups)
    }

    /// The plan of `inst` with its slice and groups already worked out.
    pub(crate) fn with(
        m: &FlatModel,
        common: &Common,
        inst: Instance,
        exact: &BTreeSet<ToolIx>,
        slice: Slice,
        groups: Vec<Group>,
    ) -> Plan {
        let exact_v: Vec<bool> = (0..m.tools.len()).map(|t| exact.contains(&t)).collect();
        let xcap = xcaps(m, inst, &slice, &common.bound);
        let (region_bit, bits) = crate::engine::slice::taint_bits(m, inst);
        let taint_bits = if slice.tainted { bits } else { 0 };
        let to_target = to_targets(m, &groups, &xcap);
        Plan {
            inst,
            exact: exact_v,
            checks: common.checks.clone(),
            counted_steps: common.counted_steps,
            entry_cost: u32::from(m.nodes[m.entry].costs_step()),
            recursion_limit: m.recursion_limit,
            binders: common.binders.clone(),
            counter_caps: common.counter_caps.clone(),
            slice,
            xcap,
            region_bit,
            taint_bits,
            groups,
            frames: common.frames,
            min_frame: common.min_frame.clone(),
            usable: common.usable.clone(),
            to_target,
            inside_max: common.inside_max,
        }
    }

    /// True when some latch outlives a turn (`ran`, a session count, taint, a session flag): only
    /// then can a later turn start from another state than the first did.
    pub(crate) fn has_session_state(&self, m: &FlatModel) -> bool {
        !self.slice.ran.is_empty()
            || self.slice.count.iter().any(|c| !c.2)
            || self.taint_bits > 0
            || !self.slice.ran_seen.is_empty()
            || self.slice.count_seen.iter().any(|c| !c.2)
            || self.slice.tainted_seen
            || m.flags
                .iter()
                .any(|(_, scope)| *scope != crate::input::ir::FlagScope::Turn)
    }

    /// True when a guarded call of `u` is allowed or refused by its tool check exactly (SPEC 3):
    /// refinement made it exact, or the check reads no latch.
    pub(crate) fn decides_guard(&self, u: ToolIx) -> bool {
        self.exact[u] || self.checks[u].reads_nothing()
    }

    /// The node steps at frame `offset` when they are not counted (see `counted_steps`).
    pub(crate) fn fixed_steps(&self, offset: usize) -> u32 {
        offset as u32 + self.entry_cost
    }

    /// True when node `n` can be visited at frame `offset` of a turn.
    pub(crate) fn allowed(&self, n: NodeIx, offset: usize) -> bool {
        (self.counted_steps || self.fixed_steps(offset) <= self.recursion_limit)
            && self.usable[n]
            && self.min_frame[n] <= offset
            && self.to_target[n].saturating_add(offset) < self.frames
    }
}

/// How many calls of each tool in one batch the encoding tells apart.
fn xcaps(m: &FlatModel, inst: Instance, s: &Slice, bound: &[bool]) -> Vec<u32> {
    let mut cap = vec![0u32; m.tools.len()];
    // A hosted irreversible write's second call sees the first's confirmation spent (SPEC 2.2:
    // one after another), so two of its calls are told apart.
    let hosted: BTreeSet<ToolIx> = m
        .nodes
        .iter()
        .flat_map(|n| n.hosted.iter().copied())
        .collect();
    let mut raise = |t: ToolIx, c: u32| cap[t] = cap[t].max(c);
    for &t in s
        .ran
        .iter()
        .chain(&s.confirmed)
        .chain(&s.conf_clean)
        .chain(&s.ran_seen)
        .chain(&s.standing)
    {
        raise(t, 1);
    }
    for &(t, c, _) in s.count.iter().chain(&s.count_seen) {
        raise(t, c.max(1));
    }
    for (t, d) in m.tools.iter().enumerate() {
        if ((s.tainted || s.tainted_seen) && d.reads_outside)
            || ((s.wrote || s.unrec.is_some()) && d.is_write())
            || (s.irrev_unconf && d.is_write() && d.irreversible)
        {
            raise(t, 1);
        }
        if s.irrev_unconf && d.is_write() && d.irreversible && hosted.contains(&t) {
            raise(t, 2);
        }
    }
    if let Some(t) = inst.tool {
        // A later call of the tool itself can be the one that breaks.
        raise(t, inst.obligation.spec().own_calls);
    }
    // A tool no calling node binds is never called.
    for (c, &b) in cap.iter_mut().zip(bound) {
        if !b {
            *c = 0;
        }
    }
    cap
}

/// The violation groups of SPEC 4's table for `inst`.
///
/// `binders` is [`Common::binders`]: an instance about one tool looks only at the nodes binding
/// it, in node order (issue 14: a scan of every node per instance is quadratic in a wide graph).
pub(crate) fn groups(m: &FlatModel, binders: &[Vec<NodeIx>], inst: Instance) -> Vec<Group> {
    // The binders are calling nodes (tool nodes, steps, model nodes hosting tools).
    let plain = |n: &crate::model::FlatNode| !n.guarded();
    let mut out = Vec::new();
    match (inst.obligation, inst.tool) {
        (Obligation::O1, _) => {
            for (ix, n) in m.nodes.iter().enumerate() {
                let tools: BTreeSet<ToolIx> = n
                    .plain_calls()
                    .filter(|&t| inst.tool.is_none_or(|u| u == t))
                    .collect();
                if tools.is_empty() {
                    continue;
                }
                out.push(Group {
                    keys: tools.into_iter().map(|t| (t, ix, Class::Plain)).collect(),
                    parts: vec![Part::At {
                        node: ix,
                        class: Class::Plain,
                    }],
                });
            }
        }
        (ob, Some(t)) => {
            for &ix in binders.get(t).map(Vec::as_slice).unwrap_or_default() {
                let n = &m.nodes[ix];
                let at = |class| Part::At { node: ix, class };
                let spec = ob.spec();
                // A node reviewing the tool's calls confirms each on clean content (SPEC 12.2):
                // an obligation that such a confirmation settles cannot break there (unless a
                // standing approval ends the asking, SPEC 3.1).
                if spec.settled_by_review(m, n, t) {
                    continue;
                }
                // A guarded call breaks it only where the guard may not have seen what it reads
                // (SPEC 3.1 "The guard's view").
                if !plain(n) && !spec.judges_guarded(m, t) {
                    continue;
                }
                for &class in spec.classes() {
                    let mut parts = vec![at(class)];
                    // The Z3 reading of recovery (O8): the unrecoverable tool's earlier call is
                    // caught at the later write.
                    if ob == Obligation::O8 {
                        parts.push(Part::Unrec { node: ix });
                    }
                    out.push(Group {
                        keys: vec![(t, ix, class)],
                        parts,
                    });
                }
            }
        }
        (_, None) => {}
    }
    out
}

/// Per node: the fewest frames to a target: a node where a group can break (for O8, any node
/// that can run a write, where the unrecoverable tool's earlier call can be caught), or one with
/// an edge into the top end.
fn to_targets(m: &FlatModel, groups: &[Group], xcap: &[u32]) -> Vec<usize> {
    let n = m.nodes.len();
    let mut d = vec![usize::MAX; n];
    let mut q = VecDeque::new();
    let mark = |v: NodeIx, d: &mut Vec<usize>, q: &mut VecDeque<NodeIx>| {
        if d[v] != 0 {
            d[v] = 0;
            q.push_back(v);
        }
    };
    for g in groups {
        for p in &g.parts {
            match *p {
                Part::At { node, .. } => mark(node, &mut d, &mut q),
                Part::Unrec { .. } => {
                    for (v, node) in m.nodes.iter().enumerate() {
                        if node
                            .called()
                            .iter()
                            .any(|&u| m.tools[u].is_write() && xcap[u] > 0)
                        {
                            mark(v, &mut d, &mut q);
                        }
                    }
                }
            }
        }
    }
    let mut rev: Vec<Vec<NodeIx>> = vec![Vec::new(); n];
    for e in &m.edges {
        rev[e.to].push(e.from);
        if m.top_ends.contains(&e.to) {
            mark(e.from, &mut d, &mut q);
        }
    }
    while let Some(v) = q.pop_front() {
        for &u in &rev[v] {
            if d[u] == usize::MAX {
                d[u] = d[v] + 1;
                q.push_back(u);
            }
        }
    }
    d
}

/// Per node: the fewest frames from the entry (guards ignored), and whether it can matter.
fn domains(m: &FlatModel) -> (Vec<usize>, Vec<bool>) {
    let n = m.nodes.len();
    let is_end = |v: NodeIx| m.top_ends.contains(&v);
    let mut min_frame = vec![usize::MAX; n];
    let mut q = VecDeque::new();
    min_frame[m.entry] = 0;
    q.push_back(m.entry);
    while let Some(u) = q.pop_front() {
        for &e in &m.out[u] {
            let v = m.edges[e].to;
            if !is_end(v) && min_frame[v] == usize::MAX {
                min_frame[v] = min_frame[u] + 1;
                q.push_back(v);
            }
        }
    }
    // Fewest node steps to each node (0-1 breadth-first search).
    let cost = |v: NodeIx| usize::from(m.nodes[v].costs_step());
    let mut steps = vec![usize::MAX; n];
    let mut dq = VecDeque::new();
    steps[m.entry] = cost(m.entry);
    dq.push_back(m.entry);
    while let Some(u) = dq.pop_front() {
        for &e in &m.out[u] {
            let v = m.edges[e].to;
            if is_end(v) {
                continue;
            }
            let d = steps[u] + cost(v);
            if d < steps[v] {
                steps[v] = d;
                if cost(v) == 0 {
                    dq.push_front(v);
                } else {
                    dq.push_back(v);
                }
            }
        }
    }
    // Nodes from which a call or the turn's end can be reached.
    let mut rev: Vec<Vec<NodeIx>> = vec![Vec::new(); n];
    let mut useful = vec![false; n];
    let mut stack = Vec::new();
    for e in &m.edges {
        rev[e.to].push(e.from);
        if is_end(e.to) && !useful[e.from] {
            useful[e.from] = true;
            stack.push(e.from);
        }
    }
    for (v, node) in m.nodes.iter().enumerate() {
        if !node.called().is_empty() && !useful[v] {
            useful[v] = true;
            stack.push(v);
        }
    }
    while let Some(v) = stack.pop() {
        for &u in &rev[v] {
            if !useful[u] {
                useful[u] = true;
                stack.push(u);
            }
        }
    }
    let limit = m.recursion_limit as usize;
    let usable = (0..n)
        .map(|v| {
            !is_end(v)
                && (v == m.entry || (useful[v] && min_frame[v] != usize::MAX && steps[v] <= limit))
        })
        .collect();
    (min_frame, usable)
}

/// The most node visits a run of at most `recursion_limit` steps makes, plus one frame for the
/// turn's end: a longest-walk count over (node, steps used), free nodes (start and end of
/// subgraphs) relaxed within a step count.
fn frames_per_turn(m: &FlatModel, usable: &[bool]) -> usize {
    let n = m.nodes.len();
    let r = m.recursion_limit as usize;
    let cost = |v: NodeIx| usize::from(m.nodes[v].costs_step());
    // Free visits are the top entry and the start and end of an entered subgraph: at most one
    // plus two per paid visit of a subgraph node. Where the exact count below would cost too
    // much, that bound is used.
    if (r + 1).saturating_mul(m.edges.len() + n) > 4_000_000 {
        let subgraphs = m
            .nodes
            .iter()
            .any(|x| x.kind == crate::input::ir::NodeKind::Subgraph);
        return r + 1 + if subgraphs { 2 * r } else { 0 } + 1;
    }
    let mut best: Vec<Vec<i64>> = vec![vec![-1; n]; r + 1];
    let c0 = cost(m.entry);
    if c0 > r {
        return 2;
    }
    best[c0][m.entry] = 1;
    let free = m.nodes.iter().filter(|x| !x.costs_step()).count();
    let mut most = 1i64;
    let mut capped = false;
    for s in 0..=r {
        // Free moves within step count s, until nothing grows (a free cycle would never stop:
        // it is cut after as many rounds as there are free nodes, and the bound widened).
        let mut rounds = 0;
        loop {
            let mut changed = false;
            for e in &m.edges {
                let (u, v) = (e.from, e.to);
                if best[s][u] < 0 || cost(v) != 0 || !usable[v] {
                    continue;
                }
                if best[s][u] + 1 > best[s][v] {
                    best[s][v] = best[s][u] + 1;
                    changed = true;
                }
            }
            rounds += 1;
            if !changed {
                break;
            }
            if rounds > free + 1 {
                capped = true;
                break;
            }
        }
        most = most.max(best[s].iter().copied().max().unwrap_or(-1));
        if s == r {
            break;
        }
        for e in &m.edges {
            let (u, v) = (e.from, e.to);
            if best[s][u] < 0 || cost(v) != 1 || !usable[v] {
                continue;
            }
            if best[s][u] + 1 > best[s + 1][v] {
                best[s + 1][v] = best[s][u] + 1;
            }
        }
    }
    let visits = if capped {
        (r + 1) * (free + 1) + r
    } else {
        most as usize
    };
    visits + 1
}
