"""A factory module: the graph is built in a function, called by the module the exporter imports."""

from __future__ import annotations

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .nodes import call_model, route
from .tools import MAIL_TOOLS


def build_graph():
    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode(MAIL_TOOLS))  # <- factory tools
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", "__end__"])
    builder.add_edge("tools", "agent")
    return builder.compile(name="mail_agent")
