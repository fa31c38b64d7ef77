"""The guard parity driver (guard_parity_driver.py, /work/notes/guard-parity.md) on hand-written
sessions whose decisions SPEC 3 and 12.1 settle, run as the Rust test runs it."""

import json
import subprocess
import sys

from helpers import PYTHON_DIR

DRIVER = PYTHON_DIR / "tests" / "guard_parity_driver.py"

CAT = {"format": "qls-catalogue/1", "tools": {
    "inbox": {"kind": "read", "reads_outside": True},
    "look": {"kind": "read"},
    "pay": {"kind": "write", "order": {"after": ["look"], "at_most": 1}},
    "drop": {"kind": "write", "irreversible": True, "order": {"not_after": ["untrusted"]}},
}}


def ran(reason=None, asked=False):
    return {"ran": True, "reason": None, "asked": asked}


def no(reason, asked=False):
    return {"ran": False, "reason": reason, "asked": asked}


CASES = [
    # after, at_most over two turns, a declined write changes nothing
    ({"catalogue": CAT, "taint_policy": "confirm", "turns": [
        [{"tool": "pay", "answer": "yes"}, {"tool": "look", "answer": None}, {"tool": "pay", "answer": "no"},
         {"tool": "pay", "answer": "yes"}],
        [{"tool": "pay", "answer": "yes"}]]},
     [no("order_rule"), ran(), no("declined", True), ran(asked=True), no("order_rule")]),
    # not_after untrusted, and a tainted write confirmed (policy confirm) or refused (refuse)
    ({"catalogue": CAT, "taint_policy": "confirm", "turns": [
        [{"tool": "drop", "answer": "yes"}, {"tool": "inbox", "answer": None}, {"tool": "drop", "answer": "yes"},
         {"tool": "look", "answer": None}, {"tool": "pay", "answer": "yes"}]]},
     [ran(asked=True), ran(), no("order_rule"), ran(), ran(asked=True)]),
    ({"catalogue": CAT, "taint_policy": "refuse", "turns": [
        [{"tool": "inbox", "answer": None}, {"tool": "look", "answer": None}, {"tool": "pay", "answer": "yes"}]]},
     [ran(), ran(), no("tainted_call")]),
    ({"catalogue": CAT, "taint_policy": "confirm", "turns": [[{"tool": "ghost", "answer": None}]]},
     [no("unknown_tool")]),
]


def test_the_driver_gives_the_decisions_the_spec_settles(tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [c for c, _ in CASES]}))
    p = subprocess.run([sys.executable, str(DRIVER), str(cases)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["results"]
    assert got == [want for _, want in CASES]


def test_a_case_without_the_persons_answer_is_an_error(tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [{"catalogue": CAT, "turns": [[{"tool": "drop", "answer": None}]]}]}))
    p = subprocess.run([sys.executable, str(DRIVER), str(cases)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "gives no answer" in p.stderr and len(p.stderr.strip().splitlines()) == 1
