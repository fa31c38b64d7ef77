//! The catalogue reader (SPEC 2.3): `{"format": "qls-catalogue/1", "tools": {...}, "channels":
//! {...}, "stores": {...}}`, JSON or YAML.
//!
//! Reading happens in two steps so that agent.yaml can merge several sources in order: [`collect`]
//! gathers each file's raw tool entries into [`Parts`] (a later entry for the same tool replaces
//! the earlier one word by word, `undo` and `compensation` counting as one word), then [`build`]
//! reads every tool's words into a [`ToolDef`]. A word the verifier does not know, or an argument
//! `role` outside SPEC 2.3's list, is kept in [`Catalogue::unknown`] (the `unknown_word` lint),
//! unless it is a misspelling of a known one (`irreversable`): that is an error at the word naming
//! the word meant (issue 28), since a kept word no rule reads would silently weaken the proof.

use crate::input::error::InputError;
use crate::input::ir::{
    ArgDef, AtMost, Catalogue, Compensation, Named, NotAfter, Order, Role, StoreDef, ToolDef,
    ToolKind, UnknownWord,
};
use crate::input::source::Loc;

use super::tree::{Entry, Map, Node, Reader, Value};

/// Every argument role of SPEC 2.3.
const ROLES: &[&str] = &[
    "code",
    "shell",
    "sql",
    "query",
    "path",
    "url",
    "template",
    "destination",
    "user_id",
    "content",
];

/// The known word closest to `word`, when it is near enough to be a typo.
fn closest(word: &str, known: &[&str]) -> Option<String> {
    super::suggest::closest(word, known.iter().copied()).map(str::to_string)
}

/// A word of `owner` (`("tool", "refund")`, `("channel", "bank")`) the verifier does not know: an error at
/// its place when it is a misspelling of one of `known` ([`crate::input::suggest::nearest`], as
/// for a rulebook's names: `irreversable`,
/// `reads_outsid`), since a misspelt word is ignored by every rule and would silently weaken the
/// proof (issue 28); else kept for the `unknown_word` lint (SPEC 2.3). `word` is what was written,
/// `shown` how the lint names it (`order.afterr`, `args.to.role: destinaton`).
fn unknown_word(
    r: Reader<'_>,
    out: &mut Vec<UnknownWord>,
    owner: (&str, &str),
    word: &str,
    shown: String,
    known: &[&str],
    loc: Loc,
) -> Result<(), InputError> {
    if let Some(meant) = crate::input::suggest::nearest(word, known.iter().copied()) {
        return Err(r
            .err(
                loc,
                format!("'{word}' on {} '{}' is not a word of the catalogue: did you mean '{meant}'?", owner.0, owner.1),
                format!(
                    "write '{meant}'; a word the verifier does not know is ignored by every rule, so a misspelt one would \
                     silently weaken the proof (the known words: {})",
                    known.join(", ")
                ),
            )
            .with_label(format!("did you mean '{meant}'?")));
    }
    out.push(UnknownWord {
        tool: match owner.0 {
            "tool" => owner.1.to_string(),
            other => format!("{other} {}", owner.1),
        },
        word: shown,
        suggestion: closest(word, known),
        loc,
    });
    Ok(())
}

/// The words of SPEC 2.3 a tool entry may carry (the Python package writes the same list once, in
/// `python/stalwart_export/guard/catalogue.py`; `python/tests/test_word_lists.py` compares them).
pub(crate) const TOOL_WORDS: &[&str] = &[
    "kind",
    "description",
    "reads_outside",
    "sends_out",
    "irreversible",
    "destructive",
    "compensation",
    "undo",
    "idempotency",
    "result",
    "args",
    "order",
    "privilege",
    "confidential",
    "store",
    "source",
    "requires",
    "at_most",
    "checks",
    "spend",
];

/// Raw catalogue entries gathered from one or more files, in declaration order.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    /// Each tool: its name (where first declared), where its entry starts, and its merged words.
    pub(crate) tools: Vec<(Named, Loc, Vec<Entry>)>,
    /// `channels` entries: name → the channel's mapping.
    pub(crate) channels: Vec<Entry>,
    /// `stores` entries: name → the store's mapping.
    pub(crate) stores: Vec<Entry>,
    /// Tool name → its index in `tools` (issue 14: a scan per tool is quadratic in the
    /// catalogue's size).
    tool_ix: std::collections::HashMap<String, usize>,
}

