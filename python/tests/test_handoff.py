"""Issue 15 (item 3): the guard's history across a hand-off. In a swarm the agents hand off with
Command(graph=Command.PARENT); LangGraph applies only that Command's update in the parent, so the
guard carries its history there, and each agent is entered with it. Run on real LangGraph with
fake chat models: after the researcher read outside content and handed off, the cashier's refund
(`not_after: untrusted`) is refused, as the export (guarded) and the verifier assume."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph_swarm import create_handoff_tool, create_swarm

import guarded as G
from graphs import call, model
from stalwart_export import Guard, GuardHistory, export_catalogue, export_graph
from test_review_words import verify

BLOCKING = {"QG001", "QG003", "QG011", "QG012", "QG014"}


class SwarmState(MessagesState):
    active_agent: str | None
    stalwart_guard: GuardHistory


TO_CASHIER = create_handoff_tool(agent_name="cashier", description="Hand the customer to the cashier")
TO_RESEARCHER = create_handoff_tool(agent_name="researcher", description="Hand back to research")
WORDS = {
    "read_inbox": {"kind": "read", "reads_outside": True},
    "get_order": {"kind": "read"},
    "refund_order": {"kind": "write", "irreversible": True,
                     "order": {"after": ["get_order"], "not_after": ["untrusted"], "at_most": 1}},
    "transfer_to_cashier": {"kind": "read"},
    "transfer_to_researcher": {"kind": "read"},
}


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


def catalogue():
    return export_catalogue([G.read_inbox, G.get_order, G.refund_order, TO_CASHIER, TO_RESEARCHER], WORDS)


def swarm(guard, researcher_turns, cashier_turns):
    researcher = create_agent(model(*researcher_turns), [G.read_inbox, TO_CASHIER], middleware=[guard],
                              name="researcher")
    cashier = create_agent(model(*cashier_turns), [G.get_order, G.refund_order, TO_RESEARCHER],
                           middleware=[guard], name="cashier")
    return create_swarm([researcher, cashier], default_active_agent="researcher",
                        state_schema=SwarmState).compile(checkpointer=InMemorySaver(), name="shop")


CASHIER = ([call("get_order", {"order_id": "42"})], [call("refund_order", {"order_id": "42", "amount": 5.0})],
           "refunded")


def test_after_a_hand_off_the_next_agent_sees_what_the_first_read(binary, tmp_path):
    guard = Guard(catalogue())
    g = swarm(guard, ([call("read_inbox")], [call("transfer_to_cashier")], "bye"), CASHIER)
    e = export_graph(g)
    kinds = {(name, n["id"]): n["kind"] for name, sub in e["subgraphs"].items() for n in sub["nodes"] if n.get("tools")}
    assert kinds == {("researcher", "tools"): "tools", ("cashier", "tools"): "tools"}
    code, found = verify(binary, tmp_path, e, catalogue())
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)
    # the run: the researcher's read reaches the shared history, so the refund is refused
    out, asked = G.turn(g, G.thread())
    assert asked == []
    assert G.RAN == {"read_inbox": 1, "get_order": 1}
    assert [(d[0], d[1], d[2]) for d in G.decisions(out)] == [
        ("read_inbox", "allow", True), ("transfer_to_cashier", "allow", True),
        ("get_order", "allow", True), ("refund_order", "refuse", False)]
    refused = G.tool_messages(out)[-1]
    assert refused.status == "error" and "order_rule" in refused.content and "content from outside" in refused.content
    assert [x["node"] for x in G.entries(out)] == ["researcher/tools", "researcher/tools", "cashier/tools", "cashier/tools"]


def test_without_outside_content_the_refund_is_asked_and_runs_once_across_turns():
    """The cashier's history holds over the hand-off and over turns (at_most: 1 a session)."""
    guard = Guard(catalogue())
    refund = [call("refund_order", {"order_id": "42", "amount": 5.0}, i=2)]
    g = swarm(guard, ([call("transfer_to_cashier")],),
              ([call("get_order", {"order_id": "42"})], [call("refund_order", {"order_id": "42", "amount": 5.0})],
               "refunded", refund, "no more"))
    t = G.thread()
    out, asked = G.turn(g, t, answers=[G.YES])
    assert [q["name"] for q in asked] == ["refund_order"] and G.RAN == {"get_order": 1, "refund_order": 1}
    out, asked = G.turn(g, t, "once more")
    assert asked == [] and G.RAN["refund_order"] == 1
    assert G.decisions(out)[-1] == ("refund_order", "refuse", False, "order_rule")


def test_a_hand_off_made_with_other_calls_in_one_message_is_not_made():
    """create_agent runs each call as a task of its own; a hand-off ends the subgraph and LangGraph
    drops the other tasks' results and records, so the guard does not pass that hand-off on: the
    model is told to hand off alone, and what the other call read stays in the history."""
    guard = Guard(catalogue())
    both = [call("read_inbox"), call("transfer_to_cashier", i=1)]
    g = swarm(guard, (both, [call("transfer_to_cashier", i=2)], "bye"), CASHIER)
    out, asked = G.turn(g, G.thread())
    msgs = G.tool_messages(out)
    not_made = next(m for m in msgs if m.tool_call_id == "call_transfer_to_cashier_1")
    assert not_made.status == "error" and "was not made" in not_made.content
    assert G.RAN == {"read_inbox": 1, "get_order": 1}
    assert G.decisions(out)[-1] == ("refund_order", "refuse", False, "order_rule")
    assert "content from outside" in msgs[-1].content


