"""A correct agent passes the gate (issue 15.2): the corpus's prebuilt agents and hand-built graphs,
each exported and verified by the Rust `stalwart verify` with the guard (gate passes: no QG001,
QG011, QG012, QG014) and without it (gate fails: QG001); and the guard's trace (`--traces`) of a
run that kept to the export raises no QG016, while a run of a graph changed after export does."""

import json
import subprocess
from typing import TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.prebuilt.chat_agent_executor import AgentState as ReactState

import graphs
import guarded as G
from graphs import TOOLS, call, get_order, model, refund_order, script
from stalwart_export import Guard, GuardHistory, GuardState, export_catalogue, export_graph

BLOCKING = {"QG001", "QG003", "QG011", "QG012", "QG014"}


class GuardedReactState(ReactState):
    stalwart_guard: GuardHistory


class GuardedSwarmState(MessagesState):
    active_agent: str | None
    stalwart_guard: GuardHistory


def verify(binary, tmp_path, graph, words=None, traces=None, export=None):
    """Export `graph` and its catalogue, run `stalwart verify --format json`; (exit, findings, export)."""
    export = export or export_graph(graph)
    have = {t for n in _all_nodes(export) for t in n.get("tools", [])}
    cat = export_catalogue(graph, {k: v for k, v in (words or graphs.WORDS).items() if k in have})
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export, indent=1))
    cp.write_text(json.dumps(cat, indent=1))
    cmd = [binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"]
    if traces is not None:
        cmd += ["--traces", str(traces)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), f"stalwart could not run (exit {p.returncode}):\n{p.stderr}"
    return p.returncode, {(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"]}, export


def _all_nodes(export):
    yield from export["nodes"]
    for g in export["subgraphs"].values():
        yield from g.get("nodes", [])


def catalogue():
    return export_catalogue(TOOLS, graphs.WORDS)


# ------------------------------------------------------------------ the corpus's prebuilt agents


def build(name, guard):
    """The corpus graph `name`, guarded by `guard` (None: as the corpus builds it)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.prebuilt import create_react_agent

    if guard is None:
        return graphs.BUILDERS[name]()[0]
    if name == "create_agent":
        return create_agent(script(), TOOLS, middleware=[guard], name=name)
    if name == "react_agent":
        return create_react_agent(script(), guard.tool_node(TOOLS), state_schema=GuardedReactState, name=name)
    if name == "react_agent_interrupt":
        return create_react_agent(script(), guard.tool_node(TOOLS), state_schema=GuardedReactState,
                                  interrupt_before=["tools"], checkpointer=InMemorySaver(), name=name)
    if name == "hitl_middleware":
        mw = HumanInTheLoopMiddleware(interrupt_on={"refund_order": True, "get_order": False})
        return create_agent(script(), TOOLS, middleware=[mw, guard], checkpointer=InMemorySaver(), name=name)
    if name == "swarm":
        from langgraph_swarm import create_handoff_tool, create_swarm

        hand = dict(description="Transfer")
        alice = create_agent(model([call("read_inbox")], [call("transfer_to_bob", i=1)]),
                             [G.read_inbox, create_handoff_tool(agent_name="bob", **hand)], middleware=[guard], name="alice")
        bob = create_agent(model([call("get_order", {"order_id": "42"})], "done"),
                           [graphs.get_order, graphs.refund_order, create_handoff_tool(agent_name="alice", **hand)],
                           middleware=[guard], name="bob")
        return create_swarm([alice, bob], default_active_agent="alice",
                            state_schema=GuardedSwarmState).compile(checkpointer=InMemorySaver(), name=name)
    raise KeyError(name)


PREBUILT = ["create_agent", "react_agent", "react_agent_interrupt", "hitl_middleware", "swarm"]


def swarm_catalogue():
    from langgraph_swarm import create_handoff_tool

    tools = TOOLS + [create_handoff_tool(agent_name="bob", description="Transfer"),
                     create_handoff_tool(agent_name="alice", description="Transfer")]
    return export_catalogue(tools, graphs.WORDS)


@pytest.mark.parametrize("name", PREBUILT)
def test_a_prebuilt_agent_passes_the_gate_with_the_guard_and_fails_without(name, binary, tmp_path):
    guard = Guard(swarm_catalogue() if name == "swarm" else catalogue())
    graph = build(name, guard)
    exit_with, found, export = verify(binary, tmp_path, graph)
    kinds = {n["id"]: n["kind"] for n in _all_nodes(export) if n.get("tools")}
    assert "tools_plain" not in kinds.values(), kinds
    assert not {f for f in found if f[0] in BLOCKING}, sorted(found)
    assert exit_with == 0, sorted(found)
    exit_without, without, _ = verify(binary, tmp_path, build(name, None))
    assert exit_without == 1 and any(f[0] == "QG001" for f in without), sorted(without)


def test_a_guard_that_is_not_the_innermost_wrapper_does_not_guard(binary, tmp_path):
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    guard = Guard(catalogue())
    mw = HumanInTheLoopMiddleware(interrupt_on={"refund_order": True})
    graph = create_agent(script(), TOOLS, middleware=[guard, mw], checkpointer=InMemorySaver(), name="outer")
    code, found, export = verify(binary, tmp_path, graph)
    assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools_plain"
    assert any("not the innermost tool-call wrapper" in w and "HumanInTheLoopMiddleware" in w for w in export["warnings"])
    assert code == 1 and ("QG001", "get_order", "tools") in found


def test_a_guarded_subgraph_whose_parent_drops_the_history_is_not_guarded(binary, tmp_path):
    """The worker subgraph keeps the guard's history only while it runs, unless the parent's state
    has the key too: exported unguarded (QG001) with the parent's MessagesState, guarded with
    GuardState."""
    from langgraph.prebuilt import create_react_agent

    def parent(state_schema):
        guard = Guard(catalogue())
        worker = create_react_agent(script(), guard.tool_node(TOOLS), state_schema=GuardedReactState, name="worker")
        g = StateGraph(state_schema)
        g.add_node("intake", lambda s: {"messages": [HumanMessage(content="look at the inbox")]})
        g.add_node("worker", worker)
        g.add_edge(START, "intake")
        g.add_edge("intake", "worker")
        g.add_edge("worker", END)
        return g.compile(name="parent")

    code, found, export = verify(binary, tmp_path, parent(MessagesState))
    assert export["subgraphs"]["worker"]["nodes"][2]["kind"] == "tools_plain"
    assert any("does not outlive this subgraph" in w for w in export["warnings"])
    assert code == 1 and ("QG001", "refund_order", "worker/tools") in found
    code, found, export = verify(binary, tmp_path, parent(GuardState))
    assert not {f for f in found if f[0] in BLOCKING} and code == 0, sorted(found)


# ------------------------------------------------------------------ hand-built graphs


def hand_built(guard):
    m = script().bind_tools(TOOLS)

    def agent(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    g = StateGraph(GuardState)
    g.add_node("agent", agent)
    g.add_node("tools", guard.tool_node(TOOLS) if guard else ToolNode(TOOLS))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=InMemorySaver(), name="hand_built")


def test_a_hand_built_graph_passes_with_guard_tool_node_and_fails_with_a_plain_one(binary, tmp_path):
    code, found, export = verify(binary, tmp_path, hand_built(Guard(catalogue())))
    assert {n["id"]: n["kind"] for n in export["nodes"]}["tools"] == "tools"
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)
    code, found, _ = verify(binary, tmp_path, hand_built(None))
    assert code == 1 and {("QG001", t, "tools") for t in ("get_order", "read_inbox", "refund_order")} <= found
    assert ("QG011", "refund_order", "tools") in found


class OrderState(TypedDict, total=False):
    order_id: str
    amount: float
    log: list
    stalwart_guard: GuardHistory


def steps_graph(guard):
    """A graph whose steps call tools themselves: every call through guard.call, or directly."""
    if guard is not None:
        def lookup(state: OrderState):
            guard.call(get_order, {"order_id": state.get("order_id", "42")}, state)
            return {"log": ["lookup"]}

        def refund_step(state: OrderState):
            guard.call(refund_order, {"order_id": state.get("order_id", "42"), "amount": state.get("amount", 30.0)},
                       state)
            return {"log": ["refund"]}
    else:
        def lookup(state: OrderState):
            get_order.invoke({"order_id": state.get("order_id", "42")})
            return {"log": ["lookup"]}

        def refund_step(state: OrderState):
            refund_order.invoke({"order_id": state.get("order_id", "42"), "amount": state.get("amount", 30.0)})
            return {"log": ["refund"]}

    g = StateGraph(OrderState)
    g.add_node("lookup", lookup)
    g.add_node("refund_step", refund_step)
    g.add_edge(START, "lookup")
    g.add_edge("lookup", "refund_step")
    g.add_edge("refund_step", END)
    return g.compile(checkpointer=InMemorySaver(), name="steps")


def test_steps_whose_every_call_goes_through_guard_call_are_guarded(binary, tmp_path):
    code, found, export = verify(binary, tmp_path, steps_graph(Guard(catalogue())))
    kinds = {n["id"]: (n["kind"], tuple(n.get("tools", ()))) for n in export["nodes"]}
    assert kinds["lookup"] == ("tools", ("get_order",)) and kinds["refund_step"] == ("tools", ("refund_order",))
    assert code == 0 and not {f for f in found if f[0] in BLOCKING}, sorted(found)
    code, found, _ = verify(binary, tmp_path, steps_graph(None))
    assert code == 1 and {("QG001", "get_order", "lookup"), ("QG001", "refund_order", "refund_step")} <= found


def test_a_step_that_also_calls_a_tool_directly_is_not_guarded():
    guard = Guard(catalogue())

    def mixed(state: OrderState):
        guard.call(get_order, {"order_id": "1"}, state)
        refund_order.invoke({"order_id": "1", "amount": 1.0})
        return {}

    g = StateGraph(OrderState)
    g.add_node("mixed", mixed)
    g.add_edge(START, "mixed")
    g.add_edge("mixed", END)
    export = export_graph(g.compile())
    assert {n["id"]: n["kind"] for n in export["nodes"]}["mixed"] == "step"
    assert any("outside guard.call" in w and "refund_order" in w for w in export["warnings"])


def test_a_guard_reading_outside_input_makes_the_export_say_so():
    from langchain.agents import create_agent

    export = export_graph(create_agent(script(), TOOLS, middleware=[Guard(catalogue(), input_reads_outside=True)]))
    assert export["input"] == {"reads_outside": True}


def test_the_catalogue_of_a_guarded_tool_is_the_guards(tmp_path):
    from langchain.agents import create_agent

    cat = catalogue()
    cat["tools"]["refund_order"]["order"] = {"after": ["get_order"]}
    guard = Guard(cat)
    graph = create_agent(script(), TOOLS, middleware=[guard])
    out, warns = export_catalogue(graph, {"refund_order": {"kind": "write", "irreversible": True}}, with_warnings=True)
    assert out["tools"]["refund_order"]["order"] == {"after": ["get_order"]}
    assert "irreversible" not in out["tools"]["refund_order"]
    assert any("['irreversible']" in w and "the guard's entry is written" in w for w in warns)


# ------------------------------------------------------------------ traces (QG016)


def run_turns(graph, thread, answers):
    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": 60}
    out = graph.invoke({"messages": [HumanMessage(content="handle the inbox")]}, cfg)
    answers = list(answers)
    while out.get("__interrupt__"):
        out = graph.invoke(graphs.Command(resume=answers.pop(0)), cfg)
    return out


def test_the_trace_of_a_run_that_kept_to_the_export_raises_no_qg016(binary, tmp_path):
    from langchain.agents import create_agent

    trace = tmp_path / "runs.jsonl"
    guard = Guard(catalogue(), trace=str(trace))
    app = guard.traced(create_agent(script(), TOOLS, middleware=[guard], checkpointer=InMemorySaver(), name="agent"))
    run_turns(app, "t-1", [G.YES])
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["run"] == "t-1#1"
    steps = lines[0]["steps"]
    assert [s["node"] for s in steps if "tool" not in s and "call" not in s] == [
        "model", "tools", "model", "tools", "model", "tools", "model", "__end__"]
    calls = [(s["tool"], s["decision"], s["answer"]) for s in steps if "tool" in s]
    assert calls == [("read_inbox", "allow", None), ("get_order", "allow", None), ("refund_order", "confirm", "approve")]
    code, found, _ = verify(binary, tmp_path, app, traces=trace)
    assert not {f for f in found if f[0] == "QG016"} and code == 0, sorted(found)


def test_the_trace_of_a_graph_changed_after_export_raises_qg016(binary, tmp_path):
    """The export is of the hand-built graph; the graph that ran has a `shortcut` node between
    the model and the tools, which the export does not have; its refund is a write after it."""
    trace = tmp_path / "runs.jsonl"
    guard = Guard(catalogue(), trace=str(trace))
    exported = export_graph(hand_built(Guard(catalogue())))

    m = script().bind_tools(TOOLS)
    g = StateGraph(GuardState)
    g.add_node("agent", lambda s: {"messages": [m.invoke(s["messages"])]})
    g.add_node("shortcut", lambda s: {})
    g.add_node("tools", guard.tool_node(TOOLS))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, {"tools": "shortcut", END: END})
    g.add_edge("shortcut", "tools")
    g.add_edge("tools", "agent")
    changed = guard.traced(g.compile(checkpointer=InMemorySaver(), name="hand_built"))
    run_turns(changed, "t-2", [G.YES])
    assert '"node": "shortcut"' in trace.read_text()
    code, found, _ = verify(binary, tmp_path, hand_built(Guard(catalogue())), traces=trace, export=exported)
    assert ("QG016", "refund_order", "tools") in found and code == 1, sorted(found)
