"""Replay a stalwart-verify witness on the real LangGraph graph, unmodified, with stub tools.

`stalwart verify ... --replay FINDING --format json` writes a script (format
`stalwart-replay/1`): the witness's steps in order. This harness loads the user's own compiled
graph, puts a scripted chat model in place of every chat model it runs and a stub in place of
every tool it binds, runs it (subgraphs included), and checks that the run enters the same nodes
and makes the same tool calls as the witness. If it does, the finding is a real route of the graph
that runs, not only of the export.

    python replay_harness.py SCRIPT.json CATALOGUE.json --graph myapp.agent:graph [--input input.json]

`--graph MODULE:ATTR` names the compiled graph as the application builds it (or a function of no
arguments returning it), importable from the working directory or PYTHONPATH; nothing in it
needs changing. The scripted model answers each model node's turn with the witness's choice:
the tool calls the witness makes next (until the next model choice), each with arguments valid
for the tool's schema, or a plain answer. The stubs record each call and return a fixed text; the
real tools never run. `--input FILE` is the JSON the graph starts each turn with (default: a
user message `{"messages": [{"role": "user", "content": "turn N"}]}`). `--answers FILE` is a JSON
list of resume values for the graph's `interrupt()` pauses, in order (default: the witness's yes
or no: `True`/`False`; a compile-time pause resumes with no value).

Exit 0: the run follows the witness. 1: it does not, one line saying at which step and why.
2: the harness could not run (a bad argument or file, a graph that cannot be loaded), one line.

Tested with the versions in requirements.txt (langgraph 1.2.24, langchain-core 1.8.3).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import os
import sys
import uuid
from typing import Any, Iterator

SCRIPT_FORMAT = "stalwart-replay/1"
MODEL_KINDS = {"model", "router"}
END_KINDS = {"start", "end"}


class HarnessError(Exception):
    """A one-line reason the replay could not run (exit 2)."""


class NotFollowed(Exception):
    """A one-line reason the run does not follow the witness (exit 1)."""


# ---------------------------------------------------------------------------- the script
def model_turns(steps: list[dict]) -> dict[str, list[list[str]]]:
    """Per model node (qualified id), the calls of each of its choices in order: the tools the
    witness calls after the choice, until the next choice of a model node or the turn's end."""
    turns: dict[str, list[list[str]]] = {}
    for i, step in enumerate(steps):
        if step["kind"] != "choose" or step.get("node_kind") not in MODEL_KINDS:
            continue
        calls = []
        for later in steps[i + 1:]:
            if later["kind"] == "turn_end" or (later["kind"] == "choose" and later.get("node_kind") in MODEL_KINDS):
                break
            if later["kind"] == "call":
                calls.append(later["tool"])
        turns.setdefault(step["node"], []).append(calls)
    return turns


