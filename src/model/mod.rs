//! The flattened model (SPEC 3): one directed graph with subgraphs inlined, `null` destinations
//! expanded, sends turned into edges, flags and tools resolved to indices.
//!
//! [`fn@flatten`] builds a [`FlatModel`] from the validated [`crate::input::ir`] input. Both the engine and
//! the plain interpreter read only this model, so they agree on one reading of the input.

pub mod flatten;
pub mod obligation;

use crate::input::ir::{FlagScope, Guard, NodeKind, NotAfter, ToolDef, When};
use crate::input::source::Loc;

pub use flatten::flatten;

/// Index of a node in [`FlatModel::nodes`].
pub(crate) type NodeIx = usize;
/// Index of a tool in [`FlatModel::tools`] (the catalogue's order).
pub(crate) type ToolIx = usize;
/// Index of a state flag in [`FlatModel::flags`].
pub(crate) type FlagIx = usize;

/// One latch of SPEC 3's table, as a slice (SPEC 9) and an obligation's row
/// ([`crate::model::obligation::Spec::latches`]) name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Latch {
    /// `ran` of a tool.
    Ran(ToolIx),
    /// `count` of a tool.
    Count(ToolIx),
    /// `tainted`, with its origin regions.
    Tainted,
    /// `confirmed` of a tool.
    Confirmed(ToolIx),
    /// `confirmed_clean` of a tool.
    ConfClean(ToolIx),
    /// `irreversible_unconfirmed`.
    IrrevUnconf,
    /// `wrote`: a write ran in this run.
    Wrote,
    /// The unrecoverable tool's call node (O8).
    Unrec(ToolIx),
    /// `ran_seen` of a tool (SPEC 3.1 "The guard's view"): a guarded call of it ran.
    RanSeen(ToolIx),
    /// `count_seen` of a tool: its guarded calls that ran.
    CountSeen(ToolIx),
    /// `tainted_seen`: a guarded call of a `reads_outside` tool ran, or the turn's input reads
    /// outside.
    TaintedSeen,
    /// A standing approval of a tool (SPEC 3.1 "Standing approvals"): `confirmed[t]` held by a
    /// yes for the rest of the run, never spent by a batch; reset at the turn's end.
    Standing(ToolIx),
    /// The standing approval's `confirmed_clean[t]`: as [`Latch::Standing`], and cleared by any
    /// new taint.
    StandingClean(ToolIx),
}

/// What the tool check cannot see (SPEC 3.1 "The guard's view"), found once per model by
/// [`Unseen::of`]: which latches have a seen twin that can differ from them. Where none can (no
/// plain call and no `remote` node), the twins equal the latches and no engine keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Unseen {
    /// Per tool: some call of it is plain (a `tools_plain` node or a tool-listing `step` binds
    /// it, or a `model` node hosts it), so `ran_seen[t]` and `count_seen[t]` can lag `ran[t]`
    /// and `count[t]`.
    pub(crate) tools: Vec<bool>,
    /// Taint can enter unseen (a plain call of a `reads_outside` tool, or leaving a `remote`
    /// node), so `tainted_seen` can lag `tainted`.
    pub(crate) taint: bool,
}

impl Unseen {
    /// What the tool check cannot see in a model of `nodes` over the catalogue's `tools`.
    pub(crate) fn of(nodes: &[FlatNode], tools: &[ToolDef]) -> Unseen {
        let mut u = Unseen {
            tools: vec![false; tools.len()],
            taint: false,
        };
        for n in nodes {
            u.taint |= n.taints_on_leave;
            for t in n.plain_calls() {
                if let Some(x) = u.tools.get_mut(t) {
                    *x = true;
                }
                u.taint |= tools.get(t).is_some_and(|d| d.reads_outside);
            }
        }
        u
    }

    /// True when `ran_seen[t]` and `count_seen[t]` can differ from `ran[t]` and `count[t]`.
    pub(crate) fn tool(&self, t: ToolIx) -> bool {
        self.tools.get(t).copied().unwrap_or(false)
    }
}

