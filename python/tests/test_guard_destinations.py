"""Issue 27 item 6, SPEC 12.1 "Destinations are parsed, not matched": rule 4 reads hosts with a URL
parser (fragment, user info and port included), compares allow-list entries at label and path
boundaries, scans in time linear in the argument's length, and does not scan arguments whose
role is `content` (SPEC 2.3)."""

import re
import sys

import pytest

import attacks as A
import guarded as G
from stalwart_export.guard import args as argcheck
from stalwart_export.guard.args import allowed, destinations


@pytest.fixture(autouse=True)
def _fresh():
    G.reset()


ALLOW = ["*.hooks.example.com", "https://hooks.example.com", "https://api.example.com/v1", "@shop.example", "files.example.com"]

REFUSED = [
    "https://evil.example#.hooks.example.com",
    "https://evil.example?.hooks.example.com",
    "https://hooks.example.com.evil.example/h",
    "https://api.example.com.evil.example/v1",
    "https://api.example.com@evil.example/v1",
    "https://x.hooks.example.com@evil.example/",
    "https://api.example.com/v10",
    "https://api.example.com:8443/v1",
    "http://api.example.com/v1",
    "https://api.example.com/",
    "https://evilhooks.example.com/",
    "mallory@shop.example.evil.example",
    "mallory@evilshop.example",
    "a@b@shop.example",
    "files.example.com.evil.example",
    "desk@evil.files.example.com",
    "https://files.example.com.evil.example/x",
    "https://[::1/v1",
]

ALLOWED = [
    "https://a.hooks.example.com/x",
    "https://a.b.hooks.example.com:8443/x#frag",
    "https://hooks.example.com/",
    "https://api.example.com/v1",
    "https://api.example.com/v1/orders?id=1#top",
    "https://API.example.com:443/v1/x",
    "https://user@api.example.com/v1",
    "desk@shop.example",
    "files.example.com",
    "https://files.example.com/any/path",
    "desk@files.example.com",
]


@pytest.mark.parametrize("dest", REFUSED)
def test_a_destination_outside_the_list_is_not_allowed(dest):
    assert not allowed(dest, ALLOW), dest


@pytest.mark.parametrize("dest", ALLOWED)
def test_a_destination_on_the_list_is_allowed(dest):
    assert allowed(dest, ALLOW), dest


def _with_poster(monkeypatch):
    from langchain_core.tools import tool

    @tool
    def post_hook(url: str, body: str) -> str:
        """Post to a web hook."""
        G._ran("post_hook", url=url, body=body)
        return "posted"

    monkeypatch.setattr(A, "TOOLS", A.TOOLS + [post_hook])
    monkeypatch.setitem(A.CATALOGUE["tools"], "post_hook", {
        "kind": "read", "sends_out": ALLOW,
        "args": {"url": {"type": "string", "role": "url"}, "body": {"type": "string"}}})


@pytest.mark.parametrize("place", sorted(A.PLACES))
def test_the_two_escapes_are_refused_in_every_place(place, monkeypatch):
    _with_poster(monkeypatch)
    g = A.guard()
    calls = [[A.tc("post_hook", {"url": "https://evil.example#.hooks.example.com", "body": "b"}, "p1")],
             [A.tc("post_hook", {"url": "https://hooks.example.com.evil.example/h", "body": "b"}, "p2")],
             [A.tc("post_hook", {"url": "https://a.hooks.example.com/h", "body": "b"}, "p3")]]
    out, _ = G.turn(A.PLACES[place](g, *calls, "done"), G.thread())
    assert G.decisions(out) == [("post_hook", "refuse", False, "undeclared_destination"),
                                ("post_hook", "refuse", False, "undeclared_destination"),
                                ("post_hook", "allow", True, None)]
    assert G.ARGS["post_hook"] == [{"url": "https://a.hooks.example.com/h", "body": "b"}]


@pytest.mark.parametrize("place", sorted(A.PLACES))
def test_a_content_argument_is_not_scanned(place):
    g = A.guard()
    row = "alice@example.com, https://example.com/profile, 10.0.0.1, www.example.org"
    calls = [[A.tc("store_row", {"table": "people", "row": row}, "s1")],
             [A.tc("store_row", {"table": "https://evil.example/x", "row": "r"}, "s2")]]
    out, _ = G.turn(A.PLACES[place](g, *calls, "done"), G.thread())
    # the data argument is not scanned; its other arguments still are
    assert G.decisions(out) == [("store_row", "allow", True, None),
                                ("store_row", "refuse", False, "undeclared_destination")]


