"""Issue 30 items 1 and 4 (a first cut): OpenAI Agents SDK applications (tests/oa_apps/) exported
as SPEC 13.1 maps them, each export asserted exactly, verified with the Rust binary (its blocking
findings asserted: an unguarded SDK application fails the gate with QG001 on its tools), and run
offline with the SDK's own test model (`agents.testing.ScriptedModel`), every step of the run (a
model call, a tool visit, an agent as tool, a hand-off, the end) checked to be a route of the
export, every approval the run asks for a review of the export. Skipped, saying so, without
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

agents = pytest.importorskip("agents.testing", reason="openai-agents is not installed (python/requirements-test.txt "
                                                      "pins it): the OpenAI Agents SDK exporter tests are skipped")
from agents import RunConfig, RunHooks, Runner, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from stalwart_export.openai_agents import export_agent, export_agent_catalogue, init_agent_words  # noqa: E402

set_tracing_disabled(True)

HERE = Path(__file__).resolve().parent
APPS = HERE / "oa_apps"
PYTHON_DIR = HERE.parent
GUARD_WARNING = ("run without a guard (wrap the starting agent with stalwart_export.openai_agents.AgentGuard(catalogue)"
                 ".wrap(agent)): every call is a plain call")


def app(name: str):
    return importlib.import_module(f"oa_apps.{name}")


def at(module: str, text: str) -> dict:
    """The location of `text`'s first `Agent(` (or of `def NAME` when `text` starts with `def `)
    in oa_apps/MODULE.py, as the export writes it with base oa_apps/."""
    lines = (APPS / f"{module}.py").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if text in ln)
    if text.startswith("def "):
        return {"file": f"{module}.py", "line": k + 1}
    col = lines[k].index("Agent(") if "Agent(" in lines[k] else None
    if col is None:  # the call is on the next line (`return Agent(`)
        raise AssertionError(f"no Agent( on the line of {text!r}")
    return {"file": f"{module}.py", "line": k + 1, "column": col + 1}


def export(agent, **kw) -> dict:
    return export_agent(agent, base=str(APPS), **kw)


def start(first: str) -> dict:
    return {"from": "__start__", "kind": "fixed", "destinations": [first]}


def verify(binary: str, tmp: Path, ex: dict, cat: dict) -> dict:
    """The verifier's JSON report on `ex` and `cat` (written to `tmp`), with `rc` its exit code.
    (The export's locations are relative to oa_apps/, outside `tmp`: the findings fall back to the
    export here; `test_cli_findings_point_at_the_users_lines` checks SPEC 12.4.)"""
    (tmp / "graph.json").write_text(json.dumps(ex))
    (tmp / "catalogue.json").write_text(json.dumps(cat))
    p = subprocess.run([binary, "verify", "--graph", str(tmp / "graph.json"), "--catalogue",
                        str(tmp / "catalogue.json"), "--format", "json"], capture_output=True, text=True,
                       timeout=600, cwd=tmp)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    out = json.loads(p.stdout)
    out["rc"] = p.returncode
    return out


def blocking(report: dict) -> list[tuple[str, str, str]]:
    """(rule, subject, node) of each finding that fails the gate."""
    return sorted((f["rule"], f["subject"], f.get("node")) for f in report["findings"] if f["blocks"])


# ------------------------------------------------------------------ running the real SDK offline
class Route(RunHooks):
    """The steps a run takes, as export node ids: a model call of agent A is `A`, a batch of
    function-tool calls `A:tools`, an agent as tool its tool name; `calls` are (node, tool)."""

    def __init__(self) -> None:
        self.steps = ["__start__"]
        self.calls: list[tuple[str, str]] = []

    async def on_llm_start(self, context, agent, system_prompt, input_items) -> None:
        self.steps.append(agent.name)

    async def on_tool_start(self, context, agent, tool) -> None:
        if getattr(tool, "_is_agent_tool", False):
            self.steps.append(tool.name)
            return
        node = f"{agent.name}:tools"
        if self.steps[-1] != node:
            self.steps.append(node)
        self.calls.append((node, tool.name))


def run(agent, script: list, route: Route, input_or_state="hello"):
    model = ScriptedModel(script)
    result = asyncio.run(Runner.run(agent, input_or_state, run_config=RunConfig(model=model), hooks=route))
    return result, model


def edge(g: dict, u: str, v: str) -> bool:
    return any(e["from"] == u and v in (e["destinations"] or []) for e in g["edges"])


def assert_route(g: dict, steps: list[str], ended: bool = True) -> None:
    """Every step of the run follows an edge of the export, and the run's end is one too."""
    path = steps + (["__end__"] if ended else [])
    for u, v in zip(path, path[1:]):
        assert edge(g, u, v), f"the run went {u} -> {v}, which the export has no edge for: {path}"


