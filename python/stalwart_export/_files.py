"""Which files are the user's: not the standard library's, an installed package's or this
package's own. The ground of `_code` and `_sources` (it imports neither), so each reads it."""

from __future__ import annotations

import os
import sysconfig


def _library_dirs() -> tuple[str, ...]:
    out = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            out.add(os.path.realpath(p))
    return tuple(sorted(out))


_LIBRARY_DIRS = _library_dirs()
#: This package's own folder: its files (the guard's tool node among them) are never the user's, even
#: when the package is on PYTHONPATH or installed editable, outside `site-packages` (issue 29 item 6).
_OWN_DIR = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))


def is_user_file(file: str | None) -> bool:
    """True for a Python file of the user's project: not in the standard library or an installed
    package (`site-packages`)."""
    if not file or not file.endswith(".py"):
        return False
    real = os.path.realpath(file)
    if "site-packages" in real.split(os.sep) or "dist-packages" in real.split(os.sep):
        return False
    if real.startswith(_OWN_DIR + os.sep):
        return False
    return not any(real == d or real.startswith(d + os.sep) for d in _LIBRARY_DIRS)
