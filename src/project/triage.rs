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
//!    and do not fail the gate; the report counts them. QG312 is always shown, and so is QG006
//!    (an undecided region: SPEC 8.1 lists each, and one of a gate-failing rule fails the gate).

mod comments;

use crate::findings::{AcceptKind, Acceptance, Finding};
use crate::input::source::Loc;
use crate::project::base_ref::BaseRef;
use crate::project::config::{AcceptEntry, Config, Date, Matcher, Off};
use crate::report::{AcceptWarning, OffNote, Report};

/// The marker of an in-source accept, after a `#`.
pub(crate) const MARKER: &str = "stalwart: accept";

/// Applies `config` to `report` (see the module's docs); `today` decides which `until` dates
/// have passed. `strict` is `strict-accepts`, from the command line or the configuration.
/// With `base` (`--base-ref`), an accept comment whose line the base does not have is the pull
/// request's own: it accepts nothing and is listed in [`crate::report::Triage::added_accepts`]
/// (SPEC 8.1).
pub(crate) fn apply(
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
        // An undecided region (QG006) is never below the shown severity: it is listed among
        // the weakenings, and an undecided obligation of a gate-failing rule fails the gate
        // (SPEC 8.1), whatever `min-severity` says.
        report.findings.retain(|f| {
            f.always_shown() || f.severity <= min || f.rule == crate::rules::RuleId::QG006
        });
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

fn accept_configured(report: &mut Report, accepts: &[AcceptEntry], today: Date) {
    for a in accepts {
        if let Some(until) = a.until.filter(|u| *u < today) {
            report.triage.warnings.push(AcceptWarning {
                at: a.loc,
                message: format!(
                    "the accept of {} expired on {until}: it accepts nothing now",
                    a.matcher
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
                message: format!("the accept of {} matches no finding", a.matcher),
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

/// The most cells the line-matching table of [`matched`] may take; past it the lines between the
/// files' common start and end are all the pull request's (an accept there is named, never
/// passed).
const MAX_TABLE: usize = 4_000_000;

/// For each line of `head`, the index of the line of `base` it is (unchanged), as a diff pairs
/// them: the common first and last lines, and between them a longest common subsequence of
/// lines (`None`: the line is new, or changed).
fn matched(head: &[&str], base: &[&str]) -> Vec<Option<usize>> {
    let mut out = vec![None; head.len()];
    let pre = head.iter().zip(base).take_while(|(h, b)| h == b).count();
    let suf = head[pre..]
        .iter()
        .rev()
        .zip(base[pre..].iter().rev())
        .take_while(|(h, b)| h == b)
        .count();
    for (i, o) in out.iter_mut().enumerate().take(pre) {
        *o = Some(i);
    }
    for k in 0..suf {
        out[head.len() - 1 - k] = Some(base.len() - 1 - k);
    }
    let (h, b) = (&head[pre..head.len() - suf], &base[pre..base.len() - suf]);
    if (h.len() + 1).saturating_mul(b.len() + 1) > MAX_TABLE {
        return out;
    }
    // common[i * w + j]: the longest common subsequence of h[i..] and b[j..].
    let w = b.len() + 1;
    let mut common = vec![0u32; (h.len() + 1) * w];
    for i in (0..h.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i * w + j] = if h[i] == b[j] {
                common[(i + 1) * w + j + 1] + 1
            } else {
                common[(i + 1) * w + j].max(common[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < h.len() && j < b.len() {
        if h[i] == b[j] {
            out[pre + i] = Some(pre + j);
            i += 1;
            j += 1;
        } else if common[(i + 1) * w + j] >= common[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// For each of `found` (the accept comments, in file and line order), true when the base's copy
/// of its file does not have it: its line is not one the base has unchanged (the files' lines
/// paired as a diff pairs them), or the base's line carries no accept comment there. A line of
/// the base copied to a new place, or text the base has only in a string or a block scalar, is
/// the pull request's own (SPEC 8.1).
fn added_by_pull_request(report: &Report, base: &BaseRef, found: &[Comment]) -> Vec<bool> {
    let mut added = vec![true; found.len()];
    let mut start = 0;
    while start < found.len() {
        let file = found[start].at.file;
        let end = start
            + found[start..]
                .iter()
                .take_while(|c| c.at.file == file)
                .count();
        let f = report.sources.file(file);
        if let Ok(Some(text)) = base.text(&f.path) {
            let path = f.path.to_string_lossy();
            let was: std::collections::BTreeSet<u32> = comments::of(&path, &text)
                .into_iter()
                .filter(|c| c.text.trim_start().starts_with(MARKER))
                .map(|c| c.line)
                .collect();
            let (now, then) = (comments::normalize(&f.text), comments::normalize(&text));
            let head: Vec<&str> = now.lines().collect();
            let pairs = matched(&head, &then.lines().collect::<Vec<_>>());
            for (k, c) in found.iter().enumerate().take(end).skip(start) {
                let at_base = pairs.get(c.at.line as usize - 1).copied().flatten();
                added[k] = !at_base.is_some_and(|b| was.contains(&(b as u32 + 1)));
            }
        }
        start = end;
    }
    added
}

fn accept_in_source(report: &mut Report, base: Option<&BaseRef>) {
    let found = comments(report);
    let added = base.map(|b| added_by_pull_request(report, b, &found));
    for (k, c) in found.into_iter().enumerate() {
        if let Some(b) = base.filter(|_| added.as_ref().is_some_and(|a| a[k])) {
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
