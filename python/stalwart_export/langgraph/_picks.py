"""How a step's code picks the tools it runs, read from its source (issue 16, items 4 and 5).

Two shapes public agents use:

* **One tool taken from a list by name** (LangGraph's SQL tutorial:
  `next(tool for tool in tools if tool.name == "sql_db_list_tables")`, also a list
  comprehension, `tool.name in ("a", "b")`, or `tools_by_name["a"]`): the step runs only the
  tools named, not the whole list. `selections` gives, per variable, the names compared; a
  comparison with something that is not a literal makes the variable `None` (the whole list
  is kept, and the caller warns). The list or mapping may be another module's
  (`tools.REGISTRY["send_email"]`): the variable is then its dotted name.
* **A hand-written tool node** (`for tool_call in state["messages"][-1].tool_calls:
  tools_by_name[tool_call["name"]].invoke(tool_call["args"])`): the step runs whatever calls the
  model made, each with the model's arguments, so it is a `tools_plain` node over the mapping's
  tools. `dispatch` names the variable holding the mapping.
"""

from __future__ import annotations

import ast
from typing import Any

from .. import _code


def _literal_names(node: ast.AST) -> set[str] | None:
    """The strings a comparison's other side denotes when they are literals, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: set[str] = set()
        for e in node.elts:
            sub = _literal_names(e)
            if sub is None:
                return None
            out |= sub
        return out
    return None


def _is_name_of(node: ast.AST, var: str) -> bool:
    """`var.name` (or `var["name"]`)."""
    if isinstance(node, ast.Attribute) and node.attr == "name":
        return isinstance(node.value, ast.Name) and node.value.id == var
    return False


def selections(fn: Any) -> dict[str, set[str] | None]:
    """Variables of `fn`'s code whose tools it takes by name: variable -> the names compared
    (`None` when some comparison is not with literals). A variable the code also uses another
    way (passes it on, loops over it to run each tool) is left out: every tool in it may run."""
    tree = _code.parse_function(fn)
    if tree is None:
        return {}
    picked: dict[str, set[str] | None] = {}
    inside: set[int] = set()  # ids of Name nodes consumed by a selection
    for node in ast.walk(tree):
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and len(node.generators) == 1:
            gen = node.generators[0]
            if not (isinstance(gen.iter, ast.Name) and isinstance(gen.target, ast.Name)):
                continue
            var, item = gen.iter.id, gen.target.id
            names: set[str] | None = set()
            matched = False
            for cond in gen.ifs:
                if (isinstance(cond, ast.Compare) and len(cond.ops) == 1 and len(cond.comparators) == 1
                        and isinstance(cond.ops[0], (ast.Eq, ast.In))):
                    left, right = cond.left, cond.comparators[0]
                    if not _is_name_of(left, item) and isinstance(cond.ops[0], ast.Eq) and _is_name_of(right, item):
                        left, right = right, left
                    if _is_name_of(left, item):
                        matched = True
                        lit = _literal_names(right)
                        names = None if (lit is None or names is None) else names | lit
            if matched:
                inside.add(id(gen.iter))
                prev = picked.get(var, set())
                picked[var] = None if (prev is None or names is None) else prev | names
        elif isinstance(node, ast.Subscript) and _dotted(node.value) is not None:
            lit = _literal_names(node.slice)
            if lit is not None:
                key = _dotted(node.value)
                inside.add(id(node.value))
                prev = picked.get(key, set())
                picked[key] = None if prev is None else prev | lit
    # a variable (or a dotted name: a registry in another module) used anywhere else is not narrowed
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in inside:
            key = _dotted(node)
            if key in picked:
                picked.pop(key)
    return picked


def _dotted(node: ast.AST) -> str | None:
    """`name` or `module.attr.attr` (a registry in another module of the application,
    `tools.REGISTRY`), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def dispatch(fn: Any) -> str | None:
    """The variable of a mapping of tools that `fn` indexes with the name of each tool call of a
    message (`for call in ....tool_calls: tools_by_name[call["name"]]`, also `.get(...)`), or None
    when the code has no such loop."""
    tree = _code.parse_function(fn)
    if tree is None:
        return None
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.target, ast.Name):
            continue
        if not any(isinstance(n, ast.Attribute) and n.attr == "tool_calls" for n in ast.walk(loop.iter)):
            continue
        call_var = loop.target.id
        for node in ast.walk(loop):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                key, mapping = node.slice, node.value.id
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and isinstance(node.func.value, ast.Name) and node.args):
                key, mapping = node.args[0], node.func.value.id
            if key is None:
                continue
            if (isinstance(key, ast.Subscript) and isinstance(key.value, ast.Name) and key.value.id == call_var
                    and isinstance(key.slice, ast.Constant) and key.slice.value == "name"):
                return mapping
    return None
