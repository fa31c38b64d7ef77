//! Python tool modules (agent.yaml `tools: - python: shop.tools`): read statically, without
//! running Python, with tree-sitter's Python grammar.
//!
//! A module `a.b` is `a/b.py`, else the package `a/b/__init__.py`, relative to agent.yaml's folder.
//! Every function decorated as a tool becomes a catalogue entry (SPEC 2.3's words):
//!
//! - decorators: `@tool`, `@tool(...)`, `@stalwart.tool(...)`, `@langchain.tools.tool(...)`,
//!   `@langchain_core.tools.tool(...)` (any dotted name ending in `tool`);
//! - the name: the decorator's first positional string (LangChain's `@tool("name")`), else its
//!   `name=`, else the function's name;
//! - the words: the decorator's keyword arguments (`kind="write"`, `reads_outside=True`,
//!   `undo="refund_card"`, `order={"after": ["get_order"]}`, ...), each a Python literal (strings,
//!   numbers, `True`/`False`/`None`, lists, tuples, dicts of literals); LangChain's own keywords
//!   (`return_direct`, `args_schema`, `infer_schema`, `response_format`, `parse_docstring`,
//!   `error_on_invalid_docstring`) are not catalogue words and are passed over;
//! - `description`: the keyword, else the docstring's first paragraph;
//! - `args`: the typed parameters (`str` string, `int` integer, `float` number, `bool` boolean,
//!   `list[...]` array, `dict[...]` object, `Optional[T]` and `T | None` as `T`, others
//!   untyped), merged under the decorator's own `args={"url": {"role": "url"}}`; `self`, `*args`, `**kwargs` and LangChain's injected
//!   parameters (`InjectedToolArg`, `InjectedState`, `InjectedStore`, `InjectedToolCallId`,
//!   `ToolRuntime`, `RunnableConfig`) are not arguments the model writes.
//!
//! Each entry's location is its `def` line, so a finding on the tool points there. What cannot be
//! read statically is an [`InputError`] at its line with the fix: a syntax error, a keyword whose
//! value is not a literal (`kind=KIND`), `**options` in a decorator, a tool made by a call at run
//! time (`refund = tool(refund_fn)`, `StructuredTool.from_function(...)`), a module with no tool, a
//! tool declared twice. A tool with no `kind` is the catalogue's error, at its `def` line; a word
//! the catalogue does not know is its `unknown_word` lint, as in any catalogue.

use std::path::{Path, PathBuf};

use tree_sitter::{Node as TsNode, Parser};

use super::tree::{Entry, Node, Reader, Value};
use crate::input::error::InputError;
use crate::input::ir::Named;
use crate::input::source::{FileId, Loc, SourceMap};

/// Nesting deeper than this in a literal is refused.
const MAX_DEPTH: usize = 100;

/// LangChain's own `@tool` keywords: not catalogue words, passed over.
const LANGCHAIN_WORDS: &[&str] = &[
    "return_direct",
    "args_schema",
    "infer_schema",
    "response_format",
    "parse_docstring",
    "error_on_invalid_docstring",
];

/// Parameter annotations LangChain fills in itself: not arguments the model writes.
const INJECTED: &[&str] = &[
    "InjectedToolArg",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ToolRuntime",
    "RunnableConfig",
    "CallbackManagerForToolRun",
    "AsyncCallbackManagerForToolRun",
];

/// One tool a module declares.
#[derive(Debug, Clone)]
pub(crate) struct PyTool {
    /// The tool's name, where it was given (the decorator's string, `name=`, or the `def` name).
    pub(crate) name: Named,
    /// The `def` line: the entry's location.
    pub(crate) loc: Loc,
    /// The catalogue words, located in the module.
    pub(crate) words: Vec<Entry>,
    /// The function's name as written after `def`.
    pub(crate) function: String,
    /// The function's byte range in the module (decorators excluded), for the code checks.
    pub(crate) span: std::ops::Range<usize>,
}

/// A module that was read: its file and its tools.
#[derive(Debug, Clone)]
pub struct PyModule {
    /// The module as agent.yaml names it (`shop.tools`).
    pub module: String,
    /// The file read (in the run's [`SourceMap`]).
    pub file: FileId,
    /// The tools: name, function name and the function's byte range (decorators excluded).
    pub tools: Vec<(String, String, std::ops::Range<usize>)>,
}

