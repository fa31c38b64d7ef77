"""Issue 27 item 3, SPEC 12.1 "An attempt is a call": a tool that fails AFTER its effect, retried by
a node `RetryPolicy`, by a retry middleware placed before the guard (`ToolRetryMiddleware`), or by
`.with_retry()` on the tool a step passes to `guard.call`, never runs its effect more often than its
`at_most` allows, and a write retried is not run again on the first yes. Real LangGraph, scripted
models; the tools count their effects in `EFFECTS` and then raise."""

from __future__ import annotations

import copy

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, RetryPolicy

import attacks as A
import guarded as G
from graphs import model
from stalwart_export import Guard, GuardState

#: One item per effect a tool made before it failed.
EFFECTS: list[str] = []


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()
    EFFECTS.clear()


@tool
def pay(account: str, amount: float) -> str:
    """Pay an account (a write, at most once a session); fails after paying."""
    EFFECTS.append("pay")
    raise RuntimeError("the bank timed out after the payment went through")


@tool
def lookup(q: str) -> str:
    """Look up a record (a read, at most once a session); fails after its effect."""
    EFFECTS.append("lookup")
    raise RuntimeError("the lookup timed out")


TOOLS = A.TOOLS + [pay, lookup]
CATALOGUE = copy.deepcopy(A.CATALOGUE)
CATALOGUE["tools"].update({
    "pay": {"kind": "write", "at_most": 1, "args": {"account": {"type": "string"}, "amount": {"type": "number"}}},
    "lookup": {"kind": "read", "at_most": 1, "args": {"q": {"type": "string"}}},
})
RETRY = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=RuntimeError)
PAY = [A.tc("pay", {"account": "a", "amount": 5.0}, "p1")]
LOOKUP = [A.tc("lookup", {"q": "x"}, "l1")]


def guard() -> Guard:
    return Guard(CATALOGUE)


def run(app, limit: int = 8):
    """Run a turn, answering every question yes, until it ends or fails. (questions, the error)"""
    cfg = {"configurable": {"thread_id": G.thread()}, "recursion_limit": 30}
    asked, err = 0, None
    LAST.clear()
    try:
        out = app.invoke({"messages": [HumanMessage(content="go")]}, cfg)
        while out.get("__interrupt__") and asked < limit:
            asked += len(out["__interrupt__"])
            out = app.invoke(Command(resume=G.YES), cfg)
    except RuntimeError as e:  # the tool's own failure, once the retries are spent or refused
        err = e
    LAST.update(app.get_state(cfg).values)
    return asked, err


#: The state the last `run` ended with.
LAST: dict = {}


def _loop(tools_node, turns, retry=RETRY):
    m = model(*turns).bind_tools(TOOLS)

    def agent_node(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    sg = StateGraph(GuardState)
    sg.add_node("agent", agent_node)
    sg.add_node("tools", tools_node, retry_policy=retry)
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    return sg.compile(checkpointer=InMemorySaver())


def _step(g: Guard, turns, wrap=lambda t: t, retry=RETRY):
    by_name = {t.name: t for t in TOOLS}

    def run_calls(state: GuardState):
        out = []
        for c in state["messages"][-1].tool_calls:
            r = g.call(wrap(by_name[c["name"]]), c["args"], state)
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c["id"]))
        return {"messages": out}

    return _loop(run_calls, turns, retry)


def node_retry(place: str, g: Guard, turns):
    if place == "tool_node":
        return _loop(g.tool_node(TOOLS), turns)
    if place == "wrapper":
        return _loop(ToolNode(TOOLS, wrap_tool_call=g.wrap_tool_call), turns)
    return _step(g, turns)


def retry_middleware(g: Guard, turns, on_failure="continue"):
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolRetryMiddleware

    mw = ToolRetryMiddleware(max_retries=2, initial_delay=0.0, backoff_factor=0.0, jitter=False, on_failure=on_failure)
    return create_agent(model(*turns), TOOLS, middleware=[mw, g], checkpointer=InMemorySaver(), name="agent")


@pytest.mark.parametrize("place", ["tool_node", "wrapper", "step"])
@pytest.mark.parametrize("calls,tool", [(PAY, "pay"), (LOOKUP, "lookup")])
def test_a_node_retry_policy_never_runs_a_limited_call_past_at_most(place, calls, tool):
    g = guard()
    asked, err = run(node_retry(place, g, [calls, "done"]))
    assert EFFECTS == [tool], f"{place}: {EFFECTS} after {asked} question(s)"
    assert asked == (1 if tool == "pay" else 0)


