//! The rulebook compiler (SPEC 5): the lowered flows of every file of a rulebook become one
//! [`Compiled`] rulebook: for each action, the routes that execute it, each with its flow, its
//! line, its **path condition** (the conjunction of the `if`/`else`/`while` conditions on the way)
//! and the flow lines passed; plus what the rulebook rules read (bot lines, statements no route
//! reaches, variables read before anything wrote them, `else` branches that execute what their
//! `if` guarded).
//!
//! Routes start at every flow that runs on its own: a Colang 1.0 `define flow` (it starts when its
//! first line matches) and any flow nothing in the rulebook calls (a 1.0 subflow or a 2.x flow the
//! runtime's rails start). A call (`do`, `await`, `start`, `activate`) runs the called flow in
//! place, under the caller's condition; `stop` and `abort` end the route, `return` ends the
//! called flow. An `if` whose branch stops narrows what follows: after `if not $paid` / `stop`, the
//! route goes on under `$paid`. Routes that meet again after a statement and wrote the same
//! variables are joined (their conditions OR-ed, shared conjuncts factored out, and a remainder
//! Z3 proves always true dropped), which is exact; past [`MAX_STATES`] routes at a statement they
//! are merged into one (written variables intersected), which never drops a route.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::cond::{Atoms, Cond};
use super::flows::{FileFlows, Flow, Stmt, StmtKind, Version};
use super::logic::implies;

/// Paths kept apart at one statement before they are merged.
pub const MAX_STATES: usize = 32;
/// Calls nested deeper than this are read as doing nothing (recursion, hostile input).
pub const MAX_CALL_DEPTH: usize = 12;

/// A place in the rulebook: the file (index into [`Compiled::files`]), 1-based line and column.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Place {
    /// Index into [`Compiled::files`].
    pub file: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// One file of the rulebook as the compiler saw it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceInfo {
    /// The file as displayed (relative to where the rulebook was given).
    pub path: String,
    /// The Colang version it was read as.
    pub version: String,
}

/// A flow line passed on the way to an execute (the witness of a route).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Hop {
    /// Where.
    pub at: Place,
    /// What happened there, in the rulebook's words (`flow refunds`, `user ask refund`,
    /// `if $order_paid`, `else of if $order_paid`, `do check order`).
    pub what: String,
}

/// A route that executes an action.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Route {
    /// The action as written (`refund_card`; `bot execute_x` gives `x`).
    pub action: String,
    /// The execute statement.
    pub at: Place,
    /// The flow the route started in.
    pub flow: String,
    /// The path condition.
    pub cond: Cond,
    /// The flow lines on the way, in order, ending at the execute.
    pub via: Vec<Hop>,
}

/// An execute statement, reached by some route or not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exec {
    /// The action as written.
    pub action: String,
    /// Where.
    pub at: Place,
    /// Written `bot execute_x`.
    pub via_bot: bool,
}

/// A `bot X` line (1.0).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BotLine {
    /// The message name, or the inline text.
    pub message: String,
    /// Where.
    pub at: Place,
    /// Given inline as text.
    pub inline: bool,
}

/// A statement no route reaches, after one that ends every route through it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dead {
    /// The first statement no route reaches.
    pub at: Place,
    /// Its first word (`execute refund_card`, `bot refuse`).
    pub what: String,
    /// The statement that ends the routes before it.
    pub after: Place,
    /// That statement's keyword (`stop`, `abort`, `return`, `break`, or `if` when every branch
    /// ends).
    pub ender: String,
}

/// A variable read in a condition on a route where nothing in the rulebook wrote it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Read {
    /// The variable, without `$`.
    pub var: String,
    /// The `if`/`while` statement.
    pub at: Place,
    /// The condition as the compiler reads it.
    pub cond: String,
    /// True when the variable is read under a negation, so its default (false) passes.
    pub negated: bool,
    /// The first action the `else` branch executes, when there is one (the default takes it).
    pub else_executes: Option<String>,
}

/// An `if` whose `else` executes an action its `then` executes too.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ElseExec {
    /// The action.
    pub action: String,
    /// The `if`.
    pub if_at: Place,
    /// The condition as written.
    pub cond: String,
    /// The execute in the `then` branch.
    pub then_at: Place,
    /// The execute in the `else` branch.
    pub else_at: Place,
}

