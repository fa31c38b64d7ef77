//! The runtime lints (SPEC 6): warnings the runtime itself would give, which never block.
//! Order, as the seed prints them: per tool in catalogue order `write_not_retry_safe`,
//! `write_without_result_schema`, `compensation_not_retry_safe`; then `compensation_out_of_reach`,
//! `interrupt_confirms_nothing`, `asked_twice`, `tool_never_bound`, `unknown_word`; first of all
//! `kind_unset` (a tool whose entry says `kind: null`, read as a write until it is declared).

use crate::findings::Lint;
use crate::input::ir::{Catalogue, Compensation};
use crate::model::FlatModel;

/// Every runtime lint of the model and its catalogue.
pub(crate) fn lints(m: &FlatModel, cat: &Catalogue) -> Vec<Lint> {
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
    // compensation_out_of_reach: per region (an agent, a subgraph or the top graph, SPEC 3.1),
    // named by its kind, in order of first appearance. Each region's calls are gathered in one
    // pass over the nodes, and only its called tools are looked at, in ascending order (a scan
    // per region and a search per tool were quadratic in a graph of 20,000 tool nodes, issue 26).
    let mut regions: Vec<usize> = Vec::new();
    let mut calls: Vec<Vec<usize>> = vec![Vec::new(); m.regions.len()];
    let mut seen = vec![false; m.regions.len()];
    for n in &m.nodes {
        if seen.len() <= n.region {
            calls.resize(n.region + 1, Vec::new());
            seen.resize(n.region + 1, false);
        }
        if !seen[n.region] {
            seen[n.region] = true;
            regions.push(n.region);
        }
        calls[n.region].extend(n.called().iter().copied());
    }
    for r in regions {
        let mut called = std::mem::take(&mut calls[r]);
        called.sort_unstable();
        called.dedup();
        for &ti in &called {
            let t = &m.tools[ti];
            let Compensation::Tool(c) = &t.compensation else {
                continue;
            };
            let Some(ci) = m.tool_ix(&c.name) else {
                continue;
            };
            if called.binary_search(&ci).is_err() {
                let (who, name) = m
                    .regions
                    .get(r)
                    .map_or(("graph", ""), |g| (g.kind.as_str(), g.name.as_str()));
                out.push(lint(
                    "compensation_out_of_reach",
                    &t.name,
                    format!(
                        "{who} '{}' can call it but not '{}', which undoes it, so a run of that {who} cannot undo it",
                        name, c.name
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
            if !n.can_call(t) {
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
    out.extend(asked_twice(m));
    let mut bound = vec![false; m.tools.len()];
    for &t in m.nodes.iter().flat_map(|n| n.tools.iter().chain(&n.hosted)) {
        if let Some(b) = bound.get_mut(t) {
            *b = true;
        }
    }
    for (ti, t) in m.tools.iter().enumerate() {
        if !bound[ti] {
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

/// `asked_twice` (issue 29 item 4): the author's own review of a write (an approval node's
/// `interrupt()`, `HumanInTheLoopMiddleware`, a `before`/`after`/`inside`/`call` interrupt naming
/// it) where every node that can call the write is guarded. The tool check asks the person about
/// every write (SPEC 12.1 rule 8), so the person is asked twice for one call; one question is
/// enough, and the guard's is the one the proof credits at the call (it shows the exact arguments
/// and is recorded in the guard's history). A write some node calls plainly keeps its review
/// unremarked: there it is the only question. One lint per interrupt, in node order, at the
/// interrupt's line.
fn asked_twice(m: &FlatModel) -> Vec<Lint> {
    let mut plain = vec![false; m.tools.len()];
    let mut guarded: Vec<Option<&str>> = vec![None; m.tools.len()];
    for n in &m.nodes {
        for t in n.plain_calls() {
            plain[t] = true;
        }
        if n.guarded() {
            for &t in n.called() {
                guarded[t].get_or_insert(n.qid.as_str());
            }
        }
    }
    let mut out = Vec::new();
    for n in &m.nodes {
        for p in n.on_enter.iter().chain(&n.on_leave).chain(&n.reviews) {
            let Some(t) = p.tool else { continue };
            let (Some(at), false) = (guarded[t], plain[t]) else {
                continue;
            };
            if !m.tools[t].is_write() {
                continue;
            }
            let name = &m.tools[t].name;
            out.push(Lint {
                id: "asked_twice",
                tool: name.clone(),
                message: format!(
                    "the interrupt {} '{}' asks the person about '{name}', and the guard asks again at each call on '{at}' \
                     (the tool check confirms every write): one question is enough; drop this review \
                     (the approval node, `HumanInTheLoopMiddleware`'s `interrupt_on` entry for '{name}', \
                     or the `interrupt()` in the tool) and keep the guard's, which shows the exact call",
                    p.when.as_str(),
                    n.qid
                ),
                loc: Some(p.loc),
            });
        }
    }
    out
}
