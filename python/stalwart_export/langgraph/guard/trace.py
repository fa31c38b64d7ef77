"""The guard's trace: JSON Lines in the `--traces` format (SPEC 2.4; `src/input/traces.rs`), one
line per turn, with every node the run entered and every call the guard decided, so that
`stalwart verify --traces` compares real runs with the export (QG016).

A line:

    {"run": "t-42#1", "thread": "t-42", "turn": 1, "graph": "agent",
     "steps": [{"node": "model"},
               {"node": "tools"},
               {"node": "tools", "tool": "get_order", "decision": "allow", "reasons": [], "call_id": "c1"},
               {"node": "model"},
               {"node": "tools"},
               {"node": "tools", "call": "refund_card", "decision": "refuse", "reasons": ["order_rule"],
                "ran": false, "call_id": "c2"},
               {"node": "model"},
               {"node": "__end__"}]}

A node step is written when LangGraph starts the node's task (a resumed task is not written
twice); ids are qualified as the export's are (`worker/tools` for node `tools` of subgraph node
`worker`, names escaped as `escape_id` does). A call that ran has `tool`; a call that did not run
has `call` instead (and `ran: false`), so the verifier does not read it as a call made. The
decision, its reasons, the person's answer and the call id are extra keys, which the verifier
ignores.

A turn ends when the run returns and the graph is not paused; its line is then appended to the
file (and flushed). A run that pauses (an `interrupt()`) keeps its steps until it is resumed in
the same process; `TraceWriter.flush()` writes any turn still open (for a process that stops).
Runs are keyed by their `thread_id`; runs without one share one key, so give concurrent runs
thread ids.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from ..._ids import escape_id
from ...guard.doc import GuardConfigError

NO_THREAD = ""


def qualified_node(ns: str | None) -> str | None:
    """The export's qualified id of the node whose task runs in LangGraph checkpoint namespace
    `ns` (`worker:<task>|tools:<task>` -> `worker/tools`)."""
    if not ns:
        return None
    parts = [p.split(":", 1)[0] for p in ns.split("|") if p]
    return "/".join(escape_id(p) for p in parts) or None


def task_of(ns: str | None) -> str | None:
    """The task id at the end of checkpoint namespace `ns`."""
    if not ns:
        return None
    last = ns.split("|")[-1]
    return last.split(":", 1)[1] if ":" in last else None


class TraceWriter:
    """Collects each turn's steps and appends one line per turn to `path` (see the module docs).
    Thread-safe."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        parent = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(parent):
            raise GuardConfigError(f"cannot write the trace to {self.path}: directory {parent} does not exist",
                                   "create the directory, or give trace= another path")
        self._lock = threading.Lock()
        self._open: dict[str, list[dict]] = {}
        self._last_task: dict[tuple[str, str], str] = {}
        self._turns: dict[str, int] = {}
        self._graph: dict[str, str] = {}

    def node(self, thread: str, ns: str | None) -> None:
        """The run on `thread` entered the node of namespace `ns`."""
        qid = qualified_node(ns)
        if qid is None:
            return
        task = task_of(ns) or ""
        with self._lock:
            key = (thread, qid)
            if task and self._last_task.get(key) == task:
                return  # the same task, resumed after a pause
            self._last_task[key] = task
            self._open.setdefault(thread, []).append({"node": qid})

    def call(self, thread: str, step: dict) -> None:
        """A call the guard decided on `thread` (a step with `node`, and `tool` or `call`)."""
        with self._lock:
            self._open.setdefault(thread, []).append(step)

    def start(self, thread: str, graph: str) -> None:
        with self._lock:
            self._graph.setdefault(thread, graph)

    def end_turn(self, thread: str, *, finished: bool = True, error: str | None = None) -> None:
        """The turn on `thread` ended (reached its end, or stopped with `error`): write its line."""
        with self._lock:
            steps = self._open.pop(thread, None)
            for k in [k for k in self._last_task if k[0] == thread]:
                del self._last_task[k]
            graph = self._graph.pop(thread, None)
            if not steps:
                return
            if finished and error is None:
                steps.append({"node": "__end__"})
            turn = self._turns.get(thread, 0) + 1
            self._turns[thread] = turn
            line: dict[str, Any] = {"run": f"{thread or 'run'}#{turn}", "thread": thread or None, "turn": turn,
                                    "graph": graph, "steps": steps}
            if error is not None:
                line["error"] = error
            text = json.dumps(line, ensure_ascii=False, default=str)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(text + "\n")

    def flush(self) -> None:
        """Write every turn still open (paused or interrupted runs), marked `"open": true`."""
        with self._lock:
            threads = list(self._open)
        for t in threads:
            self.end_turn(t, finished=False)


def make_tracer(writer: TraceWriter, graph: Any = None) -> Any:
    """A LangChain callback handler that writes the node steps of the runs it sees to `writer`, and
    ends each turn when the run returns and its graph (`tracer.graph`) is not paused."""
    from langchain_core.callbacks import BaseCallbackHandler

    class GuardTracer(BaseCallbackHandler):
        """The guard's trace of node steps (stalwart_export.langgraph.guard.trace)."""

        raise_error = False

        def __init__(self) -> None:
            self.roots: dict[Any, str] = {}
            self.graph = graph

        def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any, parent_run_id: Any = None,
                           tags: list[str] | None = None, metadata: dict | None = None, **kw: Any) -> None:
            md = metadata or {}
            if parent_run_id is None:
                thread = str(md.get("thread_id") or NO_THREAD)
                self.roots[run_id] = thread
                writer.start(thread, str(kw.get("name") or getattr(self.graph, "name", "")))
                return
            if any(t.startswith("graph:step:") for t in tags or ()):
                writer.node(str(md.get("thread_id") or NO_THREAD), md.get("langgraph_checkpoint_ns"))

        def on_chain_end(self, outputs: Any, *, run_id: Any, parent_run_id: Any = None, **kw: Any) -> None:
            if parent_run_id is not None or run_id not in self.roots:
                return
            thread = self.roots.pop(run_id)
            if not _paused(self.graph, thread):
                writer.end_turn(thread)

        def on_chain_error(self, error: BaseException, *, run_id: Any, parent_run_id: Any = None, **kw: Any) -> None:
            if parent_run_id is not None or run_id not in self.roots:
                return
            thread = self.roots.pop(run_id)
            writer.end_turn(thread, finished=False, error=f"{type(error).__name__}: {error}"[:200])

    return GuardTracer()


def _paused(graph: Any, thread: str) -> bool:
    """Is the graph's run on `thread` paused (a next task waiting)? False without a checkpointer."""
    if not thread or getattr(graph, "checkpointer", None) in (None, False):
        return False
    try:
        snap = graph.get_state({"configurable": {"thread_id": thread}})
    except Exception:  # noqa: BLE001 - no state to read: the run is not paused
        return False
    return bool(getattr(snap, "next", ()))
