"""Issue 30 item 5: one package in layers. A ground shared by every framework (the catalogue and
the words, the guard's decisions and history, the export's writer: every module outside the two
framework folders) that imports no framework, and one folder a framework, `langgraph/` and
`openai_agents/`, each holding its exporter and its guard adapter.

A module-level import (what runs when a module is imported; an import under `if TYPE_CHECKING` or
inside a function is not one) from each module of `stalwart_export` is an arrow; importing `a.b`
also runs `a`'s `__init__`. The arrows run one way: no circle; the ground has none into either
framework folder; neither framework folder has one into the other. The ground reads a framework's
side only inside a function, when a graph or an agent of it is exported, loaded or replayed."""

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


FRAMEWORKS = ("langgraph", "openai_agents")
#: The third-party packages of each framework (what the ground never imports at module level).
THIRD_PARTY = ("langgraph", "langchain", "langchain_core", "agents", "openai")


def layer(mod: str) -> str:
    """`langgraph`, `openai_agents` or `ground`: the folder a module of the package is in."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FRAMEWORKS else "ground"


def crossings(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The arrows from one layer into a framework folder not its own, sorted."""
    return sorted((m, t) for m, ts in g.items() for t in ts if layer(t) != "ground" and layer(t) != layer(m))


def third_party_imports(path: Path) -> list[str]:
    """The framework packages (`THIRD_PARTY`) a module imports when it is imported: its statements
    outside functions, `if TYPE_CHECKING` left out."""
    found: list[str] = []

    def walk(nodes: list) -> None:
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
                walk(n.orelse)
                continue
            if isinstance(n, ast.Import):
                found.extend(a.name for a in n.names if a.name.split(".")[0] in THIRD_PARTY)
            elif isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] in THIRD_PARTY:
                found.append(n.module or "")
            walk(list(ast.iter_child_nodes(n)))

    walk(ast.parse(path.read_text()).body)
    return found


def test_the_package_has_no_circle_of_imports():
    mods = modules()
    assert "stalwart_export.langgraph.graph" in mods and "stalwart_export.langgraph.guard.trace" in mods
    g = arrows(mods)
    assert "stalwart_export._ids" in g["stalwart_export.langgraph.guard.trace"]
    assert circles(g) == []


def test_the_layers_import_one_way():
    """The ground imports neither framework folder, and neither folder the other."""
    mods = modules()
    g = arrows(mods)
    assert {layer(m) for m in mods} == {"ground", "langgraph", "openai_agents"}
    assert "stalwart_export.langgraph.guard.middleware" in g["stalwart_export.langgraph.guard"]
    assert crossings(g) == []
    # and the ground is read by both
    assert any(layer(m) == "langgraph" and "stalwart_export.guard.history" in ts for m, ts in g.items())
    assert any(layer(m) == "openai_agents" and "stalwart_export.guard.history" in ts for m, ts in g.items())


def test_the_layer_check_finds_a_crossing():
    g = {"stalwart_export.catalogue": {"stalwart_export.langgraph.graph", "stalwart_export._ids"},
         "stalwart_export.langgraph.graph": {"stalwart_export.openai_agents.export", "stalwart_export.langgraph._walk"},
         "stalwart_export.openai_agents.guard": {"stalwart_export.guard.core"}}
    assert crossings(g) == [("stalwart_export.catalogue", "stalwart_export.langgraph.graph"),
                            ("stalwart_export.langgraph.graph", "stalwart_export.openai_agents.export")]


def test_the_ground_imports_no_framework_at_module_level():
    mods = modules()
    found = {m: third_party_imports(p) for m, p in mods.items() if layer(m) == "ground"}
    assert {m: f for m, f in found.items() if f} == {}
    # the reader sees what it must: LangGraph's side imports LangGraph at module level
    assert "langgraph.channels.binop" in third_party_imports(mods["stalwart_export.langgraph.guard.channel"])


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


BLOCKED = """
import importlib, sys
BLOCK = sys.argv[1].split(",")
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ImportError("not importable here: " + name)
sys.meta_path.insert(0, Block())
for m in sys.argv[2:]:
    importlib.import_module(m)
loaded = sorted({k.split(".")[0] for k in sys.modules} & {"langgraph", "langchain", "langchain_core", "agents"})
print("imported", len(sys.argv) - 2, "frameworks loaded:", ",".join(loaded) or "none")
"""


def _import(block: list[str], mods: list[str]) -> str:
    import subprocess
    import sys

    env = {"PYTHONPATH": str(PKG.parent)}
    p = subprocess.run([sys.executable, "-c", BLOCKED, ",".join(block) or "-", *mods], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip()


def test_the_ground_imports_no_framework():
    """A ground shared by every framework imports no framework (issue 30 item 5): with every
    framework installed, importing every module of the ground loads none of them (an import run
    while a module is imported counts, not only an import statement)."""
    ground = sorted(m for m in modules() if layer(m) == "ground")
    assert "stalwart_export.guard.history" in ground and "stalwart_export.replay" in ground
    assert _import([], ground) == f"imported {len(ground)} frameworks loaded: none"


def test_each_side_imports_without_the_other_framework():
    """With LangGraph and LangChain made unimportable, the ground and the OpenAI Agents SDK's
    exporter and guard import; with the SDK made unimportable, LangGraph's exporter and guard do.
    Only reading the LangGraph names (`stalwart_export.Guard`, `export_graph`) needs LangGraph."""
    mods = modules()
    ground = sorted(m for m in mods if layer(m) == "ground")
    sdk = sorted(m for m in mods if layer(m) == "openai_agents")
    lg = sorted(m for m in mods if layer(m) == "langgraph")
    assert _import(["langgraph", "langchain", "langchain_core"], ground + sdk).startswith(
        f"imported {len(ground + sdk)} ")
    assert _import(["agents"], ground + lg) == (f"imported {len(ground + lg)} frameworks loaded: "
                                                "langchain,langchain_core,langgraph")
    import subprocess
    import sys

    late = BLOCKED + ("\nimport stalwart_export\ntry:\n    stalwart_export.Guard\n"
                      "except ImportError as e:\n    print(e)\n")
    p = subprocess.run([sys.executable, "-c", late, "langgraph,langchain,langchain_core"], capture_output=True,
                       text=True, env={"PYTHONPATH": str(PKG.parent)}, timeout=120)
    assert "not importable here: langgraph" in p.stdout, p.stdout + p.stderr[-2000:]


def test_the_public_names_are_read_from_the_package():
    import stalwart_export
    from stalwart_export import Guard, GuardState, export_catalogue, export_graph

    assert export_graph.__module__ == "stalwart_export.langgraph.graph"
    assert Guard.__module__ == "stalwart_export.langgraph.guard.middleware"
    assert export_catalogue.__module__ == "stalwart_export.catalogue" and GuardState is stalwart_export.GuardState
    assert set(stalwart_export.__all__) <= set(dir(stalwart_export))
