"""One of two agents built alike: `builder`, with the nodes `agent` and `tools`."""

from __future__ import annotations

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .nodes import call_model, route
from .tools import MAIL_TOOLS

builder = StateGraph(MessagesState)
builder.add_node("agent", call_model)
builder.add_node("tools", ToolNode(MAIL_TOOLS))  # <- mail tools
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route, ["tools", "__end__"])
builder.add_edge("tools", "agent")
mail = builder.compile(name="mail")
