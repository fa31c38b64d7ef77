//! agent.yaml's `facts:` and `settings:` words the rulebook reads (SPEC 2.1, 2.4; seed chapter
//! 45, "The rulebook's facts").
//!
//! `facts: {name: {from: tool.field, same: arg}}`, `from: tool.field == value`, or
//! `from: caller` (the application supplies it with each check). A fact's tool must be in the
//! catalogue and must not `reads_outside`: anyone could write what such a tool returns, so the
//! runtime never reads a fact from it. `settings: {colang_version: "1.0"|"2.x"}` says which
//! Colang the rulebook is written in.

use crate::input::error::InputError;
use crate::input::ir::{Catalogue, Fact, FactSource, Named};

use super::tree::{Map, Node, Reader};

/// Words a fact entry may have.
const FACT_WORDS: &[&str] = &["from", "same"];

/// Reads `facts:` (absent or null: none). Errors: a fact that is not a mapping, a `from` that is
/// not `tool.field`, `tool.field == value` or `caller`, a tool not in the catalogue or one that
/// `reads_outside`, an unknown word.
pub(crate) fn read_facts(
    r: &Reader<'_>,
    node: Option<&Node>,
    cat: &Catalogue,
) -> Result<Vec<Fact>, InputError> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    let map = r.map_or_null(node, "`facts`")?;
    let mut out = Vec::new();
    for e in map.entries {
        let name = e.named();
        let what = format!("fact '{}'", name.name);
        let m = r.map(&e.value, &format!("`{}`", what))?;
        for w in m.entries {
            if !FACT_WORDS.contains(&w.key.as_str()) {
                return Err(r
                    .err(
                        w.key_loc,
                        format!("unknown word '{}' in {what}", w.key),
                        "a fact has `from: tool.field` (or `tool.field == value`, or `caller`) and optionally `same: arg`",
                    )
                    .with_label("unknown word"));
            }
        }
        let from = r.req_text(
            m,
            "from",
            &format!("{what}'s `from`"),
            "write `from: tool.field`, `from: tool.field == value` or `from: caller`",
        )?;
        let source = read_from(r, &from, &what, cat)?;
        let same = r
            .opt_text(m, "same", &format!("{what}'s `same`"))?
            .map(|s| s.name);
        out.push(Fact { name, source, same });
    }
    Ok(out)
}

fn read_from(
    r: &Reader<'_>,
    from: &Named,
    what: &str,
    cat: &Catalogue,
) -> Result<FactSource, InputError> {
    let text = from.name.trim();
    if text == "caller" {
        return Ok(FactSource::Caller);
    }
    let (lhs, equals) = match text.split_once("==") {
        Some((l, v)) => (
            l.trim(),
            Some(v.trim().trim_matches(|c| c == '"' || c == '\'').to_string()),
        ),
        None => (text, None),
    };
    let bad = || {
        r.err(
            from.loc,
            format!("{what}'s `from` must be `tool.field`, `tool.field == value` or `caller`, found '{text}'"),
            "name the tool whose answer gives the fact and the field read, e.g. `from: get_order.status == paid`",
        )
        .with_label("not tool.field")
    };
    let Some((tool, field)) = lhs.split_once('.') else {
        return Err(bad());
    };
    if tool.is_empty() || field.is_empty() || equals.as_deref() == Some("") {
        return Err(bad());
    }
    let Some(def) = cat.tools.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = cat.tools.iter().map(|t| t.name.as_str()).collect();
        return Err(r
            .err(
                from.loc,
                format!("{what} is read from '{tool}', which is not in the catalogue"),
                format!("name a tool of the catalogue ({})", names.join(", ")),
            )
            .with_label("no such tool"));
    };
    if def.reads_outside {
        return Err(r
            .err(
                from.loc,
                format!("{what} is read from '{tool}', which reads_outside: anyone could write what it returns, so the runtime never reads a fact from it"),
                "read the fact from a tool whose answer your organisation controls, or supply it from your code (`from: caller`)",
            )
            .with_label("untrusted source"));
    }
    Ok(FactSource::Tool {
        tool: Named {
            name: tool.to_string(),
            loc: from.loc,
        },
        field: field.to_string(),
        equals,
    })
}

/// `settings: {colang_version}` when given: `1.0` or `2.x` (also `2`, `2.0`).
pub(crate) fn read_colang_version(
    r: &Reader<'_>,
    settings: Option<Map<'_>>,
) -> Result<Option<Named>, InputError> {
    let Some(m) = settings else { return Ok(None) };
    let Some(v) = r.opt_text(m, "colang_version", "`settings.colang_version`")? else {
        return Ok(None);
    };
    match v.name.as_str() {
        "1" | "1.0" | "2" | "2.0" | "2.x" => Ok(Some(v)),
        other => Err(r
            .err(
                v.loc,
                format!("unknown `colang_version` '{other}'"),
                "write \"1.0\" or \"2.x\"",
            )
            .with_label("unknown version")),
    }
}

/// `settings: {on_unread}` when given (the default of every agent that sets none).
pub(crate) fn read_default_on_unread(
    r: &Reader<'_>,
    settings: Option<Map<'_>>,
) -> Result<Option<String>, InputError> {
    let Some(m) = settings else { return Ok(None) };
    let Some(v) = r.opt_text(m, "on_unread", "`settings.on_unread`")? else {
        return Ok(None);
    };
    match v.name.as_str() {
        "refuse" | "model" | "ask" | "answer" => Ok(Some(v.name)),
        other => Err(r
            .err(
                v.loc,
                format!("unknown `on_unread` '{other}' in settings"),
                "write refuse, model, ask or answer",
            )
            .with_label("unknown word")),
    }
}
