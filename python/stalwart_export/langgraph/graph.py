"""export_graph: a compiled LangGraph graph as qls-graph/1 (SPEC section 2.2).

Tested with langgraph 1.2.24, langgraph-prebuilt 1.1.3, langchain-core 1.8.3, langchain 1.5.2,
langgraph-supervisor 0.0.31 and langgraph-swarm 0.1.0 (python/requirements-test.txt). It reads
the builder kept on the compiled graph (`CompiledStateGraph.builder`: `nodes`, `edges`,
`waiting_edges`, `branches`), the compiled graph's `interrupt_before_nodes` /
`interrupt_after_nodes` and `nodes[...].subgraphs`, and the source code of node functions,
routers and tools (`inspect.getsource`) for what LangGraph does not store: `Send` fan-outs,
`Command(goto=...)`, `interrupt()` calls, models and tools a function references.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
from typing import Any

from ._ids import escape_id, unescape_id  # noqa: F401 - part of this module's interface
from . import (_chain_node, _chains, _code, _fallbacks, _guarded, _halts, _hosted, _inner_export, _pauses, _picks,
               _review, _routes, _sources, _unseen, _words, _written)

START = "__start__"
END = "__end__"
HANDOFF_KEY = "__handoff_destination"
EXPORTER = "stalwart_export"

_PREBUILT_MODEL_FUNCS = (
    "create_react_agent.<locals>.call_model",
    "create_react_agent.<locals>.acall_model",
    "create_agent.<locals>.model_node",
    "create_agent.<locals>.amodel_node",
)


def versions() -> dict[str, str]:
    """The installed versions of the packages the export depends on (absent ones left out)."""
    out = {}
    for pkg in ("langgraph", "langgraph-prebuilt", "langchain-core", "langchain",
                "langgraph-supervisor", "langgraph-swarm"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    try:
        out["stalwart-export"] = importlib.metadata.version("stalwart-export")
    except importlib.metadata.PackageNotFoundError:
        pass
    return out


#: What a compiled graph is made with, for error messages.
GRAPH_EXAMPLES = (
    "StateGraph(...).compile(), create_agent(...), create_react_agent(...), "
    "create_supervisor(...).compile(), create_swarm(...).compile()"
)
BUILDER_FIX = "this is a StateGraph builder: call .compile() and export the compiled graph"


def is_graph(obj: Any) -> bool:
    """Is `obj` a compiled LangGraph graph: a `Pregel` (`CompiledStateGraph` and the functional
    API's `@entrypoint` are ones) or another `PregelProtocol` (a `RemoteGraph`)? A
    `StateGraph` builder is not (it must be compiled), nor is any other `Runnable`."""
    try:
        from langgraph.pregel.protocol import PregelProtocol
    except ImportError as e:  # pragma: no cover
        raise ImportError("stalwart_export needs langgraph installed (pip install langgraph)") from e
    return isinstance(obj, PregelProtocol)


def is_builder(obj: Any) -> bool:
    """Is `obj` an uncompiled `StateGraph`?"""
    from langgraph.graph.state import StateGraph

    return isinstance(obj, StateGraph)


def describe(obj: Any) -> str:
    """What `obj` is, for an error message: `None`, `an int`, `a FakeListChatModel (from
    langchain_core...), a chat model`, ..."""
    if obj is None:
        return "None"
    t = type(obj)
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__} (not an instance)"
    name = t.__name__ if t.__module__ == "builtins" else f"{t.__qualname__} (from {t.__module__})"
    art = "an" if name[:1].lower() in "aeiou" else "a"
    what = ""
    try:
        from langchain_core.language_models import BaseLanguageModel
        from langchain_core.runnables import Runnable
        from langchain_core.tools import BaseTool

        if isinstance(obj, BaseLanguageModel):
            what = ", a chat model"
        elif isinstance(obj, BaseTool):
            what = ", a tool"
        elif isinstance(obj, Runnable):
            what = ", a LangChain Runnable"
    except ImportError:  # pragma: no cover
        pass
    return f"{art} {name}{what}"


def check_graph(obj: Any, who: str) -> None:
    """Raise `TypeError` naming what `obj` is unless it is a compiled LangGraph graph
    (`is_graph`); an uncompiled `StateGraph` gets `BUILDER_FIX`."""
    if is_builder(obj):
        raise TypeError(f"{who}: {BUILDER_FIX}")
    if not is_graph(obj):
        raise TypeError(f"{who} expects a compiled LangGraph graph ({GRAPH_EXAMPLES}), got {describe(obj)}")


def export_graph(compiled: Any, *, name: str | None = None, provenance: bool = True, words: Any = None,
                 base: str | None = None, origin: tuple[str, str] | None = None) -> dict:
    """Export a compiled LangGraph graph as a qls-graph/1 dict (SPEC 2.2).

    `compiled`: a `CompiledStateGraph` (what `StateGraph.compile()`, `create_react_agent`,
    `create_agent`, `create_supervisor(...).compile()` and `create_swarm(...).compile()`
    return). Any other LangGraph graph (a `Pregel` such as the functional API's
    `@entrypoint`, or a `RemoteGraph`) is a TypeError at the top; as a subgraph it is exported
    empty, with a warning, which the verifier reports undecided (QG006). Anything else is refused (`check_graph`): a `StateGraph` that
    was not compiled (its compile-time pauses and subgraphs are on the compiled graph), a
    chat model or any other object raises `TypeError`.

    Returns `{"format": "qls-graph/1", "name", "nodes", "edges", "sends", "interrupts",
    "subgraphs", "producer", "warnings"}`; with `provenance=True` (the default) nodes and
    edges carry a `langgraph` object saying where each fact was read (the verifier ignores it).

    Reading, per node (`builder.nodes[name]`, a `StateNodeSpec`):
    * kind `subgraph` when the node is a compiled graph or its function calls one
      (`compiled.nodes[name].subgraphs`, or a compiled graph its code references, also one
      compiled with `checkpointer=False`); the subgraph is exported too, into `subgraphs`.
    * `tools_plain` for a `ToolNode` (`tools_by_name`).
    * `model` when its code reaches a chat model (`BaseLanguageModel`, through closures,
      globals, `RunnableBinding`/`RunnableSequence`), or it is a prebuilt agent's model node.
    * `step` otherwise, with `tools` naming the LangChain tools its code references directly
      (their calls skip every tool node and its pauses: a warning says so).
    * `location`: the file and line of the function (`inspect.getsourcelines`).

    Edges: `builder.edges` and `builder.waiting_edges` (joins) are `fixed`; `builder.branches`
    are `conditional` with the `BranchSpec.ends` LangGraph enforces (a `path_map`, or the
    router's `Literal` return annotation), else `null`; `command` edges from the node's
    `ends` (`Command[Literal[...]]` or `add_node(destinations=)`; LangGraph does not enforce
    them), plus any constant `Command(goto=...)` its source shows, else `null` when it
    returns a `Command` at all. A node with no fixed or conditional out-edge gets an implicit
    `conditional -> ["__end__"]` (its branch halts there). Error handlers (langgraph >= 1.2.0)
    are a `conditional` edge to the handler. Handoffs out of a subgraph
    (`Command(graph=Command.PARENT)`, the handoff tools of langgraph-swarm and
    langgraph-supervisor, found by their `__handoff_destination` metadata) are `command`
    edges to `../<node>`.

    Sends: `Send("node", ...)` in a router's or node's source; a `Send` whose node is not a
    constant has `destinations: null`.

    Interrupts: `interrupt_before` on a tool node is one `before` entry per tool it binds (the
    person sees every pending call); other compile-time pauses have `tool: null`;
    `interrupt()` in a node's code is `inside` (`tool: null`); `interrupt()` as the first
    thing a tool does is `before` that tool on its tool node when its answer keeps the tool from
    acting on a no, else `inside` with no tool and a warning (SPEC 12.5: an answer never read
    confirms nothing; after a call that may act it is no pause, and a warning says the effect runs
    again when the run resumes); an approval node (`_pauses.approval_routes`: `answer =
    interrupt(...)`, then every `Command(goto=<tool node>)` under a yes) is an `inside` pause for
    each tool of that tool node, each with its answer flag (declared in `state`), guarding the
    edge into it. `interrupt()` in the application's own helpers is followed
    `_pauses.HELPER_DEPTH` calls deep; a pause the exporter cannot place (`raise NodeInterrupt`, a
    helper deeper or unreadable, a step reaching interrupt() another way) is an `opaque` pause
    on the node, at its line (QG024), with a warning; `HumanInTheLoopMiddleware`
    (langchain >= 1.0) is `before` on its `after_model` node (`interrupt_mode="batched"`) or
    on the tool node (`"per_call"`) for each tool its `interrupt_on` gates. A pause that may
    be skipped (a `when` predicate, an `interrupt()` under a condition) is not written, and a
    warning says so: a skippable pause is not a confirmation.

    Guarded nodes (SPEC 12.1; `_guarded.py`): a tool node from `guard.tool_node`, a `ToolNode`
    whose innermost tool-call wrapper is a `Guard`'s (create_agent's `middleware=[..., guard]`),
    and a step whose every tool call goes through `guard.call` are `tools`, unless the guard's
    history would not outlive the subgraph the node is in (a warning says so), or a
    `with_fallbacks` around it can run tools unguarded or swallows the guard's pause
    (`_fallbacks.py`: a node is guarded only when every runnable it can run is). A guard built with
    `input_reads_outside=True` makes the export's `input.reads_outside` true.

    Per-call reviews (SPEC 12.2): `HumanInTheLoopMiddleware` is a `call` interrupt on the tool
    node for each tool it gates; a step that asks about each tool call with `interrupt()` and runs
    the tool only when the answer accepts or edits it (`_review.py`) is a `call` interrupt for
    each tool it reviews; a step that calls `interrupt()` and tools in another shape is `inside`,
    with a warning.

    Provider-hosted tools (SPEC 2.2, `_hosted.py`): a model bound with a provider's tool dict
    (`{"type": "web_search_preview"}`, a hosted MCP server, ...) gets `hosted`, naming them, and a
    warning that the guard never sees their calls. A tool whose code runs a guarded agent is a
    warning: each call starts a new session of that agent's guard.

    `words` (`_words.py`): `{"input": {"reads_outside": true}}`, `{"nodes": {N: {"calls": {...},
    "reviews": [...], "pure": "why", "model": true}}}` (and catalogue words, used by
    `export_catalogue`); each node word clears the node's `opaque` entries of what it declares
    (SPEC 12.5). Raises `WordsError` (a `ValueError`) for malformed words, a word a typo away from
    a known one, or words naming a node or tool the graph lacks.

    What a step's code does that a plain reading misses (`_unseen.py`, issue 28): a chat model made
    at run time (`init_chat_model`, a loader helper, a configurable model) makes the node a model
    node, its bound tools offered, not called (an opaque `model` entry when it binds tools the
    exporter cannot name); tools reached through the application's modules and objects (attribute
    chains, `getattr` with a literal, aliases, registries, helpers) are followed
    (`_code.referenced_objects`), and a call it cannot resolve (`getattr` with a run-time name,
    `.invoke()` on something it cannot resolve) is an opaque `tools` entry; `f(**call["args"])`
    over the application's plain functions is a `tools_plain` node over them; a step whose code
    cannot be read, or that runs code by `exec`/`eval` or a shell (`_code_runs.py`), is an opaque
    `code` entry. A step that hands a tool what the model wrote (a
    tool call's arguments, a message's text) lists that tool in its `model_written` (`_written.py`,
    SPEC 6 QG017/QG018: the model chooses those arguments, as at a tool node).

    Chains (`_chains.py`, `_chain_node.py`, issue 28): a node that is a chain, or whose function (or
    `functools.partial`) invokes one it reaches or builds, is read through, each step's function
    as a node's function: a model in it makes a `model` node (its bound tools offered), tools it
    runs make a `step` calling them (with an opaque `model` entry when a model is there too), and
    a step it cannot read is an opaque entry at the user's line.

    Agents built inside a node's function (issue 28 item 1, `_inner_agents.py`, `_inner_export.py`):
    a `create_react_agent(...)`/`create_agent(...)` call in the node's code (or an application
    helper it calls) whose arguments resolve statically is built again at export time (never run)
    and the node is a `subgraph` node running its export, located at the constructor's call; the
    node's own tool calls besides it are a step's around the agent (a `<node>_code` subgraph); what
    cannot be resolved is an opaque entry at the constructor's line (QG024). A module-level agent run
    inside a function (also through `functools.partial(f, agent=...)`) keeps the function's own calls
    the same way. A guard inside such an agent is credited only when the function passes the guard's
    history in and out (`_inner_agents.history_kept`); else its tool node is `tools_plain` with
    `guard_not_credited` (why, and the fix), which the verifier's findings on it repeat.

    Locations (SPEC 12.4, `_sources.py`): a node running a function of the user's at its `def`
    (an instance of the user's class with `__call__` at its `class`; a decorated function at its
    own `def`, `__wrapped__` followed); a node whose code is the framework's (a `ToolNode`, a
    prebuilt agent's nodes, a subgraph) at the user's `add_node(...)` call, or at the prebuilt
    constructor's call (`create_agent(...)`); a node with neither has no location (the verifier
    points at the export and says why). `tool_locations` gives each tool's definition (its
    function's `def`, its class), which findings on the tool show as a related location.
    `location.file` is relative to `base` (the folder the export is written to; default the
    working directory). `origin` is `(file, attribute)` the graph was loaded from (the CLI's
    MODULE:ATTR), read as the user's code too.

    Raises `TypeError` when `compiled` is not a compiled LangGraph graph. Node names containing `/`
    are escaped (`escape_id`) with a warning.
    """
    check_graph(compiled, "export_graph")
    w = _words.split(words)
    ex = _Exporter(provenance=provenance)
    ex.base = base
    top = ex.graph(compiled, parent=None)
    ex.finish_hosted()
    out = {"format": "qls-graph/1", "name": name or getattr(compiled, "name", None) or "LangGraph"}
    out.update(top)
    out["subgraphs"] = ex.subgraphs
    tool_locations = ex.finish_locations(base, origin)
    if tool_locations:
        out["tool_locations"] = tool_locations
    _words.apply(out, w, warn=ex.warn)
    # a tool with no definition of the user's (an effect a node's `calls` declare, an MCP or a
    # hosted tool) is located at the words that declare it, not at the generated catalogue
    unlocated = [t for t in _node_tool_names(out) if t not in tool_locations]
    tool_locations.update(_words.declared_at(w, unlocated, base))
    if tool_locations:
        out["tool_locations"] = tool_locations
    _written.mark(ex.to_locate)  # after the words: a declared effect the code hands the model's text
    if any(g.input_reads_outside for g in ex.guards):
        if w.input_reads_outside is False:
            ex.warn("the words say the input is the person's (input.reads_outside: false), but a guard of the graph "
                    "was built with input_reads_outside=True: the export follows the guard")
        out["input"] = {"reads_outside": True}
    if ex.guards:
        for where in ex.plain_handoffs:
            ex.warn(f"{where} calls hand-off tools ({', '.join(sorted(_node_tools(out, where)))}) without the guard, "
                    "though the graph has one: for create_supervisor, give the supervisor the guard's tool node "
                    "over a hand-off tool for each agent, "
                    "tools=guard.tool_node([create_handoff_tool(agent_name=...) for each agent]) "
                    "(langgraph_supervisor.create_handoff_tool; declare them kind: read in the catalogue)")
    out["producer"] = {"exporter": EXPORTER, "versions": versions()}
    out["warnings"] = ex.warnings
    if not provenance:
        _strip(out)
    return out


#: The most tools an approval node's tool node may bind for its yes to be credited: each is an
#: answer flag, and the verifier searches every combination of answers.
MAX_APPROVED_TOOLS = 8


def _goto_names(fn: Any, goto: ast.AST) -> list[str] | None:
    """The nodes a `Command(goto=...)` names: `_code.constant_strings`, and both arms of a
    conditional expression (`"tools" if answer == "approve" else "agent"`)."""
    if isinstance(goto, ast.IfExp):
        a, b = _goto_names(fn, goto.body), _goto_names(fn, goto.orelse)
        return None if a is None or b is None else a + b
    return _code.constant_strings(fn, goto)


def _flag(graph: str | None, node: str, tool: str) -> str:
    """The state flag holding an approval node's yes for `tool` (`approved.<graph>.<node>.<tool>`,
    each part cut to the characters a guard reads)."""
    import re

    parts = ["approved"] + ([graph] if graph else []) + [node, tool]
    return ".".join(re.sub(r"[^A-Za-z0-9_-]", "_", p) or "_" for p in parts)


def _node_tools(export: dict, where: str) -> list[str]:
    """The tools of the node a warning's `where` ("node 'x'", or "node 'x' in subgraph 'g'") names."""
    import re

    m = re.match(r"node '(.*?)'(?: in subgraph '(.*)')?$", where)
    if m is None:
        return []
    g = export["subgraphs"].get(m.group(2), {}) if m.group(2) else export
    node = next((n for n in g.get("nodes", []) if n["id"] == escape_id(m.group(1))), {})
    return list(node.get("tools") or [])


