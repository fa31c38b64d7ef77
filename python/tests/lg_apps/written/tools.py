"""The data-science agent's tools: code execution, a database, the web."""

from __future__ import annotations

from langchain_core.tools import tool


@tool
def run_python(code: str) -> str:
    """Run Python code in the sandbox and return what it prints."""
    return "ran"


@tool
def fetch_url(url: str) -> str:
    """Fetch a web page."""
    return "page"


@tool
def search_docs(query: str) -> str:
    """Search the document index."""
    return "hits"


def execute_sql(query: str) -> list:
    """Run SQL on the warehouse (a plain function over a database client: declared in the words)."""
    return []


def run_snippet(source: str) -> str:
    """The application's helper: runs a snippet in the sandbox."""
    return run_python.invoke({"code": source})


@tool
def run_script(script: str, stdin: str = "") -> str:
    """Run one of the team's scripts, with the given standard input."""
    return "ran"


@tool
def post_message(channel: str, text: str) -> str:
    """Post a message to a chat channel."""
    return "posted"
