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
//!   "rulebook_info": {                         // null when no rulebook was given
//!     "path": "policy.co", "compiled": bool,   // false: it does not compile (a QG005 finding)
//!     "kind": "colang" | "sheet" | "record",
//!     "colang_version": "1.0" | "2.x" | null, "version_from": "<why that version>" | null,
//!     "record_hash": "sha256:<hex>" | null,    // when a compiled record was read
//!     "files": ["policy.co"], "routes": n,     // routes to an execute
//!     "governed": ["refund_card"]              // catalogue tools some route executes
//!   } | null,
//!   "gate": {"mode": "ci" | "start", "passed": bool, "exit": 0 | 1,
//!            "accepted": n},                   // only when findings were accepted
//!   "weakened": [{"kind": "pull_request" | "undecided" | "undecided_pass" | "off" | "accept"
//!                 | "limit" | "engine" | "gate" | "min_severity" | "baseline",
//!                 "message": "...", "location": LOCATION | null}],   // SPEC 8.1, [] when none
//!   "baseline": {"path": "old.sarif", "known": n} | null,  // --baseline: n known findings hidden
//!   "traces": {                                // --traces RUNS.jsonl; null when none was given
//!     "path": "runs.jsonl", "runs": n,         // the runs read
//!     "unmodelled": n,                         // runs that took a transition the export lacks
//!     "privileged_after": n                    // of those, runs that then made a privileged call
//!   } | null,
//!   "findings": [{                             // QG312 first, then by rule, subject, node
//!     "rule": "QG011",
//!     "title": "Confused deputy" | null,       // null only for a rule missing from rules/
//!     "type": "Vulnerability" | "Bug" | "Security hotspot" | null,
//!     "severity": "Critical" | "High" | "Medium" | "Low" | "Review",
//!     "obligation": "O1".."O10" | null,         // O9, O10: QG019, QG021; for QG003 the one it breaks
//!     "subject": "refund_card" | "cycle:<node>" | "edge:<from>" | "<rulebook line>",
//!     "node": "<qualified node id>" | null,     // where the violating call happens
//!     "depth": 1 | null,                        // the turn it is first reachable at
//!     "location": LOCATION | null,              // the line that declared the node (or edge)
//!     "related": [{"location": LOCATION, "message": "..."}],
//!     "message": "...",                         // lowercase first, no trailing period
//!     "fix": "...",
//!     "fingerprint": "<16 hex digits>",         // hash of rule, obligation, subject, node
//!     "blocks": bool,                           // fails the gate in `gate.mode`
//!     "witness": [{                             // the shortest route, in order (QG016: the
//!                                               // traced run's steps up to the call)
//!       "kind": "enter" | "choose" | "call" | "confirm" | "turn_end"
//!             | "flow" | "fact",                // rulebook findings: a flow line passed (its
//!                                               // words in "node"), a fact's value ("yes")
//!       "node": "<qualified node id>",         // for choose: the node left
//!       "to": "<node>",                         // choose only
//!       "tool": "<tool>" | null,                // call and confirm; null otherwise
//!       "guarded": bool | null,                 // call; null otherwise
//!       "refused": true,                        // only on a call that ran nothing: a
//!                                               // guarded call refused, or a reviewed call
//!                                               // the person declined
//!       "yes": bool,                            // confirm; and a reviewed call (SPEC 12.2):
//!                                               // the person's answer to that call
//!       "when": "before" | "after" | "inside"   // confirm
//!             | "call",                         // a call its node reviews (`call` interrupt)
//!       "standing": true,                       // only on a reviewed call answered yes for
//!                                               // the rest of the run (SPEC 3.1)
//!       "turn": 1,
//!       "violation": true,                      // only on the violating call (the last step)
//!       "unmodelled_from": "<node>",            // QG016, enter only: the step came from this
//!                                               // node by a transition the export does not have
//!       "location": LOCATION | null
//!     }],
//!     "accepted": {                             // only on an accepted finding (it does not block)
//!       "reason": "...", "kind": "external" | "inSource",  // stalwart.toml, or a comment on its line
//!       "at": LOCATION, "until": "2027-06-30" | null
//!     }
//!   }],
//!   "lints": [{"id": "write_not_retry_safe", "tool": "...", "message": "...", "location": LOCATION | null}],
//!   "code_checks": {                           // the code checks over the Python tool modules
//!                                              // (rules/code_checks.toml); null when no module
//!                                              // was read. They never change the gate.
//!     "files": n,                              // module files read
//!     "rules_hash": "<12 hex digits>",         // SHA-256 of rules/code_checks.toml, its start
//!     "findings": [{                           // by file, line, column, check
//!       "check": "CC001" | "CC002" | "CC003",
//!       "title": "Undeclared network call",
//!       "tool": "<tool>" | null,               // null: module-level code (CC002)
//!       "severity": "Critical" | "High" | "Medium" | "Low",
//!       "location": LOCATION,                  // the call, the literal or the read
//!       "related": [{"location": LOCATION, "message": "..."}],  // the tool's entry
//!       "message": "...",                      // never the secret itself (CC002)
//!       "fix": "..."
//!     }]
//!   } | null,
//!   "nothing_to_read": ["QG017", ...],         // SPEC 8: the rule ids
//!   "nothing_to_read_reasons": [{"rule": "QG017", "reason": "..."}],
//!   "not_yet_checked": ["QG002", ...],
//!   "scope": {"session_steps", "recursion_limit", "nodes", "edges", "tools"},
//!   "engines": {
//!     "ran": ["explicit", "z3"],               // --engine: one or both
//!     "agree": true, "disagreements": 0,       // violation keys the engines disagree on (QG312)
//!     "unchecked": 0,                          // obligations one engine decided alone (QG006)
//!     "verdict": COUNTS,                        // the merged verdicts the findings come from
//!     "explicit": {"ran": true, ...COUNTS, "states": n, "millis": n} | {"ran": false},
//!     "z3": {"ran": true, ...COUNTS, "queries": n, "millis": n, "version": "Z3 4.8.12.0"}
//!           | {"ran": false, "version": "..."}
//!   },
//!   COUNTS = "obligations", "holds_every_depth", "holds_to_bound", "violated", "undecided"
//!   "warnings": ["<the exporter's warnings>"],
//!   "limits": ["<known limits of the reading>"],
//!   "config": {                                // only when a project configuration was read, or
//!                                              // an accept comment did not apply
//!     "path": "stalwart.toml" | null,
//!     "off": [{"id": "O1", "what": "the tool check", "reason": "...", "removed": n}],
//!     "min_severity": "Medium" | null, "below_min_severity": n,   // findings not shown
//!     "strict_accepts": bool,
//!     "accept_warnings": [{"at": LOCATION, "message": "... matches no finding"}]
//!   }
//! }
//! LOCATION = {"file": "<as the report names it>", "line": 1-based, "column": 1-based}
//! ```
//!
//! Optional witness keys are left out (not `null`) when they do not apply. A QG312 finding also
//! has `"other_witness": {"engine": "z3", "witness": [...]}` when both engines found a witness. The
//! engines' `millis` are wall time and differ from run to run; everything else is deterministic.

