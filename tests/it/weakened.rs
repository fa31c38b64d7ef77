//! Issue 26, item 2 (SPEC 8.1), attacked the way a pull request would: a `stalwart.toml` that
//! starves the engines, `[off]` and `[[accept]]` entries, an accept marker in a string or added
//! beside the pull request's own finding, a baseline that hides a finding that got worse. Each
//! test writes the pull request's files into a repository of its own and runs the real binary.
//!
//! What must hold: an obligation of a gate-failing rule that no engine decided fails the gate
//! (unless `undecided = "pass"` with a reason); every weakening is said in every output; under
//! `--base-ref` the base's configuration and baseline apply and each change is named, not
//! applied; an accept marker counts only in a comment; a baseline hides only findings no worse.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{git, stalwart_in as run_in};

use std::path::Path;

use serde_json::Value;

/// The plain shop (it fails the gate: QG001 on desk's tools, QG011, QG013) as the base commit of
/// a repository of its own; returns the folder and the base's commit id.
fn plain_shop_repo() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let from = common::root().join("fixtures/shop-plain");
    for f in ["graph.json", "catalogue.json", "agent.yaml"] {
        std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    let base = git(dir.path(), &["rev-parse", "HEAD"]);
    (dir, base)
}

const PLAIN: [&str; 4] = ["--graph", "graph.json", "--catalogue", "catalogue.json"];

fn json_run(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    args.extend(["--format", "json"]);
    args.extend(extra);
    let r = run_in(dir, &args);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    (r.code, serde_json::from_str(&r.stdout).unwrap())
}

fn kinds(j: &Value) -> Vec<String> {
    j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

fn messages(j: &Value) -> String {
    j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The plain shop fails the gate on its routes. Starved of states and of Z3's resource units
/// (or run on one engine, so nothing cross-checks), its obligations are undecided instead of
/// violated, and an undecided obligation of a gate-failing rule fails the gate: a pull request
/// cannot turn the gate green by starving the engines.
#[test]
fn a_starved_search_still_fails_the_gate() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    for starve in [
        "max-states = 1\nengine = \"explicit\"\n",
        "engine = \"z3\"\nsolver-max-unrolling = 1\n",
        "engine = \"z3\"\nsolver-rlimit = 1\n",
        "max-states = 1\nsolver-rlimit = 1\n",
    ] {
        std::fs::write(dir.join("stalwart.toml"), starve).unwrap();
        let (code, j) = json_run(dir, &[]);
        assert_eq!(code, 1, "{starve}");
        let blocking: Vec<&Value> = j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["blocks"] == true)
            .collect();
        assert!(!blocking.is_empty(), "{starve}");
        assert!(
            blocking.iter().all(|f| f["rule"] == "QG006"),
            "{starve}: only the undecided obligations block: {blocking:?}"
        );
        let k = kinds(&j);
        assert!(k.contains(&"undecided".to_string()), "{starve}: {k:?}");
        // The limit is named at its line of the configuration.
        let limit = j["weakened"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == "limit")
            .unwrap();
        assert_eq!(limit["location"]["file"], "stalwart.toml", "{starve}");
    }
    // With the defaults: the same agent's real findings, and nothing weakened.
    std::fs::remove_file(dir.join("stalwart.toml")).unwrap();
    let (code, j) = json_run(dir, &[]);
    assert_eq!(code, 1);
    assert_eq!(j["weakened"], serde_json::json!([]));
    assert!(j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["rule"] != "QG006"));
}

/// `undecided = "pass"` lets an undecided obligation pass, only with a reason, and says so.
#[test]
fn undecided_passes_only_when_the_configuration_says_why() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    let cfg = dir.join("stalwart.toml");
    std::fs::write(
        &cfg,
        "max-states = 1\nengine = \"explicit\"\nundecided = \"pass\"\n",
    )
    .unwrap();
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    args.extend(["--format", "json"]);
    let r = run_in(dir, &args);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("without a reason"), "{}", r.stderr);
    assert!(r.stderr.contains("stalwart.toml:3"), "{}", r.stderr);
    std::fs::write(
        &cfg,
        "max-states = 1\nengine = \"explicit\"\nundecided = \"pass\"\nundecided-reason = \"the nightly job runs the full search\"\n",
    )
    .unwrap();
    let r = run_in(dir, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    let k = kinds(&j);
    assert!(k.contains(&"undecided_pass".to_string()), "{k:?}");
    assert!(messages(&j).contains("the nightly job runs the full search"));
    assert_eq!(
        k.iter().filter(|x| *x == "undecided").count(),
        j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "QG006")
            .count()
    );
}

