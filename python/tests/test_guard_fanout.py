"""Issue 27 item 4, SPEC 12.1 "Concurrent branches share one record": calls the guard decides in tasks
LangGraph runs at once (a `Send` fan-out, parallel steps) are decided over one serialised history, so
`at_most` and the order rules hold across the branches and every call is recorded; where a task
cannot be tied to the thread's history, a call bearing a limit is refused (`concurrent`) and the
export does not credit the node. Real LangGraph at the pinned versions, scripted models; the tools
count their runs in `guarded.RAN`."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send

import attacks as A
import guarded as G
from stalwart_export import HISTORY_KEY, GuardState, export_graph
from stalwart_export.guard.history import verify


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


class FanState(GuardState):
    jobs: list


TOOLS = {t.name: t for t in A.TOOLS}


def fan_out(g, *, carry: bool = True, checkpointer: bool = True, before: Any = None):
    """plan -> Send("worker", ...) per job -> END; each worker calls `guard.call` for its job. The
    payload carries the guard's history when `carry`. `before(job)` runs in the worker first."""

    def plan(state: FanState):
        return {}

    def route(state: FanState):
        out = []
        for job in state["jobs"]:
            payload = {"job": job, "messages": state["messages"]}
            if carry:
                payload[HISTORY_KEY] = state.get(HISTORY_KEY, [])
            out.append(Send("worker", payload))
        return out

    def worker(state: dict):
        job = state["job"]
        if before is not None:
            before(job)
        r = g.call(TOOLS[job["tool"]], job.get("args", {}), state)
        return {"messages": [ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=job["id"])]}

    sg = StateGraph(FanState)
    sg.add_node("plan", plan)
    sg.add_node("worker", worker)
    sg.add_edge(START, "plan")
    sg.add_conditional_edges("plan", route, ["worker"])
    sg.add_edge("worker", END)
    return sg.compile(checkpointer=InMemorySaver() if checkpointer else None)


def job(tool: str, k: int, **args: Any) -> dict:
    return {"tool": tool, "id": f"{tool}{k}", "args": args}


def searches(n: int = 3) -> list:
    return [job("search", k, q=f"q{k}") for k in range(n)]


def go(app, jobs, thread: str | None = None, answers: Any = None) -> tuple[dict, int]:
    """One turn of `jobs`, each pause answered yes (or with `answers`). (state, questions asked)"""
    cfg = {"configurable": {"thread_id": thread or G.thread()}, "recursion_limit": 30}
    out = app.invoke({"messages": [HumanMessage(content="go")], "jobs": jobs}, cfg)
    asked = 0
    while out.get("__interrupt__") and asked < 20:
        pending = out["__interrupt__"]
        asked += len(pending)
        out = app.invoke(Command(resume={p.id: answers or G.YES for p in pending}), cfg)
    return out, asked


def check(out, g, thread=None) -> list[tuple]:
    """The history verifies; (tool, ran, first reason) per entry."""
    s = verify(out[HISTORY_KEY], g.chain, thread)
    assert s.problem is None, s.problem
    return [(e["tool"], e["ran"], (e["reasons"] or [None])[0]) for e in s.entries]


@pytest.mark.parametrize("carry", [True, False], ids=["payload_carries", "payload_without_history"])
def test_three_send_branches_never_pass_at_most(carry):
    """The issue's shape: three branches each call `search` (at_most 2). Before: all three ran and
    the history kept three records at one place. Now two run, the third is refused, and every call
    has its own record in one history that verifies - whether or not the payload carries it."""
    g = A.guard()
    t = G.thread()
    app = fan_out(g, carry=carry)
    out, _ = go(app, searches(3), t)
    assert G.RAN["search"] == 2, dict(G.RAN)
    got = check(out, g)
    assert sorted(got) == [("search", False, "order_rule"), ("search", True, None), ("search", True, None)], got
    # the next turn's fan-out sees the whole session: nothing more runs
    out, _ = go(app, searches(3), t)
    assert G.RAN["search"] == 2
    assert [r for _, ran, r in check(out, g) if not ran] == ["order_rule"] * 4


