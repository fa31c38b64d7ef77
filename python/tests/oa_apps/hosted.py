"""A hosted web search (the provider runs it inside the model call) beside a function tool."""

from agents import Agent, WebSearchTool, function_tool


@function_tool
def save_note(text: str) -> str:
    """Save a note for the user."""
    return "saved"


def build():
    return Agent(
        name="Researcher",
        instructions="Search the web and save what you find.",
        tools=[WebSearchTool(), save_note],
    )
