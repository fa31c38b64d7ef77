//! `--replay FINDING` (SPEC 10): the walkthrough, the JSON script, QG312 for a witness that does
//! not reproduce, the errors, and the Python harness replaying a script on the real LangGraph
//! graph (when Python with langgraph is installed; skipped otherwise, saying so).

use crate::common;

use common::{root, snap, stalwart};
use stalwart::replay;
use stalwart::{verify_with_model, Options};

#[test]
fn the_shop_finding_replays_step_by_step() {
    let r = stalwart(&["verify", "fixtures/shop/agent.yaml", "--replay", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    assert!(out.starts_with("Replay of finding 2 of fixtures/shop/agent.yaml: QG105 Review on refund_card at billing_tools\n"), "{out}");
    // Each step numbered, the latches it changed under it, the breaking call marked.
    assert!(
        out.contains(
            "   6          call get_order (guarded)\n                count[get_order] = 1\n"
        ),
        "{out}"
    );
    assert!(out.contains("   8          choose -> desk_model\n                ran[get_order] = true; ran[charge_card] = true\n"), "{out}");
    assert!(
        out.contains("  14          call refund_card (guarded)  <- breaks O8 (recovery)\n"),
        "{out}"
    );
    // The source lines, as ariadne's numbered labels.
    assert!(
        out.contains("13 enter billing_tools; 14 call refund_card (guarded)"),
        "{out}"
    );
    assert!(out.contains("Reproduced: step 14, call refund_card (guarded) at billing_tools, breaks O8 (recovery) in turn 1, as finding 2 says.\n"), "{out}");
    assert!(!out.contains('\u{1b}'), "no colour when asked for none");
    snap("replay_shop.txt", out);
    // The fingerprint, or a prefix of it, names the same finding.
    let by_print = stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--replay",
        "451f34ab881b803e",
    ]);
    assert_eq!(by_print.stdout, r.stdout);
    let by_prefix = stalwart(&["verify", "fixtures/shop/agent.yaml", "--replay", "451F"]);
    assert_eq!(by_prefix.stdout, r.stdout);
}

