"""Issue 30 item 3: the guard for the OpenAI Agents SDK (SPEC 12.1, 13.1's last paragraph, 3.1 "The
guard's view" and "Standing approvals"), on the real SDK offline with its own test model
(`agents.testing.ScriptedModel`). The app (tests/oa_apps/guarded_desk.py) is the SDK's
customer-service pattern: a triage agent handing off to a refunds specialist with a write.

Attacks first (what a model or a caller tries), then the guard's three answers (refuse, a write
asked and approved, a write asked and rejected, a tainted write asked with its reason), then the
export of the wrapped application verified with the Rust binary. Skipped, saying so, without
`openai-agents`."""

from __future__ import annotations

import asyncio
import copy
import json
import warnings

import pytest

pytest.importorskip("agents.testing", reason="openai-agents is not installed (python/requirements-test.txt pins it): "
                                             "the SDK guard tests are skipped")
from agents import Agent, RunConfig, Runner, SQLiteSession, WebSearchTool, function_tool, set_tracing_disabled  # noqa: E402
from agents.exceptions import ModelBehaviorError  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from oa_apps import guarded_desk  # noqa: E402
from stalwart_export import Guard  # noqa: E402,F401 - the LangGraph guard's import keeps working
from stalwart_export.guard import GuardConfigError, read_history  # noqa: E402
from stalwart_export.openai_agents import AgentGuard, export_agent, guarded_tool  # noqa: E402
from test_openai_agents import blocking, verify  # noqa: E402

set_tracing_disabled(True)
CAT = guarded_desk.CATALOGUE
HANDOFF = [function_call("transfer_to_refunds", {}, call_id="h1")]


@pytest.fixture(autouse=True)
def _no_refunds():
    guarded_desk.REFUNDS_MADE.clear()
    yield
    guarded_desk.REFUNDS_MADE.clear()


def desk(guard: AgentGuard | None = None):
    """(a fresh triage agent, wrapped by `guard` when given, and its refunds specialist)."""
    triage = guarded_desk.build()
    if guard is not None:
        assert guard.wrap(triage) is triage
    return triage, triage.handoffs[0]


def run(agent, script, session=None, run_config=None, input_or_state="please refund invoice A1"):
    """One `Runner.run` with the scripted model; `run_config` defaults to the session's."""
    rc = run_config if run_config is not None else session.run_config()
    rc.model = ScriptedModel(script)
    return asyncio.run(Runner.run(agent, input_or_state, session=session, run_config=rc))


def outputs(result) -> list[str]:
    return [str(i.output) for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]


def history(session) -> list[tuple]:
    return [(e["tool"], e["decision"], e["reasons"], e["ran"], e["answer"], e["turn"]) for e in read_history(session.records)]


def approve(agent, result, session, script, *, reject=False, always=False):
    state = result.to_state()
    for item in result.interruptions:
        if reject:
            state.reject(item)
        else:
            state.approve(item, always_approve=always)
    return run(agent, script, session, input_or_state=state)


# ------------------------------------------------------------------ attacks
def test_a_tool_missing_from_the_catalogue_is_refused_and_a_name_no_agent_has_runs_nothing():
    ran = []

    @function_tool
    def wipe_ledger(invoice_id: str) -> str:
        """Not in the catalogue."""
        ran.append(invoice_id)
        return "wiped"

    guard = AgentGuard(CAT)
    triage, refunds = desk()
    refunds.tools.append(wipe_ledger)
    guard.wrap(triage)
    s = guard.session(SQLiteSession("unknown"))
    r = run(triage, [HANDOFF, [function_call("wipe_ledger", {"invoice_id": "A1"}, call_id="c1")],
                     [assistant_message("ok")]], s)
    assert ran == [] and r.interruptions == []
    assert outputs(r)[-1].startswith("Refused by the tool check (unknown_tool): 'wipe_ledger' is not in the catalogue")
    assert history(s) == [("wipe_ledger", "refuse", ["unknown_tool"], False, None, 1)]
    # a tool name the agent does not have never reaches a tool: the SDK stops the run
    with pytest.raises(ModelBehaviorError):
        run(triage, [HANDOFF, [function_call("delete_everything", {}, call_id="c2")]], s)
    assert ran == [] and guarded_desk.REFUNDS_MADE == []


