"""An agent with a hand-written tool node, in the shape of LangGraph's "build an agent from
scratch" quickstart and the e-mail assistants: `tools_by_name[tool_call["name"]].invoke(...)` for
each tool call of the model's last message, and a router that sends the e-mail tool's calls to a
node of their own (`if tool_call["name"] == "send_email": return "send"`)."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph

from ._fake import call, scripted


@tool
def search_contacts(name: str) -> str:
    """Find a contact's e-mail address by name."""
    return f"{name.lower()}@example.org"


@tool
def run_report(sql: str) -> str:
    """Run a reporting query on the CRM database."""
    return "3 open deals"


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail."""
    return f"sent to {to}"


tools = [search_contacts, run_report, send_email]
tools_by_name = {tool.name: tool for tool in tools}
llm = scripted(
    [call("search_contacts", {"name": "Ada"})],
    [call("send_email", {"to": "ada@example.org", "subject": "Deals", "body": "3 open deals"})],
    "Sent.",
)
model_with_tools = llm.bind_tools(tools, parallel_tool_calls=False)


def llm_call(state: MessagesState):
    return {"messages": [model_with_tools.invoke([SystemMessage(content="You are a sales assistant.")]
                                                 + state["messages"])]}


def tool_node(state: MessagesState):
    result = []
    for tool_call in state["messages"][-1].tool_calls:
        tool = tools_by_name[tool_call["name"]]
        observation = tool.invoke(tool_call["args"])
        result.append(ToolMessage(content=observation, tool_call_id=tool_call["id"]))
    return {"messages": result}


def send(state: MessagesState):
    out = []
    for tool_call in state["messages"][-1].tool_calls:
        observation = tools_by_name[tool_call["name"]].invoke(tool_call["args"])
        out.append(ToolMessage(content=observation, tool_call_id=tool_call["id"]))
    return {"messages": out}


def should_continue(state: MessagesState) -> Literal["tool_node", "send", END]:
    last_message = state["messages"][-1]
    if not last_message.tool_calls:
        return END
    for tool_call in last_message.tool_calls:
        if tool_call["name"] == "send_email":
            return "send"
    return "tool_node"


builder = StateGraph(MessagesState)
builder.add_node("llm_call", llm_call)
builder.add_node("tool_node", tool_node)
builder.add_node("send", send)
builder.add_edge(START, "llm_call")
builder.add_conditional_edges("llm_call", should_continue, ["tool_node", "send", END])
builder.add_edge("tool_node", "llm_call")
builder.add_edge("send", "llm_call")
graph = builder.compile()

INPUT = {"messages": [("user", "Mail Ada the number of open deals.")]}
RESUMES: list = []
WORDS = {"search_contacts": {"kind": "read"},
         "run_report": {"kind": "read", "args": {"sql": {"role": "sql"}}},
         "send_email": {"kind": "write", "sends_out": True, "args": {"to": {"role": "destination"}}}}
