"""Routers that branch on the tools a model called (issue 16, item 6; SPEC 2.2 `calls`).

A router after a model node often reads the names of the tool calls in the model's last message
and returns a literal destination per tool (`if tool_call["name"] == "send_email": return
"send"`). `tool_routes` reads such a router's source and says, per destination, which tools'
calls the message may hold when the router returns it. The export writes that as the edge's
`calls` (destination -> tools), so the visit of the destination makes calls of those tools only,
and a route to the send node is not read as open to any call.

The reading is sound or it is silent. Each `return` is reached under the conditions of the `if`s
around it and the negation of the earlier `if`s that returned; a condition it understands is an
atom over the message's calls: *some* call is in S (a loop over `tool_calls`), *every* call is
(`all(...)`, or after a loop whose guards returned), the *first* call is (`tool_calls[0]`). What
an atom allows depends on how many calls a message holds:

| atom | several calls a message | one call a message (`parallel_tool_calls=False`) |
|---|---|---|
| some call in S | any tool | S |
| no call in S | the tools outside S | the tools outside S |
| every call in S | S | S |
| not every call in S | any tool | the tools outside S |
| first call in S / not in S | any tool | S / the tools outside S |

A condition it does not understand allows any tool, and so does its negation; a router that
reads another message, or computes a destination, gives that destination no `calls`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from .. import _code

ANY = None  #: an allowed set that restricts nothing


@dataclass(frozen=True)
class Atom:
    """A condition on the message's calls: `quant` is `some` (some call is in S), `every`,
    `first` (the first call is), or `current` (the call a loop over the calls is at); `names` the
    set S; `neg` the negation."""

    quant: str
    names: frozenset[str]
    neg: bool = False

    def negate(self) -> "Atom":
        return Atom(self.quant, self.names, not self.neg)

    def allows(self, single: bool) -> tuple[str, frozenset[str]] | None:
        """What the atom lets the batch hold: ("only", S), ("except", S), or `ANY`."""
        q, s = self.quant, self.names
        if self.neg:
            if q == "some":  # no call in S
                return ("except", s)
            return ("except", s) if single else ANY  # not every / first / current call not in S
        if q == "every":
            return ("only", s)
        return ("only", s) if single else ANY  # some / first / current call in S


#: A condition as a disjunction of conjunctions of atoms; `UNKNOWN` is a conjunction with no atom
#: (it restricts nothing).
Cond = list[list[Atom]]
TRUE: Cond = [[]]


def _and(a: Cond, b: Cond) -> Cond:
    return [x + y for x in a for y in b][:64]


def _or(a: Cond, b: Cond) -> Cond:
    return (a + b)[:64]


def _not(c: Cond) -> Cond:
    """The negation, keeping only what is sound: ¬(x ∧ y) = ¬x ∨ ¬y, ¬(x ∨ y) = ¬x ∧ ¬y; a
    conjunction with an unknown part (an empty one) negates to unknown."""
    out: Cond = TRUE
    for conj in c:
        if not conj:
            return TRUE  # the negation of "unknown" (or of true) restricts nothing
        out = _and(out, [[a.negate()] for a in conj])
    return out


class _Reader:
    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.msg_vars: set[str] = set()  # locals holding the last message
        self.calls_vars: set[str] = set()  # locals holding its tool_calls
        self.first_vars: set[str] = set()  # locals holding its first tool call
        self.routes: dict[str, Cond] = {}
        self.opaque = False  # a return it cannot read

    # ---------------------------------------------------------------- expressions
    def is_last_message(self, e: ast.AST) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.msg_vars
        if isinstance(e, ast.Subscript):
            sl = e.slice
            return (isinstance(sl, ast.UnaryOp) and isinstance(sl.op, ast.USub)
                    and isinstance(sl.operand, ast.Constant) and sl.operand.value == 1)
        return False

    def is_calls(self, e: ast.AST) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.calls_vars
        return isinstance(e, ast.Attribute) and e.attr == "tool_calls" and self.is_last_message(e.value)

    def is_first(self, e: ast.AST) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.first_vars
        return (isinstance(e, ast.Subscript) and self.is_calls(e.value)
                and isinstance(e.slice, ast.Constant) and e.slice.value == 0)

    @staticmethod
    def name_of(e: ast.AST) -> ast.AST | None:
        """The call expression whose name `e` reads (`c["name"]`, `c.get("name")`), or None."""
        if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and e.slice.value == "name":
            return e.value
        if (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "get"
                and e.args and isinstance(e.args[0], ast.Constant) and e.args[0].value == "name"):
            return e.func.value
        return None

    def names(self, e: ast.AST) -> frozenset[str] | None:
        """The tool names a literal (or a module constant, or `Cls.__name__`) denotes."""
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return frozenset([e.value])
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            out: set[str] = set()
            for x in e.elts:
                sub = self.names(x)
                if sub is None:
                    return None
                out |= sub
            return frozenset(out)
        if isinstance(e, (ast.Name, ast.Attribute)):
            v = _code.resolve_name(self.fn, e)
            if isinstance(v, str):
                return frozenset([v])
            if isinstance(v, (set, frozenset, list, tuple)) and all(isinstance(x, str) for x in v):
                return frozenset(v)
        return None

    def compare(self, e: ast.AST, loop_var: str | None) -> Cond | None:
        """`<name of a call> == S` / `in S` / `!=` / `not in` as a condition, or None."""
        if not (isinstance(e, ast.Compare) and len(e.ops) == 1 and len(e.comparators) == 1):
            return None
        op, left, right = e.ops[0], e.left, e.comparators[0]
        if self.name_of(left) is None and self.name_of(right) is not None and isinstance(op, (ast.Eq, ast.NotEq)):
            left, right = right, left
        subject = self.name_of(left)
        if subject is None:
            return None
        s = self.names(right)
        if s is None:
            return None
        neg = isinstance(op, (ast.NotEq, ast.NotIn))
        if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            return None
        if loop_var is not None and isinstance(subject, ast.Name) and subject.id == loop_var:
            quant = "current"  # the call a loop over the calls is at
        elif self.is_first(subject):
            quant = "first"
        else:
            return None
        a = Atom(quant, s)
        return [[a.negate()]] if neg else [[a]]

    def cond(self, e: ast.AST, loop_var: str | None) -> Cond:
        if isinstance(e, ast.BoolOp):
            parts = [self.cond(v, loop_var) for v in e.values]
            out = parts[0]
            for p in parts[1:]:
                out = _and(out, p) if isinstance(e.op, ast.And) else _or(out, p)
            return out
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return _not(self.cond(e.operand, loop_var))
        got = self.compare(e, loop_var)
        if got is not None:
            return got
        # all(c["name"] in S for c in calls) / any(...)
        if (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("all", "any")
                and len(e.args) == 1 and isinstance(e.args[0], ast.GeneratorExp)):
            gen = e.args[0]
            if (len(gen.generators) == 1 and not gen.generators[0].ifs and self.is_calls(gen.generators[0].iter)
                    and isinstance(gen.generators[0].target, ast.Name)):
                inner = self.compare(gen.elt, gen.generators[0].target.id)
                if inner is not None and len(inner) == 1 and len(inner[0]) == 1:
                    a = inner[0][0]
                    if e.func.id == "any":  # any(c in S) / any(c not in S) = not every(c in S)
                        return [[Atom("every", a.names, True)]] if a.neg else [[Atom("some", a.names)]]
                    # all(c in S) / all(c not in S) = no call in S
                    return [[Atom("some", a.names, True)]] if a.neg else [[Atom("every", a.names)]]
        return TRUE

    def dest(self, e: ast.AST | None) -> str | None:
        if e is None:
            return None
        v = _code.constant_strings(self.fn, e)
        return v[0] if v and len(v) == 1 else None

    # ---------------------------------------------------------------- statements
    def block(self, body: list[ast.stmt], path: Cond, loop_var: str | None) -> tuple[Cond, bool]:
        """Read statements under `path`; returns (the condition after them, whether they always
        return)."""
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                var, val = st.targets[0].id, st.value
                for group in (self.msg_vars, self.calls_vars, self.first_vars):
                    group.discard(var)
                if self.is_last_message(val):
                    self.msg_vars.add(var)
                elif self.is_calls(val):
                    self.calls_vars.add(var)
                elif self.is_first(val):
                    self.first_vars.add(var)
                continue
            if isinstance(st, ast.Return):
                d = self.dest(st.value)
                if d is None:
                    self.opaque = True
                else:
                    self.routes[d] = _or(self.routes.get(d, []), path)
                return path, True
            if isinstance(st, ast.If):
                c = self.cond(st.test, loop_var)
                after_then, then_ret = self.block(st.body, _and(path, c), loop_var)
                after_else, else_ret = self.block(st.orelse, _and(path, _not(c)), loop_var)
                if then_ret and else_ret:
                    return path, True
                if then_ret:
                    path = after_else
                elif else_ret:
                    path = after_then
                else:
                    path = _or(after_then, after_else) if st.orelse else _or(after_then, _and(path, _not(c)))
                    path = _simplify(path)
                continue
            if isinstance(st, (ast.For, ast.AsyncFor)) and self.is_calls(st.iter) and isinstance(st.target, ast.Name):
                var = st.target.id
                saved = (set(self.msg_vars), set(self.calls_vars), set(self.first_vars))
                guards: Cond = TRUE
                for inner in st.body:
                    if isinstance(inner, ast.If) and _returns(inner.body) and not inner.orelse:
                        c = self.cond(inner.test, var)
                        self.block(inner.body, _and(path, c), var)
                        # "if the current call is in S: return" on every call: after the loop, no call is in S
                        if len(c) == 1 and len(c[0]) == 1 and c[0][0].quant == "current" and not c[0][0].neg:
                            guards = _and(guards, [[Atom("some", c[0][0].names, True)]])
                    else:
                        _, ret = self.block([inner], path if not isinstance(inner, ast.If) else path, var)
                        if ret:  # the loop returns at its first call whatever comes after
                            break
                self.msg_vars, self.calls_vars, self.first_vars = saved
                path = _and(path, guards)
                continue
            if _returns([st]) or any(isinstance(n, ast.Return) for n in ast.walk(st)):
                # a return inside a statement it does not read (while, try, with, match, other loops)
                self.opaque = True
                return path, False
        return path, False


def _returns(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return)


def _simplify(c: Cond) -> Cond:
    """An unknown (empty) conjunction in a disjunction absorbs the rest."""
    return TRUE if any(not conj for conj in c) else c


def tool_routes(router: Any, single_call: bool) -> dict[str, tuple[str, frozenset[str]]]:
    """Per destination the router returns (its literal return value), what the model's message
    may hold when it does: ("only", S) or ("except", S). Destinations it returns under conditions
    it cannot narrow are left out (any call may reach them). `single_call`: the model makes one
    call a message (`parallel_tool_calls=False` bound)."""
    tree = _code.parse_function(router)
    if tree is None or not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    r = _Reader(router)
    r.block(tree.body, TRUE, None)
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for d, cond in r.routes.items():
        allowed: Any = "unset"
        for conj in _simplify(cond):
            here: tuple[str, frozenset[str]] | None = None  # None: any tool
            for a in conj:
                here = _meet(here, a.allows(single_call))
            allowed = here if allowed == "unset" else _join(allowed, here)
            if allowed is None:
                break
        if allowed not in ("unset", None):
            out[d] = allowed
    return out


def _meet(a, b):
    """Both restrictions (None: any tool)."""
    if a is None:
        return b
    if b is None:
        return a
    (ka, sa), (kb, sb) = a, b
    if ka == "only" and kb == "only":
        return ("only", sa & sb)
    if ka == "only":
        return ("only", sa - sb)
    if kb == "only":
        return ("only", sb - sa)
    return ("except", sa | sb)


def _join(a, b):
    """Either restriction (None: any tool)."""
    if a is None or b is None:
        return None
    (ka, sa), (kb, sb) = a, b
    if ka == "only" and kb == "only":
        return ("only", sa | sb)
    if ka == "except" and kb == "except":
        return ("except", sa & sb)
    only, exc = (sa, sb) if ka == "only" else (sb, sa)
    return ("except", exc - only)


def restrict(tools: list[str], allowed: tuple[str, frozenset[str]]) -> list[str]:
    """The tools of a destination node a route lets it call."""
    kind, s = allowed
    return [t for t in tools if (t in s) == (kind == "only")]
