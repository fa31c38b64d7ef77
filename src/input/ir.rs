//! The input model: what the readers in [`crate::input`] produce and every later stage reads.
//!
//! These types mirror SPEC 2.2 (the `qls-graph/1` export) and SPEC 2.3 (the catalogue) one to one,
//! with every declaration carrying the [`Loc`] of the text that declared it, so findings can point
//! back into `agent.yaml`, the export or the catalogue. Nothing here is flattened or checked for
//! meaning: that is [`crate::model`]'s job.

/// The numbers of turns a search may span (SPEC 1 `session_steps`), wherever the number comes
/// from: the flag, the export, `stalwart.toml`. [`crate::run::verify::session_steps`] chooses one;
/// the input's reader, the configuration and the model read this one range.
pub(crate) const SESSION_STEPS: std::ops::RangeInclusive<u32> = 1..=16;

use crate::input::source::Loc;

/// A `qls-graph/1` export (SPEC 2.2): the top graph plus the run-wide settings.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// `name`, shown in the report header.
    pub name: Option<String>,
    /// `source`, the file the exporter read (for agent.yaml compiles: that file).
    pub source: Option<String>,
    /// `recursion_limit`: node steps in one run (SPEC 3.1). LangGraph's default is 25.
    pub recursion_limit: u32,
    /// `session_steps`: conversation turns to search, when the export says.
    pub session_steps: Option<u32>,
    /// The run budget; any declared budget bounds every cycle (QG023).
    pub budget: Option<Budget>,
    /// State flags in declaration order (SPEC 2.2 `state`).
    pub state: Vec<FlagDecl>,
    /// The top graph.
    pub graph: GraphDef,
    /// The exporter's own `warnings`, shown in the report.
    pub warnings: Vec<String>,
    /// Agents declared by agent.yaml (empty for a plain export): for QG023 agent budgets and lints.
    pub agents: Vec<AgentInfo>,
    /// `input.reads_outside` (SPEC 2.2, 12.3): what starts each turn is content from outside, so
    /// every turn starts tainted (origin region: the top graph).
    pub input_reads_outside: bool,
    /// The export's `producer` metadata as written (SPEC 2.2 lets exporters add their own), kept
    /// so `--export-only` writes it back.
    pub(crate) producer: Option<serde_json::Value>,
    /// The framework the export was made from, as `producer` says: the findings' fixes are
    /// written in that framework's terms (SPEC 12).
    pub(crate) framework: Framework,
    /// `tool_locations` (SPEC 12.4): where each tool is defined in the user's source, as
    /// `(tool, location, the file the location names)`. The loader resolves the file; a tool's
    /// findings give its definition as a related location.
    pub(crate) tool_locations: Vec<(String, Loc, Option<String>)>,
}

/// The framework an export was made from, read from the `producer` metadata its exporter adds
/// (SPEC 2.2), so fixes can name that framework's remedy (SPEC 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framework {
    /// agent.yaml, or an export whose producer names nothing we know.
    #[default]
    Other,
    /// A LangGraph export: `producer.versions` names `langgraph`, or `producer.exporter` is
    /// `stalwart_export` (what `python/stalwart_export` writes).
    LangGraph,
    /// An OpenAI Agents SDK export: `producer.exporter` is `stalwart_export.openai_agents`
    /// (SPEC 13.1).
    OpenAiAgents,
}

/// An agent of agent.yaml, as the later rules need it.
#[derive(Debug, Clone)]
pub struct AgentInfo {
    /// The agent's name (the key under `agents:`).
    pub(crate) name: String,
    /// `budget:` declared on the agent (silences QG023 on cycles wholly inside the agent).
    pub budget: Option<Budget>,
    /// `on_unread:` as written, if any.
    pub on_unread: Option<String>,
    /// `privilege: high` makes every tool of the agent privileged.
    pub privilege_high: bool,
    /// Where the agent was declared.
    pub(crate) loc: Loc,
}

/// A declared budget `{steps, turns}`. Either may be absent; its presence is what QG023 reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budget {
    /// Steps allowed.
    pub steps: Option<u64>,
    /// Turns allowed.
    pub turns: Option<u64>,
}

