//! The benchmark's graph families (issue 3): each builds an export of about `nodes` nodes with a
//! tenth as many tools (at least five) and a twentieth as many order rules, over `session_steps`
//! turns, from a seed.
//!
//! - [`react`]: ReAct agents one after another, each a model looping with its tool node (guarded
//!   and plain in turn), a hand-off to the next agent or the end.
//! - [`super::mesh`]: the multi-agent hand-off mesh.
//! - [`subgraphs`]: a top graph of subgraph nodes, each running a small ReAct subgraph whose tool
//!   node may hand off out of it (`../`), with interrupts before its writes.
//! - [`chain`]: a long chain of steps that call tools directly, under `after` and `at_most`
//!   rules, with a guarded shortcut.
//! - [`wide`]: one model routing by one conditional edge to `nodes` plain tool nodes, each with
//!   a tool of its own (issue 14: the fan-out a hostile export can have).
//! - [`fan`]: the same fan-out with guarded and plain tool nodes in turn, two tools a node, and
//!   the benchmark's mixed catalogue (reads, writes, `reads_outside`, irreversible writes,
//!   compensations, order rules): issue 26's hostile pull request.

use super::{catalogue, Generated, Rng};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn tool(i: usize, tools: usize) -> String {
    format!("tool_{:04}", i % tools.max(1))
}

fn graph(name: &str, nodes: Vec<Value>, edges: Vec<Value>, extra: Value, steps: u32) -> Value {
    let mut g = json!({
        "format": "qls-graph/1", "name": name, "recursion_limit": 25, "session_steps": steps,
        "nodes": nodes, "edges": edges, "sends": [], "interrupts": [], "subgraphs": {},
        "state": {"approved": {"scope": "session"}},
    });
    if let (Value::Object(g), Value::Object(x)) = (&mut g, extra) {
        g.extend(x);
    }
    g
}

/// ReAct agents in sequence: `nodes / 4` agents of a model, a tool node, a step and a router.
pub fn react(seed: u64, nodes: usize, session_steps: u32) -> Generated {
    let mut rng = Rng::new(seed);
    let tools = (nodes / 10).max(5);
    let agents = (nodes / 4).max(1);
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
    ];
    let mut es = vec![json!({"from": "__start__", "kind": "fixed", "destinations": ["r0_model"]})];
    for a in 0..agents {
        let p = format!("r{a}_");
        let bound: Vec<String> = (0..2).map(|_| tool(rng.below(tools), tools)).collect();
        let kind = if a % 3 == 2 { "tools_plain" } else { "tools" };
        let next = if a + 1 < agents {
            format!("r{}_model", a + 1)
        } else {
            "__end__".to_string()
        };
        ns.push(json!({"id": format!("{p}model"), "kind": "model", "agent": format!("agent{}", a / 4), "tools": bound}));
        ns.push(json!({"id": format!("{p}tools"), "kind": kind, "agent": format!("agent{}", a / 4), "tools": bound}));
        ns.push(json!({"id": format!("{p}note"), "kind": "step", "agent": format!("agent{}", a / 4), "sets": ["approved"]}));
        ns.push(json!({"id": format!("{p}route"), "kind": "router", "agent": format!("agent{}", a / 4)}));
        es.push(json!({"from": format!("{p}model"), "kind": "conditional", "destinations": [format!("{p}tools"), format!("{p}note")]}));
        es.push(json!({"from": format!("{p}tools"), "kind": "fixed", "destinations": [format!("{p}model")]}));
        es.push(json!({"from": format!("{p}note"), "kind": "fixed", "destinations": [format!("{p}route")]}));
        es.push(json!({"from": format!("{p}route"), "kind": "conditional", "destinations": [next, "__end__"]}));
    }
    Generated {
        graph: graph("react", ns, es, json!({}), session_steps),
        catalogue: catalogue(&mut rng, tools, (nodes / 20).max(2), &|i| tool(i, tools)),
        gates: BTreeMap::new(),
    }
}

/// A top graph of `nodes / 8` subgraph nodes, each running a small ReAct subgraph.
pub fn subgraphs(seed: u64, nodes: usize, session_steps: u32) -> Generated {
    let mut rng = Rng::new(seed);
    let tools = (nodes / 10).max(5);
    let subs = (nodes / 8).max(1);
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
        json!({"id": "supervisor", "kind": "model"}),
    ];
    let mut es =
        vec![json!({"from": "__start__", "kind": "fixed", "destinations": ["supervisor"]})];
    let mut sup = vec!["__end__".to_string()];
    let mut graphs = serde_json::Map::new();
    let mut interrupts = Vec::new();
    for k in 0..subs {
        let id = format!("team{k}");
        sup.push(id.clone());
        let bound: Vec<String> = (0..2).map(|_| tool(rng.below(tools), tools)).collect();
        let kind = if k % 4 == 3 { "tools_plain" } else { "tools" };
        let out = if k + 1 < subs {
            format!("../team{}", k + 1)
        } else {
            "../__end__".to_string()
        };
        graphs.insert(
            format!("g{k}"),
            json!({"nodes": [{"id": "s", "kind": "start"}, {"id": "model", "kind": "model", "tools": bound},
                {"id": "act", "kind": kind, "tools": bound}, {"id": "check", "kind": "step"}, {"id": "e", "kind": "end"}],
                "edges": [{"from": "s", "kind": "fixed", "destinations": ["model"]},
                    {"from": "model", "kind": "conditional", "destinations": ["act", "check"]},
                    {"from": "act", "kind": "command", "destinations": ["model", out]},
                    {"from": "check", "kind": "conditional", "destinations": ["e", "model"]}]}),
        );
        ns.push(json!({"id": id, "kind": "subgraph", "graph": format!("g{k}"), "agent": format!("team{k}")}));
        es.push(
            json!({"from": format!("team{k}"), "kind": "fixed", "destinations": ["supervisor"]}),
        );
        if k % 2 == 0 {
            interrupts
                .push(json!({"node": format!("team{k}"), "when": "before", "tool": bound[0]}));
        }
    }
    es.push(json!({"from": "supervisor", "kind": "conditional", "destinations": sup}));
    Generated {
        graph: graph(
            "subgraphs",
            ns,
            es,
            json!({"subgraphs": graphs, "interrupts": interrupts}),
            session_steps,
        ),
        catalogue: catalogue(&mut rng, tools, (nodes / 20).max(2), &|i| tool(i, tools)),
        gates: BTreeMap::new(),
    }
}

