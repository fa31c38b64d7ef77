"""Replay a stalwart-verify witness on a real OpenAI Agents SDK application (SPEC 10, 13.1).

    python -m stalwart_export replay SCRIPT.json CATALOGUE.json --graph app:triage_agent

`stalwart_export/replay.py` hands an SDK `Agent` (or what a function of no arguments returned)
here. The application runs on the real SDK (`Runner.run`), unmodified, with the SDK's own test
model (`agents.testing.ScriptedModel`) in place of every agent's model (`RunConfig(model=...)`,
which agents run as tools inherit) and a stub in place of every function tool:

* each model call answers the witness's next choice at that model node (the export's node `A`,
  or `n/B` inside the agent tool `n`): the hosted calls the witness makes at `A` (a web search,
  file search, code interpreter or image generation call item of the agent's hosted tool, or a
  hosted MCP server's `mcp_call`: the provider's part, made by the scripted model, recorded as
  calls at `A`), the tool calls the witness makes at `A:tools` (each a
  `function_call` with arguments valid for the tool's `params_json_schema`), followed by the
  hand-off's tool call when the witness goes on from `A:tools` to another agent; a hand-off
  (`transfer_to_...`, as the SDK offers it); an agent-as-tool call (for `n` or `A:approve:n`);
  or a final answer (valid for the agent's `output_type`) when the witness goes to `__end__`. A
  model call the witness has no choice for (after its last step) gets a final answer;
* every function tool reachable (through hand-offs and agents as tools) has its `on_invoke_tool`
  swapped for a stub that records the call and returns a fixed text, for the run only: the
  originals are put back after it, even when it raises (the SDK gives an agent tool's inner run
  the original agent, so the tools cannot be swapped on copies). An agent tool's `on_invoke_tool`
  is wrapped to record its node and run the inner agent as the SDK does;
* a run paused for approvals (`result.interruptions`) is answered as the witness says: the
  reviewed call's `yes` (`state.approve`, with `always_approve=True` when the step is `standing`,
  or `state.reject`), an agent tool's `confirm` at `A:approve:n`; then resumed from
  `result.to_state()`;
* each `turn_end` starts the next turn as a new `Runner.run` with the previous result's
  `to_input_list()` and a new user message, at the agent the witness's next turn starts at (the
  export lets a later turn start at any agent a hand-off reaches, SPEC 13.1 "a new turn"; a note
  on stderr says so when it is neither the last agent nor the first).

The steps are read from the run: a model call (`RunConfig.call_model_input_filter`, which sees
the agent of every call, inner runs included) is the node `A`; a stub's call `A:tools`; an agent
tool entered its node `n`; an approval asked its review node (`A:tools`, `A:approve:n`). They are
compared with the witness as LangGraph replays are (`replay.first_missing`).

Cannot be driven (exit 2, one line naming the step or the agent): a witness answering a hosted
MCP server's approval (the provider asks inside the model call) or choosing the model node again
for it, a witness calling a local tool (`ShellTool`, ...), an application with MCP servers (their
tools are listed and called at run time, on the real server). An agent tool given its own
`run_config` (`as_tool(..., run_config=...)`) runs its own model, not the scripted one: its run
fails, which is said (exit 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..replay import HarnessError, NotFollowed, arguments, collapse, describe, first_missing
from . import _handoffs, _tools
from .export import _id

#: The qualified id prefix of the run in progress (`""`, or `n/` inside the agent tool `n`).
_PREFIX: contextvars.ContextVar[str] = contextvars.ContextVar("stalwart_replay_prefix", default="")
#: The model node whose call is in progress (set as the SDK filters the call's input).
_NODE: contextvars.ContextVar[str] = contextvars.ContextVar("stalwart_replay_node", default="")
STUB_TEXT = "stub result of {}"
#: The SDK's hosted tool classes, by the name the export gives their calls (`_tools.HOSTED_TYPES`).
HOSTED = _tools.HOSTED_TYPES
FINAL_TEXT = "done"
#: What `first_missing` calls the run's subject.
APP = "application"


class _Stop(Exception):
    """Raised into the SDK run once the driver has its answer (the run does not follow, or
    cannot be driven): the driver's `failure` says why."""


