"""Where a node's or a tool's code pauses for a person, and what the answer keeps from running
(SPEC 12.5, issue 28).

* **Finding the pauses** (`find`): `interrupt()` in the function itself, and in the
  application's own helper functions it calls, followed `HELPER_DEPTH` calls deep (a helper of a
  helper of a helper): a call of a helper that pauses is read as the pause, at the call's line, and
  its return value as the answer. What pauses but cannot be placed is an `opaque` entry
  (`{"what": "pause", ...}`), never dropped: `raise NodeInterrupt(...)` (the run pauses, but what
  the person confirms and what a no stops is not in the code), a helper whose source cannot be
  read or that lies deeper than `HELPER_DEPTH`, and, for a step, `interrupt()` its code reaches by
  a way the AST walk does not follow (a method of an object, a function passed in).
* **Reading the answer** (`accepts`, `rejects`): a test holds only on a yes (`answer == "approve"`,
  `answer["action"] == "accept"`, `answer.get("type") in ("accept", "edit")`, `if answer:`), or
  holds on every no (`answer != "yes"`, `not answer`, `answer == "reject"`).
* **A tool's pause confirms** (`guards_effects`) only when every call after it that may act
  (`_code._is_pure_call` says which cannot) runs under a yes: inside an accepting `if`, or after an
  `if <no>: return/raise` at the function's own level. An answer never read, or read and then
  ignored, confirms nothing: the pause is `inside` with no tool.
* **An approval node** (`approval_routes`): `answer = interrupt(...)` at the node's own level, and
  every `Command(goto=X)` whose X is a tool node under a yes (`Command(goto="tools" if answer ==
  "approve" else "agent")`, `if answer ...: return Command(goto="tools")`, or after an early
  return on a no): the answer guards the edge into X, so the pause confirms the calls X runs.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any

from .. import _code, _sources

#: How many helper calls deep `find` follows `interrupt()`: the node's helper, its helper, and theirs.
HELPER_DEPTH = 3

ACCEPTING = frozenset({"accept", "accepted", "approve", "approved", "edit", "continue", "update", "yes",
                       "y", "ok", "confirm", "confirmed", "proceed", "allow", "allowed"})
REJECTING = frozenset({"no", "n", "reject", "rejected", "deny", "denied", "decline", "declined", "cancel",
                       "cancelled", "abort", "ignore", "stop", "refuse", "refused"})


@dataclass
class Pause:
    """A call in the function's own code that pauses: `interrupt()` (`via` None) or a helper
    that does (`via` its name). `resolved`: the callee is known to be interrupt (or a helper)."""

    call: ast.Call
    resolved: bool
    via: str | None = None


@dataclass
class Unplaced:
    """A pause the exporter cannot place: the `why` of its opaque entry, and the node of the
    function's code it is at."""

    why: str
    at: ast.AST


def _targets() -> tuple[Any, Any]:
    from langgraph.errors import NodeInterrupt
    from langgraph.types import interrupt

    return interrupt, NodeInterrupt


def _is_node_interrupt(fn: Any, exc: ast.AST) -> bool:
    _interrupt, node_interrupt = _targets()
    target = exc.func if isinstance(exc, ast.Call) else exc
    obj = _code.resolve_name(fn, target) if isinstance(target, (ast.Name, ast.Attribute)) else None
    if obj is node_interrupt or (isinstance(obj, type) and issubclass(obj, node_interrupt)):
        return True
    spelled = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
    return obj is _code._UNRESOLVED and spelled == "NodeInterrupt"


def _user_function(obj: Any) -> Any:
    """`obj` when it is a function (or bound method) of the application's own code, else None."""
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        return None
    obj = _code.unwrap_decorated(obj)
    if _code.is_library(obj):
        return None
    mod = getattr(_code.plain_function(obj), "__module__", "") or ""
    if mod.split(".")[0] in ("langgraph", "langchain", "langchain_core", "stalwart_export"):
        return None
    return obj if _sources.is_user_file(_sources.source_file(obj)) else None


def _names(fn: Any) -> set[str]:
    code = getattr(_code.plain_function(fn), "__code__", None)
    return set(_code._code_names(code)) if code is not None else set()


def _shown(fn: Any) -> str:
    return getattr(_code.plain_function(fn), "__qualname__", None) or getattr(fn, "__name__", "?")


