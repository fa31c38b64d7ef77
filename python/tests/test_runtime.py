"""Every step a real run takes (fake chat models, real LangGraph) is a route of the export;
every pause it makes is on record."""

import pytest

import graphs
from helpers import allowed, escape_id, graph_at, run_steps
from stalwart_export import export_graph

#: Pauses a run makes that the export leaves out on purpose, with the reason.
UNRECORDED_PAUSES = {
    # refund_order is asked about only when HumanInTheLoopMiddleware's `when` predicate holds:
    # a skippable pause is not a confirmation, so it is a warning, not an interrupt entry.
    "hitl_middleware_per_call": {((), "tools")},
}


@pytest.mark.parametrize("name", list(graphs.BUILDERS))
def test_every_run_step_is_an_edge(name):
    graph, inputs, resumes = graphs.BUILDERS[name]()
    export = export_graph(graph)
    steps, pauses = run_steps(graph, inputs, resumes)
    assert steps, "the graph ran no step"
    checked = 0
    for ns, seq in steps.items():
        g = graph_at(export, ns)
        ids = {n["id"] for n in g["nodes"]}
        prev = {"__start__"}
        for _, names in seq:
            for n in names:
                assert escape_id(n) in ids, f"{name} {ns}: node {n!r} ran but is not in the export"
                assert any(allowed(export, g, p, n) for p in prev), (
                    f"{name} {ns}: the run went {sorted(prev)} -> {n!r}, which the export has no route for")
                checked += 1
            prev = names
    assert checked >= 2
    on_record = {(i["node"]) for i in graph_at(export, ()).get("interrupts", [])}
    for ns, node in pauses:
        g = graph_at(export, ns)
        recorded = {i["node"] for i in g.get("interrupts", [])}
        if escape_id(node) in recorded:
            continue
        assert (ns, node) in UNRECORDED_PAUSES.get(name, set()), (
            f"{name}: the run paused in {node!r} ({ns}) but the export has no interrupt there")
    del on_record


def test_pauses_are_seen():
    """The check above is not vacuous: the interrupt() graphs do pause."""
    for name in ("interrupt_review_node", "interrupt_in_tool", "hitl_middleware", "hitl_middleware_per_call"):
        graph, inputs, resumes = graphs.BUILDERS[name]()
        _, pauses = run_steps(graph, inputs, resumes)
        assert pauses, name
