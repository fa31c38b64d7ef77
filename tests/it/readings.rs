//! The readings SPEC 3.1 and 12 settle, each pinned by a small fixture and checked in all three
//! engines: the explicit search and the Z3 engine give exactly the findings listed (rule,
//! subject, node, first turn), and every witness either engine gives replays on the plain
//! interpreter, which reads SPEC 3 on its own.
//!
//! - A guarded write the person declines runs nothing, and both answers are routes
//!   (`fixtures/QG014/breaks-declined-guarded-write`).
//! - A `subgraph` node's own `sets`/`clears` apply once, when its run leaves the subgraph's inner
//!   `end`, after that end's own, never on entering (`fixtures/QG001/*subgraph-flags*`).
//! - The top `end`'s own flags apply as the turn ends, before turn-scoped flags reset
//!   (`fixtures/QG003/*end*`).
//! - Declaration order (QG023's subject) is the file's (`fixtures/QG023/breaks-subgraph-declaration-order`).
//! - A review of each call (`when: "call"`, SPEC 12.2) confirms that call on clean content, runs
//!   nothing on a no, checks no history, and a batch it declined whole still moves on.
//! - `input.reads_outside` (SPEC 2.2) starts every turn tainted.
//! - Regions are kinds and names together: an agent, a subgraph and the top graph named alike are
//!   three regions (`fixtures/QG012/breaks-agent-named-like-*`, the plain shop with outside input).
//! - Settled by the 2026-12-02 differential: a `tools`/`tools_plain` node is a tool node by its
//!   kind (`fixtures/QG023/breaks-tool-node-without-tools`); QG023's subject among several uses
//!   of one definition is the use whose subgraph node is declared first
//!   (`fixtures/QG023/breaks-subgraph-use-declaration-order`); `../../id` names a node two graphs
//!   up (`fixtures/QG001/breaks-handoff-two-graphs-up`); edges from an `end` node are ignored, a
//!   `null` one included (`fixtures/QG015/holds-null-edge-from-end`).

use crate::common;

use stalwart::engine::{interp, EngineChoice};
use stalwart::StepKind;
use stalwart::{verify, Options};
use std::path::Path;

type Found = (String, String, Option<String>, Option<u32>);

/// The findings of the fixture folder `dir` with `engine` alone: (rule, subject, node, first
/// turn), as listed.
fn findings(dir: &Path, engine: EngineChoice) -> Vec<Found> {
    let inputs = common::load(dir);
    let mut opts = Options::new(common::steps(&inputs));
    opts.engine = engine;
    let r = verify(inputs, &opts).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    r.findings
        .iter()
        .map(|f| {
            (
                f.rule.to_string(),
                f.subject.clone(),
                f.node.clone(),
                f.depth,
            )
        })
        .collect()
}

fn want(rows: &[(&str, &str, Option<&str>, Option<u32>)]) -> Vec<Found> {
    rows.iter()
        .map(|(r, s, n, d)| (r.to_string(), s.to_string(), n.map(str::to_string), *d))
        .collect()
}

/// Both engines give `expected` on `fixtures/<fixture>`, and every witness of each replays on
/// the interpreter.
fn holds_in_all_three(fixture: &str, expected: &[(&str, &str, Option<&str>, Option<u32>)]) {
    holds_in_all_three_at(&common::root().join("fixtures").join(fixture), expected);
}

/// [`holds_in_all_three`] on the fixture folder `dir`.
fn holds_in_all_three_at(dir: &Path, expected: &[(&str, &str, Option<&str>, Option<u32>)]) {
    let expected = want(expected);
    let fixture = dir.display();
    for engine in [EngineChoice::Explicit, EngineChoice::Z3, EngineChoice::Both] {
        assert_eq!(findings(dir, engine), expected, "{fixture} with {engine:?}");
    }
    for engine in [EngineChoice::Explicit, EngineChoice::Z3] {
        let inputs = common::load(dir);
        let (m, o) = common::outcome(&inputs, engine);
        for v in o
            .runs
            .iter()
            .flat_map(|r| &r.results)
            .flat_map(|r| &r.violations)
        {
            if let Err(e) = interp::replay_violation(&m, v) {
                panic!(
                    "{fixture}: a {engine:?} witness does not replay: {e}\n{:#?}",
                    v.witness
                );
            }
        }
    }
}

