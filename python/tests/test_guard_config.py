"""The guard fails closed when it is built (SPEC 12.1): a catalogue, facts or rulebook record it
cannot read, or one the verifier would refuse, is an error naming the file, line and column, and
the place is the one the Rust verifier names for the same file."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REPO
from stalwart_export import Guard, GuardConfigError

ERRORS = REPO / "fixtures" / "errors"
SHOP = REPO / "fixtures" / "shop"

GOOD = {"read_inbox": {"kind": "read", "reads_outside": True},
        "refund_card": {"kind": "write", "compensation": "none", "order": {"after": ["get_order"]}},
        "get_order": {"kind": "read", "args": {"order_id": {"type": "string"}}}}


def js(tools=None, **top):
    """A JSON catalogue (one tool per line, so each error has a line of its own)."""
    body = dict(GOOD)
    body.update(tools or {})
    lines = ",\n".join(f'    {json.dumps(k)}: {json.dumps(v)}' for k, v in body.items())
    head = "".join(f'  {json.dumps(k)}: {json.dumps(v)},\n' for k, v in top.items())
    return "{\n" + head + '  "format": "qls-catalogue/1",\n  "tools": {\n' + lines + "\n  }\n}\n"


YAML_GOOD = """format: qls-catalogue/1
tools:
  read_inbox: {kind: read, reads_outside: true}
  get_order: {kind: read}
  refund_card:
    kind: write
    compensation: none
