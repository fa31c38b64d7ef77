//! NeMo's normalised reading of a Colang 1.0 file, in the exact JSON shape the corpus oracle
//! (`corpus/colang/oracle.py`) wrote from NeMo's own parser: `user_messages` and `bot_messages`
//! (name → count), `user_message_examples` and `bot_message_texts` (name → texts), `imports`
//! and `flows` (`[{name, meta, elements}]`, each element `{kind, line, ...}`).

use serde_json::{json, Map, Value};

use super::{Element, ElementKind, File, Message};

/// The oracle's JSON for a file that parsed (`ok: true`); SPEC 2.4.
pub fn to_oracle_json(file: &File) -> Value {
    let (users, user_texts) = messages(&file.user_messages);
    let (bots, bot_texts) = messages(&file.bot_messages);
    let flows: Vec<Value> = file
        .flows
        .iter()
        .map(|f| json!({"name": f.name, "meta": f.meta, "elements": elements(&f.elements)}))
        .collect();
    json!({
        "colang_version": "1.0",
        "ok": true,
        "error": null,
        "error_line": null,
        "user_messages": users,
        "bot_messages": bots,
        "imports": file.imports.iter().map(|i| i.package.clone()).collect::<Vec<_>>(),
        "flows": flows,
        "user_message_examples": user_texts,
        "bot_message_texts": bot_texts,
    })
}

/// Messages merged by name (a dict, first position kept), skipping names with no text.
fn messages(list: &[Message]) -> (Map<String, Value>, Map<String, Value>) {
    let mut texts: Map<String, Value> = Map::new();
    for m in list {
        if m.texts.is_empty() {
            continue;
        }
        let slot = texts
            .entry(m.name.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = slot {
            a.extend(m.texts.iter().cloned().map(Value::String));
        }
    }
    let counts = texts
        .iter()
        .map(|(k, v)| (k.clone(), json!(v.as_array().map_or(0, Vec::len))))
        .collect();
    (counts, texts)
}

fn elements(els: &[Element]) -> Vec<Value> {
    els.iter().map(element).collect()
}

fn element(e: &Element) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    let kind = match &e.kind {
        ElementKind::User { .. } => "user",
        ElementKind::Bot { .. } => "bot",
        ElementKind::Stop => "stop",
        ElementKind::Abort => "abort",
        ElementKind::Execute { .. } => "execute",
        ElementKind::Set { .. } => "set",
        ElementKind::If { .. } => "if",
        ElementKind::While { .. } => "while",
        ElementKind::When { .. } => "when",
        ElementKind::Any { .. } => "any",
        ElementKind::Do { .. } => "do",
        ElementKind::Event { .. } => "event",
        ElementKind::CreateEvent { .. } => "create_event",
        ElementKind::Return { .. } => "return",
        ElementKind::Continue => "continue",
        ElementKind::Break => "break",
        ElementKind::Label { .. } => "label",
        ElementKind::Goto { .. } => "goto",
        ElementKind::Generic { keyword, .. } => keyword.as_str(),
        ElementKind::Meta { .. } => "meta",
    };
    put("kind", json!(kind));
    let has_line = match &e.kind {
        ElementKind::When { branches } => branches.first().is_some_and(|b| b.line.is_some()),
        _ => true,
    };
    if has_line {
        put("line", json!(e.line));
    }
    match &e.kind {
        ElementKind::User {
            name,
            params,
            example,
            as_var,
        } => {
            put("name", json!(name));
            if !params.is_empty() {
                put("params", Value::Object(params.clone()));
            }
            if *example {
                put("example", json!(true));
            }
            if let Some(v) = as_var {
                put("as", json!(v));
            }
        }
        ElementKind::Bot { name, text, params } => {
            if let Some(n) = name {
                put("name", json!(n));
            } else if let Some(t) = text {
                put("text", json!(t));
            }
            if !params.is_empty() {
                put("params", Value::Object(params.clone()));
            }
        }
        ElementKind::Execute { name, args, result } => {
            put("name", json!(name));
            put("args", Value::Object(args.clone()));
            put("result", json!(result));
        }
        ElementKind::Set { var, expr } => {
            put("var", json!(var));
            put("expr", json!(expr));
        }
        ElementKind::If {
            cond,
            elif,
            then,
            else_,
        } => {
            put("cond", json!(cond));
            if *elif {
                put("elif", json!(true));
            }
            put("then", Value::Array(elements(then)));
            if let Some(e) = else_ {
                put("else", Value::Array(elements(e)));
            }
        }
        ElementKind::While { cond, body } => {
            put("cond", json!(cond));
            put("body", Value::Array(elements(body)));
        }
        ElementKind::When { branches } => {
            let bs: Vec<Value> = branches
                .iter()
                .map(|b| {
                    let mut bm = Map::new();
                    if let Some(k) = &b.keyword {
                        bm.insert("keyword".into(), json!(k));
                    }
                    if let Some(l) = b.line {
                        bm.insert("line".into(), json!(l));
                    }
                    bm.insert(
                        "on".into(),
                        b.on.as_ref().map_or(Value::Null, |o| element(o)),
                    );
                    bm.insert("body".into(), Value::Array(elements(&b.body)));
                    Value::Object(bm)
                })
                .collect();
            put("branches", Value::Array(bs));
        }
        ElementKind::Any { body } => put("body", Value::Array(elements(body))),
        ElementKind::Do { name, args, result } => {
            put("name", json!(name));
            if !args.is_empty() {
                put("args", Value::Object(args.clone()));
            }
            if !result.is_empty() {
                put("result", json!(result));
            }
        }
        ElementKind::Event { name, args } => {
            put("name", json!(name));
            if !args.is_empty() {
                put("args", Value::Object(args.clone()));
            }
        }
        ElementKind::CreateEvent { body } => {
            let b = elements(body);
            put(
                "event",
                if b.len() == 1 {
                    b.into_iter().next().unwrap_or(Value::Null)
                } else {
                    Value::Array(b)
                },
            );
        }
        ElementKind::Return { values } => put("values", json!(values)),
        ElementKind::Label { name, value } => {
            put("name", json!(name));
            if let Some(v) = value {
                put("value", json!(v));
            }
        }
        ElementKind::Goto { label } => put("label", json!(label)),
        ElementKind::Generic { value, params, .. } => {
            put("value", json!(value));
            if !params.is_empty() {
                put("params", Value::Object(params.clone()));
            }
        }
        ElementKind::Meta { meta } => put("meta", Value::Object(meta.clone())),
        ElementKind::Stop | ElementKind::Abort | ElementKind::Continue | ElementKind::Break => {}
    }
    Value::Object(m)
}
