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
`destination`. In a tool that is not `sends_out` any destination is refused; a `sends_out` tool
with a list of allowed destinations refuses one that matches none (`*.example.com` matches any
subdomain, an `@example.com` entry any address there).
"""

from __future__ import annotations

import re
from typing import Any

from .catalogue import DESTINATION_ROLES, ToolSpec

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+|\bwww\.[^\s\"'<>]+", re.I)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
_HOST = re.compile(r"\b((?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+([A-Za-z]{2,}))\b")

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
    """(argument path, destination) for every destination the arguments carry."""
    out: list[tuple[str, str]] = []
    declared = tool.args or {}
    for name, value in args.items():
        role = declared[name].role if name in declared else None
        for path, text in _texts(value, f"/{name}"):
            found = [m.group(0) for m in _URL.finditer(text)]
            found += [m.group(0) for m in _EMAIL.finditer(text)]
            found += [m.group(0) for m in _IPV4.finditer(text)]
            for m in _HOST.finditer(text):
                if m.group(2).lower() in TLDS and not any(m.group(1) in f for f in found):
                    found.append(m.group(1))
            if role in DESTINATION_ROLES and text.strip() and not found:
                found.append(text.strip())
            out += [(path, d) for d in found]
    return out


def _host_of(dest: str) -> str:
    d = dest.strip().lower()
    if "://" in d:
        d = d.split("://", 1)[1]
    d = d.split("/", 1)[0].split("?", 1)[0]
    if "@" in d:
        d = d.rsplit("@", 1)[1]
    return d.split(":", 1)[0]


def allowed(dest: str, patterns: list[str]) -> bool:
    """Does `dest` match one of a `sends_out` tool's allowed destinations?"""
    host = _host_of(dest)
    low = dest.strip().lower()
    for p in patterns:
        p = str(p).strip().lower()
        if not p:
            continue
        if p == low or p == host:
            return True
        if p.startswith("@") and low.endswith(p):
            return True
        if p.startswith("*.") and (host == p[2:] or host.endswith(p[1:])):
            return True
        if "://" in p and low.startswith(p):
            return True
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
