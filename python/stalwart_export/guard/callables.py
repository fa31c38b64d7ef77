"""What `guard.call` and `guard.acall` run (SPEC 12.1; issue 29 item 2): a LangChain tool (or any
runnable with a `name`), or a plain function, sync or async, named by its `__name__` or an explicit
`name=`; and the arguments the model did not write.

Injected arguments (`InjectedState`, `InjectedStore`, `InjectedToolCallId`, `ToolRuntime`, any
`InjectedToolArg`) are given by the application, as LangGraph's `ToolNode` gives them: they are not
the model's arguments, so the guard neither checks them against the tool's `args` (rule 3) nor
scans them for destinations (rule 4), nor records them (a state is not a history entry). They are
passed to the tool as given. A tool that takes an `InjectedToolCallId` is invoked with a whole tool
call, as `ToolNode` does (its id: `call_id=`, else the value given for that argument, else a new one).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import uuid
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from .attempts import retry_wrapped
from .decide import Call


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


def _tool_injected(tool: Any, args: dict) -> tuple[set[str], set[str]]:
    """(the names in `args` that `tool` gets injected, those of them that are its tool call id)."""
    from langchain_core.tools.base import InjectedToolCallId, _is_injected_arg_type, get_all_basemodel_annotations

    injected: set[str] = set()
    ids: set[str] = set()
    filt = getattr(tool, "_filter_injected_args", None)
    if callable(filt):
        try:
            injected = set(args) - set(filt(dict(args)))
        except Exception:  # noqa: BLE001 - fall back to the schema below
            injected = set()
    schema = getattr(tool, "args_schema", None)
    if schema is not None and not isinstance(schema, dict):
        try:
            for k, t in get_all_basemodel_annotations(schema).items():
                if _is_injected_arg_type(t):
                    injected.add(k) if k in args else None
                if _is_injected_arg_type(t, InjectedToolCallId):
                    ids.add(k)
        except Exception:  # noqa: BLE001 - no annotations to read
            pass
    return injected, ids


def _fn_injected(fn: Any, args: dict) -> set[str]:
    from langchain_core.tools.base import _get_injected_args_keys_from_signature

    try:
        return set(args) & set(_get_injected_args_keys_from_signature(fn))
    except Exception:  # noqa: BLE001 - a callable without a readable signature injects nothing
        return set()


def runner_of(tool: Any, args: Any, name: str | None, call_id: str | None, who: str) -> tuple[Runner, Call]:
    """(how `tool` runs, the call the guard decides: the model's arguments of `args`, the injected
    ones left out). Raises `TypeError` for something that is neither a tool nor a callable, a
    callable without a name, or a `name=` that contradicts a tool's own name."""
    if args is not None and not isinstance(args, dict):
        raise TypeError(f"{who} expects the arguments as a mapping, not {type(args).__name__}")
    args = dict(args or {})
    inner, with_retry = retry_wrapped(tool)
    if hasattr(inner, "invoke"):
        own = getattr(inner, "name", None)
        if name is not None and isinstance(own, str) and own and name != own:
            raise TypeError(f"{who}: name={name!r} but the tool is named {own!r}; the catalogue and the export name a "
                            "tool by its own name: drop name= (it names plain functions)")
        nm = name or own or getattr(inner, "__name__", None)
        try:
            injected, ids = _tool_injected(inner, args)
        except ImportError:  # pragma: no cover
            injected, ids = set(), set()
        if ids and isinstance(nm, str):
            given = next((args[k] for k in ids if isinstance(args.get(k), str) and args[k]), None)
            cid = call_id or given or f"call_{uuid.uuid4().hex[:16]}"
            ids_payload = ids

            def payload(a: dict) -> Any:
                full = {**a, **{k: args[k] for k in injected if k not in ids_payload}}
                return {"name": nm, "args": full, "id": cid, "type": "tool_call"}
        else:
            def payload(a: dict) -> Any:
                return {**a, **{k: args[k] for k in injected}}
        sync = lambda a: tool.invoke(payload(a))  # noqa: E731
        async_ = (lambda a: tool.ainvoke(payload(a))) if hasattr(tool, "ainvoke") else None
        # a tool object runs its own sync form in guard.call; guard.acall awaits ainvoke on its loop
        r = Runner(nm, {k: args[k] for k in injected}, sync, async_, with_retry)
    elif callable(tool):
        nm = name or getattr(tool, "__name__", None)
        injected = _fn_injected(tool, args)
        kept = {k: args[k] for k in injected}
        if _is_async_fn(tool):
            r = Runner(nm, kept, None, lambda a: tool(**{**a, **kept}), False)
        else:
            r = Runner(nm, kept, lambda a: tool(**{**a, **kept}), None, False)
    else:
        raise TypeError(f"{who} expects a tool (with a name and invoke) or a function, got {type(tool).__name__}")
    if not isinstance(r.name, str) or not r.name or r.name == "<lambda>":
        raise TypeError(f"{who} cannot name {type(tool).__name__} {tool!r}: give name='the catalogue name'")
    return r, Call(r.name, {k: v for k, v in args.items() if k not in r.injected}, None)
