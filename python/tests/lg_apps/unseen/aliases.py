"""Tools reached through a module-level bound method, a `functools.partial` or a default argument
(issue 28 item 2), and a library call hidden the same way."""

from __future__ import annotations

import functools
import urllib.request

from langgraph.graph import MessagesState

from . import tools

post = tools.publish_post.invoke
post_hello = functools.partial(tools.publish_post.invoke, {"text": "hello"})
fetch = functools.partial(urllib.request.urlopen, timeout=10)


def bound_alias(state: MessagesState):
    post({"text": "hi"})  # <- bound alias
    return {}


def partial_alias(state: MessagesState):
    post_hello()  # <- partial alias
    return {}


def default_arg(state: MessagesState, publish=tools.publish_post.invoke):
    publish({"text": "hi"})  # <- default arg
    return {}


def library_partial(state: MessagesState):
    fetch("https://example.org/hook")  # <- library partial
    return {}


SHAPES = {f.__name__: f for f in (bound_alias, partial_alias, default_arg)}
