"""Reading a node's Python code: what it references, where it is, what it calls.

Everything here is best effort and errs on the side the verifier needs: a call it cannot
resolve is reported as unknown (the caller writes `null`), never as a guessed destination.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
import typing
from typing import Any, Callable, Iterator

# Modules whose functions are not followed when looking for what a node's code references:
# the framework's own plumbing would lead everywhere.
_SKIP_MODULES = (
    "builtins",
    "typing",
    "pydantic",
    "langsmith",
    "langchain_core",
    "langgraph._internal",
    "langgraph.pregel",
    "langgraph.types",
    "langgraph.graph",
    "langgraph.channels",
    "langgraph.checkpoint",
    "asyncio",
    "functools",
    "json",
)


def unwrap_callable(obj: Any) -> Callable | None:
    """The plain Python function behind a node's runnable or callable, or None.

    Reads `RunnableCallable.func`/`.afunc` (langgraph._internal._runnable, private API in
    langgraph 1.x), `RunnableLambda.func`/`.afunc`, bound methods, and functools.partial.
    """
    seen = 0
    while obj is not None and seen < 8:
        seen += 1
        if isinstance(obj, functools.partial):
            obj = obj.func
            continue
        if inspect.ismethod(obj):
            return obj  # keep the bound method: its __self__ matters (middleware)
        if inspect.isfunction(obj):
            return obj
        func = getattr(obj, "func", None) or getattr(obj, "afunc", None)
        if func is not None and func is not obj:
            obj = func
            continue
        return None
    return None


def plain_function(fn: Any) -> Any:
    """A bound method's function, else the object itself."""
    return getattr(fn, "__func__", fn)


def qualname(obj: Any) -> str:
    """module.qualname of a function or class (for provenance)."""
    target = obj if (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj)) else type(obj)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', getattr(target, '__name__', '?'))}"


def location(fn: Any) -> dict | None:
    """`{"file", "line"}` of the function's `def` line, the file relative to the working
    directory when it lies under it; None when Python cannot tell (builtins, C code)."""
    fn = plain_function(fn)
    try:
        file = inspect.getsourcefile(fn)
        _, line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    if not file:
        return None
    rel = os.path.relpath(file)
    if not rel.startswith(".."):
        file = rel
    return {"file": file.replace(os.sep, "/"), "line": max(int(line), 1)}


def is_library(fn: Any) -> bool:
    mod = getattr(plain_function(fn), "__module__", "") or ""
    return any(mod == m or mod.startswith(m + ".") for m in _SKIP_MODULES)


def _code_names(code) -> set[str]:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def referenced_objects(fn: Any, depth: int = 4) -> Iterator[tuple[str, Any]]:
    """(name, object) for every object `fn`'s code can reach by name: closure cells, the
    globals its code (and nested code) names, a bound method's `self` and the attributes
    its code names on it, partial arguments; functions reached this way are followed up
    to `depth` (skipping framework modules). Containers (list, tuple, dict values) are
    opened one level."""
    seen: set[int] = set()

    def emit(name: str, obj: Any, d: int) -> Iterator[tuple[str, Any]]:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        yield name, obj
        if isinstance(obj, (list, tuple, set, frozenset)):
            for item in list(obj)[:64]:
                yield from emit(name, item, d)
        elif isinstance(obj, dict):
            for item in list(obj.values())[:64]:
                yield from emit(name, item, d)
        elif isinstance(obj, functools.partial):
            yield from emit(name, obj.func, d)
            for a in obj.args:
                yield from emit(name, a, d)
            for a in obj.keywords.values():
                yield from emit(name, a, d)
        elif (inspect.isfunction(obj) or inspect.ismethod(obj)) and d > 0 and not is_library(obj):
            yield from walk(obj, d - 1)

    def walk(f: Any, d: int) -> Iterator[tuple[str, Any]]:
        self_obj = getattr(f, "__self__", None)
        f = plain_function(f)
        code = getattr(f, "__code__", None)
        if code is None:
            return
        names = _code_names(code)
        if f.__closure__:
            for var, cell in zip(code.co_freevars, f.__closure__):
                try:
                    val = cell.cell_contents
                except ValueError:
                    continue
                yield from emit(var, val, d)
        g = getattr(f, "__globals__", {})
        for n in names:
            if n in g:
                yield from emit(n, g[n], d)
        if self_obj is not None:
            yield from emit("self", self_obj, d)
            for n in names:
                if hasattr(type(self_obj), n) and isinstance(getattr(type(self_obj), n), property):
                    continue
                val = getattr(self_obj, "__dict__", {}).get(n)
                if val is not None:
                    yield from emit(n, val, d)

    yield from walk(fn, depth)


def parse_function(fn: Any) -> ast.AST | None:
    """The AST of the function's source (`inspect.getsource`), or None if unreadable."""
    fn = plain_function(fn)
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(src)
    except SyntaxError:
        # a lambda in the middle of an expression: try the lambda alone
        try:
            tree = ast.parse("(" + src.strip().rstrip(",)") + ")")
        except SyntaxError:
            return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return node
    return tree


