//! Compiles that explode (issue 14, item 4): the crafted rulebooks of the issue, written by the
//! test, each stopped by its budget (SPEC 5, `src/rulebook/budget.rs`) with a QG005 at the line
//! that crossed it, naming the budget and the flag that raises it. (Their memory is measured, not
//! tested: `BENCHMARKS.md`, "Rulebook budgets".)
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::process::Command;

/// The agent beside each crafted policy: one agent, the refund its rulebook governs.
const AGENT: &str = "\
agents:
  desk:
    model: \"anthropic:claude-sonnet-5-5\"
    tools: [get_order, refund_card]
    on_unread: refuse
tools:
  - catalogue: ./catalogue.yaml
rulebook: ./policy.co
facts:
  order_paid: {from: get_order.status == paid, same: order_id}
budget: {steps: 20}
";

/// `if $a and $a ...` with 50,000 terms.
fn wide_condition() -> String {
    let terms = vec!["$a"; 50_000].join(" and ");
    format!("define flow main\n  user said hi\n  if {terms}\n    execute refund_card\n")
}

/// `n` flows, each running the next twice with `do`: 2^n inlined runs.
fn doubling_flows(n: usize) -> String {
    let mut s = String::from("define flow main\n  user said hi\n  do f0\n");
    for i in 0..n {
        s.push_str(&format!("\ndefine subflow f{i}\n"));
        if i + 1 < n {
            s.push_str(&format!("  do f{}\n  do f{}\n", i + 1, i + 1));
        } else {
            s.push_str("  execute refund_card\n");
        }
    }
    s
}

/// `n` subflows of `if`/`else` each doing the next: a few KB whose record once took 577 MB.
fn if_else_chains(n: usize) -> String {
    let mut s = String::from("define flow main\n  user said hi\n  do s0\n");
    for i in 0..n {
        s.push_str(&format!("\ndefine subflow s{i}\n"));
        if i + 1 < n {
            s.push_str(&format!(
                "  if $x{i}\n    do s{}\n  else\n    do s{}\n",
                i + 1,
                i + 1
            ));
        } else {
            s.push_str("  execute refund_card\n");
        }
    }
    s
}

/// Verifies the agent with `policy` as its rulebook; returns (exit, the QG005 findings as
/// (line, message), stderr).
fn verify(dir: &Path, policy: &str, extra: &[&str]) -> (i32, Vec<(u64, String)>, String) {
    let fixture = common::root().join("fixtures/QG005/breaks-syntax-error/catalogue.yaml");
    std::fs::copy(fixture, dir.join("catalogue.yaml")).unwrap();
    std::fs::write(dir.join("agent.yaml"), AGENT).unwrap();
    std::fs::write(dir.join("policy.co"), policy).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stalwart"))
        .args(["verify", "agent.yaml", "--format", "json"])
        .args(extra)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"));
    let qg005 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "QG005")
        .map(|f| {
            (
                f["location"]["line"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), qg005, stderr)
}

/// The one QG005 of a run, which must name `budget` and `flag` at `line` and fail the gate.
fn stopped_at(
    case: &str,
    run: (i32, Vec<(u64, String)>, String),
    line: u64,
    budget: &str,
    flag: &str,
) {
    let (code, found, stderr) = run;
    assert_eq!(code, 1, "{case}: the gate fails on QG005 ({stderr})");
    assert_eq!(found.len(), 1, "{case}: one QG005, got {found:?}");
    let (at, message) = &found[0];
    assert_eq!(*at, line, "{case}: at the line that crossed it: {message}");
    assert!(
        message.contains(&format!("past its {budget} budget")),
        "{case}: names the budget: {message}"
    );
    assert!(message.contains(flag), "{case}: names {flag}: {message}");
}

#[test]
fn each_crafted_rulebook_is_stopped_by_its_budget_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 50,000 terms: the condition-size budget, at the `if`.
    stopped_at(
        "wide condition",
        verify(d, &wide_condition(), &[]),
        3,
        "condition-size",
        "--rulebook-max-condition",
    );
    // 40 flows each doing the next twice: the inlining-depth budget (12), at the `do` that
    // goes 13 deep (f11's first line: main is lines 1-3, each flow 4 lines after a blank).
    stopped_at(
        "doubling flows",
        verify(d, &doubling_flows(40), &[]),
        46,
        "inlining-depth",
        "--rulebook-max-depth",
    );
    // The if/else chains, likewise at their depth.
    stopped_at(
        "if/else chains",
        verify(d, &if_else_chains(30), &[]),
        67,
        "inlining-depth",
        "--rulebook-max-depth",
    );
    // With the depth raised to its most (32), 2^29 inlined runs: the record-size budget stops the
    // compile at the execute that crossed it, long before memory runs out.
    let (code, found, stderr) = verify(d, &doubling_flows(30), &["--rulebook-max-depth", "32"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].1.contains("past its record-size budget")
            && found[0].1.contains("--rulebook-max-record-bytes"),
        "{found:?}"
    );
    assert_eq!(found[0].0, 122, "at f29's execute: {found:?}");
}
