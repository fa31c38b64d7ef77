"""Issue 29's closing requirement: a replay test on each shape the guard fits (test_guard_shapes.py,
agents/test_inner_agents.py). Each shape is written as public agents write it, exported through
`python -m stalwart_export`, a finding's witness written by the Rust binary (`verify --replay FP
--format json`), and replayed with `python -m stalwart_export replay` on the real, unmodified graph:

* a `@dataclass` state and a pydantic state, guarded with `guard.tool_node` (the react-agent
  template: an async `call_model`, `route_model_output`): QG105, whose witness confirms two refunds
  in one batch; the guard's own questions are answered yes as the witness's guarded calls need;
* a step calling plain functions through `guard.call` and an async step through `guard.acall`:
  the same QG105 witness does not happen on the real graph (the guard refuses a second call needing
  a person in a step after one ran), and the replay says so in one line at the step, quoting the
  guard; the plain functions never run (stubs in their place);
* the unguarded variant of the async step (`await tool.ainvoke(...)` itself): QG001, replayed;
* an agent built inside a node: a supervisor reading its route from its model's tool call
  (`msg.tool_calls[0]["args"]["next"]`) over a worker building a guarded agent in its node (QG105),
  and inner_apps/supervisor.py, unguarded, with a structured-output router (QG001)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import PYTHON_DIR
from test_replay_harness import harness

APPS = '''
"""The guard's shapes (issue 29 items 1-3), replayed (written by test_replay_shapes.py)."""
from dataclasses import dataclass, field
from typing import Annotated, Literal, Sequence

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel

from lg_apps._fake import scripted
from stalwart_export import Guard, GuardHistory

CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "get_order": {"kind": "read", "args": {"order_id": {"type": "string"}}},
    "refund_order": {"kind": "write", "order": {"after": ["get_order"]},
                     "args": {"order_id": {"type": "string"}, "amount": {"type": "number"}}},
}}
guard = Guard(CATALOGUE)


@tool
def get_order(order_id: str) -> str:
    """Look up an order by id."""
    raise RuntimeError("the real shop is not called in a replay")


@tool
def refund_order(order_id: str, amount: float) -> str:
    """Refund an order."""
    raise RuntimeError("no money moves in a replay")


def never():
    return scripted("the real model is not called in a replay")


@dataclass
class InputState:
    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)


@dataclass
class State(InputState):
    stalwart_guard: GuardHistory = field(default_factory=list)


class PState(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages] = []
    stalwart_guard: GuardHistory = []