# ---------------------------------------------------------------------------- the witness
@dataclass
class Choice:
    """What one model visit of the witness answers: `calls` (the `call` steps the witness makes at
    the agent's tool node next), `handoff` (the agent, qualified, the witness hands off to, from
    the model or after the tool node), `agent_tool` (the tool name of an agent as tool), or
    `final` (the witness ends the run)."""

    step: dict
    hosted: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    handoff: str | None = None
    agent_tool: str | None = None
    final: bool = False


def _kinds(steps: list[dict]) -> dict[str, str]:
    return {s["node"]: s.get("node_kind", "") for s in steps if s.get("node")}


def _last(node: str) -> str:
    return node.rsplit("/", 1)[-1]


def plan(steps: list[dict]) -> dict[tuple[int, str], list[Choice]]:
    """Per (turn, model node), the witness's choices there in order (see `Choice`); HarnessError
    naming the step for what the harness cannot drive."""
    kinds = _kinds(steps)
    out: dict[tuple[int, str], list[Choice]] = {}
    hosted: dict[str, list[dict]] = {}
    for i, s in enumerate(steps):
        if s["kind"] == "call" and s.get("node_kind") == "model":
            if s.get("when") or s.get("refused"):
                raise HarnessError(f"step {s.get('step')} ({describe(s)}): the provider asks for approval of a hosted "
                                   "MCP call inside the model call, which the SDK's test model cannot script")
            hosted.setdefault(s["node"], []).append(s)
            continue
        if s["kind"] != "choose" or s.get("node_kind") != "model":
            continue
        node, to = s["node"], str(s.get("to"))
        c = Choice(step=s, hosted=hosted.pop(node, []))
        kind = kinds.get(to, "end" if _last(to) == "__end__" else "")
        if to == f"{node}:tools":
            for later in steps[i + 1:]:
                if later["kind"] == "call" and later["node"] == to:
                    c.calls.append(later)
                elif later["kind"] == "choose" and later["node"] == to:
                    after = str(later.get("to"))
                    if kinds.get(after) == "model" and after != node:
                        c.handoff = after
                    break
                elif later["kind"] in ("choose", "turn_end"):
                    break
        elif kind == "model" and to != node:
            c.handoff = to
        elif kind == "subgraph":
            c.agent_tool = _last(to)
        elif kind == "step" and to.startswith(f"{node}:approve:"):
            c.agent_tool = to[len(f"{node}:approve:"):]
        elif kind == "end":
            c.final = True
        else:
            raise HarnessError(f"step {s.get('step')} ({describe(s)}): the harness cannot make an SDK model choose "
                               f"{to!r} (a {kind or 'unknown'} node): it drives tool calls, hand-offs, agents as "
                               "tools and final answers")
        out.setdefault((s.get("turn", 1), node), []).append(c)
    for node, calls in hosted.items():  # the witness ends on a hosted call: the model answers after it
        out.setdefault((calls[0].get("turn", 1), node), []).append(Choice(step=calls[0], hosted=calls, final=True))
    return out


def answers(steps: list[dict]) -> list[dict]:
    """The witness's answers to approvals, in order: each reviewed call's step (`when: call`,
    its `yes` and `standing`) and each `confirm` (an agent tool's approval step)."""
    return [s for s in steps if (s["kind"] == "call" and s.get("when") == "call") or s["kind"] == "confirm"]


def starts(steps: list[dict]) -> dict[int, dict]:
    """Per turn, the witness's `choose` out of the top `__start__` (the agent the turn starts at)."""
    return {s.get("turn", 1): s for s in steps if s["kind"] == "choose" and s["node"] == "__start__"}


