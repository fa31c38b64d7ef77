"""Issue 15 (items 1, 2): a node's `with_fallbacks` runs its fallbacks when the node raises, and a
pause is an exception (GraphInterrupt, an Exception via GraphBubbleUp). The export reads every
runnable a `with_fallbacks` can run, and credits no pause a wrapper would swallow; each agent is
run on real LangGraph with fake chat models, and what ran is asserted with the export and the
verifier's findings."""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

import guarded as G
from graphs import call, model
from stalwart_export import Guard, GuardState, export_graph
from test_review_words import verify as verify_with

BLOCKING = {"QG001", "QG003", "QG011", "QG012", "QG014"}


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


@tool
def flaky(order_id: str) -> str:
    """Look an order up in a service that fails."""
    G._ran("flaky", order_id=order_id)
    raise ToolException("the order service is down")


@tool
def wire_money(iban: str, amount: float) -> str:
    """Wire money (asks the person first, in its own code)."""
    answer = interrupt({"question": f"wire {amount} to {iban}?"})
    if answer != "yes":
        return "cancelled"
    G._ran("wire_money", iban=iban, amount=amount)
    return "wired"


TOOLS = G.TOOLS + [flaky]
CATALOGUE = {"format": "qls-catalogue/1", "tools": dict(
    G.CATALOGUE["tools"], flaky={"kind": "read", "args": {"order_id": {"type": "string"}}},
    wire_money={"kind": "write", "irreversible": True, 
                "args": {"iban": {"type": "string"}, "amount": {"type": "number"}}})}


def handle_tool_error(state) -> dict:
    """The customer-support tutorial's fallback: the error, as a tool message for each call."""
    error = state.get("error")
    return {"messages": [ToolMessage(content=f"Error: {error!r}\n please fix your mistakes.", tool_call_id=c["id"])
                         for c in state["messages"][-1].tool_calls]}


def graph(tools_node, *turns, tools=TOOLS):
    """The tutorial's hand-built agent, its tool node `tools_node`."""
    m = model(*turns).bind_tools(tools)

    def assistant(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    b = StateGraph(GuardState)
    b.add_node("assistant", assistant)
    b.add_node("tools", tools_node)
    b.add_edge(START, "assistant")
    b.add_conditional_edges("assistant", tools_condition)
    b.add_edge("tools", "assistant")
    return b.compile(checkpointer=InMemorySaver(), name="fallbacks")


LOOKUP_THEN_REFUND = ([call("get_order", {"order_id": "42"})],
                      [call("refund_order", {"order_id": "42", "amount": 5.0})], "done")


def verify(binary, tmp_path, export):
    """`stalwart verify` of `export` with CATALOGUE: (exit, {(rule, subject, node)})."""
    return verify_with(binary, tmp_path, export, CATALOGUE)


def tools_node(export):
    return next(n for n in export["nodes"] if n["id"] == "tools")


# ------------------------------------------------------------------ item 1: a plain fallback
def test_a_plain_tool_node_among_the_fallbacks_makes_the_node_plain(binary, tmp_path):
    """guard.tool_node(T).with_fallbacks([ToolNode(T)]): the guard's pause raises GraphInterrupt,
    with_fallbacks catches it and the plain ToolNode runs the refund unconfirmed. The export says
    tools_plain, with the tools of both, and the warning names the wrapper."""
    guard = Guard(CATALOGUE)
    g = graph(guard.tool_node(TOOLS).with_fallbacks([ToolNode(G.TOOLS + [wire_money])]), *LOOKUP_THEN_REFUND)
    e = export_graph(g)
    node = tools_node(e)
    assert node["kind"] == "tools_plain"
    assert node["tools"] == [t.name for t in TOOLS] + ["wire_money"]
    assert node["langgraph"]["fallback_unguarded"] == [f"ToolNode({[t.name for t in G.TOOLS] + ['wire_money']})"]
    [w] = [w for w in e["warnings"] if "is not guarded" in w]
    assert "with_fallbacks([ToolNode([" in w and "exceptions_to_handle=(Exception,)" in w and "runs unconfirmed" in w
    code, found = verify(binary, tmp_path, e)
    assert code == 1 and {("QG001", "refund_order", "tools"), ("QG001", "wire_money", "tools")} <= found
    # what the export says is what runs: the refund ran and nobody was asked
    out, asked = G.turn(g, G.thread())
    assert asked == [] and G.RAN == {"get_order": 1, "refund_order": 1}


def test_fallbacks_that_are_guarded_or_run_no_tool_keep_the_node_guarded(binary, tmp_path):
    """A guarded node whose fallbacks run no tool (the tutorial's handler), handling only the
    errors its tools raise: guarded; the pause reaches the person, a tool's error the handler."""
    guard = Guard(CATALOGUE)
    node = guard.tool_node(TOOLS).with_fallbacks([RunnableLambda(handle_tool_error)],
                                                 exceptions_to_handle=(ToolException,), exception_key="error")
    g = graph(node, [call("flaky", {"order_id": "42"})], *LOOKUP_THEN_REFUND)
    e = export_graph(g)
    assert tools_node(e)["kind"] == "tools" and tools_node(e)["tools"] == [t.name for t in TOOLS]
    assert not [w for w in e["warnings"] if "fallback" in w or "GraphInterrupt" in w], e["warnings"]
    code, found = verify(binary, tmp_path, e)
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)
    out, asked = G.turn(g, G.thread(), answers=[G.YES])
    assert [q["name"] for q in asked] == ["refund_order"]
    assert G.RAN == {"flaky": 1, "get_order": 1, "refund_order": 1}
    assert "the order service is down" in G.tool_messages(out)[0].content
    assert G.decisions(out)[-1] == ("refund_order", "confirm", True, "write")


