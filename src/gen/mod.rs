//! Generated inputs for benchmarks and property tests: `qls-graph/1` exports and catalogues as
//! JSON text, from a seed, so a run is repeatable. Not used by `stalwart verify` itself.
//!
//! [`mesh`] builds the benchmark family of SPEC/issue 2: agents of ten nodes each (a model, a
//! guarded and a plain tool node, steps setting and reading a flag, a router), handing off along a
//! binary tree of agents and back to the first, with a catalogue of reads, writes, `reads_outside` tools, compensations and order
//! rules. [`random`] builds small random graphs for property tests.

pub mod families;

use crate::model::{FlatModel, RuleGate};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A tiny deterministic generator (xorshift64*), so generated inputs are repeatable.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u64) -> bool {
        self.next_u64() % 100 < p
    }
}

/// A generated export and catalogue, as JSON values.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The `qls-graph/1` export.
    pub graph: Value,
    /// The `qls-catalogue/1` catalogue.
    pub catalogue: Value,
    /// Rulebook gates (SPEC 3 `fact[f]`), by tool name: the gate's sets of tool names. Neither
    /// file carries them: [`Generated::set_gates`] puts them on the flattened model.
    pub gates: BTreeMap<String, Vec<Vec<String>>>,
}

impl Generated {
    /// Sets [`Generated::gates`] on `m`, flattened from this input (SPEC 3: a guarded call of a
    /// gated tool runs only when every tool of some set has run).
    pub fn set_gates(&self, m: &mut FlatModel) {
        for (tool, sets) in &self.gates {
            let Some(u) = m.tool_ix(tool) else { continue };
            let mut any_of: Vec<Vec<usize>> = sets
                .iter()
                .map(|set| {
                    let mut s: Vec<usize> = set.iter().filter_map(|t| m.tool_ix(t)).collect();
                    s.sort_unstable();
                    s.dedup();
                    s
                })
                .collect();
            any_of.sort();
            any_of.dedup();
            m.gates[u] = Some(RuleGate { any_of });
        }
    }
}

pub(crate) fn catalogue(
    rng: &mut Rng,
    tools: usize,
    order_rules: usize,
    name: &dyn Fn(usize) -> String,
) -> Value {
    let mut map = serde_json::Map::new();
    for i in 0..tools {
        let mut t = serde_json::Map::new();
        let write = i % 3 != 0;
        t.insert("kind".into(), json!(if write { "write" } else { "read" }));
        if !write && i % 6 == 0 {
            t.insert("reads_outside".into(), json!(true));
        }
        if write && i % 5 == 1 {
            t.insert("irreversible".into(), json!(true));
        }
        if write && i % 5 == 2 && i + 1 < tools {
            t.insert("compensation".into(), json!(name(i + 1)));
        }
        if write {
            t.insert("idempotency".into(), json!(true));
            t.insert("result".into(), json!({"type": "object"}));
        }
        map.insert(name(i), Value::Object(t));
    }
    for r in 0..order_rules.min(tools) {
        let i = (r * 2 + 1) % tools;
        let j = rng.below(tools);
        let rule = match r % 3 {
            0 => json!({"after": [name(j)]}),
            1 => json!({"not_after": [if r % 2 == 0 { name(j) } else { "untrusted".to_string() }]}),
            _ => json!({"at_most": 1 + rng.below(2)}),
        };
        if let Some(Value::Object(t)) = map.get_mut(&name(i)) {
            t.insert("order".into(), rule);
        }
    }
    json!({"format": "qls-catalogue/1", "tools": map})
}