/// A guard with flags resolved to indices.
pub(crate) type FlatGuard = Guard<FlagIx>;

/// A pause for a person at a node (an interrupt, SPEC 2.2).
#[derive(Debug, Clone)]
pub struct Pause {
    /// Before, after or inside.
    pub(crate) when: When,
    /// The tool the yes confirms, if any.
    pub(crate) tool: Option<ToolIx>,
    /// The flag the yes sets (and an inside no clears).
    pub(crate) answer: Option<FlagIx>,
    /// A `call` review the person may answer yes for the rest of the run (SPEC 3.1 "Standing
    /// approvals").
    pub(crate) standing: bool,
    /// Where the interrupt was declared.
    pub(crate) loc: Loc,
}

/// What a taint region is (SPEC 3.1 "Regions are kinds and names together").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RegionKind {
    /// The top graph (named by the export's `name`).
    Graph,
    /// An agent (a node's own `agent`).
    Agent,
    /// A subgraph, by its path (`kb`, `kb/inner`).
    Subgraph,
}

impl RegionKind {
    /// The word a message uses for it: `graph`, `agent`, `subgraph`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RegionKind::Graph => "graph",
            RegionKind::Agent => "agent",
            RegionKind::Subgraph => "subgraph",
        }
    }
}

/// A taint region: its kind and its name together, so an agent `kb`, a subgraph `kb` and a top
/// graph `kb` are three regions (SPEC 3.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// Agent, subgraph or the top graph.
    pub(crate) kind: RegionKind,
    /// The agent's name, the subgraph's path, or the top graph's name.
    pub(crate) name: String,
}

/// A node of the flattened graph.
#[derive(Debug, Clone)]
pub struct FlatNode {
    /// The qualified id: `kb/retrieve` for node `retrieve` of subgraph node `kb`.
    pub qid: String,
    /// The node's kind. A subgraph's own `start`/`end` keep their kinds; only the top `end` ends a turn.
    pub kind: NodeKind,
    /// The node's agent, if declared.
    pub(crate) agent: Option<String>,
    /// The node's region (index into [`FlatModel::regions`]): agent, else subgraph path, else
    /// graph (SPEC 3.1: an agent, a subgraph and the top graph are three regions whatever their
    /// names).
    pub(crate) region: usize,
    /// Tools offered (model) or bound (tool nodes, tool-listing steps).
    pub(crate) tools: Vec<ToolIx>,
    /// A model node's hosted tools (SPEC 2.2 `hosted`): at each visit, before it chooses, the
    /// model's provider may call any of them, one call after another (each a batch of its own,
    /// seeing the ones before), every call plain.
    pub(crate) hosted: Vec<ToolIx>,
    /// Flags set when the node is left (after its `clears`).
    pub sets: Vec<FlagIx>,
    /// Flags cleared when the node is left.
    pub clears: Vec<FlagIx>,
    /// Tools of `tools` whose arguments the node's code takes from what a model wrote (SPEC 2.2
    /// `model_written`), with the arguments (`None`: any): chosen by a model for QG017/QG018; the
    /// engines do not read it.
    pub(crate) model_written: Vec<(ToolIx, Option<Vec<String>>)>,
    /// Pauses on entering: `before` first, then `inside`, in declaration order.
    pub(crate) on_enter: Vec<Pause>,
    /// Pauses on leaving (`after`).
    pub(crate) on_leave: Vec<Pause>,
    /// Reviews of each call (`call` interrupts, SPEC 12.2), one per tool reviewed: every call of
    /// the tool at a visit of this node is put to the person first; a yes runs it confirmed and
    /// confirmed on clean content for that call alone, a no runs nothing.
    pub reviews: Vec<Pause>,
    /// True when leaving the node taints the run (a `remote` node).
    pub(crate) taints_on_leave: bool,
    /// A `remote` node's channel (SPEC 2.2 `channel`), for QG107.
    pub(crate) channel: Option<String>,
    /// The subgraph path holding the node (`""` for the top graph, `kb`, `kb/inner`).
    pub(crate) path: String,
    /// The declaring line (SPEC 7 location).
    pub(crate) loc: Loc,
    /// Why the guard the node's calls pass is not credited (SPEC 2.2 `guard_not_credited`).
    pub(crate) guard_not_credited: Option<String>,
    /// Rank in declaration order (SPEC 3.1): the top graph's nodes in their order, then each
    /// subgraph definition's nodes in the order the `subgraphs` objects list them (a definition's
    /// own `subgraphs` right after its nodes), each definition once. Nodes inlined from one
    /// definition at several subgraph nodes share its rank; where one must come first (QG023's
    /// subject), it is the use whose subgraph node is declared first.
    pub(crate) decl: usize,
}