def find(fn: Any, tree: ast.AST, depth: int = HELPER_DEPTH,
         seen: frozenset[int] = frozenset()) -> tuple[list[Pause], list[Unplaced]]:
    """The pauses in `fn`'s code (`tree`, from `_code.parse_function`) and those it cannot place,
    following the application's helpers `depth` calls deep (see the module's doc)."""
    interrupt, _ni = _targets()
    pauses = [Pause(c, r) for c, r in _code.calls_to(fn, tree, interrupt, "interrupt")]
    direct = {id(p.call) for p in pauses}
    unplaced: list[Unplaced] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None and _is_node_interrupt(fn, node.exc):
            unplaced.append(Unplaced(
                "raise NodeInterrupt(...) pauses the run, but what the person confirms and what a no stops "
                "cannot be read from it (ask with interrupt() and route on its answer)", node))
            continue
        if not isinstance(node, ast.Call) or id(node) in direct:
            continue
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        helper = _user_function(_code.resolve_name(fn, node.func))
        if helper is None or id(_code.plain_function(helper)) in seen:
            continue
        name = _shown(helper)
        names = _names(helper)
        htree = _code.parse_function(helper)
        if htree is None:
            if {"interrupt", "NodeInterrupt"} & names:
                unplaced.append(Unplaced(f"{name}(...) may pause (its code names interrupt), but its source "
                                         "cannot be read", node))
            continue
        if depth <= 0:
            if _reaches_pause(helper):
                unplaced.append(Unplaced(f"{name}(...) reaches interrupt() more than {HELPER_DEPTH} helper calls "
                                         "deep, further than the exporter follows", node))
            continue
        hp, hu = find(helper, htree, depth - 1, seen | {id(_code.plain_function(helper))})
        if hp:
            # The call of the helper is the pause, and its value the answer, only when the helper
            # always asks (every pause at its own level) and returns what the person answered: a
            # helper that may skip the question, or answers "approve" itself, confirms nothing.
            sure = all(p.resolved and _code.top_level_call(htree, p.call) for p in hp) and _returns_answer(htree, hp)
            pauses.append(Pause(node, sure, via=name))
        for u in hu:
            unplaced.append(Unplaced(f"in helper {name}(...): {u.why}", node))
    return pauses, unplaced


def _returns_answer(tree: ast.AST, pauses: list[Pause]) -> bool:
    """Does every `return` of the function (not of a nested one) give back the answer of one of
    `pauses`, or a value computed from it?"""
    calls = {id(p.call) for p in pauses}
    answer: set[str] = set()
    for p in pauses:
        answer |= answer_names(tree, p.call)
    returns = []
    stack = list(getattr(tree, "body", []))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Return):
            returns.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return bool(returns) and all(
        r.value is not None and any(id(x) in calls or (isinstance(x, ast.Name) and x.id in answer)
                                    for x in ast.walk(r.value))
        for r in returns)


def _reaches_pause(fn: Any) -> bool:
    """Does `fn`'s code reach `interrupt` or `NodeInterrupt` by name (through closures, globals
    and the functions they name, `_code.referenced_objects`)?"""
    interrupt, node_interrupt = _targets()
    try:
        return any(obj is interrupt or obj is node_interrupt for _n, obj in _code.referenced_objects(fn, depth=4))
    except Exception:  # noqa: BLE001 - reading someone's objects: never crash the export
        return False


def unfollowed(fn: Any, found: bool) -> Unplaced | None:
    """For a step whose code `find` saw no pause in (`found` False): an opaque entry when its code
    still reaches `interrupt()` by name, by a way the AST walk does not follow."""
    if found or not _reaches_pause(fn):
        return None
    return Unplaced("its code reaches interrupt() through code the exporter does not follow (a method of an object, "
                    "a function passed in or looked up at run time)", None)  # type: ignore[arg-type]


# ------------------------------------------------------------------ reading the answer
def answer_names(tree: ast.AST, call: ast.Call) -> set[str]:
    """The names `call`'s value is assigned to (`answer = interrupt(...)`, `a: str = ...`,
    `answer = ask(...)["action"]` too), at any level of the function."""
    out: set[str] = set()
    for st in ast.walk(tree):
        if isinstance(st, ast.Assign) and any(n is call for n in ast.walk(st.value)):
            for t in st.targets:
                out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(st, ast.AnnAssign) and st.value is not None and any(n is call for n in ast.walk(st.value)):
            out |= {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)}
    return out


