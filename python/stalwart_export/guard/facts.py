"""agent.yaml-style `facts:` for the guard's rulebook (SPEC 2.1, seed chapter 45 "The rulebook's
facts"), read with the verifier's rules (`src/input/facts.rs`), and read at run time from the
answers of the fact tools in the session's history.

`facts: {name: {from: tool.field, same: arg}}`, `from: tool.field == value`, or `from: caller`
(the application gives it, with the guard's `context=`). A fact's tool must be in the catalogue
and must not `reads_outside` (anyone could write what such a tool returns). Errors, at the line
and column, as the verifier's: a fact that is not a mapping, an unknown word in it, a missing
`from`, a `from` that is none of the three forms, a tool not in the catalogue or one that
`reads_outside`.

At run time a tool fact is read from the latest answer of its tool in the session (for `same:
arg`, the latest answer to a call with the same `arg` as the call being checked): true when the
field is true, a number other than 0, or a text, list or mapping that is not empty; with
`== value`, when the field equals the value. Until the tool has answered, the fact is false. An
answer that is not a JSON object (so no field can be read) leaves the fact unknown, and a call
whose rulebook decision depends on it is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from . import doc
from .catalogue import Catalogue
from .doc import GuardConfigError, Node

FACT_WORDS = ("from", "same")


@dataclass(frozen=True)
class Fact:
    """One fact: its `name`; `tool`, `field` and `equals` for a tool fact (None for `caller`);
    `same`, the argument that ties the answer to the call checked."""

    name: str
    tool: str | None
    field: str | None
    equals: str | None
    same: str | None

    @property
    def from_caller(self) -> bool:
        return self.tool is None


def load_facts(facts: Any, cat: Catalogue) -> list[Fact]:
    """Facts from a path (a YAML or JSON file with a top-level `facts:` mapping, such as
    agent.yaml) or a mapping `{name: {from: ..., same: ...}}`; [] for None."""
    if facts is None:
        return []
    if isinstance(facts, (str, os.PathLike)):
        shown = os.fspath(facts)
        root = doc.parse_file(facts, "the facts file")
        node = root.get("facts") if root.kind == "map" else None
        if node is None:
            raise GuardConfigError(f"{shown} has no `facts:` mapping",
                                   "give the agent.yaml (or a YAML file) whose `facts:` declares the facts, "
                                   "e.g. `facts: {order_paid: {from: get_order.status == paid, same: order_id}}`",
                                   file=shown, line=1, column=1)
    elif isinstance(facts, dict):
        node = doc.from_python(facts, "the facts mapping given to Guard")
    else:
        raise GuardConfigError(f"facts must be a path or a mapping, not {type(facts).__name__}",
                               "give facts='agent.yaml' or facts={'order_paid': {'from': 'get_order.status == paid'}}")
    return read_facts(node, cat)


def read_facts(node: Node, cat: Catalogue) -> list[Fact]:
    """The facts of a `facts:` tree, checked as the verifier checks them."""
    out: list[Fact] = []
    for e in doc.map_or_null(node, "`facts`").entries:
        what = f"fact '{e.key}'"
        m = doc.as_map(e.value, f"`{what}`")
        for w in m.entries:
            if w.key not in FACT_WORDS:
                raise doc.fail(w.key_loc, f"unknown word '{w.key}' in {what}",
                               "a fact has `from: tool.field` (or `tool.field == value`, or `caller`) and optionally `same: arg`")
        text, loc = doc.req_text(m, "from", f"{what}'s `from`",
                                 "write `from: tool.field`, `from: tool.field == value` or `from: caller`")
        same = doc.opt_text(m, "same", f"{what}'s `same`")
        out.append(_read_from(e.key, text, loc, same[0] if same else None, cat))
    return out


def _read_from(name: str, raw: str, loc: doc.Loc, same: str | None, cat: Catalogue) -> Fact:
    what = f"fact '{name}'"
    text = raw.strip()
    if text == "caller":
        return Fact(name, None, None, None, same)
    if "==" in text:
        lhs, v = text.split("==", 1)
        lhs, equals = lhs.strip(), v.strip().strip("\"'")
    else:
        lhs, equals = text, None

    def bad() -> GuardConfigError:
        return doc.fail(loc, f"{what}'s `from` must be `tool.field`, `tool.field == value` or `caller`, found '{text}'",
                        "name the tool whose answer gives the fact and the field read, e.g. `from: get_order.status == paid`")

    if "." not in lhs:
        raise bad()
    tool, field = lhs.split(".", 1)
    if not tool or not field or equals == "":
        raise bad()
    spec = cat.get(tool)
    if spec is None:
        raise doc.fail(loc, f"{what} is read from '{tool}', which is not in the catalogue",
                       f"name a tool of the catalogue ({', '.join(cat.tools)})")
    if spec.reads_outside:
        raise doc.fail(loc, f"{what} is read from '{tool}', which reads_outside: anyone could write what it returns, "
                            "so the runtime never reads a fact from it",
                       "read the fact from a tool whose answer your organisation controls, or supply it from your code "
                       "(`from: caller`)")
    return Fact(name, tool, field, equals, same)


def truthy(value: Any) -> bool:
    """The seed's truth of a field: true, a number other than 0, a non-empty text, list or mapping."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, (str, list, dict, tuple)):
        return len(value) > 0
    return value is not None


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def answer_object(result: Any) -> dict | None:
    """A tool's answer as a JSON object, when it is one: a mapping, or text (a ToolMessage's
    content) holding a JSON object. None when no field can be read from it."""
    if isinstance(result, dict):
        return result
    if isinstance(result, str):
        try:
            v = json.loads(result)
        except ValueError:
            return None
        return v if isinstance(v, dict) else None
    return None


def read_fact(fact: Fact, answer: dict | None) -> bool | None:
    """The fact as a tool's answer gives it: True/False, or None when the answer is not an
    object (the field cannot be read). A missing field gives false (nothing says it)."""
    if answer is None:
        return None
    value: Any = answer
    for part in (fact.field or "").split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    if fact.equals is not None:
        return _shown(value) == fact.equals
    return truthy(value)
