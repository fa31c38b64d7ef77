"""What the application's own code around an agent reaches (SPEC 13.1, 12.5): an `on_handoff`
hook, an input or output guardrail's function, a tool guardrail.

Such code that only reads text is nothing to the export. Code that runs an agent (`Runner.run`,
an `Agent` it names), calls a tool (a `FunctionTool`, an MCP server), or calls a model (a `Model`,
an OpenAI client) has effects the exporter does not follow: each is an `opaque` entry on the node
whose visit runs the code, so the verifier raises QG024 at the user's line. What the code can reach
is read with `_code.referenced_objects` (closures, the globals its code names, followed into the
user's own functions), as the LangGraph exporter reads a node's code.
"""

from __future__ import annotations

from typing import Any

from .. import _code
from ._agent import is_agent


def _module(obj: Any) -> str:
    return getattr(type(obj), "__module__", "") or ""


def reaches(fn: Any, what_code: str) -> list[dict]:
    """`opaque` entries (without a location) for what `fn` (named `what_code` in the message) can
    reach: an agent run, a tool, a model; `[]` when it reaches none of them."""
    found: dict[str, set[str]] = {}
    for name, obj in _code.referenced_objects(fn):
        mod = getattr(obj, "__module__", "") if isinstance(obj, type) else _module(obj)
        if is_agent(obj):
            found.setdefault("subgraph", set()).add(f"runs or names the agent {obj.name!r} ({name})")
        elif isinstance(obj, type) and obj.__name__ in ("Runner", "AgentRunner") and mod.startswith("agents"):
            found.setdefault("subgraph", set()).add(f"runs an agent ({name}.run)")
        elif type(obj).__name__ == "FunctionTool" and mod.startswith("agents"):
            found.setdefault("tools", set()).add(f"names the tool {getattr(obj, 'name', name)!r}")
        elif mod.startswith("agents.mcp"):
            found.setdefault("tools", set()).add(f"uses the MCP server {name!r}")
        elif mod.startswith("agents.models") or mod.startswith("openai"):
            found.setdefault("model", set()).add(f"calls a model ({name})")
    return [{"what": w, "why": f"{what_code} {' and '.join(sorted(found[w]))}: code the exporter does not follow; "
                                "make what it does a tool, a hand-off or an agent as tool of the agent, which the "
                                "exporter reads"}
            for w in ("subgraph", "tools", "model") if w in found]


def location(fn: Any, base: str | None) -> dict | None:
    """The `def` line of a hook or guardrail function (SPEC 12.4)."""
    return _code.location(fn, base)
