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


def test_missing_kind_is_a_warning_and_left_out():
    @tool
    def mystery(x: str) -> str:
        """Does something."""
        return x

    cat, warns = export_catalogue([mystery], with_warnings=True)
    assert "kind" not in cat["tools"]["mystery"]
    assert any("mystery" in w and "kind" in w for w in warns)


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
    with pytest.raises(ValueError, match="'wire_money': kind must be 'read' or 'write', not 'delete'"):
        export_catalogue(graphs.TOOLS, {"wire_money": {"kind": "delete"}})  # not a tool of the list: still checked
    for bad, needle in (([], "not a list"), ({"refund_order": "write"}, "must be an object"),
                        ({"refund_order": {"args": ["order_id"]}}, "args must be an object"),
                        ({"refund_order": {"args": {"order_id": "user_id"}}}, "args['order_id'] must be an object")):
        with pytest.raises(TypeError) as e:
            export_catalogue(graphs.TOOLS, bad)
        assert needle in str(e.value)
