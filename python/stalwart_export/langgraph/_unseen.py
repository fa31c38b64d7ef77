"""What a step's code does that the plain reading misses (issue 28 item 1, SPEC 12.5): a chat model
made at run time, a hand-written tool node over plain functions, and tool calls the exporter cannot
resolve. Each is read when it can be, else it is an `opaque` entry on the node (`Unread`), never
silence.

* **A model made at run time** (`runtime_model`): `init_chat_model(...)` called in the node, or in
  an application helper it calls (`load_chat_model(name)`, followed `HELPER_DEPTH` deep by the
  objects its code names), or `.bind_tools(...)` / `.with_structured_output(...)` on something
  that is not a model object the exporter found. The tools it binds (`bind_tools([a, b])`,
  `bind_tools(TOOLS)`) are named when every one resolves to a tool or a function; else None.
* **A hand-written tool node over plain functions** (`plain_dispatch`): a call `f(**tc["args"])`
  (the memory-agent template's `upsert_memory(**tc["args"], ...)` for each tool call of the last
  message): `f` resolved to a function of the application is a tool of the node, named as
  `bind_tools` names a function (`f.__name__`); a callee it cannot resolve is unread.
* **Calls it cannot resolve** (`unread_calls`): `getattr(x, <not a literal>)`, and `.invoke()`
  (`ainvoke`, `run`, `batch`, `stream`, ...) on something that resolves to nothing: a name from
  the state or the configuration, a call's result. Each is unread: what it runs may be a tool.
  Code run by `exec`/`eval`/`compile` or a shell (`_code_runs`) is an opaque `code` entry. A tool
  reached through a bound-method alias, a `functools.partial` or a default argument is the step's
  (`reached`); any other callable so reached that is neither the application's readable code nor
  a known library's is unread. The application's helpers, and the methods of its own classes
  (`repl.run(code)`, `LocalREPL().run(code)`), are followed `HELPER_DEPTH` calls deep, the
  parameters receiving the model's text holding it there.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any

from .. import _code, _sources
from . import _code_runs, _flow

#: Methods that run a runnable (a tool, a model, a graph).
RUNS = frozenset({"invoke", "ainvoke", "run", "arun", "batch", "abatch", "stream", "astream"})
#: Methods that make a model's runnable (a model is there, though not found as an object).
MODEL_METHODS = frozenset({"bind_tools", "with_structured_output"})
#: How many helper calls deep `init_chat_model` is looked for.
HELPER_DEPTH = 3


@dataclass
class Unread:
    """An `opaque` entry to write: what (`tools`, `model`), why, and the AST node it is at."""

    what: str
    why: str
    at: ast.AST | None


@dataclass
class RuntimeModel:
    """A model made at run time: where, how (`via`), and the tools it binds (None: not all named)."""

    at: ast.AST
    via: str
    tools: list[str] | None
    unnamed: ast.AST | None = None


def is_configurable_model(obj: Any) -> bool:
    """Is `obj` the model `init_chat_model(configurable_fields=...)` (or with no model) makes, whose
    model is picked from the configuration at run time? (langchain's `_ConfigurableModel`, not a
    `BaseLanguageModel`.)"""
    cls = type(obj)
    return cls.__name__ == "_ConfigurableModel" and cls.__module__.startswith("langchain.")


def configurable_bound(obj: Any) -> list[str] | None:
    """The names of the tools a configurable model's queued `bind_tools(...)` binds, or None."""
    from langchain_core.tools import BaseTool

    out: list[str] = []
    for op in getattr(obj, "_queued_declarative_operations", None) or []:
        if isinstance(op, tuple) and op and op[0] == "bind_tools" and len(op) > 1 and op[1]:
            for t in op[1][0]:
                name = t.name if isinstance(t, BaseTool) else getattr(t, "__name__", None)
                if name is None and isinstance(t, dict):
                    name = (t.get("function") or {}).get("name") or t.get("name")
                if name is not None and name not in out:
                    out.append(name)
    return out or None


def _init_chat_model() -> Any:
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:  # pragma: no cover - langchain absent
        return None
    return init_chat_model


