//! The JSON report (SPEC 8 `json`): the same content as the text report, in a stable schema.
//!
//! This comment is the contract. Keys appear in the order below; the same report gives the same
//! bytes (no times, no absolute paths: a file is named as the report names it, `SourceFile.display`).
//! `version` changes only when a key is removed or changes meaning; new keys may be added.
//!
//! ```text
//! {
//!   "version": 1,
//!   "tool": {"name": "stalwart-verify", "version": "<crate version>"},
//!   "input": "agent.yaml",                     // what was verified, as the user named it
//!   "rulebook": "<the rulebook line>" | null,
//!   "gate": {"mode": "ci" | "start", "passed": bool, "exit": 0 | 1},
//!   "findings": [{                             // QG312 first, then by rule, subject, node
//!     "rule": "QG011",
//!     "title": "Confused deputy" | null,       // null only for a rule missing from rules/
//!     "type": "Vulnerability" | "Bug" | "Security hotspot" | null,
//!     "severity": "Critical" | "High" | "Medium" | "Low" | "Review",
//!     "obligation": "O1".."O8" | null,          // for QG003: the obligation it breaks
//!     "subject": "refund_card" | "cycle:<node>" | "edge:<from>" | "<rulebook line>",
//!     "node": "<qualified node id>" | null,     // where the violating call happens
//!     "depth": 1 | null,                        // the turn it is first reachable at
//!     "location": LOCATION | null,              // the line that declared the node (or edge)
//!     "related": [{"location": LOCATION, "message": "..."}],
//!     "message": "...",                         // lowercase first, no trailing period
//!     "fix": "...",
//!     "fingerprint": "<16 hex digits>",         // hash of rule, obligation, subject, node
//!     "blocks": bool,                           // fails the gate in `gate.mode`
//!     "witness": [{                             // the shortest route, in order
//!       "kind": "enter" | "choose" | "call" | "confirm" | "turn_end",
//!       "node": "<qualified node id>",         // for choose: the node left
//!       "to": "<node>",                         // choose only
//!       "tool": "<tool>" | null,                // call and confirm; null otherwise
//!       "guarded": bool | null,                 // call; null otherwise
//!       "refused": true,                        // only on a refused guarded call
//!       "yes": bool,                            // confirm only
//!       "when": "before" | "after" | "inside",  // confirm only
//!       "turn": 1,
//!       "violation": true,                      // only on the violating call (the last step)
//!       "location": LOCATION | null
//!     }]
//!   }],
//!   "lints": [{"id": "write_not_retry_safe", "tool": "...", "message": "...", "location": LOCATION | null}],
//!   "nothing_to_read": ["QG017", ...],         // SPEC 8: the rule ids
//!   "nothing_to_read_reasons": [{"rule": "QG017", "reason": "..."}],
//!   "not_yet_checked": ["QG002", ...],
//!   "scope": {"session_steps", "recursion_limit", "nodes", "edges", "tools"},
//!   "engines": {"explicit": {"obligations", "holds_every_depth", "holds_to_bound", "violated",
//!                            "undecided", "states"},
//!               "z3": {"ran": false, "linked": "<the linked libz3's version>"}},
//!   "warnings": ["<the exporter's warnings>"],
//!   "limits": ["<known limits of the reading>"]
//! }
//! LOCATION = {"file": "<as the report names it>", "line": 1-based, "column": 1-based}
//! ```
//!
//! Optional witness keys are left out (not `null`) when they do not apply. The engines' wall time
//! (`EngineStats::millis`) is deliberately not written: it would make the output differ from run to
//! run.

use serde_json::{json, Map, Value};

use crate::findings::{Finding, Step};
use crate::report::Report;
use crate::source::{Loc, SourceMap};

/// The schema version written as `"version"`.
pub const SCHEMA_VERSION: u32 = 1;