impl FlatNode {
    /// True for a node whose visit makes a batch of calls.
    pub(crate) fn calls_tools(&self) -> bool {
        matches!(
            self.kind,
            NodeKind::Tools | NodeKind::ToolsPlain | NodeKind::Step
        ) && !self.tools.is_empty()
    }

    /// True when this node's calls go through the tool check.
    pub(crate) fn guarded(&self) -> bool {
        self.kind == NodeKind::Tools
    }

    /// The tools this node calls plainly (SPEC 3.1 "The guard's view"): those a plain tool node
    /// or a tool-listing step binds, and a model node's hosted tools; none for a guarded node.
    pub(crate) fn plain_calls(&self) -> impl Iterator<Item = ToolIx> + '_ {
        let bound: &[ToolIx] = if self.calls_tools() && !self.guarded() {
            &self.tools
        } else {
            &[]
        };
        bound.iter().chain(&self.hosted).copied()
    }

    /// The tools a visit of this node can call: a tool node's or a tool-listing step's bound
    /// tools, a model node's hosted ones (SPEC 2.2), else none.
    pub(crate) fn called(&self) -> &[ToolIx] {
        if self.calls_tools() {
            &self.tools
        } else {
            &self.hosted
        }
    }

    /// True when a visit of this node can call `tool`: bound by a tool node or step, or hosted
    /// by a model node.
    pub(crate) fn can_call(&self, tool: ToolIx) -> bool {
        (self.calls_tools() && self.tools.contains(&tool)) || self.hosted.contains(&tool)
    }

    /// True when a call of `tool` at this node is reviewed by the person first (SPEC 12.2).
    pub(crate) fn reviews_calls_of(&self, tool: ToolIx) -> bool {
        self.reviews.iter().any(|p| p.tool == Some(tool))
    }

    /// True when the review of `tool`'s calls at this node may be answered yes for the rest of
    /// the run (SPEC 3.1 "Standing approvals").
    pub(crate) fn stands_for(&self, tool: ToolIx) -> bool {
        self.reviews
            .iter()
            .any(|p| p.tool == Some(tool) && p.standing)
    }

    /// True when entering the node costs a step (SPEC 3.1: every node but start and end).
    pub(crate) fn costs_step(&self) -> bool {
        !matches!(self.kind, NodeKind::Start | NodeKind::End)
    }
}

/// An edge of the flattened graph.
#[derive(Debug, Clone)]
pub struct FlatEdge {
    /// Source node.
    pub from: NodeIx,
    /// Destination node.
    pub to: NodeIx,
    /// Taken only when it holds.
    pub(crate) guard: Option<FlatGuard>,
    /// `exit_after`: (counter index into [`FlatModel::counters`], N).
    pub(crate) exit_after: Option<(usize, u32)>,
}

/// A conditional or command edge with `null` destinations (QG015).
#[derive(Debug, Clone)]
pub(crate) struct NullEdge {
    /// The qualified id of its source.
    pub(crate) from: String,
    /// `conditional` or `command`.
    pub(crate) kind: &'static str,
    /// Where it was declared.
    pub(crate) loc: Loc,
}