/// A state flag declaration (`state: {name: {scope}}`).
#[derive(Debug, Clone)]
pub struct FlagDecl {
    /// The flag's name.
    pub(crate) name: String,
    /// `session` (kept across turns) or `turn` (reset when a turn starts).
    pub(crate) scope: FlagScope,
    /// Where it was declared.
    pub loc: Loc,
}

/// The scope of a state flag (SPEC 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlagScope {
    /// Kept across turns, as a checkpointer keeps state.
    Session,
    /// Reset to false when a turn starts.
    Turn,
}

/// One graph: the top graph or a subgraph (same shape, SPEC 2.2 `subgraphs`).
#[derive(Debug, Clone, Default)]
pub struct GraphDef {
    /// `entry`: the node a run enters first; absent means the graph's `start` node.
    pub entry: Option<Named>,
    /// Nodes in declaration order.
    pub nodes: Vec<NodeDef>,
    /// Edges in declaration order.
    pub edges: Vec<EdgeDef>,
    /// `Send` fan-outs.
    pub sends: Vec<SendDef>,
    /// Interrupts (pauses for a person).
    pub interrupts: Vec<InterruptDef>,
    /// Named subgraphs, in declaration order.
    pub subgraphs: Vec<(Named, GraphDef)>,
    /// A subgraph's own budget (silences QG023 on cycles wholly inside it).
    pub(crate) budget: Option<Budget>,
}

/// A name together with where it was written (an id, a tool name, a flag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The text.
    pub name: String,
    /// Where it was written.
    pub loc: Loc,
}

/// The kind of a node (SPEC 2.2 `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// The graph's start.
    Start,
    /// The graph's end: reaching the top one ends the turn.
    End,
    /// An LLM chooses: any tool it is offered, any outgoing edge.
    Model,
    /// The guarded tool node: every call goes through the tool check.
    Tools,
    /// A plain tool node: calls skip the check.
    ToolsPlain,
    /// Code we cannot read; if it lists tools, it calls them directly (plain).
    Step,
    /// The Bot Builder router.
    Router,
    /// Runs another graph.
    Subgraph,
    /// A remote agent over a channel; leaving it taints.
    Remote,
}

impl NodeKind {
    /// The spelling used in `qls-graph/1`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NodeKind::Start => "start",
            NodeKind::End => "end",
            NodeKind::Model => "model",
            NodeKind::Tools => "tools",
            NodeKind::ToolsPlain => "tools_plain",
            NodeKind::Step => "step",
            NodeKind::Router => "router",
            NodeKind::Subgraph => "subgraph",
            NodeKind::Remote => "remote",
        }
    }

    /// Parses the `qls-graph/1` spelling; `None` for an unknown kind.
    pub(crate) fn parse(s: &str) -> Option<NodeKind> {
        Some(match s {
            "start" => NodeKind::Start,
            "end" => NodeKind::End,
            "model" => NodeKind::Model,
            "tools" => NodeKind::Tools,
            "tools_plain" => NodeKind::ToolsPlain,
            "step" => NodeKind::Step,
            "router" => NodeKind::Router,
            "subgraph" => NodeKind::Subgraph,
            "remote" => NodeKind::Remote,
            _ => return None,
        })
    }

    /// Every kind's spelling, for error messages.
    pub(crate) const ALL: &'static [&'static str] = &[
        "start",
        "end",
        "model",
        "tools",
        "tools_plain",
        "step",
        "router",
        "subgraph",
        "remote",
    ];
}

