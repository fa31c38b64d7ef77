"""Which local names of a function's code hold what the model wrote (SPEC 6 QG017/QG018): the
reading `_written.py` (a step's tool calls) and `_code_runs.py` (code run by exec or a shell) share.
A name holds the model's text when it is assigned, however many assignments deep, from the messages
or a message's parts (see `_written`'s doc for the list)."""

from __future__ import annotations

import ast
import inspect
from typing import Any, Iterable

from .. import _code

#: Attributes of a message (or a tool call) whose value the model wrote.
MESSAGE_PARTS = frozenset({"tool_calls", "invalid_tool_calls", "content", "text", "additional_kwargs", "messages"})
#: Keys of the state or of a message dict whose value the model wrote.
MESSAGE_KEYS = frozenset({"messages", "tool_calls"})


def _is_source(node: ast.AST) -> bool:
    """Does this one AST node read the messages or a message's parts (see the module's doc)?"""
    if isinstance(node, ast.Attribute):
        return node.attr in MESSAGE_PARTS
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in MESSAGE_KEYS
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant)):
        return node.args[0].value in MESSAGE_KEYS
    return False


def _names(target: ast.AST) -> Iterable[str]:
    """The local names an assignment target binds (`x`, `a, b`, `*rest`)."""
    for n in ast.walk(target):
        if isinstance(n, ast.Name):
            yield n.id


class _Flow:
    """The local names of one function's code that hold what the model wrote."""

    def __init__(self, tree: ast.AST, seeds: Iterable[str] = ()) -> None:
        self.tree = tree
        self.held: set[str] = set(seeds)
        pairs: list[tuple[ast.AST, ast.AST]] = []  # (target, value)
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign):
                pairs += [(t, n.value) for t in n.targets]
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and n.value is not None:
                pairs.append((n.target, n.value))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                pairs.append((n.target, n.iter))
            elif isinstance(n, ast.NamedExpr):
                pairs.append((n.target, n.value))
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                pairs += [(i.optional_vars, i.context_expr) for i in n.items if i.optional_vars is not None]
        changed = True
        while changed:
            changed = False
            for target, value in pairs:
                if self.written(value):
                    new = set(_names(target)) - self.held
                    if new:
                        self.held |= new
                        changed = True

    def written(self, expr: ast.AST | None) -> bool:
        """Does `expr` carry what the model wrote?"""
        if expr is None:
            return False
        return any(_is_source(n) or (isinstance(n, ast.Name) and n.id in self.held) for n in ast.walk(expr))


def _args(call: ast.Call) -> list[tuple[int | str | None, ast.AST]]:
    """A call's arguments: (position, or keyword, or None for `*`/`**` spreads; the expression)."""
    out: list[tuple[int | str | None, ast.AST]] = []
    for k, a in enumerate(call.args):
        out.append((None if isinstance(a, ast.Starred) else k, a))
    out += [(kw.arg, kw.value) for kw in call.keywords]
    return out


def _receiving(helper: Any, passed: list[tuple[int | str | None, ast.AST]]) -> list[str]:
    """The parameters of `helper` that receive the arguments `passed` (every one, for a spread)."""
    try:
        params = list(inspect.signature(_code.unwrap_decorated(helper)).parameters)
    except (TypeError, ValueError):
        return []
    out: list[str] = []
    for k, _a in passed:
        if k is None:
            return params
        if isinstance(k, int):
            if k < len(params):
                out.append(params[k])
        elif k in params:
            out.append(k)
        else:
            out += [p for p, v in inspect.signature(_code.unwrap_decorated(helper)).parameters.items()
                    if v.kind is inspect.Parameter.VAR_KEYWORD]
    return out
