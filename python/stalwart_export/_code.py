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

from ._files import is_user_file

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


def attr(obj: Any, name: str, default: Any = None) -> Any:
    """`getattr(obj, name, default)` that never raises: a wrapper's `__getattr__` may run code
    (`RunnableWithFallbacks` delegates to its runnable and evaluates type hints there, which can
    raise `NameError`), and reading what a node is must never fail on it."""
    try:
        return getattr(obj, name, default)
    except Exception:  # noqa: BLE001 - any failure is "not there"
        return default


#: Runnable wrappers seen through to what they wrap (langchain-core 1.x): the attribute holding
#: the wrapped runnable. `RunnableRetry` (`.with_retry()`), `RunnableBinding` (`.bind()`,
#: `.with_config()`, `.with_listeners()`) and its subclasses keep it in `bound`;
#: `RunnableWithFallbacks` (`.with_fallbacks()`) in `runnable` (its `fallbacks` run only when
#: that one raises).
WRAPPER_FIELDS = (("RunnableWithFallbacks", "runnable"), ("RunnableBindingBase", "bound"))


def unwrap_runnable(obj: Any) -> tuple[Any, list[str], list[Any]]:
    """What a node's runnable is under its wrappers: `(inner, wrappers, fallbacks)`.

    `inner` is the runnable the wrappers run (a `ToolNode`, a `RunnableCallable`, a chat model,
    ...); `wrappers` names each wrapper met, outermost first (`RunnableWithFallbacks`,
    `RunnableRetry`, `RunnableBinding`); `fallbacks` are the runnables a `with_fallbacks` runs
    when the inner one raises (the caller reads them as code of the same node). Reads fields
    with `attr`, never through a wrapper's `__getattr__`."""
    wrappers: list[str] = []
    fallbacks: list[Any] = []
    for _ in range(16):
        mro = [c.__name__ for c in type(obj).__mro__]
        field = next((f for cls, f in WRAPPER_FIELDS if cls in mro), None)
        if field is None:
            break
        inner = (vars(obj) if hasattr(obj, "__dict__") else {}).get(field) or attr(obj, field)
        if inner is None or inner is obj:
            break
        wrappers.append(type(obj).__name__)
        if field == "runnable":
            fallbacks += list(attr(obj, "fallbacks", None) or [])
        obj = inner
    return obj, wrappers, fallbacks


def user_callable(obj: Any) -> Callable | None:
    """The function an object runs when it is called, if the object is an instance of a class
    of the user's own with a `__call__` (the customer-support tutorial's `Assistant(runnable)`):
    the bound `__call__`, whose `__self__` holds what the instance was built with. None for
    functions, classes, runnables and library objects."""
    if inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, type) or not callable(obj):
        return None
    call = attr(type(obj), "__call__")
    if call is None or not inspect.isfunction(call):
        return None
    mod = getattr(type(obj), "__module__", "") or ""
    if any(mod == m or mod.startswith(m + ".") for m in _SKIP_MODULES + ("langchain", "langgraph")):
        return None
    return attr(obj, "__call__")


def unwrap_decorated(fn: Any) -> Any:
    """A decorated function's own function: `__wrapped__` followed (`functools.wraps`, langsmith's
    `@traceable`), so its location and its code are the user's, not the decorator's."""
    if inspect.ismethod(fn):
        inner = unwrap_decorated(fn.__func__)
        return fn if inner is fn.__func__ else inner.__get__(fn.__self__)
    try:
        return inspect.unwrap(fn)
    except ValueError:  # a __wrapped__ cycle
        return fn


def unwrap_callable(obj: Any) -> Callable | None:
    """The plain Python function behind a node's runnable or callable, or None.

    Reads runnable wrappers (`unwrap_runnable`), `RunnableCallable.func`/`.afunc`
    (langgraph._internal._runnable, private API in langgraph 1.x), `RunnableLambda.func`/`.afunc`,
    bound methods, functools.partial, an instance of the user's class with `__call__`
    (`user_callable`), and decorators (`unwrap_decorated`).
    """
    seen = 0
    while obj is not None and seen < 8:
        seen += 1
        obj = unwrap_runnable(obj)[0]
        if isinstance(obj, functools.partial):
            obj = obj.func
            continue
        if inspect.ismethod(obj):
            return unwrap_decorated(obj)  # keep the bound method: its __self__ matters (middleware)
        if inspect.isfunction(obj):
            return unwrap_decorated(obj)
        call = user_callable(obj)
        if call is not None:
            return unwrap_decorated(call)
        func = attr(obj, "func") or attr(obj, "afunc")
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


