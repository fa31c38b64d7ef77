//! A team's CI over months (issue 18): project configuration, accepting findings with a reason,
//! code scanning that keeps its alerts straight, machine output that is never silenced, a large
//! agent at a glance, and a picture of the route. Each test runs the real binary on a copy of the
//! shop (or a small export) in a folder of its own, so configurations and comments are the test's.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stalwart_in as run_in, Run as Out};

use std::path::{Path, PathBuf};
use std::process::Command;

use common::snap;

/// The shop in a repository of its own (a `.git` folder marks its root), with `config` as its
/// stalwart.toml when given.
fn shop(config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = common::root().join("fixtures/shop");
    for f in ["agent.yaml", "shop.catalogue.yaml", "policy.co"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    if let Some(c) = config {
        std::fs::write(dir.path().join("stalwart.toml"), c).unwrap();
    }
    dir
}

/// `t` without white space and miette's frame, so a wrapped message still matches.
fn squash(t: &str) -> String {
    t.chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect()
}

fn json(out: &Out) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

#[test]
fn configuration_sets_defaults_and_flags_override_it() {
    let d = shop(Some(
        "gate = \"start\"\nengine = \"explicit\"\nsession-steps = 2\n",
    ));
    let r = run_in(d.path(), &["verify", "agent.yaml", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r);
    assert_eq!(v["gate"]["mode"], "start");
    assert_eq!(v["engines"]["ran"], serde_json::json!(["explicit"]));
    assert_eq!(v["scope"]["session_steps"], 2);
    assert_eq!(v["config"]["path"], "stalwart.toml");
    // The command line wins.
    let r = run_in(
        d.path(),
        &[
            "verify",
            "agent.yaml",
            "--format",
            "json",
            "--gate",
            "ci",
            "--engine",
            "both",
            "--session-steps",
            "1",
        ],
    );
    let v = json(&r);
    assert_eq!(v["gate"]["mode"], "ci");
    assert_eq!(v["engines"]["ran"], serde_json::json!(["explicit", "z3"]));
    assert_eq!(v["scope"]["session_steps"], 1);
    // --no-config reads none.
    let r = run_in(
        d.path(),
        &["verify", "agent.yaml", "--format", "json", "--no-config"],
    );
    assert!(json(&r).get("config").is_none());

    // Found from the input's folder upward, stopping at the repository root.
    let sub = d.path().join("agents/shop");
    std::fs::create_dir_all(&sub).unwrap();
    for f in ["agent.yaml", "shop.catalogue.yaml", "policy.co"] {
        std::fs::copy(d.path().join(f), sub.join(f)).unwrap();
    }
    let r = run_in(
        d.path(),
        &["verify", "agents/shop/agent.yaml", "--format", "json"],
    );
    assert_eq!(json(&r)["gate"]["mode"], "start");
    // `[tool.stalwart]` in a pyproject.toml.
    std::fs::remove_file(d.path().join("stalwart.toml")).unwrap();
    std::fs::write(
        d.path().join("pyproject.toml"),
        "[project]\nname = \"x\"\n\n[tool.stalwart]\ngate = \"start\"\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["verify", "agent.yaml", "--format", "json"]);
    let v = json(&r);
    assert_eq!(v["gate"]["mode"], "start");
    assert_eq!(v["config"]["path"], "pyproject.toml");
    // --config names one.
    let other = d.path().join("ci.toml");
    std::fs::write(&other, "gate = \"ci\"\n").unwrap();
    let r = run_in(
        d.path(),
        &[
            "verify",
            "agent.yaml",
            "--format",
            "json",
            "--config",
            "ci.toml",
        ],
    );
    assert_eq!(json(&r)["gate"]["mode"], "ci");
}

#[test]
fn a_bad_configuration_is_an_error_at_its_line() {
    let cases: [(&str, &str, &str); 7] = [
        (
            "gate = \"ci\"\nengin = \"z3\"\n",
            "stalwart.toml:2:1",
            "unknown field `engin`",
        ),
        (
            "session-steps = 40\n",
            "stalwart.toml:1:17",
            "outside 1..=16",
        ),
        (
            "gate = \"always\"\n",
            "stalwart.toml:1:8",
            "`gate` is 'always'",
        ),
        (
            "[off]\nQG999 = \"why\"\n",
            "stalwart.toml:2:1",
            "no rule or obligation",
        ),
        (
            "[off]\nO1 = \"\"\n",
            "stalwart.toml:2:1",
            "without a reason",
        ),
        (
            "[[accept]]\nrule = \"QG105\"\n",
            "stalwart.toml:1:1",
            "without a reason",
        ),
        (
            "gate = \"ci\"\n[[accept]]\nreason = \"r\"\n",
            "stalwart.toml:2:1",
            "by `fingerprint` or by `rule`",
        ),
    ];
    for (text, at, what) in cases {
        let d = shop(Some(text));
        let r = run_in(d.path(), &["verify", "agent.yaml"]);
        assert_eq!(r.code, 2, "{text}: {}", r.stderr);
        let s = squash(&r.stderr);
        assert!(
            s.contains(&squash(at)) && s.contains(&squash(what)),
            "{text}:\n{}",
            r.stderr
        );
    }
}

#[test]
fn rules_and_obligations_turned_off_are_said_once() {
    let d = shop(Some(
        "[off]\nQG023 = \"the runtime's budget middleware bounds every loop\"\nO8 = \"refunds are reconciled nightly\"\n",
    ));
    let r = run_in(d.path(), &["verify", "agent.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("QG023 Medium") && !r.stdout.contains("QG105 Review"));
    assert_eq!(
        r.stdout.matches("Not held to QG023").count(),
        1,
        "{}",
        r.stdout
    );
    assert!(
        squash(&r.stdout).contains(&squash("Not held to QG023 (Unbounded loop), as stalwart.toml says: the runtime's budget middleware bounds every loop (1 finding not raised).\nNot held to O8 (recovery), as stalwart.toml says: refunds are reconciled nightly (1 finding not raised).")),
        "{}",
        r.stdout
    );
    snap("project-off.txt", &r.stdout);
}

#[test]
fn findings_accepted_with_a_reason_do_not_fail_the_gate() {
    // The shop-plain export fails the gate; accept every blocking finding but one, in two ways.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let plain = common::root().join("fixtures/shop-plain");
    std::fs::copy(plain.join("graph.json"), dir.path().join("graph.json")).unwrap();
    std::fs::copy(
        plain.join("catalogue.json"),
        dir.path().join("catalogue.json"),
    )
    .unwrap();
    let args = [
        "verify",
        "--graph",
        "graph.json",
        "--catalogue",
        "catalogue.json",
        "--format",
        "json",
    ];
    let before = json(&run_in(dir.path(), &args));
    let blocking: Vec<&serde_json::Value> = before["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["blocks"] == true)
        .collect();
    assert!(blocking.len() >= 3);
    let fp = blocking[0]["fingerprint"].as_str().unwrap();
    let qg011 = blocking.iter().find(|f| f["rule"] == "QG011").unwrap();
    let config = format!(
        "[[accept]]\nfingerprint = \"{}\"\nreason = \"reviewed in SEC-101\"\n\n[[accept]]\nrule = \"QG001\"\nreason = \"the guard is added next sprint\"\nuntil = 2999-01-01\n\n[[accept]]\nrule = \"QG011\"\nsubject = \"{}\"\nreason = \"old\"\nuntil = 2001-01-01\n\n[[accept]]\nrule = \"QG017\"\nreason = \"nothing\"\n",
        fp,
        qg011["subject"].as_str().unwrap()
    );
    std::fs::write(dir.path().join("stalwart.toml"), &config).unwrap();
    let r = run_in(dir.path(), &args);
    let v = json(&r);
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), before["findings"].as_array().unwrap().len());
    let accepted: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f.get("accepted").is_some())
        .collect();
    assert!(accepted.iter().all(|f| f["blocks"] == false));
    assert!(accepted.iter().any(|f| f["fingerprint"] == fp
        && f["accepted"]["reason"] == "reviewed in SEC-101"
        && f["accepted"]["kind"] == "external"));
    assert!(findings
        .iter()
        .filter(|f| f["rule"] == "QG001")
        .all(|f| f.get("accepted").is_some()));
    // The expired accept accepts nothing: that QG011 still blocks, and both the expired and the
    // unmatched accepts are warnings naming their lines.
    assert!(findings
        .iter()
        .any(|f| f["rule"] == "QG011" && f["subject"] == qg011["subject"] && f["blocks"] == true));
    assert_eq!(v["gate"]["passed"], false);
    let warnings: Vec<String> = v["config"]["accept_warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| format!("{}: {}", w["at"]["line"], w["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        warnings,
        [
            format!(
                "10: the accept of QG011 on {} expired on 2001-01-01: it accepts nothing now",
                qg011["subject"].as_str().unwrap()
            ),
            "16: the accept of QG017 matches no finding".to_string(),
        ]
    );
    assert_eq!(v["gate"]["accepted"], serde_json::json!(accepted.len()));

    // Text: the accepted findings listed with their reasons, and counted on the gate line.
    let text = run_in(dir.path(), &args[..5]);
    assert!(text.stdout.contains("Accepted: "), "{}", text.stdout);
    assert!(text.stdout.contains(&format!(
        "{} accepted with a reason.",
        super_plural(accepted.len())
    )));

    // SARIF: accepted results carry a suppression with the justification.
    let s = run_in(
        dir.path(),
        &[
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
            "--format",
            "sarif",
        ],
    );
    let sv: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    let results = sv["runs"][0]["results"].as_array().unwrap();
    let suppressed: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r.get("suppressions").is_some())
        .collect();
    assert_eq!(suppressed.len(), accepted.len());
    for r in &suppressed {
        assert_eq!(r["suppressions"][0]["kind"], "external");
        assert_eq!(r["suppressions"][0]["status"], "accepted");
        assert_ne!(
            r["level"], "error",
            "an accepted result does not fail the check"
        );
    }
    snap("project-accepted.sarif", &s.stdout);

    // --strict-accepts: the two warnings fail the gate even with every finding accepted.
    let all = format!(
        "{config}\n[[accept]]\nrule = \"QG011\"\nreason = \"r\"\n\n[[accept]]\nrule = \"QG012\"\nreason = \"r\"\n\n[[accept]]\nrule = \"QG013\"\nreason = \"r\"\n"
    );
    std::fs::write(dir.path().join("stalwart.toml"), all).unwrap();
    assert_eq!(run_in(dir.path(), &args[..5]).code, 0);
    assert_eq!(
        run_in(
            dir.path(),
            &[
                "verify",
                "--graph",
                "graph.json",
                "--catalogue",
                "catalogue.json",
                "--strict-accepts"
            ]
        )
        .code,
        1
    );
}

fn super_plural(n: usize) -> String {
    if n == 1 {
        "1 finding".into()
    } else {
        format!("{n} findings")
    }
}

#[test]
fn an_accept_comment_on_the_line() {
    let d = shop(None);
    let p = d.path().join("agent.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    let text = text
        .replace(
            "    tools: [refund_card]\n",
            "    tools: [refund_card]  # stalwart: accept QG105 -- refunds are reconciled nightly\n",
        )
        .replace("  desk:\n", "  desk:  # stalwart: accept QG023\n");
    std::fs::write(&p, text).unwrap();
    let r = run_in(d.path(), &["verify", "agent.yaml", "--format", "json"]);
    assert_eq!(r.code, 0);
    let v = json(&r);
    let qg105 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "QG105")
        .unwrap();
    assert_eq!(qg105["accepted"]["kind"], "inSource");
    assert_eq!(
        qg105["accepted"]["reason"],
        "refunds are reconciled nightly"
    );
    assert_eq!(qg105["accepted"]["at"]["line"], 10);
    // The comment without a reason accepts nothing and is a warning.
    assert_eq!(
        v["config"]["accept_warnings"][0]["message"],
        "the accept comment gives no reason: write `# stalwart: accept QG023 -- why`"
    );
    let s = run_in(d.path(), &["verify", "agent.yaml", "--format", "sarif"]);
    let sv: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    let kinds: Vec<&serde_json::Value> = sv["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.get("suppressions"))
        .map(|s| &s[0]["kind"])
        .collect();
    assert_eq!(kinds, [&serde_json::json!("inSource")]);
    let t = run_in(d.path(), &["verify", "agent.yaml"]);
    snap("project-accept-comment.txt", &t.stdout);
}

#[test]
fn min_severity_hides_what_is_below_it() {
    let d = shop(Some("min-severity = \"medium\"\n"));
    let r = run_in(d.path(), &["verify", "agent.yaml", "--format", "json"]);
    let v = json(&r);
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        ["QG023"],
        "the QG105 hotspot (Review) is below medium"
    );
    assert_eq!(v["config"]["below_min_severity"], 1);
    let t = run_in(d.path(), &["verify", "agent.yaml"]);
    assert!(t
        .stdout
        .contains("Below stalwart.toml's min-severity Medium: 1 finding not shown."));
}

/// Code scanning keeps one alert per finding: `primaryLocationLineHash` from the fingerprint (two
/// findings on one line stay two), unique fingerprints (two null edges from one node), baseline
/// states instead of dropped results, levels and security severities that follow the gate.
#[test]
fn code_scanning_keeps_its_alerts_straight() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.json");
    std::fs::write(
        &g,
        r#"{"format": "qls-graph/1", "budget": {"steps": 10}, "nodes": [{"id": "__start__", "kind": "start"},
        {"id": "agent", "kind": "model", "tools": ["pay"]}, {"id": "tools", "kind": "tools_plain", "tools": ["pay"]},
        {"id": "__end__", "kind": "end"}], "edges": [{"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
        {"from": "agent", "kind": "conditional", "destinations": null}, {"from": "agent", "kind": "command", "destinations": null},
        {"from": "tools", "kind": "conditional", "destinations": null}]}"#,
    )
    .unwrap();
    let c = dir.path().join("c.json");
    std::fs::write(
        &c,
        r#"{"tools": {"pay": {"kind": "write"}, "look": {"kind": "read"}}}"#,
    )
    .unwrap();
    let (gs, cs) = (
        g.to_string_lossy().into_owned(),
        c.to_string_lossy().into_owned(),
    );
    let r = run_in(
        dir.path(),
        &[
            "verify",
            "--graph",
            &gs,
            "--catalogue",
            &cs,
            "--format",
            "sarif",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    let mut fps: Vec<&str> = results
        .iter()
        .map(|r| {
            r["partialFingerprints"]["stalwartFingerprint/v1"]
                .as_str()
                .unwrap()
        })
        .collect();
    let hashes: Vec<String> = results
        .iter()
        .map(|r| {
            r["partialFingerprints"]["primaryLocationLineHash"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for (fp, h) in fps.iter().zip(&hashes) {
        assert_eq!(h, &format!("{fp}:1"));
    }
    let qg015 = results.iter().filter(|r| r["ruleId"] == "QG015").count();
    assert_eq!(qg015, 3, "three null edges, three findings");
    let n = fps.len();
    fps.sort_unstable();
    fps.dedup();
    assert_eq!(fps.len(), n, "two findings share a fingerprint");

    // Levels follow the gate: QG015 does not fail it, so it is not an error, and no rule that
    // does not fail the gate has a security severity of 7.0 or more.
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results.iter().filter(|r| r["ruleId"] == "QG015") {
        assert_eq!(r["level"], "warning");
    }
    for rule in rules {
        let id = rule["id"].as_str().unwrap();
        let gate = stalwart::rules::get(id).map(|r| r.gate).unwrap_or(false);
        let sev: f64 = rule["properties"]["security-severity"]
            .as_str()
            .map(|s| s.parse().unwrap())
            .unwrap_or(0.0);
        if !gate {
            assert!(
                sev < 7.0,
                "{id} does not fail the gate but has security severity {sev}"
            );
            assert_ne!(rule["defaultConfiguration"]["level"], "error", "{id}");
        }
        if let Some(cwe) = stalwart::rules::get(id).and_then(|r| r.cwe.first()) {
            assert_eq!(rule["helpUri"], stalwart::rules::cwe_uri(cwe));
            let tag = stalwart::rules::cwe_tag(cwe);
            assert!(rule["properties"]["tags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| *t == *tag));
        }
    }

    // With a baseline: known results stay, `unchanged`; the text hides them.
    let base = dir.path().join("base.sarif");
    std::fs::write(&base, &r.stdout).unwrap();
    let bs = base.to_string_lossy().into_owned();
    let again = run_in(
        dir.path(),
        &[
            "verify",
            "--graph",
            &gs,
            "--catalogue",
            &cs,
            "--format",
            "sarif",
            "--baseline",
            &bs,
        ],
    );
    let v2: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    let states: Vec<&serde_json::Value> = v2["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["baselineState"])
        .collect();
    assert_eq!(states.len(), results.len(), "no known result is dropped");
    assert!(states.iter().all(|s| **s == "unchanged"), "{states:?}");
    assert_eq!(again.code, 0, "known findings do not fail the gate");
    snap("project-baseline.sarif", &again.stdout);
}

#[test]
fn machine_output_is_never_silenced() {
    let root = common::root();
    for format in ["json", "sarif", "github"] {
        let r = run_in(
            &root,
            &[
                "verify",
                "fixtures/shop/agent.yaml",
                "-q",
                "--format",
                format,
            ],
        );
        assert_eq!(r.code, 0);
        assert!(!r.stdout.is_empty(), "--quiet silenced {format}");
    }
    let r = run_in(&root, &["verify", "fixtures/shop/agent.yaml", "-q"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));

    // An input error under --format json is a JSON object; under github an ::error line.
    let r = run_in(
        &root,
        &[
            "verify",
            "fixtures/errors/catalogue_missing.agent.yaml",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, 2);
    let v = json(&r);
    assert_eq!(v["exit"], 2);
    assert_eq!(v["error"]["location"]["line"], 11);
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cannot read the catalogue"));
    let r = run_in(
        &root,
        &[
            "verify",
            "fixtures/errors/catalogue_missing.agent.yaml",
            "--format",
            "github",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.starts_with("::error file=fixtures/errors/catalogue_missing.agent.yaml,line=11,col=16,title=stalwart-verify could not run::"),
        "{}",
        r.stdout
    );
    let r = run_in(&root, &["verify", "--graph", "x.json", "--format", "json"]);
    assert_eq!(json(&r)["error"]["message"], "--graph needs --catalogue");

    // rules list --format json; rules explain of a code check.
    let r = run_in(&root, &["rules", "list", "--format", "json"]);
    let v = json(&r);
    assert_eq!(
        v["rules"].as_array().unwrap().len(),
        stalwart::rules::all().len()
    );
    assert_eq!(v["code_checks"][1]["id"], "CC002");
    assert_eq!(v["code_checks"][1]["cwe"], serde_json::json!(["CWE-798"]));
    let r = run_in(&root, &["rules", "explain", "cc002"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("CC002 Hard-coded credential\n"));
    snap("explain-cc002.txt", &r.stdout);
    // -o is --output.
    let out = tempfile::tempdir().unwrap();
    let o = out.path().join("r.json");
    let r = run_in(
        &root,
        &[
            "verify",
            "fixtures/shop/agent.yaml",
            "--format",
            "json",
            "-o",
            &o.to_string_lossy(),
        ],
    );
    assert_eq!(r.code, 0);
    assert!(std::fs::read_to_string(&o)
        .unwrap()
        .contains("\"findings\""));
}

/// `stalwart verify` on the shop's export with no tool check: the findings a large agent has.
const SHOP_PLAIN: [&str; 5] = [
    "verify",
    "--graph",
    "fixtures/shop-plain/graph.json",
    "--catalogue",
    "fixtures/shop-plain/catalogue.json",
];

#[test]
fn a_large_agent_at_a_glance() {
    let root = common::root();
    let mut a = SHOP_PLAIN.to_vec();
    a.extend(["--format", "concise"]);
    let r = run_in(&root, &a);
    assert_eq!(r.code, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("fixtures/shop-plain/agent.yaml:5:5: QG001 High charge_card: "),
        "{}",
        r.stdout
    );
    assert!(lines[0].contains(": QG0"));
    assert!(r.stdout.ends_with("; gate failed under ci.\n"));
    let lint_at = lines.iter().position(|l| l.starts_with("lint ")).unwrap();
    assert!(
        lines[..lint_at].iter().all(|l| !l.starts_with("lint ")),
        "lints after the findings"
    );
    snap("shop-plain.concise", &r.stdout);
    a.push("--statistics");
    let s = run_in(&root, &a);
    assert!(s
        .stdout
        .lines()
        .next()
        .unwrap()
        .trim_start()
        .starts_with(char::is_numeric));
    snap("shop-plain.statistics", &s.stdout);

    // Several unbounded loops are one entry of the text report.
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.json");
    let mut nodes = vec![r#"{"id": "__start__", "kind": "start"}"#.to_string()];
    let mut edges = Vec::new();
    for i in 0..3 {
        nodes.push(format!(r#"{{"id": "m{i}", "kind": "model"}}"#));
        edges.push(format!(
            r#"{{"from": "m{i}", "kind": "conditional", "destinations": ["m{i}", "__end__"]}}"#
        ));
    }
    nodes.push(r#"{"id": "__end__", "kind": "end"}"#.to_string());
    edges.push(
        r#"{"from": "__start__", "kind": "conditional", "destinations": ["m0", "m1", "m2"]}"#
            .to_string(),
    );
    std::fs::write(
        &g,
        format!(
            r#"{{"format": "qls-graph/1", "nodes": [{}], "edges": [{}]}}"#,
            nodes.join(",\n"),
            edges.join(",\n")
        ),
    )
    .unwrap();
    let c = dir.path().join("c.json");
    std::fs::write(&c, r#"{"tools": {}}"#).unwrap();
    let r = run_in(
        dir.path(),
        &["verify", "--graph", "g.json", "--catalogue", "c.json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout.matches("QG023 Medium on 3 cycles").count(),
        1,
        "{}",
        r.stdout
    );
    assert_eq!(r.stdout.matches("Fix, for each: ").count(), 1);
    for i in 0..3 {
        assert!(
            r.stdout.contains(&format!("cycle:m{i} (g.json:")),
            "{}",
            r.stdout
        );
    }
}

/// Runs `node parse.mjs FILE` with the real mermaid parser, when a folder holding it is there
/// (`STALWART_MERMAID`, else `.ci/mermaid`): `None` when it is not.
fn mermaid_parses(file: &Path) -> Option<Result<(), String>> {
    let dir: PathBuf = std::env::var_os("STALWART_MERMAID")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::root().join(".ci/mermaid"));
    if !dir.join("node_modules/mermaid").is_dir() || !dir.join("parse.mjs").is_file() {
        return None;
    }
    let o = Command::new("node")
        .arg(dir.join("parse.mjs"))
        .arg(file)
        .current_dir(&dir)
        .output()
        .ok()?;
    Some(if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    })
}

#[test]
fn a_picture_of_the_route() {
    let root = common::root();
    let mut a = SHOP_PLAIN.to_vec();
    a.extend(["--format", "mermaid"]);
    let m = run_in(&root, &a);
    assert_eq!(m.code, 1);
    assert!(m.stdout.starts_with("flowchart TD\n"));
    assert!(m
        .stdout
        .contains("[[\"desk_tools (tools_plain, not checked)"));
    assert!(m.stdout.contains("class n5 guarded"));
    assert!(
        m.stdout.contains("linkStyle "),
        "the witness's edges are drawn"
    );
    snap("shop-plain.mermaid", &m.stdout);
    let mut d = SHOP_PLAIN.to_vec();
    d.extend(["--format", "dot", "--witness", "2"]);
    let dot = run_in(&root, &d);
    assert!(dot.stdout.starts_with("digraph stalwart {"));
    assert!(dot.stdout.contains("penwidth=3"));
    snap("shop-plain.dot", &dot.stdout);

    let dir = tempfile::tempdir().unwrap();
    let mf = dir.path().join("g.mmd");
    std::fs::write(&mf, &m.stdout).unwrap();
    match mermaid_parses(&mf) {
        None => {
            common::skip("the mermaid parser is not installed (.ci/run installs it in .ci/mermaid)")
        }
        Some(r) => {
            r.unwrap();
            // The parser does reject a broken picture.
            std::fs::write(&mf, "flowchart TD\n  a[[[broken\n").unwrap();
            assert!(mermaid_parses(&mf).is_some_and(|r| r.is_err()));
        }
    }
    let df = dir.path().join("g.dot");
    std::fs::write(&df, &dot.stdout).unwrap();
    match Command::new("dot").arg("-Tsvg").arg(&df).output() {
        Err(_) => common::skip("Graphviz's dot is not installed (.ci/run installs graphviz)"),
        Ok(o) => {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(String::from_utf8_lossy(&o.stdout).contains("<svg"));
        }
    }

    // The job summary: the gate, a table per rule, the first blocking finding's picture.
    let s = dir.path().join("summary.md");
    let mut a = SHOP_PLAIN.to_vec();
    let ss = s.to_string_lossy().into_owned();
    a.extend(["--summary", &ss]);
    assert_eq!(run_in(&root, &a).code, 1);
    let md = std::fs::read_to_string(&s).unwrap();
    assert!(md
        .starts_with("### stalwart-verify: `fixtures/shop-plain/graph.json` - gate failed (ci)\n"));
    assert!(md.contains("| QG001 | Missing check | 4 | 4 | 0 |"), "{md}");
    assert!(md.contains("```mermaid\nflowchart TD\n"));
    snap("shop-plain.summary.md", &md);
}