/// The witness of the first finding of `rule` on `subject` in `fixture` (both engines).
fn witness_of(fixture: &str, rule: &str, subject: &str) -> Vec<stalwart::Step> {
    let r = common::report(&common::root().join("fixtures").join(fixture));
    r.findings
        .iter()
        .find(|f| f.rule == rule && f.subject == subject)
        .unwrap_or_else(|| panic!("{fixture}: no {rule} on {subject}"))
        .witness
        .clone()
}

#[test]
fn a_declined_guarded_write_runs_nothing_and_both_answers_are_routes() {
    let f = "QG014/breaks-declined-guarded-write";
    // `ship` must come after `charge`, whose only caller is the guarded `pay`: the person's no
    // leaves `ran[charge]` unset (QG014 on ship); the yes makes `charge` a write in a run with
    // another (QG105 on charge).
    holds_in_all_three(
        f,
        &[
            ("QG001", "ship", Some("ship"), Some(1)),
            ("QG014", "ship", Some("ship"), Some(1)),
            ("QG101", "charge", None, None),
            ("QG104", "charge", None, None),
            ("QG105", "charge", Some("pay"), Some(1)),
        ],
    );
    let w = witness_of(f, "QG014", "ship");
    let charge = w
        .iter()
        .find(|s| s.kind == StepKind::Call && s.tool.as_deref() == Some("charge"))
        .expect("the witness calls charge");
    assert!(charge.refused && charge.guarded == Some(true), "{w:#?}");
    let w = witness_of(f, "QG105", "charge");
    assert!(w.iter().all(|s| !s.refused), "{w:#?}");
}

#[test]
fn a_subgraph_nodes_own_flags_apply_on_leaving_its_inner_end() {
    // `review` clears `approved` when its run leaves the subgraph, not on entering it: inside,
    // `approved` still holds, so the plain `act` is reachable (reading them on entering hid it).
    holds_in_all_three(
        "QG001/breaks-subgraph-flags-on-leaving",
        &[
            ("QG001", "send", Some("review/act"), Some(1)),
            ("QG101", "send", None, None),
            ("QG105", "send", Some("review/act"), Some(1)),
        ],
    );
    // The inner end clears `done`, then `kb`'s own sets it: the guard `!done` after `kb` fails.
    holds_in_all_three(
        "QG001/holds-subgraph-flags-after-inner-end",
        &[("QG101", "send", None, None)],
    );
}

#[test]
fn the_top_ends_own_flags_apply_as_the_turn_ends() {
    // `__end__` sets the session flag `seen`: the next turn can take the edge it guards.
    holds_in_all_three(
        "QG003/breaks-end-flags-kept-to-next-turn",
        &[
            ("QG003", "send", Some("act"), Some(2)),
            ("QG101", "send", None, None),
            ("QG105", "send", Some("act"), Some(2)),
        ],
    );
    // A turn flag set there is reset before the next turn starts.
    holds_in_all_three(
        "QG003/holds-end-turn-flag-reset",
        &[("QG101", "send", None, None)],
    );
}

#[test]
fn declaration_order_is_the_files_order() {
    // `x` (first in the top graph) runs the definition `second`, `y` runs `first`; `subgraphs`
    // lists `first` first, so `y/m1` is declared before `x/m2` (inlining reaches `x/m2` first).
    holds_in_all_three(
        "QG023/breaks-subgraph-declaration-order",
        &[("QG023", "cycle:y/m1", Some("y/m1"), None)],
    );
}

