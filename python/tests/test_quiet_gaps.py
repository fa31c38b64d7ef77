"""Issue 27 item 8, quieter gaps the export now names (SPEC 12.1 "Anything the guard cannot see is
not credited"):

* a tool whose code calls `interrupt()` after a call that acts runs that effect again when the run
  resumes (LangGraph reruns the tool from its start): attacked through real LangGraph (the effect
  runs twice), and the export warns, naming the tool, the line and the fix, and credits no pause;
  a tool that asks first and acts after is fine;
* a guarded agent called as another agent's tool starts a new session of its guard at each call:
  attacked through real LangGraph (a read limited to once a session runs twice), and the export
  warns, naming the tool and the inner agent.
Scripted models; the tools count their effects in `guarded.RAN`."""

from __future__ import annotations

import copy
import os
import re

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

import attacks as A
import guarded as G
from graphs import call, model
from stalwart_export import Guard, export_graph

HERE = os.path.basename(__file__)


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


def _line(fn, needle: str) -> int:
    """The line of this file holding `needle` inside `fn`'s source."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if needle in text)


class Mailer:
    """An API client of the application's (its `send` is an effect)."""

    def send(self, to: str, body: str) -> None:
        G._ran("mailer.send", to=to, body=body)


MAILER = Mailer()


# ------------------------------------------------------------------ interrupt() after an effect
@tool
def send_then_ask(to: str, body: str) -> str:
    """Send a mail, then ask whether to archive the thread."""
    MAILER.send(to, body)
    answer = interrupt({"question": f"sent to {to}; archive the thread?"})
    return f"sent; archive: {answer}"


@tool
def ask_then_send(to: str, body: str) -> str:
    """Ask, then send the mail only on a yes."""
    question = f"send {body.strip()!r} to {to}?"
    answer = interrupt({"question": question})
    if answer != "yes":
        return "not sent"
    MAILER.send(to, body)
    return "sent"


@tool
def maybe_notify_then_ask(to: str, urgent: bool) -> str:
    """Notify first when urgent (an effect under a condition), then ask."""
    if urgent:
        MAILER.send(to, "heads up")
    answer = interrupt("go on?")
    return str(answer)


@tool
def ask_each(recipients: list[str]) -> str:
    """Ask about each recipient, sending to each as it goes: the second question follows the first send."""
    for r in recipients:
        answer = interrupt(f"send to {r}?")
        if answer == "yes":
            MAILER.send(r, "hello")
    return "done"


@tool
def either_or(to: str, now: bool) -> str:
    """Send now, or ask: never both in one run."""
    if now:
        MAILER.send(to, "now")
        return "sent"
    else:
        answer = interrupt("send later?")
        return str(answer)


def _agent(*tools, turns):
    return create_agent(model(*turns), list(tools), checkpointer=InMemorySaver(), name="mailer")


def _warnings_about(export: dict, tool_name: str) -> list[str]:
    return [w for w in export["warnings"] if f"tool {tool_name!r}" in w and "interrupt()" in w]


def test_send_then_ask_runs_the_send_twice_and_the_export_says_so():
    """The attack: one call, one answer, two sends. The export names the tool, the line of the
    question and of the effect, the fix, and writes no pause for it (today's exporter read the
    top-level interrupt() as a `before` confirmation of the tool)."""
    app = _agent(send_then_ask, turns=([call("send_then_ask", {"to": "a@shop.example", "body": "hi"})], "ok"))
    cfg = {"configurable": {"thread_id": G.thread()}}
    out = app.invoke({"messages": [HumanMessage(content="mail a")]}, cfg)
    assert out.get("__interrupt__"), "the tool asks"
    assert G.RAN["mailer.send"] == 1
    app.invoke(Command(resume="yes"), cfg)
    assert G.RAN["mailer.send"] == 2, "LangGraph reruns the tool on resume: the mail goes out twice"

    ex = export_graph(app)
    assert [i for i in ex["interrupts"] if i.get("tool") == "send_then_ask"] == []
    (w,) = _warnings_about(ex, "send_then_ask")
    ask_line = _line(send_then_ask.func, "interrupt(")
    send_line = _line(send_then_ask.func, "MAILER.send")
    assert re.search(rf"interrupt\(\) at \S*{re.escape(HERE)}:{ask_line} after MAILER\.send\(\.\.\.\) "
                     rf"\(line {send_line}\)", w), w
    assert "runs the tool again from its start" in w
    assert "fix: ask before the effect" in w and "idempotent" in w
    assert "(node 'tools')" in w