# ---------------------------------------------------------------------------- the application
@dataclass
class App:
    """The agents reachable from the starting agent: `top` (by node id, those a turn may start
    at: the hand-off closure), `prefix` (an agent's qualified prefix, by id()), `tools` (every
    function tool, agent tools included, once)."""

    start: Any
    top: dict[str, Any] = field(default_factory=dict)
    prefix: dict[int, str] = field(default_factory=dict)
    tools: list[Any] = field(default_factory=list)


def read_app(start: Any) -> App:
    """The application's agents and tools (`App`); HarnessError for what the harness cannot stub
    (MCP servers)."""
    app = App(start)
    todo: list[tuple[Any, str]] = [(start, "")]
    seen: set[int] = set()
    while todo:
        a, prefix = todo.pop(0)
        if id(a) in seen:
            continue
        seen.add(id(a))
        app.prefix.setdefault(id(a), prefix)
        if not prefix:
            app.top.setdefault(_id(a.name), a)
        if getattr(a, "mcp_servers", None):
            raise HarnessError(f"agent {a.name!r} has MCP servers: their tools are listed and called on the real "
                               "server at run time, which the harness cannot stub, so it does not replay this "
                               "application")
        sorted_tools = _tools.read(a, f"agent {a.name!r}")
        for t in sorted_tools.function + sorted_tools.agents:
            if not any(t is u for u in app.tools):
                app.tools.append(t)
        for t in sorted_tools.agents:
            todo.append((t._agent_instance, f"{prefix}{_id(t.name)}/"))
        todo += [(h.agent, prefix) for h in _handoffs.targets(a) if h.agent is not None]
    return app