def test_call_ids_reused_are_refused():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("ids"))
    # within a run the SDK itself refuses an id reused for another call: nothing runs
    with pytest.raises(ModelBehaviorError, match="reused a completed tool call ID"):
        run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c1")]], s)
    # one message giving two different calls one id: the SDK refuses the message whole
    with pytest.raises(ModelBehaviorError, match="reused a tool call ID"):
        run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "B"}, call_id="d1"),
                               function_call("issue_refund", {"invoice_id": "B", "amount": 1}, call_id="d1")]], s)
    # the conversation cleared (the guard's history is kept): an id the session already decided is
    # refused by the guard, before anyone is asked
    asyncio.run(s.clear_session())
    r = run(triage, [HANDOFF, [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c1")],
                     [assistant_message("ok")]], s)
    assert r.interruptions == [] and guarded_desk.REFUNDS_MADE == []
    assert outputs(r)[-1].startswith("Refused by the tool check (call_id): the call id 'c1' was already used")
    assert [(t, d, rs) for t, d, rs, *_ in history(s)] == [("lookup_invoice", "allow", []),
                                                          ("issue_refund", "refuse", ["call_id"])]


def test_an_argument_the_schema_does_not_declare_is_refused_before_anyone_is_asked():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("schema"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 40, "to_iban": "XX99"},
                                    call_id="c2")],
                     [assistant_message("ok")]], s)
    assert r.interruptions == [], "the person must not be asked about a call the guard refuses"
    assert outputs(r)[-1].startswith("Refused by the tool check (argument_schema)")
    assert "to_iban" in outputs(r)[-1] and guarded_desk.REFUNDS_MADE == []
    assert history(s)[-1][:4] == ("issue_refund", "refuse", ["argument_schema"], False)


def test_a_hand_off_targets_write_never_runs_without_this_calls_approval():
    guard = AgentGuard(CAT)
    triage, refunds = desk(guard)
    assert all(guarded_tool(t) is not None for t in refunds.tools), "wrapping triage wraps its hand-off target"
    s = guard.session(SQLiteSession("handoff"))
    script = [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
              [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c2")]]
    r = run(triage, script, s)
    assert [i.name for i in r.interruptions] == ["issue_refund"] and guarded_desk.REFUNDS_MADE == []
    # resumed without an answer: still waiting, nothing ran
    r = run(r.last_agent, [], s, input_or_state=r.to_state())
    assert [i.name for i in r.interruptions] == ["issue_refund"] and guarded_desk.REFUNDS_MADE == []
    # the application (or a bug) turns the question off on the guarded tool: the guard's last check
    # at the tool still refuses the write nobody approved, and the export no longer credits the node
    triage2, refunds2 = desk(guard)
    refunds2.tools[2].needs_approval = False
    s2 = guard.session(SQLiteSession("handoff-2"))
    r = run(triage2, script + [[assistant_message("ok")]], s2)
    assert r.interruptions == [] and guarded_desk.REFUNDS_MADE == []
    assert outputs(r)[-1] == ("Refused by the tool check (declined): 'issue_refund' needs a person's approval, and it "
                              "was not given")
    assert history(s2)[-1][:4] == ("issue_refund", "refuse", ["declined"], False)
    assert next(n for n in export_agent(triage2)["nodes"] if n["id"] == "Refunds:tools")["kind"] == "tools_plain"


def test_a_standing_approval_does_not_cover_a_later_call():
    cat = json.loads(json.dumps(CAT))
    del cat["tools"]["issue_refund"]["order"]["at_most"]
    guard = AgentGuard(cat)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("standing"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c2")]], s)
    r = approve(r.last_agent, r, s, [[function_call("issue_refund", {"invoice_id": "A1", "amount": 999},
                                                     call_id="c3")], [assistant_message("done")]], always=True)
    assert guarded_desk.REFUNDS_MADE == [("A1", 40.0)]
    assert outputs(r)[-1].startswith("Refused by the tool check (standing): 'issue_refund' did not run: only a "
                                     "standing approval (always_approve) covers it")
    assert history(s)[-1][:4] == ("issue_refund", "refuse", ["standing"], False)


def test_a_run_config_the_guard_did_not_make_refuses_every_call():
    from agents.run_config import ToolExecutionConfig

    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("config"))
    script = [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")], [assistant_message("ok")]]
    r = run(triage, script, s, run_config=RunConfig())
    assert "Refused by the tool check (guard_error)" in outputs(r)[-1] and "not bound to the guard's history" in outputs(r)[-1]
    rc = s.run_config()
    rc.tool_execution = ToolExecutionConfig(pre_approval_tool_input_guardrails=False)
    r = run(triage, script, s, run_config=rc)
    assert "pre_approval_tool_input_guardrails" in outputs(r)[-1] and "guard_error" in outputs(r)[-1]


def test_a_tampered_history_in_the_session_refuses_every_call():
    guard = AgentGuard(CAT, key="k3y")
    triage, _ = desk(guard)
    inner = SQLiteSession("tamper")
    s = guard.session(inner)
    run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                 [function_call("read_customer_email", {"invoice_id": "A1"}, call_id="c2")],
                 [assistant_message("ok")]], s)
    assert [e[0] for e in history(s)] == ["lookup_invoice", "read_customer_email"]
    # someone edits the stored history: the outside read is made to look like it never ran (no taint)
    items = asyncio.run(inner.get_items())
    for it in items:
        if it.get("type") == "stalwart_guard_record" and "read_customer_email" in it["record"]:
            it["record"] = it["record"].replace('"outside":true', '"outside":false')
    asyncio.run(inner.clear_session())
    asyncio.run(inner.add_items(items))
    fresh = guard.session(inner)  # another process reading the same session
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A2"}, call_id="c9")],
                     [assistant_message("ok")]], fresh)
    assert outputs(r)[-1].startswith("Refused by the tool check (history_invalid)"), outputs(r)
    assert "was changed after it was written" in outputs(r)[-1]


