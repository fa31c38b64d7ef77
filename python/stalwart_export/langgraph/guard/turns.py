"""A tool's answer may not write the guard's turn marks (SPEC 12.1 "Turns are the guard's own").

The guard counts the person's turns by the person's latest message (`run.turn_of`): a new
message of the person starts a turn, and per-turn limits (`at_most: {per: turn}`) count the calls
of the guard's turn. A tool's answer can be a `Command` whose update writes messages, and LangGraph
applies it as it applies the person's input: a tool (or the outside text it relays) could add a
`HumanMessage` dressed as the person, or remove the person's message (`RemoveMessage`, or
`REMOVE_ALL_MESSAGES` with the conversation written back, or an `Overwrite` of the channel in any
of LangGraph's forms, in a dict or an update object), and so start a turn of its own inside
the person's, and a per-turn write would run again.

The guard sits where every tool answer passes (`Guard.run_settled`), so it reads each answer there:
`marks_turn(result, state)` says why an answer writes a turn mark, or None. Such an answer is not
passed on: the tool ran (its record says so), and the model is told that its answer was withheld
(`withheld`). What is not a turn mark passes as it is: messages of other kinds, a `RemoveMessage` of
a message that is not the person's, and a person's message the state already holds under that id
(a hand-off re-sending the conversation, as langgraph-swarm's does).
"""

from __future__ import annotations

from typing import Any

from ...guard import state as _state

#: The reason code of an answer withheld because it writes a turn mark.
REASON = "turn_mark"


#: Stands for an overwrite the guard cannot read: a message of the person the state does not hold.
_UNREADABLE: dict = {"role": "user", "content": "(an overwrite the guard cannot read)"}


def _messages_of(state: Any) -> list:
    msgs = _state.get(state, "messages")
    return msgs if isinstance(msgs, list) else []


def _as_messages(value: Any) -> list:
    """The messages an update's `messages` value adds, as LangGraph's `add_messages` reads them."""
    from langchain_core.messages import BaseMessage, convert_to_messages

    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for m in items:
        if isinstance(m, BaseMessage):
            out.append(m)
            continue
        try:
            out += convert_to_messages([m])
        except Exception:  # noqa: BLE001 - LangGraph refuses it too; nothing is added
            continue
    return out


def _overwrite(value: Any) -> tuple[bool, Any]:
    """(True, the list) when `value` writes the channel whole, as LangGraph reads an overwrite: an
    `Overwrite`, `{"__overwrite__": v}`, or `{"type": "__overwrite__", "value": v}`; a dict naming
    `__overwrite__` in any other way is taken as one too (with no list: fail closed)."""
    from langgraph.types import Overwrite

    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if "__overwrite__" in value:
            return True, value["__overwrite__"] if len(value) == 1 else [_UNREADABLE]
        if value.get("type") == "__overwrite__":
            return True, value["value"] if "value" in value else [_UNREADABLE]
    return False, None


def marks_turn(result: Any, state: Any) -> str | None:
    """Why the tool answer `result` writes a turn mark (adds a message of the person the state does
    not hold, or removes one of theirs, or all messages), or None."""
    if isinstance(result, (list, tuple)):
        return next((w for w in (marks_turn(r, state) for r in result) if w), None)
    try:
        from langchain_core.messages import HumanMessage, RemoveMessage
        from langgraph.graph.message import REMOVE_ALL_MESSAGES
        from langgraph.types import Command
    except ImportError:  # pragma: no cover - without LangGraph there are no Commands
        return None
    if not isinstance(result, Command) or result.update is None:
        return None
    try:
        pairs = result._update_as_tuples()
    except Exception:  # noqa: BLE001 - an update LangGraph cannot read either
        return None
    values = [v for k, v in pairs if k == "messages"]
    if not values:
        return None
    held = _messages_of(state)
    human_ids = {m.id for m in held if isinstance(m, HumanMessage) and m.id}
    written = []
    for v in values:
        is_whole, whole = _overwrite(v)
        if not is_whole:
            written += _as_messages(v)
            continue
        # the channel is written whole (the reducer is bypassed): it must keep the person's messages,
        # each under its id, and hold no message of the person the state does not
        kept = [m for m in _as_messages(whole) if isinstance(m, HumanMessage)]
        if any(not (m.id and m.id in human_ids) for m in kept):
            return "it writes the conversation over with a message as the person's"
        if {m.id for m in kept} != human_ids:
            return "it writes the conversation over without a message of the person"
    for m in written:
        if isinstance(m, RemoveMessage):
            if m.id == REMOVE_ALL_MESSAGES:
                return "it removes every message of the conversation, the person's among them"
            if m.id in human_ids:
                return "it removes a message of the person"
        elif isinstance(m, HumanMessage) and not (m.id and m.id in human_ids):
            return "it adds a message as the person's"
    return None


def withheld(o: Any, why: str) -> Any:
    """The answer the model gets in place of a tool answer that writes a turn mark."""
    from langchain_core.messages import ToolMessage

    return ToolMessage(content=(f"Refused by the tool check ({REASON}): '{o.call.tool}' ran, but its answer was not "
                                f"passed on: {why}, and only the person starts a turn (the guard counts per-turn "
                                "limits by the person's messages); return the text in a ToolMessage instead"),
                       name=o.call.tool, tool_call_id=o.call.call_id or "", status="error",
                       additional_kwargs={"stalwart_guard": {"decision": "allow", "withheld": REASON}})
