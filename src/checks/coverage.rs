//! Which rules had nothing to read (SPEC 6, "Rules with nothing to read, so nothing raised") and
//! which this version does not check yet though the input gives them something to read.

use crate::input::ir::{Catalogue, NodeKind, Role};
use crate::model::FlatModel;
use crate::rules::RuleId;

/// What a run was given besides the graph and the catalogue, for [`coverage`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Given {
    /// A rulebook (the rulebook rules read it).
    pub rulebook: bool,
    /// Traces of real runs (QG016 reads them).
    pub traces: bool,
}

/// What a rule reads beyond the graph and the catalogue, which decides whether a run gave it
/// anything to read (SPEC 6).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reads {
    /// Always has something to read (the graph's routes, the catalogue's tools).
    Always,
    /// The rulebook: nothing to read without one.
    Rulebook,
    /// Traces of real runs (`--traces`): nothing to read without them.
    Traces,
    /// A declaration the input may not make (a role, a store's word, a node kind): the predicate
    /// says whether it does.
    Declared(fn(&FlatModel, &Catalogue) -> bool),
    /// The Python tool modules (a code check): its `Code checks:` line says what it read, so it
    /// is never listed as having nothing to read.
    ToolCode,
    /// This version does not check it yet (a rule file's `status = "not_yet_checked"`): no rule
    /// is today, but a new rule's file may land before its checker, and the report lists it.
    #[expect(
        dead_code,
        reason = "no rule is unchecked today; a new rule file answers here first"
    )]
    NotChecked,
}

/// What rule `id` reads. The match is exhaustive: a new rule file does not compile until it is
/// answered here, and [`checked`] (what `status` in the rule file is held to) follows from it.
pub(crate) fn reads(id: RuleId) -> Reads {
    use RuleId::*;
    match id {
        QG001 | QG003 | QG004 | QG006 | QG011 | QG012 | QG013 | QG014 | QG015 | QG023 | QG024
        | QG101 | QG104 | QG105 | QG312 => Reads::Always,
        QG002 | QG005 | QG007 | QG008 | QG009 | QG010 | QG022 => Reads::Rulebook,
        QG016 => Reads::Traces,
        QG017 => Reads::Declared(|m, _| has_role(m, Role::CODE)),
        QG018 => Reads::Declared(|m, _| has_role(m, Role::QUERY)),
        QG019 => Reads::Declared(|m, _| m.tools.iter().any(|t| t.confidential)),
        QG020 => Reads::Declared(|m, cat| {
            m.tools.iter().any(|t| {
                t.store.as_ref().is_some_and(|(s, write)| {
                    !write && store(cat, s).is_some_and(|d| d.multi_tenant)
                })
            })
        }),
        QG021 => Reads::Declared(|m, cat| {
            m.tools.iter().any(|t| {
                t.store
                    .as_ref()
                    .is_some_and(|(s, write)| *write && store(cat, s).is_some_and(|d| d.persistent))
            })
        }),
        QG106 => Reads::Declared(|m, _| m.tools.iter().any(|t| t.source.is_some())),
        QG107 => Reads::Declared(|m, _| m.nodes.iter().any(|n| n.kind == NodeKind::Remote)),
        CC001 | CC002 | CC003 => Reads::ToolCode,
    }
}

/// True when this version checks rule `id` (a rule file's `status = "checked"` is held to it).
pub fn checked(id: RuleId) -> bool {
    !matches!(reads(id), Reads::NotChecked)
}

fn has_role(m: &FlatModel, want: &[Role]) -> bool {
    m.tools.iter().any(|t| {
        t.args
            .iter()
            .any(|a| a.role.is_some_and(|r| want.contains(&r)))
    })
}

fn store<'c>(cat: &'c Catalogue, name: &str) -> Option<&'c crate::input::ir::StoreDef> {
    cat.stores.iter().find(|s| s.name == name)
}

/// True when the input declares something rule `id` reads; `None` when the rule always has
/// something to read.
fn has_input(m: &FlatModel, cat: &Catalogue, given: Given, id: RuleId) -> Option<bool> {
    match reads(id) {
        Reads::Always | Reads::ToolCode | Reads::NotChecked => None,
        Reads::Rulebook => Some(given.rulebook),
        Reads::Traces => Some(given.traces),
        Reads::Declared(p) => Some(p(m, cat)),
    }
}

/// (rules with nothing to read and why, rules not checked yet that had something to read).
/// `given`: whether a rulebook and traces were given (the rulebook rules and QG016 read them).
pub(crate) fn coverage(
    m: &FlatModel,
    cat: &Catalogue,
    given: Given,
) -> (Vec<(&'static str, String)>, Vec<&'static str>) {
    let mut nothing = Vec::new();
    let mut not_yet = Vec::new();
    for id in RuleId::PROOF {
        let r = id.rule();
        match (has_input(m, cat, given, id), &r.nothing_to_read) {
            (Some(false), Some(why)) => nothing.push((id.as_str(), why.clone())),
            _ if !checked(id) => not_yet.push(id.as_str()),
            _ => {}
        }
    }
    (nothing, not_yet)
}

/// The known limits of this reading that apply to `export` (SPEC 3.1 Choices): a node with
/// several fixed edges, which LangGraph runs as parallel branches, is read as a choice.
pub(crate) fn limits(export: &crate::input::ir::Export) -> Vec<String> {
    fn walk(g: &crate::input::ir::GraphDef, prefix: &str, out: &mut Vec<String>) {
        // Fixed destinations per source, in the order sources first appear.
        let mut order: Vec<&str> = Vec::new();
        let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for e in g
            .edges
            .iter()
            .filter(|e| e.kind == crate::input::ir::EdgeKind::Fixed)
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
