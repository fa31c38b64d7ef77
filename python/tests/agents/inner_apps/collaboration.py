"""The multi-agent collaboration tutorial's shape: module-level agents, one node function for
all of them, bound to each agent with `functools.partial(agent_node, agent=..., name=...)`."""

from __future__ import annotations

import functools

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent

from lg_apps._fake import call, scripted


@tool
def web_search(query: str) -> str:
    """Search the web for a query."""
    return f"results for {query}"


@tool
def run_python(code: str) -> str:
    """Run Python code and return what it prints."""
    return "42"


research_llm = scripted([call("web_search", {"query": "gdp"})], "GDP figures found.")
chart_llm = scripted([call("run_python", {"code": "print(42)"})], "FINAL ANSWER: chart done.")
research_agent = create_react_agent(research_llm, [web_search], name="research_agent")
chart_agent = create_react_agent(chart_llm, [run_python], name="chart_agent")


def agent_node(state, agent, name):
    result = agent.invoke(state)
    return {"messages": [HumanMessage(content=result["messages"][-1].content, name=name)]}


research_node = functools.partial(agent_node, agent=research_agent, name="Researcher")
chart_node = functools.partial(agent_node, agent=chart_agent, name="chart_generator")

builder = StateGraph(MessagesState)
builder.add_node("Researcher", research_node)
builder.add_node("chart_generator", chart_node)
builder.add_edge(START, "Researcher")
builder.add_edge("Researcher", "chart_generator")
builder.add_edge("chart_generator", END)
graph = builder.compile()

INPUT = {"messages": [("user", "Chart the UK's GDP.")]}
