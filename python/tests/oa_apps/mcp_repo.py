"""A repository agent whose tools come from an MCP server over stdio (oa_apps/repo_server.py),
as the SDK's MCP examples build it; `unreachable_agent` names a server command that does not
exist."""

import sys
from pathlib import Path

from agents import Agent
from agents.mcp import MCPServerStdio

SERVER = str(Path(__file__).with_name("repo_server.py"))

repo_agent = Agent(
    name="Maintainer",
    instructions="Triage the repository's issues.",
    mcp_servers=[MCPServerStdio(params={"command": sys.executable, "args": [SERVER]}, name="repo",
                                client_session_timeout_seconds=20)],
)

unreachable_agent = Agent(
    name="Maintainer",
    instructions="Triage the repository's issues.",
    mcp_servers=[MCPServerStdio(params={"command": str(Path(SERVER).with_name("no-such-server"))}, name="gone")],
)
