"""Issue 27 item 7 (the exporter's half), SPEC 2.2 `hosted` and 12.1 "Anything the guard cannot see is
not credited": a model bound with a provider's own tool dict (`{"type": "web_search_preview"}`, a
code interpreter, a hosted MCP server, Anthropic's `web_search_20250305`) lets the provider call
that tool inside the model call, bringing outside text the guard never sees. The export lists
those tools as `hosted` on the model node, the catalogue gives each an entry, and a warning says
the guard cannot see them. Real LangGraph at the pinned versions, with a scripted model that
binds tool dicts as providers do (unchanged) and records what it was bound with."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition

import attacks as A
from stalwart_export import export_catalogue, export_graph
from stalwart_export.catalogue import init_words

#: Every tools list a ProviderModel was bound with.
BOUND: list[list] = []


class ProviderModel(FakeMessagesListChatModel):
    """A scripted chat model binding tools as ChatOpenAI and ChatAnthropic do: a provider's tool
    dict is passed on unchanged, a LangChain tool converted; the list is recorded in `BOUND`."""

    def bind_tools(self, tools: Any, **kwargs: Any):
        tools = [t if isinstance(t, dict) else convert_to_openai_tool(t) for t in tools]
        BOUND.append(tools)
        return self.bind(tools=tools, **kwargs)


def provider(*texts: str) -> ProviderModel:
    return ProviderModel(responses=[AIMessage(content=t) for t in texts or ("done",)])


@tool
def lookup(q: str) -> str:
    """Look a customer up in the shop's own records."""
    return q


WEB = {"type": "web_search_preview"}
CODE = {"type": "code_interpreter", "container": {"type": "auto"}}
FILES = {"type": "file_search", "vector_store_ids": ["vs_1"]}
MCP = {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp",
       "allowed_tools": ["ask_question", "read_wiki_structure"], "require_approval": "never"}
MCP_ALL = {"type": "mcp", "server_label": "tracker", "server_url": "https://mcp.tracker.example/mcp"}
ANTHROPIC_WEB = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}

WEB_DESC = ("provider-hosted (web_search_preview): searches the web; the provider runs it inside the model call, so "
            "the guard never sees its calls or what they return")


def _hosted_warning(node: str, names: str, where: str = "") -> str:
    return (f"node {node!r}{where} is bound with provider-hosted tools ({names}): the provider calls them inside the model "
            "call, so the guard never sees those calls or the outside text they bring; exported as `hosted` on the "
            "node (plain calls, reading outside text: the verifier does not credit them as guarded); to have them "
            "checked, give the model a LangChain tool of your own instead, bound to the guard's tool node")


def _node(export: dict, node_id: str) -> dict:
    return next(n for n in export["nodes"] if n["id"] == node_id)


@pytest.fixture(autouse=True)
def _fresh():
    BOUND.clear()


def test_create_agent_web_search_preview():
    """The attack's shape: `create_agent(model, tools=[lookup, {"type": "web_search_preview"}])`.
    The dict reaches the provider's model (the run binds it) and not the tool node; today the export
    said nothing. Now: `hosted` on the model node, a warning, a catalogue entry."""
    agent = create_agent(provider(), [lookup, WEB], name="desk")
    agent.invoke({"messages": [HumanMessage(content="what is new?")]})
    assert BOUND and WEB in BOUND[-1], "create_agent binds the hosted tool to the model"

    ex = export_graph(agent, provenance=False)
    assert {k: v for k, v in _node(ex, "model").items() if k != "location"} == {
        "id": "model", "kind": "model", "hosted": ["web_search_preview"]}
    assert _node(ex, "tools")["tools"] == ["lookup"]
    assert ex["warnings"] == [_hosted_warning("model", "web_search_preview")]
    cat, warns = export_catalogue(agent, {"lookup": {"kind": "read"}}, with_warnings=True)
    assert cat["tools"]["web_search_preview"] == {"kind": "read", "reads_outside": True, "description": WEB_DESC,
                                                  "args": {}}
    assert warns == []


