"""Recognising a node that reviews each tool call itself (SPEC 12.2, the Agent Inbox pattern):

    for tool_call in state["messages"][-1].tool_calls:
        if tool_call["name"] not in hitl_tools:          # optional: tools it runs unreviewed
            observation = tools_by_name[tool_call["name"]].invoke(tool_call["args"])
            ...
            continue
        response = interrupt([request])[0]               # the person sees the call
        if response["type"] == "accept":
            observation = tool.invoke(tool_call["args"])
        elif response["type"] == "edit":
            observation = tool.invoke(response["args"]["args"])
        elif response["type"] == "ignore":
            ...                                          # nothing runs

Read from the node function's AST. The shape holds when the function has one `for` loop over
the model's `tool_calls`; in it, an `interrupt(...)` statement at the loop's own level (its
answer assigned to a name); before it, only a skip branch (`if <call's name> [not] in <tools>:
...; continue`, whose tools are run unreviewed); after it, every tool invocation (`.invoke`,
`.ainvoke`, `.run`, `.arun`) inside an `if`/`elif` branch whose test compares the answer (or a
name read from it) with an accepting word (`accept`, `approve`, `edit`, `continue`, `update`,
`yes`); and no tool invocation anywhere else in the function. The reviewed tools are the node's
tools, less those the skip branch runs unreviewed. Anything else is not recognised: the node's
`interrupt()` is then `inside` (it confirms nothing), and a warning says so.
"""

from __future__ import annotations

import ast
from typing import Any

from .. import _code

ACCEPTING = frozenset({"accept", "approve", "approved", "edit", "continue", "update", "yes"})
INVOKES = frozenset({"invoke", "ainvoke", "run", "arun"})


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_tool_calls(expr: ast.AST) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Attribute) and n.attr == "tool_calls":
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and n.slice.value == "tool_calls":
            return True
    return False


def _invokes(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in INVOKES]


def _accepting(test: ast.AST, answer: set[str]) -> bool:
    """Does `test` hold only when the answer accepts or edits the call?"""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return all(_accepting(v, answer) for v in test.values)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_accepting(v, answer) for v in test.values)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    left, right, op = test.left, test.comparators[0], test.ops[0]
    sides = [(left, right), (right, left)]
    for mine, other in sides:
        if not (_names_in(mine) & answer):
            continue
        if isinstance(op, ast.Eq) and isinstance(other, ast.Constant) and isinstance(other.value, str):
            return other.value.lower() in ACCEPTING
        if isinstance(op, ast.In) and mine is left and isinstance(other, (ast.Tuple, ast.List, ast.Set)):
            vals = [e.value for e in other.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return bool(vals) and len(vals) == len(other.elts) and all(v.lower() in ACCEPTING for v in vals)
    return False


def _guarded_invokes(stmts: list[ast.stmt], answer: set[str], inside: bool) -> bool:
    """Is every invocation in `stmts` under an accepting branch? `inside`: already under one."""
    for st in stmts:
        if isinstance(st, ast.If):
            ok_here = inside or _accepting(st.test, answer)
            if _invokes(st.test):
                return False
            if not _guarded_invokes(st.body, answer, ok_here):
                return False
            if not _guarded_invokes(st.orelse, answer, inside):
                return False
            continue
        if isinstance(st, ast.Assign) and not inside and _names_in(st.value) & answer and not _invokes(st.value):
            for t in st.targets:
                answer |= _names_in(t)
            continue
        if _invokes(st) and not inside:
            return False
    return True


def _skip_set(fn: Any, st: ast.If, var: str | None) -> tuple[str, list[str]] | None:
    """For a skip branch `if <name of the call> [not] in S: ...; continue`: ("not in"|"in", S's names)."""
    t = st.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.In, ast.NotIn))):
        return None
    left = t.left
    reads_name = (isinstance(left, ast.Subscript) and isinstance(left.slice, ast.Constant) and left.slice.value == "name") \
        or (isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr == "get"
            and left.args and isinstance(left.args[0], ast.Constant) and left.args[0].value == "name") \
        or (isinstance(left, ast.Attribute) and left.attr == "name")
    if not reads_name or (var is not None and var not in _names_in(left)):
        return None
    right = t.comparators[0]
    names = _strings(fn, right)
    if names is None:
        return None
    return ("not in" if isinstance(t.ops[0], ast.NotIn) else "in"), names


