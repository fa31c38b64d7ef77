"""Chains read through (issue 28, SPEC 12.5): a node that is, or whose function invokes, a LangChain
runnable chain.

The shapes: `prompt | model.bind_tools(tools) | parser` as the node, `RunnablePassthrough.assign(
answer=prompt | llm | StrOutputParser())`, `RunnableLambda(fn) | ...`, `RunnableParallel(...)`, a
chain held at module level and `.invoke`d inside the node's function. `read` walks the chain
(langchain-core 1.x fields): `RunnableSequence.first/middle/last`, `RunnableParallel.steps__`,
`RunnableAssign.mapper`, `RunnableBranch.branches/default`, `RouterRunnable.runnables`, a configurable
runnable's `default` and `alternatives`, a `RunnableBinding`'s `bound` (its `kwargs["tools"]`: the
model binds those tools, it does not call them), `RunnableWithFallbacks.runnable/fallbacks`, and
the functions of `RunnableLambda`, `RunnablePassthrough(func)` and `RunnableGenerator` steps, each
read as a node's function is (`_unseen`, `graph._GraphExport.step_tools`, `find_model`, `_pauses`).

What it makes of the node (`export_node`):

* a chat model in the chain, and no tool the chain runs: a `model` node; the tools it binds are
  offered, not called;
* a tool the chain runs (a tool as a step, a tool a step's function calls): a `step` calling it
  (QG001), and, when a model is there too, an opaque `model` entry (what the model chooses and
  writes is not read), as a step that makes a model at run time and runs tools is;
* what cannot be read is an `opaque` entry at the user's line (the step's `def` or class, or the
  node's call of the chain), never silence: a step of a class the exporter does not know
  (`code`), a retriever (`tools`: what it returns may be outside content), a compiled graph run in
  the chain (`subgraph`), `interrupt()` in a chain step (`pause`: pauses inside a chain are not
  placed), a function whose source cannot be read (`code`).

Prompts, output parsers, `RunnablePick`, a bare `RunnablePassthrough` and `operator.itemgetter`
steps have no effect and are read as such.
"""

from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from . import _code, _hosted, _pauses, _unseen

#: Composite runnables (classes in the MRO) read through as chains.
COMPOSITES = frozenset({"RunnableSequence", "RunnableParallel", "RunnableAssign", "RunnableBranch",
                        "RunnableEachBase", "RunnableGenerator", "RouterRunnable", "DynamicRunnable"})
#: Steps with no effect (classes in the MRO): prompts, output parsers, picks.
PURE_STEPS = frozenset({"BasePromptTemplate", "BaseMessagePromptTemplate", "BaseOutputParser",
                        "BaseGenerationOutputParser", "BaseLLMOutputParser", "RunnablePick"})
#: How deep chains referenced by a step's function are followed.
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
            if _is_runnable(alt):
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


def _is_runnable(obj: Any) -> bool:
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
        if not _is_runnable(o):
            continue
        inner = _code.unwrap_runnable(o)[0]
        if is_chain(inner) and all(inner is not x for x in out):
            out.append(inner)
    return out


def partial_runnables(runnable: Any) -> dict[str, Any]:
    """The runnables a node's `functools.partial` gives its function, by parameter name (the
    multi-agent tutorial's `functools.partial(agent_node, agent=research_agent, name="Researcher")`,
    the chain then `.invoke`d through the parameter)."""
    f = _code.attr(runnable, "func") or _code.attr(runnable, "afunc")
    if not isinstance(f, functools.partial):
        return {}
    out = {k: v for k, v in f.keywords.items() if _is_runnable(v)}
    try:
        params = list(inspect.signature(_code.unwrap_callable(f) or f.func).parameters)
    except (TypeError, ValueError):
        params = []
    for p, v in zip(params, f.args):
        if _is_runnable(v):
            out[p] = v
    return out


#: Constructors whose arguments are a chain's steps (a function given to one is coerced to a
#: `RunnableLambda`, as one piped with `|` is).
_STEP_MAKERS = frozenset({"RunnableLambda", "RunnableParallel", "RunnablePassthrough", "RunnableGenerator",
                          "RunnableMap", "RunnableBranch"})


def local_steps(fn: Any, tree: ast.AST | None) -> list[Any]:
    """The steps of chains `fn`'s code builds itself (`chain = prompt | llm | post_reply`,
    `RunnableLambda(post_reply)`, `RunnablePassthrough.assign(x=fetch)`): each function of the
    application and each chain its names resolve to (`_unseen.resolve`), in the order met.
    Lambdas written inline are part of `fn`'s own code, read with it."""
    from . import _sources

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
            elif not _is_runnable(obj):
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
            return inspect.isfunction(obj) or _is_runnable(obj)
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