/// The flattened model.
#[derive(Debug, Clone)]
pub struct FlatModel {
    /// Nodes, in the order of inlining: the top graph's nodes, then each subgraph node's inner
    /// nodes (depth first). Declaration order (SPEC 3.1) is [`FlatNode::decl`].
    pub nodes: Vec<FlatNode>,
    /// Edges; [`FlatModel::out`] indexes them by source.
    pub edges: Vec<FlatEdge>,
    /// For each node, the indices of its outgoing edges.
    pub(crate) out: Vec<Vec<usize>>,
    /// The node a turn starts at.
    pub(crate) entry: NodeIx,
    /// The top graph's `end` nodes: entering one ends the turn.
    pub(crate) top_ends: Vec<NodeIx>,
    /// The catalogue's tools.
    pub tools: Vec<ToolDef>,
    /// State flags: name and scope.
    pub(crate) flags: Vec<(String, FlagScope)>,
    /// `exit_after` counters, one per such edge (its source's qualified id).
    pub(crate) counters: Vec<String>,
    /// The regions (SPEC 3.1): agents, subgraph paths and the top graph, each kind apart.
    pub regions: Vec<Region>,
    /// Node steps per run.
    pub(crate) recursion_limit: u32,
    /// Turns to search.
    pub session_steps: u32,
    /// `null` edges, for QG015.
    pub(crate) null_edges: Vec<NullEdge>,
    /// Subgraph nodes whose graph is missing or empty, for QG006: (node, graph name).
    pub(crate) opaque_subgraphs: Vec<(NodeIx, String)>,
    /// Subgraph paths that declare their own budget.
    pub(crate) budget_paths: Vec<String>,
    /// Agents that declare a budget.
    pub(crate) budget_agents: Vec<String>,
    /// True when the export declares a run budget.
    pub(crate) top_budget: bool,
    /// For each tool, true when some interrupt names it (O2 applies to writes so named).
    pub(crate) interrupted: Vec<bool>,
    /// For each tool, true when some `call` review of it is `standing` (SPEC 3.1 "Standing
    /// approvals"): only then does any engine keep its standing latches.
    pub(crate) standing: Vec<bool>,
    /// For each tool, the rulebook's gate on its guarded calls (`None`: no rulebook governs it).
    pub gates: Vec<Option<RuleGate>>,
    /// For each tool, true when it writes a store the catalogue declares `persistent` (O10,
    /// QG021).
    pub(crate) persists: Vec<bool>,
    /// Nodes and tools by name, so that [`FlatModel::node_ix`] and [`FlatModel::tool_ix`] cost a
    /// hash, not a scan (a graph may have 200,000 nodes and a witness step names one). Built by
    /// [`flatten`]; a name it does not hold, or holds for another index, is looked up by scan.
    pub(crate) names: Names,
    /// `input.reads_outside` (SPEC 2.2, 12.3): the region (the top graph's) every turn starts
    /// tainted in, as if a `reads_outside` read had run at the entry before anything else.
    pub input_taint: Option<usize>,
    /// What the tool check cannot see (SPEC 3.1 "The guard's view"), found by [`flatten`].
    pub(crate) unseen: Unseen,
}

/// Node qualified ids and tool names to their indices ([`FlatModel::names`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    /// Qualified node id to node.
    pub(crate) nodes: std::collections::HashMap<String, NodeIx>,
    /// Tool name to tool (the first of a repeated name).
    pub(crate) tools: std::collections::HashMap<String, ToolIx>,
}

impl Names {
    /// The index of `nodes` and `tools`.
    pub(crate) fn of(nodes: &[FlatNode], tools: &[ToolDef]) -> Names {
        let mut n = Names::default();
        for (i, x) in nodes.iter().enumerate() {
            n.nodes.entry(x.qid.clone()).or_insert(i);
        }
        for (i, t) in tools.iter().enumerate() {
            n.tools.entry(t.name.clone()).or_insert(i);
        }
        n
    }
}