# ---------------------------------------------------------------------------- the driver
class Driver:
    """One replay: the scripted answers, the stubs and what the run did."""

    def __init__(self, steps: list[dict], app: App) -> None:
        self.steps = steps
        self.app = app
        self.choices = plan(steps)
        self.answers = answers(steps)
        self.visited: list[str] = []
        self.calls: list[tuple[str, str]] = []
        self.turn = 1
        self.n = 0
        self.entered_calls: set[str] = set()
        #: (model node, output items) of each scripted answer, in order
        self.outputs: list[tuple[str, list]] = []
        #: what the user should know about the run (printed on stderr)
        self.notes: list[str] = []
        #: (exit code, line) once the run cannot go on as the witness says
        self.failure: tuple[int, str] | None = None

    # -- recording
    def enter(self, node: str) -> None:
        if not self.visited or self.visited[-1] != node:
            self.visited.append(node)

    def fail(self, code: int, line: str) -> _Stop:
        if self.failure is None:
            self.failure = (code, line)
        return _Stop(line)

    # -- the model
    def model_filter(self, data: Any) -> Any:
        """`RunConfig.call_model_input_filter`: the agent about to call the model is the node."""
        node = _PREFIX.get() + _id(data.agent.name)
        _NODE.set(node)
        self.enter(node)
        self.script.enqueue(self.respond_step())
        return data.model_data

    def respond_step(self) -> Any:
        from agents.testing import ModelStep

        return ModelStep.respond(self.respond)

    def respond(self, call: Any) -> list:
        """The model's output at the node in progress: the witness's next choice there."""
        out = self.choose(_NODE.get(), call)
        self.outputs.append((_NODE.get(), out))
        return out

    def choose(self, node: str, call: Any) -> list:
        """The output items answering the witness's next choice at `node` (`respond`)."""
        from agents.testing import assistant_message, function_call

        queue = self.choices.get((self.turn, node))
        if not queue:
            return [assistant_message(self.final(call))]
        c = queue.pop(0)
        out = [self.hosted(node, s, call.tools) for s in c.hosted]
        if c.final:
            return out + [assistant_message(self.final(call))]
        where = f"step {c.step.get('step')} ({describe(c.step)})"
        tools = {t.name: t for t in call.tools}
        for s in c.calls:
            t = tools.get(s["tool"])
            if t is None:
                offered = ", ".join(sorted(n for n, u in tools.items() if not getattr(u, "_is_agent_tool", False)))
                raise self.fail(1, f"step {s.get('step')} ({describe(s)}): the witness calls {s['tool']!r}, and agent "
                                   f"{_last(node)!r} offers no such tool (its tools: {offered or 'none'})")
            schema = getattr(t, "params_json_schema", None)
            if schema is None or getattr(t, "_is_agent_tool", False):
                raise self.fail(2, f"step {s.get('step')} ({describe(s)}): {s['tool']!r} is a "
                                   f"{type(t).__name__}, not a function tool: the harness stubs only function tools")
            out.append(function_call(t.name, arguments(schema), call_id=self.call_id()))
        if c.agent_tool is not None:
            t = tools.get(c.agent_tool)
            if t is None or not getattr(t, "_is_agent_tool", False):
                offered = ", ".join(sorted(n for n, u in tools.items() if getattr(u, "_is_agent_tool", False)))
                raise self.fail(1, f"{where}: the witness runs the agent tool {c.agent_tool!r}, and agent "
                                   f"{_last(node)!r} offers no such agent tool (its agent tools: {offered or 'none'})")
            out.append(function_call(t.name, arguments(t.params_json_schema), call_id=self.call_id()))
        if c.handoff is not None:
            target = _last(c.handoff)
            h = next((h for h in call.handoffs if _id(h.agent_name) == target), None)
            if h is None:
                offered = ", ".join(f"{h.tool_name} to {h.agent_name}" for h in call.handoffs)
                raise self.fail(1, f"{where}: the witness hands off to {target!r}, and agent {_last(node)!r} offers "
                                   f"no hand-off to it (its hand-offs: {offered or 'none'})")
            out.append(function_call(h.tool_name, arguments(h.input_json_schema or {}), call_id=self.call_id()))
        return out

    def hosted(self, node: str, s: dict, offered: list) -> Any:
        """The output item of a hosted call the provider makes inside the model call (the witness's
        `call` at the model node): a web search, file search, code interpreter or image generation
        call of the agent's hosted tool, or a hosted MCP server's tool call (`label.tool`)."""
        from openai.types.responses import (ResponseCodeInterpreterToolCall, ResponseFileSearchToolCall,
                                            ResponseFunctionWebSearch)
        from openai.types.responses.response_output_item import ImageGenerationCall, McpCall

        name, k = s["tool"], f"stalwart_hosted_{len(self.calls) + 1}"
        kinds = {HOSTED[type(t).__name__]: t for t in offered if type(t).__name__ in HOSTED}
        label, _, tool = name.partition(".")
        item: Any = None
        if name in kinds:
            item = {"web_search": lambda: ResponseFunctionWebSearch(id=k, status="completed", type="web_search_call",
                                                                    action={"type": "search", "query": "x"}),
                    "file_search": lambda: ResponseFileSearchToolCall(id=k, queries=["x"], status="completed",
                                                                      type="file_search_call"),
                    "code_interpreter": lambda: ResponseCodeInterpreterToolCall(
                        id=k, code="", container_id="x", outputs=None, status="completed",
                        type="code_interpreter_call"),
                    "image_generation": lambda: ImageGenerationCall(id=k, result=None, status="completed",
                                                                    type="image_generation_call")}[name]()
        elif tool and any(type(t).__name__ == "HostedMCPTool" and (t.tool_config or {}).get("server_label") == label
                          for t in offered):
            item = McpCall(id=k, arguments="{}", name=tool, server_label=label, type="mcp_call")
        if item is None:
            have = sorted(kinds) + sorted(f"{(t.tool_config or {}).get('server_label')}.*" for t in offered
                                          if type(t).__name__ == "HostedMCPTool")
            raise self.fail(1, f"step {s.get('step')} ({describe(s)}): the witness's model call makes the hosted call "
                               f"{name!r}, and agent {_last(node)!r} has no such hosted tool (its hosted tools: "
                               f"{', '.join(have) or 'none'})")
        self.calls.append((node, name))
        return item

    def call_id(self) -> str:
        self.n += 1
        return f"stalwart_call_{self.n}"

    @staticmethod
    def final(call: Any) -> str:
        """A final answer: plain text, or JSON valid for the agent's `output_type`."""
        schema = call.output_schema
        if schema is None or schema.is_plain_text():
            return FINAL_TEXT
        return json.dumps(arguments(schema.json_schema()))

    # -- the tools
    def stub(self, tool: Any) -> Any:
        """The recording stub standing for a function tool."""
        async def run(ctx, input_json):
            agent = getattr(ctx, "agent", None)
            node = f"{_PREFIX.get()}{_id(agent.name)}:tools" if agent is not None else f"{_NODE.get()}:tools"
            self.enter(node)
            self.calls.append((node, tool.name))
            return STUB_TEXT.format(tool.name)

        return run

    def agent_tool(self, tool: Any, original: Any) -> Any:
        """An agent tool's invoker: its node entered, the inner run under its prefix."""
        async def run(ctx, input_json):
            node = _PREFIX.get() + _id(tool.name)
            key = f"{node}#{getattr(ctx, 'tool_call_id', '')}"
            if key not in self.entered_calls:  # a resumed inner run is the same visit
                self.entered_calls.add(key)
                self.enter(node)
            token = _PREFIX.set(node + "/")
            try:
                return await original(ctx, input_json)
            finally:
                _PREFIX.reset(token)

        return run

    @contextlib.contextmanager
    def stubs(self) -> Iterator[None]:
        """Every function tool stubbed and every agent tool wrapped, for the duration; put back after."""
        saved = [(t, t.on_invoke_tool) for t in self.app.tools]
        try:
            for t, original in saved:
                t.on_invoke_tool = self.agent_tool(t, original) if getattr(t, "_is_agent_tool", False) else self.stub(t)
            yield
        finally:
            for t, original in saved:
                t.on_invoke_tool = original

    # -- approvals
    def answer(self, state: Any, item: Any) -> None:
        """Approve or reject `item` (a ToolApprovalItem) as the witness's next answer there says."""
        agent = getattr(item, "agent", None)
        tool = item.tool_name or getattr(item.raw_item, "name", None) or "?"
        prefix = self.app.prefix.get(id(agent), "") if agent is not None else ""
        aid = prefix + _id(agent.name) if agent is not None else _NODE.get()
        owned = next((t for t in getattr(agent, "tools", None) or [] if getattr(t, "name", None) == tool), None)
        node = f"{aid}:approve:{_id(tool)}" if getattr(owned, "_is_agent_tool", False) else f"{aid}:tools"
        self.enter(node)
        k = next((k for k, s in enumerate(self.answers) if s["node"] == node and
                  (s["kind"] == "confirm" or s.get("tool") == tool)), None)
        if k is None:
            nxt = first_missing(self.steps, collapse(self.visited), self.calls, APP)
            at = f"step {nxt[0]['step']} ({describe(nxt[0])})" if nxt else "after the witness's last step"
            raise self.fail(1, f"{at}: the run asks a person to approve {tool!r} at {node!r} (turn {self.turn}), and "
                               "the witness has no answer for it there")
        s = self.answers.pop(k)
        if s.get("yes", True):
            state.approve(item, always_approve=bool(s.get("standing")))
        else:
            state.reject(item)


