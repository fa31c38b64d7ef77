//! The rulebook's gate on guarded calls (SPEC 3: "A guarded call runs only if the tool check
//! allows it ... a refused call updates nothing"; the `fact[f]` row): hand-made graphs whose
//! verdicts turn on a gate, answered alike by the explicit engine, the Z3 engine and the plain
//! interpreter. Gates come from the rulebook, which neither input file carries: the tests set them
//! on the flattened model.

use crate::common;

use stalwart::engine::{interp, Class, Depth, EngineChoice, Instance, InstanceResult, Outcome};
use stalwart::input;
use stalwart::model::{FlatModel, RuleGate};
use stalwart::{Obligation, StepKind};

/// The flattened model of a graph and a catalogue given as JSON text.
fn model(graph: &str, catalogue: &str) -> FlatModel {
    let dir = tempfile::tempdir().expect("tempdir");
    let gp = dir.path().join("graph.json");
    let cp = dir.path().join("catalogue.json");
    std::fs::write(&gp, graph).expect("write");
    std::fs::write(&cp, catalogue).expect("write");
    let inputs = input::load_export(&gp, &cp).expect("input");
    common::flat(&inputs)
}

/// Gates `tool` on `any_of` (tool names).
fn gate(m: &mut FlatModel, tool: &str, any_of: &[&[&str]]) {
    let t = m.tool_ix(tool).expect("tool");
    let any_of = any_of
        .iter()
        .map(|set| set.iter().map(|n| m.tool_ix(n).expect("tool")).collect())
        .collect();
    m.gates[t] = Some(RuleGate { any_of });
}

/// Both engines' result for obligation `ob` about `tool`, after checking they agree.
fn both(m: &FlatModel, ob: Obligation, tool: &str) -> (Outcome, [InstanceResult; 2]) {
    let o = common::run(m, EngineChoice::Both);
    assert!(
        o.disagreements.is_empty(),
        "the engines disagree: {:#?}",
        o.disagreements
            .iter()
            .map(|d| (d.instance, d.key, d.why.clone()))
            .collect::<Vec<_>>()
    );
    let inst = Instance {
        obligation: ob,
        tool: m.tool_ix(tool),
    };
    let pick = |i: usize| {
        o.runs[i]
            .results
            .iter()
            .find(|r| r.instance == inst)
            .expect("the instance was asked")
            .clone()
    };
    let r = [pick(0), pick(1)];
    assert_eq!(
        (o.runs[0].name.as_str(), o.runs[1].name.as_str()),
        ("explicit", "z3")
    );
    (o, r)
}

/// The Z3 engine's depth alone (beside the explicit engine it skips k-induction where the
/// explicit search proved every depth).
fn z3_alone_depth(m: &FlatModel, inst: Instance) -> Depth {
    let o = common::run(m, EngineChoice::Z3);
    o.runs[0]
        .results
        .iter()
        .find(|r| r.instance == inst)
        .expect("the instance was asked")
        .depth
}

/// A witness's route: the nodes entered, the choices made (from the start node's on), and its last
/// call (with the node steps of the run at it).
fn route(w: &[stalwart::Step]) -> Vec<String> {
    let mut out: Vec<String> = w
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Enter | StepKind::Choose) && s.node != "__start__")
        .map(|s| match s.kind {
            StepKind::Enter => format!("enter {}", s.node),
            _ => format!("{} -> {}", s.node, s.to.clone().unwrap_or_default()),
        })
        .collect();
    let last = w.last().expect("a witness ends at its call");
    out.push(format!(
        "call {} at {} ({} steps)",
        last.tool.clone().unwrap_or_default(),
        last.node,
        last.run_steps
    ));
    out
}

