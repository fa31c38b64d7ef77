//! The rulebook rules (SPEC 5): QG001 (rulebook side), QG002, QG004 (rulebook side), QG005,
//! QG007, QG008, QG009, QG010 and QG022, read from the compiled rulebook, the catalogue, the
//! flattened graph and agent.yaml's facts. Path conditions are decided with Z3
//! ([`crate::rulebook::logic`]); a model of the condition is the witness: the facts that let the
//! call through, after the flow lines on the way.

use crate::rules::RuleId;
use std::collections::{HashMap, HashSet};

use rustc_hash::FxHashMap;

use super::{finding, rb_finding, Subject};
use crate::findings::{fingerprint, Evidence, Finding, Primary, Step, StepKind};
use crate::input::error::InputError;
use crate::input::ir::{Fact, ToolDef};
use crate::input::source::Loc;
use crate::model::FlatModel;
use crate::rulebook::advisories::Advisory;
use crate::rulebook::budget::{thousands, Budget};
use crate::rulebook::compile::{Compiled, Hop, Place, Route};
use crate::rulebook::cond::{Atoms, Cond};
use crate::rulebook::gate::ToolNames;
use crate::rulebook::load::Loaded;
use crate::rulebook::logic::{self, implies_sampled, samples, sat, Answer, Assignment};
use crate::rules;

/// Messages NeMo Guardrails' runtime and its own rails library say themselves (nemoguardrails
/// 0.24.1, `library/*/flows.v1.co`), and `refuse`, the router's refusal naming the rule (seed
/// chapter 45): a `bot` line naming one is not QG009. `...` asks the model for the reply on
/// purpose.
pub(crate) const RUNTIME_MESSAGES: &[&str] = &[
    "refuse",
    "...",
    "refuse to respond",
    "inform answer unknown",
    "inform cannot engage with sensitive content",
    "inform cannot engage with inappropriate content",
    "inform cannot engage in abusive or harmful behavior",
    "inform cannot engage in self harm behavior",
    "inform answer prone to hallucination",
    "response untrustworthy",
    "refuse bloated input",
    "inform retrieval bloated",
];

/// What the rulebook rules read.
pub(crate) struct Context<'a> {
    /// The rulebook, compiled.
    pub loaded: &'a Loaded,
    /// The flattened graph (which tools a node binds).
    pub model: &'a FlatModel,
    /// agent.yaml's facts.
    pub facts: &'a [Fact],
    /// Rails with published advisories.
    pub advisories: &'a [Advisory],
    /// Implication questions QG002 may put to Z3 ([`crate::rulebook::budget::Budgets::implications`]);
    /// the routes it could not compare are undecided (QG006).
    pub implications: usize,
}

impl Context<'_> {
    pub(crate) fn loc(&self, p: Place) -> Loc {
        let file = self.loaded.file_ids.get(p.file).copied().unwrap_or(0);
        Loc::new(file, p.line as u32, p.column as u32)
    }

    fn c(&self) -> &Compiled {
        &self.loaded.compiled
    }

    /// The route's flow lines as witness steps, the last (the execute) marked as the violation.
    fn route_steps(&self, via: &[Hop]) -> Vec<Step> {
        let n = via.len();
        via.iter()
            .enumerate()
            .map(|(k, h)| {
                let mut s = Step::new(StepKind::Flow, &h.what, 1);
                s.loc = Some(self.loc(h.at));
                s.violation = k + 1 == n;
                s
            })
            .collect()
    }

    /// A model's atom values as witness steps, each at its fact's declaration when it is one.
    fn fact_steps(&self, atoms: &Atoms, model: &Assignment) -> Vec<Step> {
        model
            .iter()
            .filter_map(|&(a, v)| {
                let atom = atoms.list.get(a)?;
                let mut s = Step::new(StepKind::Fact, &atom.text, 1);
                s.yes = Some(v);
                s.loc = atom
                    .var
                    .as_ref()
                    .and_then(|var| self.facts.iter().find(|f| &f.name.name == var))
                    .map(|f| f.name.loc);
                Some(s)
            })
            .collect()
    }
}

/// The routes of each tool, found once (tools by name, as the tool check finds them).
struct Routes<'a> {
    names: ToolNames<'a>,
    tools: &'a [ToolDef],
    by_tool: Vec<Vec<&'a Route>>,
}

