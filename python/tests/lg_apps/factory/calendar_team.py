"""The other agent built alike: `builder`, with the nodes `agent` and `tools`."""

from __future__ import annotations

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .nodes import llm, route
from .tools import CALENDAR_TOOLS

cal_model = llm.bind_tools(CALENDAR_TOOLS)


def calendar_model(state: MessagesState):
    return {"messages": [cal_model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", calendar_model)
builder.add_node("tools", ToolNode(CALENDAR_TOOLS))  # <- calendar tools
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route, ["tools", "__end__"])
builder.add_edge("tools", "agent")
calendar = builder.compile(name="calendar")