const SHOP: &str = r#"{"format":"qls-graph/1","name":"shop","recursion_limit":10,"session_steps":1,
  "nodes":[{"id":"__start__","kind":"start"},{"id":"router","kind":"router"},
    {"id":"look","kind":"tools","tools":["lookup"]},{"id":"desk","kind":"tools","tools":["refund"]},
    {"id":"send","kind":"tools_plain","tools":["ship"]},{"id":"__end__","kind":"end"}],
  "edges":[{"from":"__start__","kind":"fixed","destinations":["router"]},
    {"from":"router","kind":"conditional","destinations":["look","desk"]},
    {"from":"look","kind":"fixed","destinations":["desk"]},
    {"from":"desk","kind":"conditional","destinations":["send","__end__"]},
    {"from":"send","kind":"fixed","destinations":["__end__"]}]}"#;

const SHOP_TOOLS: &str = r#"{"format":"qls-catalogue/1","tools":{
  "lookup":{"kind":"read"},
  "refund":{"kind":"write","idempotency":true,"result":{}},
  "ship":{"kind":"write","idempotency":true,"result":{},"order":{"not_after":["refund"]}}}}"#;

/// `ship` must not run after `refund` (O4); `refund` is called only guarded, gated on `lookup`
/// having run. The violation needs the route through `look`; with a gate that never allows,
/// `refund` never runs and `ship` never breaks its rule.
#[test]
fn a_gate_on_refund_decides_the_order_violation_on_ship() {
    let want_gated = vec![
        "enter router",
        "router -> look",
        "enter look",
        "look -> desk",
        "enter desk",
        "desk -> send",
        "enter send",
        "call ship at send (4 steps)",
    ];
    let want_open = vec![
        "enter router",
        "router -> desk",
        "enter desk",
        "desk -> send",
        "enter send",
        "call ship at send (3 steps)",
    ];

    // No gate: refund runs on the shorter route straight to the desk.
    let open = model(SHOP, SHOP_TOOLS);
    let (_, [e, z]) = both(&open, Obligation::O4, "ship");
    assert_eq!(e.violations.len(), 1);
    assert_eq!(route(&e.violations[0].witness), want_open);
    assert_eq!(route(&z.violations[0].witness), want_open);
    let open_witness = e.violations[0].clone();

    // Gated on [[lookup]]: the violation is still there, only through `look`.
    let mut m = model(SHOP, SHOP_TOOLS);
    gate(&mut m, "refund", &[&["lookup"]]);
    let (_, [e, z]) = both(&m, Obligation::O4, "ship");
    for r in [&e, &z] {
        assert_eq!(r.violations.len(), 1, "{:?}", r.instance);
        let v = &r.violations[0];
        assert_eq!(
            (m.tools[v.tool].name.as_str(), m.nodes[v.node].qid.as_str()),
            ("ship", "send")
        );
        assert_eq!((v.class, v.turn), (Class::Plain, 1));
        assert_eq!(route(&v.witness), want_gated);
        interp::replay_violation(&m, v).expect("the witness replays");
        // The guarded calls on the way ran: lookup, then refund, which the gate allowed.
        let guarded: Vec<(&str, bool)> = v
            .witness
            .iter()
            .filter(|s| s.kind == StepKind::Call && s.guarded == Some(true))
            .map(|s| (s.tool.as_deref().unwrap_or(""), s.refused))
            .collect();
        assert!(guarded.contains(&("lookup", false)), "{guarded:?}");
        assert!(guarded.contains(&("refund", false)), "{guarded:?}");
    }
    // The ungated witness is not one under the gate: the interpreter finds refund refused.
    let refund = m.tool_ix("refund").expect("tool");
    assert_eq!(
        interp::replay_violation(&m, &open_witness).map_err(|e| match e {
            interp::ReplayError::GuardDiffers { tool, .. } => Some(tool),
            _ => None,
        }),
        Err(Some(refund))
    );

    // A gate with an empty set always allows: as without a gate.
    let mut m = model(SHOP, SHOP_TOOLS);
    gate(&mut m, "refund", &[&["lookup"], &[]]);
    let (_, [e, z]) = both(&m, Obligation::O4, "ship");
    assert_eq!(route(&e.violations[0].witness), want_open);
    assert_eq!(route(&z.violations[0].witness), want_open);

    // A gate with no set never allows: refund never runs, so ship never follows it.
    let mut m = model(SHOP, SHOP_TOOLS);
    gate(&mut m, "refund", &[]);
    let (o, [e, z]) = both(&m, Obligation::O4, "ship");
    assert!(e.violations.is_empty() && z.violations.is_empty());
    assert_eq!(e.depth, Depth::Every, "{e:?}");
    assert_eq!(z3_alone_depth(&m, z.instance), Depth::Every);
    // Ship is still called plainly (O1), whatever the gate.
    assert!(o
        .results
        .iter()
        .any(|r| r.instance.obligation == Obligation::O1
            && r.violations.iter().any(|v| m.tools[v.tool].name == "ship")));

    // Gated on a tool that never runs before it: as good as never.
    let mut m = model(SHOP, SHOP_TOOLS);
    gate(&mut m, "refund", &[&["lookup", "ship"]]);
    let (_, [e, z]) = both(&m, Obligation::O4, "ship");
    assert!(e.violations.is_empty() && z.violations.is_empty());
}

