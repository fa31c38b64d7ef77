"""Issue 29 items 1, 2 and 5: the guard fits an agent in every shape it is written in.

* Item 1, any state schema LangGraph accepts: a `TypedDict`, a `@dataclass` (LangGraph's own
  react-agent template: `InputState`/`State` dataclasses, an async `call_model`, `ToolNode(TOOLS)`,
  `route_model_output`) and a pydantic `BaseModel`, with the guard as `guard.tool_node`, as a
  `ToolNode` wrapper, and in a step calling `guard.call` / `guard.acall`.
* Item 2, async code: `guard.acall` (the same decisions, records and serialisation of `Send`
  branches as `guard.call`), plain functions (sync and async) where the catalogue names them, and
  injected arguments (`InjectedState`, `InjectedToolCallId`, `ToolRuntime`) passed through
  unchecked (rule 3) and unscanned (rule 4).
* Item 5: `Guard("build/catalogue.json")` at module import on a fresh checkout: the exporter
  imports the module and writes the catalogue; the graph then runs; before that its first call
  raises naming the file, and nothing runs.

Each shape runs through real LangGraph (the pinned venv) with a scripted model, through a refused
call and a confirmed write (`interrupt` + `Command(resume=...)`), is exported, and, with the Rust
binary, passes the gate. Tools count their runs in `guarded.RAN`."""


import asyncio
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Sequence

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.managed import RemainingSteps
from langgraph.prebuilt import InjectedState, ToolNode
from langgraph.types import Command, Send
from pydantic import BaseModel
from typing_extensions import TypedDict

import guarded as G
from graphs import call, model
from stalwart_export import Guard, GuardConfigError, GuardHistory, export_catalogue, export_graph

BLOCKING = {"QG001", "QG003", "QG011", "QG012", "QG014", "QG024"}


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


# ------------------------------------------------------------------ the three state shapes


class TDState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    stalwart_guard: GuardHistory


@dataclass
class InputState:
    """The react-agent template's input state."""

    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)


@dataclass
class DCState(InputState):
    """The template's state, with the guard's channel (a default, as every field of it has)."""

    stalwart_guard: GuardHistory = field(default_factory=list)


class PDState(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages] = []
    stalwart_guard: GuardHistory = []


SHAPES = {"typeddict": TDState, "dataclass": DCState, "pydantic": PDState}
PLACES = ["tool_node", "wrapper", "step", "astep"]

#: refund_order before get_order is refused (order_rule); then get_order; then refund_order is asked
#: and approved.
SCRIPT = [
    [call("refund_order", {"order_id": "42", "amount": 5.0}, 1)],
    [call("get_order", {"order_id": "42"}, 2)],
    [call("refund_order", {"order_id": "42", "amount": 5.0}, 3)],
    "done",
]
TOOLS = [G.get_order, G.refund_order]
BY_NAME = {t.name: t for t in TOOLS}


def msgs(state: Any) -> list:
    return state["messages"] if isinstance(state, dict) else list(state.messages)


