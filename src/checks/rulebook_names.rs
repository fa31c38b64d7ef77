//! QG010's name half (issue 20): nothing a Colang rulebook names may vanish silently.
//!
//! - An `execute` (1.0 `execute x`, `$r = execute x(...)`, `bot execute_x`; 2.x `await XAction`)
//!   of a name that is no catalogue tool, no action NeMo Guardrails provides itself
//!   ([`crate::rulebook::library`]) and no action the configuration defines in Python
//!   ([`crate::rulebook::actions`]) runs nothing: NeMo skips it or waits for it for ever, and the
//!   guard around it governs nothing.
//! - A flow called (1.0 `do`; 2.x `await`, `start`, `activate`, or named alone) that no file of
//!   the rulebook defines and NeMo's library does not either is never run (under 2.x `llm
//!   continuation`, which has the model write undefined flows, only one a small edit from a
//!   known flow, a typo, is a finding); so is a flow `config.yml` lists as a rail (`rails:
//!   input: flows: [...]`), which NeMo would otherwise pass over.
//!
//! Each is a finding at the line that names it, with "did you mean" when a known name is a small
//! edit away ([`nearest`]) and, for an action, the catalogue entry of the tool probably
//! meant as related location.

use crate::rules::RuleId;
use std::collections::HashSet;

use super::rb_finding;
use crate::findings::{Finding, Step, StepKind};
use crate::input::ir::ToolDef;
use crate::input::source::Loc;
use crate::input::suggest::nearest;
use crate::rulebook::compile::{Compiled, Place};
use crate::rulebook::flows::Version;
use crate::rulebook::gate::ToolNames;
use crate::rulebook::library::{self, action_key};

/// What a name the rulebook writes turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// An executed action that nothing defines.
    Action,
    /// A called flow that nothing defines.
    Flow,
    /// A flow `config.yml` lists as a rail that nothing defines.
    Rail,
}

/// A name the rulebook writes that nothing defines, with the nearest known name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// An action or a flow.
    pub what: Missing,
    /// The name as written.
    pub name: String,
    /// The statement that names it (the first, when it is named more than once).
    pub at: Place,
    /// The known name a small edit away, spelled as the statement spells names.
    pub near: Option<String>,
    /// The catalogue tool (index into `tools`) that `near` is, when it is one.
    pub meant: Option<usize>,
}

/// The executes and calls of the Colang rulebook `c` that nothing defines, given the catalogue
/// `tools` (none for a sheet, whose rules QG010 reads in the rulebook checks, `rulebook.rs`).
pub fn unknown_names(c: &Compiled, tools: &[ToolDef]) -> Vec<Unknown> {
    let mut out = Vec::new();
    if c.files.iter().all(|f| f.version == "sheet") {
        return out;
    }
    actions(c, tools, &mut out);
    flows(c, &mut out);
    out
}

/// QG010's findings on what [`unknown_names`] finds in `compiled` given the catalogue `tools`;
/// `loc` places a statement in the source map.
pub fn findings(
    compiled: &Compiled,
    tools: &[ToolDef],
    loc: &dyn Fn(Place) -> Loc,
    out: &mut Vec<Finding>,
) {
    let lib = library::library();
    for u in unknown_names(compiled, tools) {
        let (subject, key, mut detail) = match u.what {
            Missing::Action => (
                format!("execute {}", u.name),
                "no-such-action",
                format!(
                    "no tool of the catalogue, no action of NeMo Guardrails {} and no `@action` of the configuration's actions.py or actions/ is called '{}', so nothing runs and the guard around it governs nothing",
                    lib.version, u.name
                ),
            ),
            Missing::Flow | Missing::Rail => (
                format!("the flow '{}'", u.name),
                "no-such-flow",
                format!(
                    "{}no file of the rulebook defines it and NeMo Guardrails' library ({}) has no flow of that name, so nothing it holds applies",
                    if u.what == Missing::Rail {
                        "config.yml lists it as a rail, but "
                    } else {
                        ""
                    },
                    lib.version
                ),
            ),
        };
        if let Some(n) = &u.near {
            detail.push_str(&format!("; did you mean `{n}`?"));
        }
        let meant = u.meant.and_then(|i| tools.get(i));
        out.push(named_finding(loc(u.at), subject, meant, key, &detail));
    }
}