def test_a_fan_out_without_a_checkpointer_keeps_runs_apart():
    """Runs on no thread never share a lane: each run's fan-out is counted alone."""
    g = A.guard()
    app = fan_out(g, checkpointer=False)
    for _ in range(2):
        out = app.invoke({"messages": [HumanMessage(content="go")], "jobs": searches(3)})
        assert sorted(str(r) for _, _, r in check(out, g, None)) == ["None", "None", "order_rule"]
    assert G.RAN["search"] == 4


def test_an_outside_read_in_one_branch_holds_the_order_rule_of_another():
    """`wire` (not_after: untrusted) in one branch, `read_inbox` (reads_outside) in another: the
    serialised history decides `wire` after the read, so it is refused; whichever ran first, a
    `wire` that ran comes before the read in the history."""
    g = A.guard()
    read_done = threading.Event()

    def before(j):
        if j["tool"] == "wire":
            read_done.wait(10)  # let the read go first (not a timing assertion: the order is checked below)

    orig = G.read_inbox.func

    def read_and_signal(folder: str = "inbox") -> str:
        try:
            return orig(folder)
        finally:
            read_done.set()

    G.read_inbox.func = read_and_signal
    try:
        app = fan_out(g, before=before)
        out, _ = go(app, [job("read_inbox", 0), job("wire", 1, account="a", amount=1.0)])
    finally:
        G.read_inbox.func = orig
    got = check(out, g)
    tools = [t for t, _, _ in got]
    assert G.RAN["read_inbox"] == 1
    if G.RAN["wire"]:
        assert tools.index("wire") < tools.index("read_inbox"), got
    else:
        assert ("wire", False, "order_rule") in got, got
    assert read_done.is_set() and G.RAN["wire"] == 0, "the read ran first, so wire must be refused"


def test_writes_in_branches_are_each_asked_once_and_recorded_once():
    g = A.guard()
    notes = [job("add_note", k, order_id="42", note=f"n{k}") for k in range(3)]
    out, asked = go(fan_out(g), notes)
    assert asked == 3 and G.RAN["add_note"] == 3
    assert sorted(check(out, g)) == [("add_note", True, "write")] * 3


def test_a_declined_write_in_one_branch_runs_nothing_there():
    g = A.guard()
    notes = [job("add_note", k, order_id="42", note=f"n{k}") for k in range(2)]
    out, asked = go(fan_out(g), notes, answers=G.NO)
    assert asked == 2 and G.RAN["add_note"] == 0
    assert [ran for _, ran, _ in check(out, g)] == [False, False]


def test_a_limited_write_in_branches_runs_at_most_its_limit():
    """`charge_card` (a write, at_most 1) in three branches: it runs once, whatever is asked."""
    g = A.guard()
    charges = [job("charge_card", k, order_id="42", amount=1.0) for k in range(3)]
    out, asked = go(fan_out(g), charges)
    assert G.RAN["charge_card"] == 1 and asked <= 3
    got = check(out, g)
    assert [ran for _, ran, _ in got].count(True) == 1 and len(got) == 3, got


def test_parallel_steps_share_the_history():
    """Two steps in one superstep (two fixed edges from START), each calling `search` twice."""
    g = A.guard()

    def step(state: GuardState):
        for k in range(2):
            g.call(A.search, {"q": str(k)}, state)
        return {}

    sg = StateGraph(GuardState)
    sg.add_node("a", step)
    sg.add_node("b", step)
    sg.add_edge(START, "a")
    sg.add_edge(START, "b")
    sg.add_edge("a", END)
    sg.add_edge("b", END)
    out = sg.compile(checkpointer=InMemorySaver()).invoke(
        {"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": "p"}})
    assert G.RAN["search"] == 2
    assert sorted(str(r) for _, _, r in check(out, g)) == ["None", "None", "order_rule", "order_rule"]


