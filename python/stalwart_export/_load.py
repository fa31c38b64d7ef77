"""Loading what `MODULE:ATTR` names, for the command line (`__main__.py`) and the replay
(`replay.py`): a compiled LangGraph graph or an OpenAI Agents SDK agent, or a function of no
arguments returning one; `UsageError` with a one-line message for everything the user can fix."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
from typing import Any


DEBUG_ENV = "STALWART_EXPORT_DEBUG"



class UsageError(Exception):
    """A one-line error for the user: printed as `stalwart-export: error: ...`, exit 2."""



def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")



def _user_error(action: str, spec: str, e: BaseException, retry: str) -> UsageError:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return UsageError(
        f"cannot {action} {spec}: {type(e).__name__}{': ' + msg if msg else ''} "
        f"(run `{retry}` to see the traceback, or set {DEBUG_ENV}=1)"
    )



def parse_spec(spec: str) -> tuple[str, list[str]]:
    """`module.path:attr.path` as (module name, attribute names); `UsageError` if malformed."""
    example = "e.g. myapp.agent:graph"
    if ":" not in spec:
        raise UsageError(f"expected MODULE:ATTR ({example}), got {spec!r}: add the graph's name after a colon")
    mod_name, attr = spec.split(":", 1)
    if not mod_name:
        raise UsageError(f"{spec!r} has no module before the colon: write MODULE:ATTR ({example})")
    if "/" in mod_name or "\\" in mod_name or mod_name.endswith(".py"):
        guess = mod_name.replace("\\", "/").removesuffix(".py").strip("/").replace("/", ".")
        raise UsageError(f"{mod_name!r} is a file path: name the module as Python imports it "
                         f"({guess}:{attr or 'graph'}), run from the directory it is imported from")
    if mod_name.startswith("."):
        raise UsageError(f"{mod_name!r} is a relative module name: give the absolute one ({example})")
    if not attr:
        raise UsageError(f"{spec!r} has no attribute after the colon: write MODULE:ATTR ({example})")
    parts = attr.split(".")
    if not all(p.isidentifier() for p in parts):
        raise UsageError(f"{attr!r} is not an attribute name: write MODULE:ATTR with ATTR a (dotted) name ({example})")
    return mod_name, parts



def _callable_factory(obj: Any) -> bool:
    """A function (or method, partial, cached function) to call for the graph: callable, not a
    class and not a LangChain Runnable (a chat model or graph is never called)."""
    if isinstance(obj, type) or not callable(obj):
        return False
    try:
        from langchain_core.runnables import Runnable
    except ImportError:  # pragma: no cover
        return True
    return not isinstance(obj, Runnable)



def load(spec: str) -> Any:
    """The compiled graph `spec` (MODULE:ATTR) names, calling ATTR when it is a function of no
    arguments. Raises `UsageError` with a one-line message for everything the user can fix."""
    # the ground reads a framework's side only when a graph is loaded (either framework may be absent)
    from .langgraph.graph import BUILDER_FIX, GRAPH_EXAMPLES, describe, is_builder, is_graph
    from .openai_agents._agent import is_agent

    mod_name, parts = parse_spec(spec)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        missing = e.name or ""
        if missing and (mod_name == missing or mod_name.startswith(missing + ".")):
            if _debug():
                raise
            raise UsageError(
                f"cannot export {spec}: no module named {missing!r} on the import path (the working "
                f"directory {cwd}, then PYTHONPATH): run from the directory it is imported from, or set PYTHONPATH"
            ) from e
        if _debug():
            raise
        raise _user_error("import", spec, e, f'python -c "import {mod_name}"') from e
    except (Exception, SystemExit) as e:
        if _debug():
            raise
        raise _user_error("import", spec, e, f'python -c "import {mod_name}"') from e

    obj: Any = mod
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            where = ".".join([mod_name] + parts[:i])
            hint = ""
            if i == 0:
                found = sorted(k for k, v in vars(mod).items() if not k.startswith("_") and (is_graph(v) or is_builder(v)))
                if found:
                    hint = f"; its graphs: {', '.join(found)}"
            raise UsageError(f"cannot export {spec}: {where} has no attribute {part!r}{hint}") from e
        except Exception as e:  # a property raising
            if _debug():
                raise
            raise _user_error("build", spec, e, f'python -c "import {mod_name}; {mod_name}.{".".join(parts[:i + 1])}"') from e

    what = f"{mod_name}:{'.'.join(parts)}"
    if _callable_factory(obj):
        try:
            sig = inspect.signature(obj)
            sig.bind()
        except TypeError as e:
            raise UsageError(
                f"{what} is a function that needs arguments ({e}): name the compiled graph, or a function "
                "of no arguments that returns it"
            ) from e
        except ValueError:  # no signature to read: just call it
            pass
        try:
            with contextlib.redirect_stdout(sys.stderr):
                result = obj()
        except (Exception, SystemExit) as e:
            if _debug():
                raise
            raise _user_error("build", spec, e, f'python -c "import {mod_name}; {mod_name}.{".".join(parts)}()"') from e
        if is_agent(result):
            return result
        if is_builder(result):
            raise UsageError(f"{what}() returned a StateGraph that was not compiled: {BUILDER_FIX}")
        if not is_graph(result):
            raise UsageError(f"{what}() returned {describe(result)}, not a compiled LangGraph graph: "
                             f"make the function return the compiled graph ({GRAPH_EXAMPLES})")
        return result
    if is_agent(obj):
        return obj
    if is_builder(obj):
        raise UsageError(f"{what}: {BUILDER_FIX}")
    if not is_graph(obj):
        raise UsageError(f"{what} is {describe(obj)}, not a compiled LangGraph graph: name the compiled graph "
                         f"({GRAPH_EXAMPLES}), or a function of no arguments returning it")
    return obj
