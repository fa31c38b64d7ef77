"""A triage agent handing off to two specialists (the SDK's customer-service pattern)."""

from agents import Agent, function_tool


@function_tool
def lookup_invoice(invoice_id: str) -> str:
    """Look an invoice up."""
    return f"invoice {invoice_id}: 40 EUR, paid"


@function_tool
def issue_refund(invoice_id: str, amount: float) -> str:
    """Refund part or all of an invoice to the customer's card."""
    return f"refunded {amount} on {invoice_id}"


billing_agent = Agent(
    name="Billing",
    handoff_description="Answers questions about invoices",
    instructions="You answer billing questions.",
    tools=[lookup_invoice],
)

refund_agent = Agent(
    name="Refunds",
    handoff_description="Refunds invoices",
    instructions="You refund invoices when the customer asks.",
    tools=[lookup_invoice, issue_refund],
)

triage_agent = Agent(
    name="Triage",
    instructions="Hand the customer to the right specialist.",
    handoffs=[billing_agent, refund_agent],
)