def route_model_output(state) -> Literal["__end__", "tools"]:
    last = state.messages[-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "__end__"


def react(schema, tools_node, **kw):
    model = never().bind_tools([get_order, refund_order])

    async def call_model(state):
        return {"messages": [await model.ainvoke(list(state.messages))]}

    b = StateGraph(schema, **kw)
    b.add_node(call_model)
    b.add_node("tools", tools_node)
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", route_model_output)
    b.add_edge("tools", "call_model")
    return b.compile(name="react_agent")


dataclass_graph = react(State, guard.tool_node([get_order, refund_order]), input_schema=InputState)
pydantic_graph = react(PState, guard.tool_node([get_order, refund_order]))
unguarded_graph = react(State, ToolNode([get_order, refund_order]), input_schema=InputState)


def lookup(order_id: str) -> str:
    """Look up an order (a plain function)."""
    raise RuntimeError("the real shop is not called in a replay")


def refund(order_id: str, amount: float) -> str:
    """Refund an order (a plain function)."""
    raise RuntimeError("no money moves in a replay")


plain_guard = Guard({"format": "qls-catalogue/1", "tools": {
    "lookup": {"kind": "read", "args": {"order_id": {"type": "string"}}},
    "refund": {"kind": "write", "order": {"after": ["lookup"]},
               "args": {"order_id": {"type": "string"}, "amount": {"type": "number"}}}}})


def act(state: State):
    out = []
    for c in state.messages[-1].tool_calls:
        if c["name"] == "lookup":
            r = plain_guard.call(lookup, c["args"], state)
        else:
            r = plain_guard.call(refund, c["args"], state, name="refund")
        out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
    return {"messages": out}


def plain_react():
    model = never().bind_tools([lookup, refund])

    def call_model(state: State):
        return {"messages": [model.invoke(list(state.messages))]}

    b = StateGraph(State, input_schema=InputState)
    b.add_node(call_model)
    b.add_node("tools", act)
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", route_model_output)
    b.add_edge("tools", "call_model")
    return b.compile()


plain_graph = plain_react()

TOOLS = {"get_order": get_order, "refund_order": refund_order}


async def aact(state: State):
    out = []
    for c in state.messages[-1].tool_calls:
        r = await guard.acall(TOOLS[c["name"]], c["args"], state)
        out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
    return {"messages": out}


async_step_graph = react(State, aact, input_schema=InputState)


# The unguarded variant of the async step: it awaits the tools itself.
async def aact_bare(state: State):
    out = []
    for c in state.messages[-1].tool_calls:
        out.append(ToolMessage(content=str(await TOOLS[c["name"]].ainvoke(c["args"])), tool_call_id=c["id"]))
    return {"messages": out}


bare_async_step_graph = react(State, aact_bare, input_schema=InputState)


# A team: a supervisor reading the route from its model's tool call, and a worker node building its
# guarded agent inside the node (the guard's history passed in and out).
from langchain_core.messages import HumanMessage
from langgraph.prebuilt.chat_agent_executor import AgentState, create_react_agent
from langgraph.types import Command


class TeamState(AgentState):
    stalwart_guard: GuardHistory


SUPERVISOR = never()
WORKER = never()


def supervisor(state: TeamState) -> Command[Literal["refunds", "__end__"]]:
    msg = SUPERVISOR.invoke(state["messages"])
    goto = msg.tool_calls[0]["args"]["next"]
    return Command(goto=END if goto == "FINISH" else goto)


def refunds(state: TeamState) -> Command[Literal["supervisor"]]:
    agent = create_react_agent(WORKER, tools=guard.tool_node([get_order, refund_order]), state_schema=TeamState)
    result = agent.invoke(state)
    return Command(update={"messages": [HumanMessage(content=result["messages"][-1].content, name="refunds")],
                           "stalwart_guard": result["stalwart_guard"]}, goto="supervisor")


_t = StateGraph(TeamState)
_t.add_node("supervisor", supervisor)
_t.add_node("refunds", refunds)
_t.add_edge(START, "supervisor")
team_graph = _t.compile()
'''

AGENTS = PYTHON_DIR / "tests" / "agents"
SHOP = {"get_order": {"kind": "read"}, "refund_order": {"kind": "write", "order": {"after": ["get_order"]}}}
PLAIN = {"lookup": {"kind": "read"}, "refund": {"kind": "write", "order": {"after": ["lookup"]}}}
TEAM = {"web_search": {"kind": "read", "reads_outside": True}, "publish_post": {"kind": "write"}}
FOLLOWS = "the real graph follows the witness and makes its calls"
#: name: (MODULE:ATTR, its words, the finding replayed (rule, subject, node), the witness's calls or None
#: when the real graph does not follow it)
SHAPES = {
    "dataclass": ("shape_apps:dataclass_graph", SHOP, ("QG105", "refund_order", "tools"),
                  ["get_order", "refund_order", "refund_order"]),
    "pydantic": ("shape_apps:pydantic_graph", SHOP, ("QG105", "refund_order", "tools"),
                 ["get_order", "refund_order", "refund_order"]),
    "plain_call": ("shape_apps:plain_graph", PLAIN, ("QG105", "refund", "tools"), None),
    "async_acall": ("shape_apps:async_step_graph", SHOP, ("QG105", "refund_order", "tools"), None),
    "async_unguarded": ("shape_apps:bare_async_step_graph", SHOP, ("QG001", "refund_order", "tools"),
                        ["refund_order"]),
    "inner_guarded": ("shape_apps:team_graph", SHOP, ("QG105", "refund_order", "refunds/tools"),
                      ["get_order", "refund_order", "refund_order"]),
    "inner_unguarded": ("inner_apps.supervisor:graph", TEAM, ("QG001", "publish_post", "writer/tools"),
                        ["publish_post"]),
}


@pytest.fixture(scope="module")
def shapes(binary, tmp_path_factory):
    """Each shape exported through `python -m stalwart_export`, its findings, and the script of the
    finding SHAPES names."""
    d = tmp_path_factory.mktemp("shapes")
    (d / "shape_apps.py").write_text(APPS)
    env = {"PYTHONPATH": f"{AGENTS}:{PYTHON_DIR / 'tests'}:{PYTHON_DIR}", "PATH": "/usr/bin:/bin"}
    out = {}
    for name, (spec, words, (rule, subject, node), _calls) in SHAPES.items():
        (d / f"{name}.words.json").write_text(json.dumps(words))
        g, c = d / f"{name}.json", d / f"{name}.catalogue.json"
        p = subprocess.run([sys.executable, "-m", "stalwart_export", spec, "-o", g, "--catalogue", c, "--words",
                            d / f"{name}.words.json"], cwd=d, capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode == 0, (name, p.stderr)
        rep = json.loads(subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--format", "json"],
                                        capture_output=True, text=True, timeout=300).stdout)
        f = next(f for f in rep["findings"] if (f["rule"], f["subject"], f["node"]) == (rule, subject, node))
        p = subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--replay", f["fingerprint"],
                            "--format", "json"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, (name, p.stderr)
        (d / f"{name}.script.json").write_text(p.stdout)
        out[name] = (d / f"{name}.script.json", c, json.loads(p.stdout), rep, json.loads(g.read_text()))
    return d, out


def replay(d, script, cat, spec):
    return harness(script, cat, "--graph", spec, cwd=d, pythonpath=(d, AGENTS))


def test_the_guarded_shapes_export_guarded_and_pass_the_gate(shapes):
    """What the replays below start from: the guarded shapes' tool nodes are guarded (a `tools`
    node), no finding blocks; the unguarded ones fail the gate with QG001."""
    _, out = shapes
    for name in ("dataclass", "pydantic", "plain_call", "async_acall", "inner_guarded"):
        _, _, _, rep, export = out[name]
        assert not [f for f in rep["findings"] if f["blocks"]], (name, rep["findings"])
        tools = "tools" if name != "inner_guarded" else None
        if tools:
            assert {n["id"]: n["kind"] for n in export["nodes"]}[tools] == "tools", name
    for name in ("async_unguarded", "inner_unguarded"):
        assert [f for f in out[name][3]["findings"] if f["blocks"] and f["rule"] == "QG001"], name


@pytest.mark.parametrize("name", sorted(n for n, s in SHAPES.items() if s[3] is not None))
def test_each_shape_replays_on_its_real_graph(shapes, name):
    d, out = shapes
    script, cat, _, _, _ = out[name]
    p = replay(d, script, cat, SHAPES[name][0])
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{FOLLOWS} {SHAPES[name][3]}" in p.stdout, p.stdout
    assert "Traceback" not in p.stderr


def test_the_witnesses_are_guarded_where_the_shapes_are(shapes):
    """The guarded shapes' witnesses make guarded calls with no `confirm` step (the guard asks, the
    replay answers its questions); the unguarded ones make unguarded calls."""
    _, out = shapes
    for name, (_, _, _, calls) in SHAPES.items():
        sc = out[name][2]
        made = [(s["tool"], s.get("guarded")) for s in sc["steps"] if s["kind"] == "call"]
        guarded = not name.endswith("unguarded")
        assert made and all(bool(g) == guarded for _, g in made), (name, made)
        assert not [s for s in sc["steps"] if s["kind"] == "confirm"], name


@pytest.mark.parametrize("name", ["plain_call", "async_acall"])
def test_a_step_through_guard_call_does_not_make_the_second_confirmed_write_and_says_why(shapes, name):
    """The export lets a guarded step confirm two writes of one model message; the real guard refuses
    the second (the step runs again from its start on resume): the replay is one line at the
    witness's step, quoting the guard, and the plain functions never ran (they raise if they do)."""
    d, out = shapes
    script, cat, sc, _, _ = out[name]
    tool = SHAPES[name][2][1]
    last = [s for s in sc["steps"] if s["kind"] == "call"][-1]
    p = replay(d, script, cat, SHAPES[name][0])
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1, p.stdout
    assert f"step {last['step']} (call {tool!r} at 'tools'): expected a call of {tool!r}" in lines[0], p.stdout
    assert "the graph's guard refused it (guard_error): a call that needs a person after another guarded call of " \
           "this step ran" in lines[0], p.stdout
    assert "RuntimeError" not in p.stdout and "Traceback" not in p.stderr, p.stdout + p.stderr


def test_a_route_read_from_the_model_s_tool_call_the_witness_does_not_give_says_which_step(shapes):
    """The supervisor reads `msg.tool_calls[0]["args"]["next"]`: a witness of another graph, making no
    choice at 'supervisor', is one line at its step saying so, not an IndexError."""
    d, out = shapes
    script, cat, _, _, _ = out["dataclass"]
    p = replay(d, script, cat, "shape_apps:team_graph")
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.endswith("the real graph does not follow the witness: step 3 (enter 'call_model'): at node "
                             "'supervisor' the graph reads its route from the model's tool call "
                             "(tool_calls[0]['args']['next']), and the witness makes no choice there next\n"), p.stdout
    assert "IndexError" not in p.stdout
