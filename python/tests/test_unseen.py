"""Issue 28 item 1 (SPEC 12.5): the shapes the exporter did not read, in python/tests/lg_apps/unseen/,
written the way public agents write them: (a) a model made at run time inside the node (the
react-agent template's `load_chat_model(...).bind_tools(TOOLS)`, `init_chat_model(...)` in the
node, a model binding tools the exporter cannot name); (b) tools reached indirectly from a step
(an attribute of the application's tools module, a local alias, `getattr` with a literal, a
registry, a helper in another module, an object attribute, and `getattr` with a run-time name);
(c) the memory-agent template's hand-written tool node over plain functions. Each is exported and
verified: what can be read is read (a model node whose bound tools are not read as called; the
step's tools; a `tools_plain` node over the functions), what cannot is an `opaque` entry at its
line, and the bare export fails the gate (QG001 or QG024), never `Gate: passed`."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from lg_apps.unseen import aliases, coding, indirect, memory, runtime_model
from helpers import REPO
from stalwart_export import export_graph

CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "read_web": {"kind": "read", "reads_outside": True, "args": {"url": {"type": "string"}}},
    "publish_post": {"kind": "write", "args": {"text": {"type": "string"}}},
    "upsert_memory": {"kind": "write", "args": {"content": {"type": "string"}, "context": {"type": "string"}}},
    "run_python": {"kind": "write", "args": {"code": {"type": "string", "role": "code"}}},
}}
GATE = {"QG001", "QG024"}


def export(graph: Any, words: Any = None) -> dict:
    return export_graph(graph, provenance=False, base=str(REPO), words=words)


def node_of(e: dict, name: str) -> dict:
    return next(n for n in e["nodes"] if n["id"] == name)


def line_of(module: Any, marker: str) -> tuple[str, int]:
    path = module.__file__
    [n] = [i + 1 for i, t in enumerate(open(path).read().splitlines()) if t.rstrip().endswith(f"# <- {marker}")]
    return os.path.relpath(path, REPO).replace(os.sep, "/"), n


def verify(binary: str, tmp_path: Any, e: dict) -> tuple[int, set[tuple], str]:
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(e))
    cp.write_text(json.dumps(CATALOGUE))
    args = [binary, "verify", "--graph", str(gp), "--catalogue", str(cp)]
    p = subprocess.run(args + ["--format", "json"], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    text = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=REPO).stdout
    found = {(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"] if f["blocks"]}
    return p.returncode, found, text


def assert_fails_the_gate(code: int, found: set[tuple], text: str) -> None:
    assert code == 1 and {r for r, _s, _n in found} & GATE, found
    assert "Gate: passed" not in text


# ------------------------------------------------------------------ (a) a model made at run time
@pytest.mark.parametrize("shape, via", [
    ("react_template", "made at run time"),
    ("inline", "made at run time"),
    ("configurable", "_ConfigurableModel"),
])
def test_a_model_made_at_run_time_is_a_model_node(shape, via, binary, tmp_path):
    """`load_chat_model(...)` (a helper calling init_chat_model), `init_chat_model(...)` in the
    node, or a module-level `init_chat_model(configurable_fields=...)` (before: a step with no
    tools, `Gate: passed` had its tool node been guarded): a model node; the tools it binds are
    offered, not called, so no QG001 on the model node
    (before: a step calling them, two false QG001s); the plain ToolNode's QG001s stay."""
    e = export(getattr(runtime_model, shape))
    n = node_of(e, "call_model")
    assert n["kind"] == "model" and "tools" not in n and "opaque" not in n
    read = node_of(export_graph(getattr(runtime_model, shape), base=str(REPO)), "call_model")["langgraph"]
    assert via in read["model"], read
    code, found, text = verify(binary, tmp_path, e)
    assert not [f for f in found if f[2] == "call_model"], found
    assert {("QG001", "read_web", "tools"), ("QG001", "publish_post", "tools")} <= found
    assert_fails_the_gate(code, found, text)


def test_a_run_time_model_binding_unnamed_tools_is_opaque(binary, tmp_path):
    """`init_chat_model(...).bind_tools(pick_tools(config))`: a model node, an opaque `model` entry
    at the bind_tools line, QG024; the words' `model: true` declares it."""
    e = export(runtime_model.unnamed)
    n = node_of(e, "call_model")
    file, line = line_of(runtime_model, "unnamed")
    assert n["kind"] == "model"
    [o] = n["opaque"]
    assert o["what"] == "model" and o["location"]["file"] == file and o["location"]["line"] == line
    assert "binds tools the exporter cannot name (pick_tools(config))" in o["why"]
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG024", "model:call_model", "call_model") in found
    assert_fails_the_gate(code, found, text)
    declared = node_of(export(runtime_model.unnamed, {"nodes": {"call_model": {"model": True}}}), "call_model")
    assert "opaque" not in declared and declared["declared"] == ["model"]


