"""Issue 28 item 2 (SPEC 6 QG017/QG018): a step that runs a tool with what the model wrote - a tool
call's arguments, a message's text - raises QG017 (code, shell) or QG018 (sql, query, url, ...) as
a tool node would; a step running a tool with its own arguments (a constant, a state field) raises
neither. Each shape of python/tests/lg_apps/written/agents.py is exported, and the export verified
by the Rust binary with a catalogue declaring the argument's role."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from helpers import REPO
from lg_apps.written import agents
from stalwart_export import export_graph

CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "run_python": {"kind": "write", "at_most": 3, "args": {"code": {"type": "string", "role": "code"}}},
    "fetch_url": {"kind": "read", "reads_outside": True, "args": {"url": {"type": "string", "role": "url"}}},
    "search_docs": {"kind": "read", "args": {"query": {"type": "string", "role": "query"}}},
    "execute_sql": {"kind": "write", "at_most": 3, "args": {"query": {"type": "string", "role": "sql"}}},
    "run_script": {"kind": "write", "at_most": 3, "args": {"script": {"type": "string", "role": "code"},
                                                          "stdin": {"type": "string", "role": "content"}}},
    "post_message": {"kind": "write", "sends_out": True, "at_most": 3,
                     "args": {"channel": {"type": "string", "role": "destination"},
                              "text": {"type": "string", "role": "content"}}},
}}
#: The words declaring the step's own database call (a plain function, no LangChain tool).
SQL_WORDS = {"nodes": {"step": {"calls": {"execute_sql": CATALOGUE["tools"]["execute_sql"]}}}}


def export(step: Any, words: Any = None) -> dict:
    return export_graph(agents.build(step), provenance=False, base=str(REPO), words=words)


def step_node(e: dict) -> dict:
    return next(n for n in e["nodes"] if n["id"] == "step")


def found(binary: str, tmp_path: Any, e: dict) -> list[dict]:
    """Every finding of QG017/QG018 the verifier reports on the export."""
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(e))
    cp.write_text(json.dumps(CATALOGUE))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    return [f for f in json.loads(p.stdout)["findings"] if f["rule"] in ("QG017", "QG018")]


def rules(binary: str, tmp_path: Any, e: dict) -> set[tuple[str, str]]:
    """(rule, subject) of every finding of QG017/QG018 the verifier reports on the export."""
    return {(f["rule"], f["subject"]) for f in found(binary, tmp_path, e)}


@pytest.mark.parametrize("shape, words, tool, written, rule", [
    # run_python.invoke(state["messages"][-1].tool_calls[0]["args"]): any argument
    ("step_tool_call_args", None, "run_python", "run_python", "QG017"),
    # last = state["messages"][-1]; run_python.invoke({"code": last.content})
    ("step_content", None, "run_python", {"tool": "run_python", "args": ["code"]}, "QG017"),
    # msg = state["messages"][-1]; execute_sql(query=msg.content), the call declared in the words
    ("step_sql_kwarg", SQL_WORDS, "execute_sql", {"tool": "execute_sql", "args": ["query"]}, "QG018"),
    # for tc in last.tool_calls: fetch_url.invoke(tc["args"])
    ("step_loop_invoke", None, "fetch_url", "fetch_url", "QG018"),
    # question = ...content.strip(); search_docs.invoke({"query": f"site:docs {question}"})
    ("step_query_fstring", None, "search_docs", {"tool": "search_docs", "args": ["query"]}, "QG018"),
    # tools.run_snippet(code), the application's helper running run_python.invoke({"code": source})
    ("step_helper", None, "run_python", {"tool": "run_python", "args": ["code"]}, "QG017"),
    # post_message.invoke({"channel": last.tool_calls[0]["args"]["channel"], "text": "done"})
    ("step_post_anywhere", None, "post_message", {"tool": "post_message", "args": ["channel"]}, "QG018"),
])
def test_a_step_running_what_the_model_wrote_raises_the_rule(shape, words, tool, written, rule, binary, tmp_path):
    """Before: the step's tool was `called by its code`, never chosen by a model, so neither rule
    was raised though the model writes the code (or the query, or the address) it runs."""
    e = export(getattr(agents, shape), words)
    n = step_node(e)
    assert n["kind"] == "step" and n["tools"] == [tool] and n["model_written"] == [written], n
    [f] = found(binary, tmp_path, e)
    assert (f["rule"], f["subject"]) == (rule, tool)
    # the tool is offered to no model: the message names the step, the fix is in its code
    assert "node 'step' runs it with what a model wrote" in f["message"], f["message"]
    assert f["fix"].startswith("In node 'step', "), f["fix"]


def test_a_loop_spreading_the_calls_into_a_function_is_a_plain_tool_node(binary, tmp_path):
    """`execute_sql(**tc["args"])` for each tool call: a `tools_plain` node over the function
    (issue 28 item 1), its tools chosen by the model: QG018 on the SQL it writes."""
    e = export(agents.step_loop_spread)
    n = step_node(e)
    assert n["kind"] == "tools_plain" and n["tools"] == ["execute_sql"] and "model_written" not in n, n
    assert rules(binary, tmp_path, e) == {("QG018", "execute_sql")}


@pytest.mark.parametrize("shape", ["step_constant", "step_state_field"])
def test_a_step_running_its_own_arguments_raises_neither(shape, binary, tmp_path):
    """run_python.invoke({"code": "<a constant>"}), run_python.invoke({"code": state["script"]}),
    fetch_url.invoke("<a constant>"): the code's own arguments, no model wrote them."""
    e = export(getattr(agents, shape))
    n = step_node(e)
    assert n["kind"] == "step" and "run_python" in n["tools"] and "model_written" not in n, n
    assert rules(binary, tmp_path, e) == set()


@pytest.mark.parametrize("shape, tool, written", [
    # run_script.invoke({"script": REPORT, "stdin": <the model's text>}): the script is the code's own
    ("step_script_stdin", "run_script", ["stdin"]),
    # post_message.invoke({"channel": "#ops", "text": <the model's text>}): the destination is fixed
    ("step_post_summary", "post_message", ["text"]),
])
def test_only_the_arguments_the_model_wrote_count(shape, tool, written, binary, tmp_path):
    """The model writes an argument with no code or query role, the code's own constant the one
    with it: neither rule (listing the whole tool would raise a false QG017 on the script)."""
    e = export(getattr(agents, shape))
    n = step_node(e)
    assert n["model_written"] == [{"tool": tool, "args": written}], n
    assert rules(binary, tmp_path, e) == set()


def test_a_declared_call_the_code_does_not_hand_the_models_text_is_the_steps_own(binary, tmp_path):
    """The words declare `execute_sql` on a step whose code runs only run_python with a
    constant: no argument of either is the model's."""
    e = export(agents.step_constant, SQL_WORDS)
    n = step_node(e)
    assert n["tools"] == ["run_python", "execute_sql"] and "model_written" not in n, n
    assert rules(binary, tmp_path, e) == set()
