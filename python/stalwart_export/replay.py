"""Replay a stalwart-verify witness on the real LangGraph graph, unmodified, with stub tools.

    python -m stalwart_export replay SCRIPT.json CATALOGUE.json --graph myapp.agent:graph [--input input.json]

`stalwart verify ... --replay FINDING --format json` writes the script (format
`stalwart-replay/1`, SPEC 10): the witness's steps in order. This loads the user's own compiled
graph, puts a scripted chat model in place of every chat model it runs and a stub in place of
every tool it binds, runs it (subgraphs included), and checks that the run enters the same nodes
and makes the same tool calls as the witness. If it does, the finding is a real route of the graph
that runs, not only of the export. This module is the command and what every framework's replay
shares (the script, the arguments a tool's schema takes, the comparison with the witness); the
LangGraph run is `langgraph/replay.py`.

`--graph MODULE:ATTR` names the compiled graph as the application builds it (or a function of no
arguments returning it), importable from the working directory or PYTHONPATH; nothing in it
needs changing. The scripted model answers each model node's turn with the witness's choice:
the tool calls the witness makes next (until the next model choice), each with arguments valid
for the tool's schema, or a plain answer; a node asking for structured output
(`with_structured_output`) gets an instance of its schema whose field names the destination the
witness's choice takes; a node reading its route from its model's first tool call
(`msg.tool_calls[0]["args"]["next"]`, the supervisor shape) gets a tool call carrying the
destination (and, once the witness is done, the code's own word for the end, such as FINISH), or
one line naming the step it cannot. Each call of a tool gets arguments of its own (a guard takes
the same call with the same arguments again for a retry). The stubs record each call and return a
fixed text; the real tools never run, nor the plain functions a step gives `guard.call`/`acall`.
A pause the graph's guard raises to confirm a guarded call the witness makes next is answered yes
(the witness's guarded write is the guard's confirmed one); a witness's call the guard refused on
the real graph is said with the guard's reason. A graph whose nodes are `async def` runs through
`astream`. The run always uses a fresh
`InMemorySaver` (the graph's own checkpointer, a database say, is never written; a graph compiled
without one gets one, so its pauses can be answered); a graph compiled with `checkpointer=False`
cannot pause, which is said when the witness answers a pause. `--input FILE` is the JSON the graph
starts each turn with (default: a user message `{"messages": [{"role": "user", "content": "turn N"}]}`).
Each pause is answered as the witness's `confirm` step says (`yes`: `True`, no: `False`; a
compile-time pause resumes with no value on a yes); `--answers FILE` is a JSON list of resume
values for the graph's `interrupt()` pauses, in order, in place of those.

`--graph` may also name an OpenAI Agents SDK `Agent` (the starting agent; or a function of no
arguments returning one, loaded as the exporter loads it): `openai_agents/replay.py` drives it on
the real SDK, with the SDK's `ScriptedModel` answering each model call (`RunConfig(model=...)`) as
the witness chooses at that agent's node, every function tool stubbed for the run, approvals
answered from the witness (`state.approve`, `always_approve` for a standing yes, `state.reject`),
and each `turn_end` a new `Runner.run` on the last result's `to_input_list()`; `--input` is then
each turn's user message (a JSON text or list of input items), and `--answers` is refused. Its
steps are compared with the witness by `first_missing`, as here.

Exit 0: the run follows the witness. 1: it does not, one line naming the witness's step (its
index and what it is), the node, what was expected and what the graph did. 2: the replay could
not run (a bad argument or file, a graph that cannot be loaded, a witness the harness cannot
drive), one line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._load import UsageError, load

SCRIPT_FORMAT = "stalwart-replay/1"
PROG = "stalwart-export replay"
MODEL_KINDS = {"model", "router"}
END_KINDS = {"start", "end"}
END_NAMES = {"__end__", "end"}


class HarnessError(Exception):
    """A one-line reason the replay could not run (exit 2)."""


class NotFollowed(Exception):
    """A one-line reason the run does not follow the witness (exit 1)."""


# ---------------------------------------------------------------------------- the script
def describe(step: dict) -> str:
    """A witness step in a few words: `enter 'tools'`, `call 'refund' at 'tools'`, ..."""
    kind, node = step.get("kind"), step.get("node")
    if kind == "choose":
        return f"choose {step.get('to')!r} at {node!r}"
    if kind == "call":
        return f"call {step.get('tool')!r} at {node!r}"
    if kind == "confirm":
        return f"confirm {'yes' if step.get('yes', True) else 'no'} at {node!r}"
    if kind == "turn_end":
        return f"end of turn {step.get('turn', 1)}"
    return f"{kind} {node!r}"


def model_turns(steps: list[dict]) -> dict[str, list[dict]]:
    """Per model (or router) node (qualified id), its choices in order: each the step, the
    destination (`to`) and the tools the witness calls after it, until the next choice of a
    model node or the turn's end."""
    turns: dict[str, list[dict]] = {}
    for i, step in enumerate(steps):
        if step["kind"] != "choose" or step.get("node_kind") not in MODEL_KINDS:
            continue
        calls = []
        for later in steps[i + 1:]:
            if later["kind"] == "turn_end" or (later["kind"] == "choose" and later.get("node_kind") in MODEL_KINDS):
                break
            if later["kind"] == "call":
                calls.append(later["tool"])
        turns.setdefault(step["node"], []).append({"step": step.get("step"), "to": step.get("to"), "calls": calls})
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


