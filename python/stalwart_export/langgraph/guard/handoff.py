"""The guard's history across a hand-off (SPEC 12.1: the history lives in the graph's state).

A tool that hands off (langgraph-swarm's and langgraph-supervisor's handoff tools, or any tool
returning `Command(graph=Command.PARENT, ...)`) ends the subgraph it runs in: LangGraph raises
`ParentCommand`, and the enclosing graph applies only that Command's `update` (langgraph 1.2.24,
`pregel/_retry.py`). Everything else the subgraph wrote in that step - the guard's history entries
among it, this call's and the batch's - is dropped, so the next agent would start from the history
the subgraph was entered with, and a `not_after: untrusted` or an `at_most` would not see what ran.

`carry(result, records)` puts the history into each such Command's `update`, as the whole list of
records (the history before the batch, then every record of the batch written so far): the
parent's reducer (`merge_history`) keeps the records it has and adds the rest, so the parent, and
the agent it hands to, see every call that ran. An update of any shape LangGraph applies (a
mapping, `(key, value)` pairs, an object read by its annotated fields) carries it; a hand-off that
tries to replace the history carries the `REPLACED` mark instead, so nothing after it runs
(`history_invalid`) and nothing is replaced.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...guard.history import HISTORY_KEY, REPLACED, merge_history
from .channel import is_overwrite


def _is_parent_command(x: Any) -> bool:
    try:
        from langgraph.types import Command
    except ImportError:  # pragma: no cover
        return False
    return isinstance(x, Command) and x.graph == Command.PARENT


def hands_off(result: Any) -> bool:
    """Does `result` (a tool's or a tool node's output) hold a Command aimed at the parent graph?"""
    if isinstance(result, (list, tuple)):
        return any(hands_off(r) for r in result)
    return _is_parent_command(result)


def _with_records(value: Any, records: list) -> list:
    """The hand-off's own value for the history key with `records` added. An update that would
    replace the history (LangGraph's `Overwrite` or its JSON forms) becomes the `REPLACED` mark, as
    the history channel makes it (`history._history_channel`): the parent's history then no longer
    verifies, and nothing is replaced."""
    if is_overwrite(value):
        value = [REPLACED + "a hand-off tried to replace the history (LangGraph's Overwrite) and was refused"]
    elif value is not None and not isinstance(value, list):
        value = [value]  # kept, so that verification sees it and refuses
    return merge_history(value, list(records))


def carry(result: Any, records: list) -> Any:
    """`result` with every Command aimed at the parent graph carrying `records` (the guard's
    history, as the whole list) in its update; anything else unchanged. An update given as a
    list of `(key, value)` pairs, or as an object LangGraph reads by its annotated fields (a
    dataclass, a pydantic model), becomes the list of its pairs with the history's pair in
    place of any it had (`Command._update_as_tuples`, what LangGraph applies)."""
    if isinstance(result, list):
        return [carry(r, records) for r in result]
    if isinstance(result, tuple):
        return tuple(carry(r, records) for r in result)
    if not _is_parent_command(result):
        return result
    update = result.update
    if update is None:
        update = {HISTORY_KEY: list(records)}
    elif isinstance(update, dict):
        update = dict(update)
        update[HISTORY_KEY] = _with_records(update.get(HISTORY_KEY), records)
    else:
        pairs = list(result._update_as_tuples())
        own = [v for k, v in pairs if k == HISTORY_KEY]
        value = None
        for v in own:
            value = _with_records(v, value or [])
        update = [(k, v) for k, v in pairs if k != HISTORY_KEY]
        update.append((HISTORY_KEY, _with_records(value, records)))
    return replace(result, update=update)