def _makes_model(obj: Any) -> bool:
    """Is `obj` init_chat_model, or an application function reaching it by name?"""
    icm = _init_chat_model()
    if icm is None or obj is _code._UNRESOLVED:
        return False
    if obj is icm:
        return True
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)) or _code.is_library(obj):
        return False
    try:
        return any(o is icm for _n, o in _code.referenced_objects(obj, depth=HELPER_DEPTH))
    except Exception:  # noqa: BLE001 - reading someone's objects: never crash the export
        return False


def _spelled(func: ast.AST) -> str | None:
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def runtime_model(fn: Any, tree: ast.AST) -> RuntimeModel | None:
    """The model `fn`'s code makes at run time, if any (see the module's doc)."""
    at: ast.AST | None = None
    via = ""
    binds: list[ast.Call] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in MODEL_METHODS:
            binds.append(node)
            if at is None:
                at, via = node, f".{node.func.attr}(...) on a model made at run time"
            continue
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        obj = _code.resolve_name(fn, node.func)
        if _makes_model(obj) or (obj is _code._UNRESOLVED and _spelled(node.func) == "init_chat_model"):
            name = _spelled(node.func) or "?"
            at = node
            via = "init_chat_model(...)" if name == "init_chat_model" else f"{name}(...), which calls init_chat_model"
    if at is None:
        return None
    tools: list[str] | None = []
    unnamed: ast.AST | None = None
    for b in binds:
        if b.func.attr != "bind_tools":  # type: ignore[union-attr]
            continue
        names = _bound_names(fn, tree, b.args[0]) if b.args else None
        if names is None:
            tools, unnamed = None, b
            break
        tools += [n for n in names if n not in tools]  # type: ignore[operator]
    return RuntimeModel(at, via, tools, unnamed)


def _tool_name(obj: Any) -> str | None:
    from langchain_core.tools import BaseTool

    if isinstance(obj, BaseTool):
        return obj.name
    if inspect.isfunction(obj):
        return obj.__name__
    return None


def _bound_names(fn: Any, tree: ast.AST, arg: ast.AST) -> list[str] | None:
    """The names of the tools `bind_tools(arg)` binds, or None when one cannot be resolved."""
    items: list[Any]
    if isinstance(arg, (ast.List, ast.Tuple)):
        items = [resolve(fn, tree, e) for e in arg.elts]
    else:
        obj = resolve(fn, tree, arg)
        if not isinstance(obj, (list, tuple)):
            return None
        items = list(obj)
    # a schema class (a pydantic `Route`/`Handoff`, a TypedDict) is a signal the model fills in and
    # a router reads: no code of it runs, so it is neither a tool bound nor one called (issue 28)
    names = [_tool_name(o) for o in items if not _signal_schema(o)]
    return None if any(n is None for n in names) else names  # type: ignore[return-value]


def _signal_schema(obj: Any) -> bool:
    """A class `bind_tools` turns into a tool schema with no code behind it: a pydantic model or
    a TypedDict class (a model's call of it runs nothing; the code that reads it routes)."""
    if not inspect.isclass(obj):
        return False
    import typing

    from pydantic import BaseModel

    return issubclass(obj, BaseModel) or typing.is_typeddict(obj)


def resolve(fn: Any, tree: ast.AST, expr: ast.AST, depth: int = 4) -> Any:
    """The object `expr` denotes, following the function's own assignments of a local name (an
    alias), attribute chains, `getattr(x, "literal")` and `x["literal"]`; `_code._UNRESOLVED`
    when it cannot tell."""
    bad = _code._UNRESOLVED
    if depth <= 0:
        return bad
    if isinstance(expr, ast.Name):
        values = [st.value for st in ast.walk(tree) if isinstance(st, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in st.targets)]
        if values:
            got = [resolve(fn, tree, v, depth - 1) for v in values]
            return got[0] if all(g is got[0] for g in got) else bad
        owner = getattr(fn, "__self__", None)
        first = next((f.args.args[0].arg for f in ast.walk(tree)
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.args.args), None)
        if owner is not None and expr.id == first:
            return owner  # `self` of a bound method (a node that is an object's method or __call__)
        if any(isinstance(a, ast.arg) and a.arg == expr.id for a in ast.walk(tree)):
            return bad  # a parameter: the state, the configuration
        imported = _local_import(fn, tree, expr.id)
        return imported if imported is not bad else _code.resolve_name(fn, expr)
    if isinstance(expr, ast.Attribute):
        base = resolve(fn, tree, expr.value, depth - 1)
        return bad if base is bad else getattr(base, expr.attr, bad)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        base = resolve(fn, tree, expr.value, depth - 1)
        try:
            return bad if base is bad else base[expr.slice.value]
        except Exception:  # noqa: BLE001
            return bad
    if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr"
            and len(expr.args) >= 2 and isinstance(expr.args[1], ast.Constant)
            and isinstance(expr.args[1].value, str)):
        base = resolve(fn, tree, expr.args[0], depth - 1)
        return bad if base is bad else getattr(base, expr.args[1].value, bad)
    return bad


