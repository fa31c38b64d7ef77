"""A travel-support assistant in the shape of LangGraph's customer-support tutorial: an
`Assistant` class holding `prompt | llm.bind_tools(...)`, tool nodes built by
`create_tool_node_with_fallback` (`ToolNode(...).with_fallbacks(...)`), and a router that sends
the sensitive tool's calls to a tool node the graph pauses before."""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import AnyMessage, add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from ._fake import call, scripted


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@tool
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return f"LX318 {origin}->{destination} 09:10"


@tool
def lookup_policy(query: str) -> str:
    """Look up the company's policy on changes and refunds."""
    return "Changes are allowed up to 3 hours before departure."


@tool
def cancel_ticket(ticket_no: str) -> str:
    """Cancel the passenger's ticket and refund it."""
    return f"ticket {ticket_no} cancelled"


def handle_tool_error(state) -> dict:
    error = state.get("error")
    tool_calls = state["messages"][-1].tool_calls
    return {"messages": [ToolMessage(content=f"Error: {error!r}\n please fix your mistakes.", tool_call_id=tc["id"])
                         for tc in tool_calls]}


def create_tool_node_with_fallback(tools: list):
    return ToolNode(tools).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error")


class Assistant:
    def __init__(self, runnable: Runnable):
        self.runnable = runnable

    def __call__(self, state: State, config: RunnableConfig):
        while True:
            result = self.runnable.invoke(state)
            if not result.tool_calls and not result.content:
                state = {**state, "messages": state["messages"] + [("user", "Respond with a real output.")]}
            else:
                break
        return {"messages": result}


llm = scripted(
    [call("search_flights", {"origin": "ZRH", "destination": "LIS"})],
    [call("cancel_ticket", {"ticket_no": "7240005432906569"})],
    "Your ticket is cancelled.",
)

assistant_prompt = ChatPromptTemplate.from_messages([
    ("system", "You are a helpful support assistant for Swiss Airlines."),
    ("placeholder", "{messages}"),
])

safe_tools = [search_flights, lookup_policy]
sensitive_tools = [cancel_ticket]
sensitive_tool_names = {t.name for t in sensitive_tools}
assistant_runnable = assistant_prompt | llm.bind_tools(safe_tools + sensitive_tools)


def route_tools(state: State):
    next_node = tools_condition(state)
    if next_node == END:
        return END
    ai_message = state["messages"][-1]
    first_tool_call = ai_message.tool_calls[0]
    if first_tool_call["name"] in sensitive_tool_names:
        return "sensitive_tools"
    return "safe_tools"


builder = StateGraph(State)
builder.add_node("assistant", Assistant(assistant_runnable))
builder.add_node("safe_tools", create_tool_node_with_fallback(safe_tools))
builder.add_node("sensitive_tools", create_tool_node_with_fallback(sensitive_tools))
builder.add_edge(START, "assistant")
builder.add_conditional_edges("assistant", route_tools, ["safe_tools", "sensitive_tools", END])
builder.add_edge("safe_tools", "assistant")
builder.add_edge("sensitive_tools", "assistant")

graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["sensitive_tools"])

INPUT = {"messages": [("user", "Cancel my flight to Lisbon, please.")]}
RESUMES = [None]
WORDS = {"search_flights": {"kind": "read"}, "lookup_policy": {"kind": "read"},
         "cancel_ticket": {"kind": "write", "irreversible": True}}
