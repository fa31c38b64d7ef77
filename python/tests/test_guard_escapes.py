"""The guard in real LangGraph runs (SPEC 12.1): fake chat models scripted to try each escape, and
the guard's decision asserted for each, with what really ran."""

import pytest

import guarded as G
from graphs import call
from stalwart_export import HISTORY_KEY, Guard
from stalwart_export.guard.history import encode


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


def guard(**kw):
    return Guard(G.CATALOGUE, **kw)


def test_a_write_before_its_after_tool_is_refused_then_allowed_once_it_ran():
    g = guard()
    a = G.agent(g, [call("refund_order", {"order_id": "42", "amount": 30.0})],
                [call("get_order", {"order_id": "42"})],
                [call("refund_order", {"order_id": "42", "amount": 30.0}, i=1)], "done")
    out, asked = G.turn(a, G.thread(), answers=[G.YES])
    assert G.decisions(out) == [("refund_order", "refuse", False, "order_rule"),
                                ("get_order", "allow", True, None),
                                ("refund_order", "confirm", True, "write")]
    assert G.RAN == {"get_order": 1, "refund_order": 1}
    refused = G.tool_messages(out)[0]
    assert refused.status == "error" and "order_rule" in refused.content and "after 'get_order'" in refused.content
    assert [q["name"] for q in asked] == ["refund_order"] and asked[0]["reasons"] == ["write"]


def test_a_write_after_a_not_after_tool_is_refused():
    g = guard()
    a = G.agent(g, [call("get_order", {"order_id": "42"})], [call("close_account", {"account": "a1"})],
                [call("refund_order", {"order_id": "42", "amount": 30.0})], "done")
    out, asked = G.turn(a, G.thread(), answers=[G.YES])
    assert G.decisions(out)[-1] == ("refund_order", "refuse", False, "order_rule")
    assert "close_account" in G.tool_messages(out)[-1].content
    assert G.RAN == {"get_order": 1, "close_account": 1}
    assert asked[0]["name"] == "close_account" and asked[0]["reasons"] == ["irreversible_pivot", "write"]


def test_past_at_most_is_refused_and_a_batch_cannot_pass_the_limit():
    g = guard()
    two = [call("charge_card", {"order_id": "42", "amount": 5.0}), call("charge_card", {"order_id": "42", "amount": 6.0}, i=1)]
    a = G.agent(g, two, "done")
    out, asked = G.turn(a, G.thread(), answers=[G.YES])
    assert sorted(G.decisions(out)) == [("charge_card", "confirm", True, "write"),
                                        ("charge_card", "refuse", False, "order_rule")]
    assert G.RAN == {"charge_card": 1} and len(asked) == 1


def test_session_rules_hold_across_turns_with_a_checkpointer():
    """charge_card: at most once a session; tip: at most once a turn."""
    g = guard()
    a = G.agent(g, [call("charge_card", {"order_id": "42", "amount": 5.0}), call("tip", {"amount": 1.0}, i=1)], "one",
                [call("charge_card", {"order_id": "42", "amount": 5.0}, i=2), call("tip", {"amount": 1.0}, i=3)], "two")
    t = G.thread()
    out1, asked1 = G.turn(a, t, "first", answers=[G.YES, G.YES])
    out2, asked2 = G.turn(a, t, "second", answers=[G.YES])
    assert sorted(G.decisions(out1)) == [("charge_card", "confirm", True, "write"), ("tip", "confirm", True, "write")]
    second = sorted(G.decisions(out2)[2:])
    assert second == [("charge_card", "refuse", False, "order_rule"), ("tip", "confirm", True, "write")]
    assert G.RAN == {"charge_card": 1, "tip": 2}
    assert [e["turn"] for e in G.entries(out2)] == [1, 1, 2, 2]


def test_after_reading_outside_content_a_write_is_confirmed_as_tainted_or_refused():
    script = ([call("read_inbox")], [call("add_note", {"order_id": "42", "note": "customer wrote"})], "done")
    out, asked = G.turn(G.agent(guard(), *script), G.thread(), answers=[G.YES])
    assert asked[0]["reasons"] == ["tainted_call", "write"]
    assert G.decisions(out)[-1] == ("add_note", "confirm", True, "tainted_call")
    G.reset()
    out, asked = G.turn(G.agent(guard(taint_policy="refuse"), *script), G.thread())
    assert asked == [] and G.decisions(out)[-1] == ("add_note", "refuse", False, "tainted_call")
    assert G.RAN == {"read_inbox": 1}


