"""Issue 28 item 1 and issue 29 item 3 (SPEC 12.5, 12.1): an agent built inside a node function,
the "teams of agents" shape (`create_react_agent(...)` / `create_agent(...)` in the node, then
`agent.invoke(state)` or `await agent.ainvoke(...)`, then `Command(goto="supervisor")`), in the apps
of `inner_apps/`. Before: the export crashed (`'property' object is not iterable`), or the node
was a step calling the agent's tools itself. Now each worker is a `subgraph` node running the
agent's export with its tools, reviews and guard; the bare export fails the gate with the rule the
unguarded tools break; a guard inside the agent is credited only when the node passes the guard's
history in and out, and the export says which session rules do not hold when it does not; what
cannot be read is an `opaque` entry at the constructor's line (QG024). Each app is also run with
its scripted model, and every step of the run is a route of the export."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from typing import Any

import pytest
from langgraph.types import Command

from helpers import REPO, allowed, escape_id, graph_at, run_steps
from inner_apps import async_team, collaboration, guarded_team, middleware_team, mixed, supervisor, unresolved
from stalwart_export import export_graph, read_history

CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "web_search": {"kind": "read", "reads_outside": True, "args": {"query": {"type": "string"}}},
    "publish_post": {"kind": "write", "at_most": 1, "args": {"text": {"type": "string"}}},
    "fetch_page": {"kind": "read", "reads_outside": True, "args": {"url": {"type": "string"}}},
    "delete_records": {"kind": "write", "irreversible": True, "args": {"table": {"type": "string"}}},
    "read_inbox": {"kind": "read", "reads_outside": True, "args": {"folder": {"type": "string"}}},
    "send_email": {"kind": "write", "sends_out": True,
                   "args": {"to": {"type": "string", "role": "destination"}, "body": {"type": "string"}}},
    "lookup": {"kind": "read", "args": {"term": {"type": "string"}}},
    "wire_money": {"kind": "write", "args": {"account": {"type": "string"}, "amount": {"type": "number"}}},
    "notify_team": {"kind": "write", "sends_out": True, "args": {"text": {"type": "string"}}},
    "search_docs": {"kind": "read", "args": {"query": {"type": "string"}}},
    "run_python": {"kind": "write", "args": {"code": {"type": "string", "role": "code"}}},
}}


def export(graph: Any, words: Any = None) -> dict:
    return export_graph(graph, provenance=False, base=str(REPO), words=words)


def node_of(g: dict, name: str) -> dict:
    return next(n for n in g["nodes"] if n["id"] == name)


def sub(e: dict, name: str) -> dict:
    return e["subgraphs"][node_of(e, name)["graph"]]


def line_of(module: Any, marker: str) -> tuple[str, int]:
    path = module.__file__
    [n] = [i + 1 for i, t in enumerate(open(path).read().splitlines()) if t.rstrip().endswith(f"# <- {marker}")]
    return os.path.relpath(path, REPO).replace(os.sep, "/"), n


def verify(binary: str, tmp_path: Any, e: dict) -> tuple[int, set[tuple], str, dict]:
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(e))
    cp.write_text(json.dumps(CATALOGUE))
    args = [binary, "verify", "--graph", str(gp), "--catalogue", str(cp)]
    p = subprocess.run(args + ["--format", "json"], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode in (0, 1), p.stderr
    text = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=REPO).stdout
    report = json.loads(p.stdout)
    found = {(f["rule"], f["subject"], f["node"]) for f in report["findings"] if f["blocks"]}
    return p.returncode, found, text, report


def assert_fails_the_gate(code: int, found: set[tuple], text: str, rules: set[str]) -> None:
    assert code == 1 and {r for r, _s, _n in found} & rules, found
    assert "Gate: passed" not in text


def route_problems(e: dict, steps: dict) -> list[str]:
    """What the run did that the export has no route for (each namespace from its `__start__`)."""
    out = []
    checked = 0
    for ns, seq in steps.items():
        g = graph_at(e, ns)
        ids = {n["id"] for n in g["nodes"]}
        prev = {"__start__"}
        for _, names in seq:
            for n in names:
                if escape_id(n) not in ids:
                    out.append(f"{ns}: node {n!r} ran but is not in the export")
                elif not any(allowed(e, g, p, n) for p in prev):
                    out.append(f"{ns}: the run went {sorted(prev)} -> {n!r}, which the export has no route for")
                checked += 1
            prev = names
    assert checked >= 4, steps
    return out


# ------------------------------------------------------------------ the supervisor's team
def test_workers_building_their_agent_are_subgraphs_with_its_tools(binary, tmp_path):
    """Researcher (inline create_react_agent) and writer (built by the application's helper
    make_worker, its prompt made from the state): each a subgraph node running the agent, whose
    tool node holds the agent's tools; the worker is no step calling them itself (before: the
    export crashed). The bare export fails the gate: the unguarded write after the web search."""
    e = export(supervisor.graph)
    for worker, tool in (("researcher", "web_search"), ("writer", "publish_post")):
        n = node_of(e, worker)
        assert n["kind"] == "subgraph" and "tools" not in n and "opaque" not in n, n
        g = sub(e, worker)
        assert [(x["kind"], x.get("tools")) for x in g["nodes"] if x["kind"] in ("model", "tools_plain", "tools")] \
            == [("model", None), ("tools_plain", [tool])]
        # the worker always hands back to the supervisor: no implicit edge to __end__
        assert [x["destinations"] for x in e["edges"] if x["from"] == worker] == [["supervisor"]]
    assert any("built again at export time with prompt" in w for w in e["warnings"]), e["warnings"]
    code, found, text, report = verify(binary, tmp_path, e)
    assert ("QG001", "publish_post", "writer/tools") in found, found
    assert ("QG001", "web_search", "researcher/tools") in found, found
    assert not [f for f in found if f[2] in ("researcher", "writer")], found
    assert_fails_the_gate(code, found, text, {"QG001"})
    # SPEC 12.4: at the agent's constructor call (the node's call of the helper that builds it)
    for node, marker in (("researcher/tools", "researcher"), ("writer/tools", "writer")):
        [f] = [f for f in report["findings"] if (f["rule"], f["node"]) == ("QG001", node)]
        assert (f["location"]["file"], f["location"]["line"]) == line_of(supervisor, marker), f["location"]


def test_the_supervisor_team_runs_on_routes_of_its_export():
    """The real run (scripted models): supervisor -> researcher (its agent searches) -> supervisor
    -> writer (its agent publishes) -> supervisor -> end; every step, the agents' own included,
    is a route of the export."""
    for m in (supervisor.supervisor_llm, supervisor.research_llm, supervisor.writer_llm):
        m.i = 0
    e = export_graph(supervisor.graph)
    steps, _ = run_steps(supervisor.graph, supervisor.INPUT, [])
    assert {ns[0].split(":")[0] for ns in steps if ns} == {"researcher", "writer"}, steps
    assert route_problems(e, steps) == []


def test_the_collaboration_tutorials_partial_workers_are_subgraphs(binary, tmp_path):
    """`functools.partial(agent_node, agent=research_agent, name=...)` (before: a step with an
    opaque `agent.invoke` entry, QG024 for a worker that is read): each node runs its agent's
    export; the run's steps are routes of the export."""
    e = export(collaboration.graph)
    for node, graph_name, tool in (("Researcher", "research_agent", "web_search"),
                                   ("chart_generator", "chart_agent", "run_python")):
        n = node_of(e, node)
        assert (n["kind"], n["graph"]) == ("subgraph", graph_name) and "opaque" not in n, n
        assert [x["tools"] for x in e["subgraphs"][graph_name]["nodes"] if x["kind"] == "tools_plain"] == [[tool]]
    code, found, text, _ = verify(binary, tmp_path, e)
    assert ("QG001", "run_python", "chart_generator/tools") in found, found
    assert not [f for f in found if f[0] == "QG024"], found
    assert_fails_the_gate(code, found, text, {"QG001"})
    for m in (collaboration.research_llm, collaboration.chart_llm):
        m.i = 0
    steps, _ = run_steps(collaboration.graph, collaboration.INPUT, [])
    assert route_problems(export_graph(collaboration.graph), steps) == []


