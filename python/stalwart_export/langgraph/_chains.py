"""Chains read through (issue 28, SPEC 12.5): what a LangChain runnable chain, and the code that
builds or runs one, does. `_chain_node.py` makes the node of it.

The shapes: `prompt | model.bind_tools(tools) | parser` as the node, `RunnablePassthrough.assign(
answer=prompt | llm | StrOutputParser())`, `RunnableLambda(fn) | ...`, `RunnableParallel(...)`, a
chain held at module level (`referenced_chains`) or given by a `functools.partial`
(`partial_runnables`) and `.invoke`d inside the node's function, and one the function builds
itself (`local_steps`, `built_here`). `read` walks a chain (langchain-core 1.x fields):
`RunnableSequence.first/middle/last`, `RunnableParallel.steps__`, `RunnableAssign.mapper`,
`RunnableBranch.branches/default`, `RouterRunnable.runnables`, a configurable runnable's `default`
and `alternatives`, a `RunnableBinding`'s `bound` (its `kwargs["tools"]`: the model binds those
tools, it does not call them), `RunnableWithFallbacks.runnable/fallbacks`; the functions of
`RunnableLambda`, `RunnablePassthrough(func)` and `RunnableGenerator` steps are kept in
`Chain.funcs`, to be read as a node's function is. What it cannot read is an `Unread`: a step of a
class it does not know (`code`), a retriever (`tools`: what it returns may be outside content), a
compiled graph run in the chain (`subgraph`). Prompts, output parsers, `RunnablePick`, a bare
`RunnablePassthrough` and `operator.itemgetter` steps have no effect and are read as such.
"""

from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from .. import _code, _hosted, _sources
from . import _unseen

#: Composite runnables (classes in the MRO) read through as chains.
COMPOSITES = frozenset({"RunnableSequence", "RunnableParallel", "RunnableAssign", "RunnableBranch",
                        "RunnableEachBase", "RunnableGenerator", "RouterRunnable", "DynamicRunnable"})
#: Steps with no effect (classes in the MRO): prompts, output parsers, picks.
PURE_STEPS = frozenset({"BasePromptTemplate", "BaseMessagePromptTemplate", "BaseOutputParser",
                        "BaseGenerationOutputParser", "BaseLLMOutputParser", "RunnablePick"})
#: How deep a function's references are followed for the chains it reaches.
DEPTH = 3


def _mro(obj: Any) -> list[str]:
    return [c.__name__ for c in type(obj).__mro__]


def is_chain(obj: Any) -> bool:
    """Is `obj` a composite runnable the exporter reads through (`COMPOSITES`), or a
    `RunnablePassthrough` running a function?"""
    mro = _mro(obj)
    if any(c in COMPOSITES for c in mro):
        return True
    return "RunnablePassthrough" in mro and (_code.attr(obj, "func") or _code.attr(obj, "afunc")) is not None


@dataclass
class Unread:
    """An `opaque` entry to write: what, why, and where: an AST node of `fn`'s code (`at`), or an
    object whose definition is the user's line (`obj`: a step's function or class)."""

    what: str
    why: str
    fn: Any = None
    at: ast.AST | None = None
    obj: Any = None


@dataclass
class Chain:
    """What a chain (and the functions of its steps) does."""

    models: list[str] = field(default_factory=list)       # the chat models met (qualified names)
    bound: list[str] = field(default_factory=list)        # tools the models bind (offered, not called)
    bound_unnamed: bool = False                          # a binding whose tools could not all be named
    tool_lists: list[list] = field(default_factory=list)  # the tool lists bound (for hosted tools)
    tools: list[Any] = field(default_factory=list)        # tools it runs (steps, `.invoke`d): BaseTool objects
    named: list[Any] = field(default_factory=list)        # tools a step's code names: run unless only bound
    funcs: list[Any] = field(default_factory=list)        # the functions its steps run
    unread: list[Unread] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)

    def add_tool(self, t: Any) -> None:
        if all(t is not x for x in self.tools):
            self.tools.append(t)

    def add_model(self, what: str) -> None:
        if what not in self.models:
            self.models.append(what)

    def bind(self, names: list[str] | None) -> None:
        if names is None:
            self.bound_unnamed = True
            return
        self.bound += [n for n in names if n not in self.bound]


def _tool_name(t: Any) -> str | None:
    """The name of a tool as `bind_tools` binds it (a tool, a function, a provider's schema dict)."""
    from langchain_core.tools import BaseTool

    if isinstance(t, BaseTool):
        return t.name
    if isinstance(t, dict):
        fn = t.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return fn["name"]
        return t.get("name") if isinstance(t.get("name"), str) else None
    return getattr(t, "__name__", None) or getattr(t, "name", None)


