"""A call's arguments against its tool's catalogue entry: the schema (SPEC 12.1 rule 3) and
destinations in a tool that does not send out (rule 4).

Rule 3 reads the entry's `args` (JSON-schema properties, as the verifier does): an argument the
tool does not declare is refused (a tool with no `args` declares none); a `required` list (in a
whole `{type: object, properties, required}` schema) must be met; each value must have its
declared `type` (`string`, `number`, `integer`, `boolean`, `array`, `object`, `null`, or a list
of them) and, with `enum`, be one of its values; an array's `items.type` is checked per item.
Other JSON-schema words are not checked.

Rule 4 looks in every text of the arguments (nested ones, and the keys of objects, too) for a
destination: a URL (`scheme://...`, `www.`), an e-mail address, an IPv4 or IPv6 address (bare or
bracketed), or a host name whose last label has the shape of a top-level domain (`_is_tld`: one in
`TLDS`, any two ASCII letters (every country code), an IDNA `xn--` label, or a label of non-ASCII
letters); names in other scripts count. An IPv4 address is read in every notation `inet_aton` reads
(and so curl and ping): 4 dotted parts, each decimal, `0x` hex or `0` octal (`0x7f.0.0.1`,
`0177.0.0.1`), and the short forms of 2 or 3 parts when a part is written in hex or octal
(`0x7f.1`). A short form in plain decimal (`127.1`) is not read in free text: it cannot be told from
an amount (`12.50`) or a version (`3.11`, `1.2.3`); an argument that takes an address says so with
`role: url` or `destination`, and is then checked whole (`127.1` there is refused or matched).
An argument whose `role` is `url` or `destination` is a destination as a whole (its text as it is,
so a tab, a newline or a quoted local part inside it is read as the tool's parser reads it; a
number or other non-text value as `str(value)`), besides what the scan finds in it. An argument
whose role is `content` (data the tool reads or stores, SPEC 2.3) is not scanned. In a tool that is
not `sends_out` any destination is refused; a `sends_out` tool with a list of allowed destinations
refuses one that matches none. Destinations are parsed, not matched (SPEC 12.1): a URL's host, port
and path come from `urllib.parse` (its user info, query and fragment are not the host), its path
with dot segments (`.`, `..`, and their `%2e` forms) removed as RFC 3986 5.2.4 does (a path holding
an encoded `/` or `\\` is under no prefix); an entry is compared at label and path boundaries:
`*.example.com` matches `example.com` and any name ending in `.example.com`;
`https://example.com/v1` that scheme, host and port (443 when not given) and a path `/v1` or under
`/v1/`; a bare host `example.com` that host on any scheme or port, or an address at exactly that
domain; `@example.com` an address whose domain is exactly `example.com`.

Any two ASCII letters are read as a country's domain, though not every pair is one: `README.md`
and `node.js` are hosts to the scan, as `evil.ly` is (an argument holding file names is `content`).
A name whose last label is three or more ASCII letters not in `TLDS` (`report.pdf`, and also a
generic domain the list lacks) is not read as a host: free text is full of file names,
and the list holds the generic domains in common use; a tool that takes a destination says so with
`role: url` or `destination`, which is checked whole whatever its shape.

The scan is linear in the text's length by construction: the text is cut into tokens and pieces
by splits on one repeated character class (`_TOKEN_SEP`, `_PIECE_SEP`, `_IPV6_SEP`, which never
backtrack), and each piece is read with string methods that look at each character a bounded
number of times (an IPv6 candidate is parsed only up to 45 characters long).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .catalogue import DESTINATION_ROLES, ToolSpec

#: What separates tokens in a text (a URL runs to the end of its token).
_TOKEN_SEP = re.compile(r"[\s\"'<>`(){}|\\^]+")
#: What separates the pieces of a token that is not a URL (hosts, addresses, IPv4 addresses): any
#: character but letters and digits (of any script), combining marks and `._%+@-`.
_PIECE_SEP = re.compile(r"[^\w\u0300-\u036f._%+@-]+")
#: What separates the candidates of an IPv6 address in a token (brackets and ports fall away).
_IPV6_SEP = re.compile(r"[^0-9A-Za-z:.%]+")
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
aero asia cat coop jobs mobi museum post tel travel xxx zip mov space website fun icu vip
work world life today network digital solutions agency company center group media global social
team zone tools services systems support host hosting domains download click pizza bar bank
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


def _texts(value: Any, path: str, whole: bool = False):
    """(path, text) for every text in `value`, the keys of its objects too; with `whole` (an
    argument whose role is a destination) every other value but None as `str(value)` as well."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) or (whole and k is not None):
                yield f"{path}/<key>", str(k)
            yield from _texts(v, f"{path}/{k}", whole)
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from _texts(v, f"{path}/{k}", whole)
    elif whole and value is not None:
        yield path, str(value)


def destinations(tool: ToolSpec, args: dict) -> list[tuple[str, str]]:
    """(argument path, destination) for every destination the arguments carry (not under an
    argument whose role is `content`)."""
    out: list[tuple[str, str]] = []
    declared = tool.args or {}
    for name, value in args.items():
        role = declared[name].role if name in declared else None
        if role == "content":
            continue
        whole = role in DESTINATION_ROLES
        for path, text in _texts(value, f"/{name}", whole):
            found = found_in(text)
            if whole and text.strip() and text.strip() not in found:
                found.insert(0, text.strip())  # as the tool reads it: the whole value
            out += [(path, d) for d in found]
    return out