impl<'a> Routes<'a> {
    fn new(ctx: &'a Context<'a>) -> Routes<'a> {
        let tools = &ctx.model.tools;
        let names = ToolNames::new(tools);
        let mut by_tool = vec![Vec::new(); tools.len()];
        for r in &ctx.c().routes {
            if let Some(u) = names.of(&r.action) {
                by_tool[u].push(r);
            }
        }
        Routes {
            names,
            tools,
            by_tool,
        }
    }

    /// The tool an action names.
    fn tool(&self, action: &str) -> Option<&'a ToolDef> {
        self.names.of(action).map(|u| &self.tools[u])
    }

    /// The routes that execute `t` (a tool of this name).
    fn of(&self, t: &ToolDef) -> &[&'a Route] {
        self.names
            .of(&t.name)
            .and_then(|u| self.by_tool.get(u))
            .map_or(&[], Vec::as_slice)
    }
}

/// Every rulebook finding but QG005 (which [`unshippable`] gives) and QG004's graph side.
pub(crate) fn findings(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let routes = Routes::new(ctx);
    requires(ctx, &routes, &mut out);
    escapable(ctx, &routes, &mut out);
    ungoverned(ctx, &routes, &mut out);
    read_before_written(ctx, &mut out);
    bot_lines(ctx, &mut out);
    dead(ctx, &routes, &mut out);
    super::rulebook_names::findings(
        &ctx.loaded.compiled,
        &ctx.model.tools,
        &|p| ctx.loc(p),
        &mut out,
    );
    advisories(ctx, &mut out);
    out
}

/// QG001 (rulebook): a tool declaring `requires` executed on a route whose condition does not
/// imply them.
fn requires(ctx: &Context<'_>, routes: &Routes<'_>, out: &mut Vec<Finding>) {
    let c = ctx.c();
    // The required facts as atoms: those the rulebook reads, and fresh ones for those it never
    // reads (implied by no condition but `False`).
    let mut atoms = c.atoms.clone();
    for t in ctx.model.tools.iter().filter(|t| !t.requires.is_empty()) {
        let req = Cond::And(
            t.requires
                .iter()
                .map(|r| atoms.read(&format!("${r}")))
                .collect(),
        );
        let req_text: Vec<String> = t.requires.iter().map(|r| format!("${r}")).collect();
        let mut seen = HashSet::new();
        for r in routes.of(t) {
            if !seen.insert((r.at, r.flow.clone())) {
                continue;
            }
            let not_req = req.clone().negate();
            let Answer::Sat(model) = sat(&[&r.cond, &not_req]) else {
                continue;
            };
            let cond = c.atoms.show(&r.cond);
            let detail = format!(
                "under `{cond}`, which does not imply `{}` that it requires: {}",
                req_text.join(" and "),
                shown_model(&atoms, &model)
            );
            let node = format!("flow {}", r.flow);
            let mut w = ctx.route_steps(&r.via);
            w.extend(ctx.fact_steps(&atoms, &model));
            let mut f = rb_finding(
                RuleId::QG001,
                t.name.clone(),
                Some(t),
                ctx.loc(r.at),
                &format!("flow:{}", r.flow),
                w,
                &[("node", &node), ("detail", &detail)],
            );
            if let Some(rule) = Some(RuleId::QG001.rule()) {
                // The template's `{node}` is the flow here (a rulebook finding has no graph node).
                f.message = rule.message_with(&[
                    ("tool", &t.name),
                    ("node", &node),
                    ("subject", &t.name),
                    ("detail", &detail),
                ]);
                if let Some(fr) = &rule.fix_rulebook {
                    f.fix = rules::fill(
                        fr,
                        &[("tool", &t.name), ("node", &node), ("subject", &t.name)],
                    );
                    f.fix.push_str(&format!(
                        " Here: add `{}` to the condition of flow '{}' at {}.",
                        req_text.join(" and "),
                        r.flow,
                        ctx.loaded
                            .compiled
                            .files
                            .get(r.at.file)
                            .map_or("?".into(), |fl| format!("{}:{}", fl.path, r.at.line))
                    ));
                }
            }
            out.push(f);
        }
    }
}

fn shown_model(atoms: &Atoms, model: &Assignment) -> String {
    if model.is_empty() {
        return "any facts let it through".into();
    }
    let parts: Vec<String> = model
        .iter()
        .filter_map(|&(a, v)| {
            atoms
                .list
                .get(a)
                .map(|x| format!("{} = {}", x.text, if v { "true" } else { "false" }))
        })
        .collect();
    format!("{} lets the call through", parts.join(", "))
}

