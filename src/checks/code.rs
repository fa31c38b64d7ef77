//! The code checks (issue 6; the seeds' chapter 46): the Python tool modules agent.yaml names
//! (`tools: - python: shop.tools`), read again with tree-sitter for network and credential
//! problems only. The proof covers the graph, the catalogue and the rulebook, not the tools' own
//! code; these checks read that code by patterns and report what they see. Their findings do not
//! change the gate: they are evidence about the code, not a proof about the graph.
//!
//! Each check is declared once, in `rules/code_checks.toml` (embedded and parsed by
//! [`crate::rules::code`], re-exported here): its id (a [`RuleId`], `CC001`), title, default
//! severity, what it finds, why it matters, and its message and fix templates. A finding is a
//! [`Finding`] of that rule with [`Evidence::ToolCode`]. The report prints `rules <hash>`, the
//! first 12 hex digits of SHA-256 of that file's bytes ([`rules_hash`]), so a report says which
//! version of the checks read the code.
//!
//! - **CC001** (network call from a tool not declared `sends_out`): inside a tool's function, a
//!   call whose dotted callee resolves, through the module's imports (`import requests`,
//!   `import httpx as h`, `from urllib.request import urlopen`, `from aiohttp import
//!   ClientSession`; imports anywhere in the module count), to one of [`NETWORK_MODULES`] or
//!   [`NETWORK_CALLS`]; exception classes and helper namespaces (`requests.exceptions`,
//!   `*.utils`, names ending in `Error`) are not calls out. Flagged when the tool's merged catalogue
//!   entry is not `sends_out`. At the call; related: the tool's entry.
//! - **CC002** (hard-coded credential): anywhere in the module, a string literal assigned to
//!   (`x = "..."`, `self.x = "..."`, `d["x"] = "..."`, `x: str = "..."`), passed as a keyword to
//!   (`f(x="...")`), given as a dictionary value under (`{"x": "..."}`) or as the default of
//!   (`def f(x="...")`) a credential-looking name ([`credential_name`]), when it is not a
//!   placeholder ([`placeholder`]); and any string literal holding a well-known key shape
//!   ([`key_shape`]). The message shows at most the first 4 characters (and never more than half)
//!   of the secret, and its length.
//! - **CC003** (credential read from the environment inside a tool that `reads_outside`):
//!   `os.environ["KEY"]`, `os.environ.get("KEY")`, `os.getenv("KEY")`,
//!   `os.environ.setdefault("KEY", ...)` (through the imports, so `from os import environ`
//!   counts) with a credential-looking literal KEY, inside the function of a tool declared
//!   `reads_outside`. At the read; related: the tool's entry.
//!
//! Nothing here panics on any text: the tree is walked iteratively, and a module that does not
//! parse gives no finding (the reader has already refused it).

use std::collections::HashSet;
use std::ops::Range;

use tree_sitter::Node as TsNode;

use crate::findings::{CodeChecks, Evidence, Finding, Primary};
use crate::input::python::{self, PyModule};
use crate::input::source::{Loc, SourceMap};
use crate::input::Inputs;

/// Module prefixes whose calls reach the network (CC001): the module itself and everything under
/// it (`requests.get`, `httpx.AsyncClient`, `urllib.request.urlopen`, `openai.OpenAI`).
pub(crate) const NETWORK_MODULES: &[&str] = &[
    "requests",
    "httpx",
    "urllib.request",
    "urllib3",
    "aiohttp",
    "http.client",
    "socket",
    "smtplib",
    "ftplib",
    "openai",
    "anthropic",
];

/// Single calls that reach the network (CC001), matched exactly.
pub(crate) const NETWORK_CALLS: &[&str] = &["boto3.client", "boto3.resource"];

/// The names of the calls that read the environment (CC003), after import resolution.
const ENV_CALLS: &[&str] = &[
    "os.environ.get",
    "os.getenv",
    "os.environ.setdefault",
    "os.environ.pop",
];

use crate::input::ir::Catalogue;
pub use crate::rules::code::{all, rules_hash, CodeCheck, RULES_TEXT};
pub(crate) use crate::rules::RuleId;

