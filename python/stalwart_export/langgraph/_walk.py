"""The walk of one compiled graph (SPEC 2.2): `GraphExport.run` writes its nodes, its edges and its
pauses, each read by a part of the walk, one job a module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _code, _sources
from .._ids import escape_id, unescape_id
from . import _chains, _guarded, _halts
from ._edges import EdgeReading
from ._interrupts import PauseReading
from ._models import ModelReading
from ._node_tools import ToolReading
from ._nodes import NodeReading

if TYPE_CHECKING:  # the exporter holds the walks; the walk only reads it
    from ._exporter import Exporter


#: LangGraph's names of a graph's start and end, the ids the export gives them.
START = "__start__"
END = "__end__"


class GraphExport(NodeReading, ModelReading, ToolReading, EdgeReading, PauseReading):
    """The export of one compiled graph (`run`): its nodes (`_nodes.py`, `_models.py`,
    `_node_tools.py`), edges (`_edges.py`) and pauses (`_interrupts.py`), read in that order; `ex`
    is the whole export's `Exporter`, which the subgraphs it meets are exported into."""

    def __init__(self, ex: Exporter, compiled: Any, parent: str | None) -> None:
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
        q = escape_id(name)
        if q != name:
            self.ex.warn(
                f"node {name!r} renamed to {q!r} (qls ids may not contain '/'; '%2F' stands for '/', '%25' for '%')"
            )
        self.ids[name] = q
        return q

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
