"""Where the SDK guard keeps its history (SPEC 12.1 "The history ... lives in the graph's state",
13.1 "its history in the run context and the session"): `GuardSession`, a `Session` for
`Runner.run(session=...)` wrapping the application's own (`SQLiteSession`, a Redis or SQLAlchemy
session: any that stores the items it is given), or kept in memory when there is none.

The history is the LangGraph guard's (`guard/history.py`): one sealed record per decided call,
each chained to the one before it (HMAC-SHA-256 with the guard's `key`, bound to the session's
id), so a record edited, reordered or removed from the middle makes every later call refused
(`history_invalid`). In the application's session the records are items of their own type
(`RECORD_TYPE`), beside the conversation: the wrapper leaves them out of what the SDK reads
(`get_items`), keeps them through `pop_item` and `clear_session` (a history is never shortened
or reset), and reads them back at every decision, so session rules hold across `Runner.run`
calls, processes and wrappers sharing the session. Reach the session only through the wrapper:
the plain session would hand the records to the model as input.

Also kept: the calls the guard put to the person (`ASKED_TYPE`, sealed the same way: the call's
digest and the reasons shown), so that a call runs only as it was shown, and the calls decided
but not yet run (`pending`, in memory), which `at_most` counts so that calls of one model
message run concurrently can never pass a limit together (a call put to the person and never
answered stays counted in this process: stricter, never looser; the last check at the tool counts
again over the history). `pending` and the lock are the conversation's in this process, shared by
every wrapper of it (two requests of one conversation at once); another process's calls under way
are not seen until their records are written (a stated limit, python/README.md).

A question is bound to its conversation: one copied into another session is not read there.
The records this process sealed are remembered per conversation (`guard/sealed.py`, bounded) and
merged at every read, so a history whose newest records were removed from the application's
session (its `pop_item` or `clear_session` called directly, not through the wrapper) still counts
them in this process. Another process reading that session cannot know of them: the calls after
the newest record it holds may run again past `at_most` (a stated limit, as the LangGraph guard's
time travel in another process; python/README.md).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import OrderedDict
from typing import Any

from ..guard.decide import REASON_TEXT
from ..guard.history import Chain, merge_history, parse, verify
from ..guard.sealed import THREADS, Sealed

RECORD_TYPE = "stalwart_guard_record"
#: The records this process sealed, per conversation (`session_id`): bounded, as `guard/sealed.py`.
SEALED = Sealed()
ASKED_TYPE = "stalwart_guard_asked"


def _ours(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") in (RECORD_TYPE, ASKED_TYPE)


class GuardSession:
    """The guard's history for one conversation, and (with `inner`) the application's `Session`
    it lives in. Pass it as `Runner.run(..., session=s, run_config=s.run_config())` (see
    `AgentGuard.session`)."""

    def __init__(self, guard: Any, inner: Any = None) -> None:
        self.guard = guard
        self.inner = inner
        self.session_id = str(getattr(inner, "session_id", None) or f"stalwart-guard-{uuid.uuid4().hex}")
        self.session_settings = getattr(inner, "session_settings", None)
        #: The sealed records, in history order (merged with the inner session's at every read).
        self.records: list = []
        #: call id -> the sealed question record (what the person was shown).
        self.asked: dict[str, dict] = {}
        #: The person's messages the application's session holds (read at every `load`; in memory,
        #: those the runs given this object as their `session` saved), or None (the run's input is
        #: read instead): the turn is counted by them (`guard._turn`).
        self.people: list | None = None
        # shared by every wrapper of this conversation in this process (two requests at once)
        self._lock, self.pending = _shared(self._sealed_key)
        #: call id -> (Call, node): decided, not refused, not yet run (this conversation's, in this process).
        self.pending: dict[str, tuple]

    @property
    def chain(self) -> Chain:
        return self.guard.chain

    @property
    def _sealed_key(self) -> str:
        """This conversation in `SEALED`: its id under this guard's key (another key's records
        are never merged in)."""
        return f"{self.chain.genesis}:{self.session_id}"

    # ------------------------------------------------------------------ the Session protocol
    async def get_items(self, limit: int | None = None) -> list:
        """The conversation (the guard's records left out), the latest `limit` items."""
        if self.inner is None:
            return []
        items = [i for i in await self.inner.get_items() if not _ours(i)]
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list) -> None:
        if self.inner is None:  # in memory: the person's messages the runs given this session saved
            got = [i for i in items if isinstance(i, dict) and not _ours(i) and i.get("role") == "user"]
            if got:
                with self._lock:
                    self.people = (self.people or []) + got
            return
        if self.inner is not None:
            await self.inner.add_items([i for i in items if not _ours(i)])

    async def pop_item(self) -> Any:
        """The newest conversation item, removed; the guard's records are kept."""
        if self.inner is None:
            return None
        kept = []
        got = None
        while True:
            item = await self.inner.pop_item()
            if item is None or not _ours(item):
                got = item
                break
            kept.append(item)
        if kept:
            await self.inner.add_items(list(reversed(kept)))
        return got

    async def clear_session(self) -> None:
        """The conversation cleared; the guard's history kept (it is never reset)."""
        if self.inner is None:
            return
        kept = [i for i in await self.inner.get_items() if _ours(i)]
        await self.inner.clear_session()
        if kept:
            await self.inner.add_items(kept)

    # ------------------------------------------------------------------ the history
    async def load(self) -> None:
        """Merge the records (and questions) the application's session holds."""
        if self.inner is None:
            return
        items = await self.inner.get_items()
        people = [i for i in items if isinstance(i, dict) and not _ours(i) and i.get("role") == "user"]
        stored = [i.get("record") for i in items if isinstance(i, dict) and i.get("type") == RECORD_TYPE]
        asked = [i.get("record") for i in items if isinstance(i, dict) and i.get("type") == ASKED_TYPE]
        with self._lock:
            self.people = people
            self.records = merge_history(self.records, stored)
            # the records this process wrote to this conversation that the session no longer holds
            # (its newest items popped or cleared around the wrapper): counted, never forgotten
            self.records = merge_history(self.records, SEALED.missing(self._sealed_key, self.records, object()))
            for rec in asked:
                q = parse(rec) if isinstance(rec, str) and self.chain.valid(rec) else None
                if q is not None and isinstance(q.get("call_id"), str) and q.get("session") == self.session_id:
                    self.asked.setdefault(q["call_id"], q)

    def verified(self) -> Any:
        """The history's `Session` (guard/history.py), verified (call under the lock)."""
        return verify(list(self.records), self.chain, self.session_id)

    async def save(self, record: str, kind: str = RECORD_TYPE) -> None:
        if kind == RECORD_TYPE:
            SEALED.add(self._sealed_key, [record], None)
        if self.inner is not None:
            await self.inner.add_items([{"type": kind, "record": record}])

    def seal_question(self, call_id: str, digest: str, reasons: list[str]) -> str:
        """The sealed record of a question put to the person (kept in `asked`)."""
        rec = self.chain.seal({"asked": True, "call_id": call_id, "digest": digest, "reasons": list(reasons),
                               "session": self.session_id})
        self.asked[call_id] = json.loads(rec[65:]) | {"mac": rec[:64]}
        return rec

    def question(self, item: Any) -> dict | None:
        """What the guard put to the person for an interruption (`result.interruptions[k]`, or its
        call id): `{"call_id", "reasons", "why"}` (the reasons to show beside the SDK's approval:
        `tainted_call`, `irreversible_pivot`, `write`), or None when the guard did not ask it."""
        cid = item if isinstance(item, str) else getattr(getattr(item, "raw_item", None), "call_id", None)
        q = self.asked.get(cid) if isinstance(cid, str) else None
        if q is None:
            return None
        reasons = list(q.get("reasons") or [])
        return {"call_id": cid, "reasons": reasons, "why": [REASON_TEXT.get(r, r) for r in reasons]}

    def run_config(self, base: Any = None) -> Any:
        """A `RunConfig` for `Runner.run` bound to this history: `base` (or a new one) copied, with
        `ToolExecutionConfig(pre_approval_tool_input_guardrails=True)`, so the guard's refusals run
        before any approval is asked (SPEC 13.1). Every guarded call of a run without it is refused."""
        import dataclasses

        from agents import RunConfig
        from agents.run_config import ToolExecutionConfig

        rc = dataclasses.replace(base) if base is not None else RunConfig()
        te = rc.tool_execution
        rc.tool_execution = (dataclasses.replace(te, pre_approval_tool_input_guardrails=True) if te is not None
                             else ToolExecutionConfig(pre_approval_tool_input_guardrails=True))
        rc._stalwart_guard_session = self  # type: ignore[attr-defined]
        return rc


_CONVERSATIONS: OrderedDict[str, tuple[threading.Lock, dict]] = OrderedDict()
_CONVERSATIONS_LOCK = threading.Lock()


def _shared(key: str) -> tuple[threading.Lock, dict]:
    """The lock and the calls decided but not yet run of one conversation in this process, shared
    by its wrappers, so two requests of one conversation at once cannot pass a limit together
    (bounded as `SEALED`: the least recently used conversations are forgotten first)."""
    with _CONVERSATIONS_LOCK:
        got = _CONVERSATIONS.pop(key, None) or (threading.Lock(), {})
        _CONVERSATIONS[key] = got
        while len(_CONVERSATIONS) > THREADS:
            _CONVERSATIONS.popitem(last=False)
        return got


def session_of(run_config: Any) -> GuardSession | None:
    """The guard session a run's `RunConfig` is bound to (`GuardSession.run_config`), or None."""
    got = getattr(run_config, "_stalwart_guard_session", None)
    return got if isinstance(got, GuardSession) else None


def pre_approval_on(run_config: Any) -> bool:
    """Does the run's config run tool input guardrails before an approval is asked?"""
    te = getattr(run_config, "tool_execution", None)
    return getattr(te, "pre_approval_tool_input_guardrails", False) is True
