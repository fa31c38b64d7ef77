//! Findings from the graph's shape (SPEC 3.1, 4): QG023 (unbounded loops), QG015 (undeclared
//! routes), QG006 (a subgraph whose graph the export does not hold).

use super::{finding, Subject};
use crate::findings::{Finding, Primary};
use crate::input::ir::NodeKind;
use crate::model::FlatModel;
use crate::rules::RuleId;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::DiGraph;

/// QG023: one finding per strongly connected component with an edge that holds a `model` node, or
/// a tool node (a `tools`/`tools_plain` node, or a `step` listing tools) and no `router`, unless
/// a budget covers it (the run's; a subgraph's own, for a cycle wholly inside it; an agent's, for
/// a cycle wholly in the agent; an `exit_after` edge inside the cycle). Guards are ignored: the
/// check is structural.
pub(crate) fn unbounded_loops(m: &FlatModel) -> Vec<Finding> {
    if m.top_budget {
        return Vec::new();
    }
    let mut g: DiGraph<usize, ()> = DiGraph::new();
    let ix: Vec<_> = (0..m.nodes.len()).map(|i| g.add_node(i)).collect();
    for e in &m.edges {
        g.add_edge(ix[e.from], ix[e.to], ());
    }
    let comps = kosaraju_scc(&g); // iterative: a 100,000-node chain must not exhaust the stack
    let mut comp_of = vec![0usize; m.nodes.len()];
    for (c, comp) in comps.iter().enumerate() {
        for &n in comp {
            comp_of[g[n]] = c;
        }
    }
    // Per component: an edge inside it (a cycle, self-loops included) and an `exit_after` edge
    // inside it (a declared budget for the cycle).
    let mut inner = vec![false; comps.len()];
    let mut exit = vec![false; comps.len()];
    for e in &m.edges {
        if comp_of[e.from] == comp_of[e.to] {
            inner[comp_of[e.from]] = true;
            if e.exit_after.is_some() {
                exit[comp_of[e.from]] = true;
            }
        }
    }
    let mut out = Vec::new();
    for (c, comp) in comps.iter().enumerate() {
        if !inner[c] || exit[c] {
            continue;
        }
        let mut sorted: Vec<usize> = comp.iter().map(|&n| g[n]).collect();
        sorted.sort_unstable_by_key(|&n| (m.nodes[n].decl, n));
        // SPEC 3.1: a `tools` or `tools_plain` node is a tool node by its kind, listing tools
        // or not; a `step` is one when it lists tools.
        let is_tool = |n: usize| {
            matches!(m.nodes[n].kind, NodeKind::Tools | NodeKind::ToolsPlain)
                || m.nodes[n].calls_tools()
        };
        let model = first_declared(m, &sorted, |n| m.nodes[n].kind == NodeKind::Model);
        let tool = first_declared(m, &sorted, is_tool);
        let router = sorted.iter().any(|&n| m.nodes[n].kind == NodeKind::Router);
        let subject = match (model, tool, router) {
            (Some(n), _, _) => n,
            (None, Some(n), false) => n,
            _ => continue,
        };
        let inside = |p: &str| {
            sorted
                .iter()
                .all(|&n| m.nodes[n].path == p || m.nodes[n].path.starts_with(&format!("{p}/")))
        };
        if m.budget_paths.iter().any(|p| inside(p)) {
            continue;
        }
        let in_agent = |a: &str| {
            sorted
                .iter()
                .all(|&n| m.nodes[n].agent.as_deref() == Some(a))
        };
        if m.budget_agents.iter().any(|a| in_agent(a)) {
            continue;
        }
        let node = &m.nodes[subject];
        let limit = m.recursion_limit.to_string();
        out.push(finding(
            Subject {
                rule: RuleId::QG023,
                obligation: None,
                subject: format!("cycle:{}", node.qid),
                tool: None,
                node: Some(node.qid.clone()),
                location: Primary::Line(node.loc),
            },
            None,
            Vec::new(),
            &[("limit", &limit)],
        ));
    }
    out
}

/// The first node of `sorted` (sorted by declaration rank) that `want` accepts, in declaration
/// order (SPEC 3.1). Nodes inlined from one definition share a rank; among them the first is the
/// use whose subgraph node (the one running the definition) comes first in declaration order,
/// then, if that is one node used several times, whose enclosing subgraph node does, outwards.
fn first_declared(m: &FlatModel, sorted: &[usize], want: impl Fn(usize) -> bool) -> Option<usize> {
    let first = sorted.iter().copied().find(|&n| want(n))?;
    let rank = m.nodes[first].decl;
    let uses = sorted
        .iter()
        .copied()
        .filter(|&n| m.nodes[n].decl == rank && want(n));
    uses.min_by_key(|&n| (use_ranks(m, n), n))
}

/// The declaration ranks of the subgraph nodes enclosing node `n`, innermost first: for
/// `p/r/m`, those of `p/r` then `p`.
fn use_ranks(m: &FlatModel, n: usize) -> Vec<usize> {
    let path = &m.nodes[n].path;
    let mut out = Vec::new();
    let mut end = path.len();
    while end > 0 {
        let qid = &path[..end];
        out.push(m.node_ix(qid).map_or(usize::MAX, |i| m.nodes[i].decl));
        end = qid.rfind('/').unwrap_or(0);
    }
    out
}

/// QG015: one finding per conditional or command edge with `null` destinations.
pub(crate) fn undeclared_routes(m: &FlatModel) -> Vec<Finding> {
    m.null_edges
        .iter()
        .map(|e| {
            let detail = format!("a {} edge", e.kind);
            finding(
                Subject {
                    rule: RuleId::QG015,
                    obligation: None,
                    subject: format!("edge:{}", e.from),
                    tool: None,
                    node: Some(e.from.clone()),
                    location: Primary::Line(e.loc),
                },
                None,
                Vec::new(),
                &[("detail", &detail)],
            )
        })
        .collect()
}

/// QG006: a subgraph node whose graph is missing or empty passes through on its own edges, and
/// what runs inside it is not verified.
pub(crate) fn opaque_subgraphs(m: &FlatModel) -> Vec<Finding> {
    m.opaque_subgraphs
        .iter()
        .map(|(n, graph)| {
            let node = &m.nodes[*n];
            let detail = if graph.is_empty() {
                "the subgraph node names no graph, so what runs inside it is not verified".to_string()
            } else {
                format!("it runs the graph '{graph}', which the export does not hold or leaves empty, so what runs inside it is not verified")
            };
            let mut f = finding(
                Subject {
                    rule: RuleId::QG006,
                    obligation: None,
                    subject: node.qid.clone(),
                    tool: None,
                    node: Some(node.qid.clone()),
                    location: Primary::Line(node.loc),
                },
                None,
                Vec::new(),
                &[("detail", &detail)],
            );
            // Nothing unseen passes (SPEC 8.1, 12.5): what runs inside is unknown, so every
            // obligation it could break is undecided there, and the region fails the gate as
            // they would.
            f.unproved = crate::rules::obligation::reachability_rules();
            f
        })
        .collect()
}