use serde_json::{json, Map, Value};

use crate::findings::{Finding, Step};
use crate::input::source::{Loc, SourceMap};
use crate::report::{EngineStats, Report};

/// The schema version written as `"version"`.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// Renders `report` as pretty-printed JSON in the schema above, ending with a newline.
pub fn render(report: &Report) -> String {
    crate::input::visible::json_pretty(&to_value(report))
}

/// The report as a JSON value in the schema above (keys in schema order).
pub fn to_value(report: &Report) -> Value {
    let mut v = to_value_base(report);
    if let Value::Object(m) = &mut v {
        if let Some(c) = config(report) {
            m.insert("config".into(), c);
        }
        let accepted = report.accepted();
        if let Some(Value::Object(g)) = m.get_mut("gate").filter(|_| accepted > 0) {
            g.insert("accepted".into(), json!(accepted));
        }
    }
    v
}

fn to_value_base(report: &Report) -> Value {
    let src = &report.sources;
    let sc = &report.scope;
    json!({
        "version": SCHEMA_VERSION,
        "tool": {"name": "stalwart-verify", "version": env!("CARGO_PKG_VERSION")},
        "input": report.input,
        "rulebook": report.rulebook,
        "rulebook_info": report.rulebook_info,
        "gate": {
            "mode": report.gate.as_str(),
            "passed": report.passed(),
            "exit": report.exit_code(),
        },
        "weakened": weakened(report),
        "baseline": report.baseline.as_ref().map(|b| json!({"path": b.path, "known": b.known})),
        "traces": report.traces,
        "findings": report.findings.iter().map(|f| finding(report, f)).collect::<Vec<_>>(),
        "lints": report.lints.iter().map(|l| json!({
            "id": l.id,
            "tool": l.tool,
            "message": l.message,
            "location": location(src, l.loc),
        })).collect::<Vec<_>>(),
        "code_checks": report.code_checks.as_ref().map(|cc| code_checks(src, cc)),
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
        "engines": engines(report),
        "warnings": report.export_warnings,
        "limits": report.limits,
    })
}

