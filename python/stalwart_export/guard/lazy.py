"""The guard's catalogue read at its first call when it is not there yet (SPEC 12.1; issue 29 item
5). `Guard("build/catalogue.json")` at module import runs before the exporter has written the
catalogue on a fresh checkout, and the exporter imports the module to write it: the guard and the
export would need each other. So a catalogue given as a path that does not exist when the guard is
built is read later, at the guard's first use (a call, or `guard.catalogue`), as are the rulebook
and facts that go with it; a catalogue that exists is read at once, as before, so a broken one is
an error when the guard is built.

At the first use the catalogue must be there and valid, or the guard fails closed by raising
`GuardConfigError` naming the file and the fix: nothing runs and nothing is recorded. An exception,
not a refusal of every call: a missing catalogue is a deployment error, not a decision about a
call; an agent whose every call is refused still looks as if it runs (the model apologises, the run
ends normally) and would leave refusals made under no rules in the thread's history for good,
while the exception stops the run at the first call, saying why. The exporter reads a guard whose
catalogue is not yet there without it (`loaded()` is None): it is the exporter that writes it.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from .catalogue import load_catalogue
from .decide import Rules
from .doc import GuardConfigError
from .facts import load_facts
from .rulebook import load_rulebook


def _missing_path(catalogue: Any) -> str | None:
    """The absolute path of a catalogue given as a path that does not exist yet, else None."""
    if isinstance(catalogue, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(catalogue))
        if not os.path.exists(path):
            return path
    return None


def _absolute(source: Any) -> Any:
    """A path given as a string or path-like made absolute; anything else as given."""
    if isinstance(source, (str, os.PathLike)):
        return os.path.abspath(os.fspath(source))
    return source


class RulesSource:
    """The guard's `Rules`: read now, or at the first `get()` when the catalogue file is not there
    yet. `loaded()` is the rules when read (None before)."""

    def __init__(self, catalogue: Any, rulebook: Any, facts: Any, taint_policy: str, input_reads_outside: bool):
        self._shown = catalogue
        self._args = (catalogue, rulebook, facts, taint_policy, bool(input_reads_outside))
        self._lock = threading.Lock()
        self._rules: Rules | None = None
        #: The catalogue path waited for (None: read when the guard was built).
        self.pending: str | None = _missing_path(catalogue)
        if self.pending is None:
            self._rules = self._read()
        else:
            # read later: relative paths are made absolute now, so they are read against the working
            # directory the guard was built in, not the one of its first call (a chdir in between
            # would read another file than the one the guard names)
            self._args = (_absolute(catalogue), _absolute(rulebook), _absolute(facts), taint_policy,
                          bool(input_reads_outside))

    def _read(self) -> Rules:
        catalogue, rulebook, facts, taint_policy, reads_outside = self._args
        cat = load_catalogue(catalogue)
        return Rules(cat, load_rulebook(rulebook), load_facts(facts, cat), taint_policy, reads_outside)

    def loaded(self) -> Rules | None:
        """The rules if the catalogue has been read (never reads it)."""
        return self._rules

    def get(self) -> Rules:
        """The rules, reading the catalogue at the first use. Raises `GuardConfigError` naming the
        file when it is still missing (or cannot be read, or the verifier would refuse it)."""
        got = self._rules
        if got is not None:
            return got
        with self._lock:
            if self._rules is None:
                path = self.pending
                if path is not None and not os.path.exists(path):
                    shown = os.fspath(self._shown)
                    where = shown if os.path.abspath(shown) == shown else f"{shown} ({path})"
                    raise GuardConfigError(
                        f"the guard's catalogue {where} does not exist: it was not there when the guard was "
                        "built and is not there at its first call, so no call can be decided (nothing ran)",
                        f"write it with the exporter (python -m stalwart_export MODULE:GRAPH --catalogue {shown}) "
                        "and commit it with the code, or ship it with the application", file=shown)
                self._rules = self._read()
            return self._rules
