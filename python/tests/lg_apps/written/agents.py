"""Steps that run a tool with what the model wrote, written as data-science and research agents
write them: the model answers (with a tool call of a schema it is bound to, or with text), and the
next node, a plain function, runs the tool itself. Each `step_*` is built into the same graph by
`build(step)`: model -> step -> model, the model ending the run."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic import BaseModel, Field

from .._fake import call, scripted
from . import tools
from .tools import execute_sql, fetch_url, post_message, run_python, run_script, search_docs


class RunCode(BaseModel):
    """Code to run in the sandbox."""

    code: str = Field(description="Python code")


class Fetch(BaseModel):
    """A page to read."""

    url: str


class State(MessagesState):
    script: str


llm = scripted([call("RunCode", {"code": "print(1)"})], "done")


def call_model(state: State):
    return {"messages": [llm.bind_tools([RunCode, Fetch]).invoke(state["messages"])]}


def route(state: State) -> Literal["step", "__end__"]:
    return "step" if state["messages"][-1].tool_calls else END


# ----------------------------------------------------------------- the model's arguments, run
def step_tool_call_args(state: State):
    out = run_python.invoke(state["messages"][-1].tool_calls[0]["args"])
    return {"messages": [ToolMessage(out, tool_call_id=state["messages"][-1].tool_calls[0]["id"])]}


def step_content(state: State):
    last = state["messages"][-1]
    result = run_python.invoke({"code": last.content})
    return {"messages": [("user", result)]}


def step_sql_kwarg(state: State):
    msg = state["messages"][-1]
    rows = execute_sql(query=msg.content)
    return {"messages": [("user", str(rows))]}


def step_loop_invoke(state: State):
    last = state["messages"][-1]
    outs = []
    for tc in last.tool_calls:
        outs.append(ToolMessage(fetch_url.invoke(tc["args"]), tool_call_id=tc["id"]))
    return {"messages": outs}


def step_loop_spread(state: State):
    outs = []
    for tc in state["messages"][-1].tool_calls:
        outs.append(ToolMessage(execute_sql(**tc["args"]), tool_call_id=tc["id"]))
    return {"messages": outs}


def step_query_fstring(state: State):
    question = state["messages"][-1].content.strip()
    hits = search_docs.invoke({"query": f"site:docs {question}"})
    return {"messages": [("user", hits)]}


def step_helper(state: State):
    code = state["messages"][-1].content
    return {"messages": [("user", tools.run_snippet(code))]}


# ----------------------------------------------------------------- the code's own arguments
def step_constant(state: State):
    out = run_python.invoke({"code": "import platform; print(platform.node())"})
    return {"messages": [("user", out)]}


def step_state_field(state: State):
    out = run_python.invoke({"code": state["script"]})
    page = fetch_url.invoke("https://status.example.com")
    return {"messages": [("user", out + page)]}


# ----------------------------------------------------------------- the model writes only some arguments
REPORT = "import sys; print(sys.stdin.read().upper())"


def step_script_stdin(state: State):
    out = run_script.invoke({"script": REPORT, "stdin": state["messages"][-1].content})
    return {"messages": [("user", out)]}


def step_post_summary(state: State):
    post_message.invoke({"channel": "#ops", "text": state["messages"][-1].content})
    return {}


def step_post_anywhere(state: State):
    last = state["messages"][-1]
    post_message.invoke({"channel": last.tool_calls[0]["args"]["channel"], "text": "done"})
    return {}


def build(step):
    b = StateGraph(State)
    b.add_node("call_model", call_model)
    b.add_node("step", step)
    b.add_edge(START, "call_model")
    b.add_conditional_edges("call_model", route)
    b.add_edge("step", "call_model")
    return b.compile(name="analyst")
