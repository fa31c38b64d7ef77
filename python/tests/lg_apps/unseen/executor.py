"""A data-science agent's code executor (the application's own module): a function that runs a
snippet and returns its `result`, and a small REPL object keeping its namespace between runs."""

from __future__ import annotations

import contextlib
import io


def execute_code(code: str) -> str:
    """Run a Python snippet and return the value it leaves in `result`."""
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - the shape under test
    return str(scope.get("result"))


class LocalREPL:
    """Runs snippets one after another in one namespace, returning what they print."""

    def __init__(self) -> None:
        self.namespace: dict = {}

    def run(self, code: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, self.namespace)  # noqa: S102 - the shape under test
        return out.getvalue()