def needs_reading(g: Any, runnable: Any, fn: Any) -> bool:
    """Does node `runnable` (its function `fn`) hold a chain the plain reading misses: the node is a
    chain, or its function reaches one that runs functions, tools, unknown steps, or a model the
    plain reading does not find (inside a `RunnableParallel` or `RunnablePassthrough.assign`)?"""
    if is_chain(runnable):
        return True
    from . import _sources

    if partial_runnables(runnable):
        return True
    if fn is None or _code.is_library(fn) or not _sources.is_user_file(_sources.source_file(fn)):
        return False  # a prebuilt agent's own code (create_react_agent's `prompt | model`) is read as it is
    if any(not _is_runnable(o) or is_chain(_code.unwrap_runnable(o)[0]) for o in local_steps(fn, _code.parse_function(fn))):
        return True  # a chain the function builds runs a function of the application, or another chain
    chains = referenced_chains(fn)
    if not chains:
        return False
    c = Chain()
    for ch in chains:
        read(ch, c)
    if c.funcs or c.tools or c.unread:
        return True
    return bool(c.models) and g.find_model(None, fn)[0] is None


def read_function(g: Any, name: str, f: Any, c: Chain, own: bool = False, given: frozenset[str] = frozenset()) -> None:
    """Read function `f` of node `name` as a node's function is read, into `c`: a model it reaches
    (a module-level one, or one made at run time) and the tools it binds; the tools it `.invoke`s
    and those it names (run unless only bound); what it cannot resolve; the chains it reaches (read
    through: their functions join `c.funcs`); and, for a chain step's function (`own` False), its
    pauses and the compiled graphs it runs (the node's own function has those read by the graph's
    reading)."""
    from langgraph.pregel import Pregel

    tree = _code.parse_function(f)
    qual = getattr(_code.plain_function(f), "__qualname__", "?")
    if tree is None:
        c.unread.append(Unread("code", f"the source of {qual}() cannot be read", obj=f))
        return
    rt = _unseen.runtime_model(f, tree)
    if rt is not None:
        c.add_model(f"made at run time: {rt.via}")
        c.bind(rt.tools)
        if rt.tools is None:
            c.unread.append(Unread("model", f"a chat model made at run time ({rt.via}) binds tools the exporter "
                                            "cannot name", fn=f, at=rt.unnamed or rt.at))
    model, bound = g.find_model(None, f)
    if model is not None:
        c.add_model(model)
        if bound:
            c.bind(bound)
    for ch in referenced_chains(f):
        read(ch, c)
    reached: list = []
    for u in _unseen.unread_calls(f, tree, reached=reached):
        recv = getattr(getattr(u.at, "func", None), "value", None)
        if isinstance(recv, ast.Name) and recv.id in given:
            continue  # `agent.invoke(...)` on a runnable a partial gives: read through (`read_node`)
        if own and recv is not None and built_here(f, tree, recv):
            continue  # a chain the function builds, every step of it read (`local_steps`)
        c.unread.append(Unread(u.what, u.why, fn=f, at=u.at))
    direct, _mapping = g.step_tools(name, f)
    for t in list(g.ex.tools_seen.values()):
        if t.name in direct and all(t is not x for x in c.named):
            c.named.append(t)
    for t in reached:
        c.add_tool(t)
    funcs, unread = _unseen.plain_dispatch(f, tree)
    for u in unread:
        c.unread.append(Unread(u.what, u.why, fn=f, at=u.at))
    for h in funcs:
        c.unread.append(Unread("tools", f"runs the application's function {h.__name__} with a tool call's arguments "
                                        "inside a chain", fn=f, at=tree))
    if own:
        return
    pauses, unplaced = _pauses.find(f, tree)
    for p in pauses:
        c.unread.append(Unread("pause", f"{qual}() in a chain step calls interrupt(): a pause inside a chain is not "
                                        "placed (what it confirms is not read)", fn=f, at=p.call))
    for u in unplaced:
        c.unread.append(Unread("pause", f"{qual}() in a chain step: {u.why}", fn=f, at=u.at))
    for _n, o in _code.referenced_objects(f, depth=2):
        if isinstance(o, Pregel):
            c.unread.append(Unread("subgraph", f"{qual}() in a chain step runs the compiled graph "
                                               f"{getattr(o, 'name', None)!r}, which the export does not inline there",
                                   obj=f))
            break


