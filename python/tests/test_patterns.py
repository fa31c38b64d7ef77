"""Issue 16: the patterns public LangGraph agents use (tests/lg_apps/), each exported, verified by
the Rust binary with its findings asserted, and run on real LangGraph with fake chat models, every
step the run takes a route of the export and every tool a node ran one the export lets it call."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from helpers import PYTHON_DIR, run_steps
from stalwart_export import export_catalogue, export_graph
from test_runtime import problems

AGENTS = ("support", "sql", "handwritten", "decorated")
# Exported and verified only: the router's step runs its tool in code (no ToolMessage to count).
VERIFIED = AGENTS + ("dispatch",)


def agent(name):
    import importlib

    return importlib.import_module(f"lg_apps.{name}")


def node(g, nid):
    return next(n for n in g["nodes"] if n["id"] == nid)


def verify(binary, tmp_path, name, cwd=None):
    """Export agent `name` into tmp_path/build, verify it from `cwd`; (report, exit)."""
    m = agent(name)
    build = tmp_path / "build"
    build.mkdir(exist_ok=True)
    export = export_graph(m.graph, base=str(build))
    (build / "graph.json").write_text(json.dumps(export, indent=1))
    (build / "catalogue.json").write_text(json.dumps(export_catalogue(m.graph, m.WORDS), indent=1))
    p = subprocess.run([binary, "verify", "--graph", str(build / "graph.json"), "--catalogue",
                        str(build / "catalogue.json"), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=cwd or tmp_path)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout), p.returncode


# ------------------------------------------------------------------ the exports
def test_tool_node_with_fallbacks_and_an_assistant_class():
    """Items 1, 2: ToolNode(...).with_fallbacks(...) is the tool node inside; Assistant(runnable)
    is a model, located at its class; the sensitive tool node pauses before its tool."""
    m = agent("support")
    e = export_graph(m.graph)
    assert node(e, "safe_tools")["kind"] == "tools_plain"
    assert node(e, "safe_tools")["tools"] == ["search_flights", "lookup_policy"]
    assert node(e, "safe_tools")["langgraph"]["wrappers"] == ["RunnableWithFallbacks"]
    a = node(e, "assistant")
    assert a["kind"] == "model"
    assert a["langgraph"]["bound_tools"] == ["search_flights", "lookup_policy", "cancel_ticket"]
    src = Path(m.__file__).read_text().splitlines()
    assert src[a["location"]["line"] - 1].startswith("class Assistant")
    assert {(i["node"], i["when"], i["tool"]) for i in e["interrupts"]} == {("sensitive_tools", "before", "cancel_ticket")}
    # the router reads the first call only, on a model that may make several: said, not narrowed
    assert len(e["warnings"]) == 1 and "parallel_tool_calls=False" in e["warnings"][0]


def test_retry_binding_lambda_and_decorators():
    """Items 1, 3: .with_retry(), .with_config() and RunnableLambda are seen through; @traceable and
    functools.wraps functions are located at the user's def, not in the decorator's library."""
    m = agent("decorated")
    e = export_graph(m.graph)
    src = Path(m.__file__).read_text().splitlines()
    assert node(e, "tools")["kind"] == "tools_plain" and node(e, "tools")["langgraph"]["wrappers"] == ["RunnableRetry"]
    assert node(e, "agent")["kind"] == "model"
    for nid, text in (("triage", "def triage("), ("agent", "def agent("), ("summarize", "def summarize(")):
        loc = node(e, nid)["location"]
        assert loc["file"].endswith("lg_apps/decorated.py") and (Path.cwd() / loc["file"]).resolve() == Path(m.__file__).resolve(), loc
        assert src[loc["line"] - 1].startswith(text), (nid, loc)
    assert src[node(e, "tools")["location"]["line"] - 1].startswith('builder.add_node("tools"')


def test_a_wrapper_getattr_that_raises_is_never_a_traceback():
    """Item 1: RunnableWithFallbacks.__getattr__ evaluates type hints of what it wraps (a NameError
    in langgraph 1.2); reading the node never goes through it."""
    from stalwart_export import _code

    m = agent("support")
    wrapped = m.graph.builder.nodes["safe_tools"].runnable
    with pytest.raises(NameError):
        getattr(wrapped, "func")
    assert _code.attr(wrapped, "func") is None
    inner, wrappers, fallbacks = _code.unwrap_runnable(wrapped)
    assert type(inner).__name__ == "ToolNode" and wrappers == ["RunnableWithFallbacks"] and len(fallbacks) == 1


def test_one_tool_taken_from_a_list_by_name():
    """Item 4: next(t for t in tools if t.name == "x") runs x only; a name that is not a literal
    keeps the list, with a warning."""
    m = agent("sql")
    e = export_graph(m.graph)
    assert node(e, "list_tables")["tools"] == ["sql_db_list_tables"]
    assert node(e, "get_schema")["tools"] == ["sql_db_schema"]
    assert node(e, "run_query")["tools"] == ["sql_db_query"]
    g = export_graph(m.choose_by_variable("sql_db_drop_table"))
    assert node(g, "run_named")["tools"] == ["sql_db_list_tables", "sql_db_schema", "sql_db_query", "sql_db_drop_table"]
    assert any("by a name that is not a literal" in w for w in g["warnings"])


def test_a_hand_written_tool_node_and_routes_by_tool_name():
    """Items 5, 6: a loop running tools_by_name[call["name"]] is a tools_plain node; the router
    sends send_email's calls to `send` and every other call to `tool_node`, so with one call a
    message (parallel_tool_calls=False) each node calls only its own tools."""
    m = agent("handwritten")
    e = export_graph(m.graph)
    assert node(e, "tool_node")["kind"] == "tools_plain" and node(e, "send")["kind"] == "tools_plain"
    assert node(e, "tool_node")["tools"] == ["search_contacts", "run_report"]
    assert node(e, "send")["tools"] == ["send_email"]
    edge = next(x for x in e["edges"] if x["from"] == "llm_call")
    assert edge["langgraph"]["calls"] == {"tool_node": ["search_contacts", "run_report"], "send": ["send_email"]}


def test_routes_by_tool_name_when_the_model_makes_several_calls():
    """Item 6 without parallel_tool_calls=False: a message with send_email may hold other calls,
    so `send` keeps every tool; `tool_node` is reached only when no call is send_email."""
    from stalwart_export.langgraph import _routes

    m = agent("handwritten")
    assert _routes.tool_routes(m.should_continue, single_call=False) == {
        "tool_node": ("except", frozenset({"send_email"}))}
    assert _routes.tool_routes(agent("support").route_tools, single_call=False) == {}
    assert _routes.tool_routes(agent("support").route_tools, single_call=True) == {
        "sensitive_tools": ("only", frozenset({"cancel_ticket"})), "safe_tools": ("except", frozenset({"cancel_ticket"}))}


# ------------------------------------------------------------------ the verifier's findings
EXPECTED = {
    # the sensitive tool node pauses before cancel_ticket (no QG011/QG105); every call is plain
    "support": (1, {("QG001", "cancel_ticket", "sensitive_tools"), ("QG001", "lookup_policy", "safe_tools"),
                    ("QG001", "search_flights", "safe_tools"), ("QG023", "cycle:assistant", "assistant"),
                    ("QG101", "cancel_ticket", None)}),
    # the destructive drop tool is not called by any step: no finding on it (six before the fix)
    "sql": (1, {("QG001", "sql_db_list_tables", "list_tables"), ("QG001", "sql_db_schema", "get_schema"),
                ("QG001", "sql_db_query", "run_query"), ("QG018", "sql_db_query", None),
                ("QG023", "cycle:generate_query", "generate_query")}),
    # send_email only at `send`; the model writes its arguments (QG018 on `to` and on run_report's sql)
    "handwritten": (1, {("QG001", "run_report", "tool_node"), ("QG001", "search_contacts", "tool_node"),
                        ("QG001", "send_email", "send"), ("QG018", "run_report", None),
                        ("QG018", "send_email", None), ("QG023", "cycle:llm_call", "llm_call"),
                        ("QG101", "send_email", None), ("QG105", "send_email", "send")}),
    "decorated": (1, {("QG001", "close_account", "tools"), ("QG001", "read_ticket", "tools"),
                      ("QG011", "close_account", "tools"), ("QG023", "cycle:agent", "agent"),
                      ("QG101", "close_account", None), ("QG105", "close_account", "tools")}),
    # the Command edge's destinations are looked up at run time: QG015 on the router's def
    "dispatch": (1, {("QG001", "refund_order", "pay"), ("QG015", "edge:router", "router"),
                     ("QG101", "refund_order", None), ("QG105", "refund_order", "pay")}),
}


def project(tmp_path) -> Path:
    """A copy of the agents in a repository of their own (tmp/proj with a .git)."""
    proj = tmp_path / "proj"
    shutil.copytree(PYTHON_DIR / "tests" / "lg_apps", proj / "lg_apps",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (proj / ".git").mkdir()
    return proj


@pytest.mark.parametrize("name", VERIFIED)
def test_stalwart_verifies_the_pattern(name, binary, tmp_path):
    report, code = verify(binary, tmp_path, name)
    got = {(f["rule"], f["subject"], f["node"]) for f in report["findings"]}
    want_exit, want = EXPECTED[name]
    assert got == want, f"{name}: unexpected {sorted(got - want)}, missing {sorted(want - got)}"
    assert code == want_exit


@pytest.mark.parametrize("name", VERIFIED)
def test_findings_point_at_the_users_python_from_any_directory(name, binary, tmp_path):
    """Item 7: exported into proj/build, verified from another working directory: every finding
    (and every related location) is a .py of the project, at a line holding its def, class or
    add_node call; each tool's finding gives the tool's definition."""
    proj = project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (f"import sys, json; sys.path.insert(0, {str(proj)!r}); sys.path.insert(0, {str(PYTHON_DIR)!r})\n"
            f"from stalwart_export import export_graph, export_catalogue\n"
            f"import lg_apps.{name} as m\n"
            f"open({str(proj / 'build' / 'graph.json')!r}, 'w').write(json.dumps(export_graph(m.graph, base={str(proj / 'build')!r})))\n"
            f"open({str(proj / 'build' / 'catalogue.json')!r}, 'w').write(json.dumps(export_catalogue(m.graph, m.WORDS)))\n")
    (proj / "build").mkdir()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=proj, timeout=120)
    g = json.loads((proj / "build" / "graph.json").read_text())
    assert all(n["location"]["file"].startswith("../lg_apps/") for n in g["nodes"] if "location" in n)
    p = subprocess.run([binary, "verify", "--graph", str(proj / "build" / "graph.json"), "--catalogue",
                        str(proj / "build" / "catalogue.json"), "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=elsewhere)
    report = json.loads(p.stdout)
    assert report["findings"]
    for f in report["findings"]:
        file = Path(f["location"]["file"])
        assert file.suffix == ".py" and (proj / "lg_apps") in file.resolve().parents, f
        text = file.read_text().splitlines()[f["location"]["line"] - 1].lstrip()
        assert text.startswith(("def ", "class ", "builder.add_node(")), (f["rule"], f["subject"], text)
        if f["subject"] in EXPECTED_TOOLS[name]:
            defined = [r for r in f["related"] if r["message"].endswith("is defined here")] or [
                {"location": f["location"]}]
            assert Path(defined[0]["location"]["file"]).suffix == ".py"
    sarif = subprocess.run([binary, "verify", "--graph", str(proj / "build" / "graph.json"), "--catalogue",
                            str(proj / "build" / "catalogue.json"), "--format", "sarif"],
                           capture_output=True, text=True, timeout=300, cwd=proj)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(sarif.stdout)["runs"][0]["results"] for loc in r["locations"]}
    assert uris and all(u.startswith("lg_apps/") and u.endswith(".py") for u in uris), uris


EXPECTED_TOOLS = {name: {t for _, t, _ in want if not t.startswith("cycle:")} for name, (_, want) in EXPECTED.items()}


# ------------------------------------------------------------------ real runs
def tools_run_at(graph, inputs, resumes):
    """(namespace, node) -> the tools whose ToolMessages the node wrote, in one real run."""
    import uuid

    from langgraph.types import Command

    cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}
    names: dict[str, str] = {}
    ran: dict[str, set] = {}
    x = inputs
    for k in range(len(resumes) + 1):
        for _ns, upd in graph.stream(x, cfg, stream_mode="updates", subgraphs=True):
            for n, val in (upd or {}).items():
                msgs = (val or {}).get("messages", []) if isinstance(val, dict) else []
                msgs = msgs if isinstance(msgs, list) else [msgs]
                for msg in msgs:
                    if isinstance(msg, AIMessage):
                        names.update({c["id"]: c["name"] for c in msg.tool_calls})
                    elif isinstance(msg, ToolMessage):
                        ran.setdefault(n, set()).add(names.get(msg.tool_call_id, msg.name))
        if k < len(resumes):
            x = None if resumes[k] is None else Command(resume=resumes[k])
    return ran


@pytest.mark.parametrize("name", AGENTS)
def test_every_step_of_a_real_run_is_a_route_of_the_export(name):
    m = agent(name)
    export = export_graph(m.graph)
    steps, pauses = run_steps(m.graph, m.INPUT, m.RESUMES)
    assert problems(name, export, steps, pauses) == []
    ran = tools_run_at(m.graph, m.INPUT, m.RESUMES)
    assert ran, "the run called no tool"
    for n, tools in ran.items():
        allowed = set(node(export, n).get("tools") or [])
        assert tools <= allowed, f"{n} ran {sorted(tools)}, the export lets it call {sorted(allowed)}"


# ------------------------------------------------------------------ words that start themselves
def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "stalwart_export", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ,
                                                       "PYTHONPATH": f"{PYTHON_DIR / 'tests'}:{PYTHON_DIR}"})


def test_init_words_from_mcp_annotations_and_defaults(binary, tmp_path):
    """Item 8: --init-words writes an entry per tool with what is known and where it came from;
    MCP annotations map to kind/destructive/idempotency/reads_outside; a hint the server did not
    give takes MCP's default (issue 28): `rename_file`, with no annotations, is a destructive,
    non-idempotent write reaching the open world (reads_outside and sends_out), each word saying it
    is MCP's default; the Rust `catalogue from-mcp` maps the same tools/list to the same words."""
    p = cli("lg_apps.mcp_tools:graph", "-o", "graph.json", "--init-words", "words.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "kind not declared" not in p.stderr
    words = json.loads((tmp_path / "words.json").read_text())
    assert set(words) == {"read_file", "fetch_url", "delete_file", "rename_file"}
    assert words["read_file"]["kind"] == "read" and words["read_file"]["_from"]["kind"] == "MCP annotation readOnlyHint: true"
    assert "reads_outside" not in words["read_file"]  # openWorldHint: false
    assert words["fetch_url"]["reads_outside"] is True
    assert words["fetch_url"]["_from"]["reads_outside"] == "MCP annotation openWorldHint: true"
    assert (words["delete_file"]["kind"], words["delete_file"]["destructive"], words["delete_file"]["idempotency"]) == (
        "write", True, True)
    assert words["delete_file"]["sends_out"] is True and words["delete_file"]["reads_outside"] is True
    assert words["delete_file"]["_from"]["sends_out"] == "MCP's default openWorldHint: true (the server did not say)"
    r = words["rename_file"]
    assert (r["kind"], r["destructive"], r["idempotency"], r["reads_outside"], r["sends_out"]) == (
        "write", True, False, True, True)
    assert r["_from"]["kind"] == "MCP's default readOnlyHint: false (the server did not say)"
    assert r["_from"]["destructive"] == "MCP's default destructiveHint: true (the server did not say)"
    assert r["args"] == {"src": {"type": "string"}, "dst": {"type": "string"}}
    # never overwritten
    again = cli("lg_apps.mcp_tools:graph", "--init-words", "words.json", cwd=tmp_path)
    assert again.returncode == 2 and "is not overwritten" in again.stderr
    # read back as the words: the catalogue has the same words, and the verifier lists no unset kind
    p = cli("lg_apps.mcp_tools:graph", "-o", "graph.json", "--catalogue", "catalogue.json", "--words", "words.json",
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    cat = json.loads((tmp_path / "catalogue.json").read_text())
    assert cat["tools"]["rename_file"]["kind"] == "write" and "_from" not in cat["tools"]["rename_file"]
    v = subprocess.run([binary, "verify", "--graph", "graph.json", "--catalogue", "catalogue.json", "--format", "json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    report = json.loads(v.stdout)
    assert [l["tool"] for l in report["lints"] if l["id"] == "kind_unset"] == []
    # the verifier's own reading of the same tools/list
    from lg_apps.mcp_tools import LISTED

    (tmp_path / "tools.json").write_text(json.dumps(
        {"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in LISTED]}))
    r = subprocess.run([binary, "catalogue", "from-mcp", "tools.json"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rust = json.loads(r.stdout)["tools"]
    for name, entry in cat["tools"].items():
        assert rust[name] == entry, name


def test_nothing_is_guessed_from_a_name():
    """Item 8: a tool called delete_* with no annotation and no words is not made a write."""
    from langchain_core.tools import tool

    from stalwart_export.catalogue import init_words

    @tool
    def delete_everything(path: str) -> str:
        """Remove things."""
        return "ok"

    from langgraph.prebuilt import create_react_agent

    from lg_apps._fake import scripted

    g = create_react_agent(scripted("hi"), [delete_everything])
    assert init_words(g)["delete_everything"]["kind"] is None


def test_the_mcp_agent_runs_within_its_export():
    m = agent("mcp_tools")
    export = export_graph(m.graph)
    steps, pauses = run_steps(m.graph, m.INPUT, m.RESUMES)
    assert problems("mcp_tools", export, steps, pauses) == []
    ran = tools_run_at(m.graph, m.INPUT, m.RESUMES)
    assert ran.get("tools") == {"read_file", "delete_file"}
