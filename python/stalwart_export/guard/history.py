"""The session's history the guard decides over (SPEC 12.1 rule 2, rules 5-7): one entry per
guarded call, kept in the graph's state under `HISTORY_KEY`, so a checkpointer keeps it across
turns, and chained so that an edit, a reorder or a removal inside it is seen.

An entry is a JSON object:

    {"v": 1, "batch": 6, "i": 1, "turn": 2, "node": "tools",
     "tool": "refund_card", "args": {...}, "call_id": "call_1",
     "decision": "confirm", "reasons": ["write"], "answer": "approve", "ran": true,
     "outside": false, "facts": {"order_paid": true}, "proposed": null,
     "prev": "<hex>", "mac": "<hex>"}

* `batch` is the number of entries the history held when the entry's batch was decided (the
  calls one model turn asked for, which may run at once) and `i` the call's index in the model's
  message; `(batch, i)` orders the history and names each entry once. A batch may skip an index
  (a call something else answered, such as a person rejecting it in HumanInTheLoopMiddleware,
  never reaches the guard).
* `ran` says whether the tool ran; `outside` marks content from outside (a `reads_outside`
  tool that ran); `facts` holds the fact values read from its answer; `answer` is the person's
  (`approve`, `edit`, `reject`, or null when nobody was asked); `proposed` is the model's call
  when the person edited it.
* The chain: every entry of a batch carries `prev`, the head of the history before its batch;
  `mac` is SHA-256 (HMAC-SHA-256 when the guard has a `key`) over the entry's canonical JSON
  (sorted keys, no spaces) without `mac`; a batch's head is the MAC over `prev` and its entries'
  MACs in order. The history before anything ran has the head MAC("stalwart-guard-history/1").
  Calls of one batch chain from the same head because they are decided at once (LangGraph runs
  them as parallel tasks that cannot see each other's entries).

Verifying recomputes every MAC and head: an entry edited, dropped from the middle, reordered or
added out of place makes the history invalid. What it cannot see: the newest batch dropped
whole (a session resumed from an earlier checkpoint looks exactly so; LangGraph allows it), or,
without a key, a history rewritten whole by someone who recomputes every hash (give `key=`).

The state channel's reducer `merge_history` keeps the entries by `(batch, i)`: an update may
carry the whole list or only new entries, and an entry already kept is never replaced, so a
later state update cannot rewrite one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any, Annotated

#: The graph-state key the history lives under.
HISTORY_KEY = "stalwart_guard"
GENESIS = b"stalwart-guard-history/1"
ENTRY_VERSION = 1


def _place(e: Any) -> tuple[int, int] | None:
    if not isinstance(e, dict):
        return None
    b, i = e.get("batch"), e.get("i")
    if isinstance(b, int) and isinstance(i, int) and not isinstance(b, bool) and not isinstance(i, bool):
        return b, i
    return None


def merge_history(left: list | None, right: list | None) -> list:
    """The state reducer of `HISTORY_KEY`: the entries of both by `(batch, i)`, those already in
    `left` kept as they are, sorted. Anything that is not an entry is kept at the end as it is,
    so that verification sees it and refuses (nothing is silently dropped)."""
    left = list(left or [])
    if not right:
        return left
    if not isinstance(right, list):
        right = [right]
    by_place: dict[tuple[int, int], Any] = {}
    odd: list[Any] = []
    for e in left + right:
        p = _place(e)
        if p is not None:
            by_place.setdefault(p, e)
        elif not any(o is e for o in odd):
            odd.append(e)
    return [by_place[k] for k in sorted(by_place)] + odd


#: The annotation a hand-built graph's state gives the history key:
#: `class State(MessagesState): stalwart_guard: GuardHistory`.
GuardHistory = Annotated[list, merge_history]


def _canonical(entry: dict) -> bytes:
    body = {k: v for k, v in entry.items() if k != "mac"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


class Chain:
    """The MAC of the history chain: HMAC-SHA-256 with `key`, else SHA-256."""

    def __init__(self, key: bytes | str | None) -> None:
        self.key = key.encode("utf-8") if isinstance(key, str) else key
        self.genesis = self.mac(GENESIS)

    def mac(self, data: bytes) -> str:
        if self.key:
            return hmac.new(self.key, data, hashlib.sha256).hexdigest()
        return hashlib.sha256(data).hexdigest()

    def seal(self, entry: dict) -> dict:
        """`entry` with its `mac` set."""
        entry = dict(entry)
        entry.pop("mac", None)
        entry["mac"] = self.mac(_canonical(entry))
        return entry

    def head(self, prev: str, macs: list[str]) -> str:
        return self.mac(("batch|" + prev + "|" + "|".join(macs)).encode("ascii"))


@dataclass
class Session:
    """What the history says, once verified: the state the guard's rules read (SPEC 3's session
    latches). `problem` is set (and nothing else may be trusted) when the history is invalid."""

    entries: list[dict]
    head: str
    ran: set[str] = field(default_factory=set)
    #: (tool, turn) -> calls that ran.
    counts: dict[tuple[str, int], int] = field(default_factory=dict)
    tainted: bool = False
    problem: str | None = None

    def count(self, tool: str, turn: int | None) -> int:
        """Calls of `tool` that ran in the session (`turn` None) or in turn `turn`."""
        if turn is None:
            return sum(c for (t, _), c in self.counts.items() if t == tool)
        return self.counts.get((tool, turn), 0)

    def latest_answer(self, tool: str, same: str | None, args: dict) -> dict | None:
        """The newest entry of `tool` that ran (and, with `same`, was called with the same
        `same` argument as `args`), or None."""
        for e in reversed(self.entries):
            if e.get("tool") != tool or not e.get("ran"):
                continue
            if same is not None:
                if same not in args or (e.get("args") or {}).get(same) != args[same]:
                    continue
            return e
        return None


def verify(history: Any, chain: Chain) -> Session:
    """The session of `history` (the state's list), verified entry by entry."""
    if history is None:
        return Session([], chain.genesis)
    if not isinstance(history, list):
        return Session([], chain.genesis, problem=f"the history in the state is {type(history).__name__}, not a list")
    s = Session(list(history), chain.genesis)
    head = chain.genesis
    k = 0
    while k < len(history):
        first = history[k]
        if not isinstance(first, dict):
            s.problem = f"entry {k} of the history is not an entry ({type(first).__name__})"
            return s
        batch = first.get("batch")
        if batch != k:
            s.problem = f"entry {k} of the history is out of place (it says it starts batch {batch!r})"
            return s
        macs: list[str] = []
        j = k
        last_i = -1
        while j < len(history) and isinstance(history[j], dict) and history[j].get("batch") == batch:
            e = history[j]
            i = e.get("i")
            if not isinstance(i, int) or isinstance(i, bool) or i <= last_i or e.get("v") != ENTRY_VERSION:
                s.problem = f"entry {j} of the history is out of place (batch {batch}, call {i!r})"
                return s
            last_i = i
            if e.get("prev") != head:
                s.problem = (f"entry {j} of the history ({e.get('tool')!r}) does not follow the one before it: "
                             "an entry was removed, added or changed before it")
                return s
            if not isinstance(e.get("mac"), str) or not hmac.compare_digest(e["mac"], chain.mac(_canonical(e))):
                s.problem = f"entry {j} of the history ({e.get('tool')!r}) was changed after it was written"
                return s
            macs.append(e["mac"])
            if e.get("ran"):
                tool = e.get("tool")
                s.ran.add(tool)
                key = (tool, e.get("turn", 0))
                s.counts[key] = s.counts.get(key, 0) + 1
                if e.get("outside"):
                    s.tainted = True
            j += 1
        head = chain.head(head, macs)
        k = j
    s.head = head
    return s
