"""python -m stalwart_export module:graph -o graph.json --catalogue catalogue.json, then stalwart verify."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

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


# ---------------------------------------------------------------- errors: one line, exit 2

MYAGENT = '''
from typing import TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


@tool
def wire_money(to: str, amount: float) -> str:
    """Send money."""
    return "sent"


builder = StateGraph(MessagesState)
builder.add_node("tools", ToolNode([wire_money]))
builder.add_edge(START, "tools")
graph = builder.compile()
model = FakeListChatModel(responses=["hi"])


class Fake:
    name = None


other = Fake()
n = 3
lst = [graph]


def make():
    return builder.compile()


def make_builder():
    return builder


def make_model():
    return model


def needs(config):
    return graph


def raises():
    raise RuntimeError("no API key for the model")
'''


def cli(tmp_path, *args, env=None):
    """Run `python -m stalwart_export *args` in tmp_path with tmp_path/mods (myagent.py and
    friends) on PYTHONPATH."""
    mods = tmp_path / "mods"
    if not mods.exists():
        mods.mkdir()
        (mods / "myagent.py").write_text(MYAGENT)
        (mods / "broken.py").write_text('raise ValueError("bad config: MODEL_NAME is not set")\n')
        (mods / "needs_dep.py").write_text("import no_such_dependency_xyz\ngraph = None\n")
        (mods / "chatty.py").write_text("print('loading chatty')\nfrom myagent import graph\n")
    full_env = dict(os.environ, PYTHONPATH=str(mods))
    full_env.pop("STALWART_EXPORT_DEBUG", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "stalwart_export", *args], cwd=tmp_path, env=full_env,
                          capture_output=True, text=True, timeout=120)


def one_error(p, *needles):
    """Exit 2 and one line `stalwart-export: error: ...` on stderr containing each needle."""
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("stalwart-export: error: "), p.stderr
    assert "Traceback" not in p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def test_cli_compiled_graph_and_factory_are_exported(tmp_path):
    for spec in ("myagent:graph", "myagent:make"):
        p = cli(tmp_path, spec, "-o", "g.json")
        assert p.returncode == 0, p.stderr
        g = json.loads((tmp_path / "g.json").read_text())
        assert g["format"] == "qls-graph/1" and any(n["kind"] == "tools_plain" for n in g["nodes"])


@pytest.mark.parametrize("attr, found", [
    ("model", "is a FakeListChatModel (from langchain_core"),  # the tester's case: it exported as one opaque step
    ("other", "is a Fake (from myagent)"),
    ("n", "is an int"),
    ("lst", "is a list"),
    ("Fake", "is the class myagent.Fake"),
])
def test_cli_not_a_graph_is_exit_2(tmp_path, attr, found):
    p = cli(tmp_path, f"myagent:{attr}", "-o", "g.json")
    one_error(p, f"myagent:{attr} {found}", "not a compiled LangGraph graph", "StateGraph(...).compile()")
    assert not (tmp_path / "g.json").exists()


def test_cli_chat_model_is_named_as_one(tmp_path):
    one_error(cli(tmp_path, "myagent:model"), "a chat model")


def test_cli_function_returning_a_non_graph_or_needing_arguments(tmp_path):
    one_error(cli(tmp_path, "myagent:make_model"), "myagent:make_model() returned a FakeListChatModel",
              "make the function return the compiled graph")
    one_error(cli(tmp_path, "myagent:needs"), "myagent:needs is a function that needs arguments",
              "function of no arguments")


@pytest.mark.parametrize("spec", ["myagent:builder", "myagent:graph.builder", "myagent:make_builder"])
def test_cli_uncompiled_state_graph_is_exit_2(tmp_path, spec):
    for extra in ([], ["--catalogue", "c.json"]):
        p = cli(tmp_path, spec, "-o", "g.json", *extra)
        one_error(p, "this is a StateGraph builder: call .compile() and export the compiled graph")
        assert not (tmp_path / "g.json").exists() and not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("args, needle", [
    ([":graph"], "has no module before the colon"),
    (["myagent"], "expected MODULE:ATTR"),
    (["myagent:"], "has no attribute after the colon"),
    (["myagent.py:graph"], "is a file path: name the module as Python imports it (myagent:graph)"),
    (["myagent:graph-x"], "is not an attribute name"),
    ([], "the following arguments are required: MODULE:ATTR"),
    (["myagent:graph", "--bogus"], "unrecognized arguments: --bogus"),
    (["myagent:grph"], "myagent has no attribute 'grph'; its graphs: builder, graph"),
    (["no_such_module:graph"], "no module named 'no_such_module' on the import path"),
])
def test_cli_usage_errors_are_one_line_exit_2(tmp_path, args, needle):
    one_error(cli(tmp_path, *args), needle)


def test_cli_unwritable_output_is_exit_2(tmp_path):
    one_error(cli(tmp_path, "myagent:graph", "-o", "/nonexist/dir/x.json"),
              "cannot write the graph to '/nonexist/dir/x.json'", "does not exist")
    one_error(cli(tmp_path, "myagent:graph", "-o", "g.json", "--catalogue", str(tmp_path / "nope" / "c.json")),
              "cannot write the catalogue", "does not exist")
    assert not (tmp_path / "g.json").exists()  # checked before anything is written
    one_error(cli(tmp_path, "myagent:graph", "-o", str(tmp_path)), "it is a directory")
    one_error(cli(tmp_path, "myagent:graph", "-o", "g.json", "--catalogue", "g.json"), "the same file")


def test_cli_bad_words_file_is_exit_2(tmp_path):
    base = ["myagent:graph", "-o", "g.json", "--catalogue", "c.json", "--words"]
    (tmp_path / "bad.json").write_text('{"wire_money": {"kind": "write"},\n "x" 1}\n')
    one_error(cli(tmp_path, *base, "bad.json"), "words file 'bad.json' is not valid JSON: line 2 column 6")
    one_error(cli(tmp_path, *base, "missing.json"), "cannot read words file 'missing.json'", "No such file")
    (tmp_path / "kind.json").write_text('{"wire_money": {"kind": "delete"}}')
    one_error(cli(tmp_path, *base, "kind.json"), "kind.json:1:17: ", "'wire_money'",
              "kind must be 'read', 'write' or null (not yet declared), not 'delete'")
    (tmp_path / "list.json").write_text('[{"wire_money": {"kind": "write"}}]')
    one_error(cli(tmp_path, *base, "list.json"), "words file 'list.json'", "not a list", '{"tool": {"word": value}}')
    (tmp_path / "flat.json").write_text('{"wire_money": "write"}')
    one_error(cli(tmp_path, *base, "flat.json"), "words for tool 'wire_money' must be an object")
    (tmp_path / "args.json").write_text('{"wire_money": {"kind": "write", "args": {"to": "destination"}}}')
    one_error(cli(tmp_path, *base, "args.json"), "args['to'] must be an object")
    assert not (tmp_path / "g.json").exists() and not (tmp_path / "c.json").exists()


def test_cli_words_without_catalogue_is_refused(tmp_path):
    (tmp_path / "w.json").write_text('{"wire_money": {"kind": "write"}}')
    one_error(cli(tmp_path, "myagent:graph", "-o", "g.json", "--words", "w.json"),
              "--words is used only with --catalogue")
    assert not (tmp_path / "g.json").exists()
    p = cli(tmp_path, "myagent:graph", "-o", "g.json", "--catalogue", "c.json", "--words", "w.json")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "c.json").read_text())["tools"]["wire_money"]["kind"] == "write"


def test_cli_user_code_raising_is_one_line_exit_2(tmp_path):
    one_error(cli(tmp_path, "broken:graph"),
              "cannot import broken:graph: ValueError: bad config: MODEL_NAME is not set", 'python -c "import broken"',
              "STALWART_EXPORT_DEBUG=1")
    one_error(cli(tmp_path, "myagent:raises"),
              "cannot build myagent:raises: RuntimeError: no API key for the model", "myagent.raises()")
    one_error(cli(tmp_path, "needs_dep:graph"),
              "cannot import needs_dep:graph: ModuleNotFoundError: No module named 'no_such_dependency_xyz'")


def test_cli_debug_env_shows_the_traceback(tmp_path):
    p = cli(tmp_path, "myagent:raises", env={"STALWART_EXPORT_DEBUG": "1"})
    assert p.returncode == 1 and "Traceback" in p.stderr and "RuntimeError: no API key for the model" in p.stderr


def test_cli_prints_at_import_do_not_spoil_stdout(tmp_path):
    p = cli(tmp_path, "chatty:graph")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["format"] == "qls-graph/1" and "loading chatty" in p.stderr


def test_cli_help_says_words_needs_catalogue(tmp_path):
    p = cli(tmp_path, "--help")
    text = " ".join(p.stdout.split())
    assert p.returncode == 0 and "only with --catalogue (refused without it)" in text and "STALWART_EXPORT_DEBUG" in text


def test_cli_help_names_both_frameworks_and_what_no_provenance_is_for():
    """Issue 30: --help says the CLI reads an OpenAI Agents SDK Agent too, and that --no-provenance is
    LangGraph's (an SDK export carries no provenance objects)."""
    from stalwart_export.__main__ import parser

    text = " ".join(parser().format_help().split())  # this tree's (cli() may run an installed copy)
    assert "Export a compiled LangGraph graph, or an OpenAI Agents SDK application from its starting Agent" in text
    assert ("--no-provenance for a LangGraph graph: leave out the langgraph provenance objects (an OpenAI Agents "
            "SDK export has none, so it is the same with or without)") in text