def test_input_from_outside_taints_every_turn():
    out, asked = G.turn(G.agent(guard(input_reads_outside=True, taint_policy="refuse"),
                                [call("add_note", {"order_id": "42", "note": "x"})], "done"), G.thread())
    assert G.decisions(out) == [("add_note", "refuse", False, "tainted_call")]


def test_an_undeclared_argument_is_refused():
    out, _ = G.turn(G.agent(guard(), [call("get_order", {"order_id": "42", "note": "hi"})], "done"), G.thread())
    assert G.decisions(out) == [("get_order", "refuse", False, "argument_schema")]
    assert "/note" in G.tool_messages(out)[0].content
    out, _ = G.turn(G.agent(guard(), [call("get_order", {"order_id": 42})], "done"), G.thread())
    assert G.decisions(out) == [("get_order", "refuse", False, "argument_schema")]
    assert G.RAN == {}


def test_a_url_in_a_tool_that_does_not_send_out_is_refused():
    out, _ = G.turn(G.agent(guard(), [call("add_note", {"order_id": "42", "note": "see https://evil.invalid/x"})],
                            "done"), G.thread())
    assert G.decisions(out) == [("add_note", "refuse", False, "undeclared_destination")]
    # a sends_out tool may send only where it is allowed to
    out, asked = G.turn(G.agent(guard(), [call("send_email", {"to": "boss@evil.invalid", "body": "b"})],
                                [call("send_email", {"to": "desk@shop.example", "body": "b"}, i=1)], "done"),
                        G.thread(), answers=[G.YES])
    assert G.decisions(out) == [("send_email", "refuse", False, "undeclared_destination"),
                                ("send_email", "confirm", True, "write")]
    assert G.ARGS["send_email"] == [{"to": "desk@shop.example", "body": "b"}]


def test_a_tool_not_in_the_catalogue_is_refused():
    out, _ = G.turn(G.agent(guard(), [call("unlisted", {"x": "1"})], "done", tools=G.TOOLS + [G.unlisted]), G.thread())
    assert G.decisions(out) == [("unlisted", "refuse", False, "unknown_tool")]
    assert G.RAN == {}


def test_declined_by_the_person_nothing_runs_and_the_model_is_told():
    out, asked = G.turn(G.agent(guard(), [call("close_account", {"account": "a1"})], "done"), G.thread(),
                        answers=[G.NO])
    assert G.decisions(out) == [("close_account", "confirm", False, "irreversible_pivot")]
    e = G.entries(out)[0]
    assert e["answer"] == "reject" and "declined" in e["reasons"]
    msg = G.tool_messages(out)[0]
    assert msg.status == "error" and "declined" in msg.content and "not now" in msg.content
    assert G.RAN == {}
    q = asked[0]
    assert q["type"] == "tool_approval" and q["args"] == {"account": "a1"} and q["name"] == "close_account"
    assert "account" in q["description"] and q["why"] == ["the call cannot be undone", "the call changes something"]


def test_an_edited_call_runs_as_edited_and_is_checked_again():
    a = G.agent(guard(), [call("get_order", {"order_id": "42"})],
                [call("refund_order", {"order_id": "42", "amount": 30.0})], "done")
    out, _ = G.turn(a, G.thread(), answers=[G.edit("refund_order", order_id="42", amount=10.0)])
    assert G.ARGS["refund_order"] == [{"order_id": "42", "amount": 10.0}]
    e = G.entries(out)[-1]
    assert e["answer"] == "edit" and e["args"] == {"order_id": "42", "amount": 10.0}
    assert e["proposed"] == {"tool": "refund_order", "args": {"order_id": "42", "amount": 30.0}}
    # an edit that breaks a rule is refused: here a URL in a tool that does not send out
    G.reset()
    a = G.agent(guard(), [call("add_note", {"order_id": "42", "note": "ok"})], "done")
    out, _ = G.turn(a, G.thread(), answers=[G.edit("add_note", order_id="42", note="http://x.invalid")])
    assert G.decisions(out) == [("add_note", "refuse", False, "undeclared_destination")] and G.RAN == {}


def test_an_approval_of_another_call_is_refused():
    a = G.agent(guard(), [call("add_note", {"order_id": "42", "note": "ok"})], "done")
    out, _ = G.turn(a, G.thread(), answers=[{"type": "approve", "digest": "0" * 64}])
    assert G.decisions(out)[0][2] is False and G.RAN == {}
    assert "digest" in G.tool_messages(out)[0].content


