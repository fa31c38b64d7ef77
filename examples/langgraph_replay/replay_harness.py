"""Replay a stalwart-verify witness on the real LangGraph graph, with stub tools.

`stalwart verify ... --replay FINDING --format json` writes a script (format
`stalwart-replay/1`): the witness's steps in order. This harness turns the script into
the messages of a scripted chat model, builds the graph with stub tools that record
their calls, runs it, and checks that the run enters the same nodes and makes the same
tool calls as the witness. If it does, the finding is a real route of the graph that
runs, not only of the export.

    python replay_harness.py SCRIPT.json CATALOGUE.json --graph demo_agent:build

`--graph module:function` names a function `build(model, tools)` returning the compiled
graph, built the way the application builds it but with the model and tools given.
Exit 0: the run reproduces the witness; 1: it does not (the differences are printed).

Tested with the versions in requirements.txt (langgraph 1.2.24, langchain-core 1.8.3).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command

SCRIPT_FORMAT = "stalwart-replay/1"
MODEL_KINDS = {"model", "router"}
END_KINDS = {"start", "end"}


class ScriptedModel(FakeMessagesListChatModel):
    """A chat model that answers with the script's messages, in order."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        # The stock fakes do not implement bind_tools; the choices are scripted anyway.
        return self


def model_messages(steps: list[dict]) -> list[AIMessage]:
    """One AI message per choice a model node makes: the tool calls made at the tool node
    it chooses (until that node is left), or a plain answer when it chooses no tool node."""
    messages: list[AIMessage] = []
    for i, step in enumerate(steps):
        if step["kind"] != "choose" or step.get("node_kind") not in MODEL_KINDS:
            continue
        calls = []
        for later in steps[i + 1 :]:
            if later["kind"] == "choose" or later["kind"] == "turn_end":
                break
            if later["kind"] == "call" and later["node"] == step["to"]:
                calls.append(later["tool"])
        tool_calls = [
            {"name": tool, "args": {}, "id": f"call_{i}_{k}", "type": "tool_call"}
            for k, tool in enumerate(calls)
        ]
        messages.append(AIMessage(content="" if tool_calls else "done", tool_calls=tool_calls))
    return messages


def stub_tools(catalogue: dict, calls: list[str]) -> list[StructuredTool]:
    """A stub for every catalogue tool: records its name in `calls`, returns a fixed text."""

    def make(name: str, spec: dict) -> StructuredTool:
        def run(**kwargs: Any) -> str:
            calls.append(name)
            return f"stub result of {name}"

        schema = {
            "type": "object",
            "properties": {arg: {"type": "string"} for arg in spec.get("args", {})},
        }
        return StructuredTool.from_function(
            func=run,
            name=name,
            description=spec.get("description") or name,
            args_schema=schema,
        )

    return [make(name, spec) for name, spec in catalogue.get("tools", {}).items()]


def replay(script: dict, catalogue: dict, build) -> list[str]:
    """Runs the graph as the script says; returns the differences (empty: reproduced)."""
    if script.get("format") != SCRIPT_FORMAT:
        return [f"not a {SCRIPT_FORMAT} script"]
    steps = script["steps"]
    calls: list[str] = []
    messages = model_messages(steps)
    # After the last scripted message the model answers plainly, so the run ends.
    model = ScriptedModel(responses=messages + [AIMessage(content="done")] * 4)
    graph = build(model, stub_tools(catalogue, calls))
    config = {"configurable": {"thread_id": "stalwart-replay"}}
    visited: list[str] = []
    turns = max(s["turn"] for s in steps)
    for turn in range(1, turns + 1):
        answers = [s for s in steps if s["turn"] == turn and s["kind"] == "confirm"]
        payload: Any = {"messages": [HumanMessage(content=f"turn {turn}")]}
        while True:
            for update in graph.stream(payload, config, stream_mode="updates"):
                for node in update:
                    if node != "__interrupt__":
                        visited.append(node)
            pending = graph.get_state(config).next if getattr(graph, "checkpointer", None) else ()
            if not pending:
                break
            if not answers:
                return [f"turn {turn}: the run pauses at {pending} and the script has no answer"]
            answer = answers.pop(0)
            if answer.get("when") == "inside":
                payload = Command(resume=bool(answer.get("yes", True)))
            else:
                payload = None  # a `before`/`after` pause answered yes: go on
    want_nodes = collapse(
        [s["node"] for s in steps if s["kind"] == "enter" and s.get("node_kind") not in END_KINDS]
    )
    want_calls = [s["tool"] for s in steps if s["kind"] == "call" and not s.get("refused")]
    got_nodes = collapse(visited)
    diffs = []
    if got_nodes[: len(want_nodes)] != want_nodes:
        diffs.append(f"nodes: the witness enters {want_nodes}, the run entered {got_nodes}")
    if calls[: len(want_calls)] != want_calls:
        diffs.append(f"calls: the witness calls {want_calls}, the run called {calls}")
    return diffs


def collapse(nodes: list[str]) -> list[str]:
    """Consecutive visits of one node as one (a ToolNode run per tool call shows it twice)."""
    out: list[str] = []
    for n in nodes:
        if not out or out[-1] != n:
            out.append(n)
    return out


def load_builder(spec: str):
    module, _, name = spec.partition(":")
    if not name:
        raise SystemExit(f"--graph {spec!r}: give module:function, e.g. demo_agent:build")
    return getattr(importlib.import_module(module), name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", help="the --replay FINDING --format json output")
    parser.add_argument("catalogue", help="the qls-catalogue/1 the graph's tools are classified by")
    parser.add_argument("--graph", required=True, help="module:function building the graph")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    with open(args.catalogue, encoding="utf-8") as f:
        catalogue = json.load(f)
    diffs = replay(script, catalogue, load_builder(args.graph))
    finding = script.get("finding", {})
    name = f"finding {finding.get('index')} ({finding.get('rule')} on {finding.get('subject')})"
    if diffs:
        print(f"{name}: the real graph does not follow the witness")
        for d in diffs:
            print(f"  {d}")
        return 1
    calls = [s["tool"] for s in script["steps"] if s["kind"] == "call"]
    print(f"{name}: the real graph follows the witness and makes its calls {calls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