def template(guard: Guard, schema: Any, place: str, turns: list | None = None, tools: list | None = None,
             sync: bool = False) -> Any:
    """The react-agent template's graph (an async `call_model`, `route_model_output`), its tool node
    guarded at `place`, over `schema`; with `sync`, `call_model` is a plain function (run by `invoke`)."""
    tools = tools or TOOLS
    bound = model(*(turns or SCRIPT)).bind_tools(tools)
    by_name = {getattr(t, "name", None) or t.__name__: t for t in tools}

    async def acall_model(state: schema):  # type: ignore[valid-type]
        return {"messages": [await bound.ainvoke(msgs(state))]}

    def scall_model(state: schema):  # type: ignore[valid-type]
        return {"messages": [bound.invoke(msgs(state))]}

    def route_model_output(state: schema) -> Literal["__end__", "tools"]:  # type: ignore[valid-type]
        last = msgs(state)[-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "__end__"

    def act(state: schema):  # type: ignore[valid-type]
        out = []
        for c in msgs(state)[-1].tool_calls:
            r = guard.call(by_name[c["name"]], c["args"], state)
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
        return {"messages": out}

    async def aact(state: schema):  # type: ignore[valid-type]
        out = []
        for c in msgs(state)[-1].tool_calls:
            r = await guard.acall(by_name[c["name"]], c["args"], state)
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
        return {"messages": out}

    node = {"tool_node": lambda: guard.tool_node(tools),
            "wrapper": lambda: ToolNode(tools, wrap_tool_call=guard.wrap_tool_call,
                                        awrap_tool_call=guard.awrap_tool_call),
            "step": lambda: act, "astep": lambda: aact}[place]()
    kw = {"input_schema": InputState} if schema is DCState else {}
    b = StateGraph(schema, **kw)
    b.add_node("call_model", scall_model if sync else acall_model)
    b.add_node("tools", node)
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", route_model_output)
    b.add_edge("tools", "call_model")
    return b.compile(checkpointer=InMemorySaver(), name="react_agent")


async def aturn(graph: Any, thread: str, answers: list | None = None, text: str = "go") -> tuple[dict, list]:
    """`guarded.turn`, run with `ainvoke` (the template's graph is async)."""
    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": 60}
    answers = list(answers or [])
    asked: list = []
    out = await graph.ainvoke({"messages": [HumanMessage(content=text)]}, cfg)
    while out.get("__interrupt__"):
        pending = out["__interrupt__"]
        asked += [p.value for p in pending]
        assert len(answers) >= len(pending), f"asked {asked}, fewer answers given"
        resume = {p.id: answers.pop(0) for p in pending} if len(pending) > 1 else answers.pop(0)
        out = await graph.ainvoke(Command(resume=resume), cfg)
    assert not answers, f"answers left over: {answers}"
    return out, asked


def run(graph: Any, answers: list, *, sync: bool) -> tuple[dict, list]:
    if sync:
        return G.turn(graph, G.thread(), answers=answers)
    return asyncio.run(aturn(graph, G.thread(), answers))


def assert_refused_then_confirmed(out: dict, asked: list) -> None:
    assert G.decisions(out) == [("refund_order", "refuse", False, "order_rule"),
                                ("get_order", "allow", True, None),
                                ("refund_order", "confirm", True, "write")], G.decisions(out)
    assert G.RAN == {"get_order": 1, "refund_order": 1}, G.RAN
    assert [q["name"] for q in asked] == ["refund_order"], asked
    refused = [m for m in out["messages"] if isinstance(m, ToolMessage) and "order_rule" in str(m.content)]
    assert len(refused) == 1, out["messages"]


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("place", PLACES)
def test_every_state_shape_runs_guarded_in_every_place(shape, place):
    """Item 1: before, a dataclass (or pydantic) state made every call `history_invalid: ... not a
    mapping`; now each shape keeps the history, refuses a call out of order and confirms a write."""
    graph = template(Guard(G.CATALOGUE), SHAPES[shape], place)
    # the async template through ainvoke; the sync places also through invoke (the model is async-free)
    out, asked = run(graph, [G.YES], sync=False)
    assert_refused_then_confirmed(out, asked)
    if place != "astep":
        G.reset()
        out, asked = run(template(Guard(G.CATALOGUE), SHAPES[shape], place, sync=True), [G.YES], sync=True)
        assert_refused_then_confirmed(out, asked)


@pytest.mark.parametrize("shape", ["dataclass", "pydantic"])
def test_a_state_without_the_channel_is_still_refused_naming_the_fix(shape):
    """The shapes are read, not trusted: a dataclass/model state without `stalwart_guard` would lose
    the history after each step, so every call is refused saying how to declare it."""

    @dataclass
    class Bare(InputState):
        pass

    class BareModel(BaseModel):
        messages: Annotated[list[AnyMessage], add_messages] = []

    schema = Bare if shape == "dataclass" else BareModel
    graph = template(Guard(G.CATALOGUE), schema, "tool_node",
                     turns=[[call("get_order", {"order_id": "42"}, 1)], "done"], sync=True)
    out, _ = run(graph, [], sync=True)
    tm = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(tm) == 1 and "history_invalid" in tm[0].content and "GuardHistory" in tm[0].content, tm
    assert G.RAN == {}, G.RAN


def test_a_state_the_guard_cannot_read_is_refused_naming_its_type():
    class Odd:
        messages: list = []

    g = Guard(G.CATALOGUE)
    r = g.call(G.get_order, {"order_id": "42"}, Odd())
    assert not r.ran and r.reasons == ["history_invalid"] and "Odd" in r.message and "dataclass" in r.message, r
    assert G.RAN == {}


def test_a_frozen_dataclass_state_still_counts_the_calls_of_one_step():
    """guard.call cannot set the record in a frozen state object: it keeps it beside the object, so a
    second call of the step sees the first (decided over a history of one entry, not of none)."""

    @dataclass(frozen=True)
    class Frozen:
        messages: list = field(default_factory=list)
        stalwart_guard: list = field(default_factory=list)

    g = Guard(G.CATALOGUE)
    st = Frozen()
    first = g.call(G.get_order, {"order_id": "42"}, st)
    second = g.call(G.get_order, {"order_id": "7"}, st)
    assert first.ran and second.ran and st.stalwart_guard == []
    assert (first.entry["batch"], second.entry["batch"]) == (0, 1), (first.entry, second.entry)


def test_a_frozen_pydantic_step_state_keeps_the_step_s_records_beside_it():
    class Frozen(BaseModel, frozen=True):
        messages: list = []
        stalwart_guard: list = []

    g = Guard(G.CATALOGUE)
    st = Frozen()
    first = g.call(G.get_order, {"order_id": "42"}, st)
    second = g.call(G.get_order, {"order_id": "7"}, st)
    assert first.ran and second.ran
    assert (first.entry["batch"], second.entry["batch"]) == (0, 1), (first.entry, second.entry)


# ------------------------------------------------------------------ export and the gate


def gate(binary: str, tmp_path: Any, graph: Any) -> tuple[int, set, dict]:
    export = export_graph(graph)
    cat = export_catalogue(graph, {})
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export, indent=1))
    cp.write_text(json.dumps(cat, indent=1))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, {(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"]}, export


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("place", PLACES)
def test_every_shape_exports_guarded_and_passes_the_gate(shape, place, binary, tmp_path):
    graph = template(Guard(G.CATALOGUE), SHAPES[shape], place)
    code, found, export = gate(binary, tmp_path, graph)
    kinds = {n["id"]: n["kind"] for n in export["nodes"]}
    assert kinds["tools"] == "tools", kinds
    assert not {f for f in found if f[0] in BLOCKING}, sorted(found)
    assert code == 0, sorted(found)


class ReactPD(BaseModel):
    """create_react_agent's state as a pydantic model (it accepts one; a dataclass it does not)."""

    messages: Annotated[list[AnyMessage], add_messages] = []
    remaining_steps: RemainingSteps = 25
    stalwart_guard: GuardHistory = []


def test_create_react_agent_with_a_pydantic_state(binary, tmp_path):
    from langgraph.prebuilt import create_react_agent

    g = Guard(G.CATALOGUE)
    agent = create_react_agent(model(*SCRIPT), g.tool_node(TOOLS), state_schema=ReactPD,
                               checkpointer=InMemorySaver(), name="react_pd")
    out, asked = run(agent, [G.YES], sync=True)
    assert_refused_then_confirmed(out, asked)
    code, found, export = gate(binary, tmp_path, agent)
    assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools"
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)


# ------------------------------------------------------------------ guard.acall


class FanState(TDState):
    jobs: list


def test_acall_serialises_send_branches_as_call_does():
    """Three async branches each `await guard.acall(search)` (at most 2 a session): two run, one is
    refused, every call is recorded once, in one history that verifies."""
    import attacks as A
    from stalwart_export.guard.history import verify

    g = A.guard()

    def route(state):
        return [Send("worker", {"job": j, "messages": state["messages"], "stalwart_guard": state.get("stalwart_guard", [])})
                for j in state["jobs"]]

    async def worker(state: dict):
        await asyncio.sleep(0)  # the branches interleave on the loop
        r = await g.acall(A.search, {"q": state["job"]}, state)
        return {"messages": [ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=state["job"])]}

    sg = StateGraph(FanState)
    sg.add_node("plan", lambda s: {})
    sg.add_node("worker", worker)
    sg.add_edge(START, "plan")
    sg.add_conditional_edges("plan", route, ["worker"])
    sg.add_edge("worker", END)
    app = sg.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": G.thread()}}
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("go")], "jobs": ["a", "b", "c"]}, cfg))
    assert G.RAN["search"] == 2, G.RAN
    ds = sorted((e["decision"], e["ran"]) for e in G.entries(out))
    assert ds == [("allow", True), ("allow", True), ("refuse", False)], G.entries(out)
    assert verify(out["stalwart_guard"], g.chain, cfg["configurable"]["thread_id"]).problem is None


