"""Which nodes' calls pass the guard (SPEC 12.1: "a node whose tool calls pass through the guard is
exported as `tools`, guarded").

A node is guarded when every call it makes is decided by a `Guard`:

* a tool node from `guard.tool_node(...)` (it carries `stalwart_guard`);
* a `ToolNode` whose tool-call wrappers (`_wrap_tool_call` and `_awrap_tool_call`, which
  `create_agent` composes from its middleware, first = outermost) end with the guard's
  `wrap_tool_call`/`awrap_tool_call`: the guard must be the innermost wrapper, the last to see a
  call before it runs, or a wrapper inside it could change the call after the check;
* a step whose code passes every tool it references to `guard.call(tool, ...)` (or `await
  guard.acall(tool, ...)`) and calls none any other way; a plain function passed there is one of
  its tools (`guarded_functions`).

The reading of composed wrappers follows langchain 1.5.2's `_chain_tool_call_wrappers`
(closures `outer`/`inner`) and langsmith's `traceable` (`__wrapped__`).
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from .. import _code
from ..guard import HISTORY_KEY, merge_history
from .guard import Guard
from .guard.channel import HistoryChannel


def _guard_class() -> Any:
    return Guard


def _wrappers(fn: Any, depth: int = 0) -> list[Any]:
    """The tool-call wrappers a composed wrapper runs, outermost first (each a function or a
    bound method)."""
    if fn is None or depth > 32:
        return []
    while hasattr(fn, "__wrapped__") and depth < 32:  # functools.wraps, langsmith traceable
        fn = fn.__wrapped__
        depth += 1
    if isinstance(fn, functools.partial):
        return _wrappers(fn.func, depth + 1)
    plain = getattr(fn, "__func__", fn)
    code = getattr(plain, "__code__", None)
    closure = getattr(plain, "__closure__", None)
    if code is not None and closure and {"outer", "inner"} <= set(code.co_freevars):
        cells = dict(zip(code.co_freevars, closure))
        try:
            outer, inner = cells["outer"].cell_contents, cells["inner"].cell_contents
        except ValueError:
            return [fn]
        return _wrappers(outer, depth + 1) + _wrappers(inner, depth + 1)
    return [fn]


def _guard_of(fn: Any) -> Any:
    """The Guard whose `wrap_tool_call`/`awrap_tool_call` `fn` is, else None."""
    me = getattr(fn, "__self__", None)
    if isinstance(me, _guard_class()) and getattr(fn, "__name__", "") in ("wrap_tool_call", "awrap_tool_call"):
        return me
    return None


def tool_node_guard(node: Any) -> tuple[Any, str | None]:
    """(the Guard that decides every call of ToolNode `node`, or None; why not, when a guard is
    among its wrappers but does not decide every call)."""
    g = getattr(node, "stalwart_guard", None)
    if isinstance(g, _guard_class()):
        return g, None
    chains = [c for c in (_wrappers(getattr(node, "_wrap_tool_call", None)),
                          _wrappers(getattr(node, "_awrap_tool_call", None))) if c]
    if not any(_guard_of(w) for c in chains for w in c):
        return None, None
    lasts = [_guard_of(c[-1]) for c in chains]
    if any(g is None for g in lasts) or len({id(g) for g in lasts}) != 1:
        inner = sorted({_code.qualname(c[-1]) for c in chains if _guard_of(c[-1]) is None})
        why = (f"{', '.join(inner)} runs inside it and may change a call after the check" if inner
               else "two different guards wrap it")
        return None, f"the guard is not the innermost tool-call wrapper ({why}): put the guard last in `middleware=[...]`"
    return lasts[0], None


def _guard_calls(fn: Any, tree: Any) -> list[tuple[Any, ast.Call]]:
    """(the Guard, the call node) of every `<guard>.call(...)` / `<guard>.acall(...)` in `fn`'s code."""
    Guard = _guard_class()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("call", "acall"):
            g = _code.resolve_name(fn, node.func.value)
            if isinstance(g, Guard):
                out.append((g, node))
    return out