/// Under `--base-ref`, a pull request's new `[off]`, `[[accept]]` and lowered limit are named at
/// their lines and not applied: the base's configuration decides the gate.
#[test]
fn a_pull_requests_configuration_is_named_not_applied() {
    let (repo, base) = plain_shop_repo();
    let dir = repo.path();
    let (code, before) = json_run(dir, &["--base-ref", &base]);
    assert_eq!(code, 1);
    let blocking_before = before["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["blocks"] == true)
        .count();
    std::fs::write(
        dir.join("stalwart.toml"),
        "max-states = 1\nengine = \"explicit\"\n\n[off]\nO1 = \"a pull request says so\"\nQG011 = \"so does this\"\n\n[[accept]]\nrule = \"QG013\"\nreason = \"accepted by the pull request itself\"\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "weaken the gate"]);
    // Without the base, the pull request's configuration would apply (what the Action prevents).
    let (_, unguarded) = json_run(dir, &[]);
    assert!(kinds(&unguarded).contains(&"off".to_string()));
    // With it: the same blocking findings as the base, and each change named at its line.
    let (code, j) = json_run(dir, &["--base-ref", &base]);
    assert_eq!(code, 1);
    let blocking = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["blocks"] == true)
        .count();
    assert_eq!(blocking, blocking_before);
    let pr: Vec<&Value> = j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "pull_request")
        .collect();
    let lines: Vec<(u64, bool)> = pr
        .iter()
        .map(|w| {
            (
                w["location"]["line"].as_u64().unwrap(),
                w["location"]["file"].as_str().unwrap() == "stalwart.toml",
            )
        })
        .collect();
    assert_eq!(
        lines,
        vec![(2, true), (1, true), (5, true), (6, true), (8, true)],
        "{pr:?}"
    );
    let said = messages(&j);
    assert!(said.contains("turns off O1"), "{said}");
    assert!(said.contains("sets `max-states = 1`"), "{said}");
    assert!(said.contains("accepts QG013"), "{said}");
    assert!(!kinds(&j).contains(&"off".to_string()), "not applied");
    // A base revision the clone does not have is an error that says how to fetch it.
    let r = run_in(
        dir,
        &[
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
            "--base-ref",
            "0123456789012345678901234567890123456789",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("git fetch"), "{}", r.stderr);
    let r = run_in(
        dir,
        &[
            "verify",
            PLAIN[0],
            PLAIN[1],
            PLAIN[2],
            PLAIN[3],
            "--base-ref=--output=x",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(!dir.join("x").exists());
}

/// An accept comment the pull request adds beside its own finding accepts nothing under
/// `--base-ref` and is named; one the base already has still accepts.
#[test]
fn an_accept_comment_the_pull_request_adds_is_named_not_applied() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    let yaml = std::fs::read_to_string(dir.join("agent.yaml")).unwrap();
    let line5 = "    tools: [get_order, charge_card, send_receipt, read_inbox]";
    assert_eq!(yaml.lines().nth(4), Some(line5));
    let accepted = yaml.replace(
        line5,
        &format!("{line5} # stalwart: accept QG001 -- reviewed by the desk team"),
    );
    std::fs::write(dir.join("agent.yaml"), &accepted).unwrap();
    git(dir, &["commit", "-qam", "base with an accept"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    let accepted_qg001 = |j: &Value| {
        j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "QG001" && f.get("accepted").is_some())
            .count()
    };
    let (_, j) = json_run(dir, &["--base-ref", &base]);
    assert_eq!(accepted_qg001(&j), 4, "the base's comment accepts");
    // The pull request widens the comment to QG011 as well: the line is not the base's, so the
    // comment accepts nothing (not even the QG001 it accepted before) and is named.
    let pr = accepted.replace(
        "accept QG001 -- reviewed by the desk team",
        "accept QG001, QG011 -- reviewed by the desk team",
    );
    std::fs::write(dir.join("agent.yaml"), pr).unwrap();
    let (code, j) = json_run(dir, &["--base-ref", &base]);
    assert_eq!(code, 1);
    assert!(j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f.get("accepted").is_none()));
    let pr: Vec<&Value> = j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "pull_request")
        .collect();
    assert_eq!(pr.len(), 1, "{pr:?}");
    assert_eq!(pr[0]["location"]["line"], 5);
    assert!(pr[0]["message"]
        .as_str()
        .unwrap()
        .contains("adds an accept comment for QG001, QG011"));
    // Without --base-ref the comment applies (the Action always gives the base).
    let (_, j) = json_run(dir, &[]);
    assert!(j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "QG011" && f.get("accepted").is_some()));
}

