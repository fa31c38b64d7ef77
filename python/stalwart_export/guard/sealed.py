"""The records this process sealed per thread (SPEC 12.1 "An attempt is a call"), so that none is
lost when the task that wrote it is.

A record goes to the history channel as one of its task's writes, and LangGraph drops a task's
writes when the task raises: a step (or a `Send` branch) that raises after its guarded call ran
leaves a history without that call, and the thread's next run would decide over it as if the call
had not been made. So the guard keeps, per thread (of top-level tasks: a subgraph's channel holds
what its input carried), the records it wrote, in process memory as `attempts.py` keeps attempts;
a call decided over a history that lacks some of them has them merged in (they are counted) and
written again with the task's writes. Records of the same superstep are not merged: they are the
siblings of the call's batch, or calls of concurrent branches which the superstep's lane orders.
Merged records that do not extend the history (another record at their place) make the history
invalid, and the call is refused (`history_invalid`): never a record dropped.

Two runs of one thread at once (a client sending two messages together) read the same history:
while a `guard.call` of one superstep is decided, run and sealed, a call of another superstep of
the thread that bears a limit is refused (`concurrent`), as its history cannot hold the other's
record yet. The memory is this process's, bounded (the newest threads and records).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager

#: How many threads, and records per thread, are remembered (the oldest go first).
THREADS = 4096
PER_THREAD = 512


class Sealed:
    """The records written per thread, in the order written."""

    def __init__(self) -> None:
        self._by_thread: OrderedDict[str, dict[str, object]] = OrderedDict()
        self._lock = threading.Lock()
        #: Per thread, the supersteps with a guard.call under way, and how many.
        self._running: dict[str, dict[object, int]] = {}

    @contextmanager
    def running(self, thread: str, step: object):
        """Hold a place for one call of `thread` made in superstep `step`, while it is decided, run
        and sealed; yields whether a call of another superstep of the thread is under way (two runs
        of one thread at once: the other's record is not in this call's history yet)."""
        with self._lock:
            mine = self._running.setdefault(thread, {})
            busy = any(s != step and n for s, n in mine.items())
            mine[step] = mine.get(step, 0) + 1
        try:
            yield busy
        finally:
            with self._lock:
                mine = self._running.get(thread, {})
                mine[step] = mine.get(step, 1) - 1
                if not mine[step]:
                    mine.pop(step, None)
                if not mine:
                    self._running.pop(thread, None)

    def add(self, thread: str, records: list, step: object) -> None:
        """`records` were written to `thread`'s history by a task of superstep `step`."""
        with self._lock:
            mine = self._by_thread.pop(thread, None) or {}
            for r in records:
                if isinstance(r, str) and r not in mine:
                    mine[r] = step
            while len(mine) > PER_THREAD:
                del mine[next(iter(mine))]
            self._by_thread[thread] = mine
            while len(self._by_thread) > THREADS:
                self._by_thread.popitem(last=False)

    def missing(self, thread: str, history: list | None, step: object) -> list:
        """The records written to `thread` by tasks of supersteps other than `step` that `history`
        does not hold, in the order written (the calls of this superstep's other tasks are their
        batch's siblings or are serialised by its lane, `concurrent.py`)."""
        with self._lock:
            mine = self._by_thread.get(thread)
            if not mine:
                return []
            mine = [r for r, s in mine.items() if s != step]
        held = set(r for r in history or () if isinstance(r, str))
        return [r for r in mine if r not in held]