/// QG002: an `else` executing what its `if` guarded, and a route weaker than another.
fn escapable(ctx: &Context<'_>, routes_of: &Routes<'_>, out: &mut Vec<Finding>) {
    let c = ctx.c();
    let mut flagged: HashSet<Place> = HashSet::new();
    for e in &c.else_execs {
        let Some(t) = routes_of.tool(&e.action) else {
            continue;
        };
        if !flagged.insert(e.else_at) {
            continue;
        }
        let file = c.files.get(e.if_at.file).map_or("?", |f| f.path.as_str());
        let detail = format!(
            "the `else` of `if {}` ({file}:{}) executes it as its `if` branch does ({file}:{}), so the condition guards nothing",
            e.cond, e.if_at.line, e.then_at.line
        );
        let mut w = Vec::new();
        for (p, what) in [
            (e.if_at, format!("if {}", e.cond)),
            (e.else_at, format!("else: execute {}", e.action)),
        ] {
            let mut s = Step::new(StepKind::Flow, &what, 1);
            s.loc = Some(ctx.loc(p));
            w.push(s);
        }
        if let Some(last) = w.last_mut() {
            last.violation = true;
        }
        out.push(rb_finding(
            RuleId::QG002,
            t.name.clone(),
            Some(t),
            ctx.loc(e.else_at),
            &format!("else:{}:{}", file, e.cond),
            w,
            &[("detail", &detail)],
        ));
    }
    // Routes strictly weaker than another route of the same tool.
    let mut ask = Implications::new(ctx.implications);
    for t in &ctx.model.tools {
        // A route no facts can satisfy is no way around anything (and implies everything).
        let mut satisfiable: HashMap<&Cond, bool> = HashMap::new();
        let routes: Vec<&Route> = routes_of
            .of(t)
            .iter()
            .copied()
            .filter(|r| {
                *satisfiable
                    .entry(&r.cond)
                    .or_insert_with(|| logic::satisfiable(&r.cond))
            })
            .collect();
        if routes.len() < 2 {
            continue;
        }
        // The distinct conditions, in order of first appearance, each with its first route:
        // the first route stronger than a route is the first route of the first condition
        // stronger than its condition, so each condition is compared once.
        let conds = Distinct::new(&routes);
        ask.next_tool();
        let mut stronger_of: Vec<Option<Stronger>> = vec![None; conds.list.len()];
        let mut undecided: Vec<&Route> = Vec::new();
        for (k, &r) in routes.iter().enumerate() {
            if flagged.contains(&r.at) {
                continue;
            }
            let i = conds.of_route[k];
            let found = *stronger_of[i].get_or_insert_with(|| conds.stronger(i, &mut ask));
            let s = match found {
                Stronger::Route(j) => conds.list[j].1,
                Stronger::Undecided => {
                    undecided.push(r);
                    continue;
                }
                Stronger::None => continue,
            };
            flagged.insert(r.at);
            let not_s = s.cond.clone().negate();
            let model = match sat(&[&r.cond, &not_s]) {
                Answer::Sat(m) => m
                    .into_iter()
                    .filter(|(a, _)| *a < c.atoms.list.len())
                    .collect(),
                _ => Vec::new(),
            };
            let file = |p: Place| {
                c.files
                    .get(p.file)
                    .map_or("?".to_string(), |f| format!("{}:{}", f.path, p.line))
            };
            let detail = format!(
                "flow '{}' ({}) executes it under `{}`, while flow '{}' ({}) requires `{}`; {}",
                r.flow,
                file(r.at),
                c.atoms.show(&r.cond),
                s.flow,
                file(s.at),
                c.atoms.show(&s.cond),
                shown_model(&c.atoms, &model)
            );
            let mut w = ctx.route_steps(&r.via);
            w.extend(ctx.fact_steps(&c.atoms, &model));
            out.push(rb_finding(
                RuleId::QG002,
                t.name.clone(),
                Some(t),
                ctx.loc(r.at),
                &format!("weaker:{}:{}", r.flow, c.atoms.show(&r.cond)),
                w,
                &[("detail", &detail)],
            ));
        }
        if let Some(first) = undecided.first() {
            out.push(uncompared(ctx, t, first, undecided.len(), routes.len()));
        }
    }
}