/// Renders `report` as pretty-printed JSON in the schema above, ending with a newline.
pub fn render(report: &Report) -> String {
    let mut s =
        serde_json::to_string_pretty(&to_value(report)).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

/// The report as a JSON value in the schema above (keys in schema order).
pub fn to_value(report: &Report) -> Value {
    let src = &report.sources;
    let e = &report.explicit;
    let sc = &report.scope;
    json!({
        "version": SCHEMA_VERSION,
        "tool": {"name": "stalwart-verify", "version": env!("CARGO_PKG_VERSION")},
        "input": report.input,
        "rulebook": report.rulebook,
        "gate": {
            "mode": report.gate.as_str(),
            "passed": report.passed(),
            "exit": report.exit_code(),
        },
        "findings": report.findings.iter().map(|f| finding(report, f)).collect::<Vec<_>>(),
        "lints": report.lints.iter().map(|l| json!({
            "id": l.id,
            "tool": l.tool,
            "message": l.message,
            "location": location(src, l.loc),
        })).collect::<Vec<_>>(),
        "nothing_to_read": report.nothing_to_read.iter().map(|(rule, _)| rule).collect::<Vec<_>>(),
        "nothing_to_read_reasons": report.nothing_to_read.iter().map(|(rule, reason)| json!({
            "rule": rule,
            "reason": reason,
        })).collect::<Vec<_>>(),
        "not_yet_checked": report.not_yet_checked,
        "scope": {
            "session_steps": sc.session_steps,
            "recursion_limit": sc.recursion_limit,
            "nodes": sc.nodes,
            "edges": sc.edges,
            "tools": sc.tools,
        },
        "engines": {
            "explicit": {
                "obligations": e.obligations,
                "holds_every_depth": e.holds_every_depth,
                "holds_to_bound": e.holds_to_bound,
                "violated": e.violated,
                "undecided": e.undecided,
                "states": e.states,
            },
            "z3": {"ran": false, "linked": crate::engine::z3_version()},
        },
        "warnings": report.export_warnings,
        "limits": report.limits,
    })
}

/// One finding.
fn finding(report: &Report, f: &Finding) -> Value {
    let src = &report.sources;
    let rule = crate::rules::get(f.rule);
    json!({
        "rule": f.rule,
        "title": rule.map(|r| r.title.as_str()),
        "type": rule.map(|r| r.rule_type.as_str()),
        "severity": f.severity.as_str(),
        "obligation": f.obligation.map(|o| o.as_str()),
        "subject": f.subject,
        "node": f.node,
        "depth": f.depth,
        "location": location(src, f.location),
        "related": f.related.iter().map(|(loc, msg)| json!({
            "location": location(src, Some(*loc)),
            "message": msg,
        })).collect::<Vec<_>>(),
        "message": f.message,
        "fix": f.fix,
        "fingerprint": f.fingerprint,
        "blocks": report.blocks(f),
        "witness": f.witness.iter().map(|s| step(src, s)).collect::<Vec<_>>(),
    })
}

/// One witness step; optional keys are left out when they do not apply.
fn step(src: &SourceMap, s: &Step) -> Value {
    let mut m = Map::new();
    m.insert(
        "kind".into(),
        serde_json::to_value(s.kind).unwrap_or(Value::Null),
    );
    m.insert("node".into(), json!(s.node));
    if let Some(to) = &s.to {
        m.insert("to".into(), json!(to));
    }
    // SPEC 8 lists `tool` and `guarded` on every step: null where they do not apply.
    m.insert("tool".into(), json!(s.tool));
    m.insert("guarded".into(), json!(s.guarded));
    if s.refused {
        m.insert("refused".into(), json!(true));
    }
    if let Some(yes) = s.yes {
        m.insert("yes".into(), json!(yes));
    }
    if let Some(when) = s.when {
        m.insert("when".into(), json!(when));
    }
    m.insert("turn".into(), json!(s.turn));
    if s.violation {
        m.insert("violation".into(), json!(true));
    }
    m.insert("location".into(), location(src, s.loc));
    Value::Object(m)
}

/// `{"file", "line", "column"}`, or `null` for no location (or one naming no file of `src`).
fn location(src: &SourceMap, loc: Option<Loc>) -> Value {
    match loc.filter(|l| l.file < src.files.len()) {
        Some(l) => json!({"file": src.file(l.file).display, "line": l.line, "column": l.column}),
        None => Value::Null,
    }
}
