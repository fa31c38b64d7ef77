"""Issue 28 item 3: false findings the exporter gave on code teams really write, each shown on a
real LangGraph graph (exported) before it is fixed."""

from typing import Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from langgraph.types import Command

from graphs import get_order, refund_order
from stalwart_export import export_graph


class S(TypedDict, total=False):
    n: int


def _triage(state: S) -> Command[Literal["work", "__end__"]]:
    if state.get("n", 0) > 3:
        return Command(goto=END)
    return Command(goto="work", update={"n": state.get("n", 0) + 1})


def _work(state: S):
    return Command(goto="triage")


def _maybe(state: S):
    if state.get("n"):
        return Command(goto="triage")
    return {"n": 1}  # no Command: the branch halts here


def _edges_from(g: dict, node: str) -> list[dict]:
    return [e for e in g["edges"] if e["from"] == node]


def test_a_node_that_only_returns_command_has_no_edge_to_end():
    b = StateGraph(S)
    b.add_node("triage", _triage)
    b.add_node("work", _work)
    b.add_node("maybe", _maybe)
    b.add_edge(START, "maybe")
    g = export_graph(b.compile())
    # every return of `work` is Command(goto="triage"): it never halts, so no edge to __end__
    assert [(e["kind"], e["destinations"]) for e in _edges_from(g, "work")] == [("command", ["triage"])]
    # `triage` ends only by its own Command(goto=END)
    assert [(e["kind"], sorted(e["destinations"])) for e in _edges_from(g, "triage")] == [
        ("command", ["__end__", "work"])]
    # `maybe` can return a plain update: the branch halts there, so the implicit edge stays
    kinds = sorted((e["kind"], tuple(e["destinations"])) for e in _edges_from(g, "maybe"))
    assert kinds == [("command", ("triage",)), ("conditional", ("__end__",))]


def test_a_dict_of_models_is_not_a_tool_pick():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.tools import tool
    from langgraph.graph import MessagesState

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    models = {"fast": FakeListChatModel(responses=["a"]), "deep": FakeListChatModel(responses=["b"])}
    globals()["MODELS"] = models
    globals()["SETTINGS"] = {"model": "fast", "temperature": 0}

    def answer(state: MessagesState):
        model = MODELS[SETTINGS["model"]]  # noqa: F821
        return {"messages": [model.invoke(state["messages"])]}

    def summarise(state: MessagesState):
        return {"messages": [MODELS["deep"].invoke(state["messages"])]}  # noqa: F821

    b = StateGraph(MessagesState)
    b.add_node("answer", answer)
    b.add_node("summarise", summarise)
    b.add_edge(START, "answer")
    b.add_edge("answer", "summarise")
    b.add_edge("summarise", END)
    g = export_graph(b.compile())
    said = "\n".join(g.get("warnings", []))
    assert "holds no such tool" not in said, said
    assert "takes a tool from" not in said, said
    assert all(not n.get("tools") for n in g["nodes"] if n["id"] in ("answer", "summarise")), g["nodes"]
    del lookup


def test_a_dict_of_model_names_is_not_a_tool_pick():
    from langgraph.graph import MessagesState

    globals()["MODEL_NAMES"] = {"fast": "openai:gpt-4o-mini", "deep": "anthropic:claude-sonnet-4-5"}
    globals()["CONFIG"] = {"model": "fast"}

    def answer(state: MessagesState):
        from langchain.chat_models import init_chat_model

        model = init_chat_model(MODEL_NAMES[CONFIG["model"]])  # noqa: F821
        return {"messages": [model.invoke(state["messages"])]}

    def summarise(state: MessagesState):
        from langchain.chat_models import init_chat_model

        return {"messages": [init_chat_model(MODEL_NAMES["deep"]).invoke(state["messages"])]}  # noqa: F821

    b = StateGraph(MessagesState)
    b.add_node("answer", answer)
    b.add_node("summarise", summarise)
    b.add_edge(START, "answer")
    b.add_edge("answer", "summarise")
    b.add_edge("summarise", END)
    g = export_graph(b.compile())
    said = "\n".join(g.get("warnings", []))
    assert "holds no such tool" not in said, said
    assert "takes a tool from" not in said, said
    assert all(not n.get("tools") for n in g["nodes"] if n["id"] in ("answer", "summarise")), g["nodes"]


class Route(BaseModel):
    """Hand the conversation to a specialist."""

    destination: str = Field(description="billing or support")


def _router(state):
    calls = getattr(state["messages"][-1], "tool_calls", [])
    if not calls:
        return END
    return "billing" if calls[0]["name"] == "Route" else "tools"


def _supervised(supervisor) -> dict:
    from langgraph.graph import MessagesState
    from langgraph.prebuilt import ToolNode

    b = StateGraph(MessagesState)
    b.add_node("supervisor", supervisor)
    b.add_node("tools", ToolNode([get_order]))
    b.add_node("billing", lambda state: {"messages": []})
    b.add_edge(START, "supervisor")
    b.add_conditional_edges("supervisor", _router, ["tools", "billing", END])
    b.add_edge("tools", "supervisor")
    return export_graph(b.compile())


def _routes_by_signal(state):
    from langchain.chat_models import init_chat_model

    m = init_chat_model("openai:gpt-4o").bind_tools([get_order, Route])
    return {"messages": [m.invoke(state["messages"])]}


def _routes_and_runs(state):
    from langchain.chat_models import init_chat_model

    m = init_chat_model("openai:gpt-4o").bind_tools([Route])
    refund_order.invoke({"order_id": "42", "amount": 1.0})
    return {"messages": [m.invoke(state["messages"])]}


def test_a_routing_signal_bound_to_a_model_is_not_a_call():
    g = _supervised(_routes_by_signal)
    sup = next(n for n in g["nodes"] if n["id"] == "supervisor")
    # the model offers get_order (run by the tool node) and Route (read by the router): the
    # node calls neither itself, and Route is no tool of any node
    assert sup["kind"] == "model", sup
    assert not sup.get("tools") and not sup.get("opaque"), sup
    assert all("Route" not in (n.get("tools") or []) for n in g["nodes"])
    assert not any("directly" in w for w in g.get("warnings", [])), g["warnings"]


def test_a_step_that_binds_a_signal_and_runs_a_tool_itself_still_calls_it():
    # the attack: a schema class bound beside a direct call must not hide the call
    g = _supervised(_routes_and_runs)
    sup = next(n for n in g["nodes"] if n["id"] == "supervisor")
    assert sup["kind"] == "step" and sup["tools"] == ["refund_order"], sup
