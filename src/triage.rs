//! What a project settles about a run's findings (issue 18), after the proof and before the
//! outputs, in this order:
//!
//! 1. **Off** (`[off]` of the configuration): findings of a rule turned off, or of an obligation
//!    turned off (under any rule, QG003's naming it included), are removed; the report says once
//!    which it does not hold the graph to and why. QG312 (the engines disagree) cannot be turned
//!    off: it is about the verifier itself.
//! 2. **Accepted**: an `[[accept]]` entry (by fingerprint, or by rule with an optional subject
//!    and node) or a `# stalwart: accept QG105 -- reason` comment on the line a finding points at
//!    accepts it: the finding stays in the report with its reason and does not fail the gate. An
//!    entry whose `until` has passed accepts nothing. An accept that matches nothing, has expired,
//!    or (a comment) gives no reason is a warning naming it; under `strict-accepts` a warning
//!    fails the gate. QG312 is never accepted.
//! 3. **Below the shown severity** (`min-severity`): findings of a lower severity are not shown
//!    and do not fail the gate; the report counts them. QG312 is always shown.

mod comments;

use crate::base_ref::BaseRef;
use crate::config::{AcceptEntry, Config, Date, Matcher, Off};
use crate::findings::{AcceptKind, Acceptance, Finding};
use crate::report::{AcceptWarning, OffNote, Report};
use crate::source::Loc;

/// The marker of an in-source accept, after a `#`.
pub const MARKER: &str = "stalwart: accept";

/// Applies `config` to `report` (see the module's docs); `today` decides which `until` dates
/// have passed. `strict` is `strict-accepts`, from the command line or the configuration.
/// With `base` (`--base-ref`), an accept comment whose line the base does not have is the pull
/// request's own: it accepts nothing and is listed in [`crate::report::Triage::added_accepts`]
/// (SPEC 8.1).
pub fn apply(
    report: &mut Report,
    config: &Config,
    today: Date,
    strict: bool,
    base: Option<&BaseRef>,
) {
    report.triage.config = config.file.map(|f| report.sources.file(f).display.clone());
    report.triage.strict = strict;
    report.triage.undecided_pass = config.undecided_pass.clone();
    turn_off(report, config);
    accept_configured(report, &config.accepts, today);
    accept_in_source(report, base);
    if let Some(min) = config.min_severity {
        let before = report.findings.len();
        report
            .findings
            .retain(|f| f.always_shown() || f.severity <= min);
        report.triage.below = Some((min, before - report.findings.len()));
    }
}

fn turn_off(report: &mut Report, config: &Config) {
    for o in &config.off {
        let before = report.findings.len();
        let (id, what) = match o.what {
            Off::Rule(r) => {
                report.findings.retain(|f| f.rule != r || f.always_shown());
                if let Some(cc) = report.code_checks.as_mut() {
                    cc.findings.retain(|f| f.rule != r);
                }
                (r.to_string(), r.rule().title.clone())
            }
            Off::Obligation(ob) => {
                report
                    .findings
                    .retain(|f| f.obligation != Some(ob) || f.always_shown());
                (ob.as_str().to_string(), ob.describe().to_string())
            }
        };
        report.triage.off.push(OffNote {
            id,
            what,
            reason: o.reason.clone(),
            removed: before - report.findings.len(),
        });
    }
}

/// True when `m` names `f`.
fn matches(m: &Matcher, f: &Finding) -> bool {
    match m {
        Matcher::Fingerprint(fp) => f.fingerprint.starts_with(fp.as_str()),
        Matcher::Rule {
            rule,
            subject,
            node,
        } => {
            f.rule == *rule
                && subject.as_ref().is_none_or(|s| *s == f.subject)
                && node.as_ref().is_none_or(|n| Some(n) == f.node.as_ref())
        }
    }
}

fn describe(m: &Matcher) -> String {
    match m {
        Matcher::Fingerprint(fp) => format!("the accept of fingerprint {fp}"),
        Matcher::Rule {
            rule,
            subject,
            node,
        } => {
            let mut s = format!("the accept of {rule}");
            if let Some(x) = subject {
                s.push_str(&format!(" on {x}"));
            }
            if let Some(n) = node {
                s.push_str(&format!(" at {n}"));
            }
            s
        }
    }
}