#[test]
fn the_json_script_has_every_step_and_what_it_changed() {
    let r = stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--replay",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["format"], "stalwart-replay/1");
    assert_eq!(v["reproduces"], true);
    assert_eq!(v["qg312"], serde_json::Value::Null);
    assert_eq!(v["finding"]["index"], 2);
    assert_eq!(v["finding"]["fingerprint"], "451f34ab881b803e");
    assert!(v["finding"].get("witness").is_none());
    let steps = v["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 14);
    assert_eq!(v["stopped_at"], 14);
    let calls: Vec<(&str, &str)> = steps
        .iter()
        .filter(|s| s["kind"] == "call")
        .map(|s| {
            (
                s["node"].as_str().unwrap_or(""),
                s["tool"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("desk_tools", "get_order"),
            ("desk_tools", "charge_card"),
            ("billing_tools", "refund_card")
        ]
    );
    assert_eq!(steps[7]["kind"], "choose");
    assert_eq!(steps[7]["node_kind"], "tools");
    assert_eq!(
        steps[7]["changes"],
        serde_json::json!(["ran[get_order] = true", "ran[charge_card] = true"])
    );
    assert_eq!(steps[12]["run_steps"], 5);
    assert_eq!(steps[13]["violation"], true);
    assert_eq!(
        v["latches_at_last_step"],
        serde_json::json!([
            "ran[get_order] = true",
            "count[get_order] = 1",
            "ran[charge_card] = true",
            "count[charge_card] = 1",
            "wrote = true"
        ])
    );
    snap("replay_shop.json", &r.stdout);
}

/// `stalwart verify --graph F/graph.json --catalogue F/catalogue.json --replay FINDING` with
/// `more` arguments, for fixture folder `f`, which must reproduce (exit 0).
fn replay_fixture(f: &str, finding: &str, more: &[&str]) -> String {
    let (g, c) = (format!("{f}/graph.json"), format!("{f}/catalogue.json"));
    let mut args = vec![
        "verify",
        "--graph",
        &g,
        "--catalogue",
        &c,
        "--replay",
        finding,
    ];
    args.extend_from_slice(more);
    let r = stalwart(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

/// SPEC 12.2: a reviewed call's step says the person's answer, in the walkthrough and in the
/// script (`"when": "call"`, `"yes"`), so a harness answers each call as the witness did.
#[test]
fn a_reviewed_call_replays_with_the_persons_answer() {
    let f = "fixtures/QG014/breaks-all-declined-batch-moves-on";
    let out = replay_fixture(f, "1d41f998", &[]);
    assert!(
        out.contains("    4          call send (plain, reviewed: no, not run)\n"),
        "{out}"
    );
    assert!(
        out.contains("    7          call notify (plain)  <- breaks O3"),
        "{out}"
    );
    snap("replay_reviewed.txt", &out);
    let script = replay_fixture(f, "1d41f998", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&script).expect("json");
    let send = &v["steps"][3];
    assert_eq!(
        [
            &send["kind"],
            &send["tool"],
            &send["when"],
            &send["yes"],
            &send["refused"]
        ],
        [
            &serde_json::json!("call"),
            &serde_json::json!("send"),
            &serde_json::json!("call"),
            &serde_json::json!(false),
            &serde_json::json!(true)
        ]
    );
    snap("replay_reviewed.json", &script);
    // A yes runs the call, and the walkthrough says so.
    let out = replay_fixture("fixtures/QG014/breaks-reviewed-call", "fb51d9f3", &[]);
    assert!(
        out.contains("call send_email (plain, reviewed: yes)\n                count[send_email] = 1; wrote = true\n"),
        "{out}"
    );
    // Outside input: the turn starts tainted, as the first step shows.
    let out = replay_fixture("fixtures/QG011/breaks-input-reads-outside", "c3e82489", &[]);
    assert!(
        out.contains("    1  turn 1  enter __start__\n                tainted += breaks-input-reads-outside\n"),
        "{out}"
    );
}

#[test]
fn a_witness_that_does_not_reproduce_is_qg312() {
    let inputs = stalwart::input::load_agent_yaml(std::path::Path::new("fixtures/shop/agent.yaml"))
        .expect("shop");
    let (mut report, model) = verify_with_model(inputs, &Options::new(1)).expect("verify");
    let i = replay::select(&report, "451f34ab881b803e").expect("the QG105 finding");
    // Take out the call of charge_card: without another write the call of refund_card no
    // longer breaks recovery.
    let w = &mut report.findings[i].witness;
    let k = w
        .iter()
        .position(|s| s.tool.as_deref() == Some("charge_card"))
        .expect("charge_card call");
    w.remove(k);
    let walk = replay::walk(&model, &report, i).expect("walk");
    assert!(!walk.reproduces());
    let (q, step) = walk.unreproduced.as_ref().expect("QG312");
    assert_eq!(q.rule, "QG312");
    assert_eq!(q.subject, "refund_card");
    assert!(
        q.message
            .contains("does not reproduce the witness of finding 2 (QG105)"),
        "{}",
        q.message
    );
    assert_eq!(
        *step, None,
        "the walk is legal; its last call breaks nothing"
    );
    let text = stalwart::output::replay::text(&report, &walk, false);
    assert!(
        text.contains("Not reproduced: QG312 High on refund_card\n"),
        "{text}"
    );
    snap("replay_unreproduced.txt", &text);
    // A step that cannot happen is named, and the walk stops there.
    let w = &mut report.findings[i].witness;
    w.retain(|s| s.node != "desk" || s.kind != stalwart::StepKind::Enter);
    let walk = replay::walk(&model, &report, i).expect("walk");
    let (q, step) = walk.unreproduced.as_ref().expect("QG312");
    assert_eq!(*step, Some(2));
    assert!(
        q.message
            .contains("step 3: no usable edge from '__start__' to 'desk_tools'"),
        "{}",
        q.message
    );
    let text = stalwart::output::replay::text(&report, &walk, false);
    assert!(
        text.contains("    3          choose -> desk_tools  <- the walk stops here\n"),
        "{text}"
    );
}

/// miette's message with its frame and line wrapping taken out.
fn flat(s: &str) -> String {
    s.replace(['│', '×'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn naming_no_replayable_finding_is_exit_2() {
    for (arg, want) in [
        ("9", "no finding 9: this run has 2 finding(s)"),
        ("0", "no finding 0"),
        (
            "1",
            "finding 1 (QG023) has no route through the graph to replay",
        ),
        (
            "zz",
            "'zz' is neither a finding number (from 1) nor 4 or more hex digits of a fingerprint",
        ),
        (
            "ffff",
            "no finding of this run has a fingerprint starting 'ffff'",
        ),
    ] {
        let r = stalwart(&["verify", "fixtures/shop/agent.yaml", "--replay", arg]);
        assert_eq!(r.code, 2, "{arg}: {}", r.stdout);
        assert!(flat(&r.stderr).contains(want), "{arg}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let r = stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--replay",
        "2",
        "--format",
        "sarif",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--replay writes text or JSON"),
        "{}",
        r.stderr
    );
}

#[test]
fn replay_writes_no_sarif_and_sees_what_a_baseline_hides() {
    let r = stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--replay",
        "2",
        "--sarif",
        "/tmp/never-written.sarif",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        flat(&r.stderr).contains("--replay writes one finding's walkthrough, not a SARIF log"),
        "{}",
        r.stderr
    );
    // A baseline that knows every finding hides nothing from --replay.
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("base.json");
    let j = stalwart(&["verify", "fixtures/shop/agent.yaml", "--format", "json"]);
    std::fs::write(&base, &j.stdout).expect("write");
    let base_s = base.to_string_lossy().into_owned();
    let r = stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--replay",
        "451f34ab",
        "--baseline",
        &base_s,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Reproduced: step 14"), "{}", r.stdout);
    // Three digits are a number, and the help says how to name a fingerprint.
    let r = stalwart(&["verify", "fixtures/shop/agent.yaml", "--replay", "451"]);
    assert_eq!(r.code, 2);
    assert!(
        flat(&r.stderr).contains("give 4 or more hex digits of a fingerprint"),
        "{}",
        r.stderr
    );
}

#[test]
fn every_graph_finding_of_the_fixtures_replays() {
    // Every finding with a route through the graph, in every fixture, reproduces.
    let mut replayed = 0;
    for (_, dir) in common::cases() {
        let inputs = common::load(&dir);
        let steps = common::steps(&inputs);
        let (report, model) = verify_with_model(inputs, &Options::new(steps)).expect("verify");
        for i in 0..report.findings.len() {
            if let Ok(w) = replay::walk(&model, &report, i) {
                assert!(
                    w.reproduces(),
                    "{} finding {}: {:?}",
                    dir.display(),
                    i + 1,
                    w.unreproduced
                );
                assert_eq!(w.steps.len(), report.findings[i].witness.len());
                replayed += 1;
            }
        }
    }
    assert!(replayed >= 20, "only {replayed} findings replayed");
}

/// A Python that has langgraph: `STALWART_PYTHON`, else `python3`; `None` (saying why) if none.
fn langgraph_python() -> Option<String> {
    let py = std::env::var("STALWART_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", "import langgraph.prebuilt, langchain_core"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(&format!(
            "skipped the LangGraph harness test: {py} cannot import langgraph (pip install -r examples/langgraph_replay/requirements.txt, or set STALWART_PYTHON)"
        ));
    }
    ok.then_some(py)
}

#[test]
fn the_python_harness_replays_scripts_on_the_real_langgraph_graph() {
    let Some(shared) = common::shared("the LangGraph harness test") else {
        return;
    };
    let Some(py) = langgraph_python() else {
        return;
    };
    let corpus = shared.join("corpus/langgraph");
    let catalogue = corpus.join("catalogue.json");
    let dir = std::env::temp_dir().join(format!("stalwart-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // (export, graph builder, finding, the calls the real graph must make)
    let cases = [
        (
            "react_agent",
            "graph",
            "4",
            "['read_inbox', 'refund_order']",
        ),
        ("react_agent", "graph", "1", "['get_order']"),
        (
            "react_agent_interrupt",
            "graph_with_interrupt",
            // QG105 on refund_order, by fingerprint (numbers move when findings are added).
            "318bf36b",
            "['refund_order', 'refund_order']",
        ),
    ];
    for (export, builder, finding, calls) in cases {
        let graph = corpus.join(format!("{export}.json"));
        let r = stalwart(&[
            "verify",
            "--graph",
            graph.to_str().expect("utf-8 path"),
            "--catalogue",
            catalogue.to_str().expect("utf-8 path"),
            "--replay",
            finding,
            "--format",
            "json",
        ]);
        assert_eq!(r.code, 0, "{export} {finding}: {}", r.stderr);
        let script = dir.join(format!("{export}-{finding}.json"));
        std::fs::write(&script, &r.stdout).expect("write script");
        let out = std::process::Command::new(&py)
            .arg("replay_harness.py")
            .arg(&script)
            .arg(&catalogue)
            .args(["--graph", &format!("demo_agent:{builder}")])
            .current_dir(root().join("examples/langgraph_replay"))
            .output()
            .expect("run the harness");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{export} {finding}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!(
                "the real graph follows the witness and makes its calls {calls}"
            )),
            "{export} {finding}: {stdout}"
        );
    }
    // A script of the plain agent does not fit the agent that pauses before its tools.
    let script = dir.join("react_agent-4.json");
    let out = std::process::Command::new(&py)
        .arg("replay_harness.py")
        .arg(&script)
        .arg(&catalogue)
        .args(["--graph", "demo_agent:graph_with_interrupt"])
        .current_dir(root().join("examples/langgraph_replay"))
        .output()
        .expect("run the harness");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("the run pauses at tools and the witness has no answer for it"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
