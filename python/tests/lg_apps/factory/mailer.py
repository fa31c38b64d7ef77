"""A digest agent whose step sends mail through an API client (no LangChain tool): the effect
is declared in the words (`nodes.send_digest.calls.gmail_send`)."""

from __future__ import annotations

from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .nodes import llm
from .tools import read_inbox

model = llm.bind_tools([read_inbox])


class Gmail:
    def send(self, to: str, body: str) -> None:
        """The mail API's client."""


gmail = Gmail()


def call_model(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}


def send_digest(state: MessagesState):
    gmail.send("team@example.com", str(state["messages"][-1].content))
    return {}


def route(state: MessagesState):
    return "tools" if state["messages"][-1].tool_calls else "send_digest"


builder = StateGraph(MessagesState)
builder.add_node("agent", call_model)
builder.add_node("tools", ToolNode([read_inbox]))
builder.add_node("send_digest", send_digest)
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route, ["tools", "send_digest"])
builder.add_edge("tools", "agent")
builder.add_edge("send_digest", END)
graph = builder.compile(name="digest")
