//! Every SARIF the verifier writes for the fixtures, the shop and the corpus passes
//! `../shared/sarif/validate-sarif`: the SARIF 2.1.0 schema GitHub validates with, and Microsoft's
//! SARIF multitool with GitHub's ingestion rules. Skipped, saying so, without `../shared`.

mod common;

use std::process::Command;

#[test]
fn every_fixture_sarif_validates() {
    let Some(shared) = common::shared("every_fixture_sarif_validates") else {
        return;
    };
    let script = shared.join("sarif/validate-sarif");
    if !script.exists() {
        common::skip(&format!(
            "skipped every_fixture_sarif_validates: {} is not here",
            script.display()
        ));
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    let mut dirs: Vec<_> = common::cases().into_iter().map(|(_, d)| d).collect();
    dirs.push(common::root().join("fixtures/shop"));
    dirs.push(common::root().join("fixtures/shop-plain"));
    // A LangGraph export: the rules' help gives the LangGraph fix.
    dirs.push(common::root().join("fixtures/langgraph-plain"));
    // Python tool modules: the code checks' rules, and their results.
    dirs.push(common::root().join("fixtures/shop-python"));
    dirs.push(common::root().join("fixtures/code-checks"));
    for (i, d) in dirs.iter().enumerate() {
        let report = common::report(d);
        let sarif = stalwart::output::sarif::render(&report, Some(&common::root()));
        let p = dir.path().join(format!("case{i}.sarif"));
        std::fs::write(&p, sarif).expect("write");
        files.push(p);
    }
    let (ok, text) = validate(&script, &files);
    assert!(ok, "validate-sarif found problems:\n{text}");
    assert!(
        !text.contains("error"),
        "validate-sarif reported an error:\n{text}"
    );
}

/// The SARIF of issue 18's snapshots - accepted results with `suppressions`, known results with
/// `baselineState` - passes the validator too.
#[test]
fn suppressions_and_baseline_states_validate() {
    let Some(shared) = common::shared("suppressions_and_baseline_states_validate") else {
        return;
    };
    let script = shared.join("sarif/validate-sarif");
    if !script.exists() {
        common::skip("skipped suppressions_and_baseline_states_validate: no validate-sarif");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for name in ["project-accepted.sarif", "project-baseline.sarif"] {
        let snap = std::fs::read_to_string(
            common::root()
                .join("snapshots")
                .join(format!("{name}.snap")),
        )
        .expect("the snapshot is there");
        // An insta snapshot: a `---` header, then the document.
        let body = snap.splitn(3, "---\n").nth(2).expect("a snapshot body");
        assert!(body.contains(if name.contains("accepted") {
            "\"suppressions\""
        } else {
            "\"baselineState\""
        }));
        let p = dir.path().join(name);
        std::fs::write(&p, body).expect("write");
        files.push(p);
    }
    let (ok, text) = validate(&script, &files);
    assert!(ok && !text.contains("error"), "validate-sarif:\n{text}");
}

/// Runs `validate-sarif` on `files`: whether it passed, and all it printed.
fn validate(script: &std::path::Path, files: &[std::path::PathBuf]) -> (bool, String) {
    let out = Command::new("bash")
        .arg(script)
        .args(files)
        .output()
        .expect("run validate-sarif");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
