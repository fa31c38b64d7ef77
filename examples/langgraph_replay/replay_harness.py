"""The replay harness, now shipped in the package: `python -m stalwart_export replay SCRIPT.json
CATALOGUE.json --graph MODULE:ATTR [--input F] [--answers F]` (python/stalwart_export/replay.py
says how it works). This file only runs that command, for a checkout whose Python has langgraph
but not the package installed (`python replay_harness.py ...` from this directory)."""

import os
import sys

try:
    import stalwart_export.replay  # noqa: F401 - installed, or on PYTHONPATH
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from stalwart_export.replay import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="replay_harness.py"))
