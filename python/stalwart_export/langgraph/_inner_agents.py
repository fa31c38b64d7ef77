"""Agents built inside a node's function (issue 28 item 1, issue 29 item 3; SPEC 12.5): the
"teams of agents" shape, where the node function calls `create_react_agent(...)` or
`create_agent(...)` and runs the agent it just built (`agent.invoke(state)`, `await
agent.ainvoke(...)`).

`find` reads the function's AST (and the application's helpers it calls, `HELPER_DEPTH` deep, their
parameters bound to the caller's arguments) for a call of one of `CONSTRUCTORS`, and resolves each
argument statically (`value`: literals, the function's own names, its globals and closure through
`_unseen.resolve`, and the few harmless constructors `_safe_call` allows). When the model and the tools
(and the middleware, when given) resolve, the agent is built again at export time with the same
constructor - built only, never run -, a text-only argument it cannot resolve (`TEXT_ARGS`: a prompt
made from the state) replaced by a harmless value, and a model made at run time
(`init_chat_model(...)`, a model string) replaced by a stand-in (`_placeholder`: which model it is changes
no route). What cannot be resolved is an `Unread` (an `opaque` entry, QG024) at the constructor's
line (or the node's call of the helper holding it).

`history_kept` says whether the function passes the guard's history in and out (the whole state
into the agent, the agent's `stalwart_guard` back out on every return): only then does a guard
inside the agent keep its session rules across the node's runs (SPEC 12.1).
"""

from __future__ import annotations

import ast
import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any

from .. import _code
from . import _unseen

#: The constructors read: (module prefix, name).
CONSTRUCTORS = (("langgraph.prebuilt", "create_react_agent"), ("langchain.agents", "create_agent"))
#: Arguments that only carry text: replaced when they cannot be resolved.
TEXT_ARGS = {"prompt": "", "system_prompt": None, "name": None, "description": None}
#: Arguments that do not change the graph: dropped when they cannot be resolved.
DROPPABLE = frozenset({"checkpointer", "store", "debug", "cache", "context_schema"})
#: How many helper calls deep a constructor is looked for.
HELPER_DEPTH = 2
#: Methods that run an agent.
RUNS = _unseen.RUNS

BAD = _code._UNRESOLVED


@dataclass
class Inner:
    """One constructor call found: where (`at`, a node of the node function's tree), which
    (`ctor_name`), the agent built (None when it could not be), what could not be read
    (`unread`), the arguments replaced (`replaced`), the local name it is bound to (`var`), and
    the AST nodes of the argument expressions (their tools are the agent's, not the step's)."""

    at: ast.AST
    ctor_name: str
    line_call: ast.Call
    agent: Any = None
    unread: list = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    var: str | None = None
    arg_nodes: list[ast.AST] = field(default_factory=list)
    #: The call in the node function that yields the agent: the constructor call, or the node's call
    #: of the helper that builds it.
    site: ast.AST | None = None
    #: In a helper: the helper's own local name for the agent (its runs there are the agent's).
    helper_var: str | None = None
    #: In a helper: the helper's name (`make_worker`), the outermost one the node calls.
    helper: str | None = None


def _placeholder() -> Any:
    """A chat model standing for one made at run time while the agent is built at export time: it
    binds tools as a provider's model does, and is never run."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class RunTimeModel(FakeMessagesListChatModel):
        """A chat model made at run time (its provider and name are not known at export time)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            out = []
            for t in tools:
                try:
                    out.append(convert_to_openai_tool(t))
                except Exception:  # noqa: BLE001 - a provider's tool dict
                    out.append(t)
            return self.bind(tools=out, **kwargs)

    return RunTimeModel(responses=[])


def constructor(obj: Any) -> str | None:
    """The name of the agent constructor `obj` is (`CONSTRUCTORS`), else None."""
    if not callable(obj):
        return None
    mod = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__name__", None)
    for prefix, ctor in CONSTRUCTORS:
        if name == ctor and (mod == prefix or mod.startswith(prefix + ".")):
            return ctor
    return None


def _spelled(func: ast.AST) -> str | None:
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _shown(expr: ast.AST) -> str:
    return _unseen._shown(expr)


