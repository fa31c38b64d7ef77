import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="module")
def binary():
    """The Rust `stalwart` binary (helpers.stalwart_bin), or the test is skipped, saying so."""
    from helpers import stalwart_bin

    b = stalwart_bin()
    if b is None:
        pytest.skip("no stalwart binary: set STALWART_BIN or build target/debug/stalwart (cargo build); "
                    "the comparison with the Rust verifier is skipped")
    return b
