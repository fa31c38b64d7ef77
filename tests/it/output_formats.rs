//! The three output formats (SPEC 8) over reports built by hand: the text report keeps the seed's
//! lines exactly, the JSON parses into the documented schema, and the SARIF lists every rule, carries
//! the witness as a code flow and, where `../shared/sarif/validate-sarif` exists, passes the SARIF
//! 2.1.0 schema and Microsoft's multitool with GitHub's rules.

use std::path::{Path, PathBuf};

use serde_json::Value;
use stalwart::output::{json, sarif, text};
use stalwart::{fingerprint, Finding, GateMode, Lint, Obligation, Severity, Step, StepKind};
use stalwart::{EngineStats, ProofScope, Report};
use stalwart::{Loc, SourceMap};

/// The shop's agent.yaml (the seed's, chapter 45).
const AGENT_YAML: &str = r#"# The shop's two desks, with a rulebook that decides when a refund may run.
agents:
  desk:
    model: "anthropic:claude-sonnet-5-5"
    tools: [get_order, charge_card, send_receipt, read_inbox]
    hands_off_to: [billing]
    on_unread: refuse
  billing:
    privilege: high
    tools: [refund_card]
tools:
  - catalogue: ./shop.catalogue.yaml
rulebook: ./policy.co # proved against, and compiled for the tool check
facts:
  card_on_file: {from: get_order.card, same: order_id}
  order_paid: {from: get_order.status == paid, same: order_id}
"#;

/// The seed's `stalwart verify agent.yaml` output for the shop, less the code-checks line (the
/// report does not hold it).
const SEED: &str = "\
stalwart verify agent.yaml
Compiled the rulebook policy.co: the tool check enforces the rules verified here.
Lints from the runtime (none of these blocks the agent):
  write_not_retry_safe (warning) on charge_card: a write with no idempotency, so an ambiguous failure goes to a person
  write_without_result_schema (warning) on charge_card: a write with no result schema, so its outcome could not be reported
  compensation_not_retry_safe (warning) on charge_card: 'refund_card' undoes it and is not retry-safe
  write_not_retry_safe (warning) on refund_card: a write with no idempotency, so an ambiguous failure goes to a person
  write_without_result_schema (warning) on refund_card: a write with no result schema, so its outcome could not be reported
  write_without_result_schema (warning) on send_receipt: a write with no result schema, so its outcome could not be reported
  compensation_out_of_reach (warning) on charge_card: agent 'desk' can call it but not 'refund_card', which undoes it, so a run of that agent cannot undo it
Warnings: 2 findings that do not block this agent. Look at each and weigh it; the agent can run as it is.
  QG023 Medium on cycle:desk_model (agent.yaml:3)
    the cycle through 'desk_model' calls the model or a tool, and nothing declares a budget: the framework's recursion limit of 60 is the run's only ceiling
    OWASP LLM06:2026, ASI08:2026
    Fix: Declare a budget for the agent or the run, or add an exit the model cannot avoid -- a counter in the state, declared on the edge as exit_after.
  QG105 Review on refund_card (agent.yaml:10)
    the write 'refund_card' has no compensation, is not irreversible, and runs on a path with another write
    OWASP LLM03:2026, ASI08:2026
    Fix: Give 'refund_card' an undo -- `undo:` in agent.yaml or `compensation` in the catalogue, which may be the tool itself with its arguments swapped -- or say a failed run may leave it done (`undo: none`), or mark it irreversible.
Rules with nothing to read, so nothing raised:
  QG017: no argument is declared as code or a shell command
  QG018: no argument is declared as SQL, a query, a path, a URL or a template
  QG019: no tool is declared confidential
  QG020: no retrieval from a store declared multi-tenant
  QG021: no tool is declared to write a store declared persistent
  QG106: no tool declares a source or a server, and the catalogue declares no modules
  QG107: no agent in the catalogue declares a remote channel
Gate: passed. Nothing blocks this agent: the 2 warnings above are for you to look at and weigh.
";