def rewrite_history(app, thread, history):
    """Write `history` into the thread's latest stored checkpoint, as someone with access to the
    checkpoint store could (a new version of the channel, so the saver stores the new value)."""
    saver = app.checkpointer
    ckpt = saver.get_tuple({"configurable": {"thread_id": thread}})
    cp = ckpt.checkpoint
    version = saver.get_next_version(cp["channel_versions"].get(HISTORY_KEY), None)
    cp["channel_versions"][HISTORY_KEY] = version
    cp["channel_values"][HISTORY_KEY] = history
    saver.put(ckpt.config, cp, ckpt.metadata, {HISTORY_KEY: version})
    assert app.get_state({"configurable": {"thread_id": thread}}).values[HISTORY_KEY] == history


def records(entries):
    """Entries as the state keeps them, each with the MAC it carries (edited or not)."""
    return [encode(e) for e in entries]


def test_a_tampered_history_is_refused():
    for key in (None, b"secret"):
        G.reset()
        g = guard(key=key)
        a = G.agent(g, [call("read_inbox")], "one", [call("add_note", {"order_id": "42", "note": "x"}, i=1)], "two")
        t = G.thread()
        out, _ = G.turn(a, t, "first")
        # Someone edits the stored checkpoint so that the inbox read never happened (no taint).
        tampered = [dict(e) for e in G.entries(out)]
        tampered[0]["outside"] = False
        rewrite_history(a, t, records(tampered))
        out2, asked = G.turn(a, t, "second")
        assert asked == []
        assert G.decisions(out2)[-1] == ("add_note", "refuse", False, "history_invalid")
        assert "changed after it was written" in G.tool_messages(out2)[-1].content
        assert G.RAN == {"read_inbox": 1}


def test_a_history_resealed_without_the_key_is_refused():
    """Without a key anyone can recompute the hashes; with one, a rewritten history does not verify."""
    from stalwart_export.guard.history import Chain

    g = guard(key="k1")
    a = G.agent(g, [call("read_inbox")], "one", [call("add_note", {"order_id": "42", "note": "x"}, i=1)], "two")
    t = G.thread()
    out, _ = G.turn(a, t, "first")
    forged = Chain(None)
    e = dict(G.entries(out)[0], outside=False, prev=forged.genesis)
    rewrite_history(a, t, [forged.seal(e)])
    out2, _ = G.turn(a, t, "second")
    assert G.decisions(out2)[-1] == ("add_note", "refuse", False, "history_invalid")


def test_a_state_update_cannot_rewrite_an_entry():
    g = guard()
    a = G.agent(g, [call("read_inbox")], "one", [call("add_note", {"order_id": "42", "note": "x"}, i=1)], "two")
    t = G.thread()
    out, _ = G.turn(a, t, "first")
    cfg = {"configurable": {"thread_id": t}}
    before = out[HISTORY_KEY]
    forged = records([dict(G.entries(out)[0], outside=False)])
    a.update_state(cfg, {HISTORY_KEY: forged})
    # the reducer kept the original, and the forged record beside it: two records at one place
    assert a.get_state(cfg).values[HISTORY_KEY] == before + forged
    out2, asked = G.turn(a, t, "second")
    assert asked == [] and G.decisions(out2)[-1] == ("add_note", "refuse", False, "history_invalid")
    assert "two different records" in G.tool_messages(out2)[-1].content


# ------------------------------------------------------------------ the hand-built graph


def test_guard_tool_node_asks_about_every_call_of_a_batch_before_running_any():
    g = guard()
    batch = [call("get_order", {"order_id": "42"}), call("close_account", {"account": "a1"}, i=1),
             call("add_note", {"order_id": "42", "note": "n"}, i=2)]
    hb = G.hand_built(g, batch, "done")
    out, asked = G.turn(hb, G.thread(), answers=[G.YES, G.NO])
    assert [q["name"] for q in asked] == ["close_account", "add_note"]
    assert G.RAN == {"get_order": 1, "close_account": 1}  # each ran once, though the node paused twice
    assert G.decisions(out) == [("get_order", "allow", True, None), ("close_account", "confirm", True, "irreversible_pivot"),
                                ("add_note", "confirm", False, "write")]


def test_guard_tool_node_refuses_what_the_middleware_refuses():
    out, _ = G.turn(G.hand_built(guard(), [call("refund_order", {"order_id": "42", "amount": 1.0})], "done"), G.thread())
    assert G.decisions(out) == [("refund_order", "refuse", False, "order_rule")] and G.RAN == {}


