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
