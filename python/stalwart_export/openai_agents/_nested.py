"""The person's turn inside a nested run (SPEC 3.1 "The guard's view": a turn starts at the
person's message, never at text the model wrote).

A run started inside a tool call (an agent-as-tool's `Runner.run`, or one the application's own
function tool starts) has for its `turn_input` the input the calling model wrote. Read as the
person's message it would start a new turn at every such call, and a per-turn limit would reset
whenever the model called the agent tool again. So the guard carries the outer run's turn input
into every run started within a tool call it sees (`carrying`), and decides turns over that
(`turn_input`): the outermost run's, however deep the nesting.
"""

from __future__ import annotations

import contextlib
import copy
import contextvars
from typing import Any, Iterator

_OUTER: contextvars.ContextVar[list | None] = contextvars.ContextVar("stalwart_guard_outer_turn", default=None)

#: The attribute `agent_tool` sets on the agent tool copy it makes (wrapping it again is a no-op).
MARK = "_stalwart_turn_carrier"


def turn_input(ctx: Any) -> list:
    """The person's turn input for a call: the outermost run's (`carrying`), else the run's own."""
    outer = _OUTER.get()
    return list(outer) if outer is not None else list(getattr(ctx, "turn_input", None) or [])


@contextlib.contextmanager
def carrying(ctx: Any) -> Iterator[None]:
    """Within the block (a tool call), runs started see the outer run's turn input."""
    token = _OUTER.set(turn_input(ctx))
    try:
        yield
    finally:
        _OUTER.reset(token)


def agent_tool(guard: Any, t: Any) -> Any:
    """A copy of the agent tool `t` (`Agent.as_tool`) whose nested run keeps the caller's turn
    (the copy is still an agent tool, exported as one); `t` when already one `guard` made."""
    if getattr(t, MARK, None) is guard:
        return t
    original = t.on_invoke_tool

    async def invoke(ctx: Any, arguments: str) -> Any:
        with carrying(ctx):
            return await original(ctx, arguments)

    new = copy.copy(t)
    new.on_invoke_tool = invoke
    setattr(new, MARK, guard)
    return new
