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
from agents import (Agent, AgentHooks, RunResult, Runner, ToolsToFinalOutputResult, function_tool,  # noqa: E402
                    handoff)
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402
from test_openai_agents import Route, assert_calls, assert_route, edge  # noqa: E402

from stalwart_export.openai_agents import export_agent  # noqa: E402

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