/// The `weakened` section (SPEC 8.1): what makes the proof weaker than the defaults.
pub(crate) fn weakened(report: &Report) -> Value {
    Value::Array(
        report
            .weakened
            .iter()
            .map(|w| {
                json!({
                    "kind": w.kind.as_str(),
                    "message": w.message,
                    "location": location(&report.sources, w.at),
                })
            })
            .collect(),
    )
}

/// The `code_checks` section.
fn code_checks(src: &SourceMap, cc: &crate::report::CodeChecks) -> Value {
    json!({
        "files": cc.files,
        "rules_hash": cc.rules_hash,
        "findings": cc.findings.iter().map(|f| json!({
            "check": f.rule.as_str(),
            "title": f.rule.rule().title,
            "tool": f.code_tool(),
            "severity": f.severity.as_str(),
            "location": location(src, f.location.line()),
            "related": related(src, &f.related),
            "message": f.message,
            "fix": f.fix,
        })).collect::<Vec<_>>(),
    })
}

/// Verdict counts.
fn counts(e: &EngineStats) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("obligations".into(), json!(e.obligations));
    m.insert("holds_every_depth".into(), json!(e.holds_every_depth));
    m.insert("holds_to_bound".into(), json!(e.holds_to_bound));
    m.insert("violated".into(), json!(e.violated));
    m.insert("undecided".into(), json!(e.undecided));
    m
}

/// The `engines` section.
fn engines(report: &Report) -> Value {
    let explicit = match report.engine("explicit") {
        Some(e) => {
            let mut m = Map::new();
            m.insert("ran".into(), json!(true));
            m.extend(counts(e));
            m.insert("states".into(), json!(e.states));
            m.insert("millis".into(), json!(e.millis));
            Value::Object(m)
        }
        None => json!({"ran": false}),
    };
    let version = &report.z3_version;
    let z3 = match report.engine("z3") {
        Some(e) => {
            let mut m = Map::new();
            m.insert("ran".into(), json!(true));
            m.extend(counts(e));
            m.insert("queries".into(), json!(e.queries));
            m.insert("millis".into(), json!(e.millis));
            m.insert("version".into(), json!(version));
            Value::Object(m)
        }
        None => json!({"ran": false, "version": version}),
    };
    json!({
        "ran": report.engines.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
        "agree": report.disagreements == 0,
        "disagreements": report.disagreements,
        "unchecked": report.unchecked,
        "verdict": Value::Object(counts(&report.proof)),
        "explicit": explicit,
        "z3": z3,
    })
}

