"""The exporter's words: what LangGraph cannot say, declared by the user (SPEC 2.3, 12.3).

A words mapping (a `--words` JSON file, or the mapping given to `export_graph`/`export_catalogue`):

    {
      "refund_order": {"kind": "write", "irreversible": true},      # catalogue words per tool
      "input": {"reads_outside": true},                               # every turn's input is from outside
      "nodes": {
        "send":   {"calls": {"gmail_send": {"kind": "write", "sends_out": true}}},
        "review": {"reviews": ["write_email"]}
      }
    }

* a top-level key other than `input` and `nodes` names a tool: its catalogue words;
* `input.reads_outside` (a bool) is the export's `input` (SPEC 2.2);
* `nodes.<node>.calls` names effects the node's code has without a LangChain tool (an API client
  sending mail, a database write): each becomes one of the node's `tools` (the node must be a
  step), with the given words as its catalogue entry (`kind` is needed there as for any tool);
* `nodes.<node>.reviews` names tools whose every call the node puts to a person, runs only when
  accepted or edited, and does not run when rejected: a `call` interrupt each (SPEC 12.2).

A node is named as LangGraph names it, or by its qualified id (`worker/tools`) inside a
subgraph. A word naming a node or tool the graph does not have is an error (`WordsError`), at
the word: the file, line and column when the words came from a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

GRAPH_KEYS = ("input", "nodes")
NODE_WORDS = ("calls", "reviews")


class WordsError(ValueError):
    """A words mapping that is malformed or names what the graph does not have. `str(e)` starts
    with the place (`words.json:4:7: ` or `nodes.send.reviews: `)."""


@dataclass
class NodeWords:
    calls: dict[str, dict] = field(default_factory=dict)
    reviews: list[str] = field(default_factory=list)


@dataclass
class Words:
    """A words mapping split: `tools` (catalogue words), `input_reads_outside`, `nodes`; `where`
    gives the place of a key path (for errors)."""

    tools: dict[str, dict]
    input_reads_outside: bool | None
    nodes: dict[str, NodeWords]
    where: Any = None

    def at(self, *path: str) -> str:
        """The place of key path `path`: `file:line:column` when known, else the dotted path."""
        if self.where is not None:
            got = self.where(path)
            if got:
                return got
        return ".".join(path)

    def catalogue_words(self) -> dict[str, dict]:
        """Every tool's catalogue words: the top-level ones and the nodes' `calls`."""
        out = {k: dict(v or {}) for k, v in self.tools.items()}
        for nw in self.nodes.values():
            for tool, w in nw.calls.items():
                out.setdefault(tool, {}).update(w or {})
        return out


def _json_type(v: Any) -> str:
    from .catalogue import _json_type as jt

    return jt(v)


def split(words: Any, where: Any = None) -> Words:
    """Check a words mapping's shape and split it (see the module docs). Raises `WordsError`
    (a `ValueError`) naming the place for the graph words; the catalogue words are checked by
    `check_words` (`TypeError` for a wrong shape, `ValueError` for a bad `kind`)."""
    from .catalogue import check_words

    w = Words({}, None, {}, where)
    if words is None:
        return w
    if isinstance(words, Words):
        return words
    if not isinstance(words, Mapping):
        check_words(words)  # raises TypeError naming what it is
    # keys starting with `_` are notes (`--init-words` writes `_from`): not words
    tools = {k: ({w: x for w, x in v.items() if not str(w).startswith("_")} if isinstance(v, Mapping) else v)
             for k, v in words.items() if k not in GRAPH_KEYS and not str(k).startswith("_")}
    try:
        check_words(tools)  # TypeError for a wrong shape, ValueError for a bad kind (as before)
    except (TypeError, ValueError) as e:
        loc = where(getattr(e, "path", ())) if where is not None and getattr(e, "path", None) else None
        if loc is None:
            raise
        raise type(e)(f"{loc}: {e}") from None
    w.tools = dict(tools)
    inp = words.get("input")
    if inp is not None:
        if not isinstance(inp, Mapping):
            raise WordsError(f"{w.at('input')}: `input` must be an object such as {{\"reads_outside\": true}}, "
                             f"not {_json_type(inp)}")
        for k, v in inp.items():
            if k != "reads_outside":
                raise WordsError(f"{w.at('input', k)}: unknown word {k!r} in `input` (it takes `reads_outside`)")
            if not isinstance(v, bool):
                raise WordsError(f"{w.at('input', k)}: `input.reads_outside` must be true or false, not {_json_type(v)}")
            w.input_reads_outside = v
    nodes = words.get("nodes")
    if nodes is not None:
        if not isinstance(nodes, Mapping):
            raise WordsError(f"{w.at('nodes')}: `nodes` must be an object {{node: {{\"calls\": ..., \"reviews\": ...}}}}, "
                             f"not {_json_type(nodes)}")
        for name, nw in nodes.items():
            if not isinstance(nw, Mapping):
                raise WordsError(f"{w.at('nodes', name)}: the words of node {name!r} must be an object with "
                                 f"`calls` and/or `reviews`, not {_json_type(nw)}")
            out = NodeWords()
            for k, v in nw.items():
                if k not in NODE_WORDS:
                    raise WordsError(f"{w.at('nodes', name, k)}: unknown word {k!r} for node {name!r} "
                                     "(a node takes `calls` and `reviews`)")
            calls = nw.get("calls")
            if calls is not None:
                if not isinstance(calls, Mapping):
                    raise WordsError(f"{w.at('nodes', name, 'calls')}: `calls` must be an object "
                                     f"{{effect: {{\"kind\": \"write\", ...}}}}, not {_json_type(calls)}")
                try:
                    check_words(calls)
                except (TypeError, ValueError) as e:
                    raise WordsError(f"{w.at('nodes', name, 'calls', *getattr(e, 'path', ()))}: {e}") from None
                out.calls = {k: dict(v or {}) for k, v in calls.items()}
            reviews = nw.get("reviews")
            if reviews is not None:
                if not isinstance(reviews, list) or not all(isinstance(t, str) for t in reviews):
                    raise WordsError(f"{w.at('nodes', name, 'reviews')}: `reviews` must be a list of tool names, "
                                     f"not {_json_type(reviews)}")
                out.reviews = list(reviews)
            w.nodes[name] = out
    return w


#: The provenance the exporter gives a step credited as guarded because its calls go through guard.call.
GUARDED_STEP = "stalwart_export.Guard (guard.call)"


def apply(export: dict, words: Words, warn: Any = None) -> None:
    """Apply the graph words to an export (qls-graph/1): `input`, each node's `calls` (added to
    its `tools`) and `reviews` (`call` interrupts). Raises `WordsError` for a node the graph does
    not have, `calls` on a node that is neither a step nor a step guarded through `guard.call`, or
    a review of a tool the node does not call.

    `calls` on a guarded step (issue 29 item 6) are its tools' words when the step passes each to
    the guard; an effect it names that the step does not pass to the guard is a call outside the
    guard, so the step is no longer credited (exported `step`, with `warn`ing why and the fix)."""
    from .graph import escape_id

    if words.input_reads_outside is not None:
        export["input"] = {"reads_outside": words.input_reads_outside}
    for name, nw in words.nodes.items():
        g, node = _find(export, name, escape_id)
        if node is None:
            top = [n["id"] for n in export["nodes"] if n["kind"] not in ("start", "end")]
            raise WordsError(f"{words.at('nodes', name)}: the graph has no node {name!r} (its nodes: "
                             f"{', '.join(top)}; a subgraph's node is named by its path, e.g. 'agent/tools')")
        if nw.calls:
            prov = node.get("langgraph") if isinstance(node.get("langgraph"), dict) else {}
            guarded = node["kind"] == "tools" and prov.get("guard") == GUARDED_STEP
            if node["kind"] != "step" and not guarded:
                raise WordsError(f"{words.at('nodes', name, 'calls')}: node {name!r} is a {node['kind']} node; "
                                 "`calls` names what a step's own code does without a LangChain tool")
            tools = node.setdefault("tools", [])
            outside = [t for t in nw.calls if t not in tools]
            if guarded and outside:
                node["kind"] = "step"
                prov.pop("guard", None)
                prov["calls_outside_guard"] = outside
                if warn is not None:
                    warn(f"node {name!r} is not guarded: the words ({words.at('nodes', name, 'calls')}) name "
                         f"{', '.join(repr(t) for t in outside)}, which its code does without passing it to the guard, "
                         "so those calls are not decided: pass each to guard.call/guard.acall (a plain function with "
                         "name='...' is read as the step's tool), or drop the word if the guard already decides it")
            for t in nw.calls:
                if t not in tools:
                    tools.append(t)
            node.setdefault("langgraph", {})["calls_declared"] = list(nw.calls)
        have = list(node.get("tools") or [])
        for k, t in enumerate(nw.reviews):
            if t not in have:
                raise WordsError(f"{words.at('nodes', name, 'reviews', str(k))}: node {name!r} does not call {t!r} "
                                 f"(it calls: {', '.join(have) or 'no tool'})")
            g.setdefault("interrupts", []).append({"node": node["id"], "when": "call", "tool": t,
                                                  "langgraph": {"source": "words: nodes.reviews"}})


def _find(export: dict, name: str, escape_id: Any) -> tuple[dict, dict | None]:
    """(the graph holding node `name`, the node): a top-level name, or a path `a/b` through
    subgraph nodes."""
    g = export
    top = next((n for n in g["nodes"] if n["id"] == escape_id(name)), None)
    if top is not None or "/" not in name:
        return g, top
    parts = name.split("/")
    for k, part in enumerate(parts):
        node = next((n for n in g["nodes"] if n["id"] == escape_id(part)), None)
        if node is None:
            return g, None
        if k == len(parts) - 1:
            return g, node
        if node["kind"] != "subgraph" or node.get("graph") not in export["subgraphs"]:
            return g, None
        g = export["subgraphs"][node["graph"]]
    return g, None


def unbound_tools(words: Words, tools: list[str]) -> list[str]:
    """The tools the catalogue words declare that the graph does not bind (a node's `calls`
    count as its tools), in the words' order. They are kept (a project-wide words file declares
    tools of other graphs, and the tools an order rule names): `export_catalogue` writes their
    entries, and warns about those no rule of the graph names."""
    have = set(tools) | {t for nw in words.nodes.values() for t in nw.calls}
    return [name for name in words.tools if name not in have]
