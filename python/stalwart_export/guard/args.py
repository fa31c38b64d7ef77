"""A call's arguments against its tool's catalogue entry: the schema (SPEC 12.1 rule 3) and
destinations in a tool that does not send out (rule 4).

Rule 3 reads the entry's `args` (JSON-schema properties, as the verifier does): an argument the
tool does not declare is refused (a tool with no `args` declares none); a `required` list (in a
whole `{type: object, properties, required}` schema) must be met; each value must have its
declared `type` (`string`, `number`, `integer`, `boolean`, `array`, `object`, `null`, or a list
of them) and, with `enum`, be one of its values; an array's `items.type` is checked per item.
Other JSON-schema words are not checked.

Rule 4 looks in every text of the arguments (nested ones too) for a destination: a URL
(`scheme://...`, `www.`), an e-mail address, an IPv4 address, or a host name whose last label is
a top-level domain in `TLDS`; and any value under an argument whose `role` is `url` or
`destination`. An argument whose role is `content` (data the tool reads or stores, SPEC 2.3) is not
scanned. In a tool that is not `sends_out` any destination is refused; a `sends_out` tool with a
list of allowed destinations refuses one that matches none. Destinations are parsed, not matched
(SPEC 12.1): a URL's host, port and path come from `urllib.parse` (its user info, query and
fragment are not the host), and an entry is compared at label and path boundaries: `*.example.com`
matches `example.com` and any name ending in `.example.com`; `https://example.com/v1` that scheme,
host and port (443 when not given) and a path `/v1` or under `/v1/`; a bare host `example.com` that
host on any scheme or port, or an address at exactly that domain; `@example.com` an address whose
domain is exactly `example.com`.

The scan is linear in the text's length by construction: the text is cut into tokens and pieces
by splits on one repeated character class (`_TOKEN_SEP`, `_PIECE_SEP`, which never backtrack), and
each piece is read with string methods that look at each character a bounded number of times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .catalogue import DESTINATION_ROLES, ToolSpec

#: What separates tokens in a text (a URL runs to the end of its token).
_TOKEN_SEP = re.compile(r"[\s\"'<>`\[\](){}|\\^]+")
#: What separates the pieces of a token that is not a URL (hosts, addresses, IPv4 addresses).
_PIECE_SEP = re.compile(r"[^A-Za-z0-9._%+@-]+")
_TRAIL = ".,;:!?*'\""
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")

#: Top-level domains a bare host name is recognised by (a file name such as `report.pdf` is not a
#: host). Generic and common country domains, and the reserved names of RFC 2606/6761.
TLDS = frozenset("""
com net org edu gov mil int info biz name pro io ai app dev co me tv cc us uk eu de fr es it nl be
ch at se no dk fi pl cz pt ie ru cn jp kr in br mx ca au nz za sg hk tw il tr gr ro hu ua ar cl
cloud online site tech xyz top shop store email mail link live club blog news page
invalid example test localhost local internal lan corp home arpa onion
""".split())

_JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, (list, tuple)),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _type_ok(value: Any, ty: Any) -> bool:
    types = ty if isinstance(ty, list) else [ty]
    known = [t for t in types if t in _JSON_TYPES]
    if not known:
        return True  # a type word we do not know is not checked
    return any(_JSON_TYPES[t](value) for t in known)


def schema_problem(tool: ToolSpec, args: Any) -> str | None:
    """Why the arguments break the tool's schema (naming the argument as `/name`), or None."""
    if not isinstance(args, dict):
        return f"the arguments are {type(args).__name__}, not an object"
    declared = tool.args or {}
    for name in args:
        if name not in declared:
            if not declared:
                return f"/{name}: '{tool.name}' declares no arguments"
            return f"/{name}: '{tool.name}' does not declare this argument (it declares {', '.join(declared)})"
    for name in tool.required:
        if name not in args:
            return f"/{name}: a required argument is missing"
    for name, value in args.items():
        schema = declared[name].schema
        ty = schema.get("type")
        if ty is not None and not _type_ok(value, ty):
            return f"/{name}: {_describe(value)} is not of type {ty}"
        enum = schema.get("enum")
        if isinstance(enum, list) and value not in enum:
            return f"/{name}: {value!r} is not one of {enum}"
        items = schema.get("items")
        if isinstance(items, dict) and isinstance(value, (list, tuple)) and items.get("type") is not None:
            for k, item in enumerate(value):
                if not _type_ok(item, items["type"]):
                    return f"/{name}/{k}: {_describe(item)} is not of type {items['type']}"
    return None


def text_problem(args: Any, path: str = "") -> str | None:
    """Why a text of the arguments (a value or a key, nested ones too) is not Unicode text: a lone
    surrogate (`"\\ud800"`), which no record, checkpoint or tool can carry as UTF-8. Rule 3 refuses
    it before anything runs, so a tool never runs on a call whose record could not be sealed."""
    if isinstance(args, str):
        try:
            args.encode("utf-8")
        except UnicodeEncodeError as e:
            return (f"{path or '/'}: the text holds a lone surrogate (U+{ord(args[e.start]):04X}), "
                    "which is not Unicode text")
        return None
    if isinstance(args, dict):
        for k, v in args.items():
            got = text_problem(k, f"{path}/<key>") if isinstance(k, str) else None
            got = got or text_problem(v, f"{path}/{k}")
            if got:
                return got
    elif isinstance(args, (list, tuple)):
        for k, v in enumerate(args):
            got = text_problem(v, f"{path}/{k}")
            if got:
                return got
    return None