/// One finding.
pub(crate) fn finding(report: &Report, f: &Finding) -> Value {
    let src = &report.sources;
    let rule = f.rule.rule();
    let mut v = json!({
        "rule": f.rule,
        "title": rule.title,
        "type": rule.rule_type.as_str(),
        "severity": f.severity.as_str(),
        "obligation": f.obligation.map(|o| o.as_str()),
        "subject": f.subject,
        "node": f.node,
        "depth": f.depth,
        "location": location(src, f.location.line()),
        "related": related(src, &f.related),
        "message": f.message,
        "fix": f.fix,
        "fingerprint": f.fingerprint,
        "blocks": report.blocks(f),
        "witness": f.witness.iter().map(|s| step(src, s)).collect::<Vec<_>>(),
    });
    if let (Some((engine, w)), Value::Object(m)) = (&f.other_witness, &mut v) {
        m.insert(
            "other_witness".into(),
            json!({"engine": engine, "witness": w.iter().map(|s| step(src, s)).collect::<Vec<_>>()}),
        );
    }
    if let (Some(a), Value::Object(m)) = (&f.accepted, &mut v) {
        m.insert(
            "accepted".into(),
            json!({
                "reason": a.reason,
                "kind": a.kind.sarif(),
                "at": location(src, Some(a.at)),
                "until": a.until,
            }),
        );
    }
    v
}

/// The document `--format json` writes when the run could not prove anything (exit 2):
/// `{"error": {"message", "help", "location": LOCATION | null}, "exit": 2}`, ending with a newline.
pub(crate) fn error(message: &str, help: &str, location: Option<&(String, u32, u32)>) -> String {
    let v = json!({
        "error": {
            "message": message,
            "help": help,
            "location": location.map(|(f, l, c)| json!({"file": f, "line": l, "column": c})),
        },
        "exit": 2,
    });
    crate::input::visible::json_pretty(&v)
}

/// The `config` section: what the project configuration settled.
fn config(report: &Report) -> Option<Value> {
    let t = &report.triage;
    if t.config.is_none() && t.warnings.is_empty() {
        return None;
    }
    Some(json!({
        "path": t.config,
        "off": t.off.iter().map(|o| json!({
            "id": o.id, "what": o.what, "reason": o.reason, "removed": o.removed,
        })).collect::<Vec<_>>(),
        "min_severity": t.below.map(|(s, _)| s.as_str()),
        "below_min_severity": t.below.map_or(0, |(_, n)| n),
        "strict_accepts": t.strict,
        "accept_warnings": t.warnings.iter().map(|w| json!({
            "at": location(&report.sources, Some(w.at)), "message": w.message,
        })).collect::<Vec<_>>(),
    }))
}

/// One witness step; optional keys are left out when they do not apply.
pub(crate) fn step(src: &SourceMap, s: &Step) -> Value {
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
    // SPEC 3.1 "Standing approvals": the yes is for the rest of the run (with `when: call`), or
    // (in `--replay`, without `when`) the call was not asked and ran on such a yes.
    if s.standing {
        m.insert("standing".into(), json!(true));
    }
    m.insert("turn".into(), json!(s.turn));
    if s.violation {
        m.insert("violation".into(), json!(true));
    }
    if let Some(from) = &s.unmodelled_from {
        m.insert("unmodelled_from".into(), json!(from));
    }
    m.insert("location".into(), location(src, s.loc));
    Value::Object(m)
}

/// `[{"location": LOCATION, "message"}]` of a finding's related places.
fn related(src: &SourceMap, related: &[(Loc, String)]) -> Vec<Value> {
    related
        .iter()
        .map(|(loc, msg)| json!({"location": location(src, Some(*loc)), "message": msg}))
        .collect()
}

/// `{"file", "line", "column"}`, or `null` for no location (or one naming no file of `src`).
pub(crate) fn location(src: &SourceMap, loc: Option<Loc>) -> Value {
    match loc.filter(|l| l.file < src.files.len()) {
        Some(l) => json!({"file": src.file(l.file).display, "line": l.line, "column": l.column}),
        None => Value::Null,
    }
}
