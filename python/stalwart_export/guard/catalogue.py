"""The catalogue the guard decides from: the same `qls-catalogue/1` file the verifier reads
(SPEC 2.3), read with the verifier's rules (`src/input/catalogue.rs`, `src/input/validate.rs`).

Every word the verifier refuses is refused here, at the same line and column: a `format` other
than `qls-catalogue/1`; `tools`, a tool's entry, `args`, `order`, `store` or `source` that is not
a mapping; a tool with no `kind` or a `kind` other than `read`/`write`; a flag
(`reads_outside`, `irreversible`, `destructive`, `confidential`, `sends_out`) that is not a plain
`true`/`false` (a quoted `"true"` is text); both `compensation` and `undo`; an `at_most` that
is not a whole number (or `{count, per}`); a `privilege` other than `low`/`high`; a `store`
without `name` or an `access` other than `read`/`write`; a `source` naming neither a module nor
a server; and an order rule (`after`, `not_after`) or a compensation naming a tool the
catalogue does not declare. Words the verifier does not know are kept and ignored, as there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from . import doc
from .doc import GuardConfigError, Loc, Node

#: The words of SPEC 2.3 a tool entry may carry (the verifier's TOOL_WORDS). Written once for the
#: package: the exporter's catalogue and words read these (python/tests/test_word_lists.py holds
#: them to the verifier's lists in src/input/catalogue.rs).
TOOL_WORDS = (
    "kind", "description", "reads_outside", "sends_out", "irreversible", "destructive",
    "compensation", "undo", "idempotency", "result", "args", "order", "privilege",
    "confidential", "store", "source", "requires", "at_most", "checks", "spend",
)
#: Argument roles of SPEC 2.3 (the verifier's `ROLES`).
ROLES = ("code", "shell", "sql", "query", "path", "url", "template", "destination", "user_id", "content")
#: The words of a tool's `order` (the verifier's).
ORDER_WORDS = ("after", "not_after", "at_most")
#: Argument roles that name where data goes: a value under one is a destination (rule 4).
DESTINATION_ROLES = ("url", "destination")


@dataclass
class ArgSpec:
    """One declared argument: its JSON-schema words (`type`, `enum`, `items`, ...) and `role`."""

    name: str
    schema: dict
    role: str | None = None


@dataclass
class AtMost:
    """`at_most: N` or `{count: N, per: turn|run|session}`: `per_turn` when it resets each turn."""

    count: int
    per_turn: bool = False


@dataclass
class ToolSpec:
    """A tool's catalogue entry, as the guard uses it (SPEC 2.3)."""

    name: str
    kind: str  # "read" | "write"
    loc: Loc
    reads_outside: bool = False
    sends_out: bool = False
    #: Destinations a `sends_out` tool may send to (a list or mapping under `sends_out`); None: any.
    allowed_destinations: list[str] | None = None
    irreversible: bool = False
    destructive: bool = False
    confidential: bool = False
    privileged: bool = False
    compensation: str | None = None
    #: None when the entry has no `args`: the tool then declares no argument.
    args: dict[str, ArgSpec] | None = None
    required: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    #: Tools, and `untrusted` (any `reads_outside` result in the session).
    not_after: list[str] = field(default_factory=list)
    at_most: AtMost | None = None
    requires: list[str] = field(default_factory=list)
    #: Tools this entry names (order rules, compensation): (name, where, who names it), checked
    #: against the catalogue once every entry is read.
    refs: list[tuple[str, Loc, str]] = field(default_factory=list, repr=False)

    @property
    def is_write(self) -> bool:
        return self.kind == "write"


@dataclass
class Catalogue:
    """The tools by name (declaration order kept) and where the catalogue came from."""

    tools: dict[str, ToolSpec]
    source: str
    #: Each tool's entry as written (JSON values), for an export's catalogue to repeat.
    raw: dict[str, dict] = field(default_factory=dict)

    def get(self, name: str) -> ToolSpec | None:
        return self.tools.get(name)


def load_catalogue(catalogue: Any) -> Catalogue:
    """The catalogue from a path (JSON or YAML) or a mapping already loaded (e.g. what
    `export_catalogue` returns). Raises `GuardConfigError` for anything the verifier refuses."""
    if isinstance(catalogue, Catalogue):
        return catalogue
    if isinstance(catalogue, (str, os.PathLike)):
        shown = os.fspath(catalogue)
        root = doc.parse_file(catalogue, "the catalogue")
    elif isinstance(catalogue, dict):
        shown = "the catalogue mapping given to Guard"
        root = doc.from_python(catalogue, shown)
    else:
        raise GuardConfigError(
            f"the catalogue must be a path to a qls-catalogue/1 file or a mapping, not {type(catalogue).__name__}",
            "give Guard('catalogue.json') (python -m stalwart_export ... --catalogue catalogue.json writes one)")
    return read_catalogue(root, shown)