def location(fn: Any, base: str | None = None) -> dict | None:
    """`{"file", "line"}` of the function's `def` line (for the bound `__call__` of an instance
    of the user's class, the `class` line: the node is the instance), or None when Python cannot
    tell (builtins, C code). The file is relative to `base` (the folder the export is written to;
    default the working directory) when it lies under the repository holding it (see
    `rel_file`), else absolute."""
    target = unwrap_decorated(fn)
    self_obj = getattr(target, "__self__", None)
    if inspect.ismethod(target) and target.__func__.__name__ == "__call__" and user_callable(self_obj) is not None:
        target = type(self_obj)
    else:
        target = plain_function(target)
    try:
        file = inspect.getsourcefile(target)
        lines, line = inspect.getsourcelines(target)
    except (OSError, TypeError):
        return None
    if not file:
        return None
    # getsourcelines starts at the first decorator: point at the `def` (or `class`) itself
    for k, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ", "class ")):
            line += k
            break
    return {"file": rel_file(file, base), "line": max(int(line), 1)}


def rel_file(file: str, base: str | None = None) -> str:
    """`file` as an export's `location.file` (SPEC 12.4): relative to `base` (the export's folder;
    default the working directory), with forward slashes; it may climb out with `../`, as
    `../app/agent.py` from `build/graph.json`. Absolute only when no relative path exists (another
    drive)."""
    base = os.path.abspath(base or os.getcwd())
    try:
        return os.path.relpath(os.path.abspath(file), base).replace(os.sep, "/")
    except ValueError:  # another drive
        return os.path.abspath(file).replace(os.sep, "/")


def is_library(fn: Any) -> bool:
    mod = getattr(plain_function(fn), "__module__", "") or ""
    return any(mod == m or mod.startswith(m + ".") for m in _SKIP_MODULES)


def _code_names(code) -> list[str]:
    """The global, attribute and free-variable names of `code` and its nested code, each once, in
    the order the code gives them (first seen): what `referenced_objects` follows, so its order,
    and the order of what the export lists, does not depend on string hashing (PYTHONHASHSEED)."""
    names = dict.fromkeys(code.co_names + code.co_freevars)
    for const in code.co_consts:
        if inspect.iscode(const):
            names.update(dict.fromkeys(_code_names(const)))
    return list(names)


def _code_strings(code) -> set[str]:
    """The string constants of `code` and its nested code that could name an attribute
    (`getattr(tools, "read_web")`)."""
    out = {c for c in code.co_consts if isinstance(c, str) and c.isidentifier()}
    for const in code.co_consts:
        if inspect.iscode(const):
            out |= _code_strings(const)
    return out


def _is_app_container(obj: Any) -> bool:
    """A module of the application, or an instance of one of its classes (not a function, class,
    container or the framework's objects): what `referenced_objects` opens by attribute name."""
    if inspect.ismodule(obj):
        return is_user_file(getattr(obj, "__file__", None)) and not obj.__name__.startswith(
            "stalwart_export")
    if inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, (list, tuple, dict, set, str, bytes)):
        return False
    cls = type(obj)
    if cls.__module__.split(".")[0] in ("langgraph", "langchain", "langchain_core", "stalwart_export", "builtins"):
        return False
    try:
        file = inspect.getsourcefile(cls)
    except TypeError:
        return False
    return is_user_file(file)


def referenced_objects(fn: Any, depth: int = 4, closed: frozenset[int] = frozenset()) -> Iterator[tuple[str, Any]]:
    """(name, object) for every object `fn`'s code can reach by name: closure cells, the
    globals its code (and nested code) names, a bound method's `self` and the attributes
    its code names on it, partial arguments, a bound method's object, a function's default
    arguments; functions reached this way are followed up
    to `depth` (skipping framework modules). Containers (list, tuple, dict values) are
    opened one level, except those whose `id` is in `closed` (yielded, not opened)."""
    seen: set[int] = set()

    def emit(name: str, obj: Any, d: int) -> Iterator[tuple[str, Any]]:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        yield name, obj
        if id(obj) in closed:
            return
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
        else:
            # issue 28 item 2: a bound method stands for its object (`send = send_email.invoke`:
            # the tool), as a builtin method does (`pick = REGISTRY.get`: the dict)
            owner = getattr(obj, "__self__", None)
            if ((inspect.ismethod(obj) or inspect.isbuiltin(obj)) and owner is not None
                    and not inspect.ismodule(owner) and not inspect.isclass(owner)):
                yield from emit(name, owner, d)
            if (inspect.isfunction(obj) or inspect.ismethod(obj)) and d > 0 and not is_library(obj):
                yield from walk(obj, d - 1)

    def members(name: str, obj: Any, attrs: set[str], d: int, depth: int) -> Iterator[tuple[str, Any]]:
        # Issue 28: the attributes the code names (`tools.read_web`, `getattr(tools, "x")`, a
        # chain `tools.BOX.publisher`) on the application's own modules and objects.
        if depth <= 0 or not _is_app_container(obj):
            return
        space = vars(obj) if inspect.ismodule(obj) else getattr(obj, "__dict__", {})
        for a in sorted(attrs):
            if a in space:
                val = space[a]
                yield from emit(f"{name}.{a}", val, d)
                yield from members(f"{name}.{a}", val, attrs, d, depth - 1)

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
        # a default argument is reached too (`def step(state, sender=send_email.invoke)`)
        for val in tuple(f.__defaults__ or ()) + tuple((f.__kwdefaults__ or {}).values()):
            if val is not None:
                yield from emit("<default>", val, d)
        g = getattr(f, "__globals__", {})
        attrs = set(names) | _code_strings(code)
        for n in names:
            if n in g:
                yield from emit(n, g[n], d)
                yield from members(n, g[n], attrs, d, 4)
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
            lam = _lambda_alone(fn, src)
            if lam is None:
                return None
            return lam
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return node
    return tree


