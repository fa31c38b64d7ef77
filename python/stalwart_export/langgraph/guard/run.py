"""A LangGraph run as the guard reads and writes it: where a call is made (`RunContext`: the task
config, the node's qualified id, the thread, the task), the graph's history channel (whether the
state can keep it, `channel_problem`; the task's writes to it, `send_records`), the person's turns
(`conversation`, `turn_of`), the model message a call belongs to (`batch_calls`), a tool's answer
(`answer_of`) and the person's question (`ask_person`, LangGraph's `interrupt()`). The guard's
middleware (`middleware.py`) and its tool node (`node.py`) both read the run through this module.

The config keys are LangGraph's own (`langgraph._internal._constants`): `__pregel_read` (read a
channel), `__pregel_send` (the task's writes), `__pregel_task_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...guard import state as _state
from ...guard.concurrent import channel_value, nested, superstep
from ...guard.core import id_problem
from ...guard.decide import Call
from ...guard.history import HISTORY_KEY, merge_history
from ...guard.sealed import Sealed
from .channel import HistoryChannel
from .trace import NO_THREAD, qualified_node

CONFIG_KEY_READ = "__pregel_read"
CONFIG_KEY_SEND = "__pregel_send"
CONFIG_KEY_TASK_ID = "__pregel_task_id"


class ContextFailed(Exception):
    pass


@dataclass
class RunContext:
    """Where a call is made: the task config, the node's qualified id, the thread, the task id,
    and whether the call has a task of its own (a `Send` per call, as create_agent runs them)."""

    config: Any
    node: str | None
    thread: str
    task_id: str | None
    own_task: bool

    @staticmethod
    def of(cfg: Any, state: Any) -> "RunContext":
        if not cfg:
            return RunContext(None, None, NO_THREAD, None, True)
        md = cfg.get("metadata") or {}
        conf = cfg.get("configurable") or {}
        ns = md.get("langgraph_checkpoint_ns") or conf.get("checkpoint_ns")
        path = md.get("langgraph_path") or ()
        own = bool(path) and path[0] == "__pregel_push"
        thread = str(conf.get("thread_id") or md.get("thread_id") or NO_THREAD)
        return RunContext(cfg, qualified_node(ns), thread, conf.get(CONFIG_KEY_TASK_ID), own)


def current_config() -> Any:
    try:
        from langgraph.config import get_config

        return get_config()
    except (ImportError, RuntimeError):
        return None


def ask_person(value: dict) -> Any:
    from langgraph.types import interrupt

    return interrupt(value)


def channel_problem(cfg: Any) -> str | None:
    """Why the graph's state cannot keep the history (no `HISTORY_KEY` channel, or one without
    the guard's reducer), or None. Reads the task config's `__pregel_read`."""
    conf = (cfg or {}).get("configurable") or {}
    read = conf.get(CONFIG_KEY_READ)
    if read is None:
        return None
    fix = (f"declare it in the graph's state: `{HISTORY_KEY}: GuardHistory` (from stalwart_export import "
           "GuardHistory), or use GuardState")
    try:
        read(HISTORY_KEY, False)
    except KeyError:
        return f"the graph's state has no `{HISTORY_KEY}` key, so the guard's history would be lost: {fix}"
    except Exception:  # noqa: BLE001 - an unreadable channel: refuse
        return f"the graph's state `{HISTORY_KEY}` cannot be read: {fix}"
    channels = getattr(read, "args", (None, None))[1] if len(getattr(read, "args", ())) > 1 else None
    ch = channels.get(HISTORY_KEY) if isinstance(channels, dict) else None
    if ch is not None and getattr(ch, "operator", None) is not merge_history:
        return f"the graph's state declares `{HISTORY_KEY}` without the guard's reducer, so entries could be lost: {fix}"
    if ch is not None and not isinstance(ch, HistoryChannel):
        return (f"the graph's state declares `{HISTORY_KEY}` with the guard's reducer but not its channel, so "
                f"LangGraph's Overwrite could replace the history: {fix}")
    return None


def send_records(cfg: Any, records: list, sealed: Sealed | None = None) -> None:
    """Write `records` to the history channel as one of the task's own writes (and remember them
    in `sealed`, for a top-level task of a thread: `sealed.py`)."""
    conf = (cfg or {}).get("configurable") or {}
    send = conf.get(CONFIG_KEY_SEND)
    if send is not None and records:
        send([(HISTORY_KEY, list(records))])
        if sealed is not None and not nested(cfg) and conf.get("thread_id") is not None:
            sealed.add(str(conf.get("thread_id")), list(records), superstep(cfg))


def send_record(cfg: Any, record: str, sealed: Sealed | None = None) -> None:
    """Write `record` to the history channel as one of the task's own writes (`send_records`)."""
    send_records(cfg, [record], sealed)


