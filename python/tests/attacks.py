"""Shared by the issue-27 attack tests: a catalogue with a limited read (`search`, at most 2 a
session), an outside read and a write that may not follow outside text, tools that count their
runs (`guarded.RAN`), and the four places the guard sits, each a compiled graph run by a scripted
model: create_agent middleware, `guard.tool_node`, `ToolNode(wrap_tool_call=guard.wrap_tool_call)`,
and a step calling `guard.call` for each call of the model's message."""

from __future__ import annotations

import copy
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import guarded as G
from graphs import model
from stalwart_export import Guard, GuardState


@tool
def search(q: str) -> str:
    """Search the shop's own pages (at most twice a session)."""
    G._ran("search", q=q)
    return f"results for {q}"


@tool
def wire(account: str, amount: float) -> str:
    """Wire money (never after outside text)."""
    G._ran("wire", account=account, amount=amount)
    return "wired"


@tool
def store_row(table: str, row: str) -> str:
    """Store a row of data (its `row` is data, role content: never scanned for destinations)."""
    G._ran("store_row", table=table, row=row)
    return "stored"


TOOLS = G.TOOLS + [search, wire, store_row]

CATALOGUE = copy.deepcopy(G.CATALOGUE)
CATALOGUE["tools"].update({
    "search": {"kind": "read", "at_most": 2, "args": {"q": {"type": "string"}}},
    "wire": {"kind": "read", "order": {"not_after": ["untrusted"]},
             "args": {"account": {"type": "string"}, "amount": {"type": "number"}}},
    "store_row": {"kind": "read", "args": {"table": {"type": "string"}, "row": {"type": "string", "role": "content"}}},
})


def guard(**kw: Any) -> Guard:
    return Guard(CATALOGUE, **kw)


def tc(name: str, args: dict | None = None, id: Any = "x") -> dict:
    """A tool call with exactly the id given (None, "" or one shared by several calls)."""
    return {"name": name, "args": args or {}, "id": id, "type": "tool_call"}


def middleware(g: Guard, *turns: Any) -> Any:
    from langchain.agents import create_agent

    return create_agent(model(*turns), TOOLS, middleware=[g], checkpointer=InMemorySaver(), name="agent")


def _loop(g: Guard, tools_node: Any, *turns: Any) -> Any:
    m = model(*turns).bind_tools(TOOLS)

    def agent_node(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    sg = StateGraph(GuardState)
    sg.add_node("agent", agent_node)
    sg.add_node("tools", tools_node)
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    return sg.compile(checkpointer=InMemorySaver())


def tool_node(g: Guard, *turns: Any) -> Any:
    return _loop(g, g.tool_node(TOOLS), *turns)


def wrapper(g: Guard, *turns: Any, **kw: Any) -> Any:
    return _loop(g, ToolNode(TOOLS, wrap_tool_call=g.wrap_tool_call, **kw), *turns)


def step(g: Guard, *turns: Any) -> Any:
    """A step that runs each call of the model's latest message through `guard.call` itself."""
    from langchain_core.messages import ToolMessage

    m = model(*turns).bind_tools(TOOLS)
    by_name = {t.name: t for t in TOOLS}

    def agent_node(state: GuardState):
        return {"messages": [m.invoke(state["messages"])]}

    def run_calls(state: GuardState):
        last = state["messages"][-1]
        out = []
        for c in last.tool_calls:
            r = g.call(by_name[c["name"]], c["args"], state)
            out.append(ToolMessage(content=str(r.output) if r.ran else r.message, tool_call_id=c.get("id") or "?"))
        return {"messages": out}

    sg = StateGraph(GuardState)
    sg.add_node("agent", agent_node)
    sg.add_node("tools", run_calls)
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    return sg.compile(checkpointer=InMemorySaver())


#: The four places, by name, for parametrised tests.
PLACES = {"middleware": middleware, "tool_node": tool_node, "wrapper": wrapper, "step": step}

__all__ = ["AIMessage", "PLACES"]
