//! `--export-only` (SPEC 1): writes the read (or compiled) graph as `qls-graph/1` JSON to `OUT.json`
//! and the catalogue as `qls-catalogue/1` JSON to `OUT.catalogue.json`.
//!
//! The output is pretty, deterministic (fixed key order, declaration order everywhere) and loads
//! back with [`super::load_export`] into an equivalent export and catalogue. Every node carries
//! `location: {file, line, column}` (the file as the run displayed it). Catalogue words the IR
//! keeps only in part (`result` and argument schemas, `bind`, `source`, `checks`, `spend`) and
//! words the verifier does not know are written as they were read.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::input::error::InputError;
use crate::input::ir::{Compensation, EdgeDef, FlagScope, GraphDef, NodeDef, NotAfter, ToolDef};
use crate::input::source::{Loc, SourceMap};

use super::catalogue::TOOL_WORDS;
use super::Inputs;

/// Where the catalogue of `--export-only OUT` goes: `OUT.json` → `OUT.catalogue.json` (any other
/// name gets `.catalogue.json` appended).
pub(crate) fn catalogue_path(out: &Path) -> PathBuf {
    let is_json = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let base = if is_json {
        out.with_extension("")
    } else {
        out.to_path_buf()
    };
    let mut s = base.into_os_string();
    s.push(".catalogue.json");
    PathBuf::from(s)
}

/// Writes `OUT` (the `qls-graph/1` export) and `OUT.catalogue.json` (see [`catalogue_path`]).
///
/// Errors: a file that cannot be written (named, with the reason).
pub fn write_export(inputs: &Inputs, out: &Path) -> Result<(), InputError> {
    let mut g = export_json(inputs);
    relocate(&mut g, &inputs.sources, out);
    let graph = pretty(&g);
    let cat = pretty(&catalogue_json(inputs));
    let cpath = catalogue_path(out);
    // Neither is written over an input, nor through a symlink out of the repository (issue 26).
    let inputs: Vec<PathBuf> = inputs
        .sources
        .files
        .iter()
        .map(|f| f.path.clone())
        .collect();
    for path in [out, cpath.as_path()] {
        crate::input::files::write::target(path, &inputs).map_err(|e| {
            InputError::plain(
                format!("cannot write {} (--export-only): {e}", path.display()),
                e.help(),
            )
        })?;
    }
    for (path, text) in [(out, graph), (cpath.as_path(), cat)] {
        crate::input::files::write::write_text(
            path,
            &text,
            crate::input::files::write::Mode::Replace,
            &inputs,
        )
        .map_err(|e| {
            InputError::plain(
                format!("cannot write {} (--export-only): {e}", path.display()),
                e.help(),
            )
        })?;
    }
    Ok(())
}

/// Rewrites every `location.file` as a path relative to the folder `out` is written to (or
/// absolute where no relative path exists), so the written export reads back with its locations
/// pointing into the same files wherever it is read from.
fn relocate(v: &mut Value, sources: &SourceMap, out: &Path) {
    let base = out
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .and_then(|p| std::fs::canonicalize(p).ok());
    let mut map = std::collections::HashMap::new();
    for f in &sources.files {
        if let (Some(base), Ok(abs)) = (&base, std::fs::canonicalize(&f.path)) {
            map.insert(f.display.clone(), relative(base, &abs));
        }
    }
    fn walk(v: &mut Value, map: &std::collections::HashMap<String, String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(loc)) = o.get_mut("location") {
                    if let Some(Value::String(f)) = loc.get_mut("file") {
                        if let Some(r) = map.get(f.as_str()) {
                            *f = r.clone();
                        }
                    }
                }
                for (_, x) in o.iter_mut() {
                    walk(x, map);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, map)),
            _ => {}
        }
    }
    walk(v, &map);
}

/// `to` relative to the folder `from` (both absolute), with `/` separators.
fn relative(from: &Path, to: &Path) -> String {
    let f: Vec<_> = from.components().collect();
    let t: Vec<_> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

fn location(sources: &SourceMap, loc: Loc) -> Value {
    let file = sources
        .files
        .get(loc.file)
        .map(|f| f.display.clone())
        .unwrap_or_default();
    json!({"file": file, "line": loc.line.max(1), "column": loc.column.max(1)})
}

fn names(v: &[crate::input::ir::Named]) -> Value {
    Value::Array(v.iter().map(|n| Value::String(n.name.clone())).collect())
}

fn budget(b: &Option<crate::input::ir::Budget>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => {
            let mut m = Map::new();
            if let Some(s) = b.steps {
                m.insert("steps".into(), json!(s));
            }
            if let Some(t) = b.turns {
                m.insert("turns".into(), json!(t));
            }
            Value::Object(m)
        }
    }
}