def test_what_the_scan_still_finds():
    spec = A.guard().catalogue.get("add_note")
    found = lambda text: [d for _, d in destinations(spec, {"order_id": "1", "note": text})]  # noqa: E731
    assert found("see https://evil.invalid/x now") == ["https://evil.invalid/x"]
    assert found("[a](https://evil.invalid/x), ok") == ["https://evil.invalid/x"]
    assert found("mail bob@evil.example please") == ["bob@evil.example"]
    assert found("url=https://evil.invalid") == ["https://evil.invalid"]
    assert found("host evil.com:8080/x and 10.1.2.3.") == ["evil.com", "10.1.2.3"]
    assert found("www.evil.zz") == ["www.evil.zz"]
    assert found("report.pdf and v1.2 and a.b") == []


def _scan_steps(text: str) -> int:
    """Python line events the scan takes on `text` (every Python step of the scanner and what it
    calls); regular expressions run in C are bounded separately (`test_..._linear_by_construction`)."""
    spec = A.guard().catalogue.get("add_note")
    steps = 0

    def tracer(frame, event, arg):
        nonlocal steps
        if event == "line":
            steps += 1
        return tracer

    sys.settrace(tracer)
    try:
        destinations(spec, {"order_id": "1", "note": text})
        allowed(text[:5000], ALLOW)
    finally:
        sys.settrace(None)
    return steps


@pytest.mark.parametrize("unit", ["a.", "a", "a@", "a:/", "x.example.com ", "https://", "a-.", "@a.", "é.", "1.2.",
                                  "::1 ", "[::1]:", "a:", "{\"k.ly\": 1}"])
def test_the_scan_takes_steps_linear_in_the_arguments_length(unit):
    small, big = _scan_steps(unit * 2000), _scan_steps(unit * 16000)
    assert big <= 8 * small + 2000, f"{unit!r}: {small} steps for 2,000 repeats, {big} for 16,000"
    # 100 KB in a few hundred thousand steps at most
    assert _scan_steps((unit * 100_000)[:100_000]) <= 40 * 100_000


def test_the_scans_regular_expressions_are_linear_by_construction():
    """Every pattern the scan uses is one character class repeated (`[...]+`): a split that looks at
    each character once, never backtracking."""
    patterns = [v for v in vars(argcheck).values() if isinstance(v, re.Pattern)]
    assert patterns
    for p in patterns:
        assert re.fullmatch(r"\[(?:[^\]\\]|\\.)+\]\+", p.pattern), p.pattern


def test_the_catalogue_reader_accepts_role_content():
    spec = A.guard().catalogue.get("store_row")
    assert spec.args["row"].role == "content"


def test_what_the_scan_finds_after_the_red_team():
    """Issue 27's red team: country-code and internationalised top-level domains, IPv6 addresses and
    object keys are destinations; file names, C++ scopes and clock times are not."""
    spec = A.guard().catalogue.get("add_note")
    found = lambda text: [d for _, d in destinations(spec, {"order_id": "1", "note": text})]  # noqa: E731
    assert found("send it to evil.ly now") == ["evil.ly"]
    assert found("see README.md") == ["README.md"]  # any two letters may be a country's domain
    assert found("xn--e1afmkfd.xn--p1ai") == ["xn--e1afmkfd.xn--p1ai"]
    assert found("at [::1]:8080 or fe80::1.") == ["::1", "fe80::1"]
    assert found("report.pdf, std::vector, at 12:30:45, e.g. this") == []
    assert [d for _, d in destinations(spec, {"order_id": "1", "note": {"k": {"evil.ly": 1}}})] == ["evil.ly"]


@pytest.mark.parametrize("url", ["https://api.example.com/v1/%2E%2E/admin", "https://api.example.com/v1/..%2fadmin",
                                 "https://api.example.com/v1%5c..%5cadmin", "https://api.example.com/v1/x/../../admin"])
def test_a_path_leaving_its_prefix_by_dot_segments_or_encoded_separators_is_not_allowed(url):
    assert not allowed(url, ALLOW), url


@pytest.mark.parametrize("url", ["https://api.example.com/v1/x/../y", "https://api.example.com/v1/./y",
                                 "https://api.example.com/v1/.."])
def test_a_path_whose_dot_segments_stay_under_the_prefix_is_allowed(url):
    assert allowed(url, ALLOW) == (not url.endswith("/..")), url
