//! The real binary, run as a user runs it (STYLE: zizmor's CLI tests): exit codes, error messages,
//! and insta snapshots of the text, JSON and SARIF reports of the shop and its plain variant.
//! Commands run from the crate root with relative paths, colour off, CI variables cleared, so the
//! output is the same bytes on every machine.

use crate::common;

use std::process::Command;

use common::{snap, stalwart, without_times};

/// A finding's header line: `  QG011 High on charge_card (agent.yaml:5)`.
fn is_head(l: &str) -> bool {
    l.starts_with("  QG") && l.contains(" on ") && !l.contains(": ")
}

const SHOP: &str = "fixtures/shop/agent.yaml";
const PLAIN: [&str; 4] = [
    "--graph",
    "fixtures/shop-plain/graph.json",
    "--catalogue",
    "fixtures/shop-plain/catalogue.json",
];

#[test]
fn shop_passes_with_the_seeds_findings() {
    let r = stalwart(&["verify", SHOP]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = [
        "  write_not_retry_safe (warning) on charge_card: a write with no idempotency, so an ambiguous failure goes to a person",
        "  write_without_result_schema (warning) on charge_card: a write with no result schema, so its outcome could not be reported",
        "  compensation_not_retry_safe (warning) on charge_card: 'refund_card' undoes it and is not retry-safe",
        "  write_not_retry_safe (warning) on refund_card: a write with no idempotency, so an ambiguous failure goes to a person",
        "  write_without_result_schema (warning) on refund_card: a write with no result schema, so its outcome could not be reported",
        "  write_without_result_schema (warning) on send_receipt: a write with no result schema, so its outcome could not be reported",
        "  compensation_out_of_reach (warning) on charge_card: agent 'desk' can call it but not 'refund_card', which undoes it, so a run of that agent cannot undo it",
    ];
    let lints: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains(" (warning) on "))
        .collect();
    assert_eq!(lints, want);
    let heads: Vec<&str> = r.stdout.lines().filter(|l| is_head(l)).collect();
    assert_eq!(
        heads,
        [
            "  QG023 Medium on cycle:desk_model (agent.yaml:3)",
            "  QG105 Review on refund_card (agent.yaml:10)"
        ]
    );
    assert!(r.stdout.contains("\nGate: passed. Nothing blocks this agent: the 2 warnings above are for you to look at and weigh.\n"));
    for rule in [
        "QG017", "QG018", "QG019", "QG020", "QG021", "QG106", "QG107",
    ] {
        assert!(
            r.stdout.contains(&format!("\n  {rule}: ")),
            "{rule} under nothing to read"
        );
    }
    snap("shop.txt", &r.stdout);
}

#[test]
fn shop_json_and_sarif() {
    let j = stalwart(&["verify", SHOP, "--format", "json"]);
    assert_eq!(j.code, 0);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    assert_eq!(v["gate"]["passed"], true);
    assert_eq!(v["findings"].as_array().map(|a| a.len()), Some(2));
    snap("shop.json", &without_times(&j.stdout));
    let s = stalwart(&["verify", SHOP, "--format", "sarif"]);
    assert_eq!(s.code, 0);
    snap("shop.sarif", &s.stdout);
}