/// The export as `qls-graph/1` JSON.
pub(crate) fn export_json(inputs: &Inputs) -> Value {
    let e = &inputs.export;
    let mut m = Map::new();
    m.insert("format".into(), json!("qls-graph/1"));
    m.insert(
        "name".into(),
        e.name.as_ref().map_or(Value::Null, |n| json!(n)),
    );
    m.insert(
        "source".into(),
        e.source.as_ref().map_or(Value::Null, |n| json!(n)),
    );
    m.insert("recursion_limit".into(), json!(e.recursion_limit));
    m.insert(
        "session_steps".into(),
        e.session_steps.map_or(Value::Null, |n| json!(n)),
    );
    m.insert("budget".into(), budget(&e.budget));
    let state: Map<String, Value> = e
        .state
        .iter()
        .map(|f| {
            let scope = match f.scope {
                FlagScope::Session => "session",
                FlagScope::Turn => "turn",
            };
            (f.name.clone(), json!({"scope": scope}))
        })
        .collect();
    m.insert("state".into(), Value::Object(state));
    if e.input_reads_outside {
        m.insert("input".into(), json!({"reads_outside": true}));
    }
    if let Some(p) = &e.producer {
        m.insert("producer".into(), p.clone());
    }
    graph_json(&inputs.sources, &e.graph, &mut m);
    m.insert(
        "warnings".into(),
        Value::Array(e.warnings.iter().map(|w| json!(w)).collect()),
    );
    Value::Object(m)
}

fn graph_json(sources: &SourceMap, g: &GraphDef, m: &mut Map<String, Value>) {
    if let Some(entry) = &g.entry {
        m.insert("entry".into(), json!(entry.name));
    }
    m.insert(
        "nodes".into(),
        Value::Array(g.nodes.iter().map(|n| node_json(sources, n)).collect()),
    );
    m.insert(
        "edges".into(),
        Value::Array(g.edges.iter().map(|e| edge_json(sources, e)).collect()),
    );
    let sends = g
        .sends
        .iter()
        .map(|s| json!({"from": s.from.name, "destinations": names(&s.destinations)}))
        .collect();
    m.insert("sends".into(), Value::Array(sends));
    let ints = g
        .interrupts
        .iter()
        .map(|i| {
            let mut o = Map::new();
            o.insert("node".into(), json!(i.node.name));
            o.insert("when".into(), json!(i.when.as_str()));
            o.insert(
                "tool".into(),
                i.tool.as_ref().map_or(Value::Null, |t| json!(t.name)),
            );
            if let Some(a) = &i.answer {
                o.insert("answer".into(), json!(a.name));
            }
            if i.standing {
                o.insert("standing".into(), json!(true));
            }
            Value::Object(o)
        })
        .collect();
    m.insert("interrupts".into(), Value::Array(ints));
    let mut subs = Map::new();
    for (name, sub) in &g.subgraphs {
        let mut sm = Map::new();
        if sub.budget.is_some() {
            sm.insert("budget".into(), budget(&sub.budget));
        }
        graph_json(sources, sub, &mut sm);
        subs.insert(name.name.clone(), Value::Object(sm));
    }
    m.insert("subgraphs".into(), Value::Object(subs));
}