def _describe(v: Any) -> str:
    return "null" if v is None else f"{type(v).__name__} {v!r}"[:80]


def _texts(value: Any, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, f"{path}/{k}")
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from _texts(v, f"{path}/{k}")


def destinations(tool: ToolSpec, args: dict) -> list[tuple[str, str]]:
    """(argument path, destination) for every destination the arguments carry (not under an
    argument whose role is `content`)."""
    out: list[tuple[str, str]] = []
    declared = tool.args or {}
    for name, value in args.items():
        role = declared[name].role if name in declared else None
        if role == "content":
            continue
        for path, text in _texts(value, f"/{name}"):
            found = found_in(text)
            if role in DESTINATION_ROLES and text.strip() and not found:
                found.append(text.strip())
            out += [(path, d) for d in found]
    return out


def found_in(text: str) -> list[str]:
    """The destinations in one text, in order (linear in its length)."""
    out: list[str] = []
    for tok in _TOKEN_SEP.split(text):
        if tok:
            _token(tok, out)
    return out


def _token(tok: str, out: list[str]) -> None:
    k = tok.find("://")
    if k > 0:
        start = k
        while start > 0 and tok[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < k and not ("a" <= tok[start].lower() <= "z"):
            start += 1
        if start < k:
            if start > 0:
                _pieces(tok[:start], out)
            url = tok[start:].rstrip(_TRAIL)
            if len(url) > k - start + 3:
                out.append(url)
            return
    _pieces(tok, out)


def _pieces(tok: str, out: list[str]) -> None:
    for piece in _PIECE_SEP.split(tok):
        piece = piece.strip(_TRAIL + "-_%+")
        if not piece:
            continue
        if "@" in piece:
            local, _, domain = piece.rpartition("@")
            domain = domain.rstrip(".")
            if local.strip("@") and _labels(domain) >= 2:
                out.append(piece[:len(local) + 1 + len(domain)])
                continue
        for sub in piece.replace("@", " ").replace("_", " ").replace("%", " ").replace("+", " ").split():
            sub = sub.strip(".-")
            if _is_host(sub):
                out.append(sub)


def _labels(name: str) -> int:
    """How many labels the host name `name` has (0 when it is not one)."""
    labels = name.split(".")
    for lab in labels:
        if not lab or lab[0] == "-" or lab[-1] == "-" or not _LABEL_CHARS.issuperset(lab):
            return 0
    return len(labels)


def _is_host(name: str) -> bool:
    """A bare host: an IPv4 address, a `www.` name, or a name whose last label is in `TLDS`."""
    last = name.rpartition(".")[2]
    if not last or last == name:
        return False
    if last.isdigit():
        parts = name.split(".")
        return len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts)
    if not (name[:4].lower() == "www." or last.lower() in TLDS) or not last.isalpha() or len(last) < 2:
        return False
    return _labels(name) >= 2


_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


@dataclass
class _Place:
    """Where a destination (or an allow-list entry) points: an e-mail address's domain as `host`
    (with `local`), or a URL's `scheme` (None for a bare host), `host`, `port` and `path`."""

    host: str | None
    scheme: str | None = None
    port: int | None = None
    path: str = ""
    local: str | None = None


def _place(text: str) -> _Place | None:
    """The parsed place of a destination or entry, or None when it cannot be parsed."""
    d = text.strip()
    if d.lower().startswith("mailto:"):
        d = d[7:]
    if "://" not in d and "@" in d and "/" not in d:
        local, _, domain = d.rpartition("@")
        if not local or "@" in local or ":" in domain:
            return None
        return _Place(domain.lower().rstrip("."), local=local)
    try:
        u = urlsplit(d if "://" in d else "//" + d)
        host, port = u.hostname, u.port
    except ValueError:
        return None
    if not host:
        return None
    scheme = u.scheme.lower() or None
    if port is None and scheme is not None:
        port = _DEFAULT_PORTS.get(scheme)
    return _Place(host.rstrip("."), scheme, port, u.path)


def _under(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def allowed(dest: str, patterns: list[str]) -> bool:
    """Does `dest` match one of a `sends_out` tool's allowed destinations (see the module docs)?"""
    got = _place(dest)
    if got is None:
        return False
    for p in patterns:
        p = str(p).strip().lower()
        if not p:
            continue
        if p.startswith("@"):
            if got.local is not None and got.host == p[1:].rstrip("."):
                return True
            continue
        if p.startswith("*."):
            suffix = p[2:].rstrip(".")
            if got.host == suffix or (got.host or "").endswith("." + suffix):
                return True
            continue
        want = _place(p)
        if want is None or want.local is not None or got.host != want.host:
            continue
        if want.scheme is not None and (got.scheme != want.scheme or got.port != want.port):
            continue
        if got.local is None and _under(got.path, want.path):
            return True
        if got.local is not None and want.scheme is None and want.path in ("", "/"):
            return True  # an address at exactly that host
    return False


def destination_problem(tool: ToolSpec, args: dict) -> str | None:
    """Why a destination in the arguments is refused (rule 4), or None."""
    found = destinations(tool, args)
    if not found:
        return None
    if not tool.sends_out:
        path, dest = found[0]
        return (f"{path}: '{dest}' is a destination, and '{tool.name}' is not declared `sends_out` "
                "(declare it, with the destinations it may send to, if it sends data out)")
    if tool.allowed_destinations is not None:
        for path, dest in found:
            if not allowed(dest, tool.allowed_destinations):
                return (f"{path}: '{dest}' is not among the destinations '{tool.name}' may send to "
                        f"({', '.join(map(str, tool.allowed_destinations))})")
    return None