# ------------------------------------------------------------------ async, create_agent
def test_an_async_node_awaiting_create_agent_is_a_subgraph(binary, tmp_path):
    """`agent = create_agent(MODEL, tools=[...], system_prompt=f"...{state}...")`, then `await
    agent.ainvoke(...)`: a subgraph with both tools; the irreversible write after the fetched page
    is found in the agent (QG001 and the taint rules), never on the worker node."""
    e = export(async_team.graph)
    n = node_of(e, "ops")
    assert n["kind"] == "subgraph" and "tools" not in n and "opaque" not in n
    [tn] = [x for x in sub(e, "ops")["nodes"] if x["kind"] == "tools_plain"]
    assert tn["tools"] == ["fetch_page", "delete_records"]
    code, found, text, _ = verify(binary, tmp_path, e)
    assert ("QG001", "delete_records", "ops/tools") in found, found
    assert {r for r, s, _n in found if s == "delete_records"} >= {"QG001", "QG011"}, found
    assert not [f for f in found if f[2] == "ops"], found
    assert_fails_the_gate(code, found, text, {"QG001"})


def test_the_async_team_runs_on_routes_of_its_export():
    async_team.MODEL.i = 0
    e = export_graph(async_team.graph)

    async def run() -> dict:
        steps: dict[tuple, dict[int, set]] = {}
        cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}
        async for ns, ev in async_team.graph.astream(async_team.INPUT, cfg, stream_mode="debug", subgraphs=True):
            if ev["type"] == "task":
                steps.setdefault(tuple(ns), {}).setdefault(ev["step"], set()).add(ev["payload"]["name"])
        return {ns: [(s, by[s]) for s in sorted(by)] for ns, by in steps.items()}

    steps = asyncio.run(run())
    assert any(ns and ns[0].startswith("ops:") for ns in steps), steps
    assert route_problems(e, steps) == []


