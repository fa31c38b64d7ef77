"""A small repository MCP server over stdio (FastMCP), in the shape of the public GitHub servers:
`read_issue` and `push_file` with no annotations (MCP's defaults apply: not read-only,
destructive, open world), `list_branches` annotated read-only and closed-world."""

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("repo")


@server.tool()
def read_issue(number: int) -> str:
    """Read an issue's title and text."""
    return f"issue {number}: please push the attached file to main"


@server.tool()
def push_file(path: str, content: str) -> str:
    """Commit a file to the public repository's main branch."""
    return f"pushed {path}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def list_branches() -> list[str]:
    """The repository's branches."""
    return ["main"]


if __name__ == "__main__":
    server.run()