const FEED: &str = r#"{"format":"qls-graph/1","name":"feed","recursion_limit":10,"session_steps":2,
  "nodes":[{"id":"__start__","kind":"start"},{"id":"read","kind":"tools","tools":["fetch"]},
    {"id":"pay","kind":"tools_plain","tools":["charge"]},{"id":"__end__","kind":"end"}],
  "edges":[{"from":"__start__","kind":"fixed","destinations":["read"]},
    {"from":"read","kind":"conditional","destinations":["pay","__end__"]},
    {"from":"pay","kind":"conditional","destinations":["read","__end__"]}]}"#;

const FEED_TOOLS: &str = r#"{"format":"qls-catalogue/1","tools":{
  "fetch":{"kind":"read","reads_outside":true},
  "charge":{"kind":"write","idempotency":true,"result":{}}}}"#;

/// A guarded read of outside content (`reads_outside`) taints the run only when it runs: with a
/// gate that never allows, no call of it runs and no taint reaches the plain write (no O6).
#[test]
fn a_gate_that_never_allows_a_tainting_read_leaves_no_taint() {
    // Ungated: fetch runs and taints; charge then acts on it (QG011, one region).
    let open = model(FEED, FEED_TOOLS);
    let (_, [e, z]) = both(&open, Obligation::O6, "charge");
    for r in [&e, &z] {
        assert_eq!(r.violations.len(), 1, "{:?}", r.instance);
        let v = &r.violations[0];
        assert_eq!((v.class, v.turn), (Class::Local, 1));
        assert_eq!(
            route(&v.witness),
            vec![
                "enter read",
                "read -> pay",
                "enter pay",
                "call charge at pay (2 steps)"
            ]
        );
    }

    // Never allowed: no taint-caused finding, at any depth.
    let mut m = model(FEED, FEED_TOOLS);
    gate(&mut m, "fetch", &[]);
    let (o, [e, z]) = both(&m, Obligation::O6, "charge");
    assert!(e.violations.is_empty() && z.violations.is_empty());
    assert_eq!(e.depth, Depth::Every, "{e:?}");
    assert_eq!(z3_alone_depth(&m, z.instance), Depth::Every);
    assert!(o
        .results
        .iter()
        .all(|r| r.instance.obligation != Obligation::O6 || r.violations.is_empty()));

    // Gated on charge having run: charge runs only plain (at `pay`), so the guard never sees
    // it run and never reads the fact (SPEC 3.1 "The guard's view": the check decides over the
    // seen twins, `ran_seen[charge]`), and the read never runs: no taint, at any depth.
    let mut m = model(FEED, FEED_TOOLS);
    gate(&mut m, "fetch", &[&["charge"]]);
    let (_, [e, z]) = both(&m, Obligation::O6, "charge");
    assert!(e.violations.is_empty() && z.violations.is_empty());
    assert_eq!(e.depth, Depth::Every, "{e:?}");
}