def conversation(state: Any, ctx: "RunContext", problem: str | None) -> Any:
    """The state whose messages mark the person's turns: `state`, unless the task reads the graph's
    own `messages` channel and the person's latest message in `state` is not in it (a `Send`
    payload that gives a task a `HumanMessage` of its own): a message the thread's conversation does
    not hold never starts a turn, so the turn is read from the channel."""
    if problem is not None or not ctx.config:
        return state
    msgs = _state.get(state, "messages")
    if not isinstance(msgs, list):
        return state
    ok, conv = channel_value(ctx.config, "messages")
    if not ok or not isinstance(conv, list) or conv is msgs or conv == msgs:
        return state
    from langchain_core.messages import HumanMessage

    last = next((m for m in reversed(msgs) if isinstance(m, HumanMessage)), None)
    if last is None or any(m is last or (last.id and m.id == last.id and m == last) for m in conv):
        return state
    return {"messages": conv}


def turn_of(state: Any, session: Any = None) -> tuple[int, str | None]:
    """(the turn, its mark): the guard's own count of the person's turns (SPEC 12.1 "Turns are the
    guard's own"). A turn's mark is the person's latest message (its id, else its place among
    theirs); a summary a middleware wrote in place of earlier messages is not the person's.
    With no entry yet that marks a turn, the turn is how many of the person's messages the
    conversation holds (0 without messages); after one, the same mark is the same turn, and a
    new mark the next turn only when its message comes after the model's message that asked for
    the last entry's call (a mark written back, or an older one left when the newest was removed,
    is the same turn); no mark left (the turn's message summarised away) is still the same turn:
    a summary never restarts a turn, so a per-turn limit holds through it. A tool's answer never
    writes a mark: the guard withholds one that would (`turns.py`)."""
    msgs = _state.get(state, "messages")
    human: list = []
    if isinstance(msgs, list):
        from langchain_core.messages import HumanMessage

        human = [m for m in msgs if isinstance(m, HumanMessage)
                 and (getattr(m, "additional_kwargs", None) or {}).get("lc_source") != "summarization"]
    mark = None
    if human:
        mark = getattr(human[-1], "id", None) or f"#{len(human)}"
    last = session.entries[-1] if session is not None and session.entries else None
    if last is None or "human" not in last or not isinstance(last.get("turn"), int):
        return len(human), mark
    if mark is None or mark == last["human"]:
        return last["turn"], last["human"]
    cid = last.get("call_id")
    if isinstance(cid, str) and cid:
        from langchain_core.messages import AIMessage

        asked = next((k for k in range(len(msgs) - 1, -1, -1) if isinstance(msgs[k], AIMessage)
                      and any(isinstance(c, dict) and c.get("id") == cid for c in msgs[k].tool_calls or ())), None)
        if asked is not None and next(k for k in range(len(msgs) - 1, -1, -1) if msgs[k] is human[-1]) < asked:
            return last["turn"], last["human"]
    return last["turn"] + 1, mark


def batch_calls(state: Any, tc: dict) -> tuple[list[Call], int, str | None]:
    """The calls of the model message that asked for `tc`, its index there, and why the message's
    call ids cannot place its calls (`core.id_problem`), or None. A call is found by its id; when
    the message's ids do not tell its calls apart, by its name, arguments and id, at the first
    place that has it (identical calls then make identical records)."""
    msgs = _state.get(state, "messages")
    me = Call(tc.get("name", ""), dict(tc.get("args") or {}), tc.get("id"))
    if isinstance(msgs, list):
        from langchain_core.messages import AIMessage

        for m in reversed(msgs):
            if not isinstance(m, AIMessage) or not m.tool_calls:
                continue
            problem = id_problem(m.tool_calls)
            if problem is None:
                ids = [c.get("id") for c in m.tool_calls]
                at = ids.index(tc.get("id")) if tc.get("id") in ids else None
            else:
                same_id = [k for k, c in enumerate(m.tool_calls) if c.get("id") == tc.get("id")]
                at = next((k for k in same_id if m.tool_calls[k].get("name") == tc.get("name")
                           and (m.tool_calls[k].get("args") or {}) == (tc.get("args") or {})),
                          same_id[0] if same_id else None)
            if at is not None:
                calls = [Call(c.get("name", ""), dict(c.get("args") or {}), c.get("id")) for c in m.tool_calls]
                calls[at] = me
                return calls, at, problem
    return [me], 0, id_problem([tc])


def answer_of(result: Any, call_id: str | None) -> Any:
    """A tool's answer, for reading facts: a ToolMessage's artifact (a mapping) or content."""
    from langchain_core.messages import ToolMessage

    def of_msg(m: Any) -> Any:
        art = getattr(m, "artifact", None)
        return art if isinstance(art, dict) else m.content

    if isinstance(result, ToolMessage):
        return of_msg(result)
    upd = getattr(result, "update", None)
    if isinstance(upd, dict):
        for m in upd.get("messages") or []:
            if isinstance(m, ToolMessage) and (call_id is None or m.tool_call_id == call_id):
                return of_msg(m)
    return None
