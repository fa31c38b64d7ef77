"""Issue 30 item 4, its last sentence: `python -m stalwart_export replay` drives an OpenAI Agents
SDK application too. Each app of tests/oa_apps/ is exported with the CLI, verified with the Rust
binary, and the witness script of a finding (`--replay FP --format json`) replayed on the real
SDK with its test model (openai_agents/replay.py): hand-offs, a tool node's calls, approvals
approved (once, or for good with `always_approve`) and rejected, agents as tools (and the
approval of one), StopAtTools, two turns. A real agent lacking the witness's hand-off, tool or
approval is exit 1 naming the step; what the harness cannot drive (a hosted call, MCP servers) is
exit 2 naming why. Skipped, saying so, without `openai-agents`."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents.testing", reason="openai-agents is not installed (python/requirements-test.txt pins it): "
                                             "the SDK replay tests are skipped")

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
FOLLOWS = "the real application follows the witness and makes its calls"
DEPARTS = "the real application does not follow the witness: "


def env(*extra: Path) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, (*extra, HERE, PYTHON_DIR))))


_MADE: dict[tuple, tuple[Path, Path, dict]] = {}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Where the module's exports and scripts are written (each made once)."""
    return tmp_path_factory.mktemp("sdk_replay")


def witness(binary: str, tmp: Path, spec: str, finding: tuple, words: dict | None = None,
            session_steps: int | None = None, extra: tuple = ()) -> tuple[Path, Path, dict]:
    """(the script, the catalogue, the script's JSON) of `finding` (rule, subject, node) on the
    export of `spec` made with `python -m stalwart_export` and verified with the Rust binary (once
    per module: the scripts are read, never changed)."""
    key = (spec, finding, json.dumps(words, sort_keys=True), session_steps)
    if key not in _MADE:
        _MADE[key] = _witness(binary, tmp / f"w{len(_MADE)}", spec, finding, words, session_steps, extra)
    script, cat, s = _MADE[key]
    return script, cat, copy.deepcopy(s)


