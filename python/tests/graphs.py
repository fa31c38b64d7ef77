"""The graphs the exporter is tested on, built with real LangGraph and fake chat models.

The same graphs as ../shared/corpus/langgraph (the earlier research exporter's corpus):
the docs' patterns and the prebuilt constructors. Each builder returns (compiled graph,
inputs to run it with, resume values for its pauses: `None` resumes a compile-time pause by
streaming `None`, anything else is given as `Command(resume=value)`). Tools: read_inbox (reads outside
text), get_order (read), refund_order (write).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, Send, interrupt

from stalwart_export import catalogue_words


class ToolCallingFakeModel(FakeMessagesListChatModel):
    """A scripted chat model whose bind_tools returns `self.bind(tools=[...])`, as a real
    provider does (langchain-core's fakes raise NotImplementedError there)."""

    def bind_tools(self, tools: Any, **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def call(name: str, args: dict | None = None, i: int = 0) -> dict:
    return {"name": name, "args": args or {}, "id": f"call_{name}_{i}", "type": "tool_call"}


def model(*turns: list[dict] | str) -> ToolCallingFakeModel:
    """A model answering with the given turns: a list of tool calls, or a final text."""
    msgs = [AIMessage(content=t) if isinstance(t, str) else AIMessage(content="", tool_calls=t) for t in turns]
    return ToolCallingFakeModel(responses=msgs)


@catalogue_words(kind="read", reads_outside=True)
@tool
def read_inbox(folder: str = "inbox") -> str:
    """Read the newest e-mails in the user's mailbox folder (untrusted outside text)."""
    return "From: customer. Please refund order 42."


@tool
@catalogue_words(kind="read")
def get_order(order_id: str) -> str:
    """Look up an order by id."""
    return f"order {order_id}: 30 EUR, paid"


@tool
def refund_order(order_id: str, amount: float) -> str:
    """Refund an order (moves money)."""
    return f"refunded {amount} on {order_id}"


#: refund_order's words come from a mapping, as a user without the decorator gives them.
WORDS = {"refund_order": {"kind": "write"}}

TOOLS = [read_inbox, get_order, refund_order]


def script() -> ToolCallingFakeModel:
    """inbox -> order -> refund -> answer."""
    return model(
        [call("read_inbox", {"folder": "inbox"})],
        [call("get_order", {"order_id": "42"})],
        [call("refund_order", {"order_id": "42", "amount": 30.0})],
        "done",
    )


def ask(text: str = "handle the inbox") -> dict:
    return {"messages": [HumanMessage(content=text)]}


# --------------------------------------------------------------------- (a) (b) prebuilt
def build_react_agent():
    from langgraph.prebuilt import create_react_agent

    return create_react_agent(script(), TOOLS, name="react_agent"), ask(), []


def build_create_agent():
    from langchain.agents import create_agent

    return create_agent(script(), TOOLS, name="create_agent"), ask(), []


def build_react_agent_interrupt():
    from langgraph.prebuilt import create_react_agent

    g = create_react_agent(script(), TOOLS, interrupt_before=["tools"], checkpointer=InMemorySaver(),
                           name="react_agent_interrupt")
    return g, ask(), [None, None, None]


# --------------------------------------------------------------------- (c) conditional edges
def build_conditional_edges():
    from langgraph.prebuilt import ToolNode, tools_condition

    m = script().bind_tools(TOOLS)

    def agent(state: MessagesState):
        return {"messages": [m.invoke(state["messages"])]}

    def route_after_tools(state: MessagesState):  # no annotation, no path_map
        last = state["messages"][-1]
        return "audit" if isinstance(last, ToolMessage) and last.name == "refund_order" else "agent"

    def audit(state: MessagesState):
        return {"messages": [AIMessage(content="audited")]}

    def route_audit(state: MessagesState):
        return "again"

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(TOOLS))
    g.add_node("audit", audit)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_conditional_edges("tools", route_after_tools)
    g.add_conditional_edges("audit", route_audit, {"again": "agent", "stop": END})
    return g.compile(name="conditional_edges"), ask(), []


# --------------------------------------------------------------------- (d) Command routing
class CmdState(TypedDict, total=False):
    order_id: str
    amount: float
    log: Annotated[list, operator.add]


def build_command_routing():
    def decide(state: CmdState) -> Command[Literal["lookup", "refund_step"]]:
        return Command(goto="lookup", update={"log": ["decide"]})

    def lookup(state: CmdState) -> Command:
        get_order.invoke({"order_id": state.get("order_id", "42")})
        nxt = "escalate" if state.get("amount", 30) > 10 else "refund_step"
        return Command(goto=nxt, update={"log": ["lookup"]})

    def escalate(state: CmdState):
        if state.get("amount", 0) > 1000:
            return Command(goto=END)
        return Command(goto="refund_step", update={"log": ["escalate"]})

    def refund_step(state: CmdState):
        refund_order.invoke({"order_id": state.get("order_id", "42"), "amount": state.get("amount", 30.0)})
        return {"log": ["refund"]}

    g = StateGraph(CmdState)
    g.add_node("decide", decide)
    g.add_node("lookup", lookup)
    g.add_node("escalate", escalate, destinations=("refund_step", END))
    g.add_node("refund_step", refund_step)
    g.add_edge(START, "decide")
    g.add_edge("refund_step", END)
    return g.compile(name="command_routing"), {"order_id": "42", "amount": 30.0, "log": []}, []


# --------------------------------------------------------------------- (e) Send map-reduce
class JokeState(TypedDict, total=False):
    subject: str
    subjects: list[str]
    jokes: Annotated[list, operator.add]
    best: str


def build_send_map_reduce():
    def generate_topics(state: JokeState):
        return {"subjects": ["cats", "dogs"]}

    def continue_to_jokes(state: JokeState):
        return [Send("generate_joke", {"subject": s}) for s in state["subjects"]]

    def generate_joke(state: JokeState):
        return {"jokes": [f"a joke about {state['subject']}"]}

    def best_joke(state: JokeState):
        return {"best": state["jokes"][0]}

    g = StateGraph(JokeState)
    g.add_node("generate_topics", generate_topics)
    g.add_node("generate_joke", generate_joke)
    g.add_node("best_joke", best_joke)
    g.add_edge(START, "generate_topics")
    g.add_conditional_edges("generate_topics", continue_to_jokes, ["generate_joke"])
    g.add_edge("generate_joke", "best_joke")
    g.add_edge("best_joke", END)
    return g.compile(name="send_map_reduce"), {"subject": "animals"}, []


# --------------------------------------------------------------------- (f) subgraphs
def build_subgraph_parent():
    from langgraph.prebuilt import create_react_agent

    worker = create_react_agent(script(), TOOLS, name="worker")

    class SumState(TypedDict, total=False):
        text: str

    def draft(state: SumState):
        return {"text": "draft"}

    def polish(state: SumState):
        return {"text": state["text"] + " (polished)"}

    s = StateGraph(SumState)
    s.add_node("draft", draft)
    s.add_node("polish", polish)
    s.add_edge(START, "draft")
    s.add_edge("draft", "polish")
    s.add_edge("polish", END)
    summarizer = s.compile(name="summarizer")

    def intake(state: MessagesState):
        return {"messages": [HumanMessage(content="please look at the inbox")]}

    def call_summarizer(state: MessagesState):
        out = summarizer.invoke({"text": str(state["messages"][-1].content)})
        return {"messages": [AIMessage(content=out["text"])]}

    g = StateGraph(MessagesState)
    g.add_node("intake", intake)
    g.add_node("worker", worker)
    g.add_node("call_summarizer", call_summarizer)
    g.add_edge(START, "intake")
    g.add_edge("intake", "worker")
    g.add_edge("worker", "call_summarizer")
    g.add_edge("call_summarizer", END)
    return g.compile(name="subgraph_parent"), ask(), []


# --------------------------------------------------------------------- (g) multi-agent
def build_supervisor():
    from langgraph.prebuilt import create_react_agent
    from langgraph_supervisor import create_supervisor

    research = create_react_agent(model([call("read_inbox")], "inbox read"), [read_inbox], name="research_expert")
    billing = create_react_agent(model([call("get_order", {"order_id": "42"})],
                                       [call("refund_order", {"order_id": "42", "amount": 30.0})], "refunded"),
                                 [get_order, refund_order], name="billing_expert")
    sup_model = model([call("transfer_to_research_expert", i=1)], [call("transfer_to_billing_expert", i=2)], "all done")
    g = create_supervisor([research, billing], model=sup_model).compile(name="supervisor")
    return g, ask(), []


def build_swarm():
    from langchain.agents import create_agent
    from langgraph_swarm import create_handoff_tool, create_swarm

    alice = create_agent(model([call("read_inbox")], [call("transfer_to_bob", i=1)]),
                         [read_inbox, create_handoff_tool(agent_name="bob", description="Transfer to Bob (billing)")],
                         name="alice")
    bob = create_agent(model([call("get_order", {"order_id": "42"})],
                             [call("refund_order", {"order_id": "42", "amount": 30.0})], "refunded"),
                       [get_order, refund_order, create_handoff_tool(agent_name="alice", description="Transfer to Alice")],
                       name="bob")
    g = create_swarm([alice, bob], default_active_agent="alice").compile(checkpointer=InMemorySaver(), name="swarm")
    return g, ask(), []


# --------------------------------------------------------------------- (h) pauses
def build_interrupt_review_node():
    from langgraph.prebuilt import ToolNode

    m = script().bind_tools(TOOLS)

    def call_llm(state: MessagesState):
        return {"messages": [m.invoke(state["messages"])]}

    def route_after_llm(state: MessagesState) -> Literal["__end__", "human_review_node"]:
        return "human_review_node" if state["messages"][-1].tool_calls else END

    def human_review_node(state: MessagesState) -> Command[Literal["call_llm", "run_tool"]]:
        last = state["messages"][-1]
        review = interrupt({"question": "Is this correct?", "tool_call": last.tool_calls[-1]})
        if review.get("action") == "continue":
            return Command(goto="run_tool")
        msg = ToolMessage(content="rejected by the reviewer", name=last.tool_calls[-1]["name"],
                          tool_call_id=last.tool_calls[-1]["id"])
        return Command(goto="call_llm", update={"messages": [msg]})

    g = StateGraph(MessagesState)
    g.add_node("call_llm", call_llm)
    g.add_node("run_tool", ToolNode(TOOLS))
    g.add_node("human_review_node", human_review_node)
    g.add_edge(START, "call_llm")
    g.add_conditional_edges("call_llm", route_after_llm)
    g.add_edge("run_tool", "call_llm")
    return (g.compile(checkpointer=InMemorySaver(), name="interrupt_review_node"), ask(),
            [{"action": "continue"}] * 3)


def add_human_in_the_loop(t):
    """The docs' wrapper: the tool asks a person before it runs."""
    from langchain_core.tools import tool as create_tool

    @create_tool(t.name, description=t.description, args_schema=t.args_schema)
    def call_tool_with_interrupt(**tool_input):
        response = interrupt({"action": t.name, "args": tool_input})
        if response["type"] == "accept":
            return t.invoke(tool_input)
        if response["type"] == "edit":
            return t.invoke(response["args"])
        return f"the person declined: {response.get('args')}"

    return call_tool_with_interrupt


def build_interrupt_in_tool():
    from langgraph.prebuilt import create_react_agent

    tools = [read_inbox, get_order, add_human_in_the_loop(refund_order)]
    g = create_react_agent(script(), tools, checkpointer=InMemorySaver(), name="interrupt_in_tool")
    return g, ask(), [{"type": "accept"}]


def build_hitl_middleware():
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    mw = HumanInTheLoopMiddleware(interrupt_on={"refund_order": True, "get_order": False})
    g = create_agent(script(), TOOLS, middleware=[mw], checkpointer=InMemorySaver(), name="hitl_middleware")
    return g, ask(), [{"decisions": [{"type": "approve"}]}]


def build_hitl_middleware_per_call():
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    mw = HumanInTheLoopMiddleware(
        interrupt_on={
            "refund_order": {"allowed_decisions": ["approve", "reject"],
                             "when": lambda req: req.tool_call["args"].get("amount", 0) > 10},
            "get_order": True,
        },
        interrupt_mode="per_call",
    )
    g = create_agent(script(), TOOLS, middleware=[mw], checkpointer=InMemorySaver(), name="hitl_middleware_per_call")
    return g, ask(), [{"type": "approve"}, {"type": "approve"}]


# --------------------------------------------------------------------- extra: edge cases
class EdgeState(TypedDict, total=False):
    a: str
    b: str
    merged: str
    report: str


def build_edge_cases():
    def fetch_a(state: EdgeState):
        return {"a": "A"}

    def fetch_b(state: EdgeState):
        return {"b": "B"}

    def merge(state: EdgeState):
        return {"merged": state["a"] + state["b"]}

    def on_merge_error(state: EdgeState) -> Command[Literal["report/final"]]:
        return Command(goto="report/final", update={"merged": "error"})

    def report(state: EdgeState):
        return {"report": f"report of {state['merged']}"}

    g = StateGraph(EdgeState)
    g.add_node("fetch_a", fetch_a)
    g.add_node("fetch_b", fetch_b)
    g.add_node("merge", merge, error_handler=on_merge_error)
    g.add_node("report/final", report)
    g.add_edge(START, "fetch_a")
    g.add_edge(START, "fetch_b")
    g.add_edge(["fetch_a", "fetch_b"], "merge")
    g.add_edge("merge", "report/final")
    return (g.compile(checkpointer=InMemorySaver(), interrupt_after=["merge"], name="edge_cases"), {},
            [None])


BUILDERS = {
    "react_agent": build_react_agent,
    "create_agent": build_create_agent,
    "react_agent_interrupt": build_react_agent_interrupt,
    "conditional_edges": build_conditional_edges,
    "command_routing": build_command_routing,
    "send_map_reduce": build_send_map_reduce,
    "subgraph_parent": build_subgraph_parent,
    "supervisor": build_supervisor,
    "swarm": build_swarm,
    "interrupt_review_node": build_interrupt_review_node,
    "interrupt_in_tool": build_interrupt_in_tool,
    "hitl_middleware": build_hitl_middleware,
    "hitl_middleware_per_call": build_hitl_middleware_per_call,
    "edge_cases": build_edge_cases,
}
