"""A team of the two agents, each a subgraph; the module the exporter imports."""

from __future__ import annotations

from langgraph.graph import END, START, MessagesState, StateGraph

from .calendar_team import calendar
from .mail_team import mail


def pick(state: MessagesState):
    return "calendar" if "meeting" in str(state["messages"][-1].content) else "mail"


builder = StateGraph(MessagesState)
builder.add_node("mail", mail)
builder.add_node("calendar", calendar)
builder.add_conditional_edges(START, pick, ["mail", "calendar"])
builder.add_edge("mail", END)
builder.add_edge("calendar", END)
graph = builder.compile(name="team")
