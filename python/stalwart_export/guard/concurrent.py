"""Concurrent branches (SPEC 12.1 "Concurrent branches share one record"): calls that `guard.call`
decides in tasks LangGraph runs at once - the branches of a `Send` fan-out, or parallel steps of
one superstep - are decided over one serialised history.

The tasks of one superstep each start from the same history (the channel's value when the
superstep began; a `Send` payload carries at most a copy of it) and cannot see each other's
writes until the superstep ends. So the guard keeps, per superstep, a *lane*: a lock and the
records its calls sealed so far, in order. A call takes the lane's lock, is decided over the
superstep's history with the lane's records after it (each record a batch of its own, chained
on the one before, as sequential calls are), runs, is sealed and added to the lane, and only
then lets the next call in: `at_most` and the order rules hold across the branches, and a
`reads_outside` read in one branch taints the calls that come after it in the others. Each
task writes the lane's records so far with its own, so a record is never lost when a branch's
writes are dropped (a branch that pauses or fails): the reducer keeps each record once.

A lane is keyed by the thread and the checkpoint the top graph's superstep started from (LangGraph
gives every task, a subgraph's included, the id of that checkpoint; each run and each superstep has
its own, so two runs never share a lane). So the branches of a `Send` into a subgraph share one
lane too.
A run resumed after a pause runs the same superstep again from the same checkpoint, and finds the
lane its earlier pass left (in this process). A subgraph's task reads its own graph's channel,
which holds only what the `Send` payload carried: when every record it holds is the top graph's or
the lane's, the top graph's history at the superstep's start (read once per lane from the
checkpointer) is merged in, so a payload without the history is tied too; a subgraph with a
history of its own (run by a function that passes on only what it returns) keeps it.

Where a call's task cannot be tied to one serialised history - a `Send` task whose graph channel
the guard cannot read; a whole state a `Send` gives a guarded tool node (its batch is decided over
the state it was given, beside the others); a place of a model message's batch that another task of
the superstep already decided (`Claims`) - a call that bears a limit (`at_most`, an order rule, or a
write) is refused (`concurrent`), and the exporter does not credit such a tool node
(`_guarded.fan_outs`); other reads are decided over what the task holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: How many lanes are remembered (the oldest go first; a superstep's lane is done with when it ends).
KEEP = 1024

CONCURRENT_TEXT = ("'{tool}' did not run: it is called in a task LangGraph runs alongside others (a Send fan-out), "
                   "and the guard cannot tie this task to the thread's history, so its limits could not hold across "
                   "the branches; call it through guard.call in a node of the graph whose state keeps the history "
                   "(stalwart_guard: GuardHistory)")

#: The refusal text of a limit-bearing call made while a call of another run of the thread is under way.
OTHER_RUN_TEXT = ("'{tool}' did not run: another run of this thread is making a guarded call at the same time (two "
                  "runs of one thread at once), and its record is not in this run's history yet, so limits could "
                  "not hold; run one thread's messages one after another, then ask again")

#: The refusal text of a limit-bearing call made outside any LangGraph run (no run config).
OUTSIDE_TEXT = ("'{tool}' did not run: guard.call was made outside a LangGraph run (there is no run config), so the "
                "guard cannot tie the call to the thread's history nor order it with other calls on that thread, "
                "and its limits could not hold; call it in a node of a graph whose state keeps the history "
                "(stalwart_guard: GuardHistory), or pass that node's config=")


@dataclass
class Lane:
    """One superstep's serialised calls: `lock` (held while a call is decided, run and sealed),
    `records`, the records its calls sealed, in order; per task, where its calls' records are
    (`mine`) and its current pass (`passes`: the task's scratchpad, how many calls it made)."""

    lock: Any = field(default_factory=threading.RLock)
    records: list = field(default_factory=list)
    mine: dict = field(default_factory=dict)
    passes: dict = field(default_factory=dict)
    #: The calls holding the lane or a lock under it, by namespace: [the lock their inner calls
    #: take turns on, how many calls of that namespace hold it].
    holders: dict = field(default_factory=dict)
    _guard: Any = field(default_factory=threading.Lock)
    #: The top graph's history when the superstep began (`top_history`), read once; None: unknown.
    top: Any = field(default=None)
    top_read: bool = False
    top_lock: Any = field(default_factory=threading.Lock)

    def top_history(self, cfg: Any, key: str) -> list | None:
        """The top graph's history when the superstep began, read once from the checkpointer (under
        a lock of its own: a call inside the call holding the lane reads it too)."""
        with self.top_lock:
            if not self.top_read:
                self.top, self.top_read = top_history(cfg, key), True
            return self.top

    @contextmanager
    def turn(self, ns: str):
        """Hold the lane for one call of the task in namespace `ns`. Calls made inside a call that
        holds it (its tool runs a graph whose tasks, in other threads, call the guard: their
        namespaces are under the holder's) do not wait for it - it waits for them - but take
        turns among themselves, on a lock of the holder's."""
        with self._guard:
            parents = [h for h in self.holders if ns.startswith(h + "|")]
            lock = self.holders[max(parents, key=len)][0] if parents else self.lock
        lock.acquire()
        with self._guard:
            mine = self.holders.setdefault(ns, [threading.RLock(), 0])
            mine[1] += 1
        try:
            yield
        finally:
            with self._guard:
                mine[1] -= 1
                if not mine[1]:
                    self.holders.pop(ns, None)
            lock.release()

    def view(self, task: str | None, pad: Any) -> int:
        """How many of the lane's records the task's next call is decided over. A task run again
        after a pause (a new pass: LangGraph gives it a new scratchpad, and matches the person's
        answers to its pauses by their order) decides each call it made before over what that call
        saw then, so that it asks the same questions in the same order; a call past those, over
        every record so far."""
        if task is None:
            return len(self.records)
        cur = self.passes.get(task)
        if cur is None or cur[0] is not pad:
            cur = self.passes[task] = [pad, 0]
        k = cur[1]
        cur[1] += 1
        mine = self.mine.get(task, [])
        return mine[k] if k < len(mine) else len(self.records)

    def replay(self, task: str | None, view: int) -> bool:
        """Is the call decided over `view` records a call of the task's earlier pass (its record is
        at `view` already)?"""
        return task is not None and view in self.mine.get(task, ())

    def sealed(self, task: str | None, record: str, view: int) -> None:
        """The call decided over `view` records sealed `record`: added at the end (a call of a
        pass again leaves its earlier record where it was: the same text, or a second record at
        its place, which the history refuses)."""
        if view < len(self.records) or record in self.records:
            return
        self.records.append(record)
        if task is not None:
            self.mine.setdefault(task, []).append(view)


class Lanes:
    """The lanes of the supersteps this guard has seen calls in (a bounded memory)."""

    def __init__(self) -> None:
        self._lanes: OrderedDict[tuple, Lane] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, key: tuple) -> Lane:
        """The lane of `key`, made on first use."""
        with self._lock:
            lane = self._lanes.pop(key, None) or Lane()
            self._lanes[key] = lane
            while len(self._lanes) > KEEP:
                self._lanes.popitem(last=False)
            return lane


