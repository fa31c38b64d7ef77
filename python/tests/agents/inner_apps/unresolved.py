"""Agents the exporter cannot read: the worker's tools are picked from the state
(`[TOOLBOX[name] for name in state["toolset"]]`), and another worker's model comes from the run's
configuration. Each is an opaque entry at the constructor's line (QG024)."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent

from lg_apps._fake import scripted


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return term


@tool
def wire_money(account: str, amount: float) -> str:
    """Wire money to an account."""
    return "wired"


TOOLBOX = {"lookup": lookup, "wire_money": wire_money}
llm = scripted("Nothing to do.")


class State(MessagesState):
    toolset: list[str]


def worker(state: State):
    tools = [TOOLBOX[name] for name in state["toolset"]]
    agent = create_react_agent(llm, tools=tools)  # <- from state
    result = agent.invoke(state)
    return {"messages": [AIMessage(content=result["messages"][-1].content)]}


def configured(state: State, config):
    agent = create_react_agent(config["configurable"]["model"], tools=[lookup])  # <- from config
    return {"messages": agent.invoke({"messages": state["messages"]})["messages"][-1:]}


builder = StateGraph(State)
builder.add_node("worker", worker)
builder.add_node("configured", configured)
builder.add_edge(START, "worker")
builder.add_edge("worker", "configured")
builder.add_edge("configured", END)
graph = builder.compile()


def make_agent(toolset: list[str]):
    """The application's helper: an agent over the tools the run names."""
    return create_react_agent(llm, tools=[TOOLBOX[name] for name in toolset])


def via_helper(state: State):
    agent = make_agent(state["toolset"])  # <- helper
    return {"messages": agent.invoke(state)["messages"][-1:]}


def two_agents(state: State):
    first = create_react_agent(llm, tools=[lookup])
    second = create_react_agent(llm, tools=[wire_money])  # <- second
    mid = first.invoke(state)
    return {"messages": second.invoke(mid)["messages"][-1:]}


more_builder = StateGraph(State)
more_builder.add_node("via_helper", via_helper)
more_builder.add_node("two_agents", two_agents)
more_builder.add_edge(START, "via_helper")
more_builder.add_edge("via_helper", "two_agents")
more_builder.add_edge("two_agents", END)
more_graph = more_builder.compile()