def read(obj: Any, chain: Chain | None = None, depth: int = 0) -> Chain:
    """Walk the runnable `obj` (see the module's doc) into `chain`: the models, the tools bound and
    run, the functions its steps run, and what it cannot read."""
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.tools import BaseTool
    from langgraph.pregel import Pregel

    c = chain if chain is not None else Chain()
    if obj is None or depth > 32 or id(obj) in c.seen:
        return c
    c.seen.add(id(obj))
    mro = _mro(obj)
    if isinstance(obj, BaseLanguageModel):
        c.add_model(_code.qualname(obj))
        return c
    if _unseen.is_configurable_model(obj):
        c.add_model(_code.qualname(obj))
        c.bind(_unseen.configurable_bound(obj) or [])
        return c
    if isinstance(obj, BaseTool):
        c.add_tool(obj)
        return c
    if isinstance(obj, Pregel):
        c.unread.append(Unread("subgraph", f"a chain step runs the compiled graph {getattr(obj, 'name', None)!r}, "
                                           "whose steps the export does not inline there"))
        return c
    if "RunnableBindingBase" in mro:  # .bind_tools(), .bind(), .with_config(), .with_retry(), .map()
        tools = (_code.attr(obj, "kwargs", None) or {}).get("tools")
        if isinstance(tools, (list, tuple)):
            c.tool_lists.append(list(tools))
            names = [_tool_name(t) for t in tools if not _hosted.is_hosted(t)]  # hosted: `export_node`
            c.bind(None if any(n is None for n in names) else names)  # type: ignore[arg-type]
        return read(_code.attr(obj, "bound"), c, depth + 1)
    if "RunnableWithFallbacks" in mro:
        read(_code.attr(obj, "runnable"), c, depth + 1)
        for fb in _code.attr(obj, "fallbacks", None) or []:
            read(fb, c, depth + 1)
        return c
    if any(p in mro for p in PURE_STEPS):
        return c
    parts: list[Any] = []
    if "RunnableSequence" in mro:
        parts = [_code.attr(obj, "first")] + list(_code.attr(obj, "middle", None) or []) + [_code.attr(obj, "last")]
    elif "RunnableParallel" in mro:
        parts = list((_code.attr(obj, "steps__", None) or {}).values())
    elif "RunnableAssign" in mro:
        parts = [_code.attr(obj, "mapper")]
    elif "RunnableBranch" in mro:
        for cond, run in _code.attr(obj, "branches", None) or []:
            parts += [cond, run]
        parts.append(_code.attr(obj, "default"))
    elif "RunnableEachBase" in mro:
        parts = [_code.attr(obj, "bound")]
    elif "RouterRunnable" in mro:
        parts = list((_code.attr(obj, "runnables", None) or {}).values())
    elif "DynamicRunnable" in mro:
        parts = [_code.attr(obj, "default")]
        for key, alt in (_code.attr(obj, "alternatives", None) or {}).items():
            if is_runnable(alt):
                parts.append(alt)
            else:  # a function making the runnable when it is picked
                c.unread.append(Unread("code", f"the chain's alternative {key!r} is made by a function at run time",
                                       obj=alt))
    elif "RunnablePassthrough" in mro:
        _func(_code.attr(obj, "func") or _code.attr(obj, "afunc"), c)
        return c
    elif "RunnableGenerator" in mro:
        _func(_code.attr(obj, "_transform") or _code.attr(obj, "_atransform"), c)
        return c
    elif "RunnableLambda" in mro or "RunnableCallable" in mro:
        _func(_code.attr(obj, "func") or _code.attr(obj, "afunc"), c)
        return c
    elif "BaseRetriever" in mro:
        c.unread.append(Unread("tools", f"a chain step runs the retriever {type(obj).__name__}: what it returns may "
                                        "be outside content, and no catalogue entry says", obj=type(obj)))
        return c
    else:
        c.unread.append(Unread("code", f"a chain step the exporter cannot read ({_code.qualname(obj)})",
                               obj=type(obj)))
        return c
    for p in parts:
        read(p, c, depth + 1)
    return c


def is_runnable(obj: Any) -> bool:
    """Is `obj` a LangChain `Runnable`?"""
    from langchain_core.runnables import Runnable

    return isinstance(obj, Runnable)


def _func(f: Any, c: Chain) -> None:
    """A step's function: kept to be read (`read_function`), unless it has no effect."""
    if f is None:
        return
    while isinstance(f, functools.partial):
        f = f.func
    if type(f).__module__ == "operator":  # itemgetter, attrgetter
        return
    f = _code.unwrap_decorated(f) if (inspect.isfunction(f) or inspect.ismethod(f)) else (_code.user_callable(f) or f)
    if not (inspect.isfunction(f) or inspect.ismethod(f)):
        c.unread.append(Unread("code", f"a chain step runs {_code.qualname(f)}, which the exporter cannot read",
                               obj=type(f)))
        return
    if _code.is_library(f) or (getattr(_code.plain_function(f), "__module__", "") or "").split(".")[0] in (
            "json", "re", "string", "textwrap", "operator"):
        return
    if all(f is not g for g in c.funcs):
        c.funcs.append(f)