def afan_out(g: Guard, tools: dict) -> Any:
    """test_guard_fanout's fan-out with async workers: plan -> Send("worker", job) per job, each
    worker awaiting `guard.acall` for its job."""

    def route(state):
        return [Send("worker", {"job": j, "messages": state["messages"], "stalwart_guard": state.get("stalwart_guard", [])})
                for j in state["jobs"]]

    async def worker(state: dict):
        j = state["job"]
        await asyncio.sleep(0)
        r = await g.acall(tools[j["tool"]], j.get("args", {}), state)
        return {"messages": [ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=j["id"])]}

    sg = StateGraph(FanState)
    sg.add_node("plan", lambda s: {})
    sg.add_node("worker", worker)
    sg.add_edge(START, "plan")
    sg.add_conditional_edges("plan", route, ["worker"])
    sg.add_edge("worker", END)
    return sg.compile(checkpointer=InMemorySaver())


async def ago(app: Any, jobs: list, answer: Any = None) -> tuple[dict, int]:
    """One turn of `jobs`, every pause answered (yes, or `answer`): (state, questions asked)."""
    cfg = {"configurable": {"thread_id": G.thread()}, "recursion_limit": 30}
    out = await app.ainvoke({"messages": [HumanMessage(content="go")], "jobs": jobs}, cfg)
    asked = 0
    while out.get("__interrupt__") and asked < 20:
        pending = out["__interrupt__"]
        asked += len(pending)
        out = await app.ainvoke(Command(resume={p.id: answer or G.YES for p in pending}), cfg)
    return out, asked


def test_a_limited_write_in_async_branches_runs_at_most_its_limit():
    """`charge_card` (a write, at_most 1) awaited in three branches: asked and run once at most."""
    import attacks as A
    from stalwart_export.guard.history import verify

    g = A.guard()
    jobs = [{"tool": "charge_card", "id": f"c{k}", "args": {"order_id": "42", "amount": 1.0}} for k in range(3)]
    out, asked = asyncio.run(ago(afan_out(g, {t.name: t for t in A.TOOLS}), jobs))
    assert G.RAN["charge_card"] == 1 and 1 <= asked <= 3, (G.RAN, asked)
    s = verify(out["stalwart_guard"], g.chain)
    assert s.problem is None and [e["ran"] for e in s.entries].count(True) == 1 and len(s.entries) == 3, s.entries


