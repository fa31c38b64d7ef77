//! QG024, Unread code (SPEC 2.2 `opaque`, 12.5, issue 28): each `opaque` entry of a node is a
//! finding that fails the gate, at the entry's line in the user's source (else the node's), with
//! a fingerprint that survives unrelated edits; it is accepted like any finding (and the accept
//! listed as a weakening, SPEC 8.1); a bad `opaque` is exit 2 at its line with the fix; and
//! `--export-only` keeps every entry. Crafted inputs are written into a tempdir by each test.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use common::{snap, stalwart, stalwart_in, without_times};
use stalwart::fingerprint;

const BREAKS: &str = "fixtures/QG024/breaks-pause-in-helper";

fn args<'a>(dir: &'a str, graph: &'a str, cat: &'a str, format: &'a str) -> Vec<String> {
    vec![
        "verify".into(),
        "--graph".into(),
        format!("{dir}/{graph}"),
        "--catalogue".into(),
        format!("{dir}/{cat}"),
        "--format".into(),
        format.into(),
    ]
}

fn run(dir: &Path, a: &[String]) -> common::Run {
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    stalwart_in(dir, &a)
}

fn json(r: &common::Run) -> serde_json::Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", r.stdout, r.stderr))
}

/// `(subject, node, file, line, column, blocks)` of each QG024 finding of a JSON report.
fn qg024(v: &serde_json::Value) -> Vec<(String, String, String, u64, u64, bool)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "QG024")
        .map(|f| {
            (
                f["subject"].as_str().unwrap().to_string(),
                f["node"].as_str().unwrap().to_string(),
                f["location"]["file"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap(),
                f["location"]["column"].as_u64().unwrap(),
                f["blocks"] == true,
            )
        })
        .collect()
}

/// The attack of issue 28: a pause in a helper and a `raise NodeInterrupt` the exporter cannot
/// place, and code it cannot read, listed as `opaque`: the gate fails with one QG024 per entry,
/// each at the entry's line of agent.py (the entry with no location at its node's line), in
/// text, JSON and SARIF alike.
#[test]
fn each_opaque_entry_fails_the_gate_at_its_line() {
    let root = common::root();
    let r = run(&root, &args(BREAKS, "graph.json", "catalogue.json", "text"));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r
        .stdout
        .contains("QG024 High on pause:approve (agent.py:7)"));
    assert!(r
        .stdout
        .contains("Gate: failed. 3 findings block this agent"));
    snap("qg024-pause-in-helper.txt", &r.stdout);

    let j = run(&root, &args(BREAKS, "graph.json", "catalogue.json", "json"));
    assert_eq!(j.code, 1);
    let v = json(&j);
    let file = format!("{BREAKS}/agent.py");
    assert_eq!(
        qg024(&v),
        vec![
            (
                "code:approve".into(),
                "approve".into(),
                file.clone(),
                6,
                1,
                true
            ),
            (
                "pause:approve".into(),
                "approve".into(),
                file.clone(),
                7,
                14,
                true
            ),
            (
                "pause:plan".into(),
                "plan".into(),
                file.clone(),
                12,
                5,
                true
            ),
        ]
    );
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subject"] == "pause:approve")
        .unwrap();
    assert_eq!(f["severity"], "High");
    assert_eq!(f["type"], "Vulnerability");
    assert_eq!(
        f["fingerprint"],
        fingerprint("QG024", None, "pause:approve", Some("approve"))
    );
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("interrupt() in helper 'ask_person'"));
    assert!(f["fix"]
        .as_str()
        .unwrap()
        .contains("{\"nodes\": {\"approve\": {\"reviews\": [\"<tool>\"]}}}` naming the tools whose calls the pause confirms (`[]` when it confirms none)"));
    // a pause is cleared by `reviews`, never by `pure` (the acceptance review)
    assert!(!f["fix"].as_str().unwrap().contains("pure"));
    snap("qg024-pause-in-helper.json", &without_times(&j.stdout));

    let s = run(
        &root,
        &args(BREAKS, "graph.json", "catalogue.json", "sarif"),
    );
    assert_eq!(s.code, 1);
    let sv = json(&s);
    let rules = sv["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let rule = rules.iter().find(|r| r["id"] == "QG024").unwrap();
    assert_eq!(rule["shortDescription"]["text"], "Unread code");
    let results: Vec<&serde_json::Value> = sv["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "QG024")
        .collect();
    assert_eq!(results.len(), 3);
    for r in &results {
        assert_eq!(r["level"], "error");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            file.as_str()
        );
    }
    let lines: Vec<u64> = results
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, [6, 7, 12]);
    snap("qg024-pause-in-helper.sarif", &s.stdout);
}