def _node_tool_names(export: dict) -> list[str]:
    """Every tool a node of the export (its subgraphs included) binds, offers or hosts, once."""
    out: list[str] = []
    for g in [export, *export.get("subgraphs", {}).values()]:
        for n in g.get("nodes", []):
            out += [t for t in [*(n.get("tools") or []), *(n.get("hosted") or [])] if t not in out]
    return out


def _strip(obj: Any) -> None:
    if isinstance(obj, dict):
        obj.pop("langgraph", None)
        for v in obj.values():
            _strip(v)
    elif isinstance(obj, list):
        for v in obj:
            _strip(v)


def graph_tools(compiled: Any) -> list:
    """Every LangChain tool the compiled graph (and its subgraphs) binds to a tool node or
    whose code references directly, once each by name, in the order met. For
    `export_catalogue`. Raises `TypeError` as `export_graph` does for anything else."""
    return graph_tools_and_guards(compiled)[0]


def graph_tools_and_guards(compiled: Any) -> tuple[list, list]:
    """`graph_tools(compiled)`, and the guards (`stalwart_export.Guard`) that decide the calls of
    its guarded nodes."""
    return graph_contents(compiled)[:2]


def graph_contents(compiled: Any) -> tuple[list, list, list]:
    """`graph_tools_and_guards(compiled)`, and the provider-hosted tools its models are bound with
    (`_hosted.Hosted`, named as the export's `hosted` names them)."""
    check_graph(compiled, "graph_tools")
    ex = _Exporter(provenance=False)
    ex.graph(compiled, parent=None)
    ex.finish_hosted()
    guards = list({id(g): g for g in ex.guards}.values())
    return list(ex.tools_seen.values()), guards, list(ex.hosted.values())


def _same_node(g: Any, name: str, file: str, action: Any) -> bool | None:
    """Is the `add_node` action `action` (its AST, in `file`) what graph `g`'s node `name` runs?
    With `name` None: is `action` (a module-level builder's name) `g`'s builder? (Read by
    `_sources.resolve_action`; None when it cannot tell.)"""
    import inspect

    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel
    from langgraph.prebuilt import ToolNode

    got = _sources.resolve_action(file, action)
    if name is None:
        return None if not isinstance(got, StateGraph) else got is g.builder
    spec = g.builder.nodes.get(name)
    if got is _sources.UNKNOWN or spec is None:
        return None
    runnable = g._inner.get(name, spec.runnable)
    if got is spec.runnable or got is runnable:
        return True
    if isinstance(got, tuple) and len(got) == 2 and got[0] == "tools":
        return isinstance(runnable, ToolNode) and set(runnable.tools_by_name) == set(got[1])
    if isinstance(got, (Pregel, ToolNode)):
        return False
    if inspect.isfunction(got) or inspect.ismethod(got):
        fn = _code.unwrap_callable(runnable)
        if fn is None:
            return False
        return _code.plain_function(_code.unwrap_decorated(got)) is _code.plain_function(_code.unwrap_decorated(fn))
    return None


