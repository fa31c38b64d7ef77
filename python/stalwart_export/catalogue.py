"""export_catalogue: LangChain tools as a qls-catalogue/1 (SPEC section 2.3).

LangChain's `BaseTool` knows a tool's name, description and argument schema; it does not
know whether the tool writes, reads outside text, sends data out, or can be undone. Those
catalogue words come only from the user: the `catalogue_words` decorator (stored in
`tool.metadata["stalwart"]`) or a mapping given to `export_catalogue`. A word nobody gave is
left out, never guessed; a tool without a `kind` is listed in the returned warnings (the
verifier needs `kind` for every tool).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from . import _mcp, _words
from ._words import check_words  # noqa: F401 - documented here: `stalwart_export.catalogue.check_words`
from .guard.catalogue import TOOL_WORDS

METADATA_KEY = "stalwart"
HANDOFF_KEY = "__handoff_destination"

#: The words SPEC 2.3 defines (`guard/catalogue.py`, written once). Others are passed through (the
#: verifier keeps them and names them in an `unknown_word` lint, so a typo never passes silently).
KNOWN_WORDS = TOOL_WORDS


def catalogue_words(**words: Any):
    """Decorator giving a tool its catalogue words, e.g.

        @catalogue_words(kind="write", irreversible=True, compensation="none")
        @tool
        def refund_order(order_id: str, amount: float) -> str: ...

    Works above `@tool` (it stores the words in the tool's `metadata["stalwart"]`) and below
    it (on the plain function, read back from `tool.func`). `kind` must be `read` or `write`
    (`ValueError` otherwise). Returns the decorated object unchanged otherwise."""
    kind = words.get("kind")
    if kind is not None and kind not in ("read", "write"):
        raise ValueError(f"catalogue_words: kind must be 'read' or 'write', not {kind!r}")

    def apply(obj: Any) -> Any:
        try:
            from langchain_core.tools import BaseTool
        except ImportError:  # pragma: no cover
            BaseTool = ()  # type: ignore[assignment]
        if isinstance(obj, BaseTool):
            meta = dict(obj.metadata or {})
            merged = dict(meta.get(METADATA_KEY) or {})
            merged.update(words)
            meta[METADATA_KEY] = merged
            obj.metadata = meta
        else:
            merged = dict(getattr(obj, "__stalwart_words__", {}) or {})
            merged.update(words)
            obj.__stalwart_words__ = merged
        return obj

    return apply


def tool_words(tool: Any) -> dict:
    """The catalogue words a tool carries from `catalogue_words` (either placement)."""
    out: dict = {}
    for fn in (getattr(tool, "func", None), getattr(tool, "coroutine", None)):
        if fn is not None:
            out.update(getattr(fn, "__stalwart_words__", {}) or {})
    out.update((getattr(tool, "metadata", None) or {}).get(METADATA_KEY) or {})
    return out


def _arg_schema(tool: Any) -> dict:
    try:
        props = dict(tool.args or {})
    except Exception:  # noqa: BLE001 - a tool without a readable schema
        return {}
    out = {}
    for name, schema in props.items():
        if isinstance(schema, dict):
            out[name] = {k: v for k, v in schema.items() if k in ("type", "description", "enum", "items", "format")}
        else:
            out[name] = {}
    return out


def _agrees(have: Any, word: Any) -> bool:
    """Does the guard's catalogue value `have` say what the word `word` says: equal, or, for a
    mapping, each key the word gives agreeing (the entry adds the tool's own schema to the words)?"""
    if isinstance(word, dict) and isinstance(have, dict):
        return all(k in have and _agrees(have[k], v) for k, v in word.items())
    return have == word


def export_catalogue(tools: Iterable[Any], words: Any = None,
                     *, with_warnings: bool = False, hosted: Iterable[Any] = ()) -> dict | tuple[dict, list[str]]:
    """A qls-catalogue/1 dict for LangChain tools.

    `tools`: `BaseTool` objects (what `@tool`, `StructuredTool.from_function` and the handoff
    helpers make), or a compiled graph (its tools are collected with `graph_tools`).
    `words`: optional `{tool name: {word: value}}` (the exporter's words, `_words.py`: also
    `nodes.<step>.calls`, whose effects get entries of their own), merged over the decorator's
    words (the mapping wins). A mapping entry `args` merges per argument into the schema read
    from the tool (so `{"args": {"to": {"role": "destination"}}}` adds a role).

    Each entry: `description` and `args` (JSON-schema properties: type, description, enum)
    read from the tool; the user's words. A provider-hosted tool a model of the graph is bound
    with (`_hosted.py`, the export's `hosted`) gets an entry saying so: `reads_outside: true`,
    `kind: read` for a web search, web fetch, file search, image generation or code
    interpreter (whose effects stay in the provider's sandbox), kind undeclared (read as a
    write) for a hosted MCP server's tools and any type the exporter does not know; the user's
    words override it. Handoff tools of langgraph-swarm and
    langgraph-supervisor (tool metadata `__handoff_destination`) get `kind: "read"` unless the
    user says otherwise: they only move the conversation to another agent. Nothing else is
    inferred. A tool a guard of the graph decides (`stalwart_export.Guard`) gets the guard's own
    catalogue entry, so the verifier proves the words the guard enforces; words that differ from
    it are named in a warning. Returns the catalogue, or `(catalogue, warnings)` with
    `with_warnings=True`; the warnings name tools left without a `kind` (written `kind: null`,
    which the verifier reads as a write and lists, `kind_unset`).
    `hosted` (with a list of tools): provider-hosted tools (`_hosted.Hosted`) read by another
    framework's exporter (the OpenAI Agents SDK's), written as a graph's hosted tools are.
    Raises `TypeError` for a `StateGraph` that was not compiled or an object that is neither a
    compiled graph nor tools, `ValueError`/`TypeError` for malformed `words` (`check_words`) or
    a decorator `kind` other than `read`/`write`, and `WordsError` (a `ValueError`) for words
    naming a tool the graph does not have.
    """
    # LangGraph's side, read only when a graph or LangChain tools are exported (LangGraph may be absent)
    from .langgraph.graph import BUILDER_FIX, describe, graph_contents, is_builder, is_graph

    if is_builder(tools):
        raise TypeError(f"export_catalogue: {BUILDER_FIX}")
    guards: list = []
    hosted = list(hosted)
    if is_graph(tools):
        tools, guards, hosted = graph_contents(tools)
    elif hasattr(tools, "get_graph") or isinstance(tools, (str, bytes)) or not hasattr(tools, "__iter__"):
        raise TypeError(f"export_catalogue expects a compiled LangGraph graph or a list of LangChain tools, "
                        f"got {describe(tools)}")
    tools = list(tools)
    w = _words.split(words)
    unbound = _words.unbound_tools(w, [getattr(t, "name", "") for t in tools] + [h.name for h in hosted])
    words = w.catalogue_words()
    warnings: list[str] = []
    out: dict[str, dict] = {}
    for h in hosted:  # provider-hosted tools (`_hosted.py`): the user's words win over what is known
        out[h.name] = {**h.entry, **(words.get(h.name) or {})}
        warnings += [x for x in h.warnings if x not in warnings]
    for tool in tools:
        name = getattr(tool, "name", None)
        if not name or name in out:
            continue
        entry: dict[str, Any] = {}
        meta = getattr(tool, "metadata", None) or {}
        if HANDOFF_KEY in meta:
            entry["kind"] = "read"
        hints = _mcp.annotations(tool)
        if hints is not None:
            entry.update(_mcp.words(hints)[0])
        given = tool_words(tool)
        given.update(words.get(name, {}) or {})
        desc = (getattr(tool, "description", "") or "").strip()
        if desc:
            entry["description"] = desc
        args = _arg_schema(tool)
        for arg, extra in (given.pop("args", None) or {}).items():
            args.setdefault(arg, {}).update(extra or {})
        entry["args"] = args
        entry.update(given)
        out[name] = entry
    for name, given in words.items():  # effects declared with `nodes.<step>.calls`
        if name not in out:
            out[name] = {"args": {}, **given}
    for g in guards:
        gcat = g.loaded_catalogue()  # None: the guard waits for the catalogue this export writes (guard/lazy.py)
        for name in list(out) if gcat is not None else []:
            mine = gcat.raw.get(name)
            if mine is None:
                continue
            # the words' `args` are merged over the tool's own schema (types, required) into the entry the
            # exporter wrote, so they agree with it when each word they give is there (issue 29 item 6)
            differ = sorted(k for k, v in (words.get(name) or {}).items() if not _agrees(mine.get(k), v))
            if differ:
                warnings.append(f"tool {name!r}: the words {differ} differ from the guard's catalogue "
                                f"({gcat.source}); the guard's entry is written, since it is what the guard "
                                "enforces")
            out[name] = dict(mine)
    _named_tools(out, w, unbound, warnings)
    for name, entry in out.items():
        if "kind" in entry and entry["kind"] is None:
            if any(w.startswith(f"tool {name!r} is named by the rules") for w in warnings):
                continue
            warnings.append(f"tool {name!r} has kind null (not yet declared): the verifier reads it as a write and "
                            "lists it (kind_unset) until you set read or write in the words")
            continue
        if entry.get("kind") not in ("read", "write"):
            if "kind" in entry:
                raise ValueError(f"tool {name!r}: kind must be 'read' or 'write', not {entry['kind']!r}")
            # as --init-words does: the verifier reads kind null as a write and lists it (kind_unset)
            entry["kind"] = None
            warnings.append(f"tool {name!r} has no kind (read or write): written kind: null, which the verifier reads "
                            "as a write and lists (kind_unset); give it with catalogue_words or the words mapping")
    cat = {"format": "qls-catalogue/1", "tools": dict(sorted(out.items()))}
    return (cat, warnings) if with_warnings else cat


def _rule_names(entry: dict) -> list[str]:
    """The tools a catalogue entry's rules name: `order.after`, `order.not_after` (not
    `untrusted`) and its `compensation`/`undo`."""
    names: list[str] = []
    order = entry.get("order")
    if isinstance(order, Mapping):
        for key in ("after", "not_after"):
            got = order.get(key)
            for t in ([got] if isinstance(got, str) else got if isinstance(got, list) else []):
                if isinstance(t, str) and t != "untrusted":
                    names.append(t)
    for key in ("compensation", "undo"):
        c = entry.get(key)
        c = c.get("tool") if isinstance(c, Mapping) else c
        if isinstance(c, str) and c != "none":
            names.append(c)
    return names


def _named_tools(out: dict[str, dict], w: Any, unbound: list[str], warnings: list[str]) -> None:
    """The tools the graph does not bind, in `out`. One the words declare is written from them
    when a rule of the graph's tools names it (an order rule's `after`/`not_after`, a
    compensation), so the verifier can read that rule; one no rule names is an error at the word
    (SPEC 12.3: a word naming a tool the graph lacks is a typo until shown otherwise). A tool a
    rule names that nothing declares is written `kind: null`, with a warning (else the verifier
    would refuse the catalogue: a rule naming a tool it does not declare)."""
    words = w.catalogue_words()
    bound = [n for n in out if n not in unbound]
    named: dict[str, list[str]] = {}
    for n in bound:
        for t in _rule_names(out[n]):
            named.setdefault(t, []).append(n)
    for name in unbound:
        if name not in named:
            raise _words.WordsError(
                f"{w.at(name)}: words are given for {name!r}, which is not a tool of the graph and no rule of its "
                f"tools names (its tools: {', '.join(sorted(bound)) or 'none'}; effects a step has without a tool go "
                "under `nodes.<step>.calls`; a tool an order rule or a compensation names may be declared here)")
        out.setdefault(name, {"args": {}, **(words.get(name) or {})})
    for name, by in named.items():
        if name not in out:
            out[name] = {"args": {}, "kind": None}
            warnings.append(f"tool {name!r} is named by the rules of {', '.join(repr(b) for b in by)} but neither bound "
                            "by this graph nor declared in the words: written with kind null; declare it in the words "
                            f'(e.g. {{"{name}": {{"kind": "read"}}}})')


def init_words(compiled: Any) -> dict:
    """A words mapping to start from (`--init-words`): an entry for every tool the graph binds,
    with what is known and, under `_from`, where each word came from: `description` and `args`
    from the tool; `kind` and the other words from MCP annotations (`_mcp.py`), from
    `catalogue_words`, or `read` for a hand-off tool; a provider-hosted tool (`_hosted.py`) what
    the exporter knows of its type; a tool nothing declares gets `kind: null`,
    which the exporter and the verifier list until it is set. Nothing is guessed from a name.
    Keys starting with `_` are notes: `--words` ignores them."""
    # LangGraph's side, read only for a LangGraph graph (LangGraph may be absent)
    from .langgraph.graph import graph_contents

    tools, _guards, hosted = graph_contents(compiled)
    return init_words_of(tools, hosted)


def init_words_of(tools: Iterable[Any], hosted: Iterable[Any] = ()) -> dict:
    """`init_words` for tools and hosted tools (`_hosted.Hosted`) read by any framework's
    exporter: the tools are LangChain tools or objects with the same `name`, `description`,
    `args`, `metadata` (and `func`) attributes."""
    out: dict[str, dict] = {}
    for h in hosted:
        entry = {k: v for k, v in h.entry.items() if k != "args"}
        entry["_from"] = {k: f"a provider-hosted tool ({h.type}): what the exporter knows of it"
                          for k in entry if k != "description"}
        out[h.name] = entry
    for tool in tools:
        name = getattr(tool, "name", None)
        if not name or name in out:
            continue
        entry: dict[str, Any] = {"kind": None}
        why: dict[str, str] = {"kind": "not declared: set read or write"}
        meta = getattr(tool, "metadata", None) or {}
        if HANDOFF_KEY in meta:
            entry["kind"], why["kind"] = "read", "a hand-off tool (it moves the conversation to another agent)"
        hints = _mcp.annotations(tool)
        if hints is not None:
            w, f = _mcp.words(hints)
            entry.update(w)
            why.update(f)
        for k, v in tool_words(tool).items():
            entry[k] = v
            why[k] = "catalogue_words on the tool"
        desc = (getattr(tool, "description", "") or "").strip()
        if desc:
            entry["description"] = desc
            why["description"] = "the tool's description"
        args = _arg_schema(tool)
        if args:
            entry["args"] = args
            why["args"] = "the tool's argument schema"
        entry["_from"] = why
        out[name] = entry
    return dict(sorted(out.items()))
