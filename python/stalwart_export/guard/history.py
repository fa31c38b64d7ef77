"""The session's history the guard decides over (SPEC 12.1 rule 2, rules 5-7): one entry per
guarded call, kept in the graph's state under `HISTORY_KEY`, so a checkpointer keeps it across
turns, and chained so that an edit, a reorder or a removal inside it is seen.

In the state an entry is one text, a *record*: `<mac>:<body>`, where `body` is the entry's
canonical JSON (sorted keys, no spaces) and `mac` 64 hex digits. `read_history(state)` gives the
entries as mappings. An entry:

    {"v": 1, "batch": 6, "i": 1, "turn": 2, "human": "<message id>", "node": "tools",
     "tool": "refund_card", "args": {...}, "call_id": "call_1",
     "decision": "confirm", "reasons": ["write"], "answer": "approve", "ran": true,
     "outside": false, "facts": {"order_paid": true}, "proposed": null, "prev": "<hex>"}

* `batch` is the number of entries the history held when the entry's batch was decided (the
  calls one model turn asked for, which may run at once) and `i` the call's index in the model's
  message; `(batch, i)` orders the history and names each entry once. A batch may skip an index
  (a call something else answered, such as a person rejecting it in HumanInTheLoopMiddleware,
  never reaches the guard).
* `turn` is the guard's count of the person's turns, `human` the mark of the person's message
  that started it (`run.turn_of`): per-turn limits count by them.
* `ran` says whether the tool ran; `outside` marks content from outside (a `reads_outside`
  tool that ran); `facts` holds the fact values read from its answer; `answer` is the person's
  (`approve`, `edit`, `reject`, or null when nobody was asked); `proposed` is the model's call
  when the person edited it.
* The chain: every entry of a batch carries `prev`, the head of the history before its batch;
  `mac` is SHA-256 (HMAC-SHA-256 when the guard has a `key`) over the body; a batch's head is the
  MAC over `prev` and its entries' MACs in order. The history before anything ran has the head
  MAC("stalwart-guard-history/1"). Calls of one batch chain from the same head because they are
  decided at once (LangGraph runs them as parallel tasks that cannot see each other's entries).

Verifying recomputes every MAC and head: an entry edited, dropped from the middle, reordered or
added out of place makes the history invalid. What it cannot see: the newest batch dropped
whole (a session resumed from an earlier checkpoint looks exactly so; LangGraph allows it), or,
without a key, a history rewritten whole by someone who recomputes every hash (give `key=`).

Records are immutable texts, so a record verified once verifies again: the guard keeps the
records it has checked, the batch heads it has computed and the sessions it has verified in
bounded caches keyed by the texts themselves, so a call re-reads a long history at the cost of
comparing it with the one verified before (a change anywhere misses the cache and is verified).

The state channel's reducer `merge_history` keeps the records by `(batch, i)`: an update may
carry the whole list or only new records, and a record already kept is never replaced, so a
later state update cannot rewrite one; a different record at a place already taken is kept
beside it, and the history no longer verifies (never one of the two dropped).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from . import state as _state

#: The graph-state key the history lives under.
HISTORY_KEY = "stalwart_guard"
GENESIS = b"stalwart-guard-history/1"
ENTRY_VERSION = 1
#: Records (and batch heads) a cache keeps; the oldest go first.
CACHE_SIZE = 50_000


class _Lru(OrderedDict):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: Any, value: Any) -> Any:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)
        return value


_MISSING = object()
_PARSED = _Lru(CACHE_SIZE)


def canonical(entry: dict) -> str:
    """An entry's body: its canonical JSON without `mac`, in ASCII (every other character
    escaped), so that any text the entry holds can be sealed and stored by any checkpointer."""
    body = {k: v for k, v in entry.items() if k != "mac"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


def encode(entry: dict) -> str:
    """The record of an entry that carries its own `mac` (as `read_history` gives it)."""
    return f"{entry.get('mac', '')}:{canonical(entry)}"


def parse(record: Any) -> dict | None:
    """The entry of a record (with its `mac`), or None when it is not a record. Cached."""
    if not isinstance(record, str):
        return None
    got = _PARSED.get(record, _MISSING)
    if got is not _MISSING:
        return got
    entry = None
    if len(record) > 65 and record[64] == ":":
        try:
            body = json.loads(record[65:])
        except ValueError:
            body = None
        if isinstance(body, dict):
            entry = dict(body, mac=record[:64])
    return _PARSED.put(record, entry)


def read_history(state_or_records: Any) -> list[dict]:
    """The history's entries as mappings (from a state holding `HISTORY_KEY` - a mapping, a
    dataclass or a pydantic model - or its list);
    records that are not entries are left out."""
    records = (state_or_records if isinstance(state_or_records, (list, tuple)) or state_or_records is None
               else _state.get(state_or_records, HISTORY_KEY))
    return [dict(e) for e in (parse(r) for r in records or []) if e is not None]


def _place(record: Any) -> tuple[int, int] | None:
    e = parse(record)
    if e is None:
        return None
    b, i = e.get("batch"), e.get("i")
    if isinstance(b, int) and isinstance(i, int) and not isinstance(b, bool) and not isinstance(i, bool):
        return b, i
    return None


def merge_history(left: list | None, right: list | None) -> list:
    """The state reducer of `HISTORY_KEY`: the records of both by `(batch, i)`, those already in
    `left` kept as they are, sorted. A record at a place that holds another record is kept too,
    after it (two different records at one place are a broken history, which verification
    refuses; one is never dropped); the same record twice is one. Anything that is not a record is
    kept at the end as it is, so that verification sees it and refuses (nothing is silently
    dropped)."""
    left = list(left or [])
    if not right:
        return left
    if not isinstance(right, list):
        right = [right]
    by_place: dict[tuple[int, int], list] = {}
    odd: list[Any] = []
    for r in left + right:
        p = _place(r)
        if p is not None:
            here = by_place.setdefault(p, [])
            if r not in here:
                here.append(r)
        elif not any(o is r or (isinstance(r, str) and o == r) for o in odd):
            odd.append(r)
    return [r for k in sorted(by_place) for r in by_place[k]] + odd


#: The mark the history channel (`stalwart_export.langgraph.guard.channel`) keeps in place of an
#: update that tried to replace the history: verification reads it and says why it fails.
REPLACED = "stalwart-guard/refused-update: "


class Chain:
    """The MAC of the history chain: HMAC-SHA-256 with `key`, else SHA-256; and the records and
    heads it has verified."""

    def __init__(self, key: bytes | str | None) -> None:
        if key is not None and not isinstance(key, (bytes, str)):
            raise ValueError(f"the key must be bytes or text, not {type(key).__name__}")
        if key is not None and not key:
            raise ValueError("the key is empty (an unset environment variable?)")
        self.key = key.encode("utf-8") if isinstance(key, str) else key
        self.genesis = self.mac(GENESIS)
        self._geneses: _Lru = _Lru(4096)
        self._valid = _Lru(CACHE_SIZE)
        self._heads = _Lru(CACHE_SIZE)
        #: Sessions verified at batch boundaries: (thread, length, last record) -> (records, Session).
        self._sessions = _Lru(1024)

    def genesis_of(self, thread: str | None) -> str:
        """The head of a thread's empty history. With a key it is the MAC of the thread's id too,
        so a keyed history is bound to its thread: every record chains back to it, and another
        thread's records do not verify. Without a key it is the same for every thread (anyone
        can recompute the hashes anyway)."""
        if not self.key or thread is None:
            return self.genesis
        got = self._geneses.get(thread)
        if got is None:
            got = self._geneses.put(thread, self.mac(GENESIS + b"|thread|" + str(thread).encode("utf-8", "replace")))
        return got

    def mac(self, data: bytes) -> str:
        if self.key:
            return hmac.new(self.key, data, hashlib.sha256).hexdigest()
        return hashlib.sha256(data).hexdigest()

    def seal(self, entry: dict) -> str:
        """The record of `entry` (its MAC computed)."""
        body = canonical(entry)
        mac = self.mac(body.encode("utf-8"))
        record = f"{mac}:{body}"
        self._valid.put(record, True)
        _PARSED.put(record, json.loads(body) | {"mac": mac})
        return record

    def valid(self, record: str) -> bool:
        """Does the record's MAC match its body?"""
        got = self._valid.get(record)
        if got is None:
            ok = len(record) > 65 and hmac.compare_digest(record[:64], self.mac(record[65:].encode("utf-8")))
            got = self._valid.put(record, ok)
        return got

    def head(self, prev: str, macs: tuple[str, ...]) -> str:
        key = (prev, macs)
        got = self._heads.get(key)
        if got is None:
            got = self._heads.put(key, self.mac(("batch|" + prev + "|" + "|".join(macs)).encode("ascii")))
        return got


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
    #: The reason a call is refused with while `problem` is set.
    problem_reason: str = "history_invalid"

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


