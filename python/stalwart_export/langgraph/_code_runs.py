"""Code a node runs that no tool describes (issue 28, SPEC 12.5: nothing unseen passes): a call of
the builtins `exec`/`eval`/`compile` (`_code.CODE_BUILTINS`), of a shell or another program
(`subprocess.run`/`Popen`/`call`/`check_call`/`check_output`/`getoutput`/`getstatusoutput`,
`os.system`, `os.popen`, `os.exec*`, `os.spawn*`, `pty.spawn`, asyncio's `create_subprocess_*`),
or of `runpy`. What such a call runs is known only at run time - often the model's own text (a
data-science agent's `exec(code)`, a shell step's `subprocess.run(msg.content, shell=True)`) - and
no catalogue entry or check reads it. `_unseen.unread_calls` makes each an opaque `code` entry at
the call (at the node's call of the helper, for a call inside one), whose why names the call, says
when its argument is the model's text (`_flow`), and gives the fix.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from .. import _code
from . import _flow

SUBPROCESS = ("run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput")


@functools.lru_cache(maxsize=1)
def _runners() -> dict[int, tuple[Any, str]]:
    """id -> (object, how the why names it) of every function that runs code or a program."""
    import asyncio
    import builtins
    import os
    import pty
    import runpy
    import subprocess

    out: dict[int, tuple[Any, str]] = {}

    def add(obj: Any, label: str) -> None:
        if obj is not None:
            out[id(obj)] = (obj, label)

    for n in sorted(_code.CODE_BUILTINS):
        add(getattr(builtins, n, None), n)
    for n in SUBPROCESS:
        add(getattr(subprocess, n, None), f"subprocess.{n}")
    for n in dir(os):
        if n in ("system", "popen") or n.startswith(("exec", "spawn")) and callable(getattr(os, n)):
            add(getattr(os, n), f"os.{n}")
    add(pty.spawn, "pty.spawn")
    for n in ("create_subprocess_shell", "create_subprocess_exec"):
        add(getattr(asyncio, n, None), f"asyncio.{n}")
    for n in ("run_path", "run_module"):
        add(getattr(runpy, n, None), f"runpy.{n}")
    return out


def runner(obj: Any) -> str | None:
    """How the why names `obj` when it runs code or a program (a `functools.partial` of one too:
    `sh = partial(subprocess.run, shell=True)`), else None."""
    for _ in range(4):
        if isinstance(obj, functools.partial):
            obj = obj.func
    try:
        hit = _runners().get(id(obj))
    except TypeError:  # pragma: no cover - unhashable ids never happen
        return None
    return hit[1] if hit is not None and hit[0] is obj else None


def why(label: str, call: ast.Call, flow: _flow._Flow) -> str:
    """The opaque entry's why for `call`, which runs `label` (see the module's doc)."""
    given = [a for _k, a in _flow._args(call)]
    shown = _shown(given[0]) if given else ""
    model = any(flow.written(a) for a in given)
    if model:
        what = "code or a command the model wrote (its argument is the model's text)"
    elif given and _literal(given[0]):
        what = "code or a command written in the source, which the exporter does not read as code"
    else:
        what = "code or a command known only at run time"
    return (f"runs {label}({shown}): {what}, inside the node, where no tool describes it and no check reads it; "
            "run it as a tool whose argument has the role `code` (or `shell`) so QG017 reads it, through the guard "
            "(guard.call), or declare it in the words: nodes.<node>.calls naming that tool, with an argument of "
            "role `code`")


def _shown(expr: ast.AST) -> str:
    try:
        text = ast.unparse(expr)
    except Exception:  # noqa: BLE001
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."


def _literal(expr: ast.AST) -> bool:
    """Is `expr` a literal (`"ls -l"`, `["ls", "-l"]`)?"""
    try:
        ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
