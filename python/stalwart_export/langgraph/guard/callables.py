"""What `guard.call` and `guard.acall` run (SPEC 12.1; issue 29 item 2): a LangChain tool (or any
runnable with a `name`), or a plain function, sync or async, named by its `__name__` or an explicit
`name=`; and the arguments the model did not write.

Injected arguments (`InjectedState`, `InjectedStore`, `InjectedToolCallId`, `ToolRuntime`, any
`InjectedToolArg`) are not the model's: as LangGraph's `ToolNode` does, the guard gives them itself -
the step's state (or the field `InjectedState("field")` names) for `InjectedState`, the graph's
store for `InjectedStore`, the call's id (`call_id=`, else a new one; the tool is invoked with a
whole tool call, as `ToolNode` invokes it) for `InjectedToolCallId` - or takes them from
`injected={...}` (a `ToolRuntime` must be given there). They are neither checked against the tool's
`args` (rule 3), nor scanned for destinations (rule 4), nor recorded (a state is not a history
entry). Every key of `args` is the model's: an argument the model wrote under an injected
parameter's name is checked as any other (rule 3 refuses it unless the catalogue declares it) and
never reaches the tool in place of the injected value, as in `ToolNode`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import OrderedDict
import inspect
import uuid
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from ...guard import state as _state
from ...guard.decide import Call
from .attempts import retry_wrapped


@dataclass
class Runner:
    """How one call runs: `name` (the catalogue's), the injected arguments given (`injected`, passed
    through unchecked), `sync(args)` and `async_(args)` (None when the callable has no such form),
    and whether it retries inside (`with_retry`: `.with_retry()`)."""

    name: str
    injected: dict = field(default_factory=dict)
    sync: Callable[[dict], Any] | None = None
    async_: Callable[[dict], Awaitable[Any]] | None = None
    with_retry: bool = False

    def run(self, args: dict, loop: Any = None) -> Any:
        """Run the call with the decided `args` (and the injected ones). `loop`: the event loop of
        an `acall`, which an async callable runs on (this runs in a thread of its own then)."""
        if self.async_ is not None and (loop is not None or self.sync is None):
            coro = self.async_(args)
            if loop is not None:
                return asyncio.run_coroutine_threadsafe(coro, loop).result()
            return asyncio.run(coro)
        assert self.sync is not None
        return self.sync(args)


def _is_async_fn(fn: Any) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def _hints(tool: Any) -> dict[str, Any]:
    """The annotated parameters of a tool (its args schema's fields, and its function's signature)
    or of a plain function."""
    import typing

    from langchain_core.tools.base import get_all_basemodel_annotations

    out: dict[str, Any] = {}
    schema = getattr(tool, "args_schema", None)
    if schema is not None and not isinstance(schema, dict):
        try:
            out.update(get_all_basemodel_annotations(schema))
        except Exception:  # noqa: BLE001 - no annotations to read
            pass
    for f in (getattr(tool, "func", None), getattr(tool, "coroutine", None),
              None if hasattr(tool, "invoke") else tool):
        if f is None:
            continue
        try:
            out.update({k: v for k, v in typing.get_type_hints(f, include_extras=True).items() if k != "return"})
        except Exception:  # noqa: BLE001 - an unresolvable annotation: that parameter is not read
            pass
    return out


#: injected_params per tool object (the tool kept, so its id is not reused): a tool's signature does not change.
_PARAMS: "OrderedDict[int, tuple[Any, dict]]" = OrderedDict()
_PARAMS_LOCK = threading.Lock()


def injected_params(tool: Any) -> dict[str, tuple[str, Any]]:
    """`_injected_params(tool)`, remembered per tool object (the last 1024)."""
    with _PARAMS_LOCK:
        got = _PARAMS.get(id(tool))
    if got is not None and got[0] is tool:
        return got[1]
    params = _injected_params(tool)
    with _PARAMS_LOCK:
        _PARAMS[id(tool)] = (tool, params)
        while len(_PARAMS) > 1024:
            _PARAMS.popitem(last=False)
    return params


def _injected_params(tool: Any) -> dict[str, tuple[str, Any]]:
    """The parameters of `tool` (a LangChain tool or a plain function) that LangGraph injects, by
    name: (`state`, the field or None), (`store`, None), (`tool_call_id`, None), (`runtime`, None)
    or (`other`, None) for any other `InjectedToolArg`."""
    from typing import get_args

    from langchain_core.tools.base import (InjectedToolArg, InjectedToolCallId, _is_directly_injected_arg_type,
                                           _is_injected_arg_type)

    try:
        from langgraph.prebuilt import InjectedState, InjectedStore
    except ImportError:  # pragma: no cover
        InjectedState = InjectedStore = None  # type: ignore[assignment,misc]
    out: dict[str, tuple[str, Any]] = {}
    for k, t in _hints(tool).items():
        if _is_directly_injected_arg_type(t):
            out[k] = ("runtime", None)
        elif not _is_injected_arg_type(t):
            continue
        elif _is_injected_arg_type(t, InjectedToolCallId):
            out[k] = ("tool_call_id", None)
        elif InjectedState is not None and _is_injected_arg_type(t, InjectedState):
            meta = next((a for a in get_args(t)[1:] if isinstance(a, InjectedState)), None)
            out[k] = ("state", getattr(meta, "field", None))
        elif InjectedStore is not None and _is_injected_arg_type(t, InjectedStore):
            out[k] = ("store", None)
        elif _is_injected_arg_type(t, InjectedToolArg):
            out[k] = ("other", None)
    for k in getattr(tool, "_injected_args_keys", None) or ():  # ToolRuntime in a tool's function
        out.setdefault(k, ("runtime", None))
    return out


def _injected_values(params: dict[str, tuple[str, Any]], given: dict, state: Any, who: str) -> dict:
    """The injected arguments a call passes: those `given` (`injected=`), else, as ToolNode injects
    them, the step's `state` (or its field) for `InjectedState` and the graph's store for
    `InjectedStore`. A `ToolRuntime` or other injected argument must be given."""
    bad = sorted(set(given) - set(params))
    if bad:
        raise TypeError(f"{who}: injected={bad} but the tool injects only {sorted(params) or 'nothing'}: pass the "
                        "model's arguments in args")
    out = dict(given)
    for k, (kind, fld) in params.items():
        if k in out:
            continue
        if kind == "state" and state is not None:
            out[k] = _state.get(state, fld) if fld else state
        elif kind == "store":
            try:
                from langgraph.config import get_store

                out[k] = get_store()
            except Exception:  # noqa: BLE001 - outside a graph with a store: the tool says what it lacks
                pass
    return out


def runner_of(tool: Any, args: Any, name: str | None, call_id: str | None, who: str,
              injected: dict | None = None, state: Any = None) -> tuple[Runner, Call]:
    """(how `tool` runs, the call the guard decides). Every key of `args` is the model's argument,
    checked and recorded (an argument named like an injected parameter included: it is refused by
    rule 3 unless the catalogue declares it, and never reaches the tool as the injected value); the
    injected parameters get `injected` (a mapping), else what LangGraph's ToolNode would give them
    (`_injected_values`). Raises `TypeError` for something that is neither a tool nor a callable,
    a callable without a name, a `name=` that contradicts a tool's own name, or an `injected` key
    the tool does not inject."""
    if args is not None and not isinstance(args, dict):
        raise TypeError(f"{who} expects the arguments as a mapping, not {type(args).__name__}")
    if injected is not None and not isinstance(injected, dict):
        raise TypeError(f"{who} expects injected= as a mapping, not {type(injected).__name__}")
    args = dict(args or {})
    inner, with_retry = retry_wrapped(tool)
    if hasattr(inner, "invoke"):
        own = getattr(inner, "name", None)
        if name is not None and isinstance(own, str) and own and name != own:
            raise TypeError(f"{who}: name={name!r} but the tool is named {own!r}; the catalogue and the export name a "
                            "tool by its own name: drop name= (it names plain functions)")
        nm = name or own or getattr(inner, "__name__", None)
    elif callable(tool):
        nm = name or getattr(tool, "__name__", None)
    else:
        raise TypeError(f"{who} expects a tool (with a name and invoke) or a function, got {type(tool).__name__}")
    if not isinstance(nm, str) or not nm or nm == "<lambda>":
        raise TypeError(f"{who} cannot name {type(tool).__name__} {tool!r}: give name='the catalogue name'")
    try:
        params = injected_params(inner)
    except ImportError:  # pragma: no cover
        params = {}
    ids = [k for k, (kind, _) in params.items() if kind == "tool_call_id"]
    if set(injected or {}) & set(ids):
        raise TypeError(f"{who}: the tool call id is not an injected= value: give call_id=")
    values = _injected_values({k: v for k, v in params.items() if k not in ids}, dict(injected or {}), state, who)

    if hasattr(inner, "invoke"):
        if ids:
            cid = call_id or f"call_{uuid.uuid4().hex[:16]}"

            def payload(a: dict) -> Any:
                return {"name": nm, "args": {**a, **values}, "id": cid, "type": "tool_call"}
        else:
            def payload(a: dict) -> Any:
                return {**a, **values}
        sync = lambda a: tool.invoke(payload(a))  # noqa: E731
        async_ = (lambda a: tool.ainvoke(payload(a))) if hasattr(tool, "ainvoke") else None
        # a tool object runs its own sync form in guard.call; guard.acall awaits ainvoke on its loop
        r = Runner(nm, values, sync, async_, with_retry)
    else:
        if ids:
            values.update({k: call_id or f"call_{uuid.uuid4().hex[:16]}" for k in ids})
        if _is_async_fn(tool):
            r = Runner(nm, values, None, lambda a: tool(**{**a, **values}), False)
        else:
            r = Runner(nm, values, lambda a: tool(**{**a, **values}), None, False)
    return r, Call(r.name, args, None)