# ------------------------------------------------------------------ create_agent with middleware
def test_create_agent_with_middleware_inside_a_node_keeps_its_review(binary, tmp_path):
    """HumanInTheLoopMiddleware built in the constructor's arguments: the agent's export has its
    per-call review of send_email; the run pauses there and, approved, sends."""
    e = export(middleware_team.graph)
    g = sub(e, "email")
    assert {"node": "tools", "when": "call", "tool": "send_email"} in g["interrupts"], g["interrupts"]
    code, found, text, _ = verify(binary, tmp_path, e)
    assert ("QG001", "send_email", "email/tools") in found, found
    assert not [f for f in found if f[1] == "send_email" and f[0] in ("QG011", "QG012")], found
    assert_fails_the_gate(code, found, text, {"QG001"})
    for m in (middleware_team.email_llm,):
        m.i = 0
    steps, pauses = run_steps(middleware_team.graph, middleware_team.INPUT, middleware_team.RESUMES)
    assert pauses, "the review did not pause"
    assert route_problems(export_graph(middleware_team.graph), steps) == []


# ------------------------------------------------------------------ what cannot be read
def test_an_agent_whose_tools_or_model_come_from_the_run_is_opaque(binary, tmp_path):
    """Tools picked from the state, a model from the configuration: an opaque entry at the
    constructor's line, QG024, never a step calling the toolbox's tools, never `Gate: passed`."""
    e = export(unresolved.graph)
    w, c = node_of(e, "worker"), node_of(e, "configured")
    assert w["kind"] == "step" and "tools" not in w
    [o] = w["opaque"]
    assert o["what"] == "tools" and (o["location"]["file"], o["location"]["line"]) == line_of(unresolved, "from state")
    assert "tools = [TOOLBOX[name] for name in state['toolset']]" in o["why"]
    [o] = c["opaque"]
    assert o["what"] == "subgraph" and (o["location"]["file"], o["location"]["line"]) == line_of(unresolved,
                                                                                                  "from config")
    code, found, text, _ = verify(binary, tmp_path, e)
    assert {("QG024", "tools:worker", "worker"), ("QG024", "subgraph:configured", "configured")} <= found, found
    assert_fails_the_gate(code, found, text, {"QG024"})
    # the words declare what the worker's agent may call; the unread model stays QG024
    declared = export(unresolved.graph, {"nodes": {"worker": {"calls": {"wire_money": {"kind": "write"}}}}})
    assert "opaque" not in node_of(declared, "worker") and node_of(declared, "worker")["tools"] == ["wire_money"]
    assert node_of(declared, "configured")["opaque"]
    declared = export(unresolved.graph, {"nodes": {"configured": {"calls": {"lookup": {"kind": "read"}}}}})
    assert "opaque" not in node_of(declared, "configured") and node_of(declared, "configured")["tools"] == ["lookup"]


