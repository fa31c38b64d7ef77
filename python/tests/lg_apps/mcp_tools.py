"""An agent over tools an MCP server lists, converted by langchain-mcp-adapters as
`load_mcp_tools` does (`convert_mcp_tool_to_langchain_tool` on each `tools/list` entry): the
server's annotations ride on each tool's metadata. No server runs: the stub tools answer here."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp.types import Tool, ToolAnnotations

from ._fake import call, scripted

#: What a files server's tools/list answers (the same shape `stalwart catalogue from-mcp` reads).
LISTED = [
    Tool(name="read_file", description="Read a file of the workspace.",
         inputSchema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
         annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False)),
    Tool(name="fetch_url", description="Fetch a web page.",
         inputSchema={"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
         annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True)),
    Tool(name="delete_file", description="Delete a file.",
         inputSchema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
         annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True)),
    Tool(name="rename_file", description="Rename a file.",
         inputSchema={"type": "object", "properties": {"src": {"type": "string"}, "dst": {"type": "string"}}}),
]


def _tool(t: Tool):
    lc = convert_mcp_tool_to_langchain_tool(None, t, connection={"transport": "stdio", "command": "true", "args": []})

    async def answer(**kwargs):  # the stub a test runs instead of a server
        return f"{t.name} ok", None

    lc.coroutine = answer
    lc.func = lambda **kwargs: (f"{t.name} ok", None)
    return lc


tools = [_tool(t) for t in LISTED]
llm = scripted([call("read_file", {"path": "notes.txt"})], [call("delete_file", {"path": "old.txt"})], "Done.")
graph = create_agent(llm, tools, name="files_agent")

INPUT = {"messages": [("user", "Tidy the workspace.")]}
RESUMES: list = []
WORDS = {"rename_file": {"kind": "write"}}
