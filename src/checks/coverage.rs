//! Which rules had nothing to read (SPEC 6, "Rules with nothing to read, so nothing raised") and
//! which this version does not check yet though the input gives them something to read.

use super::CHECKED_RULES;
use crate::ir::{Catalogue, NodeKind, Role};
use crate::model::FlatModel;
use crate::rules;

/// What a run was given besides the graph and the catalogue, for [`coverage`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    /// A rulebook (the rulebook rules read it).
    pub rulebook: bool,
    /// Traces of real runs (QG016 reads them).
    pub traces: bool,
}

/// True when the input declares something rule `id` reads; `None` when the rule always has
/// something to read (or this version cannot tell).
fn has_input(m: &FlatModel, cat: &Catalogue, given: Given, id: &str) -> Option<bool> {
    let store = |name: &str| cat.stores.iter().find(|s| s.name == name);
    let roles = |want: &[Role]| {
        m.tools.iter().any(|t| {
            t.args
                .iter()
                .any(|a| a.role.is_some_and(|r| want.contains(&r)))
        })
    };
    Some(match id {
        "QG017" => roles(Role::CODE),
        "QG018" => roles(Role::QUERY),
        "QG019" => m.tools.iter().any(|t| t.confidential),
        "QG020" => m.tools.iter().any(|t| {
            t.store
                .as_ref()
                .is_some_and(|(s, write)| !write && store(s).is_some_and(|d| d.multi_tenant))
        }),
        "QG021" => m.tools.iter().any(|t| {
            t.store
                .as_ref()
                .is_some_and(|(s, write)| *write && store(s).is_some_and(|d| d.persistent))
        }),
        "QG106" => m.tools.iter().any(|t| t.source.is_some()),
        "QG107" => m.nodes.iter().any(|n| n.kind == NodeKind::Remote),
        "QG002" | "QG005" | "QG007" | "QG008" | "QG009" | "QG010" | "QG022" => given.rulebook,
        "QG016" => given.traces,
        _ => return None,
    })
}

/// (rules with nothing to read and why, rules not checked yet that had something to read).
/// `given`: whether a rulebook and traces were given (the rulebook rules and QG016 read them).
pub fn coverage(
    m: &FlatModel,
    cat: &Catalogue,
    given: Given,
) -> (Vec<(&'static str, String)>, Vec<&'static str>) {
    let mut nothing = Vec::new();
    let mut not_yet = Vec::new();
    for r in rules::all() {
        let id: &'static str = r.id.as_str();
        match (has_input(m, cat, given, id), &r.nothing_to_read) {
            (Some(false), Some(why)) => nothing.push((id, why.clone())),
            _ if !CHECKED_RULES.contains(&id) => not_yet.push(id),
            _ => {}
        }
    }
    (nothing, not_yet)
}

/// The known limits of this reading that apply to `export` (SPEC 3.1 Choices): a node with
/// several fixed edges, which LangGraph runs as parallel branches, is read as a choice.
pub fn limits(export: &crate::ir::Export) -> Vec<String> {
    fn walk(g: &crate::ir::GraphDef, prefix: &str, out: &mut Vec<String>) {
        // Fixed destinations per source, in the order sources first appear.
        let mut order: Vec<&str> = Vec::new();
        let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for e in g
            .edges
            .iter()
            .filter(|e| e.kind == crate::ir::EdgeKind::Fixed)
        {
            let c = count.entry(e.from.name.as_str()).or_insert_with(|| {
                order.push(e.from.name.as_str());
                0
            });
            *c += e.destinations.as_ref().map_or(0, Vec::len);
        }
        for from in order {
            if count.get(from).is_some_and(|&c| c > 1) {
                out.push(format!("{prefix}{from}"));
            }
        }
        for (name, sub) in &g.subgraphs {
            for n in g
                .nodes
                .iter()
                .filter(|n| n.graph.as_ref().is_some_and(|x| x.name == name.name))
            {
                walk(sub, &format!("{prefix}{}/", n.id.name), out);
            }
        }
    }
    let mut nodes = Vec::new();
    walk(&export.graph, "", &mut nodes);
    if nodes.is_empty() {
        return Vec::new();
    }
    let shown: Vec<String> = nodes.iter().take(5).map(|n| format!("'{n}'")).collect();
    let more = if nodes.len() > 5 {
        format!(" and {} more", nodes.len() - 5)
    } else {
        String::new()
    };
    vec![format!(
        "several fixed edges leave {}{more}: LangGraph runs them as parallel branches, and this version reads them as a choice of one, so a route that needs two branches at once is not searched",
        shown.join(", ")
    )]
}