def test_the_session_wrapper_keeps_the_history_out_of_the_models_input_and_never_drops_it():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    inner = SQLiteSession("wrapper")
    s = guard.session(inner)
    run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                 [assistant_message("ok")]], s)
    conv = asyncio.run(s.get_items())
    assert conv and not any(i.get("type", "").startswith("stalwart_guard") for i in conv)
    asyncio.run(s.pop_item())
    asyncio.run(s.clear_session())
    assert asyncio.run(s.get_items()) == []
    again = guard.session(inner)
    asyncio.run(again.load())
    assert [e["tool"] for e in read_history(again.records)] == ["lookup_invoice"]
    with pytest.warns(UserWarning, match="in memory only"):
        guard.session()


# ------------------------------------------------------------------ the guard's answers
def test_order_rule_and_at_most_hold_across_two_runs_sharing_a_session():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("turns"))
    # turn 1: a refund before the invoice was looked up is refused (order.after), without asking
    r = run(triage, [HANDOFF, [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c1")],
                     [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c2")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c3")]], s)
    assert outputs(r)[0].startswith("Refused by the tool check (order_rule): 'issue_refund' must come after "
                                    "'lookup_invoice'")
    assert [(i.name, i.raw_item.call_id) for i in r.interruptions] == [("issue_refund", "c3")]
    assert s.question(r.interruptions[0])["reasons"] == ["write"]
    r = approve(r.last_agent, r, s, [[assistant_message("Refunded.")]])
    assert r.final_output == "Refunded." and guarded_desk.REFUNDS_MADE == [("A1", 40.0)]
    # turn 2, a new Runner.run on the same session: at_most 1 per session refuses a second refund
    r2 = run(r.last_agent, [[function_call("issue_refund", {"invoice_id": "A1", "amount": 5}, call_id="c4")],
                            [assistant_message("Already refunded.")]], s, input_or_state="refund 5 more")
    assert r2.interruptions == [] and guarded_desk.REFUNDS_MADE == [("A1", 40.0)]
    assert outputs(r2) == ["Refused by the tool check (order_rule): 'issue_refund' may run at most 1 time(s) in this "
                           "session, and 1 ran or are asked for"]
    assert history(s) == [
        ("issue_refund", "refuse", ["order_rule"], False, None, 1),
        ("lookup_invoice", "allow", [], True, None, 1),
        ("issue_refund", "confirm", ["write"], True, "approve", 1),
        ("issue_refund", "refuse", ["order_rule"], False, None, 2),
    ]


def test_an_approved_write_runs_once_with_exactly_its_arguments():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("approved"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 12.5}, call_id="c2")]], s)
    assert guarded_desk.REFUNDS_MADE == []
    r = approve(r.last_agent, r, s, [[assistant_message("Refunded.")]])
    assert guarded_desk.REFUNDS_MADE == [("A1", 12.5)]
    e = read_history(s.records)[-1]
    assert (e["tool"], e["args"], e["call_id"], e["decision"], e["answer"], e["ran"], e["node"]) == (
        "issue_refund", {"invoice_id": "A1", "amount": 12.5}, "c2", "confirm", "approve", True, "Refunds:tools")


