"""(a) A model made at run time inside the node: the react-agent template (`load_chat_model(...)
.bind_tools(TOOLS)` in `call_model`), `init_chat_model(...)` called in the node itself, and
`init_chat_model` binding tools the exporter cannot name."""

from __future__ import annotations

from typing import Literal

from langchain.chat_models import init_chat_model
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from .helpers import load_chat_model
from .tools import TOOLS


def route_model_output(state: MessagesState) -> Literal["__end__", "tools"]:
    return "tools" if state["messages"][-1].tool_calls else END


def _build(call_model, name):
    b = StateGraph(MessagesState)
    b.add_node("call_model", call_model)
    b.add_node("tools", ToolNode(TOOLS))
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", route_model_output)
    b.add_edge("tools", "call_model")
    return b.compile(name=name)


async def call_model(state: MessagesState, config: RunnableConfig):
    model = load_chat_model(config["configurable"].get("model", "openai/gpt-4o")).bind_tools(TOOLS)
    response = await model.ainvoke(state["messages"])
    return {"messages": [response]}


def call_model_inline(state: MessagesState, config: RunnableConfig):
    llm = init_chat_model(config["configurable"]["model"], temperature=0)
    return {"messages": [llm.bind_tools(TOOLS).invoke(state["messages"])]}


def pick_tools(config):
    return config["configurable"]["tools"]


def call_model_unnamed(state: MessagesState, config: RunnableConfig):
    llm = init_chat_model(configurable_fields=("model", "model_provider"))
    return {"messages": [llm.bind_tools(pick_tools(config)).invoke(state["messages"])]}  # <- unnamed


react_template = _build(call_model, "react_template")
inline = _build(call_model_inline, "inline")
unnamed = _build(call_model_unnamed, "unnamed")


# The memory-agent template's module-level configurable model (init_chat_model() with no model:
# picked from the configuration at run time), used without bind_tools in the node.
configurable_llm = init_chat_model(configurable_fields=("model", "model_provider"))


def call_configurable(state: MessagesState, config: RunnableConfig):
    return {"messages": [configurable_llm.invoke(state["messages"], config)]}


configurable = _build(call_configurable, "configurable")


def plan_and_publish(state: MessagesState, config: RunnableConfig):
    """Makes a model at run time AND runs a tool itself (a planner that publishes its plan)."""
    from .tools import publish_post

    llm = init_chat_model(config["configurable"]["model"])
    plan = llm.invoke(state["messages"])  # <- planner
    publish_post.invoke({"text": plan.content})
    return {"messages": [plan]}


planner = _build(plan_and_publish, "planner")
