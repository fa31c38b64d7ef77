"""Exporting a node whose function builds an agent and runs it (issue 28 item 1, issue 29 item 3;
SPEC 2.2 `subgraph`, 12.1, 12.5). `_inner_agents` reads the constructor calls; here the node is
written: a `subgraph` node running the agent's export (as a compiled agent added as the node is),
the guard inside it credited only when the node passes the guard's history in and out, what the
function does besides (tools it calls itself) kept on steps around the agent, and what cannot be
read an `opaque` entry (QG024)."""

from __future__ import annotations

import ast
from typing import Any

from .. import _code
from ..guard import HISTORY_KEY
from . import _guarded, _inner_agents, _unseen

#: What holds and what does not when the guard's history restarts at each run (SPEC 12.1's rules).
SESSION_RULES = ("the guard inside starts each run of the agent with an empty history, so across the node's runs "
                 "`order.after`, `order.not_after` and `at_most` (rule 5) and the taint of outside content read "
                 "before the run (rule 7) do not hold; each call's own checks (rules 1, 3, 4, and rule 8's person "
                 "asked for every write) still do")


def export(walker: Any, name: str, node: dict, prov: dict, fn: Any, tree: ast.AST) -> bool:
    """Write node `name` (its function `fn`, parsed `tree`) when its code builds an agent
    (`_inner_agents.find`); False when it builds none (the node is read as before). `walker`: the
    exporter's walk of the graph (`_walk.GraphExport`)."""
    mod = (getattr(_code.plain_function(fn), "__module__", "") or "").split(".")[0]
    if mod in ("langgraph", "langchain", "langchain_core", "stalwart_export"):
        return False  # the framework's own node functions (a prebuilt agent's) build no agent
    inners = _inner_agents.find(fn, tree)
    if not inners:
        return False
    built = [i for i in inners if i.agent is not None]
    direct, unread = _other_effects(walker, name, fn, tree, inners, [i.agent for i in built])
    for i in inners:
        walker.unread(name, node, fn, i.unread)
    for extra in built[1:]:
        walker.unread(name, node, fn, [_unseen.Unread(
            "subgraph", f"builds a second agent ({extra.ctor_name}(...)) in the same function: only one agent a "
                        "node is read; make each agent a node of its own", extra.at)])
    walker.unread(name, node, fn, unread)
    prov.pop("opaque", None)
    if not built:
        node["kind"] = "step"
        walker.kinds[name] = "step"
        prov["inner_agent"] = "built inside its function, not read (see opaque)"
        if direct:
            node["tools"] = direct
            _step_kind(walker, name, node, fn, direct)
        return True
    inner = built[0]
    where = f"subgraph '{walker.parent}'" if walker.parent else "the top graph"
    kept = _inner_agents.history_kept(tree, inner, HISTORY_KEY)
    fix = (f"pass the guard's history in and out: build the agent with a state_schema holding `{HISTORY_KEY}: "
           f"GuardHistory`, run it with the whole state (`agent.invoke(state)`), and return its `{HISTORY_KEY}` "
           f"with the update (`Command(update={{..., \"{HISTORY_KEY}\": result[\"{HISTORY_KEY}\"]}}, goto=...)`), "
           f"with `{HISTORY_KEY}: GuardHistory` in the state of {where} too; or add the agent itself as the node")
    lost: tuple[str, str] | None
    if kept is not None:
        lost = (f"node {name!r} builds the agent inside its function, and {kept}; {SESSION_RULES}", fix)
    elif not _guarded.keeps_history(walker.compiled):
        lost = (f"{where} has no `{HISTORY_KEY}: GuardHistory` in its state; {SESSION_RULES}", fix)
    elif not _guarded.keeps_history(inner.agent):
        lost = (f"the state_schema of the agent node {name!r} builds has no `{HISTORY_KEY}: GuardHistory`; "
                f"{SESSION_RULES}", fix)
    else:
        lost = None
    keep = walker.ex.inner_agents.setdefault((id(_code.plain_function(fn)), inner.line_call.lineno,
                                              inner.line_call.col_offset), inner.agent)
    gname = walker.ex.subgraph_name(keep, hint=name, lost=lost)
    walker.sub_of[name] = keep
    walker.via_function.add(name)
    file, line = _code.source_line(fn, inner.at)
    if file and line:
        walker.ex.agent_sites.setdefault(gname, {"file": _code.rel_file(file, walker.ex.base), "line": line,
                                                 "column": getattr(inner.at, "col_offset", 0) + 1})
    built_at = (f"{inner.ctor_name}(...) in helper {inner.helper}(...), called at line {line}" if inner.helper
                else f"{inner.ctor_name}(...), line {line}")
    prov["subgraph_via"] = f"an agent built in its function ({built_at})"
    if inner.replaced:
        prov["replaced_at_export"] = inner.replaced
    replaced = (f"; built again at export time with {', '.join(inner.replaced)} replaced (they change no route)"
                if inner.replaced else "")
    walker.ex.warn(walker.label(
        f"node {name!r} builds an agent ({built_at}) inside its function and runs it: "
        f"exported as a subgraph node running {gname!r}{replaced}"))
    if direct:
        gname = _wrapped(walker, name, gname, direct, fn)
    node.update(kind="subgraph", graph=gname)
    walker.kinds[name] = "subgraph"
    return True


