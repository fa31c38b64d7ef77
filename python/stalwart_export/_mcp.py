"""Catalogue words from MCP tool annotations (issue 16, item 8; MCP's defaults: issue 28).

A tool loaded from an MCP server by `langchain-mcp-adapters` (`load_mcp_tools`,
`MultiServerMCPClient.get_tools`, `convert_mcp_tool_to_langchain_tool`) carries the server's
`ToolAnnotations` in its `metadata` (langchain-mcp-adapters 0.3: `readOnlyHint`,
`destructiveHint`, `idempotentHint`, `openWorldHint`, `title`, each `None` when the server did not
say; `metadata` is None when the server gave no annotations). The server declared them, so they
are words, each with where it came from. A hint the server did not give takes MCP's default
(the specification's `ToolAnnotations`: `readOnlyHint` false, `destructiveHint` true,
`idempotentHint` false, `openWorldHint` true): a tool that says nothing is a destructive write
that reaches the open world, never a tool of unknown kind.

| annotation (given, or MCP's default) | word |
|---|---|
| `readOnlyHint: true` | `kind: read` |
| `readOnlyHint: false` (the default) | `kind: write` |
| `destructiveHint` (on a write; default true) | `destructive` |
| `idempotentHint` (on a write; default false) | `idempotency` |
| `openWorldHint: true` (the default) | `reads_outside` (what it returns may be the open world's content), and `sends_out` on a write |

A tool is an MCP tool when its metadata holds a hint key, or its code is langchain-mcp-adapters'
(`convert_mcp_tool_to_langchain_tool` makes its coroutine and its `handle_tool_error`). The same
mapping is `stalwart catalogue from-mcp` in the verifier (src/input/mcp.rs).
"""

from __future__ import annotations

from typing import Any

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

#: MCP's defaults for a hint the server did not give (the MCP specification's `ToolAnnotations`).
DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


def _from_adapters(obj: Any) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    return mod == "langchain_mcp_adapters" or mod.startswith("langchain_mcp_adapters.")


def is_mcp_tool(tool: Any) -> bool:
    """Was `tool` loaded from an MCP server (see the module's doc)?"""
    meta = getattr(tool, "metadata", None)
    if isinstance(meta, dict) and any(h in meta for h in HINTS):
        return True
    return any(_from_adapters(getattr(tool, f, None)) for f in ("coroutine", "func", "handle_tool_error"))


def annotations(tool: Any) -> dict | None:
    """The MCP annotations an MCP tool carries (the hints the server set; `{}` when it set none),
    or None when `tool` is not an MCP tool."""
    if not is_mcp_tool(tool):
        return None
    meta = getattr(tool, "metadata", None) or {}
    if not isinstance(meta, dict):
        return {}
    return {h: meta[h] for h in HINTS if isinstance(meta.get(h), bool)}


def words(hints: dict) -> tuple[dict, dict]:
    """`(words, where each came from)` for an MCP tool's hints, MCP's defaults for those absent
    (see the module's table)."""
    out: dict[str, Any] = {}
    why: dict[str, str] = {}

    def hint(h: str) -> tuple[bool, str]:
        if isinstance(hints.get(h), bool):
            return hints[h], f"MCP annotation {h}: {str(hints[h]).lower()}"
        return DEFAULTS[h], f"MCP's default {h}: {str(DEFAULTS[h]).lower()} (the server did not say)"

    ro, src = hint("readOnlyHint")
    out["kind"], why["kind"] = ("read" if ro else "write"), src
    if not ro:
        out["destructive"], why["destructive"] = hint("destructiveHint")
        out["idempotency"], why["idempotency"] = hint("idempotentHint")
    elif isinstance(hints.get("idempotentHint"), bool):
        out["idempotency"], why["idempotency"] = hint("idempotentHint")
    world, src = hint("openWorldHint")
    if world:
        out["reads_outside"], why["reads_outside"] = True, src
        if not ro:
            out["sends_out"], why["sends_out"] = True, src
    return out, why