#[test]
fn a_reviewed_call_is_confirmed_on_clean_content_and_checks_no_history() {
    // Every send is reviewed: no QG011 after the inbox was read, but the calls are plain (QG001).
    holds_in_all_three(
        "QG011/holds-reviewed-each-call",
        &[
            ("QG001", "read_inbox", Some("tools"), Some(1)),
            ("QG001", "send_email", Some("tools"), Some(1)),
            ("QG101", "send_email", None, None),
            ("QG105", "send_email", Some("tools"), Some(1)),
        ],
    );
    // A person reviewing a call does not count calls: `at_most: 1` breaks (QG014).
    holds_in_all_three(
        "QG014/breaks-reviewed-call",
        &[
            ("QG001", "read_inbox", Some("tools"), Some(1)),
            ("QG001", "send_email", Some("tools"), Some(1)),
            ("QG014", "send_email", Some("tools"), Some(1)),
            ("QG105", "send_email", Some("tools"), Some(1)),
        ],
    );
    // A reviewed irreversible call that ran was confirmed: no QG013 on the compensable write.
    holds_in_all_three(
        "QG013/holds-reviewed-irreversible",
        &[
            ("QG001", "charge_card", Some("tools"), Some(1)),
            ("QG001", "send_receipt", Some("tools"), Some(1)),
            ("QG101", "charge_card", None, None),
            ("QG101", "send_receipt", None, None),
        ],
    );
    // A reviewed send after a confidential read was confirmed: no QG019.
    holds_in_all_three(
        "QG019/holds-reviewed-send",
        &[
            ("QG001", "get_record", Some("tools"), Some(1)),
            ("QG001", "send_email", Some("tools"), Some(1)),
            ("QG101", "send_email", None, None),
            ("QG105", "send_email", Some("tools"), Some(1)),
        ],
    );
}

#[test]
fn a_declined_call_runs_nothing_and_its_batch_still_counts() {
    let f = "QG014/breaks-all-declined-batch-moves-on";
    holds_in_all_three(
        f,
        &[
            ("QG001", "notify", Some("later"), Some(1)),
            ("QG001", "send", Some("act"), Some(1)),
            ("QG014", "notify", Some("later"), Some(1)),
            ("QG101", "send", None, None),
            ("QG104", "send", None, None),
            ("QG105", "send", Some("act"), Some(1)),
        ],
    );
    // `notify` must follow `send`: only the person's no to the one call of `send` lets the run
    // reach it without `send` having run.
    let w = witness_of(f, "QG014", "notify");
    let send = w
        .iter()
        .find(|s| s.kind == StepKind::Call && s.tool.as_deref() == Some("send"))
        .expect("the witness calls send");
    assert_eq!(
        (send.refused, send.yes, send.when),
        (true, Some(false), Some("call")),
        "{w:#?}"
    );
}

#[test]
fn outside_input_taints_every_turn() {
    holds_in_all_three(
        "QG011/breaks-input-reads-outside",
        &[
            ("QG001", "refund", Some("tools"), Some(1)),
            ("QG011", "refund", Some("tools"), Some(1)),
            ("QG101", "refund", None, None),
            ("QG105", "refund", Some("tools"), Some(1)),
        ],
    );
    holds_in_all_three(
        "QG011/holds-input-reads-outside-guarded",
        &[
            ("QG101", "refund", None, None),
            ("QG105", "refund", Some("tools"), Some(1)),
        ],
    );
}

#[test]
fn outside_input_to_an_agent_named_like_the_export_cascades() {
    // The plain shop with outside input: the input's region is the top graph `desk`, the tool
    // node's the agent `desk` (a compiled agent.yaml names the export after its agent), so the
    // injection cascades: QG012, never QG011 (every turn starts tainted in the top graph).
    let dir = tempfile::tempdir().expect("tempdir");
    for f in [
        "graph.json",
        "catalogue.json",
        "agent.yaml",
        "shop.catalogue.yaml",
    ] {
        std::fs::copy(
            common::root().join("fixtures/shop-plain").join(f),
            dir.path().join(f),
        )
        .expect("copy the plain shop");
    }
    let path = dir.path().join("graph.json");
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    g["input"] = serde_json::json!({"reads_outside": true});
    std::fs::write(&path, serde_json::to_string_pretty(&g).expect("json")).expect("write");
    holds_in_all_three_at(
        dir.path(),
        &[
            ("QG001", "charge_card", Some("desk_tools"), Some(1)),
            ("QG001", "get_order", Some("desk_tools"), Some(1)),
            ("QG001", "read_inbox", Some("desk_tools"), Some(1)),
            ("QG001", "send_receipt", Some("desk_tools"), Some(1)),
            ("QG012", "charge_card", Some("desk_tools"), Some(1)),
            ("QG012", "send_receipt", Some("desk_tools"), Some(1)),
            ("QG013", "charge_card", Some("desk_tools"), Some(1)),
            ("QG023", "cycle:desk_model", Some("desk_model"), None),
            ("QG101", "charge_card", None, None),
            ("QG101", "refund_card", None, None),
            ("QG101", "send_receipt", None, None),
            ("QG105", "refund_card", Some("billing_tools"), Some(1)),
        ],
    );
}