impl Parts {
    /// Adds (or merges into an earlier declaration of) tool `name`.
    pub(super) fn add_tool(&mut self, name: Named, loc: Loc, words: Vec<Entry>) {
        let known = self.tool_ix.get(&name.name).copied();
        match known.and_then(|i| self.tools.get_mut(i)) {
            Some((_, _, existing)) => {
                for w in words {
                    let same = |k: &str| {
                        k == w.key
                            || (matches!(k, "undo" | "compensation")
                                && matches!(w.key.as_str(), "undo" | "compensation"))
                    };
                    existing.retain(|e| !same(&e.key));
                    existing.push(w);
                }
            }
            None => {
                self.tool_ix.insert(name.name.clone(), self.tools.len());
                self.tools.push((name, loc, words));
            }
        }
    }

    /// True when tool `name` has been declared.
    pub(super) fn has_tool(&self, name: &str) -> bool {
        self.tool_ix.contains_key(name)
    }

    /// The merged catalogue as JSON (`tools`, `channels`, `stores`), words as written.
    pub(super) fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value as J;
        let mut tools = serde_json::Map::new();
        for (name, _, words) in &self.tools {
            let m: serde_json::Map<String, J> = words
                .iter()
                .map(|e| (e.key.clone(), e.value.to_json()))
                .collect();
            tools.insert(name.name.clone(), J::Object(m));
        }
        let list = |v: &[Entry]| -> J {
            J::Object(
                v.iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            )
        };
        let mut out = serde_json::Map::new();
        out.insert("tools".into(), J::Object(tools));
        out.insert("channels".into(), list(&self.channels));
        out.insert("stores".into(), list(&self.stores));
        out
    }
}

fn replace_entry(list: &mut Vec<Entry>, e: Entry) {
    list.retain(|x| x.key != e.key);
    list.push(e);
}

/// Reads one catalogue file's top level into `parts`: `format` (optional, `qls-catalogue/1`),
/// `tools`, `channels`, `stores`. Other top-level keys are ignored.
pub(crate) fn collect(r: Reader<'_>, root: &Node, parts: &mut Parts) -> Result<(), InputError> {
    let map = r.map(root, "the catalogue")?;
    if let Some(f) = map.get("format") {
        let found = f.as_text().map(str::to_string);
        if found.as_deref() != Some("qls-catalogue/1") {
            let shown = found
                .map(|s| format!("'{s}'"))
                .unwrap_or_else(|| f.describe());
            return Err(r
                .err(
                    f.loc,
                    format!(
                        "unknown catalogue format {shown}: this verifier reads qls-catalogue/1"
                    ),
                    "write `format: qls-catalogue/1`, or leave `format` out",
                )
                .with_label("unknown format"));
        }
    }
    if let Some(tools) = map.get("tools") {
        let tools = r.map_or_null(tools, "`tools` of the catalogue")?;
        for e in tools.entries {
            let what = format!("the entry of tool '{}'", e.key);
            let words = if e.value.is_null() {
                Vec::new()
            } else {
                r.map(&e.value, &what)?.entries.to_vec()
            };
            parts.add_tool(e.named(), e.key_loc, words);
        }
    }
    if let Some(ch) = map.get("channels") {
        for e in r.map_or_null(ch, "`channels`")?.entries {
            replace_entry(&mut parts.channels, e.clone());
        }
    }
    if let Some(st) = map.get("stores") {
        for e in r.map_or_null(st, "`stores`")?.entries {
            replace_entry(&mut parts.stores, e.clone());
        }
    }
    Ok(())
}

