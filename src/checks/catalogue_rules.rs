//! Declaration rules read from the catalogue and the graph's shape (SPEC 6): QG017, QG018 (an
//! argument a model writes that is code or a query), QG020 (a multi-tenant read not bound to the
//! user), QG101 (a write with no control declared), QG104 (a write unlike its agent's peers),
//! QG106 (an unpinned tool source), QG107 (a remote agent over an unauthenticated channel).
//!
//! QG019 and QG021 are reachability questions and are answered by the engines (O9, O10 in
//! [`crate::engine`]); QG004 is in [`super::declarations`].

use crate::rules::RuleId;
use std::collections::BTreeMap;

use super::{finding, Subject};
use crate::findings::{Finding, Primary};
use crate::input::ir::{Catalogue, NodeKind, Role, ToolDef};
use crate::model::{FlatModel, ToolIx};

/// Every finding of the rules above, in tool order then rule order, for the tools some node binds
/// or offers.
/// `rulebook_compiled`: a rulebook was given and compiles (QG101 reads it as a route).
pub(crate) fn findings(m: &FlatModel, cat: &Catalogue, rulebook_compiled: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let offered = offered(m);
    let written = written(m);
    // A tool no node binds or hosts never runs (the lint `tool_never_bound` names it): nothing
    // to raise.
    let mut bound = vec![false; m.tools.len()];
    for n in &m.nodes {
        for &t in n.tools.iter().chain(&n.hosted) {
            bound[t] = true;
        }
    }
    for (t, d) in m.tools.iter().enumerate() {
        if !bound[t] {
            continue;
        }
        let on = |rule: RuleId, detail: &str| on_tool(rule, d, detail);
        if offered[t] || written[t] != Writes::Nothing {
            for (rule, roles) in [(RuleId::QG017, Role::CODE), (RuleId::QG018, Role::QUERY)] {
                let flagged: Vec<&crate::input::ir::ArgDef> = d
                    .args
                    .iter()
                    .filter(|a| a.role.is_some_and(|r| roles.contains(&r)))
                    .filter(|a| offered[t] || written[t].covers(&a.name))
                    .collect();
                let args: Vec<String> = flagged
                    .iter()
                    .map(|a| {
                        let role = a.role.map_or("", |r| r.as_str());
                        format!("'{}' ({role})", a.name)
                    })
                    .collect();
                if let Some(first) = flagged.first() {
                    let mut f = on(rule, "");
                    f.message = format!("{} (argument {})", f.message, args.join(", "));
                    if !offered[t] {
                        written_fix(&mut f, rule, &d.name, &written_by(m, t));
                    }
                    // At the tool's definition in the user's source when the export gives it
                    // (SPEC 12.4), else at the argument's role; the entry beside it.
                    f.related = vec![(d.loc, format!("'{}' is declared here", d.name))];
                    match d.defined {
                        Some(def) => {
                            f.location = Primary::Line(def);
                            f.related.insert(
                                0,
                                (
                                    first.loc,
                                    format!("the role of '{}' is declared here", first.name),
                                ),
                            );
                        }
                        None => f.location = Primary::Line(first.loc),
                    }
                    out.push(f);
                }
            }
        }
        if let Some((store, false)) = &d.store {
            let shared = cat
                .stores
                .iter()
                .any(|s| &s.name == store && s.multi_tenant);
            if shared && !d.args.iter().any(|a| a.role == Some(Role::UserId)) {
                let mut f = on(RuleId::QG020, "");
                f.message = format!("{} (store '{store}')", f.message);
                out.push(f);
            }
        }
        if d.is_write()
            && !d.has_checks
            && d.order.after.is_empty()
            && d.order.not_after.is_empty()
            && d.order.at_most.is_none()
            && m.gates[t].is_none()
            && !rulebook_compiled
        {
            out.push(on(RuleId::QG101, ""));
        }
        if let Some((source, false)) = &d.source {
            let mut f = on(RuleId::QG106, "");
            f.message = format!("{} ('{source}')", f.message);
            out.push(f);
        }
    }
    out.extend(peers(m));
    out.extend(channels(m, cat));
    out
}