#[test]
fn an_agent_named_like_a_subgraph_is_another_region() {
    // An agent `kb` pays; the subgraph `kb` read the inbox: another region (QG012).
    let f = "QG012/breaks-agent-named-like-subgraph";
    holds_in_all_three(
        f,
        &[
            ("QG001", "pay", Some("tools"), Some(1)),
            ("QG001", "read_inbox", Some("kb/read"), Some(1)),
            ("QG012", "pay", Some("tools"), Some(1)),
            ("QG101", "pay", None, None),
            ("QG105", "pay", Some("tools"), Some(1)),
        ],
    );
    // Two regions named alike are told apart wherever a region is printed (`--replay`'s
    // `tainted = {...}`); a name no other region has is printed bare.
    let m = common::flat(&common::load(&common::root().join("fixtures").join(f)));
    let mut labels: Vec<String> = (0..m.regions.len()).map(|r| m.region_label(r)).collect();
    labels.sort();
    assert_eq!(
        labels,
        [
            "agent kb",
            "breaks-agent-named-like-subgraph",
            "subgraph kb"
        ]
    );
}

#[test]
fn an_agent_named_like_the_export_is_another_region() {
    // An agent `desk` pays; the top graph, named `desk`, read the inbox: another region (QG012).
    holds_in_all_three(
        "QG012/breaks-agent-named-like-export",
        &[
            ("QG001", "pay", Some("desk_tools"), Some(1)),
            ("QG001", "read_inbox", Some("read"), Some(1)),
            ("QG012", "pay", Some("desk_tools"), Some(1)),
            ("QG101", "pay", None, None),
            ("QG105", "pay", Some("desk_tools"), Some(1)),
        ],
    );
}

#[test]
fn a_tool_node_is_one_by_its_kind() {
    // A `tools` and a `tools_plain` node listing no tools, each in a model-free cycle with no
    // router: both cycles are unbounded loops.
    holds_in_all_three(
        "QG023/breaks-tool-node-without-tools",
        &[
            ("QG023", "cycle:act", Some("act"), None),
            ("QG023", "cycle:act_plain", Some("act_plain"), None),
        ],
    );
}

#[test]
fn qg023_names_the_use_whose_subgraph_node_is_declared_first() {
    // `inner`'s model `m` runs at `p/r/m` (through `wrap`) and at `q/m`. `q` (the top graph's)
    // is declared before `r` (in `wrap`), though `p/r/m` is inlined first.
    holds_in_all_three(
        "QG023/breaks-subgraph-use-declaration-order",
        &[("QG023", "cycle:q/m", Some("q/m"), None)],
    );
}

#[test]
fn parent_references_may_repeat() {
    // `pay_out` is reached only by `a/b/x`'s hand-off `../../pay_out`.
    holds_in_all_three(
        "QG001/breaks-handoff-two-graphs-up",
        &[
            ("QG001", "pay", Some("pay_out"), Some(1)),
            ("QG101", "pay", None, None),
            ("QG105", "pay", Some("pay_out"), Some(1)),
        ],
    );
}

#[test]
fn edges_from_an_end_node_are_ignored() {
    // A `null` edge from the top `end` and one from a subgraph's `end`: no QG015.
    holds_in_all_three("QG015/holds-null-edge-from-end", &[]);
}

#[test]
fn the_guard_decides_over_what_it_saw_a_step_read_outside() {
    // Issue 27 item 7 (SPEC 3.1 "The guard's view"): `fetch` calls the `reads_outside` read
    // itself, so the guard never sees it; the guarded `wire` (`not_after: [untrusted]`) then
    // runs. The read's QG001 is not the whole story: `wire` breaks its order rule (O4) and the
    // taint rule (O6), at the guarded node.
    let f = "QG014/breaks-guard-never-saw-the-read";
    holds_in_all_three(
        f,
        &[
            ("QG001", "read_web", Some("fetch"), Some(1)),
            ("QG011", "wire", Some("tools"), Some(1)),
            ("QG014", "wire", Some("tools"), Some(1)),
        ],
    );
    let w = witness_of(f, "QG014", "wire");
    let read = w
        .iter()
        .position(|s| s.kind == StepKind::Call && s.tool.as_deref() == Some("read_web"))
        .expect("the witness reads");
    let last = w.last().expect("a witness has steps");
    assert_eq!(w[read].guarded, Some(false), "{w:#?}");
    assert_eq!(last.tool.as_deref(), Some("wire"), "{w:#?}");
    assert!(last.guarded == Some(true) && !last.refused, "{w:#?}");
    // The same read made through the guard: the guard saw it and refuses `wire`.
    holds_in_all_three("QG014/holds-guard-saw-the-read", &[]);
}