/// Where the test's agent.yaml is said to live (it need not exist): inside the crate, so that its
/// SARIF URI is relative to the manifest directory.
fn agent_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shop/agent.yaml")
}

fn sources() -> SourceMap {
    let mut s = SourceMap::default();
    s.add(
        "agent.yaml".to_string(),
        agent_path(),
        AGENT_YAML.to_string(),
    );
    s
}

fn lint(id: &'static str, tool: &str, message: &str, line: u32) -> Lint {
    Lint {
        id,
        tool: tool.to_string(),
        message: message.to_string(),
        loc: Some(Loc::new(0, line, 5)),
    }
}

fn seed_lints() -> Vec<Lint> {
    let no_idem = "a write with no idempotency, so an ambiguous failure goes to a person";
    let no_schema = "a write with no result schema, so its outcome could not be reported";
    vec![
        lint("write_not_retry_safe", "charge_card", no_idem, 5),
        lint("write_without_result_schema", "charge_card", no_schema, 5),
        lint("compensation_not_retry_safe", "charge_card", "'refund_card' undoes it and is not retry-safe", 5),
        lint("write_not_retry_safe", "refund_card", no_idem, 10),
        lint("write_without_result_schema", "refund_card", no_schema, 10),
        lint("write_without_result_schema", "send_receipt", no_schema, 5),
        lint(
            "compensation_out_of_reach",
            "charge_card",
            "agent 'desk' can call it but not 'refund_card', which undoes it, so a run of that agent cannot undo it",
            5,
        ),
    ]
}

fn qg023() -> Finding {
    Finding {
        rule: stalwart::rules::RuleId::QG023,
        obligation: None,
        subject: "cycle:desk_model".to_string(),
        node: Some("desk_model".to_string()),
        depth: None,
        location: stalwart::Primary::Line(Loc::new(0, 3, 3)),
        related: vec![],
        message: "the cycle through 'desk_model' calls the model or a tool, and nothing declares a budget: the \
                  framework's recursion limit of 60 is the run's only ceiling"
            .to_string(),
        fix: "Declare a budget for the agent or the run, or add an exit the model cannot avoid -- a counter in the \
              state, declared on the edge as exit_after."
            .to_string(),
        severity: Severity::Medium,
        witness: vec![],
        other_witness: None,
        evidence: stalwart::Evidence::Declaration,
        drawn_from: None,
        accepted: None,
        unproved: Vec::new(),
        fingerprint: fingerprint("QG023", None, "cycle:desk_model", Some("desk_model")),
    }
}

fn qg105() -> Finding {
    Finding {
        rule: stalwart::rules::RuleId::QG105,
        obligation: Some(Obligation::O8),
        subject: "refund_card".to_string(),
        node: Some("billing_tools".to_string()),
        depth: Some(1),
        location: stalwart::Primary::Line(Loc::new(0, 10, 5)),
        related: vec![],
        message: "the write 'refund_card' has no compensation, is not irreversible, and runs on a path with another \
                  write"
            .to_string(),
        fix: "Give 'refund_card' an undo -- `undo:` in agent.yaml or `compensation` in the catalogue, which may be \
              the tool itself with its arguments swapped -- or say a failed run may leave it done (`undo: none`), \
              or mark it irreversible."
            .to_string(),
        severity: Severity::Review,
        witness: vec![],
        other_witness: None,
        evidence: stalwart::Evidence::Declaration,
        drawn_from: None,
        accepted: None,
        unproved: Vec::new(),
        fingerprint: fingerprint("QG105", Some(Obligation::O8), "refund_card", Some("billing_tools")),
    }
}

