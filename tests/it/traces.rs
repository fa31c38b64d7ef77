//! Traces of real runs (`--traces RUNS.jsonl`, SPEC 2.4) and QG016, the unmodelled path (SPEC 4):
//! the real binary on `fixtures/QG016` (exit codes, the finding's values, text, JSON and SARIF
//! snapshots), every bad traces line as an exit-2 error naming `runs.jsonl:LINE`, and the reading
//! of transitions (qualified ids, subgraphs, `__start__`/`__end__`, unknown nodes and tools).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use common::{snap, stalwart, without_times};
use stalwart::checks::traces::unmodelled_paths;
use stalwart::input::{load_export, read_traces};

const BREAKS: &str = "fixtures/QG016/breaks-unmodelled-path";
const HOLDS: &str = "fixtures/QG016/holds-trace-follows-export";

/// `verify --graph DIR/graph.json --catalogue DIR/catalogue.json --traces DIR/runs.jsonl`, plus
/// `extra`.
fn verify(dir: &str, extra: &[&str]) -> common::Run {
    let graph = format!("{dir}/graph.json");
    let cat = format!("{dir}/catalogue.json");
    let runs = format!("{dir}/runs.jsonl");
    let mut args = vec![
        "verify",
        "--graph",
        &graph,
        "--catalogue",
        &cat,
        "--traces",
        &runs,
    ];
    args.extend_from_slice(extra);
    stalwart(&args)
}

#[test]
fn an_unmodelled_path_to_a_write_fails_the_gate() {
    let j = verify(BREAKS, &["--format", "json"]);
    assert_eq!(j.code, 1, "{}", j.stderr);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    let qg016: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "QG016")
        .collect();
    // Runs r-1 and 2 both reach `pay` by 'agent' -> 'pay' and call refund_card there: one finding.
    assert_eq!(qg016.len(), 1, "{:#}", v["findings"]);
    let f = qg016[0];
    assert_eq!(f["subject"], "refund_card");
    assert_eq!(f["node"], "pay");
    assert_eq!(f["severity"], "High");
    assert_eq!(f["blocks"], true);
    assert_eq!(
        f["location"]["file"],
        "fixtures/QG016/breaks-unmodelled-path/runs.jsonl"
    );
    assert_eq!(f["location"]["line"], 1, "the first run's call");
    let line1 = std::fs::read_to_string(format!("{BREAKS}/runs.jsonl")).unwrap();
    let col = line1.find("\"refund_card\"").unwrap() + 1;
    assert_eq!(f["location"]["column"], col);
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("run 'r-1' took 'agent' -> 'pay', which the export does not have"),
        "{msg}"
    );
    assert!(msg.contains("2 runs made this call"), "{msg}");
    assert!(msg.contains("('r-1', '2')"), "{msg}");
    assert_eq!(
        f["fingerprint"],
        stalwart::fingerprint("QG016", None, "refund_card", Some("pay"))
    );
    // The witness: the first run's steps up to the call, the missing transition marked.
    let w = f["witness"].as_array().unwrap();
    let kinds: Vec<String> = w
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["kind"].as_str().unwrap(),
                s["node"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "enter agent",
            "enter lookup",
            "call lookup",
            "enter agent",
            "enter pay",
            "call pay"
        ]
    );
    assert_eq!(w[4]["unmodelled_from"], "agent");
    assert!(w[..4].iter().all(|s| s.get("unmodelled_from").is_none()));
    assert_eq!(w[5]["tool"], "refund_card");
    assert_eq!(w[5]["guarded"], true);
    assert_eq!(w[5]["violation"], true);
    assert!(w.iter().all(|s| s["location"]["line"] == 1));
    // Related: the catalogue entry, the node's declaration, the other run's call (line 2).
    let related: Vec<(String, u64)> = f["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["message"].as_str().unwrap().to_string(),
                r["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(related
        .iter()
        .any(|(m, _)| m == "'refund_card' is declared here"));
    assert!(related.iter().any(|(m, _)| m == "'pay' is declared here"));
    assert!(related.contains(&("run '2' makes the same call here".to_string(), 2)));
    assert_eq!(
        v["traces"],
        serde_json::json!({"path": "fixtures/QG016/breaks-unmodelled-path/runs.jsonl", "runs": 3, "unmodelled": 2, "privileged_after": 2})
    );
    assert!(!v["nothing_to_read"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "QG016"));
}

