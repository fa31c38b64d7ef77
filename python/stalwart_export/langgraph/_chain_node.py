"""A node made of a chain (issue 28, SPEC 12.5): the node's runnable is a chain, or its function
(or `functools.partial`) invokes one it reaches or builds (`_chains.py` reads them).

`needs_reading` says when a node takes this path (the plain reading would miss something);
`read_node` reads the chain and every function its steps run as a node's function is read
(`_unseen`, `_walk.GraphExport.step_tools` and `find_model`, `_pauses`); `export_node` makes the
node:

* a chat model in the chain, and no tool the chain runs: a `model` node; the tools it binds are
  offered, not called;
* a tool the chain runs (a tool as a step, a tool a step's function calls): a `step` calling it
  (QG001), and, when a model is there too, an opaque `model` entry (what the model chooses and
  writes is not read), as a step that makes a model at run time and runs tools is;
* what cannot be read is an `opaque` entry at the user's line (the line in a step's function, the
  step's `def` or class, else the node's call of the chain), never silence: besides what
  `_chains.read` cannot read, `interrupt()` in a chain step (`pause`: pauses inside a chain are not
  placed), a function whose source cannot be read (`code`), a call a step's function makes that
  cannot be resolved (`tools`).
"""

from __future__ import annotations

import ast
from typing import Any

from .. import _code, _hosted, _sources
from . import _pauses, _unseen
from ._chains import (Chain, Unread, built_here, is_chain, is_runnable, local_steps, partial_runnables, read,
                      referenced_chains)


def needs_reading(g: Any, runnable: Any, fn: Any) -> bool:
    """Does node `runnable` (its function `fn`) hold a chain the plain reading misses: the node is a
    chain; a `functools.partial` gives its function a runnable; or its function (the application's
    own, not a prebuilt agent's) builds a chain running its functions or another chain, or reaches
    one that runs functions, tools, unknown steps, or a model the plain reading does not find
    (inside a `RunnableParallel` or `RunnablePassthrough.assign`)?"""
    if is_chain(runnable):
        return True
    if partial_runnables(runnable):
        return True
    if fn is None or _code.is_library(fn) or not _sources.is_user_file(_sources.source_file(fn)):
        return False  # a prebuilt agent's own code (create_react_agent's `prompt | model`) is read as it is
    steps = local_steps(fn, _code.parse_function(fn))
    if any(not is_runnable(o) or is_chain(_code.unwrap_runnable(o)[0]) for o in steps):
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
            if is_runnable(step):
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
            if is_runnable(obj) or built_here(fn, tree, node.func.value):
                return node
    return None


def export_node(g: Any, name: str, node: dict, prov: dict, runnable: Any, fn: Any, c: Chain,
                tool_lists: list[list]) -> dict:
    """Node `name` (a `GraphExport` `g`) as its chain `c` says (see the module's doc): its kind, the
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
            hosted = [h.name for h in _hosted.collect(list(tool_lists) + c.tool_lists, g.label(f"node {name!r}"))]
            unread.append(Unread("model", f"a chain runs a chat model ({', '.join(c.models)}) and tools itself "
                                          f"({', '.join(runs)}): what the model chooses and writes is not read"
                                 + (f", nor the provider-hosted tools it is bound with ({', '.join(hosted)}), which "
                                    "a step cannot hold" if hosted else ""), fn=fn, at=site))
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
