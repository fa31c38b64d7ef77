"""The nodes' functions, in a module of their own."""

from __future__ import annotations

from langgraph.graph import END, MessagesState

from .._fake import call, scripted
from .tools import MAIL_TOOLS

llm = scripted([call("read_inbox", {"folder": "in"})], [call("send_email", {"to": "a@b.c", "body": "hi"})], "done")
model = llm.bind_tools(MAIL_TOOLS)


def call_model(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}


def route(state: MessagesState):
    return "tools" if state["messages"][-1].tool_calls else END