def verify(history: Any, chain: Chain, thread: str | None = None) -> Session:
    """The session of `history` (the state's list of records), verified record by record.

    A history usually is one verified before with a batch or two more: the chain keeps the
    sessions it verified at batch boundaries (keyed by the thread, the length and the last record),
    and a history that starts with one of them (every record the same) is verified from there on.
    `thread`: the thread's id, which a keyed history is bound to (`Chain.genesis_of`)."""
    genesis = chain.genesis_of(thread)
    if history is None:
        return Session([], genesis)
    if not isinstance(history, list):
        return Session([], genesis, problem=f"the history in the state is {type(history).__name__}, not a list")
    n = len(history)
    base = Session([], genesis)
    for m in range(n, max(0, n - 16), -1):
        last = history[m - 1]
        hit = chain._sessions.get((genesis, m, last)) if isinstance(last, str) else None
        if hit is not None and hit[0] == tuple(history[:m]):
            base = hit[1]
            break
    if len(base.entries) == n:
        return base
    s = Session(list(base.entries), base.head, set(base.ran), dict(base.counts), base.tainted)
    _extend(s, history, len(base.entries), chain)
    if s.problem is None:
        chain._sessions.put((genesis, n, history[-1]), (tuple(history), s))
    return s


def _extend(s: Session, history: list, k: int, chain: Chain) -> None:
    """Verify `history` from record `k` (a batch boundary) on, into `s`."""
    entries = s.entries
    for j in range(k, len(history)):
        e = parse(history[j])
        if e is None:
            r = history[j]
            if isinstance(r, str) and r.startswith(REPLACED):
                s.problem = (f"{r[len(REPLACED):]}: the history is kept as it was, and no call of this thread can be "
                             "decided over it any more (start a new thread)")
            else:
                s.problem = f"entry {j} of the history is not a record of the guard"
            return
        entries.append(e)
    head = s.head
    n = len(entries)
    while k < n:
        batch = entries[k].get("batch")
        if batch != k:
            s.problem = f"entry {k} of the history is out of place (it says it starts batch {batch!r})"
            return
        macs: list[str] = []
        j = k
        last_i = -1
        while j < n and entries[j].get("batch") == batch:
            e = entries[j]
            i = e.get("i")
            if i == last_i and isinstance(i, int):
                s.problem = (f"entry {j} of the history is a second, different record of one call (batch {batch}, "
                             f"call {i}): two different records at one place are a broken history")
                return
            if not isinstance(i, int) or isinstance(i, bool) or i <= last_i or e.get("v") != ENTRY_VERSION:
                s.problem = f"entry {j} of the history is out of place (batch {batch}, call {i!r})"
                return
            last_i = i
            if e.get("prev") != head:
                s.problem = (f"entry {j} of the history ({e.get('tool')!r}) does not follow the one before it: "
                             "an entry was removed, added or changed before it")
                return
            if not chain.valid(history[j]):
                s.problem = f"entry {j} of the history ({e.get('tool')!r}) was changed after it was written"
                return
            macs.append(e["mac"])
            if e.get("ran"):
                tool = e.get("tool")
                s.ran.add(tool)
                key = (tool, e.get("turn", 0))
                s.counts[key] = s.counts.get(key, 0) + 1
                if e.get("outside"):
                    s.tainted = True
            j += 1
        head = chain.head(head, tuple(macs))
        k = j
    s.head = head