def _is_answer(expr: ast.AST, answer: set[str], calls: set[int]) -> bool:
    """Is `expr` the answer or a part of it (`answer`, `answer["action"]`, `answer.get("type")`,
    `answer.action`, the pause call itself)?"""
    if id(expr) in calls:
        return True
    if isinstance(expr, ast.Name):
        return expr.id in answer
    if isinstance(expr, ast.Subscript):
        return _is_answer(expr.value, answer, calls)
    if isinstance(expr, ast.Attribute):
        return _is_answer(expr.value, answer, calls)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in (
            "get", "lower", "strip", "casefold", "upper"):
        return _is_answer(expr.func.value, answer, calls)
    return False


def _words(expr: ast.AST) -> list[str] | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value.lower()]
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        out = []
        for e in expr.elts:
            if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
                return None
            out.append(e.value.lower())
        return out
    return None


def _compare(test: ast.AST, answer: set[str], calls: set[int]) -> tuple[ast.cmpop, Any] | None:
    """For `<answer> op <constant>` (either side): (op, the constant's words, or True/False)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    for mine, other in ((left, right), (right, left)):
        if not _is_answer(mine, answer, calls):
            continue
        if isinstance(other, ast.Constant) and isinstance(other.value, bool):
            return op, other.value
        words = _words(other)
        if words is not None and (mine is left or not isinstance(op, (ast.In, ast.NotIn))):
            return op, words
    return None


def accepts(test: ast.AST, answer: set[str], calls: set[int] = frozenset()) -> bool:  # type: ignore[assignment]
    """Does `test` hold only when the answer is a yes?"""
    if isinstance(test, ast.BoolOp):
        parts = [accepts(v, answer, calls) for v in test.values]
        return all(parts) if isinstance(test.op, ast.Or) else any(parts)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return rejects(test.operand, answer, calls)
    if _is_answer(test, answer, calls):
        return True  # `if approved:` / `if answer["approved"]:`
    c = _compare(test, answer, calls)
    if c is None:
        return False
    op, val = c
    if val is True:
        return isinstance(op, (ast.Eq, ast.Is))
    if val is False:
        return isinstance(op, (ast.NotEq, ast.IsNot))
    if isinstance(op, (ast.Eq, ast.In)):
        return all(w in ACCEPTING for w in val)
    if isinstance(op, (ast.NotEq, ast.NotIn)):
        return bool(val) and all(w in REJECTING for w in val)
    return False


def rejects(test: ast.AST, answer: set[str], calls: set[int] = frozenset()) -> bool:  # type: ignore[assignment]
    """Does `test` hold on every no (so a branch under it catches every refusal)?"""
    if isinstance(test, ast.BoolOp):
        parts = [rejects(v, answer, calls) for v in test.values]
        return any(parts) if isinstance(test.op, ast.Or) else all(parts)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return accepts(test.operand, answer, calls)
    c = _compare(test, answer, calls)
    if c is None:
        return False
    op, val = c
    if val is True:
        return isinstance(op, (ast.NotEq, ast.IsNot))
    if val is False:
        return isinstance(op, (ast.Eq, ast.Is))
    if isinstance(op, (ast.NotEq, ast.NotIn)):
        return all(w in ACCEPTING for w in val)
    if isinstance(op, (ast.Eq, ast.In)):
        return bool(val) and all(w in REJECTING for w in val)
    return False


def _exits(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


# ------------------------------------------------------------------ a tool's pause
def _acts(fn: Any, node: ast.AST, skip: set[int], local: dict[str, str]) -> bool:
    """Is there a call in `node` (outside nested functions, other than those in `skip`) that may act?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is not node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call) and id(n) not in skip and not _code._is_pure_call(fn, n, local):
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


def guards_effects(fn: Any, tree: ast.AST, pause: ast.Call) -> bool:
    """Does the answer of `pause` (a call at the function's own level) keep every call after it
    that may act from running on a no? See the module's doc."""
    body = getattr(tree, "body", None)
    if not isinstance(body, list):
        return False
    k = next((i for i, st in enumerate(body) if any(n is pause for n in ast.walk(st))), None)
    if k is None:
        return False
    answer = answer_names(tree, pause)
    calls = {id(pause)}
    local = _code._local_imports(tree)
    st = body[k]
    # The pause's own statement: `if interrupt(...) == "yes": ...` reads it in place.
    if isinstance(st, ast.If):
        return _guarded([st], fn, answer, calls, local) and _guarded(body[k + 1:], fn, answer, calls, local)
    if not answer:
        return False  # the answer is never read
    if _acts(fn, st, calls, local):
        return False
    return _guarded(body[k + 1:], fn, answer, calls, local)


