"""Issue 27 item 5 (odd text): a lone surrogate in an argument never lets a tool run and then fail
to record it (the call is refused before anything runs, in every place the guard sits, and with
`handle_tool_errors=True` nothing runs past `at_most` unrecorded); bidi and zero-width characters
are shown escaped in the question put to the person."""

import json

import pytest

import attacks as A
import guarded as G
from stalwart_export import HISTORY_KEY
from stalwart_export.guard.history import verify


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


LONE = "\ud800"


@pytest.mark.parametrize("place", sorted(A.PLACES))
def test_a_lone_surrogate_is_refused_before_the_tool_runs(place):
    g = A.guard()
    app = A.PLACES[place](g, [A.tc("search", {"q": "a" + LONE}, "s1")], "done")
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {}
    assert G.decisions(out) == [("search", "refuse", False, "argument_schema")]
    assert verify(out[HISTORY_KEY], g.chain).problem is None
    # the record is plain ASCII: any checkpointer can store it
    assert all(r.isascii() for r in out[HISTORY_KEY])


@pytest.mark.parametrize("nested", [{"q": ["x", {"k": LONE}]}, {LONE: "x"}])
def test_a_lone_surrogate_anywhere_in_the_arguments_is_refused(nested):
    from stalwart_export.guard.args import text_problem

    assert text_problem(nested) is not None and "surrogate" in text_problem(nested)
    assert text_problem({"q": "fine \u202e text \U0001f600"}) is None


def test_with_handle_tool_errors_nothing_runs_past_at_most_unrecorded():
    g = A.guard()
    turns = [[A.tc("search", {"q": f"{k}{LONE}"}, f"s{k}")] for k in range(4)]
    turns += [[A.tc("search", {"q": f"ok{k}"}, f"t{k}")] for k in range(4)]
    app = A.wrapper(g, *turns, "done", handle_tool_errors=True)
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {"search": 2}
    ran = [e for e in G.entries(out) if e["ran"]]
    assert len(ran) == 2 and len(G.entries(out)) == 8


BIDI = "pay\u202eevil\u202c to \u200bbob\u2066x\u2069\ufeff"


@pytest.mark.parametrize("place", ["middleware", "tool_node", "wrapper", "step"])
def test_bidi_and_zero_width_characters_are_shown_escaped(place):
    g = A.guard()
    app = A.PLACES[place](g, [A.tc("add_note", {"order_id": "42", "note": BIDI}, "n1")], "done")
    out, asked = G.turn(app, G.thread(), answers=[G.YES])
    q = asked[0]
    text = q["description"]
    for ch in "\u202e\u202c\u200b\u2066\u2069\ufeff":
        assert ch not in text, f"U+{ord(ch):04X} reached the question raw"
    assert "\\u202e" in text and "\\u200b" in text and "\\ufeff" in text
    assert "invisible" in text
    # the arguments themselves are kept exactly: the call runs as the model asked
    assert q["args"]["note"] == BIDI and G.ARGS["add_note"] == [{"order_id": "42", "note": BIDI}]


def test_plain_text_is_shown_as_it_is():
    from stalwart_export.guard.review import visible

    assert visible("Grüße, 東京 😀") == "Grüße, 東京 😀"
    assert visible("a\u202eb") == "a\\u202eb"
    assert json.loads('"' + visible("x\u200by") + '"') == "x\u200by"


# ------------------------------------------------------------------ turns are the guard's own