def _local_import(fn: Any, tree: ast.AST, name: str) -> Any:
    """What `import m as name` / `from m import x as name` in the function binds `name` to, when
    that module is already imported (nothing is imported here)."""
    import importlib.util
    import sys

    package = (getattr(_code.plain_function(fn), "__module__", "") or "").rpartition(".")[0]
    for st in ast.walk(tree):
        if isinstance(st, ast.Import):
            for a in st.names:
                if (a.asname or a.name.split(".")[0]) == name:
                    return sys.modules.get(a.name if a.asname else a.name.split(".")[0], _code._UNRESOLVED)
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                if (a.asname or a.name) != name:
                    continue
                try:
                    mod_name = importlib.util.resolve_name("." * st.level + (st.module or ""), package or None)
                except (ImportError, ValueError):
                    return _code._UNRESOLVED
                mod = sys.modules.get(mod_name)
                if mod is None:
                    return _code._UNRESOLVED
                return getattr(mod, a.name, sys.modules.get(f"{mod_name}.{a.name}", _code._UNRESOLVED))
    return _code._UNRESOLVED


def _shown(expr: ast.AST) -> str:
    try:
        text = ast.unparse(expr)
    except Exception:  # noqa: BLE001
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."


def plain_dispatch(fn: Any, tree: ast.AST) -> tuple[list[Any], list[Unread]]:
    """(the application's functions the code calls with a tool call's arguments, `f(**tc["args"])`;
    the calls of that shape whose callee it cannot resolve)."""
    found: list[Any] = []
    unread: list[Unread] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        spread = [kw.value for kw in node.keywords if kw.arg is None]
        if not any(_call_args(tree, v) for v in spread):
            continue
        if isinstance(node.func, ast.Subscript):
            box = resolve(fn, tree, node.func.value)
            if isinstance(box, (dict, list, tuple)):
                # FUNCS[tc["name"]](**tc["args"]): any function of the registry
                items = box.values() if isinstance(box, dict) else box
                found += [f for f in items if inspect.isfunction(f) and not _code.is_library(f) and f not in found]
                continue
        obj = resolve(fn, tree, node.func)
        obj = _code.unwrap_decorated(obj) if inspect.isfunction(obj) else obj
        if inspect.isfunction(obj) and not _code.is_library(obj):
            if obj not in found:
                found.append(obj)
        elif _tool_name(obj) is None:
            unread.append(Unread("tools", f"runs {_shown(node.func)}(**...['args']) with a tool call's arguments, "
                                          "and the exporter cannot tell which function that is", node))
    return found, unread


def _call_args(tree: ast.AST, expr: ast.AST, depth: int = 3) -> bool:
    """Is `expr` a tool call's arguments: `tc["args"]`, `tc.get("args")`, or a local name holding one?"""
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.slice, ast.Constant) and expr.slice.value == "args"
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get":
        return bool(expr.args) and isinstance(expr.args[0], ast.Constant) and expr.args[0].value == "args"
    if isinstance(expr, ast.Name) and depth > 0:
        return any(isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in st.targets)
                   and _call_args(tree, st.value, depth - 1) for st in ast.walk(tree))
    return False