def guarded_functions(fn: Any) -> list[Any]:
    """Plain functions (no `invoke`) that step function `fn` passes to `<guard>.call`/`.acall` as
    the tool, each as a LangChain tool named as the guard names it (`name=` when it is a literal,
    else the function's `__name__`), so that the export lists it among the step's tools and its
    catalogue entry is written (issue 29 item 2). A function given with a `name=` that is not a
    literal is left out (the guard's name for it is only known at run time)."""
    import inspect

    from langchain_core.tools import BaseTool

    tree = _code.parse_function(fn)
    if tree is None:
        return []
    out: dict[str, Any] = {}
    for _, node in _guard_calls(fn, tree):
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "tool"), None)
        named = next((k.value for k in node.keywords if k.arg == "name"), None)
        if named is not None and not (isinstance(named, ast.Constant) and isinstance(named.value, str)):
            continue
        cands = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
        for c in cands:
            obj = _code.resolve_name(fn, c) if c is not None else None
            if obj is None or isinstance(obj, BaseTool) or hasattr(obj, "invoke") or not callable(obj):
                continue
            if not (inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, functools.partial)):
                continue
            if named is not None and len(cands) > 1:
                continue  # one literal name for two functions: not the name of each
            nm = named.value if named is not None else getattr(obj, "__name__", None)
            if not isinstance(nm, str) or nm in out:
                continue
            t = _code.function_tool(obj, nm)
            if t is None:
                continue  # a signature LangChain cannot read: not listed (the step stays plain)
            t.metadata = {"stalwart_guarded_function": obj}
            out[nm] = t
    return list(out.values())


def unnamed_guard_calls(fn: Any) -> list[ast.Call]:
    """The `<guard>.call`/`.acall` calls of step function `fn` whose `name=` is not a literal and
    whose tool is not a tool object the exporter can resolve (`guard.call(FUNCS[c["name"]], ...,
    name=c["name"])`): the guard names that call only at run time, so the exporter cannot list its
    tool; each is an `opaque` entry on the node (SPEC 12.5, QG024), never dropped silently."""
    from langchain_core.tools import BaseTool

    tree = _code.parse_function(fn)
    if tree is None:
        return []
    out = []
    for _, node in _guard_calls(fn, tree):
        named = next((k.value for k in node.keywords if k.arg == "name"), None)
        if named is None or (isinstance(named, ast.Constant) and isinstance(named.value, str)):
            continue
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "tool"), None)
        cands = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
        objs = [_code.resolve_name(fn, c) if c is not None else None for c in cands]
        if all(isinstance(o, BaseTool) for o in objs):
            continue  # a tool object keeps its own name (the guard refuses renaming it)
        out.append(node)
    return out


def step_guard(fn: Any, tool_names: list[str]) -> tuple[Any, str | None]:
    """(the Guard every tool call of step function `fn` goes through, or None; why not).

    Every name in `fn`'s code that denotes a tool (or a container of tools) must be the first
    argument of a `<guard>.call(...)` whose `<guard>` is a Guard; a tool used any other way (its
    `invoke`, passed elsewhere, or in a helper function the AST does not show) is a call the
    guard does not decide."""
    from langchain_core.tools import BaseTool

    tree = _code.parse_function(fn)
    if tree is None:
        return None, "its source cannot be read"

    plain = {id((t.metadata or {}).get("stalwart_guarded_function")): t.name for t in guarded_functions(fn)}

    def holds_tool(obj: Any) -> bool:
        if isinstance(obj, BaseTool) or id(obj) in plain:
            return True
        if isinstance(obj, dict):
            return any(isinstance(v, BaseTool) for v in list(obj.values())[:64])
        if isinstance(obj, (list, tuple, set, frozenset)):
            return any(isinstance(v, BaseTool) for v in list(obj)[:64])
        return False

    guarded_args: set[int] = set()
    guard = None
    for g, node in _guard_calls(fn, tree):
        if guard is not None and g is not guard:
            return None, "it calls tools through two different guards"
        guard = g
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "tool"), None)
        if first is not None:
            guarded_args.update(id(n) for n in ast.walk(first))
    if guard is None:
        return None, None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in guarded_args:
            obj = _code.resolve_name(fn, node)
            if holds_tool(obj):
                name = node.id if isinstance(node, ast.Name) else node.attr
                return None, f"it uses the tool {name!r} outside guard.call (line {node.lineno} of its source)"
    # Tools reached only through helper functions are not in this function's AST.
    direct = {getattr(o, "name", None) for _, o in _code.referenced_objects(fn, depth=0) if isinstance(o, BaseTool)}
    direct |= set(plain.values())
    hidden = [t for t in tool_names if t not in direct and not _named_in_containers(fn, t)]
    if hidden:
        return None, f"it reaches {hidden} through other functions, where the exporter cannot see guard.call"
    return guard, None


