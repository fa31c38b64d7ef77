//! The job summary (issue 18; `--summary FILE`, which the Action points at
//! `$GITHUB_STEP_SUMMARY`): Markdown that GitHub renders on the run's page. The gate, a table of
//! the findings per rule (how many, how many block, how many are accepted), and the Mermaid
//! picture of the first blocking finding's route ([`super::picture::mermaid`]), which GitHub draws.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::picture::Picture;
use crate::report::Report;

/// Markdown text outside code (issue 26): every ASCII punctuation character a Markdown or HTML
/// construct could start with backslash-escaped (CommonMark lets any be), so no link, image,
/// heading, emphasis, HTML tag or table cell break can render; nothing a terminal acts on
/// ([`crate::input::visible`]), no line break.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::input::visible::visible(s).chars() {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown code span holding `s` as it is (issue 26): fenced by one backtick more than the
/// longest run of backticks in it (CommonMark), padded with a space on each side when it starts
/// or ends with a backtick or a space (the padding is stripped when rendered), with nothing a
/// terminal acts on ([`crate::input::visible`]) and no line break. Its text never ends the span, so no
/// link, image or heading can follow from it. Not for a table cell: a `|` there ends the cell.
pub fn code(s: &str) -> String {
    let s = crate::input::visible::visible(s);
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.is_empty() || s.starts_with(['`', ' ']) || s.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Markdown table cell text: [`text`], so `|` is escaped too.
fn cell(s: &str) -> String {
    text(s)
}

/// The summary of `report` (its graph drawn as `picture`), ending with a newline.
pub fn render(report: &Report, picture: &Picture) -> String {
    let mut out = String::new();
    let verdict = if report.passed() { "passed" } else { "failed" };
    let _ = writeln!(
        out,
        "### stalwart-verify: {} - gate {verdict} ({})\n",
        code(&report.input),
        report.gate.as_str()
    );
    let mut rows: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for f in &report.findings {
        let r = rows.entry(f.rule.as_str()).or_default();
        r.0 += 1;
        r.1 += usize::from(report.blocks(f));
        r.2 += usize::from(f.accepted.is_some());
    }
    if rows.is_empty() {
        out.push_str("No finding.\n");
    } else {
        out.push_str(
            "| Rule | Title | Findings | Blocking | Accepted |\n|---|---|---:|---:|---:|\n",
        );
        for (rule, (n, b, a)) in &rows {
            let title = crate::rules::get(rule)
                .map(|r| r.title.clone())
                .unwrap_or_default();
            let _ = writeln!(out, "| {rule} | {} | {n} | {b} | {a} |", cell(&title));
        }
    }
    if let Some(c) = &report.triage.config {
        let _ = writeln!(out, "\nConfiguration read: {}.", code(c));
    }
    if !report.weakened.is_empty() {
        let _ = writeln!(
            out,
            "\n**The proof is weakened** ({}):\n",
            super::plural(report.weakened.len(), "weakening", "weakenings")
        );
        for w in &report.weakened {
            let at =
                w.at.filter(|l| l.file < report.sources.files.len())
                    .map(|l| format!("{}: ", code(&report.sources.file_line(l))))
                    .unwrap_or_default();
            let _ = writeln!(out, "- {at}{}", text(&w.message));
        }
    }
    if let Some(b) = &report.baseline {
        let _ = writeln!(
            out,
            "\n{} known to the baseline {} not shown.",
            super::plural(b.known, "finding", "findings"),
            code(&b.path)
        );
    }
    if let Some(f) = report.findings.iter().find(|f| report.blocks(f)) {
        let on = f
            .node
            .as_deref()
            .map(|n| format!(" at {}", code(n)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\nThe route of the first blocking finding, {} on {}{on} (fingerprint {}):\n",
            f.rule,
            code(&f.subject),
            code(&f.fingerprint)
        );
        out.push_str("```mermaid\n");
        out.push_str(&super::picture::mermaid(picture, Some(f)));
        out.push_str("```\n");
    }
    out
}
