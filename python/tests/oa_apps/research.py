"""Agents as tools that call tools of their own (the SDK's orchestrator pattern): a lead agent asks
a researcher, which searches notes, and a publisher, which posts updates once a person approves
the publishing (`as_tool(..., needs_approval=True)`)."""

from agents import Agent, function_tool


@function_tool
def search_notes(query: str) -> str:
    """Search the team's notes."""
    return f"3 notes about {query}"


@function_tool
def post_update(channel: str, text: str) -> str:
    """Post an update to a team channel."""
    return f"posted to {channel}"


researcher = Agent(
    name="Researcher",
    instructions="Find what the team's notes say about the question.",
    tools=[search_notes],
)

publisher = Agent(
    name="Publisher",
    instructions="Post the update you are given.",
    tools=[post_update],
)

lead_agent = Agent(
    name="Lead",
    instructions="Research the question, then publish a short update.",
    tools=[
        researcher.as_tool(tool_name="research", tool_description="Research a question in the notes"),
        publisher.as_tool(tool_name="publish", tool_description="Publish an update", needs_approval=True),
    ],
)