# ---------------------------------------------------------------------------- the run
def _max_turns(script: dict) -> int:
    limit = script.get("recursion_limit")
    if isinstance(limit, int) and limit >= 2:
        return limit // 2
    from agents.run import DEFAULT_MAX_TURNS

    return int(DEFAULT_MAX_TURNS)


async def _drive(d: Driver, script: dict, inputs: Any) -> None:
    from agents import RunConfig, Runner
    from agents.testing import ScriptedModel

    d.script = ScriptedModel([])
    config = RunConfig(model=d.script, call_model_input_filter=d.model_filter, tracing_disabled=True)
    first = starts(d.steps)
    turns = max((s.get("turn", 1) for s in d.steps), default=1)
    result = None
    for turn in range(1, turns + 1):
        d.turn = turn
        s = first.get(turn)
        name = str(s.get("to")) if s else _id(d.app.start.name)
        agent = d.app.top.get(name)
        if agent is None or (turn == 1 and agent is not d.app.start):
            begins = f"agent {d.app.start.name!r}" if turn == 1 else f"one of {', '.join(d.app.top)}"
            raise d.fail(1, f"step {s.get('step')} ({describe(s)}): the witness starts turn {turn} at {name!r}, and "
                            f"the application starts at {begins}")
        if result is not None and agent is not result.last_agent and agent is not d.app.start:
            d.notes.append(f"turn {turn} starts at {agent.name!r} as the witness does (step {s.get('step')}); the turn "
                           f"before ended at {result.last_agent.name!r} and the application starts at "
                           f"{d.app.start.name!r}: the route needs an application that passes {agent.name!r}")
        message = inputs if inputs is not None else f"turn {turn}"
        items = message if isinstance(message, list) else [{"role": "user", "content": str(message)}]
        payload: Any = message if result is None else result.to_input_list() + items
        result = await Runner.run(agent, payload, run_config=config, max_turns=_max_turns(script))
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                d.answer(state, item)
            result = await Runner.run(agent, state, run_config=config, max_turns=_max_turns(script))