/// The rulebook's gate on a tool's guarded calls (SPEC 3 `fact[f]`, SPEC 5; seed chapter 45, "The
/// rulebook's facts").
///
/// A fact is false until the tool it is read from has answered, then either value at each check
/// (a later answer, or an answer about another order, can say the opposite); a fact the caller
/// supplies can be either at any check. So whether some route's path condition can hold depends
/// only on which fact tools have run: the gate is monotone in `ran`, kept as its minimal sets.
/// A guarded call of the tool runs only when, for some set in `any_of`, every tool of the set has
/// run (`ran[t]`); an empty set always allows; `any_of` empty never allows. A refused call changes
/// nothing (SPEC 3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleGate {
    /// Minimal sets of fact tools, each sorted, sets in ascending order.
    pub any_of: Vec<Vec<ToolIx>>,
}

/// One condition the tool check reads on a guarded call (SPEC 3: "A **guarded** call runs only if
/// the tool check allows it"): from the tool's order rules and the rulebook's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckLit {
    /// `ran[t]` holds (an `after` rule; a tool of a gate's set).
    Ran(ToolIx),
    /// `ran[t]` does not hold (a `not_after` rule naming a tool).
    NotRan(ToolIx),
    /// The run is not tainted (`not_after: [untrusted]`).
    Untainted,
    /// The tool's own `count` is below N (`at_most: N`).
    CountBelow(u32),
}

/// The tool check on a guarded call of one tool (SPEC 3): it allows the call when every literal of
/// `all` (the order rules) holds and, where the tool has a gate, the gate allows it. The one
/// definition of "the check allows" that the interpreter and both engines evaluate, each over its
/// own latches (see [`ToolCheck::eval`]). A refused call changes nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCheck {
    /// The order rules' conditions, all of which must hold.
    pub(crate) all: Vec<CheckLit>,
    /// The rulebook's gate (SPEC 3 `fact[f]`); `None` where none applies or one of its sets is
    /// empty (it always allows). A gate with no set never allows.
    pub(crate) gate: Option<RuleGate>,
}

impl ToolCheck {
    /// The check over any Boolean domain: `lit` reads a literal, `all`/`any` combine what they
    /// are given (a conjunction of nothing is true, a disjunction of nothing false; over `bool`
    /// they may stop early).
    pub(crate) fn eval<B>(
        &self,
        lit: &dyn Fn(CheckLit) -> B,
        all: &dyn Fn(&mut dyn Iterator<Item = B>) -> B,
        any: &dyn Fn(&mut dyn Iterator<Item = B>) -> B,
    ) -> B {
        let gate = self.gate.iter().map(|g| {
            any(&mut g
                .any_of
                .iter()
                .map(|set| all(&mut set.iter().map(|&t| lit(CheckLit::Ran(t))))))
        });
        all(&mut self.all.iter().map(|&l| lit(l)).chain(gate))
    }

    /// The check over concrete values: true when the call may run.
    pub(crate) fn allows(&self, lit: &dyn Fn(CheckLit) -> bool) -> bool {
        self.eval(lit, &|mut v| Iterator::all(&mut v, |b| b), &|mut v| {
            Iterator::any(&mut v, |b| b)
        })
    }

    /// Every literal the check reads (a gate's tools as [`CheckLit::Ran`]), for slicing.
    pub(crate) fn reads(&self) -> impl Iterator<Item = CheckLit> + '_ {
        self.all.iter().copied().chain(
            self.gate
                .iter()
                .flat_map(|g| g.any_of.iter().flatten())
                .map(|&t| CheckLit::Ran(t)),
        )
    }

    /// True when the check reads no latch: it always allows, or (a gate with no set) never does,
    /// so every engine decides it exactly without keeping anything.
    pub(crate) fn reads_nothing(&self) -> bool {
        self.reads().next().is_none()
    }
}

