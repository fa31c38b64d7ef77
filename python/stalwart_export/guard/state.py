"""The graph's state in every shape LangGraph accepts (SPEC 12.1; issue 29 item 1): a mapping (a
`TypedDict` or `MessagesState`), a `@dataclass` (LangGraph's own templates keep state in one) or a
pydantic `BaseModel`. The guard reads its history (`HISTORY_KEY`) and the conversation
(`messages`) from each, and `guard.call` adds its record to the step's own state object, so that a
second call in the same step sees the first.

How each shape declares the guard's channel (LangGraph reads the reducer from the last item of
`Annotated`, here the guard's own channel, which no update can replace):

    class State(MessagesState):                      # TypedDict
        stalwart_guard: GuardHistory

    @dataclass
    class State:                                     # dataclass: a default, since LangGraph builds
        messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
        stalwart_guard: GuardHistory = field(default_factory=list)

    class State(BaseModel):                          # pydantic
        messages: Annotated[list[AnyMessage], add_messages] = []
        stalwart_guard: GuardHistory = []

A state of any other kind is one the guard cannot read: `unreadable` says why, and every call is
refused (`history_invalid`) saying so, never decided over a history it did not see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

#: What the guard says of a state it cannot read, and the fix.
FIX = ("keep the graph's state in a TypedDict (MessagesState), a @dataclass or a pydantic BaseModel, with "
       "`stalwart_guard: GuardHistory` (a dataclass or model gives it a default: field(default_factory=list) or [])")


def _model(state: Any) -> bool:
    try:
        from pydantic import BaseModel
    except ImportError:  # pragma: no cover
        return False
    return isinstance(state, BaseModel)


def _dataclass(state: Any) -> bool:
    return dataclasses.is_dataclass(state) and not isinstance(state, type)


def readable(state: Any) -> bool:
    """Is `state` a shape the guard reads (a mapping, a dataclass instance, a pydantic model)?"""
    return isinstance(state, Mapping) or _dataclass(state) or _model(state)


def unreadable(state: Any, where: str) -> str | None:
    """Why the guard cannot read `state` (None when it can): `where` names who holds it."""
    if readable(state):
        return None
    return (f"{where}'s state is {type(state).__name__}, which the guard cannot read, so its history cannot be kept "
            f"in it: {FIX}")


def get(state: Any, key: str, default: Any = None) -> Any:
    """The value of `key` in `state` (a mapping's item, a dataclass's or model's field), or `default`."""
    if isinstance(state, Mapping):
        return state.get(key, default)
    if _dataclass(state) or _model(state):
        return getattr(state, key, default)
    return default


def put(state: Any, key: str, value: Any) -> bool:
    """Set `key` of `state` in place (a step's own state object, so that a later call of the step
    sees it); False when it cannot be set (a frozen dataclass or model, a read-only mapping, a
    model without the field): the caller keeps the value beside the object instead."""
    try:
        if isinstance(state, dict):
            state[key] = value
            return True
        if _dataclass(state) or _model(state):
            setattr(state, key, value)
            return getattr(state, key, None) is value or getattr(state, key, None) == value
    except (TypeError, ValueError, AttributeError, dataclasses.FrozenInstanceError):
        return False
    return False
