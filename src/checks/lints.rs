//! The runtime lints (SPEC 6): warnings the runtime itself would give, which never block.
//! Order, as the seed prints them: per tool in catalogue order `write_not_retry_safe`,
//! `write_without_result_schema`, `compensation_not_retry_safe`; then `compensation_out_of_reach`,
//! `interrupt_confirms_nothing`, `tool_never_bound`, `unknown_word`; first of all `kind_unset`
//! (a tool whose entry says `kind: null`, read as a write until it is declared).

use crate::findings::Lint;
use crate::ir::{Catalogue, Compensation};
use crate::model::FlatModel;

/// Every runtime lint of the model and its catalogue.
pub fn lints(m: &FlatModel, cat: &Catalogue) -> Vec<Lint> {
    let mut out = Vec::new();
    let lint = |id, tool: &str, message: String, loc| Lint {
        id,
        tool: tool.to_string(),
        message,
        loc: Some(loc),
    };
    for t in m.tools.iter().filter(|t| t.kind_unset) {
        out.push(lint(
            "kind_unset",
            &t.name,
            "`kind: null`: not yet declared, so it is read as a write; set `kind: read` or `kind: write`".into(),
            t.loc,
        ));
    }
    for t in &m.tools {
        if !t.is_write() {
            continue;
        }
        if !t.idempotent {
            out.push(lint(
                "write_not_retry_safe",
                &t.name,
                "a write with no idempotency, so an ambiguous failure goes to a person".into(),
                t.loc,
            ));
        }
        if !t.has_result_schema {
            out.push(lint(
                "write_without_result_schema",
                &t.name,
                "a write with no result schema, so its outcome could not be reported".into(),
                t.loc,
            ));
        }
        if let Compensation::Tool(c) = &t.compensation {
            if m.tool_ix(&c.name).is_some_and(|u| !m.tools[u].idempotent) {
                out.push(lint(
                    "compensation_not_retry_safe",
                    &t.name,
                    format!("'{}' undoes it and is not retry-safe", c.name),
                    t.loc,
                ));
            }
        }
    }
    // compensation_out_of_reach: per agent (or region) in order of first appearance.
    let mut regions: Vec<usize> = Vec::new();
    for n in &m.nodes {
        if !regions.contains(&n.region) {
            regions.push(n.region);
        }
    }
    for r in regions {
        let calls: Vec<usize> = m
            .nodes
            .iter()
            .filter(|n| n.region == r && n.calls_tools())
            .flat_map(|n| n.tools.iter().copied())
            .collect();
        let is_agent = m.nodes.iter().any(|n| n.region == r && n.agent.is_some());
        for (ti, t) in m.tools.iter().enumerate() {
            let Compensation::Tool(c) = &t.compensation else {
                continue;
            };
            let Some(ci) = m.tool_ix(&c.name) else {
                continue;
            };
            if calls.contains(&ti) && !calls.contains(&ci) {
                let who = if is_agent { "agent" } else { "graph" };
                out.push(lint(
                    "compensation_out_of_reach",
                    &t.name,
                    format!(
                        "{who} '{}' can call it but not '{}', which undoes it, so a run of that {who} cannot undo it",
                        m.regions[r], c.name
                    ),
                    t.loc,
                ));
            }
        }
    }
    for n in &m.nodes {
        for p in n.on_enter.iter().chain(&n.on_leave) {
            if p.tool.is_none() {
                out.push(lint(
                    "interrupt_confirms_nothing",
                    &n.qid,
                    format!(
                        "the interrupt {} '{}' names no tool, so the person's yes confirms no call",
                        p.when.as_str(),
                        n.qid
                    ),
                    p.loc,
                ));
            }
        }
        for p in &n.reviews {
            let Some(t) = p.tool else { continue };
            if !(n.calls_tools() && n.tools.contains(&t)) {
                out.push(lint(
                    "interrupt_confirms_nothing",
                    &n.qid,
                    format!(
                        "the interrupt call '{}' reviews the calls of '{}', which '{}' does not call, so the person's answers confirm no call: put it on the node that calls '{}'",
                        n.qid, m.tools[t].name, n.qid, m.tools[t].name
                    ),
                    p.loc,
                ));
            }
        }
    }
    for (ti, t) in m.tools.iter().enumerate() {
        if !m.nodes.iter().any(|n| n.tools.contains(&ti)) {
            out.push(lint(
                "tool_never_bound",
                &t.name,
                "in the catalogue, but no node offers or binds it".into(),
                t.loc,
            ));
        }
    }
    for u in &cat.unknown {
        out.push(lint(
            "unknown_word",
            &u.tool,
            match &u.suggestion {
                Some(near) => format!(
                    "'{}' is not a word of the catalogue (did you mean '{near}'?): it is kept and no rule reads it",
                    u.word
                ),
                None => format!("'{}' is not a word of the catalogue: it is kept and no rule reads it", u.word),
            },
            u.loc,
        ));
    }
    out
}
