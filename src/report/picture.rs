//! The picture of a graph (issue 18; issue 31 made it a value of its own): what `--format
//! mermaid|dot` and the job summary draw, built once from the flattened model before any output
//! runs, so the renderers ([`crate::output::picture`], [`crate::output::summary`]) read this
//! value and never the model.
//!
//! It holds what is drawn and nothing about how: each node's qualified id, subgraph path, shape
//! (by kind), whether it calls tools checked or not, and its label lines (id and kind, its tools,
//! its pauses for a person); each edge once per source and destination, in the model's order, with
//! the first guard seen in the export's own words. Node indices are the model's.

use std::collections::BTreeSet;

use crate::input::ir::{Guard, NodeKind};
use crate::model::{FlatGuard, FlatModel};

/// How a node is drawn, by its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `start`.
    Start,
    /// `end`.
    End,
    /// `model`.
    Model,
    /// `router`.
    Router,
    /// A tool node, `tools` or `tools_plain`.
    Tools,
    /// `step`.
    Step,
    /// A subgraph node.
    Subgraph,
    /// A remote agent.
    Remote,
}

/// Whether a node runs tools, and checked or not: what colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// It runs no tool (or, a model node, only offers them).
    None,
    /// A guarded tool node (`tools`).
    Guarded,
    /// A plain tool node (`tools_plain`), or a step calling tools unchecked.
    Plain,
}

/// One node as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PicNode {
    /// Its qualified id (`kb/retrieve`), as a witness's steps name it.
    pub id: String,
    /// Its subgraph's path (`""` for the top graph, `kb`, `kb/inner`).
    pub path: String,
    /// Its shape.
    pub shape: Shape,
    /// What colours it.
    pub calls: Calls,
    /// Its label's lines: `id (kind)`, its tools, its pauses.
    pub label: Vec<String>,
}

/// One edge as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PicEdge {
    /// The source node's index in [`Picture::nodes`].
    pub from: usize,
    /// The destination node's index.
    pub to: usize,
    /// `guard: approved && !refunded`, when the edge has a guard.
    pub guard: Option<String>,
}

/// The graph as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// The nodes, in the model's order.
    pub nodes: Vec<PicNode>,
    /// The edges, one per (from, to), in the model's order.
    pub edges: Vec<PicEdge>,
}

impl Picture {
    /// The picture of `m`.
    pub fn of(m: &FlatModel) -> Picture {
        let nodes = (0..m.nodes.len()).map(|i| node(m, i)).collect();
        let mut seen = BTreeSet::new();
        let mut edges = Vec::new();
        for e in &m.edges {
            if seen.insert((e.from, e.to)) {
                edges.push(PicEdge {
                    from: e.from,
                    to: e.to,
                    guard: e.guard.as_ref().map(|g| guard_text(m, g)),
                });
            }
        }
        Picture { nodes, edges }
    }
}

/// Node `i` of `m` as drawn.
fn node(m: &FlatModel, i: usize) -> PicNode {
    let n = &m.nodes[i];
    let shape = match n.kind {
        NodeKind::Start => Shape::Start,
        NodeKind::End => Shape::End,
        NodeKind::Model => Shape::Model,
        NodeKind::Router => Shape::Router,
        NodeKind::Tools | NodeKind::ToolsPlain => Shape::Tools,
        NodeKind::Step => Shape::Step,
        NodeKind::Subgraph => Shape::Subgraph,
        NodeKind::Remote => Shape::Remote,
    };
    let calls = match n.kind {
        NodeKind::Tools => Calls::Guarded,
        NodeKind::ToolsPlain => Calls::Plain,
        NodeKind::Step if !n.tools.is_empty() => Calls::Plain,
        _ => Calls::None,
    };
    PicNode {
        id: n.qid.clone(),
        path: n.path.clone(),
        shape,
        calls,
        label: label(m, i),
    }
}

/// A node's label: its id, its kind (guarded or plain for tool nodes), its tools and pauses.
fn label(m: &FlatModel, i: usize) -> Vec<String> {
    let n = &m.nodes[i];
    let kind = match n.kind {
        NodeKind::Tools => "tools, guarded".to_string(),
        NodeKind::ToolsPlain => "tools_plain, not checked".to_string(),
        NodeKind::Step if !n.tools.is_empty() => "step, calls tools unchecked".to_string(),
        k => k.as_str().to_string(),
    };
    let mut lines = vec![format!("{} ({kind})", n.qid)];
    if !n.tools.is_empty() && !matches!(n.kind, NodeKind::Model) {
        let names: Vec<&str> = n.tools.iter().map(|&t| m.tools[t].name.as_str()).collect();
        lines.push(clip_list(&names));
    } else if n.kind == NodeKind::Model && !n.tools.is_empty() {
        let names: Vec<&str> = n.tools.iter().map(|&t| m.tools[t].name.as_str()).collect();
        lines.push(format!("offers {}", clip_list(&names)));
    }
    for p in n.on_enter.iter().chain(&n.on_leave).chain(&n.reviews) {
        let when = p.when.as_str();
        let tool = p
            .tool
            .map(|t| m.tools[t].name.as_str())
            .unwrap_or("nothing");
        lines.push(format!("pause {when}: {tool}"));
    }
    lines
}

/// A list of names, at most six shown.
fn clip_list(names: &[&str]) -> String {
    if names.len() <= 6 {
        names.join(", ")
    } else {
        format!("{}, and {} more", names[..6].join(", "), names.len() - 6)
    }
}

/// A guard in the export's own words (`guard: approved && !refunded`).
fn guard_text(m: &FlatModel, g: &FlatGuard) -> String {
    fn named(m: &FlatModel, g: &FlatGuard) -> Guard {
        match g {
            Guard::Flag(f) => Guard::Flag(m.flags[*f].0.clone()),
            Guard::Not(x) => Guard::Not(Box::new(named(m, x))),
            Guard::And(a, b) => Guard::And(Box::new(named(m, a)), Box::new(named(m, b))),
            Guard::Or(a, b) => Guard::Or(Box::new(named(m, a)), Box::new(named(m, b))),
        }
    }
    format!("guard: {}", named(m, g))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_list_names_six_and_counts_the_rest() {
        assert_eq!(clip_list(&["a", "b"]), "a, b");
        let eight = ["a", "b", "c", "d", "e", "f", "g", "h"];
        assert_eq!(clip_list(&eight), "a, b, c, d, e, f, and 2 more");
    }
}