/// The file module `module` names, relative to `base` (agent.yaml's folder): `a/b.py`, else
/// `a/b/__init__.py`; `None` when the name is not a dotted Python name or neither file exists.
/// Returns the path tried first too, for the error.
pub(crate) fn resolve(base: &Path, module: &str) -> (Option<PathBuf>, PathBuf) {
    let valid = valid_name(module);
    let rel: PathBuf = module.split('.').collect();
    let file = base.join(rel.with_extension("py"));
    if !valid {
        return (None, file);
    }
    if file.is_file() {
        return (Some(file), base.join(rel.with_extension("py")));
    }
    let package = base.join(&rel).join("__init__.py");
    if package.is_file() {
        return (Some(package), file);
    }
    (None, file)
}

/// True when `module` is a dotted Python name (`shop.tools`): identifiers joined by `.`, so it
/// cannot name a path (`../x`, `/etc/x`) or a file (`tools.py` reads as the module `tools.py`,
/// i.e. `tools/py.py`).
pub(crate) fn valid_name(module: &str) -> bool {
    !module.is_empty()
        && module.split('.').all(|p| {
            let mut c = p.chars();
            c.next().is_some_and(|f| f == '_' || f.is_alphabetic())
                && c.all(|ch| ch == '_' || ch.is_alphanumeric())
        })
}

/// Parses `text` with tree-sitter's Python grammar. `None` only if tree-sitter gives up (it
/// does not on any text; kept for safety).
pub(crate) fn parse(text: &str) -> Option<tree_sitter::Tree> {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
    p.parse(text, None)
}

/// Reads the tools module `file` declares. Errors: see the module documentation.
pub(crate) fn read(sources: &SourceMap, file: FileId) -> Result<Vec<PyTool>, InputError> {
    let f = sources.file(file);
    let r = Reader { sources };
    let at = |byte: usize| {
        let (line, column) = f.line_col(byte);
        Loc::new(file, line, column)
    };
    let Some(tree) = parse(&f.text) else {
        return Err(r.err(
            at(0),
            format!("cannot read {} as Python", f.display),
            "check the file is Python source",
        ));
    };
    let root = tree.root_node();
    if root.has_error() {
        let bad = first_error(root).unwrap_or(root);
        let what = if bad.is_missing() {
            format!(
                "a syntax error in {}: '{}' is missing here",
                f.display,
                bad.kind()
            )
        } else {
            format!("a syntax error in {}: Python cannot read this", f.display)
        };
        return Err(r
            .err(
                at(bad.start_byte()),
                what,
                "fix the module so `python -m py_compile` accepts it; tools are read from it without running it",
            )
            .with_label("syntax error"));
    }
    let cx = Cx {
        text: &f.text,
        r,
        at: &at,
        display: &f.display,
    };
    cx.nested_tools(root)?;
    let mut tools = Vec::new();
    let mut cursor = root.walk();
    for top in root.named_children(&mut cursor) {
        cx.runtime_tool(top)?;
        if top.kind() != "decorated_definition" {
            continue;
        }
        let Some(def) = top.child_by_field_name("definition") else {
            continue;
        };
        if def.kind() != "function_definition" {
            continue;
        }
        let mut dc = top.walk();
        let decorators: Vec<TsNode> = top
            .named_children(&mut dc)
            .filter(|n| n.kind() == "decorator")
            .collect();
        for d in decorators {
            if let Some(t) = cx.tool(d, def)? {
                if let Some(first) = tools.iter().find(|x: &&PyTool| x.name.name == t.name.name) {
                    return Err(cx
                        .r
                        .err(
                            t.name.loc,
                            format!(
                                "{} declares the tool '{}' twice (first at line {})",
                                f.display, t.name.name, first.loc.line
                            ),
                            "give each tool its own name",
                        )
                        .with_label("declared again")
                        .also_at(sources, first.name.loc, "first declared here"));
                }
                tools.push(t);
                break;
            }
        }
    }
    if tools.is_empty() {
        return Err(r.err(
            at(0),
            format!("{} declares no tool", f.display),
            "decorate each tool function with `@tool(kind=\"read\")` or `@tool(kind=\"write\")` (LangChain's `@tool` or `@stalwart.tool`)",
        ));
    }
    Ok(tools)
}

/// Every node under `root` (itself included), in document order, without recursion (the
/// code checks read the module through it too).
pub(crate) fn preorder(root: TsNode<'_>) -> Vec<TsNode<'_>> {
    let mut out = Vec::new();
    let mut c = root.walk();
    loop {
        out.push(c.node());
        if c.goto_first_child() {
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return out;
            }
        }
    }
}

