"""The guard for OpenAI Agents SDK applications (SPEC 12.1, 13.1's last paragraph, 3.1 "The guard's
view" and "Standing approvals").

    from agents import Runner, SQLiteSession
    from stalwart_export.openai_agents import AgentGuard

    guard = AgentGuard("catalogue.json", key=os.environ["GUARD_KEY"])
    triage = guard.wrap(triage_agent)                  # every agent it reaches, in place
    session = guard.session(SQLiteSession("conv-42"))  # the history lives here
    result = await Runner.run(triage, text, session=session, run_config=session.run_config())

`wrap(agent)` walks the agent, its hand-off targets and its agents-as-tools, and gives every
function tool (each replaced by a guarded copy, a `FunctionTool` still):

* the refusals (rules 1-7: `unknown_tool`, `history_invalid`, `argument_schema`,
  `undeclared_destination`, `order_rule`, the rulebook, `taint_policy: refuse`) as a tool input
  guardrail, which the SDK runs before it asks for an approval (`ToolExecutionConfig(
  pre_approval_tool_input_guardrails=True)`, set by `session.run_config()`) and again just before
  the tool runs: a refused call runs nothing, the model gets the reason, the history records it;
* the questions (rule 7 `confirm`, rule 8 every write, and a privileged tool) through
  `needs_approval`: the run stops with `result.interruptions`; `state.approve(item)` runs exactly
  that call, `state.reject(item)` runs nothing (the tool's own `needs_approval` still asks too);
* a last check where the tool is invoked: the call decided again over the history as it is then,
  run only if allowed, or if it needs a person, only when this very call was put to them with
  the arguments and reasons it now has and they approved it.

Standing approvals (`approve(item, always_approve=True)`) are not accepted for a later call: the
guard asks about every write (SPEC 12.1 rule 8), and a later call that only a standing approval
covers is refused (`standing`), so the export's reviews of guarded tools are never `standing`.

The history (each call decided, run or refused, the person's answers, the outside-content marks,
the counts) is `_guard_store.GuardSession`: the application's `Session` when it gives one, so
`at_most` per session, `order.after`/`not_after` and the `untrusted` taint hold across turns and
across `Runner.run` calls sharing the session; chained and (with `key`) keyed as the LangGraph
guard's. Without a Session (`guard.session()`), the history is this object's memory only: the
rules hold over the runs given the same `run_config`, not across processes. A run whose
`RunConfig` is not one `session.run_config()` made (no history bound, or the pre-approval
guardrails off) has every guarded call refused (`guard_error`), saying why.

What stays plain (SPEC 3.1 "The guard's view"): hosted tools (the provider runs them inside the
model call), local tools (`ShellTool`, `ComputerTool`, `ApplyPatchTool`, `LocalShellTool`: the SDK
runs no tool guardrail for them), MCP servers' tools (listed at run time) and agents-as-tools
(their own agents' tools are wrapped; the agent tool is copied only so that its nested run keeps
the caller's turn, `_nested.py`: the model writes the nested run's input, which is not the
person's message). The exporter reads the guard's mark on each tool
(`guarded_tool`): an agent whose every tool is guarded has a `tools` node, any other `tools_plain`.

SDK internals read (openai-agents 0.24.0): `RunContextWrapper._approvals` (whether an approval is
for one call or standing), `ToolContext.run_config`, `ToolContext.turn_input`.
"""

from __future__ import annotations

import copy
import json
import warnings
from dataclasses import replace
from typing import Any

from ..guard.core import Batch, Outcome, refusal_text
from ..guard.decide import ALLOW, CONFIRM, REFUSE, Call, Decision, decide, refuse
from ..guard.doc import GuardConfigError
from ..guard.history import Chain
from ..guard.lazy import RulesSource
from ..guard.review import digest
from . import _handoffs, _nested, _tools
from ._tools import GuardMark, guarded_tool
from ._agent import is_agent
from ._guard_store import ASKED_TYPE, GuardSession, pre_approval_on, session_of