def test_a_summary_does_not_start_a_new_turn():
    """`tip` may run once a turn. SummarizationMiddleware replaces the conversation's start (the
    person's messages included) with a summary: the person's message count falls, and a turn
    counted by messages would restart mid-turn. The guard counts its own turns: the turn's
    message, not how many are left."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import model

    g = A.guard()
    summary = SummarizationMiddleware(model=model("unused"), summarizer=lambda msgs: "earlier turns",
                                      trigger=("messages", 6), keep=("messages", 1))
    turns = []
    for t in range(3):
        turns += [[A.tc("get_order", {"order_id": "1"}, f"g{t}")], f"turn {t} done"]
    turns += [[A.tc("tip", {"amount": 1.0}, "t1")], [A.tc("get_order", {"order_id": "2"}, "g9")],
              [A.tc("tip", {"amount": 1.0}, "t2")], "done"]
    app = create_agent(model(*turns), A.TOOLS, middleware=[summary, g], checkpointer=InMemorySaver())
    th = G.thread()
    for t in range(3):
        G.turn(app, th, f"turn {t}")
    out, asked = G.turn(app, th, "turn 3", answers=[G.YES])
    assert G.RAN["tip"] == 1, "tip ran twice in one turn"
    tips = [d for d in G.decisions(out) if d[0] == "tip"]
    assert tips == [("tip", "confirm", True, "write"), ("tip", "refuse", False, "order_rule")]
    from langchain_core.messages import HumanMessage
    assert sum(isinstance(m, HumanMessage) for m in out["messages"]) < 4  # the summary did shorten it


@pytest.mark.parametrize("place,how", [("middleware", "tool"), ("tool_node", "tool"), ("wrapper", "tool"),
                                       ("tool_node", "node"), ("wrapper", "node")])
def test_a_tool_that_fails_is_still_recorded_and_counted(place, how, monkeypatch):
    """A tool that fails, its error handed to the model (the tool's own `handle_tool_error`, or the
    node's `handle_tool_errors=True`), ran: it is recorded and counted, so no call runs past
    `at_most` unrecorded."""
    from langchain_core.tools import ToolException, tool

    @tool
    def search(q: str) -> str:
        """Search (fails every time)."""
        G._ran("search", q=q)
        raise (ToolException if how == "tool" else ValueError)("the search service failed")

    if how == "tool":
        search.handle_tool_error = True
    monkeypatch.setattr(A, "TOOLS", [t for t in A.TOOLS if t.name != "search"] + [search])
    g = A.guard()
    turns = [[A.tc("search", {"q": f"{k}"}, f"s{k}")] for k in range(4)]
    kw = {"handle_tool_errors": True} if how == "node" else {}
    if place == "tool_node":
        app = A._loop(g, g.tool_node(A.TOOLS, **kw), *turns, "done")
    else:
        app = A.PLACES[place](g, *turns, "done", **kw)
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {"search": 2}
    assert [d[1:3] for d in G.decisions(out)] == [("allow", True)] * 2 + [("refuse", False)] * 2


def test_every_default_ignorable_code_point_is_shown_escaped():
    """Unicode's Default_Ignorable_Code_Point property, every code point of it (issue 27 red team)."""
    from stalwart_export.guard.review import _DEFAULT_IGNORABLE, visible

    for lo, hi in _DEFAULT_IGNORABLE:
        for n in range(lo, hi + 1):
            assert chr(n) not in visible(f"acct{chr(n)}1"), hex(n)
    assert visible("acct-1 é e\u0301 \u4e2d") == "acct-1 é e\u0301 \u4e2d"


@pytest.mark.parametrize("answer,kind", [([True], "approve"), ({"decisions": [True]}, "approve"),
                                         ([True, False], "reject"), ({"decisions": [True, False]}, "reject"),
                                         ({"decisions": []}, "reject"), ([], "reject")])
def test_a_batched_answer_is_read_only_with_one_decision(answer, kind):
    from stalwart_export.guard.decide import Call
    from stalwart_export.guard.review import read_answer

    got = read_answer(answer, Call("add_note", {}, "a1"), "0" * 64)
    assert got.kind == kind
    assert (got.unreadable is None) == (kind == "approve")


def test_a_mark_counts_as_a_new_turn_only_after_the_call_it_follows():
    """Issue 27 red team (turns): the person's latest message is a new turn only when it comes after
    the model's message that asked for the last entry's call; an older message left when the newest
    was removed, or the newest written back under a new id, is the same turn. A turn that ended on a
    tool's answer (a `return_direct` tool) is followed by a real next turn."""
    from types import SimpleNamespace

    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from stalwart_export.langgraph.guard.run import turn_of as _turn_of

    h1, h2 = HumanMessage("first", id="h1"), HumanMessage("second", id="h2")
    asked = AIMessage("", tool_calls=[{"name": "tip", "args": {}, "id": "t1"}], id="a1")
    answered = ToolMessage("ok", tool_call_id="t1", id="m1")
    session = SimpleNamespace(entries=[{"turn": 2, "human": "h2", "call_id": "t1"}])
    hello = AIMessage("hello", id="a0")
    assert _turn_of({"messages": [h1, hello, asked, answered]}, session) == (2, "h2")
    assert _turn_of({"messages": [h1, hello, HumanMessage("second", id="h2b"), asked, answered]}, session) == (2, "h2")
    third = HumanMessage("third", id="h3")
    assert _turn_of({"messages": [h1, hello, h2, asked, answered, AIMessage("done"), third]}, session) == (3, "h3")
    assert _turn_of({"messages": [h1, hello, h2, asked, answered, third]}, session) == (3, "h3")
    assert _turn_of({"messages": [h2, asked, answered]}, session) == (2, "h2")


def test_what_a_tool_answer_may_write_without_marking_a_turn():
    """`turns.marks_turn`: messages of other kinds, a removal of a message not the person's, and the
    person's messages the state already holds (a hand-off re-sending the conversation) pass; a new
    message of the person, in any form LangGraph reads, or a removal of theirs, does not."""
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.types import Command

    from stalwart_export.langgraph.guard.turns import marks_turn

    h = HumanMessage("hi", id="h1")
    state = {"messages": [h, AIMessage("", id="a1"), ToolMessage("ok", tool_call_id="c", id="m1")]}
    ok = [ToolMessage("ok", tool_call_id="c2"), AIMessage("note"), RemoveMessage(id="m1")]
    assert marks_turn(Command(update={"messages": ok}), state) is None
    assert marks_turn(Command(graph=Command.PARENT, update={"messages": state["messages"] + ok}), state) is None
    assert marks_turn(ToolMessage("ok", tool_call_id="c2"), state) is None
    for bad in ([HumanMessage("x")], [("user", "x")], [{"role": "user", "content": "x"}], HumanMessage("x", id="h2"),
                [RemoveMessage(id="h1")], [RemoveMessage(id=REMOVE_ALL_MESSAGES), h]):
        assert marks_turn(Command(update={"messages": bad}), state), bad
        assert marks_turn([Command(update={"messages": bad})], state), bad
    assert marks_turn(Command(update=[("messages", [HumanMessage("x")])]), state)
