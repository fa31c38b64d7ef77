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
* `standing` and `turns` are words of an OpenAI Agents SDK export (SPEC 13.1), an error on any
  other: `"standing": false` says the application never answers an approval with
  `always_approve`, so its `needs_approval` reviews are per call (else they are `standing`);
  `"turns": "restart"` says it starts every turn at the starting agent (else a later turn may
  start at any agent a hand-off reaches; `"any"` says so explicitly);
* `nodes.<node>.calls` names effects the node's code has without a LangChain tool (an API client
  sending mail, a database write): on a step each becomes one of the node's `tools`; on a model
  node (a planner that runs a search before it answers) one of its `hosted` calls, plain calls
  made during its visit (SPEC 2.2), as the exporter writes the tool calls it reads there; the
  given words are the catalogue entry (`kind` is needed there as for any tool);
* `nodes.<node>.reviews` names tools whose every call the node puts to a person, runs only when
  accepted or edited, and does not run when rejected: a `call` interrupt each (SPEC 12.2). A tool
  reviewed is one the node calls, or one a tool node its edges lead to runs (an approval node
  before its tool node: the interrupt stays on the node, so it credits no call, SPEC 12.2);
* `nodes.<node>.pure` (a non-empty text: why the node has no effect) declares a step that calls
  no tool and has no effect the proof needs: the node stays a step with no `tools`;
* `nodes.<node>.model` (`true`) declares that the node is a model node (it calls a chat model the
  exporter could not find, SPEC 12.5): a step with no tools becomes a `model` node.

Each word clears the node's `opaque` entries (SPEC 12.5) of what it declares: `calls` the `tools`
entries, the `subgraph` ones (an agent built in a step the exporter could not read: the words
say what it may call) and the `code` ones (code run by `exec` or a shell, code it cannot read:
the words say what it may call, a tool with an argument of role `code` for model-written code), `reviews` the `pause` entries, `pure` the `code` and `tools` entries, `model` the
`model` entries; the node's `declared` lists the words that declared it (the verifier ignores the
field; it says, in the export, what the proof takes on the author's word). `pure` on a node that
calls tools or is not a step, and `pure` with `calls`, are errors: a word never hides what the
exporter read.

A node is named as LangGraph names it, or by its qualified id (`worker/tools`) inside a
subgraph. A word naming a node or tool the graph does not have is an error (`WordsError`), at
the word: the file, line and column when the words came from a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from . import _code
from ._ids import escape_id
# ROLES and ORDER_WORDS are read by the exporter's checks too
from .guard.catalogue import ORDER_WORDS, ROLES, TOOL_WORDS  # noqa: F401

GRAPH_KEYS = ("input", "nodes", "standing", "turns")
#: `turns` values (an OpenAI Agents SDK export, SPEC 13.1 "a new turn").
TURNS = ("restart", "any")
NODE_WORDS = ("calls", "reviews", "pure", "model")

#: The `opaque` entries (their `what`, SPEC 2.2) each node word clears.
CLEARS = {"calls": ("tools", "subgraph", "code"), "reviews": ("pause",), "pure": ("code", "tools"), "model": ("model",)}





def distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein, an adjacent transposition one edit), as the
    verifier's `rulebook::library::distance`."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            v = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, d[i - 2][j - 2] + 1)
            d[i][j] = v
    return d[len(a)][len(b)]