/// A node declaration.
#[derive(Debug, Clone)]
pub struct NodeDef {
    /// `id`: non-empty, unique in its graph, no `/`.
    pub id: Named,
    /// `kind`.
    pub kind: NodeKind,
    /// `agent`: the agent the node belongs to (its region, SPEC 3.1).
    pub agent: Option<String>,
    /// `tools`: offered (model) or bound (tool nodes, steps).
    pub tools: Vec<Named>,
    /// `hosted` (a `model` node only, SPEC 2.2): tools the model's provider runs inside the model
    /// call, plain calls one after another before it chooses.
    pub hosted: Vec<Named>,
    /// `model_written` (issue 28): tools of `tools` whose arguments the node's code takes from
    /// what a model wrote (a step running a tool call's arguments, or a message's text): a model
    /// chooses those arguments, as at a tool node (SPEC 6, QG017/QG018).
    pub(crate) model_written: Vec<Written>,
    /// `sets`: flags its code sets when it runs.
    pub sets: Vec<Named>,
    /// `clears`: flags its code clears when it runs.
    pub clears: Vec<Named>,
    /// `graph`: for a subgraph node, the name of the graph it runs.
    pub graph: Option<Named>,
    /// `channel`: for a remote node.
    pub channel: Option<String>,
    /// `location` as declared (or, for agent.yaml compiles, the declaring line); else where the
    /// node's `id` is written in the export.
    pub loc: Loc,
    /// True when the export gave an explicit `location` (or agent.yaml declared it).
    pub declared_location: bool,
    /// The `file` an export's `location` names, when it names one (resolved by the loader).
    pub declared_file: Option<String>,
    /// Where the node's `id` is written in the export (the fallback location).
    pub object_loc: Loc,
    /// `opaque`: what the exporter saw the node's code do but could not read (SPEC 2.2, 12.5),
    /// each a QG024 finding.
    pub(crate) opaque: Vec<OpaqueDef>,
    /// `guard_not_credited` (SPEC 2.2): the node's calls pass a guard the export does not credit,
    /// and why (the exporter's words); findings on its calls say so in their fix.
    pub(crate) guard_not_credited: Option<String>,
}

/// One entry of a node's `model_written`: a tool, and the arguments a model wrote (`None`: any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    /// The tool (one of the node's `tools`).
    pub(crate) tool: Named,
    /// The names of the arguments the model wrote; `None` when it may have written any.
    pub(crate) args: Option<Vec<String>>,
}

/// One `opaque` entry of a node (SPEC 2.2, 12.5): something the exporter saw the node's code do
/// but could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpaqueDef {
    /// `what`: the kind of thing left unread.
    pub(crate) what: OpaqueWhat,
    /// `why`: the exporter's reason, as written.
    pub(crate) why: String,
    /// The entry's own `location`, when it gives one (resolved by the loader); else the node's.
    pub(crate) loc: Option<Loc>,
    /// The `file` the entry's `location` names, when it names one.
    pub(crate) declared_file: Option<String>,
}

/// What an `opaque` entry left unread (SPEC 2.2 `opaque`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpaqueWhat {
    /// Tools bound or called that the exporter cannot resolve.
    Tools,
    /// A chat model made or chosen at run time.
    Model,
    /// A pause the exporter cannot place (`interrupt()` in a helper, `raise NodeInterrupt`).
    Pause,
    /// An agent or compiled graph built or run inside the node's code.
    Subgraph,
    /// Other code: a chain whose steps the exporter cannot read.
    Code,
}

impl OpaqueWhat {
    /// Every `what`, as written in an export.
    pub(crate) const ALL: [&'static str; 5] = ["tools", "model", "pause", "subgraph", "code"];

    /// Parses an export's `what`.
    pub(crate) fn parse(s: &str) -> Option<OpaqueWhat> {
        Some(match s {
            "tools" => OpaqueWhat::Tools,
            "model" => OpaqueWhat::Model,
            "pause" => OpaqueWhat::Pause,
            "subgraph" => OpaqueWhat::Subgraph,
            "code" => OpaqueWhat::Code,
            _ => return None,
        })
    }

    /// As written in an export.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OpaqueWhat::Tools => "tools",
            OpaqueWhat::Model => "model",
            OpaqueWhat::Pause => "pause",
            OpaqueWhat::Subgraph => "subgraph",
            OpaqueWhat::Code => "code",
        }
    }
}

/// The kind of an edge (SPEC 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// Always taken (read as a choice when a node has several, SPEC 3.1).
    Fixed,
    /// A routing function chooses.
    Conditional,
    /// A `Command` chooses.
    Command,
    /// An edge of stalwart's own, usually with a guard.
    StalwartEdge,
}

impl EdgeKind {
    /// The spelling used in `qls-graph/1`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Fixed => "fixed",
            EdgeKind::Conditional => "conditional",
            EdgeKind::Command => "command",
            EdgeKind::StalwartEdge => "stalwart_edge",
        }
    }
}

