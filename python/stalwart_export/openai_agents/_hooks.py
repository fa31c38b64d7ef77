"""What the application's own code around an agent reaches (SPEC 13.1, 12.5): an `on_handoff`
hook, an input or output guardrail's function, a tool guardrail, and the other code the SDK runs on
an agent's turns (`around`).

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


def _closed_over(fn: Any, name: str) -> Any:
    """The value `fn` closes over as `name`, or None."""
    code = getattr(fn, "__code__", None)
    if code is None or name not in code.co_freevars or not fn.__closure__:
        return None
    try:
        return dict(zip(code.co_freevars, fn.__closure__))[name].cell_contents
    except ValueError:  # an empty cell
        return None


def around(agent: Any) -> list[tuple[Any, str]]:
    """(function, what it is) for the application's code the SDK runs on `agent`'s turns, beyond
    its guardrails and `on_handoff` hooks (which export.py reads): a function `instructions`, the
    methods its `hooks` (an `AgentHooks`) override, a function `tool_use_behavior`, each hand-off's
    `input_filter` and `is_enabled` function, each agent tool's `custom_output_extractor` and
    `input_builder` (which `as_tool` keeps only in its run function's closure, openai-agents 0.24.0)."""
    from agents import Agent
    from agents.lifecycle import AgentHooksBase

    out: list[tuple[Any, str]] = []

    def name(fn: Any) -> str:
        return getattr(fn, "__qualname__", None) or type(fn).__name__

    if callable(getattr(agent, "instructions", None)):
        out.append((agent.instructions, f"the instructions function {name(agent.instructions)}"))
    hooks = getattr(agent, "hooks", None)
    if hooks is not None:
        for m in sorted(k for k in vars(AgentHooksBase) if k.startswith("on_")):
            if getattr(type(hooks), m, None) is not getattr(AgentHooksBase, m):
                out.append((getattr(hooks, m), f"the agent hooks {type(hooks).__qualname__}.{m}"))
    behavior = getattr(agent, "tool_use_behavior", None)
    if callable(behavior):
        out.append((behavior, f"the tool_use_behavior function {name(behavior)}"))
    for h in getattr(agent, "handoffs", None) or []:
        if isinstance(h, Agent):
            continue
        target = getattr(h, "agent_name", "?")
        for attr in ("input_filter", "is_enabled"):
            fn = getattr(h, attr, None)
            if callable(fn):
                out.append((fn, f"the hand-off {attr} {name(fn)} of the hand-off to {target!r}"))
    for t in getattr(agent, "tools", None) or []:
        if not getattr(t, "_is_agent_tool", False):
            continue
        run = getattr(getattr(t, "on_invoke_tool", None), "_invoke_tool_impl", None)
        for var, what in (("custom_output_extractor", "output extractor"), ("input_builder", "input builder")):
            fn = _closed_over(run, var)
            if callable(fn):
                out.append((fn, f"the {what} {name(fn)} of the agent tool {t.name!r}"))
    return out
