"""Issue 30 item 5 (in part): the package's modules import one another in one direction. A
module-level import (what runs when a module is imported; an import under `if TYPE_CHECKING` or
inside a function is not one) from each module of `stalwart_export` is an arrow; importing `a.b`
also runs `a`'s `__init__`. No circle of arrows: the one that ran graph -> _fallbacks -> _guarded
-> guard -> middleware -> trace -> graph went when the node ids moved to `_ids.py`, the ground
every layer reads."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "stalwart_export"


def modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def arrows(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's module-level imports of the package's modules."""
    out: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        here = m.split(".") if path.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            base = here[:len(here) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            named = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
            out[m].update(named or ([target] if target in mods else []))
    for m in out:  # importing a.b.c runs a.b's __init__ (not one's own package's, already running)
        for t in list(out[m]):
            parts = t.split(".")
            for i in range(2, len(parts)):
                p = ".".join(parts[:i])
                if p in mods and not (m == p or m.startswith(p + ".")):
                    out[m].add(p)
    return out


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_circle_of_imports():
    mods = modules()
    assert "stalwart_export.graph" in mods and "stalwart_export.guard.trace" in mods
    g = arrows(mods)
    assert "stalwart_export._ids" in g["stalwart_export.guard.trace"]
    assert circles(g) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


GROUND = ["stalwart_export", "stalwart_export._ids", "stalwart_export._words", "stalwart_export.catalogue",
          "stalwart_export.guard", "stalwart_export.guard.decide", "stalwart_export.guard.core",
          "stalwart_export.guard.history", "stalwart_export.guard.review", "stalwart_export.guard.catalogue"]

BLOCKED = """
import importlib, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("langgraph", "langchain", "langchain_core"):
            raise ImportError("no LangGraph here: " + name)
sys.meta_path.insert(0, Block())
for m in sys.argv[1:]:
    importlib.import_module(m)
print("imported", len(sys.argv) - 1)
"""


def test_the_ground_and_the_sdk_side_import_without_langgraph():
    """A ground shared by every framework imports no framework (issue 30 item 5): with LangGraph
    and LangChain made unimportable, the package, the guard's decisions and history, the words and
    the catalogue, and the OpenAI Agents SDK's exporter and guard all import; only reading the
    LangGraph names (`stalwart_export.Guard`, `export_graph`) needs LangGraph."""
    import subprocess
    import sys

    mods = GROUND + ["stalwart_export.openai_agents", "stalwart_export.openai_agents.guard"]
    env = {"PYTHONPATH": str(PKG.parent)}
    p = subprocess.run([sys.executable, "-c", BLOCKED, *mods], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == f"imported {len(mods)}", p.stderr[-2000:]
    late = BLOCKED + "\nimport stalwart_export\ntry:\n    stalwart_export.Guard\nexcept ImportError as e:\n    print(e)\n"
    p = subprocess.run([sys.executable, "-c", late], capture_output=True, text=True, env=env, timeout=120)
    assert "no LangGraph here: langgraph" in p.stdout, p.stdout + p.stderr[-2000:]


def test_the_public_names_are_read_from_the_package():
    import stalwart_export
    from stalwart_export import Guard, GuardState, export_catalogue, export_graph

    assert export_graph.__module__ == "stalwart_export.graph" and Guard.__module__ == "stalwart_export.guard.middleware"
    assert export_catalogue.__module__ == "stalwart_export.catalogue" and GuardState is stalwart_export.GuardState
    assert set(stalwart_export.__all__) <= set(dir(stalwart_export))