/// An edge declaration.
#[derive(Debug, Clone)]
pub struct EdgeDef {
    /// `from`: a node id of the same graph.
    pub from: Named,
    /// `kind`.
    pub kind: EdgeKind,
    /// `destinations`; `None` is `null` (undeclared: every node of the graph, QG015).
    /// An entry `../id` names a node of the enclosing graph.
    pub destinations: Option<Vec<Named>>,
    /// `guard`: taken only when it holds.
    pub(crate) guard: Option<Guard>,
    /// `exit_after`: taken at most N times in one run.
    pub(crate) exit_after: Option<u32>,
    /// Where the edge was declared.
    pub loc: Loc,
    /// The `file` an export's edge `location` names, when it names one (resolved by the loader).
    pub declared_file: Option<String>,
    /// Where the edge's own entry starts in the export (the fallback location).
    pub object_loc: Loc,
}

/// A guard expression over state flags: `name`, `!e`, `e && e`, `e || e`, parentheses. The
/// reader gives flags by name (`Guard<String>`); the model resolves them to indices
/// (`Guard<usize>`, [`crate::model::FlatGuard`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard<F = String> {
    /// A flag.
    Flag(F),
    /// Negation.
    Not(Box<Guard<F>>),
    /// Conjunction.
    And(Box<Guard<F>>, Box<Guard<F>>),
    /// Disjunction.
    Or(Box<Guard<F>>, Box<Guard<F>>),
}

impl<F> Guard<F> {
    /// Evaluates the guard with `lookup` giving each flag's value.
    pub(crate) fn eval(&self, lookup: &dyn Fn(&F) -> bool) -> bool {
        match self {
            Guard::Flag(f) => lookup(f),
            Guard::Not(g) => !g.eval(lookup),
            Guard::And(a, b) => a.eval(lookup) && b.eval(lookup),
            Guard::Or(a, b) => a.eval(lookup) || b.eval(lookup),
        }
    }

    /// The same guard with each flag mapped by `f`; `None` when `f` gives `None` for one.
    pub(crate) fn try_map<G>(&self, f: &dyn Fn(&F) -> Option<G>) -> Option<Guard<G>> {
        Some(match self {
            Guard::Flag(x) => Guard::Flag(f(x)?),
            Guard::Not(g) => Guard::Not(Box::new(g.try_map(f)?)),
            Guard::And(a, b) => Guard::And(Box::new(a.try_map(f)?), Box::new(b.try_map(f)?)),
            Guard::Or(a, b) => Guard::Or(Box::new(a.try_map(f)?), Box::new(b.try_map(f)?)),
        })
    }
}

impl std::fmt::Display for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Guard::Flag(n) => write!(f, "{n}"),
            Guard::Not(g) => match **g {
                Guard::Flag(_) | Guard::Not(_) => write!(f, "!{g}"),
                _ => write!(f, "!({g})"),
            },
            Guard::And(a, b) => {
                let side = |g: &Guard, f: &mut std::fmt::Formatter<'_>| match g {
                    Guard::Or(..) => write!(f, "({g})"),
                    _ => write!(f, "{g}"),
                };
                side(a, f)?;
                write!(f, " && ")?;
                side(b, f)
            }
            Guard::Or(a, b) => write!(f, "{a} || {b}"),
        }
    }
}

/// A `Send` fan-out: each destination may run next (modelled as extra edges from `from`).
#[derive(Debug, Clone)]
pub struct SendDef {
    /// The sending node.
    pub from: Named,
    /// Where it sends.
    pub destinations: Vec<Named>,
    /// Where it was declared.
    pub loc: Loc,
}

/// When an interrupt pauses (SPEC 2.2 `interrupts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// On entering the node: the person's yes confirms the tool; a no leaves the run paused.
    Before,
    /// On leaving the node, likewise.
    After,
    /// The node's own code asks (`interrupt()`) and goes on whatever the answer.
    Inside,
    /// A review of each call (SPEC 12.2): at the node, every call of the tool is put to the
    /// person before it runs; a yes runs that call confirmed, a no runs nothing.
    Call,
}

impl When {
    /// The spelling used in `qls-graph/1`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            When::Before => "before",
            When::After => "after",
            When::Inside => "inside",
            When::Call => "call",
        }
    }
}

