"""Node functions behind decorators and runnable wrappers, as public agents write them:
langsmith's `@traceable`, a `functools.wraps` logging decorator of the project's own, a node given
as `RunnableLambda(fn)`, a tool node `.with_retry()`, and a model step `.with_config(...)`."""

from __future__ import annotations

import functools
from typing import Literal

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langsmith import traceable

from ._fake import call, scripted


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@tool
def read_ticket(ticket_id: str) -> str:
    """Read a support ticket (its text is the customer's)."""
    return "Customer: please close my account."


@tool
def close_account(account_id: str) -> str:
    """Close a customer account."""
    return f"closed {account_id}"


llm = scripted([call("read_ticket", {"ticket_id": "T-1"})], [call("close_account", {"account_id": "A-9"})], "Done.")
agent_model = llm.bind_tools([read_ticket, close_account])


@traceable(name="triage")
def triage(state: MessagesState):
    return {"messages": [AIMessage(content="triaged")]}


@logged
def agent(state: MessagesState):
    return {"messages": [agent_model.invoke(state["messages"])]}


def route(state: MessagesState) -> Literal["tools", "__end__"]:
    return "tools" if state["messages"][-1].tool_calls else END


def summarize(state: MessagesState):
    return {"messages": [AIMessage(content="summary")]}


builder = StateGraph(MessagesState)
builder.add_node("triage", triage)
builder.add_node("agent", RunnableLambda(agent).with_config(tags=["agent"]))
builder.add_node("tools", ToolNode([read_ticket, close_account]).with_retry(stop_after_attempt=2))
builder.add_node("summarize", RunnableLambda(summarize))
builder.add_edge(START, "triage")
builder.add_edge("triage", "agent")
builder.add_conditional_edges("agent", route)
builder.add_edge("tools", "agent")
graph = builder.compile()

INPUT = {"messages": [("user", "Handle ticket T-1.")]}
RESUMES: list = []
WORDS = {"read_ticket": {"kind": "read", "reads_outside": True}, "close_account": {"kind": "write"}}
