//! Baselines (issue 5): `--baseline OLD.sarif|OLD.json` reports only the findings whose
//! fingerprints are new, so a team can adopt the gate on an agent that already has findings and
//! fix them over time.
//!
//! A baseline is an earlier run's output, as written: a SARIF log (`runs[].results[]
//! .partialFingerprints["stalwartFingerprint/v1"]`) or the JSON report (`findings[].fingerprint`).
//! Fingerprints hash the rule, obligation, subject and qualified node (SPEC 7), never lines or file
//! contents, so a finding stays known across unrelated edits. A finding is hidden when its
//! fingerprint is in the baseline, except QG312 (the engines disagree): that one is about the
//! verifier itself and is always shown, and except a finding that got worse since (SPEC 8.1): its
//! severity rose (a read's Medium is now a destructive write's Critical), or it now fails the
//! gate where the baseline's did not. A baseline entry that does not say its severity or whether
//! it blocked (not written by this verifier) cannot show that nothing got worse, so it hides
//! nothing. The gate is decided on what is left; the report says how many known findings it hid.

use std::collections::BTreeMap;
use std::path::Path;

use crate::findings::{Finding, Severity, FINGERPRINT_KEY};
use crate::report::{BaselineInfo, Report};

/// What a baseline says of one finding: enough to tell whether it got worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Known {
    /// Its severity then (`None`: the baseline does not say).
    pub(crate) severity: Option<Severity>,
    /// Whether it failed the gate then (`None`: the baseline does not say).
    pub(crate) blocked: Option<bool>,
}

/// The findings an earlier run reported, by fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Baseline {
    /// The file, as the user named it.
    pub(crate) path: String,
    /// Its findings, by fingerprint.
    pub(crate) fingerprints: BTreeMap<String, Known>,
}

/// Why a baseline could not be read: the message (naming the file) and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BaselineError {
    /// What went wrong, naming the file (and line, for JSON that does not parse).
    pub(crate) message: String,
    /// What to do.
    pub(crate) help: String,
}

/// The fix every baseline error gives.
const HELP: &str =
    "give the SARIF or JSON an earlier `stalwart verify` wrote (--sarif FILE, or --format json)";

/// Reads a baseline: an earlier `--format sarif` or `--format json` output.
///
/// # Errors
/// The file cannot be read, is not JSON, or is neither a SARIF log nor a stalwart JSON report.
pub(crate) fn read(path: &Path) -> Result<Baseline, BaselineError> {
    let shown = path.display().to_string();
    let err = |message: String| BaselineError {
        message,
        help: HELP.to_string(),
    };
    let text = crate::input::files::read_text(path)
        .map_err(|e| err(format!("cannot read the baseline {shown}: {e}")))?;
    parse(shown, &text)
}

/// Reads a baseline from `text`, shown as `shown` (also for the copy a git revision holds,
/// `--base-ref`).
///
/// # Errors
/// The text is not JSON, or is neither a SARIF log nor a stalwart JSON report.
pub(crate) fn parse(shown: String, text: &str) -> Result<Baseline, BaselineError> {
    let err = |message: String| BaselineError {
        message,
        help: HELP.to_string(),
    };
    // Only the fingerprints are kept: the rest of the document is skipped as it is parsed, so a
    // large baseline costs little more memory than its text.
    let doc: Doc = serde_json::from_str(text).map_err(|e| {
        let what = if e.is_data() {
            "is not a SARIF log or a stalwart JSON report"
        } else {
            "is not JSON"
        };
        err(format!(
            "the baseline {shown} {what} (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })?;
    let mut fingerprints = BTreeMap::new();
    if let Some(runs) = doc.runs {
        for result in runs.into_iter().flat_map(|r| r.results.unwrap_or_default()) {
            let fp = result
                .partial_fingerprints
                .and_then(|mut p| p.remove(FINGERPRINT_KEY));
            if let Some(serde_json::Value::String(fp)) = fp {
                let severity = result
                    .properties
                    .as_ref()
                    .and_then(|p| p.get("severity"))
                    .and_then(|v| v.as_str())
                    .and_then(Severity::parse);
                // A suppressed (accepted) result did not block, whatever its level says.
                let suppressed = result.suppressions.as_ref().is_some_and(|s| !s.is_empty());
                let blocked = result.level.as_deref().map(|l| l == "error" && !suppressed);
                fingerprints.insert(fp, Known { severity, blocked });
            }
        }
    } else if let Some(findings) = doc.findings {
        for f in findings {
            match f.fingerprint {
                Some(fp) => {
                    let severity = f.severity.as_deref().and_then(Severity::parse);
                    fingerprints.insert(
                        fp,
                        Known {
                            severity,
                            blocked: f.blocks,
                        },
                    );
                }
                None => {
                    return Err(err(format!(
                        "the baseline {shown} has a finding without a fingerprint"
                    )))
                }
            }
        }
    } else {
        return Err(err(format!(
            "the baseline {shown} is neither a SARIF log (no `runs`) nor a stalwart JSON report (no `findings`)"
        )));
    }
    Ok(Baseline {
        path: shown,
        fingerprints,
    })
}

/// The parts of a SARIF log or a JSON report a baseline reads; everything else is skipped.
#[derive(serde::Deserialize)]
struct Doc {
    runs: Option<Vec<Run>>,
    findings: Option<Vec<JsonFinding>>,
}

#[derive(serde::Deserialize)]
struct Run {
    results: Option<Vec<SarifResult>>,
}

#[derive(serde::Deserialize)]
struct SarifResult {
    #[serde(rename = "partialFingerprints")]
    partial_fingerprints: Option<std::collections::BTreeMap<String, serde_json::Value>>,
    level: Option<String>,
    properties: Option<serde_json::Map<String, serde_json::Value>>,
    suppressions: Option<Vec<serde_json::Value>>,
}

#[derive(serde::Deserialize)]
struct JsonFinding {
    fingerprint: Option<String>,
    severity: Option<String>,
    blocks: Option<bool>,
}

/// True when the baseline's record of `f` shows it no worse now: the same or a lower severity,
/// and not failing the gate now unless it did then.
fn no_worse(report: &Report, f: &Finding, then: &Known) -> bool {
    let (Some(severity), Some(blocked)) = (then.severity, then.blocked) else {
        return false;
    };
    // Critical sorts first: a smaller severity is a worse one.
    f.severity >= severity && (blocked || !report.blocks(f))
}

/// Hides the findings of `report` that `baseline` already has (never one of an `always_shown`
/// rule, QG312), and records how many.
///
/// The hidden findings move to [`Report::known`]: SARIF still writes them, with
/// `baselineState: "unchanged"`, so uploading the log does not close their alerts.
pub(crate) fn apply(report: &mut Report, baseline: &Baseline) {
    let (known, new): (Vec<_>, Vec<_>) = std::mem::take(&mut report.findings)
        .into_iter()
        .partition(|f| {
            !f.always_shown()
                && baseline
                    .fingerprints
                    .get(&f.fingerprint)
                    .is_some_and(|then| no_worse(report, f, then))
        });
    report.findings = new;
    report.baseline = Some(BaselineInfo {
        path: baseline.path.clone(),
        known: known.len(),
    });
    report.known = known;
}