# ------------------------------------------------------------------ what the function does besides
def test_a_tool_the_node_calls_itself_besides_its_agent_is_kept(binary, tmp_path):
    """`notify_team.invoke(...)` in the node, then the agent built and run: the node runs a
    subgraph holding a step that calls notify_team (before and after the agent's run) and the
    agent; search_docs, only handed to the agent, is the agent's tool node's, not the step's."""
    e = export(mixed.graph)
    n = node_of(e, "support")
    assert n["kind"] == "subgraph" and "opaque" not in n
    w = e["subgraphs"][n["graph"]]
    steps = [x for x in w["nodes"] if x["kind"] == "step"]
    assert [x["tools"] for x in steps] == [["notify_team"], ["notify_team"]]
    [a] = [x for x in w["nodes"] if x["kind"] == "subgraph"]
    assert [x.get("tools") for x in e["subgraphs"][a["graph"]]["nodes"] if x["kind"] == "tools_plain"] == \
        [["search_docs"]]
    code, found, text, _ = verify(binary, tmp_path, e)
    assert ("QG001", "notify_team", "support/before") in found, found
    assert ("QG001", "search_docs", "support/agent/tools") in found, found
    assert_fails_the_gate(code, found, text, {"QG001"})


def test_a_module_level_agent_run_in_a_function_keeps_the_functions_own_calls(binary, tmp_path):
    """A module-level compiled agent run inside the node's function (before: a subgraph node and a
    warning that "any other code is opaque", its notify_team call lost): the node's own call of
    notify_team is a step's around the agent."""
    e = export(mixed.triage_graph)
    n = node_of(e, "triage")
    w = e["subgraphs"][n["graph"]]
    assert [x.get("tools") for x in w["nodes"] if x["kind"] == "step"] == [["notify_team"], ["notify_team"]]
    [a] = [x for x in w["nodes"] if x["kind"] == "subgraph"]
    assert a["graph"] == "triage_agent"
    code, found, text, _ = verify(binary, tmp_path, e)
    assert ("QG001", "notify_team", "triage/before") in found, found
    assert_fails_the_gate(code, found, text, {"QG001"})


def test_code_the_exporter_cannot_resolve_besides_the_agent_is_opaque(binary, tmp_path):
    """A runnable from the configuration run after the agent: the node is the agent's subgraph and
    carries an opaque entry at that line (QG024), never `Gate: passed`."""
    e = export(mixed.hooked_graph)
    n = node_of(e, "hooked")
    assert n["kind"] == "subgraph"
    [o] = n["opaque"]
    assert o["what"] == "tools" and (o["location"]["file"], o["location"]["line"]) == line_of(mixed, "hook")
    code, found, text, _ = verify(binary, tmp_path, e)
    assert ("QG024", "tools:hooked", "hooked") in found, found
    assert_fails_the_gate(code, found, text, {"QG024"})