def test_a_rejected_write_runs_nothing_and_the_answer_is_on_record():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("rejected"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c2")]], s)
    r = approve(r.last_agent, r, s, [[function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c3")],
                                     [assistant_message("Not refunded.")]], reject=True)
    assert r.final_output == "Not refunded." and guarded_desk.REFUNDS_MADE == []
    assert history(s)[1:] == [("issue_refund", "confirm", ["write", "declined"], False, "reject", 1),
                              ("lookup_invoice", "allow", [], True, None, 1)]
    # a declined call is not counted: the person may still approve a refund later (at_most 1)
    r = run(r.last_agent, [[function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c4")]], s,
            input_or_state="yes, refund it")
    assert [i.name for i in r.interruptions] == ["issue_refund"]


def test_a_write_after_outside_content_is_asked_as_tainted():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("tainted"))
    r = run(triage, [HANDOFF, [function_call("read_customer_email", {"invoice_id": "A1"}, call_id="c1"),
                               function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c2")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c3")]], s)
    assert [i.name for i in r.interruptions] == ["issue_refund"]
    assert s.question(r.interruptions[0])["reasons"] == ["tainted_call", "write"]
    r = approve(r.last_agent, r, s, [[assistant_message("Refunded.")]])
    assert guarded_desk.REFUNDS_MADE == [("A1", 40.0)]
    assert history(s)[-1][:5] == ("issue_refund", "confirm", ["tainted_call", "write"], True, "approve")
    # with taint_policy refuse, the same write is refused and nobody is asked
    guarded_desk.REFUNDS_MADE.clear()
    strict = AgentGuard(CAT, taint_policy="refuse")
    triage2, _ = desk(strict)
    s2 = strict.session(SQLiteSession("tainted-refuse"))
    r = run(triage2, [HANDOFF, [function_call("read_customer_email", {"invoice_id": "A1"}, call_id="c1"),
                                function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c2")],
                      [function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c3")],
                      [assistant_message("ok")]], s2)
    assert r.interruptions == [] and outputs(r)[-1].startswith("Refused by the tool check (tainted_call)")


# ------------------------------------------------------------------ wrapping, and what the export credits
def test_wrap_reaches_agents_as_tools_and_leaves_hosted_tools_plain():
    guard = AgentGuard(CAT)
    triage, refunds = desk()
    helper = Agent(name="Helper", tools=[guarded_desk.lookup_invoice])
    search = WebSearchTool()
    boss = Agent(name="Boss", tools=[helper.as_tool(tool_name="ask_helper", tool_description="asks"), search],
                 handoffs=[triage])
    guard.wrap(boss)
    assert guarded_tool(helper.tools[0]) is not None and all(guarded_tool(t) for t in refunds.tools)
    assert boss.tools[1] is search and guarded_tool(boss.tools[0]) is None  # hosted; the agent tool itself
    before = list(refunds.tools)
    guard.wrap(boss)
    assert refunds.tools == before and all(a is b for a, b in zip(refunds.tools, before))
    with pytest.raises(GuardConfigError, match="guarded by another guard"):
        AgentGuard(CAT).wrap(triage)
    with pytest.raises(TypeError, match="expects an OpenAI Agents SDK Agent"):
        guard.wrap("triage")


def test_the_wrapped_app_exports_guarded_and_passes_the_gate(binary, tmp_path):
    plain, _ = desk()
    ex = export_agent(plain)
    assert {n["id"]: n["kind"] for n in ex["nodes"]}["Refunds:tools"] == "tools_plain"
    report = verify(binary, tmp_path, ex, CAT)
    assert report["rc"] == 1
    # every call plain (O1); the refund can follow the customer's e-mail unconfirmed (O6), come before the
    # look-up (O3) and run twice (O5)
    assert blocking(report) == [("QG001", t, "Refunds:tools")
                                for t in ("issue_refund", "lookup_invoice", "read_customer_email")] + \
        [("QG011", "issue_refund", "Refunds:tools"), ("QG014", "issue_refund", "Refunds:tools"),
         ("QG014", "issue_refund", "Refunds:tools")]

    guard = AgentGuard(CAT)
    triage, refunds = desk(guard)
    ex = export_agent(triage)
    node = next(n for n in ex["nodes"] if n["id"] == "Refunds:tools")
    assert node["kind"] == "tools" and node["tools"] == ["lookup_invoice", "read_customer_email", "issue_refund"]
    assert "interrupts" not in ex
    assert not any("run without a guard" in w for w in ex["warnings"])
    assert ex["tool_locations"]["issue_refund"]["location"]["line"] > 0  # the user's def, through the guard's copy
    report = verify(binary, tmp_path, ex, CAT)
    assert report["rc"] == 0 and blocking(report) == []

    # one tool put back unwrapped (or a piece of the guard replaced): the node is not credited
    refunds.tools[2] = guarded_desk.issue_refund
    ex = export_agent(triage)
    assert next(n for n in ex["nodes"] if n["id"] == "Refunds:tools")["kind"] == "tools_plain"
    assert any("are guarded, but not issue_refund" in w for w in ex["warnings"])
    assert verify(binary, tmp_path, ex, CAT)["rc"] == 1
    triage2, refunds2 = desk(AgentGuard(CAT))
    refunds2.tools[0].tool_input_guardrails = []
    assert next(n for n in export_agent(triage2)["nodes"] if n["id"] == "Refunds:tools")["kind"] == "tools_plain"


def test_a_guarded_tools_own_approval_is_a_review_that_is_not_standing(binary, tmp_path):
    from oa_apps import approval

    cat = {"format": "qls-catalogue/1", "tools": {
        "get_order": {"kind": "read", "args": {"order_id": {"type": "string"}}},
        "cancel_order": {"kind": "write", "args": {"order_id": {"type": "string"}}},
        "pay_supplier": {"kind": "write", "args": {"supplier": {"type": "string"}, "amount": {"type": "number"}}}}}
    guard = AgentGuard(cat)
    a = Agent(name="Orders2", tools=list(approval.orders_agent.tools))
    guard.wrap(a)
    ex = export_agent(a)
    assert ex["interrupts"] == [{"node": "Orders2:tools", "when": "call", "tool": "cancel_order", "standing": False}]
    assert next(n for n in ex["nodes"] if n["id"] == "Orders2:tools")["kind"] == "tools"
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 0 and blocking(report) == []
    renamed = copy.copy(a.tools[0])
    renamed.name = "get_order_v2"  # a guarded copy renamed: the guard's mark names another tool
    assert guarded_tool(renamed) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert approval.orders_agent.tools[1].needs_approval is True  # the application's own agent is untouched


def test_calls_of_one_message_cannot_pass_a_limit_together():
    """Two refunds in one model message (the SDK runs them concurrently): at_most 1 asks about the
    first and refuses the second before anyone is asked."""
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("batch"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 1}, call_id="c2"),
                      function_call("issue_refund", {"invoice_id": "A1", "amount": 2}, call_id="c3")]], s)
    assert [i.raw_item.call_id for i in r.interruptions] == ["c2"]
    assert outputs(r)[-1].startswith("Refused by the tool check (order_rule): 'issue_refund' may run at most 1")
    r = approve(r.last_agent, r, s, [[assistant_message("done")]])
    assert guarded_desk.REFUNDS_MADE == [("A1", 1.0)]


