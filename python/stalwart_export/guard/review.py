"""What the person is asked, and how their answer is read (SPEC 12.1 rule 8, "confirm").

The guard asks through LangGraph's `interrupt()`. The value it raises is the shape
`HumanInTheLoopMiddleware` raises per call (`type: "tool_approval"`, `tool_call_id`, `name`,
`args`, `description`), so clients that show those show this, plus the guard's own keys:
`reasons` (codes), `why` (each reason in words), `allowed_decisions`, and `digest`, a hash of
exactly the call shown (tool, arguments, call id, history head), which an answer may carry back.

An answer is one of (anything else is read as a refusal, so the call does not run):

* approve: `{"type": "approve"}` (Agent Inbox's `{"type": "accept"}`), `True`, `"yes"`, `"approve"`;
* edit: `{"type": "edit", "edited_action": {"name": ..., "args": {...}}}` (or Agent Inbox's
  `{"type": "edit", "args": {"args": {...}}}`, or `{"type": "edit", "args": {...}}`);
* reject: `{"type": "reject", "message": "..."}` (`ignore`, `response`), `False`, `"no"`.

HumanInTheLoopMiddleware's batched answer `{"decisions": [d]}` and Agent Inbox's list `[d]` are
read by their one decision; with more than one decision (an answer to several calls, sent to a
question about one) the answer is unreadable, and the call does not run. An answer carrying a `digest` other than the one shown is refused:
it approves another call.
"""

from __future__ import annotations

import copy
import hashlib
import json
import unicodedata
from dataclasses import dataclass
from typing import Any

from .decide import REASON_TEXT, Call, Decision

APPROVE, EDIT, REJECT = "approve", "edit", "reject"
ALLOWED_DECISIONS = [APPROVE, EDIT, REJECT]


def digest(call: Call, head: str) -> str:
    """The hash of the call exactly as shown: tool, arguments, call id and history head."""
    body = json.dumps({"tool": call.tool, "args": call.args, "call_id": call.call_id, "head": head},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


#: Unicode categories a person cannot see or that change how the text around them is shown: format
#: characters (bidi controls, zero-width ones, the byte-order mark), controls, separators of lines
#: and paragraphs, surrogates, private-use and unassigned code points.
_HIDDEN = frozenset(("Cf", "Cc", "Zl", "Zp", "Cs", "Co", "Cn"))

#: Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 15.1; the
#: Python standard library does not carry it), as ranges: what a renderer shows as nothing
#: whatever its category - combining grapheme joiner, Hangul fillers, Mongolian and other
#: variation selectors, tags, and the ranges Unicode reserves for more of them; and U+2800.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
    (0x2800, 0x2800),  # not default-ignorable, but drawn blank: the Braille pattern blank
)


def _hidden(ch: str) -> bool:
    """Can a person not see `ch`, or does it change the text around it: one of the `_HIDDEN`
    categories, a default-ignorable code point, or a space other than U+0020 (which looks like
    one)?"""
    cat = unicodedata.category(ch)
    if cat in _HIDDEN or (cat == "Zs" and ch != " "):
        return True
    n = ord(ch)
    return any(lo <= n <= hi for lo, hi in _DEFAULT_IGNORABLE)


def visible(text: str) -> str:
    """`text` with every character a person cannot see, or that reorders the text around it (bidi
    controls, zero-width characters, controls), written as its `\\uXXXX` escape (as JSON would)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(c) if _hidden(c) else c for c in text)


def _escape(c: str) -> str:
    n = ord(c)
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    n -= 0x10000  # as JSON writes it: a surrogate pair
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def question(call: Call, decision: Decision, head: str) -> dict:
    """The interrupt value for confirming `call`. Its `description` shows each argument with the
    characters a person cannot see escaped (`visible`); `args` are the exact values that run."""
    why = [REASON_TEXT.get(r, r) for r in decision.reasons]
    shown = [f"  {visible(str(k))}: {visible(json.dumps(v, ensure_ascii=False, default=str))}"
             for k, v in call.args.items()]
    raw = [f"  {k}: {json.dumps(v, ensure_ascii=False, default=str)}" for k, v in call.args.items()]
    lines = [f"The tool check asks you to confirm a call of {visible(call.tool)}."]
    lines += shown
    if shown != raw:
        lines.append("Note: the arguments hold invisible or direction-changing characters, shown as \\u escapes.")
    lines += [f"Because: {w}." for w in why]
    return {
        "type": "tool_approval",
        "tool_call_id": call.call_id,
        "name": call.tool,
        "args": copy.deepcopy(call.args),
        "description": "\n".join(lines),
        "guard": "stalwart",
        "reasons": list(decision.reasons),
        "why": why,
        "allowed_decisions": list(ALLOWED_DECISIONS),
        "digest": digest(call, head),
    }


@dataclass
class Answer:
    """The person's answer: `kind` (approve, edit, reject); for an edit, the new call; for a
    reject, their message; `unreadable` when the answer was not one the guard reads."""

    kind: str
    call: Call | None = None
    message: str = ""
    unreadable: str | None = None


def read_answer(value: Any, call: Call, shown_digest: str) -> Answer:
    """The person's answer to the question about `call` (see the module docs)."""
    many = value.get("decisions") if isinstance(value, dict) and isinstance(value.get("decisions"), list) else value
    if isinstance(many, list):
        if len(many) != 1:
            return Answer(REJECT, unreadable=f"the answer holds {len(many)} decisions, and the question is about "
                          "one call: answer it with one decision")
        value = many[0]
    if value is True or (isinstance(value, str) and value.strip().lower() in ("yes", "y", "approve", "accept")):
        return Answer(APPROVE)
    if value is False or (isinstance(value, str) and value.strip().lower() in ("no", "n", "reject", "ignore")):
        return Answer(REJECT)
    if not isinstance(value, dict):
        return Answer(REJECT, unreadable=f"the answer {value!r:.80} is not one the guard reads")
    d = value.get("digest")
    if d is not None and d != shown_digest:
        return Answer(REJECT, unreadable="the answer approves another call than the one shown (its digest differs)")
    kind = str(value.get("type", value.get("action", ""))).lower()
    if kind in ("approve", "accept", "continue", "yes"):
        return Answer(APPROVE)
    if kind in ("edit", "update"):
        action = value.get("edited_action")
        if not isinstance(action, dict):
            action = value.get("args")
            if isinstance(action, dict) and isinstance(action.get("args"), dict):
                action = {"name": action.get("action", action.get("name", call.tool)), "args": action["args"]}
            elif isinstance(action, dict):
                action = {"name": call.tool, "args": action}
        if not isinstance(action, dict) or not isinstance(action.get("args"), dict):
            return Answer(REJECT, unreadable="the edit carries no arguments")
        name = action.get("name") or call.tool
        return Answer(EDIT, Call(str(name), copy.deepcopy(action["args"]), call.call_id))
    if kind in ("reject", "ignore", "response", "respond", "no"):
        msg = value.get("message", value.get("args"))
        return Answer(REJECT, message=msg if isinstance(msg, str) else "")
    return Answer(REJECT, unreadable=f"the answer type {kind!r} is not one the guard reads")