NO_SESSION = ("the guard keeps its history in memory only (no Session given): its session rules (at_most, "
              "order.after/not_after, the untrusted taint) hold over the runs given this session's run_config, "
              "not across processes; give guard.session(SQLiteSession(...)) to keep them")


class AgentGuard:
    """The tool check for OpenAI Agents SDK agents (see the module's doc). Same options as the
    LangGraph `Guard`: `catalogue` (qls-catalogue/1 file or mapping), `rulebook`, `facts`,
    `taint_policy` (`confirm` or `refuse`), `key` (HMAC key of the history chain),
    `input_reads_outside` (every turn's input is outside content). Raises `GuardConfigError`."""

    def __init__(self, catalogue: Any, *, rulebook: Any = None, facts: Any = None, taint_policy: str = "confirm",
                 key: bytes | str | None = None, input_reads_outside: bool = False) -> None:
        if taint_policy not in ("confirm", "refuse"):
            raise GuardConfigError(f"taint_policy must be 'confirm' or 'refuse', not {taint_policy!r}",
                                   "write taint_policy='confirm' (ask the person) or 'refuse'")
        if key is not None and (not isinstance(key, (bytes, str)) or not key):
            raise GuardConfigError("key is empty or not text: an empty key is not 'no key'",
                                   "give key= a secret (bytes or text), or leave key out")
        self._source = RulesSource(catalogue, rulebook, facts, taint_policy, bool(input_reads_outside))
        self.chain = Chain(key)

    @property
    def rules(self):
        return self._source.get()

    # ------------------------------------------------------------------ the one call
    def wrap(self, agent: Any) -> Any:
        """Guard `agent` and every agent it reaches (hand-offs, agents-as-tools): each function
        tool is replaced, in the agent's own `tools` list, by a guarded copy. Returns `agent`.
        Wrapping again with this guard changes nothing; a tool another guard wraps is an error."""
        if not is_agent(agent):
            raise TypeError(f"AgentGuard.wrap expects an OpenAI Agents SDK Agent, got {type(agent).__name__}")
        for a in _handoffs.reached(agent):
            a.tools = [self._tool(t, a) for t in (a.tools or [])]
        return agent

    def session(self, inner: Any = None) -> GuardSession:
        """The history of one conversation, in the application's `Session` `inner` (pass the result
        as `Runner.run(session=...)`), or in memory without one (a warning says what then holds)."""
        if inner is None:
            warnings.warn(NO_SESSION, stacklevel=2)
        elif isinstance(inner, GuardSession):
            raise TypeError("the session is already the guard's")
        return GuardSession(self, inner)

    def _tool(self, t: Any, agent: Any) -> Any:
        from agents import FunctionTool

        if isinstance(t, FunctionTool) and getattr(t, "_is_agent_tool", False):
            return _nested.agent_tool(self, t)  # its nested run keeps the caller's turn (_nested.py)
        if not isinstance(t, FunctionTool):
            return t  # hosted, local: see the module's doc
        mark = guarded_tool(t)
        if mark is not None:
            if mark.guard is not self:
                raise GuardConfigError(f"the tool {t.name!r} of agent {agent.name!r} is guarded by another guard",
                                       "wrap each agent with one guard")
            return t
        return _guarded_copy(self, t, agent)


