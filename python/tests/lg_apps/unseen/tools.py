"""The application's tools module (`from . import tools` in the agents)."""

from __future__ import annotations

from langchain_core.tools import tool


@tool
def read_web(url: str) -> str:
    """Fetch a web page (outside text)."""
    return "page text"


@tool
def publish_post(text: str) -> str:
    """Publish a post on the company blog."""
    return "published"


TOOLS = [read_web, publish_post]
REGISTRY = {"read": read_web, "publish": publish_post}


def upsert_memory(content: str, context: str, *, memory_id: str | None = None, user_id: str = "",
                  store=None) -> str:
    """Upsert a memory in the database (a plain function: the memory-agent template's tool)."""
    return f"stored memory {memory_id}"


class Toolbox:
    """An object holding tools as attributes."""

    def __init__(self) -> None:
        self.publisher = publish_post


BOX = Toolbox()
