"""Per-call reviews and declarations in the export (SPEC 12.2, 12.3; issue 15.4-5): the Agent Inbox
review loop and HumanInTheLoopMiddleware as `call` interrupts, an unrecognised review as a
warning, and the words `input.reads_outside`, `nodes.<N>.calls` and `nodes.<N>.reviews`, with an
error at the word for what the graph lacks; each export verified by the Rust binary."""

import json
import subprocess
import sys
import textwrap

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

import graphs
from graphs import TOOLS, call, get_order, model, read_inbox, refund_order
from helpers import PYTHON_DIR
from stalwart_export import export_catalogue, export_graph

TOOLS_BY_NAME = {t.name: t for t in TOOLS}
AUTO = ["read_inbox", "get_order"]


def inbox_review_graph():
    """The Agent Inbox pattern: a node that asks about each tool call and runs it only when the
    answer accepts or edits it; reads are run unreviewed."""
    m = model([call("get_order", {"order_id": "42"}), call("refund_order", {"order_id": "42", "amount": 30.0}, i=1)],
              "done").bind_tools(TOOLS)

    def llm_call(state: MessagesState):
        return {"messages": [m.invoke(state["messages"])]}

    def interrupt_handler(state: MessagesState):
        result = []
        for tool_call in state["messages"][-1].tool_calls:
            if tool_call["name"] in AUTO:
                observation = TOOLS_BY_NAME[tool_call["name"]].invoke(tool_call["args"])
                result.append(ToolMessage(content=observation, tool_call_id=tool_call["id"]))
                continue
            response = interrupt([{"action_request": {"action": tool_call["name"], "args": tool_call["args"]}}])[0]
            if response["type"] == "accept":
                observation = TOOLS_BY_NAME[tool_call["name"]].invoke(tool_call["args"])
            elif response["type"] == "edit":
                observation = TOOLS_BY_NAME[tool_call["name"]].invoke(response["args"]["args"])
            else:
                observation = "the person ignored it"
            result.append(ToolMessage(content=observation, tool_call_id=tool_call["id"]))
        return {"messages": result}

    def route(state: MessagesState):
        return "interrupt_handler" if state["messages"][-1].tool_calls else END

    g = StateGraph(MessagesState)
    g.add_node("llm_call", llm_call)
    g.add_node("interrupt_handler", interrupt_handler)
    g.add_edge(START, "llm_call")
    g.add_conditional_edges("llm_call", route, {"interrupt_handler": "interrupt_handler", END: END})
    g.add_edge("interrupt_handler", "llm_call")
    return g.compile(checkpointer=InMemorySaver(), name="inbox_review")


def unrecognised_graph():
    """A node that asks once and then runs every call whatever the answer."""
    def careless(state: MessagesState):
        answer = interrupt({"calls": state["messages"][-1].tool_calls})
        for tool_call in state["messages"][-1].tool_calls:
            TOOLS_BY_NAME[tool_call["name"]].invoke(tool_call["args"])
        return {"messages": [AIMessage(content=str(answer))]}

    def again(state: MessagesState):
        return END

    g = StateGraph(MessagesState)
    g.add_node("careless", careless)
    g.add_edge(START, "careless")
    g.add_conditional_edges("careless", again, {"again": "careless", END: END})
    return g.compile(checkpointer=InMemorySaver(), name="careless")


def mail_graph():
    """A step that sends mail through an API client (no LangChain tool) after reading the inbox."""
    class Client:
        def send(self, to, body):
            return "sent"

    gmail = Client()

    def triage(state: MessagesState):
        return {"messages": [AIMessage(content=read_inbox.invoke({}))]}

    def send(state: MessagesState):
        gmail.send("boss@example.com", state["messages"][-1].content)
        return {}

    def review(state: MessagesState):
        decision = interrupt({"draft": state["messages"][-1].content})
        return {"messages": [AIMessage(content=str(decision))]}

    g = StateGraph(MessagesState)
    g.add_node("triage", triage)
    g.add_node("review", review)
    g.add_node("send", send)
    g.add_edge(START, "triage")
    g.add_edge("triage", "review")
    g.add_edge("review", "send")
    g.add_edge("send", END)
    return g.compile(checkpointer=InMemorySaver(), name="mail")