fn accept_configured(report: &mut Report, accepts: &[AcceptEntry], today: Date) {
    for a in accepts {
        if let Some(until) = a.until.filter(|u| *u < today) {
            report.triage.warnings.push(AcceptWarning {
                at: a.loc,
                message: format!(
                    "{} expired on {until}: it accepts nothing now",
                    describe(&a.matcher)
                ),
            });
            continue;
        }
        let mut n = 0;
        for f in report
            .findings
            .iter_mut()
            .filter(|f| !f.always_shown() && matches(&a.matcher, f))
        {
            if f.accepted.is_none() {
                f.accepted = Some(Acceptance {
                    reason: a.reason.clone(),
                    kind: AcceptKind::External,
                    at: a.loc,
                    until: a.until.map(|u| u.to_string()),
                });
            }
            n += 1;
        }
        if n == 0 {
            report.triage.warnings.push(AcceptWarning {
                at: a.loc,
                message: format!("{} matches no finding", describe(&a.matcher)),
            });
        }
    }
}

/// An in-source accept: the rules it names and its reason (`None`: no `-- reason` given).
struct Comment {
    at: Loc,
    rules: Vec<String>,
    reason: Option<String>,
}

/// The accept comments of every file read: `# stalwart: accept QG105, QG101 -- reason`, in a
/// comment of a YAML or Python file ([`comments`]), never in a string or a name.
fn comments(report: &Report) -> Vec<Comment> {
    let mut out = Vec::new();
    for (id, f) in report.sources.files.iter().enumerate() {
        if !f.text.contains(MARKER) {
            continue;
        }
        for c in comments::of(&f.path.to_string_lossy(), &f.text) {
            let Some(rest) = c.text.trim_start().strip_prefix(MARKER) else {
                continue;
            };
            let (ids, reason) = match rest.split_once("--") {
                Some((ids, reason)) => (ids, Some(reason.trim().to_string())),
                None => (rest, None),
            };
            out.push(Comment {
                at: Loc::new(id, c.line, c.column),
                rules: ids
                    .split([',', ' '])
                    .filter(|s| !s.is_empty())
                    .map(str::to_ascii_uppercase)
                    .collect(),
                reason: reason.filter(|r| !r.is_empty()),
            });
        }
    }
    out
}

/// True when the line `at` (its text, trimmed) is in the base's copy of its file: the accept
/// comment on it was not added by the pull request.
fn in_base(report: &Report, base: &BaseRef, at: Loc) -> bool {
    let f = report.sources.file(at.file);
    let Some(line) = f.text.lines().nth(at.line as usize - 1) else {
        return false;
    };
    match base.text(&f.path) {
        Ok(Some(text)) => text.lines().any(|l| l.trim() == line.trim()),
        _ => false,
    }
}

fn accept_in_source(report: &mut Report, base: Option<&BaseRef>) {
    for c in comments(report) {
        if let Some(b) = base.filter(|b| !in_base(report, b, c.at)) {
            report.triage.added_accepts.push(AcceptWarning {
                at: c.at,
                message: format!(
                    "this pull request adds an accept comment for {}: it accepts nothing until \
                     it is on the base ({})",
                    if c.rules.is_empty() {
                        "no rule".to_string()
                    } else {
                        c.rules.join(", ")
                    },
                    b.short()
                ),
            });
            continue;
        }
        let Some(reason) = c.reason else {
            report.triage.warnings.push(AcceptWarning {
                at: c.at,
                message: format!(
                    "the accept comment gives no reason: write `# {MARKER} {} -- why`",
                    c.rules.join(", ")
                ),
            });
            continue;
        };
        if c.rules.is_empty() {
            report.triage.warnings.push(AcceptWarning {
                at: c.at,
                message: "the accept comment names no rule".into(),
            });
            continue;
        }
        let mut n = 0;
        for f in report.findings.iter_mut().filter(|f| {
            !f.always_shown()
                && c.rules.iter().any(|r| r == f.rule.as_str())
                && f.location
                    .line()
                    .is_some_and(|l| l.file == c.at.file && l.line == c.at.line)
        }) {
            if f.accepted.is_none() {
                f.accepted = Some(Acceptance {
                    reason: reason.clone(),
                    kind: AcceptKind::InSource,
                    at: c.at,
                    until: None,
                });
            }
            n += 1;
        }
        if n == 0 {
            report.triage.warnings.push(AcceptWarning {
                at: c.at,
                message: format!(
                    "the accept comment for {} matches no finding on this line",
                    c.rules.join(", ")
                ),
            });
        }
    }
}