fn actions(c: &Compiled, tools: &[ToolDef], out: &mut Vec<Unknown>) {
    let names = ToolNames::new(tools);
    let defined: HashSet<String> = c.defined_actions.iter().map(|a| action_key(a)).collect();
    let lib = library::library();
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
        let candidates: Vec<(String, Option<usize>)> = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (spell(&t.name), Some(i)))
            .chain(
                c.defined_actions
                    .iter()
                    .chain(&lib.actions)
                    .chain(lib.umim_actions.iter().filter(|_| camel))
                    .map(|a| (spell(a), None)),
            )
            .collect();
        let near = nearest(&e.action, candidates.iter().map(|(n, _)| n.as_str()));
        let meant = near.and_then(|n| candidates.iter().find(|(c, _)| c == n));
        out.push(Unknown {
            what: Missing::Action,
            name: e.action.clone(),
            at: e.at,
            near: near.map(str::to_string),
            meant: meant.and_then(|(_, t)| *t),
        });
    }
}

fn flows(c: &Compiled, out: &mut Vec<Unknown>) {
    let defined: Vec<&str> = c
        .uses
        .iter()
        .filter(|u| u.how == "flow")
        .map(|u| u.name.as_str())
        .collect();
    // NeMo's 2.x `llm continuation` (llm.co's `continuation on undefined flow`) has the model
    // write a flow that is started but defined nowhere: there an undefined flow is a finding
    // only when it is a small edit from a known one (a typo, not a flow left to the model).
    let generated = c.uses.iter().any(|u| {
        u.how == "call"
            && (u.name == "llm continuation" || u.name == "continuation on undefined flow")
    });
    let mut seen = HashSet::new();
    // The rulebook's version, for a rail config.yml lists.
    let colang = c
        .files
        .iter()
        .find(|f| f.version != "config")
        .map_or("1.0", |f| f.version.as_str());
    for u in c.uses.iter().filter(|u| u.how == "call" || u.how == "rail") {
        let version = match c.files.get(u.at.file).map(|f| f.version.as_str()) {
            Some("2.x") => Version::V2,
            Some("config") if colang == "2.x" => Version::V2,
            _ => Version::V1,
        };
        let lib = library::flows(version);
        if u.name.starts_with('$')
            || defined.contains(&u.name.as_str())
            || lib.contains(&u.name)
            || !seen.insert(u.name.clone())
        {
            continue;
        }
        let near = nearest(
            &u.name,
            defined
                .iter()
                .copied()
                .chain(lib.iter().map(String::as_str)),
        );
        if generated && version == Version::V2 && near.is_none() {
            continue;
        }
        out.push(Unknown {
            what: if u.how == "rail" {
                Missing::Rail
            } else {
                Missing::Flow
            },
            name: u.name.clone(),
            at: u.at,
            near: near.map(str::to_string),
            meant: None,
        });
    }
}

fn named_finding(
    at: Loc,
    subject: String,
    meant: Option<&ToolDef>,
    key: &str,
    detail: &str,
) -> Finding {
    let mut s = Step::new(StepKind::Flow, &subject, 1);
    s.loc = Some(at);
    s.violation = true;
    let mut f = rb_finding(
        RuleId::QG010,
        subject,
        None,
        at,
        key,
        vec![s],
        &[("detail", detail)],
    );
    if let Some(t) = meant {
        f.related.push((
            t.loc,
            format!("'{}', probably meant, is declared here", t.name),
        ));
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
