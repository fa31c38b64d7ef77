"""Names a package reads from its modules when first used (PEP 562): `__getattr__` for a
package's `__init__`, so importing the package does not import the framework those modules need
(issue 30 item 5: the ground imports no framework)."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable


def names(package: str, where: dict[str, str], into: dict[str, Any]) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: a name of `where` (name -> relative module) is imported
    from its module at its first read and kept in `into` (the package's globals); any other name
    is an `AttributeError`."""

    def get(name: str) -> Any:
        if name in where:
            value = getattr(import_module(where[name], package), name)
            into[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return get