def unread_calls(fn: Any, tree: ast.AST, depth: int = HELPER_DEPTH,
                 seen: frozenset[int] = frozenset(), reached: list | None = None,
                 seeds: frozenset[str] | list[str] = frozenset()) -> list[Unread]:
    """The calls of `fn`'s code whose target the exporter cannot resolve (see the module's doc),
    the code it runs by `exec`/`eval`/`compile` or a shell (`_code_runs`: an opaque `code` entry,
    saying when the argument is the model's text; `seeds`: the parameters holding it), a callable
    reached through an alias, a `functools.partial` or a default argument that is neither a tool,
    the application's readable code nor a known library's (`_hidden`), and those of the
    application's helpers and of its own classes' methods it calls, `depth` calls deep (each at
    the node's call of the helper). The tools the calls it does resolve run are added to `reached`."""
    from langchain_core.tools import BaseTool

    out: list[Unread] = []
    seen = seen | {id(_code.plain_function(fn))}
    flow = _flow._Flow(tree, seeds)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        helper, shift = _helper_call(fn, tree, node.func)
        if helper is not None and id(_code.plain_function(helper)) not in seen and depth > 0:
            htree = _code.parse_function(helper)
            if htree is not None:
                name = getattr(_code.plain_function(helper), "__qualname__", "?")
                passed = [(k + shift if isinstance(k, int) else k, a) for k, a in _flow._args(node) if flow.written(a)]
                inner = unread_calls(helper, htree, depth - 1, seen, reached, _flow._receiving(helper, passed))
                for u in inner:
                    out.append(Unread(u.what, f"in helper {name}(...): {u.why}", node))
        label = _code_runs.runner(_callee(fn, tree, node.func)) if isinstance(node.func, (ast.Name, ast.Attribute)) \
            else None
        if label is not None:
            out.append(Unread("code", _code_runs.why(label, node, flow), node))
            continue
        hidden = _hidden(fn, tree, node.func, reached)
        if hidden is not None:
            out.append(Unread("tools", hidden, node))
            continue
        if (isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2
                and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))):
            out.append(Unread("tools", f"getattr({_shown(node.args[0])}, {_shown(node.args[1])}) looks up a name "
                                       "known only at run time: what it runs may be a tool", node))
            continue
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in RUNS):
            continue
        recv = node.func.value
        if _made_here(fn, tree, recv) or _container_pick(fn, tree, recv):
            continue
        if helper is not None and shift:
            continue  # `LocalREPL().run(code)`: the method of the application's class is read above
        target = resolve(fn, tree, recv)
        if isinstance(target, BaseTool) and reached is not None and target not in reached:
            reached.append(target)
        if _is_retriever(target):
            # a vector store's retriever run by the node's code: a read no catalogue entry describes
            out.append(Unread("tools", f"calls {_shown(recv)}.{node.func.attr}(...), which runs the retriever "
                                       f"{type(target).__name__}: what it returns may be outside content, and no "
                                       "catalogue entry says (declare it with the words: nodes.<node>.calls)", node))
        if target is _code._UNRESOLVED and not _is_getattr_dynamic(recv):
            out.append(Unread("tools", f"calls {_shown(recv)}.{node.func.attr}(...), which the exporter cannot "
                                       "resolve: what it runs may be a tool", node))
    return out


#: Parameters LangGraph fills in by name: their default is not what the node gets.
INJECTED = frozenset({"config", "store", "writer", "runtime", "previous"})


def _default(fn: Any, name: str) -> Any:
    """The default value of `fn`'s parameter `name` (`def step(state, sender=send_email.invoke)`),
    or `_code._UNRESOLVED` (no such parameter, no default, None, or one LangGraph injects)."""
    if name in INJECTED:
        return _code._UNRESOLVED
    try:
        p = inspect.signature(_code.plain_function(fn)).parameters.get(name)
    except (TypeError, ValueError):
        return _code._UNRESOLVED
    if p is None or p.default is inspect.Parameter.empty or p.default is None:
        return _code._UNRESOLVED
    return p.default


def _callee(fn: Any, tree: ast.AST, func: ast.AST) -> Any:
    """What a call's callee denotes (`resolve`), a parameter's default included."""
    obj = resolve(fn, tree, func)
    if obj is _code._UNRESOLVED and isinstance(func, ast.Name):
        return _default(fn, func.id)
    return obj


