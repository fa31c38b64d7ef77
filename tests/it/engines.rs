//! The two engines against each other (SPEC 9): on generated graphs and catalogues (guards, flags,
//! interrupts of all four kinds (per-call reviews too), outside input, flags on the top end and on
//! subgraph nodes, order rules, subgraphs with `../` hand-offs, null destinations,
//! command edges, sends, two agents and a remote one) the explicit search and the Z3 bounded model
//! checker agree on every obligation instance: the same violations (tool, node, class), each first
//! at the same turn and with a shortest witness of the same node steps; every Z3 witness replays on
//! the plain interpreter. A deliberately broken Z3 engine shows the disagreement is caught: QG312,
//! first, failing the gate.
//!
//! `STALWART_Z3_CASES` sets how many generated cases run (default 200).

use crate::common;

use stalwart::engine::{bmc, interp, Class, EngineChoice, Limits};
use stalwart::gen;
use stalwart::input;
use stalwart::NodeKind;
use stalwart::Obligation;
use stalwart::{verify, Options};
use std::collections::BTreeMap;

fn cases() -> u64 {
    std::env::var("STALWART_Z3_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

type Key = (Obligation, Option<usize>, usize, usize, Class);

#[test]
fn engines_agree_on_generated_graphs() {
    let mut checked = 0;
    let mut violations = 0;
    let (mut gated_models, mut gated_calls) = (0, 0);
    // Violations of QG019's and QG021's questions (O9, O10), with one of them on a guarded call.
    let (mut o9, mut o10, mut guarded_declared) = (0, 0, 0);
    // SPEC 12's words and 3.1's flag readings on generated graphs: models with per-call reviews
    // and reviewed calls on witnesses (answered yes and no); models whose input reads outside and
    // their taint violations; models with flags on the top end or a subgraph node.
    let (mut reviewed_models, mut reviewed_yes, mut reviewed_no) = (0, 0, 0);
    let (mut input_models, mut input_taint_violations) = (0, 0);
    let mut flagged_ends = 0;
    // Half the cases, as the two tests below (100 graphs by default); `STALWART_Z3_CASES` runs more.
    for seed in 0..cases() / 2 {
        let g = gen::random(seed, 3 + (seed % 6) as usize, 2 + (seed % 4) as usize);
        let (m, o, found) = agree(seed, &g);
        for v in o
            .runs
            .iter()
            .flat_map(|r| &r.results)
            .flat_map(|r| &r.violations)
        {
            // A witness through a guarded call of a gated tool: the gate decided that call.
            gated_calls += v
                .witness
                .iter()
                .filter(|st| {
                    st.guarded == Some(true)
                        && st
                            .tool
                            .as_deref()
                            .and_then(|t| m.tool_ix(t))
                            .is_some_and(|t| m.gates[t].is_some())
                })
                .count();
        }
        gated_models += usize::from(m.gates.iter().any(Option::is_some));
        reviewed_models += usize::from(m.nodes.iter().any(|n| !n.reviews.is_empty()));
        for st in o
            .runs
            .iter()
            .flat_map(|r| &r.results)
            .flat_map(|r| &r.violations)
            .flat_map(|v| &v.witness)
            .filter(|st| st.when == Some("call"))
        {
            reviewed_yes += usize::from(st.yes == Some(true));
            reviewed_no += usize::from(st.yes == Some(false));
        }
        if m.input_taint.is_some() {
            input_models += 1;
            input_taint_violations += o.runs[0]
                .results
                .iter()
                .filter(|r| {
                    matches!(
                        r.instance.obligation,
                        Obligation::O4 | Obligation::O6 | Obligation::O10
                    )
                })
                .map(|r| r.violations.len())
                .sum::<usize>();
        }
        flagged_ends += usize::from(m.nodes.iter().any(|n| {
            // A subgraph node's own flags move to its inner end (SPEC 3.1).
            n.kind == NodeKind::End && (!n.sets.is_empty() || !n.clears.is_empty())
        }));
        for v in o.runs[1].results.iter().flat_map(|r| &r.violations) {
            if let Err(e) = interp::replay_violation(&m, v) {
                panic!(
                    "seed {seed}: a z3 witness does not replay: {e}\n{:#?}",
                    v.witness
                );
            }
            let last = v.witness.last().expect("a witness ends at its call");
            assert!(
                last.violation,
                "seed {seed}: the witness ends at the violating call"
            );
        }
        violations += found.len();
        for (ob, ..) in found.keys() {
            o9 += usize::from(*ob == Obligation::O9);
            o10 += usize::from(*ob == Obligation::O10);
        }
        guarded_declared += o.runs[0]
            .results
            .iter()
            .filter(|r| matches!(r.instance.obligation, Obligation::O9 | Obligation::O10))
            .flat_map(|r| &r.violations)
            .filter(|v| v.witness.last().and_then(|s| s.guarded) == Some(true))
            .count();
        checked += 1;
    }
    assert_eq!(checked, cases() / 2);
    assert!(
        violations > checked as usize,
        "the generator should give violations to compare, got {violations}"
    );
    // Rulebook gates (SPEC 3 `fact[f]`) reach both engines and the interpreter, and decide calls
    // on witnesses.
    assert!(
        gated_models * 3 > checked as usize,
        "the generator should gate tools, got {gated_models} gated models"
    );
    assert!(
        gated_calls > 0,
        "some witness should pass a guarded call of a gated tool"
    );
    assert!(
        o9 > 0 && o10 > 0 && guarded_declared > 0,
        "the generator should give O9 and O10 violations (got {o9}, {o10}; {guarded_declared} at guarded calls)"
    );
    // The engines agree where SPEC 12.2's reviews, 2.2's outside input and 3.1's end and
    // subgraph flags are in play: each occurs on the graphs compared.
    assert!(
        reviewed_models * 5 > checked as usize && reviewed_yes > 0 && reviewed_no > 0,
        "the generator should review calls: {reviewed_models} models, witnesses with {reviewed_yes} yes and {reviewed_no} no"
    );
    assert!(
        input_models * 10 > checked as usize && input_taint_violations > 0,
        "the generator should declare outside input: {input_models} models, {input_taint_violations} taint violations"
    );
    assert!(
        flagged_ends * 10 > checked as usize,
        "the generator should set flags on ends and subgraph nodes: {flagged_ends} models"
    );
}

/// SPEC 2.2 `hosted` on generated graphs: each model node hosts some of the catalogue's tools
/// (the generator's own graphs, a list added), so hosted calls meet guarded and plain calls,
/// reviews, pauses, outside input and the seen twins (SPEC 3.1). Both engines give the same
/// violations at the same turn and node steps, and every witness replays.
#[test]
fn engines_agree_on_generated_graphs_with_hosted_tools() {
    let (mut hosted_models, mut at_model) = (0, 0);
    for seed in 0..cases() / 2 {
        let mut g = gen::random(seed, 3 + (seed % 6) as usize, 2 + (seed % 4) as usize);
        let tools: Vec<String> = g.catalogue["tools"]
            .as_object()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        let mut hosted_here = false;
        let mut pick = seed as usize;
        let mut host = |nodes: &mut serde_json::Value| {
            for n in nodes.as_array_mut().into_iter().flatten() {
                if n["kind"] == "model" && !tools.is_empty() {
                    pick = pick.wrapping_mul(31).wrapping_add(7);
                    let k = 1 + pick % 2.min(tools.len());
                    let hosted: Vec<&String> =
                        (0..k).map(|j| &tools[(pick + j) % tools.len()]).collect();
                    n["hosted"] = serde_json::json!(hosted);
                    hosted_here = true;
                }
            }
        };
        host(&mut g.graph["nodes"]);
        if let Some(subs) = g.graph["subgraphs"].as_object_mut() {
            for sg in subs.values_mut() {
                host(&mut sg["nodes"]);
            }
        }
        if !hosted_here {
            continue;
        }
        hosted_models += 1;
        let (m, vs) = agree_and_replay(seed, &g);
        for v in &vs {
            at_model += usize::from(m.nodes[v.node].kind == NodeKind::Model);
        }
    }
    assert!(
        hosted_models > 20 && at_model > 20,
        "hosted tools should be called: {hosted_models} models, {at_model} violations at a model node"
    );
}

/// Runs both engines on the generated graph `g` (written out and read back as a user's would
/// be) and asserts they agree on every violation, each first at the same turn and node steps.
/// Returns the model, the engines' outcome, and the violations both found (first turn and node
/// steps by key).
fn agree(
    seed: u64,
    g: &gen::Generated,
) -> (
    stalwart::model::FlatModel,
    stalwart::engine::Outcome,
    BTreeMap<Key, (u32, u32)>,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let gp = dir.path().join("graph.json");
    let cp = dir.path().join("catalogue.json");
    std::fs::write(&gp, g.graph.to_string()).expect("write");
    std::fs::write(&cp, g.catalogue.to_string()).expect("write");
    let inputs = input::load_export(&gp, &cp)
        .unwrap_or_else(|e| panic!("seed {seed}: generated input rejected: {e}"));
    let m = common::flat_gated(&inputs, g);
    let o = common::run(&m, EngineChoice::Both);
    assert!(
        o.disagreements.is_empty(),
        "seed {seed}: the engines disagree: {:#?}\n{}\n{}\ngates: {:?}",
        o.disagreements
            .iter()
            .map(|d| (d.instance, d.key, d.why.clone()))
            .collect::<Vec<_>>(),
        g.graph,
        g.catalogue,
        g.gates
    );
    let mut per_engine: Vec<BTreeMap<Key, (u32, u32)>> = o
        .runs
        .iter()
        .map(|r| {
            r.results
                .iter()
                .flat_map(|res| {
                    res.violations.iter().map(move |v| {
                        let steps = v.witness.last().map_or(0, |s| s.run_steps);
                        (
                            (
                                res.instance.obligation,
                                res.instance.tool,
                                v.tool,
                                v.node,
                                v.class,
                            ),
                            (v.turn, steps),
                        )
                    })
                })
                .collect()
        })
        .collect();
    assert_eq!(per_engine.len(), 2, "both engines ran");
    assert_eq!(
        per_engine[0], per_engine[1],
        "seed {seed}: the engines' (turn, node steps) differ\n{}\n{}\ngates: {:?}",
        g.graph, g.catalogue, g.gates
    );
    let found = per_engine.swap_remove(0);
    (m, o, found)
}

/// Runs both engines on the generated graph `g` (written out and read back as a user's would
/// be): they agree on every violation, each first at the same turn and node steps, and every
/// witness replays on the interpreter. Returns the model and every violation either found.
fn agree_and_replay(
    seed: u64,
    g: &gen::Generated,
) -> (stalwart::model::FlatModel, Vec<stalwart::engine::Violation>) {
    let (m, o, _) = agree(seed, g);
    let vs: Vec<stalwart::engine::Violation> = o
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .flat_map(|r| r.violations.iter().cloned())
        .collect();
    for v in &vs {
        interp::replay_violation(&m, v)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{:#?}", v.witness));
    }
    (m, vs)
}

/// SPEC 3.1 "Standing approvals" on generated graphs: every review of each call the generator
/// writes is made `standing`, a standing review is added at some tool nodes, and every other case
/// a model node hosts tools with a standing review of one of them, so standing yeses meet plain
/// and guarded calls, outside reads, pauses, several turns and the seen twins. Both engines give
/// the same violations at the same turn and node steps, and every witness replays.
#[test]
fn engines_agree_on_generated_graphs_with_standing_reviews() {
    let (mut standing_graphs, mut stood) = (0, 0);
    for seed in 0..cases() / 2 {
        let mut g = gen::random(seed, 3 + (seed % 6) as usize, 2 + (seed % 4) as usize);
        let tools: Vec<String> = g.catalogue["tools"]
            .as_object()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        if tools.is_empty() {
            continue;
        }
        let mut pick = seed as usize;
        let mut reviews = Vec::new();
        let mut stand = |nodes: &mut serde_json::Value, reviews: &mut Vec<serde_json::Value>| {
            for n in nodes.as_array_mut().into_iter().flatten() {
                pick = pick.wrapping_mul(31).wrapping_add(7);
                let id = n["id"].clone();
                let bound: Vec<String> = n["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect();
                match n["kind"].as_str() {
                    Some("tools" | "tools_plain") if !bound.is_empty() && pick % 3 != 0 => {
                        let tool = &bound[pick % bound.len()];
                        reviews.push(serde_json::json!(
                            {"node": id, "when": "call", "tool": tool, "standing": true}
                        ));
                    }
                    Some("model") if seed % 2 == 1 => {
                        let tool = &tools[pick % tools.len()];
                        let other = &tools[(pick / 7) % tools.len()];
                        n["hosted"] = serde_json::json!([tool, other]);
                        reviews.push(serde_json::json!(
                            {"node": id, "when": "call", "tool": tool, "standing": true}
                        ));
                    }
                    _ => {}
                }
            }
        };
        stand(&mut g.graph["nodes"], &mut reviews);
        for i in g.graph["interrupts"].as_array_mut().into_iter().flatten() {
            if i["when"] == "call" {
                i["standing"] = serde_json::json!(true);
                reviews.push(serde_json::Value::Null);
            }
        }
        if reviews.is_empty() {
            continue;
        }
        let reviews: Vec<serde_json::Value> =
            reviews.into_iter().filter(|r| !r.is_null()).collect();
        if let Some(ints) = g.graph["interrupts"].as_array_mut() {
            ints.extend(reviews);
        }
        standing_graphs += 1;
        let (_, vs) = agree_and_replay(seed, &g);
        stood += vs
            .iter()
            .filter(|v| v.witness.iter().any(|s| s.standing))
            .count();
    }
    assert!(
        standing_graphs > 40 && stood > 10,
        "standing reviews should be answered: {standing_graphs} graphs, {stood} witnesses with a standing yes"
    );
}

/// The same obligation verdicts from the whole pipeline with either engine alone.
#[test]
fn each_engine_alone_gives_the_same_findings_on_the_fixtures() {
    for (name, dir) in common::cases() {
        let inputs = common::load(&dir);
        let run = |engine| {
            let inputs = common::load(&dir);
            let mut opts = Options::new(common::steps(&inputs));
            opts.engine = engine;
            let r = verify(inputs, &opts).expect("verify");
            r.findings
                .iter()
                .map(|f| (f.rule, f.subject.clone(), f.node.clone(), f.depth))
                .collect::<Vec<_>>()
        };
        drop(inputs);
        let e = run(EngineChoice::Explicit);
        assert_eq!(e, run(EngineChoice::Z3), "{name}: explicit vs z3");
        assert_eq!(e, run(EngineChoice::Both), "{name}: explicit vs both");
    }
}

/// A Z3 engine that claims every obligation holds is caught: QG312 on each violation the explicit
/// engine found, listed first, failing the gate.
#[test]
fn a_broken_engine_is_caught() {
    let dir = common::root().join("fixtures/shop-plain");
    let inputs = common::load(&dir);
    let mut opts = Options::new(common::steps(&inputs));
    opts.z3 = bmc::Config {
        broken: true,
        ..bmc::Config::default()
    };
    let report = verify(inputs, &opts).expect("verify");
    assert_eq!(report.findings[0].rule, "QG312");
    let qg312: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "QG312")
        .collect();
    // Every violation key the explicit engine found (QG001 on four tools, QG011 on two, QG013,
    // QG105, and QG012 on the guarded refund_card: billing's guard never saw desk's plain
    // read_inbox, SPEC 3.1 "The guard's view") is a disagreement.
    assert_eq!(
        qg312.len(),
        9,
        "{:#?}",
        qg312.iter().map(|f| &f.message).collect::<Vec<_>>()
    );
    assert!(qg312.iter().all(|f| report.blocks(f)));
    assert!(!report.passed());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(report.disagreements, 9);
    let charge = qg312
        .iter()
        .find(|f| f.subject == "charge_card" && f.obligation == Some(Obligation::O7))
        .expect("QG312 on charge_card's O7");
    assert_eq!(
        charge.message,
        "the engines disagree on O7 (the saga) for 'charge_card': at 'desk_tools' the explicit \
         engine says it breaks at turn 1 and the z3 engine says it holds"
    );
    assert!(
        !charge.witness.is_empty(),
        "the explicit witness is carried"
    );
    // With the working engine the same run agrees and the gate's verdict is the usual one.
    let inputs = common::load(&dir);
    let opts = Options::new(common::steps(&inputs));
    let report = verify(inputs, &opts).expect("verify");
    assert!(report.findings.iter().all(|f| f.rule != "QG312"));
    assert_eq!(report.disagreements, 0);
    let _ = Limits::default();
}

/// Where either engine proves an obligation at every depth, the merged verdict says so: on this
/// fixture the explicit search reaches its turn fixpoint for five of six obligations, and the Z3
/// engine (k-induction, or no latch outliving a turn) proves all six.
#[test]
fn either_engine_can_prove_every_depth() {
    let dir = common::root().join("fixtures/QG014/holds-guarded");
    let verdict = |engine| {
        let inputs = common::load(&dir);
        let mut opts = Options::new(common::steps(&inputs));
        opts.engine = engine;
        let r = verify(inputs, &opts).expect("verify");
        (
            r.proof.holds_every_depth,
            r.proof.holds_to_bound,
            r.proof.violated,
        )
    };
    assert_eq!(verdict(EngineChoice::Explicit), (5, 1, 0));
    assert_eq!(verdict(EngineChoice::Z3), (6, 0, 0));
    assert_eq!(verdict(EngineChoice::Both), (6, 0, 0));
}

/// Cases a tester found, each once a disagreement: the engines and the plain interpreter now give
/// one answer on each.
#[test]
fn cases_once_disagreed_now_agree() {
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str, u32)]);
    let cases: [Case; 3] = [
        // A session flag cleared and a turn flag set on the way, an unused flag declared: Z3's
        // QF_UF-configured solver refuted the second turn's route (the engine now uses QF_FD).
        (
            r#"{"format":"qls-graph/1","name":"t","recursion_limit":3,"session_steps":2,
            "state":{"a":{"scope":"session"},"b":{"scope":"turn"},"c":{"scope":"turn"}},
            "nodes":[{"id":"__start__","kind":"start"},{"id":"n0","kind":"tools","tools":["z"]},
              {"id":"n1","kind":"step","tools":["w"],"clears":["a"]},{"id":"n2","kind":"step","sets":["b"]},
              {"id":"__end__","kind":"end"}],
            "edges":[{"from":"__start__","kind":"fixed","destinations":["n1"]},
              {"from":"n0","kind":"conditional","destinations":["n2","__end__"]},
              {"from":"n1","kind":"fixed","destinations":["n0","__end__"]},
              {"from":"n2","kind":"conditional","destinations":["__end__"]}]}"#,
            r#"{"format":"qls-catalogue/1","tools":{"w":{"kind":"read","order":{"not_after":["z"]}},
              "z":{"kind":"read"}}}"#,
            &[("QG001", "w", 1), ("QG003", "w", 2)],
        ),
        // An `after` pause on a remote node: the person confirms having seen the remote's answer,
        // so the write after it is confirmed clean (the engines once tainted after the pause).
        (
            r#"{"format":"qls-graph/1","name":"t","recursion_limit":25,"session_steps":1,
            "nodes":[{"id":"__start__","kind":"start"},{"id":"partner","kind":"remote","channel":"ch"},
              {"id":"act","kind":"tools_plain","tools":["w"]},{"id":"__end__","kind":"end"}],
            "edges":[{"from":"__start__","kind":"fixed","destinations":["partner"]},
              {"from":"partner","kind":"fixed","destinations":["act"]},
              {"from":"act","kind":"fixed","destinations":["__end__"]}],
            "interrupts":[{"node":"partner","when":"after","tool":"w"}]}"#,
            r#"{"format":"qls-catalogue/1","tools":{"w":{"kind":"write","idempotency":true,"result":{}}},
              "channels":{"ch":{"auth":"mtls"}}}"#,
            &[("QG001", "w", 1), ("QG105", "w", 1)],
        ),
        // A hand-off out of a subgraph near the step limit, taint from two regions over two
        // turns: under the QF_UF-configured solver the hinted search refuted turn 2's route.
        (
            r#"{"nodes":[{"id":"__start__","kind":"start"},{"id":"n0","kind":"step","tools":["r"]},{"id":"n1","kind":"step","tools":["z","x"]},{"id":"n2","kind":"step","tools":["r"],"sets":["a"],"agent":"B"},{"id":"n3","kind":"tools","tools":["z"]},{"id":"n4","kind":"subgraph","graph":"g4"},{"id":"__end__","kind":"end"}],"edges":[{"from":"__start__","kind":"fixed","destinations":["n1"]},{"from":"n0","kind":"stalwart_edge","destinations":["__end__"]},{"from":"n1","kind":"fixed","destinations":["n4","n3","n1"],"exit_after":2},{"from":"n1","kind":"command","destinations":["n4"]},{"from":"n2","kind":"command","destinations":["n1"]},{"from":"n3","kind":"fixed","destinations":["n0","__end__"],"guard":"b"},{"from":"n3","kind":"conditional","destinations":["n1","__end__","n2"]},{"from":"n4","kind":"fixed","destinations":["n2","n0","n3"]},{"from":"n4","kind":"conditional","destinations":["n0"],"exit_after":2}],"interrupts":[{"node":"n0","when":"inside","tool":"w","answer":"b"}],"subgraphs":{"g4":{"nodes":[{"id":"__start__","kind":"start"},{"id":"n0","kind":"step","clears":["a"]},{"id":"n1","kind":"model","tools":["u"]},{"id":"__end__","kind":"end"}],"edges":[{"from":"__start__","kind":"fixed","destinations":["n1"]},{"from":"n0","kind":"stalwart_edge","destinations":["n0","n1","__end__","../__end__"]},{"from":"n1","kind":"fixed","destinations":["n1","__end__","../n0"],"guard":"b && !b"},{"from":"n1","kind":"command","destinations":["__end__","n1","../n0"]}],"interrupts":[{"node":"n0","when":"inside","tool":"u","answer":"c"},{"node":"n0","when":"before","tool":"r","answer":"c"}]}},"format":"qls-graph/1","name":"t","entry":"__start__","recursion_limit":4,"session_steps":2,"state":{"a":{"scope":"session"},"b":{"scope":"turn"},"c":{"scope":"turn"}}}"#,
            r#"{"format":"qls-catalogue/1","tools":{"r":{"kind":"read","reads_outside":true},"w":{"kind":"read"},"x":{"kind":"read"},"u":{"kind":"read"},"z":{"kind":"write"}}}"#,
            &[
                ("QG001", "r", 1),
                ("QG001", "r", 1),
                ("QG001", "x", 1),
                ("QG001", "z", 1),
                ("QG003", "z", 2),
                // The guarded z at n3 after the plain reads of r the guard never saw (SPEC 3.1
                // "The guard's view"): O6 first at turn 2.
                ("QG003", "z", 2),
                ("QG012", "z", 1),
                ("QG105", "z", 1),
                ("QG105", "z", 1),
            ],
        ),
    ];
    for (i, (graph, catalogue, want)) in cases.iter().enumerate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let gp = dir.path().join("graph.json");
        let cp = dir.path().join("catalogue.json");
        std::fs::write(&gp, graph).expect("write");
        std::fs::write(&cp, catalogue).expect("write");
        for engine in [EngineChoice::Both, EngineChoice::Explicit, EngineChoice::Z3] {
            let inputs = input::load_export(&gp, &cp).expect("input");
            let mut opts = Options::new(common::steps(&inputs));
            opts.engine = engine;
            let r = verify(inputs, &opts).expect("verify");
            let got: Vec<(&str, &str, u32)> = r
                .findings
                .iter()
                // The engines' findings: those of an obligation (not QG015, QG023 or the
                // declaration rules).
                .filter(|f| f.obligation.is_some())
                .map(|f| (f.rule.as_str(), f.subject.as_str(), f.depth.unwrap_or(0)))
                .collect();
            assert_eq!(&got, want, "case {i}, {engine:?}");
        }
    }
}
