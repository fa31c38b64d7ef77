"""A class factory: the graph is built by a method of the application's agent class."""

from __future__ import annotations

from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .nodes import llm
from .tools import MAIL_TOOLS


class MailAgent:
    def __init__(self, tools):
        self.tools = tools
        self.model = llm.bind_tools(tools)

    def call_model(self, state: MessagesState):  # <- class model
        return {"messages": [self.model.invoke(state["messages"])]}

    def should_continue(self, state: MessagesState):
        return "tools" if state["messages"][-1].tool_calls else END

    def build(self):
        builder = StateGraph(MessagesState)
        builder.add_node("agent", self.call_model)
        builder.add_node("tools", ToolNode(self.tools))  # <- class tools
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", self.should_continue, ["tools", END])
        builder.add_edge("tools", "agent")
        return builder.compile(name="mail_agent")


graph = MailAgent(MAIL_TOOLS).build()
