"""Whether a node's function can end without routing (issue 28): LangGraph halts a branch at a
node with no outgoing edge unless the node returns a `Command` with a `goto`, so the exporter
gives such a node an implicit edge to `__end__` - except where every way out of its function is
a `Command(goto=...)` naming where to go, read from its source. Anything not plainly so (a bare
`return`, a fall-through end, a computed or empty `goto`, an unreadable source) keeps the edge."""

import ast
from typing import Any

from .. import _code


def always_routes(fn: Any) -> bool:
    """True when every return of `fn` is `Command(goto=<a destination>)` and it cannot fall off
    its end (so the branch never halts there)."""
    if fn is None:
        return False
    tree = _code.parse_function(fn)
    if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    returns = list(_own_returns(tree.body))
    return bool(returns) and all(_routes(r.value) for r in returns) and _ends(tree.body)


def _own_returns(body: list[ast.stmt]):
    """The `return` statements of this function, not of functions or classes nested in it."""
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Return):
            yield n
        stack.extend(ast.iter_child_nodes(n))


def _ends(body: list[ast.stmt]) -> bool:
    """True when control cannot run past the end of `body` (its last statement returns or raises
    on every branch)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _ends(last.body)
    if isinstance(last, ast.Try):
        main = _ends(last.orelse) if last.orelse else _ends(last.body)
        return main and all(_ends(h.body) for h in last.handlers)
    return False


def _routes(value: ast.expr | None) -> bool:
    """`Command(..., goto=<a destination>, ...)`."""
    if not (isinstance(value, ast.Call) and _named(value.func, "Command")):
        return False
    goto = next((k.value for k in value.keywords if k.arg == "goto"), None)
    return goto is not None and _destination(goto)


def _destination(e: ast.expr) -> bool:
    """A goto that names somewhere to go: a non-empty string, `END`, a `Send(...)`, a non-empty
    list of those, or a conditional whose both arms are."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, str) and e.value != ""
    if isinstance(e, (ast.Name, ast.Attribute)):
        return _named(e, "END")
    if isinstance(e, ast.Call):
        return _named(e.func, "Send")
    if isinstance(e, (ast.List, ast.Tuple)):
        return bool(e.elts) and all(_destination(x) for x in e.elts)
    if isinstance(e, ast.IfExp):
        return _destination(e.body) and _destination(e.orelse)
    return False


def _named(e: ast.expr, name: str) -> bool:
    return (isinstance(e, ast.Name) and e.id == name) or (isinstance(e, ast.Attribute) and e.attr == name)
