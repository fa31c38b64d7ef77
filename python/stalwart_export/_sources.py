"""Where the user's code built a graph's nodes (SPEC 12.4): the lines an export points at.

A node that runs a function of the user's is located at its `def` (`_code.location`). A node
whose code is the framework's (a `ToolNode`, a prebuilt agent's model node, a subgraph) is
located at the line of the user's code that made it: the `add_node("name", ...)` call, or for
the nodes of a prebuilt agent (`create_agent`, `create_react_agent`, `create_supervisor`,
`create_swarm`) the constructor's call. Those lines are found by reading the user's source files
(the module the graph was loaded from and every file a node's function, router or tool lives
in) with `ast`: LangGraph does not record where a node was added.

The files read also include those of the application's modules that hold a graph being exported
(or its builder) in their globals, and of the application's functions and classes those modules
and the loaded module hold (`holders`): a graph built by a factory function in another module
(`graph = build_graph()`), by a class's method, or in a module the loaded one imports is found
where its `add_node` calls are (issue 28 item 5).

No line is guessed: an `add_node` is matched by its literal name within the builder (the calls
on one receiver in one function or module body) whose node names best match the graph's and
whose actions, where they can be resolved in their module (a function, a `ToolNode(TOOLS)` over a
module-level list, a compiled graph), are the graph's own: a builder adding another function or
other tools under the same names (two agents built alike, each `builder` with `agent` and
`tools`) is not this graph's. A constructor is matched by its literal `name=` or, failing that,
when the files hold exactly one call of it. A node with no match has no location, and the verifier
says its finding falls back to the export.
"""

from __future__ import annotations

import ast
import inspect
import os
from dataclasses import dataclass, field
from typing import Any

from . import _code
from ._files import is_user_file  # noqa: F401 - read as `_sources.is_user_file` by the exporters

#: Constructors that build a whole agent graph, by the name they are called with.
PREBUILT = ("create_agent", "create_react_agent", "create_supervisor", "create_swarm")


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
    """The `add_node` calls on one receiver in one scope: node name -> the call, and the action
    each adds (its AST, or None when not given)."""

    nodes: dict[str, _Call] = field(default_factory=dict)
    actions: dict[str, ast.AST | None] = field(default_factory=dict)
    #: where: the file, the scope (`""` for the module body, `.f`, `.Cls.method`), the receiver
    file: str = ""
    scope: str = ""
    recv: str = ""


#: What an action resolved to when it cannot be resolved.
UNKNOWN = object()


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
                b = scopes.setdefault((file, scope, recv), _Builder(file=file, scope=scope, recv=recv))
                if named[0] not in b.nodes:
                    b.nodes[named[0]] = here
                    action = [a for a in call.args[:2] if not (isinstance(a, ast.Constant) and isinstance(a.value, str))]
                    action += [k.value for k in call.keywords if k.arg == "action"]
                    b.actions[named[0]] = action[0] if action else None
            return
        if isinstance(func, ast.Subscript):  # a generic constructor: `Agent[Ctx](...)`
            func = func.value
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
    def add_node_call(self, names: list[str], node: str, same: Any = None) -> _Call | None:
        """The `add_node(node, ...)` call of the builder that adds `node` and only nodes the graph
        has (`names`), the one adding the most of them, then the one whose actions are most often
        the graph's own; None when no builder does, or two match equally well (two graphs built
        alike). `same(name, file, action)` says whether an `add_node` action (its AST, in `file`)
        is the graph's node `name` (True, False, or None when it cannot tell): a builder with an
        action that is not is another graph's."""
        want = set(names)
        scored = []
        for b in self.builders:
            have = set(b.nodes)
            if node not in have or not have <= want:
                continue
            agree = 0
            if same is not None:
                verdicts = [same(n, b.nodes[n].file, b.actions.get(n)) for n in b.nodes]
                # a module-level builder is an object of its module: this graph's, or another's
                verdicts.append(same(None, b.file, _module_builder(b)))
                if any(v is False for v in verdicts):
                    continue
                agree = sum(1 for v in verdicts if v)
            scored.append(((len(have), agree), b))
        if not scored:
            return None
        scored.sort(key=lambda x: x[0], reverse=True)
        if len(scored) > 1 and scored[0][0] == scored[1][0] and scored[0][1].nodes[node] != scored[1][1].nodes[node]:
            return None
        return scored[0][1].nodes[node]

    def constructor_call(self, graph_name: str | None, top_assign: Any) -> _Call | None:
        """The prebuilt constructor's call that made a graph: the one whose literal `name=` is
        the graph's name; else, for the top graph, the call assigned to the attribute it was
        loaded by, or to a module-level name holding it (`top_assign`: (file, name), or a list of
        them: the one call they agree on); else the only such call in the files."""
        calls = [c for lst in self.prebuilt.values() for c in lst]
        if graph_name:
            named = [c for c, n in calls if n == graph_name]
            if len(named) == 1:
                return named[0]
        pairs = [top_assign] if isinstance(top_assign, tuple) else list(top_assign or [])
        found = []
        for file, attr in pairs:
            got = self.assigned.get(os.path.realpath(file), {}).get(attr)
            if got is not None and any(c == got for c, _ in calls) and got not in found:
                found.append(got)
        if len(found) == 1:
            return found[0]
        unnamed = [c for c, n in calls]
        return unnamed[0] if len(unnamed) == 1 else None