/// Runs the code checks over `inputs.python_modules` (texts from `inputs.sources`, tools'
/// declarations from the merged `inputs.catalogue`). `None` when no Python module was read, so a
/// report from catalogues alone has no `Code checks:` line.
pub fn check(inputs: &Inputs) -> Option<CodeChecks> {
    if inputs.python_modules.is_empty() {
        return None;
    }
    let mut files: Vec<usize> = Vec::new();
    let mut findings = Vec::new();
    for m in &inputs.python_modules {
        if files.contains(&m.file) {
            continue;
        }
        files.push(m.file);
        findings.extend(check_module(&inputs.sources, m, &inputs.catalogue));
    }
    findings.sort_by_key(|f| (f.location, f.rule));
    Some(CodeChecks {
        files: files.len(),
        rules_hash: rules_hash(),
        findings,
    })
}

/// The code checks over one module. A module whose file is not in `sources`, or that does not
/// parse, gives no finding.
pub fn check_module(sources: &SourceMap, module: &PyModule, catalogue: &Catalogue) -> Vec<Finding> {
    let Some(file) = sources.files.get(module.file) else {
        return Vec::new();
    };
    let text = file.text.as_str();
    let Some(tree) = python::parse(text) else {
        return Vec::new();
    };
    let root = tree.root_node();
    let at = |byte: usize| {
        let (line, column) = file.line_col(byte.min(text.len()));
        Loc::new(module.file, line, column)
    };
    let cx = Cx {
        text,
        imports: imports(text, root),
        tools: &module.tools,
        catalogue,
    };
    let mut out = Vec::new();
    let mut flagged: HashSet<usize> = HashSet::new();
    for n in python::preorder(root) {
        match n.kind() {
            "call" => {
                if let Some(f) = cx.network_call(n, &at) {
                    out.push(f);
                }
                if let Some(f) = cx.env_read_call(n, &at) {
                    out.push(f);
                }
            }
            "subscript" => {
                if let Some(f) = cx.env_read_subscript(n, &at) {
                    out.push(f);
                }
            }
            "assignment" => {
                let name = n
                    .child_by_field_name("left")
                    .and_then(|l| cx.target_name(l));
                if let (Some(name), Some(v)) = (name, n.child_by_field_name("right")) {
                    cx.named_literal(&name, v, &at, &mut flagged, &mut out);
                }
            }
            "keyword_argument" | "default_parameter" | "typed_default_parameter" => {
                let name = n.child_by_field_name("name").map(|k| cx.src(k).to_string());
                if let (Some(name), Some(v)) = (name, n.child_by_field_name("value")) {
                    cx.named_literal(&name, v, &at, &mut flagged, &mut out);
                }
            }
            "pair" => {
                let name = n
                    .child_by_field_name("key")
                    .and_then(|k| python::string_value(text, k));
                if let (Some(name), Some(v)) = (name, n.child_by_field_name("value")) {
                    cx.named_literal(&name, v, &at, &mut flagged, &mut out);
                }
            }
            "string" => {
                if flagged.contains(&n.start_byte()) {
                    continue;
                }
                let raw = cx.src(n);
                if let Some(shape) = key_shape(raw) {
                    flagged.insert(n.start_byte());
                    let secret = python::string_value(text, n).unwrap_or_else(|| raw.to_string());
                    out.push(cx.hard_coded(
                        &format!("this literal (shaped like {shape})"),
                        &secret,
                        n,
                        &at,
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// The module's imports: each name bound, to the dotted path it stands for (`h` → `httpx`,
/// `urlopen` → `urllib.request.urlopen`, `urllib` → `urllib`). Relative imports and `*` bind
/// nothing here.
fn imports(text: &str, root: TsNode<'_>) -> Vec<(String, String)> {
    let src = |n: TsNode<'_>| text.get(n.byte_range()).unwrap_or("").to_string();
    let mut out = Vec::new();
    for n in python::preorder(root) {
        match n.kind() {
            "import_statement" => {
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    match name.kind() {
                        "dotted_name" => {
                            let full = dotted(&src(name));
                            let first = full.split('.').next().unwrap_or("").to_string();
                            out.push((first.clone(), first));
                        }
                        "aliased_import" => {
                            if let (Some(m), Some(a)) = (
                                name.child_by_field_name("name"),
                                name.child_by_field_name("alias"),
                            ) {
                                out.push((src(a), dotted(&src(m))));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "import_from_statement" => {
                let Some(module) = n
                    .child_by_field_name("module_name")
                    .filter(|m| m.kind() == "dotted_name")
                else {
                    continue;
                };
                let module = dotted(&src(module));
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    match name.kind() {
                        "dotted_name" => {
                            let s = dotted(&src(name));
                            out.push((s.clone(), format!("{module}.{s}")));
                        }
                        "aliased_import" => {
                            if let (Some(m), Some(a)) = (
                                name.child_by_field_name("name"),
                                name.child_by_field_name("alias"),
                            ) {
                                out.push((src(a), format!("{module}.{}", dotted(&src(m)))));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A dotted name with its whitespace (line continuations, comments are not allowed there) removed.
fn dotted(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

struct Cx<'a> {
    text: &'a str,
    imports: Vec<(String, String)>,
    tools: &'a [(String, String, Range<usize>)],
    catalogue: &'a Catalogue,
}

impl Cx<'_> {
    fn src(&self, n: TsNode<'_>) -> &str {
        self.text.get(n.byte_range()).unwrap_or("")
    }

    /// The tool whose function holds byte `b`: its name.
    fn tool_at(&self, b: usize) -> Option<&str> {
        self.tools
            .iter()
            .find(|(_, _, span)| span.contains(&b))
            .map(|(name, _, _)| name.as_str())
    }

    /// The dotted name `n` is (`a`, `a.b.c`), when it is one.
    fn dotted_name(&self, n: TsNode<'_>) -> Option<String> {
        let mut parts = Vec::new();
        let mut cur = n;
        loop {
            match cur.kind() {
                "identifier" => {
                    parts.push(self.src(cur));
                    break;
                }
                "attribute" => {
                    parts.push(self.src(cur.child_by_field_name("attribute")?));
                    cur = cur.child_by_field_name("object")?;
                }
                _ => return None,
            }
            if parts.len() > 64 {
                return None;
            }
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// `name` resolved through the imports (`h.get` → `httpx.get`); `None` when its first part
    /// was not imported.
    fn resolve(&self, name: &str) -> Option<String> {
        let (first, rest) = match name.split_once('.') {
            Some((f, r)) => (f, Some(r)),
            None => (name, None),
        };
        let (_, full) = self
            .imports
            .iter()
            .rev()
            .find(|(bound, _)| bound == first)?;
        Some(match rest {
            Some(r) => format!("{full}.{r}"),
            None => full.clone(),
        })
    }

    /// The tool's catalogue entry: its location, and whether `word` holds on it.
    fn entry(&self, tool: &str) -> Option<&crate::input::ir::ToolDef> {
        self.catalogue.tool(tool)
    }

    /// The related location of the tool's entry.
    fn related(&self, tool: &str) -> Vec<(Loc, String)> {
        self.entry(tool)
            .map(|t| vec![(t.loc, format!("'{tool}' is declared here"))])
            .unwrap_or_default()
    }

    /// CC001 on call `n`.
    fn network_call(&self, n: TsNode<'_>, at: &dyn Fn(usize) -> Loc) -> Option<Finding> {
        let tool = self.tool_at(n.start_byte())?;
        if self.entry(tool).is_none_or(|t| t.sends_out) {
            return None;
        }
        let callee = self.dotted_name(n.child_by_field_name("function")?)?;
        let full = self.resolve(&callee)?;
        if !is_network(&full) {
            return None;
        }
        let shown = if full == callee {
            format!("`{callee}`")
        } else {
            format!("`{callee}` ({full})")
        };
        Some(make(
            RuleId::CC001,
            Some(tool),
            at(n.start_byte()),
            &[("tool", tool), ("callee", &shown)],
            self.related(tool),
        ))
    }

    /// The tool (declared `reads_outside`) whose function holds `n`.
    fn outside_tool(&self, n: TsNode<'_>) -> Option<&str> {
        let tool = self.tool_at(n.start_byte())?;
        self.entry(tool)
            .is_some_and(|t| t.reads_outside)
            .then_some(tool)
    }

    /// CC003 on a call `os.environ.get("KEY")` / `os.getenv("KEY")`.
    fn env_read_call(&self, n: TsNode<'_>, at: &dyn Fn(usize) -> Loc) -> Option<Finding> {
        let tool = self.outside_tool(n)?;
        let callee = self.dotted_name(n.child_by_field_name("function")?)?;
        let full = self.resolve(&callee)?;
        if !ENV_CALLS.contains(&full.as_str()) {
            return None;
        }
        let args = n.child_by_field_name("arguments")?;
        let mut c = args.walk();
        let first = args
            .named_children(&mut c)
            .find(|a| a.kind() != "comment")?;
        self.env_finding(tool, first, n, at)
    }

    /// CC003 on a subscript `os.environ["KEY"]`.
    fn env_read_subscript(&self, n: TsNode<'_>, at: &dyn Fn(usize) -> Loc) -> Option<Finding> {
        let tool = self.outside_tool(n)?;
        let value = self.dotted_name(n.child_by_field_name("value")?)?;
        if self.resolve(&value).as_deref() != Some("os.environ") {
            return None;
        }
        let key = n.child_by_field_name("subscript")?;
        self.env_finding(tool, key, n, at)
    }

    fn env_finding(
        &self,
        tool: &str,
        key: TsNode<'_>,
        n: TsNode<'_>,
        at: &dyn Fn(usize) -> Loc,
    ) -> Option<Finding> {
        let key = python::string_value(self.text, key)?;
        if !credential_name(&key) {
            return None;
        }
        let shown = format!("`{}`", clip(&key, 60));
        Some(make(
            RuleId::CC003,
            Some(tool),
            at(n.start_byte()),
            &[("tool", tool), ("key", &shown)],
            self.related(tool),
        ))
    }

    /// The name an assignment's left side gives: `x`, `self.x` (→ `x`), `d["x"]` (→ `x`).
    fn target_name(&self, left: TsNode<'_>) -> Option<String> {
        match left.kind() {
            "identifier" => Some(self.src(left).to_string()),
            "attribute" => Some(self.src(left.child_by_field_name("attribute")?).to_string()),
            "subscript" => python::string_value(self.text, left.child_by_field_name("subscript")?),
            _ => None,
        }
    }

    /// CC002 on `name = <v>` (and the keyword, pair and default forms) when `name` looks like a
    /// credential and `v` is a string literal that is not a placeholder.
    fn named_literal(
        &self,
        name: &str,
        v: TsNode<'_>,
        at: &dyn Fn(usize) -> Loc,
        flagged: &mut HashSet<usize>,
        out: &mut Vec<Finding>,
    ) {
        if !credential_name(name) || flagged.contains(&v.start_byte()) {
            return;
        }
        let value = match v.kind() {
            "string" => python::string_value(self.text, v),
            "concatenated_string" => {
                let mut c = v.walk();
                let parts: Option<Vec<String>> = v
                    .named_children(&mut c)
                    .map(|p| python::string_value(self.text, p))
                    .collect();
                parts.map(|p| p.concat())
            }
            _ => None,
        };
        let Some(value) = value else { return };
        if placeholder(&value) {
            return;
        }
        flagged.insert(v.start_byte());
        // The parts of a concatenated string are not looked at again for shapes.
        let mut c = v.walk();
        flagged.extend(v.named_children(&mut c).map(|p| p.start_byte()));
        out.push(self.hard_coded(&format!("`{}`", clip(name, 60)), &value, v, at));
    }

    /// A CC002 finding on literal `n` holding `secret`, described as `what`.
    fn hard_coded(
        &self,
        what: &str,
        secret: &str,
        n: TsNode<'_>,
        at: &dyn Fn(usize) -> Loc,
    ) -> Finding {
        let length = secret.chars().count();
        let shown_len = 4.min(length / 2);
        let prefix: String = secret.chars().take(shown_len).collect();
        let shown = if shown_len == 0 {
            "not shown".to_string()
        } else {
            // Printable as written; only control characters are masked.
            let clean: String = prefix
                .chars()
                .map(|c| if c.is_control() || c == '`' { '?' } else { c })
                .collect();
            format!("`{clean}...`")
        };
        let tool = self.tool_at(n.start_byte());
        make(
            RuleId::CC002,
            tool,
            at(n.start_byte()),
            &[
                ("name", what),
                ("shown", &shown),
                ("length", &length.to_string()),
                ("tool", tool.unwrap_or("")),
            ],
            Vec::new(),
        )
    }
}

/// A finding of check `id` from its templates.
fn make(
    id: RuleId,
    tool: Option<&str>,
    loc: Loc,
    vars: &[(&str, &str)],
    related: Vec<(Loc, String)>,
) -> Finding {
    let r = id.rule();
    Finding {
        rule: id,
        obligation: None,
        subject: tool.unwrap_or("").to_string(),
        node: None,
        depth: None,
        location: Primary::Line(loc),
        related,
        message: r.message_with(vars),
        fix: r.fix_with(vars),
        severity: r.severity,
        witness: Vec::new(),
        evidence: Evidence::ToolCode,
        drawn_from: None,
        other_witness: None,
        fingerprint: String::new(),
        accepted: None,
        unproved: Vec::new(),
    }
}

/// At most `n` characters of `s`, on one line.
fn clip(s: &str, n: usize) -> String {
    let one: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one.chars().count() > n {
        format!("{}...", one.chars().take(n).collect::<String>())
    } else {
        one
    }
}

/// True when the resolved dotted name `full` is a call out to the network (CC001).
pub fn is_network(full: &str) -> bool {
    if NETWORK_CALLS.contains(&full) {
        return true;
    }
    // Local calls under a network module: the machine's own name, byte-order helpers.
    if matches!(
        full,
        "socket.gethostname" | "socket.htons" | "socket.ntohs" | "socket.htonl" | "socket.ntohl"
    ) {
        return false;
    }
    let Some(module) = NETWORK_MODULES
        .iter()
        .find(|m| full == **m || full.strip_prefix(**m).is_some_and(|r| r.starts_with('.')))
    else {
        return false;
    };
    // Exceptions and helper namespaces are not calls out.
    let rest = &full[module.len()..];
    !rest.split('.').any(|p| {
        matches!(p, "exceptions" | "utils" | "codes" | "status_codes")
            || p.ends_with("Error")
            || p.ends_with("Exception")
            || p.ends_with("Warning")
    })
}

/// Credential words matched against one word of a name.
const CREDENTIAL_WORDS: &[&str] = &[
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "authorization",
];

/// Credential words matched against two consecutive words of a name.
const CREDENTIAL_PAIRS: &[(&str, &str)] = &[("api", "key"), ("access", "key"), ("private", "key")];

/// A name's last word that makes it a name *about* a credential, not one: `token_url`,
/// `api_key_env`, `password_field`.
const NOT_CREDENTIAL_SUFFIXES: &[&str] = &[
    "url", "uri", "urls", "endpoint", "env", "var", "name", "names", "type", "types", "header",
    "headers", "field", "fields", "param", "params", "file", "path", "dir", "prefix", "len",
    "length", "limit", "limits", "count", "id", "ids", "kind", "scheme", "method", "mode", "style",
    "format", "class", "cls", "required", "enabled", "expiry", "expires", "ttl", "timeout",
];

/// The words of a name: split at every non-alphanumeric character and at lowercase→uppercase
/// steps (`apiKey` → `api`, `key`), lowercased.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// True when `name` looks like a credential's (CC002, CC003): one of its words is `apikey`,
/// `token`, `secret`, `password`, `passwd`, `auth` or `authorization`, or two consecutive words
/// are `api key`, `access key` or `private key`; and its last word is not one that makes it a
/// name about a credential (`_url`, `_env`, `_name`, `_type`, `_header`, `_id`, ...).
pub fn credential_name(name: &str) -> bool {
    let w = words(name);
    if w.len() > 1
        && w.last()
            .is_some_and(|l| NOT_CREDENTIAL_SUFFIXES.contains(&l.as_str()))
    {
        return false;
    }
    w.iter().any(|x| CREDENTIAL_WORDS.contains(&x.as_str()))
        || w.windows(2)
            .any(|p| CREDENTIAL_PAIRS.contains(&(p[0].as_str(), p[1].as_str())))
}

/// True when a credential-named literal holds no credential (CC002): empty or blank; a common
/// placeholder word (`changeme`, `todo`, `dummy`, `placeholder`, `redacted`, `none`, ...); `<...>`;
/// only `x`, `*`, `.`, `-`, `_` or `#` (`xxxx`, `****`); a template (`${...}`, `{{...}}`, `$VAR`);
/// text starting `your` (`your-api-key`) or naming the environment (`os.environ[...]`,
/// `getenv`); an environment variable's name (`OPENAI_API_KEY`: capitals, digits, `_`); or an
/// auth scheme's bare word (`basic`, `bearer`).
pub fn placeholder(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_lowercase();
    if v.is_empty() {
        return true;
    }
    const WORDS: &[&str] = &[
        "changeme",
        "change-me",
        "change_me",
        "todo",
        "tbd",
        "fixme",
        "none",
        "null",
        "dummy",
        "placeholder",
        "redacted",
        "secret",
        "password",
        "token",
        "test",
        "example",
        "basic",
        "bearer",
        "oauth2",
        "api_key",
        "apikey",
    ];
    WORDS.contains(&lower.as_str())
        || (v.starts_with('<') && v.ends_with('>'))
        || v.chars()
            .all(|c| matches!(c, 'x' | 'X' | '*' | '.' | '-' | '_' | '#'))
        || v.starts_with("${")
        || v.starts_with("{{")
        || (v.starts_with('$') && v.len() > 1)
        || lower.starts_with("your")
        || lower.contains("environ")
        || lower.contains("getenv")
        || (v.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && v.contains('_')
            && v.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// The well-known key shape `s` (a string literal's source, or any text) holds, if any (CC002):
/// `sk-` and 20 or more of `[A-Za-z0-9_-]` (OpenAI, Anthropic); `ghp_`, `gho_`, `ghu_`, `ghs_`,
/// `ghr_` and 20 or more alphanumerics, or `github_pat_` and 20 or more of `[A-Za-z0-9_]`
/// (GitHub); `AKIA` and 16 of `[0-9A-Z]` (an AWS access key id); `xoxb-` or `xoxp-` and 10 or
/// more of `[A-Za-z0-9-]` (Slack); `-----BEGIN ... PRIVATE KEY-----`. A prefix must start the
/// text or follow a character that is not alphanumeric.
pub fn key_shape(s: &str) -> Option<&'static str> {
    if s.contains("-----BEGIN") && s.contains("PRIVATE KEY-----") {
        return Some("a private key");
    }
    let b = s.as_bytes();
    let run = |from: usize, ok: &dyn Fn(u8) -> bool| -> usize {
        b.get(from..)
            .map_or(0, |r| r.iter().take_while(|&&c| ok(c)).count())
    };
    let token = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    for i in 0..b.len() {
        if i > 0 && b[i - 1].is_ascii_alphanumeric() {
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"sk-") && run(i + 3, &token) >= 20 {
            return Some("an API secret key (sk-...)");
        }
        for p in [&b"ghp_"[..], b"gho_", b"ghu_", b"ghs_", b"ghr_"] {
            if rest.starts_with(p) && run(i + 4, &|c: u8| c.is_ascii_alphanumeric()) >= 20 {
                return Some("a GitHub token");
            }
        }
        if rest.starts_with(b"github_pat_")
            && run(i + 11, &|c: u8| c.is_ascii_alphanumeric() || c == b'_') >= 20
        {
            return Some("a GitHub token");
        }
        if rest.starts_with(b"AKIA")
            && run(i + 4, &|c: u8| c.is_ascii_uppercase() || c.is_ascii_digit()) >= 16
        {
            return Some("an AWS access key id");
        }
        if (rest.starts_with(b"xoxb-") || rest.starts_with(b"xoxp-"))
            && run(i + 5, &|c: u8| c.is_ascii_alphanumeric() || c == b'-') >= 10
        {
            return Some("a Slack token");
        }
    }
    None
}
