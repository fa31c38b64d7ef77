"""A worker node that does more than run the agent it builds: it posts a status message to the
team's channel itself (`notify_team.invoke(...)`) before handing the question to its agent, and
another runs a runnable from the configuration besides its agent."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command

from lg_apps._fake import call, scripted


@tool
def notify_team(text: str) -> str:
    """Post a message to the team's channel."""
    return "posted"


@tool
def search_docs(query: str) -> str:
    """Search the internal documentation."""
    return "docs"


llm = scripted([call("search_docs", {"query": "deploy"})], "Deploy with make deploy.")


def support(state: MessagesState) -> Command[Literal["__end__"]]:
    notify_team.invoke({"text": f"working on: {state['messages'][-1].content}"})
    agent = create_react_agent(llm, [search_docs])
    result = agent.invoke(state)
    return Command(update={"messages": [AIMessage(content=result["messages"][-1].content)]}, goto=END)


def hooked(state: MessagesState, config) -> dict:
    agent = create_react_agent(llm, [search_docs])
    result = agent.invoke(state)
    config["configurable"]["after_hook"].invoke(result)  # <- hook
    return {"messages": result["messages"][-1:]}


builder = StateGraph(MessagesState)
builder.add_node("support", support)
builder.add_edge(START, "support")
graph = builder.compile()

hooked_builder = StateGraph(MessagesState)
hooked_builder.add_node("hooked", hooked)
hooked_builder.add_edge(START, "hooked")
hooked_graph = hooked_builder.compile()

INPUT = {"messages": [("user", "How do I deploy?")]}


# A module-level agent the node runs inside its function, besides posting to the channel itself.
triage_agent = create_react_agent(llm, [search_docs], name="triage_agent")


def triage(state: MessagesState) -> dict:
    notify_team.invoke({"text": "triage started"})
    result = triage_agent.invoke({"messages": state["messages"]})
    return {"messages": result["messages"][-1:]}


triage_builder = StateGraph(MessagesState)
triage_builder.add_node("triage", triage)
triage_builder.add_edge(START, "triage")
triage_graph = triage_builder.compile()
