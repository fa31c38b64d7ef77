"""Shared by the tests: the verifier binary, running a graph, the corpus."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from langgraph.types import Command

from stalwart_export import escape_id

PYTHON_DIR = Path(__file__).resolve().parent.parent
REPO = PYTHON_DIR.parent
CORPUS = REPO.parent / "shared" / "corpus" / "langgraph"


def stalwart_bin() -> str | None:
    """STALWART_BIN, else target/release/stalwart, else target/debug/stalwart of the repository,
    else a `stalwart` on PATH."""
    env = os.environ.get("STALWART_BIN")
    if env:
        return env if os.path.exists(env) else None
    for p in (REPO / "target" / "release" / "stalwart", REPO / "target" / "debug" / "stalwart"):
        if p.exists():
            return str(p)
    return shutil.which("stalwart")


def run_steps(graph, inputs, resumes):
    """Run the graph to its end (resuming each pause), streaming with stream_mode="debug" and
    subgraphs=True. Returns (steps, pauses): steps maps a namespace (tuple of LangGraph node
    names from the top, e.g. ("worker",), with the task's id kept to tell runs apart) to the
    list of (step number, set of node names) it ran, in order; pauses lists (namespace,
    node name) of each task that paused on interrupt()."""
    cfg = {"configurable": {"thread_id": str(uuid.uuid4())}, "recursion_limit": 80}
    steps: dict[tuple, dict[int, set]] = {}
    pauses: list[tuple[tuple, str]] = []
    x = inputs
    for k in range(len(resumes) + 1):
        for ns, ev in graph.stream(x, cfg, stream_mode="debug", subgraphs=True):
            if ev["type"] == "task":
                steps.setdefault(tuple(ns), {}).setdefault(ev["step"], set()).add(ev["payload"]["name"])
            elif ev["type"] == "task_result" and ev["payload"].get("interrupts"):
                pauses.append((tuple(ns), ev["payload"]["name"]))
        if k < len(resumes):
            x = None if resumes[k] is None else Command(resume=resumes[k])
    ordered = {ns: [(s, by_step[s]) for s in sorted(by_step)] for ns, by_step in steps.items()}
    return ordered, pauses


def graph_at(export: dict, ns: tuple) -> dict:
    """The exported graph a namespace runs in: follow each "node:task" element to its
    subgraph node's `graph`."""
    g = export
    for part in ns:
        node_name = part.split(":", 1)[0]
        node = next(n for n in g["nodes"] if n["id"] == escape_id(node_name))
        assert node["kind"] == "subgraph", f"{node_name} ran a subgraph but is exported as {node['kind']}"
        g = export["subgraphs"][node["graph"]]
    return g


def allowed(export: dict, g: dict, src: str, dst: str) -> bool:
    """Is src -> dst a route of the exported graph g: an edge (or null edge), a send, or a
    hand-off `../dst` out of src's subgraph?"""
    s, d = escape_id(src), escape_id(dst)
    for e in g["edges"]:
        if e["from"] == s and (e["destinations"] is None or d in e["destinations"]):
            return True
    for e in g.get("sends", []):
        if e["from"] == s and (e["destinations"] is None or d in e["destinations"]):
            return True
    node = next((n for n in g["nodes"] if n["id"] == s), None)
    if node and node["kind"] == "subgraph":
        inner = export["subgraphs"][node["graph"]]
        for e in inner["edges"]:
            if e["destinations"] and "../" + d in e["destinations"]:
                return True
    return False


def load_corpus(name: str) -> dict | None:
    p = CORPUS / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None