# ------------------------------------------------------------------ resolving an argument
class _Scope:
    """Where names are looked up: the function, its tree, and its parameters' values (a helper's,
    bound to the caller's arguments)."""

    def __init__(self, fn: Any, tree: ast.AST, env: dict[str, Any] | None = None) -> None:
        self.fn, self.tree, self.env = fn, tree, env or {}
        #: What a constructor the exporter called raised (`guard.tool_node` refusing a tool).
        self.errors: list[str] = []

    def assigned(self, name: str) -> list[ast.AST] | None:
        """The values the function assigns to local `name`, or None when it changes it another way
        (an augmented assignment, `.append(...)`, a for target)."""
        values: list[ast.AST] = []
        for st in ast.walk(self.tree):
            if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
                values.append(st.value)
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == name:
                if st.value is not None:
                    values.append(st.value)
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id == name:
                return None
            elif (isinstance(st, ast.Call) and isinstance(st.func, ast.Attribute)
                  and isinstance(st.func.value, ast.Name) and st.func.value.id == name
                  and st.func.attr in ("append", "extend", "insert", "update", "pop", "remove", "clear")):
                return None
            elif isinstance(st, (ast.For, ast.AsyncFor, ast.comprehension)) and any(
                    isinstance(t, ast.Name) and t.id == name for t in ast.walk(st.target)):
                return None
        return values