/// A blocking QG012 with a five-step witness (one step without a location).
fn qg012() -> Finding {
    let at = |mut s: Step, loc: Option<Loc>| {
        s.loc = loc;
        s
    };
    let mut read = Step::new(StepKind::Call, "desk_tools", 1);
    read.tool = Some("read_inbox".to_string());
    read.guarded = Some(true);
    let mut choose = Step::new(StepKind::Choose, "desk_model", 1);
    choose.to = Some("billing".to_string());
    let mut refund = Step::new(StepKind::Call, "billing_tools", 1);
    refund.tool = Some("refund_card".to_string());
    refund.guarded = Some(false);
    refund.violation = true;
    Finding {
        rule: stalwart::rules::RuleId::QG012,
        obligation: Some(Obligation::O6),
        subject: "refund_card".to_string(),
        node: Some("billing_tools".to_string()),
        depth: Some(1),
        location: stalwart::Primary::Line(Loc::new(0, 10, 5)),
        related: vec![(Loc::new(0, 5, 5), "read_inbox reads content from outside here".to_string())],
        message: "'refund_card' can run on 'billing_tools' after content from outside entered in another agent or \
                  subgraph, with no confirmation or refusal"
            .to_string(),
        fix: "Bind 'refund_card' to the guarded tool node of the acting agent instead of 'billing_tools'.".to_string(),
        severity: Severity::High,
        witness: vec![
            at(Step::new(StepKind::Enter, "desk", 1), Some(Loc::new(0, 3, 3))),
            at(read, Some(Loc::new(0, 5, 5))),
            choose,
            at(Step::new(StepKind::Enter, "billing", 1), Some(Loc::new(0, 8, 3))),
            at(refund, Some(Loc::new(0, 10, 5))),
        ],
        other_witness: None,
        evidence: stalwart::Evidence::GraphRoute,
        drawn_from: None,
        accepted: None,
        unproved: Vec::new(),
        fingerprint: fingerprint("QG012", Some(Obligation::O6), "refund_card", Some("billing_tools")),
    }
}

fn base_report(findings: Vec<Finding>) -> Report {
    Report {
        input: "agent.yaml".to_string(),
        sources: sources(),
        rulebook: Some(
            "Compiled the rulebook policy.co: the tool check enforces the rules verified here."
                .to_string(),
        ),
        rulebook_info: None,
        export_warnings: vec![],
        framework: stalwart::Framework::Other,
        lints: seed_lints(),
        findings,
        nothing_to_read: vec![
            (
                "QG017",
                "no argument is declared as code or a shell command".to_string(),
            ),
            (
                "QG018",
                "no argument is declared as SQL, a query, a path, a URL or a template".to_string(),
            ),
            ("QG019", "no tool is declared confidential".to_string()),
            (
                "QG020",
                "no retrieval from a store declared multi-tenant".to_string(),
            ),
            (
                "QG021",
                "no tool is declared to write a store declared persistent".to_string(),
            ),
            (
                "QG106",
                "no tool declares a source or a server, and the catalogue declares no modules"
                    .to_string(),
            ),
            (
                "QG107",
                "no agent in the catalogue declares a remote channel".to_string(),
            ),
        ],
        not_yet_checked: vec![],
        gate: GateMode::Ci,
        scope: ProofScope {
            session_steps: 1,
            recursion_limit: 60,
            nodes: 7,
            edges: 14,
            tools: 5,
        },
        proof: EngineStats {
            name: "explicit and z3".to_string(),
            obligations: 9,
            holds_every_depth: 7,
            holds_to_bound: 0,
            violated: 2,
            undecided: 0,
            states: 412,
            queries: 30,
            millis: 37,
            ..EngineStats::default()
        },
        engines: vec![
            EngineStats {
                name: "explicit".to_string(),
                obligations: 9,
                holds_every_depth: 7,
                violated: 2,
                states: 412,
                millis: 12,
                ..EngineStats::default()
            },
            EngineStats {
                name: "z3".to_string(),
                obligations: 9,
                holds_every_depth: 7,
                violated: 2,
                queries: 30,
                millis: 25,
                ..EngineStats::default()
            },
        ],
        disagreements: 0,
        unchecked: 0,
        z3_version: stalwart::engine::z3_version(),
        limits: vec![
            "several fixed edges from one node are read as a choice, not as parallel branches"
                .to_string(),
        ],
        baseline: None,
        traces: None,
        code_checks: None,
        triage: Default::default(),
        known: vec![],
        weakened: vec![],
    }
}

