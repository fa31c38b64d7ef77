"""The replay of a stalwart-verify witness on a real LangGraph graph (`python -m stalwart_export
replay`, whose docs, in `stalwart_export/replay.py`, say what it does): the scripted chat model and
the stub tools put in place while the graph runs (`Stand`), the answers to its pauses, and the run
through `stream` or `astream`, compared with the witness by the ground's `first_missing`."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import textwrap
import uuid
from typing import Any, Iterator

from ..guard.history import read_history
from ..replay import (END_NAMES, SCRIPT_FORMAT, HarnessError, NotFollowed, arguments, collapse, describe, distinct,
                      enter, first_missing, model_turns)
from . import _pauses
from .graph import graph_tools as exported
from .guard import middleware as guard_middleware


ASYNC_ONLY = "No synchronous function provided"


def tool_schema(tool: Any) -> dict:
    """The JSON schema of a tool's arguments (empty when it has none to read)."""
    try:
        schema = tool.get_input_schema().model_json_schema()
    except Exception:  # noqa: BLE001 - a schema given as a dict
        schema = getattr(tool, "args_schema", None)
        schema = schema if isinstance(schema, dict) else {}
    return schema


# ---------------------------------------------------------------------------- structured output
def output_schema(schema: Any) -> tuple[str, dict]:
    """(a name, the JSON schema) of a `with_structured_output` schema: a pydantic model, a
    TypedDict, a JSON schema dict or an OpenAI function dict."""
    if isinstance(schema, dict):
        inner = schema.get("parameters", schema)
        return str(schema.get("title") or schema.get("name") or "the schema"), inner
    if hasattr(schema, "model_json_schema"):
        return schema.__name__, schema.model_json_schema()
    from langchain_core.utils.function_calling import convert_to_openai_tool

    fn = convert_to_openai_tool(schema)["function"]
    return fn.get("name") or getattr(schema, "__name__", "the schema"), fn.get("parameters", {})


def _fits(value: Any, to: str) -> bool:
    if not isinstance(value, str):
        return False
    if to in END_NAMES:
        return value.lower() in {"__end__", "end", "finish", "finished", "done", "stop"}
    return value == to or value.lower() == to.lower()


def route_value(schema: Any, to: str, where: str) -> Any:
    """An instance of `schema` whose field says `to`: the field whose allowed values include the
    destination (an enum or Literal), else a free string field named like a route; NotFollowed,
    naming the fields, when no field can say it."""
    name, js = output_schema(schema)
    defs = {**js.get("$defs", {}), **js.get("definitions", {})}
    props = js.get("properties", {}) or {}
    args = arguments(js)
    chosen = None
    for field, prop in props.items():
        if "$ref" in prop:
            prop = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
        values = list(prop.get("enum") or []) + ([prop["const"]] if "const" in prop else [])
        for alt in prop.get("anyOf", []) or []:
            values += list(alt.get("enum") or []) + ([alt["const"]] if "const" in alt else [])
        hit = next((v for v in values if _fits(v, to)), None)
        if hit is not None:
            chosen = (field, hit)
            break
    if chosen is None:
        free = [f for f, p in props.items() if p.get("type") == "string" and "enum" not in p]
        named = [f for f in free if f.lower() in {"next", "route", "goto", "destination", "step", "node", "to"}]
        if named or len(free) == 1:
            chosen = ((named or free)[0], to)
    if chosen is None:
        fields = ", ".join(f"{f}: {' | '.join(map(repr, p.get('enum') or [])) or p.get('type', '?')}"
                           for f, p in props.items()) or "none"
        raise NotFollowed(f"{where}: the node asks the model for a structured {name}, and none of its fields can "
                          f"say {to!r} (its fields: {fields})")
    args[chosen[0]] = chosen[1]
    if hasattr(schema, "model_validate"):
        return schema.model_validate(args)
    return args


# ---------------------------------------------------------------------------- pauses
def _base_name(expr: ast.AST) -> tuple[str | None, str | None]:
    """(the name an answer expression reads, the key it reads from it): `answer` (None),
    `answer["action"]` and `answer.get("action")` ("action")."""
    if isinstance(expr, ast.Name):
        return expr.id, None
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and \
            isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        return expr.value.id, expr.slice.value
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" and \
            isinstance(expr.func.value, ast.Name) and expr.args and isinstance(expr.args[0], ast.Constant):
        return expr.func.value.id, str(expr.args[0].value)
    return None, None


