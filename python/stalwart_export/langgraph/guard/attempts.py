"""Attempts (SPEC 12.1 "An attempt is a call"): the calls whose tool the guard started, kept in the
guard object so that a retry of the same call sees them.

A retry re-enters the guard with the history the first attempt started from: LangGraph's node
`RetryPolicy` runs the node again with the same input and discards the failed attempt's writes (the
guard's record among them); a retry middleware placed before the guard (`ToolRetryMiddleware`)
calls the guard again in the same task, whose writes the state has not seen yet. A record in the
state alone cannot survive that, so the guard also keeps, per call it started, the record of the
attempt (what the history holds once the call ran, or the attempt's own record when its tool
raised), keyed by the thread, the LangGraph task (a retry runs in the same task, and a run resumed
after a failure re-runs the same task), the history head the call was decided over, its place in
its batch, its tool, id and arguments.

A call found there again is refused (`retry`) before anything is decided or asked, and the
attempt's record is written again (the same sealed text, so a history that kept the first one
keeps one record): `at_most` counts the attempt, and a write is never run again on its first yes.
Only calls that a retry could push past a rule are kept: writes and tools with an `at_most` limit;
other reads are retried as the application asks. The memory is this process's: a process that
dies while a tool runs loses it (see the README's list of what the guard does not see).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from ...guard.decide import Call, Rules, refuse

#: How many attempts are remembered (the oldest go first; a retry follows its attempt closely).
KEEP = 4096

RETRY_TEXT = ("'{tool}' did not run again: it was already attempted (a retry of the same call), and its effect "
              "may have happened; an attempt is a call, so its limit counts it and a write is not repeated on the "
              "first yes: ask the person, or make a new call")


class Attempts:
    """The calls started, by `key`, with the record each attempt left (None while it runs)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple, str | None] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(rules: Rules, thread: str, task_id: str | None, head: str, index: int, call: Call) -> tuple | None:
        """The key of `call` (at `index` of its batch, decided over the history `head`), or None
        when it is not kept: outside a LangGraph task, or a read without an `at_most` limit."""
        if task_id is None:
            return None
        spec = rules.catalogue.get(call.tool)
        if spec is None or not (spec.is_write or spec.at_most is not None):
            return None
        try:
            args = json.dumps(call.args, sort_keys=True, default=repr)
        except (TypeError, ValueError):
            args = repr(call.args)
        return (thread, task_id, head, index, call.tool, call.call_id, args)

    def seen(self, key: tuple | None) -> tuple[bool, str | None]:
        """(whether `key` was attempted, the record it left)."""
        if key is None:
            return False, None
        with self._lock:
            if key not in self._seen:
                return False, None
            return True, self._seen[key]

    def start(self, key: tuple | None, record: str) -> None:
        """`key`'s tool starts; `record` is what the history holds if it raises."""
        self.done(key, record)

    def done(self, key: tuple | None, record: str) -> None:
        """The record `key` left."""
        if key is None:
            return
        with self._lock:
            self._seen.pop(key, None)
            self._seen[key] = record
            while len(self._seen) > KEEP:
                self._seen.popitem(last=False)


def retried(o: Any, stored: str | None) -> Any:
    """Outcome `o` refused as a retry, carrying the attempt's record."""
    msg = RETRY_TEXT.format(tool=o.call.tool)
    return replace(o, run=False, decision=refuse("retry", msg), reasons=["retry"], message=msg, stored=stored,
                   answer=None, proposed=None)


def retry_wrapped(tool: Any) -> tuple[Any, bool]:
    """(the tool inside `tool`'s runnable bindings, whether one of them retries: `.with_retry()`)."""
    try:
        from langchain_core.runnables.base import RunnableBindingBase
        from langchain_core.runnables.retry import RunnableRetry
    except ImportError:  # pragma: no cover
        return tool, False
    retry = False
    seen = 0
    while isinstance(tool, RunnableBindingBase) and seen < 16:
        retry = retry or isinstance(tool, RunnableRetry)
        tool = tool.bound
        seen += 1
    return tool, retry
