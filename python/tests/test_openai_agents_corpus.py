"""Issue 30 item 6: the corpus of OpenAI Agents SDK applications (fixtures/openai-agents/corpus/).

Six applications written the way the SDK's users write them (the shapes of its own examples: an
airline desk handing off in a cycle, a financial research writer with agents as tools and a hosted
web search, a person approving orders, a language triage behind a guardrail that runs an agent, an
MCP file server over stdio, and a desk run under the guard), each beside its words and the export
the CLI wrote (`python -m stalwart_export APP:AGENT -o graph.json --catalogue catalogue.json
--words words.json`, run in its folder). Here each is

* re-exported with the CLI in a copy of its folder and compared with the stored export (drift shows);
* verified with the Rust binary, its exit code and findings (rule, subject, node) equal to
  corpus/expected.txt, reviewed against the code;
* run offline with the SDK's own test model through a realistic path, every step a route of the
  export (the run helpers are test_openai_agents.py's).

And each bug the corpus found in the exporter is a test. Skipped, saying so, without
`openai-agents` (python/requirements-test.txt pins it)."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents.testing", reason="openai-agents is not installed (python/requirements-test.txt pins it): "
                                             "the SDK corpus tests are skipped")
from agents import (Agent, AgentHooks, RunConfig, Runner, RunResult, SQLiteSession,  # noqa: E402
                    ToolsToFinalOutputResult, function_tool, handoff, set_tracing_disabled)
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402
from test_openai_agents import Route, assert_calls, assert_route, edge  # noqa: E402

from stalwart_export.openai_agents import export_agent  # noqa: E402

set_tracing_disabled(True)

PYTHON_DIR = Path(__file__).resolve().parents[1]
CORPUS = PYTHON_DIR.parent / "fixtures" / "openai-agents" / "corpus"
APPS = CORPUS / "apps"
#: Each app's folder and the starting agent the CLI exports (MODULE:ATTR, run in the folder).
EXPORTED = {
    "airline": "airline:triage_agent",
    "research": "research:writer_agent",
    "approvals": "approvals:orders_agent",
    "language": "language:triage_agent",
    "files_mcp": "files_mcp:notes_agent",
    "guarded_desk": "guarded_desk:support_agent",
}


def cli_export(folder: Path, spec: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    return subprocess.run([sys.executable, "-m", "stalwart_export", spec, "-o", "graph.json", "--catalogue",
                           "catalogue.json", "--words", "words.json"], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)


def stable(export: dict) -> dict:
    """`export` without what changes with the installation: the package's own version (absent
    when run from the source tree; the SDK's is pinned and stays)."""
    out = json.loads(json.dumps(export))
    if "producer" in out:
        out["producer"].get("versions", {}).pop("stalwart-export", None)
    return out


