//! Guard parity (issue 15.3; SPEC 3, 3.1 "Refused calls" and "Declined guarded writes", 12.1):
//! what the verifier assumes of a guarded call is what the Python guard does.
//!
//! Random catalogues (reads, writes, `reads_outside` reads, irreversible writes, `order.after`,
//! `order.not_after` with tools and `untrusted`, `at_most`) and scripted sessions of calls over
//! one to three turns, each call alone in its batch, with the person's answer for every write.
//! The Rust side decides each call as the plain interpreter reads a guarded call (a graph of one
//! guarded `tools` node: `__start__ -> agent -> tools -> agent ... -> __end__`), walking the
//! session step by step on the interpreter's `Run`; the Python driver (`python/tests/guard_parity_driver.py`,
//! the interface is `notes/guard-parity.md`) walks the same sessions through the real guard on a
//! real LangGraph graph. The test asserts, call by call, the same `ran` and the same `asked`.
//!
//! The Python half runs when a Python with langgraph is found (`STALWART_PYTHON`, else
//! `.ci/lgx-venv/bin/python`, else `/work/lgx-venv/bin/python`) and the driver exists; otherwise it
//! is skipped, saying so. The Rust half always runs: every walk is legal on the interpreter, the
//! generated sessions meet every kind of decision, and hand-written sessions pin the reading.
//! `STALWART_GUARD_CASES` sets how many sessions are generated (default 150).

mod common;

use serde_json::{json, Value};
use stalwart::engine::interp::Run;
use stalwart::findings::{Step, StepKind};
use stalwart::gen::Rng;
use stalwart::model::FlatModel;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One scripted call: the tool, and the person's answer if asked (`None` for a read: nobody
/// is asked about a read).
#[derive(Debug, Clone)]
struct Call {
    tool: String,
    answer: Option<bool>,
    /// A plain call (SPEC 3.1 "The guard's view"): the tool invoked outside the guard (the Rust
    /// graph's `tools_plain` node; the driver calls the tool function itself). It runs, nobody is
    /// asked, and the guard never sees it.
    plain: bool,
}

/// One case of the driver's input: a catalogue, a taint policy, turns of calls.
#[derive(Debug, Clone)]
struct Case {
    catalogue: Value,
    refuse_tainted: bool,
    turns: Vec<Vec<Call>>,
}

/// What a call did: it ran; a person was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decision {
    ran: bool,
    asked: bool,
}