fn node_json(sources: &SourceMap, n: &NodeDef) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(n.id.name));
    o.insert("kind".into(), json!(n.kind.as_str()));
    if let Some(a) = &n.agent {
        o.insert("agent".into(), json!(a));
    }
    if !n.tools.is_empty() {
        o.insert("tools".into(), names(&n.tools));
    }
    if !n.hosted.is_empty() {
        o.insert("hosted".into(), names(&n.hosted));
    }
    if !n.model_written.is_empty() {
        let entries: Vec<Value> = n
            .model_written
            .iter()
            .map(|w| match &w.args {
                None => json!(w.tool.name),
                Some(args) => json!({"tool": w.tool.name, "args": args}),
            })
            .collect();
        o.insert("model_written".into(), Value::Array(entries));
    }
    if !n.sets.is_empty() {
        o.insert("sets".into(), names(&n.sets));
    }
    if !n.clears.is_empty() {
        o.insert("clears".into(), names(&n.clears));
    }
    if let Some(g) = &n.graph {
        o.insert("graph".into(), json!(g.name));
    }
    if let Some(c) = &n.channel {
        o.insert("channel".into(), json!(c));
    }
    if !n.opaque.is_empty() {
        // SPEC 12.5: what the exporter could not read is kept, never dropped on the way out.
        let entries: Vec<Value> = n
            .opaque
            .iter()
            .map(|e| {
                json!({"what": e.what.as_str(), "why": e.why, "location": location(sources, e.loc.unwrap_or(n.loc))})
            })
            .collect();
        o.insert("opaque".into(), Value::Array(entries));
    }
    if let Some(why) = &n.guard_not_credited {
        o.insert("guard_not_credited".into(), json!(why));
    }
    o.insert("location".into(), location(sources, n.loc));
    Value::Object(o)
}

fn edge_json(sources: &SourceMap, e: &EdgeDef) -> Value {
    let mut o = Map::new();
    o.insert("from".into(), json!(e.from.name));
    o.insert("kind".into(), json!(e.kind.as_str()));
    o.insert(
        "destinations".into(),
        e.destinations.as_ref().map_or(Value::Null, |d| names(d)),
    );
    if let Some(g) = &e.guard {
        o.insert("guard".into(), json!(g.to_string()));
    }
    if let Some(x) = e.exit_after {
        o.insert("exit_after".into(), json!(x));
    }
    o.insert("location".into(), location(sources, e.loc));
    Value::Object(o)
}

/// The catalogue as `qls-catalogue/1` JSON.
pub(crate) fn catalogue_json(inputs: &Inputs) -> Value {
    let raw = &inputs.catalogue_json;
    let raw_tools = raw.get("tools").and_then(Value::as_object);
    let mut tools = Map::new();
    for t in &inputs.catalogue.tools {
        let empty = Map::new();
        let rt = raw_tools
            .and_then(|m| m.get(&t.name))
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        tools.insert(t.name.clone(), Value::Object(tool_json(t, rt)));
    }
    let mut channels = Map::new();
    let raw_ch = raw.get("channels").and_then(Value::as_object);
    for (name, auth) in &inputs.catalogue.channels {
        let mut o = raw_ch
            .and_then(|m| m.get(name))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        o.remove("auth");
        let mut out = Map::new();
        if let Some(a) = auth {
            out.insert("auth".into(), json!(a));
        }
        out.append(&mut o);
        channels.insert(name.clone(), Value::Object(out));
    }
    let mut stores = Map::new();
    let raw_st = raw.get("stores").and_then(Value::as_object);
    for s in &inputs.catalogue.stores {
        let mut o = raw_st
            .and_then(|m| m.get(&s.name))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        o.remove("multi_tenant");
        o.remove("persistent");
        let mut out = Map::new();
        out.insert("multi_tenant".into(), json!(s.multi_tenant));
        out.insert("persistent".into(), json!(s.persistent));
        out.append(&mut o);
        stores.insert(s.name.clone(), Value::Object(out));
    }
    let mut m = Map::new();
    m.insert("format".into(), json!("qls-catalogue/1"));
    m.insert("tools".into(), Value::Object(tools));
    m.insert("channels".into(), Value::Object(channels));
    m.insert("stores".into(), Value::Object(stores));
    Value::Object(m)
}

