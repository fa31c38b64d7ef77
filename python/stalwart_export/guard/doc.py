"""The guard's document reader: JSON and YAML files as trees that keep where every value was
written, and the typed getters the catalogue, facts and rulebook readers use.

It reads as the Rust verifier does (`src/input/tree.rs`), so that a file the verifier refuses is
refused here at the same line and column, and a file it reads means the same here:

* a file is a regular file of at most 64 MiB of UTF-8 text (a byte-order mark is dropped);
* a `.json` file, or any file whose text starts with `{` or `[` and is valid JSON, is JSON; any
  other file is YAML;
* JSON is first checked with Python's `json` (its syntax error gives the line and column), then
  read by the small position-keeping reader below; a key written twice in one object is an error;
* YAML is read from PyYAML's event stream; anchors, aliases and tags are refused, a key written
  twice is an error, and the top level must be a mapping;
* scalars keep their text and whether they were written plain (unquoted): only a plain `null`,
  `~` or empty value is null, only a plain `true`/`false` is a bool, only a plain number is a
  number (so a quoted `"true"` is text, and YAML 1.1's `yes` is the text `yes`).

Lines and columns are 1-based; columns count characters. A mapping given in Python (a `dict`
rather than a file) is read into the same tree; its values are located by their key path.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

#: The largest file read (64 MiB), as the verifier's `tree::read_file`.
MAX_FILE_BYTES = 64 << 20
#: Nesting deeper than this is refused (as the verifier's MAX_DEPTH).
MAX_DEPTH = 200

_NULLS = ("", "~", "null", "Null", "NULL")
_TRUES = ("true", "True", "TRUE")
_FALSES = ("false", "False", "FALSE")


class GuardConfigError(ValueError):
    """A catalogue, facts file or rulebook record the guard cannot read, or one the verifier
    would refuse: raised when the guard is built (the guard fails closed, SPEC 12.1).

    `str(e)` is `file:line:column: what is wrong (fix: how to fix it)` when the error has a place
    in a file, else `what is wrong (fix: ...)`. Attributes: `message` (without the place),
    `help` (the fix), `file`, `line`, `column` (None when the error has no place), `path` (the
    key path for a mapping given in Python, else None)."""

    def __init__(self, message: str, help: str = "", *, file: str | None = None, line: int | None = None,
                 column: int | None = None, path: str | None = None) -> None:
        self.message = message
        self.help = help
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        where = ""
        if file is not None and line is not None:
            where = f"{file}:{line}:{column or 1}: "
        elif file is not None:
            where = f"{file}: "
        if path:
            where += f"at {path}: "
        tail = f" (fix: {help})" if help else ""
        super().__init__(f"{where}{message}{tail}")


@dataclass(frozen=True)
class Loc:
    """Where a value was written: a file's display name, line and column (1-based), or, for a
    mapping given in Python, the key path (`tools.refund_card.kind`)."""

    file: str
    line: int | None = None
    column: int | None = None
    path: str | None = None

    def child(self, key: Any) -> "Loc":
        """The location of a value under `key` of a Python mapping (only for key-path locations)."""
        p = f"{self.path}.{key}" if self.path else str(key)
        return Loc(self.file, None, None, p)


@dataclass
class Node:
    """One value of a document. `kind` is `map`, `seq` or `scalar`; a scalar has `text` and
    `plain` (written unquoted); a map has `entries`; a seq has `items`."""

    loc: Loc
    kind: str
    text: str = ""
    plain: bool = True
    entries: list["Entry"] = field(default_factory=list)
    items: list["Node"] = field(default_factory=list)

    def is_null(self) -> bool:
        """True for a plain `null`, `~` or empty scalar."""
        return self.kind == "scalar" and self.plain and self.text in _NULLS

    def as_bool(self) -> bool | None:
        """The bool of a plain `true`/`false` scalar, else None."""
        if self.kind == "scalar" and self.plain:
            if self.text in _TRUES:
                return True
            if self.text in _FALSES:
                return False
        return None

    def as_text(self) -> str | None:
        """The text of a scalar that is neither null nor a plain bool, else None."""
        if self.kind == "scalar" and not self.is_null() and self.as_bool() is None:
            return self.text
        return None

    def get(self, key: str) -> "Node | None":
        """The value under `key` of a mapping, if written."""
        for e in self.entries:
            if e.key == key:
                return e.value
        return None

    def get_some(self, key: str) -> "Node | None":
        """The value under `key` unless absent or null."""
        v = self.get(key)
        return None if v is None or v.is_null() else v

    def entry(self, key: str) -> "Entry | None":
        for e in self.entries:
            if e.key == key:
                return e
        return None

    def describe(self) -> str:
        """What the value is, for messages, in the verifier's words (`a mapping`, `a list`,
        `null`, `` `true` ``, `the number 3`, `the text `x``, `the quoted text "x"`)."""
        if self.kind == "map":
            return "a mapping"
        if self.kind == "seq":
            return "a list"
        if self.is_null():
            return "null"
        b = self.as_bool()
        if b is not None:
            return f"`{'true' if b else 'false'}`"
        if self.plain and _is_float(self.text):
            return f"the number {self.text}"
        short = self.text[:40] + ("..." if len(self.text) > 40 else "")
        return f"the text `{short}`" if self.plain else f'the quoted text "{short}"'

    def to_py(self) -> Any:
        """The value as plain Python (JSON's types): plain scalars become None, bools and numbers
        where they read as such; quoted scalars stay text."""
        if self.kind == "map":
            return {e.key: e.value.to_py() for e in self.entries}
        if self.kind == "seq":
            return [i.to_py() for i in self.items]
        if self.is_null():
            return None
        b = self.as_bool()
        if b is not None:
            return b
        if self.plain:
            try:
                return int(self.text)
            except ValueError:
                pass
            if _looks_numeric(self.text) and _is_float(self.text):
                return float(self.text)
        return self.text


@dataclass
class Entry:
    """One `key: value` of a mapping, with where the key was written."""

    key: str
    key_loc: Loc
    value: Node


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _looks_numeric(text: str) -> bool:
    return bool(text) and all(c.isdigit() or c in "+-.eE" for c in text) and any(c.isdigit() for c in text)


# ------------------------------------------------------------------------------------ reading


def read_text(path: str | os.PathLike, what: str) -> str:
    """The UTF-8 text of the regular file `path` (at most 64 MiB, byte-order mark dropped);
    `GuardConfigError` naming the file and `what` it is otherwise."""
    shown = os.fspath(path)
    fix = f"give the guard the path of {what}: a readable UTF-8 file"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise GuardConfigError(f"cannot read {what} {shown}: no such file", fix) from None
    except OSError as e:
        raise GuardConfigError(f"cannot read {what} {shown}: {e.strerror or e}", fix) from None
    import stat as _stat

    if not _stat.S_ISREG(st.st_mode):
        raise GuardConfigError(f"cannot read {what} {shown}: not a regular file", fix)
    if st.st_size > MAX_FILE_BYTES:
        raise GuardConfigError(f"cannot read {what} {shown}: larger than {MAX_FILE_BYTES >> 20} MiB", fix)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise GuardConfigError(f"cannot read {what} {shown}: {e.strerror or e}", fix) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise GuardConfigError(f"cannot read {what} {shown}: it is not UTF-8 text", fix) from None
    return text[1:] if text.startswith("\ufeff") else text


def is_json(path: str, text: str) -> bool:
    """A `.json` name, or text that starts with `{` or `[` and is valid JSON (as the verifier)."""
    if os.path.splitext(path)[1].lower() == ".json":
        return True
    if text.lstrip()[:1] in ("{", "["):
        try:
            json.loads(text)
        except ValueError:
            return False
        return True
    return False


def parse_file(path: str | os.PathLike, what: str) -> Node:
    """The tree of the JSON or YAML file `path` (displayed as given). Errors: `GuardConfigError`
    at the line and column of bad syntax, a duplicate key, an anchor, alias or tag."""
    shown = os.fspath(path)
    text = read_text(path, what)
    if is_json(shown, text):
        return parse_json(text, shown)
    return parse_yaml(text, shown)


def from_python(obj: Any, name: str) -> Node:
    """The tree of a mapping given in Python (`name` says what it is in messages). Strings are
    quoted text; None, bools and numbers are plain scalars, as JSON would write them."""
    return _from_py(obj, Loc(name, None, None, None), 0)


def _from_py(obj: Any, loc: Loc, depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise GuardConfigError(f"the mapping nests deeper than {MAX_DEPTH} levels", "flatten it",
                               file=loc.file, path=loc.path)
    if isinstance(obj, dict):
        entries = []
        for k, v in obj.items():
            if not isinstance(k, str):
                raise GuardConfigError(f"a key must be text, found {k!r}", "use text keys",
                                       file=loc.file, path=loc.path)
            kl = loc.child(k)
            entries.append(Entry(k, kl, _from_py(v, kl, depth + 1)))
        return Node(loc, "map", entries=entries)
    if isinstance(obj, (list, tuple)):
        return Node(loc, "seq", items=[_from_py(v, loc.child(i), depth + 1) for i, v in enumerate(obj)])
    if obj is None:
        return Node(loc, "scalar", text="null", plain=True)
    if isinstance(obj, bool):
        return Node(loc, "scalar", text="true" if obj else "false", plain=True)
    if isinstance(obj, (int, float)):
        return Node(loc, "scalar", text=json.dumps(obj), plain=True)
    if isinstance(obj, str):
        return Node(loc, "scalar", text=obj, plain=False)
    raise GuardConfigError(f"a value must be JSON (text, number, bool, null, list or mapping), found "
                           f"{type(obj).__name__}", "give JSON values", file=loc.file, path=loc.path)


# ------------------------------------------------------------------------------------ JSON


def parse_json(text: str, shown: str) -> Node:
    """JSON text as a tree (see the module docs)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise GuardConfigError(
            f"invalid JSON: {e.msg}",
            "fix the JSON syntax here: a missing comma, quote or bracket, or a trailing comma, is the usual cause",
            file=shown, line=e.lineno, column=e.colno) from None
    except RecursionError:
        raise GuardConfigError(f"the document nests deeper than {MAX_DEPTH} levels", "flatten the document",
                               file=shown, line=1, column=1) from None
    r = _JsonReader(text, shown)
    r.ws()
    return r.value(0)


class _JsonReader:
    def __init__(self, text: str, shown: str) -> None:
        self.text = text
        self.shown = shown
        self.pos = 0
        self.line = 1
        self.col = 1

    def loc(self) -> Loc:
        return Loc(self.shown, self.line, self.col)

    def fail(self, msg: str) -> GuardConfigError:
        return GuardConfigError(f"invalid JSON: {msg}", "fix the JSON syntax here", file=self.shown,
                                line=self.line, column=self.col)

    def peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def bump(self) -> str | None:
        c = self.peek()
        if c is None:
            return None
        self.pos += 1
        if c == "\n":
            self.line += 1
            self.col = 1
        else:
            self.col += 1
        return c

    def ws(self) -> None:
        while self.peek() in (" ", "\t", "\n", "\r"):
            self.bump()

    def value(self, depth: int) -> Node:
        loc = self.loc()
        if depth > MAX_DEPTH:
            raise GuardConfigError(f"the document nests deeper than {MAX_DEPTH} levels", "flatten the document",
                                   file=self.shown, line=loc.line, column=loc.column)
        c = self.peek()
        if c == "{":
            self.bump()
            entries: list[Entry] = []
            self.ws()
            if self.peek() == "}":
                self.bump()
                return Node(loc, "map", entries=entries)
            while True:
                self.ws()
                key_loc = self.loc()
                key = self.string()
                first = next((e for e in entries if e.key == key), None)
                if first is not None:
                    raise GuardConfigError(f'invalid JSON: duplicate key "{key}" (first written at line '
                                           f"{first.key_loc.line})", "fix the JSON syntax here",
                                           file=self.shown, line=key_loc.line, column=key_loc.column)
                self.ws()
                if self.bump() != ":":
                    raise self.fail("expected `:`")
                self.ws()
                entries.append(Entry(key, key_loc, self.value(depth + 1)))
                self.ws()
                nxt = self.bump()
                if nxt == ",":
                    continue
                if nxt == "}":
                    break
                raise self.fail("expected `,` or `}`")
            return Node(loc, "map", entries=entries)
        if c == "[":
            self.bump()
            items: list[Node] = []
            self.ws()
            if self.peek() == "]":
                self.bump()
                return Node(loc, "seq", items=items)
            while True:
                self.ws()
                items.append(self.value(depth + 1))
                self.ws()
                nxt = self.bump()
                if nxt == ",":
                    continue
                if nxt == "]":
                    break
                raise self.fail("expected `,` or `]`")
            return Node(loc, "seq", items=items)
        if c == '"':
            return Node(loc, "scalar", text=self.string(), plain=False)
        if c is None:
            raise self.fail("expected a value, found the end of the file")
        start = self.pos
        while (ch := self.peek()) is not None and (ch.isascii() and ch.isalnum() or ch in "+-."):
            self.bump()
        word = self.text[start:self.pos]
        if not word:
            raise self.fail("expected a value")
        return Node(loc, "scalar", text=word, plain=True)

    def string(self) -> str:
        if self.peek() != '"':
            raise self.fail("expected a quoted key")
        start = self.pos
        # The text was checked by json.loads: find the closing quote, then let json decode it.
        self.bump()
        while True:
            c = self.bump()
            if c is None:
                raise self.fail("unclosed string")
            if c == "\\":
                self.bump()
            elif c == '"':
                break
        return json.loads(self.text[start:self.pos])


# ------------------------------------------------------------------------------------ YAML

_YAML_HELP = ("fix the YAML syntax here: indentation, a missing `:` or space after it, or an unclosed "
              "quote or bracket are the usual causes")


def parse_yaml(text: str, shown: str) -> Node:
    """YAML text as a tree (see the module docs), read from PyYAML's events."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with langchain-core
        raise GuardConfigError(f"cannot read {shown}: reading YAML needs PyYAML (pip install pyyaml)",
                               "install PyYAML, or give the file as JSON") from None

    def at(mark: Any) -> Loc:
        return Loc(shown, (mark.line + 1) if mark else 1, (mark.column + 1) if mark else 1)

    def err(mark: Any, msg: str, help: str) -> GuardConfigError:
        loc = at(mark)
        return GuardConfigError(msg, help, file=shown, line=loc.line, column=loc.column)

    try:
        events = list(yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise err(mark, f"invalid YAML: {e.problem or e.context or 'cannot read it'}", _YAML_HELP) from None
    except yaml.YAMLError as e:
        raise GuardConfigError(f"invalid YAML: {e}", _YAML_HELP, file=shown, line=1, column=1) from None

    it: Iterator[Any] = iter(events)

    def past_properties(mark: Any) -> Loc:
        """Where the value starts after its anchor and tag (the verifier points there)."""
        i = mark.index
        while i < len(text) and text[i] in "&!":
            while i < len(text) and not text[i].isspace():
                i += 1
            while i < len(text) and text[i] in " \t":
                i += 1
        line = text.count("\n", 0, i) + 1
        col = i - (text.rfind("\n", 0, i) + 1) + 1
        return Loc(shown, line, col)

    def check(ev: Any) -> None:
        tag = getattr(ev, "tag", None)
        bad_tag = tag is not None and tag != "!"
        if getattr(ev, "anchor", None) or bad_tag:
            loc = past_properties(ev.start_mark)
            if getattr(ev, "anchor", None):
                raise GuardConfigError("YAML anchors and aliases (`&name`, `*name`) are not supported",
                                       "write the value out in full where it is used",
                                       file=shown, line=loc.line, column=loc.column)
            raise GuardConfigError("YAML tags (`!!str`, `!name`) are not supported",
                                   "remove the tag; quote the value if it must be read as text",
                                   file=shown, line=loc.line, column=loc.column)

    def node(ev: Any, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise err(ev.start_mark, f"the document nests deeper than {MAX_DEPTH} levels", "flatten the document")
        if isinstance(ev, yaml.AliasEvent):
            raise err(ev.start_mark, "YAML anchors and aliases (`&name`, `*name`) are not supported",
                      "write the value out in full where it is used")
        check(ev)
        if isinstance(ev, yaml.ScalarEvent):
            return Node(at(ev.start_mark), "scalar", text=ev.value, plain=ev.style is None)
        if isinstance(ev, yaml.SequenceStartEvent):
            items = []
            for sub in it:
                if isinstance(sub, yaml.SequenceEndEvent):
                    break
                items.append(node(sub, depth + 1))
            return Node(at(ev.start_mark), "seq", items=items)
        if isinstance(ev, yaml.MappingStartEvent):
            entries: list[Entry] = []
            for kev in it:
                if isinstance(kev, yaml.MappingEndEvent):
                    break
                if not isinstance(kev, yaml.ScalarEvent):
                    raise err(kev.start_mark, "a mapping key must be a plain word, not a list or a mapping",
                              "use a word (or a quoted text) as the key")
                check(kev)
                kloc = at(kev.start_mark)
                first = next((e for e in entries if e.key == kev.value), None)
                if first is not None:
                    raise GuardConfigError(f"duplicate key '{kev.value}' (first written at line {first.key_loc.line})",
                                           "remove one of the two, or merge them into one",
                                           file=shown, line=kloc.line, column=kloc.column)
                entries.append(Entry(kev.value, kloc, node(next(it), depth + 1)))
            loc = at(ev.start_mark)
            if entries and (entries[0].key_loc.line, entries[0].key_loc.column) < (loc.line, loc.column):
                loc = entries[0].key_loc
            return Node(loc, "map", entries=entries)
        raise err(getattr(ev, "start_mark", None), "the YAML reader failed on this file",
                  "simplify the file's YAML (plain mappings, lists and scalars) and try again")

    root: Node | None = None
    for ev in it:
        if isinstance(ev, (yaml.StreamStartEvent, yaml.DocumentStartEvent)):
            continue
        if isinstance(ev, (yaml.DocumentEndEvent, yaml.StreamEndEvent)):
            if root is not None:
                break
            continue
        root = node(ev, 0)
    if root is None:
        root = Node(Loc(shown, 1, 1), "scalar", text="", plain=True)
    if root.kind != "map":
        raise GuardConfigError("the top level of this file must be a mapping of `key: value` lines",
                               "start the file with its keys (for example `tools:`), not a list or a lone value",
                               file=shown, line=root.loc.line, column=root.loc.column)
    return root


# ------------------------------------------------------------------------------------ getters


def fail(loc: Loc, msg: str, help: str) -> GuardConfigError:
    """A `GuardConfigError` at `loc`."""
    return GuardConfigError(msg, help, file=loc.file, line=loc.line, column=loc.column, path=loc.path)


def _shape(node: Node, what: str, expected: str, help: str) -> GuardConfigError:
    return fail(node.loc, f"{what} must be {expected}, found {node.describe()}", help)


def as_map(node: Node, what: str) -> Node:
    """`node` as a mapping; `what` names it in the error."""
    if node.kind != "map":
        raise _shape(node, what, "a mapping", "write it as `key: value` pairs")
    return node


def map_or_null(node: Node, what: str) -> Node:
    """`node` as a mapping, or an empty one when null."""
    if node.is_null():
        return Node(node.loc, "map")
    return as_map(node, what)


def as_seq(node: Node, what: str) -> list[Node]:
    """`node` as a list; null reads as empty."""
    if node.kind == "seq":
        return node.items
    if node.is_null():
        return []
    raise _shape(node, what, "a list", "write it as `[a, b]` or as `- a` lines")


def as_text(node: Node, what: str) -> str:
    """`node` as text (a scalar that is neither null nor a plain bool)."""
    t = node.as_text()
    if t is None:
        raise _shape(node, what, "text", "write a word or a quoted text")
    return t


def opt_text(m: Node, key: str, what: str) -> tuple[str, Loc] | None:
    """The text under `key` and where it is, or None when absent or null."""
    n = m.get_some(key)
    return None if n is None else (as_text(n, what), n.loc)


def req_text(m: Node, key: str, what: str, help: str) -> tuple[str, Loc]:
    """The text under `key`, which must be written."""
    n = m.get_some(key)
    if n is None:
        raise fail(m.loc, f"{what} is missing", help)
    return as_text(n, what), n.loc


def as_bool(node: Node, what: str) -> bool:
    """`node` as a plain `true` or `false`."""
    b = node.as_bool()
    if b is None:
        raise _shape(node, what, "true or false", "write true or false, without quotes")
    return b


def flag(m: Node, key: str, what: str) -> bool:
    """The bool under `key`; absent or null is False."""
    n = m.get_some(key)
    return False if n is None else as_bool(n, what)


def as_u32(node: Node, what: str) -> int:
    """`node` as a plain whole number that fits in 32 bits."""
    v: int | None = None
    if node.kind == "scalar" and node.plain and node.text.isascii() and node.text.isdigit():
        v = int(node.text)
    if v is None or v >= 1 << 64:
        raise _shape(node, what, "a whole number", "write a number such as 10, without quotes")
    if v >= 1 << 32:
        raise fail(node.loc, f"{what} is too large ({v})", "write a smaller number")
    return v


def names(node: Node, what: str) -> list[tuple[str, Loc]]:
    """`node` as a list of texts (null reads as empty), each with where it is."""
    return [(as_text(i, f"an entry of {what}"), i.loc) for i in as_seq(node, what)]


def opt_names(m: Node, key: str, what: str) -> list[tuple[str, Loc]]:
    n = m.get(key)
    return [] if n is None else names(n, what)


def opt_choice(m: Node, key: str, whose: str, choices: dict[str, Any]) -> Any:
    """The optional word `key`, one of `choices`; another word is an error at it."""
    got = opt_text(m, key, f"`{key}` of {whose}")
    if got is None:
        return None
    word, loc = got
    if word in choices:
        return choices[word]
    allowed = " or ".join(f"`{key}: {c}`" for c in choices)
    raise fail(loc, f"unknown {key.replace('_', ' ')} '{word}' on {whose}", f"write {allowed}")