def test_declined_writes_in_async_branches_run_nothing():
    import attacks as A

    g = A.guard()
    jobs = [{"tool": "add_note", "id": f"n{k}", "args": {"order_id": "42", "note": f"n{k}"}} for k in range(2)]
    out, asked = asyncio.run(ago(afan_out(g, {t.name: t for t in A.TOOLS}), jobs, answer=G.NO))
    assert asked == 2 and G.RAN["add_note"] == 0
    assert [(e["tool"], e["ran"]) for e in G.entries(out)] == [("add_note", False)] * 2


def test_an_async_tool_that_runs_a_guarded_graph_inside_a_branch_does_not_wait_for_itself():
    """A branch's `guard.acall` awaits a tool that runs a graph whose async steps `acall` the same
    guard: the inner calls go on inside the outer one, which holds the lane (no deadlock), and all
    are in one history."""
    import attacks as A
    from stalwart_export.guard.history import verify

    g = A.guard()

    async def inner_step(state: TDState):
        await g.acall(A.search, {"q": "inner"}, state)
        return {}

    inner = StateGraph(TDState)
    inner.add_node("a", inner_step)
    inner.add_node("b", inner_step)
    inner.add_edge(START, "a")
    inner.add_edge(START, "b")
    inner.add_edge("a", END)
    inner.add_edge("b", END)
    inner_app = inner.compile()

    @tool
    async def get_order(order_id: str) -> str:
        """Look up an order (runs a guarded graph)."""
        await inner_app.ainvoke({"messages": []})
        return "ok"

    jobs = [{"tool": "get_order", "id": f"g{k}", "args": {"order_id": "1"}} for k in range(2)]

    async def main():  # not a timing assertion: a deadlock would never finish, and the test run fails on it
        return await asyncio.wait_for(ago(afan_out(g, {"get_order": get_order}), jobs), 120)

    out, _ = asyncio.run(main())
    assert G.RAN["search"] == 2, G.RAN
    s = verify(out["stalwart_guard"], g.chain)
    assert s.problem is None, s.problem
    assert sorted((e["tool"], e["ran"]) for e in s.entries) == [
        ("get_order", True), ("get_order", True), ("search", False), ("search", False), ("search", True),
        ("search", True)], s.entries


async def _alookup(order_id: str) -> str:
    G._ran("alookup", order_id=order_id)
    return f"order {order_id}"


def _lookup(order_id: str) -> str:
    G._ran("lookup", order_id=order_id)
    return f"order {order_id}"


def _refund(order_id: str, amount: float) -> str:
    G._ran("refund", order_id=order_id, amount=amount)
    return "refunded"


async def _arefund(order_id: str, amount: float) -> str:
    G._ran("arefund", order_id=order_id, amount=amount)
    return "refunded"


PLAIN_CAT = {"format": "qls-catalogue/1", "tools": {
    "lookup": {"kind": "read", "args": {"order_id": {"type": "string"}}},
    "alookup": {"kind": "read", "args": {"order_id": {"type": "string"}}},
    "refund": {"kind": "write", "order": {"after": ["lookup"]},
               "args": {"order_id": {"type": "string"}, "amount": {"type": "number"}}},
    "arefund": {"kind": "write", "order": {"after": ["alookup"]},
                "args": {"order_id": {"type": "string"}, "amount": {"type": "number"}}},
    "send_mail": {"kind": "write", "sends_out": ["@shop.example"],
                  "args": {"to": {"type": "string", "role": "destination"}}},
}}


@pytest.mark.parametrize("asyncfns", [False, True])
def test_plain_functions_in_an_async_step_through_acall(asyncfns):
    """An `async def` step calling plain functions (async or not) with `await guard.acall(fn, ...)`:
    named by `__name__`; a write out of order refused, then confirmed through a pause."""
    g = Guard(PLAIN_CAT)
    look, refund = (_alookup, _arefund) if asyncfns else (_lookup, _refund)
    ln, rn = look.__name__.lstrip("_"), refund.__name__.lstrip("_")

    async def act(state: DCState):
        out = []
        for c in state.messages[-1].tool_calls:
            fn = look if c["name"] == ln else refund
            r = await g.acall(fn, c["args"], state, name=c["name"])
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
        return {"messages": out}

    turns = [[call(rn, {"order_id": "42", "amount": 5.0}, 1)], [call(ln, {"order_id": "42"}, 2)],
             [call(rn, {"order_id": "42", "amount": 5.0}, 3)], "done"]
    m = model(*turns)

    async def call_model(state: DCState):
        return {"messages": [await m.ainvoke(list(state.messages))]}

    b = StateGraph(DCState)
    b.add_node(call_model)
    b.add_node("tools", act)
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", lambda s: "tools" if s.messages[-1].tool_calls else END)
    b.add_edge("tools", "call_model")
    app = b.compile(checkpointer=InMemorySaver())
    out, asked = asyncio.run(aturn(app, G.thread(), [G.YES]))
    assert G.decisions(out) == [(rn, "refuse", False, "order_rule"), (ln, "allow", True, None),
                                (rn, "confirm", True, "write")], G.decisions(out)
    assert G.RAN == {ln: 1, rn: 1}, G.RAN
    assert [q["name"] for q in asked] == [rn]