def test_async_fan_out_never_passes_at_most():
    g = A.guard()
    app = fan_out(g)
    cfg = {"configurable": {"thread_id": G.thread()}}
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage(content="go")], "jobs": searches(4)}, cfg))
    assert G.RAN["search"] == 2
    assert sorted(str(r) for _, _, r in check(out, g)) == ["None", "None", "order_rule", "order_rule"]


def state_fan_to_tool_node(g, wrapper: bool = False):
    """A model's message of two searches and a read, then `Send("tools", state)` twice to a
    guarded tool node (`guard.tool_node`, or a `ToolNode` the guard wraps): two batches of the
    same calls in concurrent tasks, which the guard cannot place in one history."""
    from langgraph.prebuilt import ToolNode

    m = A.model([A.tc("search", {"q": "a"}, "s1"), A.tc("search", {"q": "b"}, "s2"),
                 A.tc("get_order", {"order_id": "1"}, "g1")], "done").bind_tools(A.TOOLS)

    def agent(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    def route(state: GuardState):
        if not getattr(state["messages"][-1], "tool_calls", None):
            return END
        return [Send("tools", state), Send("tools", state)]

    sg = StateGraph(GuardState)
    sg.add_node("agent", agent)
    sg.add_node("tools", ToolNode(A.TOOLS, wrap_tool_call=g.wrap_tool_call) if wrapper else g.tool_node(A.TOOLS))
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", route, ["tools", END])
    sg.add_edge("tools", END)
    return sg.compile(checkpointer=InMemorySaver())


def test_a_state_sent_to_a_guarded_tool_node_refuses_limited_calls():
    g = A.guard()
    out, _ = G.turn(state_fan_to_tool_node(g), G.thread())
    assert G.RAN["search"] == 0, "a limited call ran in a batch the guard cannot serialise"
    refused = [m for m in G.tool_messages(out) if m.name == "search"]
    assert refused and all("concurrent" in m.content for m in refused)


def test_a_state_sent_twice_to_a_tool_node_the_guard_wraps_never_passes_at_most():
    """Each task runs the message's calls through the wrapper: before, each decided both searches
    over the same history and four ran (at_most 2). Now a place another task of the superstep
    decided is refused (`concurrent`)."""
    g = A.guard()
    out, _ = G.turn(state_fan_to_tool_node(g, wrapper=True), G.thread())
    assert G.RAN["search"] <= 2, dict(G.RAN)
    assert any("concurrent" in m.content for m in G.tool_messages(out) if m.name == "search")


def test_the_export_credits_a_serialised_worker_and_not_a_state_fan_to_a_tool_node():
    g = A.guard()
    export = export_graph(fan_out(g))
    assert {n["id"]: n["kind"] for n in export["nodes"]}["worker"] == "tools"
    for wrapper in (False, True):
        export = export_graph(state_fan_to_tool_node(g, wrapper))
        assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools_plain"
        assert any("Send" in w and "'tools'" in w and "concurrent" in w for w in export["warnings"]), export["warnings"]
    # create_agent's own Sends (one call of the message each) leave its tool node guarded
    export = export_graph(A.middleware(g, "done"))
    assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools"


def test_branches_that_pause_after_a_read_ask_once_each_and_keep_one_history():
    """Each branch reads, then makes a write that pauses: on resume LangGraph runs both branches
    again from their start; each re-run decides its earlier call over what it saw before (so the
    person's answers meet the same questions), and the history holds each call once."""
    g = A.guard()

    def worker_two_calls(state: dict):
        j = state["job"]
        g.call(A.search, {"q": j["id"]}, state)
        r = g.call(G.add_note, {"order_id": "42", "note": j["id"]}, state)
        return {"messages": [ToolMessage(content=str(r.ran), tool_call_id=j["id"])]}

    sg = StateGraph(FanState)
    sg.add_node("plan", lambda s: {})
    sg.add_node("worker", worker_two_calls)
    sg.add_edge(START, "plan")
    sg.add_conditional_edges("plan", lambda s: [Send("worker", {"job": j, "messages": s["messages"]})
                                                for j in s["jobs"]], ["worker"])
    sg.add_edge("worker", END)
    out, asked = go(sg.compile(checkpointer=InMemorySaver()), [job("x", 0), job("x", 1)])
    assert asked == 2 and G.RAN["add_note"] == 2
    got = check(out, g)
    assert sorted(t for t, ran, _ in got if ran) == ["add_note", "add_note", "search", "search"], got


class JobState(GuardState):
    job: dict


@pytest.mark.parametrize("carry", [True, False], ids=["payload_carries", "payload_without_history"])
def test_branches_sent_into_a_subgraph_share_the_history(carry):
    """`Send` into a compiled subgraph whose step calls `guard.call`: the branches' subgraphs run
    their own supersteps, and still share the top superstep's lane; a payload without the history
    is tied to the top graph's (read from the checkpointer): two searches run in the first turn,
    the third is refused, and none in the second turn."""
    g = A.guard()

    def inner(state: JobState):
        g.call(A.search, state["job"]["args"], state)
        return {}

    sub = StateGraph(JobState, output_schema=GuardState)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)
    sg = StateGraph(FanState)
    sg.add_node("plan", lambda s: {})
    sg.add_node("sub", sub.compile())
    sg.add_edge(START, "plan")
    def route(s):
        extra = {HISTORY_KEY: s.get(HISTORY_KEY, [])} if carry else {}
        return [Send("sub", {"job": j, "messages": s["messages"], **extra}) for j in s["jobs"]]

    sg.add_conditional_edges("plan", route, ["sub"])
    sg.add_edge("sub", END)
    app, t = sg.compile(checkpointer=InMemorySaver()), G.thread()
    out, _ = go(app, searches(3), t)
    assert G.RAN["search"] == 2
    assert sorted(str(r) for _, _, r in check(out, g)) == ["None", "None", "order_rule"]
    out, _ = go(app, searches(3), t)
    assert G.RAN["search"] == 2
    assert sorted(str(r) for _, _, r in check(out, g)) == ["None", "None"] + ["order_rule"] * 4