fn cases_wanted() -> u64 {
    std::env::var("STALWART_GUARD_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150)
}

/// A random catalogue of 2..=6 tools and a session over it.
fn generate(seed: u64) -> Case {
    let mut rng = Rng::new(seed ^ 0x6a7d_9a71_7e57);
    let n = 2 + rng.below(5);
    let name = |i: usize| format!("t{i}");
    let mut tools = serde_json::Map::new();
    let mut writes = Vec::new();
    for i in 0..n {
        let write = rng.chance(55);
        let mut t = serde_json::Map::new();
        t.insert("kind".into(), json!(if write { "write" } else { "read" }));
        if !write && rng.chance(35) {
            t.insert("reads_outside".into(), json!(true));
        }
        if write && rng.chance(30) {
            t.insert("irreversible".into(), json!(true));
        }
        if write {
            t.insert("idempotency".into(), json!(true));
            t.insert("result".into(), json!({"type": "object"}));
        }
        let other = (i + 1 + rng.below(n - 1)) % n;
        let mut order = serde_json::Map::new();
        if rng.chance(25) {
            order.insert("after".into(), json!([name(other)]));
        }
        if rng.chance(25) {
            let b = if rng.chance(50) {
                "untrusted".to_string()
            } else {
                name((other + 1) % n)
            };
            order.insert("not_after".into(), json!([b]));
        }
        if rng.chance(25) {
            order.insert("at_most".into(), json!(1 + rng.below(2)));
        }
        if !order.is_empty() {
            t.insert("order".into(), Value::Object(order));
        }
        tools.insert(name(i), Value::Object(t));
        writes.push(write);
    }
    let turns = (0..1 + rng.below(3))
        .map(|_| {
            (0..1 + rng.below(6))
                .map(|_| {
                    let i = rng.below(n);
                    Call {
                        tool: name(i),
                        answer: writes[i].then(|| rng.chance(70)),
                        plain: false,
                    }
                })
                .collect()
        })
        .collect();
    Case {
        catalogue: json!({"format": "qls-catalogue/1", "tools": tools}),
        refuse_tainted: rng.chance(20),
        turns,
    }
}

/// `c` with about one call in five made plain (its own random stream, so the sessions
/// [`generate`] makes stay as they were).
fn with_plain_calls(mut c: Case, seed: u64) -> Case {
    let mut rng = Rng::new(seed ^ 0x0091_a14c_a115);
    for call in c.turns.iter_mut().flatten() {
        call.plain = rng.chance(20);
    }
    c
}

/// The case as the driver reads it (`notes/guard-parity.md`).
fn case_json(c: &Case) -> Value {
    let turns: Vec<Value> = c
        .turns
        .iter()
        .map(|t| {
            Value::Array(
                t.iter()
                    .map(|call| {
                        let mut o = json!({"tool": call.tool, "answer": call.answer.map(|a| if a { "yes" } else { "no" })});
                        if call.plain {
                            o["plain"] = json!(true);
                        }
                        o
                    })
                    .collect(),
            )
        })
        .collect();
    json!({
        "catalogue": c.catalogue,
        "taint_policy": if c.refuse_tainted { "refuse" } else { "confirm" },
        "turns": turns,
    })
}

/// The one-guarded-node graph of `c` (SPEC 2.2), flattened.
fn model_of(c: &Case, dir: &Path) -> FlatModel {
    let tools: Vec<String> = c.catalogue["tools"]
        .as_object()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let longest = c.turns.iter().map(Vec::len).max().unwrap_or(0);
    let graph = json!({
        "format": "qls-graph/1", "name": "guarded", "session_steps": c.turns.len(),
        "recursion_limit": 2 * longest + 2, "budget": {"steps": 100},
        "nodes": [
            {"id": "__start__", "kind": "start"},
            {"id": "agent", "kind": "model", "tools": tools},
            {"id": "tools", "kind": "tools", "tools": tools},
            {"id": "plain", "kind": "tools_plain", "tools": tools},
            {"id": "__end__", "kind": "end"}
        ],
        "edges": [
            {"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
            {"from": "agent", "kind": "conditional", "destinations": ["tools", "plain", "__end__"]},
            {"from": "tools", "kind": "fixed", "destinations": ["agent"]},
            {"from": "plain", "kind": "fixed", "destinations": ["agent"]}
        ]
    });
    let gp = dir.join("graph.json");
    let cp = dir.join("catalogue.json");
    std::fs::write(&gp, graph.to_string()).expect("write the graph");
    std::fs::write(&cp, c.catalogue.to_string()).expect("write the catalogue");
    let inputs = stalwart::input::load_export(&gp, &cp)
        .unwrap_or_else(|e| panic!("the generated case is refused: {e}\n{}", c.catalogue));
    common::flat(&inputs)
}

fn step(kind: StepKind, node: &str, turn: u32) -> Step {
    Step::new(kind, node, turn)
}

fn choose(from: &str, to: &str, turn: u32) -> Step {
    let mut s = step(StepKind::Choose, from, turn);
    s.to = Some(to.to_string());
    s
}

/// Each call of `c` decided as the interpreter reads a guarded call (SPEC 3, 12.1), the session
/// walked on the interpreter step by step. A call runs when the tool check (order rules over the
/// session's history) allows it and, for a write, the person says yes; under `taint_policy:
/// refuse` a write after content from outside is refused unasked (the model lets the tool check
/// refuse a tainted write: SPEC 3). Panics when the interpreter refuses a step of the walk.
fn decide(m: &FlatModel, c: &Case) -> Vec<Decision> {
    let mut run = Run::new(m);
    let mut out = Vec::new();
    let take = |run: &mut Run, s: Step| {
        if let Err(e) = run.take(&s) {
            panic!("the interpreter refuses {s:?}: {e}\n{}", c.catalogue);
        }
    };
    for (k, calls) in c.turns.iter().enumerate() {
        let turn = k as u32 + 1;
        take(&mut run, step(StepKind::Enter, "__start__", turn));
        take(&mut run, choose("__start__", "agent", turn));
        take(&mut run, step(StepKind::Enter, "agent", turn));
        for call in calls {
            if call.plain {
                // Outside the guard: it runs, unasked, and changes what the guard never sees.
                take(&mut run, choose("agent", "plain", turn));
                take(&mut run, step(StepKind::Enter, "plain", turn));
                let mut s = step(StepKind::Call, "plain", turn);
                s.tool = Some(call.tool.clone());
                s.guarded = Some(false);
                take(&mut run, s);
                take(&mut run, choose("plain", "agent", turn));
                take(&mut run, step(StepKind::Enter, "agent", turn));
                out.push(Decision {
                    ran: true,
                    asked: false,
                });
                continue;
            }
            take(&mut run, choose("agent", "tools", turn));
            take(&mut run, step(StepKind::Enter, "tools", turn));
            let u = m.tool_ix(&call.tool).expect("a tool of the catalogue");
            let o = run.call_outcomes(u);
            // The guard refuses on the taint it saw (SPEC 3.1 "The guard's view").
            let tainted = run.latches().tainted_seen;
            let refused_unasked = c.refuse_tainted && m.tools[u].is_write() && tainted;
            let asked = o.asks && !refused_unasked;
            let ran = o.may_run && !refused_unasked && (!asked || call.answer == Some(true));
            assert!(
                (ran && o.may_run) || (!ran && o.may_refuse),
                "the decision is one SPEC 3 allows"
            );
            let mut s = step(StepKind::Call, "tools", turn);
            s.tool = Some(call.tool.clone());
            s.guarded = Some(true);
            s.refused = !ran;
            take(&mut run, s);
            take(&mut run, choose("tools", "agent", turn));
            take(&mut run, step(StepKind::Enter, "agent", turn));
            out.push(Decision { ran, asked });
        }
        take(&mut run, choose("agent", "__end__", turn));
        if k + 1 < c.turns.len() {
            take(&mut run, step(StepKind::TurnEnd, "__end__", turn));
        }
    }
    out
}

/// Decisions of a hand-written case: `tools` as (name, catalogue entry), turns of (tool, answer).
fn pinned(tools: &[(&str, Value)], turns: &[&[(&str, Option<bool>)]], refuse: bool) -> Vec<bool> {
    let c = Case {
        catalogue: json!({"format": "qls-catalogue/1", "tools": tools.iter().cloned().map(|(k, v)| (k.to_string(), v)).collect::<serde_json::Map<_, _>>()}),
        refuse_tainted: refuse,
        turns: turns
            .iter()
            .map(|t| {
                t.iter()
                    .map(|&(tool, answer)| Call {
                        tool: tool.to_string(),
                        answer,
                        plain: false,
                    })
                    .collect()
            })
            .collect(),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let m = model_of(&c, dir.path());
    decide(&m, &c).iter().map(|d| d.ran).collect()
}

#[test]
fn the_interpreters_reading_of_a_guarded_call() {
    let read = json!({"kind": "read"});
    let write = |order: Value| json!({"kind": "write", "order": order});
    // `after`: refused until get_order ran; a write the person declines runs nothing, so the
    // next refund is still the first (at_most 1).
    assert_eq!(
        pinned(
            &[
                ("get_order", read.clone()),
                (
                    "refund",
                    write(json!({"after": ["get_order"], "at_most": 1}))
                ),
            ],
            &[&[
                ("refund", Some(true)),
                ("get_order", None),
                ("refund", Some(false)),
                ("refund", Some(true)),
                ("refund", Some(true)),
            ]],
            false,
        ),
        [false, true, false, true, false]
    );
    // `not_after: [untrusted]`, over two turns: the taint of turn 1 is the session's.
    assert_eq!(
        pinned(
            &[
                ("read_inbox", json!({"kind": "read", "reads_outside": true})),
                ("pay", write(json!({"not_after": ["untrusted"]}))),
                ("note", write(json!({}))),
            ],
            &[
                &[("pay", Some(true)), ("read_inbox", None)],
                &[("pay", Some(true)), ("note", Some(true))],
            ],
            false,
        ),
        [true, true, false, true]
    );
    // `taint_policy: refuse`: a write after outside content is refused whatever the person says.
    assert_eq!(
        pinned(
            &[
                ("read_inbox", json!({"kind": "read", "reads_outside": true})),
                ("note", write(json!({}))),
            ],
            &[&[
                ("note", Some(true)),
                ("read_inbox", None),
                ("note", Some(true))
            ]],
            true,
        ),
        [true, true, false]
    );
}

/// A Python with langgraph, and the driver: `None` (having said why) when either is missing.
fn python_and_driver() -> Option<(String, PathBuf)> {
    let root = common::root();
    let driver = root.join("python/tests/guard_parity_driver.py");
    if !driver.is_file() {
        common::skip(
            "skipped the Python half of guard parity: python/tests/guard_parity_driver.py is not here",
        );
        return None;
    }
    let candidates: Vec<String> = std::env::var("STALWART_PYTHON")
        .ok()
        .into_iter()
        .chain([
            root.join(".ci/lgx-venv/bin/python").display().to_string(),
            "/work/lgx-venv/bin/python".to_string(),
        ])
        .collect();
    for py in candidates {
        let ok = Command::new(&py)
            .args(["-c", "import langgraph, langchain"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some((py, driver));
        }
    }
    common::skip(
        "skipped the Python half of guard parity: no Python with langgraph (set STALWART_PYTHON, or make .ci/lgx-venv)",
    );
    None
}

#[test]
fn the_guard_runs_and_refuses_what_the_interpreter_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: Vec<Case> = (0..cases_wanted())
        .map(|s| with_plain_calls(generate(s), s))
        .collect();
    let mut rust: Vec<Vec<Decision>> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let sub = dir.path().join(format!("case{i}"));
        std::fs::create_dir_all(&sub).expect("mkdir");
        let m = model_of(c, &sub);
        rust.push(decide(&m, c));
    }
    // The generated sessions meet every kind of decision: runs, refused by an order rule (not
    // asked), declined by the person (asked), and a tainted write under each policy.
    let all: Vec<(&Case, &Decision)> = cases
        .iter()
        .zip(&rust)
        .flat_map(|(c, d)| d.iter().map(move |x| (c, x)))
        .collect();
    let ran = all.iter().filter(|(_, d)| d.ran).count();
    let refused_unasked = all.iter().filter(|(_, d)| !d.ran && !d.asked).count();
    let declined = all.iter().filter(|(_, d)| !d.ran && d.asked).count();
    let refuse_policy = all.iter().filter(|(c, _)| c.refuse_tainted).count();
    let plain = cases
        .iter()
        .flat_map(|c| c.turns.iter().flatten())
        .filter(|x| x.plain)
        .count();
    assert!(plain > 20, "the generator should make plain calls: {plain}");
    assert!(
        ran > 50 && refused_unasked > 20 && declined > 20 && refuse_policy > 10,
        "the generator should give every kind of decision: {ran} ran, {refused_unasked} refused, {declined} declined, {refuse_policy} under refuse"
    );

    let Some((py, driver)) = python_and_driver() else {
        return;
    };
    let input = dir.path().join("cases.json");
    let doc = json!({"cases": cases.iter().map(case_json).collect::<Vec<_>>()});
    std::fs::write(&input, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
    let out = Command::new(&py)
        .arg(&driver)
        .arg(&input)
        .env("PYTHONPATH", common::root().join("python"))
        .output()
        .expect("run the driver");
    assert!(
        out.status.success(),
        "the driver failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the driver's output is not JSON: {e}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let results = v["results"].as_array().expect("`results` is a list");
    assert_eq!(results.len(), cases.len(), "one result list per case");
    let mut compared = 0;
    for (i, (c, mine)) in cases.iter().zip(&rust).enumerate() {
        let theirs: Vec<Decision> = results[i]
            .as_array()
            .unwrap_or_else(|| panic!("case {i}: not a list of decisions"))
            .iter()
            .map(|d| Decision {
                ran: d["ran"]
                    .as_bool()
                    .unwrap_or_else(|| panic!("case {i}: no `ran` in {d}")),
                asked: d["asked"]
                    .as_bool()
                    .unwrap_or_else(|| panic!("case {i}: no `asked` in {d}")),
            })
            .collect();
        assert_eq!(
            theirs.len(),
            mine.len(),
            "case {i}: one decision per call\n{}",
            case_json(c)
        );
        for (k, (t, r)) in theirs.iter().zip(mine).enumerate() {
            assert_eq!(
                t,
                r,
                "case {i}, call {k} ({:?}): the guard decides {t:?}, the interpreter {r:?}; the guard's reason: {}\n{}",
                c.turns.iter().flatten().nth(k).map(|x| &x.tool),
                results[i][k]["reason"],
                serde_json::to_string_pretty(&case_json(c)).unwrap_or_default()
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "compared {compared} calls");
}