def _guarded_copy(guard: AgentGuard, t: Any, agent: Any) -> Any:
    from agents.tool_guardrails import ToolGuardrailFunctionOutput, ToolInputGuardrail

    node = f"{agent.name}:tools"
    from agents import FunctionTool

    bound = frozenset(x.name for x in agent.tools or [] if isinstance(x, FunctionTool))
    mark = GuardMark(guard, t.name, node, bound, t.needs_approval, _tools.wrapped(t))
    original_invoke = t.on_invoke_tool

    async def approver(ctx: Any, params: dict, call_id: str) -> bool:
        """Rules 7-8 as a question: every write and privileged tool is put to the person (with its
        reasons, decided by the guardrail); the tool's own `needs_approval` asks too."""
        return await _asks(mark, ctx, params, call_id)

    async def check(data: Any) -> Any:
        ctx = data.context
        try:
            params = json.loads(ctx.tool_arguments or "{}")
        except ValueError:
            params = {}
        asks = await _asks(mark, ctx, params if isinstance(params, dict) else {}, ctx.tool_call_id)
        d, _ = await _decide(mark, ctx, ctx.tool_name, ctx.tool_arguments, ctx.tool_call_id, phase="guardrail",
                             asks=asks)
        if d.outcome == REFUSE:
            return ToolGuardrailFunctionOutput.reject_content(d.message, output_info={"stalwart_guard": d.reasons})
        return ToolGuardrailFunctionOutput.allow(output_info={"stalwart_guard": d.outcome})

    async def invoker(ctx: Any, arguments: str) -> Any:
        d, run = await _decide(mark, ctx, getattr(ctx, "tool_name", t.name), arguments,
                               getattr(ctx, "tool_call_id", None), phase="invoke")
        if run is None:
            return d.message
        result = None
        try:
            with _nested.carrying(ctx):  # a run the tool starts keeps this call's turn
                result = await original_invoke(ctx, arguments)
            return result
        finally:  # an attempt is a call: recorded whether the tool returned or raised
            await run(result)

    mark.approver = approver
    mark.guardrail = ToolInputGuardrail(guardrail_function=check, name="stalwart_guard")
    mark.invoker = invoker
    new = copy.copy(t)
    new.needs_approval = approver
    new.tool_input_guardrails = [mark.guardrail] + list(t.tool_input_guardrails or [])
    new.on_invoke_tool = invoker
    new._stalwart_guard = mark  # type: ignore[attr-defined]
    return new


async def _asks(mark: GuardMark, ctx: Any, params: dict, call_id: str) -> bool:
    try:
        spec = mark.guard.rules.catalogue.get(mark.name)
    except Exception:  # noqa: BLE001 - a catalogue that cannot be read: ask; the guardrail refuses
        return True
    if spec is not None and (spec.is_write or spec.privileged):
        return True
    own = mark.original_approval
    if callable(own):
        return bool(await own(ctx, params, call_id))
    return own is True


def _approval(ctx: Any, tool: str, call_id: str) -> str | None:
    """How the person answered the call: `call` (approved, this call), `standing` (approved only
    by `always_approve`), `rejected`, or None (not answered). Reads `_approvals` (SDK internal)."""
    status = ctx.is_tool_approved(tool, call_id)
    if status is False:
        return "rejected"
    if status is None:
        return None
    for key, rec in (getattr(ctx, "_approvals", None) or {}).items():
        if getattr(key, "tool_key", str(key)) == tool and isinstance(rec.approved, list) and call_id in rec.approved:
            return "call"
    return "standing"


def _turn(ctx: Any, session: Any, people: list | None = None) -> tuple[int, str | None]:
    """The turn (the guard's count of the person's messages) and its mark: the person's latest
    message. With the application's `Session`, `people` are the person's messages it holds (the
    SDK saves each run's input there before any tool runs; a hand-off's `input_filter` or
    `nest_handoff_history` rewrites only what the next agent reads, never the session); without
    one, the run's input (`turn_input`, the outermost run's in a nested run: `_nested.py`). The
    same mark is the same turn (a resumed run)."""
    import hashlib

    items = people if people is not None else [
        i for i in _nested.turn_input(ctx) if isinstance(i, dict) and i.get("role") == "user"]
    mark = None
    if items:
        body = json.dumps(items[-1], sort_keys=True, default=str)
        mark = hashlib.sha256(f"{len(items)}|{body}".encode()).hexdigest()[:24]
    last = session.entries[-1] if session.entries else None
    if last is None or not isinstance(last.get("turn"), int):
        return 1, mark
    if mark is None or mark == last.get("human"):
        return last["turn"], last.get("human")
    return last["turn"] + 1, mark