/// What QG002 found stronger than a condition: the first condition strictly stronger (an
/// index into [`Distinct::list`]), none, or no answer within the implication budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stronger {
    Route(usize),
    None,
    Undecided,
}

/// A tool's distinct route conditions.
struct Distinct<'a> {
    /// Each condition, its first route and its [`samples`], in order of first appearance.
    list: Vec<(&'a Cond, &'a Route, u64)>,
    /// The condition of each route, as an index into `list`.
    of_route: Vec<usize>,
}

impl<'a> Distinct<'a> {
    fn new(routes: &[&'a Route]) -> Distinct<'a> {
        let mut index: HashMap<&Cond, usize> = HashMap::new();
        let mut list = Vec::new();
        let of_route = routes
            .iter()
            .map(|r| {
                *index.entry(&r.cond).or_insert_with(|| {
                    list.push((&r.cond, *r, samples(&r.cond)));
                    list.len() - 1
                })
            })
            .collect();
        Distinct { list, of_route }
    }

    /// The first condition strictly stronger than condition `i`.
    fn stronger(&self, i: usize, ask: &mut Implications) -> Stronger {
        let (ci, _, si) = self.list[i];
        let mut unknown = false;
        for (j, &(cj, _, sj)) in self.list.iter().enumerate() {
            if j == i || sj & !si != 0 {
                continue;
            }
            match (
                ask.implies((j, cj, sj), (i, ci, si)),
                ask.implies((i, ci, si), (j, cj, sj)),
            ) {
                (Some(true), Some(false)) => return Stronger::Route(j),
                (Some(false), _) | (_, Some(true)) => {}
                _ => unknown = true,
            }
        }
        if unknown {
            Stronger::Undecided
        } else {
            Stronger::None
        }
    }
}

/// Implications between one tool's distinct route conditions (each `(index, condition,
/// samples)`), each put to Z3 at most once, and at most `budget` in all tools; past it, `None`
/// (undecided). A refuting sample answers without Z3.
struct Implications {
    budget: usize,
    asked: usize,
    known: FxHashMap<(usize, usize), bool>,
}

impl Implications {
    fn new(budget: usize) -> Implications {
        Implications {
            budget,
            asked: 0,
            known: FxHashMap::default(),
        }
    }

    /// Forgets the answers about the last tool's conditions (their indices are reused).
    fn next_tool(&mut self) {
        self.known.clear();
    }

    /// Does condition `a` imply condition `b`? `None` past the budget.
    fn implies(&mut self, a: (usize, &Cond, u64), b: (usize, &Cond, u64)) -> Option<bool> {
        if a.2 & !b.2 != 0 {
            return Some(false);
        }
        if let Some(&v) = self.known.get(&(a.0, b.0)) {
            return Some(v);
        }
        if self.asked >= self.budget {
            return None;
        }
        self.asked += 1;
        let v = implies_sampled(a.1, a.2, b.1, b.2);
        self.known.insert((a.0, b.0), v);
        Some(v)
    }
}

/// QG006: routes of `t` that QG002 could not compare with the others within the implication
/// budget, located at the first; undecided, never clean.
fn uncompared(ctx: &Context<'_>, t: &ToolDef, first: &Route, n: usize, of: usize) -> Finding {
    let flag = Budget::Implications.flag().unwrap_or_default();
    let detail = format!(
        "QG002 could not compare {n} of its {of} rulebook routes with the others (the first at flow '{}'): past the implication budget of {} questions to Z3, so whether a weaker route walks around a stronger one is undecided; raise it with `{flag} N`",
        first.flow,
        thousands(ctx.implications)
    );
    let mut s = Step::new(StepKind::Flow, &format!("execute {}", first.action), 1);
    s.loc = Some(ctx.loc(first.at));
    let mut f = rb_finding(
        RuleId::QG006,
        t.name.clone(),
        Some(t),
        ctx.loc(first.at),
        "uncompared",
        vec![s],
        &[("detail", &detail)],
    );
    f.fix = format!(
        "Raise the implication budget (`{flag} N`) and re-scan; until then QG002 has not decided whether these routes of '{}' are weaker than another.",
        t.name
    );
    // Undecided does not pass (SPEC 8.1): QG002's question, left open, fails its gate.
    f.unproved = vec![RuleId::QG002];
    f
}

/// QG004 (rulebook side): a tool that declares `requires` (the rulebook is meant to decide it)
/// and that no route of the rulebook executes.
fn ungoverned(ctx: &Context<'_>, routes: &Routes<'_>, out: &mut Vec<Finding>) {
    for t in ctx.model.tools.iter().filter(|t| !t.requires.is_empty()) {
        if !routes.of(t).is_empty() {
            continue;
        }
        let mut f = rb_finding(
            RuleId::QG004,
            t.name.clone(),
            Some(t),
            t.loc,
            "ungoverned",
            Vec::new(),
            &[],
        );
        f.message = format!(
            "'{}' requires {} from the rulebook, and no flow of {} executes it: the rest of the check decides it, not a rule",
            t.name,
            t.requires.iter().map(|r| format!("${r}")).collect::<Vec<_>>().join(" and "),
            ctx.loaded.display
        );
        f.severity = super::severity(RuleId::QG004, None);
        out.push(f);
    }
}

/// QG007: a variable read in a condition where nothing wrote it, whose default passes the guard.
fn read_before_written(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let c = ctx.c();
    let mut seen = HashSet::new();
    for r in &c.reads {
        if ctx.facts.iter().any(|f| f.name.name == r.var) {
            continue;
        }
        if !r.negated && r.else_executes.is_none() {
            continue;
        }
        if !seen.insert((r.at, r.var.clone())) {
            continue;
        }
        let mut s = Step::new(StepKind::Flow, &format!("if {}", r.cond), 1);
        s.loc = Some(ctx.loc(r.at));
        s.violation = true;
        let mut f = rb_finding(
            RuleId::QG007,
            format!("${}", r.var),
            None,
            ctx.loc(r.at),
            &format!("read:{}", r.cond),
            vec![s],
            &[],
        );
        let how = if r.negated {
            format!(
                "`{}` reads it negated, so its default (false) passes",
                r.cond
            )
        } else {
            format!(
                "its default (false) takes the `else`, which executes '{}'",
                r.else_executes.as_deref().unwrap_or("?")
            )
        };
        f.message.push_str(&format!(": {how}"));
        out.push(f);
    }
}

/// QG008 (`bot <tool>`) and QG009 (`bot X` with no definition).
fn bot_lines(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let c = ctx.c();
    let mut seen = HashSet::new();
    for b in c.bot_lines.iter().filter(|b| !b.inline) {
        let msg = b.message.trim();
        if msg.starts_with('$') || msg.starts_with('{') {
            continue;
        }
        let as_tool = msg.replace(' ', "_");
        if let Some(t) = ctx
            .model
            .tools
            .iter()
            .find(|t| t.name == msg || t.name == as_tool)
        {
            let mut s = Step::new(StepKind::Flow, &format!("bot {msg}"), 1);
            s.loc = Some(ctx.loc(b.at));
            s.violation = true;
            out.push(rb_finding(
                RuleId::QG008,
                t.name.clone(),
                Some(t),
                ctx.loc(b.at),
                "bot",
                vec![s],
                &[],
            ));
            continue;
        }
        if c.bot_defined.iter().any(|d| d == msg) || RUNTIME_MESSAGES.contains(&msg) {
            continue;
        }
        if !seen.insert(msg.to_string()) {
            continue;
        }
        let mut s = Step::new(StepKind::Flow, &format!("bot {msg}"), 1);
        s.loc = Some(ctx.loc(b.at));
        s.violation = true;
        out.push(rb_finding(
            RuleId::QG009,
            msg.to_string(),
            None,
            ctx.loc(b.at),
            "bot",
            vec![s],
            &[],
        ));
    }
}

/// QG010: an execute of a tool no node binds, and statements no route reaches.
fn dead(ctx: &Context<'_>, routes: &Routes<'_>, out: &mut Vec<Finding>) {
    let c = ctx.c();
    let bound: HashSet<usize> = ctx
        .model
        .nodes
        .iter()
        .flat_map(|n| n.called().iter().copied())
        .collect();
    let mut seen = HashSet::new();
    let sheet = c.files.first().is_some_and(|f| f.version == "sheet");
    for e in &c.executes {
        let Some(u) = routes.names.of(&e.action) else {
            // A sheet's rule names a tool, so a name the catalogue lacks is a rule that governs
            // nothing; a Colang action may be NeMo's or the configuration's own Python, which
            // [`super::rulebook_names`] reads.
            if sheet {
                let detail =
                    "the catalogue has no such tool, so the rule governs nothing".to_string();
                let mut s = Step::new(StepKind::Flow, &format!("tool: {}", e.action), 1);
                s.loc = Some(ctx.loc(e.at));
                s.violation = true;
                out.push(rb_finding(
                    RuleId::QG010,
                    format!("the rule for '{}'", e.action),
                    None,
                    ctx.loc(e.at),
                    "no-such-tool",
                    vec![s],
                    &[("detail", &detail)],
                ));
            }
            continue;
        };
        if bound.contains(&u) || !seen.insert(u) {
            continue;
        }
        let t = &ctx.model.tools[u];
        let detail = format!(
            "no tool node of the graph binds '{}', so no agent running this rulebook can reach it",
            t.name
        );
        let mut s = Step::new(StepKind::Flow, &format!("execute {}", e.action), 1);
        s.loc = Some(ctx.loc(e.at));
        s.violation = true;
        out.push(rb_finding(
            RuleId::QG010,
            format!("execute {}", t.name),
            Some(t),
            ctx.loc(e.at),
            "unbound",
            vec![s],
            &[("detail", &detail)],
        ));
    }
    for d in &c.dead {
        let file = c.files.get(d.after.file).map_or("?", |f| f.path.as_str());
        let detail = format!(
            "no route reaches it: the `{}` at {file}:{} ends every route before it",
            d.ender, d.after.line
        );
        let mut a = Step::new(StepKind::Flow, &d.ender, 1);
        a.loc = Some(ctx.loc(d.after));
        let mut s = Step::new(StepKind::Flow, &d.what, 1);
        s.loc = Some(ctx.loc(d.at));
        s.violation = true;
        out.push(rb_finding(
            RuleId::QG010,
            d.what.clone(),
            None,
            ctx.loc(d.at),
            &format!("dead:{file}:{}", d.ender),
            vec![a, s],
            &[("detail", &detail)],
        ));
    }
}

/// QG022: a rail (flow or action) with a published advisory.
fn advisories(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let c = ctx.c();
    let mut seen = HashSet::new();
    let mut check = |name: &str, at: Place, out: &mut Vec<Finding>| {
        for a in ctx.advisories {
            if !(a.rails.iter().any(|r| r == name) || a.actions.iter().any(|x| x == name)) {
                continue;
            }
            if !seen.insert((name.to_string(), a.id.clone())) {
                continue;
            }
            let detail = format!(
                "{} ({}{}): {}",
                a.id,
                a.url,
                a.fixed
                    .as_ref()
                    .map_or(String::new(), |f| format!(", fixed in {f}")),
                a.summary
            );
            let mut s = Step::new(StepKind::Flow, name, 1);
            s.loc = Some(ctx.loc(at));
            s.violation = true;
            out.push(rb_finding(
                RuleId::QG022,
                name.to_string(),
                None,
                ctx.loc(at),
                &a.id,
                vec![s],
                &[("detail", &detail)],
            ));
        }
    };
    for u in &c.uses {
        check(&u.name, u.at, out);
    }
    for e in &c.executes {
        check(&e.action, e.at, out);
    }
}

/// QG005: the rulebook does not compile; the finding is at the error's place.
pub(crate) fn unshippable(
    err: &InputError,
    display: &str,
    sources: &crate::input::source::SourceMap,
) -> Finding {
    let location = err.location().and_then(|(file, line, column)| {
        sources
            .files
            .iter()
            .position(|f| f.display == file)
            .map(|id| Loc::new(id, line, column))
    });
    let msg = err.message();
    // The message starts with `file:line:column: `; the detail is what follows.
    let detail = match err.location() {
        Some((file, line, col)) => msg
            .strip_prefix(&format!("{file}:{line}:{col}: "))
            .unwrap_or(msg)
            .to_string(),
        None => msg.to_string(),
    };
    let detail = match err.help_text() {
        Some(h) if !h.is_empty() => format!("{detail} ({h})"),
        _ => detail,
    };
    let mut f = finding(
        Subject {
            rule: RuleId::QG005,
            obligation: None,
            subject: display.to_string(),
            tool: None,
            node: None,
            location: Primary::at(location),
        },
        None,
        Vec::new(),
        &[("detail", &detail)],
    );
    f.fingerprint = fingerprint(RuleId::QG005.as_str(), None, display, None);
    f.evidence = Evidence::CompilerStop;
    f
}