def _lambda_alone(fn: Any, src: str) -> ast.Lambda | None:
    """The lambda `fn` is, cut out of the lines that hold it (`| (lambda m: {...}))` in a chain):
    from a `lambda` keyword to the longest end that parses, its parameters `fn`'s own."""
    code = getattr(fn, "__code__", None)
    if getattr(fn, "__name__", None) != "<lambda>" or code is None:
        return None
    params = list(code.co_varnames[:code.co_argcount])
    text = " ".join(src.split("\n"))
    start = text.find("lambda")
    while start >= 0:
        for end in range(len(text), start, -1):
            try:
                expr = ast.parse(text[start:end].strip(), mode="eval").body
            except SyntaxError:
                continue
            if isinstance(expr, ast.Lambda) and [a.arg for a in expr.args.args] == params:
                return expr
            break
        start = text.find("lambda", start + 1)
    return None


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


#: Modules whose functions have no effect a rerun would repeat (formatting, parsing, logging).
_PURE_MODULES = ("builtins", "json", "re", "string", "textwrap", "math", "datetime", "logging", "typing", "uuid",
                 "pprint", "html", "langgraph.config")
#: Builtins that run the code they are given (`_code_runs.py` reads each call as code run in the node).
CODE_BUILTINS = frozenset(("exec", "eval", "compile"))
#: Builtins that act (open a file, run code, change an object, read a terminal).
_ACTING_BUILTINS = CODE_BUILTINS | frozenset(("open", "setattr", "delattr", "__import__", "input", "breakpoint"))
#: Method names that only read or format the value they are called on (`text.strip()`).
_PURE_METHODS = frozenset((
    "strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "format", "join", "split", "rsplit",
    "splitlines", "replace", "startswith", "endswith", "encode", "decode", "get", "items", "keys", "values",
    "copy", "count", "index", "find", "isdigit", "isalpha", "casefold", "partition", "zfill", "model_dump",
    "dict", "debug", "info", "warning", "error", "exception",
))


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    out: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _ancestors(node: ast.AST, parents: dict[int, ast.AST]) -> list[ast.AST]:
    out = []
    while id(node) in parents:
        node = parents[id(node)]
        out.append(node)
    return out


