"""What a `with_fallbacks` wrapper lets a node run, and whether it swallows a pause (SPEC 12.1,
12.2: a node is guarded only when every call it can make passes the guard; a pause is a pause only
when it reaches the person).

`RunnableWithFallbacks` (langchain-core 1.x) runs its `runnable`, and when that raises an
exception of `exceptions_to_handle` (default `(Exception,)`) it runs each of its `fallbacks` in
turn. LangGraph's `GraphInterrupt` (what `interrupt()` raises to pause the run, and so what the
guard's confirmation, a review node and a tool asking first raise) and `ParentCommand` (a
hand-off) are ordinary `Exception` subclasses (via `GraphBubbleUp`): a wrapper handling
`Exception` catches the pause, runs the fallback in its place, and the person is never asked.

* `layers(runnable)`: each `with_fallbacks` met under the node's wrappers (outermost first), with
  its fallbacks and whether it catches `GraphInterrupt`.
* `fallback_parts(fb)`: what a fallback runs (its tools, and the guard deciding them, if one does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _code
from . import _guarded


@dataclass
class Layer:
    """One `with_fallbacks` wrapper of a node: its `fallbacks`, the names of the exception types
    it handles, and whether they include `GraphInterrupt` (so a pause inside never reaches the
    person)."""

    fallbacks: list[Any]
    handles: list[str]
    catches_pause: bool

    def describe(self) -> str:
        """`with_fallbacks([...], exceptions_to_handle=(...))` as the user wrote it, roughly."""
        fbs = ", ".join(_name(f) for f in self.fallbacks)
        return f"with_fallbacks([{fbs}], exceptions_to_handle=({', '.join(self.handles)},))"


def _name(fb: Any) -> str:
    """A fallback as the user wrote it: `ToolNode([...])`, or the function it runs."""
    from langgraph.prebuilt import ToolNode

    inner = _code.unwrap_runnable(fb)[0]
    if isinstance(inner, ToolNode):
        return f"ToolNode({list(inner.tools_by_name)})"
    return _code.qualname(_code.unwrap_callable(inner) or inner)


def _interrupt_type() -> Any:
    from langgraph.errors import GraphInterrupt

    return GraphInterrupt


def layers(runnable: Any) -> list[Layer]:
    """Each `RunnableWithFallbacks` among `runnable`'s wrappers (the ones `_code.unwrap_runnable`
    follows), outermost first."""
    GraphInterrupt = _interrupt_type()
    out: list[Layer] = []
    obj = runnable
    for _ in range(16):
        mro = [c.__name__ for c in type(obj).__mro__]
        field = next((f for cls, f in _code.WRAPPER_FIELDS if cls in mro), None)
        if field is None:
            break
        if field == "runnable":
            handled = _code.attr(obj, "exceptions_to_handle", None) or (Exception,)
            types = [t for t in (handled if isinstance(handled, (tuple, list)) else (handled,)) if isinstance(t, type)]
            out.append(Layer(list(_code.attr(obj, "fallbacks", None) or []), [t.__name__ for t in types],
                             any(issubclass(GraphInterrupt, t) for t in types)))
        nxt = (vars(obj) if hasattr(obj, "__dict__") else {}).get(field) or _code.attr(obj, field)
        if nxt is None or nxt is obj:
            break
        obj = nxt
    return out


@dataclass
class FallbackTools:
    """What one fallback runs: `tools` (names), `guard` (the Guard deciding every one of them, or
    None), `what` (its description for a warning), `readable` (False when its code cannot be
    read, so what it runs is unknown)."""

    tools: list[str]
    guard: Any
    what: str
    readable: bool = True
    objects: tuple = ()


def fallback_parts(fb: Any) -> list[FallbackTools]:
    """What fallback `fb` runs when the node's runnable raises, one part per runnable it can run
    (itself, then its own fallbacks): a `ToolNode`'s tools (guarded when the guard is its
    innermost wrapper, `_guarded.tool_node_guard`), or a function's that references tools (guarded
    when every call goes through `guard.call`, `_guarded.step_guard`)."""
    from langchain_core.tools import BaseTool
    from langgraph.prebuilt import ToolNode

    inner, _, nested = _code.unwrap_runnable(fb)
    if isinstance(inner, ToolNode):
        tools = list(inner.tools_by_name.values())
        guard, _ = _guarded.tool_node_guard(inner)
        me = FallbackTools([t.name for t in tools], guard, _name(inner), True, tuple(tools))
    else:
        fn = _code.unwrap_callable(inner)
        if fn is None:
            me = FallbackTools([], None, _code.qualname(inner), False)
        elif _code.is_library(fn):
            me = FallbackTools([], None, _code.qualname(fn))
        else:
            objs = {o.name: o for _, o in _code.referenced_objects(fn, depth=3) if isinstance(o, BaseTool)}
            guard = _guarded.step_guard(fn, list(objs))[0] if objs else None
            me = FallbackTools(list(objs), guard, _code.qualname(fn), True, tuple(objs.values()))
    return [me] + [p for n in nested for p in fallback_parts(n)]


#: How to keep a pause inside a node with fallbacks, for warnings.
FIX = ("handle only the errors your tools raise, leaving GraphBubbleUp out (e.g. "
       "`.with_fallbacks([...], exceptions_to_handle=(ToolException,), exception_key=\"error\")`), or give the "
       "tool node `handle_tool_errors=` instead of a fallback")