def _layers(obj: Any) -> list[Any]:
    """What a callable alias stands for: a `functools.partial`'s function and arguments, a bound
    method's object and function (`send = send_email.invoke`: the tool), a builtin method's object."""
    import functools

    out: list[Any] = []
    for _ in range(6):
        if isinstance(obj, functools.partial):
            out += list(obj.args) + list(obj.keywords.values())
            obj = obj.func
            continue
        owner = getattr(obj, "__self__", None)
        if (inspect.ismethod(obj) or inspect.isbuiltin(obj)) and owner is not None and not inspect.ismodule(owner):
            out.append(owner)
            obj = getattr(obj, "__func__", obj)
        break
    return out + [obj]


#: Libraries whose callables the exporter knows (their effects read elsewhere, or none).
KNOWN = ("langchain", "langchain_core", "langgraph", "stalwart_export")


def _hidden(fn: Any, tree: ast.AST, func: ast.AST, reached: list | None) -> str | None:
    """The why of a callable reached through an alias, a `functools.partial` or a default argument
    (issue 28 item 2) that is neither a tool (a tool found is added to `reached`), the
    application's readable code, nor a known library's (`_code._PURE_MODULES`, `KNOWN`); else None."""
    import functools

    from langchain_core.tools import BaseTool

    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None
    if isinstance(func, ast.Attribute) and not inspect.ismodule(resolve(fn, tree, func.value)):
        return None  # `obj.method(...)`: a method call, read as such
    obj = _callee(fn, tree, func)
    from_default = isinstance(func, ast.Name) and resolve(fn, tree, func) is _code._UNRESOLVED \
        and obj is not _code._UNRESOLVED
    aliased = isinstance(obj, functools.partial) or (
        (inspect.ismethod(obj) or inspect.isbuiltin(obj)) and getattr(obj, "__self__", None) is not None
        and not inspect.ismodule(getattr(obj, "__self__", None)))
    if obj is _code._UNRESOLVED or not (aliased or from_default):
        return None
    layers = _layers(obj)
    tools = [o for o in layers if isinstance(o, BaseTool)]
    if tools:
        if reached is not None:
            reached += [t for t in tools if t not in reached]
        return None
    inner = _code.unwrap_decorated(layers[-1])
    if not callable(inner) or inspect.isclass(inner):
        return None
    if (inspect.isfunction(inner) or inspect.ismethod(inner)) and _sources.is_user_file(_sources.source_file(inner)):
        return None  # the application's own function: followed as a helper
    owner = next((o for o in layers[:-1] if not isinstance(o, (str, int, float, bytes, dict, list, tuple))), None)
    if owner is not None and _library_singleton(owner):
        return None  # `random.choice`, `os.environ.get`: a library's own module-level object
    mods = [getattr(_code.plain_function(inner), "__module__", None) or getattr(type(inner), "__module__", "") or ""]
    if owner is not None:
        mods.append(getattr(type(owner), "__module__", "") or "")
    known = _code._PURE_MODULES + KNOWN
    if all(any(m == k or m.startswith(k + ".") for k in known) for m in mods):
        return None
    how = "a default argument" if from_default else (
        "a functools.partial" if isinstance(obj, functools.partial) else "a bound method")
    return (f"calls {_shown(func)}(...), {how} of {_code.qualname(owner if owner is not None else inner)} that the "
            "exporter cannot read: what it runs may be a tool")


def _is_retriever(obj: Any) -> bool:
    """Is `obj` a LangChain retriever (`BaseRetriever`: a vector store's `as_retriever()`)?"""
    return any(c.__name__ == "BaseRetriever" and c.__module__.startswith("langchain_core.")
               for c in type(obj).__mro__)


def _is_getattr_dynamic(expr: ast.AST) -> bool:
    """`getattr(x, name).invoke(...)`: already an entry of its own."""
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr"
            and len(expr.args) >= 2 and not isinstance(expr.args[1], ast.Constant))


