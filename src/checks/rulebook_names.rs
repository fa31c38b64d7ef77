//! QG010's name half (issue 20): nothing a Colang rulebook names may vanish silently.
//!
//! - An `execute` (1.0 `execute x`, `$r = execute x(...)`, `bot execute_x`; 2.x `await XAction`)
//!   of a name that is no catalogue tool, no action NeMo Guardrails provides itself
//!   ([`crate::rulebook::library`]) and no action the configuration defines in Python
//!   ([`crate::rulebook::actions`]) runs nothing: NeMo skips it or waits for it for ever, and the
//!   guard around it governs nothing.
//! - A flow called (1.0 `do`; 2.x `await`, `start`, `activate`, or named alone) that no file of
//!   the rulebook defines and NeMo's library does not either is never run.
//!
//! Each is a finding at the line that names it, with "did you mean" when a known name is a small
//! edit away ([`library::nearest`]) and, for an action, the catalogue entry of the tool probably
//! meant as related location.

use std::collections::HashSet;

use super::rulebook::{rb_finding, Context};
use crate::findings::{Finding, Step, StepKind};
use crate::ir::ToolDef;
use crate::rulebook::compile::Place;
use crate::rulebook::flows::Version;
use crate::rulebook::gate::ToolNames;
use crate::rulebook::library::{self, action_key};

/// The findings on the executes and called flows of a Colang rulebook (none for a sheet, whose
/// rules QG010 reads in [`super::rulebook`]).
pub fn findings(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let c = &ctx.loaded.compiled;
    if c.files.iter().all(|f| f.version == "sheet") {
        return;
    }
    actions(ctx, out);
    flows(ctx, out);
}

fn actions(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let c = &ctx.loaded.compiled;
    let tools = &ctx.model.tools;
    let names = ToolNames::new(tools);
    let defined: HashSet<String> = c.defined_actions.iter().map(|a| action_key(a)).collect();
    let mut seen = HashSet::new();
    for e in &c.executes {
        if names.of(&e.action).is_some()
            || library::is_action(&e.action)
            || c.defined_actions.contains(&e.action)
            || defined.contains(&action_key(&e.action))
            || !seen.insert(e.action.clone())
        {
            continue;
        }
        let camel = e.action.ends_with("Action");
        // Every known action, spelled as the execute spells actions.
        let spell = |n: &str| {
            if camel && !n.ends_with("Action") {
                format!("{}Action", to_camel(&action_key(n)))
            } else {
                n.to_string()
            }
        };
        let lib = library::library();
        let candidates: Vec<(String, Option<&ToolDef>)> = tools
            .iter()
            .map(|t| (spell(&t.name), Some(t)))
            .chain(
                c.defined_actions
                    .iter()
                    .chain(&lib.actions)
                    .chain(lib.umim_actions.iter().filter(|_| camel))
                    .map(|a| (spell(a), None)),
            )
            .collect();
        let near = library::nearest(&e.action, candidates.iter().map(|(n, _)| n.as_str()));
        let meant = near.and_then(|n| candidates.iter().find(|(c, _)| c == n));
        let mut detail = format!(
            "no tool of the catalogue, no action of NeMo Guardrails {} and no `@action` of the configuration's actions.py or actions/ is called '{}', so nothing runs and the guard around it governs nothing",
            lib.version,
            e.action
        );
        if let Some(n) = near {
            detail.push_str(&format!("; did you mean `{n}`?"));
        }
        out.push(named_finding(
            ctx,
            format!("execute {}", e.action),
            meant.and_then(|(_, t)| *t),
            e.at,
            "no-such-action",
            &detail,
        ));
    }
}

fn flows(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let c = &ctx.loaded.compiled;
    let defined: Vec<&str> = c
        .uses
        .iter()
        .filter(|u| u.how == "flow")
        .map(|u| u.name.as_str())
        .collect();
    let mut seen = HashSet::new();
    for u in c.uses.iter().filter(|u| u.how == "call") {
        let version = match c.files.get(u.at.file).map(|f| f.version.as_str()) {
            Some("2.x") => Version::V2,
            _ => Version::V1,
        };
        let lib = library::flows(version);
        if u.name.starts_with('$')
            || defined.contains(&u.name.as_str())
            || lib.iter().any(|f| *f == u.name)
            || !seen.insert(u.name.clone())
        {
            continue;
        }
        let near = library::nearest(
            &u.name,
            defined.iter().copied().chain(lib.iter().map(String::as_str)),
        );
        let mut detail = format!(
            "no file of the rulebook defines it and NeMo Guardrails' library ({}) has no flow of that name, so nothing it holds applies",
            library::library().version
        );
        if let Some(n) = near {
            detail.push_str(&format!("; did you mean `{n}`?"));
        }
        out.push(named_finding(
            ctx,
            format!("the flow '{}'", u.name),
            None,
            u.at,
            "no-such-flow",
            &detail,
        ));
    }
}

fn named_finding(
    ctx: &Context<'_>,
    subject: String,
    meant: Option<&ToolDef>,
    at: Place,
    key: &str,
    detail: &str,
) -> Finding {
    let mut s = Step::new(StepKind::Flow, &subject, 1);
    s.loc = Some(ctx.loc(at));
    s.violation = true;
    let mut f = rb_finding(
        "QG010",
        subject,
        None,
        ctx.loc(at),
        key,
        vec![s],
        &[("detail", detail)],
    );
    if let Some(t) = meant {
        f.related
            .push((t.loc, format!("'{}', probably meant, is declared here", t.name)));
    }
    f
}

/// `close_ticket` → `CloseTicket`.
fn to_camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}