def _witness(binary: str, d: Path, spec: str, finding: tuple, words: dict | None,
             session_steps: int | None, extra: tuple) -> tuple[Path, Path, dict]:
    d.mkdir()
    g, c = d / "graph.json", d / "cat.json"
    args = [sys.executable, "-m", "stalwart_export", spec, "-o", str(g), "--catalogue", str(c)]
    if words is not None:
        (d / "words.json").write_text(json.dumps(words))
        args += ["--words", str(d / "words.json")]
    p = subprocess.run(args, capture_output=True, text=True, cwd=HERE, env=env(*extra), timeout=300)
    assert p.returncode == 0, p.stderr
    more = ["--session-steps", str(session_steps)] if session_steps else []
    p = subprocess.run([binary, "verify", "--graph", str(g), "--catalogue", str(c), "--format", "json", *more],
                       capture_output=True, text=True, timeout=600)
    report = json.loads(p.stdout)
    f = next((f for f in report["findings"] if (f["rule"], f["subject"], f.get("node")) == finding), None)
    assert f is not None, [(f["rule"], f["subject"], f.get("node")) for f in report["findings"]]
    p = subprocess.run([binary, "verify", "--graph", str(g), "--catalogue", str(c), "--replay", f["fingerprint"],
                        "--format", "json", *more], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    script = d / f"{finding[0]}_{finding[1]}.json"
    script.write_text(p.stdout)
    return script, c, json.loads(p.stdout)


def replay(script: Path, cat: Path, spec: str, *args, extra: tuple = ()) -> subprocess.CompletedProcess:
    """`python -m stalwart_export replay SCRIPT CAT --graph SPEC` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "stalwart_export", "replay", str(script), str(cat), "--graph", spec,
                           *map(str, args)], capture_output=True, text=True, cwd=HERE, env=env(*extra), timeout=300)


def line(p: subprocess.CompletedProcess) -> str:
    """The one line the replay prints (stdout for exit 0 and 1, stderr for 2)."""
    out = (p.stdout if p.returncode in (0, 1) else p.stderr).strip().splitlines()
    assert len(out) == 1 and "Traceback" not in p.stderr, p.stdout + p.stderr
    return out[0]


def kinds(script: dict) -> list[tuple]:
    return [(s["kind"], s["node"], s.get("to") or s.get("tool")) for s in script["steps"]]


def write(path: Path, script: dict, steps: list[dict]) -> Path:
    """`script` with `steps` (renumbered) in place of its own, written to `path`: a witness of the
    same export taking another route (the Rust engines choose a yes where either answer will do)."""
    s = copy.deepcopy(script)
    s["steps"] = [dict(st, step=k + 1) for k, st in enumerate(copy.deepcopy(steps))]
    path.write_text(json.dumps(s))
    return path


def drive(script: dict, agent):
    """The SDK replay in this process: its driver (what the run did)."""
    from stalwart_export.openai_agents.replay import drive as run

    return run(script, agent)


# ------------------------------------------------------------------ a triage agent handing off
def test_triage_hands_off_then_refunds(binary, made, tmp_path):
    script, cat, s = witness(binary, made, "oa_apps.triage:triage_agent", ("QG001", "issue_refund", "Refunds:tools"))
    assert ("choose", "Triage", "Refunds") in kinds(s)  # the hand-off the scripted model makes
    p = replay(script, cat, "oa_apps.triage:triage_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p) == f"finding {s['finding']['index']} (QG001 on issue_refund): {FOLLOWS} ['issue_refund']"

    from oa_apps import triage

    d = drive(s, triage.triage_agent)
    assert d.failure is None
    assert d.visited == ["Triage", "Refunds", "Refunds:tools", "Refunds"]  # the last: the answer after the witness
    assert d.calls == [("Refunds:tools", "issue_refund")]
    # the hand-off is the SDK's own tool, the call's arguments valid for the tool's schema
    out = [(node, [(i.name, json.loads(i.arguments)) for i in items if i.type == "function_call"])
           for node, items in d.outputs]
    assert out == [("Triage", [("transfer_to_refunds", {})]),
                   ("Refunds", [("issue_refund", {"invoice_id": "x", "amount": 1.0})]), ("Refunds", [])]


def test_the_users_tools_are_put_back_and_never_run(binary, made, tmp_path):
    """The stubs stand in for the run only: every tool's on_invoke_tool is the application's own
    after it; the real function never runs (a tool that raises is replayed through)."""
    (tmp_path / "raising_shop.py").write_text('''
from agents import Agent, function_tool


@function_tool
def issue_refund(invoice_id: str, amount: float) -> str:
    """Refund an invoice."""
    raise RuntimeError("no money moves in a replay")


refunds = Agent(name="Refunds", tools=[issue_refund])
triage_agent = Agent(name="Triage", handoffs=[refunds])
''')
    script, cat, s = witness(binary, made, "oa_apps.triage:triage_agent", ("QG001", "issue_refund", "Refunds:tools"))
    p = replay(script, cat, "raising_shop:triage_agent", extra=(tmp_path,))
    assert p.returncode == 0 and line(p).endswith(f"{FOLLOWS} ['issue_refund']"), p.stdout + p.stderr

    from oa_apps import research, triage

    before = {id(t): t.on_invoke_tool for a in (triage.billing_agent, triage.refund_agent, research.lead_agent,
                                                  research.researcher, research.publisher) for t in a.tools}
    drive(s, triage.triage_agent)
    r_script, _, rs = witness(binary, made, "oa_apps.research:lead_agent",
                              ("QG001", "search_notes", "research/Researcher:tools"))
    drive(rs, research.lead_agent)
    after = {id(t): t.on_invoke_tool for a in (triage.billing_agent, triage.refund_agent, research.lead_agent,
                                                 research.researcher, research.publisher) for t in a.tools}
    assert after == before


# ------------------------------------------------------------------ needs_approval
WORDS_OUTSIDE = {"get_order": {"kind": "read", "reads_outside": True}, "cancel_order": {"kind": "write"},
                 "pay_supplier": {"kind": "write"}}


def test_an_approved_call_replays(binary, made, tmp_path):
    script, cat, s = witness(binary, made, "oa_apps.approval:orders_agent", ("QG001", "cancel_order", "Orders:tools"))
    call = s["steps"][-1]
    assert (call["kind"], call["tool"], call["when"], call["yes"]) == ("call", "cancel_order", "call", True)
    p = replay(script, cat, "oa_apps.approval:orders_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p) == f"finding {s['finding']['index']} (QG001 on cancel_order): {FOLLOWS} ['cancel_order']"


def test_a_standing_approval_is_always_approve(binary, made, tmp_path):
    """QG011: the person approves cancel_order for good (`always_approve=True`), so its later call
    runs unasked on the outside text get_order brought. Without the standing answer the SDK asks
    again, and the witness has no answer there: exit 1 at that call."""
    script, cat, s = witness(binary, made, "oa_apps.approval:orders_agent", ("QG011", "cancel_order", "Orders:tools"),
                             WORDS_OUTSIDE)
    calls = [(st["tool"], st.get("when"), st.get("standing", False)) for st in s["steps"] if st["kind"] == "call"]
    assert calls == [("get_order", None, False), ("cancel_order", "call", True), ("cancel_order", None, True)]
    p = replay(script, cat, "oa_apps.approval:orders_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['get_order', 'cancel_order', 'cancel_order']")

    once = copy.deepcopy(s["steps"])
    asked = next(st for st in once if st.get("when") == "call")
    del asked["standing"]
    p = replay(write(tmp_path / "once.json", s, once), cat, "oa_apps.approval:orders_agent")
    assert p.returncode == 1
    last = s["steps"][-1]["step"]
    assert line(p).endswith(f"{DEPARTS}step {last} (call 'cancel_order' at 'Orders:tools'): the run asks a person to "
                            "approve 'cancel_order' at 'Orders:tools' (turn 1), and the witness has no answer for it "
                            "there"), p.stdout


def test_a_rejected_call_does_not_run_and_the_agent_goes_on(binary, made, tmp_path):
    """The person rejects cancel_order (`state.reject`): the stub never runs, the model is told so
    (the SDK's rejection message), and the agent's next call runs."""
    _, cat, s = witness(binary, made, "oa_apps.approval:orders_agent", ("QG001", "cancel_order", "Orders:tools"))
    head = [dict(st) for st in s["steps"]]
    no = head[-1]
    no.update(yes=False, refused=True)
    del no["violation"]
    t = {"turn": 1}
    steps = head + [dict(t, kind="choose", node="Orders:tools", node_kind="tools_plain", to="Orders"),
                    dict(t, kind="enter", node="Orders", node_kind="model"),
                    dict(t, kind="choose", node="Orders", node_kind="model", to="Orders:tools"),
                    dict(t, kind="enter", node="Orders:tools", node_kind="tools_plain"),
                    dict(t, kind="call", node="Orders:tools", node_kind="tools_plain", tool="get_order",
                         violation=True)]
    script = write(tmp_path / "rejected.json", s, steps)
    p = replay(script, cat, "oa_apps.approval:orders_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['get_order']")

    from agents.tool import DEFAULT_APPROVAL_REJECTION_MESSAGE
    from oa_apps import approval

    d = drive(json.loads(script.read_text()), approval.orders_agent)
    assert d.failure is None and d.answers == []
    assert d.calls == [("Orders:tools", "get_order")]
    assert d.visited[:4] == ["Orders", "Orders:tools", "Orders", "Orders:tools"]
    told = [i for i in d.script.calls[1].input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert [i["output"] for i in told] == [DEFAULT_APPROVAL_REJECTION_MESSAGE]


def test_a_review_the_real_agent_never_asks_for_is_named(binary, made, tmp_path):
    """The witness answers an approval of cancel_order; an application whose cancel_order has no
    needs_approval runs it unasked: exit 1 at that step."""
    (tmp_path / "unreviewed.py").write_text('''
from agents import Agent, function_tool


@function_tool
def get_order(order_id: str) -> str:
    """Read an order."""
    return "shipped"


@function_tool
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return "cancelled"


orders_agent = Agent(name="Orders", tools=[get_order, cancel_order])
''')
    script, cat, s = witness(binary, made, "oa_apps.approval:orders_agent", ("QG001", "cancel_order", "Orders:tools"))
    p = replay(script, cat, "unreviewed:orders_agent", extra=(tmp_path,))
    assert p.returncode == 1
    k = s["steps"][-1]["step"]
    assert line(p).endswith(f"{DEPARTS}step {k} (call 'cancel_order' at 'Orders:tools'): the witness answers a "
                            "person's approval at 'Orders:tools', and the run never asked for one there"), p.stdout


# ------------------------------------------------------------------ agents as tools
def test_an_agent_tools_inner_call_replays(binary, made, tmp_path):
    """research.py is as_tools.py's pattern with tools inside the agents used as tools (as_tools.py
    binds no tool, so none of its findings has a route to replay)."""
    script, cat, s = witness(binary, made, "oa_apps.research:lead_agent",
                             ("QG001", "search_notes", "research/Researcher:tools"))
    p = replay(script, cat, "oa_apps.research:lead_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['search_notes']")

    from oa_apps import research

    d = drive(s, research.lead_agent)
    assert d.visited == ["Lead", "research", "research/Researcher", "research/Researcher:tools", "research/Researcher",
                         "Lead"]
    assert d.calls == [("research/Researcher:tools", "search_notes")]


def test_an_agent_tools_approval_approved_and_rejected(binary, made, tmp_path):
    script, cat, s = witness(binary, made, "oa_apps.research:lead_agent",
                             ("QG001", "post_update", "publish/Publisher:tools"))
    assert ("confirm", "Lead:approve:publish", None) in kinds(s)
    p = replay(script, cat, "oa_apps.research:lead_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['post_update']")

    # rejected: the publisher never runs, the lead goes on to research
    _, _, r = witness(binary, made, "oa_apps.research:lead_agent",
                      ("QG001", "search_notes", "research/Researcher:tools"))
    k = next(i for i, st in enumerate(s["steps"]) if st["kind"] == "confirm")
    head = [dict(st) for st in s["steps"][:k + 1]]
    head[-1]["yes"] = False
    back = {"turn": 1, "kind": "choose", "node": "Lead:approve:publish", "node_kind": "step", "to": "Lead"}
    rest = r["steps"][next(i for i, st in enumerate(r["steps"]) if st["kind"] == "enter" and st["node"] == "Lead"):]
    rejected = write(tmp_path / "rejected.json", s, head + [back] + rest)
    p = replay(rejected, cat, "oa_apps.research:lead_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['search_notes']")

    from oa_apps import research

    d = drive(json.loads(rejected.read_text()), research.lead_agent)
    assert d.visited[:4] == ["Lead", "Lead:approve:publish", "Lead", "research"]
    assert not any(n.startswith("publish") for n in d.visited)


# ------------------------------------------------------------------ StopAtTools
def test_stop_at_tools_ends_on_the_tool_or_goes_back(binary, made, tmp_path):
    from oa_apps import stop_at

    script, cat, s = witness(binary, made, "oa_apps.stop_at:weather_agent", ("QG001", "get_weather", "Weather:tools"))
    p = replay(script, cat, "oa_apps.stop_at:weather_agent")
    assert p.returncode == 0 and line(p).endswith(f"{FOLLOWS} ['get_weather']"), p.stdout + p.stderr
    d = drive(s, stop_at.weather_agent)
    assert d.visited == ["Weather", "Weather:tools"]  # the run ends on get_weather's output: no other model call

    script, cat, s = witness(binary, made, "oa_apps.stop_at:weather_agent", ("QG001", "sum_numbers", "Weather:tools"))
    p = replay(script, cat, "oa_apps.stop_at:weather_agent")
    assert p.returncode == 0 and line(p).endswith(f"{FOLLOWS} ['sum_numbers']"), p.stdout + p.stderr
    d = drive(s, stop_at.weather_agent)
    assert d.visited == ["Weather", "Weather:tools", "Weather"]  # sum_numbers is not a stop: the model runs again


def test_a_route_the_export_allows_and_stop_at_tools_does_not_is_named(binary, made, tmp_path):
    """The export maps StopAtTools to both `Weather:tools -> Weather` and `-> __end__` (whichever
    tool ran); QG014's witness calls get_weather, goes back to the model and calls sum_numbers:
    on the real SDK the run ends on get_weather's output, so the replay departs at step 8."""
    words = {"get_weather": {"kind": "read"}, "sum_numbers": {"kind": "read", "order": {"not_after": ["get_weather"]}}}
    script, cat, s = witness(binary, made, "oa_apps.stop_at:weather_agent", ("QG014", "sum_numbers", "Weather:tools"),
                             words)
    assert [st["tool"] for st in s["steps"] if st["kind"] == "call"] == ["get_weather", "sum_numbers"]
    p = replay(script, cat, "oa_apps.stop_at:weather_agent")
    assert p.returncode == 1
    assert line(p).endswith(f"{DEPARTS}step 8 (enter 'Weather'): expected the run to enter 'Weather' after "
                            "'Weather:tools'; the application's run ended there (it entered ['Weather', "
                            "'Weather:tools'], made calls ['get_weather'])"), p.stdout


# ------------------------------------------------------------------ several turns
def test_two_turns_continue_from_the_first_result(binary, made, tmp_path):
    """QG003 (searched over two turns): support reads the customer's ticket in turn 1; turn 2
    starts at refunds (as the export allows: the application passes the agent) and refunds on
    the outside text. Turn 2 is a second Runner.run on turn 1's to_input_list()."""
    from oa_apps import desk

    script, cat, s = witness(binary, made, "oa_apps.desk:desk_agent", ("QG003", "issue_refund", "Refunds:tools"),
                             desk.WORDS, session_steps=2)
    ends = [st for st in s["steps"] if st["kind"] == "turn_end"]
    assert len(ends) == 1 and ("choose", "__start__", "Refunds") in kinds(s)
    p = replay(script, cat, "oa_apps.desk:desk_agent")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['read_ticket', 'issue_refund']")
    assert "note: turn 2 starts at 'Refunds' as the witness does" in p.stderr

    d = drive(s, desk.desk_agent)
    assert d.visited == ["Triage", "Support", "Support:tools", "Support", "Refunds", "Refunds:tools", "Refunds"]
    turn2 = d.script.calls[4]  # Refunds' first model call: it sees the ticket turn 1 read, then the new message
    said = json.dumps(turn2.input)
    assert "stub result of read_ticket" in said and said.index("stub result of read_ticket") < said.index("turn 2")


# ------------------------------------------------------------------ what does not follow, what cannot run
def test_an_agent_lacking_the_witness_hand_off_or_tool_is_named(binary, made, tmp_path):
    """The triage witnesses replayed on the desk (its triage hands off to support and refunds, and
    its refunds agent has no lookup_invoice)."""
    script, cat, s = witness(binary, made, "oa_apps.triage:triage_agent", ("QG001", "lookup_invoice", "Billing:tools"))
    p = replay(script, cat, "oa_apps.desk:desk_agent")
    assert p.returncode == 1
    assert line(p) == (f"finding {s['finding']['index']} (QG001 on lookup_invoice): {DEPARTS}step 4 (choose 'Billing' "
                       "at 'Triage'): the witness hands off to 'Billing', and agent 'Triage' offers no hand-off to it "
                       "(its hand-offs: transfer_to_support to Support, transfer_to_refunds to Refunds)")
    script, cat, s = witness(binary, made, "oa_apps.triage:triage_agent", ("QG001", "lookup_invoice", "Refunds:tools"))
    p = replay(script, cat, "oa_apps.desk:desk_agent")
    assert p.returncode == 1
    assert line(p).endswith(f"{DEPARTS}step 8 (call 'lookup_invoice' at 'Refunds:tools'): the witness calls "
                            "'lookup_invoice', and agent 'Refunds' offers no such tool (its tools: issue_refund)")
    p = replay(script, cat, "oa_apps.approval:orders_agent")
    assert p.returncode == 1
    assert line(p).endswith(f"{DEPARTS}step 2 (choose 'Triage' at '__start__'): the witness starts turn 1 at 'Triage', "
                            "and the application starts at agent 'Orders'")


def test_a_hosted_call_is_the_scripted_models_own(binary, made, tmp_path):
    """The provider's web search is made by the scripted model (a web_search_call item of the
    agent's WebSearchTool), recorded as the witness's call at the model node; an agent without
    the hosted tool is exit 1 at that call."""
    script, cat, s = witness(binary, made, "oa_apps.hosted:build", ("QG011", "save_note", "Researcher:tools"))
    k = next(st["step"] for st in s["steps"] if st["kind"] == "call" and st["tool"] == "web_search")
    p = replay(script, cat, "oa_apps.hosted:build")
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['web_search', 'save_note']")
    (tmp_path / "no_search.py").write_text("from agents import Agent\nfrom oa_apps.hosted import save_note\n\n"
                                           "researcher = Agent(name='Researcher', tools=[save_note])\n")
    p = replay(script, cat, "no_search:researcher", extra=(tmp_path,))
    assert p.returncode == 1
    assert line(p).endswith(f"{DEPARTS}step {k} (call 'web_search' at 'Researcher'): the witness's model call makes "
                            "the hosted call 'web_search', and agent 'Researcher' has no such hosted tool (its hosted "
                            "tools: none)")


def test_what_the_harness_cannot_drive_is_one_line_exit_2(binary, made, tmp_path):
    (tmp_path / "wiki_desk.py").write_text('''
from agents import Agent, HostedMCPTool

wiki = HostedMCPTool(tool_config={"type": "mcp", "server_label": "deepwiki", "server_url": "https://x.example/mcp",
                                  "allowed_tools": ["ask_question"], "require_approval": "always"})
desk = Agent(name="Desk", tools=[wiki])
''')
    script, cat, s = witness(binary, tmp_path, "wiki_desk:desk", ("QG001", "deepwiki.ask_question", "Desk"),
                             extra=(tmp_path,))
    k = next(st["step"] for st in s["steps"] if st["kind"] == "call")
    p = replay(script, cat, "wiki_desk:desk", extra=(tmp_path,))
    assert p.returncode == 2
    assert line(p) == (f"stalwart-export replay: error: step {k} (call 'deepwiki.ask_question' at 'Desk'): the "
                       "provider asks for approval of a hosted MCP call inside the model call, which the SDK's test "
                       "model cannot script")
    script, cat, _ = witness(binary, made, "oa_apps.triage:triage_agent", ("QG001", "issue_refund", "Refunds:tools"))
    (tmp_path / "answers.json").write_text("[true]")
    (tmp_path / "input.json").write_text("42")
    for spec, args, want in (
            ("oa_apps.mcp_repo:repo_agent", (), "agent 'Maintainer' has MCP servers: their tools are listed and called "
                                                "on the real server at run time, which the harness cannot stub"),
            ("oa_apps.triage:triage_agent", ("--answers", tmp_path / "answers.json"),
             "--answers gives resume values for LangGraph interrupt() pauses"),
            ("oa_apps.triage:triage_agent", ("--input", tmp_path / "input.json"),
             "is neither a text nor a list of input items: for an OpenAI Agents SDK application give each turn's"),
            ("oa_apps.desk:WORDS", (), "not a compiled LangGraph graph or an OpenAI Agents SDK Agent")):
        p = replay(script, cat, spec, *args)
        assert p.returncode == 2 and want in line(p), (spec, p.stdout, p.stderr)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "stalwart-replay/1", "steps": [{"step": 1, "kind": "enter"}]}))
    p = replay(bad, cat, "oa_apps.triage:triage_agent")
    assert p.returncode == 2 and "its step 1 has no kind, node or turn number" in line(p), p.stderr


