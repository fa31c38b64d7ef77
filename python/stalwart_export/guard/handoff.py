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
the agent it hands to, see every call that ran.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .history import HISTORY_KEY, merge_history


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


def carry(result: Any, records: list) -> Any:
    """`result` with every Command aimed at the parent graph carrying `records` (the guard's
    history, as the whole list) in its update; anything else unchanged. An update given as a
    list of `(key, value)` pairs gets one more pair."""
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
        update[HISTORY_KEY] = merge_history(update.get(HISTORY_KEY), list(records))
    elif isinstance(update, (list, tuple)):
        update = [kv for kv in update if not (isinstance(kv, tuple) and kv and kv[0] == HISTORY_KEY)]
        update.append((HISTORY_KEY, list(records)))
    else:  # an update object LangGraph reads by its fields: a record of the hand-off is not placed
        return result
    return replace(result, update=update)
