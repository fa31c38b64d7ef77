//! `--format github`: GitHub Actions workflow commands, for people who read the job log (issue 5).
//!
//! One line per finding, in the report's order (what blocks first):
//!
//! ```text
//! ::error file=agent.yaml,line=5,col=7,title=QG011 Critical on refund_card (ConfusedDeputy)::…
//! ```
//!
//! - The command is `error` for a finding that fails the report's gate, `notice` for a Security
//!   hotspot, else `warning` (the levels the SARIF output gives, SPEC 8).
//! - `file` is the declaring file's path relative to the repository root (the same path the SARIF
//!   `uri` gives, so the annotation lands on the pull request's diff), `line` and `col` 1-based.
//!   A finding with no location is annotated where SARIF puts it: the first file read, line 1.
//! - `title` is `<rule> <severity> on <subject>` and the rule's title; the message is the
//!   finding's message, then `Fix:` and the fix, then the fingerprint.
//! - Values are escaped as the runner's toolkit does (`%` `\r` `\n` in both; `:` `,` in
//!   properties too), so a crafted name cannot end the command or forge another.
//!
//! Then each code finding (CC001-CC003, when Python tool modules were read) as a `warning` at its
//! line of the module, titled `<check> <severity> on <tool> (<title>)`; they never change the gate.
//!
//! The last line, outside any command, is the gate line: `Gate: passed.` or `Gate: failed. N
//! finding(s) block this agent under the ci gate.` The exit status is the gate's, as always.

use std::path::Path;

use crate::findings::Finding;
use crate::report::Report;

use super::sarif::repo_relative;
use super::{level, primary_loc, Level};

/// The workflow-command lines for `report`; paths are made relative to `repo_root` (default: the
/// current directory). Deterministic: the same report and root give the same bytes.
pub(crate) fn render(report: &Report, repo_root: Option<&Path>) -> String {
    let root = repo_root.unwrap_or(Path::new("."));
    let mut out = String::new();
    let mut blocking = 0;
    // The proof's findings, then the code checks' (warnings: they never change the gate).
    for f in report.findings.iter().chain(report.code_findings()) {
        blocking += usize::from(report.blocks(f));
        out.push_str(&line(report, root, f));
        out.push('\n');
    }
    // Accepts that do not apply: a warning each (an error under strict-accepts).
    let command = if report.triage.strict {
        "error"
    } else {
        "warning"
    };
    for w in &report.triage.warnings {
        let file = repo_relative(&report.sources.file(w.at.file).path, root);
        out.push_str(&format!(
            "::{command} file={},line={},col={},title={}::{}\n",
            property(&file),
            w.at.line,
            w.at.column,
            property("stalwart-verify: an accept that does not apply"),
            data(&w.message)
        ));
    }
    // SPEC 8.1: each weakening a warning, on the line that makes it when there is one.
    for w in &report.weakened {
        let place = match w.at.filter(|l| l.file < report.sources.files.len()) {
            Some(l) => format!(
                "file={},line={},col={},",
                property(&repo_relative(&report.sources.file(l.file).path, root)),
                l.line,
                l.column
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "::warning {place}title={}::{}\n",
            property(&format!(
                "stalwart-verify: the proof is weakened ({})",
                w.kind.as_str()
            )),
            data(&w.message)
        ));
    }
    let weakened = match report.weakened.len() {
        0 => String::new(),
        n => format!(" The proof is weakened: {n} weakening(s), each a warning above."),
    };
    let gate = report.gate.as_str();
    if blocking == 0 && report.passed() {
        out.push_str(&format!(
            "Gate: passed. Nothing blocks this agent under the {gate} gate ({} finding(s) to weigh).{weakened}\n",
            report.findings.len()
        ));
    } else if blocking == 0 {
        out.push_str(&format!(
            "Gate: failed. {} accept(s) do not apply under strict-accepts.{weakened}\n",
            report.triage.warnings.len()
        ));
    } else {
        out.push_str(&format!(
            "Gate: failed. {blocking} finding(s) block this agent under the {gate} gate.{weakened}\n"
        ));
    }
    out
}

fn line(report: &Report, root: &Path, f: &Finding) -> String {
    let command = match level(report, f) {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Note => "notice",
    };
    let (file, line, col) = match primary_loc(report, f) {
        Some(l) => (
            repo_relative(&report.sources.files[l.file].path, root),
            l.line,
            l.column,
        ),
        None => (repo_relative(Path::new(&report.input), root), 1, 1),
    };
    // A code finding in module-level code has no subject.
    let mut title = format!("{} {}", f.rule, f.severity.as_str());
    if !f.subject.is_empty() {
        title.push_str(&format!(" on {}", f.subject));
    }
    title.push_str(&format!(" ({})", f.rule.rule().title));
    let mut message = f.message.clone();
    if !f.fix.is_empty() {
        message.push_str("\nFix: ");
        message.push_str(&f.fix);
    }
    // A code finding's fingerprint is SARIF's to derive (from the module's URI).
    if !f.fingerprint.is_empty() {
        message.push_str("\nFingerprint: ");
        message.push_str(&f.fingerprint);
    }
    format!(
        "::{command} file={},line={line},col={col},title={}::{}",
        property(&file),
        property(&title),
        data(&message)
    )
}

/// The workflow command `--format github` writes when the run could not prove anything (exit 2):
/// `::error file=F,line=L,col=C,title=stalwart-verify could not run::MESSAGE` (no file when the
/// error has no place), ending with a newline.
pub(crate) fn error(message: &str, location: Option<&(String, u32, u32)>) -> String {
    let title = property("stalwart-verify could not run");
    match location {
        Some((file, line, col)) => format!(
            "::error file={},line={line},col={col},title={title}::{}\n",
            property(file),
            data(message)
        ),
        None => format!("::error title={title}::{}\n", data(message)),
    }
}

/// A command's message, escaped as `@actions/core` does (`escapeData`), and every other character
/// a terminal or a log viewer would act on (ESC, OSC 8 hyperlinks, NUL, U+2028, bidi overrides)
/// made visible ([`crate::input::visible`]).
fn data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => crate::input::visible::push_escaped(&mut out, c),
        }
    }
    out
}

/// A command property, escaped as `@actions/core` does (`escapeProperty`).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_one_command_per_line() {
        assert_eq!(data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        // A forged command inside a name stays inside its property.
        let forged = property("x\n::error file=evil::gate passed");
        assert!(!forged.contains('\n') && !forged.contains("::"), "{forged}");
        // Terminal sequences are shown, not acted on.
        assert_eq!(
            data("\u{1b}]8;;https://e.invalid\u{7}x\u{1b}[2J\0\u{2028}"),
            "\\u{1b}]8;;https://e.invalid\\u{7}x\\u{1b}[2J\\0\\u{2028}"
        );
    }
}