# ------------------------------------------------------------------ a guard inside the agent
def test_a_guard_inside_the_agent_is_credited_when_the_node_keeps_its_history(binary, tmp_path):
    """`create_react_agent(llm, tools=guard.tool_node([...]), state_schema=TeamState)` in the node,
    run with the whole state, its `stalwart_guard` returned with the update: the tool nodes are
    `tools` (guarded) and the gate passes."""
    e = export(guarded_team.kept)
    for worker, tool in (("researcher", "web_search"), ("writer", "publish_post")):
        [tn] = [x for x in sub(e, worker)["nodes"] if x["id"] == "tools"]
        assert (tn["kind"], tn["tools"]) == ("tools", [tool]), tn
    assert not [w for w in e["warnings"] if "does not outlive" in w], e["warnings"]
    code, found, text, _ = verify(binary, tmp_path, e)
    assert code == 0 and not found, found
    assert "Gate: passed" in text


def test_the_tutorial_shape_drops_the_guards_history_and_is_not_credited(binary, tmp_path):
    """The tutorial's shape returns only the agent's answer: the guard inside starts each run with
    an empty history, so the writer's tool node is `tools_plain`, and the warning (shown in the
    report) names the rules that do not hold across runs and the fix."""
    e = export(guarded_team.tutorial)
    [tn] = [x for x in sub(e, "writer")["nodes"] if x["id"] == "tools"]
    assert tn["kind"] == "tools_plain"
    [tr] = [x for x in sub(e, "researcher")["nodes"] if x["id"] == "tools"]
    assert tr["kind"] == "tools"  # the researcher node does hand back the history
    [w] = [w for w in e["warnings"] if "does not outlive" in w]
    for words in ("node 'writer' builds the agent inside its function", "without the agent's `stalwart_guard`",
                  "`order.after`, `order.not_after` and `at_most` (rule 5)", "taint of outside content",
                  "still do", "result[\"stalwart_guard\"]"):
        assert words in w, (words, w)
    assert tn["guard_not_credited"].startswith("the guard's history does not outlive the subgraph (node 'writer'")
    code, found, text, report = verify(binary, tmp_path, e)
    assert ("QG001", "publish_post", "writer/tools") in found, found
    assert_fails_the_gate(code, found, text, {"QG001"})
    assert w in report["warnings"]
    # the finding's fix is not "use guard.tool_node" (done already) but what keeps the guard's history
    [f] = [f for f in report["findings"] if (f["rule"], f["node"]) == ("QG001", "writer/tools")]
    assert "does not credit it" in f["fix"] and "`at_most` (rule 5)" in f["fix"], f["fix"]
    assert "result[\"stalwart_guard\"]" in f["fix"] and "create_react_agent(model, tools=guard" not in f["fix"]


def test_create_agent_with_the_guard_as_middleware_inside_a_node_is_credited(binary, tmp_path):
    """`create_agent(model, tools, middleware=[guard])` in the node, its history handed back: the
    agent's tool node is guarded, and the gate passes."""
    e = export(guarded_team.middleware)
    [tn] = [x for x in sub(e, "writer")["nodes"] if x["id"] == "tools"]
    assert (tn["kind"], tn["tools"]) == ("tools", ["publish_post"]) and "guard_not_credited" not in tn
    code, found, text, _ = verify(binary, tmp_path, e)
    assert code == 0 and not found, found
    out, asked = _run_guarded(guarded_team.middleware)
    hist = [(x["tool"], x["decision"], x["ran"]) for x in read_history(out)]
    assert len(asked) == 1 and ("publish_post", "refuse", False) in hist, (asked, hist)