# ------------------------------------------------------------------ (b) tools reached indirectly
FOLLOWED = {
    "module_attribute": ["read_web"],
    "alias": ["read_web"],
    "by_getattr": ["publish_post"],
    "registry": ["publish_post"],  # `tools.REGISTRY["publish"]`: the tool its literal key picks
    "helper": ["publish_post"],
    "object_attribute": ["publish_post"],
    "local_import": ["publish_post"],  # `from . import tools as local_tools` inside the node
    "self_attribute": ["publish_post"],  # a node that is an object: `self.tool.invoke(...)`
}


@pytest.mark.parametrize("shape", list(FOLLOWED))
def test_tools_reached_indirectly_are_followed(shape, binary, tmp_path):
    """Before: a step with no tools and `Gate: passed`. Now: the step calls the tools it reaches,
    each a QG001 on the step."""
    e = export(indirect.one_step(indirect.SHAPES[shape]))
    n = node_of(e, "act")
    assert n["kind"] == "step" and n["tools"] == FOLLOWED[shape] and "opaque" not in n
    code, found, text = verify(binary, tmp_path, e)
    assert {("QG001", t, "act") for t in FOLLOWED[shape]} <= found
    assert_fails_the_gate(code, found, text)


def test_a_tool_looked_up_by_a_run_time_name_is_opaque(binary, tmp_path):
    """`getattr(tools, name)` with `name` from the state: an opaque `tools` entry at the line, QG024."""
    e = export(indirect.one_step(indirect.dynamic))
    n = node_of(e, "act")
    file, line = line_of(indirect, "dynamic")
    [o] = n["opaque"]
    assert o["what"] == "tools" and (o["location"]["file"], o["location"]["line"]) == (file, line)
    assert o["why"].startswith("getattr(tools, name) looks up a name known only at run time")
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG024", "tools:act", "act") in found
    assert_fails_the_gate(code, found, text)
    declared = export(indirect.one_step(indirect.dynamic),
                      {"nodes": {"act": {"calls": {"publish_post": {"kind": "write"}}}}})
    n = node_of(declared, "act")
    assert "opaque" not in n and n["tools"] == ["publish_post"] and n["declared"] == ["calls"]


def test_a_run_time_name_in_a_helper_is_opaque_at_the_nodes_call(binary, tmp_path):
    """`helpers.share_named(name, ...)` runs `getattr(tools, name)` in another module: followed
    into the helper, and opaque at the node's call of it."""
    e = export(indirect.one_step(indirect.helper_dynamic))
    [o] = node_of(e, "act")["opaque"]
    file, line = line_of(indirect, "helper dynamic")
    assert o["what"] == "tools" and (o["location"]["file"], o["location"]["line"]) == (file, line)
    assert o["why"].startswith("in helper share_named(...): getattr(tools, name) looks up a name known only")
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG024", "tools:act", "act") in found
    assert_fails_the_gate(code, found, text)


def test_a_node_whose_source_cannot_be_read_is_opaque():
    """A node function made by exec (no source file): an opaque `code` entry, never a silent step."""
    from langgraph.graph import START, MessagesState, StateGraph

    ns: dict = {}
    exec("def act(state):\n    return {}", ns)  # noqa: S102 - the shape under test
    b = StateGraph(MessagesState)
    b.add_node("act", ns["act"])
    b.add_edge(START, "act")
    n = node_of(export(b.compile()), "act")
    assert n["opaque"] == [{"what": "code", "why": "the source of act() cannot be read"}]


def test_an_unresolved_invoke_is_opaque():
    """`.invoke()` on something the exporter cannot resolve (a runnable from the configuration):
    opaque, never a step with no tools."""
    from langgraph.graph import START, MessagesState, StateGraph

    def act(state: MessagesState, config):
        runner = config["configurable"]["runner"]
        return {"messages": [("ai", runner.invoke({"text": "hi"}))]}

    b = StateGraph(MessagesState)
    b.add_node("act", act)
    b.add_edge(START, "act")
    n = node_of(export(b.compile()), "act")
    assert [(o["what"], o["why"]) for o in n["opaque"]] == [
        ("tools", "calls runner.invoke(...), which the exporter cannot resolve: what it runs may be a tool")]