/// Reads every tool's words (SPEC 2.3) into a [`Catalogue`], keeping declaration order.
pub(crate) fn build(r: Reader<'_>, parts: &Parts) -> Result<Catalogue, InputError> {
    let mut cat = Catalogue::default();
    for (name, loc, words) in &parts.tools {
        let map = Map {
            loc: *loc,
            entries: words,
        };
        let mut unknown = Vec::new();
        let tool = read_tool(r, name, map, &mut unknown)?;
        unknown.sort_by_key(|u| u.loc);
        cat.unknown.append(&mut unknown);
        cat.tools.push(tool);
    }
    for e in &parts.channels {
        let what = format!("channel '{}'", e.key);
        let m = r.map_or_null(&e.value, &what)?;
        let auth = r.opt_text(m, "auth", &format!("`auth` of {what}"))?;
        if let Some(a) = &auth {
            if !matches!(
                a.name.as_str(),
                "mtls" | "oauth2" | "signed_messages" | "none"
            ) {
                // Not an error even when misspelt: an auth the verifier does not know is read as
                // none (QG107), so the typo cannot weaken the proof.
                cat.unknown.push(UnknownWord {
                    tool: format!("channel {}", e.key),
                    word: format!("auth: {}", a.name),
                    suggestion: closest(&a.name, &["mtls", "oauth2", "signed_messages", "none"]),
                    loc: a.loc,
                });
            }
        }
        for w in m.entries.iter().filter(|w| w.key != "auth") {
            unknown_word(
                r,
                &mut cat.unknown,
                ("channel", &e.key),
                &w.key,
                w.key.clone(),
                &["auth"],
                w.key_loc,
            )?;
        }
        cat.channels.push((e.key.clone(), auth.map(|a| a.name)));
    }
    for e in &parts.stores {
        let what = format!("store '{}'", e.key);
        let m = r.map_or_null(&e.value, &what)?;
        let multi_tenant = r.flag(m, "multi_tenant", &format!("`multi_tenant` of {what}"))?;
        let persistent = r.flag(m, "persistent", &format!("`persistent` of {what}"))?;
        for w in m
            .entries
            .iter()
            .filter(|w| !matches!(w.key.as_str(), "multi_tenant" | "persistent"))
        {
            unknown_word(
                r,
                &mut cat.unknown,
                ("store", &e.key),
                &w.key,
                w.key.clone(),
                &["multi_tenant", "persistent"],
                w.key_loc,
            )?;
        }
        cat.stores.push(StoreDef {
            name: e.key.clone(),
            multi_tenant,
            persistent,
        });
    }
    Ok(cat)
}

