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


def problems(name, export, steps, pauses):
    """What the run did that the export does not have: transitions and pauses."""
    out = []
    checked = 0
    for ns, seq in steps.items():
        g = graph_at(export, ns)
        ids = {n["id"] for n in g["nodes"]}
        prev = {"__start__"}
        for _, names in seq:
            for n in names:
                if escape_id(n) not in ids:
                    out.append(f"{ns}: node {n!r} ran but is not in the export")
                elif not any(allowed(export, g, p, n) for p in prev):
                    out.append(f"{ns}: the run went {sorted(prev)} -> {n!r}, which the export has no route for")
                checked += 1
            prev = names
    assert checked >= 2, "the run took fewer than two steps"
    for ns, node in pauses:
        g = graph_at(export, ns)
        # A per-call review may pause before its node (HumanInTheLoopMiddleware asks in after_model
        # about the calls the tool node then runs): the interrupt says where it asks.
        if escape_id(node) in {i.get("langgraph", {}).get("asked_in", i["node"]) for i in g.get("interrupts", [])}:
            continue
        if (ns, node) not in UNRECORDED_PAUSES.get(name, set()):
            out.append(f"the run paused in {node!r} ({ns}) but the export has no interrupt there")
    return out


@pytest.mark.parametrize("name", list(graphs.BUILDERS))
def test_every_run_step_is_an_edge(name):
    graph, inputs, resumes = graphs.BUILDERS[name]()
    export = export_graph(graph)
    steps, pauses = run_steps(graph, inputs, resumes)
    assert problems(name, export, steps, pauses) == []


def test_the_check_catches_what_get_graph_loses():
    """With the unannotated router drawn as get_graph draws it (tools -> __end__) and the
    review node's pause dropped, the same run is caught."""
    graph, inputs, resumes = graphs.build_conditional_edges()
    export = export_graph(graph)
    for e in export["edges"]:
        if e["from"] == "tools":
            e["destinations"] = ["__end__"]
    steps, pauses = run_steps(graph, inputs, resumes)
    assert any("-> 'agent'" in p for p in problems("conditional_edges", export, steps, pauses))
    graph, inputs, resumes = graphs.build_interrupt_review_node()
    export = export_graph(graph)
    export["interrupts"] = []
    steps, pauses = run_steps(graph, inputs, resumes)
    assert any("paused in 'human_review_node'" in p for p in problems("interrupt_review_node", export, steps, pauses))


def test_pauses_are_seen():
    """The check above is not vacuous: the interrupt() graphs do pause."""
    for name in ("interrupt_review_node", "interrupt_in_tool", "hitl_middleware", "hitl_middleware_per_call"):
        graph, inputs, resumes = graphs.BUILDERS[name]()
        _, pauses = run_steps(graph, inputs, resumes)
        assert pauses, name