def distinct(args: dict, schema: dict, given: list[dict]) -> dict:
    """`args`, changed in one free field (a string without enum, pattern or format, else a number)
    so they differ from every earlier call's in `given` (which it extends): the witness's calls
    are distinct calls, and a guard takes the same call with the same arguments again in one step
    for a retry of the first, not a second call."""
    props = schema.get("properties", {}) or {}
    k = 0
    out = dict(args)
    while out in given and k < 50:
        k += 1
        for name, value in args.items():
            p = props.get(name, {})
            if isinstance(value, str) and not ({"enum", "const", "pattern", "format"} & set(p)) and \
                    len(value) + 3 <= int(p.get("maxLength", 1 << 30)):
                out = {**args, name: f"{value}-{k + 1}"}
                break
            if isinstance(value, (int, float)) and not isinstance(value, bool) and "maximum" not in p and \
                    "enum" not in p and "const" not in p:
                out = {**args, name: value + k}
                break
        else:
            break  # no field can change: the same arguments again
    given.append(out)
    return out


# ---------------------------------------------------------------------------- the graph
def load_graph(spec: str) -> Any:
    """The compiled graph MODULE:ATTR names (called when it is a function of no arguments), as the
    exporter loads it; HarnessError with its one line otherwise."""
    # the ground reads a framework's side only when a graph is loaded (either framework may be absent)
    from .openai_agents._agent import is_agent

    if ":" not in spec or not spec.partition(":")[0] or not spec.partition(":")[2]:
        raise HarnessError(f"--graph {spec!r}: give MODULE:ATTR, e.g. myapp.agent:graph")
    try:
        obj = load(spec)
    except UsageError as e:
        raise HarnessError(str(e).replace("cannot export", "cannot load").replace(
            "not a compiled LangGraph graph", "not a compiled LangGraph graph or an OpenAI Agents SDK Agent")) from e
    if is_agent(obj):
        return obj
    if not hasattr(obj, "stream") or not hasattr(obj, "get_state"):
        raise HarnessError(f"{spec} is a {type(obj).__name__}, not a compiled LangGraph graph or an OpenAI Agents "
                           "SDK Agent")
    return obj


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


def first_missing(steps: list[dict], got_nodes: list[str], calls: list[tuple[str, str]],
                  what: str = "graph") -> tuple[dict, str] | None:
    """The first step of the witness the run did not take and what the graph (the `what`) did
    instead; None when it took them all."""
    want = [s for s in steps if s["kind"] == "enter" and s.get("node_kind") not in END_KINDS]
    groups: list[dict] = []  # the first step of each run of one node (a tool node entered per call)
    for s in want:
        if not groups or groups[-1]["node"] != s["node"]:
            groups.append(s)
    for k, s in enumerate(groups):
        before = got_nodes[k - 1] if k and k - 1 < len(got_nodes) else "__start__"
        if k >= len(got_nodes):
            return s, (f"expected the run to enter {s['node']!r} after {before!r}; the {what}'s run ended there "
                       f"(it entered {got_nodes[-3:]}, made calls {[t for _, t in calls]})")
        if got_nodes[k] != s["node"]:
            return s, f"expected the run to enter {s['node']!r} after {before!r}; the {what} entered {got_nodes[k]!r}"
    want_calls = [s for s in steps if s["kind"] == "call" and not s.get("refused")]
    for k, s in enumerate(want_calls):
        if k >= len(calls):
            made = [f"{t} at {n}" for n, t in calls]
            return s, (f"expected a call of {s['tool']!r} at {s['node']!r} (call {k + 1} of the witness); the {what} "
                       f"entered the node and ran {len(calls)} call(s) in all {made}, none of {s['tool']!r} there")
        if calls[k][1] != s["tool"]:
            return s, (f"expected a call of {s['tool']!r} at {s['node']!r}; the {what} called {calls[k][1]!r} at "
                       f"{calls[k][0]!r}")
    return None


def compare(steps: list[dict], got_nodes: list[str], calls: list[tuple[str, str]]) -> str | None:
    """The first step of the witness the run did not take, as one line; None when it took them."""
    found = first_missing(steps, got_nodes, calls)
    return f"step {found[0]['step']} ({describe(found[0])}): {found[1]}" if found else None


def collapse(nodes: list[str]) -> list[str]:
    """Consecutive visits of one node as one (a ToolNode run per tool call shows it twice)."""
    out: list[str] = []
    for n in nodes:
        if not out or out[-1] != n:
            out.append(n)
    return out


