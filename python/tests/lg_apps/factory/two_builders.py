"""Two agents built alike in two functions of one module, each `builder` with `agent` and `tools`."""

from __future__ import annotations

from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .calendar_team import calendar_model
from .nodes import call_model, route
from .tools import CALENDAR_TOOLS, MAIL_TOOLS


def build_mail():
    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode(MAIL_TOOLS))  # <- two mail tools
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(name="mail")


def build_calendar():
    builder = StateGraph(MessagesState)
    builder.add_node("agent", calendar_model)
    builder.add_node("tools", ToolNode(CALENDAR_TOOLS))  # <- two calendar tools
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(name="calendar")


def build_team():
    builder = StateGraph(MessagesState)
    builder.add_node("mail", build_mail())  # <- two mail
    builder.add_node("calendar", build_calendar())
    builder.add_edge(START, "mail")
    builder.add_edge("mail", "calendar")
    builder.add_edge("calendar", END)
    return builder.compile(name="team")


graph = build_team()