def meant(word: str, known: Any) -> str | None:
    """The known word `word` is a misspelling of (at most a quarter of its length away, 1 to 3
    edits, the first of equals; as the verifier's `rulebook::library::nearest`), else None. A word
    this near is an error (issue 28: kept and ignored, a typo silently weakens the proof); a word
    far from every known one is kept, and the verifier names it in its `unknown_word` lint."""
    if not isinstance(word, str):
        return None
    limit = min(max(len(word) // 4, 1), 3)
    best: tuple[int, str] | None = None
    for k in known:
        if k == word:
            return None
        d = distance(word, k)
        if 0 < d <= limit and (best is None or d < best[0]):
            best = (d, k)
    return best[1] if best else None


def _typo(at: str, word: str, where: str, known: Any) -> None:
    """Raise `WordsError` when `word` (written at `at`, on `where`) is a misspelling of one of `known`."""
    m = meant(word, known)
    if m is not None:
        raise WordsError(f"{at}: {word!r} on {where} is not a word: did you mean {m!r}? Write {m!r} (a word the "
                         f"verifier does not know is ignored by every rule, so a misspelt one would silently weaken "
                         f"the proof)")


def check_typos(tools: Mapping, where: Any, prefix: tuple = ()) -> None:
    """`WordsError` at the first catalogue word of `tools` (`{tool: {word: value}}`) that is a
    misspelling of a known word: a tool's words, its `order` words, its arguments' `role`s."""
    def at(*path: str) -> str:
        got = where((*prefix, *path)) if where is not None else None
        return got or ".".join((*prefix, *path))

    for tool, words in tools.items():
        if not isinstance(words, Mapping):
            continue
        for k in words:
            if k not in TOOL_WORDS and not str(k).startswith("_"):
                _typo(at(tool, k), k, f"tool {tool!r}", TOOL_WORDS)
        order = words.get("order")
        if isinstance(order, Mapping):
            for k in order:
                if k not in ORDER_WORDS:
                    _typo(at(tool, "order", k), k, f"the `order` of tool {tool!r}", ORDER_WORDS)
        args = words.get("args")
        if isinstance(args, Mapping):
            props = args.get("properties") if args.get("type") == "object" else None
            path = ("args", "properties") if isinstance(props, Mapping) else ("args",)
            for arg, spec in (props if isinstance(props, Mapping) else args).items():
                role = spec.get("role") if isinstance(spec, Mapping) else None
                if isinstance(role, str) and role not in ROLES:
                    _typo(at(tool, *path, arg, "role"), role, f"argument {arg!r} of tool {tool!r} (a role)", ROLES)


class WordsError(ValueError):
    """A words mapping that is malformed or names what the graph does not have. `str(e)` starts
    with the place (`words.json:4:7: ` or `nodes.send.reviews: `)."""


@dataclass
class NodeWords:
    calls: dict[str, dict] = field(default_factory=dict)
    reviews: list[str] = field(default_factory=list)
    pure: str | None = None
    model: bool = False
    #: the node words given, in the file's order
    given: list[str] = field(default_factory=list)


@dataclass
class Words:
    """A words mapping split: `tools` (catalogue words), `input_reads_outside`, `nodes`; `where`
    gives the place of a key path (for errors)."""

    tools: dict[str, dict]
    input_reads_outside: bool | None
    nodes: dict[str, NodeWords]
    where: Any = None
    #: key path -> (the words file, line, column), when the words came from a file
    place: Any = None
    #: `standing` (SDK exports only): False when the application never grants standing approvals
    standing: bool | None = None
    #: `turns` (SDK exports only): "restart" or "any"
    turns: str | None = None

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


def check_words(words: Any) -> None:
    """Check a `{tool name: {word: value}}` mapping (what `--words` reads): a mapping of tool
    names to mappings (or `None`); `kind`, when given, `read` or `write`; `args`, when given,
    `{argument: {key: value}}`. Other words are not checked here (the verifier lints unknown
    words and checks values). Raises `TypeError` for a wrong shape, `ValueError` for a bad
    `kind`; the message names the tool and the word, and the error's `path` attribute is the
    keys leading to the bad value (`("refund_order", "kind")`), for the caller to give its place
    in the file."""
    if words is None:
        return
    if not isinstance(words, Mapping):
        raise TypeError(f"words must be an object {{tool: {{word: value}}}}, not {_json_type(words)}")
    for name, given in words.items():
        if given is None:
            continue
        if not isinstance(given, Mapping):
            raise _at(TypeError(f"words for tool {name!r} must be an object {{word: value}}, not {_json_type(given)}"),
                      name)
        if "kind" in given and given["kind"] not in ("read", "write", None):
            raise _at(ValueError(f"tool {name!r}: kind must be 'read', 'write' or null (not yet declared), "
                                 f"not {given['kind']!r}"), name, "kind")
        args = given.get("args")
        if args is not None:
            if not isinstance(args, Mapping):
                raise _at(TypeError(f"tool {name!r}: args must be an object {{argument: {{key: value}}}}, "
                                    f"not {_json_type(args)}"), name, "args")
            for arg, extra in args.items():
                if extra is not None and not isinstance(extra, Mapping):
                    raise _at(TypeError(f"tool {name!r}: args[{arg!r}] must be an object such as "
                                        f"{{\"role\": \"destination\"}}, not {_json_type(extra)}"), name, "args", arg)


def _at(e: Exception, *path: Any) -> Exception:
    """`e` with the keys of the bad value as its `path`."""
    e.path = tuple(path)  # type: ignore[attr-defined]
    return e


def _json_type(v: Any) -> str:
    """A JSON value's kind, for an error message."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, str):
        return f"the string {v!r}"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, (list, tuple)):
        return "a list"
    return f"a {type(v).__name__}"


def split(words: Any, where: Any = None) -> Words:
    """Check a words mapping's shape and split it (see the module docs). Raises `WordsError`
    (a `ValueError`) naming the place for the graph words; the catalogue words are checked by
    `check_words` (`TypeError` for a wrong shape, `ValueError` for a bad `kind`)."""
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
    for k in tools:
        # `node` or `inputs` at the top would be read as a tool of that name: a typo of a graph word
        if meant(k, GRAPH_KEYS) is not None and isinstance(words[k], Mapping):
            _typo(w.at(k), k, "the words' top level", GRAPH_KEYS)
    check_typos(tools, where)
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
                _typo(w.at('input', k), k, "`input`", ("reads_outside",))
                raise WordsError(f"{w.at('input', k)}: unknown word {k!r} in `input` (it takes `reads_outside`)")
            if not isinstance(v, bool):
                raise WordsError(f"{w.at('input', k)}: `input.reads_outside` must be true or false, not {_json_type(v)}")
            w.input_reads_outside = v
    if "standing" in words:
        if not isinstance(words["standing"], bool):
            raise WordsError(f"{w.at('standing')}: `standing` must be true or false (false: the application never "
                             f"approves with always_approve), not {_json_type(words['standing'])}")
        w.standing = words["standing"]
    if "turns" in words:
        if words["turns"] not in TURNS:
            raise WordsError(f"{w.at('turns')}: `turns` must be \"restart\" (every turn starts at the starting agent) "
                             f"or \"any\" (a turn may start at any agent a hand-off reaches), not {words['turns']!r}")
        w.turns = words["turns"]
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
                    _typo(w.at('nodes', name, k), k, f"node {name!r}", NODE_WORDS)
                    raise WordsError(f"{w.at('nodes', name, k)}: unknown word {k!r} for node {name!r} "
                                     "(a node takes `calls`, `reviews`, `pure` and `model`)")
            out.given = [k for k in nw if k in NODE_WORDS]
            calls = nw.get("calls")
            if calls is not None:
                if not isinstance(calls, Mapping):
                    raise WordsError(f"{w.at('nodes', name, 'calls')}: `calls` must be an object "
                                     f"{{effect: {{\"kind\": \"write\", ...}}}}, not {_json_type(calls)}")
                check_typos(calls, where, ("nodes", name, "calls"))
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
            if "pure" in nw:
                pure = nw["pure"]
                if not isinstance(pure, str) or not pure.strip():
                    raise WordsError(f"{w.at('nodes', name, 'pure')}: `pure` must be a text saying why node {name!r} "
                                     f"has no effect (\"pure\": \"formats the answer\"), not {_json_type(pure)}")
                if calls:
                    raise WordsError(f"{w.at('nodes', name, 'pure')}: node {name!r} is declared `pure` (no effect) and "
                                     "to make `calls`: keep one (`calls` if its code has an effect)")
                out.pure = pure.strip()
            if "model" in nw:
                if nw["model"] is not True:
                    raise WordsError(f"{w.at('nodes', name, 'model')}: `model` must be true (the node calls a chat "
                                     f"model), not {_json_type(nw['model'])}; leave it out when it calls none")
                out.model = True
            w.nodes[name] = out
    return w


#: The provenance the exporter gives a step credited as guarded because its calls go through guard.call.
GUARDED_STEP = "stalwart_export.Guard (guard.call)"


def apply(export: dict, words: Words, warn: Any = None, sdk: bool = False) -> None:
    """Apply the graph words to an export (qls-graph/1): `input`, each node's `calls` (added to
    its `tools`) and `reviews` (`call` interrupts). Raises `WordsError` for a node the graph does
    not have, `calls` on a node that is neither a step nor a step guarded through `guard.call`, or
    a review of a tool the node does not call.

    `calls` on a guarded step (issue 29 item 6) are its tools' words when the step passes each to
    the guard; an effect it names that the step does not pass to the guard is a call outside the
    guard, so the step is no longer credited (exported `step`, with `warn`ing why and the fix)."""
    for k in ("standing", "turns"):
        if not sdk and getattr(words, k) is not None:
            raise WordsError(f"{words.at(k)}: `{k}` is a word of an OpenAI Agents SDK export (SPEC 13.1); this is a "
                             "LangGraph graph: remove it")
    if words.input_reads_outside is not None:
        export["input"] = {"reads_outside": words.input_reads_outside}
    for name, nw in words.nodes.items():
        g, node = _find(export, name, escape_id)
        if node is None:
            top = [n["id"] for n in export["nodes"] if n["kind"] not in ("start", "end")]
            raise WordsError(f"{words.at('nodes', name)}: the graph has no node {name!r} (its nodes: "
                             f"{', '.join(top)}; a subgraph's node is named by its path, e.g. 'agent/tools')")
        if nw.pure is not None:
            if node["kind"] != "step" or node.get("tools"):
                does = (f"calls {', '.join(node['tools'])}" if node.get("tools") else f"is a {node['kind']} node")
                raise WordsError(f"{words.at('nodes', name, 'pure')}: node {name!r} {does}, so it is not pure: "
                                 "`pure` declares a step the exporter saw no effect of; declare what it does with "
                                 "`calls` instead, or remove `pure`")
            node.pop("tools", None)
        if nw.model and node["kind"] == "step" and not node.get("tools") and not nw.calls:
            node["kind"] = "model"
        if nw.calls:
            prov = node.get("langgraph") if isinstance(node.get("langgraph"), dict) else {}
            guarded = node["kind"] == "tools" and prov.get("guard") == GUARDED_STEP
            if node["kind"] == "model":
                # what a model node's own code does besides its model (a planner searching first):
                # plain calls during its visit, as the exporter writes the ones it reads (`hosted`)
                hosted = node.setdefault("hosted", [])
                hosted += [t for t in nw.calls if t not in hosted]
            else:
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
        reach = _next_tool_nodes(g, node["id"])
        for k, t in enumerate(nw.reviews):
            if t not in have and t not in reach:
                raise WordsError(f"{words.at('nodes', name, 'reviews', str(k))}: node {name!r} does not call {t!r} "
                                 f"(it calls: {', '.join(have) or 'no tool'}"
                                 + (f"; the tool nodes it leads to run: {', '.join(reach)}" if reach else "") + ")")
            g.setdefault("interrupts", []).append({"node": node["id"], "when": "call", "tool": t,
                                                  "langgraph": {"source": "words: nodes.reviews"}})
        _clear(node, nw)


def _clear(node: dict, nw: NodeWords) -> None:
    """Drop the node's `opaque` entries its words declared (`CLEARS`), and record the words in
    its `declared` (SPEC 12.5: a declared node has no opaque entry for what was declared, and the
    export says the words declared it)."""
    cleared = {what for word in nw.given for what in CLEARS[word]}
    kept = [o for o in node.get("opaque") or [] if o.get("what") not in cleared]
    if kept:
        node["opaque"] = kept
    else:
        node.pop("opaque", None)
    declared = node.setdefault("declared", [])
    declared.extend(w for w in nw.given if w not in declared)
    if nw.pure is not None:
        node["pure"] = nw.pure


def _next_tool_nodes(g: dict, node_id: str) -> list[str]:
    """The tools of the tool nodes (`tools`, `tools_plain`) the edges out of `node_id` lead to."""
    kinds = {n["id"]: n for n in g["nodes"]}
    out: list[str] = []
    for e in g.get("edges") or []:
        if e.get("from") != node_id:
            continue
        for d in e.get("destinations") or []:
            n = kinds.get(d)
            if n is not None and n["kind"] in ("tools", "tools_plain"):
                out += [t for t in n.get("tools") or [] if t not in out]
    return out


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


def declared_at(words: Words, tools: Any, base: str | None) -> dict[str, dict]:
    """`tool_locations` entries (SPEC 12.4) for the tools of `tools` the words declare, at the
    words file's line: a node's `calls` entry (an effect with no code of its own to point at),
    else the tool's top-level words. Empty when the words did not come from a file."""
    if words.place is None:
        return {}
    out: dict[str, dict] = {}
    for tool in tools:
        keys = next((("nodes", n, "calls", tool) for n, nw in words.nodes.items() if tool in nw.calls), None)
        if keys is None and tool in words.tools:
            keys = (tool,)
        got = words.place(keys) if keys is not None else None
        if got is not None:
            file, line, column = got
            out[tool] = {"location": {"file": _code.rel_file(file, base), "line": line, "column": column}}
    return out


def unbound_tools(words: Words, tools: list[str]) -> list[str]:
    """The tools the catalogue words declare that the graph does not bind (a node's `calls`
    count as its tools), in the words' order. They are kept (a project-wide words file declares
    tools of other graphs, and the tools an order rule names): `export_catalogue` writes their
    entries, and warns about those no rule of the graph names."""
    have = set(tools) | {t for nw in words.nodes.values() for t in nw.calls}
    return [name for name in words.tools if name not in have]
