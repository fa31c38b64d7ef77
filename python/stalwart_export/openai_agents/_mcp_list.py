"""An agent's MCP servers listed at export time (SPEC 13.1 "MCP servers"; issue 30 item 1).

`Agent(mcp_servers=[...])` gets its tools from each server when a run starts, so the exporter
asks the servers itself, as the SDK would: it connects each server the application built (a
`MCPServerStdio` starts its command, as the run would), lists the tools through the agent's own
`get_mcp_tools` (so the server's `tool_filter`, `include_server_in_tool_names` and approval
settings apply as at run time), and closes what it opened. The tools it gets are the SDK's
`FunctionTool`s for those MCP tools: they go on `A:tools` with the function tools, and their
annotations (MCP's defaults where the server gave none) become catalogue words.

A server's `tool_filter` function decides on the run's context, which export time does not have:
it is not applied (every tool it may allow is listed, saying so); a static filter (a dict) is.
A server that cannot be reached within `TIMEOUT` seconds (or fails to connect or list) is not
guessed at: it stays an `opaque` entry on `A:tools` (QG024), saying why. A server the application
already connected is listed and left open.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

#: Seconds to connect to and list one server.
TIMEOUT = 30.0


@dataclass
class Listed:
    """What the servers of one agent gave: the `tools` (SDK `FunctionTool`s, in the servers' order)
    and, for each server that could not be listed, `(label, why)`."""

    tools: list[Any] = field(default_factory=list)
    unlisted: list[tuple[str, str]] = field(default_factory=list)
    #: what the listing did not apply (a server's `tool_filter` function), for the export's warnings
    warnings: list[str] = field(default_factory=list)


def label(server: Any) -> str:
    """The server's name as the SDK gives it, else its class."""
    try:
        return str(server.name)
    except Exception:  # noqa: BLE001 - a server whose name fails is still named by its class
        return type(server).__name__


def list_tools(agent: Any, timeout: float = TIMEOUT) -> Listed:
    """The MCP tools of `agent`'s servers, listed now (see the module's doc). Never raises: what
    cannot be listed is in `unlisted`."""
    servers = list(getattr(agent, "mcp_servers", None) or [])
    if not servers:
        return Listed()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["out"] = asyncio.run(_list(agent, servers, timeout))
        except BaseException as e:  # noqa: BLE001 - reported as unlisted below
            box["error"] = e

    # A thread of its own, so that an exporter called from inside a running event loop still lists.
    t = threading.Thread(target=run, name="stalwart-mcp-list", daemon=True)
    t.start()
    t.join(timeout * (len(servers) + 1) + 5)
    if "out" in box:
        return box["out"]
    why = (f"listing failed: {type(box['error']).__name__}: {box['error']}" if "error" in box
           else f"listing did not finish in {timeout:.0f} s")
    return Listed(unlisted=[(label(s), why) for s in servers])


async def _list(agent: Any, servers: list[Any], timeout: float) -> Listed:
    out = Listed()
    opened: list[Any] = []
    reached: list[Any] = []
    try:
        for s in servers:
            if getattr(s, "session", None) is not None:
                reached.append(s)  # connected by the application: list it, leave it open
                continue
            try:
                await asyncio.wait_for(s.connect(), timeout)
            except BaseException as e:  # noqa: BLE001 - any failure leaves this server unlisted
                out.unlisted.append((label(s), _why(e, timeout)))
                continue
            opened.append(s)
            reached.append(s)
        if reached:
            from agents import RunContextWrapper

            one = agent.clone(mcp_servers=reached)
            dynamic = {id(s): s.tool_filter for s in reached if callable(getattr(s, "tool_filter", None))}
            for s in reached:
                if id(s) in dynamic:
                    name = getattr(dynamic[id(s)], "__qualname__", None) or type(dynamic[id(s)]).__name__
                    out.warnings.append(f"the MCP server {label(s)!r}'s tool_filter {name} decides on the run's "
                                        "context, which the exporter does not have: every tool the server lists is "
                                        "exported (each may be allowed)")
                    s.tool_filter = None
            try:
                out.tools = list(await asyncio.wait_for(one.get_mcp_tools(RunContextWrapper(context=None)), timeout))
            except BaseException as e:  # noqa: BLE001 - the servers reached are unlisted then
                out.unlisted += [(label(s), _why(e, timeout)) for s in reached]
            finally:
                for s in reached:
                    if id(s) in dynamic:
                        s.tool_filter = dynamic[id(s)]
    finally:
        for s in reversed(opened):
            try:
                await asyncio.wait_for(s.cleanup(), timeout)
            except BaseException:  # noqa: BLE001 - closing is best effort; the listing stands
                pass
    return out


def _why(e: BaseException, timeout: float) -> str:
    if isinstance(e, asyncio.TimeoutError):
        return f"it could not be reached in {timeout:.0f} s"
    return f"it could not be listed ({type(e).__name__}: {e})"
