"""An agent whose write needs a person's approval (`needs_approval=True`), and one whose approval
is decided by code."""

from agents import Agent, function_tool


@function_tool
def get_order(order_id: str) -> str:
    """Read an order."""
    return f"order {order_id}: shipped"


@function_tool(needs_approval=True)
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return f"cancelled {order_id}"


async def big_amount(_ctx, params, _call_id) -> bool:
    return params.get("amount", 0) > 100


@function_tool(needs_approval=big_amount)
def pay_supplier(supplier: str, amount: float) -> str:
    """Pay a supplier."""
    return f"paid {amount} to {supplier}"


orders_agent = Agent(
    name="Orders",
    instructions="You manage orders.",
    tools=[get_order, cancel_order, pay_supplier],
)
