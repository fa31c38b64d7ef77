"""python -m stalwart_export MODULE:ATTR [-o graph.json] [--catalogue catalogue.json [--words words.json]]
python -m stalwart_export replay SCRIPT.json CATALOGUE.json --graph MODULE:ATTR [--input F] [--answers F]

The second form replays a `stalwart verify --replay FINDING --format json` script on the real graph
or OpenAI Agents SDK application (`replay.py` says how). The first:

`MODULE:ATTR` names, in an importable module (the working directory comes first on the import
path, then PYTHONPATH), a compiled LangGraph graph (`StateGraph(...).compile()`,
`create_agent(...)`, ...) or an OpenAI Agents SDK `Agent` (the starting agent: SPEC 13.1,
`openai_agents/`), or a function of no arguments that returns one. `ATTR` may be dotted
(`agents.support`). Writes qls-graph/1 to `-o` (stdout if absent) and, with `--catalogue`, the
qls-catalogue/1 of the graph's tools; `--words` (only with `--catalogue`) is a JSON file
`{tool: {word: value}}` of catalogue words, with optionally `"input": {"reads_outside": true}`
and `"nodes": {node: {"calls": {effect: {word: value}}, "reviews": [tool, ...]}}`
(stalwart_export/_words.py); a word naming a node or tool the graph lacks is an error at its
line and column. Output the module prints while it is imported goes
to stderr, so stdout holds only the export.

Exit 0 on success (warnings on stderr), 2 on any error: one line `stalwart-export: error: ...`
on stderr saying what is wrong and how to fix it. The arguments, the words file and the output
directories are checked, and the graph exported, before anything is written, so only a failing
write can leave a file behind. Errors: a malformed
MODULE:ATTR; a module that cannot be found; the module or the function raising (set
STALWART_EXPORT_DEBUG=1 to get the full traceback instead); an object that is not a compiled
graph (an uncompiled StateGraph, a chat model, ...); a words file that cannot be read, is not
JSON or is malformed; an output file that cannot be written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from . import _words
from ._load import DEBUG_ENV, UsageError, load, parse_spec
from ._words import WordsError
from .catalogue import export_catalogue, init_words
from .guard import doc
from .replay import main as replay_main

PROG = "stalwart-export"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other usage error
        raise UsageError(f"{message} (see python -m stalwart_export --help)")


def read_words(path: str) -> Any:
    """The words in the JSON file `path` (`_words.py`: catalogue words per tool, `input`,
    `nodes`), checked; `UsageError` naming the file (and the line and column of bad JSON or of a
    bad word) otherwise. Returns a `_words.Words` whose errors later name the word's place."""
    fix = ('it must be a JSON object {"tool": {"word": value}}, e.g. {"refund_order": {"kind": "write"}}, '
           'with optionally "input" and "nodes"')
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"cannot read words file {path!r}: {e.strerror or e}: give an existing JSON file "
                         f"({fix})") from e
    except UnicodeDecodeError as e:
        raise UsageError(f"words file {path!r} is not UTF-8 text: {e.reason}: {fix}") from e
    try:
        tree = doc.parse_json(text, path)
    except doc.GuardConfigError as e:
        raise UsageError(f"words file {path!r} is not valid JSON: line {e.line} column {e.column}: "
                         f"{e.message.removeprefix('invalid JSON: ')}: {fix}") from e

    def place(keys: tuple) -> tuple[str, int, int] | None:
        node = tree
        loc = None
        for k in keys:
            if node.kind == "map":
                e = node.entry(str(k))
                if e is None:
                    break
                loc, node = e.key_loc, e.value
            elif node.kind == "seq" and str(k).isdigit() and int(k) < len(node.items):
                node = node.items[int(k)]
                loc = node.loc
            else:
                break
        return (path, loc.line, loc.column) if loc is not None else None

    def where(keys: tuple) -> str | None:
        got = place(keys)
        return f"{got[0]}:{got[1]}:{got[2]}" if got is not None else None

    words = tree.to_py()
    try:
        got = _words.split(words, where=where)
        got.place = place
        return got
    except _words.WordsError as e:
        msg = str(e)
        if not msg.startswith(path):
            msg = f"words file {path!r}: {msg}"
        raise UsageError(f"{msg}: correct it in the file") from e
    except TypeError as e:  # the shape (at its line and column when known)
        msg = str(e) if str(e).startswith(path) else f"words file {path!r}: {e}"
        raise UsageError(f"{msg}: {fix}") from e
    except ValueError as e:  # a value; the message says which values are allowed
        msg = str(e) if str(e).startswith(path) else f"words file {path!r}: {e}"
        raise UsageError(f"{msg}: correct it in the file") from e


def _origin(spec: str) -> tuple[str, str] | None:
    """(the module's file, the attribute) MODULE:ATTR named, for the exporter's locations."""
    mod_name, parts = parse_spec(spec)
    mod = sys.modules.get(mod_name)
    file = getattr(mod, "__file__", None)
    return (file, parts[0]) if file else None


def _check_writable(path: str, what: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"cannot write {what} to {path!r}: it is a directory: give a file name, e.g. {os.path.join(path, 'graph.json')}")
    if not os.path.isdir(parent):
        raise UsageError(f"cannot write {what} to {path!r}: directory {parent!r} does not exist: create it first")


