"""An OpenAI Agents SDK agent's hand-offs (SPEC 13.1): where each goes, and what the exporter
cannot read about it.

`agent.handoffs` holds `Agent`s and `Handoff`s (`handoff(agent, on_handoff=..., is_enabled=...)`).
A `Handoff` made by `handoff(...)` keeps its target in `_agent_ref` (a weak reference); one built
by hand (`Handoff(on_invoke_handoff=...)`) names only `agent_name`, and its target is whatever its
code returns. An `on_handoff` hook is the application's code run at the hand-off: the exporter
does not read what it does (an `opaque` entry, SPEC 12.5).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ._tools import enabled, read


@dataclass
class Target:
    """One hand-off: its `agent` (None when the exporter cannot tell), `name` (the tool the model
    calls), `hook` (the user's `on_handoff` callable, or None), `conditional` (a callable
    `is_enabled`: the route may exist)."""

    agent: Any
    name: str
    hook: Any
    conditional: bool


def targets(agent: Any) -> list[Target]:
    """The hand-offs of `agent` that may be offered (an `is_enabled` literal False is left out)."""
    from agents import Agent

    out = []
    for h in getattr(agent, "handoffs", None) or []:
        if isinstance(h, Agent):
            out.append(Target(h, f"transfer_to_{h.name}", None, False))
            continue
        if not enabled(h):
            continue
        ref = getattr(h, "_agent_ref", None)
        target = ref() if callable(ref) else None
        out.append(Target(target, getattr(h, "tool_name", "?"), _hook(h), callable(getattr(h, "is_enabled", True))))
    return out


#: `Target.hook` when the exporter cannot find whether a `Handoff` has an `on_handoff` hook.
UNKNOWN_HOOK = "<unknown on_handoff>"


def _hook(h: Any) -> Any:
    """The `on_handoff` callable `handoff(...)` closed over; None when it has none; `UNKNOWN_HOOK`
    when the exporter cannot find the closure (a hand-built `Handoff`, another SDK version)."""
    todo = [getattr(h, "on_invoke_handoff", None)]
    seen = 0
    while todo and seen < 8:
        fn = todo.pop(0)
        seen += 1
        if fn is None:
            continue
        if isinstance(fn, functools.partial):
            todo += [fn.func, *fn.args, *fn.keywords.values()]
            continue
        code = getattr(fn, "__code__", None)
        if code is None or "on_handoff" not in code.co_freevars or fn.__closure__ is None:
            continue
        cell = dict(zip(code.co_freevars, fn.__closure__))["on_handoff"]
        try:
            return cell.cell_contents
        except ValueError:  # an empty cell
            return None
    return UNKNOWN_HOOK


def reached(start: Any, tools_too: bool = True) -> list[Any]:
    """`start` and the agents its hand-offs reach (and, with `tools_too`, its agents-as-tools'
    agents), each once, in the order met: what the exporter exports and the guard wraps."""
    out: list[Any] = []
    todo = [start]
    while todo:
        a = todo.pop(0)
        if any(a is b for b in out):
            continue
        out.append(a)
        todo += [h.agent for h in targets(a) if h.agent is not None]
        if tools_too:
            todo += [t._agent_instance for t in read(a, a.name).agents]
    return out