def read_catalogue(root: Node, shown: str) -> Catalogue:
    """A catalogue tree (SPEC 2.3) as a `Catalogue`, checked as the verifier checks it."""
    m = doc.as_map(root, "the catalogue")
    f = m.get("format")
    if f is not None:
        found = f.as_text()
        if found != "qls-catalogue/1":
            seen = f"'{found}'" if found is not None else f.describe()
            raise doc.fail(f.loc, f"unknown catalogue format {seen}: this verifier reads qls-catalogue/1",
                           "write `format: qls-catalogue/1`, or leave `format` out")
    tools: dict[str, ToolSpec] = {}
    raw: dict[str, dict] = {}
    t = m.get("tools")
    if t is not None:
        for e in doc.map_or_null(t, "`tools` of the catalogue").entries:
            words = Node(e.key_loc, "map") if e.value.is_null() else doc.as_map(e.value, f"the entry of tool '{e.key}'")
            tools[e.key] = _read_tool(e.key, e.key_loc, words)
            raw[e.key] = words.to_py()
    for key, what in (("channels", "`channels`"), ("stores", "`stores`")):
        n = m.get(key)
        if n is not None:
            for e in doc.map_or_null(n, what).entries:
                _check_side_entry(key, e)
    cat = Catalogue(tools, shown, raw)
    _check_references(cat)
    return cat


def _check_side_entry(key: str, e: Any) -> None:
    what = f"{'channel' if key == 'channels' else 'store'} '{e.key}'"
    sm = doc.map_or_null(e.value, what)
    if key == "channels":
        doc.opt_text(sm, "auth", f"`auth` of {what}")
    else:
        doc.flag(sm, "multi_tenant", f"`multi_tenant` of {what}")
        doc.flag(sm, "persistent", f"`persistent` of {what}")


def _read_tool(t: str, loc: Loc, m: Node) -> ToolSpec:
    def what(w: str) -> str:
        return f"`{w}` of tool '{t}'"

    kn = m.get_some("kind")
    raw = m.get("kind")
    if kn is None and raw is not None and raw.is_null():
        # `kind: null`: not yet declared; the verifier reads it as a write (its kind_unset lint), so
        # the guard does too: every call of it is put to a person
        kind = "write"
    elif kn is None:
        in_python = loc.file.endswith(".py")
        help = ('add `kind="read"` (it only reads) or `kind="write"` (it changes something) to its decorator: '
                '@tool(kind="read")' if in_python else
                "add `kind: read` (it only reads) or `kind: write` (it changes something)")
        raise doc.fail(loc, f"tool '{t}' has no `kind`", help)
    else:
        kind = doc.as_text(kn, what("kind"))
    if kind not in ("read", "write"):
        raise doc.fail(kn.loc, f"unknown tool kind '{kind}' on tool '{t}'", "write `kind: read` or `kind: write`")
    tool = ToolSpec(t, kind, loc)
    d = m.get_some("description")
    if d is not None:
        doc.as_text(d, what("description"))
    tool.reads_outside = doc.flag(m, "reads_outside", what("reads_outside"))
    so = m.get_some("sends_out")
    if so is not None:
        if so.kind == "seq":
            tool.sends_out = True
            tool.allowed_destinations = [i.text for i in so.items if i.kind == "scalar"]
        elif so.kind == "map":
            tool.sends_out = True
            tool.allowed_destinations = [e.key for e in so.entries]
        else:
            tool.sends_out = doc.as_bool(so, what("sends_out"))
    tool.irreversible = doc.flag(m, "irreversible", what("irreversible"))
    tool.destructive = doc.flag(m, "destructive", what("destructive"))
    tool.confidential = doc.flag(m, "confidential", what("confidential"))

    comp, undo = m.entry("compensation"), m.entry("undo")
    if comp is not None and undo is not None:
        later = undo if (undo.key_loc.line or 0) > (comp.key_loc.line or 0) else comp
        raise doc.fail(later.key_loc, f"tool '{t}' declares both `compensation` and `undo`, which are the same word",
                       "keep one of the two")
    ce = comp or undo
    if ce is not None:
        comp_ref = _read_compensation(ce.value, what(ce.key))
        if comp_ref is not None:
            tool.compensation = comp_ref[0]
            tool.refs.append((comp_ref[0], comp_ref[1], f"'{t}' is undone by"))

    a = m.get_some("args")
    if a is not None:
        tool.args, tool.required = _read_args(t, a)

    o = m.get_some("order")
    if o is not None:
        om = doc.as_map(o, what("order"))
        after = doc.opt_names(om, "after", f"`order.after` of tool '{t}'")
        not_after = doc.opt_names(om, "not_after", f"`order.not_after` of tool '{t}'")
        tool.after = [n for n, _ in after]
        tool.not_after = [n for n, _ in not_after]
        tool.refs += [(n, loc, f"the order rule of '{t}' (`after`) names") for n, loc in after]
        tool.refs += [(n, loc, f"the order rule of '{t}' (`not_after`) names") for n, loc in not_after
                      if n != "untrusted"]
        am = om.get_some("at_most")
        if am is not None:
            tool.at_most = _read_at_most(am, f"`order.at_most` of tool '{t}'")
    if tool.at_most is None:
        am = m.get_some("at_most")
        if am is not None:
            tool.at_most = _read_at_most(am, what("at_most"))

    tool.privileged = bool(doc.opt_choice(m, "privilege", f"tool '{t}'", {"low": False, "high": True}))
    s = m.get_some("store")
    if s is not None:
        sm = doc.as_map(s, what("store"))
        doc.req_text(sm, "name", f"`store.name` of tool '{t}'", "write `store: {name: the_store, access: read}`")
        doc.opt_choice(sm, "access", f"the store of tool '{t}'", {"read": False, "write": True})
    src = m.get_some("source")
    if src is not None:
        if src.kind == "map":
            if (doc.opt_text(src, "module", f"`source.module` of tool '{t}'") is None
                    and doc.opt_text(src, "server", f"`source.server` of tool '{t}'") is None):
                raise doc.fail(src.loc, f"`source` of tool '{t}' names neither a `module` nor a `server`",
                               'write `source: {module: package.tools, pin: "1.2.0"}` or `source: {server: URL, pin: DIGEST}`')
        else:
            doc.as_text(src, what("source"))
    req = m.get_some("requires")
    if req is not None:
        tool.requires = ([n for n, _ in doc.names(req, what("requires"))] if req.kind == "seq"
                         else [doc.as_text(req, what("requires"))])
    return tool