#[test]
fn the_guard_counts_only_the_calls_it_saw() {
    // Plain calls of `search` (`at_most: 2`) at `plain`, then a guarded one at `tools`: the
    // guard counted none of the plain ones and lets it run past the limit (O5 at `tools`).
    holds_in_all_three(
        "QG014/breaks-guard-never-saw-the-count",
        &[
            ("QG001", "search", Some("plain"), Some(1)),
            ("QG014", "search", Some("plain"), Some(1)),
            ("QG014", "search", Some("tools"), Some(1)),
        ],
    );
}

#[test]
fn a_guarded_write_after_taint_the_guard_never_saw_breaks_the_taint_rule() {
    // A step reads outside itself, then a guarded write: the person is asked, but not told that
    // outside content entered the session (O6, QG011: the read is in the write's region).
    holds_in_all_three(
        "QG011/breaks-guard-never-saw-the-read",
        &[
            ("QG001", "read_web", Some("fetch"), Some(1)),
            ("QG011", "send", Some("tools"), Some(1)),
            ("QG101", "send", None, None),
        ],
    );
    // A remote agent's answer is taint the guard never saw (QG012: another agent's region).
    holds_in_all_three(
        "QG012/breaks-guard-never-saw-the-remote",
        &[
            ("QG012", "pay", Some("a_tools"), Some(1)),
            ("QG101", "pay", None, None),
        ],
    );
}

#[test]
fn a_hosted_call_is_plain_and_the_guard_never_sees_it() {
    // SPEC 2.2 `hosted`: the model's provider runs `web_search` inside the model call, a plain
    // call (O1 at the model node); the guarded `send` (`not_after: [untrusted]`) after it breaks
    // its order rule and the taint rule (SPEC 3.1 "The guard's view"), in both engines.
    let f = "QG014/breaks-hosted-search-then-guarded-send";
    holds_in_all_three(
        f,
        &[
            ("QG001", "web_search", Some("agent"), Some(1)),
            ("QG011", "send", Some("tools"), Some(1)),
            ("QG014", "send", Some("tools"), Some(1)),
        ],
    );
    let inputs = common::load(&common::root().join("fixtures").join(f));
    let (m, o) = common::outcome(&inputs, EngineChoice::Both);
    let violations: Vec<_> = o
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .flat_map(|r| &r.violations)
        .collect();
    assert_eq!(violations.len(), 6, "three from each engine");
    for v in violations {
        interp::replay_violation(&m, v).unwrap_or_else(|e| panic!("{e}\n{:#?}", v.witness));
        let search = v
            .witness
            .iter()
            .find(|s| s.kind == StepKind::Call && s.tool.as_deref() == Some("web_search"))
            .expect("the witness searches");
        assert_eq!(
            (search.node.as_str(), search.guarded),
            ("agent", Some(false))
        );
    }
}

#[test]
fn hosted_calls_are_made_one_after_another() {
    // Two hosted tools at one visit: `lookup` may not follow `web_search` (`not_after`). In a
    // tool node's batch the two would not see each other; hosted calls are sequential (SPEC 13),
    // so a visit that searches and then looks up breaks the order rule at the model node.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("graph.json"),
        r#"{"format":"qls-graph/1","name":"h","recursion_limit":5,"session_steps":1,
        "nodes":[{"id":"__start__","kind":"start"},
          {"id":"agent","kind":"model","hosted":["web_search","lookup"]},
          {"id":"__end__","kind":"end"}],
        "edges":[{"from":"__start__","kind":"fixed","destinations":["agent"]},
          {"from":"agent","kind":"conditional","destinations":["__end__"]}]}"#,
    )
    .expect("write");
    std::fs::write(
        dir.path().join("catalogue.json"),
        r#"{"format":"qls-catalogue/1","tools":{"web_search":{"kind":"read"},
          "lookup":{"kind":"read","order":{"not_after":["web_search"]}}}}"#,
    )
    .expect("write");
    let inputs = common::load(dir.path());
    let (m, o) = common::outcome(&inputs, EngineChoice::Both);
    assert!(o.disagreements.is_empty());
    for run in &o.runs {
        let o4: Vec<_> = run
            .results
            .iter()
            .filter(|r| r.instance.obligation == stalwart::Obligation::O4)
            .flat_map(|r| &r.violations)
            .collect();
        assert_eq!(o4.len(), 1, "{:?}: {o4:#?}", run.name);
        let v = o4[0];
        assert_eq!(m.nodes[v.node].qid, "agent");
        interp::replay_violation(&m, v).expect("the witness replays");
        let calls: Vec<&str> = v
            .witness
            .iter()
            .filter(|s| s.kind == StepKind::Call)
            .filter_map(|s| s.tool.as_deref())
            .collect();
        assert_eq!(calls, ["web_search", "lookup"], "{:?}", run.name);
    }
}