def test_a_tool_that_runs_a_guarded_graph_inside_a_branch_does_not_wait_for_itself():
    """A branch's `guard.call` runs a tool that invokes a graph whose steps call the same guard (in
    LangGraph's own threads): the inner calls go on inside the outer one, which holds the lane."""
    from langchain_core.tools import tool

    g = A.guard()

    def inner_step(state: GuardState):
        g.call(A.search, {"q": "inner"}, state)
        return {}

    inner = StateGraph(GuardState)
    inner.add_node("a", inner_step)
    inner.add_node("b", inner_step)
    inner.add_edge(START, "a")
    inner.add_edge(START, "b")
    inner.add_edge("a", END)
    inner.add_edge("b", END)
    inner_app = inner.compile()

    @tool
    def get_order(order_id: str) -> str:
        """Look up an order (runs a guarded graph)."""
        inner_app.invoke({"messages": []})
        return "ok"

    done = []

    def outer(state: dict):
        g.call(get_order, {"order_id": "1"}, state)
        done.append(True)
        return {}

    sg = StateGraph(FanState)
    sg.add_node("plan", lambda s: {})
    sg.add_node("worker", outer)
    sg.add_edge(START, "plan")
    sg.add_conditional_edges("plan", lambda s: [Send("worker", {"messages": []}) for _ in range(2)], ["worker"])
    sg.add_edge("worker", END)
    got: list = []
    runner = threading.Thread(target=lambda: got.append(go(sg.compile(checkpointer=InMemorySaver()), [])[0]),
                              daemon=True)
    runner.start()
    runner.join(60)  # not a timing assertion: a deadlock would never finish
    assert done == [True, True] and got
    assert G.RAN["search"] == 2
    # the inner calls are the session's too: one history, every call in it
    assert sorted((t, ran) for t, ran, _ in check(got[0], g)) == [
        ("get_order", True), ("get_order", True), ("search", False), ("search", False), ("search", True),
        ("search", True)]