/// The benchmark's multi-agent mesh: `nodes` nodes (rounded to agents of ten), `tools` tools,
/// `order_rules` order rules, searched over `session_steps` turns.
pub fn mesh(
    seed: u64,
    nodes: usize,
    tools: usize,
    order_rules: usize,
    session_steps: u32,
) -> Generated {
    let mut rng = Rng::new(seed);
    let agents = (nodes / 10).max(1);
    let tool = |i: usize| format!("tool_{:04}", i % tools.max(1));
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
    ];
    let mut es = vec![json!({"from": "__start__", "kind": "fixed", "destinations": ["a0_router"]})];
    for a in 0..agents {
        let p = format!("a{a}_");
        let bound: Vec<String> = (0..3).map(|_| tool(rng.below(tools.max(1)))).collect();
        let plain: Vec<String> = (0..2).map(|_| tool(rng.below(tools.max(1)))).collect();
        let stepped = vec![tool(rng.below(tools.max(1)))];
        let agent = format!("agent{a}");
        let mut all = bound.clone();
        all.extend(plain.clone());
        ns.push(json!({"id": format!("{p}router"), "kind": "router", "agent": agent}));
        ns.push(json!({"id": format!("{p}model"), "kind": "model", "agent": agent, "tools": all}));
        ns.push(
            json!({"id": format!("{p}tools"), "kind": "tools", "agent": agent, "tools": bound}),
        );
        ns.push(json!({"id": format!("{p}plain"), "kind": "tools_plain", "agent": agent, "tools": plain}));
        ns.push(json!({"id": format!("{p}approve"), "kind": "step", "agent": agent, "sets": ["approved"]}));
        ns.push(json!({"id": format!("{p}gate"), "kind": "step", "agent": agent, "clears": ["approved"]}));
        ns.push(
            json!({"id": format!("{p}worker"), "kind": "step", "agent": agent, "tools": stepped}),
        );
        for k in 0..3 {
            ns.push(json!({"id": format!("{p}s{k}"), "kind": "step", "agent": agent}));
        }
        // Hand-offs to agents 2a+1 and 2a+2 (a binary tree over the agents, so every agent is a
        // few hand-offs from the entry and within the recursion limit) and back to agent 0.
        let hand = |b: usize| {
            if b < agents {
                format!("a{b}_router")
            } else {
                "__end__".to_string()
            }
        };
        let (left, right) = (hand(2 * a + 1), hand(2 * a + 2));
        es.push(json!({"from": format!("{p}router"), "kind": "conditional", "destinations": [format!("{p}model"), format!("{p}tools"), "__end__"]}));
        es.push(json!({"from": format!("{p}model"), "kind": "conditional",
            "destinations": [format!("{p}tools"), format!("{p}approve"), format!("{p}s0"), left, right, "a0_router", "__end__"]}));
        es.push(json!({"from": format!("{p}tools"), "kind": "fixed", "destinations": [format!("{p}model")]}));
        es.push(json!({"from": format!("{p}approve"), "kind": "fixed", "destinations": [format!("{p}gate")]}));
        es.push(json!({"from": format!("{p}gate"), "kind": "stalwart_edge", "destinations": [format!("{p}plain")], "guard": "approved"}));
        es.push(json!({"from": format!("{p}gate"), "kind": "fixed", "destinations": [format!("{p}model")]}));
        es.push(json!({"from": format!("{p}plain"), "kind": "fixed", "destinations": [format!("{p}model")]}));
        es.push(
            json!({"from": format!("{p}s0"), "kind": "fixed", "destinations": [format!("{p}s1")]}),
        );
        es.push(
            json!({"from": format!("{p}s1"), "kind": "fixed", "destinations": [format!("{p}s2")]}),
        );
        es.push(json!({"from": format!("{p}s2"), "kind": "conditional", "destinations": [format!("{p}worker"), format!("{p}model")]}));
        es.push(json!({"from": format!("{p}worker"), "kind": "fixed", "destinations": [format!("{p}model")]}));
    }
    let graph = json!({
        "format": "qls-graph/1", "name": "mesh", "recursion_limit": 25, "session_steps": session_steps,
        "state": {"approved": {"scope": "turn"}},
        "nodes": ns, "edges": es, "sends": [], "interrupts": [], "subgraphs": {}
    });
    Generated {
        graph,
        catalogue: catalogue(&mut rng, tools, order_rules, &|i| format!("tool_{i:04}")),
        gates: BTreeMap::new(),
    }
}