/// The shop's report, as the seed prints it.
fn shop_report() -> Report {
    base_report(vec![qg023(), qg105()])
}

/// One blocking finding with a witness, one warning.
fn small_report() -> Report {
    base_report(vec![qg012(), qg023()])
}

/// Asserts that `block` appears in `lines` as consecutive lines, and returns where.
fn contiguous(lines: &[&str], block: &[&str]) -> usize {
    let at = lines.windows(block.len()).position(|w| w == block);
    at.unwrap_or_else(|| {
        panic!(
            "these lines are not consecutive in the output:\n{}\n--- output:\n{}",
            block.join("\n"),
            lines.join("\n")
        )
    })
}

#[test]
fn text_keeps_the_seed_lines() {
    let out = text::render(&shop_report(), false);
    let lines: Vec<&str> = out.lines().collect();
    let seed: Vec<&str> = SEED.lines().collect();
    // Header, rulebook line and lints: the seed's first ten lines, exactly, first.
    assert_eq!(&lines[..10], &seed[..10], "\n{out}");
    // The warnings heading and each finding's four lines, in order.
    let w = contiguous(&lines, &seed[10..15]);
    let q = contiguous(&lines, &seed[15..19]);
    assert!(q > w);
    // The rules with nothing to read.
    let n = contiguous(&lines, &seed[19..27]);
    assert!(n > q);
    // The gate line ends the report.
    assert_eq!(lines.last().copied(), Some(seed[27]));
    // No colour, no time.
    assert!(!out.contains('\x1b'));
    assert!(
        !out.contains("37"),
        "the engine's time is not printed:\n{out}"
    );
    assert!(out.contains(
        "Proof: 9 obligations searched by the explicit and the z3 engines, which agree: 7 hold at every depth, \
         0 hold to the bound (1 turn of at most 60 steps), 2 violated, 0 undecided; 412 states."
    ));
    assert!(contiguous(&lines, &["Limits:", "  several fixed edges from one node are read as a choice, not as parallel branches"]) > n);
    assert_eq!(out, text::render(&shop_report(), false), "deterministic");
}

/// The seed's code checks line (chapter 30: four files, the seed's rules), right after the lints
/// and before the warnings; with no module read, no line at all.
#[test]
fn text_prints_the_seeds_code_checks_line() {
    let mut report = shop_report();
    assert!(!text::render(&report, false).contains("Code checks"));
    report.code_checks = Some(stalwart::CodeChecks {
        files: 4,
        rules_hash: "d656f9ab32d3".into(),
        findings: Vec::new(),
    });
    let out = text::render(&report, false);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[10],
        "Code checks: no finding in 4 file(s) (rules d656f9ab32d3)."
    );
    assert!(lines[11].starts_with("Warnings: 2 findings"));
    let v = json::to_value(&report);
    assert_eq!(
        v["code_checks"],
        serde_json::json!({"files": 4, "rules_hash": "d656f9ab32d3", "findings": []})
    );
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn text_blocking_finding_with_witness() {
    let report = small_report();
    let out = text::render(&report, false);
    println!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    let b = contiguous(
        &lines,
        &[
            "Blocking: 1 finding that fails the ci gate. Fix it before the agent runs.",
            "  QG012 High on refund_card (agent.yaml:10)",
            "    'refund_card' can run on 'billing_tools' after content from outside entered in another agent or \
             subgraph, with no confirmation or refusal",
            "    OWASP LLM01:2026, ASI07:2026, ASI08:2026",
            "    Fix: Bind 'refund_card' to the guarded tool node of the acting agent instead of 'billing_tools'.",
        ],
    );
    let w = contiguous(
        &lines,
        &[
            "Warnings: 1 finding that does not block this agent. Look at it and weigh it.",
            "  QG023 Medium on cycle:desk_model (agent.yaml:3)",
        ],
    );
    assert!(w > b);
    // The excerpt sits under the fix, before the warnings, indented by four.
    let excerpt = &lines[b + 5..w];
    assert!(!excerpt.is_empty());
    assert!(
        excerpt
            .iter()
            .all(|l| l.is_empty() || l.starts_with("    ")),
        "{excerpt:#?}"
    );
    let joined = excerpt.join("\n");
    for want in [
        "agent.yaml:10:5",
        "tools: [refund_card]",
        "declares billing_tools; 5 call refund_card (plain), violates O6",
        "1 enter desk",
        "2 call read_inbox (guarded)",
        "3 choose -> billing (no source location)",
        "4 enter billing",
    ] {
        assert!(
            joined.contains(want),
            "{want:?} missing from the excerpt:\n{joined}"
        );
    }
    assert_eq!(
        lines.last().copied(),
        Some("Gate: failed. 1 finding blocks this agent under the ci gate: fix it and re-run.")
    );
    // Colour is added only when asked for.
    assert!(text::render(&report, true).contains('\x1b'));
}

