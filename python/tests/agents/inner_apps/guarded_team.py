"""Issue 29 item 3: a worker node builds its agent with the guard's tool node,
`create_react_agent(llm, tools=guard.tool_node([...]), state_schema=TeamState)`, inside the node.
`writer_kept` passes the guard's history in and out (the whole state into the agent, the agent's
`stalwart_guard` back with the update); `writer_tutorial` is the tutorial's shape (only the last
answer comes back), so the guard's history starts empty at each run of the node."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt.chat_agent_executor import AgentState, create_react_agent
from langgraph.types import Command

from lg_apps._fake import call, scripted
from stalwart_export import Guard, GuardHistory

CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "web_search": {"kind": "read", "reads_outside": True, "args": {"query": {"type": "string"}}},
    "publish_post": {"kind": "write", "at_most": 1, "args": {"text": {"type": "string"}}},
}}
guard = Guard(CATALOGUE)


@tool
def web_search(query: str) -> str:
    """Search the web for a query."""
    return f"results for {query}"


@tool
def publish_post(text: str) -> str:
    """Publish a post on the company blog."""
    return "published"


class TeamState(AgentState):
    stalwart_guard: GuardHistory


def models() -> tuple:
    """Fresh scripted models: the supervisor sends the writer twice; each time it tries to publish."""
    return (scripted([call("route", {"next": "researcher"})], [call("route", {"next": "writer"})],
                     [call("route", {"next": "writer"})], [call("route", {"next": "FINISH"})]),
            scripted([call("web_search", {"query": "agents"})], "Agents are popular."),
            scripted([call("publish_post", {"text": "Agents are popular."}, 1)], "Published.",
                     [call("publish_post", {"text": "Agents are popular!"}, 2)], "Done."))


SUPERVISOR, RESEARCH, WRITER = models()


def supervisor(state: TeamState) -> Command[Literal["researcher", "writer", "__end__"]]:
    msg = SUPERVISOR.invoke(state["messages"])
    goto = msg.tool_calls[0]["args"]["next"]
    return Command(goto=END if goto == "FINISH" else goto)


def researcher(state: TeamState) -> Command[Literal["supervisor"]]:
    agent = create_react_agent(RESEARCH, tools=guard.tool_node([web_search]), state_schema=TeamState)
    result = agent.invoke(state)
    return Command(update={"messages": result["messages"], "stalwart_guard": result["stalwart_guard"]},
                   goto="supervisor")


def writer_kept(state: TeamState) -> Command[Literal["supervisor"]]:
    agent = create_react_agent(WRITER, tools=guard.tool_node([publish_post]),  # <- kept
                               state_schema=TeamState, prompt="You write and publish posts.")
    result = agent.invoke(state)
    return Command(update={"messages": [HumanMessage(content=result["messages"][-1].content, name="writer")],
                           "stalwart_guard": result["stalwart_guard"]},
                   goto="supervisor")


def writer_tutorial(state: TeamState) -> Command[Literal["supervisor"]]:
    agent = create_react_agent(WRITER, tools=guard.tool_node([publish_post]),  # <- tutorial
                               state_schema=TeamState, prompt="You write and publish posts.")
    result = agent.invoke(state)
    return Command(update={"messages": [HumanMessage(content=result["messages"][-1].content, name="writer")]},
                   goto="supervisor")


def writer_middleware(state: TeamState) -> Command[Literal["supervisor"]]:
    """create_agent with the guard as its middleware (its state then holds `stalwart_guard`)."""
    from langchain.agents import create_agent

    agent = create_agent(WRITER, tools=[publish_post], middleware=[guard],  # <- middleware
                         system_prompt="You write and publish posts.")
    result = agent.invoke(state)
    return Command(update={"messages": [HumanMessage(content=result["messages"][-1].content, name="writer")],
                           "stalwart_guard": result["stalwart_guard"]},
                   goto="supervisor")


def build(writer) -> object:
    b = StateGraph(TeamState)
    b.add_node("supervisor", supervisor)
    b.add_node("researcher", researcher)
    b.add_node("writer", writer)
    b.add_edge(START, "supervisor")
    return b.compile(checkpointer=InMemorySaver())


kept = build(writer_kept)
tutorial = build(writer_tutorial)
middleware = build(writer_middleware)


def reset() -> None:
    """Rewind the scripted models for another run."""
    for m in (SUPERVISOR, RESEARCH, WRITER):
        m.i = 0