/// The same graph with nothing opaque (each pause read or declared) passes.
#[test]
fn the_same_graph_read_or_declared_passes() {
    let r = run(
        &common::root(),
        &args(
            "fixtures/QG024/holds-declared",
            "graph.json",
            "catalogue.json",
            "json",
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(qg024(&json(&r)).is_empty());
}

/// A copy of the breaking fixture in a repository of its own, `edit` applied to its graph.
fn copy(edit: impl FnOnce(&mut serde_json::Value)) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let src = common::root().join(BREAKS);
    for f in ["catalogue.json", "agent.py"] {
        std::fs::copy(src.join(f), d.path().join(f)).unwrap();
    }
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("graph.json")).unwrap()).unwrap();
    edit(&mut g);
    std::fs::write(d.path().join("graph.json"), g.to_string()).unwrap();
    d
}

fn fingerprints(v: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "QG024")
        .map(|f| f["fingerprint"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// The fingerprint hashes the rule, the `what` and the qualified node, not the line or the
/// exporter's words: moving the code and rewording `why` keeps it; two entries of one `what` on
/// one node have two.
#[test]
fn fingerprints_survive_unrelated_edits_and_stay_unique() {
    let a = [".", "graph.json", "catalogue.json", "json"];
    let base = copy(|_| {});
    let a = args(a[0], a[1], a[2], a[3]);
    let before = fingerprints(&json(&run(base.path(), &a)));
    assert_eq!(before.len(), 3);
    let moved = copy(|g| {
        for n in g["nodes"].as_array_mut().unwrap() {
            if let Some(o) = n.get_mut("opaque").and_then(|o| o.as_array_mut()) {
                for e in o {
                    e["why"] = serde_json::json!("reworded");
                    if let Some(l) = e.get_mut("location") {
                        l["line"] = serde_json::json!(3);
                    }
                }
            }
        }
    });
    assert_eq!(fingerprints(&json(&run(moved.path(), &a))), before);
    let twice = copy(|g| {
        let plan = &mut g["nodes"][1]["opaque"];
        let e = plan[0].clone();
        plan.as_array_mut().unwrap().push(e);
    });
    let v = json(&run(twice.path(), &a));
    let fps = fingerprints(&v);
    assert_eq!(fps.len(), 4);
    let mut unique = fps.clone();
    unique.dedup();
    assert_eq!(unique.len(), 4, "{fps:?}");
}

/// An opaque node inside a subgraph used at two subgraph nodes is a finding at each, under its
/// qualified id.
#[test]
fn an_opaque_node_in_a_subgraph_is_a_finding_per_use() {
    let d = copy(|g| {
        g["nodes"] = serde_json::json!([
            {"id": "__start__", "kind": "start"},
            {"id": "one", "kind": "subgraph", "graph": "inner"},
            {"id": "two", "kind": "subgraph", "graph": "inner"},
            {"id": "__end__", "kind": "end"}
        ]);
        g["edges"] = serde_json::json!([
            {"from": "__start__", "kind": "fixed", "destinations": ["one"]},
            {"from": "one", "kind": "fixed", "destinations": ["two"]},
            {"from": "two", "kind": "fixed", "destinations": ["__end__"]}
        ]);
        g["subgraphs"] = serde_json::json!({"inner": {
            "nodes": [
                {"id": "__start__", "kind": "start"},
                {"id": "ask", "kind": "step", "location": {"file": "agent.py", "line": 6},
                 "opaque": [{"what": "model", "why": "init_chat_model() inside the node"}]},
                {"id": "__end__", "kind": "end"}
            ],
            "edges": [
                {"from": "__start__", "kind": "fixed", "destinations": ["ask"]},
                {"from": "ask", "kind": "fixed", "destinations": ["__end__"]}
            ]
        }});
    });
    let r = run(d.path(), &args(".", "graph.json", "catalogue.json", "json"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let got: Vec<(String, String, u64)> = qg024(&json(&r))
        .into_iter()
        .map(|(s, n, _, l, _, _)| (s, n, l))
        .collect();
    assert_eq!(
        got,
        vec![
            ("model:one/ask".into(), "one/ask".into(), 6),
            ("model:two/ask".into(), "two/ask".into(), 6),
        ]
    );
}

/// An entry whose `location.file` cannot be read points at its node, and the report says why.
#[test]
fn an_entry_in_an_unreadable_file_points_at_its_node() {
    let d = copy(|g| {
        g["nodes"][1]["opaque"][0]["location"]["file"] = serde_json::json!("missing.py");
    });
    let r = run(d.path(), &args(".", "graph.json", "catalogue.json", "json"));
    let v = json(&r);
    let plan = qg024(&v).into_iter().find(|f| f.0 == "pause:plan").unwrap();
    assert_eq!((plan.2.as_str(), plan.3), ("agent.py", 11));
    assert!(v.to_string().contains("its opaque pause names missing.py"));
}

/// SPEC 8.1: accepting a QG024 through stalwart.toml passes the gate like any accept, and the
/// accept is listed among what weakens the proof.
#[test]
fn accepting_it_is_a_weakening() {
    let d = copy(|_| {});
    std::fs::write(
        d.path().join("stalwart.toml"),
        "[[accept]]\nrule = \"QG024\"\nreason = \"the helper asks; reviewed in SEC-7\"\n",
    )
    .unwrap();
    let a = args(".", "graph.json", "catalogue.json", "json");
    let r = run(d.path(), &a);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r);
    let got = qg024(&v);
    assert_eq!(got.len(), 3);
    assert!(got.iter().all(|f| !f.5), "accepted findings do not block");
    let weakened = v["weakened"].as_array().unwrap();
    let accepts: Vec<&serde_json::Value> =
        weakened.iter().filter(|w| w["kind"] == "accept").collect();
    assert_eq!(accepts.len(), 3, "{weakened:?}");
    assert!(accepts.iter().all(|w| w.to_string().contains("QG024")));
    let t = run(d.path(), &args(".", "graph.json", "catalogue.json", "text"));
    assert_eq!(t.code, 0);
    assert!(t.stdout.contains("the helper asks; reviewed in SEC-7"));
}

/// Bad `opaque` shapes: exit 2 naming the file, line and column, with the fix.
#[test]
fn a_bad_opaque_is_exit_2_at_its_line() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root().join(BREAKS).join("catalogue.json"),
        d.path().join("catalogue.json"),
    )
    .unwrap();
    let graph = |opaque: &str| {
        format!(
            "{{\"format\": \"qls-graph/1\",\n\"nodes\": [\n{{\"id\": \"__start__\", \"kind\": \"start\"}},\n{{\"id\": \"s\", \"kind\": \"step\",\n \"opaque\": {opaque}}},\n{{\"id\": \"__end__\", \"kind\": \"end\"}}],\n\"edges\": [{{\"from\": \"__start__\", \"kind\": \"fixed\", \"destinations\": [\"s\"]}}, {{\"from\": \"s\", \"kind\": \"fixed\", \"destinations\": [\"__end__\"]}}]}}\n"
        )
    };
    let cases = [
        (
            "\"pause\"",
            "graph.json:5:12",
            "`opaque` of node 's' is the quoted text \"pause\", not a list",
            "\"opaque\": [{\"what\": \"pause\"",
        ),
        (
            "[\"pause\"]",
            "graph.json:5:13",
            "entry 1 of `opaque` of node 's' is the quoted text \"pause\", not a mapping",
            "\"opaque\": [{\"what\"",
        ),
        (
            "[{\"why\": \"x\"}]",
            "graph.json:5:13",
            "entry 1 of `opaque` of node 's' has no `what`",
            "tools, model, pause, subgraph, code",
        ),
        (
            "[{\"what\": \"paws\", \"why\": \"x\"}]",
            "graph.json:5:22",
            "unknown `what` 'paws'",
            "tools, model, pause, subgraph, code",
        ),
        (
            "[{\"what\": \"pause\"}]",
            "graph.json:5:13",
            "entry 1 of `opaque` of node 's' has no `why`",
            "\"why\": ",
        ),
        (
            "[{\"what\": \"pause\", \"why\": \"x\", \"location\": {\"line\": 0}}]",
            "graph.json:5:64",
            "counts from 1, found 0",
            "line and column count from 1",
        ),
    ];
    for (opaque, place, msg, help) in cases {
        std::fs::write(d.path().join("graph.json"), graph(opaque)).unwrap();
        let r = stalwart_in(
            d.path(),
            &[
                "verify",
                "--graph",
                "graph.json",
                "--catalogue",
                "catalogue.json",
            ],
        );
        assert_eq!(r.code, 2, "{opaque}: {}{}", r.stdout, r.stderr);
        // Without white space and miette's frame, so a wrapped message still matches.
        let squash = |t: &str| -> String {
            t.chars()
                .filter(|c| !c.is_whitespace() && *c != '│')
                .collect()
        };
        for want in [place, msg, help] {
            assert!(
                squash(&r.stderr).contains(&squash(want)),
                "{opaque}: {want:?} in\n{}",
                r.stderr
            );
        }
        assert!(!r.stderr.contains("panicked"));
    }
}

/// `--export-only` writes every entry back (what, why, its location), so nothing unread is lost
/// on the way out; the written export fails the gate with the same findings.
#[test]
fn export_only_keeps_every_entry() {
    let d = copy(|_| {});
    std::fs::create_dir(d.path().join("out")).unwrap();
    let r = stalwart_in(
        d.path(),
        &[
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
            "--export-only",
            "out/graph.json",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out/graph.json")).unwrap())
            .unwrap();
    let approve = written["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == "approve")
        .unwrap();
    assert_eq!(approve["opaque"][0]["what"], "pause");
    assert_eq!(approve["opaque"][0]["location"]["file"], "../agent.py");
    assert_eq!(approve["opaque"][0]["location"]["line"], 7);
    assert_eq!(approve["opaque"][1]["what"], "code");
    assert_eq!(approve["opaque"][1]["location"]["line"], 6);
    let before = json(&run(
        d.path(),
        &args(".", "graph.json", "catalogue.json", "json"),
    ));
    let after = json(&run(
        d.path(),
        &args("out", "graph.json", "graph.catalogue.json", "json"),
    ));
    assert_eq!(fingerprints(&after), fingerprints(&before));
    let lines = |v: &serde_json::Value| -> Vec<(String, u64)> {
        qg024(v).into_iter().map(|f| (f.0, f.3)).collect()
    };
    assert_eq!(lines(&after), lines(&before));
}

/// The rule's own words hold: it fails the gate, stops the agent and is checked.
#[test]
fn the_rule_fails_the_gate() {
    let r = stalwart::rules::get("QG024").unwrap();
    assert!(r.gate && r.stops && r.checked);
    let e = stalwart(&["rules", "explain", "QG024"]);
    assert_eq!(e.code, 0);
    assert!(e.stdout.contains("Unread code"));
}
