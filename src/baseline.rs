//! Baselines (issue 5): `--baseline OLD.sarif|OLD.json` reports only the findings whose
//! fingerprints are new, so a team can adopt the gate on an agent that already has findings and
//! fix them over time.
//!
//! A baseline is an earlier run's output, as written: a SARIF log (`runs[].results[]
//! .partialFingerprints["stalwartFingerprint/v1"]`) or the JSON report (`findings[].fingerprint`).
//! Fingerprints hash the rule, obligation, subject and qualified node (SPEC 7), never lines or file
//! contents, so a finding stays known across unrelated edits. A finding is hidden when its
//! fingerprint is in the baseline, except QG312 (the engines disagree): that one is about the
//! verifier itself and is always shown. The gate is decided on what is left; the report says how
//! many known findings it hid.

use std::collections::BTreeSet;
use std::path::Path;

use crate::findings::FINGERPRINT_KEY;
use crate::report::{BaselineInfo, Report};

/// The fingerprints an earlier run reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// The file, as the user named it.
    pub path: String,
    /// Its findings' fingerprints.
    pub fingerprints: BTreeSet<String>,
}

/// Why a baseline could not be read: the message (naming the file) and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineError {
    /// What went wrong, naming the file (and line, for JSON that does not parse).
    pub message: String,
    /// What to do.
    pub help: String,
}

/// Reads a baseline: an earlier `--format sarif` or `--format json` output.
///
/// # Errors
/// The file cannot be read, is not JSON, or is neither a SARIF log nor a stalwart JSON report.
pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
    let shown = path.display().to_string();
    let help = "give the SARIF or JSON an earlier `stalwart verify` wrote (--sarif FILE, or --format json)";
    let err = |message: String| BaselineError {
        message,
        help: help.to_string(),
    };
    let text = crate::files::read_text(path)
        .map_err(|e| err(format!("cannot read the baseline {shown}: {e}")))?;
    // Only the fingerprints are kept: the rest of the document is skipped as it is parsed, so a
    // large baseline costs little more memory than its text.
    let doc: Doc = serde_json::from_str(&text).map_err(|e| {
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
    let mut fingerprints = BTreeSet::new();
    if let Some(runs) = doc.runs {
        for result in runs.into_iter().flat_map(|r| r.results.unwrap_or_default()) {
            let fp = result
                .partial_fingerprints
                .and_then(|mut p| p.remove(FINGERPRINT_KEY));
            if let Some(serde_json::Value::String(fp)) = fp {
                fingerprints.insert(fp);
            }
        }
    } else if let Some(findings) = doc.findings {
        for f in findings {
            match f.fingerprint {
                Some(fp) => {
                    fingerprints.insert(fp);
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
}

#[derive(serde::Deserialize)]
struct JsonFinding {
    fingerprint: Option<String>,
}

/// Hides the findings of `report` that `baseline` already has (never one of an `always_shown`
/// rule, QG312), and records how many.
///
/// The hidden findings move to [`Report::known`]: SARIF still writes them, with
/// `baselineState: "unchanged"`, so uploading the log does not close their alerts.
pub fn apply(report: &mut Report, baseline: &Baseline) {
    let (known, new): (Vec<_>, Vec<_>) = std::mem::take(&mut report.findings)
        .into_iter()
        .partition(|f| !f.always_shown() && baseline.fingerprints.contains(&f.fingerprint));
    report.findings = new;
    report.baseline = Some(BaselineInfo {
        path: baseline.path.clone(),
        known: known.len(),
    });
    report.known = known;
}