/// The first ERROR or MISSING node, in document order (iterative: no recursion on deep input).
fn first_error(root: TsNode<'_>) -> Option<TsNode<'_>> {
    let mut c = root.walk();
    loop {
        let n = c.node();
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if n.has_error() && c.goto_first_child() {
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return None;
            }
        }
    }
}

struct Cx<'a> {
    text: &'a str,
    r: Reader<'a>,
    at: &'a dyn Fn(usize) -> Loc,
    display: &'a str,
}

impl Cx<'_> {
    fn src(&self, n: TsNode<'_>) -> &str {
        &self.text[n.byte_range()]
    }

    fn loc(&self, n: TsNode<'_>) -> Loc {
        (self.at)(n.start_byte())
    }

    fn err(&self, n: TsNode<'_>, msg: String, help: &str, label: &str) -> InputError {
        self.r.err(self.loc(n), msg, help).with_label(label)
    }

    /// A tool decorator on a definition that is not at the module's top level (inside a class, a
    /// function, an `if` or a `try`): which of them exists, and under which name, is decided
    /// when Python runs, so it is an error at its line.
    fn nested_tools(&self, root: TsNode<'_>) -> Result<(), InputError> {
        for n in preorder(root) {
            if n.kind() == "decorator"
                && n.parent()
                    .and_then(|d| d.parent())
                    .is_some_and(|p| p.kind() != "module")
            {
                let expr = n.named_child(0);
                let callee = match expr {
                    Some(e) if e.kind() == "call" => e.child_by_field_name("function"),
                    other => other,
                };
                if callee.is_some_and(|c| self.is_tool_name(c)) {
                    let def = n.parent().and_then(|d| d.child_by_field_name("definition"));
                    let name = def
                        .and_then(|d| d.child_by_field_name("name"))
                        .map_or("?", |x| self.src(x));
                    let within = {
                        let mut p = n.parent().and_then(|d| d.parent());
                        let mut what = "a block";
                        while let Some(x) = p {
                            what = match x.kind() {
                                "class_definition" => "a class",
                                "function_definition" => "a function",
                                "if_statement" | "else_clause" | "elif_clause" => "an `if`",
                                "try_statement" | "except_clause" | "finally_clause" => "a `try`",
                                "with_statement" => "a `with`",
                                "for_statement" | "while_statement" => "a loop",
                                _ => {
                                    p = x.parent();
                                    continue;
                                }
                            };
                            break;
                        }
                        what
                    };
                    return Err(self.err(
                        n,
                        format!("{} declares the tool '{name}' inside {within}: only tools defined at the module's top level can be read without running Python", self.display),
                        "define the tool function at the top level of the module (a method or a conditional tool cannot be told apart statically), or declare it in a catalogue",
                        "not at the top level",
                    ));
                }
            }
        }
        Ok(())
    }

    /// True when `n` (an identifier or a dotted name) names a tool decorator.
    fn is_tool_name(&self, n: TsNode<'_>) -> bool {
        match n.kind() {
            "identifier" => self.src(n) == "tool",
            "attribute" => n
                .child_by_field_name("attribute")
                .is_some_and(|a| self.src(a) == "tool"),
            _ => false,
        }
    }

    /// A top-level `x = tool(f)` / `StructuredTool.from_function(...)`: made at run time.
    fn runtime_tool(&self, top: TsNode<'_>) -> Result<(), InputError> {
        if top.kind() != "expression_statement" {
            return Ok(());
        }
        let Some(a) = top.named_child(0).filter(|a| a.kind() == "assignment") else {
            return Ok(());
        };
        let Some(call) = a
            .child_by_field_name("right")
            .filter(|c| c.kind() == "call")
        else {
            return Ok(());
        };
        let Some(func) = call.child_by_field_name("function") else {
            return Ok(());
        };
        let name = self.src(func);
        if self.is_tool_name(func)
            || name.ends_with("Tool.from_function")
            || name.ends_with("StructuredTool")
        {
            return Err(self.err(
                call,
                format!("{} makes a tool at run time ({name}(...)): it cannot be read without running Python", self.display),
                "decorate the tool's function with `@tool(kind=...)` instead, or declare the tool in a catalogue (`tools: - catalogue: ...`)",
                "made at run time",
            ));
        }
        Ok(())
    }

    /// The tool decorator `d` on function `def` declares, or `None` for another decorator.
    fn tool(&self, d: TsNode<'_>, def: TsNode<'_>) -> Result<Option<PyTool>, InputError> {
        let Some(expr) = d.named_child(0) else {
            return Ok(None);
        };
        let (callee, args) = match expr.kind() {
            "call" => (
                expr.child_by_field_name("function"),
                expr.child_by_field_name("arguments"),
            ),
            _ => (Some(expr), None),
        };
        if !callee.is_some_and(|c| self.is_tool_name(c)) {
            return Ok(None);
        }
        let fname = def
            .child_by_field_name("name")
            .ok_or_else(|| self.err(def, "a function without a name".into(), "", "here"))?;
        let def_loc = self.loc(fname);
        let mut name = Named {
            name: self.src(fname).to_string(),
            loc: def_loc,
        };
        let mut words: Vec<Entry> = Vec::new();
        let mut given_args: Option<Entry> = None;
        if let Some(args) = args {
            let mut c = args.walk();
            let mut positional = 0;
            for a in args.named_children(&mut c) {
                match a.kind() {
                    "keyword_argument" => {
                        let (Some(k), Some(v)) = (
                            a.child_by_field_name("name"),
                            a.child_by_field_name("value"),
                        ) else {
                            continue;
                        };
                        let key = self.src(k).to_string();
                        if LANGCHAIN_WORDS.contains(&key.as_str()) {
                            continue;
                        }
                        let value = self.literal(v, &key, 0)?;
                        if key == "name" {
                            let Value::Scalar { text, plain: false } = &value.value else {
                                return Err(self.err(
                                    v,
                                    "the tool's `name` must be a string".into(),
                                    "write name=\"refund_card\"",
                                    "not a string",
                                ));
                            };
                            name = Named {
                                name: text.clone(),
                                loc: value.loc,
                            };
                            continue;
                        }
                        let e = Entry {
                            key,
                            key_loc: self.loc(k),
                            value,
                        };
                        if e.key == "args" {
                            given_args = Some(e);
                        } else {
                            words.push(e);
                        }
                    }
                    "comment" => {}
                    "dictionary_splat" | "list_splat" => {
                        return Err(self.err(
                            a,
                            format!("the tool decorator on '{}' takes its words from `{}`, which cannot be read without running Python", name.name, self.src(a)),
                            "write each word as a keyword with a literal value: @tool(kind=\"write\", irreversible=True)",
                            "not readable statically",
                        ));
                    }
                    _ => {
                        positional += 1;
                        if positional == 1 && a.kind() == "string" {
                            let v = self.literal(a, "name", 0)?;
                            if let Value::Scalar { text, .. } = v.value {
                                name = Named {
                                    name: text,
                                    loc: v.loc,
                                };
                                continue;
                            }
                        }
                        // LangChain's `tool(name, runnable)` form and other positional uses.
                        return Err(self.err(
                            a,
                            format!("the tool decorator on '{}' has a positional argument that cannot be read without running Python", name.name),
                            "give the tool's name as the first argument (a string) and every other word as a keyword: @tool(\"refund_card\", kind=\"write\")",
                            "not readable statically",
                        ));
                    }
                }
            }
        }
        if !words.iter().any(|e| e.key == "description") {
            if let Some(doc) = self.docstring(def) {
                words.push(Entry {
                    key: "description".into(),
                    key_loc: doc.loc,
                    value: doc,
                });
            }
        }
        if let Some(args) = self.args(def, given_args)? {
            words.push(args);
        }
        Ok(Some(PyTool {
            name,
            loc: def_loc,
            words,
            function: self.src(fname).to_string(),
            span: def.byte_range(),
        }))
    }

    /// The docstring's first paragraph, as a string node.
    fn docstring(&self, def: TsNode<'_>) -> Option<Node> {
        let body = def.child_by_field_name("body")?;
        let first = body.named_child(0)?;
        if first.kind() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0).filter(|s| s.kind() == "string")?;
        let v = self.literal(s, "description", 0).ok()?;
        let Value::Scalar { text, .. } = v.value else {
            return None;
        };
        let para: Vec<&str> = text
            .trim()
            .split("\n\n")
            .next()
            .unwrap_or("")
            .lines()
            .map(str::trim)
            .collect();
        let text = para.join(" ");
        (!text.is_empty()).then_some(Node {
            loc: v.loc,
            value: Value::Scalar { text, plain: false },
        })
    }

    /// `args`: the typed parameters, under the decorator's own `args=` (which wins per word).
    fn args(&self, def: TsNode<'_>, given: Option<Entry>) -> Result<Option<Entry>, InputError> {
        let mut out: Vec<Entry> = Vec::new();
        if let Some(params) = def.child_by_field_name("parameters") {
            let mut c = params.walk();
            for p in params.named_children(&mut c) {
                let (name, ty) = match p.kind() {
                    "identifier" => (Some(p), None),
                    "typed_parameter" => (
                        p.named_child(0).filter(|n| n.kind() == "identifier"),
                        p.child_by_field_name("type"),
                    ),
                    "default_parameter" => (p.child_by_field_name("name"), None),
                    "typed_default_parameter" => {
                        (p.child_by_field_name("name"), p.child_by_field_name("type"))
                    }
                    _ => (None, None),
                };
                let Some(name) = name else { continue };
                let pname = self.src(name);
                if matches!(pname, "self" | "cls") {
                    continue;
                }
                let ty_text = ty.map(|t| self.src(t)).unwrap_or("");
                if INJECTED.iter().any(|i| ty_text.contains(i)) {
                    continue;
                }
                let mut schema = Vec::new();
                if let Some(j) = json_type(ty_text) {
                    let loc = ty.map_or(self.loc(name), |t| self.loc(t));
                    schema.push(Entry {
                        key: "type".into(),
                        key_loc: loc,
                        value: Node {
                            loc,
                            value: Value::Scalar {
                                text: j.into(),
                                plain: false,
                            },
                        },
                    });
                }
                out.push(Entry {
                    key: pname.to_string(),
                    key_loc: self.loc(name),
                    value: Node {
                        loc: self.loc(name),
                        value: Value::Map(schema),
                    },
                });
            }
        }
        let loc = out.first().map(|e| e.key_loc);
        if let Some(g) = given {
            let Value::Map(entries) = g.value.value else {
                return Err(self
                    .r
                    .err(
                        g.value.loc,
                        "`args` must be a dict of argument name to its schema".to_string(),
                        "write args={\"url\": {\"role\": \"url\"}}",
                    )
                    .with_label("not a dict"));
            };
            for e in entries {
                match out.iter_mut().find(|o| o.key == e.key) {
                    Some(o) => match (&mut o.value.value, e.value.value) {
                        (Value::Map(have), Value::Map(words)) => {
                            for w in words {
                                have.retain(|h| h.key != w.key);
                                have.push(w);
                            }
                        }
                        (_, v) => o.value.value = v,
                    },
                    None => out.push(e),
                }
            }
            return Ok(Some(Entry {
                key: "args".into(),
                key_loc: g.key_loc,
                value: Node {
                    loc: g.value.loc,
                    value: Value::Map(out),
                },
            }));
        }
        Ok(loc.map(|loc| Entry {
            key: "args".into(),
            key_loc: loc,
            value: Node {
                loc,
                value: Value::Map(out),
            },
        }))
    }

    /// A Python literal as a tree node; anything else is an error naming `key`.
    fn literal(&self, n: TsNode<'_>, key: &str, depth: usize) -> Result<Node, InputError> {
        let loc = self.loc(n);
        let not_literal = || {
            self.err(
                n,
                format!("`{key}` is `{}`, which cannot be read without running Python", short(self.src(n))),
                &format!("write `{key}` as a literal (a string, number, True/False/None, or a list or dict of them); or declare the word in a catalogue"),
                "not a literal",
            )
        };
        if depth > MAX_DEPTH {
            return Err(self.err(
                n,
                format!("`{key}` nests deeper than {MAX_DEPTH} levels"),
                "flatten the value",
                "too deep",
            ));
        }
        let scalar = |text: String, plain: bool| Node {
            loc,
            value: Value::Scalar { text, plain },
        };
        Ok(match n.kind() {
            "string" => scalar(self.string(n).ok_or_else(not_literal)?, false),
            "concatenated_string" => {
                let mut s = String::new();
                let mut c = n.walk();
                for part in n.named_children(&mut c) {
                    s.push_str(&self.string(part).ok_or_else(not_literal)?);
                }
                scalar(s, false)
            }
            "integer" | "float" => scalar(self.src(n).replace('_', ""), true),
            "unary_operator" => {
                let arg = n.child_by_field_name("argument").ok_or_else(not_literal)?;
                let op = self.src(n).trim_start().chars().next();
                if !matches!(arg.kind(), "integer" | "float") || !matches!(op, Some('-' | '+')) {
                    return Err(not_literal());
                }
                let sign = if op == Some('-') { "-" } else { "" };
                scalar(format!("{sign}{}", self.src(arg).replace('_', "")), true)
            }
            "true" => scalar("true".into(), true),
            "false" => scalar("false".into(), true),
            "none" => scalar("null".into(), true),
            "list" | "tuple" | "set" => {
                let mut items = Vec::new();
                let mut c = n.walk();
                for item in n.named_children(&mut c).filter(|i| i.kind() != "comment") {
                    items.push(self.literal(item, key, depth + 1)?);
                }
                Node {
                    loc,
                    value: Value::Seq(items),
                }
            }
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(not_literal)?;
                self.literal(inner, key, depth + 1)?
            }
            "dictionary" => {
                let mut entries = Vec::new();
                let mut c = n.walk();
                for pair in n.named_children(&mut c).filter(|i| i.kind() != "comment") {
                    if pair.kind() != "pair" {
                        return Err(not_literal());
                    }
                    let (Some(k), Some(v)) = (
                        pair.child_by_field_name("key"),
                        pair.child_by_field_name("value"),
                    ) else {
                        return Err(not_literal());
                    };
                    let key_node = self.literal(k, key, depth + 1)?;
                    let Value::Scalar { text, .. } = key_node.value else {
                        return Err(not_literal());
                    };
                    entries.push(Entry {
                        key: text,
                        key_loc: key_node.loc,
                        value: self.literal(v, key, depth + 1)?,
                    });
                }
                Node {
                    loc,
                    value: Value::Map(entries),
                }
            }
            _ => return Err(not_literal()),
        })
    }

    /// A string literal's value; `None` for an f-string with an interpolation or a bytes literal.
    fn string(&self, n: TsNode<'_>) -> Option<String> {
        string_value(self.text, n)
    }
}

