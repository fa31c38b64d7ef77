//! Properties over generated graphs (SPEC 3, 4, 9; with per-call reviews, outside input and flags
//! on the top end and subgraph nodes, SPEC 3.1, 12): every witness replays on the plain
//! interpreter, witnesses are shortest-first and end at the violating call, and findings do not
//! change when nodes are renamed or the export's lists are reordered.

use crate::common;

use serde_json::Value;
use stalwart::engine::{interp, Depth};
use stalwart::gen;
use stalwart::input::Inputs;
use stalwart::{verify, Options};
use std::collections::BTreeSet;

/// (rule, obligation, subject, node with the renaming undone, depth) of every finding.
fn summary(
    inputs: Inputs,
    unrename: &dyn Fn(&str) -> String,
) -> BTreeSet<(String, String, String, String, u32, usize)> {
    let opts = Options::new(common::steps(&inputs));
    let report = verify(inputs, &opts).expect("verify");
    report
        .findings
        .iter()
        .map(|f| {
            (
                f.rule.to_string(),
                f.obligation
                    .map(|o| o.as_str().to_string())
                    .unwrap_or_default(),
                unrename(&f.subject),
                f.node.as_deref().map(unrename).unwrap_or_default(),
                f.depth.unwrap_or(0),
                f.witness.last().map_or(0, |s| s.run_steps as usize),
            )
        })
        .collect()
}