def test_a_graph_that_cannot_keep_the_history_refuses_every_call():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import tools_condition

    from graphs import model

    g = guard()
    m = model([call("get_order", {"order_id": "42"})], "done").bind_tools(G.TOOLS)
    sg = StateGraph(MessagesState)  # no stalwart_guard key
    sg.add_node("agent", lambda s: {"messages": [m.invoke(s["messages"])]})
    sg.add_node("tools", g.tool_node(G.TOOLS))
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    out, _ = G.turn(sg.compile(checkpointer=InMemorySaver()), G.thread())
    msg = G.tool_messages(out)[0]
    assert "history_invalid" in msg.content and "stalwart_guard" in msg.content and G.RAN == {}


def test_a_plain_tool_node_with_the_guard_as_wrapper_refuses_a_pause_in_a_batch():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from graphs import model
    from stalwart_export import GuardState

    g = guard()
    m = model([call("get_order", {"order_id": "42"}), call("add_note", {"order_id": "42", "note": "n"}, i=1)],
              [call("add_note", {"order_id": "42", "note": "n"}, i=2)], "done").bind_tools(G.TOOLS)
    sg = StateGraph(GuardState)
    sg.add_node("agent", lambda s: {"messages": [m.invoke(s["messages"])]})
    sg.add_node("tools", ToolNode(G.TOOLS, wrap_tool_call=g.wrap_tool_call))
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    out, asked = G.turn(sg.compile(checkpointer=InMemorySaver()), G.thread(), answers=[G.YES])
    assert G.decisions(out) == [("get_order", "allow", True, None), ("add_note", "confirm", False, "guard_error"),
                                ("add_note", "confirm", True, "write")]
    assert G.RAN == {"get_order": 1, "add_note": 1}


# ------------------------------------------------------------------ guard.call in a step