/// A name used by the rulebook (a flow called, a flow defined, an import), for QG022.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Use {
    /// The name as written.
    pub name: String,
    /// Where.
    pub at: Place,
    /// `call`, `flow` or `import`.
    pub how: String,
}

/// The compiled rulebook: what the tool check evaluates (routes) and what the rules read.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Compiled {
    /// The files, in the order given.
    pub files: Vec<SourceInfo>,
    /// The atoms every condition indexes.
    pub atoms: Atoms,
    /// Every route to every execute, in walking order.
    pub routes: Vec<Route>,
    /// Every execute statement.
    pub executes: Vec<Exec>,
    /// Every `bot` line that is not an execute.
    pub bot_lines: Vec<BotLine>,
    /// `define bot` messages.
    pub bot_defined: Vec<String>,
    /// Statements no route reaches.
    pub dead: Vec<Dead>,
    /// Variables read where nothing wrote them.
    pub reads: Vec<Read>,
    /// `else` branches executing what their `if` guarded.
    pub else_execs: Vec<ElseExec>,
    /// Flows defined and called, and imports.
    pub uses: Vec<Use>,
}

impl Compiled {
    /// The routes that execute `action`.
    pub fn routes_of<'a>(&'a self, action: &'a str) -> impl Iterator<Item = &'a Route> + 'a {
        self.routes.iter().filter(move |r| r.action == action)
    }
}

/// One lowered file to compile.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    /// The file as displayed.
    pub path: String,
    /// The version it was read as.
    pub version: Version,
    /// Its flows.
    pub flows: &'a FileFlows,
}

/// Compiles the files of one rulebook (SPEC 5). Never fails: what the parsers accepted compiles.
pub fn compile(inputs: &[Input<'_>]) -> Compiled {
    let mut c = Compiled {
        files: inputs
            .iter()
            .map(|i| SourceInfo {
                path: i.path.clone(),
                version: i.version.as_str().to_string(),
            })
            .collect(),
        ..Compiled::default()
    };
    let mut by_name: BTreeMap<&str, (usize, &Flow)> = BTreeMap::new();
    for (f, i) in inputs.iter().enumerate() {
        for fl in &i.flows.flows {
            by_name.entry(fl.name.as_str()).or_insert((f, fl));
        }
        for m in &i.flows.bot_messages {
            if !c.bot_defined.contains(&m.name) {
                c.bot_defined.push(m.name.clone());
            }
        }
        for im in &i.flows.imports {
            c.uses.push(Use {
                name: im.name.clone(),
                at: place(f, im.line, im.column),
                how: "import".into(),
            });
        }
    }
    // Which flows some other flow calls.
    let mut called: HashSet<&str> = HashSet::new();
    for (f, i) in inputs.iter().enumerate() {
        for fl in &i.flows.flows {
            c.uses.push(Use {
                name: fl.name.clone(),
                at: place(f, fl.line, fl.column),
                how: "flow".into(),
            });
            syntactic(f, &fl.body, &mut c, &mut called);
        }
    }
    let mut w = Walker {
        by_name,
        c,
        reached: HashSet::new(),
        dead_candidates: Vec::new(),
        stack: Vec::new(),
    };
    for (f, i) in inputs.iter().enumerate() {
        for fl in &i.flows.flows {
            let root = match i.version {
                Version::V1 => !fl.subflow || !called.contains(fl.name.as_str()),
                Version::V2 => !called.contains(fl.name.as_str()),
            };
            if !root {
                continue;
            }
            let start = State {
                cond: Cond::True,
                written: fl
                    .params
                    .iter()
                    .map(|p| p.trim_start_matches('$').to_string())
                    .collect(),
                via: vec![Hop {
                    at: place(f, fl.line, fl.column),
                    what: format!("flow {}", fl.name),
                }],
            };
            w.stack.push(fl.name.clone());
            let _ = w.block(f, &fl.name, &fl.body, vec![start]);
            w.stack.pop();
        }
    }
    let Walker {
        mut c,
        reached,
        dead_candidates,
        ..
    } = w;
    let mut seen = HashSet::new();
    for d in dead_candidates {
        if !reached.contains(&d.at) && seen.insert(d.at) {
            c.dead.push(d);
        }
    }
    dedupe_routes(&mut c.routes);
    c.reads.sort_by(|a, b| (a.at, &a.var).cmp(&(b.at, &b.var)));
    c.reads.dedup_by(|a, b| a.at == b.at && a.var == b.var);
    c
}

fn place(file: usize, line: usize, column: usize) -> Place {
    Place { file, line, column }
}

fn at(file: usize, s: &Stmt) -> Place {
    place(file, s.line, s.column)
}

fn dedupe_routes(routes: &mut Vec<Route>) {
    let mut seen = HashSet::new();
    routes.retain(|r| seen.insert((r.at, r.cond.clone(), r.flow.clone())));
}

/// The pass over the tree that needs no routes: executes, bot lines, calls, `else` executes.
fn syntactic<'a>(f: usize, body: &'a [Stmt], c: &mut Compiled, called: &mut HashSet<&'a str>) {
    for s in body {
        match &s.kind {
            StmtKind::Execute {
                action, via_bot, ..
            } => c.executes.push(Exec {
                action: action.clone(),
                at: at(f, s),
                via_bot: *via_bot,
            }),
            StmtKind::Bot { message, inline } => c.bot_lines.push(BotLine {
                message: message.clone(),
                at: at(f, s),
                inline: *inline,
            }),
            StmtKind::Call { flow, .. } => {
                called.insert(flow.as_str());
                c.uses.push(Use {
                    name: flow.clone(),
                    at: at(f, s),
                    how: "call".into(),
                });
            }
            StmtKind::If { cond, then, else_ } => {
                let mut t = Vec::new();
                executes_in(f, then, &mut t);
                let mut e = Vec::new();
                executes_in(f, else_, &mut e);
                for (action, else_at) in &e {
                    if let Some((_, then_at)) = t.iter().find(|(a, _)| a == action) {
                        c.else_execs.push(ElseExec {
                            action: action.clone(),
                            if_at: at(f, s),
                            cond: cond.clone(),
                            then_at: *then_at,
                            else_at: *else_at,
                        });
                    }
                }
            }
            _ => {}
        }
        for child in children(s) {
            syntactic(f, child, c, called);
        }
    }
}

