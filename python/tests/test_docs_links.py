"""The README and docs/ kept true to the repository (issue 31 item 4).

- Every relative Markdown link in README.md and docs/*.md (docs/rules/ is generated, and checked by
  its generator) names a file or folder that exists, and a `#anchor` names a heading of the Markdown
  file it points into, by GitHub's slug rules.
- README.md stays a newcomer's page: under 250 lines, and it names the two commands exactly.

Reads files only: no network, no binary, nothing skipped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The pages whose links are checked.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: The least the pages must hold, so the test cannot pass on pages it failed to read.
MIN_LINKS = 60
MIN_ANCHORS = 10
README_MAX_LINES = 250
#: The commands README.md names on a fresh machine, each on a line of its own in a ```sh block
#: (the first at the end of the line that installs libz3).
VERIFY_COMMAND = "cargo run --release -- verify fixtures/shop/agent.yaml"
CI_COMMAND = "bash .ci/run"
TEST_COMMAND = "cargo test --locked"

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
#: `[text](target)` or `[text](target "title")`, images included; the text may hold one level of
#: brackets (`[[off]](...)` once code spans are blanked).
INLINE_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: `[label]: target` on a line of its own.
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def outside_fences(text: str):
    """The lines outside fenced code blocks, each with its number from 1."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1, each with its code spans blanked."""
    return [(number, CODE_SPAN.sub(lambda s: "x" * len(s.group(0)), line))
            for number, line in outside_fences(text)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: its Markdown read as text, lowercased, every character
    but letters, digits, `_`, `-` and spaces dropped, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, the n-th repeat of a slug suffixed `-n` as GitHub
    does."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in outside_fences(path.read_text(encoding="utf-8")):
        h = HEADING.match(line)
        if not h:
            continue
        base = slug(h.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    """The relative links of a Markdown page (line, target), outside code."""
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for m in INLINE_LINK.finditer(line):
            found.append((number, m.group(1)))
        m = REFERENCE_LINK.match(line)
        if m:
            found.append((number, m.group(1)))
    return [(n, t) for n, t in found if not EXTERNAL.match(t)]


def broken(path: Path) -> tuple[list[str], int, int]:
    """What is wrong with a page's links, and how many links and anchors were checked."""
    problems, checked, anchored = [], 0, 0
    for number, target in links(path):
        checked += 1
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(REPO)}:{number}: {target}"
        if not dest.exists():
            problems.append(f"{where}: no such file {file_part}")
            continue
        if not anchor:
            continue
        anchored += 1
        if dest.suffix != ".md" or not dest.is_file():
            problems.append(f"{where}: an anchor into {dest.name}, which is no Markdown file")
        elif anchor not in anchors(dest):
            problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(REPO)}")
    return problems, checked, anchored


def test_the_pages_are_there():
    names = {p.name for p in PAGES}
    for page in ("README.md", "usage.md", "configuration.md", "how-it-decides.md", "langgraph.md",
                 "github-action.md", "limits.md"):
        assert page in names, page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path):
    problems, _, _ = broken(page)
    assert problems == []


def test_the_pages_hold_links_and_anchors():
    counts = [broken(p)[1:] for p in PAGES]
    assert sum(c for c, _ in counts) >= MIN_LINKS
    assert sum(a for _, a in counts) >= MIN_ANCHORS


def test_the_checker_finds_a_broken_file_and_a_broken_anchor(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "a.md").write_text("# A page\n\n## `[off]`: what is held\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#off-what-is-held) [ok](a.md) [ok](#b) [web](https://example.com/x.md)\n"
        "[gone](missing.md) [bad](a.md#what-is-held)\n"
        "`[in code](missing.md)`\n```\n[in a block](missing.md)\n# b\n```\n# B\n",
        encoding="utf-8",
    )
    problems, checked, anchored = broken(page)
    assert problems == ["b.md:2: missing.md: no such file missing.md",
                        "b.md:2: a.md#what-is-held: no heading #what-is-held in a.md"]
    assert (checked, anchored) == (5, 3)


def test_slugs_follow_github():
    assert slug("`[[accept]]`: a finding accepted, with a reason") == "accept-a-finding-accepted-with-a-reason"
    assert slug("Turns and steps: how far the search goes") == "turns-and-steps-how-far-the-search-goes"
    assert slug("What a pull request can and cannot do to the gate") == \
        "what-a-pull-request-can-and-cannot-do-to-the-gate"
    assert slug("The export: `qls-graph/1`") == "the-export-qls-graph1"
    assert slug("OpenAI Agents SDK: `standing` and `turns`") == "openai-agents-sdk-standing-and-turns"


def test_the_readme_is_short_and_names_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) < README_MAX_LINES
    fenced, fence = [], None
    for line in lines:
        m = FENCE.match(line)
        if m:
            fence = line.strip()[3:] if fence is None else None
            continue
        if fence == "sh":
            fenced.append(line)
    assert any(line.endswith(f"&& {VERIFY_COMMAND}") for line in fenced), fenced
    assert CI_COMMAND in fenced
    assert TEST_COMMAND in fenced