def _read_compensation(n: Node, what: str) -> tuple[str, Loc] | None:
    if n.is_null():
        return None
    if n.kind == "map":
        tn = n.get("tool")
        if tn is None:
            raise doc.fail(n.loc, f"{what} has no `tool`",
                           "write `{tool: the_undoing_tool, bind: {arg: arg}}`, or just the tool's name")
        if tn.is_null():
            return None
        name = doc.as_text(tn, f"`tool` of {what}")
        loc = tn.loc
    else:
        name = doc.as_text(n, what)
        loc = n.loc
    if name == "none":
        return None
    return name, loc


def _read_at_most(n: Node, what: str) -> AtMost:
    if n.kind == "map":
        c = n.get_some("count")
        if c is None:
            raise doc.fail(n.loc, f"{what} has no `count`", "write `{count: 1, per: session}`")
        count = doc.as_u32(c, f"`count` of {what}")
        per = doc.opt_text(n, "per", f"`per` of {what}")
        return AtMost(count, per is not None and per[0] in ("turn", "run"))
    return AtMost(doc.as_u32(n, what), False)


def _read_args(t: str, a: Node) -> tuple[dict[str, ArgSpec], list[str]]:
    what = f"`args` of tool '{t}'"
    m = doc.as_map(a, what)
    required: list[str] = []
    ty = m.get("type")
    if ty is not None and ty.as_text() == "object":
        props = m.get("properties")
        if props is not None and props.kind == "map":
            req = m.get("required")
            if req is not None and req.kind == "seq":
                required = [i.text for i in req.items if i.kind == "scalar"]
            m = doc.as_map(props, what)
    out: dict[str, ArgSpec] = {}
    for e in m.entries:
        am = doc.map_or_null(e.value, f"argument '{e.key}' of tool '{t}'")
        role = doc.opt_text(am, "role", f"`role` of argument '{e.key}' of tool '{t}'")
        schema = {x.key: x.value.to_py() for x in am.entries if x.key != "role"}
        out[e.key] = ArgSpec(e.key, schema, role[0] if role else None)
    return out, required


def _check_references(cat: Catalogue) -> None:
    """An order rule or compensation naming a tool the catalogue lacks is an error at the name
    (the verifier's `check_catalogue`)."""
    names = list(cat.tools)

    def need(name: str, loc: Loc, who: str) -> None:
        if name in cat.tools:
            return
        from difflib import get_close_matches

        near = get_close_matches(name, names, n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        raise doc.fail(loc, f"{who} tool '{name}', which the catalogue ({cat.source}) does not declare{hint}",
                       f"declare '{name}' in {cat.source} (`tools: {{{name}: {{kind: read}}}}`, or `kind: write`), "
                       f"or fix the name (the catalogue declares: {', '.join(names)})")

    # Tool by tool: its order rules, then its compensation, as the verifier checks them.
    for tool in cat.tools.values():
        ordered = sorted(tool.refs, key=lambda r: not r[2].startswith("the order rule"))
        for name, loc, who in ordered:
            need(name, loc, who)