# ------------------------------------------------------------------ (c) plain-function tool node
def test_a_hand_written_tool_node_over_plain_functions_is_tools_plain(binary, tmp_path):
    """The memory-agent template: the run stores the memory through `upsert_memory(**tc["args"])`;
    the export: `store_memory` is `tools_plain` over upsert_memory (before: a step with no tools
    and `Gate: passed`), and the verifier raises QG001 on it."""
    from langgraph.checkpoint.memory import InMemorySaver  # noqa: F401  (the template runs without one)

    out = memory.graph.invoke({"messages": [("user", "I like tea")]})
    assert any("stored memory" in str(getattr(m, "content", "")) for m in out["messages"])
    e = export(memory.graph)
    n = node_of(e, "store_memory")
    assert n["kind"] == "tools_plain" and n["tools"] == ["upsert_memory"] and "opaque" not in n
    assert node_of(e, "call_model")["kind"] == "model"
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG001", "upsert_memory", "store_memory") in found
    assert_fails_the_gate(code, found, text)


def test_the_plain_functions_are_tools_of_the_catalogue_and_the_words(binary, tmp_path):
    """The acceptance review: the plain functions of a hand-written tool node are the graph's tools,
    so the words can give their kind, `--init-words` lists them with their argument schemas, and
    `@catalogue_words` on the function is read; the export then verifies (before: exit 2, "not a
    tool of the graph")."""
    from stalwart_export import catalogue_words, export_catalogue
    from stalwart_export.catalogue import init_words_of
    from stalwart_export.langgraph.graph import graph_tools

    [t] = graph_tools(memory.graph)
    assert t.name == "upsert_memory" and set(t.args) >= {"content", "context"}
    cat = export_catalogue(memory.graph, words={"upsert_memory": {"kind": "write"}})
    assert cat["tools"]["upsert_memory"]["kind"] == "write"
    assert set(cat["tools"]["upsert_memory"]["args"]) >= {"content", "context"}
    assert "upsert_memory" in init_words_of([t], [])
    catalogue_words(kind="write", irreversible=True)(memory.tools.upsert_memory)
    try:
        assert export_catalogue(memory.graph)["tools"]["upsert_memory"]["irreversible"] is True
    finally:
        del memory.tools.upsert_memory.__stalwart_words__
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export(memory.graph)))
    cp.write_text(json.dumps(cat))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode == 1, p.stderr
    assert ("QG001", "upsert_memory") in {(f["rule"], f["subject"]) for f in json.loads(p.stdout)["findings"]}


def test_plain_functions_from_a_registry_and_an_unknown_runner(binary, tmp_path):
    """`FUNCS[tc["name"]](**args)` (args a local holding `tc["args"]`): tools_plain over the
    registry's functions; `run(**tc["args"])` with `run` from the configuration: an opaque `tools`
    entry at the line, QG024."""
    e = export(memory.with_store(memory.store_memory_registry))
    n = node_of(e, "store_memory")
    assert n["kind"] == "tools_plain" and n["tools"] == ["upsert_memory"]
    e = export(memory.with_store(memory.store_memory_unknown))
    n = node_of(e, "store_memory")
    file, line = line_of(memory, "unknown runner")
    [o] = n["opaque"]
    assert o["what"] == "tools" and o["location"]["file"] == file and o["location"]["line"] == line - 1
    assert o["why"].startswith("runs run(**...['args']) with a tool call's arguments")
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG024", "tools:store_memory", "store_memory") in found
    assert_fails_the_gate(code, found, text)


def test_a_run_time_model_in_a_step_that_runs_a_tool_itself_keeps_the_call(binary, tmp_path):
    """A planner that makes its model at run time and publishes the plan itself: reading it as a
    model node would drop the direct call; it stays a step calling publish_post (QG001), with an
    opaque `model` entry at the init_chat_model call (QG024); `model: true` declares the model and
    keeps the call."""
    e = export(runtime_model.planner)
    n = node_of(e, "call_model")
    assert n["kind"] == "step" and n["tools"] == ["publish_post"]
    [o] = n["opaque"]
    assert o["what"] == "model" and o["location"]["line"] == line_of(runtime_model, "planner")[1] - 1
    code, found, text = verify(binary, tmp_path, e)
    assert {("QG001", "publish_post", "call_model"), ("QG024", "model:call_model", "call_model")} <= found
    assert_fails_the_gate(code, found, text)
    declared = node_of(export(runtime_model.planner, {"nodes": {"call_model": {"model": True}}}), "call_model")
    assert declared["kind"] == "step" and declared["tools"] == ["publish_post"] and "opaque" not in declared


