//! Colang 1.0's tree onto the language-neutral flow tree (SPEC 2.4, 5): `execute x` and
//! `bot execute_x` → [`StmtKind::Execute`], `do x` → [`StmtKind::Call`] (`how: "do"`), `user x`
//! → [`StmtKind::User`], `bot x` → [`StmtKind::Bot`], `stop` → [`StmtKind::Stop`], and so on;
//! events, labels and the like become [`StmtKind::Other`].

use serde_json::{Map, Value};

use super::{Element, ElementKind, File};
use crate::rulebook::flows::{FileFlows, Flow, Named, Stmt, StmtKind};

/// Lower a parsed file: its flows (a `subflow` flag from the flow's meta), its `define bot`
/// and `define user` names and its imports, each with its line and column.
pub fn lower(file: &File) -> FileFlows {
    let named = |name: &str, line: usize, column: usize| Named {
        name: name.to_string(),
        line,
        column,
    };
    FileFlows {
        flows: file
            .flows
            .iter()
            .map(|f| Flow {
                name: f.name.clone(),
                line: f.line,
                column: f.column,
                subflow: f.meta.get("subflow") == Some(&Value::Bool(true)),
                params: Vec::new(),
                body: stmts(&f.elements),
            })
            .collect(),
        bot_messages: file
            .bot_messages
            .iter()
            .map(|m| named(&m.name, m.line, m.column))
            .collect(),
        user_messages: file
            .user_messages
            .iter()
            .map(|m| named(&m.name, m.line, m.column))
            .collect(),
        imports: file
            .imports
            .iter()
            .map(|i| named(&i.package, i.line, i.column))
            .collect(),
    }
}

fn stmts(els: &[Element]) -> Vec<Stmt> {
    els.iter().map(stmt).collect()
}

/// An argument's value as written: strings as they are, other values as JSON.
fn args(m: &Map<String, Value>) -> Vec<(String, String)> {
    m.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect()
}

fn other(what: &str, text: String) -> StmtKind {
    StmtKind::Other {
        what: what.to_string(),
        text,
    }
}

fn stmt(e: &Element) -> Stmt {
    let kind = match &e.kind {
        ElementKind::User { name, .. } => StmtKind::User {
            intent: name.clone(),
        },
        ElementKind::Bot { name, text, .. } => match (name, text) {
            (Some(n), _) if n.starts_with("execute_") && n.len() > "execute_".len() => {
                StmtKind::Execute {
                    action: n["execute_".len()..].to_string(),
                    args: Vec::new(),
                    result: None,
                    via_bot: true,
                }
            }
            (Some(n), _) => StmtKind::Bot {
                message: n.clone(),
                inline: false,
            },
            (None, t) => StmtKind::Bot {
                message: t.clone().unwrap_or_default(),
                inline: true,
            },
        },
        ElementKind::Stop => StmtKind::Stop,
        ElementKind::Abort => StmtKind::Abort,
        ElementKind::Execute {
            name,
            args: a,
            result,
        } => StmtKind::Execute {
            action: name.clone(),
            args: args(a),
            result: result.clone(),
            via_bot: false,
        },
        ElementKind::Set { var, expr } => StmtKind::Set {
            var: var.clone(),
            expr: expr.clone(),
        },
        ElementKind::If {
            cond, then, else_, ..
        } => StmtKind::If {
            cond: cond.clone(),
            then: stmts(then),
            else_: else_.as_deref().map(stmts).unwrap_or_default(),
        },
        ElementKind::While { cond, body } => StmtKind::While {
            cond: cond.clone(),
            body: stmts(body),
        },
        ElementKind::When { branches } => StmtKind::When {
            branches: branches
                .iter()
                .map(|b| {
                    let on = b.on.as_deref().map(stmt).unwrap_or(Stmt {
                        line: b.line.unwrap_or(e.line),
                        column: e.column,
                        kind: other("when", String::new()),
                    });
                    (on, stmts(&b.body))
                })
                .collect(),
            else_: None,
        },
        ElementKind::Any { body } => StmtKind::Any {
            alternatives: stmts(body),
        },
        ElementKind::Do { name, args: a, .. } => StmtKind::Call {
            flow: name.clone(),
            args: args(a),
            how: "do".into(),
        },
        ElementKind::Event { name, .. } => other("event", name.clone()),
        ElementKind::CreateEvent { body } => other(
            "create event",
            body.iter()
                .map(|b| match &b.kind {
                    ElementKind::Event { name, .. } => name.clone(),
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ElementKind::Return { values } => StmtKind::Return {
            value: (!values.is_empty()).then(|| values.join(", ")),
        },
        ElementKind::Continue => StmtKind::Continue,
        ElementKind::Break => StmtKind::Break,
        ElementKind::Label { name, .. } => other("label", name.clone()),
        ElementKind::Goto { label } => other("goto", label.clone()),
        ElementKind::Generic { keyword, value, .. } => other(keyword, value.clone()),
        ElementKind::Meta { .. } => other("meta", String::new()),
    };
    Stmt {
        line: e.line,
        column: e.column,
        kind,
    }
}