def expected() -> dict[str, tuple[int, list[tuple[str, str, str]]]]:
    """corpus/expected.txt: per app its exit code and findings, `RULE SUBJECT @ NODE` (`-`: none)."""
    out: dict = {}
    app = None
    for line in (CORPUS / "expected.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith(" "):
            app, code = line.split(" exit=")
            out[app] = (int(code), [])
            continue
        rule, rest = line.strip().split(" ", 1)
        subject, node = rest.rsplit(" @ ", 1)
        out[app][1].append((rule, subject, node))
    return out


def findings(binary: str, folder: Path) -> tuple[int, list[tuple[str, str, str]]]:
    p = subprocess.run([binary, "verify", "--graph", "graph.json", "--catalogue", "catalogue.json", "--format",
                        "json"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    got = sorted((f["rule"], f["subject"], f.get("node") or "-") for f in json.loads(p.stdout)["findings"])
    return p.returncode, got


def app(name: str):
    """The corpus app `name`, imported as the CLI imports it (its folder on the path)."""
    folder = str(APPS / name)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def stored(name: str) -> dict:
    return json.loads((APPS / name / "graph.json").read_text())


# ------------------------------------------------------------------ the stored exports and their findings
@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_the_cli_writes_the_stored_export(name, tmp_path):
    folder = tmp_path / name
    shutil.copytree(APPS / name, folder, ignore=shutil.ignore_patterns("__pycache__", "graph.json"))
    p = cli_export(folder, EXPORTED[name])
    assert p.returncode == 0, p.stderr
    for file in ("graph.json", "catalogue.json"):
        again = stable(json.loads((folder / file).read_text()))
        assert again == stable(json.loads((APPS / name / file).read_text())), (
            f"{name}/{file} drifted: re-export it (see the module's doc) and review expected.txt")


def test_stored_exports_hold_no_absolute_path_or_changing_version():
    for name in EXPORTED:
        text = (APPS / name / "graph.json").read_text()
        assert str(PYTHON_DIR.parent) not in text and "/tmp/" not in text, name
        g = json.loads(text)
        assert g["producer"]["versions"] == {"openai-agents": "0.24.0"}, name


def test_expected_lists_every_app():
    assert sorted(expected()) == sorted(EXPORTED)


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_the_findings_are_the_expected_ones(name, binary):
    code, want = expected()[name]
    assert findings(binary, APPS / name) == (code, sorted(want))


# ------------------------------------------------------------------ bugs the corpus found in the exporter
def _line_of(name: str, text: str) -> int:
    lines = (APPS / name / f"{name}.py").read_text().splitlines()
    return next(i for i, ln in enumerate(lines) if text in ln) + 1


def test_an_agent_made_with_its_context_type_points_at_its_own_call():
    """`Agent[Ctx](...)`, as the SDK's customer-service example writes it: each model node at its own
    call (SPEC 12.4), never at another agent's `Agent(` (the only plain one in the file)."""
    m = app("language")
    ex = export_agent(m.triage_agent, base=str(APPS / "language"))
    got = {n["id"]: n.get("location") for n in ex["nodes"] if n["kind"] == "model"}
    assert got == {
        "Language Triage": {"file": "language.py", "line": _line_of("language", "triage_agent = Agent[Customer]("),
                            "column": 16},
        "French": {"file": "language.py", "line": _line_of("language", "french_agent = Agent[Customer]("),
                   "column": 16},
        "Spanish": {"file": "language.py", "line": _line_of("language", "spanish_agent = Agent[Customer]("),
                    "column": 17},
        "English": {"file": "language.py", "line": _line_of("language", "english_agent = Agent[Customer]("),
                    "column": 17},
    }
    m = app("airline")
    ex = export_agent(m.triage_agent, base=str(APPS / "airline"))
    got = {n["id"]: (n.get("location") or {}).get("line") for n in ex["nodes"] if n["kind"] == "model"}
    assert got == {"Triage": _line_of("airline", "triage_agent = Agent["),
                   "FAQ Desk": _line_of("airline", "faq_agent = Agent["),
                   "Seat Desk": _line_of("airline", "seat_agent = Agent[")}


# code around an agent that runs another agent (whose tool sends out): five places the SDK runs the
# application's code that SPEC 13.1's table does not name, each of which 12.5 says is never silence
AUDIT_LOG: list[str] = []


@function_tool
def page_on_call(text: str) -> str:
    """Page the on-call engineer with a message."""
    AUDIT_LOG.append(text)
    return "paged"


auditor = Agent(name="Auditor", instructions="Page on-call when something looks wrong.", tools=[page_on_call])


async def summary_after_audit(result: RunResult) -> str:
    await Runner.run(auditor, str(result.final_output))
    return str(result.final_output)


async def instructions_from_auditor(ctx, agent) -> str:
    return str((await Runner.run(auditor, "What should the analyst focus on?")).final_output)


class AuditHooks(AgentHooks):
    async def on_start(self, context, agent) -> None:
        await Runner.run(auditor, f"{agent.name} started")


async def finish_after_audit(ctx, results) -> ToolsToFinalOutputResult:
    await Runner.run(auditor, "tools ran")
    return ToolsToFinalOutputResult(is_final_output=False)


def audited_history(data):
    Runner.run_sync(auditor, "handing off")
    return data


def _code_around_app() -> Agent:
    @function_tool
    def lookup(q: str) -> str:
        """Look a term up in the glossary."""
        return q

    analyst = Agent(name="Analyst", instructions="Analyse.")
    helper = Agent(name="Helper", instructions="Help.", hooks=AuditHooks())
    closer = Agent(name="Closer", instructions="Close the case.")
    return Agent(name="Main", instructions=instructions_from_auditor, tool_use_behavior=finish_after_audit,
                 tools=[analyst.as_tool(tool_name="analyse", tool_description="Analyse a text.",
                                        custom_output_extractor=summary_after_audit), lookup],
                 handoffs=[helper, handoff(closer, input_filter=audited_history)])


def test_code_around_an_agent_that_runs_an_agent_is_opaque_never_silence():
    ex = export_agent(_code_around_app())
    opaque = {n["id"]: sorted(o["why"].split(" runs ")[0] for o in n.get("opaque", [])) for n in ex["nodes"]}
    assert opaque["Main"] == ["the hand-off input_filter audited_history of the hand-off to 'Closer'",
                              "the instructions function instructions_from_auditor",
                              "the output extractor summary_after_audit of the agent tool 'analyse'",
                              "the tool_use_behavior function finish_after_audit"]
    assert opaque["Helper"] == ["the agent hooks AuditHooks.on_start"]
    assert all(o["what"] == "subgraph" and o["location"]["line"] > 0 for n in ex["nodes"] for o in n.get("opaque", []))


# ------------------------------------------------------------------ each app run offline: every step a route
def run_app(agent, script: list, route: Route, input_or_state="hello", **kw):
    """One `Runner.run` of `agent` with the SDK's test model playing `script`, its steps in `route`."""
    rc = kw.pop("run_config", None) or RunConfig()
    rc.model = ScriptedModel(script)
    return asyncio.run(Runner.run(agent, input_or_state, run_config=rc, hooks=route, **kw))


def resumed(route: Route) -> Route:
    """A route going on from `route`'s steps (a run resumed after an approval)."""
    out = Route()
    out.steps = list(route.steps)
    return out


def test_airline_seat_change_hands_off_there_and_back():
    m = app("airline")
    ex = stored("airline")
    ctx = m.TravelContext(passenger_name="Ada")
    route = Route()
    result = run_app(m.triage_agent, [
        [function_call("transfer_to_seat_desk", {}, call_id="h1")],
        [function_call("change_seat", {"booking_ref": "QX7Y2", "new_seat": "21A"}, call_id="c1")],
        [function_call("email_boarding_pass", {"email": "ada@example.com"}, call_id="c2"),
         function_call("transfer_to_triage", {}, call_id="h2")],
        [assistant_message("Your seat is 21A; anything else?")],
    ], route, "I'd like a window seat", context=ctx)
    assert result.final_output == "Your seat is 21A; anything else?" and result.last_agent is m.triage_agent
    assert m.SEATS["QX7Y2"] == "21A" and m.OUTBOX[-1] == ("ada@example.com", "QX7Y2")
    assert ctx.flight and ctx.flight.startswith("QX-")  # the on_handoff hook ran
    assert route.steps == ["__start__", "Triage", "Seat Desk", "Seat Desk:tools", "Seat Desk", "Seat Desk:tools",
                           "Triage"]
    assert_route(ex, route.steps)
    assert_calls(ex, route.calls)
    # the next turn starts at the agent the last one ended with (the SDK's examples pass last_agent)
    assert edge(ex, "__start__", "FAQ Desk") and edge(ex, "__start__", "Seat Desk")


def test_research_writer_consults_agents_as_tools_then_saves_and_posts(tmp_path, monkeypatch):
    m = app("research")
    monkeypatch.setattr(m, "DRAFTS", tmp_path / "drafts")
    ex = stored("research")
    report = {"short_summary": "Growing", "markdown_report": "# ACME", "follow_up_questions": []}
    route = Route()
    result = run_app(m.writer_agent, [
        [function_call("fundamentals_analysis", {"input": "ACME revenue notes"}, call_id="a1")],
        [assistant_message(json.dumps({"summary": "Revenue up 12%"}))],  # the analyst's own run
        [function_call("web_research", {"input": "ACME lawsuit 2026"}, call_id="a2")],
        [assistant_message("No lawsuit found.")],  # the web researcher's own run
        [function_call("save_draft", {"title": "acme", "markdown": "# ACME"}, call_id="c1")],
        [function_call("post_to_channel", {"summary": "ACME: growing"}, call_id="c2")],
        [assistant_message(json.dumps(report))],
    ], route, "Write up ACME")
    assert result.final_output.short_summary == "Growing"
    assert (tmp_path / "drafts" / "acme.md").read_text() == "# ACME" and m.CHANNEL[-1] == "ACME: growing"
    assert route.steps == ["__start__", "Writer", "fundamentals_analysis", "Writer", "web_research", "Writer",
                           "Writer:tools", "Writer", "Writer:tools", "Writer"]
    assert_route(ex, route.steps)
    assert_calls(ex, route.calls)


def test_approvals_small_refund_runs_and_a_cancel_waits_for_the_person_then_stops():
    m = app("approvals")
    ex = stored("approvals")
    route = Route()
    result = run_app(m.orders_agent, [
        [function_call("get_order", {"order_id": "A-1002"}, call_id="c1")],
        [function_call("refund_order", {"order_id": "A-1002", "amount": 20.0}, call_id="c2")],
        [function_call("cancel_order", {"order_id": "A-1002"}, call_id="c3")],
    ], route, "Refund 20 EUR of A-1002 and cancel it")
    # the small refund ran without asking (its needs_approval function said no); the cancel waits
    assert m.REFUNDS[-1] == ("A-1002", 20.0) and m.ORDERS["A-1002"]["status"] == "open"
    assert [i.name for i in result.interruptions] == ["cancel_order"]
    assert {(i["node"], i["tool"]) for i in ex["interrupts"]} == {("Order Desk:tools", "cancel_order")}
    state = result.to_state()
    state.approve(result.interruptions[0])
    after = resumed(route)
    result = run_app(m.orders_agent, [], after, state)
    # StopAtTools: the cancel's own answer is the final output, no model call after it
    assert result.final_output == "A-1002 cancelled" and m.ORDERS["A-1002"]["status"] == "cancelled"
    assert after.steps == ["__start__", "Order Desk", "Order Desk:tools", "Order Desk", "Order Desk:tools",
                           "Order Desk", "Order Desk:tools"]
    assert_route(ex, after.steps)
    assert_calls(ex, route.calls + after.calls)
    # a large refund asks too, but only the app's function knows when: the export credits no review for it
    result = run_app(m.orders_agent, [[function_call("refund_order", {"order_id": "A-1001", "amount": 250},
                                                     call_id="c4")]], Route(), "Refund all of A-1001")
    assert [i.name for i in result.interruptions] == ["refund_order"]
    assert not any(i["tool"] == "refund_order" for i in ex["interrupts"])


def test_language_triage_runs_its_classifier_then_hands_off_in_french():
    m = app("language")
    ex = stored("language")
    # the guardrail's own run (no run_config: the agent's model), with the test model too
    classifier = ScriptedModel([[assistant_message(json.dumps({"is_abusive": False, "reasoning": "a question"}))]])
    m.abuse_classifier.model = classifier
    route = Route()
    result = run_app(m.triage_agent, [
        [function_call("transfer_to_french", {}, call_id="h1")],
        [function_call("search_help_center", {"query": "password reset"}, call_id="c1")],
        [assistant_message("Allez dans Paramètres > Sécurité.")],
    ], route, "J'ai oublié mon mot de passe", context=m.Customer(market="fr"))
    assert result.final_output == "Allez dans Paramètres > Sécurité."
    # the guardrail's agent ran (a model call of an agent the export does not have: hence its QG024)
    assert classifier.remaining_steps == 0 and "Abuse Classifier" not in {n["id"] for n in ex["nodes"]}
    assert route.steps == ["__start__", "Language Triage", "French", "French:tools", "French"]
    assert_route(ex, route.steps)
    assert_calls(ex, route.calls)
    assert any(n["id"] == "Language Triage" and n["opaque"][0]["what"] == "subgraph" for n in ex["nodes"])


def test_files_mcp_lists_reads_and_writes_notes_through_the_stdio_server(tmp_path):
    m = app("files_mcp")
    ex = stored("files_mcp")
    (tmp_path / "todo.md").write_text("- buy milk")
    m.notes_server.params.env = dict(os.environ, NOTES_ROOT=str(tmp_path))
    route = Route()

    async def go():
        async with m.notes_server:
            rc = RunConfig(model=ScriptedModel([
                [function_call("list_notes", {}, call_id="c1")],
                [function_call("read_note", {"name": "todo.md"}, call_id="c2")],
                [function_call("write_note", {"name": "done.md", "text": "- buy milk (done)"}, call_id="c3")],
                [assistant_message("Moved it to done.md.")],
            ]))
            return await Runner.run(m.notes_agent, "Mark my todo as done", run_config=rc, hooks=route)

    result = asyncio.run(go())
    assert result.final_output == "Moved it to done.md."
    assert (tmp_path / "done.md").read_text() == "- buy milk (done)"
    assert route.calls == [("Notes Assistant:tools", t) for t in ("list_notes", "read_note", "write_note")]
    assert_route(ex, route.steps)
    assert_calls(ex, route.calls)


def test_guarded_desk_asks_about_the_refund_then_refuses_a_second_one():
    m = app("guarded_desk")
    ex = stored("guarded_desk")
    assert {n["id"]: n["kind"] for n in ex["nodes"]}["Billing:tools"] == "tools"
    agent = m.support_agent()
    session = m.guard().session(SQLiteSession("corpus-guarded-desk"))
    route = Route()
    result = run_app(agent, [
        [function_call("transfer_to_billing", {}, call_id="h1")],
        [function_call("lookup_invoice", {"invoice_id": "INV-17"}, call_id="c1")],
        [function_call("read_customer_messages", {"invoice_id": "INV-17"}, call_id="c2")],
        [function_call("refund_invoice", {"invoice_id": "INV-17", "amount": 60}, call_id="c3")],
    ], route, "I was charged twice for INV-17", session=session, run_config=session.run_config())
    # a write after the customer's own words: the guard asks the person, and nothing ran yet
    assert [i.name for i in result.interruptions] == ["refund_invoice"] and m.REFUNDS == []
    state = result.to_state()
    state.approve(result.interruptions[0])
    after = resumed(route)
    result = run_app(result.last_agent, [[assistant_message("Refunded 60 EUR.")]], after, state, session=session,
                     run_config=session.run_config())
    assert result.final_output == "Refunded 60 EUR." and m.REFUNDS == [("INV-17", 60.0)]
    # a second refund in the session: at_most 1 per session, refused before anyone is asked
    second = resumed(after)
    result = run_app(result.last_agent, [
        [function_call("refund_invoice", {"invoice_id": "INV-17", "amount": 60}, call_id="c4")],
        [assistant_message("I cannot refund it twice.")],
    ], second, "refund it again", session=session, run_config=session.run_config())
    assert result.interruptions == [] and m.REFUNDS == [("INV-17", 60.0)]
    refused = [str(i.output) for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]
    assert len(refused) == 1 and refused[0].startswith("Refused by the tool check"), refused
    # the refused call is answered at the tool node (its guardrail), where no tool starts
    assert second.steps[len(after.steps):] == ["Billing", "Billing"] and second.calls == []
    second.steps.insert(len(after.steps) + 1, "Billing:tools")
    assert after.steps == ["__start__", "Front Desk", "Billing", "Billing:tools", "Billing", "Billing:tools",
                           "Billing", "Billing:tools", "Billing"]
    assert_route(ex, after.steps)
    # the second turn starts at Billing, the agent the first ended with
    assert_route(ex, ["__start__"] + second.steps[len(after.steps):])
    assert_calls(ex, after.calls)


def notes_by_role(ctx, tool) -> bool:
    """Admins get every notes tool; everyone else only the reads (the run's context says who)."""
    return ctx.run_context.context["role"] == "admin" or bool(tool.annotations and tool.annotations.readOnlyHint)


def test_an_mcp_servers_dynamic_tool_filter_keeps_every_tool_it_may_allow():
    """A `tool_filter` function decides on the run's context, which export time does not have: the
    tools an admin's run gets (write_note, delete_note) must be in the export, never dropped."""
    from agents.mcp import MCPServerStdio

    server = MCPServerStdio(name="notes", params={"command": sys.executable,
                                                  "args": [str(APPS / "files_mcp" / "files_server.py")]},
                            tool_filter=notes_by_role)
    ex = export_agent(Agent(name="Notes", instructions="Keep the notes.", mcp_servers=[server]))
    tools = {n["id"]: n.get("tools") for n in ex["nodes"]}
    assert tools.get("Notes:tools") == ["list_notes", "read_note", "write_note", "delete_note"]
    assert server.tool_filter is notes_by_role  # the application's server is left as it was
    assert any("tool_filter" in w and "notes_by_role" in w for w in ex["warnings"]), ex["warnings"]


def test_two_different_tools_sharing_a_name_are_refused():
    """The catalogue names a tool by its name: two agents' different tools named alike would be read
    as one (the first's description, arguments and words: a write verified as the other's read)."""
    @function_tool(name_override="lookup")
    def lookup_faq(topic: str) -> str:
        """Look a topic up in the FAQ."""
        return topic

    @function_tool(name_override="lookup")
    def lookup_and_flag_account(account_id: str) -> str:
        """Look an account up and flag it for review (writes the flag)."""
        return account_id

    support = Agent(name="Support", instructions="Help.", tools=[lookup_and_flag_account])
    with pytest.raises(TypeError, match="two different tools are named 'lookup'"):
        export_agent(Agent(name="FAQ", instructions="Answer.", tools=[lookup_faq], handoffs=[support]))
    # one function made a tool twice (or the guard's copy of it) is one tool
    again = function_tool(_faq_topic, name_override="lookup")
    first = function_tool(_faq_topic, name_override="lookup")
    ex = export_agent(Agent(name="FAQ", instructions="Answer.", tools=[first],
                            handoffs=[Agent(name="More", instructions="More.", tools=[again])]))
    assert [n.get("tools") for n in ex["nodes"] if n["kind"] == "tools_plain"] == [["lookup"], ["lookup"]]


def _faq_topic(topic: str) -> str:
    """Look a topic up in the FAQ."""
    return topic


def test_a_cloned_agent_points_at_its_clone_call():
    """`base.clone(name=...)`, the SDK's way to make a variant: each clone at its own call, never at
    the `Agent(` it was cloned from (another agent's line)."""
    ex = export_agent(_clones(), base=str(Path(__file__).parent))
    lines = Path(__file__).read_text().splitlines()

    def line(text: str) -> int:
        return next(i for i, ln in enumerate(lines) if ln.strip().startswith(text)) + 1

    got = {n["id"]: (n.get("location") or {}).get("line") for n in ex["nodes"] if n["kind"] == "model"}
    assert got == {"Clone Triage": line("triage = base.clone("), "Clone EN": line("base = Agent("),
                   "Clone VIP": line("vip = base.clone(")}


def _clones() -> Agent:
    base = Agent(name="Clone EN", instructions="Answer in English.")
    vip = base.clone(name="Clone VIP", tools=[function_tool(_faq_topic, name_override="vip_lookup")])
    triage = base.clone(name="Clone Triage", handoffs=[base, vip])
    return triage