def _made_here(fn: Any, tree: ast.AST, expr: ast.AST, depth: int = 3) -> bool:
    """Is `expr` a model the code makes at run time (`llm.bind_tools(...)`, `init_chat_model(...)`,
    `load_chat_model(...)`, or a local name holding one)? Its calls are `runtime_model`'s."""
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in MODEL_METHODS:
            return True
        if isinstance(expr.func, (ast.Name, ast.Attribute)):
            obj = _code.resolve_name(fn, expr.func)
            return _makes_model(obj) or (obj is _code._UNRESOLVED and _spelled(expr.func) == "init_chat_model")
        return False
    if isinstance(expr, ast.Name) and depth > 0:
        values = [st.value for st in ast.walk(tree) if isinstance(st, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in st.targets)]
        return bool(values) and all(_made_here(fn, tree, v, depth - 1) for v in values)
    return False


def _container_pick(fn: Any, tree: ast.AST, expr: ast.AST) -> bool:
    """A pick from a list or dict the exporter resolves (`tools_by_name[call["name"]]`, `next(t for
    t in tools if t.name == "x")`, or a local name holding one): `_picks` and the step's tools read
    it (every tool of the container, or those its literal names pick)."""
    if isinstance(expr, ast.Name):
        values = [st.value for st in ast.walk(tree) if isinstance(st, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in st.targets)]
        return bool(values) and all(_container_pick(fn, tree, v) for v in values)
    return any(isinstance(n, ast.Name) and isinstance(_code.resolve_name(fn, n), (list, tuple, dict))
               for n in ast.walk(expr))


def _library_singleton(owner: Any) -> bool:
    """Is `owner` an object its own class's library module holds at module level (`random`'s
    `Random` behind `random.choice`, `os.environ`), not one the application made?"""
    import sys

    mod = sys.modules.get(getattr(type(owner), "__module__", "") or "")
    if mod is None or _sources.is_user_file(getattr(mod, "__file__", None)):
        return False
    try:
        return any(v is owner for v in vars(mod).values())
    except Exception:  # noqa: BLE001
        return False


def _helper(fn: Any, tree: ast.AST, func: ast.AST) -> Any:
    """The application's own function a call's callee resolves to, else None."""
    return _helper_call(fn, tree, func)[0]


def _helper_call(fn: Any, tree: ast.AST, func: ast.AST) -> tuple[Any, int]:
    """(the application's own function a call's callee resolves to - a function, a method of one of
    its objects, a `functools.partial` of one, a default argument, `Cls().method` of one of its
    classes - else None; 1 when that is a method called on a new instance, its `self` not given)."""
    import functools

    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None, 0
    obj = _callee(fn, tree, func)
    shift = 0
    while isinstance(obj, functools.partial):
        obj = obj.func
    if obj is _code._UNRESOLVED and isinstance(func, ast.Attribute):
        cls = _new_instance(fn, tree, func.value)
        obj = inspect.getattr_static(cls, func.attr, None) if cls is not None else None
        shift = 1
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        return None, 0
    obj = _code.unwrap_decorated(obj)
    if _code.is_library(obj):
        return None, 0
    mod = getattr(_code.plain_function(obj), "__module__", "") or ""
    if mod.split(".")[0] in ("langgraph", "langchain", "langchain_core", "stalwart_export"):
        return None, 0
    return (obj, shift) if _sources.is_user_file(_sources.source_file(obj)) else (None, 0)


def _new_instance(fn: Any, tree: ast.AST, expr: ast.AST, depth: int = 3) -> Any:
    """The application's class `expr` is a new instance of (`LocalREPL()`, or a local name assigned
    one), else None."""
    if isinstance(expr, ast.Name) and depth > 0:
        values = [st.value for st in ast.walk(tree) if isinstance(st, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in st.targets)]
        got = {id(c): c for c in (_new_instance(fn, tree, v, depth - 1) for v in values)}
        return next(iter(got.values())) if len(got) == 1 and None not in got.values() else None
    if isinstance(expr, ast.Call) and isinstance(expr.func, (ast.Name, ast.Attribute)):
        cls = resolve(fn, tree, expr.func)
        if inspect.isclass(cls) and _sources.is_user_file(_sources.source_file(cls)):
            return cls
    return None