#[test]
fn breaks_case_text_json_and_sarif() {
    let t = verify(BREAKS, &[]);
    assert_eq!(t.code, 1, "{}", t.stderr);
    assert!(t
        .stdout
        .lines()
        .any(|l| l == "  QG016 High on refund_card (runs.jsonl:1)"));
    assert!(t
        .stdout
        .contains("enter pay from agent, a transition the export does not have"));
    assert!(t
        .stdout
        .contains("call refund_card (guarded), violates QG016"));
    assert!(!t.stdout.contains("QG016: no traces given"));
    snap("qg016_breaks.txt", &t.stdout);
    let j = verify(BREAKS, &["--format", "json"]);
    assert_eq!(j.code, 1);
    snap("qg016_breaks.json", &without_times(&j.stdout));
    let s = verify(BREAKS, &["--format", "sarif"]);
    assert_eq!(s.code, 1);
    let v: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    let result = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "QG016")
        .unwrap();
    assert_eq!(result["level"], "error");
    let loc = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "fixtures/QG016/breaks-unmodelled-path/runs.jsonl"
    );
    assert_eq!(loc["region"]["startLine"], 1);
    let flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap();
    assert_eq!(flow.len(), 6);
    assert!(flow
        .iter()
        .all(|l| l["location"]["physicalLocation"]["region"]["startLine"] == 1));
    snap("qg016_breaks.sarif", &s.stdout);
}

#[test]
fn traces_that_keep_to_the_export_or_never_call_a_write_pass() {
    let t = verify(HOLDS, &[]);
    assert_eq!(t.code, 0, "{}{}", t.stdout, t.stderr);
    assert!(!t.stdout.contains("QG016 "), "{}", t.stdout);
    assert!(t.stdout.contains(
        "Traces fixtures/QG016/holds-trace-follows-export/runs.jsonl: 3 runs read; 2 took transitions the\n  export does not have, none of them then made a privileged call."
    ), "{}", t.stdout);
    let j = verify(HOLDS, &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["traces"]["runs"], 3);
    assert_eq!(v["traces"]["unmodelled"], 2);
    assert_eq!(v["traces"]["privileged_after"], 0);
}