def found_in(text: str) -> list[str]:
    """The destinations in one text, in order (linear in its length)."""
    out: list[str] = []
    for tok in _TOKEN_SEP.split(text):
        if tok:
            _token(tok, out)
    return out


def _ipv6(tok: str, out: list[str]) -> None:
    """The IPv6 addresses in `tok` (bare, or bracketed with a port)."""
    for cand in _IPV6_SEP.split(tok):
        cand = cand.strip(".")
        if cand.endswith(":") and not cand.endswith("::"):
            cand = cand[:-1]  # a colon after the address, in a sentence
        if cand.count(":") < 2 or len(cand) > 45 or not any(c in "0123456789abcdefABCDEF" for c in cand):
            continue
        try:
            ipaddress.IPv6Address(cand)
        except ValueError:
            continue
        out.append(cand)


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
    if tok.count(":") >= 2:
        _ipv6(tok, out)
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
        if not lab or lab[0] == "-" or lab[-1] == "-":
            return 0
        if not _LABEL_CHARS.issuperset(lab) and not all(c in _LABEL_CHARS or _idn_char(c) for c in lab):
            return 0
    return len(labels)


def _idn_char(c: str) -> bool:
    """A character of an internationalised label: a letter, mark or digit outside ASCII."""
    return ord(c) > 127 and unicodedata.category(c)[0] in "LMN"


def _is_tld(last: str) -> bool:
    """Has `last` the shape of a top-level domain: one in `TLDS`, two ASCII letters (a country's),
    an IDNA `xn--` label, or non-ASCII letters (an internationalised one)?"""
    low = last.lower()
    if low in TLDS or (len(low) == 2 and low.isascii() and low.isalpha()):
        return True
    if low.startswith("xn--") and len(low) > 4 and _LABEL_CHARS.issuperset(low):
        return True
    return not low.isascii() and len(low) >= 2 and all(_idn_char(c) for c in low)


def _aton_part(p: str) -> int | None:
    """One part of an IPv4 address as `inet_aton` reads it: decimal, `0x` hex, or octal with a
    leading 0; None when it is not one (or longer than any such part can usefully be)."""
    if not p or len(p) > 12 or not p.isascii():
        return None
    low = p.lower()
    try:
        if low[:2] == "0x":
            return int(low[2:], 16) if len(low) > 2 else 0
        if len(low) > 1 and low[0] == "0":
            return int(low, 8)
        return int(low, 10) if low.isdigit() else None
    except ValueError:
        return None


def _inet_aton(name: str) -> int | None:
    """The IPv4 address a dotted text of 2 to 4 parts names as `inet_aton` (and so curl, ping and
    many resolvers) reads it -- `127.1`, `0x7f.0.0.1`, `0177.0.0.1` are all 127.0.0.1 -- or None.
    The last part fills the bytes the others leave; one trailing dot is allowed."""
    parts = name[:-1].split(".") if name.endswith(".") else name.split(".")
    if not 2 <= len(parts) <= 4:
        return None
    nums = [_aton_part(p) for p in parts]
    if any(n is None for n in nums):
        return None
    head, tail = nums[:-1], nums[-1]
    if any(n > 255 for n in head) or tail >= 1 << (8 * (5 - len(parts))):
        return None
    value = 0
    for n in head:
        value = value << 8 | n
    return value << (8 * (5 - len(parts))) | tail


def _radix_marked(name: str) -> bool:
    """True when a part of the dotted text `name` is written in hex (`0x7f`) or octal (`0177`):
    never how a number or a version is written, so a short form with one is an address."""
    return any(p[:2].lower() == "0x" or (len(p) > 1 and p[0] == "0") for p in name.split("."))


def _is_host(name: str) -> bool:
    """A bare host: an IPv4 address (in any notation `inet_aton` reads, `_inet_aton`), a `www.`
    name, or a name whose last label has the shape of a top-level domain (`_is_tld`)."""
    last = name.rpartition(".")[2]
    if not last or last == name:
        return False
    if _inet_aton(name) is not None and (name.count(".") >= 3 or _radix_marked(name)):
        return True
    if last.isascii() and (last.isdigit() or last[:2].lower() == "0x"):
        return False
    if name[:4].lower() == "www.":
        if not last.isalpha() or len(last) < 2:
            return False
    elif not _is_tld(last):
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


def _dots_removed(path: str) -> str | None:
    """`path` with its dot segments (`.`, `..`, and their `%2e` forms) removed (RFC 3986 5.2.4), as a
    client sends it or a server reads it; None when it holds an encoded `/` or a `\\`, which some
    servers read as a separator (no prefix can be trusted then)."""
    low = path.lower()
    if "%2f" in low or "%5c" in low or "\\" in path:
        return None
    out: list[str] = []
    segs = path.split("/")
    for k, seg in enumerate(segs):
        norm = seg.replace("%2e", ".").replace("%2E", ".")
        last = k == len(segs) - 1
        if norm == ".":
            if last:
                out.append("")
        elif norm == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    return "/".join(out)


def _under(path: str, prefix: str) -> bool:
    got = _dots_removed(path)
    prefix = prefix.rstrip("/")
    if not prefix:
        return True
    return got is not None and (got == prefix or got.startswith(prefix + "/"))


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
