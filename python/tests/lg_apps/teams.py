"""A parent graph with its own state that runs a prebuilt agent as a subgraph, in the shape of
the multi-agent examples: an intake step that needs the run's own input (`ticket`), a billing
agent (create_agent) as a node, and a reply step."""

from __future__ import annotations

from typing import Annotated

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from ._fake import call, scripted


class TeamState(TypedDict):
    ticket: str
    messages: Annotated[list[AnyMessage], add_messages]


@tool
def lookup_invoice(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"invoice {invoice_id}: 120 EUR, paid"


@tool
def issue_credit(invoice_id: str, amount: float, reason: str) -> str:
    """Issue a credit note on an invoice."""
    return f"credited {amount} on {invoice_id}"


billing_agent = create_agent(
    scripted([call("lookup_invoice", {"invoice_id": "INV-7"})],
             [call("issue_credit", {"invoice_id": "INV-7", "amount": 20.0, "reason": "late"})], "Credited."),
    [lookup_invoice, issue_credit], name="billing")


def intake(state: TeamState):
    return {"messages": [HumanMessage(content=f"Ticket: {state['ticket']}")]}


def reply(state: TeamState):
    return {"messages": [AIMessage(content="We have credited your invoice.")]}


builder = StateGraph(TeamState)
builder.add_node("intake", intake)
builder.add_node("billing", billing_agent)
builder.add_node("reply", reply)
builder.add_edge(START, "intake")
builder.add_edge("intake", "billing")
builder.add_edge("billing", "reply")
builder.add_edge("reply", END)
graph = builder.compile(checkpointer=InMemorySaver())

INPUT = {"ticket": "INV-7 was charged late fees", "messages": []}
RESUMES: list = []
WORDS = {"lookup_invoice": {"kind": "read"}, "issue_credit": {"kind": "write"}}