#[test]
fn without_traces_qg016_has_nothing_to_read() {
    let r = stalwart(&[
        "verify",
        "--graph",
        &format!("{BREAKS}/graph.json"),
        "--catalogue",
        &format!("{BREAKS}/catalogue.json"),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r
        .stdout
        .contains("\n  QG016: no traces given (--traces RUNS.jsonl)\n"));
    assert!(!r.stdout.contains("Traces "));
}

/// Every bad traces line is exit 2, naming `runs.jsonl:LINE:COLUMN` and the fix, and prints no
/// result.
#[test]
fn bad_traces_exit_2_naming_the_line() {
    let ok = r#"{"run": "r", "steps": [{"node": "agent"}]}"#;
    let cases: &[(&str, u32, u32, &str)] = &[
        (r#"{"run": "r", "steps": [}"#, 2, 24, "invalid JSON"),
        (r#"{"run": "r","#, 2, 12, "invalid JSON"),
        ("[1, 2]", 2, 1, "must be a JSON object, found a list"),
        ("\"text\"", 2, 1, "must be a JSON object"),
        (r#"{"steps": []}"#, 2, 1, "the trace has no `run`"),
        (
            r#"{"run": true, "steps": []}"#,
            2,
            9,
            "`run` must be a string or a number",
        ),
        (
            r#"{"run": null, "steps": []}"#,
            2,
            9,
            "`run` must be a string or a number",
        ),
        (r#"{"run": "r"}"#, 2, 1, "has no `steps`"),
        (
            r#"{"run": "r", "steps": {"node": "a"}}"#,
            2,
            23,
            "`steps` of run 'r' must be a list",
        ),
        (
            r#"{"run": "r", "steps": null}"#,
            2,
            23,
            "must be a list, found null",
        ),
        (
            r#"{"run": "r", "steps": ["agent"]}"#,
            2,
            24,
            "a step of run 'r' must be an object",
        ),
        (
            r#"{"run": "r", "steps": [{"tool": "x"}]}"#,
            2,
            24,
            "has no `node`",
        ),
        (
            r#"{"run": "r", "steps": [{"node": 3}]}"#,
            2,
            33,
            "`node` of a step of run 'r' must be a string",
        ),
        (
            r#"{"run": 7, "steps": [{"node": "a", "tool": 1}]}"#,
            2,
            44,
            "`tool` of a step of run '7' must be a string",
        ),
        (
            r#"{"run": "r", "steps": [], "run": "s"}"#,
            2,
            27,
            "duplicate key",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (line, want_line, want_col, needle) in cases {
        let p = dir.path().join("runs.jsonl");
        std::fs::write(&p, format!("{ok}\n{line}\n{ok}\n")).unwrap();
        let graph = format!("{BREAKS}/graph.json");
        let cat = format!("{BREAKS}/catalogue.json");
        let r = stalwart(&[
            "verify",
            "--graph",
            &graph,
            "--catalogue",
            &cat,
            "--traces",
            p.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 2, "{line}: exit 2\n{}{}", r.stdout, r.stderr);
        assert!(r.stdout.is_empty(), "{line}: no report\n{}", r.stdout);
        // miette wraps long messages: compare with the frame and the wrapping taken out.
        let flat: String = r
            .stderr
            .split_whitespace()
            .filter(|w| *w != "│")
            .collect::<Vec<_>>()
            .join(" ");
        let at = format!("runs.jsonl:{want_line}:{want_col}: ");
        assert!(
            flat.contains(&at),
            "{line}: stderr names {at}\n{}",
            r.stderr
        );
        assert!(flat.contains(needle), "{line}: {needle}\n{}", r.stderr);
        assert!(r.stderr.contains("help"), "{line}: a fix\n{}", r.stderr);
    }
    // A missing file names itself.
    let r = verify("fixtures/QG016/no-such-case", &[]);
    assert_eq!(r.code, 2);
    let r = stalwart(&[
        "verify",
        "--graph",
        &format!("{BREAKS}/graph.json"),
        "--catalogue",
        &format!("{BREAKS}/catalogue.json"),
        "--traces",
        "fixtures/QG016/missing.jsonl",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("cannot read fixtures/QG016/missing.jsonl: no such file"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_reader_keeps_ids_as_written_and_skips_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("runs.jsonl");
    std::fs::write(
        &p,
        "\n{\"run\": 12, \"steps\": [{\"node\": \"kb/retrieve\", \"tool\": null, \"extra\": 1}], \"meta\": {}}\r\n   \n{\"run\": \"r\\u00e9\", \"steps\": []}",
    )
    .unwrap();
    let mut sources = stalwart::SourceMap::default();
    let t = read_traces(&mut sources, &p).unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].run, "12");
    assert_eq!(t[0].loc.line, 2);
    assert_eq!(t[0].steps[0].node, "kb/retrieve");
    assert_eq!(t[0].steps[0].tool, None);
    assert_eq!((t[0].steps[0].loc.line, t[0].steps[0].loc.column), (2, 32));
    assert_eq!(t[1].run, "ré");
    assert_eq!(t[1].loc.line, 4);
    assert!(t[1].steps.is_empty());
    assert_eq!(sources.files.len(), 1);
}

/// A graph with a subgraph, for the reading of transitions.
const SUB_GRAPH: &str = r#"{
  "format": "qls-graph/1",
  "name": "sub",
  "budget": {"steps": 20},
  "nodes": [
    {"id": "__start__", "kind": "start"},
    {"id": "agent", "kind": "model", "tools": ["get_order", "refund_card"]},
    {"id": "kb", "kind": "subgraph", "graph": "kb_graph"},
    {"id": "pay", "kind": "tools", "tools": ["refund_card"]},
    {"id": "act", "kind": "tools_plain", "tools": ["get_order", "refund_card"]},
    {"id": "__end__", "kind": "end"}
  ],
  "edges": [
    {"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
    {"from": "agent", "kind": "conditional", "destinations": ["kb", "act", "__end__"]},
    {"from": "kb", "kind": "fixed", "destinations": ["pay"]},
    {"from": "pay", "kind": "fixed", "destinations": ["__end__"]},
    {"from": "act", "kind": "conditional", "destinations": null}
  ],
  "subgraphs": {
    "kb_graph": {
      "nodes": [
        {"id": "__start__", "kind": "start"},
        {"id": "retrieve", "kind": "step"},
        {"id": "__end__", "kind": "end"}
      ],
      "edges": [
        {"from": "__start__", "kind": "fixed", "destinations": ["retrieve"]},
        {"from": "retrieve", "kind": "fixed", "destinations": ["__end__"]}
      ]
    }
  }
}"#;

const SUB_CATALOGUE: &str = r#"{
  "format": "qls-catalogue/1",
  "tools": {
    "get_order": {"kind": "read"},
    "refund_card": {"kind": "write", "idempotency": true, "result": {}, "compensation": "none"},
    "audit_export": {"kind": "read", "privilege": "high"}
  }
}"#;

/// The QG016 findings (subject, node, first run) of `runs` on [`SUB_GRAPH`].
fn qg016(runs: &[&str]) -> Vec<(String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("graph.json");
    let c = dir.path().join("catalogue.json");
    let t = dir.path().join("runs.jsonl");
    std::fs::write(&g, SUB_GRAPH).unwrap();
    std::fs::write(&c, SUB_CATALOGUE).unwrap();
    std::fs::write(&t, runs.join("\n")).unwrap();
    let mut inputs = load_export(&g, &c).unwrap();
    let traces = read_traces(&mut inputs.sources, Path::new(&t)).unwrap();
    let m = stalwart::model::flatten(&inputs.export, &inputs.catalogue, 1).unwrap();
    let (found, info) = unmodelled_paths(&m, &traces, "runs.jsonl");
    assert_eq!(info.runs, runs.len());
    found
        .iter()
        .map(|f| {
            let first = f
                .message
                .split("run '")
                .nth(1)
                .and_then(|r| r.split('\'').next())
                .unwrap_or("")
                .to_string();
            (f.subject.clone(), f.node.clone().unwrap_or_default(), first)
        })
        .collect()
}

fn run(id: &str, steps: &[(&str, Option<&str>)]) -> String {
    let steps: Vec<serde_json::Value> = steps
        .iter()
        .map(|(n, t)| match t {
            Some(t) => serde_json::json!({"node": n, "tool": t}),
            None => serde_json::json!({"node": n}),
        })
        .collect();
    serde_json::json!({"run": id, "steps": steps}).to_string()
}

#[test]
fn subgraphs_start_and_end_are_read_as_a_trace_shows_them() {
    let pay = ("pay", Some("refund_card"));
    // Each of these keeps to the export.
    let good = [
        // The subgraph as one step, its inside, or both.
        run("a", &[("agent", None), ("kb", None), pay]),
        run("b", &[("agent", None), ("kb/retrieve", None), pay]),
        run(
            "c",
            &[("agent", None), ("kb", None), ("kb/retrieve", None), pay],
        ),
        // LangGraph's names for the entry and the end, and a second turn after the end.
        run(
            "d",
            &[
                ("__start__", None),
                ("agent", None),
                ("__end__", None),
                ("agent", None),
                ("kb", None),
                pay,
            ],
        ),
        // The same node twice is no transition; a null edge reaches every node of its graph.
        run(
            "e",
            &[
                ("agent", None),
                ("act", Some("get_order")),
                ("act", Some("refund_card")),
                ("pay", Some("refund_card")),
            ],
        ),
    ];
    let refs: Vec<&str> = good.iter().map(String::as_str).collect();
    assert_eq!(qg016(&refs), vec![]);
}

#[test]
fn missing_transitions_then_privileged_calls() {
    let found = qg016(&[
        // agent -> pay skips kb: a write follows.
        &run("w1", &[("agent", None), ("pay", Some("refund_card"))]),
        // The same call after another gap: merged into w1's finding.
        &run(
            "w2",
            &[
                ("ghost", None),
                ("agent", None),
                ("kb", None),
                ("pay", Some("refund_card")),
            ],
        ),
        // A privileged read after a gap, at a node the export does not have.
        &run("p1", &[("agent", None), ("shadow", Some("audit_export"))]),
        // An end that is not listed: agent -> agent is no transition, but pay -> agent is missing.
        &run(
            "t1",
            &[
                ("agent", None),
                ("kb", None),
                ("pay", None),
                ("agent", None),
                ("act", Some("refund_card")),
            ],
        ),
        // A tool the catalogue does not have, and a read, after a gap: nothing.
        &run(
            "n1",
            &[
                ("agent", None),
                ("pay", Some("mystery")),
                ("pay", Some("get_order")),
            ],
        ),
        // A write before the gap only: nothing.
        &run(
            "n2",
            &[
                ("agent", None),
                ("kb", None),
                ("pay", Some("refund_card")),
                ("agent", None),
            ],
        ),
        // The entry's transition itself can be the gap.
        &run("e1", &[("pay", Some("refund_card"))]),
    ]);
    assert_eq!(
        found,
        vec![
            ("refund_card".into(), "pay".into(), "w1".into()),
            ("audit_export".into(), "shadow".into(), "p1".into()),
            ("refund_card".into(), "act".into(), "t1".into()),
        ]
    );
}

#[test]
fn a_call_the_node_cannot_make_leaves_the_graph() {
    let found = qg016(&[
        // The model node calls no tool in the export: the write there is an unmodelled call.
        &run("b1", &[("agent", Some("refund_card"))]),
        // pay does not bind get_order: the run left the graph there, and then refunds at act.
        &run(
            "b2",
            &[
                ("agent", None),
                ("kb", None),
                ("pay", Some("get_order")),
                ("pay", None),
                ("__end__", None),
                ("agent", None),
                ("act", Some("refund_card")),
            ],
        ),
        // A tool the catalogue does not have, then nothing privileged: no finding.
        &run("n1", &[("agent", None), ("act", Some("mystery"))]),
    ]);
    assert_eq!(
        found,
        vec![
            ("refund_card".into(), "agent".into(), "b1".into()),
            ("refund_card".into(), "act".into(), "b2".into()),
        ]
    );
}