def _guarded(stmts: list[ast.stmt], fn: Any, answer: set[str], calls: set[int], local: dict[str, str]) -> bool:
    for st in stmts:
        if isinstance(st, ast.If):
            if _acts(fn, st.test, calls, local):
                return False
            if accepts(st.test, answer, calls):
                if not _guarded(st.orelse, fn, answer, calls, local):
                    return False
                continue
            if rejects(st.test, answer, calls) and _exits(st.body) and not _acts(fn, ast.Module(st.body, []), calls,
                                                                                 local):
                return True  # everything after runs on a yes only
            if not (_guarded(st.body, fn, answer, calls, local) and _guarded(st.orelse, fn, answer, calls, local)):
                return False
            continue
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None and not _acts(fn, st.value, calls,
                                                                                                local):
            if any(_is_answer(n, answer, calls) for n in ast.walk(st.value)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    answer |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            continue
        if isinstance(st, (ast.Return, ast.Raise)):
            return not _acts(fn, st, calls, local)
        if _acts(fn, st, calls, local):
            return False
    return True


# ------------------------------------------------------------------ an approval node
def _goto_parts(fn: Any, goto: ast.AST, answer: set[str], calls: set[int]) -> list[tuple[list[str] | None, bool]]:
    """(destinations, only on a yes) of each way a `goto` expression can go."""
    if isinstance(goto, ast.IfExp):
        return ([(d, g or accepts(goto.test, answer, calls)) for d, g in _goto_parts(fn, goto.body, answer, calls)]
                + [(d, g or rejects(goto.test, answer, calls))
                   for d, g in _goto_parts(fn, goto.orelse, answer, calls)])
    return [(_code.constant_strings(fn, goto), False)]


def approval_routes(fn: Any, tree: ast.AST, pause: ast.Call, toolnodes: set[str]) -> tuple[set[str], str | None]:
    """(the tool nodes the node goes to only on a yes, why not when it does not). `pause` is at
    the function's own level. Every `Command(goto=...)` naming a tool node must be under a yes;
    a goto the exporter cannot read, or one reaching a tool node on a no, credits nothing."""
    from langgraph.types import Command

    answer = answer_names(tree, pause)
    calls = {id(pause)}
    parents = _code._parents(tree)
    body = getattr(tree, "body", [])
    k = next((i for i, st in enumerate(body) if any(n is pause for n in ast.walk(st))), len(body))
    yes: set[str] = set()
    no: set[str] = set()
    for call, _resolved in _code.calls_to(fn, tree, Command, "Command"):
        goto = next((kw.value for kw in call.keywords if kw.arg == "goto"), None)
        if goto is None:
            continue  # Command(update=...) / Command(resume=...) does not route
        # Under a yes by where it is: an accepting `if` above it, the `else` of a refusing one,
        # or after a top-level `if <no>: return` that follows the pause.
        placed = False
        up = _code._ancestors(call, parents)
        child: ast.AST = call
        for anc in up:
            if isinstance(anc, ast.If):
                in_body = any(child is s for s in anc.body)
                if in_body and accepts(anc.test, answer, calls):
                    placed = True
                if not in_body and any(child is s for s in anc.orelse) and rejects(anc.test, answer, calls):
                    placed = True
            child = anc
        top = next((i for i, st in enumerate(body) if any(n is call for n in ast.walk(st))), -1)
        if top > k:
            placed = placed or any(isinstance(st, ast.If) and rejects(st.test, answer, calls) and _exits(st.body)
                                   for st in body[k + 1:top])
        for dests, only_yes in _goto_parts(fn, goto, answer, calls):
            if dests is None:
                return set(), "a Command(goto=...) it cannot read"
            for d in dests:
                if d not in toolnodes:
                    continue
                # a goto before the pause (or in a nested function) is never under its yes
                (yes if (only_yes or placed) and top >= k else no).add(d)
    if no:
        return set(), f"it goes to {sorted(no)} whatever the answer"
    if not yes:
        return set(), "no Command(goto=...) to a tool node depends on the answer"
    return yes, None
