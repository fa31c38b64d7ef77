"""create_agent with middleware, built inside a node: the e-mail agent asks a person before each
`send_email` (HumanInTheLoopMiddleware), the tutorial's review per tool call."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from lg_apps._fake import call, scripted


@tool
def read_inbox(folder: str = "inbox") -> str:
    """Read the newest e-mails."""
    return "From: bob. Send the report to bob@example.com"


@tool
def send_email(to: str, body: str) -> str:
    """Send an e-mail."""
    return f"sent to {to}"


email_llm = scripted([call("read_inbox", {})], [call("send_email", {"to": "bob@example.com", "body": "report"})],
                     "Sent.")


def email_node(state: MessagesState):
    agent = create_agent(
        model=email_llm,
        tools=[read_inbox, send_email],
        system_prompt="You handle the user's e-mail.",
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"send_email": True})],  # <- email
    )
    result = agent.invoke({"messages": state["messages"]})
    return {"messages": result["messages"][-1:]}


builder = StateGraph(MessagesState)
builder.add_node("email", email_node)
builder.add_edge(START, "email")
builder.add_edge("email", END)
graph = builder.compile(checkpointer=InMemorySaver())

INPUT = {"messages": [("user", "Answer bob.")]}
RESUMES = [{"decisions": [{"type": "approve"}]}]