def test_bind_tools_in_a_hand_built_graph():
    """A node calling a module-level `model.bind_tools([...])` with a code interpreter and a file
    search, its LangChain tool on a ToolNode."""
    m = provider().bind_tools([lookup, CODE, FILES])

    def agent(state: MessagesState):
        return {"messages": [m.invoke(state["messages"])]}

    sg = StateGraph(MessagesState)
    sg.add_node("agent", agent)
    sg.add_node("tools", ToolNode([lookup]))
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    app = sg.compile()
    ex = export_graph(app, provenance=False)
    assert _node(ex, "agent")["hosted"] == ["code_interpreter", "file_search"]
    assert "hosted" not in _node(ex, "tools")
    assert _hosted_warning("agent", "code_interpreter, file_search") in ex["warnings"]
    cat = export_catalogue(app, {"lookup": {"kind": "read"}})
    assert cat["tools"]["code_interpreter"] == {
        "kind": "read", "reads_outside": True, "args": {},
        "description": "provider-hosted (code_interpreter): runs code the model writes in the provider's sandbox (its "
                       "effects stay there; its output and the container's files reach the model unseen); the provider "
                       "runs it inside the model call, so the guard never sees its calls or what they return"}
    assert cat["tools"]["file_search"]["kind"] == "read"
    assert cat["tools"]["file_search"]["reads_outside"] is True


def test_hosted_mcp_server_tools():
    """A hosted MCP server with `allowed_tools`: one hosted tool per tool, `<label>.<tool>`, of
    undeclared kind (a remote server's tool may write: read as a write until the words say); one
    without a list: one hosted tool for the whole server, and a warning. Words may declare them."""
    agent = create_agent(provider(), [lookup, MCP, MCP_ALL], name="desk")
    ex = export_graph(agent, provenance=False)
    assert _node(ex, "model")["hosted"] == ["deepwiki.ask_question", "deepwiki.read_wiki_structure", "tracker"]
    assert ex["warnings"] == [
        "the model of node 'model' is bound with the hosted MCP server 'tracker' without a list of its tools "
        "(allowed_tools): any tool of the server may be called; exported as one hosted tool 'tracker' of undeclared "
        "kind (read as a write); list the tools it may call in allowed_tools",
        _hosted_warning("model", "deepwiki.ask_question, deepwiki.read_wiki_structure, tracker")]
    cat, warns = export_catalogue(agent, {"lookup": {"kind": "read"}, "deepwiki.ask_question": {"kind": "read"}},
                                  with_warnings=True)
    assert cat["tools"]["deepwiki.ask_question"]["kind"] == "read"
    assert cat["tools"]["deepwiki.ask_question"]["reads_outside"] is True
    assert cat["tools"]["deepwiki.read_wiki_structure"]["kind"] is None
    assert cat["tools"]["tracker"]["kind"] is None
    assert any(w.startswith("tool 'deepwiki.read_wiki_structure' has kind null") for w in warns)
    assert any("hosted MCP server 'tracker'" in w for w in warns)


def test_openai_filter_form_of_allowed_tools():
    agent = create_agent(provider(), [dict(MCP, allowed_tools={"tool_names": ["ask_question"]})], name="desk")
    assert _node(export_graph(agent, provenance=False), "model")["hosted"] == ["deepwiki.ask_question"]


def test_anthropic_server_tool_and_a_name_clash():
    """Anthropic's `{"type": "web_search_20250305", "name": "web_search"}` is `web_search`; bound
    next to a LangChain tool of that very name it is renamed, with a warning."""
    agent = create_agent(provider(), [lookup, ANTHROPIC_WEB], name="desk")
    ex = export_graph(agent, provenance=False)
    assert _node(ex, "model")["hosted"] == ["web_search"]
    assert export_catalogue(agent, {"lookup": {"kind": "read"}})["tools"]["web_search"]["description"].startswith(
        "provider-hosted (web_search_20250305): searches the web")

    @tool
    def web_search(q: str) -> str:
        """The application's own search."""
        return q

    agent = create_agent(provider(), [web_search, ANTHROPIC_WEB], name="desk")
    ex = export_graph(agent, provenance=False)
    assert _node(ex, "model")["hosted"] == ["hosted_web_search"]
    assert _node(ex, "tools")["tools"] == ["web_search"]
    assert ex["warnings"][0] == ("the provider-hosted tool 'web_search' has the name of a tool of the graph: exported "
                                 "as 'hosted_web_search'")
    cat = export_catalogue(agent, {"web_search": {"kind": "read"}})
    assert cat["tools"]["web_search"]["description"] == "The application's own search."
    assert cat["tools"]["hosted_web_search"]["reads_outside"] is True