/// Reads one tool entry.
fn read_tool(
    r: Reader<'_>,
    name: &Named,
    m: Map<'_>,
    unknown: &mut Vec<UnknownWord>,
) -> Result<ToolDef, InputError> {
    let t = &name.name;
    let what = |w: &str| format!("`{w}` of tool '{t}'");
    // `kind: null` is a kind not yet declared (an exporter's --init-words writes it): read as a
    // write, the worst case, and named in the `kind_unset` lint until it is set.
    let unset = m.get("kind").is_some_and(Node::is_null);
    let kind = match m.get_some("kind") {
        None if unset => ToolKind::Write,
        None => {
            let in_python = r
                .sources
                .files
                .get(name.loc.file)
                .is_some_and(|f| f.display.ends_with(".py"));
            let help = if in_python {
                "add `kind=\"read\"` (it only reads) or `kind=\"write\"` (it changes something) to its decorator: @tool(kind=\"read\")"
            } else {
                "add `kind: read` (it only reads) or `kind: write` (it changes something)"
            };
            return Err(r
                .err(name.loc, format!("tool '{t}' has no `kind`"), help)
                .with_label("no kind"));
        }
        Some(k) => {
            let k = r.text(k, &what("kind"))?;
            match k.name.as_str() {
                "read" => ToolKind::Read,
                "write" => ToolKind::Write,
                other => {
                    return Err(r
                        .err(
                            k.loc,
                            format!("unknown tool kind '{other}' on tool '{t}'"),
                            "write `kind: read` or `kind: write`",
                        )
                        .with_label("read or write"))
                }
            }
        }
    };
    let mut tool = ToolDef::new(t, kind, name.loc);
    tool.kind_unset = unset;
    tool.description = r
        .opt_text(m, "description", &what("description"))?
        .map(|n| n.name);
    tool.reads_outside = r.flag(m, "reads_outside", &what("reads_outside"))?;
    tool.sends_out = match m.get_some("sends_out") {
        None => false,
        // A list or mapping of allowed destinations also says it sends out.
        Some(n) if matches!(n.value, Value::Seq(_) | Value::Map(_)) => true,
        Some(n) => r.bool(n, &what("sends_out"))?,
    };
    tool.irreversible = r.flag(m, "irreversible", &what("irreversible"))?;
    tool.destructive = r.flag(m, "destructive", &what("destructive"))?;
    tool.confidential = r.flag(m, "confidential", &what("confidential"))?;

    if let (Some(c), Some(u)) = (m.entry("compensation"), m.entry("undo")) {
        let later = if (u.key_loc.file, u.key_loc.line) > (c.key_loc.file, c.key_loc.line) {
            u
        } else {
            c
        };
        return Err(r
            .err(
                later.key_loc,
                format!(
                    "tool '{t}' declares both `compensation` and `undo`, which are the same word"
                ),
                "keep one of the two",
            )
            .also_at(
                r.sources,
                if later.key == "undo" {
                    c.key_loc
                } else {
                    u.key_loc
                },
                "also here",
            ));
    }
    if let Some(e) = m.entry("compensation").or_else(|| m.entry("undo")) {
        tool.compensation = read_compensation(r, &e.value, &what(&e.key))?;
    }

    tool.idempotent = match m.get_some("idempotency") {
        None => false,
        Some(n) => n.as_bool().unwrap_or(true),
    };
    tool.has_result_schema = m.get_some("result").is_some();

    if let Some(args) = m.get_some("args") {
        tool.args = read_args(r, t, args, unknown)?;
    }

    let mut order = Order::default();
    if let Some(o) = m.get_some("order") {
        let om = r.map(o, &what("order"))?;
        order.after = r.opt_names(om, "after", &format!("`order.after` of tool '{t}'"))?;
        for n in r.opt_names(om, "not_after", &format!("`order.not_after` of tool '{t}'"))? {
            order.not_after.push(if n.name == "untrusted" {
                NotAfter::Untrusted
            } else {
                NotAfter::Tool(n)
            });
        }
        if let Some(a) = om.get_some("at_most") {
            order.at_most = Some(read_at_most(
                r,
                a,
                &format!("`order.at_most` of tool '{t}'"),
            )?);
        }
        for w in om
            .entries
            .iter()
            .filter(|w| !matches!(w.key.as_str(), "after" | "not_after" | "at_most"))
        {
            unknown_word(
                r,
                unknown,
                ("tool", t),
                &w.key,
                format!("order.{}", w.key),
                &["after", "not_after", "at_most"],
                w.key_loc,
            )?;
        }
    }
    if order.at_most.is_none() {
        if let Some(a) = m.get_some("at_most") {
            order.at_most = Some(read_at_most(r, a, &what("at_most"))?);
        }
    }
    tool.order = order;

    let whose = format!("tool '{t}'");
    tool.privileged = r
        .opt_choice(m, "privilege", &whose, &[("low", false), ("high", true)])?
        .unwrap_or(false);

    if let Some(s) = m.get_some("store") {
        let sm = r.map(s, &what("store"))?;
        let sname = r.req_text(
            sm,
            "name",
            &format!("`store.name` of tool '{t}'"),
            "write `store: {name: the_store, access: read}`",
        )?;
        let access = r
            .opt_choice(
                sm,
                "access",
                &format!("the store of tool '{t}'"),
                &[("read", false), ("write", true)],
            )?
            .unwrap_or(false);
        tool.store = Some((sname.name, access));
    }

    if let Some(s) = m.get_some("source") {
        tool.source = Some(match &s.value {
            Value::Map(_) => {
                let sm = r.map(s, &what("source"))?;
                let from = match r.opt_text(sm, "module", &format!("`source.module` of tool '{t}'"))? {
                    Some(m) => m,
                    None => match r.opt_text(sm, "server", &format!("`source.server` of tool '{t}'"))? {
                        Some(s) => s,
                        None => {
                            return Err(r.err(
                                s.loc,
                                format!("`source` of tool '{t}' names neither a `module` nor a `server`"),
                                "write `source: {module: package.tools, pin: \"1.2.0\"}` or `source: {server: URL, pin: DIGEST}`",
                            ))
                        }
                    },
                };
                // A pin names one version or digest: empty, blank, or a moving name (`latest`,
                // `*`, a branch) pins nothing.
                let pinned = sm.get_some("pin").is_some_and(|p| {
                    let v = p.as_text().map(|v| v.trim().to_ascii_lowercase());
                    !matches!(
                        v.as_deref(),
                        Some("" | "latest" | "*" | "main" | "master" | "head" | "stable" | "any")
                    )
                });
                (from.name, pinned)
            }
            _ => (r.text(s, &what("source"))?.name, false),
        });
    }

    if let Some(req) = m.get_some("requires") {
        tool.requires = match &req.value {
            Value::Seq(_) => r
                .names(req, &what("requires"))?
                .into_iter()
                .map(|n| n.name)
                .collect(),
            _ => vec![r.text(req, &what("requires"))?.name],
        };
    }
    let present = |w: &str| m.get_some(w).is_some_and(|n| n.as_bool() != Some(false));
    tool.has_checks = present("checks");
    tool.has_spend = present("spend");

    for w in m
        .entries
        .iter()
        .filter(|w| !TOOL_WORDS.contains(&w.key.as_str()))
    {
        unknown_word(
            r,
            unknown,
            ("tool", t),
            &w.key,
            w.key.clone(),
            TOOL_WORDS,
            w.key_loc,
        )?;
    }
    Ok(tool)
}

