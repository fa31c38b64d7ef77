"""The exports' structure: against the research corpus (../shared/corpus/langgraph) and the
issue's points one by one."""

from typing import Literal, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt

import graphs
from helpers import load_corpus
from stalwart_export import escape_id, export_graph, unescape_id

#: Where this exporter differs from the corpus on purpose.
#: - a step's `tools` (the tools its code calls directly) is new (issue 7: "step ... with the
#:   tools its code calls directly"); the corpus kept them in provenance only;
#: - interrupt() in a node is `inside` (SPEC 2.2), the corpus wrote `before`;
#: - a HumanInTheLoopMiddleware pause with a `when` predicate is left out (it may be skipped),
#:   the corpus wrote it with `guaranteed: false`;
#: - HumanInTheLoopMiddleware reviews each call: `call` on the tool node (SPEC 12.2, issue 15),
#:   where the corpus wrote `before` (on after_model in batched mode).
#: - the approval node `review = interrupt(...)`, then `Command(goto="run_tool")` only when the
#:   answer continues (SPEC 12.5, issue 28): an `inside` pause per tool of run_tool, each with its
#:   answer flag, and the Command edge into run_tool split out, guarded by them.
#: - a node whose every way out is `Command(goto=...)` naming a destination never halts, so it
#:   has no implicit edge to `__end__` (issue 28 item 3); the corpus gave every such node one.
_HALT = "conditional", frozenset({"__end__"})
DIFFERENCES = {
    "interrupt_review_node": {
        "interrupts": ({("human_review_node", "inside", t) for t in ("read_inbox", "get_order", "refund_order")},
                       {("human_review_node", "before", None)}),
        "edges": ({("human_review_node", "command", frozenset({"call_llm"})),
                   ("human_review_node", "command", frozenset({"run_tool"}))},
                  {("human_review_node", "command", frozenset({"call_llm", "run_tool"})),
                   ("human_review_node", *_HALT)}),
    },
    "command_routing": {"edges": (set(), {("decide", *_HALT), ("escalate", *_HALT)})},
    "edge_cases": {"edges": (set(), {("__error_handler__merge", *_HALT)})},
    "hitl_middleware": {"interrupts": ({("tools", "call", "refund_order")},
                                       {("HumanInTheLoopMiddleware.after_model", "before", "refund_order")})},
    "hitl_middleware_per_call": {"interrupts": ({("tools", "call", "get_order")},
                                                {("tools", "before", "refund_order"), ("tools", "before", "get_order")})},
}


def shape(g: dict) -> dict:
    return {
        "nodes": {(n["id"], n["kind"], n.get("graph"), tuple(n.get("tools", ())) if n["kind"] != "step" else ())
                  for n in g["nodes"]},
        "edges": {(e["from"], e["kind"], None if e["destinations"] is None else frozenset(e["destinations"]))
                  for e in g["edges"]},
        "sends": {(s["from"], None if s["destinations"] is None else frozenset(s["destinations"]))
                  for s in g.get("sends", [])},
        "interrupts": {(i["node"], i["when"], i["tool"]) for i in g.get("interrupts", [])},
    }


def norm_tools(s: dict) -> dict:
    # the order of a tool node's tools follows a dict; compare as sets
    s["nodes"] = {(a, b, c, tuple(sorted(d))) for a, b, c, d in s["nodes"]}
    return s


@pytest.mark.parametrize("name", list(graphs.BUILDERS))
def test_matches_the_corpus(name):
    ref = load_corpus(name)
    if ref is None:
        pytest.skip("../shared/corpus/langgraph is not here")
    graph, _, _ = graphs.BUILDERS[name]()
    mine = export_graph(graph)
    assert mine["format"] == "qls-graph/1"
    assert set(mine["subgraphs"]) == set(ref["subgraphs"])
    for sub in [None, *ref["subgraphs"]]:
        a = norm_tools(shape(mine if sub is None else mine["subgraphs"][sub]))
        b = norm_tools(shape(ref if sub is None else ref["subgraphs"][sub]))
        for field in a:
            diff = DIFFERENCES.get(name, {}).get(field) if sub is None else None
            if diff is not None:
                assert a[field] - b[field] == diff[0] and b[field] - a[field] == diff[1], (name, field)
            else:
                assert a[field] == b[field], f"{name} {sub or ''} {field}: mine-only {a[field] - b[field]}, corpus-only {b[field] - a[field]}"