"""

#: (file name, text, what the message says). Positions are compared with the verifier's.
CASES = [
    ("kind.json", js({"x": {"kind": "delete"}}), "unknown tool kind 'delete'"),
    ("both.json", js({"x": {"kind": "write", "compensation": "none", "undo": "none"}}), "both `compensation` and `undo`"),
    ("at_most_text.json", js({"x": {"kind": "write", "at_most": "three"}}), "must be a whole number"),
    ("at_most_big.json", js({"x": {"kind": "write", "at_most": 1 << 40}}), "is too large"),
    ("at_most_count.json", js({"x": {"kind": "write", "order": {"at_most": {"per": "turn"}}}}), "has no `count`"),
    ("order_list.json", js({"x": {"kind": "write", "order": ["get_order"]}}), "must be a mapping"),
    ("not_after.json", js({"x": {"kind": "write", "order": {"not_after": ["nope"]}}}), "(`not_after`) names tool 'nope'"),
    ("privilege.json", js({"x": {"kind": "read", "privilege": "root"}}), "unknown privilege 'root'"),
    ("store.json", js({"x": {"kind": "read", "store": {"access": "read"}}}), "`store.name` of tool 'x' is missing"),
    ("access.json", js({"x": {"kind": "read", "store": {"name": "s", "access": "both"}}}), "unknown access 'both'"),
    ("source.json", js({"x": {"kind": "read", "source": {"pin": "1"}}}), "names neither a `module` nor a `server`"),
    ("args_list.json", js({"x": {"kind": "read", "args": ["a"]}}), "must be a mapping"),
    ("arg_text.json", js({"x": {"kind": "read", "args": {"a": "string"}}}), "argument 'a' of tool 'x' must be a mapping"),
    ("role.json", js({"x": {"kind": "read", "args": {"a": {"role": ["url"]}}}}), "must be text"),
    ("comp_map.json", js({"x": {"kind": "write", "compensation": {"bind": {}}}}), "has no `tool`"),
    ("flag.json", js({"x": {"kind": "write", "irreversible": "yes"}}), "must be true or false"),
    ("entry.json", js({"x": "write"}), "the entry of tool 'x' must be a mapping"),
    ("description.json", js({"x": {"kind": "read", "description": ["a"]}}), "must be text"),
    ("requires.json", js({"x": {"kind": "read", "requires": {"a": 1}}}), "must be text"),
    ("channel.json", js(channels={"c": 3}), "channel 'c' must be a mapping"),
    ("store_flag.json", js(stores={"s": {"persistent": "true"}}), "must be true or false"),
    ("format.json", js().replace('"format": "qls-catalogue/1"', '"format": "qls-catalogue/2"'),
     "unknown catalogue format 'qls-catalogue/2'"),
    ("dup.json", js().replace('"tools": {', '"tools": {\n    "get_order": {"kind": "read"},'), "duplicate key"),
    ("tools_list.json", '{"format": "qls-catalogue/1",\n "tools": ["a"]}\n', "must be a mapping"),
    ("yes.yaml", YAML_GOOD.replace("reads_outside: true", "reads_outside: yes"), "found the text `yes`"),
    ("dup.yaml", YAML_GOOD + "  get_order: {kind: read}\n", "duplicate key 'get_order'"),
    ("anchor.yaml", YAML_GOOD.replace("get_order: {kind: read}", "get_order: &r {kind: read}"), "anchors"),
    ("tag.yaml", YAML_GOOD.replace("kind: write", "kind: !!str write"), "tags"),
    ("list.yaml", "- format: qls-catalogue/1\n", "top level of this file must be a mapping"),
    ("no_kind.yaml", YAML_GOOD.replace("get_order: {kind: read}", "get_order: {description: x}"), "has no `kind`"),
]

#: Syntax errors: both refuse at the same line (the two JSON/YAML parsers word them differently).
SYNTAX = [
    ("trailing.json", js().replace('"compensation": "none", ', '"compensation": "none",, '), "invalid JSON"),
    ("indent.yaml", YAML_GOOD.replace("    kind: write", "   kind: write\n  - x"), "invalid YAML"),
]

FIXTURES = ["bad_format.catalogue.json", "compensation_missing.catalogue.json", "no_kind.catalogue.json",
            "order_after_missing.catalogue.json", "quoted_bool.catalogue.json"]


def rust_place(binary, catalogue):
    """The file:line:column the verifier names for a bad catalogue (it must refuse it: exit 2)."""
    p = subprocess.run([binary, "verify", "--graph", str(ERRORS / "good.json"), "--catalogue", str(catalogue),
                        "--color", "never"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, f"the verifier did not refuse {catalogue} (exit {p.returncode}):\n{p.stdout}{p.stderr}"
    m = re.search(r"(\S+):(\d+):(\d+):", p.stderr)
    assert m, p.stderr
    return Path(m.group(1)).name, int(m.group(2)), int(m.group(3))


def guard_error(catalogue):
    with pytest.raises(GuardConfigError) as e:
        Guard(str(catalogue))
    return e.value


@pytest.mark.parametrize("name", FIXTURES)
def test_the_fixtures_bad_catalogues_fail_where_the_verifier_fails(name, binary):
    path = ERRORS / name
    e = guard_error(path)
    assert (Path(e.file).name, e.line, e.column) == rust_place(binary, path), str(e)
    assert e.help and str(e).startswith(f"{path}:{e.line}:{e.column}: ")


@pytest.mark.parametrize("name,text,needle", CASES, ids=[c[0] for c in CASES])
def test_bad_catalogues_fail_where_the_verifier_fails(name, text, needle, binary, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    e = guard_error(path)
    assert needle in e.message, str(e)
    f, line, col = rust_place(binary, path)
    assert e.file == str(path)
    assert (Path(e.file).name, e.line, e.column) == (f, line, col), f"guard: {e}\nverifier: {f}:{line}:{col}"


@pytest.mark.parametrize("name,text,needle", SYNTAX, ids=[c[0] for c in SYNTAX])
def test_syntax_errors_fail_at_the_verifiers_line(name, text, needle, binary, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    e = guard_error(path)
    assert needle in e.message and (Path(e.file).name, e.line) == rust_place(binary, path)[:2], str(e)


def test_good_catalogues_are_read_by_both(binary, tmp_path):
    for name, text in (("good.json", js()), ("good.yaml", YAML_GOOD)):
        path = tmp_path / name
        path.write_text(text)
        g = Guard(str(path))
        assert set(g.catalogue.tools) == {"read_inbox", "get_order", "refund_card"}
        p = subprocess.run([binary, "verify", "--graph", str(ERRORS / "good.json"), "--catalogue", str(path)],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 1), p.stderr
    assert Guard(str(SHOP / "shop.catalogue.yaml")).catalogue.tools["send_receipt"].irreversible


def test_unreadable_files_and_bad_arguments(tmp_path):
    # a catalogue not written yet is read at the guard's first use (issue 29 item 5, guard/lazy.py), where a
    # missing one is the error, naming the file and the fix (test_guard_shapes.py drives it through a graph)
    late = Guard(str(tmp_path / "missing.json"))
    with pytest.raises(GuardConfigError, match="missing.json does not exist.*--catalogue"):
        late.catalogue
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(GuardConfigError, match="not UTF-8"):
        Guard(str(tmp_path / "bin.json"))
    with pytest.raises(GuardConfigError, match="not a regular file"):
        Guard(str(tmp_path))
    with pytest.raises(GuardConfigError, match="taint_policy"):
        Guard(str(SHOP / "shop.catalogue.yaml"), taint_policy="ask")
    with pytest.raises(GuardConfigError, match="must be a path"):
        Guard(42)
    with pytest.raises(GuardConfigError, match="directory .* does not exist"):
        Guard(str(SHOP / "shop.catalogue.yaml"), trace=str(tmp_path / "no" / "t.jsonl"))


def test_a_catalogue_mapping_is_checked_the_same_way():
    with pytest.raises(GuardConfigError) as e:
        Guard({"tools": {"a": {"kind": "read", "reads_outside": "true"}}})
    assert "at tools.a.reads_outside: " in str(e.value) and "quoted text" in str(e.value)


def test_a_tool_node_binding_a_tool_the_catalogue_lacks_is_refused():
    import guarded as G

    g = Guard(G.CATALOGUE)
    with pytest.raises(GuardConfigError, match="'unlisted'"):
        g.tool_node(G.TOOLS + [G.unlisted])


# ------------------------------------------------------------------ facts


def facts_agent(tmp_path, facts_yaml):
    """The shop's agent.yaml with other `facts:`, beside its catalogue and policy."""
    for f in ("shop.catalogue.yaml", "policy.co"):
        shutil.copy(SHOP / f, tmp_path / f)
    text = (SHOP / "agent.yaml").read_text()
    head = text[: text.index("facts:")]
    (tmp_path / "agent.yaml").write_text(head + facts_yaml)
    return tmp_path / "agent.yaml"


