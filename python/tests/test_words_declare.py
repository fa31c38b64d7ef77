"""SPEC 12.5: the words clear what they declare. Each word of a node (`calls`, `reviews`, `pure`,
`model`) clears the node's `opaque` entries of what it declares, and the node's `declared` says
the words declared it; a word never hides what the exporter read (`pure` on a node that calls a
tool is an error), and a word naming a node the graph lacks is an error. Each shape is a real
LangGraph graph, exported, and verified by the Rust binary: the bare export fails the gate
(QG024), the declared one passes it."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Literal

import pytest
from langchain_core.runnables import Runnable
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

import test_pauses as P
from graphs import call, model
from helpers import REPO
from test_pauses import read_inbox
from stalwart_export import Guard, GuardHistory, export_graph
from stalwart_export._words import WordsError

BLOCKING = {"QG001", "QG003", "QG011", "QG012", "QG014", "QG024"}


class State(MessagesState):
    stalwart_guard: GuardHistory


def guard() -> Guard:
    return Guard(P.CATALOGUE)


def guarded_approval(approve: Any) -> Any:
    """test_pauses' agent -> approve -> tools graph, its tool node the guard's."""
    tools = [P.read_inbox, P.book_hotel]
    m = model([call("read_inbox")], [call("book_hotel", {"city": "Paris"})], "done").bind_tools(tools)

    def agent(state: State):
        return {"messages": [m.invoke(state["messages"])]}

    def route(state: State) -> Literal["approve", "__end__"]:
        return "approve" if state["messages"][-1].tool_calls else END

    b = StateGraph(State)
    b.add_node("agent", agent)
    b.add_node("approve", approve, destinations=("tools", "agent"))
    b.add_node("tools", guard().tool_node(tools))
    b.add_edge(START, "agent")
    b.add_conditional_edges("agent", route)
    b.add_edge("tools", "agent")
    return b.compile(checkpointer=InMemorySaver(), name="guarded_approval")


def export(graph: Any, words: Any = None) -> dict:
    return export_graph(graph, provenance=False, base=str(REPO), words=words)


def verify(binary: str, tmp_path: Any, e: dict) -> tuple[int, set[tuple], str]:
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(e))
    cp.write_text(json.dumps(P.CATALOGUE))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    findings = json.loads(p.stdout)["findings"]
    text = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp)],
                          capture_output=True, text=True, timeout=300, cwd=REPO).stdout
    return p.returncode, {(f["rule"], f["subject"], f["node"]) for f in findings if f["blocks"]}, text


def node_of(e: dict, name: str) -> dict:
    return next(n for n in e["nodes"] if n["id"] == name)


def test_reviews_clear_a_pause_in_a_helper(binary, tmp_path):
    """The pause four helpers deep (test_pauses' `deep` shape), the tools guarded: bare, the
    opaque pause fails the gate; with `reviews` words on the approval node, the pause is declared,
    `declared` says so, and the gate passes (the review is a `call` interrupt on the node itself,
    crediting no call: the guard confirms the booking)."""
    g = guarded_approval(P.approve_deep)
    bare = export(g)
    assert [o["what"] for o in node_of(bare, "approve")["opaque"]] == ["pause"]
    code, blocking, text = verify(binary, tmp_path, bare)
    assert code == 1 and ("QG024", "pause:approve", "approve") in blocking
    assert "Gate: passed" not in text

    e = export(g, {"nodes": {"approve": {"reviews": ["book_hotel"]}}})
    n = node_of(e, "approve")
    assert "opaque" not in n and n["declared"] == ["reviews"]
    assert {"node": "approve", "when": "call", "tool": "book_hotel"} in e["interrupts"]
    code, blocking, text = verify(binary, tmp_path, e)
    assert blocking == set(), blocking
    assert code == 0 and "Gate: passed" in text


class Formatter(Runnable):
    """A runnable of the application's whose code the exporter does not read (no `__call__`,
    no function): it formats the last message."""

    def invoke(self, state: Any, config: Any = None, **kwargs: Any) -> dict:
        return {"messages": []}


def formatter_graph() -> Any:
    b = StateGraph(State)
    b.add_node("format", Formatter())
    b.add_edge(START, "format")
    b.add_edge("format", END)
    return b.compile(name="formatter")


def test_pure_clears_unread_code(binary, tmp_path):
    """A step whose code the exporter cannot read: an opaque `code` entry, QG024, never a silent
    pass; `pure` declares it has no effect: no entry, still a step with no tools, the gate passes."""
    bare = export(formatter_graph())
    n = node_of(bare, "format")
    assert n["kind"] == "step" and [o["what"] for o in n["opaque"]] == ["code"]
    assert "Formatter" in n["opaque"][0]["why"]
    code, blocking, text = verify(binary, tmp_path, bare)
    assert code == 1 and blocking == {("QG024", "code:format", "format")} and "Gate: passed" not in text

    e = export(formatter_graph(), {"nodes": {"format": {"pure": "formats the answer"}}})
    n = node_of(e, "format")
    assert n["kind"] == "step" and "tools" not in n and "opaque" not in n
    assert n["declared"] == ["pure"] and n["pure"] == "formats the answer"
    code, blocking, text = verify(binary, tmp_path, e)
    assert code == 0 and blocking == set() and "Gate: passed" in text


def test_model_clears_a_model_entry_and_makes_a_step_a_model():
    """`model: true` on a step: it is a model node, its opaque `model` entries cleared (the entries
    other words declare are kept)."""
    from stalwart_export import _words

    e = {"nodes": [{"id": "plan", "kind": "step", "opaque": [
        {"what": "model", "why": "init_chat_model(...) at run time"},
        {"what": "pause", "why": "raise NodeInterrupt"}]}], "edges": [], "subgraphs": {}}
    _words.apply(e, _words.split({"nodes": {"plan": {"model": True}}}))
    assert e["nodes"][0] == {"id": "plan", "kind": "model", "declared": ["model"],
                             "opaque": [{"what": "pause", "why": "raise NodeInterrupt"}]}


def test_calls_clear_tools_entries():
    from stalwart_export import _words

    e = {"nodes": [{"id": "send", "kind": "step", "opaque": [{"what": "tools", "why": "getattr(m, name)"}]}],
         "edges": [], "subgraphs": {}}
    _words.apply(e, _words.split({"nodes": {"send": {"calls": {"gmail_send": {"kind": "write"}}}}}))
    n = e["nodes"][0]
    assert n["tools"] == ["gmail_send"] and "opaque" not in n and n["declared"] == ["calls"]


def step_calling_a_tool() -> Any:
    def lookup(state: State):
        read_inbox.invoke({})
        return {}

    b = StateGraph(State)
    b.add_node("lookup", lookup)
    b.add_edge(START, "lookup")
    return b.compile(name="lookup")


BAD = {
    "pure_on_a_caller": ({"nodes": {"lookup": {"pure": "only reads"}}},
                         "nodes.lookup.pure: node 'lookup' calls read_inbox, so it is not pure"),
    "pure_empty": ({"nodes": {"lookup": {"pure": " "}}}, "nodes.lookup.pure: `pure` must be a text"),
    "pure_and_calls": ({"nodes": {"lookup": {"pure": "x", "calls": {"t": {"kind": "read"}}}}},
                       "is declared `pure` (no effect) and to make `calls`"),
    "model_false": ({"nodes": {"lookup": {"model": False}}}, "nodes.lookup.model: `model` must be true"),
    "no_such_node_pure": ({"nodes": {"lokup": {"pure": "x"}}}, "nodes.lokup: the graph has no node 'lokup'"),
    "no_such_node_model": ({"nodes": {"lokup": {"model": True}}}, "nodes.lokup: the graph has no node 'lokup'"),
    "review_of_nothing": ({"nodes": {"lookup": {"reviews": ["book_hotel"]}}},
                          "nodes.lookup.reviews.0: node 'lookup' does not call 'book_hotel'"),
}


@pytest.mark.parametrize("shape", list(BAD))
def test_words_never_hide_what_was_read(shape):
    words, want = BAD[shape]
    with pytest.raises(WordsError) as e:
        export(step_calling_a_tool(), words)
    assert want in str(e.value)