def read_node(g: Any, name: str, runnable: Any, fn: Any) -> Chain:
    """Everything node `name` does through its chain (`runnable` itself, or the chains its
    function `fn` reaches), read through (`read`, `read_function`)."""
    c = Chain()
    if is_chain(runnable):
        read(runnable, c)
    given = partial_runnables(runnable)
    for v in given.values():
        read(v, c)
    if fn is not None and not _code.is_library(fn):
        read_function(g, name, fn, c, own=True, given=frozenset(given))
        for step in local_steps(fn, _code.parse_function(fn)):  # chains the function builds itself
            if _is_runnable(step):
                read(step, c)  # a model, a tool, a retriever, a chain piped in the function
            elif all(step is not f for f in c.funcs):
                c.funcs.append(step)
    done = 0
    while done < len(c.funcs):  # the steps' functions, and those of the chains they reach (deduplicated)
        done += 1
        read_function(g, name, c.funcs[done - 1], c)
    # a tool the code only names and a model binds is offered, not run (SPEC 12.5, issue 28)
    for t in c.named:
        if t.name not in c.bound:
            c.add_tool(t)
    return c


def invoke_site(fn: Any, tree: ast.AST | None, given: dict[str, Any]) -> ast.AST | None:
    """The first call in `fn`'s code that runs a chain it reaches (`chain.invoke(...)`), for the
    line of an entry about the chain."""
    if fn is None or tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _unseen.RUNS:
            obj = _unseen.resolve(fn, tree, node.func.value)
            if obj is _code._UNRESOLVED and isinstance(node.func.value, ast.Name):
                obj = given.get(node.func.value.id)
            if _is_runnable(obj) or built_here(fn, tree, node.func.value):
                return node
    return None


def export_node(g: Any, name: str, node: dict, prov: dict, runnable: Any, fn: Any, c: Chain,
                tool_lists: list[list]) -> dict:
    """Node `name` (a `_GraphExport` `g`) as its chain `c` says (see the module's doc): its kind, the
    tools it runs, the models' bound tools and hosted tools, and an `opaque` entry for each thing
    unread, each at the user's line (SPEC 12.5)."""
    prov["chain"] = True
    prov.pop("opaque", None)
    for obj in c.funcs + [u.obj for u in c.unread if u.obj is not None]:
        g.ex.sources.add_object(obj)  # the files the chain's code is in: where its add_node(...) is found
    tree = _code.parse_function(fn) if fn is not None and not _code.is_library(fn) else None
    site = invoke_site(fn, tree, partial_runnables(runnable))
    runs = [t.name for t in c.tools]
    for t in c.tools:
        g.ex.tools_seen.setdefault(t.name, t)
    g.agents_as_tools(name, c.tools)
    unread = list(c.unread)
    if runs:
        node["kind"] = "step"
        node["tools"] = runs
        if c.models:
            unread.append(Unread("model", f"a chain runs a chat model ({', '.join(c.models)}) and tools itself "
                                          f"({', '.join(runs)}): what the model chooses and writes is not read",
                                 fn=fn, at=site))
        g.ex.warn(g.label(f"node {name!r} (step) runs tools {runs} through a chain, outside any tool node: those "
                          "calls skip the tool check"))
    elif c.models:
        node["kind"] = "model"
        prov["model"] = c.models[0]
        if c.bound:
            prov["bound_tools"] = list(c.bound)
        if c.bound_unnamed:
            unread.append(Unread("model", "a chat model in the chain binds tools the exporter cannot name",
                                 fn=fn, at=site))
        found = _hosted.collect(list(tool_lists) + c.tool_lists, g.label(f"the model of node {name!r}"))
        if found:
            g.ex.add_hosted(g.label(f"node {name!r}"), node, found)
    else:
        node["kind"] = "step"
    g.kinds[name] = node["kind"]
    for u in unread:
        _write(g, name, node, u, fn, site)
    return g.lg(node, **prov)


def _write(g: Any, name: str, node: dict, u: Unread, fn: Any, site: ast.AST | None) -> None:
    """One `opaque` entry at its line: `u.at` in `u.fn`'s code, else the definition of `u.obj` when
    it is the user's, else the node's call of the chain; and its warning (via `g.unread`)."""
    from . import _sources

    at, where = (u.at, u.fn) if u.at is not None else (site, fn)
    if at is not None and where is not None:
        g.unread(name, node, where, [_unseen.Unread(u.what, u.why, at)])
        return
    g.unread(name, node, None, [_unseen.Unread(u.what, u.why, None)])
    if u.obj is not None and _sources.is_user_file(_sources.source_file(u.obj)):
        loc = _code.location(u.obj, g.ex.base)
        if loc is not None:
            entry = next(o for o in node["opaque"] if o["what"] == u.what and o["why"] == u.why)
            entry.setdefault("location", loc)
