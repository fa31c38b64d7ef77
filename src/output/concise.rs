//! `--format concise` and `--statistics` (issue 18): a large agent at a glance.
//!
//! **concise**: one line a finding, `file:line:column: RULE Severity subject: message`, blocking
//! findings first, then the others, then the accepted ones (`[accepted: reason]`), then the code
//! findings; the runtime's lints after the findings, one line each; the gate line last.
//!
//! **statistics**: a count per rule (and per code check), most first: the count, how many of them
//! block, the rule and its title; then the gate line.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::findings::Finding;
use crate::report::Report;

/// `file:line:column` of a finding, as the report names the file; `-` when it has no place.
fn place(report: &Report, f: &Finding) -> String {
    match f
        .location
        .line()
        .filter(|l| l.file < report.sources.files.len())
    {
        Some(l) => format!(
            "{}:{}:{}",
            report.sources.file(l.file).display,
            l.line,
            l.column
        ),
        None => "-".to_string(),
    }
}

/// The one-line form of a finding.
fn line(report: &Report, f: &Finding) -> String {
    let mut s = format!(
        "{}: {} {} {}: {}",
        place(report, f),
        f.rule,
        f.severity.as_str(),
        f.subject,
        f.message
    );
    if let Some(a) = &f.accepted {
        let _ = write!(s, " [accepted: {}]", a.reason);
    }
    s
}

/// The concise report, ending with a newline.
pub(crate) fn render(report: &Report) -> String {
    let mut out = String::new();
    let (accepted, open): (Vec<&Finding>, Vec<&Finding>) =
        report.findings.iter().partition(|f| f.accepted.is_some());
    let (blocking, others): (Vec<&Finding>, Vec<&Finding>) =
        open.into_iter().partition(|f| report.blocks(f));
    for f in blocking.iter().chain(&others).chain(&accepted) {
        let _ = writeln!(out, "{}", line(report, f));
    }
    for f in report.code_findings() {
        let _ = writeln!(
            out,
            "{}: {} {} {}: {}",
            place(report, f),
            f.rule,
            f.severity.as_str(),
            f.code_tool().unwrap_or("-"),
            f.message
        );
    }
    for w in &report.triage.warnings {
        let _ = writeln!(
            out,
            "{}: accept: {}",
            report.sources.file_line(w.at),
            w.message
        );
    }
    for l in &report.lints {
        let _ = writeln!(out, "lint {} on {}: {}", l.id, l.tool, l.message);
    }
    let _ = writeln!(out, "{}", summary(report, blocking.len(), accepted.len()));
    crate::input::visible::neutralise(&out, false)
}

/// The closing line of both forms.
fn summary(report: &Report, blocking: usize, accepted: usize) -> String {
    let n = report.findings.len();
    let mut s = format!(
        "{} ({blocking} blocking",
        super::plural(n, "finding", "findings")
    );
    if accepted > 0 {
        let _ = write!(s, ", {accepted} accepted");
    }
    let _ = write!(
        s,
        "); gate {} under {}.",
        if report.passed() { "passed" } else { "failed" },
        report.gate.as_str()
    );
    s
}

/// One rule's line of the statistics.
#[derive(Default, serde::Serialize)]
struct Row {
    rule: String,
    title: String,
    count: usize,
    blocking: usize,
    accepted: usize,
}

/// A count per rule (and code check), most first, then by rule id.
fn rows(report: &Report) -> Vec<Row> {
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    for f in report.findings.iter().chain(report.code_findings()) {
        let r = rows.entry(f.rule.to_string()).or_default();
        r.rule = f.rule.to_string();
        r.count += 1;
        r.blocking += usize::from(report.blocks(f));
        r.accepted += usize::from(f.accepted.is_some());
        r.title = f.rule.rule().title.clone();
    }
    let mut sorted: Vec<Row> = rows.into_values().collect();
    sorted.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.rule.cmp(&b.rule)));
    sorted
}

/// The statistics: a count per rule, most first (then by rule id), ending with the gate line.
pub(crate) fn statistics(report: &Report) -> String {
    let sorted = rows(report);
    let width = sorted
        .iter()
        .map(|r| r.count.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    for r in &sorted {
        let mut notes = Vec::new();
        if r.blocking > 0 {
            notes.push(format!("{} blocking", r.blocking));
        }
        if r.accepted > 0 {
            notes.push(format!("{} accepted", r.accepted));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        let _ = writeln!(out, "{:>width$}  {}  {}{notes}", r.count, r.rule, r.title);
    }
    let blocking = report.findings.iter().filter(|f| report.blocks(f)).count();
    let _ = writeln!(out, "{}", summary(report, blocking, report.accepted()));
    crate::input::visible::neutralise(&out, false)
}

/// `--statistics --format json` (issue 31 item 4): the same counts as one JSON object,
/// `{"rules": [{"rule", "title", "count", "blocking", "accepted"}], "findings": N, "blocking": N,
/// "accepted": N, "passed": bool}`, the rules most first as in the text.
pub(crate) fn statistics_json(report: &Report) -> String {
    let blocking = report.findings.iter().filter(|f| report.blocks(f)).count();
    let findings = report.findings.len() + report.code_findings().len();
    let v = serde_json::json!({
        "rules": rows(report),
        "findings": findings,
        "blocking": blocking,
        "accepted": report.accepted(),
        "passed": blocking == 0,
    });
    let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
    out.push('\n');
    out
}