def test_an_approval_inside_an_agent_tool(binary, made, tmp_path, monkeypatch):
    """A needs_approval tool of an agent used as a tool: the inner run's approvals come back on the
    outer result (the SDK's nested interruptions) and are answered there; the resumed inner run
    is the same visit of the agent tool's node. The real tools raise: only the stubs run."""
    (tmp_path / "nested_app.py").write_text('''
from agents import Agent, function_tool


@function_tool(needs_approval=True)
def post_update(channel: str, text: str) -> str:
    """Post an update to a team channel."""
    raise RuntimeError("nothing is posted in a replay")


publisher = Agent(name="Publisher", tools=[post_update])
lead = Agent(name="Lead", tools=[publisher.as_tool(tool_name="publish", tool_description="Publish an update")])
''')
    script, cat, s = witness(binary, tmp_path, "nested_app:lead", ("QG105", "post_update", "publish/Publisher:tools"),
                             extra=(tmp_path,))
    asked = [(st["node"], st["tool"], st["yes"]) for st in s["steps"] if st.get("when") == "call"]
    assert asked == [("publish/Publisher:tools", "post_update", True)] * 2
    p = replay(script, cat, "nested_app:lead", extra=(tmp_path,))
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['post_update', 'post_update']")
    monkeypatch.syspath_prepend(str(tmp_path))
    import nested_app

    d = drive(s, nested_app.lead)
    assert d.visited == ["Lead", "publish", "publish/Publisher", "publish/Publisher:tools", "publish/Publisher", "Lead"]
    assert d.calls == [("publish/Publisher:tools", "post_update")] * 2 and d.answers == []