def assert_calls(g: dict, calls: list[tuple[str, str]]) -> None:
    nodes = {n["id"]: n for n in g["nodes"]}
    for node, tool in calls:
        assert tool in nodes[node]["tools"], (node, tool)


# ------------------------------------------------------------------ a triage agent handing off
def test_triage_handing_off_to_two_specialists(binary, tmp_path):
    m = app("triage")
    ex = export(m.triage_agent)
    tl = at("triage", "billing_agent = Agent(")
    rl = at("triage", "refund_agent = Agent(")
    assert ex == {
        "format": "qls-graph/1", "name": "Triage", "entry": "__start__", "recursion_limit": 20,
        "state": {"later_turn": {"scope": "session"}},
        "nodes": [
            {"id": "__start__", "kind": "start"},
            {"id": "Triage", "kind": "model", "agent": "Triage", "location": at("triage", "triage_agent = Agent("),
             "sets": ["later_turn"]},
            {"id": "Billing", "kind": "model", "agent": "Billing", "location": tl},
            {"id": "Billing:tools", "kind": "tools_plain", "agent": "Billing", "tools": ["lookup_invoice"], "location": tl},
            {"id": "Refunds", "kind": "model", "agent": "Refunds", "location": rl},
            {"id": "Refunds:tools", "kind": "tools_plain", "agent": "Refunds", "tools": ["lookup_invoice", "issue_refund"],
             "location": rl},
            {"id": "__end__", "kind": "end"},
        ],
        "edges": [
            start("Triage"),
            {"from": "__start__", "kind": "stalwart_edge", "destinations": ["Billing", "Refunds"],
             "guard": "later_turn"},
            {"from": "Triage", "kind": "conditional", "destinations": ["Billing", "Refunds", "__end__"]},
            {"from": "Billing", "kind": "conditional", "destinations": ["Billing:tools", "__end__"]},
            {"from": "Billing:tools", "kind": "conditional", "destinations": ["Billing"]},
            {"from": "Refunds", "kind": "conditional", "destinations": ["Refunds:tools", "__end__"]},
            {"from": "Refunds:tools", "kind": "conditional", "destinations": ["Refunds"]},
        ],
        "subgraphs": {},
        "tool_locations": {"lookup_invoice": {"location": at("triage", "def lookup_invoice")},
                           "issue_refund": {"location": at("triage", "def issue_refund")}},
        "producer": ex["producer"],
        "warnings": [f"the function tools (issue_refund, lookup_invoice) {GUARD_WARNING}"],
    }
    assert ex["producer"]["versions"]["openai-agents"] == "0.24.0"
    cat = export_agent_catalogue(m.triage_agent, {"lookup_invoice": {"kind": "read"}})
    assert cat == {"format": "qls-catalogue/1", "tools": {
        "issue_refund": {"description": "Refund part or all of an invoice to the customer's card.",
                         "args": {"invoice_id": {"type": "string"}, "amount": {"type": "number"}}, "kind": None},
        "lookup_invoice": {"description": "Look an invoice up.", "args": {"invoice_id": {"type": "string"}},
                           "kind": "read"}}}
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 1
    assert blocking(report) == [("QG001", "issue_refund", "Refunds:tools"), ("QG001", "lookup_invoice", "Billing:tools"),
                                ("QG001", "lookup_invoice", "Refunds:tools")]

    # the real run: triage hands off, the specialist reads and refunds, then answers
    route = Route()
    result, model = run(m.triage_agent, [
        [function_call("transfer_to_refunds", {}, call_id="h1")],
        [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c1")],
        [function_call("lookup_invoice", {"invoice_id": "A1"}, call_id="c2"),
         function_call("issue_refund", {"invoice_id": "A1", "amount": 40}, call_id="c3")],
        [assistant_message("Refunded.")],
    ], route)
    assert result.final_output == "Refunded." and result.last_agent.name == "Refunds"
    assert route.steps == ["__start__", "Triage", "Refunds", "Refunds:tools", "Refunds", "Refunds:tools", "Refunds"]
    assert_route(ex, route.steps)
    assert_calls(ex, route.calls)
    # a later turn starts at the last agent (the application passes result.last_agent): a route of the export
    # once the first turn has set later_turn
    route2 = Route()
    result2, _ = run(result.last_agent, [[assistant_message("Anything else?")]], route2,
                     result.to_input_list() + [{"role": "user", "content": "thanks"}])
    assert route2.steps == ["__start__", "Refunds"]
    assert_route(ex, route2.steps)
    assert any(e.get("guard") == "later_turn" and "Refunds" in e["destinations"] for e in ex["edges"])


def test_cli_exports_an_sdk_agent(tmp_path):
    """`python -m stalwart_export MODULE:ATTR` recognises an Agent (and a function returning one)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), str(HERE)]))
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "oa_apps.triage:triage_agent", "-o",
                        str(tmp_path / "g.json"), "--catalogue", str(tmp_path / "c.json"), "--init-words",
                        str(tmp_path / "w.json"), "--max-turns", "7"], capture_output=True, text=True, cwd=HERE,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    g = json.loads((tmp_path / "g.json").read_text())
    assert g["recursion_limit"] == 14 and [n["id"] for n in g["nodes"]][1] == "Triage"
    loc = g["nodes"][1]["location"]
    assert (tmp_path / loc["file"]).resolve() == (APPS / "triage.py").resolve()
    words = json.loads((tmp_path / "w.json").read_text())
    assert words["issue_refund"]["kind"] is None and words["issue_refund"]["args"] == {
        "invoice_id": {"type": "string"}, "amount": {"type": "number"}}
    assert "kind not declared (null) for issue_refund, lookup_invoice" in p.stderr
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "oa_apps.hosted:build"], capture_output=True,
                       text=True, cwd=HERE, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["nodes"][1]["hosted"] == ["web_search"]
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "oa_apps.hosted:build", "--max-turns", "0"],
                       capture_output=True, text=True, cwd=HERE, env=env, timeout=300)
    assert p.returncode == 2 and "--max-turns" in p.stderr


def test_cli_findings_point_at_the_users_lines(binary, tmp_path):
    """SPEC 12.4: exported with the CLI into proj/build from a copy of the apps in a repository of
    their own, verified from another directory: each tool's finding is at the `Agent(...)` call
    binding it, with the tool's `def` related."""
    proj = tmp_path / "proj"
    shutil.copytree(APPS, proj / "oa_apps", ignore=shutil.ignore_patterns("__pycache__"))
    (proj / ".git").mkdir()
    (proj / "build").mkdir()
    (proj / "words.json").write_text(json.dumps({"lookup_invoice": {"kind": "read"}}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "oa_apps.triage:triage_agent", "-o",
                        "build/graph.json", "--catalogue", "build/catalogue.json", "--words", "words.json"],
                       capture_output=True, text=True, cwd=proj, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([binary, "verify", "--graph", str(proj / "build" / "graph.json"), "--catalogue",
                        str(proj / "build" / "catalogue.json"), "--format", "json"], capture_output=True, text=True,
                       timeout=600, cwd=elsewhere)
    assert p.returncode == 1, p.stdout + p.stderr
    report = json.loads(p.stdout)
    got = sorted((f["rule"], f["subject"], f["node"], f["location"]["file"], f["location"]["line"])
                 for f in report["findings"] if f["blocks"])
    billing, refunds = at("triage", "billing_agent = Agent(")["line"], at("triage", "refund_agent = Agent(")["line"]
    app_file = str(proj / "oa_apps" / "triage.py")
    assert [(r, s, n, str((proj / "build" / f).resolve()) if not os.path.isabs(f) else f, ln)
            for r, s, n, f, ln in got] == [
        ("QG001", "issue_refund", "Refunds:tools", app_file, refunds),
        ("QG001", "lookup_invoice", "Billing:tools", app_file, billing),
        ("QG001", "lookup_invoice", "Refunds:tools", app_file, refunds)]
    refund = next(f for f in report["findings"] if f["subject"] == "issue_refund" and f["rule"] == "QG001")
    assert any(r["location"]["line"] == at("triage", "def issue_refund")["line"] for r in refund["related"]), refund


# ------------------------------------------------------------------ needs_approval
def test_needs_approval_is_a_standing_call_review(binary, tmp_path):
    m = app("approval")
    ex = export(m.orders_agent)
    loc = at("approval", "orders_agent = Agent(")
    assert ex["nodes"] == [
        {"id": "__start__", "kind": "start"},
        {"id": "Orders", "kind": "model", "agent": "Orders", "location": loc},
        {"id": "Orders:tools", "kind": "tools_plain", "agent": "Orders", "tools": ["get_order", "cancel_order", "pay_supplier"],
         "location": loc},
        {"id": "__end__", "kind": "end"},
    ]
    assert ex["edges"] == [start("Orders"),
                           {"from": "Orders", "kind": "conditional", "destinations": ["Orders:tools", "__end__"]},
                           {"from": "Orders:tools", "kind": "conditional", "destinations": ["Orders"]}]
    # True: a review of every call, standing (the exporter cannot tell whether the app grants always_approve);
    # a function: no review credited, and a warning
    assert ex["interrupts"] == [{"node": "Orders:tools", "when": "call", "tool": "cancel_order", "standing": True}]
    assert "state" not in ex and ex["subgraphs"] == {}
    assert ex["warnings"] == [
        "tool 'pay_supplier' of agent 'Orders' asks for approval when its needs_approval function says so: the "
        "exporter cannot tell when, so no review is credited for it",
        f"the function tools (cancel_order, get_order, pay_supplier) {GUARD_WARNING}"]
    cat = export_agent_catalogue(m.orders_agent, {"get_order": {"kind": "read"}, "cancel_order": {"kind": "write"},
                                                  "pay_supplier": {"kind": "write"}})
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 1
    assert blocking(report) == [("QG001", t, "Orders:tools") for t in ("cancel_order", "get_order", "pay_supplier")]

    # approved: the run pauses at the call, the person approves, the call runs
    route = Route()
    result, _ = run(m.orders_agent, [[function_call("cancel_order", {"order_id": "7"}, call_id="c1")]], route)
    assert [i.name for i in result.interruptions] == ["cancel_order"]
    assert any(i["node"] == "Orders:tools" and i["tool"] == "cancel_order" for i in ex["interrupts"])
    state = result.to_state()
    state.approve(result.interruptions[0])
    route_b = Route()
    route_b.steps = list(route.steps)
    result, _ = run(m.orders_agent, [[assistant_message("Cancelled.")]], route_b, state)
    assert result.final_output == "Cancelled."
    assert route_b.calls == [("Orders:tools", "cancel_order")]
    assert route_b.steps == ["__start__", "Orders", "Orders:tools", "Orders"]
    assert_route(ex, route_b.steps)

    # rejected: the call does not run, and the run goes on to the model
    route = Route()
    result, _ = run(m.orders_agent, [[function_call("cancel_order", {"order_id": "7"}, call_id="c1")]], route)
    state = result.to_state()
    state.reject(result.interruptions[0])
    route_r = Route()
    # the declined call is answered at the tool node, where the review is; no tool runs there
    route_r.steps = list(route.steps) + ["Orders:tools"]
    result, _ = run(m.orders_agent, [[assistant_message("Not cancelled.")]], route_r, state)
    assert result.final_output == "Not cancelled." and route_r.calls == []
    assert_route(ex, route_r.steps)


# ------------------------------------------------------------------ agents as tools
def test_agents_as_tools_are_subgraph_nodes(binary, tmp_path):
    m = app("as_tools")
    ex = export(m.orchestrator_agent)
    sp, fr = at("as_tools", "spanish_agent = Agent("), at("as_tools", "french_agent = Agent(")
    assert ex["nodes"] == [
        {"id": "__start__", "kind": "start"},
        {"id": "orchestrator_agent", "kind": "model", "agent": "orchestrator_agent",
         "location": at("as_tools", "orchestrator_agent = Agent(")},
        {"id": "translate_to_spanish", "kind": "subgraph", "graph": "spanish_agent", "location": sp},
        {"id": "translate_to_french", "kind": "subgraph", "graph": "french_agent", "location": fr},
        {"id": "orchestrator_agent:approve:translate_to_french", "kind": "step"},
        {"id": "__end__", "kind": "end"},
    ]
    assert ex["edges"] == [
        start("orchestrator_agent"),
        {"from": "orchestrator_agent", "kind": "conditional",
         "destinations": ["translate_to_spanish", "orchestrator_agent:approve:translate_to_french", "__end__"]},
        {"from": "translate_to_spanish", "kind": "conditional", "destinations": ["orchestrator_agent"]},
        {"from": "translate_to_french", "kind": "conditional", "destinations": ["orchestrator_agent"]},
        {"from": "orchestrator_agent:approve:translate_to_french", "kind": "stalwart_edge",
         "destinations": ["translate_to_french"], "guard": "approved_orchestrator_agent_translate_to_french"},
        {"from": "orchestrator_agent:approve:translate_to_french", "kind": "stalwart_edge",
         "destinations": ["orchestrator_agent"], "guard": "!approved_orchestrator_agent_translate_to_french"},
    ]
    assert ex["interrupts"] == [{"node": "orchestrator_agent:approve:translate_to_french", "when": "inside",
                                 "tool": None, "answer": "approved_orchestrator_agent_translate_to_french"}]
    assert ex["state"] == {"approved_orchestrator_agent_translate_to_french": {"scope": "turn"}}
    assert ex["subgraphs"] == {
        "spanish_agent": {"nodes": [{"id": "__start__", "kind": "start"},
                                    {"id": "spanish_agent", "kind": "model", "agent": "spanish_agent", "location": sp},
                                    {"id": "__end__", "kind": "end"}],
                          "edges": [start("spanish_agent"),
                                    {"from": "spanish_agent", "kind": "conditional", "destinations": ["__end__"]}]},
        "french_agent": {"nodes": [{"id": "__start__", "kind": "start"},
                                   {"id": "french_agent", "kind": "model", "agent": "french_agent", "location": fr},
                                   {"id": "__end__", "kind": "end"}],
                         "edges": [start("french_agent"),
                                   {"from": "french_agent", "kind": "conditional", "destinations": ["__end__"]}]},
    }
    assert ex["warnings"] == []
    cat = export_agent_catalogue(m.orchestrator_agent)
    assert cat == {"format": "qls-catalogue/1", "tools": {}}  # agents as tools are not catalogue tools
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 0 and blocking(report) == []

    route = Route()
    result, _ = run(m.orchestrator_agent, [
        [function_call("translate_to_spanish", {"input": "hi"}, call_id="t1")],
        [assistant_message("hola")],  # the Spanish agent's own run
        [assistant_message("Spanish: hola")],
    ], route)
    assert result.final_output == "Spanish: hola"
    assert route.steps == ["__start__", "orchestrator_agent", "translate_to_spanish", "orchestrator_agent"]
    assert_route(ex, route.steps)
    # the approval of the French tool: the run pauses before the agent runs
    route = Route()
    result, _ = run(m.orchestrator_agent, [[function_call("translate_to_french", {"input": "hi"}, call_id="t2")]],
                    route)
    assert [i.name for i in result.interruptions] == ["translate_to_french"]
    assert edge(ex, "orchestrator_agent", "orchestrator_agent:approve:translate_to_french")


# ------------------------------------------------------------------ StopAtTools
def test_stop_at_tools_ends_or_goes_back(binary, tmp_path):
    m = app("stop_at")
    ex = export(m.weather_agent)
    assert ex["edges"] == [start("Weather"),
                           {"from": "Weather", "kind": "conditional", "destinations": ["Weather:tools", "__end__"]},
                           {"from": "Weather:tools", "kind": "conditional", "destinations": ["Weather", "__end__"]}]
    cat = export_agent_catalogue(m.weather_agent, {"get_weather": {"kind": "read"}, "sum_numbers": {"kind": "read"}})
    report = verify(binary, tmp_path, ex, cat)
    assert blocking(report) == [("QG001", "get_weather", "Weather:tools"), ("QG001", "sum_numbers", "Weather:tools")]

    route = Route()
    result, _ = run(m.weather_agent, [[function_call("get_weather", {"city": "Oslo"}, call_id="w1")]], route)
    assert result.final_output == "The weather in Oslo is sunny"
    assert route.steps == ["__start__", "Weather", "Weather:tools"]
    assert_route(ex, route.steps)  # Weather:tools -> __end__
    route = Route()
    result, _ = run(m.weather_agent, [[function_call("sum_numbers", {"a": 1, "b": 2}, call_id="s1")],
                                      [assistant_message("3")]], route)
    assert route.steps == ["__start__", "Weather", "Weather:tools", "Weather"]
    assert_route(ex, route.steps)


def test_tool_use_behavior_stop_on_first_tool():
    from agents import Agent

    m = app("stop_at")
    a = Agent(name="Once", tools=[m.get_weather], tool_use_behavior="stop_on_first_tool")
    ex = export(a)
    assert {"from": "Once:tools", "kind": "conditional", "destinations": ["__end__"]} in ex["edges"]


# ------------------------------------------------------------------ a hosted tool
def test_hosted_web_search(binary, tmp_path):
    m = app("hosted")
    agent = m.build()
    ex = export(agent)
    loc = at("hosted", "return Agent(")
    assert ex["nodes"] == [
        {"id": "__start__", "kind": "start"},
        {"id": "Researcher", "kind": "model", "agent": "Researcher", "location": loc, "hosted": ["web_search"]},
        {"id": "Researcher:tools", "kind": "tools_plain", "agent": "Researcher", "tools": ["save_note"], "location": loc},
        {"id": "__end__", "kind": "end"},
    ]
    assert ex["warnings"][0].startswith("agent 'Researcher' has provider-hosted tools (web_search)")
    cat = export_agent_catalogue(agent, {"save_note": {"kind": "write"}})
    assert cat["tools"]["web_search"] == {
        "kind": "read", "reads_outside": True, "args": {},
        "description": "provider-hosted (web_search): searches the web; the provider runs it inside the model call, "
                       "so the guard never sees its calls or what they return"}
    words = init_agent_words(agent)
    assert words["web_search"]["kind"] == "read" and words["save_note"]["kind"] is None
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 1
    # the search brings outside text the model may act on: the write after it, by the same agent's tool
    # node (one region with its model node, SPEC 3.1), is QG011
    assert blocking(report) == [("QG001", "save_note", "Researcher:tools"), ("QG001", "web_search", "Researcher"),
                                ("QG011", "save_note", "Researcher:tools")]

    route = Route()
    result, _ = run(agent, [[function_call("save_note", {"text": "x"}, call_id="n1")],
                            [assistant_message("Saved.")]], route)
    assert route.steps == ["__start__", "Researcher", "Researcher:tools", "Researcher"]
    assert_route(ex, route.steps)


# ------------------------------------------------------------------ what the exporter cannot read
homework_agent = None  # set in the test: the guardrail's own agent (the SDK's guardrails example)


async def homework_guardrail(ctx, agent, input_data):
    """A guardrail that runs an agent (code the exporter does not follow)."""
    from agents import GuardrailFunctionOutput

    result = await Runner.run(homework_agent, input_data, context=ctx.context)
    return GuardrailFunctionOutput(output_info=result.final_output, tripwire_triggered=False)


async def polite_guardrail(ctx, agent, input_data):
    """A guardrail that only reads the text: nothing to the export."""
    from agents import GuardrailFunctionOutput

    return GuardrailFunctionOutput(output_info=None, tripwire_triggered="rude" in str(input_data))


async def note_handoff(ctx):
    """An on_handoff hook that runs an agent."""
    await Runner.run(homework_agent, "note the hand-off")


def quiet_handoff(ctx):
    """An on_handoff hook that only logs."""
    print("handing off")


def _line(text: str) -> int:
    return next(k + 1 for k, ln in enumerate(Path(__file__).read_text().splitlines()) if text in ln)


def test_mcp_servers_hooks_and_guardrails_that_run_agents_are_opaque(binary, tmp_path):
    """An MCP server's tools are listed at run time, and an on_handoff hook or a guardrail that runs
    an agent is code the exporter does not follow: each is an `opaque` entry (QG024) at the user's
    line, never silence. A hook or guardrail that only reads text is nothing."""
    global homework_agent
    from agents import Agent, InputGuardrail, handoff

    m = app("triage")
    homework_agent = Agent(name="Guardrail check", instructions="Is this homework?")

    class Server:  # stands for an MCPServerStdio: only its name is read
        name = "files"

    a = Agent(name="Desk", mcp_servers=[Server()],
              handoffs=[handoff(m.billing_agent, on_handoff=note_handoff), handoff(m.refund_agent, on_handoff=quiet_handoff)],
              input_guardrails=[InputGuardrail(guardrail_function=homework_guardrail),
                                InputGuardrail(guardrail_function=polite_guardrail)])
    ex = export(a)
    desk = next(n for n in ex["nodes"] if n["id"] == "Desk")
    tools = next(n for n in ex["nodes"] if n["id"] == "Desk:tools")
    assert tools["tools"] == [] and [o["what"] for o in tools["opaque"]] == ["tools"]
    assert "MCP server 'files'" in tools["opaque"][0]["why"]
    here = os.path.relpath(__file__, APPS)
    assert [(o["what"], o["location"]) for o in desk["opaque"]] == [
        ("subgraph", {"file": here, "line": _line("async def homework_guardrail")}),
        ("subgraph", {"file": here, "line": _line("async def note_handoff")})]
    assert desk["opaque"][0]["why"].startswith("the input guardrail homework_guardrail runs an agent (Runner.run) and "
                                               "runs or names the agent 'Guardrail check' (homework_agent): code the "
                                               "exporter does not follow")
    assert desk["opaque"][1]["why"].startswith("the on_handoff hook note_handoff of the hand-off to 'Billing' runs")
    assert {"from": "Desk:tools", "kind": "conditional", "destinations": ["Desk", "Billing", "Refunds"]} in ex["edges"]
    cat = export_agent_catalogue(a, {"lookup_invoice": {"kind": "read"}, "issue_refund": {"kind": "write"}})
    report = verify(binary, tmp_path, ex, cat)
    assert blocking(report) == [("QG001", "issue_refund", "Refunds:tools"), ("QG001", "lookup_invoice", "Billing:tools"),
                                ("QG001", "lookup_invoice", "Refunds:tools"), ("QG024", "subgraph:Desk", "Desk"),
                                ("QG024", "subgraph:Desk", "Desk"), ("QG024", "tools:Desk:tools", "Desk:tools")]



def test_two_agents_sharing_a_name_are_refused():
    from agents import Agent

    a = Agent(name="Same")
    b = Agent(name="Same")
    top = Agent(name="Top", handoffs=[a, b])
    with pytest.raises(TypeError, match="two different agents are named 'Same'"):
        export(top)


# ------------------------------------------------------------------ the smaller rows of the table
def always(_ctx, _params, _call_id) -> bool:
    return True


def test_hosted_mcp_approvals_enabled_routes_and_a_callable_returning_true(binary, tmp_path):
    """A HostedMCPTool's `require_approval` is a `call` review on the model node with another model
    call after it (A -> A); one without `allowed_tools` is opaque; a hand-off whose `is_enabled` is
    a function may exist, one `is_enabled=False` never does; `needs_approval` a function whose body
    is `return True` reviews every call."""
    from agents import Agent, HostedMCPTool, function_tool, handoff

    m = app("triage")
    wiki = HostedMCPTool(tool_config={"type": "mcp", "server_label": "deepwiki", "server_url": "https://x.example/mcp",
                                      "allowed_tools": ["ask_question", "read_wiki"],
                                      "require_approval": {"always": {"tool_names": ["ask_question"]}}})
    tracker = HostedMCPTool(tool_config={"type": "mcp", "server_label": "tracker", "server_url": "https://t.example/mcp",
                                         "require_approval": "never"})

    @function_tool(needs_approval=always)
    def close_ticket(ticket: str) -> str:
        """Close a ticket."""
        return "closed"

    a = Agent(name="Desk", tools=[wiki, tracker, close_ticket],
              handoffs=[handoff(m.billing_agent, is_enabled=lambda ctx, agent: True),
                        handoff(m.refund_agent, is_enabled=False)])
    ex = export(a)
    desk = next(n for n in ex["nodes"] if n["id"] == "Desk")
    assert desk["hosted"] == ["deepwiki.ask_question", "deepwiki.read_wiki", "tracker"]
    assert [o["what"] for o in desk["opaque"]] == ["tools"] and "'tracker' lists no allowed_tools" in desk["opaque"][0]["why"]
    assert ex["interrupts"] == [{"node": "Desk:tools", "when": "call", "tool": "close_ticket", "standing": True},
                                {"node": "Desk", "when": "call", "tool": "deepwiki.ask_question"}]
    assert {"from": "Desk", "kind": "conditional", "destinations": ["Desk:tools", "Billing", "Desk", "__end__"]} \
        in ex["edges"]
    assert "Refunds" not in [n["id"] for n in ex["nodes"]]
    cat = export_agent_catalogue(a)
    assert cat["tools"]["deepwiki.ask_question"]["kind"] is None and cat["tools"]["tracker"]["reads_outside"] is True
    report = verify(binary, tmp_path, ex, cat)
    assert report["rc"] == 1
    # every call is plain (QG001); the hosted MCP tools read outside text and are of undeclared kind (writes),
    # so a write after one is QG011/QG012, except deepwiki.ask_question, whose every call is reviewed on Desk;
    # close_ticket's review is standing (the application can answer always_approve), so a later call of it
    # runs unasked on outside text Desk's own hosted tools brought (QG011: Desk and Desk:tools are one region,
    # SPEC 3.1 "Standing approvals"); Billing's lookup after them is QG012; the unlisted tracker is QG024
    assert blocking(report) == [
        ("QG001", "close_ticket", "Desk:tools"), ("QG001", "deepwiki.ask_question", "Desk"),
        ("QG001", "deepwiki.read_wiki", "Desk"), ("QG001", "lookup_invoice", "Billing:tools"), ("QG001", "tracker", "Desk"),
        ("QG011", "close_ticket", "Desk:tools"), ("QG011", "deepwiki.read_wiki", "Desk"), ("QG011", "tracker", "Desk"),
        ("QG012", "lookup_invoice", "Billing:tools"), ("QG024", "tools:Desk", "Desk")]


def test_an_agent_tool_named_as_its_agent():
    """`as_tool()` without a tool_name names the tool after its agent: the node and the subgraph
    share the name, which is fine; an agent tool named as another agent of the same graph is
    refused, naming the clash."""
    from agents import Agent

    helper = Agent(name="helper")
    a = Agent(name="Boss", tools=[helper.as_tool(tool_name=None, tool_description="Helps")])
    ex = export(a)
    assert {"id": "helper", "kind": "subgraph", "graph": "helper"} in ex["nodes"]
    assert list(ex["subgraphs"]) == ["helper"]
    other = Agent(name="Peer")
    clash = Agent(name="Boss", handoffs=[other], tools=[helper.as_tool(tool_name="Peer", tool_description="x")])
    with pytest.raises(TypeError, match="two nodes 'Peer'"):
        export(clash)
