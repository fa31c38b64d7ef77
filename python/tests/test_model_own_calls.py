"""Issue 28 (nothing unseen passes): a model node whose own code also runs a tool is read, not
dropped - its calls are the node's `hosted` calls (plain calls during its visit, SPEC 2.2), so a
search before the model answers taints the send after it, and code the model wrote run by the
node is QG017; the words' `calls` declare the same on a model node; a retriever a step runs
directly is an `opaque` entry (QG024). Apps in lg_apps/unseen/planner.py, each exported and
verified with the Rust binary."""

from __future__ import annotations

import json
import subprocess

from lg_apps.unseen import planner
from test_unseen import export, line_of, node_of, verify

from stalwart_export import export_graph
from helpers import REPO

CAT = {"format": "qls-catalogue/1", "tools": {
    "web_search": {"kind": "read", "reads_outside": True, "args": {"query": {"type": "string"}}},
    "send_report": {"kind": "write", "sends_out": True, "args": {"to": {"type": "string", "role": "destination"},
                                                                  "body": {"type": "string"}}},
    "run_python": {"kind": "write", "args": {"code": {"type": "string", "role": "code"}}},
}}


def run_verify(binary, tmp_path, e, cat=CAT):
    gp, cp = tmp_path / "g.json", tmp_path / "c.json"
    gp.write_text(json.dumps(e))
    cp.write_text(json.dumps(cat))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, sorted({(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"]
                                 if f["blocks"]})


def test_a_planner_that_searches_before_it_answers_is_read(binary, tmp_path):
    e = export(planner.graph)
    node = node_of(e, "planner")
    assert node["kind"] == "model" and node["hosted"] == ["web_search"]
    assert "opaque" not in node
    assert any("runs 'web_search' itself" in w for w in e["warnings"])
    code, found = run_verify(binary, tmp_path, e)
    assert code == 1
    # the search is a plain call (QG001), and the send after what it read is tainted (QG011), where
    # before this the node was a bare model node and the search was never seen
    assert ("QG001", "web_search", "planner") in found
    assert ("QG011", "send_report", "tools") in found


def test_code_the_model_wrote_run_by_its_own_node_is_qg017(binary, tmp_path):
    e = export(planner.coder_graph)
    node = node_of(e, "coder")
    assert node["kind"] == "model" and node["hosted"] == ["run_python"]
    code, found = run_verify(binary, tmp_path, e)
    assert code == 1 and ("QG017", "run_python", None) in {(r, s, None) for r, s, _n in found}


def test_the_words_declare_what_a_model_node_does_itself(binary, tmp_path):
    e = export(planner.coder_graph, words={"nodes": {"coder": {"calls": {"audit_log": {"kind": "write"}}}}})
    node = node_of(e, "coder")
    assert node["kind"] == "model" and node["hosted"] == ["run_python", "audit_log"]
    assert node["declared"] == ["calls"]


def test_a_retriever_run_by_a_step_is_unread_code(binary, tmp_path):
    e = export(planner.retriever_graph)
    [entry] = node_of(e, "retrieve")["opaque"]
    assert entry["what"] == "tools" and "runs the retriever Notes" in entry["why"]
    file, line = line_of(planner, "retriever")
    assert (entry["location"]["file"], entry["location"]["line"]) == (file, line)
    code, found = run_verify(binary, tmp_path, e, {"format": "qls-catalogue/1", "tools": {}})
    assert code == 1 and [r for r, _s, _n in found] == ["QG024"]
