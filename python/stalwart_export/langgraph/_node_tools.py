"""The tools a node runs and whether the guard decides them (SPEC 12.1): the tools a step's code
runs (`_picks.py`), a tool that runs a guarded agent, a node's guard and the history it needs,
and what a `with_fallbacks` wrapper can run instead of the node (`_fallbacks.py`)."""

from __future__ import annotations

import ast
from typing import Any

from .. import _code
from . import _fallbacks, _picks


class ToolReading:
    """The tools of a node of a `GraphExport` (a part of it: `self` is the walk)."""

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