/// The nested blocks of a statement.
fn children(s: &Stmt) -> Vec<&[Stmt]> {
    match &s.kind {
        StmtKind::If { then, else_, .. } => vec![then, else_],
        StmtKind::While { body, .. } => vec![body],
        StmtKind::When { branches, else_ } => {
            let mut v: Vec<&[Stmt]> = branches.iter().map(|(_, b)| b.as_slice()).collect();
            if let Some(e) = else_ {
                v.push(e);
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Every execute in a block, nested blocks included (not through calls).
fn executes_in(f: usize, body: &[Stmt], out: &mut Vec<(String, Place)>) {
    for s in body {
        if let StmtKind::Execute { action, .. } = &s.kind {
            out.push((action.clone(), at(f, s)));
        }
        for child in children(s) {
            executes_in(f, child, out);
        }
    }
}

#[derive(Debug, Clone)]
struct State {
    cond: Cond,
    written: BTreeSet<String>,
    via: Vec<Hop>,
}

impl State {
    fn with(&self, cond: Cond, hop: Hop) -> State {
        let mut s = self.clone();
        s.cond = s.cond.clone().and(cond);
        s.via.push(hop);
        s
    }
}

/// What leaves a block: routes falling through its end, `return`ed, or `break`ing a loop.
#[derive(Default)]
struct Out {
    fall: Vec<State>,
    ret: Vec<State>,
    brk: Vec<State>,
}

struct Walker<'a> {
    by_name: BTreeMap<&'a str, (usize, &'a Flow)>,
    c: Compiled,
    reached: HashSet<Place>,
    dead_candidates: Vec<Dead>,
    stack: Vec<String>,
}

/// Joins the routes that meet after a statement: routes that wrote the same variables are one
/// route whose condition is the OR of theirs (exactly: they differ only in the path taken), kept
/// small by [`merge_conds`]; then, past [`MAX_STATES`], all are merged into one (their written
/// variables intersected). Never drops a route; the lines kept are those all the joined took.
fn join(v: Vec<State>) -> Vec<State> {
    if v.len() <= 1 {
        return v;
    }
    let mut groups: Vec<Vec<State>> = Vec::new();
    for st in v {
        match groups.iter_mut().find(|g| g[0].written == st.written) {
            Some(g) => g.push(st),
            None => groups.push(vec![st]),
        }
    }
    let mut out: Vec<State> = groups.into_iter().map(merge).collect();
    if out.len() > MAX_STATES {
        let mut written = out[0].written.clone();
        for st in &out[1..] {
            written = written.intersection(&st.written).cloned().collect();
        }
        for st in &mut out {
            st.written = written.clone();
        }
        out = vec![merge(out)];
    }
    out
}

/// One state for several with the same written variables.
fn merge(mut g: Vec<State>) -> State {
    if g.len() == 1 {
        return g.remove(0);
    }
    let conds: Vec<Cond> = g.iter().map(|s| s.cond.clone()).collect();
    // The lines every joined route took (the hops before they parted): a witness never shows a
    // branch line whose condition the joined condition does not imply.
    let mut via = std::mem::take(&mut g[0].via);
    for st in &g[1..] {
        let same = via.iter().zip(&st.via).take_while(|(a, b)| a == b).count();
        via.truncate(same);
    }
    let written = std::mem::take(&mut g[0].written);
    State {
        cond: merge_conds(conds),
        written,
        via,
    }
}

/// The OR of `conds`, with the conjuncts they all share factored out, and the rest dropped when
/// Z3 finds it always holds (the branches of an `if` that all go on rejoin as what came before).
fn merge_conds(conds: Vec<Cond>) -> Cond {
    let parts: Vec<Vec<Cond>> = conds
        .into_iter()
        .map(|c| match c {
            Cond::And(xs) => xs,
            Cond::True => Vec::new(),
            c => vec![c],
        })
        .collect();
    let common: Vec<Cond> = parts[0]
        .iter()
        .filter(|x| parts[1..].iter().all(|p| p.contains(x)))
        .cloned()
        .collect();
    let rest: Vec<Cond> = parts
        .into_iter()
        .map(|p| {
            let r: Vec<Cond> = p.into_iter().filter(|x| !common.contains(x)).collect();
            match r.len() {
                0 => Cond::True,
                1 => r.into_iter().next().unwrap_or(Cond::True),
                _ => Cond::And(r),
            }
        })
        .collect();
    let mut out = Cond::True;
    for c in common {
        out = out.and(c);
    }
    if rest.contains(&Cond::True) {
        return out;
    }
    let any = Cond::Or(rest);
    if implies(&Cond::True, &any) {
        out
    } else {
        out.and(any)
    }
}

impl<'a> Walker<'a> {
    fn block(&mut self, f: usize, flow: &str, body: &'a [Stmt], mut states: Vec<State>) -> Out {
        let mut out = Out::default();
        for (k, s) in body.iter().enumerate() {
            if states.is_empty() {
                break;
            }
            self.reached.insert(at(f, s));
            let o = self.stmt(f, flow, s, states);
            out.ret.extend(o.ret);
            out.brk.extend(o.brk);
            states = join(o.fall);
            if states.is_empty() {
                if let Some(next) = body.get(k + 1) {
                    self.dead_candidates.push(Dead {
                        at: at(f, next),
                        what: first_words(next),
                        after: at(f, s),
                        ender: ender(s),
                    });
                }
            }
        }
        out.fall = states;
        out
    }

    fn stmt(&mut self, f: usize, flow: &str, s: &'a Stmt, states: Vec<State>) -> Out {
        let here = at(f, s);
        let mut out = Out::default();
        match &s.kind {
            StmtKind::Execute { action, result, .. } => {
                let hop = Hop {
                    at: here,
                    what: format!("execute {action}"),
                };
                for st in &states {
                    let mut via = st.via.clone();
                    via.push(hop.clone());
                    self.c.routes.push(Route {
                        action: action.clone(),
                        at: here,
                        flow: flow.to_string(),
                        cond: st.cond.clone(),
                        via,
                    });
                }
                out.fall = states;
                if let Some(r) = result {
                    self.assign(&mut out.fall, r);
                }
            }
            StmtKind::Set { var, .. } => {
                out.fall = states;
                self.assign(&mut out.fall, var);
            }
            StmtKind::User { intent } => {
                let hop = Hop {
                    at: here,
                    what: format!("user {intent}"),
                };
                out.fall = states
                    .into_iter()
                    .map(|st| st.with(Cond::True, hop.clone()))
                    .collect();
            }
            StmtKind::If { cond, then, else_ } => {
                let c = self.c.atoms.read(cond);
                self.note_reads(here, &c, else_, &states);
                let shown = self.c.atoms.show(&c);
                let t: Vec<State> = states
                    .iter()
                    .map(|st| {
                        st.with(
                            c.clone(),
                            Hop {
                                at: here,
                                what: format!("if {shown}"),
                            },
                        )
                    })
                    .collect();
                let e: Vec<State> = states
                    .iter()
                    .map(|st| {
                        st.with(
                            c.clone().negate(),
                            Hop {
                                at: here,
                                what: format!("else of if {shown}"),
                            },
                        )
                    })
                    .collect();
                let ot = self.block(f, flow, then, t);
                let oe = self.block(f, flow, else_, e);
                for o in [ot, oe] {
                    out.fall.extend(o.fall);
                    out.ret.extend(o.ret);
                    out.brk.extend(o.brk);
                }
            }
            StmtKind::While { cond, body } => {
                let c = self.c.atoms.read(cond);
                self.note_reads(here, &c, &[], &states);
                let shown = self.c.atoms.show(&c);
                let inside: Vec<State> = states
                    .iter()
                    .map(|st| {
                        st.with(
                            c.clone(),
                            Hop {
                                at: here,
                                what: format!("while {shown}"),
                            },
                        )
                    })
                    .collect();
                let o = self.block(f, flow, body, inside);
                // Leaving the loop: the condition was checked false, on entry or after a round
                // (whose writes may have changed what it reads, so a round adds no condition).
                let exit = Hop {
                    at: here,
                    what: format!("after while {shown}"),
                };
                out.fall = states
                    .into_iter()
                    .map(|st| st.with(c.clone().negate(), exit.clone()))
                    .chain(o.brk)
                    .collect();
                out.ret = o.ret;
            }
            StmtKind::When { branches, else_ } => {
                for (on, body) in branches {
                    // The branch's event happens first: a user turn, or a flow or an action
                    // that runs and finishes (2.x `when await X`), walked like any statement.
                    let event = match &on.kind {
                        StmtKind::User { .. } | StmtKind::Other { .. } | StmtKind::Any { .. } => {
                            let hop = Hop {
                                at: at(f, on),
                                what: format!("when {}", first_words(on)),
                            };
                            Out {
                                fall: states
                                    .iter()
                                    .map(|st| st.with(Cond::True, hop.clone()))
                                    .collect(),
                                ..Out::default()
                            }
                        }
                        _ => self.stmt(f, flow, on, states.clone()),
                    };
                    out.ret.extend(event.ret);
                    out.brk.extend(event.brk);
                    let o = self.block(f, flow, body, event.fall);
                    out.fall.extend(o.fall);
                    out.ret.extend(o.ret);
                    out.brk.extend(o.brk);
                }
                if let Some(body) = else_ {
                    let o = self.block(f, flow, body, states);
                    out.fall.extend(o.fall);
                    out.ret.extend(o.ret);
                    out.brk.extend(o.brk);
                }
            }
            StmtKind::Call { flow: callee, .. } => {
                out.fall = self.call(here, flow, callee, states);
            }
            StmtKind::Return { .. } => out.ret = states,
            StmtKind::Break | StmtKind::Continue => out.brk = states,
            StmtKind::Stop | StmtKind::Abort => {}
            StmtKind::Bot { .. } | StmtKind::Any { .. } | StmtKind::Other { .. } => {
                out.fall = states;
            }
        }
        out
    }

    /// Runs the called flow in place; a flow not defined here, or already running, does nothing
    /// the compiler governs.
    fn call(&mut self, here: Place, root: &str, callee: &str, states: Vec<State>) -> Vec<State> {
        let Some(&(cf, cflow)) = self.by_name.get(callee) else {
            return states;
        };
        if self.stack.iter().any(|n| n == callee) || self.stack.len() >= MAX_CALL_DEPTH {
            return states;
        }
        let hop = Hop {
            at: here,
            what: format!("do {callee}"),
        };
        let inside: Vec<State> = states
            .into_iter()
            .map(|st| {
                let mut st = st.with(Cond::True, hop.clone());
                st.written.extend(
                    cflow
                        .params
                        .iter()
                        .map(|p| p.trim_start_matches('$').to_string()),
                );
                st
            })
            .collect();
        self.stack.push(callee.to_string());
        let o = self.block(cf, root, &cflow.body, inside);
        self.stack.pop();
        let mut back = o.fall;
        back.extend(o.ret);
        back.extend(o.brk);
        back
    }

    /// `$var` is written: every route knows it is, and forgets what its condition said about
    /// the old value.
    fn assign(&mut self, states: &mut [State], var: &str) {
        let var = var.trim_start_matches('$').to_string();
        let atoms = &self.c.atoms.list;
        let stale = |a: usize| atoms.get(a).is_some_and(|x| x.reads.contains(&var));
        for st in states.iter_mut() {
            st.cond = st.cond.forget(&stale);
            st.written.insert(var.clone());
        }
    }

    /// Records the variables `c` reads that some incoming route has not written (QG007).
    fn note_reads(&mut self, here: Place, c: &Cond, else_: &[Stmt], states: &[State]) {
        let mut atoms = Vec::new();
        c.atoms(&mut atoms);
        let shown = self.c.atoms.show(c);
        let mut else_exec = Vec::new();
        executes_in(here.file, else_, &mut else_exec);
        for (a, neg) in atoms {
            let reads = self
                .c
                .atoms
                .list
                .get(a)
                .map(|x| x.reads.clone())
                .unwrap_or_default();
            for var in reads {
                if SYSTEM_VARIABLES.contains(&var.as_str()) {
                    continue;
                }
                if states.iter().all(|st| st.written.contains(&var)) {
                    continue;
                }
                self.c.reads.push(Read {
                    var,
                    at: here,
                    cond: shown.clone(),
                    negated: neg,
                    else_executes: else_exec.first().map(|(a, _)| a.clone()),
                });
            }
        }
    }
}

/// Variables NeMo Guardrails' runtime itself writes before flows read them (its context:
/// messages, retrieval, configuration, the rails' own results). A read of one is never QG007.
pub const SYSTEM_VARIABLES: &[&str] = &[
    "user_message",
    "bot_message",
    "last_user_message",
    "last_bot_message",
    "relevant_chunks",
    "relevant_chunks_sep",
    "retrieved_relevant_chunks",
    "config",
    "system",
    "event",
    "context",
    "generation_options",
    "triggered_input_rail",
    "triggered_output_rail",
    "user_intent",
    "bot_intent",
    "skip_output_rails",
    "bot_thinking",
    "i",
    "flow_id",
    "self",
];

fn first_words(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::User { intent } => format!("user {intent}"),
        StmtKind::Bot { message, .. } => format!("bot {message}"),
        StmtKind::Execute { action, .. } => format!("execute {action}"),
        StmtKind::Set { var, .. } => format!("${var} = ..."),
        StmtKind::If { cond, .. } => format!("if {cond}"),
        StmtKind::While { cond, .. } => format!("while {cond}"),
        StmtKind::When { .. } => "when".into(),
        StmtKind::Any { .. } => "any".into(),
        StmtKind::Call { flow, how, .. } if how.is_empty() => flow.clone(),
        StmtKind::Call { flow, how, .. } => format!("{how} {flow}"),
        StmtKind::Stop => "stop".into(),
        StmtKind::Abort => "abort".into(),
        StmtKind::Return { .. } => "return".into(),
        StmtKind::Break => "break".into(),
        StmtKind::Continue => "continue".into(),
        StmtKind::Other { text, .. } => text.clone(),
    }
}

fn ender(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Stop => "stop",
        StmtKind::Abort => "abort",
        StmtKind::Return { .. } => "return",
        StmtKind::Break => "break",
        StmtKind::Continue => "continue",
        StmtKind::If { .. } => "if",
        StmtKind::While { .. } => "while",
        StmtKind::When { .. } => "when",
        StmtKind::Call { .. } => "call",
        _ => "statement",
    }
    .to_string()
}