def test_an_agent_as_tools_own_tools_are_guarded_in_its_nested_run():
    guard = AgentGuard(CAT)
    helper = Agent(name="Helper", tools=[guarded_desk.lookup_invoice, guarded_desk.issue_refund])
    boss = Agent(name="Boss", tools=[helper.as_tool(tool_name="ask_helper", tool_description="asks")])
    guard.wrap(boss)
    s = guard.session(SQLiteSession("nested"))
    r = run(boss, [[function_call("ask_helper", {"input": "refund A1"}, call_id="t1")],
                   [function_call("issue_refund", {"invoice_id": "A1", "amount": 3}, call_id="n1")],
                   [assistant_message("could not")], [assistant_message("Helper could not refund.")]], s)
    assert r.final_output == "Helper could not refund." and guarded_desk.REFUNDS_MADE == []
    assert history(s) == [("issue_refund", "refuse", ["order_rule"], False, None, 1)]
    assert read_history(s.records)[0]["node"] == "Helper:tools"


def test_a_catalogue_that_cannot_be_read_refuses_every_call(tmp_path):
    guard = AgentGuard(str(tmp_path / "not-written-yet.json"))
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("missing"))
    r = run(triage, [HANDOFF, [function_call("issue_refund", {"invoice_id": "A1", "amount": 1}, call_id="c1")],
                     [assistant_message("ok")]], s)
    assert guarded_desk.REFUNDS_MADE == [] and r.interruptions == []
    assert len(outputs(r)) == 1 and outputs(r)[0].startswith("Refused by the tool check (guard_error): the tool check "
                                                             "could not decide the call (GuardConfigError")