@pytest.mark.parametrize("on_failure", ["continue", "error"])
@pytest.mark.parametrize("calls,tool", [(PAY, "pay"), (LOOKUP, "lookup")])
def test_a_retry_middleware_before_the_guard_never_runs_a_limited_call_past_at_most(on_failure, calls, tool):
    g = guard()
    asked, err = run(retry_middleware(g, [calls, "done"], on_failure))
    assert EFFECTS == [tool], f"{EFFECTS} after {asked} question(s)"
    assert asked == (1 if tool == "pay" else 0)


@pytest.mark.parametrize("calls,tool", [(PAY, "pay"), (LOOKUP, "lookup")])
def test_with_retry_on_the_tool_never_runs_a_limited_call_past_at_most(calls, tool):
    g = guard()
    wrap = lambda t: t.with_retry(stop_after_attempt=3, wait_exponential_jitter=False)  # noqa: E731
    asked, err = run(_step(g, [calls, "done"], wrap=wrap, retry=None))
    assert len(EFFECTS) <= 1, f"{EFFECTS} after {asked} question(s)"


def test_a_read_without_a_limit_is_still_retried():
    """Retries stay useful where they are safe: a read with no limit and no effect counted."""
    g = guard()
    n = []

    @tool
    def flaky(q: str) -> str:
        """A read that fails the first time."""
        n.append(q)
        if len(n) == 1:
            raise RuntimeError("first try fails")
        return "ok"

    cat = copy.deepcopy(CATALOGUE)
    cat["tools"]["flaky"] = {"kind": "read", "args": {"q": {"type": "string"}}}
    g = Guard(cat)
    m = model([A.tc("flaky", {"q": "x"}, "f1")], "done").bind_tools([flaky])

    def agent_node(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    sg = StateGraph(GuardState)
    sg.add_node("agent", agent_node)
    sg.add_node("tools", g.tool_node([flaky]), retry_policy=RETRY)
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    asked, err = run(sg.compile(checkpointer=InMemorySaver()))
    assert err is None and n == ["x", "x"]


PAY_AGAIN = [A.tc("pay", {"account": "b", "amount": 7.0}, "p2")]


@pytest.mark.parametrize("place", ["tool_node", "wrapper", "step", "middleware"])
def test_the_history_counts_the_attempt_so_a_later_call_is_refused_by_at_most(place):
    """The retry refused, the run goes on: the attempt is in the history (ran), so a second `pay`
    (a new call, a new id) is refused by `at_most: 1` without a question."""
    g = guard()
    turns = [PAY, PAY_AGAIN, "done"]
    app = retry_middleware(g, turns) if place == "middleware" else node_retry(place, g, turns)
    asked, err = run(app)
    assert err is None and EFFECTS == ["pay"] and asked == 1
    got = [(e["tool"], e["ran"]) for e in G.entries(LAST)]
    assert got == [("pay", True), ("pay", False)], got
    assert G.entries(LAST)[-1]["reasons"] == ["order_rule"]
    from stalwart_export.guard.history import verify

    assert verify(LAST["stalwart_guard"], g.chain).problem is None


def test_a_step_run_again_keeps_the_records_of_its_earlier_calls():
    """A step calls `search` (ran) then `pay` (fails after paying); RetryPolicy runs the step again
    over the same state dict, whose history kept search's record in place while LangGraph dropped
    the write: the guard writes it again, so every run of a tool is in the history."""
    g = guard()
    calls = [A.tc("search", {"q": "a"}, "s1"), A.tc("pay", {"account": "a", "amount": 5.0}, "p1")]
    asked, err = run(_step(g, [calls, "done"]))
    assert EFFECTS == ["pay"]
    ran = [e["tool"] for e in G.entries(LAST) if e["ran"]]
    assert ran.count("search") == G.RAN["search"] and ran.count("pay") == 1, (ran, dict(G.RAN))


@pytest.mark.parametrize("shape", ["tool_node", "wrapper", "middleware"])
def test_async_retries_are_refused_too(shape):
    """The same attempts through `ainvoke` (the guard's async paths)."""
    import asyncio

    g = guard()
    turns = [PAY, "done"]
    app = retry_middleware(g, turns) if shape == "middleware" else node_retry(shape, g, turns)
    cfg = {"configurable": {"thread_id": G.thread()}, "recursion_limit": 30}

    async def go():
        out = await app.ainvoke({"messages": [HumanMessage(content="go")]}, cfg)
        asked = 0
        while out.get("__interrupt__") and asked < 8:
            asked += len(out["__interrupt__"])
            out = await app.ainvoke(Command(resume=G.YES), cfg)
        return asked

    try:
        asked = asyncio.run(go())
    except RuntimeError:
        asked = None
    assert EFFECTS == ["pay"], (shape, EFFECTS, asked)