# ------------------------------------------------------------------ item 2: a pause swallowed
def test_the_tutorials_fallback_swallows_the_guards_pause(binary, tmp_path):
    """ToolNode(...).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error")
    around the guard's node: the confirmation never reaches the person, the model receives the
    interrupt as an error. Not a pause: the node is exported tools_plain, with the fix."""
    guard = Guard(CATALOGUE)
    g = graph(guard.tool_node(TOOLS).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error"),
              *LOOKUP_THEN_REFUND)
    e = export_graph(g)
    node = tools_node(e)
    assert node["kind"] == "tools_plain" and node["langgraph"]["pause_swallowed_by"] == (
        "with_fallbacks([test_fallbacks.handle_tool_error], exceptions_to_handle=(Exception,))")
    [w] = [w for w in e["warnings"] if "GraphInterrupt" in w]
    assert "node 'tools' is not guarded" in w and "never reaches the person" in w
    assert "exceptions_to_handle=(ToolException,)" in w
    code, found = verify(binary, tmp_path, e)
    assert code == 1 and ("QG001", "refund_order", "tools") in found
    out, asked = G.turn(g, G.thread())
    assert asked == [] and G.RAN == {"get_order": 1}
    swallowed = G.tool_messages(out)[-1].content
    assert swallowed.startswith("Error: GraphInterrupt(") and "tool_approval" in swallowed


def test_an_interrupt_in_a_tools_code_under_a_catching_fallback_is_no_confirmation(binary, tmp_path):
    """interrupt() at the top of a tool is a `before` pause, unless the tool node's fallback
    catches it: then no pause is written (a wire after outside content is unconfirmed, QG011), and
    the run never asks."""
    caught = ToolNode([G.read_inbox, wire_money]).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error")
    turns = ([call("wire_money", {"iban": "DE00", "amount": 5.0})], "done")
    g = graph(caught, *turns, tools=[wire_money])
    e = export_graph(g)
    assert e["interrupts"] == []
    [w] = e["warnings"]
    assert w.startswith("node 'tools': interrupt() in tool 'wire_money' never pauses the run: its "
                        "with_fallbacks([test_fallbacks.handle_tool_error], exceptions_to_handle=(Exception,))")
    code, found = verify(binary, tmp_path, e)
    assert code == 1 and ("QG011", "wire_money", "tools") in found
    out, asked = G.turn(g, G.thread())
    assert asked == [] and "GraphInterrupt" in G.tool_messages(out)[-1].content
    # handling only ToolException, the pause is one: written `before`, and the run asks
    kept = ToolNode([G.read_inbox, wire_money]).with_fallbacks([RunnableLambda(handle_tool_error)],
                                                 exceptions_to_handle=(ToolException,), exception_key="error")
    g2 = graph(kept, *turns, tools=[wire_money])
    e2 = export_graph(g2)
    assert [(i["node"], i["when"], i["tool"]) for i in e2["interrupts"]] == [("tools", "before", "wire_money")]
    assert e2["warnings"] == []
    code, found = verify(binary, tmp_path, e2)
    assert ("QG011", "wire_money", "tools") not in found
    out, asked = G.turn(g2, G.thread(), answers=["yes"])
    assert asked == [{"question": "wire 5.0 to DE00?"}] and G.RAN == {"wire_money": 1}
