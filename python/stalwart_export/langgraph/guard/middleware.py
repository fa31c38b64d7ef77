"""The guard in LangGraph and LangChain (SPEC 12.1): `Guard`, usable three ways, all deciding every
call the same way (`decide.py`, `core.py`):

* `create_agent(model, tools, middleware=[..., guard])`: a langchain 1.x `AgentMiddleware` whose
  `wrap_tool_call`/`awrap_tool_call` decide each call (put it last, so that no other middleware
  can change a call after the guard has checked it); its `state_schema` adds the history key;
* `guard.tool_node(tools, name="tools")`: a ready guarded tool node (a `ToolNode`) for a
  hand-built `StateGraph`, which asks about every call of a batch before it runs any;
* `guard.call(tool, args, state)` (and `await guard.acall(...)` in an async step): for a step whose
  code calls a tool, or a plain function the catalogue names, itself.

`ToolNode(tools, wrap_tool_call=guard.wrap_tool_call)` works too, for batches of one call or
calls run as separate tasks (as `create_agent` and `create_react_agent` run them); a call that
needs a person in a batch of several calls run in one task is refused instead, since LangGraph
would run the batch's other calls again when the run resumes.

The history lives in the graph's state under `HISTORY_KEY` (`history.py`): `create_agent` gets
it from the middleware's state schema; a hand-built graph declares it (`GuardState`, or
`stalwart_guard: GuardHistory` in its own state). A graph whose state has no such channel would
lose the history after every step, so every call is then refused (`history_invalid`) with the
fix. The guard writes its entries into the task's own writes (LangGraph's `__pregel_send`), so
a tool's result (a `ToolMessage`, or a `Command` such as a hand-off) is returned as the tool
made it.

LangGraph internals read (langgraph 1.2.24, langgraph-prebuilt 1.1.3, langchain 1.5.2): the
task config's `__pregel_read`, `__pregel_send`, `__pregel_scratchpad` and `__pregel_checkpointer`,
`ToolNode._parse_input`, `ToolNode._extract_state` and `ToolNode._func`/`_afunc`, and the config
metadata `langgraph_checkpoint_ns`, `langgraph_path` and `langgraph_step`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from ...guard import state as _state
from ...guard.concurrent import (CONCURRENT_TEXT, OTHER_RUN_TEXT, OUTSIDE_TEXT, Claims, Lanes, bears_limit,
                                 channel_value, nested, superstep)
from ...guard.core import Batch, Outcome, refusal_text
from ...guard.decide import Call, Rules, refuse
from ...guard.doc import GuardConfigError
from ...guard.history import HISTORY_KEY, Chain, merge_history, parse, verify
from ...guard.lazy import RulesSource
from ...guard.sealed import Sealed
from .attempts import Attempts, retried
from .callables import Runner, runner_of
from .channel import GuardHistory
from .handoff import carry as carry_history
from .handoff import hands_off
from .node import guarded_tool_node
from .run import (ContextFailed, RunContext, answer_of, ask_person, batch_calls, channel_problem, conversation,
                  current_config, send_record, send_records, turn_of)
from .trace import NO_THREAD, TraceWriter, make_tracer
from .turns import marks_turn, withheld


try:  # langchain 1.x: create_agent's middleware
    from langchain.agents.middleware import AgentMiddleware as _Base
    from langchain.agents.middleware.types import AgentState as _AgentState
except ImportError:  # pragma: no cover - without langchain the guard still guards tool nodes and steps
    _Base = object
    _AgentState = None


def _agent_state_schema() -> Any:
    """create_agent's state with the history key. It is part of the agent's input: an agent run as
    a subgraph (a swarm's or a supervisor's worker) is entered with its parent's state, and only
    the keys of its input schema pass, so a history left out of the input would restart at every
    visit. LangGraph reads the reducer from the last item of `Annotated`."""
    if _AgentState is None:
        return None
    from typing import Annotated

    from typing_extensions import NotRequired

    ns = {"__annotations__": {HISTORY_KEY: NotRequired[GuardHistory]}}
    return type("GuardAgentState", (_AgentState,), ns)


def _guard_state() -> Any:
    from langgraph.graph import MessagesState

    ns = {"__annotations__": {HISTORY_KEY: GuardHistory}, "__doc__":
          "MessagesState with the guard's history (`stalwart_guard`), for a hand-built graph."}
    return type("GuardState", (MessagesState,), ns)


GuardState = _guard_state()


@dataclass
class CallResult:
    """What `guard.call` did: `ran`; the tool's `output` (None when it did not run); the
    `decision` (`allow`, `confirm`, `refuse`) and `reasons`; `message`, what to tell the model
    when it did not run; `entry`, the history entry (a mapping); `update`, the state update that
    records it (`{HISTORY_KEY: [record]}`; inside a graph it is already written)."""

    ran: bool
    output: Any
    decision: str
    reasons: list[str]
    message: str
    entry: dict
    update: dict


class Guard(_Base):  # type: ignore[misc,valid-type]
    """The tool check for LangGraph agents (SPEC 12.1).

    `Guard(catalogue, *, rulebook=None, facts=None, taint_policy="confirm", trace=None, key=None,
    context=None, input_reads_outside=False)`:

    * `catalogue`: the qls-catalogue/1 file (JSON or YAML) `stalwart verify` reads, or its
      mapping (what `export_catalogue` returns);
    * `rulebook`: the folder (or `record.json`) `stalwart rules compile` wrote;
    * `facts`: agent.yaml-style facts, a mapping or a YAML/JSON file with `facts:`;
    * `taint_policy`: `confirm` (a write after content from outside is put to the person) or
      `refuse`;
    * `trace`: a path: each turn is appended there as a `--traces` line (wrap the graph with
      `guard.traced(graph)` so that its node steps are written too);
    * `key`: bytes or text: the history chain is HMAC-SHA-256 with it, so nobody without the key
      can rewrite the history consistently;
    * `context`: the application's values for `from: caller` facts and rulebook comparisons: a
      mapping, or a function of the state returning one;
    * `input_reads_outside`: every turn's input is content from outside (an inbound e-mail, a
      webhook), so every turn starts tainted (the export's `input.reads_outside`).

    Raises `GuardConfigError` (a `ValueError`) naming the file, line and column for a catalogue,
    facts or record it cannot read or the verifier would refuse, and for a bad `taint_policy`.
    """

    def __init__(self, catalogue: Any, *, rulebook: Any = None, facts: Any = None, taint_policy: str = "confirm",
                 trace: Any = None, key: bytes | str | None = None, context: Any = None,
                 input_reads_outside: bool = False) -> None:
        if taint_policy not in ("confirm", "refuse"):
            raise GuardConfigError(f"taint_policy must be 'confirm' or 'refuse', not {taint_policy!r}",
                                   "write taint_policy='confirm' (ask the person) or 'refuse'")
        #: The catalogue, rulebook and facts, read at once or at the first call (`lazy.py`).
        self._source = RulesSource(catalogue, rulebook, facts, taint_policy, bool(input_reads_outside))
        self._reads_outside = bool(input_reads_outside)
        if key is not None and (not isinstance(key, (bytes, str)) or not key):
            raise GuardConfigError(f"key is {'empty' if isinstance(key, (bytes, str)) else type(key).__name__}: an "
                                   "empty key is not 'no key' (an unset environment variable?)",
                                   "give key= a secret (bytes or text), or leave key out (no key: anyone can "
                                   "recompute the history's hashes)")
        self.chain = Chain(key)
        self.trace = TraceWriter(trace) if trace is not None else None
        if context is not None and not (callable(context) or isinstance(context, dict)):
            raise GuardConfigError(f"context must be a mapping or a function of the state, not {type(context).__name__}",
                                   "give context={'fact': value} or context=lambda state: {...}")
        self._context = context
        #: Writes guard.call ran per step task (a few hundred recent tasks), to refuse a pause after one.
        self._step_writes: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        #: The calls whose tool started, so that a retry sees them (`attempts.py`); read by the guarded
        #: tool node (`node.py`) too.
        self.attempts = Attempts()
        #: Records guard.call wrote per step task (a few hundred recent tasks): a retried step writes them again.
        self._step_records: OrderedDict[str, list[str]] = OrderedDict()
        #: Records guard.call could not set in a frozen state object, by the object (`_keep`).
        self._beside: OrderedDict[int, tuple[Any, list[str]]] = OrderedDict()
        #: Per superstep, the calls of concurrent branches, serialised (`concurrent.py`).
        self._lanes = Lanes()
        #: The records written per thread, so that none is lost with a failed task (`sealed.py`).
        self._sealed = Sealed()
        #: Per superstep, which task decided each place of a batch (`concurrent.py`); read by the guarded
        #: tool node (`node.py`) too.
        self.claims = Claims()

    # ------------------------------------------------------------------ AgentMiddleware
    state_schema = _agent_state_schema() or dict

    @property
    def name(self) -> str:
        return "StalwartGuard"

    @property
    def rules(self) -> Rules:
        """What the guard decides with (the catalogue read at the first use when it was not there
        when the guard was built: `lazy.py`; raises `GuardConfigError` if it is still missing)."""
        return self._source.get()

    @property
    def catalogue(self):
        """The catalogue the guard decides from (`guard.catalogue.tools`: name -> ToolSpec)."""
        return self.rules.catalogue

    def loaded_catalogue(self):
        """The catalogue if it has been read, else None (a guard built before its catalogue file was
        written, not yet used): the exporter reads the guard without it (`lazy.py`)."""
        got = self._source.loaded()
        return None if got is None else got.catalogue

    @property
    def input_reads_outside(self) -> bool:
        return self._reads_outside

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Decide one tool call of `ToolNode` (or create_agent), then run it through `handler`
        only if it is allowed or confirmed; a refusal answers with a ToolMessage naming it."""
        answer, settled = self.begin(request)
        if settled is None:
            return answer
        return self.run_settled(settled, handler)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """The async `wrap_tool_call`."""
        answer, settled = self.begin(request)
        if settled is None:
            return answer
        return await self.arun_settled(settled, handler)

    def attempt_key(self, ctx: "RunContext", batch: Batch, index: int) -> tuple | None:
        """The attempt key of the model's call at `index` of `batch` (`attempts.py`). With `begin`,
        `run_settled`, `batch_of`, `attempts` and `claims`, what the guarded tool node (`node.py`) settles
        and runs its batch through; not for applications."""
        return Attempts.key(self.rules, ctx.thread, ctx.task_id, batch.session.head, index, batch.calls[index])

    def _started(self, settled: tuple) -> tuple[tuple | None, str | None]:
        """Before the tool of a settled call runs: its attempt key and the record of the attempt
        (what the history holds if the tool raises), remembered (SPEC 12.1 "An attempt is a call")."""
        o, batch, ctx, _ = settled
        key = self.attempt_key(ctx, batch, o.index)
        if key is None:
            return None, None
        attempt = batch.entry(o, None, keep=False)
        self.attempts.start(key, attempt)
        return key, attempt

    def _failed(self, settled: tuple, attempt: str | None) -> None:
        """The tool of a settled call raised: its attempt is recorded (a write that survives when
        the failure is caught, as a retry middleware or `handle_tool_errors` does)."""
        o, batch, ctx, _ = settled
        if attempt is not None:
            batch.written.append(attempt)
            send_record(ctx.config, attempt, self._sealed)
            self._trace_call(ctx, o, attempt)

    def run_settled(self, settled: tuple, handler: Callable[[Any], Any], carry: bool = True) -> Any:
        """Run a settled call through `handler`, its attempt remembered first."""
        key, attempt = self._started(settled)
        o, batch, ctx, to_run = settled
        try:
            result = handler(to_run)
        except _BubbleUp:
            raise
        except Exception:
            self._failed(settled, attempt)
            raise
        why = marks_turn(result, getattr(to_run, "state", None))  # only the person starts a turn (turns.py)
        if why is not None:
            result = withheld(o, why)
        return self._ran(o, batch, ctx, result, carry=carry, key=key)

    async def arun_settled(self, settled: tuple, handler: Callable[[Any], Any], carry: bool = True) -> Any:
        """The async `run_settled`."""
        key, attempt = self._started(settled)
        o, batch, ctx, to_run = settled
        try:
            result = await handler(to_run)
        except _BubbleUp:
            raise
        except Exception:
            self._failed(settled, attempt)
            raise
        why = marks_turn(result, getattr(to_run, "state", None))  # only the person starts a turn (turns.py)
        if why is not None:
            result = withheld(o, why)
        return self._ran(o, batch, ctx, result, carry=carry, key=key)

    def begin(self, request: Any, plan: tuple | None = None) -> tuple[Any, tuple | None]:
        """(the answer to return, None) when the call does not run, else (None, (outcome, batch,
        context, the request that runs exactly the settled call)). `plan`: the call already
        settled (by the guarded tool node); else it is decided here, an error refusing it."""
        if plan is None:
            try:
                plan = self._prepare(request)
            except (_BubbleUp, GuardConfigError):  # a pause; a catalogue still missing (lazy.py): nothing runs
                raise
            except Exception as e:  # noqa: BLE001 - fail closed: nothing runs
                return _internal_refusal(request.tool_call, e), None
        o, batch, ctx = plan
        if o.stored is not None:  # a retry (attempts.py): refused, the attempt's record written again
            return self._refused(o, batch, ctx), None
        to_run = self._override(request, o) if o.run else None
        if o.run and to_run is None:
            o = _not_bound(o)
        if not o.run:
            return self._refused(o, batch, ctx), None
        return None, (o, batch, ctx, to_run)

    # ------------------------------------------------------------------ the three uses
    def tool_node(self, tools: list, name: str = "tools", **kwargs: Any) -> Any:
        """A guarded tool node over `tools` for `StateGraph.add_node(name, node)`: a `ToolNode`
        whose every call passes the guard, asking about all the calls of a batch that need a
        person before it runs any. Raises `GuardConfigError` naming a tool the catalogue lacks
        (the verifier would refuse the export). `kwargs` go to `ToolNode`."""
        return guarded_tool_node(self, tools, name, **kwargs)

    def call(self, tool: Any, args: dict, state: Any, *, config: Any = None, name: str | None = None,
             call_id: str | None = None, injected: dict | None = None) -> CallResult:
        """Decide a call `tool(**args)` that a step's code makes itself (SPEC 12.1, the seed's
        `Guard.call_with`), ask the person if it must be confirmed, and run it only if allowed.

        `tool`: a LangChain tool (or any object with `name` and `invoke(args)`), or a plain
        function (named by its `__name__`, or `name=` the catalogue's name; an async function
        runs to its end here when no event loop runs in this thread: in async code use
        `await guard.acall(...)`); `state`: the node's state (a mapping, a dataclass or a
        pydantic model, `state.py`); `args`: the model's arguments. Injected arguments
        (`InjectedState`, `InjectedStore`, `InjectedToolCallId`, `ToolRuntime`) are given as
        ToolNode gives them (`state`, the graph's store, `call_id=`), or by `injected={...}`, and
        are passed to the tool unchecked and unrecorded (`callables.py`).
        The entry is added to the state's history (so a second call in the same step sees it) and,
        inside a graph, written to the state; outside one, return `result.update` with the step's
        own update. Calls made one after another in one step are each a batch of their own. A call
        that needs a person after a write of this step already ran is refused: when the run
        resumes, LangGraph runs the step again from its start, and the earlier call would run
        twice (ask first, or split the step); reads may run again. Calls made in tasks that run
        at once (`Send` branches, parallel steps) are decided one at a time over one serialised
        history (`concurrent.py`). A tool answer that writes a turn mark (a `Command` adding a
        message as the person's, `turns.py`) is withheld as in the tool node: `result.output` is
        then the `ToolMessage` saying so."""
        runner, c = runner_of(tool, args, name, call_id, "guard.call", injected, state)
        if runner.sync is None and _loop_running():
            raise TypeError(f"guard.call: {runner.name!r} is an async function and an event loop runs in this thread: "
                            f"write `await guard.acall({runner.name}, ...)`")
        cfg = config if config is not None else current_config()
        return self._call_guarded(runner, c, state, cfg, None)

    async def acall(self, tool: Any, args: dict, state: Any, *, config: Any = None, name: str | None = None,
                    call_id: str | None = None, injected: dict | None = None) -> CallResult:
        """The async `call`: the same decisions, records and serialisation of concurrent branches
        (`concurrent.py`), for an `async def` step. `tool`: a LangChain tool (awaited with
        `ainvoke`), an async function (awaited) or a sync function. The guard's own work, and a
        pause to ask the person, run in a thread of this call's own (the lane a concurrent branch
        waits on is a thread lock, so waiting never blocks the event loop); the tool itself runs
        on the caller's event loop. Cancelled (a timeout of `asyncio.wait_for`), it first waits for
        the call to end, so that its record is written: a call that ran always counts."""
        import asyncio
        import concurrent.futures
        import contextvars

        runner, c = runner_of(tool, args, name, call_id, "guard.acall", injected, state)
        cfg = config if config is not None else current_config()
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        fut: concurrent.futures.Future = concurrent.futures.Future()

        fut.set_running_or_notify_cancel()  # running: it cannot be cancelled (the guard's work is not abandoned)

        def work() -> None:
            try:
                fut.set_result(ctx.run(self._call_guarded, runner, c, state, cfg, loop))
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting task, a pause included
                fut.set_exception(e)

        threading.Thread(target=work, name="stalwart-guard-acall", daemon=True).start()
        done = asyncio.wrap_future(fut)
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            # cancelled (asyncio.wait_for's timeout, a task cancelled) while the guard decides or the
            # tool runs: wait for the guard's thread to end, so that the call's record is written to
            # this task while the task is still live (a record written after the step returned would
            # be lost, and the call would not count), then let the cancellation go on
            while not done.done():
                try:
                    await asyncio.shield(done)
                except asyncio.CancelledError:
                    continue
                except BaseException:  # noqa: BLE001 - the call's own outcome; the cancellation wins
                    break
            if done.done() and not done.cancelled():
                done.exception()  # retrieved: the cancellation is what this task raises
            raise

    def _call_guarded(self, runner: Runner, c: Call, state: Any, cfg: Any, loop: Any) -> CallResult:
        """`call` and `acall` once the callable is read: in the superstep's lane when there is one."""
        ctx = RunContext.of(cfg, state)
        problem = channel_problem(cfg) if cfg is not None else None
        problem = _state.unreadable(state, "the step") or problem
        lane, hist = self._lane(cfg, ctx, state, problem)
        step = superstep(cfg) if cfg and ctx.thread != NO_THREAD and not nested(cfg) else None
        with self._sealed.running(ctx.thread, step) if step is not None else _NOT_RUNNING as other_run:
            if lane is None:
                return self._call(runner, c, state, cfg, ctx, problem, loop, None, None, other_run)
            ns = str(((cfg or {}).get("metadata") or {}).get("langgraph_checkpoint_ns") or "")
            with lane.turn(ns):  # concurrent branches: one call at a time, over the lane's records (concurrent.py)
                return self._call(runner, c, state, cfg, ctx, problem, loop, lane, hist, other_run)

    def _lane(self, cfg: Any, ctx: "RunContext", state: Any, problem: str | None) -> tuple[Any, Any]:
        """(the lane of the call's superstep, the history at the superstep's start), or (None, None)
        outside a graph task or when the graph's channel cannot be read (`concurrent.py`)."""
        step = superstep(cfg) if problem is None else None
        if step is None:
            return None, None
        ok, base = channel_value(cfg, HISTORY_KEY)
        if not ok:
            return None, None
        lane = self._lanes.of((ctx.thread,) + step)
        if nested(cfg):  # a subgraph's channel holds what its input carried: tie it to the top graph's history
            top = lane.top_history(cfg, HISTORY_KEY)
            known = set(top or ()) | set(lane.records)
            if top and all(isinstance(r, str) and r in known for r in base or ()):
                base = merge_history(top, base)
        return lane, base

    def _call(self, runner: Runner, c: Call, state: Any, cfg: Any, ctx: "RunContext", problem: str | None,
              loop: Any, lane: Any, base: Any, other_run: bool = False) -> CallResult:
        """`call`, in its lane (None: a call no other task can race, or one that cannot be tied);
        `other_run`: a call of another run of the thread is under way (`sealed.py`)."""
        from langchain_core.messages import ToolMessage

        name = c.tool
        hist = None
        view = 0
        if lane is not None:
            mine = self._held(state)
            view = lane.view(ctx.task_id, ((cfg or {}).get("configurable") or {}).get("__pregel_scratchpad"))
            hist = base if mine is None or mine == base else merge_history(base, mine)
            if view:
                hist = merge_history(hist, lane.records[:view])
        batch = self.batch_of([c], state, ctx, problem, hist=hist)
        if lane is None and ctx.own_task and bears_limit(self.rules.catalogue.get(name)) and problem is None:
            batch.concurrent = CONCURRENT_TEXT if cfg else OUTSIDE_TEXT
        if other_run and problem is None:
            batch.concurrent = OTHER_RUN_TEXT
        task = ctx.task_id
        deny = None
        if task is not None:
            with self._lock:
                if self._step_writes.get(task):
                    deny = ("a call that needs a person after another guarded call of this step ran: when the run "
                            "resumes LangGraph runs the step again from its start and that call would run twice; "
                            "make the confirmed call first, or in a step of its own")
        # not by the history head: a step run again keeps, in its state dict, the records of its calls
        # before this one, so the head differs; the same call twice in one step task is the same call
        key = Attempts.key(self.rules, ctx.thread, task, "", 0, c)
        seen, stored = self.attempts.seen(key)
        if seen:
            o = retried(Outcome(0, c, False, refuse("retry", "")), stored)
        elif runner.with_retry and self._limited(name):
            o = Outcome(0, c, False, refuse("retry", ""), reasons=["retry"], message=(
                f"'{name}' did not run: it is wrapped in .with_retry(), whose attempts run inside one guarded call "
                "where the guard cannot count them (SPEC 12.1 \"An attempt is a call\"); pass the tool itself and "
                "retry the node (RetryPolicy) or with a retry middleware before the guard: the guard counts those"))
        else:
            o = batch.settle([0], ask_person, deny_asking=deny)[0]
        output = None
        if o.run:
            attempt = None
            if key is not None:
                attempt = batch.entry(o, None, keep=False)
                self.attempts.start(key, attempt)
            try:
                output = runner.run(o.call.args, loop)
            except _BubbleUp:
                raise
            except Exception:
                if attempt is not None and lane is not None and len(lane.records) > view:
                    batch = self._moved(batch, state, ctx, problem, hist, lane, view)
                    attempt = batch.entry(o, None, keep=False)
                if attempt is not None:  # not into `state`: a retry of the step gets that same dict
                    if lane is not None:
                        lane.sealed(task, attempt, view)
                    send_record(cfg, attempt, self._sealed)
                    self._step_sent(task, attempt)
                    self._trace_call(ctx, o, attempt)
                raise
            why = marks_turn(output, state)  # only the person starts a turn (turns.py), as in `run_settled`
            if why is not None:
                output = withheld(o, why)
            spec = self.rules.catalogue.get(o.call.tool)
            if task is not None and spec is not None and spec.is_write:
                with self._lock:
                    self._step_writes[task] = self._step_writes.pop(task, 0) + 1
                    while len(self._step_writes) > 256:  # the oldest steps' counts are done with
                        self._step_writes.popitem(last=False)
        if lane is not None and o.stored is None and len(lane.records) > view:
            if not lane.replay(ctx.task_id, view):
                batch = self._moved(batch, state, ctx, problem, hist, lane, view)
                view = len(lane.records)
        record = o.stored or batch.entry(o, output.content if isinstance(output, ToolMessage) else output)
        if o.run:
            self.attempts.done(key, record)
        self._keep(state, record)
        # a step run again (RetryPolicy) lost its earlier writes but its state dict kept them: write
        # this step's earlier records again (the same texts: the history keeps each once)
        for earlier in self._step_sent(task, record):
            send_record(cfg, earlier, self._sealed)
        if lane is not None:  # the lane's records so far with this one: none lost if a branch's writes are dropped
            lane.sealed(task, record, view)
            send_records(cfg, lane.records + [record], self._sealed)
        else:
            send_record(cfg, record, self._sealed)
        entry = self._trace_call(ctx, o, record)
        return CallResult(o.run, output, entry["decision"], list(o.reasons),
                          "" if o.run else refusal_text(o), entry, {HISTORY_KEY: [record]})

    def _moved(self, batch: Batch, state: Any, ctx: "RunContext", problem: str | None, hist: Any, lane: Any,
               view: int) -> Batch:
        """`batch` placed after the records the lane gained while its call ran (calls made inside
        it: its tool ran a graph that called the guard), so that its record follows theirs."""
        if hist is None:
            hist = self._held(state)
        moved = self.batch_of(batch.calls, state, ctx, problem, hist=merge_history(hist, lane.records[view:]))
        moved.concurrent = batch.concurrent
        return moved

    def traced(self, graph: Any) -> Any:
        """`graph` (a compiled graph) with the guard's trace attached: every node the run enters
        and every call the guard decides is written to `trace`, a line per turn. Returns a copy
        (`graph.with_config(callbacks=[...])`), still a compiled graph the exporter reads.
        Raises `ValueError` when the guard was built without `trace=`."""
        if self.trace is None:
            raise ValueError("guard.traced(graph) needs a trace file: build the guard with Guard(..., trace='runs.jsonl')")
        tracer = make_tracer(self.trace)
        out = graph.with_config(callbacks=[tracer])
        tracer.graph = out  # the copy whose runs it traces: it reads whether a run paused from it
        return out

    # ------------------------------------------------------------------ internals
    def _step_sent(self, task: str | None, record: str) -> list[str]:
        """The records `guard.call` wrote earlier in step task `task`; `record` is added."""
        if task is None:
            return []
        with self._lock:
            got = self._step_records.pop(task, [])
            self._step_records[task] = got + [record]
            while len(self._step_records) > 256:
                self._step_records.popitem(last=False)
        return [r for r in got if r != record]

    def _with_sealed(self, hist: Any, ctx: "RunContext", problem: str | None) -> Any:
        """`hist` with the records this process wrote to the thread that it lacks (their task failed
        and LangGraph dropped its writes: `sealed.py`), written again with this task's writes."""
        if problem is not None or not ctx.config or ctx.thread == NO_THREAD or nested(ctx.config):
            return hist
        if hist is not None and not isinstance(hist, list):
            return hist
        lost = self._sealed.missing(ctx.thread, hist, superstep(ctx.config))
        if not lost:
            return hist
        send_records(ctx.config, lost)
        return merge_history(hist, lost)

    @staticmethod
    def _with_channel(hist: Any, ctx: "RunContext", problem: str | None) -> Any:
        """`hist` (what the state object holds) with the records of the graph's own history channel
        when the task can read it: a state object is built by LangGraph from the channels, and its
        class may change what it holds on the way (a pydantic validator that empties the history),
        so the channel's records are never lost; records only the object holds are kept too (a
        `Send` payload's), and verification refuses any that do not belong."""
        if problem is not None or not ctx.config:
            return hist
        ok, base = channel_value(ctx.config, HISTORY_KEY)
        if not ok or not isinstance(base, list) or not base or hist == base:
            return hist
        if hist is not None and not isinstance(hist, list):
            return hist  # not a history: verification refuses it
        return merge_history(base, hist)

    def _held(self, state: Any) -> Any:
        """The history `state` holds, with the records `guard.call` kept beside it when it could not
        set them in it (a frozen dataclass or model: `_keep`)."""
        hist = _state.get(state, HISTORY_KEY)
        with self._lock:
            side = self._beside.get(id(state))
        if side is not None and side[0] is state and (hist is None or isinstance(hist, list)):
            hist = merge_history(hist, side[1])
        return hist

    def _keep(self, state: Any, record: str) -> None:
        """Add `record` to the step's own state object, so that its next call sees it; beside the
        object when it cannot be set in it (`_held` reads it there)."""
        if _state.put(state, HISTORY_KEY, merge_history(_state.get(state, HISTORY_KEY), [record])):
            return
        if not _state.readable(state):
            return
        with self._lock:
            side = self._beside.pop(id(state), None)
            kept = side[1] if side is not None and side[0] is state else []
            self._beside[id(state)] = (state, kept + [record])
            while len(self._beside) > 256:  # the oldest steps' states are done with
                self._beside.popitem(last=False)

    def _limited(self, tool: str) -> bool:
        """Whether a retry could push a call of `tool` past a rule: a write, or an `at_most` limit."""
        spec = self.rules.catalogue.get(tool)
        return spec is None or spec.is_write or spec.at_most is not None

    def _context_of(self, state: Any) -> dict:
        if self._context is None:
            return {}
        if callable(self._context):
            try:
                got = self._context(state)
            except Exception as e:  # noqa: BLE001 - a context that fails gives nothing: facts read false
                raise ContextFailed(f"{type(e).__name__}: {e}") from e
            return dict(got or {})
        return dict(self._context)

    def batch_of(self, calls: list[Call], state: Any, ctx: "RunContext", problem: str | None,
               bound: set[str] | None = None, hist: Any = None) -> Batch:
        """The batch of `calls` over the state's history (or `hist`, the history to decide over)."""
        if hist is None:
            hist = self._with_channel(self._held(state), ctx, problem)
        hist = self._with_sealed(hist, ctx, problem)
        from dataclasses import replace

        session = verify(hist, self.chain, ctx.thread)  # may be shared with later calls: replaced, never changed
        if problem is not None and session.problem is None:
            session = replace(session, problem=problem)
        try:
            context = self._context_of(state)
        except ContextFailed as e:
            if session.problem is None:
                session = replace(session, problem=f"the guard's context function failed ({e})",
                                  problem_reason="guard_error")
            context = {}
        records = tuple(hist) if isinstance(hist, list) else ()
        turn, mark = turn_of(conversation(state, ctx, problem), session)
        return Batch(self.rules, self.chain, calls, session, turn, ctx.node, bound, context, records, human=mark)

    def _prepare(self, request: Any) -> tuple[Outcome, Batch, "RunContext"]:
        """(outcome, batch, context) of a ToolNode request: decided, and the person asked."""
        tc = request.tool_call
        state = request.state
        cfg = getattr(request.runtime, "config", None) or {}
        ctx = RunContext.of(cfg, state)
        problem = _state.unreadable(state, "the tool node") or channel_problem(cfg)
        calls, index, ids = batch_calls(state, tc)
        bound = None
        tools = getattr(request.runtime, "tools", None)
        if tools:
            bound = {t.name for t in tools}
        batch = self.batch_of(calls, state, ctx, problem, bound)
        batch.call_problem = ids
        if ctx.own_task and not self.claims.claim(cfg, ctx.thread, batch.session.head, index, ctx.task_id):
            batch.concurrent = CONCURRENT_TEXT  # a place another task of this superstep decided (concurrent.py)
        seen, stored = self.attempts.seen(self.attempt_key(ctx, batch, index))
        if seen:  # a retry of a call already attempted (attempts.py): nothing decided or asked
            return retried(Outcome(index, calls[index], False, refuse("retry", "")), stored), batch, ctx
        deny = None
        if len(calls) > 1 and not ctx.own_task:
            deny = (f"this tool node runs the {len(calls)} calls of the model's message in one task, and a pause there "
                    "would make LangGraph run the others again when the run resumes: use guard.tool_node(...) "
                    "or create_agent(..., middleware=[guard]), which ask before running")
        return batch.settle([index], ask_person, deny_asking=deny)[0], batch, ctx

    def _override(self, request: Any, o: Outcome) -> Any:
        """The request that runs exactly the settled call, or None when the call names a tool
        (an edit to another tool) this node does not have."""
        tc = dict(request.tool_call)
        tc["name"], tc["args"] = o.call.tool, o.call.args
        if o.call.tool != request.tool_call.get("name"):
            tools = getattr(request.runtime, "tools", None) or []
            tool = next((t for t in tools if t.name == o.call.tool), None)
            return None if tool is None else request.override(tool_call=tc, tool=tool)
        return request.override(tool_call=tc)

    def _refused(self, o: Outcome, batch: Batch, ctx: "RunContext") -> Any:
        from langchain_core.messages import ToolMessage

        if o.stored is not None:  # a retry: the attempt's record again (already traced), no new one
            batch.written.append(o.stored)
            send_record(ctx.config, o.stored, self._sealed)
            return ToolMessage(content=refusal_text(o), name=o.call.tool, tool_call_id=o.call.call_id or "",
                               status="error", additional_kwargs={"stalwart_guard": {
                                   "decision": "refuse", "reasons": o.reasons}})
        record = batch.entry(o)
        send_record(ctx.config, record, self._sealed)
        entry = self._trace_call(ctx, o, record)
        return ToolMessage(content=refusal_text(o), name=o.call.tool, tool_call_id=o.call.call_id or "",
                           status="error", additional_kwargs={"stalwart_guard": {
                               "decision": entry["decision"], "reasons": o.reasons}})

    def _ran(self, o: Outcome, batch: Batch, ctx: "RunContext", result: Any, *, carry: bool = True,
             key: tuple | None = None) -> Any:
        """Record the call that ran and return its `result`. A result handing off to the parent
        graph (`handoff.py`) carries the history, this call included, in its Command (with
        `carry`; the guarded tool node carries the whole batch's once every call ran). Made in a
        batch of several calls run as tasks of their own (create_agent), a hand-off is not
        passed on: LangGraph would drop the other calls' results and records at the hand-off, so
        the model is told to hand off alone."""
        record = batch.entry(o, answer_of(result, o.call.call_id))
        self.attempts.done(key, record)
        send_record(ctx.config, record, self._sealed)
        self._trace_call(ctx, o, record)
        if carry and hands_off(result):
            if len(batch.calls) > 1:
                return _handoff_not_made(o, len(batch.calls))
            return carry_history(result, batch.history_after())
        return result

    def _trace_call(self, ctx: "RunContext", o: Outcome, record: str) -> dict:
        """The entry of `record`, after writing its step to the trace (when there is one)."""
        entry = dict(parse(record) or {})
        if self.trace is None:
            return entry
        step: dict[str, Any] = {"node": ctx.node or "?"}
        step["tool" if o.run else "call"] = o.call.tool
        step.update(decision=entry["decision"], reasons=list(o.reasons), answer=o.answer, call_id=o.call.call_id)
        if not o.run:
            step["ran"] = False
        if o.proposed is not None:
            step["proposed"] = {"tool": o.proposed.tool, "args": o.proposed.args}
        self.trace.call(ctx.thread, step)
        return entry


try:  # LangGraph's pause (interrupt) and hand-off signals must pass through the guard
    from langgraph.errors import GraphBubbleUp as _BubbleUp
except ImportError:  # pragma: no cover
    class _BubbleUp(Exception):  # type: ignore[no-redef]
        pass


def _not_bound(o: Outcome) -> Outcome:
    """`o` refused: its call names a tool the node does not bind."""
    from dataclasses import replace

    return replace(o, run=False, reasons=["unknown_tool"],
                   message=f"'{o.call.tool}' is not bound where it was called")


def _handoff_not_made(o: Outcome, n: int) -> Any:
    """The answer to a hand-off asked for with other calls in one message (see `Guard._ran`)."""
    from langchain_core.messages import ToolMessage

    return ToolMessage(content=f"The hand-off '{o.call.tool}' was not made: it was asked for with {n - 1} other call(s) "
                               "in one message, and a hand-off drops the results of the others; hand off in a "
                               "message of its own", name=o.call.tool, tool_call_id=o.call.call_id or "",
                       status="error", additional_kwargs={"stalwart_guard": {"decision": "allow", "handoff": False}})


def _internal_refusal(tool_call: dict, e: BaseException) -> Any:
    """The answer to a call the guard could not even read: refused (`guard_error`), nothing run."""
    from langchain_core.messages import ToolMessage

    return ToolMessage(content=f"Refused by the tool check (guard_error): the tool check could not decide the call "
                               f"({type(e).__name__}: {e})", name=tool_call.get("name", "?"),
                       tool_call_id=tool_call.get("id") or "", status="error",
                       additional_kwargs={"stalwart_guard": {"decision": "refuse", "reasons": ["guard_error"]}})


def _loop_running() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


#: No place held (`Sealed.running`): a call outside a top-level task of a thread.
_NOT_RUNNING = nullcontext(False)