/// Two findings of a rule with a `group` (QG023's "cycles without a budget") print as one entry
/// in the text report, a line each, the fix said once; JSON keeps both.
#[test]
fn text_groups_the_findings_of_a_grouped_rule() {
    let mut second = qg023();
    second.subject = "cycle:billing_model".to_string();
    second.node = Some("billing_model".to_string());
    second.location = stalwart::Primary::Line(Loc::new(0, 7, 3));
    second.message = "the cycle through 'billing_model' calls the model".to_string();
    let report = base_report(vec![qg023(), second]);
    let out = text::render(&report, false);
    let lines: Vec<&str> = out.lines().collect();
    let at = contiguous(
        &lines,
        &[
            "  QG023 Medium on 2 cycles without a budget (one entry here; each is its own finding in JSON and SARIF)",
            "    cycle:desk_model (agent.yaml:3): the cycle through 'desk_model' calls the model or a tool, and nothing \
             declares a budget: the framework's recursion limit of 60 is the run's only ceiling",
            "    cycle:billing_model (agent.yaml:7): the cycle through 'billing_model' calls the model",
            "    OWASP LLM06:2026, ASI08:2026",
        ],
    );
    assert!(
        lines[at + 4].starts_with("    Fix, for each: Declare a budget"),
        "{out}"
    );
    assert_eq!(out.matches("QG023").count(), 1, "{out}");
    assert_eq!(
        json::to_value(&report)["findings"].as_array().map(Vec::len),
        Some(2)
    );
}

#[test]
fn text_long_witness_is_elided() {
    let mut f = qg012();
    let enter = f.witness[0].clone();
    let mut steps = vec![];
    for _ in 0..20 {
        steps.push(enter.clone());
    }
    steps.append(&mut f.witness);
    f.witness = steps;
    let out = text::render(&base_report(vec![f]), false);
    assert!(out.contains("... 13 more steps"), "{out}");
    assert!(
        out.contains("25 call refund_card (plain), violates O6"),
        "{out}"
    );
    assert!(!out.contains("; 7 enter desk"), "{out}");
}

