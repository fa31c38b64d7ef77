"""Issue 16, item 9: examples/langgraph_replay/replay_harness.py replays a witness on the user's
compiled graph, unmodified (`module:graph`): a scripted model and stub tools in place of theirs,
subgraphs streamed, arguments valid for each tool's schema, the graph's own input from a file,
and every failure one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import PYTHON_DIR, REPO
from stalwart_export import export_catalogue, export_graph

HARNESS = REPO / "examples" / "langgraph_replay" / "replay_harness.py"


def harness(*args, cwd, pythonpath=()):
    """`python -m stalwart_export replay ARGS` as a user runs it, the package on PYTHONPATH."""
    path = ":".join(map(str, (*pythonpath, PYTHON_DIR / "tests", PYTHON_DIR)))
    env = {"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "stalwart_export", "replay", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture()
def team_script(binary, tmp_path):
    """The export of lg_apps.teams, its catalogue, and the script of QG105 on issue_credit (a call
    inside the billing subgraph)."""
    from lg_apps import teams

    g, c = tmp_path / "graph.json", tmp_path / "catalogue.json"
    g.write_text(json.dumps(export_graph(teams.graph, base=str(tmp_path))))
    c.write_text(json.dumps(export_catalogue(teams.graph, teams.WORDS)))
    rep = json.loads(subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--format", "json"],
                                    capture_output=True, text=True, timeout=300).stdout)
    f = next(f for f in rep["findings"] if f["rule"] == "QG001" and f["subject"] == "issue_credit")
    assert f["node"] == "billing/tools"
    p = subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--replay", f["fingerprint"],
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    script = tmp_path / "script.json"
    script.write_text(p.stdout)
    (tmp_path / "input.json").write_text(json.dumps(teams.INPUT))
    return script, c


def test_the_witness_inside_a_subgraph_replays_on_the_unmodified_graph(team_script, tmp_path):
    script, cat = team_script
    p = harness(script, cat, "--graph", "lg_apps.teams:graph", "--input", tmp_path / "input.json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the real graph follows the witness and makes its calls ['issue_credit']" in p.stdout


def test_without_the_graphs_input_it_says_why_in_one_line(team_script, tmp_path):
    script, cat = team_script
    p = harness(script, cat, "--graph", "lg_apps.teams:graph", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "does not follow the witness: step 3 (enter 'intake'): the graph raised KeyError: 'ticket' in node "
        "'intake', after '__start__'"), p.stdout


def test_a_graph_that_does_not_follow_is_one_line_at_the_step(team_script, tmp_path):
    script, cat = team_script
    # the support graph has no billing node: the first step the witness takes there does not happen
    p = harness(script, cat, "--graph", "lg_apps.handwritten:graph", "--input", tmp_path / "input.json",
                cwd=tmp_path)
    assert p.returncode == 1
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1 and "step " in lines[0] and "(enter 'intake')" in lines[0], p.stdout


def test_harness_errors_are_one_line_exit_2(team_script, tmp_path):
    script, cat = team_script
    for args, want in ((("--graph", "no_such_module:graph"), "cannot load no_such_module:graph"),
                       (("--graph", "lg_apps.teams"), "give MODULE:ATTR"),
                       (("--graph", "lg_apps.teams:INPUT"), "not a compiled LangGraph graph"),
                       (("--graph", "lg_apps.teams:graph", "--input", tmp_path / "nope.json"), "cannot read the input")):
        p = harness(script, cat, *args, cwd=tmp_path)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stderr.count("\n") == 1 and want in p.stderr, (args, p.stderr)


def test_arguments_are_valid_for_each_schema():
    from stalwart_export import replay as h

    from lg_apps import handwritten, teams

    for t in (teams.issue_credit, handwritten.send_email, teams.lookup_invoice):
        args = h.arguments(h.tool_schema(t))
        t.args_schema.model_validate(args)  # raises when invalid
    assert h.arguments({"type": "object", "required": ["n", "mode"],
                        "properties": {"n": {"type": "integer", "minimum": 3},
                                       "mode": {"enum": ["fast", "slow"]}}}) == {"n": 3, "mode": "fast"}