/// An interrupt declaration.
#[derive(Debug, Clone)]
pub struct InterruptDef {
    /// The node it pauses at.
    pub node: Named,
    /// Before, after, inside or call.
    pub when: When,
    /// The write the person confirms there, or `None` for a pause that confirms nothing (never
    /// `None` for `call`).
    pub tool: Option<Named>,
    /// A state flag the yes sets (and, inside, the no clears); never on `call`.
    pub answer: Option<Named>,
    /// `standing` (SPEC 2.2, 3.1 "Standing approvals"): on a `call` review only, the person may
    /// also answer yes for the rest of the run.
    pub standing: bool,
    /// Where it was declared.
    pub loc: Loc,
}

/// The catalogue (SPEC 2.3): what each tool is.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    /// Tools in declaration order (merged in order for agent.yaml).
    pub tools: Vec<ToolDef>,
    /// `channels`: name → auth.
    pub channels: Vec<(String, Option<String>)>,
    /// `stores`: name → properties.
    pub stores: Vec<StoreDef>,
    /// Words and roles the verifier does not know: kept and named in a lint.
    pub unknown: Vec<UnknownWord>,
}

impl Catalogue {
    /// The tool named `name`, if declared.
    pub fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// A word (or argument role) the verifier does not know, kept for the `unknown_word` lint.
#[derive(Debug, Clone)]
pub struct UnknownWord {
    /// The tool it was written on.
    pub tool: String,
    /// The word as written (for a role: `args.<arg>.role: <value>`).
    pub word: String,
    /// A known word close to it (a likely typo), if any.
    pub(crate) suggestion: Option<String>,
    /// Where it was written.
    pub loc: Loc,
}

/// A store declaration (`stores:`).
#[derive(Debug, Clone)]
pub struct StoreDef {
    /// The store's name.
    pub(crate) name: String,
    /// Shared by several tenants.
    pub multi_tenant: bool,
    /// Kept across sessions.
    pub persistent: bool,
}

/// `read` or `write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads only.
    Read,
    /// Changes something.
    Write,
}

/// How a write is undone (`compensation` / `undo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compensation {
    /// Absent or `null`: no compensation.
    Absent,
    /// `"none"`: a failed run may leave it done (neither compensable nor unrecoverable).
    NoneDeclared,
    /// The tool that undoes it.
    Tool(Named),
}

/// An argument's role (SPEC 2.3 `args.*.role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Code the tool runs.
    Code,
    /// A shell command.
    Shell,
    /// SQL.
    Sql,
    /// A query.
    Query,
    /// A file path.
    Path,
    /// A URL.
    Url,
    /// A template.
    Template,
    /// A destination (address, host).
    Destination,
    /// The user the call is for.
    UserId,
    /// Data the tool reads or stores, never a place it sends to (the guard's rule 4 does not
    /// scan it).
    Content,
}

impl Role {
    /// The roles of an argument that is code the tool runs (QG017).
    pub(crate) const CODE: &'static [Role] = &[Role::Code, Role::Shell];
    /// The roles of an argument that is a query or a destination (QG018).
    pub(crate) const QUERY: &'static [Role] = &[
        Role::Sql,
        Role::Query,
        Role::Path,
        Role::Url,
        Role::Template,
        Role::Destination,
    ];

    /// The role's word in the catalogue.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Code => "code",
            Role::Shell => "shell",
            Role::Sql => "sql",
            Role::Query => "query",
            Role::Path => "path",
            Role::Url => "url",
            Role::Template => "template",
            Role::Destination => "destination",
            Role::UserId => "user_id",
            Role::Content => "content",
        }
    }

    /// Parses a role; `None` when unknown (kept and linted).
    pub(crate) fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "code" => Role::Code,
            "shell" => Role::Shell,
            "sql" => Role::Sql,
            "query" => Role::Query,
            "path" => Role::Path,
            "url" => Role::Url,
            "template" => Role::Template,
            "destination" => Role::Destination,
            "user_id" => Role::UserId,
            "content" => Role::Content,
            _ => return None,
        })
    }
}

/// One argument of a tool.
#[derive(Debug, Clone)]
pub struct ArgDef {
    /// The argument's name.
    pub name: String,
    /// Its role, when declared and known.
    pub role: Option<Role>,
    /// Where its role was declared (else its name): QG017, QG018 and QG020 point there.
    pub loc: Loc,
}

