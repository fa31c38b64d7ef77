"""python -m stalwart_export module:graph -o graph.json --catalogue catalogue.json, then stalwart verify."""

import json
import subprocess
import sys
import textwrap

from helpers import PYTHON_DIR, stalwart_bin


def test_cli_writes_graph_and_catalogue_and_stalwart_reads_them(tmp_path):
    (tmp_path / "myapp.py").write_text(textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        import graphs
        graph = graphs.build_react_agent_interrupt()[0]
    """ % str(PYTHON_DIR / "tests")))
    (tmp_path / "words.json").write_text(json.dumps(
        {"read_inbox": {"kind": "read", "reads_outside": True}, "get_order": {"kind": "read"},
         "refund_order": {"kind": "write"}}))
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "myapp:graph", "-o", "graph.json",
                        "--catalogue", "catalogue.json", "--words", "words.json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    g = json.loads((tmp_path / "graph.json").read_text())
    c = json.loads((tmp_path / "catalogue.json").read_text())
    assert g["format"] == "qls-graph/1" and g["name"] == "react_agent_interrupt"
    assert set(c["tools"]) == {"read_inbox", "get_order", "refund_order"}
    b = stalwart_bin()
    if b is None:
        print("no stalwart binary: the verify step of the CLI test is skipped")
        return
    v = subprocess.run([b, "verify", "--graph", "graph.json", "--catalogue", "catalogue.json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert v.returncode == 1, v.stdout + v.stderr  # the plain tool node: QG001 fails the gate
    assert "QG001" in v.stdout


def test_cli_bad_target_is_exit_2(tmp_path):
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "no_such_module:graph"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "cannot export" in p.stderr
