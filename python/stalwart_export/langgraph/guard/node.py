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

from ...guard import state as _state
from ...guard.concurrent import CONCURRENT_TEXT
from ...guard.core import Outcome, id_problem
from ...guard.decide import Call, refuse
from ...guard.doc import GuardConfigError
from .attempts import retried
from .handoff import carry as carry_history
from .handoff import hands_off
from .run import CONFIG_KEY_TASK_ID, RunContext, ask_person, batch_calls, channel_problem


def guarded_tool_node(guard: Any, tools: list, name: str, **kwargs: Any) -> Any:
    """A `GuardedToolNode` of `guard` over `tools` (see the module docs)."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.prebuilt import ToolNode
    from langgraph.runtime import Runtime

    for key in ("wrap_tool_call", "awrap_tool_call"):
        if key in kwargs:
            raise TypeError(f"guard.tool_node sets {key} itself (the guard): pass other wrappers as middleware, "
                            "or wrap the tools")

    class GuardedToolNode(ToolNode):
        """A ToolNode whose every call passes the guard (stalwart_export.langgraph.guard.node)."""

        def __init__(self) -> None:
            self.stalwart_guard = guard
            #: Settled calls by (task, the tool call object): tasks sent the same state share its calls.
            self._plans: dict[tuple, tuple[Any, Any, Any]] = {}
            self._plans_lock = threading.Lock()
            super().__init__(tools, name=name, wrap_tool_call=self._wrap, awrap_tool_call=self._awrap, **kwargs)
            # a catalogue not written yet (lazy.py) is checked at the first call, where it must be there
            cat = guard.loaded_catalogue()
            missing = [t for t in self.tools_by_name if cat is not None and cat.get(t) is None]
            if missing:
                raise GuardConfigError(
                    f"guard.tool_node binds {', '.join(repr(m) for m in missing)}, which the catalogue "
                    f"({guard.catalogue.source}) does not declare, so every call of it would be refused",
                    "declare each tool the node binds in the catalogue (kind: read or write)")

        # -- settle the batch, then let ToolNode run it
        def _settle(self, input: Any, config: Any) -> tuple[list[tuple], Any]:
            tool_calls, _ = self._parse_input(input)
            state = self._extract_state(input, config)
            ctx = RunContext.of(config, state)
            problem = _state.unreadable(state, "the tool node")
            # calls a Send gave this task (create_agent's and create_react_agent's shapes) are placed in
            # the model's message they belong to, as the middleware places them: each task decides its
            # own calls over the same history and the calls before them in the message
            placed = _placed(state, tool_calls) if _sent_calls(input) else None
            if placed is not None:
                calls, at, ids = placed
            else:
                calls = [Call(c.get("name", ""), dict(c.get("args") or {}), c.get("id")) for c in tool_calls]
                at, ids = list(range(len(calls))), id_problem(tool_calls)
            batch = guard.batch_of(calls, state, ctx, problem or channel_problem(config), set(self.tools_by_name))
            batch.call_problem = ids
            if ctx.own_task and (placed is None or not all(
                    guard.claims.claim(config, ctx.thread, batch.session.head, i, ctx.task_id) for i in at)):
                # a Send of a whole state (or of calls not found in a message, or placed already by
                # another task) to this node: its batch runs alongside others that the guard cannot
                # serialise it with (concurrent.py)
                batch.concurrent = CONCURRENT_TEXT
            # a call this task already attempted (a node RetryPolicy runs the node again) is refused
            # before anything is decided or asked (attempts.py)
            hits = {}
            for i in at:
                seen, stored = guard.attempts.seen(guard.attempt_key(ctx, batch, i))
                if seen:
                    hits[i] = stored
            rest = iter(batch.settle([i for i in at if i not in hits], ask_person))
            outcomes = [retried(Outcome(i, calls[i], False, refuse("retry", "")), hits[i]) if i in hits
                        else next(rest) for i in at]
            keys = []
            with self._plans_lock:
                for c, o in zip(tool_calls, outcomes):
                    self._plans[(ctx.task_id, id(c))] = (o, batch, ctx)
                    keys.append((ctx.task_id, id(c)))
            return keys, batch

        def _forget(self, keys: list[tuple]) -> None:
            with self._plans_lock:
                for k in keys:
                    self._plans.pop(k, None)

        def _func(self, input: Any, config: RunnableConfig, runtime: Runtime) -> Any:
            keys, batch = self._settle(input, config)
            try:
                out = super()._func(input, config, runtime)
            finally:
                self._forget(keys)
            # every call of the batch ran: a hand-off carries all their records (handoff.py)
            return carry_history(out, batch.history_after()) if hands_off(out) else out

        async def _afunc(self, input: Any, config: RunnableConfig, runtime: Runtime) -> Any:
            keys, batch = self._settle(input, config)
            try:
                out = await super()._afunc(input, config, runtime)
            finally:
                self._forget(keys)
            # every call of the batch ran: a hand-off carries all their records (handoff.py)
            return carry_history(out, batch.history_after()) if hands_off(out) else out

        # -- run one settled call
        def _plan(self, request: Any) -> tuple[Any, Any, Any] | None:
            """The call as this visit settled it (None: not settled here; the guard decides it)."""
            cfg = getattr(getattr(request, "runtime", None), "config", None) or {}
            task = (cfg.get("configurable") or {}).get(CONFIG_KEY_TASK_ID)
            with self._plans_lock:
                return self._plans.get((task, id(request.tool_call)))

        def _wrap(self, request: Any, execute: Any) -> Any:
            answer, settled = guard.begin(request, self._plan(request))
            if settled is None:
                return answer
            return guard.run_settled(settled, execute, carry=False)

        async def _awrap(self, request: Any, execute: Any) -> Any:
            answer, settled = guard.begin(request, self._plan(request))
            if settled is None:
                return answer
            return await guard.arun_settled(settled, execute, carry=False)

    return GuardedToolNode()


def _sent_calls(input: Any) -> bool:
    """Is the node's input calls of a model's message a `Send` gave it (create_agent's list of tool
    calls, create_react_agent's `ToolCallWithContext`), rather than a state?"""
    if isinstance(input, dict):
        return input.get("__type") == "tool_call_with_context"
    return (isinstance(input, list) and bool(input)
            and all(isinstance(c, dict) and c.get("type") == "tool_call" for c in input))


def _placed(state: Any, tool_calls: list) -> tuple[list, list[int], str | None] | None:
    """(the calls of the model's message that holds every one of `tool_calls`, their places in it,
    why its ids cannot place its calls) or None when no one message holds them all."""
    if not tool_calls or not _in_a_message(state, tool_calls[0]):
        return None
    calls, first, ids = batch_calls(state, tool_calls[0])
    at = [first]
    for tc in tool_calls[1:]:
        got, k, _ = batch_calls(state, tc)
        if [(c.tool, c.call_id) for c in got] != [(c.tool, c.call_id) for c in calls] or k in at:
            return None
        calls[k] = got[k]
        at.append(k)
    return calls, at, ids


def _in_a_message(state: Any, tc: dict) -> bool:
    """Does a model message of the state hold the call `tc` (by id, name and arguments)?"""
    from langchain_core.messages import AIMessage

    msgs = _state.get(state, "messages")
    return isinstance(msgs, list) and any(
        isinstance(m, AIMessage) and any(c.get("id") == tc.get("id") and c.get("name") == tc.get("name")
                                         and (c.get("args") or {}) == (tc.get("args") or {}) for c in m.tool_calls)
        for m in msgs)