/// An accept marker counts only in a comment: in a quoted string on the finding's line it
/// accepts nothing.
#[test]
fn an_accept_marker_in_a_string_accepts_nothing() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    let yaml = std::fs::read_to_string(dir.join("agent.yaml")).unwrap();
    let line5 = "    tools: [get_order, charge_card, send_receipt, read_inbox]";
    for (text, n) in [
        (
            "    tools: [get_order, charge_card, send_receipt, \"read_inbox # stalwart: accept QG001 -- in a string\"]",
            0,
        ),
        (
            "    tools: [get_order, charge_card, send_receipt, read_inbox]#stalwart: accept QG001 -- no space before",
            0,
        ),
        (
            "    tools: [get_order, charge_card, send_receipt, read_inbox] # stalwart: accept QG001 -- a comment",
            4,
        ),
    ] {
        std::fs::write(dir.join("agent.yaml"), yaml.replace(line5, text)).unwrap();
        let (_, j) = json_run(dir, &[]);
        let accepted = j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f.get("accepted").is_some())
            .count();
        assert_eq!(accepted, n, "{text}");
    }
}

/// A baseline hides a finding only when it is no worse: the read `get_order` made an
/// irreversible, destructive write raises its QG001 from Medium to Critical, and it is shown.
#[test]
fn a_baseline_does_not_hide_a_finding_that_got_worse() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    let r = run_in(
        dir,
        &[
            "verify",
            PLAIN[0],
            PLAIN[1],
            PLAIN[2],
            PLAIN[3],
            "--sarif",
            "old.sarif",
        ],
    );
    assert_eq!(r.code, 1);
    let (code, j) = json_run(dir, &["--baseline", "old.sarif"]);
    assert_eq!(code, 0, "everything is known");
    assert_eq!(j["findings"].as_array().unwrap().len(), 0);
    let mut cat: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("catalogue.json")).unwrap())
            .unwrap();
    cat["tools"]["get_order"]["kind"] = "write".into();
    cat["tools"]["get_order"]["irreversible"] = true.into();
    cat["tools"]["get_order"]["destructive"] = true.into();
    std::fs::write(
        dir.join("catalogue.json"),
        serde_json::to_string_pretty(&cat).unwrap(),
    )
    .unwrap();
    for baseline in ["old.sarif", "old.json"] {
        if baseline == "old.json" {
            git(dir, &["stash", "-q"]);
            let r = run_in(
                dir,
                &[
                    "verify", PLAIN[0], PLAIN[1], PLAIN[2], PLAIN[3], "--format", "json", "-o",
                    "old.json",
                ],
            );
            assert_eq!(r.code, 1);
            git(dir, &["stash", "pop", "-q"]);
        }
        let (code, j) = json_run(dir, &["--baseline", baseline]);
        assert_eq!(code, 1, "{baseline}");
        let shown: Vec<(String, String, String)> = j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "QG001")
            .map(|f| {
                (
                    f["subject"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                    f["blocks"].to_string(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![("get_order".into(), "Critical".into(), "true".into())],
            "{baseline}"
        );
    }
    // A baseline that does not say a finding's severity cannot show it no worse.
    std::fs::write(
        dir.join("bare.json"),
        r#"{"findings": [{"fingerprint": "0000000000000000"}]}"#,
    )
    .unwrap();
    let (code, _) = json_run(dir, &["--baseline", "bare.json"]);
    assert_eq!(code, 1);
}

/// Every output says each weakening: the text report above its gate line, JSON `weakened`,
/// SARIF's run properties, a `::warning` each under `--format github`, and the job summary.
#[test]
fn every_output_says_what_weakens_the_proof() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    std::fs::write(
        dir.join("stalwart.toml"),
        "engine = \"explicit\"\nmin-severity = \"critical\"\n\n[off]\nO7 = \"compensation is reconciled by hand\"\n",
    )
    .unwrap();
    let (_, j) = json_run(dir, &[]);
    common::snap(
        "weakened_json",
        &serde_json::to_string_pretty(&j["weakened"]).unwrap(),
    );
    let n = j["weakened"].as_array().unwrap().len();
    assert_eq!(n, 3);
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    args.extend(["--sarif", "out.sarif", "--summary", "summary.md"]);
    let text = run_in(dir, &args);
    assert!(text
        .stdout
        .contains("Weakened (3): this proof is weaker than the defaults by"));
    let gate = text.stdout.lines().last().unwrap();
    assert!(
        gate.ends_with("The proof is weakened: 3 weakenings, listed above."),
        "{gate}"
    );
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.sarif")).unwrap()).unwrap();
    assert_eq!(
        sarif["runs"][0]["properties"]["weakened"]
            .as_array()
            .unwrap()
            .len(),
        n
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("**The proof is weakened** (3 weakenings):"),
        "{summary}"
    );
    args.truncate(5);
    args.extend(["--format", "github"]);
    let gh = run_in(dir, &args);
    let warnings: Vec<&str> = gh
        .stdout
        .lines()
        .filter(|l| l.starts_with("::warning") && l.contains("the proof is weakened ("))
        .collect();
    common::snap("weakened_github", &warnings.join("\n"));
    assert_eq!(warnings.len(), n);
}

/// What cannot weaken the proof at all: `[off] QG006` (an undecided obligation is said, never
/// silenced), and an accept by a fingerprint prefix (8 hex digits are 32 bits: a name can be
/// chosen for its hash in minutes).
#[test]
fn undecided_cannot_be_turned_off_and_an_accept_names_the_whole_fingerprint() {
    let (repo, _) = plain_shop_repo();
    let dir = repo.path();
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    std::fs::write(
        dir.join("stalwart.toml"),
        "engine = \"explicit\"\n\n[off]\nQG006 = \"we do not care\"\n",
    )
    .unwrap();
    let r = run_in(dir, &args);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("cannot turn off QG006"), "{}", r.stderr);
    assert!(r.stderr.contains("stalwart.toml:4"), "{}", r.stderr);
    let (_, j) = json_run(dir, &["--no-config"]);
    let fp = j["findings"][0]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(fp.len(), 16);
    for (given, code) in [(&fp[..8], 2), (&fp[..15], 2), (fp.as_str(), 1)] {
        std::fs::write(
            dir.join("stalwart.toml"),
            format!("[[accept]]\nfingerprint = \"{given}\"\nreason = \"reviewed\"\n"),
        )
        .unwrap();
        let r = run_in(dir, &args);
        assert_eq!(r.code, code, "{given}: {}", r.stderr);
        if code == 2 {
            assert!(r.stderr.contains("16 hex digits"), "{}", r.stderr);
        }
    }
}

/// A subgraph the export does not hold is unseen code: its QG006 fails the gate (an agent with
/// nothing else wrong passes without it), listed as undecided.
#[test]
fn a_missing_subgraph_fails_the_gate() {
    let dir = common::root().join("fixtures/QG006/breaks-missing-subgraph");
    let g = dir.join("graph.json");
    let c = dir.join("catalogue.json");
    let r = common::stalwart(&[
        "verify",
        "--graph",
        g.to_str().unwrap(),
        "--catalogue",
        c.to_str().unwrap(),
        "--format",
        "json",
        "--no-config",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    let blocking: Vec<&Value> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["blocks"] == true)
        .collect();
    assert_eq!(blocking.len(), 1);
    assert_eq!(blocking[0]["rule"], "QG006");
    assert_eq!(blocking[0]["subject"], "kb");
    assert_eq!(kinds(&j), vec!["undecided".to_string()]);
    let holds = common::root().join("fixtures/QG006/holds-inlined-subgraph");
    let r = common::stalwart(&[
        "verify",
        "--graph",
        holds.join("graph.json").to_str().unwrap(),
        "--catalogue",
        holds.join("catalogue.json").to_str().unwrap(),
        "--no-config",
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}
