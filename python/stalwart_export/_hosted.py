"""Provider-hosted tools (SPEC 2.2 `hosted`, 12.1 "Anything the guard cannot see is not credited").

A model bound with a tool given as a provider's own tool dict (`{"type": "web_search_preview"}`,
`{"type": "code_interpreter", ...}`, `{"type": "mcp", "server_label": ...}`, Anthropic's
`{"type": "web_search_20250305", "name": "web_search"}`) lets the provider call that tool inside the
model call: the outside text it brings never passes a tool node, so the guard never sees it. The
exporter lists such tools as `hosted` on the model node and gives each a catalogue entry
(`entries`), so the verifier counts their calls as plain ones.

What is read as hosted: a dict with a `type` other than the client-side schemas (`function`,
`custom`) and without a client schema (`input_schema`, `parameters`). Known types are named and
described (`_KNOWN`); any other type is still hosted, named after its type, read as bringing
outside text, with its kind left undeclared (the verifier reads it as a write) and a warning: an
unknown provider tool is never dropped. What it does is not read, so it is also an `opaque`
`model` entry on the model node (`opaque`; SPEC 12.5, QG024) until the words declare the node
(`{"nodes": {N: {"model": true}}}`) with the tool's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

#: Tool-dict types that are schemas of tools the application runs itself (not hosted).
_CLIENT_TYPES = ("function", "custom")

#: A date or version suffix providers put on a tool type (`_20250305`, `_2025_03_11`).
_SUFFIX = re.compile(r"(_\d{8}|_\d{4}_\d{2}_\d{2})$")

#: Known hosted types (the type without its date suffix): (catalogue kind, what it does).
#: Every hosted tool is `reads_outside`: its result reaches the model without passing the guard.
_KNOWN: dict[str, tuple[str | None, str]] = {
    "web_search_preview": ("read", "searches the web"),
    "web_search": ("read", "searches the web"),
    "web_fetch": ("read", "fetches web pages"),
    "file_search": ("read", "searches files uploaded to the provider"),
    "image_generation": ("read", "generates images"),
    # Runs code the model writes in the provider's sandbox: its effects stay in that sandbox (a
    # read for the application), but its output, and the files in its container, are text the
    # guard never sees.
    "code_interpreter": ("read", "runs code the model writes in the provider's sandbox (its effects stay there; its "
                                 "output and the container's files reach the model unseen)"),
    "code_execution": ("read", "runs code the model writes in the provider's sandbox (its effects stay there; its "
                               "output and the container's files reach the model unseen)"),
    # A remote MCP server the provider calls: its tools may write anything, so their kind is
    # left to the user (undeclared is read as a write).
    "mcp": (None, "a tool of a remote MCP server the provider calls"),
    "mcp_toolset": (None, "a tool of a remote MCP server the provider calls"),
}


@dataclass
class Hosted:
    """One hosted tool: its `name` in the export and the catalogue, its provider `type`, its
    catalogue `entry`, and `warnings` about it (an unknown type, a server's tools not listed)."""

    name: str
    type: str
    entry: dict
    warnings: list[str] = field(default_factory=list)
    #: a type the exporter does not know (or cannot read): what the provider runs is not read
    unknown: bool = False


def is_hosted(t: Any) -> bool:
    """Is `t` a provider-hosted tool dict (see the module's doc)?"""
    if not isinstance(t, dict):
        return False
    typ = t.get("type")
    if not isinstance(typ, str) or not typ or typ in _CLIENT_TYPES:
        return False
    return "input_schema" not in t and "parameters" not in t and "function" not in t


def base_type(typ: str) -> str:
    """A hosted type without its date suffix: `web_search_20250305` -> `web_search`."""
    if typ.startswith("web_search_preview"):
        return "web_search_preview"
    return _SUFFIX.sub("", typ)


def _safe(s: str) -> str:
    """A name part with only letters, digits, `_`, `-` and `.` kept (others become `_`)."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", s) or "_"


def read(t: dict, where: str) -> list[Hosted]:
    """The hosted tools a tool dict `t` (`is_hosted`) stands for, bound by the model of `where`
    (for warnings): one, or for a hosted MCP server one per tool its `allowed_tools` lists."""
    typ = t["type"]
    base = base_type(typ)
    kind, what = _KNOWN.get(base, (None, ""))
    known = base in _KNOWN

    def entry(desc: str, k: str | None) -> dict:
        return {"kind": k, "reads_outside": True,
                "description": f"provider-hosted ({typ}): {desc}; the provider runs it inside the model call, so "
                               "the guard never sees its calls or what they return",
                "args": {}}

    if base in ("mcp", "mcp_toolset"):
        label = t.get("server_label") or t.get("mcp_server_name") or t.get("name") or t.get("server_url") or "server"
        label = _safe(str(label))
        allowed = t.get("allowed_tools")
        if isinstance(allowed, dict):  # OpenAI's filter form {"tool_names": [...], "read_only": ...}
            allowed = allowed.get("tool_names")
        if isinstance(allowed, list) and allowed and all(isinstance(a, str) for a in allowed):
            return [Hosted(f"{label}.{_safe(a)}", typ, entry(f"{what} ({label}: {a})", None)) for a in allowed]
        h = Hosted(label, typ, entry(f"{what} ({label}); every tool of the server, which the export cannot list",
                                     None))
        h.warnings.append(f"{where} is bound with the hosted MCP server {label!r} without a list of its tools "
                          f"(allowed_tools): any tool of the server may be called; exported as one hosted tool "
                          f"{label!r} of undeclared kind (read as a write); list the tools it may call in "
                          "allowed_tools")
        return [h]
    name = t.get("name") if isinstance(t.get("name"), str) and t.get("name") else base
    name = "provider_tool" if name == UNREADABLE else _safe(name)
    if known:
        return [Hosted(name, typ, entry(what, kind))]
    h = Hosted(name, typ, entry("a provider tool the exporter does not know; read as bringing outside text, its "
                                "kind undeclared (read as a write)", None))
    what = ("a provider tool dict whose type the exporter cannot read from the code" if typ == UNREADABLE
            else f"the provider tool {{'type': {typ!r}}}, which the exporter does not know")
    h.unknown = True
    h.warnings.append(f"{where} is bound with {what}: "
                      f"exported as the hosted tool {name!r}, reading outside text, of undeclared kind (read as a "
                      f"write); declare its words (e.g. {{\"{name}\": {{\"kind\": \"read\"}}}}) when it only reads")
    return [h]


def collect(lists: Iterable[Iterable[Any]], where: str) -> list[Hosted]:
    """Every hosted tool in the tool lists a model is bound with, once by name, in the order met."""
    out: dict[str, Hosted] = {}
    for tools in lists:
        for t in tools or []:
            if is_hosted(t):
                for h in read(t, where):
                    out.setdefault(h.name, h)
    return list(out.values())


def opaque(found: Iterable[Hosted]) -> list[dict]:
    """The `opaque` entries (SPEC 12.5) for the hosted tools of a model node whose type the
    exporter does not know: what the provider runs for them is not read (QG024)."""
    return [{"what": "model", "why": f"the model is bound with the provider tool {h.name!r} (type {h.type!r}), which "
                                     "the exporter does not know: what the provider runs for it is not read"}
            for h in found if h.unknown]


def warning(where: str, names: list[str]) -> str:
    """The export warning for the hosted tools `names` of the model node `where` (SPEC 12.1
    "Anything the guard cannot see is not credited")."""
    return (f"{where} is bound with provider-hosted tools ({', '.join(names)}): the provider calls them inside the model "
            "call, so the guard never sees those calls or the outside text they bring; exported as `hosted` on the "
            "node (plain calls, reading outside text: the verifier does not credit them as guarded); to have them "
            "checked, give the model a LangChain tool of your own instead, bound to the guard's tool node")


#: The type given to a provider tool dict whose `type` the exporter cannot read from the code.
UNREADABLE = "<unreadable>"


def literal_dicts(tree: Any, resolve: Any = None) -> list[dict]:
    """The provider tool dicts written in a node's code (`tree`, from `_code.parse_function`) inside
    a tool list it binds: the list given to `.bind_tools(...)` or as `tools=` to any call
    (`model.bind(tools=[...])`, `create_agent(..., tools=[...])`). A value that is not a literal is
    looked up with `resolve` (a name of the module, `None` when it cannot be), else kept as `None`;
    a `type` that cannot be read is `UNREADABLE` (a tool of a kind nobody knows, never dropped)."""
    import ast

    out: list[dict] = []

    def items(expr: Any) -> list:
        return list(expr.elts) if isinstance(expr, (ast.List, ast.Tuple)) else []

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        lists = [kw.value for kw in node.keywords if kw.arg == "tools"]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "bind_tools" and node.args:
            lists.append(node.args[0])
        for lst in lists:
            for e in items(lst):
                if not isinstance(e, ast.Dict):
                    continue
                d: dict = {}
                for k, v in zip(e.keys, e.values):
                    if isinstance(k, ast.Constant) and isinstance(k.value, str):
                        try:
                            d[k.value] = ast.literal_eval(v)
                        except (ValueError, SyntaxError, TypeError):
                            d[k.value] = resolve(v) if resolve is not None else None
                if "type" in d and not isinstance(d["type"], str):
                    d["type"] = UNREADABLE
                if is_hosted(d):
                    out.append(d)
    return out
