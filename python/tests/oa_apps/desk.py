"""A help desk over several turns: triage hands the customer to support, which reads their ticket
(text the customer wrote: outside content), or to refunds, which pays money back. A later turn
goes on at the agent the application passes (`result.last_agent`, or the agent the customer
asks for)."""

from agents import Agent, function_tool


@function_tool
def read_ticket(ticket_id: str) -> str:
    """Read a customer's support ticket."""
    return f"ticket {ticket_id}: please refund me"


@function_tool
def issue_refund(invoice_id: str, amount: float) -> str:
    """Refund an invoice to the customer's card."""
    return f"refunded {amount} on {invoice_id}"


support_agent = Agent(
    name="Support",
    handoff_description="Reads the customer's tickets",
    instructions="Read the customer's ticket and summarise it.",
    tools=[read_ticket],
)

refund_agent = Agent(
    name="Refunds",
    handoff_description="Refunds invoices",
    instructions="You refund invoices when the customer asks.",
    tools=[issue_refund],
)

desk_agent = Agent(
    name="Triage",
    instructions="Hand the customer to the right specialist.",
    handoffs=[support_agent, refund_agent],
)

#: The words an export of the desk is made with: a ticket is the customer's text.
WORDS = {"read_ticket": {"kind": "read", "reads_outside": True}, "issue_refund": {"kind": "write"}}