#[test]
fn json_has_the_schema() {
    let report = small_report();
    let out = json::render(&report);
    assert_eq!(out, json::render(&report), "deterministic");
    let v: Value = serde_json::from_str(&out).expect("the JSON report parses");
    let keys: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "version",
            "tool",
            "input",
            "rulebook",
            "rulebook_info",
            "gate",
            "weakened",
            "baseline",
            "traces",
            "findings",
            "lints",
            "code_checks",
            "nothing_to_read",
            "nothing_to_read_reasons",
            "not_yet_checked",
            "scope",
            "engines",
            "warnings",
            "limits"
        ]
    );
    assert_eq!(v["version"], 1);
    assert_eq!(v["tool"]["name"], "stalwart-verify");
    assert_eq!(
        v["gate"],
        serde_json::json!({"mode": "ci", "passed": false, "exit": 1})
    );
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "QG012");
    assert_eq!(f["title"], "Cascading injection");
    assert_eq!(f["type"], "Vulnerability");
    assert_eq!(f["severity"], "High");
    assert_eq!(f["obligation"], "O6");
    assert_eq!(f["subject"], "refund_card");
    assert_eq!(f["node"], "billing_tools");
    assert_eq!(f["depth"], 1);
    assert_eq!(
        f["location"],
        serde_json::json!({"file": "agent.yaml", "line": 10, "column": 5})
    );
    assert_eq!(f["blocks"], true);
    assert_eq!(f["fingerprint"].as_str().map(str::len), Some(16));
    let w = f["witness"].as_array().expect("a witness");
    assert_eq!(w.len(), 5);
    assert_eq!(
        w[0],
        serde_json::json!({"kind": "enter", "node": "desk", "tool": null, "guarded": null, "turn": 1,
        "location": {"file": "agent.yaml", "line": 3, "column": 3}})
    );
    assert_eq!(w[1]["tool"], "read_inbox");
    assert_eq!(w[1]["guarded"], true);
    assert_eq!(w[2]["kind"], "choose");
    assert_eq!(w[2]["to"], "billing");
    assert!(w[2]["location"].is_null());
    assert_eq!(w[4]["violation"], true);
    assert!(w[3].get("violation").is_none());
    let g = &v["findings"][1];
    assert_eq!(g["rule"], "QG023");
    assert_eq!(g["blocks"], false);
    assert!(g["obligation"].is_null());
    assert_eq!(g["witness"], serde_json::json!([]));
    assert_eq!(v["lints"].as_array().map(Vec::len), Some(7));
    assert_eq!(v["lints"][0]["id"], "write_not_retry_safe");
    assert_eq!(v["lints"][0]["location"]["line"], 5);
    assert_eq!(v["nothing_to_read"][0], "QG017");
    assert_eq!(
        v["nothing_to_read_reasons"][0],
        serde_json::json!({"rule": "QG017",
        "reason": "no argument is declared as code or a shell command"})
    );
    assert_eq!(v["engines"]["explicit"]["states"], 412);
    assert_eq!(v["engines"]["explicit"]["millis"], 12);
    assert_eq!(v["engines"]["z3"]["queries"], 30);
    assert_eq!(v["engines"]["z3"]["millis"], 25);
    assert_eq!(v["engines"]["agree"], true);
    assert_eq!(v["engines"]["ran"], serde_json::json!(["explicit", "z3"]));
    assert_eq!(v["engines"]["verdict"]["violated"], 2);
    assert_eq!(v["scope"]["recursion_limit"], 60);
}

