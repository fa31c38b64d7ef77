"""Where the user's code built a graph's nodes (SPEC 12.4): the lines an export points at.

A node that runs a function of the user's is located at its `def` (`_code.location`). A node
whose code is the framework's (a `ToolNode`, a prebuilt agent's model node, a subgraph) is
located at the line of the user's code that made it: the `add_node("name", ...)` call, or for
the nodes of a prebuilt agent (`create_agent`, `create_react_agent`, `create_supervisor`,
`create_swarm`) the constructor's call. Those lines are found by reading the user's source files
(the module the graph was loaded from and every file a node's function, router or tool lives
in) with `ast`: LangGraph does not record where a node was added.

No line is guessed: an `add_node` is matched by its literal name within the builder (the calls
on one receiver in one function or module body) whose node names best match the graph's, and a
constructor by its literal `name=` or, failing that, when the files hold exactly one call of it.
A node with no match has no location, and the verifier says its finding falls back to the export.
"""

from __future__ import annotations

import ast
import inspect
import os
import sysconfig
from dataclasses import dataclass, field
from typing import Any

from . import _code

#: Constructors that build a whole agent graph, by the name they are called with.
PREBUILT = ("create_agent", "create_react_agent", "create_supervisor", "create_swarm")


def _library_dirs() -> tuple[str, ...]:
    out = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            out.add(os.path.realpath(p))
    return tuple(sorted(out))


_LIBRARY_DIRS = _library_dirs()
#: This package's own folder: its files (the guard's tool node among them) are never the user's, even
#: when the package is on PYTHONPATH or installed editable, outside `site-packages` (issue 29 item 6).
_OWN_DIR = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))


def is_user_file(file: str | None) -> bool:
    """True for a Python file of the user's project: not in the standard library or an installed
    package (`site-packages`)."""
    if not file or not file.endswith(".py"):
        return False
    real = os.path.realpath(file)
    if "site-packages" in real.split(os.sep) or "dist-packages" in real.split(os.sep):
        return False
    if real.startswith(_OWN_DIR + os.sep):
        return False
    return not any(real == d or real.startswith(d + os.sep) for d in _LIBRARY_DIRS)


def source_file(obj: Any) -> str | None:
    """The source file of a function, method or class (decorators followed), or None."""
    target = _code.plain_function(_code.unwrap_decorated(obj))
    try:
        return inspect.getsourcefile(target)
    except TypeError:
        return None


@dataclass
class _Call:
    file: str
    line: int
    column: int


@dataclass
class _Builder:
    """The `add_node` calls on one receiver in one scope: node name -> the call."""

    nodes: dict[str, _Call] = field(default_factory=dict)


class SourceIndex:
    """The `add_node` and prebuilt-constructor calls of a set of the user's files."""

    def __init__(self, constructors: dict[str, int | None] | None = None) -> None:
        #: constructor name -> the index of the positional argument that may give its name (None:
        #: only `name=`); default the LangGraph prebuilt constructors (`PREBUILT`), named by `name=`
        self.constructors = dict(constructors) if constructors is not None else dict.fromkeys(PREBUILT)
        self.files: list[str] = []
        self.builders: list[_Builder] = []
        #: constructor name -> [(call, literal `name=` or None)]
        self.prebuilt: dict[str, list[tuple[_Call, str | None]]] = {}
        #: file -> {module-level name: the call assigned to it}
        self.assigned: dict[str, dict[str, _Call]] = {}

    def add(self, file: str | None) -> None:
        """Read `file` (once) when it is a user file that parses."""
        if not is_user_file(file):
            return
        file = os.path.realpath(file)
        if file in self.files:
            return
        self.files.append(file)
        try:
            with open(file, encoding="utf-8") as f:
                tree = ast.parse(f.read(), filename=file)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            return
        self._read(file, tree)

    def add_object(self, obj: Any) -> None:
        """`add` the file `obj` (a function, method or class) is defined in."""
        self.add(source_file(obj))

    def _read(self, file: str, tree: ast.AST) -> None:
        scopes: dict[tuple, _Builder] = {}
        assigned: dict[str, _Call] = {}
        for stmt in getattr(tree, "body", []):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        assigned[t.id] = _Call(file, stmt.value.lineno, stmt.value.col_offset + 1)
        self.assigned[file] = assigned

        def visit(node: ast.AST, scope: str) -> None:
            for child in ast.iter_child_nodes(node):
                inner = scope
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = f"{scope}.{child.name}"
                if isinstance(child, ast.Call):
                    self._call(file, child, scope, scopes)
                visit(child, inner)

        visit(tree, "")
        self.builders += list(scopes.values())

    def _call(self, file: str, call: ast.Call, scope: str, scopes: dict) -> None:
        func = call.func
        here = _Call(file, call.lineno, call.col_offset + 1)
        if isinstance(func, ast.Attribute) and func.attr == "add_node" and call.args:
            # add_node("name", action), or add_node(runnable, "name") as the SQL tutorial writes it
            named = [a.value for a in call.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if named:
                recv = ast.unparse(func.value)
                b = scopes.setdefault((file, scope, recv), _Builder())
                b.nodes.setdefault(named[0], here)
            return
        spelled = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if spelled in self.constructors:
            name = next((k.value.value for k in call.keywords if k.arg == "name"
                         and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
            pos = self.constructors[spelled]
            if name is None and pos is not None and len(call.args) > pos:
                arg = call.args[pos]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    name = arg.value
            self.prebuilt.setdefault(spelled, []).append((here, name))

    # ------------------------------------------------------------------ lookups
    def add_node_call(self, names: list[str], node: str) -> _Call | None:
        """The `add_node(node, ...)` call of the builder that adds `node` and only nodes the graph
        has (`names`), the one adding the most of them; None when no builder does, or two match
        equally well (two graphs built alike)."""
        want = set(names)
        scored = []
        for b in self.builders:
            have = set(b.nodes)
            if node in have and have <= want:
                scored.append(((len(have),), b))
        if not scored:
            return None
        scored.sort(key=lambda x: x[0], reverse=True)
        if len(scored) > 1 and scored[0][0] == scored[1][0] and scored[0][1].nodes[node] != scored[1][1].nodes[node]:
            return None
        return scored[0][1].nodes[node]

    def constructor_call(self, graph_name: str | None, top_assign: tuple[str, str] | None) -> _Call | None:
        """The prebuilt constructor's call that made a graph: the one whose literal `name=` is
        the graph's name; else, for the top graph, the call assigned to the attribute it was
        loaded by (`top_assign`: (file, name)); else the only such call in the files."""
        calls = [c for lst in self.prebuilt.values() for c in lst]
        if graph_name:
            named = [c for c, n in calls if n == graph_name]
            if len(named) == 1:
                return named[0]
        if top_assign is not None:
            file, attr = top_assign
            got = self.assigned.get(os.path.realpath(file), {}).get(attr)
            if got is not None and any(c == got for c, _ in calls):
                return got
        unnamed = [c for c, n in calls]
        return unnamed[0] if len(unnamed) == 1 else None


def loc_of(call: _Call | None, base: str | None) -> dict | None:
    """An export `location` for a call found by `SourceIndex`."""
    if call is None:
        return None
    return {"file": _code.rel_file(call.file, base), "line": call.line, "column": call.column}