class _Exporter:
    def __init__(self, provenance: bool) -> None:
        self.provenance = provenance
        self.warnings: list[str] = []
        self.subgraphs: dict[str, dict] = {}
        self._sub_names: dict[int, str] = {}
        self._unknown_parent: set[str] = set()
        self.tools_seen: dict[str, Any] = {}
        #: The guards found deciding a node's calls (stalwart_export.Guard).
        self.guards: list[Any] = []
        #: While a subgraph is exported: why the guard's history would not outlive it, and the fix.
        self.history_lost: tuple[str, str] | None = None
        #: Tool nodes binding only hand-off tools, unguarded (a supervisor's), for a hint.
        self.plain_handoffs: list[str] = []
        #: The user's files read for the lines that built nodes (`_sources.py`).
        self.sources = _sources.SourceIndex()
        #: (graph export, node name, node dict, its function or None), located at the end.
        self.to_locate: list[tuple[Any, str, dict, Any]] = []
        #: The ids of the graphs being read, this one's enclosing reads included (`uses_guard`).
        self.inspecting: frozenset[int] = frozenset()
        self._uses_guard: dict[int, bool] = {}
        #: The folder the export is written to (`location.file` and warnings are relative to it).
        self.base: str | None = None
        #: Provider-hosted tools the models are bound with, by export name (`_hosted.py`).
        self.hosted: dict[str, _hosted.Hosted] = {}
        #: (where, node dict) of each model node with `hosted`, for `finish_hosted`.
        self.hosted_nodes: list[tuple[str, dict]] = []
        #: Agents built again from a node function's constructor call (`_inner_export`), kept alive.
        self.inner_agents: dict[tuple, Any] = {}
        #: Subgraph nodes of the graphs `_inner_export` writes around an agent (located there).
        self.wrapper_nodes: list[dict] = []
        #: Where a node function builds the agent exported under a name (`_inner_export`).
        self.agent_sites: dict[str, dict] = {}

    def uses_guard(self, compiled: Any) -> bool:
        """Does compiled graph `compiled` (run inside a tool's code) decide any tool call through a
        guard? Read as its export would be; a graph already being read (a cycle) or one that cannot
        be read is not counted."""
        key = id(compiled)
        if key in self.inspecting:
            return False
        if key in self._uses_guard:
            return self._uses_guard[key]
        self._uses_guard[key] = False  # while it is read
        inner = _Exporter(provenance=False)
        inner.inspecting = self.inspecting | {key}
        try:
            inner.graph(compiled, parent=None)
        except (TypeError, ValueError):
            return False
        self._uses_guard[key] = bool(inner.guards)
        return self._uses_guard[key]

    def add_hosted(self, where: str, node: dict, found: list) -> None:
        """Model node `node` (named `where` in warnings) is bound with the hosted tools `found`."""
        for h in found:
            self.hosted.setdefault(h.name, h)
            for w in h.warnings:
                self.warn(w)
        node["hosted"] = [h.name for h in found]
        for entry in _hosted.opaque(found):  # a provider tool of a type it does not know (SPEC 12.5)
            if entry not in node.get("opaque", []):
                node.setdefault("opaque", []).append(entry)
        self.hosted_nodes.append((where, node))

    def finish_hosted(self) -> None:
        """Once every tool is known: a hosted tool named like a LangChain tool of the graph is
        renamed `hosted_<name>` (one catalogue entry cannot be both), and each model node with
        hosted tools gets its warning (SPEC 12.1: what the guard cannot see is not credited)."""
        clash = {n for n in self.hosted if n in self.tools_seen}
        for n in sorted(clash):
            new = f"hosted_{n}"
            while new in self.tools_seen or new in self.hosted:
                new = f"hosted_{new}"
            h = self.hosted.pop(n)
            h.name = new
            self.hosted[new] = h
            self.warn(f"the provider-hosted tool {n!r} has the name of a tool of the graph: exported as {new!r}")
            for _, node in self.hosted_nodes:
                node["hosted"] = [new if x == n else x for x in node["hosted"]]
        for where, node in self.hosted_nodes:
            self.warn(_hosted.warning(where, node["hosted"]))

    def finish_locations(self, base: str | None, origin: tuple[str, str] | None) -> dict[str, dict]:
        """Give every node its location (SPEC 12.4) and return each tool's definition
        (`tool_locations`), once every file the graph's code lives in is known."""
        if origin is not None:
            self.sources.add(origin[0])
        # the modules holding a graph or its builder, and the application code they hold (a
        # factory module, an agent class, a module the loaded one imports: issue 28 item 5)
        walkers = list({id(g): g for g, _n, _d, _f in self.to_locate}.values())
        graphs = [o for g in walkers for o in (g.compiled, g.builder) if o is not None]
        files, held = _sources.holders(graphs, origin[0] if origin is not None else None)
        for f in files:
            self.sources.add(f)
        for t in self.tools_seen.values():
            for obj in _tool_code(t):
                self.sources.add_object(obj)
        for _g, _name, _node, fn in self.to_locate:
            if fn is not None:
                self.sources.add_object(fn)
        for g, name, node, fn in self.to_locate:
            loc = None
            how = None
            if fn is not None and _sources.is_user_file(_sources.source_file(fn)):
                loc = _code.location(fn, base)
                how = "the function it runs"
            if loc is None:
                # a graph whose nodes are all subgraphs or tool nodes is the user's too
                framework = g.prebuilt and any(f is not None for gg, _n, _d, f in self.to_locate if gg is g)
                call = None if framework else self.sources.add_node_call(
                    list(g.builder.nodes), name, lambda n, file, action, g=g: _same_node(g, n, file, action))
                how = "add_node(...)" if call else None
                if call is None and name in g.sub_of:
                    call = self.sources.constructor_call(getattr(g.sub_of[name], "name", None), None)
                    how = "the subgraph's constructor call" if call else None
                if call is None and g.prebuilt:
                    assigned = ([origin] if origin is not None else []) + [
                        (f, k) for f, k, i in held if i == id(g.compiled)]
                    call = self.sources.constructor_call(getattr(g.compiled, "name", None),
                                                         assigned if g.parent is None else None)
                    how = "the prebuilt agent's constructor call" if call else None
                loc = _sources.loc_of(call, base)
                if loc is None and g.prebuilt and g.parent in self.agent_sites:
                    loc = dict(self.agent_sites[g.parent])
                    how = "the agent's constructor call in the node's function"
            node.pop("location", None)
            if loc is not None:
                node["location"] = loc
                if self.provenance:
                    node.setdefault("langgraph", {})["located_at"] = how
        # a prebuilt agent's nodes found nowhere else: where the node running the agent is
        by_graph = {n.get("graph"): n for _g, _n, n, _f in self.to_locate if n.get("kind") == "subgraph"}
        by_graph.update({n["graph"]: n for n in self.wrapper_nodes if "location" in n})
        for _ in range(8):
            changed = False
            for g, _name, node, _fn in self.to_locate:
                outer = by_graph.get(g.parent) if g.parent else None
                if "location" not in node and g.prebuilt and outer is not None and "location" in outer:
                    node["location"] = dict(outer["location"])
                    if self.provenance:
                        node.setdefault("langgraph", {})["located_at"] = "the node running the prebuilt agent"
                    changed = True
            if not changed:
                break
        out: dict[str, dict] = {}
        for tname, t in self.tools_seen.items():
            for obj in _tool_code(t):
                if _sources.is_user_file(_sources.source_file(obj)):
                    loc = _code.location(obj, base)
                    if loc is not None:
                        out[tname] = {"location": loc}
                        break
        return out

    def warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

    # ------------------------------------------------------------------ one graph
    def graph(self, compiled: Any, parent: str | None) -> dict:
        from langgraph.graph.state import CompiledStateGraph

        where = f"subgraph '{parent}'" if parent else "graph"
        if not isinstance(compiled, CompiledStateGraph) or getattr(compiled, "builder", None) is None:
            kind = type(compiled).__name__
            if parent is None:
                # Nothing of it can be read: a clean verdict on a made-up step would be a lie.
                raise TypeError(
                    f"the graph {getattr(compiled, 'name', '?')!r} is a {kind}, not a StateGraph: its "
                    "nodes and edges cannot be read (the functional API's @entrypoint and a "
                    "RemoteGraph have no graph to export); export the StateGraph it runs, or "
                    "describe the agent in agent.yaml"
                )
            # A subgraph whose inside cannot be read: exported empty, so the verifier reports
            # it undecided (QG006), never clean.
            self.warn(
                f"{where} {getattr(compiled, 'name', '?')!r} is a {kind}, not a StateGraph: its "
                "inside cannot be read, exported empty (the verifier reports it undecided, QG006)"
            )
            return {"nodes": [], "edges": [], "sends": [], "interrupts": []}
        g = _GraphExport(self, compiled, parent)
        out = g.run()
        if g.parent_unknown and parent:
            self._unknown_parent.add(parent)
        return out

    def subgraph_name(self, sub: Any, hint: str, lost: tuple[str, str] | None = None) -> str:
        """The name `sub` is exported under (exporting it the first time). `lost`: why the guard's
        history would not outlive a run of it, and the fix (read by nodes it guards)."""
        key = id(sub)
        if key in self._sub_names:
            return self._sub_names[key]
        base = getattr(sub, "name", None)
        if not base or base == "LangGraph":
            base = hint
        name = base
        i = 2
        while name in self.subgraphs:
            name = f"{base}_{i}"
            i += 1
        self._sub_names[key] = name
        self.subgraphs[name] = {}  # reserve (and stop recursion on cycles)
        saved = self.history_lost
        self.history_lost = saved or lost
        try:
            exported = self.graph(sub, parent=name)
        finally:
            self.history_lost = saved
        self.subgraphs[name] = exported
        return name

    def parent_unknown(self, name: str) -> bool:
        return name in self._unknown_parent


