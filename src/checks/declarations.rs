//! Declaration rules read from agent.yaml and the graph (SPEC 6): QG004's graph side, permissive
//! by default.

use crate::rules::RuleId;
use std::collections::VecDeque;

use super::{finding, Subject};
use crate::findings::{Finding, Primary};
use crate::input::ir::NodeKind;
use crate::input::Inputs;
use crate::model::FlatModel;

/// QG004 (graph side, SPEC 5): an agent of agent.yaml with a model whose `on_unread` is `model`
/// or `ask` (both let the model have the turn the router could not read), or unset with no `settings.on_unread`, and whose model can reach a node that calls a write.
/// Exports declare no `on_unread`, so only agent.yaml is read.
pub(crate) fn permissive_by_default(m: &FlatModel, inputs: &Inputs) -> Vec<Finding> {
    if !inputs.from_agent_yaml {
        return Vec::new();
    }
    let mut out = Vec::new();
    for a in &inputs.export.agents {
        let setting = a
            .on_unread
            .as_deref()
            .or(inputs.default_on_unread.as_deref());
        if !matches!(setting, None | Some("model" | "ask")) {
            continue;
        }
        let Some(start) = m
            .nodes
            .iter()
            .position(|n| n.kind == NodeKind::Model && n.agent.as_deref() == Some(&a.name))
        else {
            continue;
        };
        let Some(write) = reachable_write(m, start) else {
            continue;
        };
        let why = match setting {
            Some(s) => format!("its `on_unread` is `{s}`"),
            None => "it sets no `on_unread` and `settings` gives none".to_string(),
        };
        let mut f = finding(
            Subject {
                rule: RuleId::QG004,
                obligation: None,
                subject: format!("agent '{}'", a.name),
                tool: None,
                node: Some(m.nodes[start].qid.clone()),
                location: Primary::Line(a.loc),
            },
            None,
            Vec::new(),
            &[],
        );
        f.message = format!("{} ({why}; it can reach the write '{write}')", f.message);
        out.push(f);
    }
    out
}

/// The first write a node reachable from `start` calls.
fn reachable_write(m: &FlatModel, start: usize) -> Option<String> {
    let mut seen = vec![false; m.nodes.len()];
    let mut q = VecDeque::from([start]);
    seen[start] = true;
    while let Some(n) = q.pop_front() {
        let node = &m.nodes[n];
        if node.calls_tools() {
            if let Some(&u) = node.tools.iter().find(|&&u| m.tools[u].is_write()) {
                return Some(m.tools[u].name.clone());
            }
        }
        for &e in &m.out[n] {
            let to = m.edges[e].to;
            if !seen[to] {
                seen[to] = true;
                q.push_back(to);
            }
        }
    }
    None
}
