"""Issue 16, item 9: examples/langgraph_replay/replay_harness.py replays a witness on the user's
compiled graph, unmodified (`module:graph`): a scripted model and stub tools in place of theirs,
subgraphs streamed, arguments valid for each tool's schema, the graph's own input from a file,
and every failure one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import PYTHON_DIR, REPO
from stalwart_export import export_catalogue, export_graph

HARNESS = REPO / "examples" / "langgraph_replay" / "replay_harness.py"


def harness(*args, cwd, pythonpath=()):
    """`python -m stalwart_export replay ARGS` as a user runs it, the package on PYTHONPATH."""
    path = ":".join(map(str, (*pythonpath, PYTHON_DIR / "tests", PYTHON_DIR)))
    env = {"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "stalwart_export", "replay", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture()
def team_script(binary, tmp_path):
    """The export of lg_apps.teams, its catalogue, and the script of QG105 on issue_credit (a call
    inside the billing subgraph)."""
    from lg_apps import teams

    g, c = tmp_path / "graph.json", tmp_path / "catalogue.json"
    g.write_text(json.dumps(export_graph(teams.graph, base=str(tmp_path))))
    c.write_text(json.dumps(export_catalogue(teams.graph, teams.WORDS)))
    rep = json.loads(subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--format", "json"],
                                    capture_output=True, text=True, timeout=300).stdout)
    f = next(f for f in rep["findings"] if f["rule"] == "QG001" and f["subject"] == "issue_credit")
    assert f["node"] == "billing/tools"
    p = subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--replay", f["fingerprint"],
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    script = tmp_path / "script.json"
    script.write_text(p.stdout)
    (tmp_path / "input.json").write_text(json.dumps(teams.INPUT))
    return script, c


def test_the_witness_inside_a_subgraph_replays_on_the_unmodified_graph(team_script, tmp_path):
    script, cat = team_script
    p = harness(script, cat, "--graph", "lg_apps.teams:graph", "--input", tmp_path / "input.json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the real graph follows the witness and makes its calls ['issue_credit']" in p.stdout


def test_without_the_graphs_input_it_says_why_in_one_line(team_script, tmp_path):
    script, cat = team_script
    p = harness(script, cat, "--graph", "lg_apps.teams:graph", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "does not follow the witness: step 3 (enter 'intake'): the graph raised KeyError: 'ticket' in node "
        "'intake', after '__start__'"), p.stdout


def test_a_graph_that_does_not_follow_is_one_line_at_the_step(team_script, tmp_path):
    script, cat = team_script
    # the support graph has no billing node: the first step the witness takes there does not happen
    p = harness(script, cat, "--graph", "lg_apps.handwritten:graph", "--input", tmp_path / "input.json",
                cwd=tmp_path)
    assert p.returncode == 1
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1 and "step " in lines[0] and "(enter 'intake')" in lines[0], p.stdout


def test_harness_errors_are_one_line_exit_2(team_script, tmp_path):
    script, cat = team_script
    for args, want in ((("--graph", "no_such_module:graph"), "cannot load no_such_module:graph"),
                       (("--graph", "lg_apps.teams"), "give MODULE:ATTR"),
                       (("--graph", "lg_apps.teams:INPUT"), "not a compiled LangGraph graph"),
                       (("--graph", "lg_apps.teams:graph", "--input", tmp_path / "nope.json"), "cannot read the input")):
        p = harness(script, cat, *args, cwd=tmp_path)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stderr.count("\n") == 1 and want in p.stderr, (args, p.stderr)


def test_arguments_are_valid_for_each_schema():
    from stalwart_export import replay as h
    from stalwart_export.langgraph.replay import tool_schema

    from lg_apps import handwritten, teams

    for t in (teams.issue_credit, handwritten.send_email, teams.lookup_invoice):
        args = h.arguments(tool_schema(t))
        t.args_schema.model_validate(args)  # raises when invalid
    assert h.arguments({"type": "object", "required": ["n", "mode"],
                        "properties": {"n": {"type": "integer", "minimum": 3},
                                       "mode": {"enum": ["fast", "slow"]}}}) == {"n": 3, "mode": "fast"}


# ---------------------------------------------------------------------------- issue 29, item 7
# The shapes the examples/ harness could not drive (each fails on it: an async node raised
# "No synchronous function provided", a structured-output router got None, a graph with no
# checkpointer "stopped" at its pause, an interrupt() resumed with True took the no branch),
# written as public agents write them and replayed through `python -m stalwart_export replay`.
APPS = '''
"""Graphs in the shapes the replay must drive (written by test_replay_harness.py)."""
from typing import Literal

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from langgraph.types import Command, interrupt
from pydantic import BaseModel

from lg_apps._fake import scripted


@tool
async def get_order(order_id: str) -> str:
    """Look up an order by id."""
    raise RuntimeError("the real shop is not called in a replay")


@tool
async def refund_order(order_id: str, amount: float) -> str:
    """Refund an order."""
    raise RuntimeError("no money moves in a replay")


@tool
def issue_credit(invoice: str, amount: float) -> str:
    """Credit an invoice."""
    raise RuntimeError("no money moves in a replay")


def never():
    return scripted("the real model is not called in a replay")


# An async agent: `async def` nodes awaiting the model; `invoke` cannot run it.
async_model = never().bind_tools([get_order, refund_order])


async def agent(state: MessagesState):
    return {"messages": [await async_model.ainvoke(state["messages"])]}


_b = StateGraph(MessagesState)
_b.add_node("agent", agent)
_b.add_node("tools", ToolNode([get_order, refund_order]))
_b.add_edge(START, "agent")
_b.add_conditional_edges("agent", tools_condition)
_b.add_edge("tools", "agent")
async_graph = _b.compile()


# A router asking the model for a structured route (the supervisor shape).
class Route(BaseModel):
    """Where the request goes."""
    destination: Literal["billing", "faq"]


class NarrowRoute(BaseModel):
    """Where the request goes, in a schema with no billing."""
    destination: Literal["faq", "sales"]


class RouterState(MessagesState):
    route: str


def router_graph_with(schema):
    router_model = never()
    billing_model = never().bind_tools([issue_credit])

    def router(state: RouterState):
        return {"route": router_model.with_structured_output(schema).invoke(state["messages"]).destination}

    def billing(state: RouterState):
        return {"messages": [billing_model.invoke(state["messages"])]}

    def faq(state: RouterState):
        return {"messages": [AIMessage(content="see the FAQ")]}

    def pick(state: RouterState) -> Literal["billing", "faq"]:
        return state["route"]

    r = StateGraph(RouterState)
    r.add_node("router", router)
    r.add_node("billing", billing)
    r.add_node("billing_tools", ToolNode([issue_credit]))
    r.add_node("faq", faq)
    r.add_edge(START, "router")
    r.add_conditional_edges("router", pick)
    r.add_conditional_edges("billing", tools_condition, {"tools": "billing_tools", END: END})
    r.add_edge("billing_tools", "billing")
    r.add_edge("faq", END)
    return r.compile()


router_graph = router_graph_with(Route)
narrow_router_graph = router_graph_with(NarrowRoute)

# An agent pausing before its tools, compiled without a checkpointer (the platform gives one).
paused_graph = create_react_agent(never(), [get_order, refund_order], interrupt_before=["tools"])

# An approval node pausing with interrupt(), compiled without a checkpointer; only the word
# "approve" is a yes.
approval_model = never().bind_tools([get_order, refund_order])


def call_model(state: MessagesState):
    return {"messages": [approval_model.invoke(state["messages"])]}


def approve(state: MessagesState) -> Command[Literal["tools", "call_model"]]:
    answer = interrupt({"calls": state["messages"][-1].tool_calls})
    return Command(goto="tools" if answer == "approve" else "call_model")


def after_model(state: MessagesState) -> Literal["approve", "__end__"]:
    return "approve" if state["messages"][-1].tool_calls else END


_a = StateGraph(MessagesState)
_a.add_node("call_model", call_model)
_a.add_node("approve", approve)
_a.add_node("tools", ToolNode([get_order, refund_order]))
_a.add_edge(START, "call_model")
_a.add_conditional_edges("call_model", after_model)
_a.add_edge("tools", "call_model")
approval_graph = _a.compile()
'''

SHOP = {"get_order": {"kind": "read"}, "refund_order": {"kind": "write"}}
#: graph: (its words, the finding replayed (rule, subject), the witness's calls)
SHAPES = {
    "async_graph": (SHOP, ("QG001", "refund_order"), ["refund_order"]),
    "router_graph": ({"issue_credit": {"kind": "write"}}, ("QG001", "issue_credit"), ["issue_credit"]),
    "paused_graph": (SHOP, ("QG105", "refund_order"), ["refund_order", "refund_order"]),
    "approval_graph": (SHOP, ("QG105", "refund_order"), ["refund_order", "refund_order"]),
}


@pytest.fixture(scope="module")
def shapes(binary, tmp_path_factory):
    """Each shape exported through `python -m stalwart_export` and the script of its finding."""
    d = tmp_path_factory.mktemp("shapes")
    (d / "replay_apps.py").write_text(APPS)
    env = {"PYTHONPATH": f"{PYTHON_DIR / 'tests'}:{PYTHON_DIR}", "PATH": "/usr/bin:/bin"}
    out = {}
    for name, (words, (rule, subject), _calls) in SHAPES.items():
        (d / f"{name}.words.json").write_text(json.dumps(words))
        g, c = d / f"{name}.json", d / f"{name}.catalogue.json"
        p = subprocess.run([sys.executable, "-m", "stalwart_export", f"replay_apps:{name}", "-o", g, "--catalogue",
                            c, "--words", d / f"{name}.words.json"], cwd=d, capture_output=True, text=True,
                           timeout=300, env=env)
        assert p.returncode == 0, p.stderr
        rep = json.loads(subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--format", "json"],
                                        capture_output=True, text=True, timeout=300).stdout)
        f = next(f for f in rep["findings"] if (f["rule"], f["subject"]) == (rule, subject))
        p = subprocess.run([binary, "verify", "--graph", g, "--catalogue", c, "--replay", f["fingerprint"],
                            "--format", "json"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        (d / f"{name}.script.json").write_text(p.stdout)
        out[name] = (d / f"{name}.script.json", c, json.loads(p.stdout))
    return d, out


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_replays_on_its_real_graph(shapes, name):
    d, scripts = shapes
    script, cat, _ = scripts[name]
    p = harness(script, cat, "--graph", f"replay_apps:{name}", cwd=d)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"the real graph follows the witness and makes its calls {SHAPES[name][2]}" in p.stdout


def test_the_witnesses_pause_and_route_as_the_shapes_need(shapes):
    """The scripts hold what each shape is about, so the replays above drive it."""
    _, scripts = shapes
    kinds = {n: [(s["kind"], s.get("node"), s.get("when")) for s in sc["steps"]] for n, (_, _, sc) in scripts.items()}
    assert ("choose", "router", None) in kinds["router_graph"]
    assert ("confirm", "tools", "before") in kinds["paused_graph"]
    assert ("confirm", "approve", "inside") in kinds["approval_graph"]


def test_a_graph_without_a_checkpointer_is_given_one_and_told(shapes):
    d, scripts = shapes
    script, cat, _ = scripts["paused_graph"]
    p = harness(script, cat, "--graph", "replay_apps:paused_graph", cwd=d)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "note: the graph has no checkpointer: the replay gave it an InMemorySaver" in p.stderr


def test_a_graph_compiled_with_checkpointer_false_cannot_pause_and_says_so(shapes):
    d, scripts = shapes
    script, cat, _ = scripts["paused_graph"]
    (d / "no_saver.py").write_text("from replay_apps import paused_graph\n"
                                   "graph = paused_graph.copy(update={'checkpointer': False})\n")
    p = harness(script, cat, "--graph", "no_saver:graph", cwd=d)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr == ("stalwart-export replay: error: step 6 (confirm yes at 'tools') answers a pause, but the "
                        "graph was compiled with checkpointer=False, so it cannot pause: compile it without "
                        "checkpointer=False (the replay then gives it an InMemorySaver)\n")


def test_the_interrupt_answer_is_the_word_the_node_reads_as_yes():
    import linecache

    from stalwart_export.langgraph.replay import resume_value

    def approve(state):
        answer = interrupt_like(state)  # noqa: F821 - never run, only read
        return answer

    src_yes = {"answer == 'approve'": "approve", "answer['action'] in ('accept', 'edit')": {"action": "accept"},
               "answer.get('type') == 'reject'": True}
    ns: dict = {}
    for test, want in src_yes.items():
        # (inspect reads the source through linecache)
        code = f"def node(state):\n    answer = interrupt({{}})\n    return 1 if {test} else 2\n"
        path = PYTHON_DIR / "tests" / "__pycache__"  # inspect reads the source through linecache
        import linecache

        fname = f"<replay-test {test}>"
        linecache.cache[fname] = (len(code), None, code.splitlines(True), fname)
        exec(compile(code, fname, "exec"), ns)
        assert resume_value(ns["node"], True) == want, test
    assert resume_value(ns["node"], False) == {"type": "reject"}
    assert resume_value(approve, False) is False  # no interrupt() in it: the plain answer


def test_an_undrivable_witness_says_which_step_and_why(shapes):
    d, scripts = shapes
    script, cat, _ = scripts["router_graph"]
    p = harness(script, cat, "--graph", "replay_apps:narrow_router_graph", cwd=d)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout == ("finding 1 (QG001 on issue_credit): the real graph does not follow the witness: step 4 "
                        "(choose 'billing' at 'router'): the node asks the model for a structured NarrowRoute, "
                        "and none of its fields can say 'billing' (its fields: destination: 'faq' | 'sales')\n")
    # the async agent's witness on the router: the router asks for a route the witness never picks
    script, cat, _ = scripts["async_graph"]
    p = harness(script, cat, "--graph", "replay_apps:router_graph", cwd=d)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.endswith("the real graph does not follow the witness: step 3 (enter 'agent'): at node "
                             "'router' the graph asks the model for a structured Route, and the witness makes no "
                             "choice there next\n"), p.stdout
    assert "no more calls" not in p.stdout


def test_a_witness_calling_a_tool_the_graph_lacks_names_the_choice_and_the_tools(shapes):
    d, scripts = shapes
    _, cat, sc = scripts["async_graph"]
    steps = [dict(s, tool="wire_money") if s["kind"] == "call" else s for s in sc["steps"]]
    (d / "wire.json").write_text(json.dumps({**sc, "steps": steps}))
    p = harness(d / "wire.json", cat, "--graph", "replay_apps:async_graph", cwd=d)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.endswith("the real graph does not follow the witness: step 4 (choose 'tools' at 'agent'): the "
                             "witness calls 'wire_money' next, which the graph binds to no tool node (its tools: "
                             "get_order, refund_order)\n"), p.stdout