fn cases() -> u64 {
    std::env::var("STALWART_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150)
}

#[test]
fn generated_witnesses_replay() {
    let mut violations = 0;
    let mut every_depth = 0;
    // Witnesses through a reviewed call (SPEC 12.2), and through a turn that starts tainted
    // (SPEC 2.2 `input.reads_outside`).
    let (mut reviewed, mut from_input) = (0, 0);
    for seed in 0..cases() {
        let g = gen::random(seed, 3 + (seed % 6) as usize, 2 + (seed % 4) as usize);
        let (_d, inputs) = common::load_generated(&g);
        let m = common::flat_gated(&inputs, &g);
        let results = common::results_of(&m);
        for r in &results {
            if r.depth == Depth::Every {
                every_depth += 1;
            }
            for v in &r.violations {
                violations += 1;
                if let Err(e) = interp::replay_violation(&m, v) {
                    panic!(
                        "seed {seed}: witness of {:?} on {} at {} does not replay: {e}\n{:#?}\n{}\n{}\ngates: {:?}",
                        v.obligation, m.tools[v.tool].name, m.nodes[v.node].qid, v.witness, g.graph,
                        g.catalogue, g.gates
                    );
                }
                assert!(
                    v.turn >= 1 && v.turn <= m.session_steps,
                    "seed {seed}: turn {} out of range",
                    v.turn
                );
                assert_eq!(
                    v.witness.last().map(|s| s.turn),
                    Some(v.turn),
                    "seed {seed}: the witness ends in its turn"
                );
                reviewed += usize::from(v.witness.iter().any(|s| s.when == Some("call")));
                from_input += usize::from(m.input_taint.is_some());
            }
        }
    }
    assert!(
        violations > 100,
        "the generator should give violations to replay, got {violations}"
    );
    assert!(
        every_depth > 10,
        "some searches should reach their fixpoint, got {every_depth}"
    );
    assert!(
        reviewed > 10 && from_input > 10,
        "witnesses should pass reviewed calls ({reviewed}) and outside input ({from_input})"
    );
}

fn rename(v: &mut Value, f: &dyn Fn(&str) -> String) {
    let ren = |s: &Value| match s.as_str() {
        Some(x) if x.starts_with('n') => Value::String(f(x)),
        _ => s.clone(),
    };
    if let Some(nodes) = v["nodes"].as_array_mut() {
        for n in nodes {
            n["id"] = ren(&n["id"]);
        }
    }
    if let Some(edges) = v["edges"].as_array_mut() {
        for e in edges {
            e["from"] = ren(&e["from"]);
            if let Some(ds) = e["destinations"].as_array_mut() {
                for d in ds {
                    *d = ren(d);
                }
            }
        }
    }
    if let Some(sends) = v["sends"].as_array_mut() {
        for e in sends {
            e["from"] = ren(&e["from"]);
            if let Some(ds) = e["destinations"].as_array_mut() {
                for d in ds {
                    *d = ren(d);
                }
            }
        }
    }
    // `../n3` inside a subgraph names the renamed top-level node.
    if let Some(subs) = v["subgraphs"].as_object_mut() {
        for (_, g) in subs.iter_mut() {
            for e in g["edges"].as_array_mut().into_iter().flatten() {
                for d in e["destinations"].as_array_mut().into_iter().flatten() {
                    if let Some(up) = d.as_str().and_then(|x| x.strip_prefix("../")) {
                        *d = Value::String(format!("../{}", f(up)));
                    }
                }
            }
        }
    }
    if let Some(ints) = v["interrupts"].as_array_mut() {
        for i in ints {
            i["node"] = ren(&i["node"]);
        }
    }
}

/// A fifth of the cases (30 graphs by default; each is verified twice in full, so it is the
/// slowest of the properties): `STALWART_PROPTEST_CASES` runs more.
#[test]
fn findings_do_not_depend_on_names_or_order() {
    for seed in 0..cases() / 5 {
        let g = gen::random(
            1000 + seed,
            3 + (seed % 5) as usize,
            2 + (seed % 3) as usize,
        );
        let (_d1, a) = common::load_generated(&g);
        let before = summary(a, &|s| s.to_string());
        let mut h = g.clone();
        rename(&mut h.graph, &|s| format!("zz_{s}"));
        for key in ["nodes", "edges", "interrupts"] {
            if let Some(list) = h.graph[key].as_array_mut() {
                list.reverse();
            }
        }
        let (_d2, b) = common::load_generated(&h);
        let after = summary(b, &|s| s.replace("zz_", ""));
        // Cycle subjects name the first model node in declaration order, which reordering may
        // change; compare them by rule only.
        let strip = |s: &BTreeSet<(String, String, String, String, u32, usize)>| {
            s.iter()
                .map(|(r, o, sub, n, d, w)| {
                    if sub.starts_with("cycle:") {
                        (
                            r.clone(),
                            o.clone(),
                            "cycle".to_string(),
                            String::new(),
                            *d,
                            *w,
                        )
                    } else {
                        (r.clone(), o.clone(), sub.clone(), n.clone(), *d, *w)
                    }
                })
                .collect::<BTreeSet<_>>()
        };
        assert_eq!(
            strip(&before),
            strip(&after),
            "seed {seed}: findings changed under renaming and reordering\n{}",
            g.graph
        );
    }
}

#[test]
fn output_is_deterministic() {
    let g = gen::mesh(7, 60, 20, 10, 2);
    let (_d, a) = common::load_generated(&g);
    let (_e, b) = common::load_generated(&g);
    let opts = Options::new(2);
    let mut ra = verify(a, &opts).expect("verify");
    let mut rb = verify(b, &opts).expect("verify");
    // Wall times differ from run to run; everything else must not.
    for r in [&mut ra, &mut rb] {
        r.proof.millis = 0;
        for e in r.engines.iter_mut() {
            e.millis = 0;
        }
    }
    let ja = stalwart::output::json::render(&ra);
    let jb = stalwart::output::json::render(&rb);
    assert_eq!(
        ja.replace(_d.path().to_str().unwrap_or(""), ""),
        jb.replace(_e.path().to_str().unwrap_or(""), "")
    );
    assert!(!ra.findings.is_empty());
}

/// Slicing loses nothing: on generated graphs, every instance searched with the sliced and
/// refined latches finds exactly the violations (tool, node, class, first turn, node steps and
/// witness steps of the shortest witness) that a search keeping every latch finds.
#[test]
fn slicing_changes_no_verdict() {
    use stalwart::engine::{explicit, slice::Slice, Limits};
    let mut compared = 0;
    for seed in 0..cases() / 3 {
        let g = gen::random(
            5000 + seed,
            3 + (seed % 5) as usize,
            2 + (seed % 3) as usize,
        );
        let (_d, inputs) = common::load_generated(&g);
        let m = common::flat_gated(&inputs, &g);
        let results = common::results_of(&m);
        for r in &results {
            let full = Slice::full(&m, r.instance.obligation, r.instance.tool);
            let f = explicit::check_with(&m, r.instance, &full, Limits::default());
            // Shortest: fewest node steps in the turn (SPEC 3.1), then fewest witness steps.
            let key = |v: &stalwart::engine::Violation| {
                let in_turn = v.witness.iter().filter(|s| s.turn == v.turn).count();
                (
                    v.tool,
                    v.node,
                    v.class,
                    v.turn,
                    v.witness.last().map(|s| s.run_steps),
                    in_turn,
                )
            };
            let a: Vec<_> = r.violations.iter().map(key).collect();
            let b: Vec<_> = f.violations.iter().map(key).collect();
            assert_eq!(
                a, b,
                "seed {seed}: {:?} differs between the sliced and the full search\n{}\n{}\ngates: {:?}",
                r.instance, g.graph, g.catalogue, g.gates
            );
            // Depths are not compared: a search keeping more latches can need more turns before
            // its turn-start states stop growing, though the verdict is the same.
            compared += 1;
        }
    }
    assert!(compared > 50, "compared {compared} instances");
}