class _GraphExport:
    def __init__(self, ex: _Exporter, compiled: Any, parent: str | None) -> None:
        self.ex = ex
        self.compiled = compiled
        self.builder = compiled.builder
        self.parent = parent  # name of this graph when it is a subgraph
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.sends: list[dict] = []
        #: (the nodes a router or node Sends to, None for any; its function), for `_guarded.fan_outs`.
        self.send_fns: list[tuple[list[str] | None, Any]] = []
        self.interrupts: list[dict] = []
        self.ids: dict[str, str] = {START: START, END: END}
        self.kinds: dict[str, str] = {}
        self.parent_unknown = False  # a Command.PARENT with an unknown destination
        self.parent_dests: set[str] = set()
        #: True when no node runs the user's own code: a prebuilt constructor's graph
        #: (create_agent, create_react_agent, create_supervisor, create_swarm), located at its call.
        self.prebuilt = False
        #: Subgraph nodes: name -> the compiled graph they run.
        self.sub_of: dict[str, Any] = {}
        #: Subgraph nodes whose own function runs the subgraph (their Commands are read from it).
        self.via_function: set[str] = set()
        #: Nodes whose calls pass a guard the export does not credit: why (`guard_not_credited`).
        self.uncredited: dict[str, str] = {}
        #: Model nodes bound with `parallel_tool_calls=False`: one tool call a message.
        self.single_call: set[str] = set()
        #: id(edge) -> {destination: the tools its visit may call after this route}.
        self.route_calls: dict[int, dict[str, list[str]]] = {}
        self.hitl: list[tuple[str, Any]] = []  # (node name, HumanInTheLoopMiddleware)
        self.toolnodes: set[str] = set()  # nodes that are a ToolNode (guarded or not)
        self.hitl_seen: set[str] = set()
        #: Each node's runnable under its wrappers (`_code.unwrap_runnable`).
        self._inner: dict[str, Any] = {}
        #: Nodes under a `with_fallbacks` that catches `GraphInterrupt`: the wrapper, as written.
        self.swallows: dict[str, str] = {}
        #: State flags the export declares (an approval node's answers, `_pauses.approval_routes`).
        self.state: dict[str, dict] = {}

    def runnable(self, name: str) -> Any:
        """Node `name`'s runnable seen through `with_fallbacks`, `with_retry` and bindings."""
        if name not in self._inner:
            self._inner[name] = _code.unwrap_runnable(self.builder.nodes[name].runnable)[0]
        return self._inner[name]

    def label(self, what: str) -> str:
        return f"{what} in subgraph '{self.parent}'" if self.parent else what

    def lg(self, d: dict, **prov: Any) -> dict:
        if self.ex.provenance and prov:
            d["langgraph"] = prov
        return d

    def qid(self, name: str) -> str:
        if name in self.ids:
            return self.ids[name]
        q = _code_escape(name)
        if q != name:
            self.ex.warn(
                f"node {name!r} renamed to {q!r} (qls ids may not contain '/'; '%2F' stands for '/', '%25' for '%')"
            )
        self.ids[name] = q
        return q

    # -------------------------------------------------------------- the walk
    def run(self) -> dict:
        b = self.builder
        for name in b.nodes:
            self.qid(name)
        self.nodes.append({"id": START, "kind": "start"})
        for name, spec in b.nodes.items():
            node = self.node(name, spec)
            self.nodes.append(node)
            self.ex.to_locate.append((self, name, node, _code.unwrap_callable(self.runnable(name))))
        fns = [_code.unwrap_callable(self.runnable(n)) for n in b.nodes]
        # a chain added as a node is the user's own code too (it is located at its add_node call)
        self.prebuilt = all(f is None or not _sources.is_user_file(_sources.source_file(f)) for f in fns) and not any(
            _chains.is_chain(self._inner.get(n)) for n in b.nodes)
        self.nodes.append({"id": END, "kind": "end"})

        has_out: set[str] = set()
        for src, dst in sorted(b.edges):
            has_out.add(src)
            self.edges.append(self.lg({"from": self.qid(src), "kind": "fixed", "destinations": [self.qid(dst)]},
                                      source="builder.edges", enforced=True))
        for srcs, dst in sorted(b.waiting_edges):
            for src in srcs:
                has_out.add(src)
                self.edges.append(self.lg({"from": self.qid(src), "kind": "fixed", "destinations": [self.qid(dst)]},
                                          source="builder.waiting_edges", join=[self.qid(s) for s in srcs],
                                          enforced=True))
        for src, branches in b.branches.items():
            for router_name, spec in branches.items():
                has_out.add(src)
                self.branch(src, router_name, spec)
        for name, spec in b.nodes.items():
            self.commands(name, spec)
        #: nodes whose every way out is a Command(goto=...): no implicit halt (issue 28)
        self.always_route = {n for n in b.nodes if n not in self.toolnodes
                             and (self.kinds.get(n) in ("step", "model") or n in self.via_function)
                             and _halts.always_routes(_code.unwrap_callable(self.runnable(n)))}
        self.error_handlers()
        for name in b.nodes:
            if name not in has_out and name not in self.always_route:
                self.edges.append(self.lg({"from": self.qid(name), "kind": "conditional", "destinations": [END]},
                                          implicit=True, enforced=True,
                                          source="no outgoing edge: the branch halts unless a Command routes"))
        self.narrow_by_routes()
        _guarded.fan_outs(self)
        self.compile_interrupts()
        self.hitl_interrupts()
        for n in self.nodes:
            why = self.uncredited.get(unescape_id(n["id"]))
            if why and n.get("kind") in ("tools_plain", "step"):
                n["guard_not_credited"] = why
        out = {"nodes": self.nodes, "edges": self.edges, "sends": self.sends, "interrupts": self.interrupts}
        if self.state:
            out["state"] = self.state
        return out

    # -------------------------------------------------------------- nodes
    def node(self, name: str, spec: Any) -> dict:
        """Node `name` as the export writes it: what its runnable is (`node_of`), then what its
        `with_fallbacks` wrappers can run instead (`fallbacks`)."""
        node = self.node_of(name, spec)
        layers = _fallbacks.layers(spec.runnable)
        if layers:
            self.fallbacks(name, node, layers)
        return node

    def node_of(self, name: str, spec: Any) -> dict:
        from langgraph.pregel import Pregel

        qid = self.qid(name)
        runnable, wrappers, fallbacks = _code.unwrap_runnable(spec.runnable)
        self._inner[name] = runnable
        fn = _code.unwrap_callable(runnable)
        node: dict[str, Any] = {"id": qid}
        prov: dict[str, Any] = {"runnable": _code.qualname(runnable)}
        if wrappers:
            prov["wrappers"] = wrappers
        if fallbacks:
            prov["fallbacks"] = [_code.qualname(_code.unwrap_callable(f) or f) for f in fallbacks]
        if fn is not None:
            prov["func"] = _code.qualname(fn)

        # subgraph
        sub = None
        direct = isinstance(runnable, Pregel)
        if direct:
            sub = runnable
        else:
            pnode = getattr(self.compiled, "nodes", {}).get(name)
            subs = list(getattr(pnode, "subgraphs", None) or [])
            if subs:
                sub = subs[0]
                if len(subs) > 1:
                    self.ex.warn(self.label(f"node {name!r} runs {len(subs)} subgraphs; only the first is exported"))
            elif fn is not None:
                found = [o for _, o in _code.referenced_objects(fn, depth=2) if isinstance(o, Pregel)]
                # the teams tutorial's functools.partial(agent_node, agent=<compiled agent>, name=...)
                found += [o for o in _chains.partial_runnables(runnable).values() if isinstance(o, Pregel)]
                if found:
                    sub = found[0]
        if sub is not None:
            where = f"subgraph '{self.parent}'" if self.parent else "the top graph"
            passes_state = not direct and _passes_whole_state(fn)
            lost: tuple[str, str] | None
            if not direct and not passes_state:
                lost = (f"node {name!r} runs it inside its function, which passes on only what its code returns",
                        f"add the compiled subgraph itself as the node (add_node({name!r}, subgraph)), so that "
                        "LangGraph passes the history in and out")
            elif not _guarded.keeps_history(self.compiled):
                lost = (f"{where} has no `stalwart_guard: GuardHistory` in its state",
                        f"declare `stalwart_guard: GuardHistory` in the state of {where} (and of every graph "
                        "enclosing it)")
            else:
                lost = None
            self.sub_of[name] = sub
            gname = self.ex.subgraph_name(sub, hint=name, lost=lost)
            node.update(kind="subgraph", graph=gname)
            if passes_state:
                prov["subgraph_via"] = ("langgraph_supervisor's call_agent: the whole state in, the agent's whole "
                                        "output out")
            elif not direct:
                self.via_function.add(name)
                self.ex.warn(self.label(
                    f"node {name!r} runs subgraph {gname!r} inside a function: exported as a subgraph node "
                    "running it; what else its code does is read as a step's code is"))
                prov["subgraph_via"] = "function"
                tree = _code.parse_function(fn) if not _code.is_library(fn) else None
                if tree is not None:
                    # issue 28: the function's own calls are kept, what it cannot resolve is opaque
                    node["graph"] = _inner_export.besides(self, name, node, fn, tree, sub, gname,
                                                          _code.partial_args(runnable))
            self.kinds[name] = "subgraph"
            return self.lg(node, **prov)

        # tool node
        from langgraph.prebuilt import ToolNode

        if isinstance(runnable, ToolNode):
            tools = list(runnable.tools_by_name.values())
            self.toolnodes.add(name)
            for t in tools:
                self.ex.tools_seen.setdefault(t.name, t)
            self.agents_as_tools(name, tools)
            wrap = getattr(runnable, "_wrap_tool_call", None)
            prov["wrap_tool_call"] = _code.qualname(wrap) if wrap else None
            guard, why = _guarded.tool_node_guard(runnable)
            kind = self.guarded_kind(name, guard, why, "tools_plain", [t.name for t in tools])
            if kind == "tools_plain" and tools and all(HANDOFF_KEY in (getattr(t, "metadata", None) or {})
                                                       for t in tools):
                self.ex.plain_handoffs.append(self.label(f"node {name!r}"))
            if kind == "tools":
                prov["guard"] = "stalwart_export.Guard"
            node.update(kind=kind, tools=[t.name for t in tools])
            self.kinds[name] = kind
            return self.lg(node, **prov)

        # middleware node (langchain.agents create_agent): "<Middleware>.<hook>"
        mw = getattr(fn, "__self__", None)
        if mw is not None and type(mw).__name__ == "HumanInTheLoopMiddleware":
            self.hitl.append((name, mw))
        if mw is not None and _is_middleware(mw):
            node["kind"] = "step"
            prov["middleware"] = _code.qualname(mw)
            self.kinds[name] = "step"
            return self.lg(node, **prov)

        # an agent built inside the node's function (issue 28 item 1, issue 29 item 3)
        if fn is not None and not _code.is_library(fn):
            tree = _code.parse_function(fn)
            if tree is not None and _inner_export.export(self, name, node, prov, fn, tree):
                return self.lg(node, **prov)

        # a chain: the node is one, or its function invokes one (`_chains.py`, issue 28)
        if _chain_node.needs_reading(self, runnable, fn):
            chain = _chain_node.read_node(self, name, runnable, fn)
            if chain.models and not chain.tools and _one_call_a_message(runnable, fn):
                self.single_call.add(name)
                prov["parallel_tool_calls"] = False
            return _chain_node.export_node(self, name, node, prov, runnable, fn, chain,
                                           _bound_tool_lists(runnable, fn))

        # model
        model, bound = self.find_model(runnable, fn)
        if model is not None:
            node["kind"] = "model"
            prov["model"] = model
            if _one_call_a_message(runnable, fn):
                self.single_call.add(name)
                prov["parallel_tool_calls"] = False
            if bound is not None:
                prov["bound_tools"] = bound
            found = _hosted.collect(_bound_tool_lists(runnable, fn), self.label(f"the model of node {name!r}"))
            if found:
                self.ex.add_hosted(self.label(f"node {name!r}"), node, found)
            self.model_own_calls(name, node, prov, fn)
            self.kinds[name] = "model"
            return self.lg(node, **prov)

        # step
        node["kind"] = "step"
        prov["opaque"] = True
        tree = _code.parse_function(fn) if fn is not None and not _code.is_library(fn) else None
        if tree is not None and self.runtime_model(name, node, prov, fn, tree):
            return self.lg(node, **prov)
        if fn is not None:
            direct_tools, handwritten = self.step_tools(name, fn)
            for t in _guarded.guarded_functions(fn):  # plain functions passed to guard.call/acall (issue 29)
                if t.name not in direct_tools:
                    direct_tools.append(t.name)
                    self.ex.tools_seen.setdefault(t.name, t)
            if not direct_tools and tree is not None:
                funcs, unread = _unseen.plain_dispatch(fn, tree)
                self.unread(name, node, fn, unread)
                if funcs:
                    # a hand-written tool node over plain functions (the memory-agent template)
                    node.update(kind="tools_plain", tools=[f.__name__ for f in funcs])
                    for f in funcs:  # the catalogue, the words and --init-words read them as tools
                        t = _code.function_tool(f)
                        if t is not None:
                            self.ex.tools_seen.setdefault(t.name, t)
                    prov.pop("opaque", None)
                    prov["tool_node"] = "runs each tool call of the model's message as a plain function (f(**args))"
                    self.kinds[name] = "tools_plain"
                    self.ex.warn(self.label(
                        f"node {name!r} runs the model's tool calls as plain functions "
                        f"({', '.join(f.__name__ for f in funcs)}): exported tools_plain; each is a tool of the "
                        "catalogue (give its words with @catalogue_words on the function or in the words)"))
                    return self.lg(node, **prov)
            if tree is not None and not handwritten:
                reached: list = []
                self.unread(name, node, fn, _unseen.unread_calls(fn, tree, reached=reached))
                more = [t for t in reached if t.name not in direct_tools]
                if more:
                    # tools the step runs through what referenced_objects does not see (a local import)
                    for t in more:
                        self.ex.tools_seen.setdefault(t.name, t)
                    direct_tools = direct_tools + [t.name for t in more]
                    node["tools"] = direct_tools
            if tree is None and not _code.is_library(fn):
                # SPEC 12.5: a function whose source cannot be read (made by exec, a REPL, a .pyc)
                self.unread(name, node, fn, [_unseen.Unread(
                    "code", f"the source of {getattr(_code.plain_function(fn), '__qualname__', '?')}() cannot be read",
                    None)])
            self.opaque_guard_calls(name, node, fn)
            if direct_tools:
                node["tools"] = direct_tools
                if handwritten:
                    # a hand-written tool node: it runs the calls the model made (issue 16, item 5)
                    prov.pop("opaque", None)
                    prov["tool_node"] = f"runs each tool call of the model's message through {handwritten!r}"
                    guard, why = _guarded.step_guard(fn, direct_tools)
                    kind = self.guarded_kind(name, guard, why, "tools_plain", direct_tools)
                    if kind == "tools":
                        prov["guard"] = _words.GUARDED_STEP
                    node["kind"] = kind
                    self.kinds[name] = kind
                    return self.lg(node, **prov)
                guard, why = _guarded.step_guard(fn, direct_tools)
                kind = self.guarded_kind(name, guard, why, "step", direct_tools)
                if kind == "tools":
                    node["kind"] = "tools"
                    prov.pop("opaque", None)
                    prov["guard"] = _words.GUARDED_STEP
                    self.kinds[name] = "tools"
                    return self.lg(node, **prov)
                self.ex.warn(self.label(
                    f"node {name!r} (step) calls tools {direct_tools} directly, outside any tool node: "
                    "those calls skip the tool check and any pause on a tool node"))
        else:
            # SPEC 12.5: code the exporter cannot read is an opaque entry (QG024), never a silent step
            node.setdefault("opaque", []).append(
                {"what": "code", "why": f"the exporter cannot read its code ({prov['runnable']})"})
            self.ex.warn(self.label(f"node {name!r}: cannot read its code ({prov['runnable']}); exported as a step "
                                    "with an opaque `code` entry (QG024 fails the gate until it is read or declared, "
                                    f'e.g. {{"nodes": {{"{name}": {{"pure": "why it has no effect"}}}}}})'))
        self.kinds[name] = "step"
        return self.lg(node, **prov)

    def runtime_model(self, name: str, node: dict, prov: dict, fn: Any, tree: ast.AST) -> bool:
        """Node `name` makes its chat model at run time (`_unseen.runtime_model`): a `model` node,
        the tools it binds read as offered, never as called; when it binds tools the exporter
        cannot name, an opaque `model` entry at the `bind_tools` call (SPEC 12.5)."""
        rt = _unseen.runtime_model(fn, tree)
        if rt is None:
            return False
        # What its code calls itself (not what it only binds): the tools it reaches, less the
        # bound ones, and every tool an `.invoke()` of it resolves to.
        reached: list = []
        unread = _unseen.unread_calls(fn, tree, reached=reached)
        direct, _mapping = self.step_tools(name, fn)
        called = [t for t in direct if rt.tools is None or t not in rt.tools]
        called += [t.name for t in reached if t.name not in called]
        if called:
            # a step that makes a model and runs tools itself: its calls skip the tool check
            for t in reached:
                self.ex.tools_seen.setdefault(t.name, t)
            node["tools"] = called
            self.kinds[name] = "step"
            self.unread(name, node, fn, unread + [_unseen.Unread(
                "model", f"makes a chat model at run time ({rt.via}) and runs tools itself ({', '.join(called)}): "
                         "what the model chooses is not read", rt.at)])
            self.ex.warn(self.label(f"node {name!r} (step) calls tools {called} directly, outside any tool node: "
                                    "those calls skip the tool check"))
            return True
        self.unread(name, node, fn, unread)
        node["kind"] = "model"
        prov.pop("opaque", None)
        prov["model"] = f"made at run time: {rt.via}"
        self.kinds[name] = "model"
        if rt.tools is not None:
            if rt.tools:
                prov["bound_tools"] = rt.tools
            return True
        self.unread(name, node, fn, [_unseen.Unread(
            "model", f"a chat model made at run time ({rt.via}) binds tools the exporter cannot name "
                     f"({_unseen._shown(rt.unnamed.args[0]) if rt.unnamed is not None and rt.unnamed.args else '?'})",
            rt.unnamed or rt.at)])
        return True

    def unread(self, name: str, node: dict, fn: Any, entries: list) -> None:
        """Each `_unseen.Unread` of node `name`'s code is an `opaque` entry (SPEC 12.5), at its line,
        with a warning: QG024 fails the gate until it is read or declared."""
        for u in entries:
            entry: dict[str, Any] = {"what": u.what, "why": u.why}
            file, line = _code.source_line(fn, u.at) if u.at is not None else (None, None)
            if file and line:
                entry["location"] = {"file": _code.rel_file(file, self.ex.base), "line": line,
                                     "column": getattr(u.at, "col_offset", 0) + 1}
            if entry not in node.get("opaque", []):
                node.setdefault("opaque", []).append(entry)
            word = '"model": true' if u.what == "model" else '"calls": {...}'
            if u.what == "subgraph":  # an unread agent: restructured, or its calls declared (SPEC 12.5)
                self.ex.warn(self.label(
                    f"node {name!r}: {u.why}: an opaque `subgraph` entry (QG024 fails the gate until it is read - "
                    "build the agent from a model and tools the exporter can resolve: module-level names, the "
                    "node's own literals; or add the compiled agent itself as the node - or declared in the words: "
                    f"{{\"nodes\": {{\"{name}\": {{\"calls\": {{...}}}}}}}}, what its agent may call)"))
                continue
            self.ex.warn(self.label(
                f"node {name!r}: {u.why}: an opaque `{u.what}` entry (QG024 fails the gate until it is read, or "
                f"declared in the words: {{\"nodes\": {{\"{name}\": {{{word}}}}}}})"))

    def model_own_calls(self, name: str, node: dict, prov: dict, fn: Any) -> None:
        """What a model node's own code runs besides its model (issue 28: a planner that searches
        before it answers, `web_search.invoke(...)` then `llm.invoke(...)`): each tool it runs is
        a plain call made during the node's visit, exported as the node's `hosted` (SPEC 2.2: any
        number of plain calls, one after another, before the model chooses), never dropped; a
        call it cannot resolve is an `opaque` entry (QG024). The tools it only binds are offered,
        not run."""
        if fn is None or _code.is_library(fn) or not _sources.is_user_file(_sources.source_file(fn)):
            return  # a prebuilt agent's model node is the framework's code, read as such
        tree = _code.parse_function(fn)
        if tree is None:
            return
        reached: list = []
        self.unread(name, node, fn, _unseen.unread_calls(fn, tree, reached=reached))
        runs = list(reached)  # each one `.invoke()`d (`_unseen.RUNS`), bound to the model or not
        if not runs:
            return
        hosted = node.setdefault("hosted", [])
        for t in runs:
            self.ex.tools_seen.setdefault(t.name, t)
            if t.name not in hosted:
                hosted.append(t.name)
        prov["runs_itself"] = [t.name for t in runs]
        self.ex.warn(self.label(
            f"node {name!r} calls a model and runs {', '.join(repr(t.name) for t in runs)} itself: exported as plain "
            "calls made during the model node's visit (`hosted`), outside any tool node and any guard; to have them "
            "checked, run them from a tool node (guard.tool_node) or through guard.call"))

    def step_tools(self, name: str, fn: Any) -> tuple[list[str], str | None]:
        """The tools a step's code runs, and the mapping it dispatches the model's tool calls
        through when it is a hand-written tool node (`_picks.dispatch`). A list of tools the code
        only takes tools from by name (`_picks.selections`) gives only the tools named; one it
        takes from by a name that is not a literal gives all its tools, with a warning."""
        from langchain_core.tools import BaseTool

        picks = _picks.selections(fn)
        mapping = _picks.dispatch(fn)
        narrowed: dict[int, tuple[str, set[str] | None, Any]] = {}
        for var, names in picks.items():
            if var == mapping:
                continue
            obj = _code.resolve_name(fn, ast.parse(var, mode="eval").body)  # a name or `module.REGISTRY`
            # a container holding no tool (settings, model names, models) is no tool pick (issue 28)
            if isinstance(obj, (list, tuple, dict)) and any(
                    isinstance(t, BaseTool) for t in (obj.values() if isinstance(obj, dict) else obj)):
                narrowed[id(obj)] = (var, names, obj)
        closed = frozenset(k for k, (_, names, _) in narrowed.items() if names is not None)
        out: list[str] = []

        def add(tool: Any) -> None:
            if tool.name not in out:
                out.append(tool.name)
                self.ex.tools_seen.setdefault(tool.name, tool)
                self.agents_as_tools(name, [tool])

        for _, o in _code.referenced_objects(fn, depth=3, closed=closed):
            if isinstance(o, BaseTool):
                add(o)
        for var, names, obj in narrowed.values():
            items = list(obj.values()) if isinstance(obj, dict) else list(obj)
            tools = [t for t in items if isinstance(t, BaseTool)]
            if names is None:
                self.ex.warn(self.label(
                    f"node {name!r} takes a tool from {var!r} by a name that is not a literal: every tool of "
                    f"{var!r} is kept ({', '.join(t.name for t in tools)})"))
                continue
            for t in tools:
                if t.name in names:
                    add(t)
            missing = sorted(names - {t.name for t in tools})
            if missing:
                self.ex.warn(self.label(f"node {name!r} takes {missing} from {var!r}, which holds no such tool"))
        return out, (mapping if out else None)

    def fallbacks(self, name: str, node: dict, layers: list) -> None:
        """What node `name`'s `with_fallbacks` wrappers can run instead of it (SPEC 12.1: a node is
        guarded only when every call it can make passes the guard).

        Every fallback is read: a tool node, or a function reaching tools, whose calls do not pass
        the guard makes the node `tools_plain` with the tools of all (a warning names the
        wrapper); one whose code cannot be read, or that reaches a model, is a warning. A wrapper
        whose `exceptions_to_handle` catches `GraphInterrupt` (the default `(Exception,)` does)
        swallows every pause inside the node: the guard's confirmation, `interrupt()` in its code
        or its tools, a review never reaches the person, so none is credited (`swallows`, read by
        `compile_interrupts`) and a guarded node is exported `tools_plain`, with a warning naming
        the fix."""
        from langchain_core.language_models import BaseLanguageModel

        kind = node.get("kind")
        tools = list(node.get("tools") or [])
        plain: list[tuple[Any, Any]] = []  # (layer, part) running tools unguarded
        for layer in layers:
            for fb in layer.fallbacks:
                for part in _fallbacks.fallback_parts(fb):
                    for t in part.objects:
                        self.ex.tools_seen.setdefault(t.name, t)
                    if not part.readable:
                        self.ex.warn(self.label(
                            f"node {name!r}: its fallback {part.what} ({layer.describe()}) cannot be read: what it "
                            "does when the node fails is not in the export"))
                    elif part.tools and part.guard is None:
                        plain.append((layer, part))
                    elif part.tools:
                        self.ex.guards.append(part.guard)
                    fn = _code.unwrap_callable(fb)
                    if fn is not None and not _code.is_library(fn) and any(
                            isinstance(o, BaseLanguageModel) for _, o in _code.referenced_objects(fn, depth=3)):
                        self.ex.warn(self.label(
                            f"node {name!r}: its fallback {part.what} ({layer.describe()}) reaches a model when the "
                            "node fails; the export reads the node as its primary runnable only"))
                    for t in part.tools:
                        if t not in tools:
                            tools.append(t)
        catching = next((layer for layer in layers if layer.catches_pause), None)
        if catching is not None:
            self.swallows[name] = catching.describe()
        prov = node.setdefault("langgraph", {}) if self.ex.provenance else {}
        if plain:
            ran = "; ".join(f"{p.what} runs {p.tools}" for _, p in plain)
            wrapper = plain[0][0].describe()
            if kind in ("tools", "tools_plain"):
                node["kind"] = "tools_plain"
            elif kind == "step":
                node["kind"] = "step"
            else:
                self.ex.warn(self.label(
                    f"node {name!r} ({kind}) has a fallback that runs tools ({ran}); the export keeps it {kind}"))
            if node["kind"] in ("tools_plain", "step"):
                node["tools"] = tools
            self.kinds[name] = node["kind"]
            self.ex.warn(self.label(
                f"node {name!r} is not guarded: its {wrapper} runs when the node raises ({ran}, without the guard)"
                + (" - and it catches the guard's pause (GraphInterrupt), so a write the guard would put to the "
                   "person runs unconfirmed" if plain[0][0].catches_pause else "")
                + ": exported tools_plain with the tools of all; give every fallback the guard "
                  "(guard.tool_node(...)) or drop the fallback"))
            prov["fallback_unguarded"] = [p.what for _, p in plain]
            return
        if catching is not None and kind == "tools":
            node["kind"] = "tools_plain"
            self.kinds[name] = "tools_plain"
            prov["pause_swallowed_by"] = catching.describe()
            self.ex.warn(self.label(
                f"node {name!r} is not guarded: its {catching.describe()} catches GraphInterrupt (an Exception, via "
                "GraphBubbleUp), so the guard's confirmation never reaches the person (the fallback runs instead "
                "and the model receives what it returns); exported tools_plain: " + _fallbacks.FIX))
        elif catching is not None:
            prov["pause_swallowed_by"] = catching.describe()

    def agents_as_tools(self, name: str, tools: list) -> None:
        """Warn about each tool of node `name` whose code runs a compiled graph that calls tools
        through the guard (an agent used as another agent's tool): each call of the tool runs the
        inner agent afresh, so the inner guard's history starts empty at every call and its
        session-scoped rules do not hold across the calls."""
        from langgraph.pregel import Pregel

        for t in tools:
            inner: list = []
            for f in (getattr(t, "func", None), getattr(t, "coroutine", None)):
                if f is None:
                    continue
                owner = getattr(f, "__self__", None)
                cells = [_code.attr(c, "cell_contents") for c in (getattr(f, "__closure__", None) or ())]
                if isinstance(owner, Pregel):
                    inner.append(owner)  # a tool made of `graph.invoke`
                elif _code.is_library(f):  # `graph.as_tool(...)`: langchain-core's wrapper over the graph
                    inner += [c for c in cells if isinstance(c, Pregel)]
                else:
                    inner += [o for _, o in _code.referenced_objects(f, depth=3) if isinstance(o, Pregel)]
            for g in {id(g): g for g in inner}.values():
                if not self.ex.uses_guard(g):
                    continue
                gname = getattr(g, "name", None) or "LangGraph"
                self.ex.warn(self.label(
                    f"tool {t.name!r} (node {name!r}) runs the agent {gname!r}, whose tool calls go through the guard: "
                    f"each call of {t.name!r} starts a new session of that guard (the agent's state, and the guard's "
                    f"history in it, do not outlive the call), so its session-scoped rules (at_most per session, "
                    f"after, not_after) do not hold across the calls of {t.name!r}; fix: add the agent to this graph "
                    f"as a subgraph node (add_node(..., agent), with `stalwart_guard: GuardHistory` in this graph's "
                    f"state), or limit {t.name!r} itself in the catalogue (at_most, order)"))

    def guarded_kind(self, name: str, guard: Any, why: str | None, plain: str, tools: list[str]) -> str:
        """`tools` when `guard` decides every call of node `name` and the guard's history is kept
        for the whole session, else `plain`, with a warning saying why not. A tool of the node
        the guard's catalogue lacks is a warning: the guard refuses every call of it."""
        if guard is None:
            if why:
                self.ex.warn(self.label(f"node {name!r} is not guarded: {why}"))
            return plain
        self.ex.guards.append(guard)
        gcat = guard.loaded_catalogue()  # None: not written yet, this export writes it (guard/lazy.py)
        missing = [t for t in tools if gcat is not None and gcat.get(t) is None]
        if missing:
            self.ex.warn(self.label(
                f"node {name!r}: the guard's catalogue ({gcat.source}) does not declare "
                f"{', '.join(repr(t) for t in missing)}, so the guard refuses every call of "
                f"{'it' if len(missing) == 1 else 'them'} (unknown_tool): declare "
                f"{'it' if len(missing) == 1 else 'each'} in the catalogue (kind: read or write)"))
        lost = self.ex.history_lost
        if lost:
            why, fix = lost
            # SPEC 2.2 `guard_not_credited`: the verifier's findings on the node say why, and the fix
            self.uncredited[name] = f"the guard's history does not outlive the subgraph ({why}); fix: {fix}"
            self.ex.warn(self.label(
                f"node {name!r} calls tools through the guard, but the guard's history does not outlive this "
                f"subgraph ({why}): its session rules would restart each time the subgraph runs, so the node is "
                f"exported unguarded; {fix}"))
            return plain
        return "tools"

    def find_model(self, runnable: Any, fn: Any) -> tuple[str | None, list[str] | None]:
        from langchain_core.language_models import BaseLanguageModel

        def model_of(o: Any, depth: int = 0) -> tuple[Any, list[str] | None] | None:
            if depth > 6:
                return None
            if isinstance(o, BaseLanguageModel):
                return o, None
            if _unseen.is_configurable_model(o):
                # init_chat_model() with the model picked from the configuration at run time
                return o, _unseen.configurable_bound(o)
            bound = getattr(o, "bound", None)
            if bound is not None and hasattr(o, "kwargs"):
                r = model_of(bound, depth + 1)
                if r is not None:
                    tools = (getattr(o, "kwargs", None) or {}).get("tools")
                    names = None
                    if tools:
                        names = [_tool_name(t) for t in tools]
                    return r[0], names or r[1]
            steps = _code.attr(o, "steps", None)
            for step in steps if isinstance(steps, (list, tuple)) else []:  # a class's `steps` is a property
                r = model_of(step, depth + 1)
                if r is not None:
                    return r
            return None

        r = model_of(runnable)
        if r is None and fn is not None:
            for _, o in _code.referenced_objects(fn, depth=4):
                r = model_of(o)
                if r is not None:
                    break
        if r is None and fn is not None and any(
            getattr(_code.plain_function(fn), "__qualname__", "").endswith(q) for q in _PREBUILT_MODEL_FUNCS
        ):
            return "prebuilt agent model node (model chosen at run time)", None
        if r is None:
            return None, None
        return _code.qualname(r[0]), r[1]

    # -------------------------------------------------------------- edges
    def branch(self, src: str, router_name: str, spec: Any) -> None:
        path = spec.path
        router = _code.unwrap_callable(path)
        rname = _code.qualname(router) if router is not None else _code.qualname(path)
        ends = spec.ends
        prov: dict[str, Any] = {"router": rname}
        if ends:
            dests = _dedup(self.qid(v) for v in ends.values())
            declared = "path_map"
            ann = _code.literal_return(router) if router is not None else None
            if ann and ann[0] == "literal" and ann[1] is not None and set(ann[1]) == set(ends.keys()):
                declared = "return_annotation"
            prov.update(declared_by=declared, enforced=True)
            labels = {k: self.qid(v) for k, v in ends.items() if k != v}
            if labels:
                prov["labels"] = labels
        else:
            dests = None
            prov.update(declared_by=None, enforced=False)
            self.ex.warn(self.label(
                f"conditional edge from {src!r} ({rname}): no path_map and no Literal return annotation "
                "-> destinations null"))
        edge = self.lg({"from": self.qid(src), "kind": "conditional", "destinations": dests}, **prov)
        if router is not None and dests is not None and self.kinds.get(src) == "model":
            self.tool_routes(src, edge, router, dict(ends or {}))
        self.edges.append(edge)
        if router is not None:
            self.scan_sends(src, router, via="conditional", rname=rname)
        else:
            self.sends.append(self.lg({"from": self.qid(src), "destinations": None}, via="conditional", router=rname))
            self.ex.warn(self.label(f"router of {src!r} ({rname}): cannot read its code; it may Send anywhere"))

    def tool_routes(self, src: str, edge: dict, router: Any, ends: dict) -> None:
        """Per destination a tool-calling node, the tools its visit may call after this router
        chose it, where the router's code narrows them (`_routes.py`); `narrow_by_routes` applies
        them. A router that narrows only when the model makes one call a message, on a model that
        may make several, is a warning."""
        single = src in self.single_call
        routes = _routes.tool_routes(router, single)
        if not single and not routes and _routes.tool_routes(router, True):
            self.ex.warn(self.label(
                f"the router of {src!r} ({_code.qualname(router)}) sends calls by tool name, but the model may make "
                "several calls a message, so any call may reach each destination; bind the model with "
                "parallel_tool_calls=False to make each route exact"))
        calls: dict[str, list[str]] = {}
        for ret, allowed in routes.items():
            dest = self.qid(ends.get(ret, ret))
            if dest not in (edge["destinations"] or []):
                continue
            node = next((n for n in self.nodes if n["id"] == dest), None)
            if node is None or node["kind"] not in ("tools", "tools_plain", "step") or not node.get("tools"):
                continue
            only = _routes.restrict(node["tools"], allowed)
            if only != node["tools"]:
                calls[dest] = only
        if calls:
            self.route_calls[id(edge)] = calls
            if self.ex.provenance:
                edge.setdefault("langgraph", {})["calls"] = calls

    def narrow_by_routes(self) -> None:
        """A tool node every route into which is a router's route that narrows its calls
        (`tool_routes`) can only be asked for those calls: its `tools` become theirs. A node with
        any other way in (another edge, a send, a `null` edge, a hand-off from a subgraph) keeps
        every tool it binds."""
        narrowed: dict[str, list[str]] = {}
        blocked: set[str] = set()
        for e in self.edges:
            if e["destinations"] is None:
                return  # a null edge may reach any node
            for d in e["destinations"]:
                got = self.route_calls.get(id(e), {}).get(d)
                if got is None:
                    blocked.add(d)
                else:
                    narrowed.setdefault(d, [])
                    narrowed[d] += [t for t in got if t not in narrowed[d]]
        for snd in self.sends:
            if snd["destinations"] is None:
                return
            blocked.update(snd["destinations"])
        for name in self.sub_of:
            sub = self.ex.subgraphs.get(self.ex.subgraph_name(self.sub_of[name], hint=name), {})
            if self.ex.parent_unknown(self.ex.subgraph_name(self.sub_of[name], hint=name)):
                return
            for e in sub.get("edges", []):
                blocked.update(d[3:] for d in e.get("destinations") or [] if d.startswith("../"))
        for node in self.nodes:
            nid = node["id"]
            if nid in blocked or nid not in narrowed or not node.get("tools"):
                continue
            only = [t for t in node["tools"] if t in narrowed[nid]]
            if only != node["tools"]:
                if self.ex.provenance:
                    node.setdefault("langgraph", {})["bound_tools"] = list(node["tools"])
                    node["langgraph"]["tools_narrowed_by"] = "the routes into it (the router reads the tool names)"
                node["tools"] = only

    def scan_sends(self, src: str, fn: Any, via: str, rname: str) -> None:
        from langgraph.types import Send

        tree = _code.parse_function(fn)
        if tree is None:
            if not _code.is_library(fn):
                self.send_fns.append((None, fn))
                self.sends.append(self.lg({"from": self.qid(src), "destinations": None}, via=via, router=rname))
                self.ex.warn(self.label(f"{rname}: cannot read its source; it may Send anywhere (sends null)"))
            return
        dests: list[str] = []
        unknown = False
        for call, _resolved in _code.calls_to(fn, tree, Send, "Send"):
            arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "node"), None)
            names = _code.constant_strings(fn, arg)
            if names is None:
                unknown = True
            else:
                dests += names
        self.send_fns.append((None if unknown else dests, fn))
        if unknown:
            self.sends.append(self.lg({"from": self.qid(src), "destinations": None}, via=via, router=rname))
            self.ex.warn(self.label(f"{rname} sends to a node it computes -> sends from {src!r} null"))
        elif dests:
            self.sends.append(self.lg({"from": self.qid(src), "destinations": _dedup(self.qid(d) for d in dests)},
                                      via=via, router=rname))

    def commands(self, name: str, spec: Any) -> None:
        from langgraph.types import Command

        runnable = self.runnable(name)
        fn = _code.unwrap_callable(runnable)
        kind = self.kinds.get(name)
        prov: dict[str, Any] = {"enforced": False}
        declared: list[str] | None = None
        if spec.ends:
            ends = spec.ends
            declared = list(ends.values()) if isinstance(ends, dict) else list(ends)
            prov["declared_by"] = "add_node(destinations=) or Command[Literal] annotation"
            ann = _code.literal_return(fn) if fn is not None else None
            if ann and ann[0] == "command" and ann[1] is not None and set(ann[1]) == set(declared):
                prov["declared_by"] = "return_annotation"
            elif not (ann and ann[0] == "command"):
                prov["declared_by"] = "add_node(destinations=)"
        returns_command = False
        ann = _code.literal_return(fn) if fn is not None else None
        if ann and ann[0] == "command":
            returns_command = True
            if declared is None and ann[1]:
                declared = list(ann[1])
                prov["declared_by"] = "return_annotation (not recorded in StateNodeSpec.ends)"

        observed: list[str] = []
        observed_parent: list[str] = []
        unknown_goto = False
        unknown_parent = False
        if kind == "subgraph":
            gname = next((n.get("graph") for n in self.nodes if n["id"] == self.qid(name)), None)
            if declared is None and gname and self.ex.parent_unknown(gname):
                unknown_goto = True
        if name in self.toolnodes:
            for tool in runnable.tools_by_name.values():
                meta = getattr(tool, "metadata", None) or {}
                if HANDOFF_KEY in meta:
                    observed_parent.append(meta[HANDOFF_KEY])
                    continue
                tfn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
                if tfn is None:
                    continue
                o, op, u, up, rc = self.scan_commands(tfn, Command)
                observed += o
                observed_parent += op
                unknown_goto |= u
                unknown_parent |= up
                returns_command |= rc
            if observed_parent:
                prov["handoffs"] = "tool metadata '__handoff_destination'"
        elif ((kind in ("step", "model") or name in self.via_function) and fn is not None
              and not _is_middleware(getattr(fn, "__self__", None))):
            tree_ok = _code.parse_function(fn) is not None
            if not tree_ok and kind == "step" and not _code.is_library(fn):
                unknown_goto = True
                self.ex.warn(self.label(f"node {name!r}: cannot read its source; it may return a Command anywhere"))
            else:
                o, op, u, up, rc = self.scan_commands(fn, Command)
                observed += o
                observed_parent += op
                unknown_goto |= u
                unknown_parent |= up
                returns_command |= rc
                # Send inside Command(goto=[Send(...)])
                self.scan_sends(name, fn, via="command", rname=_code.qualname(fn)) if self.has_send(fn) else None

        local = [d for d in observed if d]
        if declared is not None:
            extra = [d for d in local if d not in declared]
            if extra:
                self.ex.warn(self.label(
                    f"node {name!r} declares destinations {declared} but its code also goes to {extra}; both kept"))
            dests: list[str] | None = _dedup(self.qid(d) for d in declared + extra)
            if unknown_goto:
                prov["observed_goto_unknown"] = True
        elif unknown_goto or (returns_command and not local):
            dests = None
            if returns_command or unknown_goto:
                prov["declared_by"] = None
                self.ex.warn(self.label(f"node {name!r} returns Command without declared destinations -> destinations null"))
        elif local:
            dests = _dedup(self.qid(d) for d in local)
            prov["declared_by"] = "Command(goto=...) constants in its source"
        else:
            dests = []
        if observed:
            prov["observed_goto"] = _dedup(observed)
        if dests is None or dests:
            self.edges.append(self.lg({"from": self.qid(name), "kind": "command", "destinations": dests}, **prov))

        # hand-offs to the enclosing graph
        if observed_parent or unknown_parent:
            if self.parent is None:
                self.ex.warn(f"node {name!r} hands off to a parent graph, but this is the top graph; ignored")
            else:
                if observed_parent:
                    self.edges.append(self.lg(
                        {"from": self.qid(name), "kind": "command",
                         "destinations": _dedup("../" + _code_escape(d) for d in observed_parent)},
                        scope="parent", enforced=False, declared_by=prov.get("handoffs", "Command(graph=PARENT)")))
                if unknown_parent:
                    self.parent_unknown = True
                    self.ex.warn(self.label(
                        f"node {name!r} hands off to the parent graph to a destination it computes; "
                        "the parent's subgraph node gets a command edge to null"))

    def has_send(self, fn: Any) -> bool:
        tree = _code.parse_function(fn)
        if tree is None:
            return False
        return any(isinstance(n, ast.Name) and n.id == "Send" or isinstance(n, ast.Attribute) and n.attr == "Send"
                   for n in ast.walk(tree))

    def scan_commands(self, fn: Any, Command: Any):
        """(gotos, parent gotos, unknown goto, unknown parent goto, returns a Command at all)."""
        tree = _code.parse_function(fn)
        if tree is None:
            return [], [], False, False, False
        gotos: list[str] = []
        parent: list[str] = []
        unknown = unknown_parent = False
        any_cmd = False
        for call, _ in _code.calls_to(fn, tree, Command, "Command"):
            kw = {k.arg: k.value for k in call.keywords}
            goto = kw.get("goto")
            if goto is None:
                continue  # Command(update=...) / Command(resume=...) does not route
            any_cmd = True
            to_parent = False
            g = kw.get("graph")
            if g is not None:
                val = _code.resolve_name(fn, g)
                to_parent = val == getattr(Command, "PARENT", "__parent__") or (
                    isinstance(g, ast.Attribute) and g.attr == "PARENT")
            if isinstance(goto, ast.Call) or (isinstance(goto, (ast.List, ast.Tuple)) and any(
                    isinstance(e, ast.Call) for e in goto.elts)):
                continue  # Send(...) objects: read by scan_sends
            names = _goto_names(fn, goto)
            if names is None:
                if to_parent:
                    unknown_parent = True
                else:
                    unknown = True
            elif to_parent:
                parent += names
            else:
                gotos += names
        return gotos, parent, unknown, unknown_parent, any_cmd

    def error_handlers(self) -> None:
        for name, spec in self.builder.nodes.items():
            handler = getattr(spec, "error_handler_node", None)
            if handler:
                self.edges.append(self.lg({"from": self.qid(name), "kind": "conditional",
                                           "destinations": [self.qid(handler)]},
                                          on_error=True, enforced=True, source="add_node(error_handler=)"))
        ehmap = getattr(self.compiled, "node_error_handler_map", None) or {}
        for name, handler in ehmap.items():
            spec = self.builder.nodes.get(name)
            if spec is not None and getattr(spec, "error_handler_node", None) == handler:
                continue
            if handler in self.ids or handler in self.builder.nodes:
                self.edges.append(self.lg({"from": self.qid(name), "kind": "conditional",
                                           "destinations": [self.qid(handler)]},
                                          on_error=True, enforced=True, source="node_error_handler_map"))

    # -------------------------------------------------------------- interrupts
    def compile_interrupts(self) -> None:
        from langgraph.types import interrupt

        for when, attr in (("before", "interrupt_before_nodes"), ("after", "interrupt_after_nodes")):
            listed = getattr(self.compiled, attr, None) or []
            names = list(self.builder.nodes) if listed == "*" else list(listed)
            for name in names:
                if name not in self.builder.nodes:
                    continue
                src = f"compile(interrupt_{when}=" + ('"*"' if listed == "*" else "list") + ")"
                spec = self.builder.nodes[name]
                if when == "before" and name in self.toolnodes:
                    for t in self.node_tools(name):
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "before", "tool": t},
                                                       source=src, guaranteed=True))
                else:
                    self.interrupts.append(self.lg({"node": self.qid(name), "when": when, "tool": None},
                                                   source=src, guaranteed=True))
        # interrupt() in node code, and at the top of a tool's code
        for name, spec in self.builder.nodes.items():
            kind = self.kinds.get(name)
            if name in self.swallows:
                self.swallowed_pauses(name)
                continue
            if name in self.toolnodes:
                for tname, tool in self.runnable(name).tools_by_name.items():
                    tfn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
                    if tfn is None:
                        continue
                    tree = _code.parse_function(tfn)
                    if tree is None:
                        continue
                    pauses, unplaced = _pauses.find(tfn, tree)
                    self.opaque_pauses(name, tfn, unplaced, f"tool {tname!r}: ")
                    calls = [(p.call, p.resolved) for p in pauses]
                    if not calls:
                        continue
                    if self.asks_after_effect(name, tname, tfn, tree, calls):
                        continue
                    top = [c for c, resolved in calls if resolved and _code.top_level_call(tree, c)]
                    if any(_pauses.guards_effects(tfn, tree, c) for c in top):
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "before", "tool": tname},
                                                       source="interrupt() at the top of the tool's code, "
                                                              "its answer keeping the tool from acting on a no",
                                                       guaranteed=True))
                    elif top:
                        # SPEC 12.5: an answer never read (or read and then ignored) confirms nothing.
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "inside", "tool": None},
                                                       source="interrupt() in the tool's code, whose answer does not "
                                                              "keep it from acting"))
                        self.ex.warn(self.label(
                            f"tool {tname!r} (node {name!r}) asks with interrupt() but acts whatever the answer: "
                            "a no does not stop it, so the pause confirms nothing (written `inside`, no tool); fix: "
                            "read the answer and return before acting unless it is a yes "
                            "(`if answer != \"yes\": return \"cancelled\"`)"))
                    else:
                        self.ex.warn(self.label(
                            f"tool {tname!r} calls interrupt() under a condition; not written as a confirmation"))
                continue
            if kind not in ("step", "model", "tools", "tools_plain"):
                continue
            for tname in self.node_tools(name):  # tools a step runs itself: rerun with the step on resume
                tool = self.ex.tools_seen.get(tname)
                tfn = (getattr(tool, "func", None) or getattr(tool, "coroutine", None)) if tool is not None else None
                tree = _code.parse_function(tfn) if tfn is not None else None
                if tree is not None:
                    tcalls = _code.calls_to(tfn, tree, interrupt, "interrupt")
                    if tcalls:
                        self.asks_after_effect(name, tname, tfn, tree, tcalls)
            fn = _code.unwrap_callable(self.runnable(name))
            if fn is None or _is_middleware(getattr(fn, "__self__", None)) or _code.is_library(fn):
                continue
            tree = _code.parse_function(fn)
            if tree is None:
                continue
            pauses, unplaced = _pauses.find(fn, tree)
            if kind == "step":
                extra = _pauses.unfollowed(fn, bool(pauses or unplaced))
                unplaced += [extra] if extra is not None else []
            self.opaque_pauses(name, fn, unplaced)
            calls = [(p.call, p.resolved) for p in pauses]
            if not calls:
                continue
            tools = next((n.get("tools") or [] for n in self.nodes if n["id"] == self.qid(name)), [])
            if tools and kind != "model":
                reviewed, why = _review.review_shape(fn, tools)
                if reviewed is not None:
                    for t in reviewed:
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "call", "tool": t},
                                                       source="interrupt() for each tool call, the tool run only "
                                                              "when the answer accepts or edits it"))
                    if not self.one_call_reaches(name):
                        self.ex.warn(self.label(
                            f"node {name!r} runs a tool before a later interrupt() in the same run: when the run "
                            "resumes LangGraph runs the node again from its start, so with several tool calls in one "
                            "message every call it ran before the later pause (an accepted call, or one it runs "
                            "unreviewed) runs again, unasked, each time a later call is answered; the review is "
                            "credited (each call runs only with the arguments the person accepted, and the verifier "
                            "counts a call run again as any plain call: at_most QG014, recovery QG105); fix: ask "
                            "about every call first (collect every answer), then run the tools, or bind the model "
                            "with parallel_tool_calls=False"))
                    continue
                self.ex.warn(self.label(
                    f"node {name!r} calls interrupt() and the tools {tools}, but the review is not recognised "
                    f"({why}): written as an `inside` pause, which confirms nothing; if the node puts each call to "
                    f"a person and runs it only when accepted, declare it in the words: "
                    f'{{"nodes": {{"{name}": {{"reviews": {json.dumps(tools)}}}}}}}'))
            if kind == "step" and not tools and self.approval(name, fn, tree, pauses):
                continue
            self.interrupts.append(self.lg({"node": self.qid(name), "when": "inside", "tool": None},
                                           source="interrupt() call in the node's code",
                                           unconditional=any(_code.top_level_call(tree, c) for c, _ in calls)))

    def opaque_guard_calls(self, name: str, node: dict, fn: Any) -> None:
        """Each `guard.call`/`acall` of step `name` whose tool the exporter cannot name (a registry
        with a `name=` computed at run time, `_guarded.unnamed_guard_calls`) is an `opaque` entry
        `{"what": "tools"}` on the node (SPEC 12.5, QG024) and a warning: never dropped."""
        for at in _guarded.unnamed_guard_calls(fn):
            why = ("a guard.call/acall whose tool and name= are known only at run time (a registry looked up by "
                   "the model's tool name): the exporter cannot list the tools it runs; pass each function with a "
                   "literal name= (or a tool object), or list them in a tool node")
            entry: dict[str, Any] = {"what": "tools", "why": why}
            file, line = _code.source_line(fn, at)
            if file and line:
                entry["location"] = {"file": _code.rel_file(file, self.ex.base), "line": line,
                                     "column": getattr(at, "col_offset", 0) + 1}
            node.setdefault("opaque", []).append(entry)
            self.ex.warn(self.label(f"node {name!r}: {why} (QG024 fails the gate until it is read or declared)"))

    def opaque_pauses(self, name: str, fn: Any, unplaced: list, prefix: str = "") -> None:
        """Each pause of node `name`'s code (or its tool's, `prefix`) the exporter cannot place is an
        `opaque` entry on the node (SPEC 12.5), at its line when known, and a warning: never dropped."""
        if not unplaced:
            return
        node = next(n for n in self.nodes if n["id"] == self.qid(name))
        for u in unplaced:
            entry: dict[str, Any] = {"what": "pause", "why": prefix + u.why}
            file, line = _code.source_line(fn, u.at) if u.at is not None else (None, None)
            if file and line:
                entry["location"] = {"file": _code.rel_file(file, self.ex.base), "line": line,
                                     "column": getattr(u.at, "col_offset", 0) + 1}
            node.setdefault("opaque", []).append(entry)
            self.ex.warn(self.label(f"node {name!r}: {prefix}{u.why}: an opaque pause (QG024 fails the gate until "
                                    "it is read or declared)"))

    def approval(self, name: str, fn: Any, tree: ast.AST, pauses: list) -> bool:
        """Node `name` is an approval node (`_pauses.approval_routes`): `answer = interrupt(...)`
        at its own level, and every `Command(goto=<tool node>)` under a yes. Then the pause is an
        `inside` interrupt for each tool of each such tool node, each with its own answer flag
        (turn-scoped, declared in `state`), and the edge into the tool node is guarded by all of
        them: a no never reaches it, and a yes confirms the calls it runs (SPEC 12.5). False, and
        nothing written, for any other shape."""
        top = [p for p in pauses if p.resolved and _code.top_level_call(tree, p.call)]
        if len(top) != 1 or len(pauses) != 1:
            return False
        targets, why = _pauses.approval_routes(fn, tree, top[0].call, self.toolnodes)
        if not targets:
            return False
        me = self.qid(name)
        guards: dict[str, str] = {}
        for t in sorted(targets):
            q = self.qid(t)
            mine = [e for e in self.edges if e["from"] == me and (e["destinations"] is None or q in e["destinations"])]
            if not mine or any(e["kind"] != "command" or e["destinations"] is None or e.get("guard") for e in mine):
                return False  # a route into the tool node the answer does not decide
            tools = self.node_tools(t)
            if not tools:
                return False
            if len(tools) > MAX_APPROVED_TOOLS:
                self.ex.warn(self.label(
                    f"node {name!r} is an approval node for {t!r}, but {t!r} binds {len(tools)} tools: one answer "
                    f"flag a tool makes 2^{len(tools)} answers for the verifier to search, so the approval is not "
                    f"credited (written `inside`, confirming nothing); fix: give the approval node a tool node of at "
                    f"most {MAX_APPROVED_TOOLS} tools (the writes it confirms), or review each call "
                    "(HumanInTheLoopMiddleware, or the words' reviews)"))
                return False
            flags = []
            for tool in tools:
                flag = _flag(self.parent, name, tool)
                flags.append(flag)
                self.state[flag] = {"scope": "turn"}
                self.interrupts.append(self.lg({"node": me, "when": "inside", "tool": tool, "answer": flag},
                                               source="answer = interrupt(...) in an approval node, the answer "
                                                      f"guarding its Command(goto={t!r})"))
            guards[q] = " && ".join(flags)
        if not self.one_call_reaches(name):
            self.ex.warn(self.label(
                f"node {name!r} asks once and, on a yes, sends every call of the model's message to "
                f"{', '.join(sorted(targets))}: the yes is credited as confirming each of them, so the question "
                "must show every call (state['messages'][-1].tool_calls), not only one; or bind the model with "
                "parallel_tool_calls=False"))
        for q, guard in guards.items():
            for e in [e for e in self.edges if e["from"] == me and e["destinations"] and q in e["destinations"]]:
                e["destinations"] = [d for d in e["destinations"] if d != q]
                if not e["destinations"]:
                    self.edges.remove(e)
            self.edges.append(self.lg({"from": me, "kind": "command", "destinations": [q], "guard": guard},
                                      source="Command(goto=...) taken only on the person's yes", enforced=False))
        return True

    def asks_after_effect(self, name: str, tname: str, tfn: Any, tree: ast.AST, calls: list) -> bool:
        """Does tool `tname` (of tool node `name`) call `interrupt()` after a call that may act
        (`_code.effects_before`)? LangGraph runs an interrupted tool again from its start when the
        run resumes, so that effect runs again (once more for each answer), and the question does
        not confirm it: a warning names the tool, the lines and the fix, and no pause is credited."""
        skip = {id(c) for c, _ in calls}
        for c, _ in calls:
            effects = [e for e in _code.effects_before(tfn, tree, c) if id(e) not in skip]
            if not effects:
                continue
            file, line = _code.source_line(tfn, c)
            _f, eline = _code.source_line(tfn, effects[0])
            at = f"{_code.rel_file(file, self.ex.base)}:{line}" if file else "its code"
            what = ast.unparse(effects[0].func) if hasattr(ast, "unparse") else "a call"
            self.ex.warn(self.label(
                f"tool {tname!r} (node {name!r}) calls interrupt() at {at} after {what}(...)"
                + (f" (line {eline})" if eline else "")
                + ", which may act: when the run resumes LangGraph runs the tool again from its start, so that "
                "effect runs again (once more for each answer), and the question confirms nothing of it (no pause is "
                f"written for {tname!r}); fix: ask before the effect (call interrupt() first and act only on a yes), "
                "or make the effect idempotent (an idempotency key, or a check that it was already done)"))
            return True
        return False

    def one_call_reaches(self, name: str) -> bool:
        """Does every node with an edge to node `name` make one tool call a message (a model
        bound with `parallel_tool_calls=False`)? False when any other node, or an edge whose
        destinations are unknown, leads there."""
        q = self.qid(name)
        sources = {e["from"] for e in self.edges if e["destinations"] is None or q in e["destinations"]}
        sources |= {e["from"] for e in self.sends if e.get("destinations") is None or q in e["destinations"]}
        singles = {self.qid(n) for n in self.single_call}
        return bool(sources) and sources <= singles

    def node_tools(self, name: str) -> list[str]:
        """The tools exported on node `name` (a tool node's, and its fallbacks')."""
        return next((n.get("tools") or [] for n in self.nodes if n["id"] == self.qid(name)), [])

    def swallowed_pauses(self, name: str) -> None:
        """Warn about each `interrupt()` inside node `name` (its code, its tools' code) that its
        `with_fallbacks` catches: no pause, so no confirmation or review, is written for it."""
        from langgraph.types import interrupt

        where: list[str] = []
        fns = [(f"tool {t!r}", getattr(tool, "func", None) or getattr(tool, "coroutine", None))
               for t, tool in (getattr(self.runnable(name), "tools_by_name", None) or {}).items()]
        fn = _code.unwrap_callable(self.runnable(name))
        if fn is not None and not _code.is_library(fn) and not _is_middleware(getattr(fn, "__self__", None)):
            fns.append(("its code", fn))
        for what, f in fns:
            tree = _code.parse_function(f) if f is not None else None
            if tree is not None and _code.calls_to(f, tree, interrupt, "interrupt"):
                where.append(what)
        if where:
            self.ex.warn(self.label(
                f"node {name!r}: interrupt() in {', '.join(where)} never pauses the run: its {self.swallows[name]} "
                "catches GraphInterrupt (an Exception, via GraphBubbleUp), runs the fallback instead and the model "
                "receives what it returns; no confirmation or review is written for it: " + _fallbacks.FIX))

    def hitl_interrupts(self) -> None:
        """HumanInTheLoopMiddleware reviews each call of the tools its `interrupt_on` gates: a
        `call` interrupt (SPEC 12.2) on each tool node binding the tool. In `batched` mode the
        person answers in `after_model` for every call of the model's message, and a rejected
        call never reaches the tool node; in `per_call` mode the tool node's wrapper asks about
        each call. Either way each call runs only on a yes (or as edited)."""
        for name, mw in self.hitl:
            mode = getattr(mw, "interrupt_mode", "batched")
            configs = getattr(mw, "interrupt_on", {}) or {}
            if name in self.hitl_seen:
                continue
            self.hitl_seen.add(name)
            targets = sorted(self.toolnodes)
            src = (f"HumanInTheLoopMiddleware(interrupt_mode={mode!r})"
                   + (" in ToolNode.wrap_tool_call" if mode == "per_call" else ".after_model"))
            for tool, cfg in configs.items():
                if not cfg:
                    continue
                if isinstance(cfg, dict) and cfg.get("when") is not None:
                    self.ex.warn(self.label(
                        f"HumanInTheLoopMiddleware asks about {tool!r} only when its `when` predicate holds: "
                        "not written as a confirmation"))
                    continue
                decisions = list(cfg.get("allowed_decisions", [])) if isinstance(cfg, dict) else []
                for t in targets:
                    if t in self.swallows:
                        self.ex.warn(self.label(
                            f"HumanInTheLoopMiddleware's question about {tool!r} on node {t!r} never reaches the "
                            f"person: its {self.swallows[t]} catches GraphInterrupt; not written as a confirmation"))
                        continue
                    tn = self.runnable(t)
                    if tool not in getattr(tn, "tools_by_name", {}):
                        continue
                    where = {"asked_in": self.qid(name)} if mode != "per_call" else {}
                    self.interrupts.append(self.lg({"node": self.qid(t), "when": "call", "tool": tool},
                                                   source=src, guaranteed=True, decisions=decisions, **where))