def test_unknown_provider_tool_is_never_dropped():
    """A tool dict of a type the exporter does not know: hosted under its type's name, reading
    outside text, its kind undeclared, and a warning."""
    agent = create_agent(provider(), [lookup, {"type": "weather_radar_20300101", "region": "eu"}], name="desk")
    ex = export_graph(agent, provenance=False)
    assert _node(ex, "model")["hosted"] == ["weather_radar"]
    assert ex["warnings"][0] == (
        "the model of node 'model' is bound with the provider tool {'type': 'weather_radar_20300101'}, which the "
        "exporter does not know: exported as the hosted tool 'weather_radar', reading outside text, of undeclared "
        "kind (read as a write); declare its words (e.g. {\"weather_radar\": {\"kind\": \"read\"}}) when it only reads")
    entry = export_catalogue(agent, {"lookup": {"kind": "read"}})["tools"]["weather_radar"]
    assert entry["kind"] is None and entry["reads_outside"] is True
    # what the provider runs for it is not read (SPEC 12.5): an opaque entry, QG024 (issue 28)
    assert _node(ex, "model")["opaque"] == [{
        "what": "model", "why": "the model is bound with the provider tool 'weather_radar' (type "
                                "'weather_radar_20300101'), which the exporter does not know: what the provider runs "
                                "for it is not read"}]


def test_client_side_schemas_are_not_hosted():
    """A tool given as an OpenAI function schema or an Anthropic client tool (`input_schema`) is run
    by the application, not the provider: not hosted."""
    fn = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}
    client = {"name": "get_weather", "description": "w", "input_schema": {"type": "object", "properties": {}}}
    custom = {"type": "custom", "name": "grammar_tool"}
    agent = create_agent(provider(), [lookup, fn, client, custom], name="desk")
    ex = export_graph(agent, provenance=False)
    assert "hosted" not in _node(ex, "model")
    assert not [w for w in ex["warnings"] if "hosted" in w]


def test_create_react_agent_and_a_subgraph():
    """langgraph.prebuilt's create_react_agent binds dict tools to its model too; inside a
    subgraph the warning names the subgraph."""
    inner = create_react_agent(provider(), [lookup, WEB], name="researcher")
    ex = export_graph(inner, provenance=False)
    assert _node(ex, "agent")["hosted"] == ["web_search_preview"]

    sg = StateGraph(MessagesState)
    sg.add_node("research", inner)
    sg.add_edge(START, "research")
    ex = export_graph(sg.compile(), provenance=False)
    sub = ex["subgraphs"][_node(ex, "research")["graph"]]
    assert _node(sub, "agent")["hosted"] == ["web_search_preview"]
    assert _hosted_warning("agent", "web_search_preview", " in subgraph 'researcher'") in ex["warnings"]


def test_init_words_lists_hosted_tools():
    words = init_words(create_agent(provider(), [lookup, WEB, MCP_ALL], name="desk"))
    assert words["web_search_preview"]["kind"] == "read"
    assert words["web_search_preview"]["reads_outside"] is True
    assert words["tracker"]["kind"] is None


# ------------------------------------------------------------------ end to end, with the verifier
def _knows_hosted(binary: str, tmp) -> bool:
    """Does the verifier read `hosted`? A tiny export whose model hosts a web search: a verifier
    that ignores the key lints the catalogue entry `tool_never_bound`."""
    g = {"format": "qls-graph/1", "name": "probe", "nodes": [
        {"id": "__start__", "kind": "start"}, {"id": "m", "kind": "model", "hosted": ["hosted_probe"]},
        {"id": "__end__", "kind": "end"}],
        "edges": [{"from": "__start__", "kind": "fixed", "destinations": ["m"]},
                  {"from": "m", "kind": "conditional", "destinations": ["__end__"]}]}
    c = {"format": "qls-catalogue/1", "tools": {"hosted_probe": {"kind": "read", "reads_outside": True}}}
    (tmp / "probe.json").write_text(json.dumps(g))
    (tmp / "probe-cat.json").write_text(json.dumps(c))
    p = subprocess.run([binary, "verify", "--graph", str(tmp / "probe.json"), "--catalogue",
                        str(tmp / "probe-cat.json")], capture_output=True, text=True, timeout=300)
    if p.returncode == 2 and "hosted" in p.stderr:
        return False
    return "tool_never_bound" not in p.stdout


