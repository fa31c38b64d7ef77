"""`guard.tool_node(tools)`: a guarded tool node for a hand-built `StateGraph` (SPEC 12.1).

A `ToolNode` (langgraph-prebuilt 1.1.x) whose visit first settles every call of the batch - the
calls of the model's latest message - through the guard: decided in order, and the person asked
about each that needs it, one `interrupt()` after another, before any tool runs. Only then does
`ToolNode` run the calls, each through a wrapper that runs exactly the settled call (as approved
or edited) or answers with the refusal. Asking first matters: LangGraph runs a node that paused
again from its start when the run resumes, so a tool that ran before a pause would run again.

It reads `ToolNode._parse_input` and `ToolNode._extract_state` (private, langgraph-prebuilt 1.1.3)
to see the batch and the state the calls are made over.
"""

from __future__ import annotations

import threading
from typing import Any

from .attempts import retried
from .concurrent import CONCURRENT_TEXT
from .core import Outcome, id_problem
from .decide import Call, refuse
from .doc import GuardConfigError
from .handoff import carry as carry_history
from .handoff import hands_off


def guarded_tool_node(guard: Any, tools: list, name: str, **kwargs: Any) -> Any:
    """A `GuardedToolNode` of `guard` over `tools` (see the module docs)."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.prebuilt import ToolNode
    from langgraph.runtime import Runtime

    from .middleware import _channel_problem, _Context, _interrupt

    for key in ("wrap_tool_call", "awrap_tool_call"):
        if key in kwargs:
            raise TypeError(f"guard.tool_node sets {key} itself (the guard): pass other wrappers as middleware, "
                            "or wrap the tools")

    class GuardedToolNode(ToolNode):
        """A ToolNode whose every call passes the guard (stalwart_export.guard.node)."""

        def __init__(self) -> None:
            self.stalwart_guard = guard
            self._plans: dict[int, tuple[Any, Any, Any]] = {}
            self._plans_lock = threading.Lock()
            super().__init__(tools, name=name, wrap_tool_call=self._wrap, awrap_tool_call=self._awrap, **kwargs)
            missing = [t for t in self.tools_by_name if guard.catalogue.get(t) is None]
            if missing:
                raise GuardConfigError(
                    f"guard.tool_node binds {', '.join(repr(m) for m in missing)}, which the catalogue "
                    f"({guard.catalogue.source}) does not declare, so every call of it would be refused",
                    "declare each tool the node binds in the catalogue (kind: read or write)")

        # -- settle the batch, then let ToolNode run it
        def _settle(self, input: Any, config: Any) -> tuple[list[int], Any]:
            tool_calls, _ = self._parse_input(input)
            state = self._extract_state(input, config)
            ctx = _Context.of(config, state)
            calls = [Call(c.get("name", ""), dict(c.get("args") or {}), c.get("id")) for c in tool_calls]
            problem = None if isinstance(state, dict) else (
                "the tool node's state is not a mapping, so the guard's history cannot be kept in it")
            batch = guard._batch(calls, state, ctx, problem or _channel_problem(config), set(self.tools_by_name))
            batch.call_problem = id_problem(tool_calls)
            if ctx.own_task and not _one_call_task(input):
                # a Send of a whole state to this node: its batch runs alongside others (concurrent.py)
                batch.concurrent = CONCURRENT_TEXT
            # a call this task already attempted (a node RetryPolicy runs the node again) is refused
            # before anything is decided or asked (attempts.py)
            hits = {}
            for i in range(len(calls)):
                seen, stored = guard._attempts.seen(guard._key(ctx, batch, i))
                if seen:
                    hits[i] = stored
            rest = iter(batch.settle([i for i in range(len(calls)) if i not in hits], _interrupt))
            outcomes = [retried(Outcome(i, calls[i], False, refuse("retry", "")), hits[i]) if i in hits
                        else next(rest) for i in range(len(calls))]
            keys = []
            with self._plans_lock:
                for c, o in zip(tool_calls, outcomes):
                    self._plans[id(c)] = (o, batch, ctx)
                    keys.append(id(c))
            return keys, batch

        def _forget(self, keys: list[int]) -> None:
            with self._plans_lock:
                for k in keys:
                    self._plans.pop(k, None)

        def _func(self, input: Any, config: RunnableConfig, runtime: Runtime) -> Any:
            keys, batch = self._settle(input, config)
            try:
                out = super()._func(input, config, runtime)
            finally:
                self._forget(keys)
            # every call of the batch ran: a hand-off carries all their records (guard/handoff.py)
            return carry_history(out, batch.history_after()) if hands_off(out) else out

        async def _afunc(self, input: Any, config: RunnableConfig, runtime: Runtime) -> Any:
            keys, batch = self._settle(input, config)
            try:
                out = await super()._afunc(input, config, runtime)
            finally:
                self._forget(keys)
            # every call of the batch ran: a hand-off carries all their records (guard/handoff.py)
            return carry_history(out, batch.history_after()) if hands_off(out) else out

        # -- run one settled call
        def _plan(self, request: Any) -> tuple[Any, Any, Any] | None:
            """The call as this visit settled it (None: not settled here; the guard decides it)."""
            with self._plans_lock:
                return self._plans.get(id(request.tool_call))

        def _wrap(self, request: Any, execute: Any) -> Any:
            answer, settled = guard._begin(request, self._plan(request))
            if settled is None:
                return answer
            return guard._run(settled, execute, carry=False)

        async def _awrap(self, request: Any, execute: Any) -> Any:
            answer, settled = guard._begin(request, self._plan(request))
            if settled is None:
                return answer
            return await guard._arun(settled, execute, carry=False)

    return GuardedToolNode()


def _one_call_task(input: Any) -> bool:
    """Is the node's input one call of a model's message sent to it alone (create_agent's
    `ToolCallWithContext`, decided as part of its message's batch), rather than a state a `Send`
    fanned out?"""
    return isinstance(input, dict) and input.get("__type") == "tool_call_with_context"
