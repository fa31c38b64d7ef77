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

import importlib.metadata
from typing import Any

from .. import _words
from .._ids import escape_id
from . import _written
from ._exporter import Exporter, contents


EXPORTER = "stalwart_export"


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
    ex = Exporter(provenance=provenance)
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
    return contents(compiled)