def resume_value(fn: Any, yes: bool) -> Any:
    """What to resume an `interrupt()` in `fn` with for the person's yes or no: the word the code
    compares its answer with (`answer == "approve"`, `answer["action"] in ("accept", "edit")`,
    `answer.get("type") == "reject"`), shaped as the code reads it; else True or False."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return yes
    pauses = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and
              getattr(c.func, "id", getattr(c.func, "attr", None)) == "interrupt"]
    names = set().union(*(_pauses.answer_names(tree, c) for c in pauses)) if pauses else set()
    words = _pauses.ACCEPTING if yes else _pauses.REJECTING
    for test in ast.walk(tree):
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and
                isinstance(test.ops[0], (ast.Eq, ast.In))):
            continue
        for side, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
            name, key = _base_name(side)
            if name is None or name not in names:
                continue
            items = other.elts if isinstance(other, (ast.Tuple, ast.List, ast.Set)) else [other]
            hit = next((i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
                        and i.value.lower() in words), None)
            if hit is not None:
                return {key: hit} if key is not None else hit
    return yes


def guard_question(steps: list[dict], calls: list[tuple[str, str]], pending: Any, state: Any) -> Any:
    """The resume for a pause the guard raised to confirm a write the witness makes next (the
    witness's next call is `guarded` at a paused node, and no `confirm` step of the witness is the
    guard's rule 8 asking): `Command(resume=True)`, the guard's yes, for each of the pause's
    questions; None when the witness's next call is not a guarded one at a paused node."""
    from langgraph.types import Command

    want = [s for s in steps if s["kind"] == "call" and not s.get("refused")]
    if len(calls) >= len(want):
        return None
    nxt = want[len(calls)]
    top = str(nxt.get("node") or "").split("/", 1)[0]
    if not nxt.get("guarded") or top not in set(pending):
        return None
    ids = [getattr(i, "id", None) for t in getattr(state, "tasks", ()) or ()
           for i in getattr(t, "interrupts", ()) or ()]
    ids = [i for i in ids if i]
    return Command(resume={i: True for i in ids} if len(ids) > 1 else True)


def route_reader(fn: Any) -> tuple[str, str | None] | None:
    """(the key, the word it reads as the end) when the node function `fn` reads its route from its
    model's first tool call (`msg.tool_calls[0]["args"]["next"]`, or `.get("next")`): the supervisor
    shape, whose model is asked for a tool call naming the next worker. None otherwise."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None

    def is_first_call_args(e: ast.AST) -> bool:  # X.tool_calls[0]["args"]
        return (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and e.slice.value == "args"
                and isinstance(e.value, ast.Subscript) and isinstance(e.value.slice, ast.Constant)
                and e.value.slice.value == 0 and isinstance(e.value.value, ast.Attribute)
                and e.value.value.attr == "tool_calls")

    key = None
    for e in ast.walk(tree):
        if isinstance(e, ast.Subscript) and is_first_call_args(e.value) and isinstance(e.slice, ast.Constant) and \
                isinstance(e.slice.value, str):
            key = e.slice.value
        elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "get" and \
                is_first_call_args(e.func.value) and e.args and isinstance(e.args[0], ast.Constant):
            key = str(e.args[0].value)
        if key:
            break
    if key is None:
        return None
    words = [c.value for c in ast.walk(tree) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    end = next((w for w in words if _fits(w, "__end__")), None)
    return key, end


def node_function(graph: Any, node: str) -> Any:
    """The function a top-level node of the graph runs (None when it cannot be told)."""
    r = getattr(getattr(graph, "nodes", {}).get(node), "bound", None)
    for _ in range(8):
        if r is None or getattr(r, "func", None) is not None:
            break
        r = getattr(r, "runnable", None) or getattr(r, "bound", None)
    return getattr(r, "func", None) or getattr(r, "afunc", None)


def pauses(steps: list[dict], turn: int) -> list[dict]:
    """The pauses of a turn, in order: consecutive `confirm` steps at one node and of one kind are
    one pause (one question for the calls of one message); its answer is yes when every one is."""
    out: list[dict] = []
    for s in steps:
        if s.get("turn") != turn or s["kind"] != "confirm":
            continue
        if out and out[-1]["node"] == s.get("node") and out[-1]["when"] == s.get("when") and out[-1]["last"] == \
                s.get("step", 0) - 1:
            out[-1]["yes"] = out[-1]["yes"] and bool(s.get("yes", True))
            out[-1]["last"] = s.get("step", 0)
            continue
        out.append({"step": s.get("step"), "node": s.get("node"), "when": s.get("when"),
                    "yes": bool(s.get("yes", True)), "last": s.get("step", 0)})
    return out


def with_saver(graph: Any, steps: list[dict]) -> tuple[Any, str | None]:
    """The graph with a fresh InMemorySaver in place of its checkpointer (none, or the
    application's own, which a replay must not write), and a note saying so; HarnessError when it
    was compiled with `checkpointer=False` and the witness answers a pause, or cannot be given one."""
    from langgraph.checkpoint.memory import InMemorySaver

    own = getattr(graph, "checkpointer", None)
    pauses = [s for s in steps if s.get("kind") == "confirm"]
    if own is False:
        if pauses:
            s = pauses[0]
            raise HarnessError(f"step {s.get('step')} ({describe(s)}) answers a pause, but the graph was compiled "
                               "with checkpointer=False, so it cannot pause: compile it without checkpointer=False "
                               "(the replay then gives it an InMemorySaver)")
        return graph, None
    try:
        copy = graph.copy(update={"checkpointer": InMemorySaver()})
    except Exception as e:  # noqa: BLE001 - an object that cannot be copied
        if own is None and pauses:
            s = pauses[0]
            raise HarnessError(f"step {s.get('step')} ({describe(s)}) answers a pause, but the graph has no "
                               f"checkpointer and cannot be given one ({type(e).__name__}: {e}): compile it with "
                               "checkpointer=InMemorySaver()") from e
        return graph, None
    note = "the graph has no checkpointer: the replay gave it an InMemorySaver" if own is None else None
    return copy, note


def graph_tools(graph: Any) -> list:
    """Every LangChain tool the graph binds (tool nodes, steps calling tools, subgraphs)."""
    return list(exported(graph))


def qualified(ns: Any) -> str:
    """A LangGraph namespace or checkpoint_ns (`worker:<task>|agent:<task>`) as an export id."""
    parts = ns.split("|") if isinstance(ns, str) else list(ns)
    return "/".join(p.split(":", 1)[0] for p in parts if p)


def _node_of(config: Any) -> str:
    from langchain_core.runnables.config import ensure_config

    meta = ensure_config(config).get("metadata", {})
    return qualified(meta.get("langgraph_checkpoint_ns", "")) or meta.get("langgraph_node", "")


def _subclasses(cls: type) -> list[type]:
    """Every class under `cls`, once."""
    out: list[type] = []
    todo = list(cls.__subclasses__())
    while todo:
        c = todo.pop()
        if c not in out:
            out.append(c)
            todo.extend(c.__subclasses__())
    return out


class Stand:
    """The scripted model and the stub tools, in place while the replay runs."""

    def __init__(self, turns: dict[str, list[dict]], tools: list) -> None:
        self.turns = {k: list(v) for k, v in turns.items()}
        self.tools = {t.name: t for t in tools}
        self.calls: list[tuple[str, str]] = []  # (node, tool)
        self.n = 0
        #: Per node reading its route from its model's tool call: (the key, the end word) (`route_reader`).
        self.readers: dict[str, tuple[str, str | None]] = {}
        #: The arguments given to each tool's calls so far (each call of a tool gets its own).
        self.given: dict[str, list[dict]] = {}
        #: The witness's first step not yet taken, and why (set by the replay as it runs).
        self.progress: Any = lambda: None

    def answer(self, node: str) -> Any:
        """The model's message at `node`: the witness's next choice there, as tool calls."""
        from langchain_core.messages import AIMessage

        queue = self.turns.get(node)
        reader = self.readers.get(node)
        if not queue:
            if reader is not None:  # the run goes on after the witness: the route that ends it
                nxt = self.progress()
                if nxt is not None or reader[1] is None:
                    at = f"step {nxt[0]['step']} ({describe(nxt[0])})" if nxt else "after the witness's last step"
                    why = "the witness makes no choice there next" if nxt else \
                        "the code names no word for the end (FINISH, END) to answer with"
                    raise NotFollowed(f"{at}: at node {node!r} the graph reads its route from the model's tool call "
                                      f"(tool_calls[0]['args'][{reader[0]!r}]), and {why}")
                return AIMessage(content="", tool_calls=[{"name": "route", "args": {reader[0]: reader[1]},
                                                          "id": "call_route_end", "type": "tool_call"}])
            return AIMessage(content="done")
        choice = queue.pop(0)
        if reader is not None and not choice["calls"]:
            # the supervisor shape: the route rides on a tool call the node reads
            to = str(choice["to"])
            word = (reader[1] or "FINISH") if to in END_NAMES else to
            self.n += 1
            return AIMessage(content="", tool_calls=[{"name": "route", "args": {reader[0]: word},
                                                      "id": f"call_{self.n}", "type": "tool_call"}])
        calls = []
        for tool in choice["calls"]:
            t = self.tools.get(tool)
            if t is None:
                raise NotFollowed(f"step {choice['step']} (choose {choice['to']!r} at {node!r}): the witness calls "
                                  f"{tool!r} next, which the graph binds to no tool node (its tools: "
                                  f"{', '.join(sorted(self.tools)) or 'none'})")
            self.n += 1
            schema = tool_schema(t)
            args = distinct(arguments(schema), schema, self.given.setdefault(tool, []))
            calls.append({"name": tool, "args": args, "id": f"call_{self.n}", "type": "tool_call"})
        return AIMessage(content="" if calls else "done", tool_calls=calls)

    def structured(self, node: str, schema: Any, include_raw: bool) -> Any:
        """The structured answer at `node`: the schema saying the witness's next destination."""
        from langchain_core.messages import AIMessage

        queue = self.turns.get(node)
        if not queue:
            name = output_schema(schema)[0]
            nxt = self.progress()
            if nxt is None:  # the witness is done: the route that ends the run, where the schema has one
                try:
                    value = route_value(schema, "__end__", "after the witness's last step")
                except NotFollowed:
                    value = None
                if value is not None:
                    return {"raw": AIMessage(content=""), "parsed": value, "parsing_error": None} if include_raw \
                        else value
            at = f"step {nxt[0]['step']} ({describe(nxt[0])})" if nxt else "after the witness's last step"
            raise NotFollowed(f"{at}: at node {node!r} the graph asks the model for a structured {name}, and the "
                              "witness makes no choice there next")
        choice = queue.pop(0)
        value = route_value(schema, str(choice["to"]), f"step {choice['step']} (choose {choice['to']!r} at {node!r})")
        if include_raw:
            return {"raw": AIMessage(content=""), "parsed": value, "parsing_error": None}
        return value

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """BaseChatModel's invoke, stream and with_structured_output scripted, and every tool
        stubbed, for the duration; all put back after."""
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.runnables import RunnableLambda

        stand = self

        def invoke(model, input, config=None, **kwargs):  # noqa: A002 - LangChain's name
            return stand.answer(_node_of(config))

        async def ainvoke(model, input, config=None, **kwargs):  # noqa: A002
            return invoke(model, input, config, **kwargs)

        def stream(model, input, config=None, **kwargs):  # noqa: A002
            yield invoke(model, input, config, **kwargs)

        async def astream(model, input, config=None, **kwargs):  # noqa: A002
            yield invoke(model, input, config, **kwargs)

        def bind_tools(model, tools, **kwargs):
            return model

        def with_structured_output(model, schema=None, *, include_raw=False, **kwargs):
            def run(input, config=None):  # noqa: A002
                return stand.structured(_node_of(config), schema, include_raw)

            async def arun(input, config=None):  # noqa: A002
                return run(input, config)

            return RunnableLambda(run, afunc=arun, name="stalwart_scripted_structured_output")

        real_runner_of = guard_middleware.runner_of

        def runner_of(tool, args, name, *rest):
            """The guard's runner for a plain function it is given (guard.call(fn, ...)): a
            recording stub in its place, under the name the guard gives it."""
            if hasattr(tool, "invoke") or not callable(tool):
                return real_runner_of(tool, args, name, *rest)
            nm = name or getattr(tool, "__name__", None)
            if not isinstance(nm, str) or not nm or nm == "<lambda>":
                return real_runner_of(tool, args, name, *rest)
            sync = stand.stub(nm, tool)
            if inspect.iscoroutinefunction(tool):
                async def fake(**kwargs: Any) -> Any:
                    return sync(**kwargs)
            else:
                def fake(**kwargs: Any) -> Any:
                    return sync(**kwargs)
            fake.__name__ = nm
            return real_runner_of(fake, args, nm, *rest)

        saved_tools = {name: (t.__dict__.get("func"), t.__dict__.get("coroutine")) for name, t in self.tools.items()}
        patched = {"invoke": invoke, "ainvoke": ainvoke, "stream": stream, "astream": astream,
                   "bind_tools": bind_tools, "with_structured_output": with_structured_output}
        # A provider's class (ChatOpenAI, ChatAnthropic, ...) defines its own with_structured_output
        # and bind_tools: every class under BaseChatModel defining one is scripted too.
        classes = [BaseChatModel, *_subclasses(BaseChatModel)]
        saved = {(c, k): c.__dict__[k] for c in classes for k in patched if k in c.__dict__}
        try:
            guard_middleware.runner_of = runner_of
            for c, k in saved:
                setattr(c, k, patched[k])
            for name, t in self.tools.items():
                object.__setattr__(t, "func", self.stub(name, t))
                if getattr(t, "coroutine", None) is not None:
                    object.__setattr__(t, "coroutine", self.astub(name, t))
            yield
        finally:
            guard_middleware.runner_of = real_runner_of
            for (c, k), v in saved.items():
                setattr(c, k, v)
            for name, (f, c) in saved_tools.items():
                object.__setattr__(self.tools[name], "func", f)
                object.__setattr__(self.tools[name], "coroutine", c)

    def stub(self, name: str, tool: Any):
        """The recording stub standing for the tool `name`."""
        def run(*args: Any, **kwargs: Any) -> Any:
            from langgraph.config import get_config

            try:
                node = _node_of(get_config())
            except RuntimeError:
                node = "?"
            self.calls.append((node, name))
            text = f"stub result of {name}"
            return (text, None) if getattr(tool, "response_format", "content") == "content_and_artifact" else text

        return run

    def astub(self, name: str, tool: Any):
        """The stub as a coroutine, for a tool that has one."""
        sync = self.stub(name, tool)

        async def run(*args: Any, **kwargs: Any) -> Any:
            return sync(*args, **kwargs)

        return run


# ---------------------------------------------------------------------------- the replay
def _updates(graph: Any, payload: Any, config: dict, use_async: bool, seen: Any) -> None:
    """Runs the graph once, through stream or astream, giving `seen` each (namespace, update) pair
    as it comes (so a node that raises later finds the nodes before it recorded)."""
    if not use_async:
        for x in graph.stream(payload, config, stream_mode="updates", subgraphs=True):
            seen(*x)
        return

    async def collect() -> None:
        async for x in graph.astream(payload, config, stream_mode="updates", subgraphs=True):
            seen(*x)

    asyncio.run(collect())


def replay(script: dict, graph: Any, inputs: Any = None, answers: list | None = None) -> str | None:
    """Runs the graph as the script says; None when it follows the witness, else one line. A graph
    with async-only nodes is run again through astream."""
    if not isinstance(script, dict) or script.get("format") != SCRIPT_FORMAT:
        got = script.get("format") if isinstance(script, dict) else type(script).__name__
        raise HarnessError(f"not a {SCRIPT_FORMAT} script (format {got!r})")
    steps = script.get("steps") or []
    graph, _ = with_saver(graph, steps)
    try:
        return _replay(steps, graph, inputs, answers, use_async=False)
    except _AsyncOnly:
        return _replay(steps, graph, inputs, answers, use_async=True)


class _AsyncOnly(Exception):
    """The graph has a node with no synchronous function: run it through astream."""


def _replay(steps: list[dict], graph: Any, inputs: Any, answers: list | None, use_async: bool) -> str | None:
    stand = Stand(model_turns(steps), graph_tools(graph))
    for node in getattr(graph, "nodes", {}) or {}:
        found = route_reader(node_function(graph, node))
        if found is not None:
            stand.readers[node] = found
    config = {"configurable": {"thread_id": f"stalwart-replay-{uuid.uuid4()}"}, "recursion_limit": 200}
    visited: list[str] = []
    opened: list[str] = []  # subgraph nodes whose inside is running
    answers = list(answers or [])
    from langgraph.types import Command
    stand.progress = lambda: first_missing(steps, collapse(visited), stand.calls)

    turns = max((s.get("turn", 1) for s in steps), default=1)
    guard_answers = 0  # the guard's own questions answered yes (bounded: a guard asking again is a loop)
    try:
        with stand.installed():
            for turn in range(1, turns + 1):
                confirms = pauses(steps, turn)
                payload: Any = inputs if inputs is not None else {
                    "messages": [{"role": "user", "content": f"turn {turn}"}]}
                while True:
                    def seen(ns: Any, update: Any) -> None:
                        for node in update or {}:
                            if node != "__interrupt__":
                                enter(visited, opened, qualified(ns), node)

                    _updates(graph, payload, config, use_async, seen)
                    pending = graph.get_state(config).next if getattr(graph, "checkpointer", None) else ()
                    if not pending:
                        break
                    if not confirms:
                        ask = guard_question(steps, stand.calls, pending, graph.get_state(config))
                        if ask is not None and guard_answers < len(steps):
                            guard_answers += 1
                            payload = ask
                            continue
                        nxt = first_missing(steps, collapse(visited), stand.calls)
                        at = f" (the witness's next step is {nxt[0]['step']}: {describe(nxt[0])})" if nxt else ""
                        raise NotFollowed(f"turn {turn}: the run pauses at {', '.join(pending)} and the witness "
                                          f"has no answer for it{at}")
                    c = confirms.pop(0)
                    if c["when"] in ("before", "after"):
                        payload = None if c["yes"] else Command(resume=False)
                    else:
                        fn = node_function(graph, str(c["node"]))
                        payload = Command(resume=answers.pop(0) if answers else
                                          resume_value(fn, c["yes"]) if fn else c["yes"])
    except NotFollowed:
        raise
    except Exception as e:  # noqa: BLE001 - the graph's own failure: one line
        if not use_async and isinstance(e, TypeError) and ASYNC_ONLY in str(e):
            raise _AsyncOnly() from e
        raise NotFollowed(raised(e, steps, collapse(visited), stand.calls)) from e
    found = first_missing(steps, collapse(visited), stand.calls)
    if not found:
        return None
    why = guard_refusal(graph, config, found[0]) if found[0]["kind"] == "call" else ""
    return f"step {found[0]['step']} ({describe(found[0])}): {found[1]}{why}"


def guard_refusal(graph: Any, config: dict, step: dict) -> str:
    """For a witness's call the run did not make: `; the guard refused it: WHY` when the graph's
    guard (`stalwart_export.Guard`) recorded that tool refused in the run (its last refusal's
    text), else ""."""
    try:
        values = graph.get_state(config).values
        refused = [e for e in read_history(values) if e.get("tool") == step.get("tool") and not e.get("ran")]
    except Exception:  # noqa: BLE001 - no guard's history to read
        return ""
    if not refused:
        return ""
    msgs = values.get("messages", []) if isinstance(values, dict) else getattr(values, "messages", [])
    prefix = "Refused by the tool check "
    texts = [str(getattr(m, "content", "")) for m in msgs or []
             if getattr(m, "type", "") == "tool" and str(getattr(m, "content", "")).startswith(prefix)]
    text = texts[-1].removeprefix(prefix) if texts else f"({', '.join(refused[-1].get('reasons') or [])})"
    return f"; the graph's guard refused it {text}"


def raised(e: BaseException, steps: list[dict], got_nodes: list[str], calls: list[tuple[str, str]]) -> str:
    """The line for a graph that raised: the witness's step it was at, the node that raised (as
    LangGraph notes it on the exception) and the error's first line."""
    import re

    text = str(e).splitlines()[0] if str(e) else ""
    tasks = [m.group(1) for n in getattr(e, "__notes__", []) or []
             for m in [re.match(r"During task with name '([^']*)'", n)] if m]
    where = f" in node {tasks[-1]!r}" if tasks else ""
    last = got_nodes[-1] if got_nodes else "__start__"
    nxt = first_missing(steps, got_nodes, calls)
    at = f"step {nxt[0]['step']} ({describe(nxt[0])})" if nxt else "after the witness's last step"
    return f"{at}: the graph raised {type(e).__name__}: {text}{where}, after {last!r}"
