//! The parsed file in the corpus oracle's JSON shape (SPEC 2.4; `shared/corpus/colang/oracle.py`,
//! "v2.x when ok"), so the conformance test can compare it with what NeMo Guardrails read.

use serde_json::{json, Map, Value};

use super::{File, FlowDef, Member, Spec, SpecExpr, SpecOp, Stmt, StmtKind};

/// The oracle's summary of a parsed Colang 2.x file: `colang_version`, `ok`, `error`,
/// `error_line`, `imports` (NeMo's import paths), `import_lines`, and `flows`
/// (`name, line, decorators, parameters, return_members, docstring, exclude_from_llm, kinds,
/// body`), each statement as the oracle normalises NeMo's elements. The `file` and `parser`
/// fields, which only name where it came from, are left out.
pub fn to_oracle_json(file: &File) -> Value {
    json!({
        "colang_version": "2.x",
        "ok": true,
        "error": null,
        "error_line": null,
        "imports": file.imports.iter().map(|i| i.path.clone()).collect::<Vec<_>>(),
        "import_lines": file.import_lines,
        "flows": file.flows.iter().map(|f| flow(f, file.exclude_from_llm)).collect::<Vec<_>>(),
    })
}

fn flow(f: &FlowDef, exclude: bool) -> Value {
    let body = body(&f.body);
    let kinds: Vec<Value> = body.iter().filter_map(|s| s.get("kind").cloned()).collect();
    let params = |ps: &[super::Param]| -> Vec<Value> {
        ps.iter()
            .map(|p| json!({"name": p.name, "default": p.default}))
            .collect()
    };
    json!({
        "name": f.name,
        "line": f.line,
        "decorators": f.decorators.iter().map(|d| json!({
            "name": d.name,
            "parameters": Value::Object(d.params.iter().cloned().collect::<Map<_, _>>()),
        })).collect::<Vec<_>>(),
        "parameters": params(&f.params),
        "return_members": params(&f.returns),
        "docstring": f.docstring(),
        "exclude_from_llm": exclude,
        "kinds": kinds,
        "body": body,
    })
}

fn body(stmts: &[Stmt]) -> Vec<Value> {
    stmts.iter().map(stmt).collect()
}

fn args(a: &[(String, String)]) -> Value {
    Value::Object(
        a.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn member(m: &Member) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(m.name));
    if !m.args.is_empty() {
        o.insert("args".into(), args(&m.args));
    }
    Value::Object(o)
}

fn one(s: &Spec) -> Value {
    let mut o = Map::new();
    if let Some(n) = &s.name {
        o.insert("name".into(), json!(n));
    }
    o.insert("type".into(), json!(s.spec_type.as_str()));
    if let Some(v) = &s.var {
        o.insert("var".into(), json!(v));
    }
    if !s.args.is_empty() {
        o.insert("args".into(), args(&s.args));
    }
    if !s.members.is_empty() {
        o.insert(
            "members".into(),
            Value::Array(s.members.iter().map(member).collect()),
        );
    }
    if let Some(r) = &s.capture {
        o.insert("ref".into(), json!(r));
    }
    Value::Object(o)
}

fn spec(e: &SpecExpr) -> Value {
    match e {
        SpecExpr::One(s) => one(s),
        SpecExpr::Or(v) => json!({"or": v.iter().map(spec).collect::<Vec<_>>()}),
        SpecExpr::And(v) => json!({"and": v.iter().map(spec).collect::<Vec<_>>()}),
    }
}

fn stmt(s: &Stmt) -> Value {
    let mut o = Map::new();
    let mut line = true;
    let kind: &str = match &s.kind {
        StmtKind::Spec { op, .. } => op.as_str(),
        StmtKind::Assign { .. } => "assign",
        StmtKind::If { elif, .. } => {
            line = !elif;
            "if"
        }
        StmtKind::While { .. } => "while",
        StmtKind::When { .. } => "when",
        StmtKind::Return { .. } => "return",
        StmtKind::Abort => "abort",
        StmtKind::Break => "break",
        StmtKind::Continue => "continue",
        StmtKind::Pass => "pass",
        StmtKind::Docstring { .. } => "docstring",
        StmtKind::Log { .. } => "log",
        StmtKind::Print { .. } => "print",
        StmtKind::Priority { .. } => "priority",
        StmtKind::Global { .. } => "global",
        StmtKind::Label { .. } => "label",
        StmtKind::Expr { .. } => "expr",
        StmtKind::Ellipsis => "ellipsis",
        StmtKind::Import(_) => {
            line = false;
            "raw:Import"
        }
    };
    o.insert("kind".into(), json!(kind));
    if line {
        o.insert("line".into(), json!(s.line));
    }
    let mut put = |k: &str, v: Value| {
        o.insert(k.into(), v);
    };
    match &s.kind {
        StmtKind::Spec {
            op,
            spec: sp,
            assign,
            implicit,
        } => {
            put("spec", spec(sp));
            if let Some(a) = assign {
                put("assign", json!(a));
            }
            if *op == SpecOp::Await && *implicit {
                put("implicit", json!(true));
            }
        }
        StmtKind::Assign { var, op, expr } => {
            put("var", json!(var));
            put("op", json!(op));
            put("expr", json!(expr));
        }
        StmtKind::If {
            cond, then, else_, ..
        } => {
            put("cond", json!(cond));
            put("then", Value::Array(body(then)));
            put(
                "else",
                else_
                    .as_deref()
                    .map_or(Value::Null, |e| Value::Array(body(e))),
            );
        }
        StmtKind::While { cond, body: b } => {
            put("cond", json!(cond));
            put("body", Value::Array(body(b)));
        }
        StmtKind::When { branches, else_ } => {
            put(
                "branches",
                Value::Array(
                    branches
                        .iter()
                        .map(|(sp, b)| json!({"spec": spec(sp), "body": body(b)}))
                        .collect(),
                ),
            );
            put(
                "else",
                else_
                    .as_deref()
                    .map_or(Value::Null, |e| Value::Array(body(e))),
            );
        }
        StmtKind::Return { expr } => put("expr", json!(expr.as_deref().unwrap_or("None"))),
        StmtKind::Docstring { text } => put("text", json!(text)),
        StmtKind::Log { expr }
        | StmtKind::Print { expr }
        | StmtKind::Priority { expr }
        | StmtKind::Expr { expr } => put("expr", json!(expr)),
        StmtKind::Global { var } => put("var", json!(var)),
        StmtKind::Label { name } => put("name", json!(name)),
        StmtKind::Abort
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Pass
        | StmtKind::Ellipsis
        | StmtKind::Import(_) => {}
    }
    Value::Object(o)
}