impl FlatModel {
    /// The tool check on a guarded call of `u` (SPEC 3): its order rules and its gate.
    pub(crate) fn tool_check(&self, u: ToolIx) -> ToolCheck {
        let o = &self.tools[u].order;
        let mut all: Vec<CheckLit> = o
            .after
            .iter()
            .filter_map(|a| self.tool_ix(&a.name))
            .map(CheckLit::Ran)
            .collect();
        for b in &o.not_after {
            match b {
                NotAfter::Tool(n) => all.extend(self.tool_ix(&n.name).map(CheckLit::NotRan)),
                NotAfter::Untrusted => all.push(CheckLit::Untainted),
            }
        }
        if let Some(am) = &o.at_most {
            all.push(CheckLit::CountBelow(am.count));
        }
        let gate = self.gates[u]
            .as_ref()
            .filter(|g| g.any_of.iter().all(|set| !set.is_empty()))
            .cloned();
        ToolCheck { all, gate }
    }

    /// [`FlatModel::tool_check`] of every tool, by tool index (SPEC 3).
    pub fn tool_checks(&self) -> Vec<ToolCheck> {
        (0..self.tools.len()).map(|u| self.tool_check(u)).collect()
    }

    /// The tools declared `confidential` (SPEC 2.3), for O9 (QG019).
    pub(crate) fn confidential(&self) -> impl Iterator<Item = ToolIx> + '_ {
        self.tools
            .iter()
            .enumerate()
            .filter(|(_, d)| d.confidential)
            .map(|(t, _)| t)
    }

    /// The index of the tool named `name`.
    pub fn tool_ix(&self, name: &str) -> Option<ToolIx> {
        match self.names.tools.get(name) {
            Some(&i) if self.tools.get(i).is_some_and(|t| t.name == name) => Some(i),
            _ => self.tools.iter().position(|t| t.name == name),
        }
    }

    /// Region `r` as a person reads it: its bare name (`desk`) when no other region has that
    /// name, else its kind and name (`agent kb`, `subgraph kb`, `graph kb`).
    pub fn region_label(&self, r: usize) -> String {
        let Some(reg) = self.regions.get(r) else {
            return format!("region #{r}");
        };
        if self.regions.iter().filter(|o| o.name == reg.name).count() > 1 {
            format!("{} {}", reg.kind.as_str(), reg.name)
        } else {
            reg.name.clone()
        }
    }

    /// The node with qualified id `qid`.
    pub fn node_ix(&self, qid: &str) -> Option<NodeIx> {
        match self.names.nodes.get(qid) {
            Some(&i) if self.nodes.get(i).is_some_and(|n| n.qid == qid) => Some(i),
            _ => self.nodes.iter().position(|n| n.qid == qid),
        }
    }

    /// The latch the tool check reads for `lit` on a guarded call of `u` (SPEC 3.1 "The
    /// guard's view"): the seen twin where it can differ from the latch, else the latch itself.
    pub(crate) fn check_latch(&self, u: ToolIx, lit: CheckLit) -> Latch {
        match lit {
            CheckLit::Ran(t) | CheckLit::NotRan(t) if self.unseen.tool(t) => Latch::RanSeen(t),
            CheckLit::Ran(t) | CheckLit::NotRan(t) => Latch::Ran(t),
            CheckLit::Untainted if self.unseen.taint => Latch::TaintedSeen,
            CheckLit::Untainted => Latch::Tainted,
            CheckLit::CountBelow(_) if self.unseen.tool(u) => Latch::CountSeen(u),
            CheckLit::CountBelow(_) => Latch::Count(u),
        }
    }

    /// True when some review of `tool`'s calls may be answered yes for the rest of the run.
    pub(crate) fn standing(&self, tool: ToolIx) -> bool {
        self.standing.get(tool).copied().unwrap_or(false)
    }

    /// True when `tool` is a write, or privileged.
    pub(crate) fn write_or_privileged(&self, tool: ToolIx) -> bool {
        self.tools[tool].is_write() || self.tools[tool].privileged
    }
}