#[test]
fn a_call_review_on_the_model_node_reviews_its_hosted_calls() {
    // SPEC 2.2: a `call` interrupt on the model node for a hosted tool reviews its hosted calls
    // (SPEC 12.2): each is confirmed on clean content (no O6 after the hosted read), yet still
    // plain (O1). Without the review, the post after the search in one visit breaks O6.
    let graph = |interrupts: &str| {
        format!(
            r#"{{"format":"qls-graph/1","name":"h","recursion_limit":8,"session_steps":1,
            "nodes":[{{"id":"__start__","kind":"start"}},
              {{"id":"agent","kind":"model","hosted":["web_search","post"]}},
              {{"id":"__end__","kind":"end"}}],
            "edges":[{{"from":"__start__","kind":"fixed","destinations":["agent"]}},
              {{"from":"agent","kind":"conditional","destinations":["agent","__end__"]}}],
            "interrupts":[{interrupts}]}}"#
        )
    };
    let catalogue = r#"{"format":"qls-catalogue/1","tools":{
        "web_search":{"kind":"read","reads_outside":true},
        "post":{"kind":"write","sends_out":true,"idempotency":true,"result":{},
          "compensation":"none"}}}"#;
    let run = |interrupts: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("graph.json"), graph(interrupts)).expect("write");
        std::fs::write(dir.path().join("catalogue.json"), catalogue).expect("write");
        let mut out = Vec::new();
        for engine in [EngineChoice::Explicit, EngineChoice::Z3, EngineChoice::Both] {
            let inputs = common::load(dir.path());
            let mut opts = Options::new(1);
            opts.engine = engine;
            let r = verify(inputs, &opts).expect("verify");
            let got: Vec<Found> = r
                .findings
                .iter()
                .filter(|f| f.obligation.is_some())
                .map(|f| {
                    (
                        f.rule.to_string(),
                        f.subject.clone(),
                        f.node.clone(),
                        f.depth,
                    )
                })
                .collect();
            out.push(got);
        }
        assert!(out.windows(2).all(|w| w[0] == w[1]), "{out:#?}");
        out.remove(0)
    };
    let reviewed = run(r#"{"node":"agent","when":"call","tool":"post"}"#);
    assert_eq!(
        reviewed,
        want(&[
            ("QG001", "post", Some("agent"), Some(1)),
            ("QG001", "web_search", Some("agent"), Some(1)),
        ])
    );
    let unreviewed = run("");
    assert_eq!(
        unreviewed,
        want(&[
            ("QG001", "post", Some("agent"), Some(1)),
            ("QG001", "web_search", Some("agent"), Some(1)),
            ("QG011", "post", Some("agent"), Some(1)),
        ])
    );
}

/// The violations either engine finds in `fixture`, with the model they were found on.
fn violations_of(
    fixture: &str,
    engine: EngineChoice,
) -> (stalwart::model::FlatModel, Vec<stalwart::engine::Violation>) {
    let inputs = common::load(&common::root().join("fixtures").join(fixture));
    let (m, o) = common::outcome(&inputs, engine);
    let v = o
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .flat_map(|r| r.violations.iter().cloned())
        .collect();
    (m, v)
}

/// `w` with the person's answer to the first reviewed call of `tool` made a yes for the rest of
/// the run (SPEC 3.1 "Standing approvals").
fn answered_standing(w: &[stalwart::Step], tool: &str) -> Vec<stalwart::Step> {
    let mut w = w.to_vec();
    let s = w
        .iter_mut()
        .find(|s| {
            s.kind == StepKind::Call
                && s.tool.as_deref() == Some(tool)
                && s.when == Some("call")
                && !s.violation
        })
        .expect("the witness has a reviewed call");
    s.refused = false;
    s.yes = Some(true);
    s.standing = true;
    w
}