def _user_modules() -> list[Any]:
    """The loaded modules whose file is the user's (`is_user_file`)."""
    import sys

    out = []
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if isinstance(file, str) and is_user_file(file):
            out.append(mod)
    return out


def holders(objs: list[Any], origin_file: str | None = None) -> tuple[list[str], list[tuple[str, str, int]]]:
    """(the files to read for the lines that built `objs` - compiled graphs and their builders;
    the (file, name, id of the object) of each module-level name holding one of them): the files of the user's
    loaded modules whose globals hold one of `objs`, the loaded module's (`origin_file`), and the
    files of the application's functions and classes those modules hold in their globals (a
    factory `build_graph` imported from another module, an agent class)."""
    ids = {id(o) for o in objs}
    mods = _user_modules()
    origin = os.path.realpath(origin_file) if origin_file else None
    chosen = []
    names: list[tuple[str, str, int]] = []
    for mod in mods:
        file = os.path.realpath(mod.__file__)
        held = [(k, id(v)) for k, v in list(vars(mod).items()) if id(v) in ids]
        if held or file == origin:
            chosen.append(mod)
            names += [(file, k, i) for k, i in held]
    files = [os.path.realpath(m.__file__) for m in chosen]
    for mod in chosen:
        for v in list(vars(mod).values()):
            if inspect.isfunction(v) or inspect.isclass(v):
                f = source_file(v) if inspect.isfunction(v) else _class_file(v)
                if f and is_user_file(f) and os.path.realpath(f) not in files:
                    files.append(os.path.realpath(f))
    return files, names


def _class_file(cls: Any) -> str | None:
    try:
        return inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None


_BY_FILE: dict[str, Any] = {}
_BY_FILE_SEEN: list[int] = [-1]


def module_of_file(file: str) -> Any:
    """The loaded module whose file is `file`, or None (the map is made again when modules were
    loaded since)."""
    import sys

    if _BY_FILE_SEEN[0] != len(sys.modules):
        _BY_FILE.clear()
        for mod in _user_modules():
            _BY_FILE.setdefault(os.path.realpath(mod.__file__), mod)
        _BY_FILE_SEEN[0] = len(sys.modules)
    return _BY_FILE.get(os.path.realpath(file))


def resolve_action(file: str, action: ast.AST | None) -> Any:
    """What an `add_node` action (its AST, written in `file`) is, read in its module's globals: a
    function, a compiled graph, an object; a `ToolNode(TOOLS)` call over a module-level list as
    `("tools", names)`; `UNKNOWN` when it cannot tell (a local name, `self.x`, a call)."""
    mod = module_of_file(file) if action is not None else None
    if mod is None:
        return UNKNOWN

    def value(e: ast.AST) -> Any:
        if isinstance(e, ast.Name):
            return vars(mod).get(e.id, UNKNOWN)
        if isinstance(e, ast.Attribute):
            base = value(e.value)
            return UNKNOWN if base is UNKNOWN else getattr(base, e.attr, UNKNOWN)
        return UNKNOWN

    if isinstance(action, ast.Call) and action.args:
        func = action.func
        spelled = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if spelled == "ToolNode":
            tools = value(action.args[0])
            if isinstance(tools, (list, tuple)):
                named = [getattr(t, "name", None) or getattr(t, "__name__", None) for t in tools]
                return ("tools", frozenset(named)) if all(named) else UNKNOWN
        return UNKNOWN
    return value(action)


def _module_builder(b: _Builder) -> ast.AST | None:
    """The builder's receiver as an expression of its module (a name, `a.b`), when the builder
    is in the module body; else None."""
    if b.scope != "":
        return None
    try:
        expr = ast.parse(b.recv, mode="eval").body
    except SyntaxError:
        return None
    return expr if isinstance(expr, (ast.Name, ast.Attribute)) else None


def loc_of(call: _Call | None, base: str | None) -> dict | None:
    """An export `location` for a call found by `SourceIndex`."""
    if call is None:
        return None
    return {"file": _code.rel_file(call.file, base), "line": call.line, "column": call.column}
