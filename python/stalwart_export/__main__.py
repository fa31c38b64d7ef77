"""python -m stalwart_export module:graph -o graph.json [--catalogue catalogue.json] [--words words.json]

`module:graph` names a compiled graph (or a StateGraph, or a function of no arguments that
returns one) in an importable module (the working directory is on the import path). Writes
qls-graph/1 to `-o` (stdout if absent) and, with `--catalogue`, the qls-catalogue/1 of the
graph's tools; `--words` is a JSON file `{tool: {word: value}}` with catalogue words.
Exit 0 on success, 2 when the graph cannot be loaded or exported.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys


def load(spec: str):
    if ":" not in spec:
        raise SystemExit(f"stalwart_export: expected module:attribute, got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    sys.path.insert(0, os.getcwd())
    mod = importlib.import_module(mod_name)
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part)
    if callable(obj) and not hasattr(obj, "get_graph") and not hasattr(obj, "compile"):
        obj = obj()
    return obj


def main(argv: list[str] | None = None) -> int:
    from . import export_catalogue, export_graph

    ap = argparse.ArgumentParser(prog="python -m stalwart_export",
                                 description="Export a LangGraph graph as qls-graph/1 for stalwart verify.")
    ap.add_argument("graph", help="module:attribute of the compiled graph")
    ap.add_argument("-o", "--output", help="where to write the qls-graph/1 JSON (default: stdout)")
    ap.add_argument("--catalogue", help="also write the qls-catalogue/1 of the graph's tools here")
    ap.add_argument("--words", help="JSON file {tool: {word: value}} of catalogue words")
    ap.add_argument("--name", help="the graph's name in the export (default: the compiled graph's name)")
    ap.add_argument("--no-provenance", action="store_true", help="leave out the langgraph provenance objects")
    args = ap.parse_args(argv)
    try:
        graph = load(args.graph)
        out = export_graph(graph, name=args.name, provenance=not args.no_provenance)
    except (ImportError, AttributeError, TypeError) as e:
        print(f"stalwart_export: cannot export {args.graph}: {e}", file=sys.stderr)
        return 2
    text = json.dumps(out, indent=1) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    for w in out["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    if args.catalogue:
        words = {}
        if args.words:
            with open(args.words) as f:
                words = json.load(f)
        cat, warns = export_catalogue(graph, words, with_warnings=True)
        with open(args.catalogue, "w") as f:
            f.write(json.dumps(cat, indent=1) + "\n")
        for w in warns:
            print(f"warning: {w}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