def _exclusive(a: ast.AST, b: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Are `a` and `b` in different arms of one `if` (so one run reaches at most one of them)?"""
    up_a = _ancestors(a, parents)
    up_b = {id(n) for n in _ancestors(b, parents)}
    for anc in up_a:
        if id(anc) in up_b:
            if isinstance(anc, ast.If):
                def arm(x: ast.AST) -> str | None:
                    chain = [x] + _ancestors(x, parents)
                    for n in chain:
                        if any(n is s for s in anc.body):
                            return "body"
                        if any(n is s for s in anc.orelse):
                            return "orelse"
                    return None
                ea, eb = arm(a), arm(b)
                return ea is not None and eb is not None and ea != eb
            return False
    return False


def _local_imports(tree: ast.AST) -> dict[str, str]:
    """Names a function's own `import` statements bind: local name -> the module it comes from."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = node.module
    return out


def _is_pure_call(fn: Any, call: ast.Call, local: dict[str, str] | None = None) -> bool:
    """Is `call` one that has no effect to repeat: a builtin, a function of `_PURE_MODULES` (also
    one the function imports itself, `local`), a method in `_PURE_METHODS`? Anything else (a
    client's method, a function of the application, a call it cannot resolve) may act."""
    f = call.func
    head = f.value if isinstance(f, ast.Attribute) else f
    if local and isinstance(head, ast.Name) and head.id in local:
        mod = local[head.id]
        return any(mod == m or mod.startswith(m + ".") for m in _PURE_MODULES)
    obj = resolve_name(fn, call.func)
    if obj is not _UNRESOLVED:
        if getattr(obj, "__name__", None) in _ACTING_BUILTINS and getattr(obj, "__module__", None) == "builtins":
            return False
        mod = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
        if isinstance(obj, type):
            mod = obj.__module__
        owner = getattr(obj, "__self__", None)
        if owner is not None and not inspect.ismodule(owner):
            mod = getattr(type(owner), "__module__", mod) or mod
        return any(mod == m or mod.startswith(m + ".") for m in _PURE_MODULES)
    return isinstance(call.func, ast.Attribute) and call.func.attr in _PURE_METHODS


def effects_before(fn: Any, tree: ast.AST, target: ast.Call) -> list[ast.Call]:
    """The calls in `fn`'s code (`tree`, from `parse_function`) that may run before `target` in
    one run of the function and may have an effect (`_is_pure_call` says which have none): a call
    earlier in the code and not in the other arm of an `if`, a call in `target`'s own arguments,
    and any call sharing a loop with `target` (an earlier turn of the loop). Calls in nested
    functions and lambdas, in the decorators and defaults (they run at `def`), and calls `target`
    is an argument of, do not count. In the order they start in the code."""
    parents = _parents(tree)
    target_up = _ancestors(target, parents)
    loops = [n for n in target_up if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    local = _local_imports(tree)
    body = getattr(tree, "body", None)
    body = body if isinstance(body, list) else [body] if isinstance(body, ast.AST) else [tree]
    out = []
    for node in (n for stmt in body for n in ast.walk(stmt)):  # decorators and defaults run at `def`
        if not isinstance(node, ast.Call) or node is target:
            continue
        up = _ancestors(node, parents)
        if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not tree for n in up):
            continue
        if any(n is node for n in target_up):
            continue  # target is inside this call's arguments: this one runs after it
        inside_target = any(n is target for n in up)
        earlier = (node.lineno, node.col_offset) < (target.lineno, target.col_offset)
        same_loop = any(any(n is lp for n in up) for lp in loops)
        if not (inside_target or earlier or same_loop):
            continue
        if not inside_target and _exclusive(node, target, parents):
            continue
        if _is_pure_call(fn, node, local):
            continue
        out.append(node)
    # in the order they start in the code, the innermost first (`open(p)` before `open(p).close()`)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset, getattr(n, "end_lineno", 0) or 0,
                                      getattr(n, "end_col_offset", 0) or 0))


def source_line(fn: Any, node: ast.AST) -> tuple[str | None, int | None]:
    """The file and line of `node`, a node of `parse_function(fn)`'s tree, or (None, None)."""
    f = plain_function(fn)
    try:
        file = inspect.getsourcefile(f)
        _lines, start = inspect.getsourcelines(f)
    except (OSError, TypeError):
        return None, None
    return file, start + getattr(node, "lineno", 1) - 1


def partial_args(runnable: Any) -> dict[str, Any]:
    """The parameters a node's `functools.partial(f, ...)` binds, by name (LangGraph keeps the
    partial as its `RunnableCallable`'s `func` or `afunc`; the multi-agent tutorial's
    `functools.partial(agent_node, agent=research_agent, name="Researcher")`), or {}."""
    import functools
    import inspect

    part = attr(runnable, "func") or attr(runnable, "afunc")
    if not isinstance(part, functools.partial):
        return {}
    out = dict(part.keywords)
    try:
        names = list(inspect.signature(unwrap_callable(part) or part.func).parameters)
    except (TypeError, ValueError):
        return out
    out.update(zip(names, part.args))
    return out


def function_tool(obj: Any, name: str | None = None) -> Any:
    """A plain function of the application as a LangChain tool (`StructuredTool.from_function`:
    its name, its docstring as the description, its signature as the argument schema), so the
    catalogue, the words and `--init-words` read it as they read a `@tool`; its `func` is the
    function, so `@catalogue_words` on it is read. None when LangChain cannot read its signature."""
    import inspect

    from langchain_core.tools import StructuredTool

    nm = name or getattr(obj, "__name__", None)
    if not isinstance(nm, str) or nm == "<lambda>":
        return None
    is_async = inspect.iscoroutinefunction(obj)
    try:
        return StructuredTool.from_function(func=None if is_async else obj, coroutine=obj if is_async else None,
                                            name=nm, description=(obj.__doc__ or nm).strip())
    except Exception:  # noqa: BLE001 - a signature LangChain cannot read
        return None
