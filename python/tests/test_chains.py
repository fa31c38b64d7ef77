"""Issue 28 (SPEC 12.5): chains are read through, and what a chain step does that cannot be read
is QG024 at the user's line; MCP tools without annotations take MCP's defaults. The apps are in
python/tests/lg_apps/chains.py and mcp_repo.py, written the way public agents write them; each is
run on real LangGraph with the scripted model, exported, and verified by the Rust binary, the node
kind, its tools and the blocking rule ids asserted. Before this, a chain added as a node was one
opaque `code` entry (nothing in it read), and a chain a node's function invoked was not seen at
all: a step with no tools, `Gate: passed`, while the chain published a post."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from helpers import REPO
from lg_apps import chains, mcp_repo
from stalwart_export import export_catalogue, export_graph

GATE = {"QG001", "QG024"}


def export(graph: Any, words: Any = None, origin: tuple[str, str] | None = None) -> dict:
    return export_graph(graph, provenance=False, base=str(REPO), words=words, origin=origin)


def node_of(e: dict, name: str) -> dict:
    return next(n for n in e["nodes"] if n["id"] == name)


def line_of(marker: str, module: Any = chains) -> tuple[str, int]:
    path = module.__file__
    [n] = [i + 1 for i, t in enumerate(open(path).read().splitlines()) if t.rstrip().endswith(f"# <- {marker}")]
    return os.path.relpath(path, REPO).replace(os.sep, "/"), n


def verify(binary: str, tmp_path: Any, graph: Any, e: dict, words: Any = None) -> tuple[int, set[tuple], str]:
    """Verify export `e` of `graph` with the catalogue the exporter writes: (exit, the blocking
    findings as (rule, subject, node), the text report)."""
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(e))
    bound = {t for n in e["nodes"] for t in n.get("tools") or []}
    words = {k: v for k, v in (words or {}).items() if k in bound} or None
    cp.write_text(json.dumps(export_catalogue(graph, words)))
    args = [binary, "verify", "--graph", str(gp), "--catalogue", str(cp)]
    p = subprocess.run(args + ["--format", "json"], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    text = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=REPO).stdout
    found = {(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"] if f["blocks"]}
    return p.returncode, found, text


def assert_fails_the_gate(code: int, found: set[tuple], text: str) -> None:
    assert code == 1 and {r for r, _s, _n in found} & GATE, found
    assert "Gate: passed" not in text


WORDS = {"read_web": {"kind": "read", "reads_outside": True}, "publish_post": {"kind": "write", "sends_out": True}}


# ------------------------------------------------------------------ a model in a chain: a model node
@pytest.mark.parametrize("app, name", [("collaboration", "Researcher"), ("direct", "agent")])
def test_a_chain_binding_tools_is_a_model_node_offering_them(app, name, binary, tmp_path):
    """The multi-agent tutorial's `prompt | llm.bind_tools(tools)` run through `functools.partial(
    agent_node, agent=research_agent, ...)` (before: an opaque `tools` entry on `agent.invoke`), and
    the chain added as the node itself (before: one opaque `code` entry): a model node; the tools it
    binds are offered, not called, so no QG001 on it; the plain ToolNode's QG001s stay."""
    graph = getattr(chains, app)
    out = graph.invoke({"messages": [("user", "research")]})
    assert any(getattr(m, "name", None) == "read_web" for m in out["messages"]), "the run called read_web"
    e = export(graph)
    n = node_of(e, name)
    assert n["kind"] == "model" and "tools" not in n and "opaque" not in n, n
    read = node_of(export_graph(graph, base=str(REPO)), name)["langgraph"]
    assert read["chain"] is True and read["bound_tools"] == ["read_web", "publish_post"]
    assert n["location"]["file"] == "python/tests/lg_apps/chains.py"
    code, found, text = verify(binary, tmp_path, graph, e, WORDS)
    assert not [f for f in found if f[2] == name], found
    assert {("QG001", "read_web", "tools"), ("QG001", "publish_post", "tools")} <= found
    assert_fails_the_gate(code, found, text)


def test_a_compiled_agent_given_by_a_partial_is_a_subgraph(binary, tmp_path):
    """The hierarchical-teams tutorial: `functools.partial(team_member, agent=web_agent, name=
    "Search")`, the node function running `agent.invoke(state)` (before: an opaque `tools` entry on
    the unresolved `agent.invoke`): a subgraph node running the agent, its tool node's QG001."""
    assert chains.teams.invoke({"messages": [("user", "read")]})["messages"][-1].content == "Read it."
    e = export(chains.teams)
    n = node_of(e, "Search")
    assert n["kind"] == "subgraph" and "opaque" not in n, n
    sub = e["subgraphs"][n["graph"]]
    assert node_of(sub, "tools")["tools"] == ["read_web"]
    code, found, text = verify(binary, tmp_path, chains.teams, e, WORDS)
    assert ("QG001", "read_web") in {(r, s) for r, s, _n in found}, found
    assert_fails_the_gate(code, found, text)


def test_passthrough_assign_with_a_model_is_a_model_node(binary, tmp_path):
    """`RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())` as a node: read through
    (before: an opaque `code` entry, QG024); a model node with no tools; nothing blocks."""
    assert chains.assign.invoke({"question": "capital of France?"})["answer"] == "Paris."
    e = export(chains.assign, origin=(chains.__file__, "assign"))
    n = node_of(e, "answer")
    assert n["kind"] == "model" and "opaque" not in n and "tools" not in n, n
    code, found, _text = verify(binary, tmp_path, chains.assign, e)
    assert not [f for f in found if f[0] == "QG024"], found


# ------------------------------------------------------------------ tools a chain runs: calls
def test_runnable_lambdas_that_publish_are_a_step_calling_the_tool(binary, tmp_path):
    """`RunnableLambda(draft) | RunnableLambda(publish)`, `publish` running `publish_post.invoke`:
    read as node functions are; a step calling publish_post (QG001), not an opaque node."""
    chains.lambdas.invoke({"question": "q"})
    e = export(chains.lambdas)
    n = node_of(e, "publisher")
    assert n["kind"] == "step" and n["tools"] == ["publish_post"] and "opaque" not in n, n
    assert (n["location"]["file"], n["location"]["line"]) == line_of("lambdas")
    code, found, text = verify(binary, tmp_path, chains.lambdas, e, WORDS)
    assert ("QG001", "publish_post", "publisher") in found
    assert_fails_the_gate(code, found, text)


@pytest.mark.parametrize("app, name, tool, marker", [
    ("parallel", "respond", "read_web", None),
    ("module_chain", "summarize", "publish_post", "module chain"),
    ("local_chain", "reply", "publish_post", "local chain"),
])
def test_a_chain_running_a_model_and_a_tool_is_a_step_with_an_opaque_model(app, name, tool, marker, binary,
                                                                            tmp_path):
    """A `RunnableParallel` whose lambda fetches the context (`read_web.invoke`) before the model
    answers, a module-level `prompt | llm | parser | RunnableLambda(post_summary)` the node
    `.invoke`s (before: a step with no tools, `Gate: passed`), and `prompt | llm | parser |
    post_reply` built inside the node (before: a model node, the post lost): a step calling the
    tool (QG001), and
    an opaque `model` entry (what the model chooses and writes is not read: QG024) at the node's
    call of the chain; the words' `model: true` declare the model and keep the call."""
    graph = getattr(chains, app)
    e = export(graph)
    n = node_of(e, name)
    assert n["kind"] == "step" and n["tools"] == [tool], n
    [o] = n["opaque"]
    assert o["what"] == "model" and o["why"].startswith("a chain runs a chat model"), o
    if marker is not None:
        assert (o["location"]["file"], o["location"]["line"]) == line_of(marker)
    code, found, text = verify(binary, tmp_path, graph, e, WORDS)
    assert {("QG001", tool, name), ("QG024", f"model:{name}", name)} <= found
    assert_fails_the_gate(code, found, text)
    declared = node_of(export(graph, {"nodes": {name: {"model": True}}}), name)
    assert declared["kind"] == "step" and declared["tools"] == [tool] and "opaque" not in declared


# ------------------------------------------------------------------ what cannot be read: QG024
@pytest.mark.parametrize("app, what, marker, why", [
    ("custom", "code", "custom runnable", "a chain step the exporter cannot read (lg_apps.chains.Moderator)"),
    ("retrieval", "tools", "retriever", "a chain step runs the retriever NotesRetriever"),
    ("paused", "pause", "chain pause", "confirm() in a chain step calls interrupt()"),
])
def test_a_chain_step_that_cannot_be_read_is_qg024_at_its_line(app, what, marker, why, binary, tmp_path):
    """A Runnable class of the application's, a retriever (what it returns may be outside
    content), `interrupt()` inside a chain step: each an opaque entry at the user's line (the
    class, the function's call of interrupt()), QG024, and the bare export fails the gate."""
    graph = getattr(chains, app)
    e = export(graph)
    n = node_of(e, "answer")
    assert n["kind"] == "model"
    [o] = n["opaque"]
    assert o["what"] == what and o["why"].startswith(why), o
    assert (o["location"]["file"], o["location"]["line"]) == line_of(marker)
    code, found, text = verify(binary, tmp_path, graph, e)
    assert ("QG024", f"{what}:answer", "answer") in found
    assert_fails_the_gate(code, found, text)


# ------------------------------------------------------------------ MCP tools with no annotations
def test_mcp_tools_without_annotations_take_mcps_defaults_and_the_taint_is_found(binary, tmp_path):
    """The repository agent: `get_issue` (anyone's text) then `push_files`, both from an MCP server
    that gave no annotations. MCP's defaults apply (readOnlyHint false, destructiveHint true,
    idempotentHint false, openWorldHint true): both are destructive writes reaching the open world,
    so the issue's text taints the push (QG011), with no words given. Before: kind null and no
    `reads_outside`, so no taint at all."""
    out = mcp_repo.graph.invoke(mcp_repo.INPUT)
    assert [m.name for m in out["messages"] if m.type == "tool"] == ["get_issue", "push_files"]
    cat, warns = export_catalogue(mcp_repo.graph, with_warnings=True)
    for t in ("get_issue", "push_files"):
        entry = cat["tools"][t]
        assert {k: entry.get(k) for k in ("kind", "destructive", "idempotency", "reads_outside", "sends_out")} == {
            "kind": "write", "destructive": True, "idempotency": False, "reads_outside": True, "sends_out": True}, t
    assert not [w for w in warns if "kind null" in w]
    e = export(mcp_repo.graph)
    code, found, text = verify(binary, tmp_path, mcp_repo.graph, e)
    assert ("QG011", "push_files") in {(r, s) for r, s, _n in found}, found
    assert_fails_the_gate(code, found, text)
