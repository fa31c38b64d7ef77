"""The edges of one graph's export (SPEC 2.2): the builder's fixed edges and joins are written
by the walk (`_walk.py`); here its branches (`conditional`, with the routes a router's code
narrows to, `_routes.py`), the `Command(goto=...)` a node's code returns (`command`, hand-offs to
the enclosing graph included), the `Send`s of routers and nodes, and error handlers."""

from __future__ import annotations

import ast
from typing import Any

from .. import _code
from .._ids import escape_id
from ..catalogue import HANDOFF_KEY
from . import _routes
from ._models import is_middleware


class EdgeReading:
    """The edges, sends and hand-offs of a `GraphExport` (a part of it: `self` is the walk)."""

    def branch(self, src: str, router_name: str, spec: Any) -> None:
        path = spec.path
        router = _code.unwrap_callable(path)
        rname = _code.qualname(router) if router is not None else _code.qualname(path)
        ends = spec.ends
        prov: dict[str, Any] = {"router": rname}
        if ends:
            dests = dedup(self.qid(v) for v in ends.values())
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
            self.sends.append(self.lg({"from": self.qid(src), "destinations": dedup(self.qid(d) for d in dests)},
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
              and not is_middleware(getattr(fn, "__self__", None))):
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
            dests: list[str] | None = dedup(self.qid(d) for d in declared + extra)
            if unknown_goto:
                prov["observed_goto_unknown"] = True
        elif unknown_goto or (returns_command and not local):
            dests = None
            if returns_command or unknown_goto:
                prov["declared_by"] = None
                self.ex.warn(self.label(f"node {name!r} returns Command without declared destinations -> destinations null"))
        elif local:
            dests = dedup(self.qid(d) for d in local)
            prov["declared_by"] = "Command(goto=...) constants in its source"
        else:
            dests = []
        if observed:
            prov["observed_goto"] = dedup(observed)
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
                         "destinations": dedup("../" + escape_id(d) for d in observed_parent)},
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


def _goto_names(fn: Any, goto: ast.AST) -> list[str] | None:
    """The nodes a `Command(goto=...)` names: `_code.constant_strings`, and both arms of a
    conditional expression (`"tools" if answer == "approve" else "agent"`)."""
    if isinstance(goto, ast.IfExp):
        a, b = _goto_names(fn, goto.body), _goto_names(fn, goto.orelse)
        return None if a is None or b is None else a + b
    return _code.constant_strings(fn, goto)


def dedup(items) -> list:
    out = []
    for i in items:
        if i not in out:
            out.append(i)
    return out