def ex(name):
    graph, _, _ = graphs.BUILDERS[name]()
    return export_graph(graph)


def edge(g, src, kind):
    es = [e for e in g["edges"] if e["from"] == src and e["kind"] == kind and not e.get("langgraph", {}).get("implicit")]
    assert len(es) == 1, es
    return es[0]


def node(g, nid):
    return next(n for n in g["nodes"] if n["id"] == nid)


def test_conditional_edges_path_map_literal_and_unknown():
    g = ex("conditional_edges")
    assert edge(g, "agent", "conditional")["destinations"] == ["tools", "__end__"]  # Literal annotation
    assert edge(g, "audit", "conditional")["destinations"] == ["agent", "__end__"]  # path_map
    assert edge(g, "tools", "conditional")["destinations"] is None  # neither: never guessed
    assert any("route_after_tools" in w for w in g["warnings"])
    assert node(g, "agent")["kind"] == "model" and node(g, "tools")["kind"] == "tools_plain"


def test_command_routing():
    g = ex("command_routing")
    assert edge(g, "decide", "command")["destinations"] == ["lookup", "refund_step"]  # Command[Literal]
    assert edge(g, "lookup", "command")["destinations"] is None  # bare Command
    assert edge(g, "escalate", "command")["destinations"] == ["refund_step", "__end__"]  # destinations=
    assert edge(g, "escalate", "command")["langgraph"]["enforced"] is False
    assert node(g, "lookup")["tools"] == ["get_order"] and node(g, "refund_step")["tools"] == ["refund_order"]


def test_send_and_locations():
    g = ex("send_map_reduce")
    assert g["sends"][0]["from"] == "generate_topics" and g["sends"][0]["destinations"] == ["generate_joke"]
    loc = node(g, "generate_joke")["location"]
    assert loc["file"].endswith("tests/graphs.py") and loc["line"] > 1
    src = open(graphs.__file__).read().splitlines()[loc["line"] - 1]
    assert "def generate_joke" in src


def test_interrupt_styles():
    g = ex("react_agent_interrupt")
    assert {(i["node"], i["when"], i["tool"]) for i in g["interrupts"]} == {
        ("tools", "before", t) for t in ("read_inbox", "get_order", "refund_order")}
    g = ex("interrupt_review_node")
    assert [(i["node"], i["when"], i["tool"], i["answer"]) for i in g["interrupts"]] == [
        ("human_review_node", "inside", t, f"approved.human_review_node.{t}")
        for t in ("read_inbox", "get_order", "refund_order")]
    g = ex("interrupt_in_tool")
    assert [(i["node"], i["when"], i["tool"]) for i in g["interrupts"]] == [("tools", "before", "refund_order")]
    g = ex("hitl_middleware")
    assert [(i["node"], i["when"], i["tool"]) for i in g["interrupts"]] == [("tools", "call", "refund_order")]
    g = ex("hitl_middleware_per_call")
    assert [(i["node"], i["when"], i["tool"]) for i in g["interrupts"]] == [("tools", "call", "get_order")]
    assert any("when" in w and "refund_order" in w for w in g["warnings"])
    g = ex("edge_cases")
    assert [(i["node"], i["when"], i["tool"]) for i in g["interrupts"]] == [("merge", "after", None)]


def test_subgraphs_and_handoffs():
    g = ex("subgraph_parent")
    assert node(g, "worker") == {**node(g, "worker"), "kind": "subgraph", "graph": "worker"}
    assert node(g, "call_summarizer")["graph"] == "summarizer"
    assert [n["id"] for n in g["subgraphs"]["summarizer"]["nodes"]] == ["__start__", "draft", "polish", "__end__"]
    g = ex("swarm")
    assert edge(g["subgraphs"]["alice"], "tools", "command")["destinations"] == ["../bob"]
    assert edge(g["subgraphs"]["bob"], "tools", "command")["destinations"] == ["../alice"]
    g = ex("supervisor")
    assert set(edge(g["subgraphs"]["supervisor"], "tools", "command")["destinations"]) == {
        "../research_expert", "../billing_expert"}


