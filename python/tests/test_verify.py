"""Each export, with its catalogue, is verified by the Rust `stalwart verify` in the same run;
the findings (rule, subject, node) are asserted per graph."""

import json
import subprocess

import pytest

import graphs
from helpers import stalwart_bin
from stalwart_export import export_catalogue, export_graph, graph_tools

T = ("get_order", "read_inbox", "refund_order")


# QG101 (a hotspot): refund_order is a write with no check, limit, order rule or rulebook.
UNCHECKED = ("QG101", "refund_order", None)


def plain_agent(tools_node, model_node):
    """A model with a plain tool node over the three tools: QG001 on each, QG011 (no person
    confirms refund_order), QG105, QG101, and the model's cycle QG023."""
    return {("QG001", t, tools_node) for t in T} | {
        ("QG011", "refund_order", tools_node),
        ("QG023", f"cycle:{model_node}", model_node),
        ("QG105", "refund_order", tools_node),
        UNCHECKED,
    }


def confirmed(findings, tools_node):
    return findings - {("QG011", "refund_order", tools_node)}


EXPECTED = {
    "react_agent": (1, plain_agent("tools", "agent")),
    "create_agent": (1, plain_agent("tools", "model")),
    # interrupt_before=["tools"]: one pause per bound tool, so refund_order is confirmed (no QG011)
    "react_agent_interrupt": (1, confirmed(plain_agent("tools", "agent"), "tools")),
    # route_after_tools has no path_map and no Literal annotation: a null edge, QG015
    "conditional_edges": (1, plain_agent("tools", "agent") | {("QG015", "edge:tools", "tools")}),
    # steps that call tools directly (lookup: get_order, refund_step: refund_order); lookup's bare Command
    "command_routing": (1, {
        ("QG001", "get_order", "lookup"), ("QG001", "refund_order", "refund_step"),
        ("QG015", "edge:lookup", "lookup"), ("QG023", "cycle:lookup", "lookup"),
        ("QG105", "refund_order", "refund_step"), UNCHECKED,
    }),
    "send_map_reduce": (0, set()),
    "subgraph_parent": (1, plain_agent("worker/tools", "worker/agent")),
    "supervisor": (1, {
        ("QG001", "get_order", "billing_expert/tools"), ("QG001", "read_inbox", "research_expert/tools"),
        ("QG001", "refund_order", "billing_expert/tools"),
        ("QG001", "transfer_to_billing_expert", "supervisor/tools"),
        ("QG001", "transfer_to_research_expert", "supervisor/tools"),
        ("QG012", "refund_order", "billing_expert/tools"),
        ("QG023", "cycle:supervisor/agent", "supervisor/agent"),
        ("QG105", "refund_order", "billing_expert/tools"), UNCHECKED,
    }),
    "swarm": (1, {
        ("QG001", "get_order", "bob/tools"), ("QG001", "read_inbox", "alice/tools"),
        ("QG001", "refund_order", "bob/tools"), ("QG001", "transfer_to_alice", "bob/tools"),
        ("QG001", "transfer_to_bob", "alice/tools"), ("QG012", "refund_order", "bob/tools"),
        ("QG023", "cycle:alice/model", "alice/model"), ("QG105", "refund_order", "bob/tools"),
        UNCHECKED,
    }),
    # the review node goes to run_tool only when the answer continues (SPEC 12.5, issue 28): its
    # `inside` pause confirms run_tool's calls, so refund_order is confirmed (no QG011)
    "interrupt_review_node": (1, confirmed(plain_agent("run_tool", "call_llm"), "run_tool")),
    # interrupt() at the top of the refund tool: refund_order is confirmed
    "interrupt_in_tool": (1, confirmed(plain_agent("tools", "agent"), "tools")),
    # HumanInTheLoopMiddleware (batched) gates refund_order in after_model: confirmed
    "hitl_middleware": (1, confirmed(plain_agent("tools", "model"), "tools")),
    # per_call with a `when` predicate: skippable, so not a confirmation: QG011 stays
    "hitl_middleware_per_call": (1, plain_agent("tools", "model")),
    "edge_cases": (0, set()),
}


@pytest.fixture(scope="module")
def binary():
    b = stalwart_bin()
    if b is None:
        pytest.skip("no stalwart binary: set STALWART_BIN or build target/release/stalwart "
                    "(cargo build --release); the Rust verification of the exports is skipped")
    return b


@pytest.mark.parametrize("name", list(graphs.BUILDERS))
def test_stalwart_verifies_the_export(name, binary, tmp_path):
    graph, _, _ = graphs.BUILDERS[name]()
    export = export_graph(graph)
    # Words only for the tools the graph has: a word naming a tool it lacks is an error (issue 15).
    have = {t.name for t in graph_tools(graph)}
    cat = export_catalogue(graph, {k: v for k, v in graphs.WORDS.items() if k in have})
    gpath, cpath = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gpath.write_text(json.dumps(export, indent=1))
    cpath.write_text(json.dumps(cat, indent=1))
    p = subprocess.run([binary, "verify", "--graph", str(gpath), "--catalogue", str(cpath), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), f"stalwart could not run (exit {p.returncode}):\n{p.stderr}"
    report = json.loads(p.stdout)
    got = {(f["rule"], f["subject"], f["node"]) for f in report["findings"]}
    want_exit, want = EXPECTED[name]
    assert got == want, f"{name}: unexpected {sorted(got - want)}, missing {sorted(want - got)}"
    assert p.returncode == want_exit