async def _decide(mark: GuardMark, ctx: Any, tool: str, arguments: Any, call_id: Any, phase: str,
                  asks: bool = False):
    """(the decision, None) for a call that does not run (refused, its record kept), or (the
    decision, `record(result)`) for one that runs now (`phase` "invoke") or may go on to the person
    or the tool (`phase` "guardrail", `record` None)."""
    mark = _where(mark, ctx)
    store = session_of(getattr(ctx, "run_config", None))
    fix = "pass run_config=session.run_config() (session = guard.session(...)) to Runner.run"
    problem = None
    if store is None:
        problem = f"the run's RunConfig is not bound to the guard's history: {fix}"
    elif store.guard is not mark.guard:
        problem = "the run's guard session belongs to another guard"
    elif not pre_approval_on(ctx.run_config):
        problem = ("the run's RunConfig does not run tool input guardrails before approvals (ToolExecutionConfig("
                   f"pre_approval_tool_input_guardrails=True)), so a person could be asked about a call the guard "
                   f"refuses: {fix}")
    if problem is not None:
        return refuse("guard_error", _text("guard_error", tool, problem)), None
    try:
        args = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
    except ValueError:
        args = None
    call = Call(tool, args if isinstance(args, dict) else {}, call_id if isinstance(call_id, str) else None)
    save: list[tuple[str, str]] = []
    try:
        await store.load()
        with store._lock:
            d, turn, outcome = _settle(mark, store, ctx, call, args, phase, asks, save)
    except Exception as e:  # noqa: BLE001 - fail closed: a call the guard cannot decide does not run
        return refuse("guard_error", _text("guard_error", tool, f"the tool check could not decide the call "
                                                             f"({type(e).__name__}: {e})")), None
    for rec, kind in save:
        await store.save(rec, kind)
    if outcome is None:
        return d, None

    async def record(result: Any) -> None:
        with store._lock:
            store.pending.pop(call.call_id or "", None)
            rec = _batch(mark, store, mark.guard.rules, store.verified(), call, *turn).entry(outcome, result)
            store.records.append(rec)
        await store.save(rec)

    return d, (record if phase == "invoke" else None)


def _where(mark: GuardMark, ctx: Any) -> GuardMark:
    """`mark` with the node and bound tools of the agent the call runs in (`ToolContext.agent`):
    a guarded tool shared with a clone (`agent.clone(name=...)`) or moved to another agent after
    `wrap` is recorded where it ran, and decided over the tools bound there."""
    from agents import FunctionTool

    agent = getattr(ctx, "agent", None)
    if not is_agent(agent) or not any(guarded_tool(t) is not None and t.name == mark.name for t in agent.tools or []):
        return mark
    bound = frozenset(x.name for x in agent.tools or [] if isinstance(x, FunctionTool))
    return replace(mark, node=f"{agent.name}:tools", bound=bound)


