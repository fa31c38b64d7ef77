"""Issue 28 item 5 (SPEC 12.4): findings point at the user's own lines when the agent is built
where the exporter does not look first - a factory module (`graph = build_graph()`), a class's
method, a module the loaded one imports, two graphs whose builders share a name (`builder` in two
modules, or in two functions of one module) - and a finding on an effect the words declare
(`nodes.X.calls`) points at the words file's line, not at the generated catalogue. Each app of
python/tests/lg_apps/factory/ is exported as the CLI does (its module and attribute as `origin`),
verified by the Rust binary, and each finding's file:line compared with the `# <- marker` line."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from helpers import REPO
from lg_apps.factory import app, klass, mailer, served, team, two_builders
from stalwart_export import export_catalogue, export_graph
from stalwart_export.__main__ import main

WORDS = {"read_inbox": {"kind": "read", "reads_outside": True},
         "send_email": {"kind": "write", "sends_out": True},
         "book_meeting": {"kind": "write"}}


def marker(module: Any, mark: str) -> tuple[str, int]:
    """(the module's file, the line ending with `# <- mark`)."""
    path = os.path.realpath(module.__file__)
    [n] = [i + 1 for i, t in enumerate(open(path).read().splitlines()) if t.rstrip().endswith(f"# <- {mark}")]
    return path, n


def findings(binary: str, gp: Any, cp: Any) -> list[dict]:
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)["findings"]


def at(f: dict) -> tuple[str, int]:
    """A finding's file (resolved from the repository) and line."""
    loc = f["location"]
    return os.path.realpath(os.path.join(REPO, loc["file"])), loc["line"]


def exported(module: Any, binary: str, tmp_path: Any) -> list[dict]:
    graph = module.graph
    tools = {t for n in _nodes(export_graph(graph, provenance=False)) for t in n.get("tools") or []}
    words = {k: v for k, v in WORDS.items() if k in tools}
    e = export_graph(graph, provenance=False, base=str(tmp_path), words=words, origin=(module.__file__, "graph"))
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(e))
    cp.write_text(json.dumps(export_catalogue(graph, words)))
    return findings(binary, gp, cp)


def _nodes(e: dict) -> list[dict]:
    return [n for g in [e, *e["subgraphs"].values()] for n in g["nodes"]]


def qg001_at(fs: list[dict], node: str) -> set[tuple[str, int]]:
    """Where each QG001 on node `node` points."""
    got = {at(f) for f in fs if f["rule"] == "QG001" and f["node"] == node}
    assert got, [(f["rule"], f["node"]) for f in fs]
    return got


@pytest.mark.parametrize("module, node, mark", [
    # before: no line (factory.py was never read): the finding fell back to the export
    (app, "tools", ("factory", "factory tools")),
    (klass, "tools", (klass, "class tools")),
    # before: mail/tools pointed at calendar_team.py's `add_node("tools", ...)`, another agent's line
    (team, "mail/tools", ("mail_team", "mail tools")),
    (team, "calendar/tools", ("calendar_team", "calendar tools")),
    # before: two builders alike in one module: no line for calendar/tools
    (two_builders, "mail/tools", (two_builders, "two mail tools")),
    (two_builders, "calendar/tools", (two_builders, "two calendar tools")),
    # before: the module loaded only re-exports the agent: no line (react_agent.py never read)
    (served, "tools", ("react_agent", "react agent")),
])
def test_a_tool_node_finding_is_at_the_users_add_node_line(module, node, mark, binary, tmp_path):
    mod, name = mark
    if isinstance(mod, str):
        import importlib

        mod = importlib.import_module(f"lg_apps.factory.{mod}")
    file, line = marker(mod, name)
    got = qg001_at(exported(module, binary, tmp_path), node)
    assert {(f, ln) for f, ln in got} == {(file, line)}, got


def test_the_team_s_subgraph_nodes_are_at_their_add_node_lines(tmp_path):
    """A graph whose nodes are all subgraphs was read as a prebuilt agent's (no line): each is at
    its `add_node` line of team.py."""
    e = export_graph(team.graph, provenance=False, base=str(tmp_path), origin=(team.__file__, "graph"))
    src = open(team.__file__).read().splitlines()
    for name in ("mail", "calendar"):
        n = next(x for x in e["nodes"] if x["id"] == name)
        loc = n["location"]
        assert os.path.realpath(os.path.join(tmp_path, loc["file"])) == os.path.realpath(team.__file__)
        assert src[loc["line"] - 1].strip().startswith(f'builder.add_node("{name}"'), loc


def test_a_declared_effect_s_finding_is_at_the_words_line(binary, tmp_path):
    """`nodes.send_digest.calls.gmail_send` in the words file: QG101 on gmail_send (a write with no
    check) points at the words file's `"gmail_send"` line (before: at the generated catalogue); the
    QG001 on the step stays at its `def`, read_inbox's at its `@tool` definition."""
    words = tmp_path / "words.json"
    words.write_text(json.dumps({
        "read_inbox": {"kind": "read", "reads_outside": True},
        "nodes": {"send_digest": {"calls": {"gmail_send": {"kind": "write", "sends_out": True}}}},
    }, indent=2))
    line, column = next((i + 1, t.index('"gmail_send"') + 1)
                        for i, t in enumerate(words.read_text().splitlines()) if '"gmail_send"' in t)
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    assert main(["lg_apps.factory.mailer:graph", "-o", str(gp), "--catalogue", str(cp), "--words", str(words)]) == 0
    e = json.loads(gp.read_text())
    assert e["tool_locations"]["gmail_send"]["location"] == {"file": "words.json", "line": line, "column": column}
    # read_inbox has words too, and a definition of the user's: it stays at its definition
    from lg_apps.factory import tools

    inbox = e["tool_locations"]["read_inbox"]["location"]
    assert os.path.realpath(os.path.join(tmp_path, inbox["file"])) == os.path.realpath(tools.__file__), inbox
    fs = findings(binary, gp, cp)
    [q] = [f for f in fs if f["rule"] == "QG101" and f["subject"] == "gmail_send"]
    assert at(q) == (os.path.realpath(words), line), q["location"]
    step = {at(f) for f in fs if f["rule"] == "QG001" and f["node"] == "send_digest"}
    assert step == {(os.path.realpath(mailer.__file__), marker_def(mailer, "send_digest"))}


def marker_def(module: Any, fn: str) -> int:
    src = open(module.__file__).read().splitlines()
    return next(i + 1 for i, t in enumerate(src) if t.startswith(f"def {fn}("))


def test_words_locate_only_tools_with_no_definition_of_the_users(tmp_path):
    """`_words.declared_at`: a node's `calls` entry first, else the tool's top-level words (a
    hosted or MCP tool only the words describe); nothing for words given as a mapping (no file)."""
    from stalwart_export import _words

    spots = {("nodes", "send", "calls", "gmail_send"): 7, ("gmail_send",): 2, ("web_search_preview",): 3}
    w = _words.split({"gmail_send": {"kind": "write"}, "web_search_preview": {"kind": "read"},
                      "nodes": {"send": {"calls": {"gmail_send": {"kind": "write"}}}}})
    assert _words.declared_at(w, ["gmail_send"], str(tmp_path)) == {}
    w.place = lambda keys: (str(tmp_path / "words.json"), spots[keys], 5) if keys in spots else None
    got = _words.declared_at(w, ["gmail_send", "web_search_preview", "lookup"], str(tmp_path))
    assert got == {"gmail_send": {"location": {"file": "words.json", "line": 7, "column": 5}},
                   "web_search_preview": {"location": {"file": "words.json", "line": 3, "column": 5}}}