def test_no_provenance_leaves_an_sdk_export_as_it_is(tmp_path):
    """What --help says of --no-provenance for an SDK application holds: the export is the same."""
    pytest.importorskip("agents", reason="openai-agents is not installed: the SDK export is not checked")
    from stalwart_export.__main__ import main

    with_p, without = tmp_path / "with.json", tmp_path / "without.json"
    assert main(["oa_apps.triage:triage_agent", "-o", str(with_p)]) == 0
    assert main(["oa_apps.triage:triage_agent", "-o", str(without), "--no-provenance"]) == 0
    got = json.loads(with_p.read_text())
    assert got["name"] == "Triage" and "langgraph" not in with_p.read_text()
    assert with_p.read_text() == without.read_text()


def test_a_functional_api_graph_is_refused(tmp_path):
    """An @entrypoint has no nodes to read: exit 2, one line, nothing written."""
    (tmp_path / "ep.py").write_text(
        "from langgraph.func import entrypoint\n"
        "@entrypoint()\n"
        "def flow(x: str) -> str:\n"
        "    return x\n"
    )
    out = tmp_path / "g.json"
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "ep:flow", "-o", str(out)],
                       capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert p.returncode == 2, p.stderr
    assert "ep:flow: the graph" in p.stderr and "not a StateGraph" in p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists()