/// A small random graph for property tests: a start, `n` nodes of random kinds with random edges
/// (some guarded, some with `exit_after`), interrupts, and now and then a subgraph node (with a
/// `../` hand-off out), a remote agent and a Send, over `t` tools with order rules and, for about
/// a third of them, a rulebook gate ([`Generated::gates`]); and now and then per-call reviews,
/// `input.reads_outside` and flags on the top end and the subgraph node (SPEC 3.1, 12).
pub fn random(seed: u64, n: usize, t: usize) -> Generated {
    let mut rng = Rng::new(seed);
    let kinds = ["model", "tools", "tools_plain", "step", "router"];
    let tool = |i: usize| format!("t{i}");
    let mut ns = vec![
        json!({"id": "__start__", "kind": "start"}),
        json!({"id": "__end__", "kind": "end"}),
    ];
    let id = |i: usize| format!("n{i}");
    for i in 0..n {
        let kind = kinds[rng.below(kinds.len())];
        let mut node = json!({"id": id(i), "kind": kind, "agent": format!("g{}", i % 2)});
        if kind != "router" {
            let k = 1 + rng.below(2);
            let tl: Vec<String> = (0..k).map(|_| tool(rng.below(t))).collect();
            node["tools"] = json!(tl);
        }
        if rng.chance(20) {
            node["sets"] = json!(["f"]);
        }
        if rng.chance(10) {
            node["clears"] = json!(["f"]);
        }
        ns.push(node);
    }
    let mut es = vec![json!({"from": "__start__", "kind": "fixed", "destinations": [id(0)]})];
    for i in 0..n {
        let k = 1 + rng.below(3);
        let mut ds: Vec<String> = (0..k).map(|_| id(rng.below(n))).collect();
        if rng.chance(40) {
            ds.push("__end__".into());
        }
        ds.sort();
        ds.dedup();
        let kind = if rng.chance(20) {
            "command"
        } else {
            "conditional"
        };
        let mut e = json!({"from": id(i), "kind": kind, "destinations": ds});
        if rng.chance(5) {
            e["destinations"] = Value::Null;
        }
        if rng.chance(15) {
            e["guard"] = json!(if rng.chance(50) { "f" } else { "!f" });
        }
        if rng.chance(10) {
            e["exit_after"] = json!(1 + rng.below(2));
        }
        es.push(e);
    }
    let mut ints = Vec::new();
    for _ in 0..rng.below(3) {
        let when = ["before", "after", "inside"][rng.below(3)];
        let mut it = json!({"node": id(rng.below(n)), "when": when, "tool": tool(rng.below(t))});
        if when == "inside" && rng.chance(50) {
            it["answer"] = json!("f");
        }
        ints.push(it);
    }
    // Sometimes a subgraph node (whose inside calls a tool plainly and may hand off out with
    // `../`), a remote agent, and a Send fan-out.
    let mut subgraphs = serde_json::Map::new();
    if rng.chance(40) {
        let back = id(rng.below(n));
        let inner_tool = tool(rng.below(t));
        let mut inner_edges = vec![
            json!({"from": "s", "kind": "fixed", "destinations": ["w"]}),
            json!({"from": "w", "kind": "conditional", "destinations": ["e"]}),
        ];
        if rng.chance(50) {
            inner_edges[1] = json!({"from": "w", "kind": "conditional", "destinations": ["e", format!("../{back}")]});
        }
        subgraphs.insert(
            "sub".into(),
            json!({"nodes": [{"id": "s", "kind": "start"}, {"id": "w", "kind": "tools_plain", "tools": [inner_tool]},
                {"id": "e", "kind": "end"}], "edges": inner_edges}),
        );
        ns.push(json!({"id": "kb", "kind": "subgraph", "graph": "sub"}));
        es.push(json!({"from": "kb", "kind": "fixed", "destinations": [id(rng.below(n))]}));
        es.push(json!({"from": id(rng.below(n)), "kind": "conditional", "destinations": ["kb"]}));
    }
    if rng.chance(30) {
        ns.push(json!({"id": "partner", "kind": "remote", "agent": "partner", "channel": "link"}));
        es.push(json!({"from": "partner", "kind": "fixed", "destinations": [id(rng.below(n))]}));
        es.push(
            json!({"from": id(rng.below(n)), "kind": "conditional", "destinations": ["partner"]}),
        );
    }
    let mut sends = Vec::new();
    if rng.chance(30) {
        sends.push(json!({"from": id(rng.below(n)), "destinations": [id(rng.below(n))]}));
    }
    let mut graph = json!({
        "format": "qls-graph/1", "name": "random", "recursion_limit": 6 + rng.below(6), "session_steps": 1 + rng.below(2),
        "state": {"f": {"scope": if rng.chance(50) { "session" } else { "turn" }}},
        "nodes": ns, "edges": es, "interrupts": ints, "sends": sends, "subgraphs": subgraphs
    });
    add_reviews_and_input(seed, &mut graph, t);
    let mut cat = catalogue(&mut rng, t, t / 2, &|i| format!("t{i}"));
    if let Some(Value::Object(tools)) = cat.get_mut("tools") {
        for (_, v) in tools.iter_mut() {
            if rng.chance(30) {
                v["reads_outside"] = json!(true);
            }
            // QG019's and QG021's words (O9, O10).
            if rng.chance(20) {
                v["confidential"] = json!(true);
            }
            if rng.chance(25) {
                v["sends_out"] = json!(true);
            }
            if rng.chance(20) {
                v["store"] = json!({"name": "memory", "access": "write"});
            }
        }
    }
    if let Some(c) = cat.as_object_mut() {
        c.insert(
            "stores".into(),
            json!({"memory": {"persistent": true, "multi_tenant": false}}),
        );
    }
    Generated {
        graph,
        catalogue: cat,
        gates: random_gates(seed, t),
    }
}

