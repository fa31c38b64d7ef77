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
//!
//! Issue 27's shapes are in the sessions too (`Call`'s `ids`, `fails`, `branches`): a message whose
//! calls share an id or have an empty or missing id (refused whole: on this side no call is
//! made), a call whose tool fails after its effect and is retried by the node's retry policy
//! (each attempt a call; a retry of a write or limited tool refused unasked), and copies of a call
//! fanned out by `Send` to branches calling `guard.call` (one serialised history: sequential
//! calls here).

use crate::common;

use serde_json::{json, Value};
use stalwart::engine::interp::Run;
use stalwart::gen::Rng;
use stalwart::model::FlatModel;
use stalwart::{Step, StepKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One scripted call: the tool, and the person's answer if asked (`None` for a read: nobody
/// is asked about a read); and its shape (issue 27, `notes/guard-parity.md`): `ids`, the model's
/// message gives its calls a shared, empty or missing id (refused whole: nothing runs, nobody is
/// asked); `fails`, the tool fails after its effect that many times and the node's retry policy
/// runs it again (each attempt a call); `branches`, that many copies fanned out by `Send`
/// (decided over one serialised history: sequential calls).
#[derive(Debug, Clone, Default)]
struct Call {
    tool: String,
    answer: Option<bool>,
    ids: Option<&'static str>,
    fails: usize,
    branches: usize,
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
    let mut at_most_one = Vec::new();
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
        let mut limit = None;
        if rng.chance(25) {
            limit = Some(1 + rng.below(2));
            order.insert("at_most".into(), json!(limit));
        }
        at_most_one.push(limit == Some(1));
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
                    let mut call = Call {
                        tool: name(i),
                        answer: writes[i].then(|| rng.chance(70)),
                        ..Call::default()
                    };
                    // the shapes of issue 27: a retry only of a call the guard keeps attempts of (a
                    // write, or a read the first attempt brings to its limit), a fan-out only of reads
                    match rng.below(12) {
                        0 => call.ids = Some(["shared", "empty", "missing"][rng.below(3)]),
                        1 if writes[i] || at_most_one[i] => call.fails = 1 + rng.below(2),
                        2 if !writes[i] => call.branches = 2 + rng.below(2),
                        _ => {}
                    }
                    call
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

/// The case as the driver reads it (`notes/guard-parity.md`).
/// `c` with about one call in five made plain (its own random stream, so the sessions
/// [`generate`] makes stay as they were); a call given an id, retry or fan-out shape stays guarded.
fn with_plain_calls(mut c: Case, seed: u64) -> Case {
    let mut rng = Rng::new(seed ^ 0x0091_a14c_a115);
    for call in c.turns.iter_mut().flatten() {
        let p = rng.chance(20);
        call.plain = p && call.ids.is_none() && call.fails == 0 && call.branches == 0;
    }
    c
}

fn case_json(c: &Case) -> Value {
    let turns: Vec<Value> = c
        .turns
        .iter()
        .map(|t| {
            Value::Array(
                t.iter()
                    .map(|call| {
                        let mut v = json!({"tool": call.tool, "answer": call.answer.map(|a| if a { "yes" } else { "no" })});
                        if let Some(ids) = call.ids {
                            v["ids"] = json!(ids);
                        }
                        if call.fails > 0 {
                            v["fails"] = json!(call.fails);
                        }
                        if call.branches > 0 {
                            v["branches"] = json!(call.branches);
                        }
                        if call.plain {
                            v["plain"] = json!(true);
                        }
                        v
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
    let longest = c
        .turns
        .iter()
        .map(|t| t.iter().map(|x| x.branches.max(1) + x.fails).sum::<usize>())
        .max()
        .unwrap_or(0);
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
/// refuse a tainted write: SPEC 3). The shapes of issue 27 map so: a message with bad ids makes
/// no call (nothing runs, nobody is asked); each attempt of a retried call is a call, a retry of a
/// call the guard keeps attempts of (a write, a tool with `at_most`) refused unasked; the copies
/// of a fan-out are sequential calls. Panics when the interpreter refuses a step of the walk.
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
            if call.ids.is_some() {
                out.push(Decision {
                    ran: false,
                    asked: false,
                });
                continue;
            }
            let entry = &c.catalogue["tools"][&call.tool];
            let kept = entry["kind"] == "write" || !entry["order"]["at_most"].is_null();
            for _ in 0..call.branches.max(1) {
                let mut d = visit(m, c, &mut run, call, turn, false, &take);
                out.push(d);
                for _ in 0..call.fails {
                    if !d.ran {
                        break;
                    }
                    d = visit(m, c, &mut run, call, turn, kept, &take);
                    out.push(d);
                }
            }
        }
        take(&mut run, choose("agent", "__end__", turn));
        if k + 1 < c.turns.len() {
            take(&mut run, step(StepKind::TurnEnd, "__end__", turn));
        }
    }
    out
}

/// One visit of `tools` making `call` (from `agent`, back to it), decided as `decide` says;
/// `retry`: the call is a retry the guard refuses unasked (a refusal the interpreter must allow).
fn visit(
    m: &FlatModel,
    c: &Case,
    run: &mut Run,
    call: &Call,
    turn: u32,
    retry: bool,
    take: &dyn Fn(&mut Run, Step),
) -> Decision {
    take(run, choose("agent", "tools", turn));
    take(run, step(StepKind::Enter, "tools", turn));
    let u = m.tool_ix(&call.tool).expect("a tool of the catalogue");
    let o = run.call_outcomes(u);
    // The guard refuses on the taint it saw (SPEC 3.1 "The guard's view").
    let tainted = run.latches().tainted_seen;
    let refused_unasked = retry || (c.refuse_tainted && m.tools[u].is_write() && tainted);
    let asked = o.asks && !refused_unasked;
    let ran = o.may_run && !refused_unasked && (!asked || call.answer == Some(true));
    assert!(
        (ran && o.may_run) || (!ran && o.may_refuse),
        "the decision is one SPEC 3 allows ({call:?})"
    );
    let mut s = step(StepKind::Call, "tools", turn);
    s.tool = Some(call.tool.clone());
    s.guarded = Some(true);
    s.refused = !ran;
    take(run, s);
    take(run, choose("tools", "agent", turn));
    take(run, step(StepKind::Enter, "agent", turn));
    Decision { ran, asked }
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
                        ..Call::default()
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

#[test]
fn the_interpreters_reading_of_ids_retries_and_fan_outs() {
    let shaped = |tools: &[(&str, Value)], turns: Vec<Call>| {
        let c = Case {
            catalogue: json!({"format": "qls-catalogue/1", "tools": tools.iter().cloned().map(|(k, v)| (k.to_string(), v)).collect::<serde_json::Map<_, _>>()}),
            refuse_tainted: false,
            turns: vec![turns],
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let m = model_of(&c, dir.path());
        decide(&m, &c)
            .iter()
            .map(|d| (d.ran, d.asked))
            .collect::<Vec<_>>()
    };
    let call = |tool: &str, answer: Option<bool>| Call {
        tool: tool.to_string(),
        answer,
        ..Call::default()
    };
    let search = ("search", json!({"kind": "read", "order": {"at_most": 2}}));
    let pay = ("pay", json!({"kind": "write", "order": {"at_most": 1}}));
    // three branches of `search` (at_most 2): sequential, the third refused; then a message with
    // bad ids makes no call, so the next `pay` is still the first
    assert_eq!(
        shaped(
            &[search.clone(), pay.clone()],
            vec![
                Call {
                    branches: 3,
                    ..call("search", None)
                },
                Call {
                    ids: Some("shared"),
                    ..call("pay", Some(true))
                },
                Call {
                    fails: 2,
                    ..call("pay", Some(true))
                },
                call("pay", Some(true)),
            ]
        ),
        [
            (true, false),
            (true, false),
            (false, false),
            (false, false),
            (true, true),
            (false, false),
            (false, false)
        ]
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
    assert!(
        ran > 50 && refused_unasked > 20 && declined > 20 && refuse_policy > 10,
        "the generator should give every kind of decision: {ran} ran, {refused_unasked} refused, {declined} declined, {refuse_policy} under refuse"
    );

    // ... and every shape of issue 27: bad ids, retries that run and are refused, fan-outs.
    let calls: Vec<&Call> = cases
        .iter()
        .flat_map(|c| c.turns.iter().flatten())
        .collect();
    let ids = calls.iter().filter(|x| x.ids.is_some()).count();
    let retried = calls.iter().filter(|x| x.fails > 0).count();
    let fanned = calls.iter().filter(|x| x.branches > 0).count();
    let plain = calls.iter().filter(|x| x.plain).count();
    assert!(
        ids > 10 && retried > 10 && fanned > 10 && plain > 20,
        "the generator should give every shape: {ids} with bad ids, {retried} retried, {fanned} fanned out, {plain} plain"
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
                "case {i}, decision {k} (the calls' attempts and branches in order): the guard decides {t:?}, the interpreter {r:?}; the guard's reason: {}\n{}",
                results[i][k]["reason"],
                serde_json::to_string_pretty(&case_json(c)).unwrap_or_default()
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "compared {compared} calls");
    eprintln!(
        "guard parity: {} cases, {compared} decisions compared ({ids} calls with bad ids, {retried} retried, {fanned} fanned out)",
        cases.len()
    );
}