def test_plain_functions_in_guard_call_and_tool_node(binary, tmp_path):
    g = Guard(PLAIN_CAT)
    r = g.call(_lookup, {"order_id": "1"}, {"messages": [], "stalwart_guard": []}, name="lookup")
    assert r.ran and r.output == "order 1" and r.entry["tool"] == "lookup"
    # an async function in sync code (no loop running here) runs to its end
    r2 = g.call(_alookup, {"order_id": "2"}, {"messages": [], "stalwart_guard": []}, name="alookup")
    assert r2.ran and r2.output == "order 2"
    with pytest.raises(TypeError, match="name="):
        g.call(lambda order_id: order_id, {"order_id": "1"}, {})
    with pytest.raises(TypeError, match="named 'get_order'"):
        g.call(G.get_order, {"order_id": "1"}, {}, name="other")

    def lookup(order_id: str) -> str:
        """Look up an order."""
        return _lookup(order_id)

    def refund(order_id: str, amount: float) -> str:
        """Refund."""
        return _refund(order_id, amount)

    G.reset()
    graph = template(g, DCState, "tool_node", tools=[lookup, refund],
                     turns=[[call("refund", {"order_id": "42", "amount": 5.0}, 1)], [call("lookup", {"order_id": "42"}, 2)],
                            [call("refund", {"order_id": "42", "amount": 5.0}, 3)], "done"], sync=True)
    out, asked = run(graph, [G.YES], sync=True)
    assert G.decisions(out) == [("refund", "refuse", False, "order_rule"), ("lookup", "allow", True, None),
                                ("refund", "confirm", True, "write")], G.decisions(out)
    assert G.RAN == {"lookup": 1, "refund": 1}
    code, found, export = gate(binary, tmp_path, graph)
    assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools"
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)


def lookup(order_id: str) -> str:
    """Look up an order (a plain function)."""
    return _lookup(order_id)


async def arefund(order_id: str, amount: float) -> str:
    """Refund an order (a plain async function)."""
    return await _arefund(order_id, amount)


PLAIN_STEP_CAT = {"format": "qls-catalogue/1", "tools": {
    "lookup": PLAIN_CAT["tools"]["lookup"],
    "refund_plain": {"kind": "write", "order": {"after": ["lookup"]},
                     "args": {"order_id": {"type": "string"}, "amount": {"type": "number"}}},
}}


def plain_step_graph(g: Guard, direct: bool = False) -> Any:
    """An async step calling plain functions through the guard (one named by `name=`); with
    `direct`, it also calls `lookup` itself, outside the guard."""

    async def act(state: DCState):
        out = []
        for c in state.messages[-1].tool_calls:
            if c["name"] == "lookup":
                r = await g.acall(lookup, c["args"], state)
            else:
                r = await g.acall(arefund, c["args"], state, name="refund_plain")
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
        return {"messages": out}

    async def act_and_look(state: DCState):
        out = []
        for c in state.messages[-1].tool_calls:
            if c["name"] == "lookup":
                r = await g.acall(lookup, c["args"], state)
            else:
                lookup("0")  # the function itself, outside the guard
                r = await g.acall(arefund, c["args"], state, name="refund_plain")
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
        return {"messages": out}

    m = model([call("refund_plain", {"order_id": "42", "amount": 5.0}, 1)], [call("lookup", {"order_id": "42"}, 2)],
              [call("refund_plain", {"order_id": "42", "amount": 5.0}, 3)], "done")

    async def call_model(state: DCState):
        return {"messages": [await m.ainvoke(list(state.messages))]}

    b = StateGraph(DCState)
    b.add_node(call_model)
    b.add_node("tools", act_and_look if direct else act)
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", lambda s: "tools" if s.messages[-1].tool_calls else END, ["tools", END])
    b.add_edge("tools", "call_model")
    return b.compile(checkpointer=InMemorySaver(), name="plain_step")


def test_a_step_calling_plain_functions_through_the_guard_is_exported_guarded(binary, tmp_path):
    """The exporter reads plain functions passed to guard.call/acall as the step's tools (named as the
    guard names them), credits the step as guarded, and writes their catalogue entries; the agent runs
    through a refused call and a confirmed write, and passes the gate."""
    g = Guard(PLAIN_STEP_CAT)
    graph = plain_step_graph(g)
    out, asked = asyncio.run(aturn(graph, G.thread(), [G.YES]))
    assert G.decisions(out) == [("refund_plain", "refuse", False, "order_rule"), ("lookup", "allow", True, None),
                                ("refund_plain", "confirm", True, "write")], G.decisions(out)
    assert G.RAN == {"lookup": 1, "arefund": 1}
    code, found, export = gate(binary, tmp_path, graph)
    node = {n["id"]: n for n in export["nodes"]}["tools"]
    assert node["kind"] == "tools" and sorted(node["tools"]) == ["lookup", "refund_plain"], node
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)


