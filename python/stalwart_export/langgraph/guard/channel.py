"""The guard's history as a LangGraph state channel: `GuardHistory`, the annotation a graph's state
gives `HISTORY_KEY`, whose channel merges updates with `merge_history` (the ground's reducer,
`guard/history.py`) and refuses an update that would replace the history."""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.channels.binop import BinaryOperatorAggregate

from ...guard.history import REPLACED, merge_history


def is_overwrite(value: Any) -> bool:
    """Is `value` LangGraph's `Overwrite`, or one of its JSON forms (`{"__overwrite__": v}`,
    `{"type": "__overwrite__", "value": v}`)?"""
    if type(value).__name__ == "Overwrite" and hasattr(value, "value"):
        return True
    if isinstance(value, dict):
        if len(value) == 1 and "__overwrite__" in value:
            return True
        return value.get("type") == "__overwrite__" and "value" in value
    return False


def _history_channel() -> Any:
    """The state channel of `HISTORY_KEY`: LangGraph's reducer channel, except that an update that
    would replace the value (`Overwrite` and its JSON forms, which LangGraph applies without the
    reducer) is not applied: a mark (`REPLACED`) is kept in the history instead, so that the
    history no longer verifies and every later guarded call of the thread is refused
    (`history_invalid`), saying why. Nothing is dropped, nothing replaced."""
    try:
        from langgraph._internal._typing import MISSING as missing  # the channel's "no value yet"
    except ImportError:  # pragma: no cover
        missing = object()

    class GuardHistoryChannel(BinaryOperatorAggregate):
        """The guard's history channel (stalwart_export.langgraph.guard.channel)."""

        def __init__(self, typ: Any = list, operator: Any = None) -> None:
            super().__init__(list, merge_history)

        def update(self, values: Any) -> bool:
            if not values:
                return False
            if not isinstance(self.value, list):  # a stored value that is not a list: kept, so it fails to verify
                self.value = [] if self.value is None or self.value is missing else [self.value]
            for v in values:
                if is_overwrite(v):
                    v = [REPLACED + "an update tried to replace the history (LangGraph's Overwrite) and was refused"]
                self.value = merge_history(self.value, v)
            return True

    return GuardHistoryChannel


#: The channel class of `GuardHistory`.
HistoryChannel = _history_channel()

#: The annotation a hand-built graph's state gives the history key:
#: `class State(MessagesState): stalwart_guard: GuardHistory`.
GuardHistory = Annotated[list, HistoryChannel]
