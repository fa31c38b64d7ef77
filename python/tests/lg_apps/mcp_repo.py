"""A repository agent over a GitHub-like MCP server whose tools carry no annotations (issue 28):
the issue's text (written by anyone) is read through `get_issue`, then the agent pushes files to
the public repository with `push_files`. Converted by langchain-mcp-adapters as `load_mcp_tools`
does; no server runs: the stub tools answer here."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp.types import Tool

from ._fake import call, scripted

#: What the server's tools/list answers: no `annotations` on any tool.
LISTED = [
    Tool(name="get_issue", description="Get an issue of a repository.",
         inputSchema={"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"},
                                                       "issue_number": {"type": "integer"}}}),
    Tool(name="push_files", description="Push files to a branch of a repository.",
         inputSchema={"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"},
                                                       "branch": {"type": "string"}, "files": {"type": "array"}}}),
]


def _tool(t: Tool):
    lc = convert_mcp_tool_to_langchain_tool(None, t, connection={"transport": "stdio", "command": "true", "args": []})

    async def answer(**kwargs):  # the stub a test runs instead of a server
        return f"{t.name} ok", None

    lc.coroutine = answer
    lc.func = lambda **kwargs: (f"{t.name} ok", None)
    return lc


tools = [_tool(t) for t in LISTED]
llm = scripted([call("get_issue", {"owner": "acme", "repo": "site", "issue_number": 7})],
               [call("push_files", {"owner": "acme", "repo": "site", "branch": "main", "files": []})], "Done.")
graph = create_agent(llm, tools, name="repo_agent")

INPUT = {"messages": [("user", "Fix issue 7.")]}