def test_verifier_does_not_credit_a_guarded_agent_with_a_hosted_search(binary, tmp_path):
    """End to end: every LangChain tool of the agent goes through the guard (create_agent
    middleware), and the model also has a hosted web search; `wire` may not follow outside text.
    The guard never sees the search, so the gate must fail and name the hosted tool. Needs the
    verifier to read `hosted` (SPEC 2.2; being taught in parallel): skipped, saying so, until it
    does."""
    if not _knows_hosted(binary, tmp_path):
        pytest.skip("this stalwart binary does not read `hosted` on model nodes yet (SPEC 2.2): enable after the "
                    "Rust side of issue 27 item 7 is merged")
    agent = create_agent(provider(), [A.search, A.wire, WEB], middleware=[A.guard()], checkpointer=InMemorySaver(),
                         name="desk")
    ex = export_graph(agent, base=str(tmp_path))
    assert _node(ex, "tools")["kind"] == "tools"
    cat = export_catalogue(agent)
    (tmp_path / "g.json").write_text(json.dumps(ex))
    (tmp_path / "c.json").write_text(json.dumps(cat))
    p = subprocess.run([binary, "verify", "--graph", str(tmp_path / "g.json"), "--catalogue",
                        str(tmp_path / "c.json")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    blocking = p.stdout.split("Blocking:", 1)[1].split("Warnings:", 1)[0] if "Blocking:" in p.stdout else ""
    assert "web_search_preview" in blocking, p.stdout
    assert "wire" in blocking, p.stdout



SEARCH_KIND = "web_search_preview"


def test_hosted_dict_written_in_the_node_code():
    """The node binds at run time, the provider's dict written in its own code (a literal, a
    module constant for its type, and a type it cannot read): each is hosted, none dropped."""
    m = provider()

    def agent(state: MessagesState):
        bound = m.bind_tools([lookup, {"type": SEARCH_KIND}, {"type": "mcp", "server_label": "wiki",
                                                             "allowed_tools": ["ask"]}])
        return {"messages": [bound.invoke(state["messages"])]}

    def agent2(state: MessagesState):
        kind = state["messages"][-1].content
        return {"messages": [m.bind(tools=[{"type": kind}]).invoke(state["messages"])]}

    for fn, hosted in ((agent, ["web_search_preview", "wiki.ask"]), (agent2, ["provider_tool"])):
        sg = StateGraph(MessagesState)
        sg.add_node("agent", fn)
        sg.add_node("tools", ToolNode([lookup]))
        sg.add_edge(START, "agent")
        sg.add_conditional_edges("agent", tools_condition)
        sg.add_edge("tools", "agent")
        app = sg.compile()
        ex = export_graph(app, provenance=False)
        assert _node(ex, "agent")["hosted"] == hosted
    assert ex["warnings"][0] == (
        "the model of node 'agent' is bound with a provider tool dict whose type the exporter cannot read from the "
        "code: exported as the hosted tool 'provider_tool', reading outside text, of undeclared kind (read as a "
        "write); declare its words (e.g. {\"provider_tool\": {\"kind\": \"read\"}}) when it only reads")


TOOLS_WITH_SEARCH = [lookup, {"type": "web_search_preview"}]


def test_a_module_list_bound_at_run_time():
    """A module-level tool list holding the provider's dict, bound inside the node at run time."""
    m = provider()

    def agent(state: MessagesState):
        return {"messages": [m.bind_tools(TOOLS_WITH_SEARCH).invoke(state["messages"])]}

    sg = StateGraph(MessagesState)
    sg.add_node("agent", agent)
    sg.add_edge(START, "agent")
    app = sg.compile()
    app.invoke({"messages": [HumanMessage(content="x")]})
    assert {"type": "web_search_preview"} in BOUND[-1]
    assert _node(export_graph(app, provenance=False), "agent")["hosted"] == ["web_search_preview"]


def test_a_fallback_model_and_a_prompt_sequence():
    """`prompt | model.bind_tools([...]).with_fallbacks([other.bind_tools([..., hosted])])`: the
    fallback model's hosted tool may run when the first model fails."""
    from langchain_core.prompts import ChatPromptTemplate

    first = provider().bind_tools([lookup])
    other = provider().bind_tools([lookup, FILES])
    chain = ChatPromptTemplate.from_messages([("placeholder", "{messages}")]) | first.with_fallbacks([other])

    def agent(state: MessagesState):
        return {"messages": [chain.invoke({"messages": state["messages"]})]}

    sg = StateGraph(MessagesState)
    sg.add_node("agent", agent)
    sg.add_edge(START, "agent")
    assert _node(export_graph(sg.compile(), provenance=False), "agent")["hosted"] == ["file_search"]


# ------------------------------------------------------------------ in chains (issue 28)
def _chain_graph(node: Any) -> Any:
    sg = StateGraph(MessagesState)
    sg.add_node("agent", node)
    sg.add_node("tools", ToolNode([lookup]))
    sg.add_edge(START, "agent")
    sg.add_conditional_edges("agent", tools_condition)
    sg.add_edge("tools", "agent")
    return sg.compile()


def test_hosted_tools_bound_in_a_chain(binary, tmp_path):
    """`prompt | model.bind_tools([lookup, {"type": "web_search_preview"}])` as the node, and a
    module-level chain binding a code interpreter that the node's function invokes: the model node
    has them `hosted` (none is a tool the node calls); a provider dict of a type nobody knows is
    hosted too, and an opaque entry: the bare export fails the gate with QG024, and the words'
    `model: true` (with the tool's own words) declare it."""
    from langchain_core.prompts import ChatPromptTemplate

    prompt = ChatPromptTemplate.from_messages([("system", "Help the customer."), ("placeholder", "{messages}")])
    direct = _chain_graph(prompt | provider().bind_tools([lookup, WEB]) | (lambda m: {"messages": [m]}))
    n = _node(export_graph(direct, provenance=False), "agent")
    assert n["kind"] == "model" and n["hosted"] == ["web_search_preview"] and "tools" not in n and "opaque" not in n

    chain = prompt | provider().bind_tools([lookup, CODE])

    def agent(state: MessagesState):
        return {"messages": [chain.invoke({"messages": state["messages"]})]}

    n = _node(export_graph(_chain_graph(agent), provenance=False), "agent")
    assert n["kind"] == "model" and n["hosted"] == ["code_interpreter"] and "tools" not in n

    odd = _chain_graph(prompt | provider().bind_tools([lookup, {"type": "weather_radar_20300101"}])
                       | (lambda m: {"messages": [m]}))
    ex = export_graph(odd, provenance=False)
    n = _node(ex, "agent")
    assert n["hosted"] == ["weather_radar"] and [o["what"] for o in n["opaque"]] == ["model"]
    words = {"lookup": {"kind": "read"}, "weather_radar": {"kind": "read"}}
    (tmp_path / "g.json").write_text(json.dumps(ex))
    (tmp_path / "c.json").write_text(json.dumps(export_catalogue(odd, words)))
    p = subprocess.run([binary, "verify", "--graph", str(tmp_path / "g.json"), "--catalogue", str(tmp_path / "c.json"),
                        "--format", "json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    rules = {(f["rule"], f["subject"]) for f in json.loads(p.stdout)["findings"] if f["blocks"]}
    assert ("QG024", "model:agent") in rules, rules
    declared = _node(export_graph(odd, provenance=False, words={**words, "nodes": {"agent": {"model": True}}}), "agent")
    assert "opaque" not in declared and declared["declared"] == ["model"]


def test_the_cli_prints_an_unknown_provider_tools_warning_once(tmp_path, monkeypatch, capsys):
    """`python -m stalwart_export app:graph --catalogue cat.json`: the graph's and the catalogue's
    exports both read the unknown provider tool; its warning is printed once (before: twice)."""
    from stalwart_export.__main__ import main

    (tmp_path / "radar_app.py").write_text(
        "from langchain.agents import create_agent\n"
        "from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel\n"
        "from langchain_core.messages import AIMessage\n\n\n"
        "class Model(FakeMessagesListChatModel):\n"
        "    def bind_tools(self, tools, **kwargs):\n"
        "        return self.bind(tools=list(tools), **kwargs)\n\n\n"
        "graph = create_agent(Model(responses=[AIMessage(content='done')]),\n"
        "                     [{'type': 'weather_radar_20300101', 'region': 'eu'}], name='desk')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["radar_app:graph", "-o", str(tmp_path / "g.json"), "--catalogue", str(tmp_path / "c.json")]) == 0
    err = capsys.readouterr().err
    assert err.count("is bound with the provider tool {'type': 'weather_radar_20300101'}") == 1, err