def test_guard_tool_node_carries_every_record_of_the_batch_over_the_hand_off():
    """guard.tool_node runs the batch in one task: once every call ran, the hand-off carries all
    their records, so a read made with the hand-off in one message still taints the cashier."""
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import tools_condition

    guard = Guard(catalogue())
    m = model([call("read_inbox"), call("transfer_to_cashier", i=1)], "bye")

    def agent(state: SwarmState):
        return {"messages": [m.invoke(state["messages"])]}

    b = StateGraph(SwarmState)
    b.add_node("agent", agent)
    b.add_node("tools", guard.tool_node([G.read_inbox, TO_CASHIER]))
    b.add_edge(START, "agent")
    b.add_conditional_edges("agent", tools_condition)
    b.add_edge("tools", "agent")
    researcher = b.compile(name="researcher")
    cashier = create_agent(model(*CASHIER), [G.get_order, G.refund_order, TO_RESEARCHER], middleware=[guard],
                           name="cashier")
    g = create_swarm([researcher, cashier], default_active_agent="researcher",
                     state_schema=SwarmState).compile(checkpointer=InMemorySaver(), name="shop")
    e = export_graph(g)
    assert {n["id"]: n["kind"] for n in e["subgraphs"]["researcher"]["nodes"]}["tools"] == "tools"
    out, asked = G.turn(g, G.thread())
    assert asked == [] and G.RAN == {"read_inbox": 1, "get_order": 1}
    assert [(d[0], d[2]) for d in G.decisions(out)] == [
        ("read_inbox", True), ("transfer_to_cashier", True), ("get_order", True), ("refund_order", False)]
    assert "content from outside" in G.tool_messages(out)[-1].content


# ------------------------------------------------------------------ item 8: a guarded supervisor
def supervisor(guard, guarded_handoffs=True):
    """create_supervisor over a researcher and a cashier, each create_agent(middleware=[guard]);
    the supervisor's hand-offs through guard.tool_node (the recipe) or create_supervisor's own."""
    from langgraph.prebuilt.chat_agent_executor import AgentState
    from langgraph_supervisor import create_handoff_tool as supervisor_handoff
    from langgraph_supervisor import create_supervisor

    class TeamState(AgentState):
        stalwart_guard: GuardHistory

    researcher = create_agent(model([call("read_inbox")], "found it"), [G.read_inbox], middleware=[guard],
                              name="researcher")
    cashier = create_agent(model(*CASHIER), [G.get_order, G.refund_order], middleware=[guard], name="cashier")
    boss = model([call("transfer_to_researcher")], [call("transfer_to_cashier", i=1)], "all done")
    tools = guard.tool_node([supervisor_handoff(agent_name="researcher"), supervisor_handoff(agent_name="cashier")]) \
        if guarded_handoffs else None
    return create_supervisor([researcher, cashier], model=boss, tools=tools,
                             state_schema=TeamState).compile(checkpointer=InMemorySaver(), name="team")


def test_a_supervisor_whose_hand_offs_and_workers_pass_the_guard_is_guarded(binary, tmp_path):
    guard = Guard(catalogue())
    g = supervisor(guard)
    e = export_graph(g)
    kinds = {(name, n["id"]): n["kind"] for name, sub in e["subgraphs"].items() for n in sub["nodes"] if n.get("tools")}
    assert kinds == {("supervisor", "tools"): "tools", ("researcher", "tools"): "tools", ("cashier", "tools"): "tools"}
    assert not [w for w in e["warnings"] if "guard" in w], e["warnings"]
    assert e["subgraphs"]["researcher"] and next(n for n in e["nodes"] if n["id"] == "researcher")["langgraph"][
        "subgraph_via"].startswith("langgraph_supervisor's call_agent")
    code, found = verify(binary, tmp_path, e, catalogue())
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)
    out, asked = G.turn(g, G.thread())
    assert asked == [] and G.RAN == {"read_inbox": 1, "get_order": 1}
    assert [(d[0], d[2]) for d in G.decisions(out)] == [
        ("transfer_to_researcher", True), ("read_inbox", True), ("transfer_to_cashier", True),
        ("get_order", True), ("refund_order", False)]
    # the refusal is the cashier's (create_supervisor passes on its last message only)
    assert G.entries(out)[-1]["reasons"] == ["order_rule"] and G.entries(out)[-1]["node"] == "cashier/tools"


def test_create_supervisors_own_hand_offs_are_plain_and_the_warning_gives_the_recipe(binary, tmp_path):
    guard = Guard(catalogue())
    e = export_graph(supervisor(guard, guarded_handoffs=False))
    sup = {n["id"]: n for n in e["subgraphs"]["supervisor"]["nodes"]}
    assert sup["tools"]["kind"] == "tools_plain"
    [w] = [w for w in e["warnings"] if "hand-off tools" in w]
    assert w.startswith("node 'tools' in subgraph 'supervisor' calls hand-off tools (transfer_to_cashier, "
                        "transfer_to_researcher) without the guard")
    assert "tools=guard.tool_node([create_handoff_tool(agent_name=...) for each agent])" in w