#[test]
fn sarif_lists_every_rule_and_the_witness() {
    let report = small_report();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = sarif::render(&report, Some(root));
    assert_eq!(out, sarif::render(&report, Some(root)), "deterministic");
    assert!(
        !out.contains(env!("CARGO_MANIFEST_DIR")),
        "no absolute path"
    );
    assert!(!out.contains("file:"), "no file URI");
    let v: Value = serde_json::from_str(&out).expect("the SARIF parses");
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"]
        .as_str()
        .is_some_and(|s| s.contains("sarif-2.1.0")));
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "stalwart-verify");
    assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
    let ids: Vec<&str> = driver["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    let all: Vec<&str> = stalwart::rules::all()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(ids, all, "every rule of rules/ is listed, in order");
    for r in driver["rules"].as_array().expect("rules") {
        for key in [
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "defaultConfiguration",
            "properties",
        ] {
            assert!(r.get(key).is_some(), "{} has no {key}", r["id"]);
        }
        let tags = r["properties"]["tags"].as_array().expect("tags");
        assert!(tags.len() <= 20 && tags[0] == "security");
    }
    let qg012 = driver["rules"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == "QG012"))
        .expect("QG012");
    assert_eq!(qg012["name"], "CascadingInjection");
    assert_eq!(qg012["properties"]["security-severity"], "8.0");
    assert_eq!(qg012["properties"]["precision"], "very-high");
    assert_eq!(qg012["defaultConfiguration"]["level"], "error");
    let qg023 = driver["rules"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == "QG023"))
        .expect("QG023");
    assert!(qg023["properties"].get("security-severity").is_none());
    assert_eq!(qg023["properties"]["problem.severity"], "warning");

    assert_eq!(
        run["automationDetails"]["id"],
        "stalwart-verify/agent.yaml/"
    );
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    for r in results {
        let i = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(driver["rules"][i]["id"], r["ruleId"]);
    }
    let r = &results[0];
    assert_eq!(r["ruleId"], "QG012");
    assert_eq!(r["level"], "error");
    assert_eq!(
        r["message"]["text"],
        "'refund_card' can run on 'billing_tools' after content from outside entered in another agent or subgraph, \
         with no confirmation or refusal. See [read_inbox reads content from outside here](1)."
    );
    let loc = &r["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "examples/shop/agent.yaml");
    assert_eq!(loc["region"]["startLine"], 10);
    assert_eq!(loc["region"]["startColumn"], 5);
    assert_eq!(r["relatedLocations"][0]["id"], 1);
    assert_eq!(
        r["partialFingerprints"]["stalwartFingerprint/v1"],
        report.findings[0].fingerprint.as_str()
    );
    // Code scanning's own key comes from the same stable fingerprint (issue 18), so upload-sarif
    // keeps it instead of hashing the line.
    assert_eq!(
        r["partialFingerprints"]["primaryLocationLineHash"],
        format!("{}:1", report.findings[0].fingerprint)
    );
    assert_eq!(r["properties"]["obligation"], "O6");
    let flow = r["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .expect("a thread flow");
    assert_eq!(flow.len(), 5);
    for (i, step) in flow.iter().enumerate() {
        assert_eq!(step["executionOrder"], i as u64 + 1);
        assert_eq!(step["nestingLevel"], 0);
        assert!(step["location"]["physicalLocation"]["region"]["startLine"].is_u64());
    }
    assert_eq!(flow[0]["location"]["message"]["text"], "1. enter desk.");
    // A step with no location of its own sits at the finding's.
    assert_eq!(
        flow[2]["location"]["physicalLocation"]["region"]["startLine"],
        10
    );
    assert_eq!(
        flow[4]["location"]["message"]["text"],
        "5. call refund_card (plain), violates O6."
    );
    // The warning: a Bug that does not block.
    assert_eq!(results[1]["ruleId"], "QG023");
    assert_eq!(results[1]["level"], "warning");
    assert!(results[1].get("codeFlows").is_none());

    // The shop: a hotspot that does not block is a note.
    let shop: Value =
        serde_json::from_str(&sarif::render(&shop_report(), Some(root))).expect("parses");
    assert_eq!(shop["runs"][0]["results"][1]["ruleId"], "QG105");
    assert_eq!(shop["runs"][0]["results"][1]["level"], "note");
}

#[test]
fn sarif_passes_the_validators() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/sarif/validate-sarif");
    if !script.exists() {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!(
                "skipped: {} is absent, so the SARIF is not validated here\n",
                script.display()
            ),
        );
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    for (name, report) in [
        ("small.sarif", small_report()),
        ("shop.sarif", shop_report()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, sarif::render(&report, Some(root))).expect("written");
        files.push(path);
    }
    let out = std::process::Command::new("bash")
        .arg(&script)
        .args(&files)
        .output()
        .expect("bash runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{said}");
    assert!(
        out.status.success(),
        "validate-sarif refused the SARIF:\n{said}"
    );
}