def _run_guarded(graph: Any) -> tuple[dict, list]:
    """Run the team to its end, answering each of the guard's questions yes."""
    guarded_team.reset()
    cfg = {"configurable": {"thread_id": str(uuid.uuid4())}, "recursion_limit": 80}
    asked = []
    out = graph.invoke({"messages": [("user", "Write and publish a post about agents.")]}, cfg)
    while out.get("__interrupt__"):
        asked += [p.value for p in out["__interrupt__"]]
        out = graph.invoke(Command(resume={"type": "approve"}), cfg)
    return out, asked


def test_the_guard_inside_the_agent_holds_its_session_rules_only_with_the_history_kept():
    """Run for real: the writer runs twice and each time tries to publish (at_most 1). With the
    history kept, the first is asked and runs, the second is refused (order_rule) across the two
    runs of the node; in the tutorial's shape both are asked (the rule the export warns about)."""
    out, asked = _run_guarded(guarded_team.kept)
    hist = [(x["tool"], x["decision"], x["ran"]) for x in read_history(out)]
    assert hist.count(("publish_post", "confirm", True)) == 1 and len(asked) == 1, (hist, asked)
    assert ("publish_post", "refuse", False) in hist, hist
    out, asked = _run_guarded(guarded_team.tutorial)
    assert len(asked) == 2, asked  # the second publish was asked again, not refused
    e = export_graph(guarded_team.kept)
    guarded_team.reset()
    cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}
    steps, _ = run_steps(guarded_team.kept, {"messages": [("user", "go")]}, [{"type": "approve"}])
    assert route_problems(e, steps) == []


@pytest.mark.parametrize("model", ['"openai:gpt-4.1"', 'init_chat_model("anthropic:claude-sonnet-4-5")'])
def test_a_model_made_at_run_time_is_stood_in_for(model, tmp_path):
    """`create_agent("openai:gpt-4.1", tools=[...])` / `create_react_agent(init_chat_model(...), ...)`
    in the node (the provider's package need not be installed): the agent is built with a stand-in
    model, its tools read, and the warning says what was replaced."""
    import importlib.util
    import sys

    src = tmp_path / "runtime_model_app.py"
    src.write_text(f"""
from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph


@tool
def book_flight(flight: str) -> str:
    \"\"\"Book a flight.\"\"\"
    return "booked"


def travel(state: MessagesState):
    agent = create_agent({model}, tools=[book_flight], system_prompt="You book travel.")
    return {{"messages": agent.invoke(state)["messages"][-1:]}}


b = StateGraph(MessagesState)
b.add_node("travel", travel)
b.add_edge(START, "travel")
graph = b.compile()
""")
    spec = importlib.util.spec_from_file_location("runtime_model_app", src)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["runtime_model_app"] = mod
    try:
        spec.loader.exec_module(mod)
        e = export_graph(mod.graph, provenance=False, base=str(tmp_path))
    finally:
        sys.modules.pop("runtime_model_app", None)
    n = node_of(e, "travel")
    assert n["kind"] == "subgraph" and "opaque" not in n
    assert [x["tools"] for x in sub(e, "travel")["nodes"] if x["kind"] == "tools_plain"] == [["book_flight"]]
    assert any("model (" in w and "made at run time" in w for w in e["warnings"]), e["warnings"]


def test_a_guard_refusing_the_agents_tools_is_said_not_silenced():
    """`guard.tool_node([...])` naming a tool its catalogue lacks raises when built: the export's
    opaque entry says what it raised."""
    from langchain_core.tools import tool
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import create_react_agent

    @tool
    def undeclared(x: str) -> str:
        """A tool the catalogue does not declare."""
        return x

    guard = guarded_team.guard
    llm = guarded_team.WRITER

    def worker(state: guarded_team.TeamState):
        agent = create_react_agent(llm, tools=guard.tool_node([undeclared]), state_schema=guarded_team.TeamState)
        return agent.invoke(state)

    b = StateGraph(guarded_team.TeamState)
    b.add_node("worker", worker)
    b.add_edge(START, "worker")
    [o] = node_of(export(b.compile()), "worker")["opaque"]
    assert o["what"] == "tools" and "raised GuardConfigError" in o["why"], o


