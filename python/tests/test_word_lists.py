"""Issue 30 item 5: the catalogue's word lists are written once in the package
(`guard/catalogue.py`: `TOOL_WORDS`, `ROLES`, `ORDER_WORDS`), read by the exporter's catalogue and
words, and are the verifier's lists (`src/input/catalogue.rs`), word for word and in order: a word
one side knows and the other does not would be kept by one and flagged (or refused) by the other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stalwart_export import _words, catalogue
from stalwart_export.guard import catalogue as ground

RUST = Path(__file__).resolve().parents[2] / "src" / "input" / "catalogue.rs"


def rust_list(name: str) -> list[str]:
    text = RUST.read_text()
    m = re.search(rf"const {name}: &\[&str\] = &\[(.*?)\];", text, re.S)
    assert m, f"no {name} in {RUST}"
    return re.findall(r'"([a-z_]+)"', m.group(1))


@pytest.mark.skipif(not RUST.exists(), reason="the verifier's source is not beside the package (an installed wheel)")
def test_the_word_lists_are_the_verifiers():
    assert list(ground.TOOL_WORDS) == rust_list("TOOL_WORDS")
    assert list(ground.ROLES) == rust_list("ROLES")
    text = RUST.read_text()
    assert '&["after", "not_after", "at_most"]' in text and ground.ORDER_WORDS == ("after", "not_after", "at_most")


def test_the_package_writes_each_list_once():
    assert catalogue.KNOWN_WORDS is ground.TOOL_WORDS
    assert _words.ROLES is ground.ROLES and _words.ORDER_WORDS is ground.ORDER_WORDS