#: Functions that run a subgraph with the node's whole state and return the subgraph's whole
#: output (so the guard's history goes in and comes out): langgraph-supervisor 0.0.31's worker
#: node (`_make_call_agent`: `agent.invoke(state, config)`, then `{**output, "messages": ...}`).
_WHOLE_STATE_CALLERS = (
    ("langgraph_supervisor.supervisor", "_make_call_agent.<locals>.call_agent"),
    ("langgraph_supervisor.supervisor", "_make_call_agent.<locals>.acall_agent"),
)


def _passes_whole_state(fn: Any) -> bool:
    """Does node function `fn` run its subgraph with the whole state and return its whole output
    (`_WHOLE_STATE_CALLERS`)?"""
    plain = _code.plain_function(fn) if fn is not None else None
    return (getattr(plain, "__module__", None), getattr(plain, "__qualname__", None)) in _WHOLE_STATE_CALLERS


def _one_call_a_message(runnable: Any, fn: Any) -> bool:
    """True when the model a node runs is bound with `parallel_tool_calls=False` (one tool call a
    message), in the runnable or what its code references."""
    def bound_single(o: Any, depth: int = 0) -> bool:
        if depth > 6:
            return False
        kwargs = _code.attr(o, "kwargs", None)
        if isinstance(kwargs, dict) and kwargs.get("parallel_tool_calls") is False:
            return True
        inner = _code.attr(o, "bound", None)
        if inner is not None and inner is not o and bound_single(inner, depth + 1):
            return True
        steps = _code.attr(o, "steps", None)  # on a class (RunnableSequence itself) a property: no steps
        return isinstance(steps, (list, tuple)) and any(bound_single(st, depth + 1) for st in steps)

    if bound_single(runnable):
        return True
    return fn is not None and any(bound_single(o) for _, o in _code.referenced_objects(fn, depth=4))


