"""Agents as tools (the SDK's agents_as_tools example): an orchestrator calls translators."""

from agents import Agent

spanish_agent = Agent(
    name="spanish_agent",
    instructions="You translate the user's message to Spanish",
    handoff_description="An english to spanish translator",
)

french_agent = Agent(
    name="french_agent",
    instructions="You translate the user's message to French",
    handoff_description="An english to french translator",
)

orchestrator_agent = Agent(
    name="orchestrator_agent",
    instructions="You use the tools given to you to translate.",
    tools=[
        spanish_agent.as_tool(
            tool_name="translate_to_spanish",
            tool_description="Translate the user's message to Spanish",
        ),
        french_agent.as_tool(
            tool_name="translate_to_french",
            tool_description="Translate the user's message to French",
            needs_approval=True,
        ),
    ],
)