#[test]
fn a_standing_approval_is_not_asked_again_and_new_taint_breaks_it() {
    // SPEC 3.1 "Standing approvals": `tools` reviews each call of `send_email` with `standing`.
    // The person answers the first call yes for the rest of the run; `read_inbox` then reads
    // outside; the next `send_email` is not asked (it runs on the approval), and the approval
    // was given before the outside content came in: O6 (QG011). Without `standing` the same
    // graph holds (fixtures/QG011/holds-reviewed-each-call: each call is asked on what it sees).
    let f = "QG011/breaks-standing-approval-then-outside-read";
    holds_in_all_three(
        f,
        &[
            ("QG001", "read_inbox", Some("tools"), Some(1)),
            ("QG001", "send_email", Some("tools"), Some(1)),
            ("QG011", "send_email", Some("tools"), Some(1)),
            ("QG101", "send_email", None, None),
            ("QG105", "send_email", Some("tools"), Some(1)),
        ],
    );
    holds_in_all_three(
        "QG011/holds-reviewed-each-call",
        &[
            ("QG001", "read_inbox", Some("tools"), Some(1)),
            ("QG001", "send_email", Some("tools"), Some(1)),
            ("QG101", "send_email", None, None),
            ("QG105", "send_email", Some("tools"), Some(1)),
        ],
    );
    for engine in [EngineChoice::Explicit, EngineChoice::Z3] {
        let (_, vs) = violations_of(f, engine);
        let v = vs
            .iter()
            .find(|v| v.obligation == stalwart::Obligation::O6)
            .unwrap_or_else(|| panic!("{engine:?}: no O6 violation"));
        let w = &v.witness;
        let stand = w
            .iter()
            .position(|s| s.kind == StepKind::Call && s.standing)
            .unwrap_or_else(|| panic!("{engine:?}: no standing yes in {w:#?}"));
        let read = w
            .iter()
            .position(|s| s.kind == StepKind::Call && s.tool.as_deref() == Some("read_inbox"))
            .expect("the witness reads");
        assert_eq!(w[stand].tool.as_deref(), Some("send_email"), "{w:#?}");
        assert!(
            stand < w.len() - 1 && read < w.len() - 1,
            "{engine:?}: {w:#?}"
        );
        let last = w.last().expect("a witness has steps");
        assert_eq!(last.tool.as_deref(), Some("send_email"), "{w:#?}");
        assert!(!last.standing && !last.refused, "{w:#?}");
        // Attack: the same route claiming a second standing yes on the tainted content, which
        // would make the approval clean again. A held approval is not asked for again, so the
        // interpreter refuses the step.
        let (m, _) = violations_of(f, engine);
        let mut again = v.clone();
        again.witness.last_mut().expect("a last step").standing = true;
        match interp::replay_violation(&m, &again) {
            Err(interp::ReplayError::Illegal { step, .. }) => assert_eq!(step, w.len() - 1),
            other => panic!("{engine:?}: a second standing yes was taken: {other:?}"),
        }
    }
    // The replay's text says which answer the person gave, and that the last call was not asked.
    let r = common::report(&common::root().join("fixtures").join(f));
    let ix = r
        .findings
        .iter()
        .position(|x| x.rule == "QG011")
        .expect("a QG011 finding");
    let m = common::flat(&common::load(&common::root().join("fixtures").join(f)));
    let walk = stalwart::replay::walk(&m, &r, ix).expect("replayable");
    assert!(walk.reproduces());
    let text = stalwart::output::replay::text(&r, &walk, false);
    assert!(
        text.contains("call send_email (plain, reviewed: yes for the rest of the run)\n"),
        "{text}"
    );
    assert!(
        text.contains("call send_email (plain, not asked: on the standing approval)  <- breaks O6"),
        "{text}"
    );
    assert!(text.contains("standing[send_email] = true"), "{text}");
    assert!(
        text.contains("standing_clean[send_email] = false"),
        "{text}"
    );
    // The report's JSON witness carries the answer: `"standing": true` on the reviewed call.
    let json = stalwart::output::json::to_value(&r);
    let witness = json["findings"][ix]["witness"]
        .as_array()
        .expect("a witness");
    let stood: Vec<&serde_json::Value> = witness
        .iter()
        .filter(|s| s["standing"] == serde_json::json!(true))
        .collect();
    assert_eq!(stood.len(), 1, "{witness:#?}");
    assert_eq!(stood[0]["when"], "call");
    assert_eq!(stood[0]["tool"], "send_email");
}

