"""export_catalogue: names, descriptions and argument schemas from LangChain; words only from
the user (decorator or mapping); nothing invented."""

import pytest
from langchain_core.tools import tool

import graphs
from helpers import load_corpus
from stalwart_export import catalogue_words, export_catalogue


def test_words_from_decorator_and_mapping():
    cat = export_catalogue(graphs.TOOLS, graphs.WORDS)
    assert cat["format"] == "qls-catalogue/1"
    t = cat["tools"]
    assert t["read_inbox"]["kind"] == "read" and t["read_inbox"]["reads_outside"] is True  # above @tool
    assert t["get_order"]["kind"] == "read"  # below @tool
    assert t["refund_order"]["kind"] == "write"  # mapping
    assert t["refund_order"]["description"] == "Refund an order (moves money)."
    assert set(t["refund_order"]["args"]) == {"order_id", "amount"}
    assert t["refund_order"]["args"]["amount"]["type"] == "number"
    assert "irreversible" not in t["refund_order"]  # never invented


def test_missing_kind_is_a_warning_and_written_null():
    @tool
    def mystery(x: str) -> str:
        """Does something."""
        return x

    cat, warns = export_catalogue([mystery], with_warnings=True)
    assert "kind" in cat["tools"]["mystery"] and cat["tools"]["mystery"]["kind"] is None
    assert any("mystery" in w and "kind: null" in w for w in warns)


def test_roles_merge_into_args_and_bad_kind_raises():
    cat = export_catalogue(graphs.TOOLS, {"refund_order": {"kind": "write", "args": {"order_id": {"role": "user_id"}}}})
    assert cat["tools"]["refund_order"]["args"]["order_id"]["role"] == "user_id"
    assert cat["tools"]["refund_order"]["args"]["order_id"]["type"] == "string"
    with pytest.raises(ValueError):
        catalogue_words(kind="delete")
    with pytest.raises(ValueError):
        export_catalogue(graphs.TOOLS, {"refund_order": {"kind": "maybe"}})


def test_from_a_graph_with_handoffs_matches_the_corpus():
    graph, _, _ = graphs.build_swarm()
    cat, warns = export_catalogue(graph, graphs.WORDS, with_warnings=True)
    assert set(cat["tools"]) == {"read_inbox", "get_order", "refund_order", "transfer_to_alice", "transfer_to_bob"}
    assert cat["tools"]["transfer_to_bob"]["kind"] == "read"  # a handoff tool, by its metadata
    assert warns == []
    ref = load_corpus("catalogue")
    if ref is not None:
        for name, entry in cat["tools"].items():
            assert entry["kind"] == ref["tools"][name]["kind"], name
            assert set(entry["args"]) == set(ref["tools"][name]["args"]), name


def test_tools_called_directly_by_a_step_are_in_the_catalogue():
    graph, _, _ = graphs.build_command_routing()
    cat = export_catalogue(graph, graphs.WORDS)
    assert set(cat["tools"]) == {"get_order", "refund_order"}


def test_malformed_words_are_refused_before_anything_is_read():
    from stalwart_export.catalogue import check_words

    check_words({"refund_order": {"kind": "write", "args": {"order_id": {"role": "user_id"}}}, "x": None})
    with pytest.raises(ValueError, match=r"'wire_money': kind must be 'read', 'write' or null \(not yet declared\), not 'delete'"):
        export_catalogue(graphs.TOOLS, {"wire_money": {"kind": "delete"}})  # not a tool of the list: still checked
    for bad, needle in (([], "not a list"), ({"refund_order": "write"}, "must be an object"),
                        ({"refund_order": {"args": ["order_id"]}}, "args must be an object"),
                        ({"refund_order": {"args": {"order_id": "user_id"}}}, "args['order_id'] must be an object")):
        with pytest.raises(TypeError) as e:
            export_catalogue(graphs.TOOLS, bad)
        assert needle in str(e.value)


