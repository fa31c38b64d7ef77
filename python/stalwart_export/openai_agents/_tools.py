"""An OpenAI Agents SDK agent's tools, sorted as SPEC 13.1 maps them.

`read(agent)` sorts `agent.tools` into: function tools (the application's own code, run on the
agent's tool node), agents as tools (`Agent.as_tool`: subgraph nodes), local tools (`ShellTool`,
`LocalShellTool`, `ComputerTool`, `ApplyPatchTool`: run by the application on the tool node, as
function tools are), hosted tools (run by the provider inside the model call: `hosted` on the model
node, read through `_hosted.py` as the LangGraph exporter reads a provider's tool dict), and what
the exporter does not know (an `opaque` entry, never dropped). A tool whose `is_enabled` is the
literal `False` is never offered and left out; a callable `is_enabled` may offer it, so it stays.

`ToolView` is a function tool as the shared catalogue code (`catalogue.py`) reads a tool: `name`,
`description`, `args` (the properties of the SDK's `params_json_schema`), `metadata` (an MCP tool's
annotations), `func` (the user's function, for `catalogue_words`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any

from .. import _hosted, _mcp

#: SDK hosted tool classes -> the provider's tool type `_hosted.py` knows.
HOSTED_TYPES = {
    "WebSearchTool": "web_search",
    "FileSearchTool": "file_search",
    "CodeInterpreterTool": "code_interpreter",
    "ImageGenerationTool": "image_generation",
}
#: SDK tools the application runs itself (not through a function the exporter can read).
LOCAL_TOOLS = ("ShellTool", "LocalShellTool", "ComputerTool", "ApplyPatchTool")


@dataclass
class ToolView:
    """A function or local tool as `catalogue.export_catalogue`/`init_words_of` read a tool."""

    name: str
    description: str = ""
    args: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    func: Any = None


@dataclass
class AgentTools:
    """One agent's tools, sorted (see the module's doc)."""

    function: list[Any] = field(default_factory=list)
    agents: list[Any] = field(default_factory=list)
    local: list[Any] = field(default_factory=list)
    hosted: list[_hosted.Hosted] = field(default_factory=list)
    #: HostedMCPTool approvals: hosted tool names whose every call the provider asks about
    hosted_reviews: list[str] = field(default_factory=list)
    #: (server label, why) of hosted MCP servers whose tools are not listed (`allowed_tools`)
    hosted_unlisted: list[tuple[str, str]] = field(default_factory=list)
    #: (class name, why) of tools the exporter cannot read
    unknown: list[tuple[str, str]] = field(default_factory=list)


def enabled(obj: Any) -> bool:
    """False only when `is_enabled` is the literal False (a callable may enable it: a route that
    may exist)."""
    return getattr(obj, "is_enabled", True) is not False


def read(agent: Any, where: str) -> AgentTools:
    """Sort `agent.tools` (see the module's doc); `where` names the agent in warnings."""
    from agents import FunctionTool

    out = AgentTools()
    for t in getattr(agent, "tools", None) or []:
        if not enabled(t):
            continue
        cls = type(t).__name__
        if isinstance(t, FunctionTool):
            if getattr(t, "_is_agent_tool", False) and getattr(t, "_agent_instance", None) is not None:
                out.agents.append(t)
            else:
                out.function.append(t)
        elif cls in HOSTED_TYPES:
            out.hosted += _hosted.read({"type": HOSTED_TYPES[cls], "name": getattr(t, "name", None)}, where)
        elif cls == "HostedMCPTool":
            cfg = dict(getattr(t, "tool_config", None) or {})
            got = _hosted.read({**cfg, "type": cfg.get("type") or "mcp"}, where)
            out.hosted += got
            if len(got) == 1 and got[0].warnings:  # no list of its tools: any tool of the server
                out.hosted_unlisted.append((got[0].name, f"the hosted MCP server {got[0].name!r} lists no allowed_tools: "
                                                         "the exporter cannot list the tools the provider may call"))
            out.hosted_reviews += _mcp_reviews(cfg, got)
        elif cls in LOCAL_TOOLS:
            out.local.append(t)
        else:
            out.unknown.append((cls, f"a tool of type {cls} (named {getattr(t, 'name', '?')!r}), which the exporter "
                                     "does not read: what its calls do is not known"))
    return out


def _mcp_reviews(cfg: dict, got: list[_hosted.Hosted]) -> list[str]:
    """The hosted MCP tools whose calls the provider puts to the application for approval
    (`require_approval`: "always", or `{"always": {"tool_names": [...]}}`)."""
    req = cfg.get("require_approval")
    label = got[0].name.split(".", 1)[0] if got else ""
    if req == "always":
        return [h.name for h in got]
    if isinstance(req, dict):
        names = ((req.get("always") or {}).get("tool_names")) or []
        return [h.name for h in got if h.name.split(".", 1)[-1] in names or h.name == label]
    return []


@dataclass
class GuardMark:
    """What the SDK guard (`guard.py`) sets on a tool it wraps (`_stalwart_guard`): the guard, the
    tool's name, node and the tools bound beside it, the tool's own `needs_approval` and function,
    and the three pieces it installs, which `guarded_tool` checks are all in place."""

    guard: Any
    name: str
    node: str
    bound: frozenset
    original_approval: Any
    func: Any
    approver: Any = None
    guardrail: Any = None
    invoker: Any = None


def guarded_tool(tool: Any) -> GuardMark | None:
    """The guard's mark of `tool` when every piece of the guard is still in place on it (its
    `needs_approval`, its input guardrail, its invoker): the guard decides each of its calls
    (SPEC 13.1). None for a tool the guard does not decide (never wrapped, or a piece replaced or
    removed since: a copy with another `on_invoke_tool`, guardrails or `needs_approval`)."""
    mark = getattr(tool, "_stalwart_guard", None)
    if not isinstance(mark, GuardMark) or getattr(tool, "name", None) != mark.name:
        return None
    if getattr(tool, "needs_approval", None) is not mark.approver:
        return None
    if getattr(tool, "on_invoke_tool", None) is not mark.invoker:
        return None
    if not any(g is mark.guardrail for g in (getattr(tool, "tool_input_guardrails", None) or [])):
        return None
    return mark


def wrapped(tool: Any) -> Any:
    """The user's function a `@function_tool` was made from (for a guarded tool, the function of
    the tool the guard wrapped), or None."""
    mark = getattr(tool, "_stalwart_guard", None)
    if isinstance(mark, GuardMark) and mark.func is not None:
        return mark.func
    try:
        return tool.__wrapped__
    except AttributeError:
        return None


#: The attribute the exporter sets on a tool it listed from an MCP server (`_mcp_list.py`).
MCP_MARK = "_stalwart_mcp_tool"


def mark_mcp(tool: Any) -> None:
    """Mark `tool` as one an MCP server gave, so its catalogue entry reads its annotations with
    MCP's defaults even when the server gave none."""
    try:
        setattr(tool, MCP_MARK, True)
    except (AttributeError, TypeError):
        pass


def view(tool: Any) -> ToolView:
    """A function or local tool as the catalogue reads it."""
    schema = getattr(tool, "params_json_schema", None) or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    meta: dict = {}
    ann = getattr(tool, "mcp_annotations", None)
    if ann is not None or getattr(tool, MCP_MARK, False):
        # every hint, None where the server gave none: an MCP tool gets MCP's defaults (`_mcp.py`)
        for h in _mcp.HINTS:
            v = getattr(ann, h, None)
            meta[h] = v if isinstance(v, bool) else None
    desc = getattr(tool, "description", None)
    if not isinstance(desc, str) or not desc:
        desc = (f"a local tool ({type(tool).__name__}) the application runs for the model"
                if type(tool).__name__ in LOCAL_TOOLS else "")
    return ToolView(name=tool.name, description=desc, args=dict(props or {}), metadata=meta, func=wrapped(tool))


def approval(tool: Any) -> str:
    """How a tool's `needs_approval` reads: "always" (True, or a callable whose body is `return
    True`), "never" (False or absent), "code" (another callable: it asks when the code says). For a
    guarded tool, the tool's own `needs_approval` (the guard's questions are its `tools` node's)."""
    mark = guarded_tool(tool)
    na = mark.original_approval if mark is not None else getattr(tool, "needs_approval", False)
    if na is True:
        return "always"
    if na is False or na is None:
        return "never"
    if callable(na) and _returns_true(na):
        return "always"
    return "code"


def _returns_true(fn: Any) -> bool:
    """Is `fn`'s body (its docstring aside) `return True`?"""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    f = tree.body[0] if tree.body else None
    if isinstance(f, ast.Expr) and isinstance(f.value, ast.Lambda):
        f = f.value
    if isinstance(f, ast.Lambda):
        return isinstance(f.body, ast.Constant) and f.body.value is True
    if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = [s for s in f.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                      and isinstance(s.value.value, str))]
    return (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant)
            and body[0].value.value is True)