def test_a_step_that_also_calls_the_plain_function_itself_is_not_credited(binary, tmp_path):
    g = Guard(PLAIN_STEP_CAT)
    code, found, export = gate(binary, tmp_path, plain_step_graph(g, direct=True))
    node = {n["id"]: n for n in export["nodes"]}["tools"]
    assert node["kind"] == "step" and "lookup" in node["tools"], node
    assert code == 1 and any(f[0] == "QG001" for f in found), sorted(found)


def test_an_async_function_in_guard_call_inside_a_loop_says_use_acall():
    g = Guard(PLAIN_CAT)

    async def main():
        return g.call(_alookup, {"order_id": "2"}, {}, name="alookup")

    with pytest.raises(TypeError, match="await guard.acall"):
        asyncio.run(main())
    assert G.RAN == {}


# ------------------------------------------------------------------ injected arguments


@tool
def annotate(order_id: str, note: str, state: Annotated[dict, InjectedState],
             tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Add a note to an order (reads the conversation it is in)."""
    G._ran("annotate", order_id=order_id, note=note, seen=len(state["messages"]))
    return Command(update={"messages": [ToolMessage(content="noted", tool_call_id=tool_call_id)]})


INJ_CAT = {"format": "qls-catalogue/1", "tools": {
    "annotate": {"kind": "read", "args": {"order_id": {"type": "string"}, "note": {"type": "string"}}},
    "read_inbox": {"kind": "read", "reads_outside": True, "args": {"folder": {"type": "string"}}},
}}


def test_injected_arguments_are_passed_through_not_checked_nor_scanned(binary, tmp_path):
    """A tool taking `InjectedState` and `InjectedToolCallId` in guard.tool_node: the catalogue
    declares only the model's arguments (rule 3 does not refuse the injected ones), and the state
    it is given holds a URL from the inbox (rule 4 does not scan it: the tool is not sends_out)."""
    g = Guard(INJ_CAT)

    class S(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        stalwart_guard: GuardHistory

    turns = [[call("read_inbox", {}, 1)], [call("annotate", {"order_id": "42", "note": "ok"}, 2)], "done"]
    graph = template(g, S, "tool_node", turns=turns, tools=[G.read_inbox, annotate], sync=True)
    out, asked = run(graph, [], sync=True)
    assert [d[:3] for d in G.decisions(out)] == [("read_inbox", "allow", True), ("annotate", "allow", True)], \
        G.decisions(out)
    assert G.ARGS["annotate"] == [{"order_id": "42", "note": "ok", "seen": 4}], G.ARGS
    assert G.entries(out)[1]["args"] == {"order_id": "42", "note": "ok"}  # nothing injected recorded
    code, found, export = gate(binary, tmp_path, graph)
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)


def test_injected_arguments_in_guard_call_and_acall():
    """guard.call gives a tool its injected arguments as ToolNode does (the step's state, the call's
    id), unchecked and unrecorded; `injected=` gives them explicitly."""
    g = Guard(INJ_CAT)
    st = {"messages": [HumanMessage("see https://evil.invalid/x")], "stalwart_guard": []}
    r = g.call(annotate, {"order_id": "42", "note": "ok"}, st, call_id="c1")
    assert r.ran and r.entry["args"] == {"order_id": "42", "note": "ok"}, r
    assert G.ARGS["annotate"][-1]["seen"] == 1
    other = {"messages": [HumanMessage("a"), HumanMessage("b")]}
    r2 = asyncio.run(g.acall(annotate, {"order_id": "42", "note": "again"}, st, injected={"state": other}))
    assert r2.ran and r2.entry["args"] == {"order_id": "42", "note": "again"}, r2
    assert G.ARGS["annotate"][-1]["seen"] == 2
    # a model-written argument the catalogue lacks is still refused (rule 3 is not switched off)
    r3 = g.call(annotate, {"order_id": "42", "note": "x", "extra": 1}, st, call_id="c2")
    assert not r3.ran and r3.reasons == ["argument_schema"], r3
    with pytest.raises(TypeError, match="injects only"):
        g.call(annotate, {"order_id": "42", "note": "x"}, st, injected={"nope": 1})


def test_a_model_written_argument_named_like_an_injected_one_is_the_model_s():
    """A step passing the model's arguments straight on: the model writing `state` (the name of the
    tool's InjectedState parameter, with a URL in it) does not get it past rules 3 and 4 as an
    injected value, and never replaces the state the tool gets."""
    g = Guard(INJ_CAT)
    st = {"messages": [HumanMessage("hi")], "stalwart_guard": []}
    r = g.call(annotate, {"order_id": "42", "note": "x", "state": {"messages": ["https://evil.invalid"]}}, st)
    assert not r.ran and r.reasons == ["argument_schema"] and "state" in r.message, r
    assert "annotate" not in G.RAN


def test_a_tool_runtime_argument_is_passed_through():
    from langchain.tools import ToolRuntime

    @tool
    def where(order_id: str, runtime: ToolRuntime) -> str:
        """Say which conversation this is."""
        G._ran("where", order_id=order_id, n=len(runtime.state["messages"]))
        return "here"

    g = Guard({"format": "qls-catalogue/1", "tools": {"where": {"kind": "read", "args": {"order_id": {"type": "string"}}}}})
    graph = template(g, TDState, "tool_node", turns=[[call("where", {"order_id": "1"}, 1)], "done"], tools=[where],
                     sync=True)
    out, _ = run(graph, [], sync=True)
    assert G.decisions(out) == [("where", "allow", True, None)] and G.ARGS["where"] == [{"order_id": "1", "n": 2}]


# ------------------------------------------------------------------ a guard built at import, before its catalogue


MODULE = '''
from dataclasses import dataclass, field
from typing import Annotated, Sequence
from langchain_core.messages import AnyMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.managed import RemainingSteps
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import tools_condition
from stalwart_export import Guard, GuardHistory
import guarded as G
from graphs import call, model

guard = Guard("build/catalogue.json")

@dataclass
class State:
    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)
    stalwart_guard: GuardHistory = field(default_factory=list)

def build(turns):
    m = model(*turns).bind_tools([G.get_order, G.refund_order])
    def agent(state: State):
        return {"messages": [m.invoke(list(state.messages))]}
    b = StateGraph(State)
    b.add_node("agent", agent)
    b.add_node("tools", guard.tool_node([G.get_order, G.refund_order]))
    b.add_edge(START, "agent")
    b.add_conditional_edges("agent", tools_condition)
    b.add_edge("tools", "agent")
    return b.compile(checkpointer=InMemorySaver())

graph = build([[call("get_order", {"order_id": "42"}, 1)], "done"])
'''

WORDS = {"get_order": {"kind": "read"}, "refund_order": {"kind": "write", "order": {"after": ["get_order"]}}}


def test_a_guard_built_at_import_before_its_catalogue_exports_then_runs(binary, tmp_path, monkeypatch):
    """Item 5, a fresh checkout: the module builds `Guard("build/catalogue.json")` at import. Running
    it first fails closed at the first call (naming the file and the exporter command; nothing ran).
    The exporter imports it and writes the catalogue (no error); the gate passes; then it runs."""
    (tmp_path / "shop_agent.py").write_text(textwrap.dedent(MODULE))
    (tmp_path / "words.json").write_text(json.dumps(WORDS))
    (tmp_path / "build").mkdir()
    here = os.path.dirname(os.path.abspath(__file__))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("shop_agent", None)
    mod = importlib.import_module("shop_agent")  # no catalogue yet: the import does not fail
    with pytest.raises(GuardConfigError, match=r"build/catalogue.json .*does not exist.*--catalogue build/catalogue.json"):
        G.turn(mod.graph, G.thread())
    assert G.RAN == {}

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), here, os.path.dirname(here)]))
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "shop_agent:graph", "-o", "graph.json",
                        "--catalogue", "build/catalogue.json", "--words", "words.json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    cat = json.loads((tmp_path / "build" / "catalogue.json").read_text())
    assert set(cat["tools"]) == {"get_order", "refund_order"}, cat
    export = json.loads((tmp_path / "graph.json").read_text())
    assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools"
    v = subprocess.run([binary, "verify", "--graph", "graph.json", "--catalogue", "build/catalogue.json",
                        "--format", "json"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert v.returncode == 0, v.stdout + v.stderr

    out, _ = G.turn(mod.build([[call("get_order", {"order_id": "42"}, 1)],
                               [call("refund_order", {"order_id": "42", "amount": 1.0}, 2)], "done"]),
                    G.thread(), answers=[G.YES])
    assert G.decisions(out) == [("get_order", "allow", True, None), ("refund_order", "confirm", True, "write")]
    sys.modules.pop("shop_agent", None)


def test_a_catalogue_that_exists_but_is_broken_is_still_an_error_when_the_guard_is_built(tmp_path):
    (tmp_path / "c.json").write_text('{"format": "qls-catalogue/1", "tools": {"a": {"kind": "maybe"}}}')
    with pytest.raises(GuardConfigError, match="c.json:1:"):
        Guard(str(tmp_path / "c.json"))


def test_a_catalogue_written_after_the_guard_but_broken_fails_at_the_first_call(tmp_path):
    g = Guard(str(tmp_path / "c.json"))
    (tmp_path / "c.json").write_text('{"format": "qls-catalogue/1", "tools": {"a": {"kind": "maybe"}}}')
    with pytest.raises(GuardConfigError, match="c.json:1:"):
        g.call(G.get_order, {"order_id": "1"}, {})
    assert G.RAN == {}


# ------------------------------------------------------------------ item 6: a guarded step's `calls` words


def gate_words(binary: str, tmp_path: Any, graph: Any, words: dict) -> tuple[int, set, dict]:
    export = export_graph(graph, words=words)
    cat = export_catalogue(graph, words)
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export, indent=1))
    cp.write_text(json.dumps(cat, indent=1))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, {(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"]}, export


def test_calls_words_of_a_guarded_step_are_kept_when_the_guard_decides_them(binary, tmp_path):
    """Before, `nodes.tools.calls` on a step guarded through guard.call was an error ("is a tools
    node"); words written before the step was guarded now stay, as the words of its guarded tools."""
    graph = template(Guard(G.CATALOGUE), DCState, "step")
    words = {"nodes": {"tools": {"calls": {"refund_order": {"kind": "write"}}}}}
    code, found, export = gate_words(binary, tmp_path, graph, words)
    node = {n["id"]: n for n in export["nodes"]}["tools"]
    assert node["kind"] == "tools" and node["langgraph"]["calls_declared"] == ["refund_order"], node
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)


def test_calls_words_naming_an_effect_outside_the_guard_uncredit_the_step(binary, tmp_path):
    """An effect the words name that the step does not pass to the guard is a call the guard does not
    decide: the step is exported `step` (not guarded), with a warning, and the gate fails (QG001)."""
    graph = template(Guard(G.CATALOGUE), DCState, "step")
    words = {"nodes": {"tools": {"calls": {"gmail_send": {"kind": "write", "sends_out": True}}}}}
    code, found, export = gate_words(binary, tmp_path, graph, words)
    node = {n["id"]: n for n in export["nodes"]}["tools"]
    assert node["kind"] == "step" and "gmail_send" in node["tools"], node
    assert any("is not guarded" in w and "gmail_send" in w for w in export["warnings"]), export["warnings"]
    assert code == 1 and ("QG001", "gmail_send", "tools") in found, sorted(found)


def test_a_missing_catalogue_stops_create_agent_at_its_first_call(tmp_path):
    """The middleware too fails closed on a catalogue still missing at the first call: the run stops
    naming the file, nothing ran, nothing was recorded (no refusal decided under no rules)."""
    g = Guard(str(tmp_path / "catalogue.json"))
    agent = G.agent(g, [call("get_order", {"order_id": "42"}, 1)], "done")
    assert {n["id"]: n["kind"] for n in export_graph(agent)["nodes"]}["tools"] == "tools"
    with pytest.raises(GuardConfigError, match="catalogue.json does not exist"):
        G.turn(agent, G.thread())
    assert G.RAN == {}


def test_no_differ_warning_when_the_guard_reads_the_catalogue_the_exporter_wrote(tmp_path):
    """Item 6: the words' `args` are merged over the tool's schema, so the catalogue the exporter
    wrote from them never equals them word for word; re-exporting with the same words, the guard
    reading that catalogue, is not a difference. A changed word still is."""
    words = {"send_email": {"kind": "write", "sends_out": ["@shop.example"], "args": {"to": {"role": "destination"}}},
             "get_order": {"kind": "read"}}
    tools = [G.get_order, G.send_email]
    first = export_catalogue(tools, words)
    (tmp_path / "c.json").write_text(json.dumps(first))
    graph = template(Guard(str(tmp_path / "c.json")), TDState, "tool_node", tools=tools, sync=True)
    again, warns = export_catalogue(graph, words, with_warnings=True)
    assert not [w for w in warns if "differ" in w], warns
    assert again["tools"]["send_email"] == first["tools"]["send_email"]
    changed = dict(words, send_email=dict(words["send_email"], args={"to": {"role": "url"}}))
    _, warns = export_catalogue(graph, changed, with_warnings=True)
    assert [w for w in warns if "send_email" in w and "['args'] differ" in w], warns


@pytest.mark.parametrize("shape", ["typeddict", "dataclass"])
def test_a_guarded_tool_node_is_located_at_the_user_s_line_not_the_guard_s(shape):
    """Item 6: with the package on PYTHONPATH (not in site-packages), a guard.tool_node was located in
    the guard's own node.py; it is located where the user's code adds it."""
    graph = template(Guard(G.CATALOGUE), SHAPES[shape], "tool_node", sync=True)
    loc = {n["id"]: n for n in export_graph(graph)["nodes"]}["tools"]["location"]
    assert loc["file"].endswith("test_guard_shapes.py"), loc
    assert "stalwart_export" not in loc["file"], loc


@pytest.mark.parametrize("shape", ["dataclass", "pydantic"])
def test_guard_call_keeps_the_record_in_a_dataclass_or_model_state_and_read_history_reads_it(shape):
    from stalwart_export import read_history

    g = Guard(G.CATALOGUE)
    st = SHAPES[shape]()
    g.call(G.get_order, {"order_id": "1"}, st)
    second = g.call(G.get_order, {"order_id": "2"}, st)
    assert len(st.stalwart_guard) == 2 and second.entry["batch"] == 1
    assert [e["args"]["order_id"] for e in read_history(st)] == ["1", "2"]
