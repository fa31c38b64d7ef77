"""The JSON Schemas of docs/schemas/ held to the readers they describe (issue 31 item 4).

- Every qls-graph/1 export and qls-catalogue/1 catalogue in the repository that the verifier
  accepts validates against its schema; every catalogue the verifier accepts only with an
  `unknown_word` lint is refused by the schema (the one place the schema is stricter, on purpose).
- Mutations of valid files that the verifier rejects (exit 2) are rejected by the schema too, and
  a few valid variations are accepted by both.
- The words file's schema is held to the exporter's reader (`_words.split`) the same way.
- The JSON examples of docs/*.md validate and are accepted by their reader.

The verifier is the `binary` fixture (STALWART_BIN, else target/*/stalwart); without it the
verifier's half is skipped, saying so.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "docs" / "schemas"
DOCS = REPO / "docs"
#: Folders searched for exports and catalogues.
ROOTS = ("fixtures", "examples", "python/tests")
#: The least the search must find, so the test cannot pass on an empty search.
MIN_GRAPHS = 100
MIN_CATALOGUES = 80
#: A graph that binds no tool: a catalogue checked alone is read and validated whole against it.
BARE_GRAPH = {"format": "qls-graph/1", "nodes": [{"id": "__start__", "kind": "start"},
                                                 {"id": "__end__", "kind": "end"}],
              "edges": [{"from": "__start__", "kind": "fixed", "destinations": ["__end__"]}]}


def _schemas() -> dict[str, Any]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMAS.glob("*.schema.json")}


def _validator(name: str):
    schemas = _schemas()
    registry = referencing.Registry().with_resources(
        [(s["$id"], referencing.Resource.from_contents(s)) for s in schemas.values()])
    return jsonschema.Draft202012Validator(schemas[name], registry=registry)


GRAPH = _validator("qls-graph-1.schema.json")
CATALOGUE = _validator("catalogue.schema.json")
WORDS = _validator("words.schema.json")


def _errors(validator, doc: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def test_schemas_are_draft_2020_12():
    schemas = _schemas()
    assert sorted(schemas) == ["catalogue.schema.json", "qls-graph-1.schema.json", "words.schema.json"]
    for s in schemas.values():
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(s)


def test_the_catalogue_schema_names_the_readers_words():
    """The schema's tool words, order words and roles are the readers' lists (test_word_lists.py
    holds the Python lists to src/input/catalogue.rs)."""
    from stalwart_export.guard.catalogue import ORDER_WORDS, ROLES, TOOL_WORDS

    defs = _schemas()["catalogue.schema.json"]["$defs"]
    assert sorted(defs["toolWords"]["properties"]) == sorted(TOOL_WORDS)
    assert sorted(defs["toolWords"]["properties"]["order"]["properties"]) == sorted(ORDER_WORDS)
    assert [r for r in defs["role"]["enum"] if r is not None] == list(ROLES)


# ---------------------------------------------------------------------------------------------
# The repository's files


def _repo_files() -> tuple[list[Path], list[Path]]:
    """(exports, catalogues) in the repository: JSON files whose `format` says so, and YAML
    catalogues (`*catalogue.yaml`) when PyYAML is there to read them."""
    graphs, cats = [], []
    for root in ROOTS:
        for p in sorted((REPO / root).rglob("*.json")):
            try:
                doc = json.loads(p.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(doc, dict) and doc.get("format") == "qls-graph/1":
                graphs.append(p)
            elif isinstance(doc, dict) and (doc.get("format") == "qls-catalogue/1"
                                            or (p.name.endswith("catalogue.json") and "tools" in doc)):
                cats.append(p)
    return graphs, cats


def _yaml_catalogues() -> list[Path]:
    return [p for root in ROOTS for p in sorted((REPO / root).rglob("*catalogue.yaml"))]


def _catalogue_for(graph: Path) -> Path | None:
    """The catalogue a graph is checked with: `catalogue.json` beside it (fixtures/errors keeps
    one for all its graphs)."""
    c = graph.parent / "catalogue.json"
    return c if c.exists() else None


def _verify(binary: str, graph: Path, catalogue: Path) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "verify", "--graph", str(graph), "--catalogue", str(catalogue), "--no-config",
                           "--engine", "explicit", "--format", "json"],
                          capture_output=True, text=True, timeout=300, cwd=REPO)


def _lints(out: str) -> set[str]:
    """The lint names of a JSON report."""
    try:
        report = json.loads(out)
    except ValueError:
        return set()
    return {x.get("id") for x in report.get("lints") or []}


def test_every_export_the_verifier_accepts_validates(binary):
    graphs, _ = _repo_files()
    assert len(graphs) >= MIN_GRAPHS, f"found only {len(graphs)} exports"
    accepted = rejected = 0
    bad = []
    for g in graphs:
        cat = _catalogue_for(g)
        if cat is None:
            continue
        run = _verify(binary, g, cat)
        assert run.returncode in (0, 1, 2), f"{g}: exit {run.returncode}\n{run.stderr}"
        if run.returncode == 2:
            rejected += 1
            continue
        accepted += 1
        errs = _errors(GRAPH, json.loads(g.read_text(encoding="utf-8")))
        if errs:
            bad.append(f"{g.relative_to(REPO)}: {errs[:3]}")
    assert not bad, "exports the verifier accepts but the schema refuses:\n" + "\n".join(bad)
    assert accepted >= 80 and rejected >= 20, (accepted, rejected)


def test_every_catalogue_the_verifier_accepts_validates(binary, tmp_path):
    _, cats = _repo_files()
    assert len(cats) >= MIN_CATALOGUES, f"found only {len(cats)} catalogues"
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(BARE_GRAPH))
    accepted = linted = rejected = 0
    bad = []
    for c in cats:
        run = _verify(binary, bare, c)
        if run.returncode == 2:
            rejected += 1
            continue
        assert run.returncode in (0, 1), f"{c}: exit {run.returncode}\n{run.stderr}"
        errs = _errors(CATALOGUE, json.loads(c.read_text(encoding="utf-8")))
        if "unknown_word" in _lints(run.stdout):
            # The one place the schema is stricter: a word the verifier keeps and lints.
            linted += 1
            if not errs:
                bad.append(f"{c.relative_to(REPO)}: has an unknown word, which the schema accepts")
            continue
        accepted += 1
        if errs:
            bad.append(f"{c.relative_to(REPO)}: {errs[:3]}")
    assert not bad, "catalogues where the schema and the verifier disagree:\n" + "\n".join(bad)
    assert accepted >= MIN_CATALOGUES - 10 and linted >= 1 and rejected >= 3, (accepted, linted, rejected)


def test_yaml_catalogues_validate(binary, tmp_path):
    yaml = pytest.importorskip("yaml")
    cats = _yaml_catalogues()
    assert len(cats) >= 40, f"found only {len(cats)} YAML catalogues"
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(BARE_GRAPH))
    checked = 0
    bad = []
    for c in cats:
        run = _verify(binary, bare, c)
        if run.returncode == 2 or "unknown_word" in _lints(run.stdout):
            continue
        checked += 1
        errs = _errors(CATALOGUE, yaml.safe_load(c.read_text(encoding="utf-8")))
        if errs:
            bad.append(f"{c.relative_to(REPO)}: {errs[:3]}")
    assert not bad, "\n".join(bad)
    assert checked >= 40


# ---------------------------------------------------------------------------------------------
# Mutations: what the verifier rejects, the schema rejects


def _base_graph() -> dict:
    """A valid export using most of the format: every node kind but router and remote, every
    edge kind, sends, each kind of interrupt, a subgraph, state, input, budget, locations."""
    return {
        "format": "qls-graph/1", "name": "desk", "source": "agent.py", "recursion_limit": 25,
        "session_steps": 2, "budget": None, "input": {"reads_outside": False},
        "state": {"approved": {"scope": "session"}, "asked": "turn"},
        "warnings": ["a warning"],
        "producer": {"exporter": "stalwart_export"},
        "nodes": [
            {"id": "__start__", "kind": "start"},
            {"id": "agent", "kind": "model", "agent": "desk", "tools": ["read_inbox", "refund_card"],
             "hosted": ["web_search"], "location": {"file": "agent.py", "line": 12, "column": 5}},
            {"id": "tools", "kind": "tools", "tools": ["read_inbox", "refund_card"]},
            {"id": "confirm", "kind": "step", "sets": ["approved"], "clears": ["asked"],
             "opaque": [{"what": "pause", "why": "interrupt() in a helper", "location": {"line": 3}}]},
            {"id": "send", "kind": "step", "tools": ["refund_card"], "model_written": [
                {"tool": "refund_card", "args": ["amount"]}]},
            {"id": "kb", "kind": "subgraph", "graph": "kb_graph"},
            {"id": "__end__", "kind": "end"},
        ],
        "edges": [
            {"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
            {"from": "agent", "kind": "conditional", "destinations": ["tools", "confirm", "kb", "__end__"]},
            {"from": "confirm", "kind": "stalwart_edge", "destinations": ["send"], "guard": "approved && !asked"},
            {"from": "send", "kind": "fixed", "destinations": ["agent"], "exit_after": 3},
            {"from": "tools", "kind": "command", "destinations": None},
            {"from": "kb", "kind": "fixed", "destinations": ["agent"]},
        ],
        "sends": [{"from": "agent", "destinations": ["kb"]}],
        "interrupts": [
            {"node": "tools", "when": "call", "tool": "refund_card", "standing": True},
            {"node": "confirm", "when": "inside", "tool": None, "answer": "approved"},
        ],
        "subgraphs": {"kb_graph": {
            "entry": "retrieve", "budget": {"steps": 10, "turns": None},
            "nodes": [{"id": "retrieve", "kind": "tools_plain", "tools": ["read_inbox"]},
                      {"id": "done", "kind": "end"}],
            "edges": [{"from": "retrieve", "kind": "fixed", "destinations": ["done", "../agent"]}]}},
        "tool_locations": {"refund_card": {"location": {"file": "tools.py", "line": 4}}},
    }


def _base_catalogue() -> dict:
    return {
        "format": "qls-catalogue/1",
        "tools": {
            "read_inbox": {"kind": "read", "reads_outside": True, "description": "the inbox",
                           "args": {"folder": {"type": "string", "role": "path"}}, "confidential": True},
            "refund_card": {"kind": "write", "irreversible": True, "idempotency": True, "privilege": "high",
                            "compensation": {"tool": "charge_card", "bind": {"order_id": "order_id"}},
                            "order": {"after": ["read_inbox"], "not_after": ["untrusted"],
                                      "at_most": {"count": 1, "per": "turn"}},
                            "args": {"type": "object", "properties": {"amount": {"type": "number"}}},
                            "store": {"name": "orders", "access": "write"},
                            "source": {"module": "shop.tools", "pin": "1.2.0"}, "requires": ["paid"],
                            "checks": ["amount_below_limit"], "result": {"type": "object"}},
            "charge_card": {"kind": "write", "undo": "none", "sends_out": ["bank.example"], "at_most": 2},
            "web_search": {"kind": "read", "reads_outside": True, "source": "provider"},
        },
        "channels": {"bank": {"auth": "mtls"}},
        "stores": {"orders": {"multi_tenant": True, "persistent": True}},
    }


def _set(path: str, value: Any) -> Callable[[dict], None]:
    """A mutation setting the value at `path` (`nodes.1.kind`; `-` deletes the key)."""
    def apply(doc: dict) -> None:
        *head, last = path.split(".")
        node: Any = doc
        for k in head:
            node = node[int(k)] if isinstance(node, list) else node[k]
        key: Any = int(last) if isinstance(node, list) else last
        if value == "-":
            del node[key]
        else:
            node[key] = value
    return apply


#: (name, the mutation) of the base graph; each the verifier rejects with exit 2.
GRAPH_MUTATIONS: list[tuple[str, Callable[[dict], None]]] = [
    ("format missing", _set("format", "-")),
    ("format qls-graph/2", _set("format", "qls-graph/2")),
    ("nodes not a list", _set("nodes", {"a": 1})),
    ("unknown node kind", _set("nodes.1.kind", "agent")),
    ("node without kind", _set("nodes.2.kind", "-")),
    ("node without id", _set("nodes.2.id", "-")),
    ("node id a list", _set("nodes.2.id", ["tools"])),
    ("empty node id", _set("nodes.3.id", "")),
    ("node id with /", _set("nodes.3.id", "con/firm")),
    ("node id with a tab", _set("nodes.3.id", "con\tfirm")),
    ("node id with a zero-width space", _set("nodes.3.id", "con\u200bfirm")),
    ("tools not a list", _set("nodes.2.tools", "read_inbox")),
    ("sets not a list", _set("nodes.3.sets", True)),
    ("hosted on a step", _set("nodes.3.hosted", ["web_search"])),
    ("subgraph node without graph", _set("nodes.5.graph", "-")),
    ("opaque what unknown", _set("nodes.3.opaque.0.what", "magic")),
    ("opaque without why", _set("nodes.3.opaque.0.why", "-")),
    ("opaque not a list", _set("nodes.3.opaque", {"what": "pause"})),
    ("model_written entry without tool", _set("nodes.4.model_written.0.tool", "-")),
    ("location line 0", _set("nodes.1.location.line", 0)),
    ("location without line", _set("nodes.1.location.line", "-")),
    ("location line quoted", _set("nodes.1.location.line", "12")),
    ("unknown edge kind", _set("edges.0.kind", "always")),
    ("edge without kind", _set("edges.1.kind", "-")),
    ("edge without from", _set("edges.1.from", "-")),
    ("fixed edge with null destinations", _set("edges.0.destinations", None)),
    ("stalwart_edge without destinations", _set("edges.2.destinations", "-")),
    ("destinations a text", _set("edges.1.destinations", "tools")),
    ("empty guard", _set("edges.2.guard", "  ")),
    ("guard not text", _set("edges.2.guard", True)),
    ("exit_after negative", _set("edges.3.exit_after", -1)),
    ("../ in the top graph", _set("edges.0.destinations", ["../agent"])),
    ("send without destinations", _set("sends.0.destinations", "-")),
    ("unknown interrupt time", _set("interrupts.1.when", "during")),
    ("interrupt without when", _set("interrupts.1.when", "-")),
    ("interrupt without node", _set("interrupts.1.node", "-")),
    ("standing on an inside interrupt", _set("interrupts.1.standing", True)),
    ("call interrupt without tool", _set("interrupts.0.tool", "-")),
    ("call interrupt with an answer", _set("interrupts.0.answer", "approved")),
    ("standing quoted", _set("interrupts.0.standing", "true")),
    ("recursion_limit 0", _set("recursion_limit", 0)),
    ("recursion_limit quoted", _set("recursion_limit", "25")),
    ("session_steps 17", _set("session_steps", 17)),
    ("budget not a mapping", _set("budget", 5)),
    ("budget steps text", _set("budget", {"steps": "many"})),
    ("budget with a misspelt bound", _set("budget", {"step": 20})),
    ("budget with another word", _set("budget", {"steps": 20, "max_turns": 3})),
    ("budget that bounds nothing", _set("budget", {})),
    ("budget with both bounds null", _set("budget", {"steps": None, "turns": None})),
    ("unknown flag scope", _set("state.approved.scope", "forever")),
    ("flag scope a bool", _set("state.asked", True)),
    ("input not a mapping", _set("input", True)),
    ("input.reads_outside quoted", _set("input.reads_outside", "yes")),
    ("tool_locations entry without location", _set("tool_locations.refund_card", {"line": 4})),
    ("no start and no entry", lambda g: g["nodes"].pop(0)),
    ("subgraph without start or entry", _set("subgraphs.kb_graph.entry", "-")),
    ("subgraph not a mapping", _set("subgraphs.kb_graph", ["retrieve"])),
]

#: (name, the mutation) of the base catalogue; each the verifier rejects with exit 2.
CATALOGUE_MUTATIONS: list[tuple[str, Callable[[dict], None]]] = [
    ("catalogue format qls-catalogue/2", _set("format", "qls-catalogue/2")),
    ("tools a list", _set("tools", ["read_inbox"])),
    ("tool entry a text", _set("tools.web_search", "read")),
    ("tool without kind", _set("tools.web_search.kind", "-")),
    ("unknown tool kind", _set("tools.web_search.kind", "delete")),
    ("reads_outside quoted", _set("tools.read_inbox.reads_outside", "true")),
    ("irreversible a number", _set("tools.refund_card.irreversible", 1)),
    ("compensation and undo", _set("tools.refund_card.undo", "charge_card")),
    ("compensation mapping without tool", _set("tools.refund_card.compensation", {"bind": {}})),
    ("unknown privilege", _set("tools.refund_card.privilege", "medium")),
    ("store without name", _set("tools.refund_card.store", {"access": "write"})),
    ("unknown store access", _set("tools.refund_card.store.access", "append")),
    ("source names neither module nor server", _set("tools.refund_card.source", {"pin": "1"})),
    ("at_most a word", _set("tools.charge_card.at_most", "twice")),
    ("at_most without count", _set("tools.refund_card.order.at_most", {"per": "turn"})),
    ("order not a mapping", _set("tools.refund_card.order", ["read_inbox"])),
    ("order.after not a list", _set("tools.refund_card.order.after", {"read_inbox": 1})),
    ("args a list", _set("tools.read_inbox.args", ["folder"])),
    ("argument a text", _set("tools.read_inbox.args.folder", "string")),
    ("role misspelt", _set("tools.read_inbox.args.folder.role", "destinaton")),
    ("tool word misspelt", _set("tools.refund_card.irreversable", True)),
    ("order word misspelt", _set("tools.refund_card.order.not_aftr", ["read_inbox"])),
    ("channel word misspelt", _set("channels.bank.auht", "mtls")),
    ("store word misspelt", _set("stores.orders.persistant", True)),
    ("multi_tenant quoted", _set("stores.orders.multi_tenant", "yes")),
    ("requires a mapping", _set("tools.refund_card.requires", {"paid": True})),
    ("tool name with a newline", lambda c: c["tools"].update({"read\ninbox": {"kind": "read"}})),
]

#: Valid variations: both the verifier and the schema accept them.
GRAPH_VALID = [
    ("no optional words", lambda g: [g.pop(k) for k in ("name", "source", "recursion_limit", "session_steps",
                                                        "budget", "input", "warnings", "producer",
                                                        "tool_locations")]),
    ("entry instead of a start node", lambda g: (g["nodes"].pop(0), g["edges"].pop(0), g.update(entry="agent"))),
    ("nulls for optional words", lambda g: g.update(name=None, recursion_limit=None, session_steps=None,
                                                   input=None, warnings=None, tool_locations=None)),
    ("state flag null", _set("state.asked", None)),
    ("metadata keys", lambda g: (g["nodes"][1].update(langgraph={"source": "x"}), g.update(extra=[1]))),
    ("model_written by name", _set("nodes.4.model_written", ["refund_card"])),
    ("budget declared", _set("budget", {"steps": 40, "turns": 3})),
]
CATALOGUE_VALID = [
    ("kind null", _set("tools.web_search.kind", None)),
    ("format left out", _set("format", "-")),
    ("sends_out a mapping", _set("tools.charge_card.sends_out", {"hosts": ["bank.example"]})),
    ("requires a text", _set("tools.refund_card.requires", "paid")),
    ("at_most per session", _set("tools.charge_card.at_most", {"count": 2, "per": "session"})),
]


def _run_pair(binary: str, tmp_path: Path, graph: dict, cat: dict) -> subprocess.CompletedProcess:
    g, c = tmp_path / "graph.json", tmp_path / "catalogue.json"
    g.write_text(json.dumps(graph))
    c.write_text(json.dumps(cat))
    return _verify(binary, g, c)


def test_the_bases_are_valid(binary, tmp_path):
    run = _run_pair(binary, tmp_path, _base_graph(), _base_catalogue())
    assert run.returncode in (0, 1), run.stderr
    assert _errors(GRAPH, _base_graph()) == []
    assert _errors(CATALOGUE, _base_catalogue()) == []


def test_there_are_enough_mutations():
    assert len(GRAPH_MUTATIONS) + len(CATALOGUE_MUTATIONS) >= 20
    names = [n for n, _ in GRAPH_MUTATIONS + CATALOGUE_MUTATIONS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name,mutate", GRAPH_MUTATIONS, ids=[n for n, _ in GRAPH_MUTATIONS])
def test_graph_mutation_rejected_by_both(binary, tmp_path, name, mutate):
    g = _base_graph()
    mutate(g)
    run = _run_pair(binary, tmp_path, g, _base_catalogue())
    assert run.returncode == 2, f"the verifier accepted '{name}' (exit {run.returncode})"
    assert _errors(GRAPH, g), f"the schema accepted '{name}', which the verifier rejects:\n{run.stderr}"


@pytest.mark.parametrize("name,mutate", CATALOGUE_MUTATIONS, ids=[n for n, _ in CATALOGUE_MUTATIONS])
def test_catalogue_mutation_rejected_by_both(binary, tmp_path, name, mutate):
    c = _base_catalogue()
    mutate(c)
    run = _run_pair(binary, tmp_path, _base_graph(), c)
    assert run.returncode == 2, f"the verifier accepted '{name}' (exit {run.returncode})"
    assert _errors(CATALOGUE, c), f"the schema accepted '{name}', which the verifier rejects:\n{run.stderr}"


@pytest.mark.parametrize("name,mutate", GRAPH_VALID, ids=[n for n, _ in GRAPH_VALID])
def test_graph_variation_accepted_by_both(binary, tmp_path, name, mutate):
    g = _base_graph()
    mutate(g)
    run = _run_pair(binary, tmp_path, g, _base_catalogue())
    assert run.returncode in (0, 1), f"the verifier rejected '{name}':\n{run.stderr}"
    assert _errors(GRAPH, g) == []


@pytest.mark.parametrize("name,mutate", CATALOGUE_VALID, ids=[n for n, _ in CATALOGUE_VALID])
def test_catalogue_variation_accepted_by_both(binary, tmp_path, name, mutate):
    c = _base_catalogue()
    mutate(c)
    run = _run_pair(binary, tmp_path, _base_graph(), c)
    assert run.returncode in (0, 1), f"the verifier rejected '{name}':\n{run.stderr}"
    assert _errors(CATALOGUE, c) == []


def test_an_unknown_word_is_linted_by_the_verifier_and_refused_by_the_schema(binary, tmp_path):
    c = _base_catalogue()
    c["tools"]["read_inbox"]["team_notes"] = "kept"
    run = _run_pair(binary, tmp_path, _base_graph(), c)
    assert run.returncode in (0, 1) and "unknown_word" in _lints(run.stdout)
    assert _errors(CATALOGUE, c)


#: Where the two part, each written down (docs/README.md and the report say so); a change on either
#: side fails here, so the pages are corrected with it. (what, graph or catalogue, the mutation,
#: the verifier's exit, whether the schema accepts).
KNOWN_DISAGREEMENTS: list[tuple[str, str, Callable[[dict], None], int, bool]] = [
    # The verifier is stricter: a schema cannot see across values, or tell 25.0 from 25.
    ("a whole number written 25.0", "graph", _set("recursion_limit", 25.0), 2, True),
    ("a duplicate node id", "graph", lambda g: g["nodes"].append({"id": "tools", "kind": "step"}), 2, True),
    ("an entry naming no node", "graph", _set("subgraphs.kb_graph.entry", "retrieve2"), 2, True),
    ("a guard with a single &", "graph", _set("edges.2.guard", "approved & asked"), 2, True),
    ("a guard naming an undeclared flag", "graph", _set("edges.2.guard", "paid"), 2, True),
    ("a model_written tool the node does not list", "graph", _set("nodes.4.model_written", ["read_inbox"]), 2,
     True),
    ("a tool the catalogue lacks", "graph", _set("nodes.2.tools", ["read_inbox", "refund"]), 2, True),
    ("an order rule naming a tool the catalogue lacks", "catalogue",
     _set("tools.refund_card.order.after", ["get_order"]), 2, True),
    # The schema lets an exporter's metadata through; the verifier refuses a key a small edit away
    # from one of its words, which would otherwise drop what it says from the proof unseen.
    ("a misspelt node word", "graph", _set("nodes.1.opaqe", [{"what": "tools", "why": "unread"}]), 2, True),
    ("a misspelt top-level word", "graph", _set("interupts", []), 2, True),
    ("a misspelt edge word", "graph", _set("edges.2.gaurd", "approved"), 2, True),
    # The schema is stricter: numbers where text is expected, words the verifier only lints.
    ("a number where text is expected", "graph", _set("nodes.1.agent", 5), 1, False),
    ("a number in a list of names", "catalogue", _set("tools.refund_card.requires", [1]), 1, False),
    ("a role far from every known one", "catalogue", _set("tools.read_inbox.args.folder.role", "folder_path"),
     1, False),
    ("an auth the verifier does not know", "catalogue", _set("channels.bank.auth", "kerberos"), 1, False),
]


@pytest.mark.parametrize("name,which,mutate,exit_code,schema_accepts", KNOWN_DISAGREEMENTS,
                         ids=[k[0] for k in KNOWN_DISAGREEMENTS])
def test_known_disagreements(binary, tmp_path, name, which, mutate, exit_code, schema_accepts):
    g, c = _base_graph(), _base_catalogue()
    mutate(g if which == "graph" else c)
    run = _run_pair(binary, tmp_path, g, c)
    assert run.returncode == exit_code, run.stderr
    errs = _errors(GRAPH, g) if which == "graph" else _errors(CATALOGUE, c)
    assert (errs == []) == schema_accepts, errs


# ---------------------------------------------------------------------------------------------
# The words file, held to the exporter's reader


def _split(words: Any) -> str | None:
    """None when the exporter's words reader accepts `words`, else its error."""
    from stalwart_export import _words

    try:
        _words.split(copy.deepcopy(words))
    except (_words.WordsError, TypeError, ValueError) as e:
        return str(e)
    return None