def resolve_name(fn: Any, expr: ast.AST) -> Any:
    """The object an expression `name` or `mod.attr` denotes in fn's closure or globals, or
    a sentinel `_UNRESOLVED`."""
    f = plain_function(fn)
    if isinstance(expr, ast.Name):
        code = getattr(f, "__code__", None)
        if code is not None and f.__closure__ and expr.id in code.co_freevars:
            try:
                return f.__closure__[code.co_freevars.index(expr.id)].cell_contents
            except ValueError:
                return _UNRESOLVED
        g = getattr(f, "__globals__", {})
        if expr.id in g:
            return g[expr.id]
        import builtins

        return getattr(builtins, expr.id, _UNRESOLVED)
    if isinstance(expr, ast.Attribute):
        base = resolve_name(fn, expr.value)
        if base is _UNRESOLVED:
            return _UNRESOLVED
        return getattr(base, expr.attr, _UNRESOLVED)
    return _UNRESOLVED


class _Unresolved:
    def __repr__(self) -> str:
        return "<unresolved>"


_UNRESOLVED = _Unresolved()


def _callee_is(fn: Any, call: ast.Call, target: Any, name: str) -> bool | None:
    """True if the call's callee is `target`; None if it cannot be resolved but is spelled
    `name`; False otherwise."""
    obj = resolve_name(fn, call.func)
    if obj is target:
        return True
    if obj is _UNRESOLVED:
        spelled = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
        return None if spelled == name else False
    return False


def calls_to(fn: Any, tree: ast.AST, target: Any, name: str) -> list[tuple[ast.Call, bool]]:
    """Calls of `target` in the tree: (call node, resolved) — resolved False when the callee
    is only spelled `name` and could not be resolved."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            r = _callee_is(fn, node, target, name)
            if r is None:
                out.append((node, False))
            elif r:
                out.append((node, True))
    return out


def constant_strings(fn: Any, expr: ast.AST | None) -> list[str] | None:
    """The node names an expression denotes when it is a string constant, a name bound to a
    string, `END`/`START`, or a list/tuple of those; None when it is anything else."""
    if expr is None:
        return None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, (ast.List, ast.Tuple)):
        out: list[str] = []
        for e in expr.elts:
            sub = constant_strings(fn, e)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(expr, (ast.Name, ast.Attribute)):
        val = resolve_name(fn, expr)
        if isinstance(val, str):
            # a module-level or closure constant; a local variable would not resolve here
            return [val]
    return None


def top_level_call(func_tree: ast.AST, call: ast.Call) -> bool:
    """True when `call` sits in a statement of the function body itself (not under an
    if/for/while/try/with/match or a nested function): it runs whenever the function does,
    unless an earlier statement returns."""
    body = getattr(func_tree, "body", None)
    if not isinstance(body, list):
        return False
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With,
                             ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any(n is call for n in ast.walk(stmt)):
                return False
            if any(isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(stmt)):
                # an earlier statement may leave before the call
                return False
            continue
        if hasattr(ast, "Match") and isinstance(stmt, ast.Match):
            if any(n is call for n in ast.walk(stmt)):
                return False
            continue
        if any(n is call for n in ast.walk(stmt)):
            return True
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return False
    return False


def literal_return(fn: Any) -> tuple[str, list[str] | None] | None:
    """Reads fn's return annotation. ("literal", [values]) for `Literal[...]` (also inside
    Optional/Union/list), ("command", [values]) for `Command[Literal[...]]`, ("command", None)
    for a bare `Command`, None when the annotation says neither (or cannot be evaluated:
    `typing.get_type_hints` raising, as with function-local types under
    `from __future__ import annotations`)."""
    from langgraph.types import Command

    f = plain_function(fn)
    try:
        hints = typing.get_type_hints(f)
    except Exception:  # noqa: BLE001 - any failure means: not readable
        return None
    ret = hints.get("return")
    if ret is None:
        return None

    def literals(tp: Any) -> list[str] | None:
        origin = typing.get_origin(tp)
        if origin is typing.Literal:
            return [v for v in typing.get_args(tp) if isinstance(v, str)]
        if origin is not None and origin is not Command:
            vals: list[str] = []
            found = False
            for a in typing.get_args(tp):
                sub = literals(a)
                if sub is not None:
                    vals += sub
                    found = True
            return vals if found else None
        return None

    def has_command(tp: Any) -> tuple[bool, list[str] | None]:
        if tp is Command:
            return True, None
        origin = typing.get_origin(tp)
        if origin is Command:
            args = typing.get_args(tp)
            return True, (literals(args[0]) if args else None)
        if origin is not None:
            for a in typing.get_args(tp):
                ok, vals = has_command(a)
                if ok:
                    return ok, vals
        return False, None

    is_cmd, vals = has_command(ret)
    if is_cmd:
        return "command", vals
    lit = literals(ret)
    if lit is not None:
        return "literal", lit
    return None