def drive(script: dict, agent: Any, inputs: Any = None) -> Driver:
    """Runs the SDK application whose starting agent is `agent` as the script says (see the
    module's doc) and returns the driver: what the run did (`visited`, `calls`, the scripted
    model's `script.calls`), the witness's answers it never used, and its `failure` (exit code and
    line) when it stopped. HarnessError for a witness or an application it cannot drive.
    `inputs`: each turn's user message (a text, or a list of input items)."""
    steps = script.get("steps") or []
    try:
        app = read_app(agent)
    except HarnessError:
        raise
    except Exception as e:  # noqa: BLE001 - an agent the SDK's own reading refuses: one line
        raise HarnessError(f"cannot read the agents of {agent.name!r}: {type(e).__name__}: {e}") from e
    d = Driver(steps, app)
    try:
        with d.stubs():
            asyncio.run(_drive(d, script, inputs))
    except _Stop:
        pass
    except Exception as e:  # noqa: BLE001 - the application's own failure (or the SDK's): one line
        found = first_missing(steps, collapse(d.visited), d.calls, APP)
        if d.failure is None and found is not None:  # after the witness's last step, it was followed
            text = str(e).splitlines()[0] if str(e) else ""
            last = d.visited[-1] if d.visited else "__start__"
            d.failure = (1, f"step {found[0]['step']} ({describe(found[0])}): the run raised {type(e).__name__}: "
                            f"{text}, after {last!r}")
    return d


def replay_agent(script: dict, agent: Any, inputs: Any = None, notes: list[str] | None = None) -> str | None:
    """`drive`, judged: None when the run follows the witness, else one line (NotFollowed from the
    run, or the first step it did not take; exit 1). HarnessError (exit 2) for what the harness
    cannot drive. `notes` receives what the user should know about the run."""
    d = drive(script, agent, inputs)
    if notes is not None:
        notes += d.notes
    if d.failure is not None:
        code, line = d.failure
        if code == 2:
            raise HarnessError(line)
        raise NotFollowed(line)
    found = first_missing(d.steps, collapse(d.visited), d.calls, APP)
    unasked = d.answers[0] if d.answers else None
    if unasked is not None and (found is None or unasked.get("step", 0) < found[0].get("step", 0)):
        return (f"step {unasked.get('step')} ({describe(unasked)}): the witness answers a person's approval at "
                f"{unasked['node']!r}, and the run never asked for one there")
    return f"step {found[0]['step']} ({describe(found[0])}): {found[1]}" if found else None
