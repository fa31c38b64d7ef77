"""Issue 28 item 3: false findings the exporter gave on code teams really write, each shown on a
real LangGraph graph (exported) before it is fixed."""

from typing import Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from stalwart_export import export_graph


class S(TypedDict, total=False):
    n: int


def _triage(state: S) -> Command[Literal["work", "__end__"]]:
    if state.get("n", 0) > 3:
        return Command(goto=END)
    return Command(goto="work", update={"n": state.get("n", 0) + 1})


def _work(state: S):
    return Command(goto="triage")


def _maybe(state: S):
    if state.get("n"):
        return Command(goto="triage")
    return {"n": 1}  # no Command: the branch halts here


def _edges_from(g: dict, node: str) -> list[dict]:
    return [e for e in g["edges"] if e["from"] == node]


def test_a_node_that_only_returns_command_has_no_edge_to_end():
    b = StateGraph(S)
    b.add_node("triage", _triage)
    b.add_node("work", _work)
    b.add_node("maybe", _maybe)
    b.add_edge(START, "maybe")
    g = export_graph(b.compile())
    # every return of `work` is Command(goto="triage"): it never halts, so no edge to __end__
    assert [(e["kind"], e["destinations"]) for e in _edges_from(g, "work")] == [("command", ["triage"])]
    # `triage` ends only by its own Command(goto=END)
    assert [(e["kind"], sorted(e["destinations"])) for e in _edges_from(g, "triage")] == [
        ("command", ["__end__", "work"])]
    # `maybe` can return a plain update: the branch halts there, so the implicit edge stays
    kinds = sorted((e["kind"], tuple(e["destinations"])) for e in _edges_from(g, "maybe"))
    assert kinds == [("command", ("triage",)), ("conditional", ("__end__",))]