def test_tool_calls_then_a_hand_off_in_one_response(binary, made, tmp_path, monkeypatch):
    """QG012: support reads the customer's ticket and hands off to refunds in the same response
    (the export's `Support:tools` -> `Refunds`: the SDK runs the calls, then hands off): the
    scripted model answers both at once."""
    (tmp_path / "handing_desk.py").write_text('''
from agents import Agent, function_tool


@function_tool
def read_ticket(ticket_id: str) -> str:
    """Read a customer's ticket."""
    raise RuntimeError("no ticket is read in a replay")


@function_tool
def issue_refund(invoice_id: str, amount: float) -> str:
    """Refund an invoice."""
    raise RuntimeError("no money moves in a replay")


refunds = Agent(name="Refunds", tools=[issue_refund])
support = Agent(name="Support", tools=[read_ticket], handoffs=[refunds])
triage = Agent(name="Triage", handoffs=[support])
''')
    words = {"read_ticket": {"kind": "read", "reads_outside": True}, "issue_refund": {"kind": "write"}}
    script, cat, s = witness(binary, tmp_path, "handing_desk:triage", ("QG012", "issue_refund", "Refunds:tools"), words,
                             extra=(tmp_path,))
    assert ("choose", "Support:tools", "Refunds") in kinds(s)
    p = replay(script, cat, "handing_desk:triage", extra=(tmp_path,))
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p).endswith(f"{FOLLOWS} ['read_ticket', 'issue_refund']")
    monkeypatch.syspath_prepend(str(tmp_path))
    import handing_desk

    d = drive(s, handing_desk.triage)
    support = [[i.name for i in items] for node, items in d.outputs if node == "Support"]
    assert support == [["read_ticket", "transfer_to_refunds"]]
    assert d.visited == ["Triage", "Support", "Support:tools", "Refunds", "Refunds:tools", "Refunds"]