# ------------------------------------------------------------------ (d) code run by exec or a shell
CODE_RUNS = {
    # shape: (marker, the why's start, is the argument the model's text)
    "run_code": ("executor", "in helper execute_code(...): runs exec(code): ", True),
    "run_repl": ("repl", "in helper LocalREPL.run(...): runs exec(code): ", True),
    "run_fresh_repl": ("fresh repl", "in helper LocalREPL.run(...): runs exec(code): ", True),
    "exec_inline": ("exec", "runs exec(state['messages'][-1].content): ", True),
    "eval_constant": ("eval", "runs eval('sum(range(10))'): ", False),
    "shell": ("shell", "runs subprocess.run(command): ", True),
    "os_shell": ("os.system", "runs os.system(state['messages'][-1].content): ", True),
}


@pytest.mark.parametrize("shape", list(CODE_RUNS))
def test_code_run_by_exec_or_a_shell_is_opaque_at_the_users_line(shape, binary, tmp_path):
    """A data-science agent's `execute_code(code)` helper and `LocalREPL().run(code)` method (both
    `exec` in the application's executor module), `exec`/`eval` in the node, a shell step's
    `subprocess.run(command, shell=True)` and `os.system(...)` (before: a step with no tools,
    `Gate: passed`): an opaque `code` entry at the node's line, saying when it runs the model's
    text and how to fix it; QG024 fails the gate."""
    marker, start, model = CODE_RUNS[shape]
    e = export(coding.one_step(coding.SHAPES[shape]))
    n = node_of(e, "act")
    file, line = line_of(coding, marker)
    [o] = n["opaque"]
    assert o["what"] == "code" and (o["location"]["file"], o["location"]["line"]) == (file, line), o
    assert o["why"].startswith(start), o["why"]
    assert ("the model wrote (its argument is the model's text)" in o["why"]) is model, o["why"]
    assert "the role `code`" in o["why"] and "guard.call" in o["why"] and "nodes.<node>.calls" in o["why"]
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG024", "code:act", "act") in found
    assert_fails_the_gate(code, found, text)


def test_code_run_declared_in_the_words_is_a_tool_of_the_step(binary, tmp_path):
    """The fix the why names: `nodes.act.calls` with a tool whose argument has the role `code` clears
    the `code` entry; the step then calls that tool (QG001), never `Gate: passed`."""
    words = {"nodes": {"act": {"calls": {"run_python": {"kind": "write", "args": {"code": {"role": "code"}}}}}}}
    e = export(coding.one_step(coding.exec_inline), words)
    n = node_of(e, "act")
    assert "opaque" not in n and n["tools"] == ["run_python"] and n["declared"] == ["calls"]
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG001", "run_python", "act") in found
    assert_fails_the_gate(code, found, text)


# ------------------------------------------------------------------ (e) a tool behind an alias
@pytest.mark.parametrize("shape", list(aliases.SHAPES))
def test_a_tool_behind_a_bound_method_partial_or_default_is_the_steps(shape, binary, tmp_path):
    """`post = tools.publish_post.invoke` at module level, `functools.partial(tools.publish_post.invoke,
    {...})`, `def step(state, publish=tools.publish_post.invoke)` (before: a step with no tools,
    `Gate: passed`): the step calls publish_post, QG001 at the node."""
    e = export(indirect.one_step(aliases.SHAPES[shape]))
    n = node_of(e, "act")
    assert n["kind"] == "step" and n["tools"] == ["publish_post"] and "opaque" not in n
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG001", "publish_post", "act") in found
    assert_fails_the_gate(code, found, text)


def test_a_library_call_behind_a_partial_is_opaque(binary, tmp_path):
    """`fetch = functools.partial(urllib.request.urlopen, timeout=10)` called in the step: neither a
    tool nor the application's code nor a known library's: an opaque `tools` entry at the call."""
    e = export(indirect.one_step(aliases.library_partial))
    [o] = node_of(e, "act")["opaque"]
    file, line = line_of(aliases, "library partial")
    assert o["what"] == "tools" and (o["location"]["file"], o["location"]["line"]) == (file, line)
    assert o["why"].startswith("calls fetch(...), a functools.partial of urllib.request.urlopen"), o["why"]
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG024", "tools:act", "act") in found
    assert_fails_the_gate(code, found, text)


def test_a_registry_of_another_module_picked_by_a_literal_key(binary, tmp_path):
    """`tools.REGISTRY["publish"].invoke(...)` (the registry in the tools module): only publish_post
    is called; read_web, in the registry but not picked, has no QG001 (before: a false one)."""
    e = export(indirect.one_step(indirect.registry))
    assert node_of(e, "act")["tools"] == ["publish_post"]
    code, found, text = verify(binary, tmp_path, e)
    assert ("QG001", "publish_post", "act") in found
    assert not [f for f in found if f[1] == "read_web"], found
    assert_fails_the_gate(code, found, text)