/// The value of the string literal `n` of the module `text`: escapes resolved (raw strings kept
/// as written); `None` for another node, an f-string with an interpolation, or a bytes literal.
pub(crate) fn string_value(text: &str, n: TsNode<'_>) -> Option<String> {
    if n.kind() != "string" {
        return None;
    }
    let src = |m: TsNode<'_>| text.get(m.byte_range()).unwrap_or("");
    let mut out = String::new();
    let mut raw = false;
    let mut c = n.walk();
    for part in n.named_children(&mut c) {
        match part.kind() {
            "string_start" => {
                let prefix = src(part).to_ascii_lowercase();
                if prefix.contains('b') {
                    return None;
                }
                raw = prefix.contains('r');
            }
            "string_content" => {
                // Escape sequences are children of the content in tree-sitter-python 0.25.
                if raw {
                    out.push_str(src(part));
                } else {
                    out.push_str(&unescape(src(part)));
                }
            }
            "escape_sequence" => out.push_str(&unescape(src(part))),
            "interpolation" => return None,
            _ => {}
        }
    }
    Some(out)
}

/// The JSON-schema type of a Python annotation, when it is a plain one.
fn json_type(ty: &str) -> Option<&'static str> {
    let mut t = ty.trim();
    // `Optional[int]` and `typing.Optional[int]` are the inner type's (`int | None` already is).
    while let Some(inner) = t
        .strip_suffix(']')
        .and_then(|x| x.split_once('['))
        .filter(|(head, _)| head.trim().rsplit('.').next() == Some("Optional"))
        .map(|(_, inner)| inner.trim())
    {
        t = inner;
    }
    let base = t.split(['[', '|']).next().unwrap_or("").trim();
    let base = base.rsplit('.').next().unwrap_or(base);
    Some(match base {
        "str" => "string",
        "int" => "integer",
        "float" => "number",
        "bool" => "boolean",
        "list" | "List" | "tuple" | "Tuple" | "set" | "Sequence" => "array",
        "dict" | "Dict" | "Mapping" => "object",
        _ => return None,
    })
}

/// Python's common escapes resolved; others kept as written.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// At most 40 characters of `s`, on one line.
fn short(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 40 {
        format!("{}...", one.chars().take(40).collect::<String>())
    } else {
        one
    }
}