def besides(walker: Any, name: str, node: dict, fn: Any, tree: ast.AST, agent: Any, gname: str,
            bound: dict[str, Any] | None = None) -> str:
    """For node `name` whose function runs the compiled graph `agent` (exported as `gname`): what
    else its code does - the tools it calls itself (the graph's name returned is then that of a
    subgraph holding a step calling them around the agent) and the calls it cannot resolve (opaque
    entries on the node). `bound`: the parameters a `functools.partial` binds (the agent among
    them: its runs are the agent's)."""
    direct, unread = _other_effects(walker, name, fn, tree, [], [agent])
    agent_params = {p for p, v in (bound or {}).items() if v is agent}
    unread = [u for u in unread if not (isinstance(u.at, ast.Call) and isinstance(u.at.func, ast.Attribute)
                                        and isinstance(u.at.func.value, ast.Name)
                                        and u.at.func.value.id in agent_params)]
    walker.unread(name, node, fn, unread)
    return _wrapped(walker, name, gname, direct, fn) if direct else gname


def _step_kind(walker: Any, name: str, node: dict, fn: Any, direct: list[str]) -> str:
    """`tools` when every call the step's own code makes goes through `guard.call`, else `step`
    with the warning a step calling tools gets."""
    guard, why = _guarded.step_guard(fn, direct)
    kind = walker.guarded_kind(name, guard, why, "step", direct)
    node["kind"] = kind
    if kind == "step":
        walker.ex.warn(walker.label(
            f"node {name!r} (step) calls tools {direct} directly, outside any tool node: "
            "those calls skip the tool check and any pause on a tool node"))
    return kind


def _wrapped(walker: Any, name: str, gname: str, direct: list[str], fn: Any) -> str:
    """A subgraph for a node whose code runs the agent `gname` and calls tools `direct` itself: its
    own calls may come before and after the agent's run (steps `before` and `after`, at the
    function's line)."""
    ex = walker.ex
    wname = f"{name}_code"
    i = 2
    while wname in ex.subgraphs:
        wname = f"{name}_code_{i}"
        i += 1
    loc = _code.location(fn, ex.base)
    steps = []
    for sid in ("before", "after"):
        s: dict[str, Any] = {"id": sid, "tools": list(direct)}
        _step_kind(walker, name, s, fn, direct)
        if loc is not None:
            s["location"] = dict(loc)
        steps.append(s)
    agent: dict[str, Any] = {"id": "agent", "kind": "subgraph", "graph": gname}
    if loc is not None:
        agent["location"] = dict(loc)
    ex.wrapper_nodes.append(agent)
    ex.subgraphs[wname] = {
        "nodes": [{"id": "__start__", "kind": "start"}, steps[0], agent, steps[1], {"id": "__end__", "kind": "end"}],
        "edges": [{"from": a, "kind": "fixed", "destinations": [b]} for a, b in
                  (("__start__", "before"), ("before", "agent"), ("agent", "after"), ("after", "__end__"))],
        "sends": [], "interrupts": []}
    ex.warn(walker.label(
        f"node {name!r} runs the agent {gname!r} and calls tools {direct} itself: exported as subgraph {wname!r} "
        "(its own calls before and after the agent's run)"))
    return wname


def _tool_names(obj: Any) -> set[str]:
    """The tools `obj` is or holds (a tool, a list of them, a `ToolNode`)."""
    from langchain_core.tools import BaseTool

    if isinstance(obj, BaseTool):
        return {obj.name}
    by_name = _code.attr(obj, "tools_by_name", None)
    if isinstance(by_name, dict):
        return set(by_name)
    if isinstance(obj, (list, tuple)):
        return {t.name for t in obj[:64] if isinstance(t, BaseTool)}
    if isinstance(obj, dict):
        return {t.name for t in list(obj.values())[:64] if isinstance(t, BaseTool)}
    return set()


def _other_effects(walker: Any, name: str, fn: Any, tree: ast.AST,
                   inners: list, agents: list) -> tuple[list[str], list]:
    """(the tools the function calls itself, not only hands to an agent; the calls it makes that
    the exporter cannot resolve, less the runs of the agents it built). `agents`: the compiled
    agents it runs (their tools are theirs)."""
    inside = {id(n) for n in _inner_agents.inside_args(inners)}
    in_agent: set[str] = set()
    for a in agents:
        try:
            in_agent |= {t.name for t in walker.ex.contents_of(a)[0]}
        except TypeError:  # not a StateGraph: its tools cannot be listed
            pass
    for i in inners:
        for n in i.arg_nodes:
            for sub in ast.walk(n):
                if isinstance(sub, (ast.Name, ast.Attribute)):
                    in_agent |= _tool_names(_unseen.resolve(fn, tree, sub))
    outside: set[str] = set()
    for sub in ast.walk(tree):
        if id(sub) in inside or not isinstance(sub, (ast.Name, ast.Attribute)):
            continue
        obj = _unseen.resolve(fn, tree, sub)
        outside |= _tool_names(obj)
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Call) and id(sub) not in inside:
            helper = _unseen._helper(fn, tree, sub.func)
            if helper is not None:
                for _n, o in _code.referenced_objects(helper, depth=2):
                    outside |= _tool_names(o)
    reached: list = []
    unread = _unseen.unread_calls(fn, tree, reached=reached)
    runs = {id(r) for i in inners for r in _inner_agents.runs_of(tree, i)}
    unread = [u for u in unread if id(u.at) not in runs and not any(
        i.helper_var and u.at is i.site and f"calls {i.helper_var}." in u.why for i in inners)]
    direct, _mapping = walker.step_tools(name, fn)
    for t in _guarded.guarded_functions(fn):
        if t.name not in direct:
            direct.append(t.name)
            walker.ex.tools_seen.setdefault(t.name, t)
    for t in reached:
        if t.name not in direct:
            direct.append(t.name)
            walker.ex.tools_seen.setdefault(t.name, t)
    return [t for t in direct if t not in in_agent or t in outside], unread