BASE_WORDS = {
    "_from": "notes are not words",
    "refund_order": {"kind": "write", "irreversible": True, "_from": {"kind": "the author"}},
    "lookup": None,
    "input": {"reads_outside": True},
    "nodes": {
        "send": {"calls": {"gmail_send": {"kind": "write", "sends_out": True,
                                          "args": {"to": {"role": "destination"}}}}},
        "review": {"reviews": ["refund_order"]},
        "format": {"pure": "formats the answer"},
        "planner": {"model": True},
    },
}

#: (name, the mutation; None: the words wrapped in a list) of the base words; each the reader rejects.
WORDS_MUTATIONS: list[tuple[str, Callable[[dict], None] | None]] = [
    ("words a list", None),
    ("input a text", _set("input", "yes")),
    ("input.reads_outside quoted", _set("input.reads_outside", "true")),
    ("input unknown word", _set("input.from_outside", True)),
    ("nodes a list", _set("nodes", ["send"])),
    ("node words a list", _set("nodes.send", ["calls"])),
    ("node word misspelt", _set("nodes.review.review", ["refund_order"])),
    ("node word unknown", _set("nodes.review.approves", ["refund_order"])),
    ("calls a list", _set("nodes.send.calls", ["gmail_send"])),
    ("reviews a text", _set("nodes.review.reviews", "refund_order")),
    ("pure blank", _set("nodes.format.pure", "  ")),
    ("pure null", _set("nodes.format.pure", None)),
    ("pure with calls", _set("nodes.send.pure", "nothing")),
    ("model false", _set("nodes.planner.model", False)),
    ("standing a text", _set("standing", "no")),
    ("turns unknown", _set("turns", "first")),
    ("tool kind unknown", _set("refund_order.kind", "delete")),
    ("tool words a text", _set("refund_order", "write")),
    ("args a list", _set("refund_order.args", ["amount"])),
    ("argument a text", _set("refund_order.args", {"amount": "number"})),
    ("tool word misspelt", _set("refund_order.irreversable", True)),
    ("role misspelt", _set("nodes.send.calls.gmail_send.args.to.role", "destinaton")),
    ("order word misspelt", _set("refund_order.order", {"aftr": ["lookup"]})),
    ("graph word misspelt at the top", _set("node", {"send": {"calls": {}}})),
]