def test_a_read_with_an_argument_it_does_not_declare_is_refused_not_asked():
    """The SDK puts a call whose arguments do not validate to the person whatever `needs_approval`
    says; the guard's guardrail, run before approvals, refuses it first."""
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("schema-read"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1", "verbose": True}, call_id="c1")],
                     [assistant_message("ok")]], s)
    assert r.interruptions == [] and outputs(r)[0].startswith("Refused by the tool check (argument_schema)")


def test_per_turn_limits_reset_at_a_new_message_and_not_at_a_resumed_run():
    cat = json.loads(json.dumps(CAT))
    cat["tools"]["lookup_invoice"]["at_most"] = {"count": 1, "per": "turn"}
    guard = AgentGuard(cat)
    triage, _ = desk(guard)
    s = guard.session(SQLiteSession("per-turn"))
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 1}, call_id="c2")]], s)
    r = approve(r.last_agent, r, s, [[function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c3")],
                                     [assistant_message("done")]])
    assert outputs(r)[-1].startswith("Refused by the tool check (order_rule): 'lookup_invoice' may run at most 1 "
                                     "time(s) in this turn")
    r = run(r.last_agent, [[function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c4")],
                           [assistant_message("ok")]], s, input_or_state="look again please")
    assert outputs(r) == ["invoice A1: 40 EUR, paid"]
    assert [(t, d, turn) for t, d, _, _, _, turn in history(s)] == [
        ("lookup_invoice", "allow", 1), ("issue_refund", "confirm", 1), ("lookup_invoice", "refuse", 1),
        ("lookup_invoice", "allow", 2)]


def test_without_a_session_the_history_holds_over_the_runs_given_its_run_config():
    guard = AgentGuard(CAT)
    triage, _ = desk(guard)
    with pytest.warns(UserWarning, match="in memory only"):
        memory = guard.session()
    rc = memory.run_config()
    r = run(triage, [HANDOFF, [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
                     [function_call("issue_refund", {"invoice_id": "A1", "amount": 1}, call_id="c2")]],
            run_config=rc)
    state = r.to_state()
    state.approve(r.interruptions[0])
    rc.model = ScriptedModel([[assistant_message("done")]])
    asyncio.run(Runner.run(r.last_agent, state, run_config=rc))
    r = run(r.last_agent, [[function_call("issue_refund", {"invoice_id": "A1", "amount": 1}, call_id="c3")],
                           [assistant_message("no")]], run_config=rc, input_or_state="again")
    assert guarded_desk.REFUNDS_MADE == [("A1", 1.0)]
    assert outputs(r)[-1].startswith("Refused by the tool check (order_rule): 'issue_refund' may run at most 1")


def test_hosted_and_local_tools_stay_plain_and_the_export_says_so(binary, tmp_path):
    """SPEC 3.1 "The guard's view": the provider's web search is a plain call the guard never sees,
    so a guarded write after it still breaks O6 (QG011, in the agent's own region: the person is
    asked, but not told outside text came in); a local tool (the SDK runs no tool guardrail for it) makes its node plain."""
    from agents import LocalShellTool

    from oa_apps import hosted
    from stalwart_export.openai_agents import export_agent_catalogue

    a = hosted.build()
    cat = export_agent_catalogue(a, {"save_note": {"kind": "write"}})
    AgentGuard(cat).wrap(a)
    ex = export_agent(a)
    assert [(n["id"], n["kind"], n.get("hosted")) for n in ex["nodes"]][1:3] == [
        ("Researcher", "model", ["web_search"]), ("Researcher:tools", "tools", None)]
    assert ex["warnings"][0].startswith("agent 'Researcher' has provider-hosted tools (web_search): the provider calls "
                                        "them inside the model call, so no guard sees those calls")
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 1
    assert blocking(report) == [("QG001", "web_search", "Researcher"), ("QG011", "save_note", "Researcher:tools")]

    b = Agent(name="Sh", tools=[hosted.build().tools[-1], LocalShellTool(executor=lambda req: "ok")])
    AgentGuard(cat).wrap(b)
    assert guarded_tool(b.tools[0]) is not None and type(b.tools[1]).__name__ == "LocalShellTool"
    ex = export_agent(b)
    assert next(n for n in ex["nodes"] if n["id"] == "Sh:tools")["kind"] == "tools_plain"
    assert ex["warnings"][0] == ("agent 'Sh''s tools save_note are guarded, but not local_shell (LocalShellTool: the SDK "
                                 "runs no tool guardrail for it): its tool node is exported as tools_plain (every call "
                                 "plain); wrap every tool, or move the others to another agent")