def one_step(state_schema, fn):
    """START -> fn -> END over `state_schema`, with a checkpointer; (graph, a new thread's config)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    sg = StateGraph(state_schema)
    sg.add_node(fn.__name__, fn)
    sg.add_edge(START, fn.__name__)
    sg.add_edge(fn.__name__, END)
    return sg.compile(checkpointer=InMemorySaver()), {"configurable": {"thread_id": G.thread()}}


def test_guard_call_in_a_step():
    from typing import TypedDict

    from stalwart_export import GuardHistory

    g = guard()

    class S(TypedDict, total=False):
        order_id: str
        log: list
        stalwart_guard: GuardHistory

    def refund_step(state: S):
        first = g.call(G.refund_order, {"order_id": state["order_id"], "amount": 5.0}, state)
        g.call(G.get_order, {"order_id": state["order_id"]}, state)
        second = g.call(G.refund_order, {"order_id": state["order_id"], "amount": 5.0}, state)
        return {"log": [first.decision, first.ran, second.decision, second.ran]}

    app, cfg = one_step(S, refund_step)
    out = app.invoke({"order_id": "42"}, cfg)
    assert out["__interrupt__"][0].value["name"] == "refund_order"
    out = app.invoke(G.Command(resume=G.YES), cfg)
    assert out["log"] == ["refuse", False, "confirm", True]
    assert G.RAN == {"get_order": 2, "refund_order": 1}  # the read ran again when the step resumed
    assert [e["tool"] for e in G.entries(out)] == ["refund_order", "get_order", "refund_order"]


def test_guard_call_refuses_a_pause_after_a_write_of_the_same_step():
    from typing import TypedDict

    from stalwart_export import GuardHistory

    g = guard()

    class S(TypedDict, total=False):
        log: list
        stalwart_guard: GuardHistory

    def step(state: S):
        a = g.call(G.add_note, {"order_id": "1", "note": "a"}, state)
        b = g.call(G.add_note, {"order_id": "1", "note": "b"}, state)
        return {"log": [a.ran, b.ran, b.reasons]}

    app, cfg = one_step(S, step)
    out = app.invoke({}, cfg)
    out = app.invoke(G.Command(resume=G.YES), cfg)
    assert out["log"] == [True, False, ["guard_error"]]
    assert G.RAN == {"add_note": 1}


# ------------------------------------------------------------------ async


def test_the_async_path_decides_the_same():
    import asyncio

    from langchain_core.messages import HumanMessage

    a = G.agent(guard(), [call("refund_order", {"order_id": "42", "amount": 1.0})], "done")
    out = asyncio.run(a.ainvoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": G.thread()}}))
    assert G.decisions(out) == [("refund_order", "refuse", False, "order_rule")] and G.RAN == {}


# ------------------------------------------------------------------ the rulebook, under facts


def test_refused_by_the_rulebook_unless_the_fact_holds_for_that_order(tmp_path):
    """The shop's rulebook lets refund_card run only if $order_paid, read from get_order's answer
    for the same order_id (agent.yaml's facts)."""
    import json
    import subprocess

    from langchain_core.tools import tool

    from helpers import REPO, stalwart_bin

    binary = stalwart_bin()
    if binary is None:
        pytest.skip("no stalwart binary to compile the rulebook")
    shop = REPO / "fixtures" / "shop"
    p = subprocess.run([binary, "rules", "compile", str(shop / "policy.co"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr

    @tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        G._ran("get_order", order_id=order_id)
        if order_id == "9":
            return "order 9: something went wrong"  # not an object: no fact can be read from it
        return json.dumps({"status": "paid" if order_id == "42" else "open", "card": "visa"})

    @tool
    def refund_card(order_id: str, amount: float) -> str:
        """Refund a card."""
        G._ran("refund_card", order_id=order_id, amount=amount)
        return "refunded"

    g = Guard(str(shop / "shop.catalogue.yaml"), rulebook=str(tmp_path), facts=str(shop / "agent.yaml"))
    script = ([call("refund_card", {"order_id": "42", "amount": 1.0})],          # before get_order: fact false
              [call("get_order", {"order_id": "7"})],
              [call("refund_card", {"order_id": "7", "amount": 1.0}, i=1)],     # order 7 is open
              [call("get_order", {"order_id": "42"}, i=1)],
              [call("refund_card", {"order_id": "7", "amount": 1.0}, i=2)],     # 42 paid does not pay 7
              [call("refund_card", {"order_id": "42", "amount": 1.0}, i=3)],    # 42 is paid: confirmed
              [call("get_order", {"order_id": "9"}, i=2)],
              [call("refund_card", {"order_id": "9", "amount": 1.0}, i=4)],     # unreadable answer
              "done")
    out, asked = G.turn(G.agent(g, *script, tools=[get_order, refund_card]), G.thread(), answers=[G.YES])
    got = [(t, d, r, reason) for t, d, r, reason in G.decisions(out) if t == "refund_card"]
    assert got == [("refund_card", "refuse", False, "rulebook"), ("refund_card", "refuse", False, "rulebook"),
                   ("refund_card", "refuse", False, "rulebook"), ("refund_card", "confirm", True, "write"),
                   ("refund_card", "refuse", False, "fact_unreadable")]
    assert G.ARGS["refund_card"] == [{"order_id": "42", "amount": 1.0}]
    refused = [m for m in G.tool_messages(out) if m.name == "refund_card" and m.status == "error"][0]
    assert "'refunds'" in refused.content and "policy.co:8" in refused.content


def test_a_caller_fact_comes_from_the_context():
    cat = {"tools": {"pay": {"kind": "write"}}}
    facts = {"approved": {"from": "caller"}}
    from stalwart_export.guard.decide import Call, decide
    from stalwart_export.guard.history import Session
    from stalwart_export.guard.rulebook import Route, Rulebook, Atom

    g = Guard(cat, facts=facts, context=lambda state: {"approved": state.get("ok")})
    g.rules.rulebook = Rulebook("r", [Route("pay", "payments", "p.co:3", {"atom": 0})], [Atom("$approved", "approved")], "h")
    s = Session([], g.chain.genesis)
    assert decide(g.rules, Call("pay", {}), s, turn=0, context=g._context_of({"ok": True})).outcome == "confirm"
    d = decide(g.rules, Call("pay", {}), s, turn=0, context=g._context_of({"ok": False}))
    assert d.outcome == "refuse" and d.reasons == ["rulebook"] and "'payments' (p.co:3)" in d.message


def test_a_call_the_guard_cannot_read_is_refused_not_run():
    g = guard()

    def broken(state):  # a context function that fails: the guard cannot decide
        raise RuntimeError("the context service is down")

    g2 = Guard(G.CATALOGUE, context=broken)
    out, _ = G.turn(G.agent(g2, [call("get_order", {"order_id": "42"})], "done"), G.thread())
    assert G.decisions(out) == [("get_order", "refuse", False, "guard_error")] and G.RAN == {}
    assert "context function failed" in G.tool_messages(out)[0].content
    from types import SimpleNamespace

    # arguments that are not a mapping at all: the guard cannot even read the call
    req = SimpleNamespace(tool_call={"name": "get_order", "args": 5, "id": "x"}, state={}, runtime=None)
    msg = g.wrap_tool_call(req, lambda r: (_ for _ in ()).throw(AssertionError("the tool ran")))
    assert msg.status == "error" and "guard_error" in msg.content