def value(scope: _Scope, expr: ast.AST, depth: int = 6) -> Any:
    """The object `expr` denotes when the exporter can tell without running the node (see the
    module's doc), else `BAD`."""
    if depth <= 0:
        return BAD
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, (ast.List, ast.Tuple)):
        out: list = []
        for e in expr.elts:
            if isinstance(e, ast.Starred):
                v = value(scope, e.value, depth - 1)
                if not isinstance(v, (list, tuple)):
                    return BAD
                out += list(v)
                continue
            v = value(scope, e, depth - 1)
            if v is BAD:
                return BAD
            out.append(v)
        return out if isinstance(expr, ast.List) else tuple(out)
    if isinstance(expr, ast.Dict):
        d: dict = {}
        for k, v in zip(expr.keys, expr.values):
            if k is None:
                inner = value(scope, v, depth - 1)
                if not isinstance(inner, dict):
                    return BAD
                d.update(inner)
                continue
            kk, vv = value(scope, k, depth - 1), value(scope, v, depth - 1)
            if kk is BAD or vv is BAD:
                return BAD
            try:
                d[kk] = vv
            except TypeError:
                return BAD
        return d
    if isinstance(expr, ast.Name):
        if expr.id in scope.env:
            return scope.env[expr.id]
        values = scope.assigned(expr.id)
        if values is None:
            return BAD
        if values:
            got = [value(scope, v, depth - 1) for v in values]
            return got[0] if all(g is got[0] for g in got) else BAD
        return _unseen.resolve(scope.fn, scope.tree, expr)
    if isinstance(expr, ast.Attribute):
        base = value(scope, expr.value, depth - 1)
        return BAD if base is BAD else _code.attr(base, expr.attr, BAD)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        base = value(scope, expr.value, depth - 1)
        try:
            return BAD if base is BAD else base[expr.slice.value]
        except Exception:  # noqa: BLE001
            return BAD
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "getattr":
            return _unseen.resolve(scope.fn, scope.tree, expr)
        callee = value(scope, expr.func, depth - 1)
        if not _safe_call(callee):
            return BAD
        args = [value(scope, a, depth - 1) for a in expr.args]
        kwargs = {k.arg: value(scope, k.value, depth - 1) for k in expr.keywords if k.arg is not None}
        if any(a is BAD for a in args) or any(v is BAD for v in kwargs.values()) or any(
                k.arg is None for k in expr.keywords) or any(isinstance(a, ast.Starred) for a in expr.args):
            return BAD
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return callee(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - building someone's object: never crash the export
            scope.errors.append(f"{_shown(expr)} raised {type(e).__name__}: {str(e)[:200]}")
            return BAD
    return BAD


def _safe_call(callee: Any) -> bool:
    """May the exporter call `callee` to build an argument? Only constructors that build and run
    nothing: `guard.tool_node(...)` (a guard of this package), LangGraph's `ToolNode(...)` and
    `langchain.agents.middleware` classes (not the shell's)."""
    if callee is BAD or callee is None:
        return False
    owner = getattr(callee, "__self__", None)
    if owner is not None and getattr(callee, "__name__", "") == "tool_node" and \
            (type(owner).__module__ or "").startswith("stalwart_export"):
        return True
    if inspect.isclass(callee):
        mod = callee.__module__ or ""
        if callee.__name__ == "ToolNode" and mod.startswith("langgraph.prebuilt"):
            return True
        if mod.startswith("langchain.agents.middleware") and "Shell" not in callee.__name__ \
                and "Filesystem" not in callee.__name__:
            return True
    return False


# ------------------------------------------------------------------ finding constructor calls
def find(fn: Any, tree: ast.AST, depth: int = HELPER_DEPTH, env: dict | None = None,
         at: ast.AST | None = None, seen: frozenset[int] = frozenset()) -> list[Inner]:
    """The agent constructor calls of `fn`'s code, and of the application's helpers it calls
    (`depth` deep; located at the node's call of the helper, `at`), each built when it can be."""
    scope = _Scope(fn, tree, env)
    out: list[Inner] = []
    seen = seen | {id(_code.plain_function(fn))}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        callee = value(scope, node.func)
        ctor = constructor(callee)
        if ctor is None and callee is BAD and _spelled(node.func) in ("create_react_agent", "create_agent"):
            out.append(Inner(at or node, _spelled(node.func) or "?", node, unread=[_unseen.Unread(
                "subgraph", f"builds an agent with {_shown(node.func)}(...), which the exporter cannot resolve: "
                            "its model, tools and routes are not read", at or node)]))
            continue
        if ctor is not None:
            out.append(_build(scope, node, callee, ctor, at or node))
            continue
        if depth <= 0:
            continue
        helper = _unseen._helper(fn, tree, node.func) if callee is not BAD else None
        if helper is None or id(_code.plain_function(helper)) in seen:
            continue
        htree = _code.parse_function(helper)
        if htree is None:
            continue
        henv = _bind(scope, helper, node)
        for inner in find(helper, htree, depth - 1, henv, at or node, seen):
            inner.helper_var = inner.helper_var or inner.var
            inner.site, inner.arg_nodes = node, [node]
            inner.helper = getattr(_code.plain_function(helper), "__qualname__", None) or _shown(node.func)
            for u in inner.unread:
                u.why = f"in helper {inner.helper}(...): {u.why}"
            out.append(inner)
    for inner in out:
        if inner.site is None:
            inner.site = inner.line_call
        inner.var = _bound_to(tree, inner.site)
        inner.arg_nodes += _locals_behind(scope, inner.arg_nodes)
    return out


def _locals_behind(scope: _Scope, exprs: list[ast.AST], depth: int = 3) -> list[ast.AST]:
    """The values the function assigns to the local names `exprs` use (`tools = [...]` before
    `create_react_agent(llm, tools)`): what they name is handed to the agent too."""
    out: list[ast.AST] = []
    if depth <= 0:
        return out
    for e in exprs:
        for n in ast.walk(e):
            if isinstance(n, ast.Name) and n.id not in scope.env:
                values = scope.assigned(n.id) or []
                out += values
                out += _locals_behind(scope, values, depth - 1)
    return out


def _bind(scope: _Scope, helper: Any, call: ast.Call) -> dict[str, Any]:
    """The helper's parameters bound to the values of the caller's arguments (`BAD` where unknown)."""
    try:
        sig = inspect.signature(_code.plain_function(helper))
    except (TypeError, ValueError):
        return {}
    params = list(sig.parameters)
    if inspect.ismethod(helper) and params:
        params = params[1:]
    env: dict[str, Any] = {p: (sig.parameters[p].default if sig.parameters[p].default is not inspect.Parameter.empty
                               else BAD) for p in params}
    for p, a in zip(params, call.args):
        env[p] = BAD if isinstance(a, ast.Starred) else value(scope, a)
    for k in call.keywords:
        if k.arg in env:
            env[k.arg] = value(scope, k.value)
    return env


def _bound_to(tree: ast.AST, call: ast.Call) -> str | None:
    """The local name `name = <call>` binds the agent to."""
    for st in ast.walk(tree):
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is call:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return targets[0].id
    return None


def _build(scope: _Scope, call: ast.Call, ctor_fn: Any, ctor: str, at: ast.AST) -> Inner:
    """Resolve the arguments of constructor call `call` and build the agent (see the module's doc)."""
    inner = Inner(at, ctor, call, arg_nodes=list(call.args) + [k.value for k in call.keywords])
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        inner.unread.append(_unseen.Unread("subgraph", f"builds an agent with {ctor}(*args/**kwargs): its arguments "
                                                       "are not read", at))
        return inner
    try:
        params = list(inspect.signature(ctor_fn).parameters)
    except (TypeError, ValueError):
        params = ["model", "tools"]
    exprs: dict[str, ast.AST] = dict(zip(params, call.args))
    exprs.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    args: dict[str, Any] = {}
    for pname, expr in exprs.items():
        scope.errors = []
        v = value(scope, expr)
        if v is not BAD:
            args[pname] = v
            continue
        if pname == "model" and (_unseen._made_here(scope.fn, scope.tree, expr) or
                                 isinstance(expr, ast.JoinedStr)):
            args[pname] = _placeholder()
            inner.replaced.append(f"model ({_shown(expr)}, made at run time)")
        elif pname in TEXT_ARGS:
            if TEXT_ARGS[pname] is not None:
                args[pname] = TEXT_ARGS[pname]
            inner.replaced.append(f"{pname} ({_shown(expr)}, text)")
        elif pname in DROPPABLE:
            inner.replaced.append(f"{pname} ({_shown(expr)}, left out)")
        else:
            what = "tools" if pname in ("tools", "middleware") else "subgraph"
            shown = _shown(expr)
            if isinstance(expr, ast.Name) and len(scope.assigned(expr.id) or []) == 1:
                shown = f"{expr.id} = {_shown((scope.assigned(expr.id) or [expr])[0])}"
            raised = f" ({'; '.join(scope.errors)})" if scope.errors else ""
            inner.unread.append(_unseen.Unread(
                what, f"builds an agent with {ctor}(...) whose {pname} ({shown}) the exporter cannot "
                      f"resolve{raised}: {'the tools it may call are' if what == 'tools' else 'what it runs is'} "
                      "not read", at))
    if isinstance(args.get("model"), str):
        args["model"] = _placeholder()  # "openai:gpt-4o": the provider's package need not be there
        inner.replaced.append("model (a model name, made at run time)")
    if "model" not in args and not inner.unread:
        inner.unread.append(_unseen.Unread("subgraph", f"builds an agent with {ctor}(...) with no model the "
                                                       "exporter can read", at))
    if inner.unread:
        return inner
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inner.agent = ctor_fn(**args)
    except Exception as e:  # noqa: BLE001 - building someone's agent: never crash the export
        inner.unread.append(_unseen.Unread("subgraph", f"builds an agent with {ctor}(...) that the exporter could not "
                                                       f"build again to read it ({type(e).__name__}: {e})", at))
    return inner


# ------------------------------------------------------------------ how the node runs it
def runs_of(tree: ast.AST, inner: Inner) -> list[ast.Call]:
    """The calls that run the agent: `<var>.invoke(...)` (any of `RUNS`) on its local name, or on the
    constructor call itself."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNS:
            recv = node.func.value
            if recv is inner.site or (inner.var and isinstance(recv, ast.Name) and recv.id == inner.var):
                out.append(node)
    return out


def _state_param(tree: ast.AST) -> str | None:
    args = getattr(getattr(tree, "args", None), "args", None) or []
    names = [a.arg for a in args]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return names[0] if names else None


def history_kept(tree: ast.AST, inner: Inner, key: str) -> str | None:
    """None when the node function passes the guard's history (state key `key`) in and out of the
    agent: every run gets the whole state (`agent.invoke(state)`), and every `return` hands back the
    agent's result whole, or its `key` (`Command(update=result)`, `{**result}`, `{key:
    result[key]}`). Else why not, in words."""
    state = _state_param(tree)
    runs = runs_of(tree, inner)
    if not runs:
        return "the exporter cannot see where it runs the agent"
    results: set[str] = set()
    for r in runs:
        how = r.func.attr  # type: ignore[union-attr]
        if how not in ("invoke", "ainvoke"):
            return f"it runs the agent with .{how}(...), whose output is not its state"
        first = r.args[0] if r.args else next((k.value for k in r.keywords if k.arg == "input"), None)
        if not (isinstance(first, ast.Name) and first.id == state):
            return (f"it runs the agent with {_shown(first) if first is not None else 'no input'}, not the whole "
                    f"state: the agent's guard starts with no history")
        for st in ast.walk(tree):
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                v = st.value.value if isinstance(st.value, ast.Await) else st.value
                if v is r:
                    results.add(st.targets[0].id)
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    if not returns:
        return "it returns nothing of the agent's state"
    for ret in returns:
        if not _hands_back(ret.value, results, runs, key):
            return (f"it returns {_shown(ret.value) if ret.value is not None else 'None'}, without the agent's "
                    f"`{key}`: what the agent's guard recorded is dropped")
    return None


def _hands_back(expr: ast.AST | None, results: set[str], runs: list[ast.Call], key: str) -> bool:
    if expr is None:
        return False
    if isinstance(expr, ast.Await):
        expr = expr.value
    if isinstance(expr, ast.Name):
        return expr.id in results
    if any(expr is r for r in runs):
        return True
    if isinstance(expr, ast.Call) and _spelled(expr.func) == "Command":
        upd = next((k.value for k in expr.keywords if k.arg == "update"), None)
        return _hands_back(upd, results, runs, key)
    if isinstance(expr, ast.Dict):
        for k, v in zip(expr.keys, expr.values):
            if k is None and _hands_back(v, results, runs, key):
                return True
            if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Subscript) and \
                    isinstance(v.value, ast.Name) and v.value.id in results:
                return True
    return False


def inside_args(inners: list[Inner]) -> list[ast.AST]:
    """The AST nodes of every constructor's arguments (and of every call of a helper holding one)."""
    out: list[ast.AST] = []
    for i in inners:
        for a in i.arg_nodes:
            out += list(ast.walk(a))
    return out
