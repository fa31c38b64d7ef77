"""Issue 28 item 4: a typo in the exporter's words is an error at its line naming the word meant,
never a kept word the rules ignore (`irreversable` dropped a QG013, `reads_outsid` a Critical
QG011). A word far from every known word is kept: the verifier names it in its `unknown_word`
lint (SPEC 2.3). The CLI exits 2 with the file, line and column and the fix, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from helpers import PYTHON_DIR
from stalwart_export._words import WordsError, meant, split

APP = textwrap.dedent('''
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode


    @tool
    def refund_order(order_id: str) -> str:
        """Refund an order."""
        return "refunded"


    def send(state: MessagesState):
        return {}


    b = StateGraph(MessagesState)
    b.add_node("tools", ToolNode([refund_order]))
    b.add_node("send", send)
    b.add_edge(START, "tools")
    b.add_edge("tools", "send")
    graph = b.compile()
''')

#: (words file text, the word, its line, its column, the word meant)
TYPOS = {
    "irreversable": ('{"refund_order": {"kind": "write",\n  "irreversable": true}}', "irreversable", 2, 3,
                     "irreversible"),
    "reads_outsid": ('{"refund_order": {"kind": "write", "reads_outsid": true}}', "reads_outsid", 1, 36,
                     "reads_outside"),
    "sends_ou": ('{"refund_order": {"kind": "write", "sends_ou": true}}', "sends_ou", 1, 36, "sends_out"),
    "order_word": ('{"refund_order": {"kind": "write", "order": {"aftr": ["x"]}}}', "aftr", 1, 46, "after"),
    "role": ('{"refund_order": {"kind": "write", "args": {"order_id": {"role": "destinaton"}}}}', "destinaton",
             1, 58, "destination"),
    "node_word": ('{"nodes": {"send": {"reveiws": []}}}', "reveiws", 1, 21, "reviews"),
    "calls_word": ('{"nodes": {"send": {"calls": {"mail": {"kind": "write", "sends_ou": true}}}}}', "sends_ou", 1,
                   57, "sends_out"),
    "graph_key": ('{"node": {"send": {"pure": "x"}}}', "node", 1, 2, "nodes"),
    "input_word": ('{"input": {"reads_outsde": true}}', "reads_outsde", 1, 12, "reads_outside"),
}


def cli(tmp_path, words: str):
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "words.json").write_text(words)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(PYTHON_DIR)]))
    env.pop("STALWART_EXPORT_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "stalwart_export", "app:graph", "-o", "graph.json",
                           "--catalogue", "catalogue.json", "--words", "words.json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("shape", list(TYPOS))
def test_a_misspelt_word_is_exit_2_at_its_line(shape, tmp_path):
    text, word, line, column, want = TYPOS[shape]
    p = cli(tmp_path, text)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    [msg] = p.stderr.strip().splitlines()
    assert f"words.json:{line}:{column}: {word!r}" in msg, msg
    assert f"did you mean {want!r}? Write {want!r}" in msg, msg
    assert not (tmp_path / "catalogue.json").exists() and not (tmp_path / "graph.json").exists()


def test_a_far_word_is_kept_for_the_verifiers_lint(tmp_path, binary):
    """`team_owner` is near no word: kept in the catalogue, and the verifier names it in its
    `unknown_word` lint (the rules ignore it)."""
    p = cli(tmp_path, '{"refund_order": {"kind": "write", "team_owner": "billing"}}')
    assert p.returncode == 0, p.stderr
    cat = json.loads((tmp_path / "catalogue.json").read_text())
    assert cat["tools"]["refund_order"]["team_owner"] == "billing"
    v = subprocess.run([binary, "verify", "--graph", "graph.json", "--catalogue", "catalogue.json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert v.returncode in (0, 1), v.stderr
    assert "unknown_word (warning) on refund_order: 'team_owner' is not a word of the catalogue: it is kept" in v.stdout


def test_meant_matches_the_verifiers_nearest():
    """The same threshold as the verifier's `rulebook::library::nearest`: a quarter of the word's
    length (1 to 3 edits), a transposition one edit; the word itself and far words give None."""
    assert meant("irreversable", ["irreversible", "kind"]) == "irreversible"
    assert meant("auht", ["auth"]) == "auth"
    assert meant("tags", ["args"]) is None
    assert meant("owner", ["order"]) is None
    assert meant("kind", ["kind", "kinds"]) is None
    with pytest.raises(WordsError, match="did you mean 'irreversible'"):
        split({"pay": {"irreversable": True}})


@pytest.mark.parametrize("word", ['{"pure": "formats"}', '{"model": true}'])
def test_a_word_naming_a_missing_node_is_exit_2(word, tmp_path):
    """SPEC 12.3: `pure`/`model` on a node the graph does not have is an error at the word."""
    p = cli(tmp_path, '{"nodes": {"sned": ' + word + "}}")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "words.json:1:12: the graph has no node 'sned' (its nodes: tools, send" in p.stderr, p.stderr