def referenced_chains(fn: Any) -> list[Any]:
    """The chains (`is_chain`, under their wrappers) `fn`'s code reaches by name (module-level
    chains it `.invoke`s, a chain an object of the user's holds)."""
    out: list[Any] = []
    for _n, o in _code.referenced_objects(fn, depth=DEPTH):
        if not is_runnable(o):
            continue
        inner = _code.unwrap_runnable(o)[0]
        if is_chain(inner) and all(inner is not x for x in out):
            out.append(inner)
    return out


def partial_runnables(runnable: Any) -> dict[str, Any]:
    """The runnables a node's `functools.partial` gives its function, by parameter name (the
    chain then `.invoke`d through the parameter)."""
    return {k: v for k, v in _code.partial_args(runnable).items() if is_runnable(v)}


#: Constructors whose arguments are a chain's steps (a function given to one is coerced to a
#: `RunnableLambda`, as one piped with `|` is).
_STEP_MAKERS = frozenset({"RunnableLambda", "RunnableParallel", "RunnablePassthrough", "RunnableGenerator",
                          "RunnableMap", "RunnableBranch"})


def local_steps(fn: Any, tree: ast.AST | None) -> list[Any]:
    """The steps of chains `fn`'s code builds itself (`chain = prompt | llm | post_reply`,
    `RunnableLambda(post_reply)`, `RunnablePassthrough.assign(x=fetch)`): each function of the
    application and each chain its names resolve to (`_unseen.resolve`), in the order met.
    Lambdas written inline are part of `fn`'s own code, read with it."""
    if tree is None:
        return []
    out: list[Any] = []

    def add(expr: ast.AST) -> None:
        exprs = list(expr.values) if isinstance(expr, ast.Dict) else [expr]
        for e in exprs:
            if not isinstance(e, (ast.Name, ast.Attribute)):
                continue
            obj = _unseen.resolve(fn, tree, e)
            if inspect.isfunction(obj) and not _code.is_library(obj) and _sources.is_user_file(
                    _sources.source_file(obj)):
                pass
            elif not is_runnable(obj):
                continue
            if all(obj is not o for o in out):
                out.append(obj)

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            add(node.left)
            add(node.right)
        elif isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if callee in _STEP_MAKERS or callee == "assign":
                for a in list(node.args) + [kw.value for kw in node.keywords]:
                    add(a)
    return out


#: Methods that make a runnable of a runnable read (a binding of it).
_BINDINGS = frozenset({"bind_tools", "with_structured_output", "bind", "with_config", "with_retry", "with_types",
                       "assign", "pick", "map", "with_listeners"})


def built_here(fn: Any, tree: ast.AST, expr: ast.AST, depth: int = 4) -> bool:
    """Is `expr` a chain `fn`'s code builds whose every step `read_node` reads (`local_steps`): a
    `|` of names resolving to runnables or the application's functions, inline lambdas and dicts
    of those, langchain-core constructors (`StrOutputParser()`, `ChatPromptTemplate.from_messages
    (...)`), the step makers (`RunnableLambda(f)`), bindings of those, or a local name holding one?"""
    if depth <= 0:
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return built_here(fn, tree, expr.left, depth) and built_here(fn, tree, expr.right, depth)
    if isinstance(expr, ast.Lambda):
        return True
    if isinstance(expr, ast.Dict):
        return all(built_here(fn, tree, v, depth) for v in expr.values)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        obj = _unseen.resolve(fn, tree, expr)
        if obj is not _code._UNRESOLVED:
            return inspect.isfunction(obj) or is_runnable(obj)
        if isinstance(expr, ast.Name):
            values = [st.value for st in ast.walk(tree) if isinstance(st, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == expr.id for t in st.targets)]
            return bool(values) and all(built_here(fn, tree, v, depth - 1) for v in values)
        return False
    if isinstance(expr, ast.Call):
        f = expr.func
        name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
        parts = list(expr.args) + [kw.value for kw in expr.keywords]
        if name in _STEP_MAKERS:
            return all(built_here(fn, tree, a, depth) for a in parts)
        if isinstance(f, ast.Attribute) and name in _BINDINGS:
            return built_here(fn, tree, f.value, depth)
        head = f.value if isinstance(f, ast.Attribute) else f  # ChatPromptTemplate.from_messages(...)
        cls = _unseen.resolve(fn, tree, head)
        mod = getattr(cls, "__module__", "") or ""
        return inspect.isclass(cls) and mod.startswith("langchain_core.") and any(
            p in [c.__name__ for c in cls.__mro__] for p in PURE_STEPS)
    return False