#[test]
fn a_standing_approval_confirms_later_calls_in_the_run() {
    // SPEC 3.1: a standing yes at `review` sets `confirmed[send_receipt]` for the rest of the
    // run, not spent by the batch: `plain`'s unreviewed call of the irreversible write is then
    // confirmed (no O2, no `irreversible_unconfirmed`, so no O7 for `charge_card`). The person
    // may also answer yes to that one call (or no), so the graph still breaks O2 and O7: the
    // engines' witnesses take those answers, and the same route with a standing yes breaks
    // nothing.
    let f = "QG013/breaks-irreversible-after-a-review";
    holds_in_all_three(
        f,
        &[
            ("QG001", "charge_card", Some("plain"), Some(1)),
            ("QG001", "send_receipt", Some("plain"), Some(1)),
            ("QG001", "send_receipt", Some("plain"), Some(1)),
            ("QG001", "send_receipt", Some("review"), Some(1)),
            ("QG013", "charge_card", Some("plain"), Some(1)),
            ("QG101", "charge_card", None, None),
            ("QG101", "send_receipt", None, None),
        ],
    );
    use stalwart::Obligation;
    for engine in [EngineChoice::Explicit, EngineChoice::Z3] {
        let (m, vs) = violations_of(f, engine);
        for ob in [Obligation::O2, Obligation::O7] {
            let v = vs
                .iter()
                .find(|v| v.obligation == ob)
                .unwrap_or_else(|| panic!("{engine:?}: no {ob:?} violation"));
            assert!(
                v.witness.iter().all(|s| !s.standing),
                "{engine:?} {ob:?}: {:#?}",
                v.witness
            );
            interp::replay_violation(&m, v).expect("the witness replays");
            let mut stood = v.clone();
            stood.witness = answered_standing(&v.witness, "send_receipt");
            match interp::replay_violation(&m, &stood) {
                Err(interp::ReplayError::NoViolation(_)) => {}
                other => panic!(
                    "{engine:?} {ob:?}: with a standing yes, {other:?}\n{:#?}",
                    stood.witness
                ),
            }
        }
    }
}

#[test]
fn a_standing_approval_ends_with_the_run() {
    // The review runs in turn 1 only (a session flag sends turn 2 to `plain`): a standing yes
    // there ends with turn 1's run, so turn 2's plain call of the irreversible write is
    // unconfirmed (O2 at turn 2 is QG003; O7 keeps its rule with the turn), and the same
    // witness with the turn-1 answer made standing still breaks.
    let f = "QG013/breaks-standing-approval-ends-with-the-run";
    holds_in_all_three(
        f,
        &[
            ("QG001", "send_receipt", Some("review"), Some(1)),
            ("QG003", "charge_card", Some("plain"), Some(2)),
            ("QG003", "send_receipt", Some("plain"), Some(2)),
            ("QG003", "send_receipt", Some("plain"), Some(2)),
            ("QG013", "charge_card", Some("plain"), Some(2)),
            ("QG101", "charge_card", None, None),
            ("QG101", "send_receipt", None, None),
        ],
    );
    use stalwart::Obligation;
    for engine in [EngineChoice::Explicit, EngineChoice::Z3] {
        let (m, vs) = violations_of(f, engine);
        for ob in [Obligation::O2, Obligation::O7] {
            let v = vs
                .iter()
                .find(|v| v.obligation == ob)
                .unwrap_or_else(|| panic!("{engine:?}: no {ob:?} violation"));
            assert_eq!(v.turn, 2, "{engine:?} {ob:?}");
            let mut stood = v.clone();
            stood.witness = answered_standing(&v.witness, "send_receipt");
            assert!(stood.witness.iter().any(|s| s.standing && s.turn == 1));
            interp::replay_violation(&m, &stood).unwrap_or_else(|e| {
                panic!(
                    "{engine:?} {ob:?}: a turn-1 standing yes covers turn 2: {e}\n{:#?}",
                    stood.witness
                )
            });
        }
    }
}