def _write(path: str, text: str, what: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {what} to {path!r}: {e.strerror or e}") from e


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m stalwart_export",
                 description="Export a compiled LangGraph graph, or an OpenAI Agents SDK application from its "
                             "starting Agent, as qls-graph/1 (and its tools as qls-catalogue/1) for stalwart verify.",
                 epilog="`python -m stalwart_export replay --help`: replay a witness on the real graph. "
                        "Exit 0 on success (warnings on stderr); 2 on any error, with one line "
                        "'stalwart-export: error: ...' on stderr. "
                        f"Set {DEBUG_ENV}=1 to see the full traceback when your module or function raises.")
    ap.add_argument("graph", metavar="MODULE:ATTR",
                    help="the compiled graph (StateGraph(...).compile(), create_agent(...), ...) or the OpenAI Agents "
                         "SDK starting Agent, or a function of no arguments returning one, e.g. myapp.agent:graph; "
                         "not an uncompiled StateGraph")
    ap.add_argument("-o", "--output", metavar="FILE", help="where to write the qls-graph/1 JSON (default: stdout)")
    ap.add_argument("--catalogue", metavar="FILE", help="also write the qls-catalogue/1 of the graph's tools here")
    ap.add_argument("--words", metavar="FILE",
                    help="JSON file {tool: {word: value}} of catalogue words, e.g. "
                         '{"refund_order": {"kind": "write"}}, and optionally "input": {"reads_outside": true} and '
                         '"nodes": {NODE: {"calls": {...}, "reviews": [...]}}; only with --catalogue (refused without it)')
    ap.add_argument("--init-words", metavar="FILE",
                    help="write a words file to start from: an entry for every tool the graph binds, with its "
                         "description, arguments and the words its MCP annotations or catalogue_words declare, each "
                         "saying where it came from under _from; a tool nothing declares gets \"kind\": null (listed "
                         "until set). Refuses to overwrite an existing file")
    ap.add_argument("--name", help="the graph's name in the export (default: the compiled graph's name)")
    ap.add_argument("--no-provenance", action="store_true",
                    help="for a LangGraph graph: leave out the langgraph provenance objects (an OpenAI Agents SDK "
                         "export has none, so it is the same with or without)")
    ap.add_argument("--max-turns", type=int, metavar="N",
                    help="for an OpenAI Agents SDK agent: the max_turns the application passes to Runner.run (default "
                         "the SDK's); the export's recursion limit is 2 x N")
    return ap


def run(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    if args.words and not args.catalogue:
        raise UsageError("--words is used only with --catalogue (the words go into the catalogue and the graph): "
                         "add --catalogue catalogue.json, or drop --words")
    if args.output:
        _check_writable(args.output, "the graph")
    if args.catalogue:
        _check_writable(args.catalogue, "the catalogue")
        if args.output and os.path.abspath(args.output) == os.path.abspath(args.catalogue):
            raise UsageError(f"-o and --catalogue are the same file {args.output!r}: give two files")
    if args.init_words:
        _check_writable(args.init_words, "the words")
        if os.path.exists(args.init_words):
            raise UsageError(f"--init-words {args.init_words!r} exists: it is yours to edit, so it is not overwritten; "
                             "give a new file name, or remove it to start again")
        if args.words and os.path.abspath(args.words) == os.path.abspath(args.init_words):
            raise UsageError("--words and --init-words are the same file: give two files")
    words = read_words(args.words) if args.words else {}

    graph = load(args.graph)
    # each framework's exporter is imported only for what was loaded: either may be absent
    from .langgraph.graph import export_graph
    from .openai_agents import export_agent, export_agent_catalogue, init_agent_words, is_agent

    sdk = is_agent(graph)
    if args.max_turns is not None and (not sdk or args.max_turns < 1):
        raise UsageError("--max-turns is for an OpenAI Agents SDK agent and must be 1 or more: drop it, or give the "
                         "max_turns your application passes to Runner.run")
    try:
        base = os.path.dirname(os.path.abspath(args.output)) if args.output else os.getcwd()
        if sdk:
            out = export_agent(graph, name=args.name, words=words, base=base, origin=_origin(args.graph),
                               max_turns=args.max_turns)
            started = init_agent_words(graph) if args.init_words else None
            cat, cat_warns = (export_agent_catalogue(graph, words, with_warnings=True) if args.catalogue
                              else (None, []))
        else:
            out = export_graph(graph, name=args.name, provenance=not args.no_provenance, words=words, base=base,
                               origin=_origin(args.graph))
            started = init_words(graph) if args.init_words else None
            cat, cat_warns = (export_catalogue(graph, words, with_warnings=True) if args.catalogue else (None, []))
    except TypeError as e:
        # export_graph refuses what it cannot read (an @entrypoint, a RemoteGraph at the top).
        raise UsageError(f"{args.graph}: {e}") from None
    except WordsError as e:
        raise UsageError(f"words file {args.words!r}: {e}" if args.words and not str(e).startswith(args.words)
                         else str(e)) from None

    text = json.dumps(out, indent=1) + "\n"
    if args.output:
        _write(args.output, text, "the graph")
    else:
        sys.stdout.write(text)
    if cat is not None:
        _write(args.catalogue, json.dumps(cat, indent=1) + "\n", "the catalogue")
    if started is not None:
        _write(args.init_words, json.dumps(started, indent=1) + "\n", "the words")
        unset = [t for t, e in started.items() if e.get("kind") is None]
        print(f"wrote {args.init_words}: {len(started)} tools" + (
            f"; kind not declared (null) for {', '.join(unset)}: set read or write" if unset else ""), file=sys.stderr)
    # the graph's and the catalogue's exports read the same tools: a warning both give is printed once
    for w in dict.fromkeys(out["warnings"] + cat_warns):
        print(f"warning: {w}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["replay"]:
        return replay_main(argv[1:])
    try:
        return run(argv)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
