"""(b) Tools reached indirectly from a step: an attribute of the application's tools module, a
local alias of it, `getattr(module, "name")`, a registry with literal keys, a helper in another
module, an object attribute; and, unreadable, `getattr` with a name from the state."""

from __future__ import annotations

from langgraph.graph import START, MessagesState, StateGraph

from . import helpers, tools
from . import tools as t


def module_attribute(state: MessagesState):
    return {"messages": [("ai", tools.read_web.invoke({"url": "https://example.org"}))]}


def alias(state: MessagesState):
    fetch = t.read_web
    return {"messages": [("ai", fetch.invoke({"url": "https://example.org"}))]}


def by_getattr(state: MessagesState):
    return {"messages": [("ai", getattr(tools, "publish_post").invoke({"text": "hi"}))]}


def registry(state: MessagesState):
    return {"messages": [("ai", tools.REGISTRY["publish"].invoke({"text": "hi"}))]}


def helper(state: MessagesState):
    return {"messages": [("ai", helpers.share("hi"))]}


def object_attribute(state: MessagesState):
    return {"messages": [("ai", tools.BOX.publisher.invoke({"text": "hi"}))]}


def dynamic(state: MessagesState):
    name = state["messages"][-1].content
    return {"messages": [("ai", getattr(tools, name).invoke({"text": "hi"}))]}  # <- dynamic


def one_step(fn):
    b = StateGraph(MessagesState)
    b.add_node("act", fn)
    b.add_edge(START, "act")
    return b.compile(name=getattr(fn, "__name__", type(fn).__name__))


SHAPES = {f.__name__: f for f in (module_attribute, alias, by_getattr, registry, helper, object_attribute, dynamic)}


def helper_dynamic(state: MessagesState):
    return {"messages": [("ai", helpers.share_named(state["messages"][-1].content, "hi"))]}  # <- helper dynamic


def local_import(state: MessagesState):
    from . import tools as local_tools

    return {"messages": [("ai", local_tools.publish_post.invoke({"text": "hi"}))]}  # <- local import


SHAPES.update(helper_dynamic=helper_dynamic, local_import=local_import)


class Publisher:
    """A node that is an object: its tool an attribute of `self`."""

    def __init__(self) -> None:
        self.tool = tools.publish_post

    def __call__(self, state: MessagesState):
        return {"messages": [("ai", self.tool.invoke({"text": "hi"}))]}


SHAPES["self_attribute"] = Publisher()
