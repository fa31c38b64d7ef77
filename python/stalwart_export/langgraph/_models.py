"""The chat model a node runs (SPEC 2.2 `model` nodes): found in its runnable or what its code
references, the tools it is bound with, whether it makes one tool call a message, and the tool
lists it may bind (for provider-hosted tools, `_hosted.py`)."""

from __future__ import annotations

from typing import Any

from .. import _code, _hosted
from . import _unseen


_PREBUILT_MODEL_FUNCS = (
    "create_react_agent.<locals>.call_model",
    "create_react_agent.<locals>.acall_model",
    "create_agent.<locals>.model_node",
    "create_agent.<locals>.amodel_node",
)


class ModelReading:
    """The model of a node of a `GraphExport` (a part of it: `self` is the walk)."""

    def find_model(self, runnable: Any, fn: Any) -> tuple[str | None, list[str] | None]:
        from langchain_core.language_models import BaseLanguageModel

        def model_of(o: Any, depth: int = 0) -> tuple[Any, list[str] | None] | None:
            if depth > 6:
                return None
            if isinstance(o, BaseLanguageModel):
                return o, None
            if _unseen.is_configurable_model(o):
                # init_chat_model() with the model picked from the configuration at run time
                return o, _unseen.configurable_bound(o)
            bound = getattr(o, "bound", None)
            if bound is not None and hasattr(o, "kwargs"):
                r = model_of(bound, depth + 1)
                if r is not None:
                    tools = (getattr(o, "kwargs", None) or {}).get("tools")
                    names = None
                    if tools:
                        names = [tool_name(t) for t in tools]
                    return r[0], names or r[1]
            steps = _code.attr(o, "steps", None)
            for step in steps if isinstance(steps, (list, tuple)) else []:  # a class's `steps` is a property
                r = model_of(step, depth + 1)
                if r is not None:
                    return r
            return None

        r = model_of(runnable)
        if r is None and fn is not None:
            for _, o in _code.referenced_objects(fn, depth=4):
                r = model_of(o)
                if r is not None:
                    break
        if r is None and fn is not None and any(
            getattr(_code.plain_function(fn), "__qualname__", "").endswith(q) for q in _PREBUILT_MODEL_FUNCS
        ):
            return "prebuilt agent model node (model chosen at run time)", None
        if r is None:
            return None, None
        return _code.qualname(r[0]), r[1]


def one_call_a_message(runnable: Any, fn: Any) -> bool:
    """True when the model a node runs is bound with `parallel_tool_calls=False` (one tool call a
    message), in the runnable or what its code references."""
    def bound_single(o: Any, depth: int = 0) -> bool:
        if depth > 6:
            return False
        kwargs = _code.attr(o, "kwargs", None)
        if isinstance(kwargs, dict) and kwargs.get("parallel_tool_calls") is False:
            return True
        inner = _code.attr(o, "bound", None)
        if inner is not None and inner is not o and bound_single(inner, depth + 1):
            return True
        steps = _code.attr(o, "steps", None)  # on a class (RunnableSequence itself) a property: no steps
        return isinstance(steps, (list, tuple)) and any(bound_single(st, depth + 1) for st in steps)

    if bound_single(runnable):
        return True
    return fn is not None and any(bound_single(o) for _, o in _code.referenced_objects(fn, depth=4))


def bound_tool_lists(runnable: Any, fn: Any) -> list[list]:
    """The tool lists a model node may bind its model with: the `tools` of every binding
    (`model.bind_tools([...])`) in the runnable or what its code references, the provider tool
    dicts written in a tool list in its own code (`_hosted.literal_dicts`), and every list its
    code references that holds a provider tool dict (create_agent's and create_react_agent's
    built-in tools, a list the node binds at run time). Reading more lists than are bound only
    adds hosted tools, never hides one."""
    from langchain_core.runnables import Runnable

    out: list[list] = []
    seen: set[int] = set()

    def bindings(o: Any, depth: int = 0) -> None:
        if depth > 6 or id(o) in seen or not isinstance(o, Runnable):
            return
        seen.add(id(o))
        kwargs = _code.attr(o, "kwargs", None)
        if isinstance(kwargs, dict) and isinstance(kwargs.get("tools"), (list, tuple)):
            out.append(list(kwargs["tools"]))
        for field in ("bound", "first", "last", "runnable"):
            inner = _code.attr(o, field, None)
            if inner is not None and inner is not o:
                bindings(inner, depth + 1)
        for many in ("steps", "middle", "fallbacks"):  # a sequence's steps, a model's fallbacks
            for st in _code.attr(o, many, None) or []:
                bindings(st, depth + 1)

    bindings(runnable)
    if fn is not None and not _code.is_library(fn):
        tree = _code.parse_function(fn)
        if tree is not None:
            def resolve(expr: Any) -> Any:
                got = _code.resolve_name(fn, expr)
                return None if got is _code._UNRESOLVED else got

            out.append(_hosted.literal_dicts(tree, resolve))  # `model.bind_tools([..., {"type": ...}])` in its code
    if fn is not None:
        for _, o in _code.referenced_objects(fn, depth=4):
            if isinstance(o, (list, tuple)) and any(_hosted.is_hosted(t) for t in o):
                out.append(list(o))
            else:
                bindings(o)
    return out


def is_middleware(obj: Any) -> bool:
    if obj is None:
        return False
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError:
        return False
    return isinstance(obj, AgentMiddleware)


def tool_name(t: Any) -> str:
    if _hosted.is_hosted(t):
        return f"hosted {t.get('type')}"
    if isinstance(t, dict):
        fn = t.get("function")
        if isinstance(fn, dict) and "name" in fn:
            return fn["name"]
        return t.get("name", "?")
    return getattr(t, "name", None) or getattr(t, "__name__", "?")