FACTS = [
    ("facts:\n  seen: {from: read_inbox.text}\n", "reads_outside"),
    ("facts:\n  paid: {from: get_ordr.status == paid}\n", "not in the catalogue"),
    ("facts:\n  paid: {from: get_order}\n", "must be `tool.field`"),
    ("facts:\n  paid: {from: get_order.status, when: x}\n", "unknown word 'when'"),
    ("facts:\n  paid: {same: order_id}\n", "is missing"),
    ("facts:\n  paid: get_order.status\n", "must be a mapping"),
]


@pytest.mark.parametrize("facts,needle", FACTS, ids=[f[1] for f in FACTS])
def test_bad_facts_fail_where_the_verifier_fails(facts, needle, binary, tmp_path):
    agent = facts_agent(tmp_path, facts)
    with pytest.raises(GuardConfigError) as e:
        Guard(str(tmp_path / "shop.catalogue.yaml"), facts=str(agent))
    assert needle in e.value.message, str(e.value)
    p = subprocess.run([binary, "verify", str(agent), "--color", "never"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    m = re.search(r"(\S+):(\d+):(\d+):", p.stderr)
    assert m and (int(m.group(2)), int(m.group(3))) == (e.value.line, e.value.column), f"{e.value}\n{p.stderr}"


def test_the_shops_facts_are_read_from_its_agent_yaml():
    g = Guard(str(SHOP / "shop.catalogue.yaml"), facts=str(SHOP / "agent.yaml"))
    assert {(f.name, f.tool, f.field, f.equals, f.same) for f in g.rules.facts} == {
        ("card_on_file", "get_order", "card", None, "order_id"), ("order_paid", "get_order", "status", "paid", "order_id")}
    with pytest.raises(GuardConfigError, match="has no `facts:`"):
        Guard(str(SHOP / "shop.catalogue.yaml"), facts=str(SHOP / "shop.catalogue.yaml"))


# ------------------------------------------------------------------ the rulebook record


@pytest.fixture(scope="module")
def record(binary, tmp_path_factory):
    out = tmp_path_factory.mktemp("record")
    p = subprocess.run([binary, "rules", "compile", str(SHOP / "policy.co"), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return out


def test_a_compiled_record_is_read_and_an_edited_one_refused(record, binary, tmp_path):
    g = Guard(str(SHOP / "shop.catalogue.yaml"), rulebook=str(record), facts=str(SHOP / "agent.yaml"))
    assert [(r.action, r.flow) for r in g.rules.rulebook.routes] == [("refund_card", "refunds")]
    edited = tmp_path / "edited"
    edited.mkdir()
    text = (record / "record.json").read_text().replace('"refunds"', '"refundz"')
    (edited / "record.json").write_text(text)
    with pytest.raises(GuardConfigError, match="changed after it was compiled"):
        Guard(str(SHOP / "shop.catalogue.yaml"), rulebook=str(edited))
    p = subprocess.run([binary, "verify", str(SHOP / "agent.yaml"), "--rulebook", str(edited)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "changed after it was compiled" in p.stderr
    foreign = tmp_path / "foreign.json"
    foreign.write_text(text.replace("stalwart-rulebook-record/1", "other/1"))
    with pytest.raises(GuardConfigError, match="not a record `stalwart rules compile` wrote"):
        Guard(str(SHOP / "shop.catalogue.yaml"), rulebook=str(foreign))


def test_a_rulebook_that_is_not_compiled_is_refused_with_the_command(tmp_path):
    with pytest.raises(GuardConfigError) as e:
        Guard(str(SHOP / "shop.catalogue.yaml"), rulebook=str(SHOP / "policy.co"))
    assert "stalwart rules compile" in str(e.value)
    with pytest.raises(GuardConfigError, match="holds no record.json"):
        Guard(str(SHOP / "shop.catalogue.yaml"), rulebook=str(tmp_path))