fn tool_json(t: &ToolDef, raw: &Map<String, Value>) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert(
        "kind".into(),
        json!(if t.is_write() { "write" } else { "read" }),
    );
    if let Some(d) = &t.description {
        o.insert("description".into(), json!(d));
    }
    let flag = |o: &mut Map<String, Value>, k: &str, v: bool| {
        if v {
            o.insert(k.into(), json!(true));
        }
    };
    flag(&mut o, "reads_outside", t.reads_outside);
    if t.sends_out {
        let v = raw
            .get("sends_out")
            .filter(|v| v.is_array() || v.is_object())
            .cloned()
            .unwrap_or(json!(true));
        o.insert("sends_out".into(), v);
    }
    flag(&mut o, "irreversible", t.irreversible);
    flag(&mut o, "destructive", t.destructive);
    match &t.compensation {
        Compensation::Absent => {}
        Compensation::NoneDeclared => {
            o.insert("compensation".into(), json!("none"));
        }
        Compensation::Tool(n) => {
            let bind = raw
                .get("compensation")
                .or_else(|| raw.get("undo"))
                .and_then(|c| c.get("bind"))
                .filter(|b| !b.is_null())
                .cloned();
            let v = match bind {
                Some(b) => json!({"tool": n.name, "bind": b}),
                None => json!(n.name),
            };
            o.insert("compensation".into(), v);
        }
    }
    if t.idempotent {
        let v = raw
            .get("idempotency")
            .filter(|v| !v.is_boolean() && !v.is_null())
            .cloned()
            .unwrap_or(json!(true));
        o.insert("idempotency".into(), v);
    }
    if t.has_result_schema {
        o.insert(
            "result".into(),
            raw.get("result").cloned().unwrap_or_else(|| json!({})),
        );
    }
    if !t.args.is_empty() || raw.get("args").is_some_and(|a| !a.is_null()) {
        let mut raw_args = raw.get("args").and_then(Value::as_object);
        if raw_args.and_then(|a| a.get("type")).and_then(Value::as_str) == Some("object") {
            if let Some(p) = raw_args
                .and_then(|a| a.get("properties"))
                .and_then(Value::as_object)
            {
                raw_args = Some(p);
            }
        }
        let mut args = Map::new();
        for a in &t.args {
            let mut schema = raw_args
                .and_then(|r| r.get(&a.name))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Some(role) = a.role {
                schema.insert("role".into(), json!(role.as_str()));
            }
            args.insert(a.name.clone(), Value::Object(schema));
        }
        o.insert("args".into(), Value::Object(args));
    }
    let ord = &t.order;
    if !ord.after.is_empty() || !ord.not_after.is_empty() || ord.at_most.is_some() {
        let mut om = raw
            .get("order")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        om.remove("after");
        om.remove("not_after");
        om.remove("at_most");
        let mut out = Map::new();
        if !ord.after.is_empty() {
            out.insert("after".into(), names(&ord.after));
        }
        if !ord.not_after.is_empty() {
            let v = ord
                .not_after
                .iter()
                .map(|n| match n {
                    NotAfter::Untrusted => json!("untrusted"),
                    NotAfter::Tool(t) => json!(t.name),
                })
                .collect();
            out.insert("not_after".into(), Value::Array(v));
        }
        if let Some(a) = &ord.at_most {
            let v = if a.per_turn {
                json!({"count": a.count, "per": "turn"})
            } else {
                json!(a.count)
            };
            out.insert("at_most".into(), v);
        }
        out.append(&mut om);
        o.insert("order".into(), Value::Object(out));
    }
    if t.privileged {
        o.insert("privilege".into(), json!("high"));
    } else if raw.get("privilege").and_then(Value::as_str) == Some("low") {
        o.insert("privilege".into(), json!("low"));
    }
    flag(&mut o, "confidential", t.confidential);
    if let Some((name, write)) = &t.store {
        o.insert(
            "store".into(),
            json!({"name": name, "access": if *write { "write" } else { "read" }}),
        );
    }
    if let Some((from, pinned)) = &t.source {
        let v = raw
            .get("source")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| {
                if *pinned {
                    json!({"module": from, "pin": true})
                } else {
                    json!({"module": from})
                }
            });
        o.insert("source".into(), v);
    }
    if !t.requires.is_empty() {
        o.insert("requires".into(), json!(t.requires));
    }
    if t.has_checks {
        o.insert(
            "checks".into(),
            raw.get("checks").cloned().unwrap_or(json!(true)),
        );
    }
    if t.has_spend {
        o.insert(
            "spend".into(),
            raw.get("spend").cloned().unwrap_or(json!(true)),
        );
    }
    for (k, v) in raw {
        if !TOOL_WORDS.contains(&k.as_str()) {
            o.insert(k.clone(), v.clone());
        }
    }
    o
}
