"""Issue 30 item 1, the rest of the SDK mapping (SPEC 13.1): an agent's MCP servers listed at
export time (a real FastMCP server over stdio, oa_apps/repo_server.py), their tools on `A:tools`
with MCP's default annotations, an unreachable server QG024 with its reason, and the two graph
words only an SDK export takes (`"standing": false`, `"turns": "restart"`). Each export is
verified with the Rust binary; the MCP agent is run on the real SDK, its steps routes of the
export. Skipped, saying so, without `openai-agents`."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("agents.testing", reason="openai-agents is not installed (python/requirements-test.txt pins it): "
                                             "the OpenAI Agents SDK exporter tests are skipped")
from agents import RunConfig, Runner, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from stalwart_export._words import WordsError  # noqa: E402
from stalwart_export.openai_agents import export_agent, export_agent_catalogue  # noqa: E402
from test_openai_agents import Route, app, assert_calls, assert_route, blocking, verify  # noqa: E402

set_tracing_disabled(True)
APPS = Path(__file__).resolve().parent / "oa_apps"


def tools_node(ex: dict, agent: str) -> dict:
    return next(n for n in ex["nodes"] if n["id"] == f"{agent}:tools")


def test_mcp_servers_are_listed_at_export_time_and_run_as_exported(binary, tmp_path):
    m = app("mcp_repo")
    ex = export_agent(m.repo_agent, base=str(APPS))
    node = tools_node(ex, "Maintainer")
    assert node["kind"] == "tools_plain" and node["agent"] == "Maintainer"
    assert node["tools"] == ["read_issue", "push_file", "list_branches"]
    assert "opaque" not in node
    cat = export_agent_catalogue(m.repo_agent)["tools"]
    # list_branches says it is a closed-world read; the other two say nothing, so MCP's defaults apply
    assert cat["list_branches"]["kind"] == "read" and not cat["list_branches"].get("reads_outside")
    for t in ("read_issue", "push_file"):
        assert cat[t]["kind"] == "write", cat[t]
    report = verify(binary, tmp_path, ex, {"format": "qls-catalogue/1", "tools": cat})
    assert report["rc"] == 1
    rules = {(r, s) for r, s, _n in blocking(report)}
    assert ("QG001", "push_file") in rules and ("QG024", "tools:Maintainer:tools") not in rules

    # the same agent on the real SDK: the server connected by the application, the calls through it
    route = Route()
    script = [[function_call("read_issue", {"number": 7}, call_id="c1")],
              [function_call("push_file", {"path": "x.txt", "content": "hi"}, call_id="c2")],
              [assistant_message("done")]]

    async def go():
        async with m.repo_agent.mcp_servers[0]:
            return await Runner.run(m.repo_agent, "triage issue 7", run_config=RunConfig(model=ScriptedModel(script)),
                                    hooks=route)

    result = asyncio.run(go())
    assert result.final_output == "done"
    assert route.calls == [("Maintainer:tools", "read_issue"), ("Maintainer:tools", "push_file")]
    assert_route(ex, route.steps)
    assert_calls(ex, route.calls)


def test_an_mcp_server_that_cannot_be_listed_is_unread_code(binary, tmp_path):
    m = app("mcp_repo")
    ex = export_agent(m.unreachable_agent, base=str(APPS))
    node = tools_node(ex, "Maintainer")
    [entry] = node["opaque"]
    assert entry["what"] == "tools"
    assert entry["why"].startswith("the MCP server 'gone': its tools are listed at run time, and the exporter could "
                                   "not list them at export time: it could not be listed (FileNotFoundError")
    report = verify(binary, tmp_path, ex, {"format": "qls-catalogue/1", "tools": {}})
    assert report["rc"] == 1
    assert [f["rule"] for f in report["findings"] if f["blocks"]] == ["QG024"]


def test_standing_false_makes_the_reviews_per_call(binary, tmp_path):
    from agents import Agent, function_tool

    @function_tool(needs_approval=True)
    def close_ticket(ticket: str) -> str:
        """Close a ticket."""
        return "closed"

    desk = Agent(name="Desk", tools=[close_ticket])
    assert export_agent(desk)["interrupts"] == [{"node": "Desk:tools", "when": "call", "tool": "close_ticket",
                                                 "standing": True}]
    ex = export_agent(desk, words={"standing": False})
    assert ex["interrupts"] == [{"node": "Desk:tools", "when": "call", "tool": "close_ticket"}]
    assert any("never approves with always_approve" in w for w in ex["warnings"])
    with pytest.raises(WordsError, match="`standing` must be true or false"):
        export_agent(desk, words={"standing": "no"})


def test_turns_restart_starts_every_turn_at_the_starting_agent():
    m = app("triage")
    ex = export_agent(m.triage_agent)
    assert [e for e in ex["edges"] if e["from"] == "__start__"][1]["guard"] == "later_turn"
    ex = export_agent(m.triage_agent, words={"turns": "restart"})
    assert [e for e in ex["edges"] if e["from"] == "__start__"] == [
        {"from": "__start__", "kind": "fixed", "destinations": ["Triage"]}]
    assert "state" not in ex
    with pytest.raises(WordsError, match='`turns` must be "restart"'):
        export_agent(m.triage_agent, words={"turns": "first"})


def test_sdk_words_on_a_langgraph_export_are_an_error(tmp_path):
    from lg_apps import teams
    from stalwart_export import export_graph

    for k, v in (("standing", False), ("turns", "restart")):
        with pytest.raises(WordsError, match=f"`{k}` is a word of an OpenAI Agents SDK export"):
            export_graph(teams.graph, words={k: v})