def _named_in_containers(fn: Any, tool: str) -> bool:
    from langchain_core.tools import BaseTool

    for _, o in _code.referenced_objects(fn, depth=0):
        items = list(o.values()) if isinstance(o, dict) else list(o) if isinstance(o, (list, tuple, set)) else []
        if any(isinstance(v, BaseTool) and v.name == tool for v in items[:64]):
            return True
    return False


def keeps_history(compiled: Any) -> bool:
    """Does the compiled graph's state keep the guard's history (a `stalwart_guard` channel of the
    guard's own, `GuardHistory`, which no update can replace)?"""
    ch = (getattr(compiled, "channels", None) or {}).get(HISTORY_KEY)
    if ch is None or getattr(ch, "operator", None) is not merge_history:
        return False
    return isinstance(ch, HistoryChannel)


def _sends_one_call(fn: Any) -> bool:
    """Does every `Send` in `fn`'s code send calls of a model's message (a list, `Send(node,
    [tool_call])` as create_agent's router does, or `ToolCallWithContext(...)` as
    create_react_agent's)? Such calls are placed in their message and decided as part of its batch
    (the guard refuses, `concurrent`, a place two tasks decide), so their tasks racing each other is
    the batch's own reading."""
    tree = _code.parse_function(fn)
    if tree is None:
        return False
    sends = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and ((isinstance(n.func, ast.Name) and n.func.id == "Send")
                  or (isinstance(n.func, ast.Attribute) and n.func.attr == "Send"))]
    if not sends:
        return False
    for call in sends:
        payload = (call.args[1] if len(call.args) > 1
                   else next((k.value for k in call.keywords if k.arg == "arg"), None))
        if isinstance(payload, (ast.List, ast.ListComp)):
            continue
        f = payload.func if isinstance(payload, ast.Call) else None
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name != "ToolCallWithContext":
            return False
    return True


def fan_outs(walker: Any) -> None:
    """SPEC 12.1 "Concurrent branches share one record": a guarded tool node (a `ToolNode` the guard
    wraps, or `guard.tool_node`) that a `Send` runs with a state of its own runs its batch in a task
    alongside others, where the guard cannot serialise it with them (it refuses the batch's calls
    that bear a limit, `concurrent`): it is exported `tools_plain`, with a warning saying why. A step
    calling `guard.call` is serialised across branches and stays guarded; create_agent's own Sends
    (one call of the model's message each) are its batch's reading and change nothing.

    `walker`: the exporter's walk of one graph (`_walk.GraphExport`): its `send_fns`, `toolnodes`,
    `kinds`, `nodes`, `qid` and `label`."""
    targets: dict[str, Any] = {}
    for dests, fn in walker.send_fns:
        if _sends_one_call(fn):
            continue
        for name in (dests if dests is not None else sorted(walker.toolnodes)):
            targets.setdefault(name, fn)
    for name, fn in targets.items():
        if name not in walker.toolnodes or walker.kinds.get(name) != "tools":
            continue
        qid = walker.qid(name)
        node = next((n for n in walker.nodes if n.get("id") == qid), None)
        if node is None:
            continue
        node["kind"] = "tools_plain"
        walker.kinds[name] = "tools_plain"
        prov = node.get("langgraph")
        if isinstance(prov, dict):
            prov.pop("guard", None)
            prov["fan_out"] = f"Send from {_code.qualname(fn)}"
        walker.ex.warn(walker.label(
            f"node {name!r} is not guarded: a `Send` ({_code.qualname(fn)}) runs it with a state of its own, in a "
            "task alongside others, where the guard cannot decide its calls over one serialised history, so it "
            "refuses every call bearing a limit there (concurrent); exported tools_plain: send the work to a "
            "step that calls guard.call (serialised across branches), or route to the tool node without Send"))