def test_a_tool_nothing_declares_is_written_kind_null_and_the_verifier_lists_it(binary, tmp_path):
    """Issue 15 item 5: a tool without a kind is written `kind: null` (as --init-words writes it),
    which the verifier reads as a write and names in the kind_unset lint, instead of an entry
    without `kind` the verifier refuses."""
    import json
    import subprocess

    from langchain.agents import create_agent

    from graphs import model
    from stalwart_export import export_graph

    @tool
    def rename_file(path: str, new_name: str) -> str:
        """Rename a file."""
        return "renamed"

    graph = create_agent(model("done"), [graphs.get_order, rename_file], name="files")
    cat, warnings = export_catalogue(graph, with_warnings=True)
    assert "kind" in cat["tools"]["rename_file"] and cat["tools"]["rename_file"]["kind"] is None
    assert warnings == ["tool 'rename_file' has no kind (read or write): written kind: null, which the verifier "
                        "reads as a write and lists (kind_unset); give it with catalogue_words or the words mapping"]
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export_graph(graph)))
    cp.write_text(json.dumps(cat))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    assert [x["tool"] for x in report["lints"] if x["id"] == "kind_unset"] == ["rename_file"]


def test_a_guard_whose_catalogue_lacks_a_bound_tool_is_warned_and_refuses_it():
    """Issue 15 item 5: create_agent(..., middleware=[guard]) over a tool its catalogue lacks: the
    guard refuses every call of it (unknown_tool), and the export says so."""
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage

    from graphs import call, model
    from stalwart_export import Guard, export_graph

    @tool
    def rename_file(path: str, new_name: str) -> str:
        """Rename a file."""
        raise AssertionError("the guard let a call of a tool it does not know run")

    guard = Guard(export_catalogue([graphs.get_order]))
    graph = create_agent(model([call("rename_file", {"path": "a", "new_name": "b"})], "done"),
                         [graphs.get_order, rename_file], middleware=[guard], name="files")
    e = export_graph(graph)
    assert {n["id"]: n["kind"] for n in e["nodes"]}["tools"] == "tools"
    [w] = [w for w in e["warnings"] if "does not declare" in w]
    assert w.startswith("node 'tools': the guard's catalogue (") and "'rename_file'" in w and "unknown_tool" in w
    out = graph.invoke({"messages": [HumanMessage(content="go")]})
    refused = [m for m in out["messages"] if getattr(m, "status", None) == "error"]
    assert len(refused) == 1 and "unknown_tool" in refused[0].content


def test_a_project_wide_words_file_declares_tools_this_graph_does_not_bind(binary, tmp_path):
    """Issue 15 item 7: refund_order's order rule names lookup_order, which this graph does not
    bind. The words may declare it (its entry is written, so the verifier reads the catalogue
    instead of exiting 2); a tool no rule names is still an error at the word; a rule
    naming a tool nothing declares gets a kind: null entry and a warning. The guard built on that
    catalogue refuses the refund (lookup_order can never run here), as the verifier finds."""
    import json
    import subprocess

    from langchain.agents import create_agent

    from graphs import call, model
    from stalwart_export import Guard, export_graph

    @catalogue_words(kind="write", order={"after": ["lookup_order"]})
    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        raise AssertionError("refunded although lookup_order never ran")

    words = {"lookup_order": {"kind": "read"}}
    plain = create_agent(model("done"), [refund], name="shop")
    cat, warnings = export_catalogue(plain, words, with_warnings=True)
    assert cat["tools"]["lookup_order"] == {"args": {}, "kind": "read"}
    assert warnings == []
    # A word for a tool the graph lacks and no rule names is a typo until shown otherwise (SPEC 12.3).
    with pytest.raises(ValueError, match=r"words are given for 'cancel_order', which is not a tool of the graph "
                                         r"and no rule of its tools names \(its tools: refund;"):
        export_catalogue(plain, {**words, "cancel_order": {"kind": "write"}})
    bare, warnings = export_catalogue(plain, with_warnings=True)
    assert bare["tools"]["lookup_order"] == {"args": {}, "kind": None}
    assert len(warnings) == 1 and warnings[0].startswith("tool 'lookup_order' is named by the rules of 'refund'")
    guard = Guard(cat)
    graph = create_agent(model([call("refund", {"order_id": "42"})], "done"), [refund], middleware=[guard],
                         name="shop")
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export_graph(plain)))
    for c in (cat, bare):
        cp.write_text(json.dumps(c))
        p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 1, p.stderr
        report = json.loads(p.stdout)
        assert ("QG014", "refund", "tools") in {(f["rule"], f["subject"], f["node"]) for f in report["findings"]}
        assert ("tool_never_bound", "lookup_order") in {(x["id"], x.get("tool")) for x in report["lints"]}
    from langchain_core.messages import HumanMessage

    out = graph.invoke({"messages": [HumanMessage(content="refund 42")]})
    refused = [m for m in out["messages"] if getattr(m, "status", None) == "error"]
    assert len(refused) == 1 and "order_rule" in refused[0].content and "lookup_order" in refused[0].content
