"""A router that hands off with `Command(goto=...)` to a destination it looks up at run time (a
table keyed by what the user asked), with no `Command[Literal[...]]` annotation: the export can
only say the edge's destinations are unknown (QG015), and the finding belongs on the router's
`def`, not on the generated export (SPEC 12.4)."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command


@tool
def refund_order(order_id: str, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} on {order_id}"


NEXT = {"refund": "pay", "other": "__end__"}


def router(state: MessagesState):
    key = "refund" if "refund" in state["messages"][-1].content else "other"
    return Command(goto=NEXT[key])


def pay(state: MessagesState):
    done = refund_order.invoke({"order_id": "1", "amount": 3})
    return {"messages": [AIMessage(content=done)]}


builder = StateGraph(MessagesState)
builder.add_node("router", router)
builder.add_node("pay", pay)
builder.add_edge(START, "router")
builder.add_edge("pay", "__end__")
graph = builder.compile()

INPUT = {"messages": [("user", "Please refund order 1.")]}
RESUMES: list = []
WORDS = {"refund_order": {"kind": "write"}}