#[test]
fn shop_plain_fails_as_spec_11_says() {
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    let r = stalwart(&args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let mut heads: Vec<String> = r
        .stdout
        .lines()
        .filter(|l| is_head(l))
        .map(|l| l.split(" (").next().unwrap_or(l).trim().to_string())
        .collect();
    heads.sort();
    assert_eq!(
        heads,
        [
            "QG001 Critical on send_receipt",
            "QG001 High on charge_card",
            "QG001 Medium on get_order",
            "QG001 Medium on read_inbox",
            "QG011 Critical on send_receipt",
            "QG011 High on charge_card",
            // SPEC 3.1 "The guard's view": billing's guard never saw desk's plain read_inbox.
            "QG012 High on refund_card",
            "QG013 High on charge_card",
            "QG023 Medium on cycle:desk_model",
            "QG101 Review on charge_card",
            "QG101 Review on refund_card",
            "QG101 Review on send_receipt",
            "QG105 Review on refund_card",
        ]
    );
    assert!(r.stdout.contains("\nGate: failed."));
    snap("shop-plain.txt", &r.stdout);
    let mut args = vec!["verify", "--format", "json"];
    args.extend(PLAIN);
    let j = stalwart(&args);
    assert_eq!(j.code, 1);
    snap("shop-plain.json", &without_times(&j.stdout));
    let mut args = vec!["verify", "--format", "sarif"];
    args.extend(PLAIN);
    let s = stalwart(&args);
    assert_eq!(s.code, 1);
    snap("shop-plain.sarif", &s.stdout);
}

/// `--format github`: one workflow command per finding, `error` for what blocks, `notice` for a
/// hotspot, `warning` for the rest, at the declaring file and line; the gate line last; the exit
/// status the gate's.
#[test]
fn github_annotations_for_the_job_log() {
    let shop = stalwart(&["verify", SHOP, "--format", "github"]);
    assert_eq!(shop.code, 0, "{}", shop.stderr);
    let lines: Vec<&str> = shop.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", shop.stdout);
    assert!(
        lines[0].starts_with("::warning file=fixtures/shop/agent.yaml,line=3,col="),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("::notice file=fixtures/shop/agent.yaml,line=10,col="),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains(",title=QG105 Review on refund_card ("));
    assert_eq!(
        lines[2],
        "Gate: passed. Nothing blocks this agent under the ci gate (2 finding(s) to weigh)."
    );
    snap("shop.github", &shop.stdout);
    let mut args = vec!["verify", "--format", "github"];
    args.extend(PLAIN);
    let plain = stalwart(&args);
    assert_eq!(plain.code, 1, "{}", plain.stderr);
    let errors = plain
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error file=fixtures/shop-plain/"))
        .count();
    assert_eq!(errors, 7, "{}", plain.stdout);
    for l in plain.stdout.lines().filter(|l| l.starts_with("::")) {
        // One command a line: the message's own line breaks are escaped.
        assert!(
            l.contains("%0AFix: ") && l.contains("%0AFingerprint: "),
            "{l}"
        );
    }
    assert!(plain
        .stdout
        .ends_with("Gate: failed. 7 finding(s) block this agent under the ci gate.\n"));
    snap("shop-plain.github", &plain.stdout);
}

#[test]
fn start_gate_reads_the_stops_column() {
    // QG013 neither fails the gate nor stops Agent(...); QG001 and QG011 do both.
    let mut args = vec!["verify", "--gate", "start"];
    args.extend(PLAIN);
    assert_eq!(stalwart(&args).code, 1);
    assert_eq!(stalwart(&["verify", SHOP, "--gate", "start"]).code, 0);
}

#[test]
fn export_only_round_trips_to_the_same_findings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("desk.json");
    let out_s = out.to_string_lossy().into_owned();
    let r = stalwart(&["verify", SHOP, "--export-only", &out_s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cat = dir.path().join("desk.catalogue.json");
    assert!(cat.exists(), "the catalogue is written beside the export");
    let g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("read")).expect("json");
    assert_eq!(g["format"], "qls-graph/1");
    let a = stalwart(&["verify", SHOP, "--format", "json"]);
    // The export carries the graph and the catalogue; the rulebook is given again.
    let b = stalwart(&[
        "verify",
        "--graph",
        &out_s,
        "--catalogue",
        &cat.to_string_lossy(),
        "--rulebook",
        "fixtures/shop/policy.co",
        "--format",
        "json",
    ]);
    let rules = |s: &str| -> Vec<(String, String)> {
        let v: serde_json::Value = serde_json::from_str(s).expect("json");
        v["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap_or("").to_string(),
                    f["subject"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    assert_eq!(rules(&a.stdout), rules(&b.stdout));
    assert_eq!(a.code, b.code);
}

#[test]
fn sarif_file_and_output_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sarif = dir.path().join("out.sarif");
    let text = dir.path().join("report.txt");
    let r = stalwart(&[
        "verify",
        SHOP,
        "--sarif",
        &sarif.to_string_lossy(),
        "--output",
        &text.to_string_lossy(),
    ]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.is_empty(),
        "--output takes the report off standard output"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    assert_eq!(s["version"], "2.1.0");
    assert!(std::fs::read_to_string(&text)
        .expect("text")
        .contains("Gate: passed."));
}

#[test]
fn bad_invocations_exit_2_and_say_why() {
    let cases: &[(&[&str], &str)] = &[
        (&["verify"], "nothing to verify"),
        (
            &["verify", "fixtures/does-not-exist.yaml"],
            "does-not-exist.yaml",
        ),
        (
            &["verify", "--graph", "fixtures/shop-plain/graph.json"],
            "--graph needs --catalogue",
        ),
        (
            &["verify", SHOP, "--graph", "fixtures/shop-plain/graph.json"],
            "not both",
        ),
        (&["verify", SHOP, "--session-steps", "0"], "out of range"),
        (&["verify", SHOP, "--session-steps", "17"], "out of range"),
        (&["verify", SHOP, "--format", "xml"], "xml"),
        (&["verify", SHOP, "--engine", "cvc5"], "cvc5"),
        (&["verify", SHOP, "--solver-timeout-ms", "soon"], "soon"),
        // Each limit's range is the one its `stalwart.toml` key takes (config::Limit).
        (&["verify", SHOP, "--max-states", "0"], "0 is not in 1..="),
        (
            &["verify", SHOP, "--max-run-states", "0"],
            "0 is not in 1..=",
        ),
        (
            &["verify", SHOP, "--solver-timeout-ms", "0"],
            "0 is not in 1..=4294967295",
        ),
        (
            &["verify", SHOP, "--solver-max-unrolling", "0"],
            "0 is not in 1..=",
        ),
        (
            &["verify", SHOP, "--solver-rlimit", "4294967296"],
            "not in 1..=4294967295",
        ),
        (&["rules", "explain", "QG999"], "no rule 'QG999'"),
        (
            &[
                "verify",
                "--graph",
                "fixtures/shop/agent.yaml",
                "--catalogue",
                "fixtures/shop-plain/catalogue.json",
            ],
            "qls-graph/1",
        ),
        // A file given with --catalogue is the export: an agent.yaml there is no qls-graph/1.
        (
            &[
                "verify",
                SHOP,
                "--catalogue",
                "fixtures/shop-plain/catalogue.json",
            ],
            "qls-graph/1",
        ),
    ];
    for (args, needle) in cases {
        let r = stalwart(args);
        assert_eq!(r.code, 2, "{args:?} exits 2\n{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(needle),
            "{args:?}: stderr names {needle:?}\n{}",
            r.stderr
        );
        assert!(
            !r.stdout.contains("Gate: passed"),
            "a run that could not prove prints no clean result"
        );
    }
}

/// `stalwart verify graph.json --catalogue c.json`, as users type it, is `--graph graph.json`.
#[test]
fn an_export_given_first_with_its_catalogue_is_verified_as_with_graph() {
    let (g, c) = (
        "fixtures/shop-plain/graph.json",
        "fixtures/shop-plain/catalogue.json",
    );
    let first = stalwart(&["verify", g, "--catalogue", c, "--format", "json"]);
    let flagged = stalwart(&["verify", "--graph", g, "--catalogue", c, "--format", "json"]);
    assert_eq!(
        first.code, 1,
        "the plain shop fails its gate\n{}",
        first.stderr
    );
    assert_eq!(first.code, flagged.code);
    let read = |out: &str| serde_json::from_str::<serde_json::Value>(out).expect("a JSON report");
    let (a, b) = (read(&first.stdout), read(&flagged.stdout));
    // The same report either way (the engines' timings aside).
    for key in ["input", "gate", "findings", "lints", "scope"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert!(first.stdout.contains("\"QG001\""), "{}", first.stdout);
}

#[test]
fn rules_list_and_explain() {
    let l = stalwart(&["rules", "list"]);
    assert_eq!(l.code, 0);
    for r in stalwart::rules::all() {
        assert!(l.stdout.contains(&r.id), "{} listed", r.id);
    }
    let e = stalwart(&["rules", "explain", "QG011"]);
    assert_eq!(e.code, 0);
    assert!(e.stdout.contains("Confused deputy"));
    assert!(e.stdout.to_lowercase().contains("fix"));
}

const LANGGRAPH: [&str; 4] = [
    "--graph",
    "fixtures/langgraph-plain/graph.json",
    "--catalogue",
    "fixtures/langgraph-plain/catalogue.json",
];

/// SPEC 12: an export whose `producer` is LangGraph's (here `stalwart_export`'s) is told the
/// LangGraph remedy for QG001, QG011-QG014 - the guard, `interrupt_before`, the review middleware,
/// with a one-line example - in the text report, JSON and SARIF (the rules' help too); other
/// rules and other producers keep their fixes.
#[test]
fn a_langgraph_export_is_told_the_langgraph_fix() {
    let mut args = vec!["verify"];
    args.extend(LANGGRAPH);
    let r = stalwart(&args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let fixes: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("    Fix: "))
        .collect();
    assert!(fixes.iter().any(|l| l.contains(
        "`create_agent(model, tools, middleware=[guard])`; with `create_react_agent`, which takes no middleware, `create_react_agent(model, tools=guard.tool_node([...]), state_schema=State)` where `State` holds `stalwart_guard: GuardHistory`; in a hand-built graph, `builder.add_node(\"tools\", guard.tool_node(tools))`"
    )));
    // Issue 28: the subgraph's node is named as its builder's `add_node` wrote it.
    assert!(fixes
        .iter()
        .any(|l| l.contains("`builder.add_node(\"search\", guard.tool_node(tools))`")));
    assert!(!fixes
        .iter()
        .any(|l| l.contains("add_node(\"research/search\"")));
    assert!(fixes
        .iter()
        .any(|l| l.contains("HumanInTheLoopMiddleware(interrupt_on={\"send_email\": True})")));
    assert!(fixes
        .iter()
        .any(|l| l.contains("`builder.compile(interrupt_before=[\"tools\"])`")));
    snap("langgraph-plain.txt", &r.stdout);
    let mut args = vec!["verify", "--format", "json"];
    args.extend(LANGGRAPH);
    let j = stalwart(&args);
    assert_eq!(j.code, 1);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    for f in v["findings"].as_array().expect("findings") {
        let rule = f["rule"].as_str().unwrap_or("");
        let fix = f["fix"].as_str().unwrap_or("");
        let langgraph = ["QG001", "QG011", "QG012", "QG013", "QG014"].contains(&rule);
        assert_eq!(fix.starts_with("In LangGraph,"), langgraph, "{rule}: {fix}");
        if langgraph {
            assert!(fix.contains("Guard"), "{rule}: {fix}");
        }
    }
    snap("langgraph-plain.json", &without_times(&j.stdout));
    let mut args = vec!["verify", "--format", "sarif"];
    args.extend(LANGGRAPH);
    let s = stalwart(&args);
    assert_eq!(s.code, 1);
    let v: serde_json::Value = serde_json::from_str(&s.stdout).expect("sarif");
    let rules = v["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    let help = |id: &str| {
        rules
            .iter()
            .find(|r| r["id"] == id)
            .and_then(|r| r["help"]["text"].as_str())
            .unwrap_or("")
            .to_string()
    };
    assert!(help("QG014").contains("Fix: In LangGraph, run '<tool>' through the guard"));
    assert!(!help("QG023").contains("LangGraph"));
    snap("langgraph-plain.sarif", &s.stdout);
    // The same graph without its producer is told the graph's terms.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("fixtures/langgraph-plain/graph.json"))
            .expect("read"),
    )
    .expect("json");
    g.as_object_mut().expect("object").remove("producer");
    let gp = dir.path().join("graph.json");
    std::fs::write(&gp, g.to_string()).expect("write");
    let gp = gp.display().to_string();
    let o = stalwart(&[
        "verify",
        "--graph",
        &gp,
        "--catalogue",
        "fixtures/langgraph-plain/catalogue.json",
    ]);
    assert_eq!(o.code, 1);
    assert!(!o.stdout.contains("In LangGraph"), "{}", o.stdout);
    assert!(o.stdout.contains(
        "Fix: Bind 'charge_card' to a guarded tool node (kind `tools`) instead of 'tools'"
    ));
}

#[test]
fn rules_explain_gives_the_langgraph_fix() {
    let e = stalwart(&["rules", "explain", "QG001"]);
    assert_eq!(e.code, 0);
    assert!(e.stdout.contains("\nHow to fix it, in a LangGraph graph\n"));
    // Code spans are never broken across lines.
    assert!(e
        .stdout
        .lines()
        .any(|l| l.contains("`create_agent(model, tools, middleware=[guard])`")));
    snap("explain-qg001.txt", &e.stdout);
    let e = stalwart(&["rules", "explain", "QG023"]);
    assert!(!e.stdout.contains("LangGraph"));
}

#[test]
fn unknown_words_are_kept_and_named_in_a_lint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let graph = common::root().join("fixtures/QG105/breaks-two-writes/graph.json");
    let cat = dir.path().join("catalogue.yaml");
    std::fs::write(
        &cat,
        "tools:\n  pay: {kind: write, team_owner: billing, idempotency: true, result: {}, args: {to: {role: postal}}}\n  ship: {kind: write, compensation: unship, idempotency: true, result: {}}\n  unship: {kind: write, idempotency: true, result: {}}\n",
    )
    .expect("write");
    let r = stalwart(&[
        "verify",
        "--graph",
        &graph.to_string_lossy(),
        "--catalogue",
        &cat.to_string_lossy(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(
        "  unknown_word (warning) on pay: 'team_owner' is not a word of the catalogue: it is kept and no rule reads it\n"
    ), "{}", r.stdout);
    assert!(r
        .stdout
        .contains("'args.to.role: postal' is not a word of the catalogue"));
    assert!(r.stdout.contains("QG105 Review on pay"));
}

/// Issue 28: a misspelt catalogue word (`irreversable`) is exit 2 at its line, naming the word it
/// meant; kept and ignored it would drop the tool's irreversibility from the proof.
#[test]
fn a_misspelt_catalogue_word_is_exit_2_naming_the_word_meant() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        common::root().join("fixtures/QG105/breaks-two-writes/graph.json"),
        dir.path().join("graph.json"),
    )
    .expect("copy");
    std::fs::write(
        dir.path().join("catalogue.yaml"),
        "tools:\n  pay: {kind: write, irreversable: true, idempotency: true, result: {}}\n  ship: {kind: write, compensation: unship, idempotency: true, result: {}}\n  unship: {kind: write, idempotency: true, result: {}}\n",
    )
    .expect("write");
    let r = common::stalwart_in(
        dir.path(),
        &[
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.yaml",
        ],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("catalogue-typo.txt", r.stderr);
    });
}

/// Inputs a hostile pull request could send (found by a fresh tester): each is refused or
/// neutralised with a clear message, never a crash, a hang or a leak.
#[test]
fn hostile_inputs_are_refused_or_neutralised() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let cat = d.join("catalogue.json");
    std::fs::write(&cat, r#"{"tools": {"pay": {"kind": "write"}}}"#).expect("write");
    let graph = |name: &str, body: String| {
        let p = d.join(name);
        std::fs::write(&p, body).expect("write");
        p.to_string_lossy().into_owned()
    };
    let react = |extra_node: &str, guard: &str| {
        format!(
            r#"{{"format": "qls-graph/1", "state": {{"f": {{"scope": "turn"}}}}, "nodes": [{{"id": "__start__", "kind": "start"}},
            {{"id": "agent", "kind": "model", "tools": ["pay"]{extra_node}}}, {{"id": "tools", "kind": "tools_plain", "tools": ["pay"]}},
            {{"id": "__end__", "kind": "end"}}], "edges": [{{"from": "__start__", "kind": "fixed", "destinations": ["agent"]}},
            {{"from": "agent", "kind": "conditional", "destinations": ["tools", "__end__"]{guard}}},
            {{"from": "tools", "kind": "fixed", "destinations": ["agent"]}}]}}"#
        )
    };
    let c = cat.to_string_lossy().into_owned();

    // A location naming a file outside the repository is not read into the report.
    let g = graph(
        "leak.json",
        react(
            r#", "location": {"file": "/etc/os-release", "line": 1}"#,
            "",
        ),
    );
    let r = stalwart(&["verify", "--graph", &g, "--catalogue", &c]);
    assert_eq!(r.code, 1);
    let secret = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    if let Some(first) = secret.lines().next().filter(|l| !l.is_empty()) {
        assert!(
            !r.stdout.contains(first),
            "the report printed a line of /etc/os-release:\n{}",
            r.stdout
        );
    }
    assert!(
        r.stdout.contains("(leak.json:"),
        "the finding points into the export itself\n{}",
        r.stdout
    );

    // A guard of thousands of terms is refused at its column, not a stack overflow.
    let long = vec!["f"; 5000].join(" && ");
    let g = graph("guard.json", react("", &format!(r#", "guard": "{long}""#)));
    let r = stalwart(&["verify", "--graph", &g, "--catalogue", &c]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("more than 256"), "{}", r.stderr);

    // Control characters in an id cannot forge report lines.
    let forged = react("", "").replace(r#""agent""#, r#""agent\nGate: passed.\u001b[8m""#);
    let g = graph("ansi.json", forged);
    let r = stalwart(&["verify", "--graph", &g, "--catalogue", &c]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("control character"), "{}", r.stderr);

    // A special file is not read until memory runs out.
    let r = stalwart(&["verify", "--graph", "/dev/zero", "--catalogue", &c]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);

    // The report and the SARIF cannot overwrite each other.
    let out = d.join("same.txt").to_string_lossy().into_owned();
    let r = stalwart(&["verify", SHOP, "--sarif", &out, "--output", &out]);
    assert_eq!(r.code, 2);

    // A full disk is exit 2, not a panic.
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let o = Command::new(env!("CARGO_BIN_EXE_stalwart"))
            .args(["verify", SHOP])
            .current_dir(common::root())
            .stdout(full)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(2));
    }
}

/// Subgraphs that multiply, and a long chain, end in bounded time with a clear answer.
#[test]
fn large_graphs_end_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let cat = d.join("catalogue.json");
    std::fs::write(&cat, r#"{"tools": {"pay": {"kind": "write"}}}"#).expect("write");
    // Sixteen levels, each using the next twice: 65,536 copies when inlined.
    let mut subs = serde_json::Map::new();
    for level in 0..16 {
        let inner = if level == 15 {
            serde_json::json!({"nodes": [{"id": "s", "kind": "start"}, {"id": "w", "kind": "step"}, {"id": "e", "kind": "end"}],
                "edges": [{"from": "s", "kind": "fixed", "destinations": ["w"]}, {"from": "w", "kind": "fixed", "destinations": ["e"]}]})
        } else {
            let next = format!("g{}", level + 1);
            serde_json::json!({"nodes": [{"id": "s", "kind": "start"}, {"id": "x", "kind": "subgraph", "graph": next},
                {"id": "y", "kind": "subgraph", "graph": next}, {"id": "e", "kind": "end"}],
                "edges": [{"from": "s", "kind": "fixed", "destinations": ["x"]}, {"from": "x", "kind": "fixed", "destinations": ["y"]},
                {"from": "y", "kind": "fixed", "destinations": ["e"]}]})
        };
        subs.insert(format!("g{level}"), inner);
    }
    let fan = serde_json::json!({"format": "qls-graph/1", "nodes": [{"id": "__start__", "kind": "start"},
        {"id": "kb", "kind": "subgraph", "graph": "g0"}, {"id": "__end__", "kind": "end"}],
        "edges": [{"from": "__start__", "kind": "fixed", "destinations": ["kb"]}, {"from": "kb", "kind": "fixed", "destinations": ["__end__"]}],
        "subgraphs": subs});
    let g = d.join("fan.json");
    std::fs::write(&g, fan.to_string()).expect("write");
    let r = stalwart(&[
        "verify",
        "--graph",
        &g.to_string_lossy(),
        "--catalogue",
        &cat.to_string_lossy(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nodes"), "{}", r.stderr);

    // A chain of 20,000 steps under a recursion limit of 30,000: no stack overflow anywhere.
    let mut nodes = vec![serde_json::json!({"id": "__start__", "kind": "start"})];
    let mut edges =
        vec![serde_json::json!({"from": "__start__", "kind": "fixed", "destinations": ["n0"]})];
    for i in 0..20_000 {
        nodes.push(serde_json::json!({"id": format!("n{i}"), "kind": "step"}));
        let next = if i + 1 < 20_000 {
            format!("n{}", i + 1)
        } else {
            "t".to_string()
        };
        edges.push(
            serde_json::json!({"from": format!("n{i}"), "kind": "fixed", "destinations": [next]}),
        );
    }
    nodes.push(serde_json::json!({"id": "t", "kind": "tools_plain", "tools": ["pay"]}));
    nodes.push(serde_json::json!({"id": "__end__", "kind": "end"}));
    edges.push(serde_json::json!({"from": "t", "kind": "fixed", "destinations": ["__end__"]}));
    let chain = serde_json::json!({"format": "qls-graph/1", "recursion_limit": 30000, "nodes": nodes, "edges": edges});
    let g = d.join("chain.json");
    std::fs::write(&g, chain.to_string()).expect("write");
    for format in ["text", "json", "sarif"] {
        let r = stalwart(&[
            "verify",
            "--graph",
            &g.to_string_lossy(),
            "--catalogue",
            &cat.to_string_lossy(),
            "--format",
            format,
        ]);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
    }
}

/// `--engine` picks the engines; the proof line says which ran and whether they agree, and the
/// shop's verdict is the same with each.
#[test]
fn each_engine_choice_gives_the_shop_its_verdict() {
    for (engine, says) in [
        ("explicit", "searched by the explicit engine alone:"),
        ("z3", "searched by the z3 engine alone:"),
        (
            "both",
            "searched by the explicit and the z3 engines, which agree:",
        ),
    ] {
        let r = stalwart(&["verify", SHOP, "--engine", engine]);
        assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
        assert!(r.stdout.contains(says), "{engine}:\n{}", r.stdout);
        let heads: Vec<&str> = r.stdout.lines().filter(|l| is_head(l)).collect();
        assert_eq!(
            heads,
            [
                "  QG023 Medium on cycle:desk_model (agent.yaml:3)",
                "  QG105 Review on refund_card (agent.yaml:10)"
            ],
            "{engine}"
        );
    }
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    args.extend(["--engine", "z3", "--format", "json"]);
    let j = stalwart(&args);
    assert_eq!(j.code, 1, "{}", j.stderr);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    assert_eq!(v["engines"]["ran"], serde_json::json!(["z3"]));
    assert_eq!(v["engines"]["explicit"]["ran"], false);
    assert_eq!(v["engines"]["z3"]["violated"], 6);
}

/// The test-only broken engine (debug builds): every disagreement is QG312, listed first, with
/// both answers, failing the gate; the JSON says the engines do not agree.
#[test]
fn a_broken_engine_fails_the_gate() {
    if !cfg!(debug_assertions) {
        eprintln!(
            "skipped: the broken engine exists only in debug builds (this is a release test run)"
        );
        return;
    }
    let run = |format: &str| {
        let mut args = vec!["verify"];
        args.extend(PLAIN);
        args.extend(["--format", format]);
        let out = Command::new(env!("CARGO_BIN_EXE_stalwart"))
            .args(&args)
            .current_dir(common::root())
            .env("NO_COLOR", "1")
            .env("STALWART_TEST_BROKEN_ENGINE", "z3")
            .output()
            .expect("run stalwart");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = run("text");
    assert_eq!(code, Some(1));
    let heads: Vec<&str> = text.lines().filter(|l| is_head(l)).collect();
    assert_eq!(
        heads[0], "  QG312 High on charge_card (agent.yaml:5)",
        "{text}"
    );
    assert_eq!(heads.iter().filter(|h| h.contains("QG312")).count(), 9);
    assert!(
        text.contains("which disagree on 9 violations (QG312 above)"),
        "{text}"
    );
    let (code, json) = run("json");
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["engines"]["agree"], false);
    assert_eq!(v["engines"]["disagreements"], 9);
    assert_eq!(v["findings"][0]["rule"], "QG312");
    assert_eq!(v["findings"][0]["blocks"], true);
    assert_eq!(v["gate"]["passed"], false);
}

/// An engine disagreement is never hidden (rules/QG312.toml `always_shown`): a configuration
/// that turns QG312 and every obligation off, accepts QG312 and shows only Critical findings still
/// lists the eight disagreements first, unaccepted, failing the gate.
#[test]
fn an_engine_disagreement_survives_every_filter() {
    if !cfg!(debug_assertions) {
        eprintln!(
            "skipped: the broken engine exists only in debug builds (this is a release test run)"
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("stalwart.toml");
    let mut toml = String::from("min-severity = \"critical\"\n[off]\nQG312 = \"noise\"\n");
    for o in 1..=10 {
        toml.push_str(&format!("O{o} = \"noise\"\n"));
    }
    toml.push_str("\n[[accept]]\nrule = \"QG312\"\nreason = \"noise\"\n");
    std::fs::write(&config, toml).expect("write");
    let mut args = vec!["verify"];
    args.extend(PLAIN);
    let config = config.to_string_lossy().into_owned();
    args.extend(["--config", &config, "--format", "json"]);
    let out = Command::new(env!("CARGO_BIN_EXE_stalwart"))
        .args(&args)
        .current_dir(common::root())
        .env("STALWART_TEST_BROKEN_ENGINE", "z3")
        .output()
        .expect("run stalwart");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let findings = v["findings"].as_array().expect("findings");
    let qg312: Vec<&serde_json::Value> = findings.iter().filter(|f| f["rule"] == "QG312").collect();
    assert_eq!(qg312.len(), 9, "{stdout}");
    assert_eq!(findings[0]["rule"], "QG312");
    assert!(
        qg312
            .iter()
            .all(|f| f["accepted"].is_null() && f["blocks"] == true),
        "{stdout}"
    );
    assert_eq!(v["gate"]["passed"], false);
}

/// Huge numbers in an export do not make the Z3 engine build huge formulas: an `exit_after` of a
/// billion, an `at_most` of a million and a recursion limit of 5,000 end promptly, the
/// obligations Z3 cannot encode reported undecided (QG006), never clean.
#[test]
fn huge_numbers_stay_small_for_z3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = dir.path().join("g.json");
    let c = dir.path().join("c.json");
    std::fs::write(&g, r#"{"format":"qls-graph/1","recursion_limit":5000,"session_steps":2,
        "nodes":[{"id":"__start__","kind":"start"},{"id":"m","kind":"model"},{"id":"t","kind":"tools","tools":["pay"]},
                 {"id":"kb","kind":"subgraph","graph":"s"},{"id":"__end__","kind":"end"}],
        "edges":[{"from":"__start__","kind":"fixed","destinations":["m"]},
                 {"from":"m","kind":"conditional","destinations":["t","kb","__end__"],"exit_after":1000000000},
                 {"from":"t","kind":"fixed","destinations":["m"]},{"from":"kb","kind":"fixed","destinations":["m"]}],
        "subgraphs":{"s":{"nodes":[{"id":"a","kind":"start"},{"id":"w","kind":"tools_plain","tools":["pay"]},{"id":"b","kind":"end"}],
                          "edges":[{"from":"a","kind":"fixed","destinations":["w"]},{"from":"w","kind":"fixed","destinations":["b"]}]}}}"#).expect("write");
    std::fs::write(
        &c,
        r#"{"format":"qls-catalogue/1","tools":{"pay":{"kind":"write","order":{"at_most":1000000}}}}"#,
    )
    .expect("write");
    let r = stalwart(&[
        "verify",
        "--graph",
        &g.to_string_lossy(),
        "--catalogue",
        &c.to_string_lossy(),
        "--max-states",
        "20000",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let qg006: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "QG006")
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        qg006.iter().any(|m| m.contains("counts calls up to 64")),
        "{qg006:?}"
    );
    assert!(v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["rule"] == "QG001"));
}

/// `--baseline`: an earlier run's SARIF or JSON hides the findings it already has (by fingerprint),
/// the gate is decided on the new ones, and the report says how many were hidden; a file that is
/// not a baseline stops the run (exit 2) naming it.
#[test]
fn a_baseline_hides_known_findings() {
    let dir = std::env::temp_dir().join(format!("stalwart-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let sarif = dir.join("plain.sarif");
    let json = dir.join("shop.json");
    let sarif_s = sarif.to_string_lossy().into_owned();
    let json_s = json.to_string_lossy().into_owned();
    let mut args = vec!["verify", "--sarif", &sarif_s];
    args.extend(PLAIN);
    assert_eq!(stalwart(&args).code, 1);
    let shop = stalwart(&["verify", SHOP, "--format", "json", "--output", &json_s]);
    assert_eq!(shop.code, 0, "{}", shop.stderr);

    // Everything the plain shop reports is in its own baseline: nothing new, the gate passes.
    let mut args = vec!["verify", "--baseline", &sarif_s];
    args.extend(PLAIN);
    let again = stalwart(&args);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(
        again
            .stdout
            .replace("\n  ", " ")
            .contains(": 13 findings it already has are not shown; only new findings count."),
        "{}",
        again.stdout
    );
    assert!(again.stdout.contains("\nGate: passed."));
    let mut args = vec!["verify", "--format", "json", "--baseline", &sarif_s];
    args.extend(PLAIN);
    let j: serde_json::Value = serde_json::from_str(&stalwart(&args).stdout).expect("json");
    assert_eq!(j["baseline"]["known"], 13);
    assert_eq!(j["findings"], serde_json::json!([]));

    // The shop's JSON knows its two warnings; the plain variant's other eleven (eight that block,
    // three QG101 hotspots) are new.
    let mut args = vec!["verify", "--format", "json", "--baseline", &json_s];
    args.extend(PLAIN);
    let r = stalwart(&args);
    assert_eq!(r.code, 1);
    let j: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(j["baseline"]["known"], 2);
    let rules: Vec<&str> = j["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(
        !rules.contains(&"QG023") && !rules.contains(&"QG105"),
        "{rules:?}"
    );
    assert_eq!(rules.len(), 11);

    // Not a baseline: exit 2, the file named, nothing verified.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"hello\": 1}").expect("write");
    let bad_s = bad.to_string_lossy().into_owned();
    let r = stalwart(&["verify", SHOP, "--baseline", &bad_s]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("bad.json") && r.stderr.contains("neither a SARIF log"),
        "{}",
        r.stderr
    );
    std::fs::write(&bad, "not json").expect("write");
    let r = stalwart(&["verify", SHOP, "--baseline", &bad_s]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is not JSON (line 1"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fingerprints are stable across unrelated edits (SPEC 7): comment lines added at the top of
/// every file move each finding down, and every finding keeps its fingerprint, in JSON and in
/// SARIF's `partialFingerprints`.
#[test]
fn fingerprints_survive_unrelated_edits() {
    let base = std::env::temp_dir().join(format!("stalwart-fp-{}", std::process::id()));
    for (case, files, input) in [
        (
            "shop",
            &["agent.yaml", "policy.co", "shop.catalogue.yaml"][..],
            "agent.yaml",
        ),
        (
            "QG001/breaks-rulebook-requires",
            &["agent.yaml", "policy.co", "catalogue.yaml"][..],
            "agent.yaml",
        ),
    ] {
        let dir = base.join(case.replace('/', "-"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let run = |edited: bool| {
            for f in files {
                let text =
                    std::fs::read_to_string(common::root().join("fixtures").join(case).join(f))
                        .expect("fixture");
                let text = if edited {
                    format!("# an unrelated comment\n#\n# and another\n{text}")
                } else {
                    text
                };
                std::fs::write(dir.join(f), text).expect("write");
            }
            let agent = dir.join(input).to_string_lossy().into_owned();
            let j = stalwart(&["verify", &agent, "--format", "json"]);
            let s = stalwart(&["verify", &agent, "--format", "sarif"]);
            let j: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
            let s: serde_json::Value = serde_json::from_str(&s.stdout).expect("sarif");
            let found: Vec<(String, u64)> = j["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .map(|f| {
                    (
                        f["fingerprint"].as_str().unwrap_or("").to_string(),
                        f["location"]["line"].as_u64().unwrap_or(0),
                    )
                })
                .collect();
            let sarif: Vec<String> = s["runs"][0]["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(|r| {
                    r["partialFingerprints"]["stalwartFingerprint/v1"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                })
                .collect();
            (found, sarif)
        };
        let (before, sarif_before) = run(false);
        let (after, sarif_after) = run(true);
        assert!(!before.is_empty(), "{case}: the case must report something");
        assert_eq!(before.len(), after.len(), "{case}");
        for ((fp, line), (fp2, line2)) in before.iter().zip(&after) {
            assert_eq!(*line2, line + 3, "{case}: the edit moves the finding");
            assert_eq!(fp, fp2, "{case}: same fingerprint");
            assert_eq!(fp.len(), 16, "{case}: {fp}");
        }
        assert_eq!(sarif_before, sarif_after, "{case}");
        assert_eq!(
            sarif_before,
            before.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>()
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// Issue 31 item 4: `verify --help` grouped by purpose, `--output-format` as ruff's users type it,
/// and shell completions that name the subcommands and flags.
#[test]
fn help_is_grouped_output_format_is_format_and_completions_are_written() {
    let help = stalwart(&["verify", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let headings: Vec<&str> = help
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
        .collect();
    assert_eq!(
        headings,
        [
            "Arguments:",
            "Options:",
            "Input:",
            "Search:",
            "Output:",
            "Z3 limits:",
            "The gate in CI:",
            "Rulebook budgets:"
        ]
    );
    let a = stalwart(&["verify", SHOP, "--format", "json"]);
    let b = stalwart(&["verify", SHOP, "--output-format", "json"]);
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert_eq!(without_times(&a.stdout), without_times(&b.stdout));
    for shell in ["bash", "zsh", "fish"] {
        let c = stalwart(&["completions", shell]);
        assert_eq!(c.code, 0, "{shell}: {}", c.stderr);
        for word in ["verify", "rules", "session-steps", "baseline"] {
            assert!(c.stdout.contains(word), "{shell}: no {word}");
        }
    }
    let bad = stalwart(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2);
}

const OPENAI_AGENTS: [&str; 4] = [
    "--graph",
    "fixtures/openai-agents/graph.json",
    "--catalogue",
    "fixtures/openai-agents/catalogue.json",
];

/// Issue 30 items 2 and 6: an OpenAI Agents SDK export (python/tests/oa_apps/triage.py: a triage
/// agent handing off to billing and refunds, unguarded, exported by `python -m stalwart_export`)
/// is told the SDK's remedy - the `AgentGuard` wrapping the starting agent, `needs_approval` -
/// in the text report, JSON and SARIF; its findings are on the user's `Agent(...)` lines, and the
/// reports are snapshots (the expected findings of the corpus's SDK export).
#[test]
fn an_openai_agents_export_is_told_the_sdks_fix() {
    let mut args = vec!["verify"];
    args.extend(OPENAI_AGENTS);
    let r = stalwart(&args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let fixes: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("    Fix: "))
        .collect();
    assert!(fixes.iter().any(
        |l| l.contains("`guard = AgentGuard(\"catalogue.json\")`, `guard.wrap(triage_agent)`")
    ));
    assert!(!fixes.iter().any(|l| l.contains("LangGraph")));
    assert!(r
        .stdout
        .contains("--> python/tests/oa_apps/triage.py:25:16"));
    snap("openai-agents.txt", &r.stdout);
    let mut args = vec!["verify", "--format", "json"];
    args.extend(OPENAI_AGENTS);
    let j = stalwart(&args);
    assert_eq!(j.code, 1);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    for f in v["findings"].as_array().expect("findings") {
        let rule = f["rule"].as_str().unwrap_or("");
        let fix = f["fix"].as_str().unwrap_or("");
        let sdk = ["QG001", "QG011", "QG012", "QG013", "QG014"].contains(&rule);
        assert_eq!(
            fix.starts_with("In the OpenAI Agents SDK,"),
            sdk,
            "{rule}: {fix}"
        );
    }
    snap("openai-agents.json", &without_times(&j.stdout));
    let mut args = vec!["verify", "--format", "sarif"];
    args.extend(OPENAI_AGENTS);
    let s = stalwart(&args);
    assert_eq!(s.code, 1);
    assert!(s
        .stdout
        .contains("Fix: In the OpenAI Agents SDK, wrap the starting agent"));
    snap("openai-agents.sarif", &s.stdout);
    let e = stalwart(&["rules", "explain", "QG012"]);
    assert!(e
        .stdout
        .contains("How to fix it, in an OpenAI Agents SDK application"));
}

/// Issue 31 item 4: an error report follows `--color` as the report does: coloured with
/// `always`, plain with `never` (and with `auto` off a terminal, as here).
#[test]
fn errors_follow_color() {
    let always = stalwart(&["verify", "no-such-agent.yaml", "--color", "always"]);
    assert_eq!(always.code, 2);
    assert!(always.stderr.contains("\u{1b}["), "{}", always.stderr);
    for choice in ["never", "auto"] {
        let plain = stalwart(&["verify", "no-such-agent.yaml", "--color", choice]);
        assert_eq!(plain.code, 2);
        assert!(
            plain.stderr.contains("cannot read no-such-agent.yaml"),
            "{}",
            plain.stderr
        );
        assert!(
            !plain.stderr.contains("\u{1b}["),
            "{choice}: {}",
            plain.stderr
        );
    }
}

/// Issue 31 item 4: `--statistics` honours `--format json`: the same counts as the text, as JSON.
#[test]
fn statistics_as_json() {
    let mut args = vec!["verify", "--statistics", "--format", "json"];
    args.extend(OPENAI_AGENTS);
    let j = stalwart(&args);
    assert_eq!(j.code, 1, "{}", j.stderr);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    let rules: Vec<(String, u64, u64)> = v["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            (
                r["rule"].as_str().unwrap_or("").to_string(),
                r["count"].as_u64().unwrap_or(0),
                r["blocking"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let mut args = vec!["verify", "--statistics"];
    args.extend(OPENAI_AGENTS);
    let t = stalwart(&args);
    let text: Vec<(String, u64, u64)> = t
        .stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let count = w.next()?.parse().ok()?;
            let rule = w.next()?.to_string();
            if !rule.starts_with("QG") {
                return None; // the gate line
            }
            let blocking = l
                .split('(')
                .nth(1)
                .and_then(|b| b.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            Some((rule, count, blocking))
        })
        .collect();
    assert_eq!(rules, text);
    assert_eq!(v["passed"], false);
    assert_eq!(
        v["blocking"].as_u64(),
        Some(rules.iter().map(|r| r.2).sum())
    );
}