def read_json(path: str, what: str) -> Any:
    """The JSON in `path`; HarnessError naming the file (and line and column) otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise HarnessError(f"cannot read {what} {path!r}: {e.strerror or e}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f"line {e.lineno} column {e.colno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
        raise HarnessError(f"{what} {path!r} is not JSON: {where}") from e


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise HarnessError(f"{message} (see python -m stalwart_export replay --help)")


def parser(prog: str = "python -m stalwart_export replay") -> argparse.ArgumentParser:
    """The command's arguments."""
    ap = _Parser(prog=prog, description="Replay a stalwart verify --replay FINDING --format json script on the real "
                                        "LangGraph graph or OpenAI Agents SDK application, with a scripted model and "
                                        "stub tools.")
    ap.add_argument("script", help="the --replay FINDING --format json output")
    ap.add_argument("catalogue", help="the qls-catalogue/1 the graph's tools are classified by")
    ap.add_argument("--graph", required=True, help="MODULE:ATTR of the compiled graph, or of an OpenAI Agents SDK "
                                                   "Agent (unmodified)")
    ap.add_argument("--input", help="JSON file: what the graph starts each turn with")
    ap.add_argument("--answers", help="JSON file: a list of resume values for interrupt() pauses, in order")
    return ap


def main(argv: list[str] | None = None, prog: str = "python -m stalwart_export replay") -> int:
    """The command: exit 0 (follows), 1 (does not: one line on stdout), 2 (cannot run: one line on stderr)."""
    try:
        args = parser(prog).parse_args(argv)
        script = read_json(args.script, "the script")
        read_json(args.catalogue, "the catalogue")
        inputs = read_json(args.input, "the input") if args.input else None
        answers = read_json(args.answers, "the answers") if args.answers else None
        if answers is not None and not isinstance(answers, list):
            raise HarnessError(f"the answers {args.answers!r} must be a JSON list of resume values")
        graph = load_graph(args.graph)
        if hasattr(graph, "get_state"):
            # LangGraph's replay (`langgraph/replay.py`): read only for a LangGraph graph (LangGraph may be absent)
            from .langgraph.replay import replay, with_saver
        finding = script.get("finding", {}) if isinstance(script, dict) else {}
        name = f"finding {finding.get('index')} ({finding.get('rule')} on {finding.get('subject')})"
        steps = script.get("steps") or [] if isinstance(script, dict) else []
        sdk = not hasattr(graph, "get_state")  # an OpenAI Agents SDK Agent (load_graph lets nothing else through)
        what = "application" if sdk else "graph"
        note = None
        if not sdk and isinstance(script, dict) and script.get("format") == SCRIPT_FORMAT:
            note = with_saver(graph, steps)[1]
        if sdk and inputs is not None and not (isinstance(inputs, str) or (
                isinstance(inputs, list) and all(isinstance(i, dict) for i in inputs))):
            raise HarnessError(f"the input {args.input!r} is neither a text nor a list of input items: for an "
                               "OpenAI Agents SDK application give each turn's user message, a JSON text or a list "
                               'of input items ([{"role": "user", "content": "..."}])')
        if sdk and answers is not None:
            raise HarnessError("--answers gives resume values for LangGraph interrupt() pauses: an OpenAI Agents SDK "
                               "application's approvals are answered as the witness's steps say; drop --answers")
        try:
            if sdk:
                notes: list[str] = []
                why = replay_sdk(script, graph, inputs, notes)
                note = "; ".join(notes) or None
            else:
                why = replay(script, graph, inputs, answers)
        except NotFollowed as e:
            why = str(e)
    except HarnessError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    if note:
        print(f"note: {note}", file=sys.stderr)
    if why:
        print(f"{name}: the real {what} does not follow the witness: {why}")
        return 1
    calls = [s["tool"] for s in script["steps"] if s["kind"] == "call" and not s.get("refused")]
    print(f"{name}: the real {what} follows the witness and makes its calls {calls}")
    return 0


def replay_sdk(script: Any, agent: Any, inputs: Any = None, notes: list[str] | None = None) -> str | None:
    """The replay of an OpenAI Agents SDK application (`openai_agents/replay.py`), as
    `langgraph/replay.py`'s `replay` is of a LangGraph graph."""
    if not isinstance(script, dict) or script.get("format") != SCRIPT_FORMAT:
        got = script.get("format") if isinstance(script, dict) else type(script).__name__
        raise HarnessError(f"not a {SCRIPT_FORMAT} script (format {got!r})")
    steps = script.get("steps")
    def fits(s: Any) -> bool:
        return isinstance(s, dict) and "kind" in s and "node" in s and isinstance(s.get("turn", 1), int)

    if not isinstance(steps, list) or not all(fits(s) for s in steps):
        k = next((k for k, s in enumerate(steps) if not fits(s)), 0) if isinstance(steps, list) else None
        where = f"its step {k + 1} has no kind, node or turn number" if k is not None else "it has no list of steps"
        raise HarnessError(f"the script is not a {SCRIPT_FORMAT} witness: {where} (write it with stalwart verify "
                           "--replay FINDING --format json)")
    # the OpenAI Agents SDK's replay: read only when an agent is replayed (the SDK may be absent)
    from .openai_agents.replay import replay_agent

    return replay_agent(script, agent, inputs, notes)