def superstep(cfg: Any) -> tuple | None:
    """The key of the top graph's superstep a LangGraph task runs in, or None outside a task: the
    checkpoint the superstep started from (the config's `checkpoint_map[""]`, the same for the
    tasks of every subgraph run inside it, and again when the superstep is resumed), else the
    enclosing graph's namespace, the step and this run's own channels."""
    if not cfg:
        return None
    md = cfg.get("metadata") or {}
    conf = cfg.get("configurable") or {}
    read = conf.get("__pregel_read")
    if read is None:
        return None
    top = (conf.get("checkpoint_map") or {}).get("")
    if top:
        return ("checkpoint", top)
    step = md.get("langgraph_step")
    if step is None:
        return None
    ns = md.get("langgraph_checkpoint_ns") or conf.get("checkpoint_ns") or ""
    parent = ns.rsplit("|", 1)[0] if "|" in ns else ""
    args = getattr(read, "args", ())
    return parent, step, id(args[1]) if len(args) > 1 else id(read)


def nested(cfg: Any) -> bool:
    """Does the task run inside a subgraph (its namespace has a parent)?"""
    conf = (cfg or {}).get("configurable") or {}
    md = (cfg or {}).get("metadata") or {}
    return "|" in (md.get("langgraph_checkpoint_ns") or conf.get("checkpoint_ns") or "")


def top_history(cfg: Any, key: str) -> list | None:
    """The top graph's channel `key` in the checkpoint its superstep started from (the config's
    checkpointer and `checkpoint_map[""]`), or None when it cannot be read: no checkpointer, the
    checkpoint not saved, an async-only checkpointer."""
    conf = (cfg or {}).get("configurable") or {}
    saver = conf.get("__pregel_checkpointer")
    top = (conf.get("checkpoint_map") or {}).get("")
    if saver is None or not top or not hasattr(saver, "get_tuple"):
        return None
    try:
        got = saver.get_tuple({"configurable": {"thread_id": conf.get("thread_id"), "checkpoint_ns": "",
                                                "checkpoint_id": top}})
    except Exception:  # noqa: BLE001 - an async-only or failing checkpointer: unknown
        return None
    if got is None:
        return None
    value = (got.checkpoint.get("channel_values") or {}).get(key)
    return value if isinstance(value, list) else [] if value is None else None


def channel_value(cfg: Any, key: str) -> tuple[bool, Any]:
    """(whether the task can read the graph's channel `key`, its value when the superstep began)."""
    conf = (cfg or {}).get("configurable") or {}
    read = conf.get("__pregel_read")
    if read is None:
        return False, None
    try:
        return True, read(key, False)
    except Exception:  # noqa: BLE001 - no such channel (the channel check refuses the call) or unreadable
        return False, None


def bears_limit(spec: Any) -> bool:
    """Whether a call of the catalogue entry `spec` bears a limit that concurrent branches could
    pass together: a write, `at_most`, or an order rule (an unknown tool counts: it is refused)."""
    return spec is None or spec.is_write or spec.at_most is not None or bool(spec.after) or bool(spec.not_after)


class Claims:
    """Which task decided each place of a superstep's batches: (the superstep, the thread, the head
    the batch was decided over, the call's place) -> task. A model message's calls run as tasks of
    their own (create_agent) each decide their own place; a second task deciding a place already
    decided in the superstep (the same state or call sent twice) is a concurrent batch the guard
    cannot serialise."""

    def __init__(self) -> None:
        self._by: OrderedDict[tuple, str] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, cfg: Any, thread: str, head: str, index: int, task: str | None) -> bool:
        """Whether `task` may decide the place (it is the first, or the same task again: a retry or
        a run resumed). True outside a task."""
        step = superstep(cfg)
        if step is None or task is None:
            return True
        key = (thread, head, index) + step
        with self._lock:
            got = self._by.setdefault(key, task)
            self._by.move_to_end(key)
            while len(self._by) > 8 * KEEP:
                self._by.popitem(last=False)
            return got == task