/// `compensation` / `undo`: a tool name, `"none"`, null, or `{tool, bind}`.
pub(crate) fn read_compensation(
    r: Reader<'_>,
    n: &Node,
    what: &str,
) -> Result<Compensation, InputError> {
    if n.is_null() {
        return Ok(Compensation::Absent);
    }
    let name = match &n.value {
        Value::Map(_) => {
            let m = r.map(n, what)?;
            match m.get("tool") {
                None => return Err(r.err(
                    n.loc,
                    format!("{what} has no `tool`"),
                    "write `{tool: the_undoing_tool, bind: {arg: arg}}`, or just the tool's name",
                )),
                Some(t) if t.is_null() => return Ok(Compensation::Absent),
                Some(t) => r.text(t, &format!("`tool` of {what}"))?,
            }
        }
        _ => r.text(n, what)?,
    };
    Ok(if name.name == "none" {
        Compensation::NoneDeclared
    } else {
        Compensation::Tool(name)
    })
}

fn read_at_most(r: Reader<'_>, n: &Node, what: &str) -> Result<AtMost, InputError> {
    match &n.value {
        Value::Map(_) => {
            let m = r.map(n, what)?;
            let count = match m.get_some("count") {
                Some(c) => r.u32(c, &format!("`count` of {what}"))?,
                None => {
                    return Err(r.err(
                        n.loc,
                        format!("{what} has no `count`"),
                        "write `{count: 1, per: session}`",
                    ))
                }
            };
            let per = r.opt_text(m, "per", &format!("`per` of {what}"))?;
            let per_turn = per.is_some_and(|p| matches!(p.name.as_str(), "turn" | "run"));
            Ok(AtMost { count, per_turn })
        }
        _ => Ok(AtMost {
            count: r.u32(n, what)?,
            per_turn: false,
        }),
    }
}

fn read_args(
    r: Reader<'_>,
    t: &str,
    args: &Node,
    unknown: &mut Vec<UnknownWord>,
) -> Result<Vec<ArgDef>, InputError> {
    let what = format!("`args` of tool '{t}'");
    let mut m = r.map(args, &what)?;
    // A whole JSON schema (`{type: object, properties: {...}}`) is read by its properties.
    if m.get("type").and_then(Node::as_text) == Some("object") {
        if let Some(p) = m.get("properties").filter(|p| p.as_map().is_some()) {
            m = r.map(p, &what)?;
        }
    }
    let mut out = Vec::new();
    for e in m.entries {
        let am = r.map_or_null(&e.value, &format!("argument '{}' of tool '{t}'", e.key))?;
        let role_word = r.opt_text(
            am,
            "role",
            &format!("`role` of argument '{}' of tool '{t}'", e.key),
        )?;
        let role_loc = role_word.as_ref().map(|w| w.loc);
        let role = match role_word {
            None => None,
            Some(role) => match Role::parse(&role.name) {
                Some(known) => Some(known),
                None => {
                    unknown_word(
                        r,
                        unknown,
                        ("tool", t),
                        &role.name,
                        format!("args.{}.role: {}", e.key, role.name),
                        ROLES,
                        role.loc,
                    )?;
                    None
                }
            },
        };
        out.push(ArgDef {
            name: e.key.clone(),
            role,
            loc: role_loc.unwrap_or(e.key_loc),
        });
    }
    Ok(out)
}
