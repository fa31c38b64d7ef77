"""The state of one export (SPEC 2.2): the graphs it reads (each by a `GraphExport`, `_walk.py`),
the subgraphs exported into it, the tools, guards and provider-hosted tools met, the warnings,
and, once every graph is read, the hosted tools' names and every node's and tool's location
(SPEC 12.4, `_sources.py`)."""

from __future__ import annotations

from typing import Any

from .. import _code, _hosted, _sources
from ._walk import GraphExport


class Exporter:
    """One export (`export_graph`, `graph_contents`): what every graph of it shares - the
    subgraphs exported so far, the tools and guards met, the provider-hosted tools, the warnings - and
    what is settled once every graph is read (hosted tools' names, locations)."""

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
        inner = Exporter(provenance=False)
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
            for obj in tool_code(t):
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
            for obj in tool_code(t):
                if _sources.is_user_file(_sources.source_file(obj)):
                    loc = _code.location(obj, base)
                    if loc is not None:
                        out[tname] = {"location": loc}
                        break
        return out

    def warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

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
        g = GraphExport(self, compiled, parent)
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

    def contents_of(self, compiled: Any) -> tuple[list, list, list]:
        """`contents(compiled)`: another compiled graph's tools, guards and hosted tools, read by an
        export of its own (an agent a node's code builds, `_inner_export.py`)."""
        return contents(compiled)

    def parent_unknown(self, name: str) -> bool:
        return name in self._unknown_parent


def contents(compiled: Any) -> tuple[list, list, list]:
    """The tools a compiled graph (and its subgraphs) binds or whose code references directly, once
    each by name; the guards that decide the calls of its guarded nodes; the provider-hosted tools
    its models are bound with. Raises `TypeError` when `compiled` is not a `CompiledStateGraph`."""
    ex = Exporter(provenance=False)
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


def tool_code(tool: Any) -> list:
    """What a tool's definition is, to locate it: its function and coroutine (decorators
    followed), else its class (a `BaseTool` subclass of the user's)."""
    out = [f for f in (getattr(tool, "func", None), getattr(tool, "coroutine", None)) if f is not None]
    return out or [type(tool)]
