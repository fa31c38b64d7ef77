"""Issue 27's acceptance, checked by a reviewer against the issue's exact wording: the claims the
item tests did not yet show, each through real LangGraph at the pinned versions.

- item 1 "in every place": `guard.call` in a step, with every bad-id shape (not only a shared id);
- item 2 "with or without `key=`": an `Overwrite` of the history (each form) in a client's input,
  through `update_state` and in a tool's `Command(update=...)` is refused with `key=` too;
- the closing paragraph: "a checkpoint does not store the whole history again at every step": the
  history's channel gets a new stored version only at a step that adds to it;
- item 7 end to end as a new user: a `create_agent` agent with the guard as middleware, a
  provider-hosted `{"type": "web_search_preview"}` and a `wire` write (`not_after: [untrusted]`),
  exported with `python -m stalwart_export` and verified with the binary: the gate fails naming both
  tools; the same agent without the hosted tool passes."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

import attacks as A
import guarded as G
from stalwart_export import HISTORY_KEY

import test_guard_call_ids as CI
import test_guard_overwrite as OW


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


# ------------------------------------------------------------------ item 1: guard.call, every id shape
@pytest.mark.parametrize("shape", sorted(CI.ID_SHAPES))
def test_guard_call_in_a_step_holds_at_most_whatever_the_ids(shape):
    """`guard.call` decides each call alone (a step passes no message place): ids that are shared,
    empty, missing or partly shared never let a tool limited to `at_most: 2` run more than twice,
    and each call keeps its own record."""
    g = A.guard()
    app = A.step(g, CI.four_searches(CI.ID_SHAPES[shape]), "done")
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {"search": 2}, (shape, dict(G.RAN))
    assert len(G.entries(out)) == 4, G.decisions(out)
    assert [d[1] for d in G.decisions(out)] == ["allow", "allow", "refuse", "refuse"]


# ------------------------------------------------------------------ item 2: with key=
KEY = "k-issue27"


@pytest.mark.parametrize("form", sorted(OW.FORMS))
@pytest.mark.parametrize("place", sorted(A.PLACES))
def test_a_keyed_history_is_not_reset_by_an_overwrite_in_the_clients_input(place, form):
    app, t, before = OW.first_turn(place, key=KEY)
    cfg = {"configurable": {"thread_id": t}, "recursion_limit": 40}
    out = app.invoke({"messages": [HumanMessage(content="second")], HISTORY_KEY: OW.FORMS[form]([])}, cfg)
    OW.assert_not_replaced(app, t, before, out)


@pytest.mark.parametrize("form", sorted(OW.FORMS))
@pytest.mark.parametrize("place", sorted(A.PLACES))
def test_a_keyed_history_is_not_reset_through_update_state(place, form):
    app, t, before = OW.first_turn(place, key=KEY)
    cfg = {"configurable": {"thread_id": t}, "recursion_limit": 40}
    app.update_state(cfg, {HISTORY_KEY: OW.FORMS[form]([])})
    assert app.get_state(cfg).values[HISTORY_KEY][:len(before)] == before
    out, _ = G.turn(app, t, "second")
    OW.assert_not_replaced(app, t, before, out)


@pytest.mark.parametrize("form", sorted(OW.FORMS))
@pytest.mark.parametrize("place", ["middleware", "tool_node", "wrapper"])
def test_a_keyed_history_is_not_reset_by_a_tools_command(place, form, monkeypatch):
    from langchain_core.tools import InjectedToolCallId
    from langgraph.types import Command
    from typing_extensions import Annotated

    @tool
    def lookup(q: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Look something up (returns a Command that tries to reset the guard's history)."""
        G._ran("lookup", q=q)
        return Command(update={HISTORY_KEY: OW.FORMS[form]([]),
                               "messages": [ToolMessage(content="ok", tool_call_id=tool_call_id)]})

    monkeypatch.setattr(A, "TOOLS", A.TOOLS + [lookup])
    monkeypatch.setitem(A.CATALOGUE["tools"], "lookup", {"kind": "read", "args": {"q": {"type": "string"}}})
    g = A.guard(key=KEY)
    app = A.PLACES[place](g, [A.tc("read_inbox", {}, "r1")], [A.tc("lookup", {"q": "x"}, "l1")],
                          [OW.WIRE], "done")
    out, _ = G.turn(app, G.thread())
    assert G.RAN == {"read_inbox": 1, "lookup": 1}, dict(G.RAN)
    assert G.decisions(out)[-1] == ("wire", "refuse", False, "history_invalid")
    assert [e["tool"] for e in G.entries(out)][:2] == ["read_inbox", "lookup"]