def test_ask_then_send_is_fine():
    """Asking first (a question formatted with pure calls) and acting on the yes: no warning, and
    the question is the tool's `before` confirmation, as before; the run sends once."""
    app = _agent(ask_then_send, turns=([call("ask_then_send", {"to": "a@shop.example", "body": "hi"})], "ok"))
    cfg = {"configurable": {"thread_id": G.thread()}}
    app.invoke({"messages": [HumanMessage(content="mail a")]}, cfg)
    app.invoke(Command(resume="yes"), cfg)
    assert G.RAN["mailer.send"] == 1
    ex = export_graph(app, provenance=False)
    assert _warnings_about(ex, "ask_then_send") == []
    assert ex["interrupts"] == [{"node": "tools", "when": "before", "tool": "ask_then_send"}]


@pytest.mark.parametrize("t, effect", [
    (maybe_notify_then_ask, "MAILER.send"),  # an effect under a condition still runs before the question
    (ask_each, "MAILER.send"),  # a loop: the second question follows the first send
])
def test_effect_before_a_later_question_is_named(t, effect):
    ex = export_graph(_agent(t, turns=("ok",)), provenance=False)
    (w,) = _warnings_about(ex, t.name)
    assert f"after {effect}(...)" in w
    assert f"interrupt() at " in w and f"{HERE}:{_line(t.func, 'interrupt(')}" in w
    assert [i for i in ex["interrupts"] if i.get("tool") == t.name] == []


def test_ask_each_runs_an_earlier_send_again():
    """The loop shape through real LangGraph: two recipients, two yeses, three sends."""
    app = _agent(ask_each, turns=([call("ask_each", {"recipients": ["a", "b"]})], "ok"))
    cfg = {"configurable": {"thread_id": G.thread()}}
    app.invoke({"messages": [HumanMessage(content="mail")]}, cfg)
    app.invoke(Command(resume="yes"), cfg)
    app.invoke(Command(resume="yes"), cfg)
    assert [a["to"] for a in G.ARGS["mailer.send"]] == ["a", "a", "b"]


def test_effect_in_the_other_arm_is_not_before_the_question():
    ex = export_graph(_agent(either_or, turns=("ok",)), provenance=False)
    assert _warnings_about(ex, "either_or") == [
        "tool 'either_or' calls interrupt() under a condition; not written as a confirmation"]


def test_unreadable_tool_body_says_nothing_new():
    """A tool whose code the exporter cannot read (made with exec, no source): nothing new."""
    ns: dict = {}
    exec("def opaque_tool(x: str) -> str:\n    'An opaque tool.'\n    return x\n", {"interrupt": interrupt}, ns)
    t = tool(ns["opaque_tool"])
    ex = export_graph(_agent(t, turns=("ok",)), provenance=False)
    assert not [w for w in ex["warnings"] if "opaque_tool" in w]


def test_hand_built_tool_node_too():
    """The same tool on a hand-built graph's ToolNode and on guard.tool_node: the warning each time."""
    m = model("ok").bind_tools([send_then_ask])

    def agent(state: MessagesState):
        return {"messages": [m.invoke(state["messages"])]}

    for node in (ToolNode([send_then_ask]), Guard(_MAIL_CATALOGUE).tool_node([send_then_ask])):
        sg = StateGraph(G.GuardState)
        sg.add_node("agent", agent)
        sg.add_node("act", node)
        sg.add_edge(START, "agent")
        sg.add_conditional_edges("agent", tools_condition, {"tools": "act", "__end__": "__end__"})
        sg.add_edge("act", "agent")
        ex = export_graph(sg.compile(checkpointer=InMemorySaver()), provenance=False)
        (w,) = _warnings_about(ex, "send_then_ask")
        assert "(node 'act')" in w