def test_slash_in_a_node_name_is_escaped():
    g = ex("edge_cases")
    assert "report%2Ffinal" in {n["id"] for n in g["nodes"]}
    assert not any("/" in n["id"] for n in g["nodes"])
    assert any("report/final" in w and "%2F" in w for w in g["warnings"])
    assert unescape_id(escape_id("a/b%2Fc")) == "a/b%2Fc"
    assert edge(g, "merge", "conditional")["destinations"] == ["__error_handler__merge"]  # the error handler


class S(TypedDict, total=False):
    x: str


def test_never_guess_a_computed_destination():
    def fan(state: S):
        return [Send(state["x"], {}) for _ in range(2)]

    def go(state: S):
        return Command(goto=state["x"])

    def a(state: S):
        return {}

    g = StateGraph(S)
    g.add_node("go", go)
    g.add_node("a", a)
    g.add_edge(START, "go")
    g.add_conditional_edges("a", fan)
    out = export_graph(g.compile())
    assert edge(out, "go", "command")["destinations"] is None
    assert edge(out, "a", "conditional")["destinations"] is None
    assert [s["destinations"] for s in out["sends"] if s["from"] == "a"] == [None]


def test_conditional_interrupt_in_a_tool_is_not_a_confirmation():
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode

    @tool
    def pay(amount: float) -> str:
        """Pay."""
        if amount > 100:
            interrupt("ok?")
        return "paid"

    g = StateGraph(S)
    g.add_node("tools", ToolNode([pay]))
    g.add_edge(START, "tools")
    out = export_graph(g.compile())
    assert out["interrupts"] == []
    assert any("pay" in w and "condition" in w for w in out["warnings"])


def test_functional_api_is_refused_not_made_up():
    """An @entrypoint has no nodes or edges to read: a made-up opaque step would verify clean,
    so the export refuses it."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.func import entrypoint

    @entrypoint(checkpointer=InMemorySaver())
    def flow(x: str) -> str:
        return x

    with pytest.raises(TypeError, match="is a Pregel, not a StateGraph: its nodes and edges cannot be read"):
        export_graph(flow)


def test_get_graph_loses_routes_the_export_keeps():
    """The reason for this package: LangGraph's own JSON draws the unannotated router as a
    plain edge to __end__, so tools -> agent and tools -> audit vanish."""
    graph, _, _ = graphs.build_conditional_edges()
    own = graph.get_graph().to_json()
    own_edges = {(e["source"], e["target"]) for e in own["edges"]}
    assert ("tools", "agent") not in own_edges and ("tools", "__end__") in own_edges
    assert edge(export_graph(graph), "tools", "conditional")["destinations"] is None


def test_without_provenance():
    g = export_graph(graphs.build_react_agent()[0], provenance=False)
    assert "langgraph" not in str(g.keys()) and all("langgraph" not in n for n in g["nodes"])


def test_export_refuses_what_is_not_a_compiled_graph():
    """A chat model (a Runnable with get_graph) used to export as one opaque step that passed the
    gate; an uncompiled StateGraph was compiled without its compile-time pauses."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from stalwart_export import export_catalogue, graph_tools

    model = FakeListChatModel(responses=["x"])
    for bad, needle in ((model, "got a FakeListChatModel"), (None, "got None"), (3, "got an int")):
        with pytest.raises(TypeError, match="expects a compiled LangGraph graph") as e:
            export_graph(bad)
        assert needle in str(e.value)
    with pytest.raises(TypeError, match="a chat model"):
        graph_tools(model)
    with pytest.raises(TypeError, match="a chat model"):
        export_catalogue(model)
    g = StateGraph(S)
    g.add_node("a", lambda s: {})
    g.add_edge(START, "a")
    for f in (export_graph, graph_tools, export_catalogue):
        with pytest.raises(TypeError, match=r"StateGraph builder: call \.compile\(\)"):
            f(g)
    assert export_graph(g.compile())["format"] == "qls-graph/1"
