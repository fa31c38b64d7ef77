"""(c) The memory-agent template: the model is bound to a plain function
(`bind_tools([tools.upsert_memory])`), and `store_memory` runs `upsert_memory(**tc["args"], ...)`
for each tool call of the last message: a hand-written tool node over plain functions."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, MessagesState, StateGraph

from .._fake import call, scripted
from . import tools

llm = scripted([call("upsert_memory", {"content": "likes tea", "context": "chat"})], "noted")


def call_model(state: MessagesState):
    msg = llm.bind_tools([tools.upsert_memory]).invoke(state["messages"])
    return {"messages": [msg]}


def store_memory(state: MessagesState):
    tool_calls = state["messages"][-1].tool_calls
    saved = [tools.upsert_memory(**tc["args"], user_id="u1") for tc in tool_calls]
    results = [{"role": "tool", "content": mem, "tool_call_id": tc["id"]} for tc, mem in zip(tool_calls, saved)]
    return {"messages": results}


def route_message(state: MessagesState) -> Literal["store_memory", "__end__"]:
    return "store_memory" if state["messages"][-1].tool_calls else END


b = StateGraph(MessagesState)
b.add_node("call_model", call_model)
b.add_node("store_memory", store_memory)
b.add_edge(START, "call_model")
b.add_conditional_edges("call_model", route_message)
b.add_edge("store_memory", "call_model")
graph = b.compile(name="memory_agent")


FUNCS = {"upsert_memory": tools.upsert_memory}


def store_memory_registry(state: MessagesState):
    out = []
    for tc in state["messages"][-1].tool_calls:
        args = tc["args"]
        out.append({"role": "tool", "content": FUNCS[tc["name"]](**args), "tool_call_id": tc["id"]})
    return {"messages": out}


def store_memory_unknown(state: MessagesState, config):
    run = config["configurable"]["runner"]
    return {"messages": [{"role": "tool", "content": run(**tc["args"]), "tool_call_id": tc["id"]}
                         for tc in state["messages"][-1].tool_calls]}  # <- unknown runner


def with_store(store_node):
    g = StateGraph(MessagesState)
    g.add_node("call_model", call_model)
    g.add_node("store_memory", store_node)
    g.add_edge(START, "call_model")
    g.add_conditional_edges("call_model", route_message)
    g.add_edge("store_memory", "call_model")
    return g.compile(name="memory_agent")
