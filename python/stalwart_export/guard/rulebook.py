"""The rulebook the guard enforces: the record `stalwart rules compile` writes
(`DIR/record.json`, format `stalwart-rulebook-record/1`; `src/rulebook/record.rs`), read as it
is, and its routes decided under the facts at each call (SPEC 12.1 rule 6; seed chapter 45,
"The rulebook it runs under").

Reading refuses, as the verifier does: a file that is not JSON, another `format` or `version`,
a `content_hash` that does not match the record's content (it was edited after it was
compiled: the hash is SHA-256 over the record serialised compactly with `content_hash` empty,
keys in the record's own order), or a source whose `sha256` does not match its text. A Colang
file or a rule sheet is refused with the command that compiles it: the guard evaluates only the
compiled record, so the rules it enforces are exactly the ones `stalwart verify` proved.

Deciding: a tool's routes are the routes whose action names it (`refund_card`,
`execute_refund_card`, or a 2.x action `RefundCardAction`, as `src/rulebook/gate.rs`); a tool no
route names is not governed. A governed call may run when some route's path condition holds. A
condition is read in three values (true, false, unknown): a bare `$fact` is the fact's value
(`facts.py`; a fact nothing gives, and a variable no fact declares, is false, as the seed says);
`$var == literal` / `$var != literal` compares a value the application gives (`context=`); any
other atom is unknown. A condition that is unknown refuses the call, saying which atoms it
could not read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from .doc import GuardConfigError, read_text
from .facts import truthy

FORMAT = "stalwart-rulebook-record/1"
VERSION = 1
FILE_NAME = "record.json"

_COMPILE_FIX = "compile the rulebook again with `stalwart rules compile POLICY --out DIR`, and name DIR"


@dataclass(frozen=True)
class Route:
    """One route of the record: the `flow`, the `action` it executes, where (`file:line` of the
    execute), and its path condition (the record's `Cond` JSON)."""

    action: str
    flow: str
    where: str
    cond: Any


@dataclass(frozen=True)
class Atom:
    text: str
    var: str | None


class Rulebook:
    """A compiled record: its routes and atoms, and where it was read from."""

    def __init__(self, shown: str, routes: list[Route], atoms: list[Atom], content_hash: str) -> None:
        self.shown = shown
        self.routes = routes
        self.atoms = atoms
        self.content_hash = content_hash

    def routes_of(self, tool: str, tool_names: list[str]) -> list[Route]:
        """The routes whose action names `tool`."""
        return [r for r in self.routes if tool_of(r.action, tool_names) == tool]


def tool_of(action: str, tools: list[str]) -> str | None:
    """The catalogue tool an action names: itself, `execute_<tool>`, or `<Tool>Action`."""
    if action in tools:
        return action
    if action.startswith("execute_") and action[len("execute_"):] in tools:
        return action[len("execute_"):]
    if action.endswith("Action"):
        base = action[: -len("Action")]
        snake = "".join(("_" + c.lower()) if c.isupper() and i > 0 else c.lower() for i, c in enumerate(base))
        if snake in tools:
            return snake
    return None


def load_rulebook(path: Any) -> Rulebook | None:
    """The record at `path` (a folder `stalwart rules compile` wrote, or its `record.json`), or
    None for None. Raises `GuardConfigError` for anything the verifier refuses."""
    if path is None:
        return None
    if isinstance(path, Rulebook):
        return path
    if not isinstance(path, (str, os.PathLike)):
        raise GuardConfigError(f"rulebook must be the path of a compiled record folder, not {type(path).__name__}",
                               _COMPILE_FIX)
    shown = os.fspath(path)
    if os.path.isdir(path):
        rec = os.path.join(path, FILE_NAME)
        if not os.path.isfile(rec):
            raise GuardConfigError(f"the rulebook folder {shown} holds no {FILE_NAME}: the guard reads the record "
                                   "`stalwart rules compile` writes", _COMPILE_FIX)
        path, shown = rec, f"{shown.rstrip('/')}/{FILE_NAME}"
    elif not shown.lower().endswith(".json"):
        raise GuardConfigError(f"{shown} is not a compiled rulebook: the guard enforces the record `stalwart rules "
                               "compile` writes, the rules `stalwart verify` proves",
                               f"run `stalwart rules compile {shown} --out compiled/` and give rulebook='compiled/'")
    text = read_text(path, "the rulebook record")

    def bad(why: str) -> GuardConfigError:
        return GuardConfigError(f"{shown} cannot be read as a compiled rulebook: {why}", _COMPILE_FIX,
                                file=shown, line=1, column=1)

    try:
        rec = json.loads(text)
    except json.JSONDecodeError as e:
        raise bad(f"not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(rec, dict):
        raise bad("not a record: it is not a JSON object")
    fmt = rec.get("format") if isinstance(rec.get("format"), str) else ""
    if fmt != FORMAT:
        raise bad(f"its format is '{fmt}', not '{FORMAT}': it is not a record `stalwart rules compile` wrote")
    version = rec.get("version")
    if version != VERSION:
        shown_v = version if isinstance(version, int) and not isinstance(version, bool) else 0
        raise bad(f"it is a version {shown_v} record; this build reads version {VERSION}: recompile it with "
                  "`stalwart rules compile`")
    want = rec.get("content_hash")
    got = content_hash(rec)
    if want != got:
        raise bad(f"its content hash is {want} but its content hashes to {got}: it was changed after it was "
                  "compiled; recompile it with `stalwart rules compile`")
    sources = rec.get("sources") or []
    for s in sources:
        if not isinstance(s, dict) or hashlib.sha256(str(s.get("text", "")).encode()).hexdigest() != s.get("sha256"):
            raise bad(f"the source '{s.get('path') if isinstance(s, dict) else s}' it holds does not match its hash; "
                      "recompile it")
    try:
        compiled = rec["compiled"]
        atoms = [Atom(a["text"], a.get("var")) for a in compiled["atoms"]["list"]]
        paths = [s.get("path", "?") for s in sources]
        routes = []
        for r in compiled["routes"]:
            at = r["at"]
            f = paths[at["file"]] if 0 <= at["file"] < len(paths) else "?"
            routes.append(Route(r["action"], r["flow"], f"{f}:{at['line']}", r["cond"]))
    except (KeyError, TypeError, IndexError) as e:
        raise bad(f"not a record: {type(e).__name__} {e}") from None
    return Rulebook(shown, routes, atoms, want)


def content_hash(rec: dict) -> str:
    """`sha256:<hex>` over `rec` serialised compactly, keys in their order, `content_hash`
    empty: the bytes `serde_json::to_vec` writes for the verifier's `Record`."""
    copy = dict(rec)
    copy["content_hash"] = ""
    data = json.dumps(copy, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "sha256:" + hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------ deciding

_COMPARE = re.compile(r"^\$([A-Za-z_]\w*(?:\.\w+)*)\s*(==|!=)\s*(.+)$")


def _literal(text: str) -> tuple[bool, Any]:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return True, t[1:-1]
    if t in ("True", "true"):
        return True, True
    if t in ("False", "false"):
        return True, False
    if t in ("None", "null"):
        return True, None
    try:
        return True, int(t)
    except ValueError:
        pass
    try:
        return True, float(t)
    except ValueError:
        return False, None


def evaluate(cond: Any, atom_value: Callable[[int], bool | None]) -> bool | None:
    """The record's `Cond` (`"true"`, `"false"`, `{"atom": i}`, `{"not": c}`, `{"and": [..]}`,
    `{"or": [..]}`) in three values: True, False, or None (unknown)."""
    if cond == "true":
        return True
    if cond == "false":
        return False
    if isinstance(cond, dict) and len(cond) == 1:
        (k, v), = cond.items()
        if k == "atom":
            return atom_value(v)
        if k == "not":
            x = evaluate(v, atom_value)
            return None if x is None else not x
        if k == "and":
            vals = [evaluate(c, atom_value) for c in v]
            return False if False in vals else (None if None in vals else True)
        if k == "or":
            vals = [evaluate(c, atom_value) for c in v]
            return True if True in vals else (None if None in vals else False)
    return None


def atom_reader(rb: Rulebook, fact_value: Callable[[str], bool | None],
                context: dict) -> tuple[Callable[[int], bool | None], list[str]]:
    """A reader of the record's atoms at one call, and the list it fills with the atoms it could
    not read. `fact_value(name)` gives a declared fact's value (None when its answer could not be
    read); `context` holds the values the application gives."""
    unread: list[str] = []

    def lookup(path: str) -> tuple[bool, Any]:
        parts = path.split(".")
        if parts[0] not in context:
            return False, None
        v = context[parts[0]]
        for p in parts[1:]:
            if not isinstance(v, dict) or p not in v:
                return False, None
            v = v[p]
        return True, v

    def value(i: int) -> bool | None:
        if not (0 <= i < len(rb.atoms)):
            unread.append(f"atom {i}")
            return None
        a = rb.atoms[i]
        if a.var is not None and a.text == f"${a.var}":
            v = fact_value(a.var)
            if v is None:
                unread.append(a.text)
            return v
        m = _COMPARE.match(a.text)
        if m:
            ok, lit = _literal(m.group(3))
            found, v = lookup(m.group(1))
            if ok and found:
                return (v == lit) if m.group(2) == "==" else (v != lit)
        elif a.var is not None and re.fullmatch(r"\$[\w.]+", a.text):
            found, v = lookup(a.text[1:])
            if found:
                return truthy(v)
        unread.append(a.text)
        return None

    return value, unread