/// A chain of `nodes` steps, each calling one tool directly, with a guarded shortcut every ten.
pub fn chain(seed: u64, nodes: usize, session_steps: u32) -> Generated {
    let mut rng = Rng::new(seed);
    let tools = (nodes / 10).max(5);
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
    ];
    let mut es = vec![json!({"from": "__start__", "kind": "fixed", "destinations": ["c0"]})];
    for i in 0..nodes {
        let kind = if i % 10 == 9 { "tools" } else { "step" };
        ns.push(json!({"id": format!("c{i}"), "kind": kind, "tools": [tool(i, tools)]}));
        let next = if i + 1 < nodes {
            format!("c{}", i + 1)
        } else {
            "__end__".to_string()
        };
        let mut d = vec![next];
        if i % 10 == 0 && i + 10 < nodes {
            d.push(format!("c{}", i + 10));
        }
        d.push("__end__".to_string());
        d.dedup();
        es.push(json!({"from": format!("c{i}"), "kind": "conditional", "destinations": d}));
    }
    Generated {
        graph: graph("chain", ns, es, json!({}), session_steps),
        catalogue: catalogue(&mut rng, tools, (nodes / 20).max(2), &|i| tool(i, tools)),
        gates: BTreeMap::new(),
    }
}

/// One model node whose conditional edge fans out to `width` `tools_plain` nodes (`t0`,
/// `t1`, ...) and `__end__`, each tool node binding a tool of its own and returning to the model:
/// `width + 3` nodes, `width` tools, `width / 20` (at least two) order rules.
pub fn wide(seed: u64, width: usize, session_steps: u32) -> Generated {
    let mut rng = Rng::new(seed);
    let width = width.max(1);
    let name = |i: usize| format!("tool_{i:05}");
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
        json!({"id": "model", "kind": "model", "tools": (0..width).map(name).collect::<Vec<_>>()}),
    ];
    let mut es = vec![json!({"from": "__start__", "kind": "fixed", "destinations": ["model"]})];
    let mut fan = Vec::with_capacity(width + 1);
    for i in 0..width {
        let id = format!("t{i}");
        ns.push(json!({"id": id, "kind": "tools_plain", "tools": [name(i)]}));
        es.push(json!({"from": id, "kind": "fixed", "destinations": ["model"]}));
        fan.push(id);
    }
    fan.push("__end__".to_string());
    es.push(json!({"from": "model", "kind": "conditional", "destinations": fan}));
    Generated {
        graph: graph("wide", ns, es, json!({}), session_steps),
        catalogue: catalogue(&mut rng, width, (width / 20).max(2), &name),
        gates: BTreeMap::new(),
    }
}

/// One model node whose conditional edge fans out to `width` tool nodes (`f0`, `f1`, ...) and
/// `__end__`, each returning to the model: even nodes guarded (`tools`), odd ones plain
/// (`tools_plain`), node `i` binding tools `2i` and `2i + 1` of `2 width` (reads and writes,
/// some `reads_outside`, irreversible or compensable, `width / 10` order rules, as the other
/// families' catalogues). `width + 3` nodes.
pub fn fan(seed: u64, width: usize, session_steps: u32) -> Generated {
    let mut rng = Rng::new(seed);
    let width = width.max(1);
    let tools = 2 * width;
    let name = |i: usize| format!("tool_{i:05}");
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
        json!({"id": "model", "kind": "model", "tools": (0..tools).map(name).collect::<Vec<_>>()}),
    ];
    let mut es = vec![json!({"from": "__start__", "kind": "fixed", "destinations": ["model"]})];
    let mut out = Vec::with_capacity(width + 1);
    for i in 0..width {
        let id = format!("f{i}");
        let kind = if i % 2 == 0 { "tools" } else { "tools_plain" };
        ns.push(json!({"id": id, "kind": kind, "tools": [name(2 * i), name(2 * i + 1)]}));
        es.push(json!({"from": id, "kind": "fixed", "destinations": ["model"]}));
        out.push(id);
    }
    out.push("__end__".to_string());
    es.push(json!({"from": "model", "kind": "conditional", "destinations": out}));
    Generated {
        graph: graph("fan", ns, es, json!({}), session_steps),
        catalogue: catalogue(&mut rng, tools, (width / 10).max(2), &name),
        gates: BTreeMap::new(),
    }
}