def _bound_tool_lists(runnable: Any, fn: Any) -> list[list]:
    """The tool lists a model node may bind its model with: the `tools` of every binding
    (`model.bind_tools([...])`) in the runnable or what its code references, the provider tool
    dicts written in a tool list in its own code (`_hosted.literal_dicts`), and every list its
    code references that holds a provider tool dict (create_agent's and create_react_agent's
    built-in tools, a list the node binds at run time). Reading more lists than are bound only
    adds hosted tools, never hides one."""
    from langchain_core.runnables import Runnable

    out: list[list] = []
    seen: set[int] = set()

    def bindings(o: Any, depth: int = 0) -> None:
        if depth > 6 or id(o) in seen or not isinstance(o, Runnable):
            return
        seen.add(id(o))
        kwargs = _code.attr(o, "kwargs", None)
        if isinstance(kwargs, dict) and isinstance(kwargs.get("tools"), (list, tuple)):
            out.append(list(kwargs["tools"]))
        for field in ("bound", "first", "last", "runnable"):
            inner = _code.attr(o, field, None)
            if inner is not None and inner is not o:
                bindings(inner, depth + 1)
        for many in ("steps", "middle", "fallbacks"):  # a sequence's steps, a model's fallbacks
            for st in _code.attr(o, many, None) or []:
                bindings(st, depth + 1)

    bindings(runnable)
    if fn is not None and not _code.is_library(fn):
        tree = _code.parse_function(fn)
        if tree is not None:
            def resolve(expr: Any) -> Any:
                got = _code.resolve_name(fn, expr)
                return None if got is _code._UNRESOLVED else got

            out.append(_hosted.literal_dicts(tree, resolve))  # `model.bind_tools([..., {"type": ...}])` in its code
    if fn is not None:
        for _, o in _code.referenced_objects(fn, depth=4):
            if isinstance(o, (list, tuple)) and any(_hosted.is_hosted(t) for t in o):
                out.append(list(o))
            else:
                bindings(o)
    return out


def _tool_code(tool: Any) -> list:
    """What a tool's definition is, to locate it: its function and coroutine (decorators
    followed), else its class (a `BaseTool` subclass of the user's)."""
    out = [f for f in (getattr(tool, "func", None), getattr(tool, "coroutine", None)) if f is not None]
    return out or [type(tool)]


def _is_middleware(obj: Any) -> bool:
    if obj is None:
        return False
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError:
        return False
    return isinstance(obj, AgentMiddleware)


def _tool_name(t: Any) -> str:
    if _hosted.is_hosted(t):
        return f"hosted {t.get('type')}"
    if isinstance(t, dict):
        fn = t.get("function")
        if isinstance(fn, dict) and "name" in fn:
            return fn["name"]
        return t.get("name", "?")
    return getattr(t, "name", None) or getattr(t, "__name__", "?")


def _dedup(items) -> list:
    out = []
    for i in items:
        if i not in out:
            out.append(i)
    return out


_code_escape = escape_id