/// A `not_after` entry: a tool, or `untrusted` (any taint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAfter {
    /// Must never follow this tool.
    Tool(Named),
    /// Must never follow content from outside.
    Untrusted,
}

/// `at_most: N` or `{count: N, per: P}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtMost {
    /// The cap N.
    pub count: u32,
    /// `per`: `turn`/`run` reset at each turn; `session` or absent never.
    pub per_turn: bool,
}

/// Order rules (`order`, SPEC 2.3).
#[derive(Debug, Clone, Default)]
pub struct Order {
    /// Must come after every one of these.
    pub after: Vec<Named>,
    /// Must never follow these.
    pub not_after: Vec<NotAfter>,
    /// At most this many calls.
    pub at_most: Option<AtMost>,
}

/// A tool of the catalogue, with every word of SPEC 2.3.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// `kind`.
    pub kind: ToolKind,
    /// `description`.
    pub description: Option<String>,
    /// `reads_outside`: its result is untrusted.
    pub reads_outside: bool,
    /// `sends_out`.
    pub sends_out: bool,
    /// `irreversible`.
    pub irreversible: bool,
    /// `destructive`.
    pub destructive: bool,
    /// `compensation` / `undo`.
    pub compensation: Compensation,
    /// `idempotency: true`.
    pub idempotent: bool,
    /// `result` declared.
    pub has_result_schema: bool,
    /// `args`.
    pub args: Vec<ArgDef>,
    /// `order` (and a bare `at_most`).
    pub order: Order,
    /// `privilege: high`.
    pub privileged: bool,
    /// `confidential`.
    pub confidential: bool,
    /// `store: {name, access}`; access `write` is true.
    pub store: Option<(String, bool)>,
    /// `source`: (module or server, pinned).
    pub source: Option<(String, bool)>,
    /// `requires`.
    pub requires: Vec<String>,
    /// `checks` declared.
    pub has_checks: bool,
    /// `spend` declared.
    pub has_spend: bool,
    /// Where the tool's entry was declared.
    pub loc: Loc,
    /// Where the tool is defined in the user's source (an export's `tool_locations`, SPEC 12.4).
    pub(crate) defined: Option<Loc>,
    /// True when the entry says `kind: null`: not yet declared (an exporter's `--init-words`
    /// writes it for a tool nothing declares). Read as a write, the worst case, and listed in the
    /// `kind_unset` lint until it is set.
    pub(crate) kind_unset: bool,
}

impl ToolDef {
    /// A new tool of `kind` with every other word absent.
    pub fn new(name: &str, kind: ToolKind, loc: Loc) -> ToolDef {
        ToolDef {
            name: name.to_string(),
            kind,
            description: None,
            reads_outside: false,
            sends_out: false,
            irreversible: false,
            destructive: false,
            compensation: Compensation::Absent,
            idempotent: false,
            has_result_schema: false,
            args: Vec::new(),
            order: Order::default(),
            privileged: false,
            confidential: false,
            store: None,
            source: None,
            requires: Vec::new(),
            has_checks: false,
            has_spend: false,
            loc,
            defined: None,
            kind_unset: false,
        }
    }

    /// True for a write.
    pub fn is_write(&self) -> bool {
        self.kind == ToolKind::Write
    }
}

/// A rulebook fact declared in agent.yaml's `facts:` (SPEC 2.1, 3; seed chapter 45, "The
/// rulebook's facts").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fact {
    /// The fact's name (`order_paid`), as a rulebook condition reads it (`$order_paid`).
    pub(crate) name: Named,
    /// Where its value comes from.
    pub(crate) source: FactSource,
    /// `same: arg`: only an answer about the argument the checked call names counts.
    pub(crate) same: Option<String>,
}

/// Where a fact's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FactSource {
    /// `from: tool.field` (truthy) or `from: tool.field == value`: the latest answer of `tool`.
    Tool {
        /// The tool whose answer gives the fact.
        tool: Named,
        /// The field read (`status`, `card`).
        field: String,
        /// `== value`, when given.
        equals: Option<String>,
    },
    /// `from: caller`: the application supplies it with each check (`context=`).
    Caller,
}
