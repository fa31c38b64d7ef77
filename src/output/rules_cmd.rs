//! `stalwart rules list` and `stalwart rules explain ID` (SPEC 1): the rule pages, printed from the
//! metadata in `rules/` ([`crate::rules`]) and the code checks' (`rules/code_checks.toml`).

use serde_json::json;

use crate::rules::code::{self, CodeCheck};
use crate::rules::{self, Rule};

/// Width the prose of [`explain`] is wrapped to.
const WIDTH: usize = 100;

/// The table of every rule, sorted by id: rule, title, type, fails the gate, stops `Agent(...)`,
/// default severity and status, then a line counting them. Columns are padded with spaces; lines
/// carry no trailing space; the text ends with a newline.
pub(crate) fn list() -> String {
    let header = [
        "Rule",
        "Title",
        "Type",
        "Fails the gate",
        "Stops Agent(...)",
        "Severity",
        "Status",
    ];
    let rows: Vec<[String; 7]> = rules::all()
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.title.clone(),
                r.rule_type.as_str().to_string(),
                yes_no(r.gate).to_string(),
                yes_no(r.stops).to_string(),
                r.severity.as_str().to_string(),
                status_words(r).to_string(),
            ]
        })
        .collect();

    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }

    let mut out = String::new();
    push_row(&mut out, &header.map(str::to_string), &widths);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    push_row(&mut out, &rule, &widths);
    for row in &rows {
        push_row(&mut out, row, &widths);
    }
    let checked = rules::all().iter().filter(|r| r.checked).count();
    out.push('\n');
    out.push_str(&format!(
        "{} rules; this version checks {checked}. `stalwart rules explain <RULE>` prints a rule's page.\n",
        rules::all().len()
    ));
    let checks = code::all();
    if !checks.is_empty() {
        out.push_str("\nCode checks over the Python tool modules (they do not change the gate):\n");
        let cw = checks
            .iter()
            .map(|c| c.title.chars().count())
            .max()
            .unwrap_or(0);
        for c in checks {
            let line = format!(
                "  {}  {:<cw$}  {}",
                c.id,
                c.title,
                c.default_severity().as_str()
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// [`list`] as JSON: `{"rules": [{"id", "title", "type", "gate", "stops", "severity", "status",
/// "owasp", "cwe"}], "code_checks": [{"id", "title", "severity", "cwe"}]}`, ending with a newline.
pub(crate) fn list_json() -> String {
    let v = json!({
        "rules": rules::all().iter().map(|r| json!({
            "id": r.id,
            "title": r.title,
            "type": r.rule_type.as_str(),
            "gate": r.gate,
            "stops": r.stops,
            "severity": r.severity.as_str(),
            "status": r.status(),
            "owasp": r.owasp,
            "cwe": r.cwe,
        })).collect::<Vec<_>>(),
        "code_checks": code::all().iter().map(|c| json!({
            "id": c.id,
            "title": c.title,
            "severity": c.default_severity().as_str(),
            "cwe": c.cwe,
        })).collect::<Vec<_>>(),
    });
    crate::input::visible::json_pretty(&v)
}

/// The page of rule `id` (case-insensitive: `qg011` is `QG011`), every field readable: title, type,
/// gates, severity, OWASP entries, status, what it finds, its message, its fix, what a clean result
/// proves and does not prove, and what the report says when it has nothing to read. `None` for an
/// unknown id.
pub(crate) fn explain(id: &str) -> Option<String> {
    let id = id.trim().to_ascii_uppercase();
    if let Some(c) = code::get(&id) {
        return Some(explain_check(c));
    }
    let r = rules::get(&id)?;

    let mut out = String::new();
    out.push_str(&format!("{} {}\n\n", r.id, r.title));
    let facts: [(&str, String); 8] = [
        ("Type", r.rule_type.as_str().to_string()),
        (
            "Fails the gate",
            format!("{} (stalwart verify --gate ci)", yes_no(r.gate)),
        ),
        (
            "Stops Agent(...)",
            format!("{} (stalwart verify --gate start)", yes_no(r.stops)),
        ),
        ("Severity", severity_words(r)),
        ("OWASP", r.owasp.join(", ")),
        (
            "CWE",
            if r.cwe.is_empty() {
                "-".to_string()
            } else {
                r.cwe.join(", ")
            },
        ),
        ("Status", status_words(r).to_string()),
        ("Rule file", format!("rules/{}.toml", r.id)),
    ];
    let label = facts.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    for (k, v) in &facts {
        out.push_str(&format!("  {:<label$} {v}\n", format!("{k}:")));
    }

    section(&mut out, "What it finds", &r.description);
    section(&mut out, "Message (template)", &r.message);
    section(&mut out, "How to fix it", &r.fix);
    if let Some(f) = &r.fix_rulebook {
        section(&mut out, "How to fix it, when the rulebook raises it", f);
    }
    if let Some(f) = &r.fix_langgraph {
        section(&mut out, "How to fix it, in a LangGraph graph", f);
    }
    if let Some(f) = &r.fix_openai_agents {
        section(
            &mut out,
            "How to fix it, in an OpenAI Agents SDK application",
            f,
        );
    }
    section(&mut out, "What a clean result proves", &r.proves);
    section(&mut out, "What it does not prove", &r.does_not_prove);
    if let Some(n) = &r.nothing_to_read {
        section(
            &mut out,
            "When there is nothing to read",
            &format!("The report lists it under \"Rules with nothing to read, so nothing raised\": {}: {n}", r.id),
        );
    }
    Some(out)
}

/// The page of a code check: title, severity, CWE, what it flags, why it matters, its message
/// and fix, and that it does not change the gate.
fn explain_check(c: &CodeCheck) -> String {
    let mut out = String::new();
    out.push_str(&format!("{} {}\n\n", c.id, c.title));
    let facts = [
        (
            "Type",
            "Code check over the Python tool modules".to_string(),
        ),
        (
            "Fails the gate",
            "no: code findings are evidence about the tools' code, not a proof about the graph"
                .to_string(),
        ),
        (
            "Severity",
            format!("{} by default", c.default_severity().as_str()),
        ),
        (
            "CWE",
            if c.cwe.is_empty() {
                "-".to_string()
            } else {
                c.cwe.join(", ")
            },
        ),
        ("Rule file", "rules/code_checks.toml".to_string()),
    ];
    let label = facts.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    for (k, v) in &facts {
        out.push_str(&format!("  {:<label$} {v}\n", format!("{k}:")));
    }
    section(&mut out, "What it finds", c.finds.trim());
    section(&mut out, "Why it matters", c.why.trim());
    section(&mut out, "Message (template)", c.message.trim());
    section(&mut out, "How to fix it", c.fix.trim());
    out
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn status_words(r: &Rule) -> &'static str {
    if r.checked {
        "checked"
    } else {
        "not yet checked"
    }
}

fn severity_words(r: &Rule) -> String {
    use crate::rules::RuleType;
    match r.rule_type {
        RuleType::SecurityHotspot => {
            "Review (a Security hotspot is for a person to weigh)".to_string()
        }
        _ => format!(
            "{} by default; on a tool, by what the tool can do (Critical, High or Medium)",
            r.severity.as_str()
        ),
    }
}

fn push_row(out: &mut String, cells: &[String], widths: &[usize]) {
    let mut line = String::new();
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        line.push_str(cell);
        line.push_str(&" ".repeat(w.saturating_sub(cell.chars().count())));
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

fn section(out: &mut String, title: &str, text: &str) {
    out.push('\n');
    out.push_str(title);
    out.push('\n');
    for line in wrap(text, WIDTH - 2) {
        out.push_str("  ");
        out.push_str(&line);
        out.push('\n');
    }
}

/// Greedy word wrap; a word longer than `width` gets a line of its own. A `code span` is one
/// word, so an example (`create_agent(model, tools, middleware=[guard])`) stays on one line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in words(text) {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The words of `text` for [`wrap`]: split at whitespace outside backtick code spans.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_code = false;
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if c.is_whitespace() && !in_code {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        } else if c.is_whitespace() {
            if !word.ends_with(' ') {
                word.push(' ');
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_list_has_a_row_per_rule() {
        let text = list();
        for r in rules::all() {
            let row = text
                .lines()
                .find(|l| l.starts_with(&format!("{} ", r.id)))
                .unwrap_or_else(|| panic!("no row for {}", r.id));
            assert!(
                row.contains(&r.title) && row.contains(r.rule_type.as_str()),
                "{row}"
            );
        }
        assert!(text
            .lines()
            .next()
            .is_some_and(|h| h.starts_with("Rule") && h.contains("Stops Agent(...)")));
        assert!(text.lines().all(|l| l == l.trim_end()));
    }

    #[test]
    fn rules_explain_prints_every_field() {
        let page = explain("qg011").expect("QG011");
        let r = rules::get("QG011").expect("QG011");
        assert!(page.starts_with("QG011 Confused deputy\n"));
        for needle in [
            "Vulnerability",
            "OWASP:",
            "LLM01:2026",
            "How to fix it",
            "What a clean result proves",
        ] {
            assert!(page.contains(needle), "{needle} missing from:\n{page}");
        }
        let flat = page.split_whitespace().collect::<Vec<_>>().join(" ");
        for field in [
            &r.description,
            &r.fix,
            &r.proves,
            &r.does_not_prove,
            &r.message,
        ] {
            assert!(
                flat.contains(field.as_str()),
                "{field} missing from:\n{page}"
            );
        }
        let page = explain("QG017").expect("QG017");
        let flat = page.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("QG017: no argument is declared as code or a shell command"));
        assert!(explain("QG999").is_none());
        assert!(explain("").is_none());
    }
}
