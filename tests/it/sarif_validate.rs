//! Every SARIF the verifier writes for the fixtures, the shop and the corpus passes
//! `../shared/sarif/validate-sarif`: the SARIF 2.1.0 schema GitHub validates with, and Microsoft's
//! SARIF multitool with GitHub's ingestion rules. Skipped, saying so, without `../shared`.

use crate::common;

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
/// The batch still finds one bad run among good ones: a result whose `level` SARIF does not have.
#[test]
fn a_bad_run_in_the_batch_is_found() {
    let Some(shared) = common::shared("a_bad_run_in_the_batch_is_found") else {
        return;
    };
    let script = shared.join("sarif/validate-sarif");
    if !script.exists() {
        common::skip("skipped a_bad_run_in_the_batch_is_found: no validate-sarif");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let report = common::report(&common::root().join("fixtures/shop-plain"));
    let good = stalwart::output::sarif::render(&report, Some(&common::root()));
    let mut bad: serde_json::Value = serde_json::from_str(&good).expect("json");
    bad["runs"][0]["results"][0]["level"] = "fatal".into();
    let (a, b) = (dir.path().join("good.sarif"), dir.path().join("bad.sarif"));
    std::fs::write(&a, &good).expect("write");
    std::fs::write(&b, bad.to_string()).expect("write");
    let (ok, text) = validate(&script, &[a.clone(), b, a]);
    assert!(!ok, "the bad run passed:\n{text}");
    assert!(text.contains("/runs/1/results/0/level"), "{text}");
    assert!(text.contains("/runs/1 is bad.sarif"), "{text}");
}

/// Runs the validator once over `files` (issue 31: it starts three processes a file, so 100 files
/// took minutes): the files' runs are put into one SARIF log, in order, which the schema and the
/// multitool check run by run as they would check each file. The text names each run's file, so
/// a problem at `/runs/N` is found in its case.
fn validate(script: &std::path::Path, files: &[std::path::PathBuf]) -> (bool, String) {
    let mut runs = Vec::new();
    let mut names = String::new();
    let mut first: Option<serde_json::Value> = None;
    for f in files {
        let text = std::fs::read_to_string(f).expect("read the SARIF");
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("the SARIF is JSON");
        for r in v["runs"]
            .as_array_mut()
            .map(std::mem::take)
            .unwrap_or_default()
        {
            names.push_str(&format!(
                "/runs/{} is {}\n",
                runs.len(),
                f.file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned())
            ));
            runs.push(r);
        }
        first.get_or_insert(v);
    }
    let mut log = first.expect("at least one SARIF file");
    log["runs"] = serde_json::Value::Array(runs);
    let dir = tempfile::tempdir().expect("tempdir");
    let all = dir.path().join("all.sarif");
    std::fs::write(&all, log.to_string()).expect("write");
    let out = Command::new("bash")
        .arg(script)
        .arg(&all)
        .output()
        .expect("run validate-sarif");
    let text = format!(
        "{}{}{names}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