_MAIL_CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "send_then_ask": {"kind": "write", "args": {"to": {"type": "string"}, "body": {"type": "string"}}}}}


# ------------------------------------------------------------------ a guarded agent as a tool
ONCE = copy.deepcopy(A.CATALOGUE)
ONCE["tools"]["search"]["at_most"] = 1


def _researcher():
    """A guarded agent: `search` at most once a session. Its script searches at each call."""
    return create_agent(model([call("search", {"q": "x"})], "found", [call("search", {"q": "y"})], "found"),
                        [A.search], middleware=[Guard(ONCE)], name="researcher")


def test_guarded_agent_as_a_tool_restarts_its_session():
    """The attack: an outer agent asks the guarded researcher twice; `search` (at most once a
    session) runs twice, as each call of the tool is a new session of the inner guard. The export
    says so, naming the tool and the inner agent."""
    researcher = _researcher()

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the research agent."""
        out = researcher.invoke({"messages": [HumanMessage(content=question)]})
        return out["messages"][-1].content

    outer = create_agent(model([call("ask_researcher", {"question": "a"}, 0)],
                               [call("ask_researcher", {"question": "b"}, 1)], "done"),
                         [ask_researcher], checkpointer=InMemorySaver(), name="desk")
    outer.invoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": G.thread()}})
    assert G.RAN["search"] == 2, "each call of the tool is a fresh session of the inner guard"

    ex = export_graph(outer, provenance=False)
    (w,) = [x for x in ex["warnings"] if "new session" in x]
    assert w.startswith("tool 'ask_researcher' (node 'tools') runs the agent 'researcher', whose tool calls go "
                        "through the guard: each call of 'ask_researcher' starts a new session of that guard")
    assert "at_most per session" in w and "add_node(..., agent)" in w


def test_agent_as_tool_via_as_tool_and_in_a_step():
    """`researcher.as_tool(...)` (its function is the graph's own invoke), and a step calling such a
    tool directly: the warning each time."""
    researcher = _researcher()
    as_tool = researcher.as_tool(name="research", description="Ask the research agent.")
    outer = create_agent(model("done"), [as_tool], name="desk")
    ex = export_graph(outer, provenance=False)
    assert any(x.startswith("tool 'research' (node 'tools') runs the agent 'researcher'") for x in ex["warnings"])

    @tool
    def ask(question: str) -> str:
        """Ask the research agent."""
        return researcher.invoke({"messages": [HumanMessage(content=question)]})["messages"][-1].content

    def step(state: MessagesState):
        return {"messages": [HumanMessage(content=ask.invoke({"question": "q"}))]}

    sg = StateGraph(MessagesState)
    sg.add_node("step", step)
    sg.add_edge(START, "step")
    ex = export_graph(sg.compile(), provenance=False)
    assert any(x.startswith("tool 'ask' (node 'step') runs the agent 'researcher'") for x in ex["warnings"])


def test_unguarded_inner_agent_is_not_called_guarded():
    """An inner agent without the guard: no warning about its guard's session (there is none)."""
    plain = create_agent(model("found"), [A.search], name="plain_researcher")

    @tool
    def ask_plain(question: str) -> str:
        """Ask the plain agent."""
        return plain.invoke({"messages": [HumanMessage(content=question)]})["messages"][-1].content

    ex = export_graph(create_agent(model("done"), [ask_plain], name="desk"), provenance=False)
    assert not [x for x in ex["warnings"] if "new session" in x]


def test_a_tool_running_the_graph_it_belongs_to_ends():
    """A tool whose code runs the very graph it is a tool of (looked up at export time): reading it
    terminates."""
    holder: dict = {}

    @tool
    def recurse(q: str) -> str:
        """Run the whole agent again."""
        return holder["app"].invoke({"messages": [HumanMessage(content=q)]})["messages"][-1].content

    app = create_agent(model("done"), [recurse], middleware=[Guard(_RECURSE)], name="loop")
    holder["app"] = app
    ex = export_graph(app, provenance=False)
    assert ex["nodes"][1]["id"] == "model"


_RECURSE = {"format": "qls-catalogue/1", "tools": {"recurse": {"kind": "read", "args": {"q": {"type": "string"}}}}}


def test_decorator_calls_are_not_effects_before_the_question():
    """The docs' `add_human_in_the_loop` wrapper: `@create_tool(t.name, ...)` above a function that
    asks first. The decorator's call runs at `def`, not at each run: no warning, the pause is the
    tool's `before` confirmation."""
    from graphs import add_human_in_the_loop, refund_order

    ex = export_graph(_agent(add_human_in_the_loop(refund_order), turns=("ok",)), provenance=False)
    assert _warnings_about(ex, "refund_order") == []
    assert ex["interrupts"] == [{"node": "tools", "when": "before", "tool": "refund_order"}]


class AsyncMailer:
    async def send(self, to: str) -> None:
        G._ran("amailer.send", to=to)


AMAILER = AsyncMailer()


@tool
async def asend_then_ask(to: str) -> str:
    """Send (awaited), then ask."""
    await AMAILER.send(to)
    return str(interrupt("archive?"))


def test_async_tool_sends_twice_and_is_named():
    import asyncio

    app = _agent(asend_then_ask, turns=([call("asend_then_ask", {"to": "a"})], "ok"))
    cfg = {"configurable": {"thread_id": G.thread()}}

    async def go():
        await app.ainvoke({"messages": [HumanMessage(content="mail")]}, cfg)
        await app.ainvoke(Command(resume="yes"), cfg)

    asyncio.run(go())
    assert G.RAN["amailer.send"] == 2
    ex = export_graph(app, provenance=False)
    (w,) = _warnings_about(ex, "asend_then_ask")
    assert "after AMAILER.send(...)" in w


@tool
def log_then_ask(path: str) -> str:
    """Append to a file (a builtin that acts), then ask."""
    open(path, "a").close()
    return str(interrupt("go on?"))


@tool
def format_then_ask(to: str, n: int) -> str:
    """Only pure calls before the question: builtins, json, string methods."""
    import json as _json

    q = _json.dumps({"to": to.lower(), "n": int(n), "len": len(to)})
    answer = interrupt(q)
    return str(answer)


def test_acting_builtins_count_and_pure_ones_do_not():
    ex = export_graph(_agent(log_then_ask, format_then_ask, turns=("ok",)), provenance=False)
    (w,) = _warnings_about(ex, "log_then_ask")
    assert "after open(...)" in w
    assert _warnings_about(ex, "format_then_ask") == []
    assert {"node": "tools", "when": "before", "tool": "format_then_ask"} in ex["interrupts"]


def test_a_step_running_the_tool_itself():
    """A step calling the tool directly: the step runs again from its start on resume, the tool
    with it; the mail goes out twice and the export names the tool on the step."""
    def act(state: MessagesState):
        return {"messages": [HumanMessage(content=send_then_ask.invoke({"to": "a", "body": "hi"}))]}

    sg = StateGraph(MessagesState)
    sg.add_node("act", act)
    sg.add_edge(START, "act")
    app = sg.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": G.thread()}}
    app.invoke({"messages": [HumanMessage(content="go")]}, cfg)
    app.invoke(Command(resume="yes"), cfg)
    assert G.RAN["mailer.send"] == 2
    ex = export_graph(app, provenance=False)
    (w,) = _warnings_about(ex, "send_then_ask")
    assert w.startswith("tool 'send_then_ask' (node 'act') calls interrupt() at ")