/// SPEC 12's words and SPEC 3.1's flag readings on a [`random`] graph, from their own generator
/// (so a seed's graph is otherwise the one it always was): now and then `call` reviews (SPEC
/// 12.2) of a tool a node calls (guarded, plain or step; once in a while of a tool it does not),
/// `input.reads_outside` (SPEC 2.2), and `sets`/`clears` on the top `end` and on the subgraph
/// node (which apply as the turn ends, and on leaving the subgraph's inner end).
fn add_reviews_and_input(seed: u64, graph: &mut Value, t: usize) {
    let mut rng = Rng::new(seed ^ 0x0015_ca11_5eed_1215);
    let callers: Vec<(String, Vec<String>)> = graph["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| matches!(n["kind"].as_str(), Some("tools" | "tools_plain" | "step")))
        .filter_map(|n| {
            let tools: Vec<String> = n["tools"]
                .as_array()?
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect();
            Some((n["id"].as_str()?.to_string(), tools))
        })
        .filter(|(_, tools)| !tools.is_empty())
        .collect();
    if !callers.is_empty() && rng.chance(55) {
        for _ in 0..1 + rng.below(2) {
            let (node, tools) = &callers[rng.below(callers.len())];
            let tool = if rng.chance(90) {
                tools[rng.below(tools.len())].clone()
            } else {
                format!("t{}", rng.below(t))
            };
            if let Some(ints) = graph["interrupts"].as_array_mut() {
                ints.push(json!({"node": node, "when": "call", "tool": tool}));
            }
        }
    }
    if rng.chance(20) {
        graph["input"] = json!({"reads_outside": true});
    }
    let flag = |rng: &mut Rng| if rng.chance(50) { "sets" } else { "clears" };
    for n in graph["nodes"].as_array_mut().into_iter().flatten() {
        let word = flag(&mut rng);
        let odds = match n["kind"].as_str() {
            Some("end") => 25,
            Some("subgraph") => 50,
            _ => 0,
        };
        if rng.chance(odds) {
            n[word] = json!(["f"]);
        }
    }
}

/// Rulebook gates for [`random`]'s `t` tools, from their own generator (so the graph and the
/// catalogue are those of the same seed without gates): about a third of the tools get one, over
/// other tools; now and then a gate with no set (never allows) or with an empty set (always
/// allows).
fn random_gates(seed: u64, t: usize) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut rng = Rng::new(seed ^ 0x006a_7e5e_ed0f_fac7);
    let mut gates = BTreeMap::new();
    for i in 0..t {
        if t < 2 || !rng.chance(35) {
            continue;
        }
        let mut any_of = Vec::new();
        if !rng.chance(12) {
            for _ in 0..1 + rng.below(2) {
                let size = if rng.chance(10) { 0 } else { 1 + rng.below(2) };
                let set: Vec<String> = (0..size)
                    .map(|_| format!("t{}", (i + 1 + rng.below(t - 1)) % t))
                    .collect();
                any_of.push(set);
            }
        }
        gates.insert(format!("t{i}"), any_of);
    }
    gates
}