#[test]
fn text_exporter_warnings_and_rules_not_checked() {
    let mut report = base_report(vec![]);
    report.rulebook = None;
    report.lints.clear();
    report.nothing_to_read.clear();
    report.limits.clear();
    report.export_warnings = vec!["node 'kb' was exported without its subgraph".to_string()];
    report.not_yet_checked = vec![
        "QG002", "QG004", "QG005", "QG007", "QG008", "QG009", "QG010", "QG016", "QG018", "QG019",
        "QG020", "QG021", "QG022", "QG101", "QG104", "QG106", "QG107",
    ];
    report.proof = EngineStats::default();
    let out = text::render(&report, false);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        &lines[..3],
        &[
            "stalwart verify agent.yaml",
            "Warnings from the exporter:",
            "  node 'kb' was exported without its subgraph"
        ]
    );
    let at = lines
        .iter()
        .position(|l| l.starts_with("Rules this version does not check yet: QG002, QG004,"))
        .expect("the list");
    assert!(lines[at + 1].starts_with("  QG"), "{out}");
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{out}");
    let listed: String = lines[at..at + 2].join(" ");
    assert!(listed.ends_with("QG106, QG107"), "{out}");
    assert_eq!(
        lines[at + 2],
        "Proof: no obligation to search (the bound is 1 turn of at most 60 steps)."
    );
    assert_eq!(lines[at + 3], "Gate: passed. Nothing blocks this agent.");
    assert_eq!(lines.len(), at + 4);
}

/// A QG312 finding with both engines' witnesses: the text lists the second witness, the JSON
/// carries it as `other_witness`, and the SARIF result has one code flow per engine.
#[test]
fn disagreement_shows_both_witnesses() {
    let mut f = qg012();
    f.rule = stalwart::rules::RuleId::QG312;
    f.message =
        "the engines disagree on O6 (the taint rule) for 'refund_card': at 'billing_tools' \
                 the explicit engine says it breaks at turn 1 and the z3 engine says it breaks at \
                 turn 2"
            .to_string();
    let mut other = f.witness.clone();
    other.truncate(2);
    f.other_witness = Some((stalwart::Engine::Z3, other));
    let report = base_report(vec![f]);
    let text = text::render(&report, false);
    assert!(
        text.contains("    The z3 engine's witness (2 steps):\n      1. "),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&json::render(&report)).expect("json");
    assert_eq!(v["findings"][0]["other_witness"]["engine"], "z3");
    assert_eq!(
        v["findings"][0]["other_witness"]["witness"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let root = agent_path().parent().map(|p| p.to_path_buf());
    let s: serde_json::Value =
        serde_json::from_str(&sarif::render(&report, root.as_deref())).expect("sarif");
    let flows = &s["runs"][0]["results"][0]["codeFlows"];
    assert_eq!(flows.as_array().map(Vec::len), Some(2));
    assert!(flows[1]["message"]["text"]
        .as_str()
        .is_some_and(|t| t.ends_with("(the z3 engine's witness).")));
}

/// GitHub shows up to 10 related locations a result: more are cut to the first 10, counted in
/// `properties.related_omitted`, and the message links only to those written.
#[test]
fn sarif_keeps_ten_related_locations() {
    let mut f = qg105();
    f.related = (1..=14)
        .map(|i| (Loc::new(0, i, 1), format!("place {i}")))
        .collect();
    let report = base_report(vec![f]);
    let v: Value = serde_json::from_str(&sarif::render(&report, None)).expect("sarif");
    let result = &v["runs"][0]["results"][0];
    let related = result["relatedLocations"].as_array().expect("related");
    assert_eq!(related.len(), 10);
    assert_eq!(related[9]["id"], 10);
    assert_eq!(result["properties"]["related_omitted"], 4);
    let text = result["message"]["text"].as_str().expect("message");
    assert!(text.contains("[place 10](10)"), "{text}");
    assert!(!text.contains("(11)"), "{text}");
}