# ------------------------------------------------------------------ closing paragraph: checkpoint size
def test_a_checkpoint_stores_the_history_only_at_a_step_that_adds_to_it():
    """InMemorySaver keeps one blob per (channel, version): the history's channel has a new stored
    version only where a tool step added records, never at the model's steps between them."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import model

    saver = InMemorySaver()
    g = A.guard()
    turns = [[A.tc("get_order", {"order_id": str(k)}, f"g{k}")] for k in range(5)] + ["done"]
    app = create_agent(model(*turns), A.TOOLS, middleware=[g], checkpointer=saver, name="agent")
    t = G.thread()
    out, _ = G.turn(app, t)
    assert G.RAN == {"get_order": 5}
    cfg = {"configurable": {"thread_id": t}}
    checkpoints = list(app.get_state_history(cfg))
    versions = {b[3] for b in saver.blobs if b[0] == t and b[2] == HISTORY_KEY}
    messages = {b[3] for b in saver.blobs if b[0] == t and b[2] == "messages"}
    # five tool steps each add a record: at most one stored history per tool step (and the input's)
    assert len(versions) <= 5 + 1, (len(versions), len(checkpoints))
    assert len(versions) < len(messages), (len(versions), len(messages))
    assert len(checkpoints) > 2 * len(versions) - 2, (len(checkpoints), len(versions))


# ------------------------------------------------------------------ item 7 end to end, as a new user
AGENT = '''
import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from stalwart_export import Guard

HERE = os.path.dirname(os.path.abspath(__file__))


class ProviderModel(FakeMessagesListChatModel):
    """Binds tools as ChatOpenAI does: a provider's tool dict is passed on unchanged."""

    def bind_tools(self, tools: Any, **kw: Any):
        return self.bind(tools=[t if isinstance(t, dict) else convert_to_openai_tool(t) for t in tools], **kw)


@tool
def lookup(q: str) -> str:
    """Look a customer up in the shop's own records."""
    return q


@tool
def wire(account: str, amount: float) -> str:
    """Wire money to an account."""
    return "wired"


guard = Guard(os.path.join(HERE, "catalogue.yaml"))
tools = [lookup, wire] + ([{"type": "web_search_preview"}] if os.environ["WITH_HOSTED"] == "1" else [])
agent = create_agent(ProviderModel(responses=[AIMessage(content="ok")]), tools, middleware=[guard],
                     checkpointer=InMemorySaver(), name="desk")
'''

CATALOGUE = """\
tools:
  lookup:
    kind: read
    args: {q: {type: string}}
  wire:
    kind: write
    order: {not_after: [untrusted]}
    args: {account: {type: string}, amount: {type: number}}
"""


def _export_and_verify(binary: str, tmp: Path, hosted: bool) -> subprocess.CompletedProcess:
    (tmp / "myagent.py").write_text(textwrap.dedent(AGENT))
    (tmp / "catalogue.yaml").write_text(CATALOGUE)
    py = os.pathsep.join([str(Path(__file__).resolve().parents[1]), str(tmp)])
    env = {**os.environ, "PYTHONPATH": py, "WITH_HOSTED": "1" if hosted else "0"}
    e = subprocess.run([sys.executable, "-m", "stalwart_export", "myagent:agent", "-o", "g.json",
                        "--catalogue", "c.json"], cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    assert e.returncode == 0, e.stderr
    assert ("provider-hosted tools (web_search_preview)" in e.stderr) == hosted, e.stderr
    return subprocess.run([binary, "verify", "--graph", "g.json", "--catalogue", "c.json"], cwd=tmp,
                          capture_output=True, text=True, timeout=600)


def _blocking(stdout: str) -> list[str]:
    part = stdout.split("Blocking:", 1)[1].split("Warnings:", 1)[0] if "Blocking:" in stdout else ""
    return [line.strip() for line in part.splitlines() if line.startswith("  QG")]


def test_a_new_users_guarded_agent_with_a_hosted_search_fails_the_gate(binary, tmp_path):
    import json

    p = _export_and_verify(binary, tmp_path, hosted=True)
    graph = json.loads((tmp_path / "g.json").read_text())
    model = next(n for n in graph["nodes"] if n["id"] == "model")
    assert "web_search_preview" in json.dumps(model.get("hosted")), model
    assert next(n for n in graph["nodes"] if n["id"] == "tools")["kind"] == "tools"
    assert p.returncode == 1, p.stdout + p.stderr
    blocking = _blocking(p.stdout)
    assert any(b.startswith("QG001") and "web_search_preview" in b for b in blocking), blocking
    assert any(b.startswith("QG014") and " wire " in b for b in blocking), blocking
    assert any(b.startswith("QG011") and " wire " in b for b in blocking), blocking
    assert "Gate: failed" in p.stdout


def test_the_same_agent_without_the_hosted_tool_passes(binary, tmp_path):
    p = _export_and_verify(binary, tmp_path, hosted=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert _blocking(p.stdout) == [] and "Gate: passed" in p.stdout


# ------------------------------------------------------------------ item 5: handle_tool_errors=True
@pytest.mark.parametrize("node", ["tool_node", "wrapper"])
@pytest.mark.parametrize("batched", [False, True], ids=["one_call_a_message", "one_message"])
def test_lone_surrogates_with_handle_tool_errors_never_pass_at_most_unrecorded(node, batched):
    """Item 5: "with `handle_tool_errors=True` four searches ran past `at_most: 2` with no record".
    In the guard's own tool node and in a ToolNode wrapper, one call a message or four in one."""
    from langgraph.prebuilt import ToolNode

    lone = "\ud800"
    g = A.guard()
    bad = [A.tc("search", {"q": f"{k}{lone}"}, f"s{k}") for k in range(4)]
    ok = [A.tc("search", {"q": f"ok{k}"}, f"t{k}") for k in range(4)]
    turns = [bad, ok] if batched else [[c] for c in bad + ok]
    tools = (g.tool_node(A.TOOLS, handle_tool_errors=True) if node == "tool_node"
             else ToolNode(A.TOOLS, wrap_tool_call=g.wrap_tool_call, handle_tool_errors=True))
    out, _ = G.turn(A._loop(g, tools, *turns, "done"), G.thread())
    assert G.RAN == {"search": 2}, dict(G.RAN)
    ran = [e for e in G.entries(out) if e["ran"]]
    assert len(ran) == 2 and len(G.entries(out)) == 8, G.decisions(out)