def _strings(fn: Any, expr: ast.AST) -> list[str] | None:
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for e in expr.elts:
            if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
                return None
            out.append(e.value)
        return out
    val = _code.resolve_name(fn, expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    if isinstance(val, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in val):
        return list(val)
    if isinstance(val, dict) and all(isinstance(v, str) for v in val):
        return list(val)
    return None


def _local_strings(body: list[ast.stmt], fn: Any) -> dict[str, list[str]]:
    """Names the function assigns a constant list of strings to (`hitl_tools = [...]`)."""
    out: dict[str, list[str]] = {}
    for n in body:
        for st in ast.walk(n):
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                vals = _strings(fn, st.value) if isinstance(st.value, (ast.List, ast.Tuple, ast.Set)) else None
                if vals is not None:
                    out[st.targets[0].id] = vals
    return out


def review_shape(fn: Any, tools: list[str]) -> tuple[list[str] | None, str | None]:
    """(the tools whose every call the node reviews, or None; why the shape is not recognised)."""
    from langgraph.types import interrupt

    tree = _code.parse_function(fn)
    if tree is None or not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None, "its source cannot be read"
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor)) and _is_tool_calls(n.iter)]
    if len(loops) != 1:
        return None, ("it has no loop over the model's tool_calls" if not loops
                      else "it has several loops over the model's tool_calls")
    loop = loops[0]
    loop_nodes = {id(n) for n in ast.walk(loop)}
    if any(id(c) not in loop_nodes for c in _invokes(tree)):
        return None, "it runs a tool outside its review loop"
    var = loop.target.id if isinstance(loop.target, ast.Name) else None
    calls = {id(c) for c, _ in _code.calls_to(fn, loop, interrupt, "interrupt")}
    k = next((i for i, st in enumerate(loop.body) if any(id(n) in calls for n in ast.walk(st))), None)
    if k is None:
        return None, "its loop over the tool calls does not call interrupt()"
    ask = loop.body[k]
    if not (isinstance(ask, ast.Assign) and len(ask.targets) == 1 and isinstance(ask.targets[0], ast.Name)):
        return None, "the interrupt() in its loop is not `answer = interrupt(...)` at the loop's own level"
    answer = {ask.targets[0].id}
    unreviewed: set[str] | None = set()
    local = _local_strings(tree.body, fn)
    for st in loop.body[:k]:
        if isinstance(st, ast.If) and st.body and isinstance(st.body[-1], ast.Continue) and not st.orelse:
            skip = _skip_set(fn, st, var)
            if skip is None and isinstance(st.test, ast.Compare) and isinstance(st.test.comparators[0], ast.Name):
                name = st.test.comparators[0].id
                if name in local:
                    skip = ("not in" if isinstance(st.test.ops[0], ast.NotIn) else "in", local[name])
            if skip is None:
                if _invokes(st):
                    return None, "it runs tools before the review under a condition the exporter cannot read"
                continue
            how, names = skip
            skipped = [t for t in tools if (t not in names if how == "not in" else t in names)]
            unreviewed = (unreviewed or set()) | set(skipped)
            continue
        if _invokes(st):
            return None, "it runs a tool before asking the person"
    if not _guarded_invokes(loop.body[k + 1:], answer, False):
        return None, "a tool runs after the interrupt() without the answer accepting or editing the call"
    reviewed = [t for t in tools if t not in (unreviewed or set())]
    return reviewed, None
