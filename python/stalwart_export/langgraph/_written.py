"""Which of a step's tool calls take arguments the model wrote (issue 28 item 2, SPEC 6 QG017/QG018).

A step (a node whose code calls tools itself) may hand a tool what the model wrote: the arguments
of a tool call of the last message (`tool.invoke(state["messages"][-1].tool_calls[0]["args"])`, a
loop `for call in last.tool_calls: run_python.invoke(call["args"])`), or the text of a message
(`run_python.invoke({"code": last.content})`, `execute_sql(query=msg.content)`). Such a call is
a call whose arguments a model chose, as a tool node's are: QG017 (code, shell) and QG018 (sql,
query, path, url, template, destination) apply. The export lists those tools in the node's
`model_written` (read by the verifier's qls-graph reader): the tool's name when any of its
arguments may be the model's (a tool call's whole `args`, a text input), or `{"tool": name,
"args": [...]}` naming the arguments the model wrote when the code names them (the keys of a
dict literal given to `.invoke`, keyword arguments, positions of a function it resolves), so a
constant `script` beside a model-written `stdin` raises nothing.

An argument is the model's (`written_by_model`) when its expression reads, anywhere inside it:

* the messages: `state["messages"]`, `state.messages`, `state.get("messages")`;
* a message's or a tool call's parts: `.tool_calls`, `.invalid_tool_calls`, `.content`, `.text`,
  `.additional_kwargs`, `["tool_calls"]`;
* a local name assigned from such an expression (`last = state["messages"][-1]`, a loop or
  comprehension variable over one, a walrus, `x += ...`), however many assignments deep.

Any other argument (a constant, a state field other than the messages, the configuration) is the
code's own: the call is the step's, and neither rule applies. Sound before smart: an expression
that merely mentions the messages (`len(state["messages"])`) counts as the model's.

A tool is named as the export names it: a LangChain tool by its `name`, an application function
by its `__name__` (a `nodes.X.calls` effect of the words is named so), and a callee the exporter
cannot resolve by the name it is spelled with (`db.execute_sql(...)`: `execute_sql`), which counts
only when the node lists a tool of that name (`mark`).
"""

from __future__ import annotations

import ast
import inspect
from typing import Any, Iterable

from .. import _code
from . import _unseen

from ._flow import MESSAGE_KEYS, MESSAGE_PARTS, _args, _Flow, _is_source, _names, _receiving  # noqa: F401


def _callee_name(fn: Any, tree: ast.AST, call: ast.Call) -> tuple[str | None, Any]:
    """(the name the export gives what `call` runs, the object it resolves to or None): a tool
    run by `.invoke(...)` and its kin, a tool or function called, else the spelled name."""
    from langchain_core.tools import BaseTool

    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _unseen.RUNS:
        target = _unseen.resolve(fn, tree, func.value)
        if isinstance(target, BaseTool):
            return target.name, target
        return None, None  # a model, a graph, a runnable it cannot name: not a tool call it can name
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None, None
    target = _unseen.resolve(fn, tree, func)
    if isinstance(target, BaseTool):
        return target.name, target
    if inspect.isfunction(target) or inspect.ismethod(target):
        plain = _code.plain_function(_code.unwrap_decorated(target))
        return getattr(plain, "__name__", None), target
    if target is _code._UNRESOLVED:
        return (func.id if isinstance(func, ast.Name) else func.attr), None
    return None, None


def _merge(into: dict, name: str, args: frozenset[str] | None) -> None:
    if name in into:
        have = into[name]
        into[name] = None if have is None or args is None else have | args
    else:
        into[name] = args


def _input_args(flow: _Flow, expr: ast.AST) -> frozenset[str] | None:
    """The arguments the model wrote in a tool's input `expr` (`.invoke(expr)`): the keys of a
    dict literal whose values are the model's; None (any) for any other input."""
    if not isinstance(expr, ast.Dict):
        return None
    out: set[str] = set()
    for k, v in zip(expr.keys, expr.values):
        if not flow.written(v):
            continue
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None  # a `**spread` or a computed key
        out.add(k.value)
    return frozenset(out)


def _call_args(flow: _Flow, call: ast.Call, target: Any, passed: list) -> frozenset[str] | None:
    """The arguments of `target` (called by `call`) the model wrote (`passed`), by name; None when
    it cannot tell which (a spread, a position it cannot name)."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in _unseen.RUNS:
        given = call.args[0] if call.args else next(
            (kw.value for kw in call.keywords if kw.arg in ("input", "tool_input")), None)
        if given is None or not flow.written(given):
            return frozenset()  # only the configuration or a callback is the model's
        return _input_args(flow, given)
    try:
        params = list(inspect.signature(target).parameters) if target is not None and not _is_tool(target) else None
    except (TypeError, ValueError):
        params = None
    out: set[str] = set()
    for k, _a in passed:
        if isinstance(k, str):
            out.add(k)
        elif isinstance(k, int) and params is not None and k < len(params):
            out.add(params[k])
        else:
            return None
    return frozenset(out)


def written_calls(fn: Any, tree: ast.AST, depth: int = _unseen.HELPER_DEPTH, seeds: Iterable[str] = (),
                  seen: frozenset[int] = frozenset()) -> dict[str, frozenset[str] | None]:
    """What `fn`'s code calls with an argument the model wrote (see the module's doc), in the
    code's order: name -> the arguments the model wrote (None: it cannot tell which, any). An
    application helper handed such an argument is followed (`depth` calls deep), its parameters
    that receive it holding the model's text there."""
    flow = _Flow(tree, seeds)
    out: dict[str, frozenset[str] | None] = {}
    seen = seen | {id(_code.plain_function(fn))}
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)),
                   key=lambda c: (c.lineno, c.col_offset))
    for call in calls:
        passed = [(k, a) for k, a in _args(call) if flow.written(a)]
        if not passed:
            continue
        name, target = _callee_name(fn, tree, call)
        helper = _unseen._helper(fn, tree, call.func) if target is not None and not _is_tool(target) else None
        if helper is not None:
            if depth > 0 and id(_code.plain_function(helper)) not in seen:
                htree = _code.parse_function(helper)
                params = _receiving(helper, passed)
                if htree is not None:
                    for n, a in written_calls(helper, htree, depth - 1, params, seen).items():
                        _merge(out, n, a)
        if name is not None:
            args = _call_args(flow, call, target, passed)
            if args != frozenset():
                _merge(out, name, args)
    return out


def _is_tool(obj: Any) -> bool:
    from langchain_core.tools import BaseTool

    return isinstance(obj, BaseTool)


def mark(located: Iterable[tuple[Any, str, dict, Any]]) -> None:
    """Give each step of the export that calls a tool with arguments the model wrote its
    `model_written` list (SPEC 2.2): the node's `tools` (the words' `calls` included) that
    `written_calls` names. `located` is the exporter's (graph, name, node, function) of every node."""
    for _g, _name, node, fn in located:
        node.pop("model_written", None)
        tools = node.get("tools") or []
        if node.get("kind") != "step" or not tools or fn is None or _code.is_library(fn):
            continue
        tree = _code.parse_function(fn)
        if tree is None:
            continue
        try:
            names = written_calls(fn, tree)
        except Exception:  # noqa: BLE001 - reading someone's code: never crash the export, never
            names = dict.fromkeys(tools)  # silence: sound before smart, every tool is the model's
        hit = [t if names[t] is None else {"tool": t, "args": sorted(names[t])} for t in tools if t in names]
        if hit:
            node["model_written"] = hit
