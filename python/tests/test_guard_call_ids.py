"""Issue 27 item 1, SPEC 12.1 "One call, one decision, one record": a model message whose calls share
an id, or have an empty or missing id, is refused whole (`call_id`), in every place the guard sits;
calls are placed by their position; two different records at one place are a broken history."""

import pytest

import attacks as A
import guarded as G
from stalwart_export import HISTORY_KEY
from stalwart_export.guard import merge_history
from stalwart_export.guard.history import Chain, verify


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


def four_searches(id_of):
    return [A.tc("search", {"q": f"q{k}"}, id_of(k)) for k in range(4)]


ID_SHAPES = {"shared": lambda k: "dup", "empty": lambda k: "", "none": lambda k: None,
             "two_shared": lambda k: "a" if k < 2 else f"b{k}"}


@pytest.mark.parametrize("shape", sorted(ID_SHAPES))
@pytest.mark.parametrize("place", ["middleware", "tool_node", "wrapper"])
def test_a_message_with_bad_call_ids_is_refused_whole(place, shape):
    g = A.guard()
    app = A.PLACES[place](g, four_searches(ID_SHAPES[shape]), "done")
    out, asked = G.turn(app, G.thread())
    assert G.RAN == {}, f"{place}/{shape}: a call of a message with bad ids ran: {dict(G.RAN)}"
    got = G.decisions(out)
    assert got and all(d == ("search", "refuse", False, "call_id") for d in got), got
    refusals = G.tool_messages(out)
    assert refusals and all(m.status == "error" and "call_id" in m.content for m in refusals)
    # the history verifies: the next (well-formed) message is decided as usual
    assert verify(out[HISTORY_KEY], g.chain).problem is None


@pytest.mark.parametrize("place", ["middleware", "tool_node", "wrapper"])
def test_two_writes_with_one_id_do_not_both_run(place):
    g = A.guard()
    calls = [A.tc("charge_card", {"order_id": "42", "amount": 5.0}, "same"),
             A.tc("charge_card", {"order_id": "42", "amount": 6.0}, "same")]
    app = A.PLACES[place](g, calls, "done")
    out, asked = G.turn(app, G.thread(), answers=[])
    assert asked == [] and G.RAN == {}


@pytest.mark.parametrize("place", ["middleware", "tool_node", "wrapper"])
def test_a_dropped_outside_read_cannot_let_a_later_write_through(place):
    """The record a shared id would drop may be the outside read's: then `wire` (not_after untrusted)
    would run. Refused whole, the read never runs, and after a read that ran `wire` is refused."""
    g = A.guard()
    app = A.PLACES[place](g, [A.tc("search", {"q": "a"}, "d"), A.tc("read_inbox", {}, "d")],
                          [A.tc("read_inbox", {}, "r1")],
                          [A.tc("wire", {"account": "a", "amount": 1.0}, "w1")], "done")
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {"read_inbox": 1}
    assert G.decisions(out)[-1] == ("wire", "refuse", False, "order_rule")


def test_well_formed_ids_still_place_each_call_by_position():
    for place in ("middleware", "tool_node", "wrapper"):
        G.reset()
        g = A.guard()
        app = A.PLACES[place](g, [A.tc("search", {"q": f"q{k}"}, f"c{k}") for k in range(4)], "done")
        out, _ = G.turn(app, G.thread())
        assert G.RAN == {"search": 2}, place
        assert sorted(e["i"] for e in G.entries(out)) == [0, 1, 2, 3], place


def test_guard_call_in_a_step_counts_every_call_whatever_its_id():
    g = A.guard()
    app = A.step(g, four_searches(ID_SHAPES["shared"]), "done")
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {"search": 2}
    assert [d[1] for d in G.decisions(out)] == ["allow", "allow", "refuse", "refuse"]


def test_two_different_records_at_one_place_are_a_broken_history_never_one_dropped():
    from stalwart_export.guard.core import Batch, Outcome
    from stalwart_export.guard.decide import ALLOW, Call, Decision

    g = A.guard()
    s = verify([], g.chain)
    b = Batch(g.rules, g.chain, [Call("search", {"q": "a"}, "x")], s, 1, "tools", None, {})
    r1 = b.entry(Outcome(0, Call("search", {"q": "a"}, "x"), True, Decision(ALLOW)))
    r2 = b.entry(Outcome(0, Call("search", {"q": "b"}, "x"), True, Decision(ALLOW)))
    merged = merge_history(merge_history([], [r1]), [r2])
    assert merged == [r1, r2]  # both kept
    problem = verify(merged, g.chain).problem
    assert problem is not None and "two different records" in problem
    # the same record twice is one record
    assert merge_history([r1], [r1]) == [r1]
    assert Chain(None).genesis == g.chain.genesis


def test_a_call_changed_by_an_earlier_middleware_is_still_one_of_its_message():
    """A call whose arguments differ from its message's (an earlier middleware edited them) is
    still found by its id, and refused with the message when the ids are shared."""
    from types import SimpleNamespace

    from langchain_core.messages import AIMessage, HumanMessage

    g = A.guard()
    msg = AIMessage(content="", tool_calls=[A.tc("search", {"q": "a"}, "dup"), A.tc("search", {"q": "b"}, "dup")])
    state = {"messages": [HumanMessage(content="go"), msg]}
    req = SimpleNamespace(tool_call=A.tc("search", {"q": "edited"}, "dup"), state=state, runtime=None)
    out = g.wrap_tool_call(req, lambda r: (_ for _ in ()).throw(AssertionError("the tool ran")))
    assert out.status == "error" and "call_id" in out.content