/// A finding of `rule` on tool `d`, located at its definition in the user's source when the export
/// gives it (SPEC 12.4; the entry related), else at its entry (so not also related), `detail`
/// filling the template's `{detail}`.
fn on_tool(rule: RuleId, d: &ToolDef, detail: &str) -> Finding {
    let mut f = finding(
        Subject {
            rule,
            obligation: None,
            subject: d.name.clone(),
            tool: Some(d),
            node: None,
            location: Primary::Line(d.defined.unwrap_or(d.loc)),
        },
        None,
        Vec::new(),
        &[("detail", detail)],
    );
    if d.defined.is_none() {
        f.related.clear();
    } else {
        f.related.retain(|(l, _)| Some(*l) != d.defined);
    }
    f
}

/// Which arguments of a tool some node's code runs it with from what a model wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Writes {
    /// None (its calls' arguments are the code's own).
    Nothing,
    /// These.
    Args(std::collections::BTreeSet<String>),
    /// Any of them.
    All,
}

impl Writes {
    fn covers(&self, arg: &str) -> bool {
        match self {
            Writes::Nothing => false,
            Writes::Args(names) => names.contains(arg),
            Writes::All => true,
        }
    }
}

/// For each tool, the arguments a node's code takes from what a model wrote (`model_written`,
/// issue 28: a step handing a tool a tool call's arguments or a message's text): a model chooses
/// those, as at a tool node. A `step` node's other calls are its code's own.
fn written(m: &FlatModel) -> Vec<Writes> {
    let mut out = vec![Writes::Nothing; m.tools.len()];
    for n in &m.nodes {
        for (t, args) in &n.model_written {
            out[*t] = match (std::mem::replace(&mut out[*t], Writes::Nothing), args) {
                (Writes::All, _) | (_, None) => Writes::All,
                (Writes::Nothing, Some(a)) => Writes::Args(a.iter().cloned().collect()),
                (Writes::Args(mut have), Some(a)) => {
                    have.extend(a.iter().cloned());
                    Writes::Args(have)
                }
            };
        }
    }
    out
}

/// For each tool, true when a model node offers it or makes it a `hosted` call, or a tool node
/// (`tools`, `tools_plain`) binds it, whose batch the model chose (SPEC 3).
fn offered(m: &FlatModel) -> Vec<bool> {
    let mut out = vec![false; m.tools.len()];
    for n in &m.nodes {
        if matches!(
            n.kind,
            NodeKind::Model | NodeKind::Tools | NodeKind::ToolsPlain
        ) {
            // a model node's `hosted` calls too: the provider's model writes their arguments, and
            // a model node's own code runs them with what it has, the model's answer included
            for &t in n.tools.iter().chain(&n.hosted) {
                out[t] = true;
            }
        }
    }
    out
}

/// The qualified ids of the nodes whose code runs `t` with what a model wrote.
fn written_by(m: &FlatModel, t: ToolIx) -> Vec<String> {
    m.nodes
        .iter()
        .filter(|n| n.model_written.iter().any(|(w, _)| *w == t))
        .map(|n| format!("'{}'", n.qid))
        .collect()
}

/// QG017/QG018 on a tool no model is offered, whose arguments a step's code takes from what a
/// model wrote: the message says where, and the fix is in that code (taking the tool out of the
/// model's tools would change nothing).
fn written_fix(f: &mut Finding, rule: RuleId, tool: &str, nodes: &[String]) {
    let at = nodes.join(", ");
    f.message.push_str(&format!(
        "; node {at} runs it with what a model wrote (a tool call's arguments or a message's text)"
    ));
    f.fix = if rule == RuleId::QG017 {
        format!(
            "In node {at}, stop running what the model wrote through '{tool}': build what it runs \
             from parameters the code checks; where a model must write code, run it in an isolated \
             sandbox with no credentials and no network, and have a person confirm each call."
        )
    } else {
        format!(
            "In node {at}, check what the model wrote against a closed set before passing it to \
             '{tool}' (an allow-list of destinations, a path under a fixed root, a parameterised \
             query with the model's text as a value), or have the tool build the value itself."
        )
    };
}