def example_value(schema: dict, defs: dict) -> Any:
    """A value valid for a JSON schema (the first `enum` value, else one of its type)."""
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return example_value(schema[key][0], defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "array":
        return [example_value(schema.get("items", {}), defs)] if schema.get("minItems") else []
    if kind == "object":
        return arguments(schema, defs)
    if kind == "null":
        return None
    return "x" * max(1, int(schema.get("minLength", 1)))


def arguments(schema: dict, defs: dict | None = None) -> dict:
    """Arguments valid for a tool's JSON schema: every required property with a valid value."""
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    props = schema.get("properties", {}) or {}
    return {name: example_value(props.get(name, {}), defs) for name in schema.get("required", []) or []}


def tool_schema(tool: Any) -> dict:
    try:
        schema = tool.get_input_schema().model_json_schema()
    except Exception:  # noqa: BLE001 - a schema given as a dict
        schema = getattr(tool, "args_schema", None)
        schema = schema if isinstance(schema, dict) else {}
    return schema


# ---------------------------------------------------------------------------- the graph
def load_graph(spec: str) -> Any:
    """The compiled graph MODULE:ATTR names (called when it is a function of no arguments)."""
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise HarnessError(f"--graph {spec!r}: give MODULE:ATTR, e.g. myapp.agent:graph")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        with contextlib.redirect_stdout(sys.stderr):
            obj: Any = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
            if callable(obj) and not hasattr(obj, "invoke") and not inspect.isclass(obj):
                obj = obj()
    except Exception as e:  # noqa: BLE001 - the user's module: one line
        raise HarnessError(f"cannot load {spec}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    if not hasattr(obj, "stream") or not hasattr(obj, "get_state"):
        raise HarnessError(f"{spec} is a {type(obj).__name__}, not a compiled LangGraph graph")
    return obj


def graph_tools(graph: Any) -> list:
    """Every LangChain tool the graph binds: through stalwart_export when it is installed (tool
    nodes, steps calling tools, subgraphs), else every ToolNode's tools (subgraphs included)."""
    try:
        from stalwart_export import graph_tools as exported

        return list(exported(graph))
    except ImportError:
        pass
    from langgraph.prebuilt import ToolNode

    out: dict[str, Any] = {}

    def walk(g: Any, depth: int = 0) -> None:
        if depth > 16:
            return
        for node in getattr(g, "nodes", {}).values():
            r = getattr(node, "bound", None)
            for _ in range(8):
                inner = getattr(r, "runnable", None) or getattr(r, "bound", None)
                if isinstance(r, ToolNode) or inner is None:
                    break
                r = inner
            if isinstance(r, ToolNode):
                for t in r.tools_by_name.values():
                    out.setdefault(t.name, t)
            for sub in getattr(node, "subgraphs", None) or []:
                walk(sub, depth + 1)

    walk(graph)
    return list(out.values())


def qualified(ns: Any) -> str:
    """A LangGraph namespace or checkpoint_ns (`worker:<task>|agent:<task>`) as an export id."""
    parts = ns.split("|") if isinstance(ns, str) else list(ns)
    return "/".join(p.split(":", 1)[0] for p in parts if p)


class Stand:
    """The scripted model and the stub tools, in place while the replay runs."""

    def __init__(self, turns: dict[str, list[list[str]]], tools: list) -> None:
        self.turns = {k: list(v) for k, v in turns.items()}
        self.tools = {t.name: t for t in tools}
        self.calls: list[tuple[str, str]] = []  # (node, tool)
        self.n = 0

    def answer(self, node: str) -> Any:
        from langchain_core.messages import AIMessage

        queue = self.turns.get(node)
        if not queue:
            return AIMessage(content="done")
        calls = []
        for tool in queue.pop(0):
            t = self.tools.get(tool)
            if t is None:
                raise NotFollowed(f"the witness calls {tool!r}, which the graph binds to no tool node")
            self.n += 1
            calls.append({"name": tool, "args": arguments(tool_schema(t)), "id": f"call_{self.n}", "type": "tool_call"})
        return AIMessage(content="" if calls else "done", tool_calls=calls)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.runnables.config import ensure_config

        stand = self

        def invoke(model, input, config=None, **kwargs):  # noqa: A002 - LangChain's name
            meta = ensure_config(config).get("metadata", {})
            node = qualified(meta.get("langgraph_checkpoint_ns", "")) or meta.get("langgraph_node", "")
            return stand.answer(node)

        async def ainvoke(model, input, config=None, **kwargs):  # noqa: A002
            return invoke(model, input, config, **kwargs)

        def bind_tools(model, tools, **kwargs):
            return model

        saved_tools = {name: (t.__dict__.get("func"), t.__dict__.get("coroutine")) for name, t in self.tools.items()}
        patched = {"invoke": invoke, "ainvoke": ainvoke, "bind_tools": bind_tools}
        saved = {k: BaseChatModel.__dict__.get(k) for k in patched}
        try:
            for k, v in patched.items():
                setattr(BaseChatModel, k, v)
            for name, t in self.tools.items():
                object.__setattr__(t, "func", self.stub(name, t))
                if getattr(t, "coroutine", None) is not None:
                    object.__setattr__(t, "coroutine", self.astub(name, t))
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    delattr(BaseChatModel, k)
                else:
                    setattr(BaseChatModel, k, v)
            for name, (f, c) in saved_tools.items():
                object.__setattr__(self.tools[name], "func", f)
                object.__setattr__(self.tools[name], "coroutine", c)

    def stub(self, name: str, tool: Any):
        def run(*args: Any, **kwargs: Any) -> Any:
            from langgraph.config import get_config

            try:
                meta = get_config().get("metadata", {})
                node = qualified(meta.get("langgraph_checkpoint_ns", "")) or meta.get("langgraph_node", "")
            except RuntimeError:
                node = "?"
            self.calls.append((node, name))
            text = f"stub result of {name}"
            return (text, None) if getattr(tool, "response_format", "content") == "content_and_artifact" else text

        return run

    def astub(self, name: str, tool: Any):
        sync = self.stub(name, tool)

        async def run(*args: Any, **kwargs: Any) -> Any:
            return sync(*args, **kwargs)

        return run


# ---------------------------------------------------------------------------- the replay
def replay(script: dict, graph: Any, inputs: Any = None, answers: list | None = None) -> str | None:
    """Runs the graph as the script says; None when it follows the witness, else one line."""
    if script.get("format") != SCRIPT_FORMAT:
        raise HarnessError(f"not a {SCRIPT_FORMAT} script (format {script.get('format')!r})")
    steps = script.get("steps") or []
    stand = Stand(model_turns(steps), graph_tools(graph))
    config = {"configurable": {"thread_id": f"stalwart-replay-{uuid.uuid4()}"}, "recursion_limit": 200}
    visited: list[str] = []
    opened: list[str] = []  # subgraph nodes whose inside is running
    answers = list(answers or [])
    from langgraph.types import Command

    turns = max((s.get("turn", 1) for s in steps), default=1)
    try:
        with stand.installed():
            for turn in range(1, turns + 1):
                confirms = [s for s in steps if s.get("turn") == turn and s["kind"] == "confirm"]
                payload: Any = inputs if inputs is not None else {
                    "messages": [{"role": "user", "content": f"turn {turn}"}]}
                while True:
                    for ns, update in graph.stream(payload, config, stream_mode="updates", subgraphs=True):
                        for node in update or {}:
                            if node != "__interrupt__":
                                enter(visited, opened, qualified(ns), node)
                    pending = graph.get_state(config).next if getattr(graph, "checkpointer", None) else ()
                    if not pending:
                        break
                    if not confirms:
                        raise NotFollowed(f"turn {turn}: the run pauses at {', '.join(pending)} and the witness "
                                          "has no answer for it")
                    c = confirms.pop(0)
                    if c.get("when") in ("before", "after"):
                        payload = None if c.get("yes", True) else Command(resume=False)
                    else:
                        payload = Command(resume=answers.pop(0) if answers else bool(c.get("yes", True)))
    except NotFollowed:
        raise
    except Exception as e:  # noqa: BLE001 - the graph's own failure: one line
        raise NotFollowed(f"the run raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
                          f"after entering {collapse(visited)[-3:]}") from e
    return compare(steps, collapse(visited), stand.calls)


def enter(visited: list[str], opened: list[str], ns: str, node: str) -> None:
    """Record a node's update as the witness orders steps: a subgraph node is entered before its
    inner nodes (LangGraph streams its own update when its inside has finished, which is not a
    step of its own)."""
    full = f"{ns}/{node}" if ns else node
    if full in opened:  # the subgraph node's update as its inside ends
        del opened[opened.index(full):]
        return
    while opened and not (ns == opened[-1] or ns.startswith(opened[-1] + "/")):
        opened.pop()
    parts = ns.split("/") if ns else []
    for k in range(1, len(parts) + 1):
        prefix = "/".join(parts[:k])
        if prefix not in opened:
            opened.append(prefix)
            visited.append(prefix)
    visited.append(full)


def compare(steps: list[dict], got_nodes: list[str], calls: list[tuple[str, str]]) -> str | None:
    """The first step of the witness the run did not take, as one line; None when it took them."""
    want = [(s["step"], s["node"]) for s in steps if s["kind"] == "enter" and s.get("node_kind") not in END_KINDS]
    want_nodes = collapse([n for _, n in want])
    for k, node in enumerate(want_nodes):
        if k >= len(got_nodes):
            return f"step {_step_of(want, node, k)} (enter {node!r}): the run stopped after {got_nodes[-3:]}"
        if got_nodes[k] != node:
            before = got_nodes[k - 1] if k else "__start__"
            return (f"step {_step_of(want, node, k)} (enter {node!r}): after {before!r} the run entered "
                    f"{got_nodes[k]!r}")
    want_calls = [(s["step"], s["node"], s["tool"]) for s in steps if s["kind"] == "call" and not s.get("refused")]
    for k, (step, node, tool) in enumerate(want_calls):
        if k >= len(calls):
            return f"step {step} (call {tool!r} at {node!r}): the run made no more calls after {calls[-3:]}"
        if calls[k][1] != tool:
            return f"step {step} (call {tool!r} at {node!r}): the run called {calls[k][1]!r} at {calls[k][0]!r}"
    return None


def _step_of(want: list[tuple[int, str]], node: str, k: int) -> int:
    seen = -1
    prev = None
    for step, n in want:
        if n != prev:
            seen += 1
            prev = n
        if seen == k:
            return step
    return want[-1][0] if want else 0


def collapse(nodes: list[str]) -> list[str]:
    """Consecutive visits of one node as one (a ToolNode run per tool call shows it twice)."""
    out: list[str] = []
    for n in nodes:
        if not out or out[-1] != n:
            out.append(n)
    return out


def read_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise HarnessError(f"cannot read {what} {path!r}: {e.strerror or e}") from e
    except json.JSONDecodeError as e:
        raise HarnessError(f"{what} {path!r} is not JSON: line {e.lineno} column {e.colno}: {e.msg}") from e


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", help="the --replay FINDING --format json output")
    parser.add_argument("catalogue", help="the qls-catalogue/1 the graph's tools are classified by")
    parser.add_argument("--graph", required=True, help="MODULE:ATTR of the compiled graph (unmodified)")
    parser.add_argument("--input", help="JSON file: what the graph starts each turn with")
    parser.add_argument("--answers", help="JSON file: a list of resume values for interrupt() pauses, in order")
    args = parser.parse_args(argv)
    try:
        script = read_json(args.script, "the script")
        read_json(args.catalogue, "the catalogue")
        inputs = read_json(args.input, "the input") if args.input else None
        answers = read_json(args.answers, "the answers") if args.answers else None
        if answers is not None and not isinstance(answers, list):
            raise HarnessError(f"the answers {args.answers!r} must be a JSON list of resume values")
        graph = load_graph(args.graph)
        finding = script.get("finding", {}) if isinstance(script, dict) else {}
        name = f"finding {finding.get('index')} ({finding.get('rule')} on {finding.get('subject')})"
        try:
            why = replay(script, graph, inputs, answers)
        except NotFollowed as e:
            why = str(e)
    except HarnessError as e:
        print(f"replay_harness: error: {e}", file=sys.stderr)
        return 2
    if why:
        print(f"{name}: the real graph does not follow the witness: {why}")
        return 1
    calls = [s["tool"] for s in script["steps"] if s["kind"] == "call"]
    print(f"{name}: the real graph follows the witness and makes its calls {calls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