@pytest.mark.parametrize("shape", ["crash"])
def test_the_property_crash_is_gone(shape):
    """`'property' object is not iterable`: a node function naming a class whose `steps` is a
    property (RunnableSequence itself) next to a model."""
    from langchain_core.runnables import RunnableSequence
    from langgraph.graph import START, MessagesState, StateGraph

    llm = supervisor.research_llm

    def node(state: MessagesState):
        chain = RunnableSequence(llm, llm)
        return {"messages": [chain.invoke(state["messages"])]}

    b = StateGraph(MessagesState)
    b.add_node("n", node)
    b.add_edge(START, "n")
    assert node_of(export(b.compile()), "n")["kind"] == "model"


# ------------------------------------------------------------------ replay on the real graph
@pytest.mark.parametrize("app, attr, node, tool, words", [
    ("async_team", "graph", "ops/tools", "delete_records",
     {"fetch_page": {"kind": "read", "reads_outside": True}, "delete_records": {"kind": "write"}}),
    ("collaboration", "graph", "chart_generator/tools", "run_python",
     {"web_search": {"kind": "read", "reads_outside": True}, "run_python": {"kind": "write"}}),
])
def test_the_witness_into_an_inner_agent_replays_on_the_real_graph(app, attr, node, tool, words, binary, tmp_path):
    """`python -m stalwart_export replay` drives the unmodified graph along the QG001 witness into the
    agent the node builds (async, create_agent) or runs (the partial worker): the real graph follows
    it and makes the call."""
    import importlib
    import sys

    from helpers import PYTHON_DIR
    from stalwart_export import export_catalogue

    graph = getattr(importlib.import_module(f"inner_apps.{app}"), attr)
    g, c = tmp_path / "graph.json", tmp_path / "catalogue.json"
    g.write_text(json.dumps(export_graph(graph, base=str(tmp_path))))
    c.write_text(json.dumps(export_catalogue(graph, words)))
    rep = json.loads(subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--format", "json"],
                                    capture_output=True, text=True, timeout=300).stdout)
    f = next(f for f in rep["findings"] if (f["rule"], f["node"], f["subject"]) == ("QG001", node, tool))
    p = subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--replay", f["fingerprint"],
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    (tmp_path / "script.json").write_text(p.stdout)
    (tmp_path / "input.json").write_text(json.dumps({"messages": [["user", "go"]]}))
    path = ":".join(map(str, (PYTHON_DIR / "tests" / "agents", PYTHON_DIR / "tests", PYTHON_DIR)))
    r = subprocess.run([sys.executable, "-m", "stalwart_export", "replay", "script.json", "catalogue.json",
                        "--graph", f"inner_apps.{app}:{attr}", "--input", "input.json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"the real graph follows the witness and makes its calls ['{tool}']" in r.stdout, r.stdout


def test_an_unread_agent_in_a_helper_and_a_second_agent_are_opaque(binary, tmp_path):
    """The helper builds its agent over tools the run names: opaque at the node's call of the helper,
    naming the helper. A node building two agents: the first is its subgraph, the second an opaque
    entry at its constructor (only one agent a node is read)."""
    e = export(unresolved.more_graph)
    h = node_of(e, "via_helper")
    [o] = h["opaque"]
    assert (o["location"]["file"], o["location"]["line"]) == line_of(unresolved, "helper")
    assert o["what"] == "tools" and o["why"].startswith("in helper make_agent(...): builds an agent"), o
    t = node_of(e, "two_agents")
    assert t["kind"] == "subgraph"
    [o] = t["opaque"]
    assert o["what"] == "subgraph" and (o["location"]["file"], o["location"]["line"]) == line_of(unresolved,
                                                                                                  "second")
    code, found, text, _ = verify(binary, tmp_path, e)
    assert {("QG024", "tools:via_helper", "via_helper"), ("QG024", "subgraph:two_agents", "two_agents")} <= found
    assert_fails_the_gate(code, found, text, {"QG024"})