def verify(binary, tmp_path, export, cat):
    gp, cp = tmp_path / "graph.json", tmp_path / "catalogue.json"
    gp.write_text(json.dumps(export))
    cp.write_text(json.dumps(cat))
    p = subprocess.run([binary, "verify", "--graph", str(gp), "--catalogue", str(cp), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, {(f["rule"], f["subject"], f["node"]) for f in json.loads(p.stdout)["findings"]}


def interrupts(export):
    return {(i["node"], i["when"], i["tool"]) for i in export["interrupts"]}


# ------------------------------------------------------------------ reviews


def test_the_agent_inbox_review_loop_is_a_call_review_of_the_tools_it_asks_about(binary, tmp_path):
    graph = inbox_review_graph()
    export = export_graph(graph)
    assert interrupts(export) == {("interrupt_handler", "call", "refund_order")}
    node = next(n for n in export["nodes"] if n["id"] == "interrupt_handler")
    # a loop running tools_by_name[call["name"]] is a hand-written tool node (issue 16, item 5)
    assert node["kind"] == "tools_plain" and set(node["tools"]) == set(TOOLS_BY_NAME)
    code, found = verify(binary, tmp_path, export, export_catalogue(graph, graphs.WORDS))
    # the calls are plain (QG001), but the reviewed refund is confirmed on clean content: no QG011
    assert ("QG001", "refund_order", "interrupt_handler") in found
    assert not any(f[0] == "QG011" for f in found), sorted(found)


def rerun_graph(single_call=False):
    """The Agent Inbox loop over guarded.py's counting tools; the model asks for two reviewed
    calls in one message (or, bound with parallel_tool_calls=False, one call a message)."""
    import guarded as G

    by_name = {t.name: t for t in (G.refund_order, G.close_account)}
    m = model([call("refund_order", {"order_id": "42", "amount": 5.0}), call("close_account", {"account": "a1"}, i=1)],
              "done")
    bound = m.bind(parallel_tool_calls=False) if single_call else m

    def agent(state: MessagesState):
        return {"messages": [bound.invoke(state["messages"])]}

    def review(state: MessagesState):
        out = []
        for tool_call in state["messages"][-1].tool_calls:
            answer = interrupt({"action": tool_call["name"], "args": tool_call["args"]})
            if answer["type"] == "accept":
                out.append(ToolMessage(str(by_name[tool_call["name"]].invoke(tool_call["args"])),
                                       tool_call_id=tool_call["id"]))
            else:
                out.append(ToolMessage("rejected by the person", tool_call_id=tool_call["id"]))
        return {"messages": out}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("review", review)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "review" if s["messages"][-1].tool_calls else END, ["review", END])
    g.add_edge("review", END)
    return g.compile(checkpointer=InMemorySaver(), name="rerun")


def test_a_review_loop_that_runs_a_tool_before_a_later_pause_is_warned_and_its_rerun_found(binary, tmp_path):
    """Issue 15 item 4: LangGraph runs the node again from its start on resume, so the refund the
    person accepted runs again when the second call is answered. The review is credited (the refund
    runs only as accepted) and the warning says why and how to fix it; the rerun past at_most is
    the verifier's QG014 (and QG105), as for any plain call, even on a node visited once."""
    import guarded as G
    from helpers import run_steps

    G.reset()
    graph = rerun_graph()
    export = export_graph(graph)
    assert interrupts(export) == {("review", "call", "refund_order"), ("review", "call", "close_account")}
    [w] = [w for w in export["warnings"] if "before a later interrupt()" in w]
    assert w.startswith("node 'review' runs a tool before a later interrupt() in the same run: ")
    assert "runs again, unasked" in w and "collect every answer" in w and "parallel_tool_calls=False" in w
    cat = {"format": "qls-catalogue/1", "tools": {
        "refund_order": dict(G.CATALOGUE["tools"]["refund_order"], order={"at_most": 1}),
        "close_account": G.CATALOGUE["tools"]["close_account"]}}
    code, found = verify(binary, tmp_path, export, cat)
    assert {("QG014", "refund_order", "review"), ("QG105", "refund_order", "review")} <= found, sorted(found)
    assert ("QG011", "refund_order", "review") not in found
    # the run: one accept, then one ignore; the accepted refund ran twice, the account stayed open
    run_steps(graph, {"messages": [{"role": "user", "content": "go"}]}, [{"type": "accept"}, {"type": "ignore"}])
    assert G.RAN == {"refund_order": 2}
    # one call a message: no later pause in the same run, no warning
    single = export_graph(rerun_graph(single_call=True))
    assert not [w for w in single["warnings"] if "before a later interrupt()" in w], single["warnings"]


def test_the_same_loop_without_its_review_is_a_confirmed_nothing(binary, tmp_path):
    graph = unrecognised_graph()
    export = export_graph(graph)
    assert interrupts(export) == {("careless", "inside", None)}
    assert any("review is not recognised" in w and '"reviews"' in w for w in export["warnings"])
    code, found = verify(binary, tmp_path, export, export_catalogue(graph, graphs.WORDS))
    assert ("QG011", "refund_order", "careless") in found


def test_a_review_declared_in_the_words(binary, tmp_path):
    graph = unrecognised_graph()
    words = {"nodes": {"careless": {"reviews": ["refund_order"]}}}
    export = export_graph(graph, words=words)
    assert ("careless", "call", "refund_order") in interrupts(export)
    code, found = verify(binary, tmp_path, export, export_catalogue(graph, {**graphs.WORDS, **words}))
    assert not any(f[0] == "QG011" for f in found), sorted(found)


def test_hitl_middleware_reviews_each_call(binary, tmp_path):
    graph, _, _ = graphs.build_hitl_middleware()
    export = export_graph(graph)
    assert interrupts(export) == {("tools", "call", "refund_order")}
    code, found = verify(binary, tmp_path, export, export_catalogue(graph, graphs.WORDS))
    assert ("QG001", "refund_order", "tools") in found and not any(f[0] == "QG011" for f in found)


# ------------------------------------------------------------------ declarations


MAIL_WORDS = {"read_inbox": {"kind": "read", "reads_outside": True},
              "nodes": {"send": {"calls": {"gmail_send": {"kind": "write", "sends_out": True}}}}}


def test_effects_without_a_tool_and_input_from_outside(binary, tmp_path):
    graph = mail_graph()
    export = export_graph(graph, words=MAIL_WORDS)
    send = next(n for n in export["nodes"] if n["id"] == "send")
    assert send["kind"] == "step" and send["tools"] == ["gmail_send"]
    cat = export_catalogue(graph, MAIL_WORDS)
    assert cat["tools"]["gmail_send"] == {"args": {}, "kind": "write", "sends_out": True}
    code, found = verify(binary, tmp_path, export, cat)
    assert ("QG001", "gmail_send", "send") in found and ("QG011", "gmail_send", "send") in found
    # input from outside: a write is tainted from the first step, even before the inbox is read
    g = StateGraph(MessagesState)
    g.add_node("send", lambda s: {})
    g.add_edge(START, "send")
    g.add_edge("send", END)
    app = g.compile()
    w = {"input": {"reads_outside": True}, "nodes": {"send": {"calls": {"post": {"kind": "write"}}}}}
    export = export_graph(app, words=w)
    assert export["input"] == {"reads_outside": True}
    code, found = verify(binary, tmp_path, export, export_catalogue(app, w))
    assert ("QG011", "post", "send") in found
    code, found = verify(binary, tmp_path, export_graph(app, words={"nodes": w["nodes"]}), export_catalogue(app, w))
    assert not any(f[0] == "QG011" for f in found)


@pytest.mark.parametrize("words,needle", [
    ({"nodes": {"sendd": {"calls": {"x": {"kind": "write"}}}}}, "the graph has no node 'sendd'"),
    ({"nodes": {"review": {"calls": {"x": {"kind": "write"}}}, "send": {"reviews": ["gmail_sendd"]}}},
     "does not call 'gmail_sendd'"),
    ({"input": {"reads_outside": "yes"}}, "must be true or false"),
    ({"input": {"from": "mail"}}, "unknown word 'from'"),
    ({"nodes": {"send": {"review": ["x"]}}}, "'review' on node 'send' is not a word: did you mean 'reviews'?"),
    ({"nodes": {"send": {"reviews": "gmail_send"}}}, "must be a list of tool names"),
])
def test_words_naming_what_the_graph_lacks_are_errors(words, needle):
    from stalwart_export._words import WordsError

    with pytest.raises(WordsError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        graph = mail_graph()
        export_graph(graph, words=words)
        export_catalogue(graph, words)


def test_cli_words_errors_name_the_word_in_the_file(tmp_path):
    (tmp_path / "mailapp.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(PYTHON_DIR / 'tests')!r})
        import test_review_words
        graph = test_review_words.mail_graph()
    """))
    (tmp_path / "words.json").write_text('{\n  "read_inbox": {"kind": "read"},\n  "nodes": {\n    "sendd": {"calls": {}}\n  }\n}\n')
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "mailapp:graph", "-o", "g.json", "--catalogue",
                        "c.json", "--words", "words.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stalwart-export: error: words.json:4:5: ")
    assert "no node 'sendd'" in lines[0]
    assert not (tmp_path / "g.json").exists()
    # a bad kind is at its word too (issue 15 item 6), at the top and in a node's calls
    for text, at in (('{\n  "read_inbox": {"kind": "wrte"}\n}\n', "words.json:2:18: "),
                     ('{"nodes": {"send": {"calls": {"gmail_send":\n  {"kind": "delete"}}}}}\n', "words.json:2:4: ")):
        (tmp_path / "words.json").write_text(text)
        p = subprocess.run([sys.executable, "-m", "stalwart_export", "mailapp:graph", "-o", "g.json", "--catalogue",
                            "c.json", "--words", "words.json"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1, p.stderr
        assert lines[0].startswith("stalwart-export: error: " + at) and "kind must be 'read', 'write'" in lines[0]
    (tmp_path / "words.json").write_text(json.dumps(MAIL_WORDS))
    p = subprocess.run([sys.executable, "-m", "stalwart_export", "mailapp:graph", "-o", "g.json", "--catalogue",
                        "c.json", "--words", "words.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "gmail_send" in json.loads((tmp_path / "c.json").read_text())["tools"]


def test_the_review_shape_recogniser_on_its_own():
    from stalwart_export.langgraph._review import review_shape

    def node(state):
        for tc in state["messages"][-1].tool_calls:
            answer = interrupt(tc)
            kind = answer["action"]
            if kind == "continue" or kind == "update":
                get_order.invoke(tc["args"])
        return {}

    assert review_shape(node, ["get_order"]) == (["get_order"], None)

    def runs_on_else(state):
        for tc in state["messages"][-1].tool_calls:
            answer = interrupt(tc)
            if answer["type"] == "reject":
                pass
            else:
                refund_order.invoke(tc["args"])
        return {}

    reviewed, why = review_shape(runs_on_else, ["refund_order"])
    assert reviewed is None and "without the answer accepting" in why

    def runs_before(state):
        for tc in state["messages"][-1].tool_calls:
            refund_order.invoke(tc["args"])
            interrupt(tc)
        return {}

    assert review_shape(runs_before, ["refund_order"])[0] is None
