"""Steps that run code or a shell command themselves (issue 28: code run by exec/eval or a shell is
unseen): a data-science agent's executor helper and REPL object, `exec`/`eval` in the node, and a
shell step running the model's command."""

from __future__ import annotations

import os
import subprocess

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph

from .executor import LocalREPL, execute_code

repl = LocalREPL()


def run_code(state: MessagesState):
    code = state["messages"][-1].content.split("```python")[-1].split("```")[0]
    return {"messages": [AIMessage(content=execute_code(code))]}  # <- executor


def run_repl(state: MessagesState):
    call = state["messages"][-1].tool_calls[0]
    return {"messages": [ToolMessage(content=repl.run(call["args"]["code"]), tool_call_id=call["id"])]}  # <- repl


def run_fresh_repl(state: MessagesState):
    last = state["messages"][-1]
    return {"messages": [AIMessage(content=LocalREPL().run(last.content))]}  # <- fresh repl


def exec_inline(state: MessagesState):
    exec(state["messages"][-1].content)  # noqa: S102  # <- exec
    return {}


def eval_constant(state: MessagesState):
    total = eval("sum(range(10))")  # noqa: S307  # <- eval
    return {"messages": [AIMessage(content=str(total))]}


def shell(state: MessagesState):
    command = state["messages"][-1].content
    done = subprocess.run(command, shell=True, capture_output=True, text=True)  # <- shell
    return {"messages": [AIMessage(content=done.stdout)]}


def os_shell(state: MessagesState):
    os.system(state["messages"][-1].content)  # noqa: S605  # <- os.system
    return {}


def one_step(fn):
    b = StateGraph(MessagesState)
    b.add_node("act", fn)
    b.add_edge(START, "act")
    return b.compile(name=fn.__name__)


SHAPES = {f.__name__: f for f in (run_code, run_repl, run_fresh_repl, exec_inline, eval_constant, shell, os_shell)}
