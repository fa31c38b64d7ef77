//! Colang 2.x onto the language-neutral flow tree (SPEC 2.4, 5).
//!
//! An action that runs (`await XAction(...)`, `start XAction`, a bare `XAction(...)`,
//! `$r = await XAction`) is [`StmtKind::Execute`]; a user flow waited for or matched
//! (`match user said "hi"`, `await user asked`) is [`StmtKind::User`]; another flow run
//! (`await`, `start`, `activate`, or named alone) is [`StmtKind::Call`]; `a or b` is
//! [`StmtKind::Any`]; `a and b` (all of them run) is its parts in order. `if`/`elif`/`else`,
//! `while`, `when`/`or when`/`else`, `return`, `abort`, `break`, `continue` map directly;
//! assignments and `global` are [`StmtKind::Set`]. Everything else (`send`, `match` of an event
//! or action, `stop`, `deactivate`, `log`, `pass`, labels, `...`) is [`StmtKind::Other`] with its
//! keyword and first line.

use super::super::flows::{self, FileFlows, Flow, Named, StmtKind};
use super::{File, SpecExpr, SpecOp, SpecType, Stmt};

/// Lowers a parsed file: its flows (parameters as `$name`, positions of the `flow` keyword) and
/// imports (the package or path as written).
pub fn lower(file: &File) -> FileFlows {
    FileFlows {
        flows: file
            .flows
            .iter()
            .map(|f| Flow {
                name: f.name.clone(),
                line: f.flow_line,
                column: f.flow_column,
                subflow: false,
                params: f.params.iter().map(|p| format!("${}", p.name)).collect(),
                body: block(&f.body),
            })
            .collect(),
        bot_messages: Vec::new(),
        user_messages: Vec::new(),
        imports: file
            .imports
            .iter()
            .map(|i| Named {
                name: i.written.clone(),
                line: i.line,
                column: i.column,
            })
            .collect(),
    }
}

fn block(stmts: &[Stmt]) -> Vec<flows::Stmt> {
    stmts.iter().flat_map(stmt).collect()
}

fn at(s: &Stmt, kind: StmtKind) -> flows::Stmt {
    flows::Stmt {
        line: s.line,
        column: s.column,
        kind,
    }
}

fn other(s: &Stmt, what: &str) -> flows::Stmt {
    at(
        s,
        StmtKind::Other {
            what: what.to_string(),
            text: s.text.clone(),
        },
    )
}

/// One statement; `a and b` gives several.
fn stmt(s: &Stmt) -> Vec<flows::Stmt> {
    use super::StmtKind as K;
    let one = match &s.kind {
        K::Spec {
            op,
            spec,
            assign,
            implicit,
        } => {
            let how = if *implicit { "" } else { op.as_str() };
            return spec_stmts(s, *op, how, spec, assign.as_deref(), true);
        }
        K::Assign { var, op, expr } => StmtKind::Set {
            var: var.clone(),
            expr: match *op {
                "+=" => format!("${var} + ({expr})"),
                "-=" => format!("${var} - ({expr})"),
                _ => expr.clone(),
            },
        },
        K::Global { var } => StmtKind::Set {
            var: var.trim_start_matches('$').to_string(),
            expr: var.clone(),
        },
        K::If {
            cond, then, else_, ..
        } => StmtKind::If {
            cond: cond.clone(),
            then: block(then),
            else_: else_.as_deref().map(block).unwrap_or_default(),
        },
        K::While { cond, body } => StmtKind::While {
            cond: cond.clone(),
            body: block(body),
        },
        K::When { branches, else_ } => StmtKind::When {
            branches: branches
                .iter()
                .map(|(sp, b)| (event(s, sp), block(b)))
                .collect(),
            else_: else_.as_deref().map(block),
        },
        K::Return { expr } => StmtKind::Return {
            value: expr.clone(),
        },
        K::Abort => StmtKind::Abort,
        K::Break => StmtKind::Break,
        K::Continue => StmtKind::Continue,
        K::Pass => return vec![other(s, "pass")],
        K::Docstring { .. } => return vec![other(s, "docstring")],
        K::Log { .. } => return vec![other(s, "log")],
        K::Print { .. } => return vec![other(s, "print")],
        K::Priority { .. } => return vec![other(s, "priority")],
        K::Label { .. } => return vec![other(s, "label")],
        K::Expr { .. } => return vec![other(s, "expr")],
        K::Ellipsis => return vec![other(s, "...")],
        K::Import(_) => return vec![other(s, "import")],
    };
    vec![at(s, one)]
}

/// What a `when` branch waits for, as one statement (an `and` is kept as `Other`).
fn event(s: &Stmt, spec: &SpecExpr) -> flows::Stmt {
    let mut v = spec_stmts(s, SpecOp::Await, "when", spec, None, false);
    if v.len() == 1 {
        if let Some(one) = v.pop() {
            return one;
        }
    }
    other(s, "when")
}

fn spec_stmts(
    s: &Stmt,
    op: SpecOp,
    how: &str,
    spec: &SpecExpr,
    assign: Option<&str>,
    top: bool,
) -> Vec<flows::Stmt> {
    match spec {
        SpecExpr::One(sp) => {
            let (line, column) = if top {
                (s.line, s.column)
            } else {
                (sp.line, sp.column)
            };
            let runs = matches!(op, SpecOp::Await | SpecOp::Start | SpecOp::Activate);
            let kind = match (sp.spec_type, &sp.name) {
                (SpecType::Action, Some(name)) if matches!(op, SpecOp::Await | SpecOp::Start) => {
                    StmtKind::Execute {
                        action: name.clone(),
                        args: sp.args.clone(),
                        result: assign.map(str::to_string),
                        via_bot: false,
                    }
                }
                (SpecType::Flow, Some(name))
                    if name.starts_with("user ") && matches!(op, SpecOp::Await | SpecOp::Match) =>
                {
                    StmtKind::User {
                        intent: name.strip_prefix("user ").unwrap_or(name).to_string(),
                    }
                }
                (SpecType::Flow, Some(name)) if runs => StmtKind::Call {
                    flow: name.clone(),
                    args: sp.args.clone(),
                    how: how.to_string(),
                },
                _ => StmtKind::Other {
                    what: op.as_str().to_string(),
                    text: s.text.clone(),
                },
            };
            let executes = matches!(kind, StmtKind::Execute { .. });
            let mut out = vec![flows::Stmt { line, column, kind }];
            // `$x = await some flow` (or a matched event) writes `$x` once the statement is done;
            // an action keeps its result on the Execute itself.
            if let (Some(var), false) = (assign, executes) {
                out.push(flows::Stmt {
                    line,
                    column,
                    kind: StmtKind::Set {
                        var: var.trim_start_matches('$').to_string(),
                        expr: s.text.clone(),
                    },
                });
            }
            out
        }
        SpecExpr::Or(alts) => {
            let alternatives = alts
                .iter()
                .flat_map(|a| spec_stmts(s, op, how, a, assign, false))
                .collect();
            vec![at(s, StmtKind::Any { alternatives })]
        }
        SpecExpr::And(parts) => parts
            .iter()
            .flat_map(|a| spec_stmts(s, op, how, a, assign, false))
            .collect(),
    }
}