def _settle(mark: GuardMark, store: GuardSession, ctx: Any, call: Call, args: Any, phase: str, asks: bool,
            save: list) -> tuple[Decision, tuple, Any]:
    """(the decision on `call`, its (turn, mark), the outcome to record when it runs now), under
    the store's lock (see `_decide`); records to persist go to `save`. `asks`: the SDK puts the
    call to the person (`needs_approval` said so)."""
    rules = mark.guard.rules
    session = store.verified()
    turn, human = _turn(ctx, session, store.people)
    # the person's answers the SDK never passes to the tool: a rejected question is a declined call
    done = {e.get("call_id") for e in session.entries}
    for cid, q in list(store.asked.items()):
        pend = store.pending.get(cid)
        if cid in done or pend is None or _approval(ctx, pend[0].tool, cid) != "rejected":
            continue
        b = _batch(mark, store, rules, session, pend[0], turn, human)
        o = Outcome(0, pend[0], False, Decision(CONFIRM, list(q.get("reasons") or [])), answer="reject",
                    reasons=list(q.get("reasons") or []) + ["declined"])
        rec = b.entry(o)
        store.records.append(rec)
        save.append((rec, "stalwart_guard_record"))
        store.pending.pop(cid, None)
        session = store.verified()
    batch = _batch(mark, store, rules, session, call, turn, human)
    earlier = [(c, Decision(ALLOW)) for cid, (c, _) in store.pending.items() if cid != call.call_id]
    if args is None or not isinstance(args, dict):
        d = refuse("argument_schema", f"the arguments of '{call.tool}' are not a JSON object")
    elif not call.call_id:
        d = refuse("call_id", "the call has no id, so it cannot be decided and recorded once")
    elif call.call_id in done:
        d = refuse("call_id", f"the call id {call.call_id!r} was already used in this session: each call is decided "
                              "and recorded once")
    else:
        d = decide(rules, call, session, turn=turn, earlier=earlier, bound=set(mark.bound))
    if phase == "invoke" and d.outcome == CONFIRM:
        d = _confirmed(store, ctx, call, d)
    elif phase == "invoke" and call.call_id not in store.asked and \
            _approval(ctx, call.tool, call.call_id) == "standing":
        d = refuse("standing", f"'{call.tool}' did not run: only a standing approval (always_approve) covers it, and "
                               "the guard accepts an approval only for the call it was given for; approve this call "
                               "itself")
    if d.outcome == REFUSE:
        d = replace(d, message=_text(d.reasons[0], call.tool, d.message))
        o = Outcome(0, call, False, d, message=d.message, reasons=list(d.reasons))
        rec = batch.entry(o)
        store.records.append(rec)
        save.append((rec, "stalwart_guard_record"))
        store.pending.pop(call.call_id or "", None)
        return d, (turn, human), None
    store.pending[call.call_id] = (call, mark.node)
    if phase == "guardrail":
        if (d.outcome == CONFIRM or asks) and _approval(ctx, call.tool, call.call_id) is None:
            save.append((store.seal_question(call.call_id, digest(call, ""), d.reasons), ASKED_TYPE))
        return d, (turn, human), None
    answer = "approve" if d.outcome == CONFIRM or call.call_id in store.asked else None
    return d, (turn, human), Outcome(0, call, True, d, answer=answer, reasons=list(d.reasons))


def _confirmed(store: GuardSession, ctx: Any, call: Call, d: Decision) -> Decision:
    """`d` (confirm) when the person approved exactly this call, shown with these reasons; else a refusal."""
    how = _approval(ctx, call.tool, call.call_id)
    q = store.asked.get(call.call_id)
    if how is None or how == "rejected":
        return refuse("declined", f"'{call.tool}' needs a person's approval, and it was not given")
    if q is None:
        why = ("only a standing approval (always_approve) covers it, and the guard asks about every write call"
               if how == "standing" else "the guard never put this call to the person")
        return refuse("standing" if how == "standing" else "declined", f"'{call.tool}' did not run: {why}; approve "
                      "this call itself")
    if q.get("digest") != digest(call, ""):
        return refuse("declined", f"'{call.tool}' did not run: its arguments are not the ones the person approved")
    if not set(d.reasons) <= set(q.get("reasons") or []):
        new = sorted(set(d.reasons) - set(q.get("reasons") or []))
        return refuse("declined", f"'{call.tool}' did not run: since the person was asked, the session changed "
                                  f"({', '.join(new)}); ask again")
    return d


def _batch(mark: GuardMark, store: GuardSession, rules: Any, session: Any, call: Call, turn: int,
           human: str | None) -> Batch:
    return Batch(rules, store.chain, [call], session, turn, mark.node, set(mark.bound), {},
                 records=tuple(store.records), human=human)


def _text(reason: str, tool: str, message: str) -> str:
    o = Outcome(0, Call(tool, {}), False, refuse(reason, message), message=message, reasons=[reason])
    return refusal_text(o)