/// The declarations QG104 compares: (word, present).
fn declared(m: &FlatModel, t: ToolIx) -> [(&'static str, bool); 4] {
    let d = &m.tools[t];
    let order = !d.order.after.is_empty() || !d.order.not_after.is_empty();
    [
        ("at_most", d.order.at_most.is_some()),
        ("checks", d.has_checks),
        ("spend", d.has_spend),
        ("order", order),
    ]
}

/// QG104: per agent (the graph's nodes with no agent form one group), a write lacking a
/// declaration every other write of the agent has (at least one other write).
fn peers(m: &FlatModel) -> Vec<Finding> {
    let mut agents: BTreeMap<String, Vec<ToolIx>> = BTreeMap::new();
    for n in m.nodes.iter().filter(|n| !n.called().is_empty()) {
        let writes = agents
            .entry(n.agent.clone().unwrap_or_default())
            .or_default();
        for &t in n.called() {
            if m.tools[t].is_write() && !writes.contains(&t) {
                writes.push(t);
            }
        }
    }
    let mut out = Vec::new();
    for (agent, writes) in &agents {
        if writes.len() < 2 {
            continue;
        }
        for &t in writes {
            let mine = declared(m, t);
            let missing: Vec<&str> = mine
                .iter()
                .enumerate()
                .filter(|(i, (_, has))| {
                    !has && writes
                        .iter()
                        .filter(|&&o| o != t)
                        .all(|&o| declared(m, o)[*i].1)
                })
                .map(|(_, (w, _))| *w)
                .collect();
            if missing.is_empty() {
                continue;
            }
            let d = &m.tools[t];
            let detail = missing
                .iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(" and ");
            let mut f = on_tool(RuleId::QG104, d, &detail);
            if !agent.is_empty() {
                f.message = format!("{} (agent '{agent}')", f.message);
            }
            if !out.iter().any(|o: &Finding| o.fingerprint == f.fingerprint) {
                out.push(f);
            }
        }
    }
    out
}

/// QG107: every `remote` node whose channel is missing or undeclared, or whose `auth` is not one
/// SPEC 2.3 names as authentication (`mtls`, `oauth2`, `signed_messages`): absent, empty, `none`
/// or another word.
fn channels(m: &FlatModel, cat: &Catalogue) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in m.nodes.iter().filter(|n| n.kind == NodeKind::Remote) {
        let why = match &n.channel {
            None => "it names no channel".to_string(),
            Some(c) => match cat.channels.iter().find(|(name, _)| name == c) {
                None => format!("its channel '{c}' is not declared in the catalogue"),
                Some((_, auth)) => {
                    let word = auth.as_deref().map(|a| a.trim().to_ascii_lowercase());
                    match word.as_deref() {
                        Some("mtls" | "oauth2" | "signed_messages") => continue,
                        None | Some("") => format!("its channel '{c}' declares no `auth`"),
                        Some("none") => format!("its channel '{c}' declares `auth: none`"),
                        Some(_) => format!(
                            "its channel '{c}' declares `auth: {}`, not one of mtls, oauth2, signed_messages",
                            auth.as_deref().unwrap_or("").trim()
                        ),
                    }
                }
            },
        };
        let mut f = finding(
            Subject {
                rule: RuleId::QG107,
                obligation: None,
                subject: n.qid.clone(),
                tool: None,
                node: Some(n.qid.clone()),
                location: Primary::Line(n.loc),
            },
            None,
            Vec::new(),
            &[],
        );
        f.message = format!("{} ({why})", f.message);
        out.push(f);
    }
    out
}
