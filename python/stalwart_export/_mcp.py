"""Catalogue words from MCP tool annotations (issue 16, item 8).

A tool loaded from an MCP server by `langchain-mcp-adapters` (`load_mcp_tools`,
`MultiServerMCPClient.get_tools`, `convert_mcp_tool_to_langchain_tool`) carries the server's
`ToolAnnotations` in its `metadata` (langchain-mcp-adapters 0.3: `readOnlyHint`,
`destructiveHint`, `idempotentHint`, `openWorldHint`, `title`, each `None` when the server did not
say). The server declared them, so they are words, each with where it came from:

| annotation | word |
|---|---|
| `readOnlyHint: true` | `kind: read` |
| `readOnlyHint: false`, or unset while other hints are given (MCP's default is false) | `kind: write` |
| `destructiveHint` (on a write) | `destructive` |
| `idempotentHint` | `idempotency` |
| `openWorldHint: true` | `reads_outside` on a read, `sends_out` on a write |

A tool whose server gave no annotation gets nothing here (its `kind` stays undeclared). The same
mapping is `stalwart catalogue from-mcp` in the verifier (src/input/mcp.rs).
"""

from __future__ import annotations

from typing import Any

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def annotations(tool: Any) -> dict | None:
    """The MCP annotations a LangChain tool carries (the hints the server set), or None when it
    carries none (not an MCP tool, or a server that gave no annotation)."""
    meta = getattr(tool, "metadata", None) or {}
    if not isinstance(meta, dict):
        return None
    got = {h: meta[h] for h in HINTS if isinstance(meta.get(h), bool)}
    return got or None


def words(hints: dict) -> tuple[dict, dict]:
    """`(words, where each came from)` for a tool's MCP hints (see the module's table)."""
    out: dict[str, Any] = {}
    why: dict[str, str] = {}
    ro = hints.get("readOnlyHint")
    if ro is True:
        out["kind"], why["kind"] = "read", "MCP annotation readOnlyHint: true"
    elif ro is False:
        out["kind"], why["kind"] = "write", "MCP annotation readOnlyHint: false"
    else:
        out["kind"], why["kind"] = "write", "MCP annotations without readOnlyHint (MCP's default: not read-only)"
    if out["kind"] == "write" and isinstance(hints.get("destructiveHint"), bool):
        out["destructive"] = hints["destructiveHint"]
        why["destructive"] = f"MCP annotation destructiveHint: {str(hints['destructiveHint']).lower()}"
    if isinstance(hints.get("idempotentHint"), bool):
        out["idempotency"] = hints["idempotentHint"]
        why["idempotency"] = f"MCP annotation idempotentHint: {str(hints['idempotentHint']).lower()}"
    if hints.get("openWorldHint") is True:
        word = "reads_outside" if out["kind"] == "read" else "sends_out"
        out[word], why[word] = True, "MCP annotation openWorldHint: true"
    return out, why