def test_words_base_is_valid():
    assert _split(BASE_WORDS) is None
    assert _errors(WORDS, BASE_WORDS) == []
    assert len(WORDS_MUTATIONS) >= 20


@pytest.mark.parametrize("name,mutate", WORDS_MUTATIONS, ids=[n for n, _ in WORDS_MUTATIONS])
def test_words_mutation_rejected_by_both(name, mutate):
    w: Any = copy.deepcopy(BASE_WORDS)
    if mutate is None:
        w = [w]
    else:
        mutate(w)
    assert _split(w) is not None, f"the exporter accepted '{name}'"
    assert _errors(WORDS, w), f"the schema accepted '{name}', which the exporter rejects"


# ---------------------------------------------------------------------------------------------
# The documents' own examples


def _json_blocks(doc: Path) -> list[Any]:
    """The ```json blocks of a page, parsed."""
    text = doc.read_text(encoding="utf-8")
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, re.S)]


def test_the_words_page_examples_validate():
    blocks = _json_blocks(DOCS / "words.md")
    assert len(blocks) >= 4
    for b in blocks:
        assert _errors(WORDS, b) == [], b
        assert _split(b) is None, b


def test_the_export_and_catalogue_page_examples_validate(binary, tmp_path):
    graphs = [b for b in _json_blocks(DOCS / "export-format.md") if b.get("format") == "qls-graph/1"]
    cats = [b for p in ("export-format.md", "catalogue.md") for b in _json_blocks(DOCS / p)
            if b.get("format") == "qls-catalogue/1"]
    assert len(graphs) >= 1 and len(cats) >= 2
    for c in cats:
        assert _errors(CATALOGUE, c) == [], c
    for g in graphs:
        assert _errors(GRAPH, g) == []
        run = _run_pair(binary, tmp_path, g, cats[0])
        assert run.returncode in (0, 1), run.stderr


# ---------------------------------------------------------------------------------------------
# The rule pages


def test_the_rule_pages_are_what_the_binary_prints(binary):
    """docs/rules/ holds a page per rule and code check `rules list` names, each exactly
    `rules explain ID` (docs/rules/generate.py writes them; `--check` fails on any difference)."""
    run = subprocess.run([sys.executable, str(DOCS / "rules" / "generate.py"), "--check"],
                         capture_output=True, text=True, env={**os.environ, "STALWART_BIN": binary})
    assert run.returncode == 0, run.stderr
    listed = json.loads(subprocess.run([binary, "rules", "list", "--format", "json"], capture_output=True,
                                       text=True, check=True).stdout)
    ids = [x["id"] for x in listed["rules"] + listed["code_checks"]]
    assert len(ids) >= 30
    for rule_id in ids:
        text = subprocess.run([binary, "rules", "explain", rule_id], capture_output=True, text=True,
                              check=True).stdout
        page = (DOCS / "rules" / f"{rule_id}.md").read_text(encoding="utf-8")
        assert text in page, rule_id
        assert f"[{rule_id}]({rule_id}.md)" in (DOCS / "rules" / "README.md").read_text(encoding="utf-8")
