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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::budget::{check_condition, thousands, Budget, Budgets, Meter, Overrun};
use super::cond::{Atoms, Cond};
use super::flows::{FileFlows, Flow, Stmt, StmtKind, Version};
use super::logic::implies;

/// Paths kept apart at one statement before they are merged.
pub(crate) const MAX_STATES: usize = 32;

pub(crate) use super::flows::Place;

/// One file of the rulebook as the compiler saw it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceInfo {
    /// The file as displayed (relative to where the rulebook was given).
    pub path: String,
    /// The Colang version it was read as.
    pub(crate) version: String,
}

/// A flow line passed on the way to an execute (the witness of a route).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Hop {
    /// Where.
    pub(crate) at: Place,
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
pub(crate) struct Exec {
    /// The action as written.
    pub(crate) action: String,
    /// Where.
    pub(crate) at: Place,
    /// Written `bot execute_x`.
    pub(crate) via_bot: bool,
}

/// A `bot X` line (1.0).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct BotLine {
    /// The message name, or the inline text.
    pub(crate) message: String,
    /// Where.
    pub(crate) at: Place,
    /// Given inline as text.
    pub(crate) inline: bool,
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
    pub(crate) cond: String,
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
    pub(crate) cond: String,
    /// The execute in the `then` branch.
    pub then_at: Place,
    /// The execute in the `else` branch.
    pub else_at: Place,
}

/// A name used by the rulebook (a flow called, a flow defined, an import), for QG022.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Use {
    /// The name as written.
    pub(crate) name: String,
    /// Where.
    pub(crate) at: Place,
    /// `call`, `flow` or `import`.
    pub(crate) how: String,
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
    pub(crate) executes: Vec<Exec>,
    /// Every `bot` line that is not an execute.
    pub(crate) bot_lines: Vec<BotLine>,
    /// `define bot` messages.
    pub(crate) bot_defined: Vec<String>,
    /// Statements no route reaches.
    pub dead: Vec<Dead>,
    /// Variables read where nothing wrote them.
    pub reads: Vec<Read>,
    /// `else` branches executing what their `if` guarded.
    pub else_execs: Vec<ElseExec>,
    /// Flows defined and called, and imports.
    pub(crate) uses: Vec<Use>,
    /// The actions the configuration defines in Python beside the rulebook (`actions.py`,
    /// `actions/`: [`super::actions`]), by name; QG010 reads them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defined_actions: Vec<String>,
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

/// What one compile spent of each budget (the largest condition and call depth seen, the
/// steps walked, the routes kept and the record's bytes so far), for benchmarks and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// The largest condition, as written or as a path condition (atoms and operators).
    pub condition: usize,
    /// The deepest call stack (flows), the route's own flow included.
    pub depth: usize,
    /// Statements walked, once for every path through them.
    pub steps: usize,
    /// Routes kept (before equal routes are deduplicated).
    pub routes: usize,
    /// Bytes of the record spent: the sources and the compact JSON of what the walk kept.
    pub record_bytes: usize,
}

/// The compiled rulebook `c` (a record read as it is) within `budgets`: its routes, and each
/// route's path condition. Errors: the first route past one, at its execute.
pub(crate) fn check_compiled(c: &Compiled, budgets: &Budgets) -> Result<(), Overrun> {
    if let Some(r) = c.routes.get(budgets.routes) {
        return Err(Overrun::new(
            Budget::Routes,
            budgets.routes,
            r.at,
            format!("the record holds {} routes", thousands(c.routes.len())),
        ));
    }
    for r in &c.routes {
        check_condition(
            &r.cond,
            budgets,
            r.at,
            "the record's path condition of the route to this execute",
        )?;
    }
    Ok(())
}

/// Compiles the files of one rulebook (SPEC 5) within `budgets`. Errors: the first budget
/// crossed ([`super::budget`]), at the statement that crossed it; what the parsers accepted
/// otherwise compiles.
pub fn compile(inputs: &[Input<'_>], budgets: &Budgets) -> Result<Compiled, Overrun> {
    compile_measured(inputs, budgets, 0).0
}

/// [`compile`], with `spent` bytes of the record budget already spent (the sources, which the
/// record keeps whole), also saying what it spent.
pub fn compile_measured(
    inputs: &[Input<'_>],
    budgets: &Budgets,
    spent: usize,
) -> (Result<Compiled, Overrun>, Usage) {
    let mut meter = Meter::new(budgets.record_bytes, spent);
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
    let mut called: HashSet<&str> = HashSet::new();
    if let Err(e) = definitions(inputs, &mut c, &mut by_name, &mut called, &mut meter) {
        let usage = Usage {
            record_bytes: meter.bytes,
            ..Usage::default()
        };
        return (Err(e), usage);
    }
    let mut w = Walker {
        by_name,
        c,
        reached: FxHashSet::default(),
        dead_candidates: Vec::new(),
        dead_seen: FxHashSet::default(),
        stack: Vec::new(),
        budgets: *budgets,
        meter,
        usage: Usage::default(),
        conds: FxHashMap::default(),
        texts: FxHashMap::default(),
        reads_seen: HashSet::new(),
        else_first: FxHashMap::default(),
    };
    let walked = w.roots(inputs, &called);
    w.usage.record_bytes = w.meter.bytes;
    let usage = w.usage;
    if let Err(e) = walked {
        return (Err(e), usage);
    }
    let Walker {
        mut c,
        reached,
        dead_candidates,
        ..
    } = w;
    c.dead = dead_candidates
        .into_iter()
        .filter(|d| !reached.contains(&d.at))
        .collect();
    dedupe_routes(&mut c.routes);
    c.reads.sort_by(|a, b| (a.at, &a.var).cmp(&(b.at, &b.var)));
    (Ok(c), usage)
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

/// What the files define and use, before any route is walked: the flows by name, `define bot`
/// messages, imports, flows, and (through [`syntactic`]) which flows some other flow calls.
fn definitions<'a>(
    inputs: &'a [Input<'a>],
    c: &mut Compiled,
    by_name: &mut BTreeMap<&'a str, (usize, &'a Flow)>,
    called: &mut HashSet<&'a str>,
    meter: &mut Meter,
) -> Result<(), Overrun> {
    let mut defined: HashSet<&str> = HashSet::new();
    for (f, i) in inputs.iter().enumerate() {
        for fl in &i.flows.flows {
            by_name.entry(fl.name.as_str()).or_insert((f, fl));
        }
        for m in &i.flows.bot_messages {
            if defined.insert(m.name.as_str()) {
                meter.spend(&m.name, place(f, m.line, m.column), "define bot")?;
                c.bot_defined.push(m.name.clone());
            }
        }
        for im in &i.flows.imports {
            let u = Use {
                name: im.name.clone(),
                at: place(f, im.line, im.column),
                how: "import".into(),
            };
            meter.spend(&u, u.at, "import")?;
            c.uses.push(u);
        }
    }
    for (f, i) in inputs.iter().enumerate() {
        for fl in &i.flows.flows {
            let u = Use {
                name: fl.name.clone(),
                at: place(f, fl.line, fl.column),
                how: "flow".into(),
            };
            meter.spend(&u, u.at, "flow")?;
            c.uses.push(u);
            syntactic(f, &fl.body, c, called, meter)?;
        }
    }
    Ok(())
}

/// The pass over the tree that needs no routes: executes, bot lines, calls, `else` executes.
fn syntactic<'a>(
    f: usize,
    body: &'a [Stmt],
    c: &mut Compiled,
    called: &mut HashSet<&'a str>,
    meter: &mut Meter,
) -> Result<(), Overrun> {
    for s in body {
        match &s.kind {
            StmtKind::Execute {
                action, via_bot, ..
            } => {
                let e = Exec {
                    action: action.clone(),
                    at: at(f, s),
                    via_bot: *via_bot,
                };
                meter.spend(&e, e.at, "execute")?;
                c.executes.push(e);
            }
            StmtKind::Bot { message, inline } => {
                let b = BotLine {
                    message: message.clone(),
                    at: at(f, s),
                    inline: *inline,
                };
                meter.spend(&b, b.at, "bot line")?;
                c.bot_lines.push(b);
            }
            StmtKind::Call { flow, .. } => {
                called.insert(flow.as_str());
                let u = Use {
                    name: flow.clone(),
                    at: at(f, s),
                    how: "call".into(),
                };
                meter.spend(&u, u.at, "call")?;
                c.uses.push(u);
            }
            StmtKind::If { cond, then, else_ } => {
                let mut t = Vec::new();
                executes_in(f, then, &mut t);
                // The first execute of each action in the `then` branch.
                let mut first: HashMap<&str, Place> = HashMap::new();
                for (action, then_at) in &t {
                    first.entry(action.as_str()).or_insert(*then_at);
                }
                let mut e = Vec::new();
                executes_in(f, else_, &mut e);
                for (action, else_at) in &e {
                    if let Some(then_at) = first.get(action.as_str()) {
                        let ee = ElseExec {
                            action: action.clone(),
                            if_at: at(f, s),
                            cond: cond.clone(),
                            then_at: *then_at,
                            else_at: *else_at,
                        };
                        meter.spend(&ee, *else_at, "execute")?;
                        c.else_execs.push(ee);
                    }
                }
            }
            _ => {}
        }
        for child in children(s) {
            syntactic(f, child, c, called, meter)?;
        }
    }
    Ok(())
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

/// The first execute in a block, nested blocks included (not through calls).
fn first_execute(body: &[Stmt]) -> Option<String> {
    for s in body {
        if let StmtKind::Execute { action, .. } = &s.kind {
            return Some(action.clone());
        }
        if let Some(a) = children(s).into_iter().find_map(first_execute) {
            return Some(a);
        }
    }
    None
}

/// The flow lines a route passed, shared between the routes that part after them: a
/// persistent list (newest first), so that a route going on costs one node, not a copy.
#[derive(Debug, Clone, Default)]
struct Via(Option<Rc<ViaNode>>);

#[derive(Debug)]
struct ViaNode {
    at: Place,
    what: Rc<str>,
    len: usize,
    prev: Via,
}

impl Drop for Via {
    /// Unlinks the list node by node: a route's lines may be a million long, too deep for the
    /// recursion of a derived drop.
    fn drop(&mut self) {
        let mut cur = self.0.take();
        while let Some(rc) = cur {
            match Rc::try_unwrap(rc) {
                Ok(mut node) => cur = node.prev.0.take(),
                Err(_) => break,
            }
        }
    }
}

impl Via {
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len)
    }

    fn push(&self, at: Place, what: Rc<str>) -> Via {
        Via(Some(Rc::new(ViaNode {
            at,
            what,
            len: self.len() + 1,
            prev: self.clone(),
        })))
    }

    fn prev(&self) -> Via {
        self.0
            .as_ref()
            .map_or_else(Via::default, |n| n.prev.clone())
    }

    /// The hops, oldest first.
    fn hops(&self) -> Vec<Hop> {
        let mut out = Vec::with_capacity(self.len());
        let mut cur = self.0.clone();
        while let Some(n) = cur {
            out.push(Hop {
                at: n.at,
                what: n.what.to_string(),
            });
            cur = n.prev.0.clone();
        }
        out.reverse();
        out
    }

    /// The longest prefix the two lists share, hop by hop from the start. Costs the length of
    /// the parts after the last node they share.
    fn common(&self, other: &Via) -> Via {
        let (mut a, mut b) = (self.clone(), other.clone());
        while a.len() > b.len() {
            a = a.prev();
        }
        while b.len() > a.len() {
            b = b.prev();
        }
        let mut keep = a.clone();
        while let (Some(x), Some(y)) = (a.0.clone(), b.0.clone()) {
            if Rc::ptr_eq(&x, &y) {
                break;
            }
            if x.at != y.at || x.what != y.what {
                keep = x.prev.clone();
            }
            a = x.prev.clone();
            b = y.prev.clone();
        }
        keep
    }
}

/// The variables a route has written, with a hash of the set so that routes are grouped by it
/// without comparing the sets themselves.
#[derive(Debug, Clone, Default)]
struct Written {
    set: Rc<BTreeSet<String>>,
    hash: u64,
}

impl PartialEq for Written {
    fn eq(&self, other: &Written) -> bool {
        self.hash == other.hash && (Rc::ptr_eq(&self.set, &other.set) || self.set == other.set)
    }
}

impl Written {
    fn of(vars: impl IntoIterator<Item = String>) -> Written {
        let mut w = Written::default();
        for v in vars {
            w.insert(v);
        }
        w
    }

    fn contains(&self, var: &str) -> bool {
        self.set.contains(var)
    }

    fn insert(&mut self, var: String) {
        if self.set.contains(&var) {
            return;
        }
        self.hash ^= var_hash(&var);
        Rc::make_mut(&mut self.set).insert(var);
    }

    fn intersection(&self, other: &Written) -> Written {
        if self == other {
            return self.clone();
        }
        Written::of(self.set.intersection(&other.set).cloned())
    }
}

fn var_hash(v: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(v)
}

#[derive(Debug, Clone)]
struct State {
    cond: Rc<Cond>,
    written: Written,
    via: Via,
}

impl State {
    /// The state gone on through `hop` (with the same condition).
    fn on(&self, at: Place, what: &Rc<str>) -> State {
        State {
            cond: self.cond.clone(),
            written: self.written.clone(),
            via: self.via.push(at, what.clone()),
        }
    }
}

#[derive(Default)]
struct Out {
    fall: Vec<State>,
    ret: Vec<State>,
    brk: Vec<State>,
}

/// A condition as read, and as shown, once per statement.
#[derive(Clone)]
struct ReadCond {
    cond: Cond,
    shown: Rc<str>,
}

struct Walker<'a> {
    by_name: BTreeMap<&'a str, (usize, &'a Flow)>,
    c: Compiled,
    reached: FxHashSet<Place>,
    dead_candidates: Vec<Dead>,
    dead_seen: FxHashSet<Place>,
    stack: Vec<String>,
    budgets: Budgets,
    meter: Meter,
    usage: Usage,
    /// Each `if`/`while` condition, read once.
    conds: FxHashMap<Place, ReadCond>,
    /// Each flow line's text, made once: `(place, kind)`.
    texts: FxHashMap<(Place, &'static str), Rc<str>>,
    /// `(statement, variable)` of the reads recorded.
    reads_seen: HashSet<(Place, String)>,
    /// The first execute of each `if`'s `else`, found once.
    else_first: FxHashMap<Place, Option<String>>,
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
            written = written.intersection(&st.written);
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
    // The lines every joined route took (the hops before they parted): a witness never shows a
    // branch line whose condition the joined condition does not imply.
    let mut via = g[0].via.clone();
    for st in &g[1..] {
        via = via.common(&st.via);
    }
    let same = g[1..].iter().all(|st| st.cond == g[0].cond);
    let cond = if same {
        g[0].cond.clone()
    } else {
        Rc::new(merge_conds(g.iter().map(|s| (*s.cond).clone()).collect()))
    };
    State {
        cond,
        written: g[0].written.clone(),
        via,
    }
}

/// The OR of `conds`, with the conjuncts they all share factored out, and the rest dropped when
/// it always holds (the branches of an `if` that all go on rejoin as what came before): at
/// once when it holds one branch and its negation, else when Z3 proves it.
fn merge_conds(conds: Vec<Cond>) -> Cond {
    let parts: Vec<Vec<Cond>> = conds
        .into_iter()
        .map(|c| match c {
            Cond::And(xs) => xs,
            Cond::True => Vec::new(),
            c => vec![c],
        })
        .collect();
    let sets: Vec<HashSet<&Cond>> = parts[1..].iter().map(|p| p.iter().collect()).collect();
    let common: Vec<Cond> = parts[0]
        .iter()
        .filter(|x| sets.iter().all(|s| s.contains(x)))
        .cloned()
        .collect();
    let common_set: HashSet<&Cond> = common.iter().collect();
    let rest: Vec<Cond> = parts
        .iter()
        .map(|p| {
            let r: Vec<Cond> = p
                .iter()
                .filter(|x| !common_set.contains(x))
                .cloned()
                .collect();
            match r.len() {
                0 => Cond::True,
                1 => r.into_iter().next().unwrap_or(Cond::True),
                _ => Cond::And(r),
            }
        })
        .collect();
    drop(common_set);
    drop(sets);
    let mut out = Cond::True;
    for c in common {
        out = out.and(c);
    }
    if rest.contains(&Cond::True) {
        return out;
    }
    let shown: HashSet<&Cond> = rest.iter().collect();
    let complement = rest.iter().any(|x| shown.contains(&x.clone().negate()));
    if complement {
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
    /// Walks every flow that runs on its own.
    fn roots(&mut self, inputs: &'a [Input<'a>], called: &HashSet<&str>) -> Result<(), Overrun> {
        for (f, i) in inputs.iter().enumerate() {
            for fl in &i.flows.flows {
                let root = match i.version {
                    Version::V1 => !fl.subflow || !called.contains(fl.name.as_str()),
                    Version::V2 => !called.contains(fl.name.as_str()),
                };
                if !root {
                    continue;
                }
                let here = place(f, fl.line, fl.column);
                let what: Rc<str> = format!("flow {}", fl.name).into();
                let start = State {
                    cond: Rc::new(Cond::True),
                    written: Written::of(
                        fl.params
                            .iter()
                            .map(|p| p.trim_start_matches('$').to_string()),
                    ),
                    via: Via::default().push(here, what),
                };
                self.stack.push(fl.name.clone());
                self.usage.depth = self.usage.depth.max(self.stack.len());
                let walked = self.block(f, &fl.name, &fl.body, vec![start]);
                self.stack.pop();
                walked?;
            }
        }
        Ok(())
    }

    /// A flow line's text, made once per statement and kind.
    fn text(&mut self, here: Place, kind: &'static str, make: impl FnOnce() -> String) -> Rc<str> {
        self.texts
            .entry((here, kind))
            .or_insert_with(|| make().into())
            .clone()
    }

    /// The condition of the `if`/`while` at `here`, read once; past the condition budget, an
    /// overrun.
    fn cond_at(&mut self, here: Place, written: &str, kw: &str) -> Result<ReadCond, Overrun> {
        if let Some(rc) = self.conds.get(&here) {
            return Ok(rc.clone());
        }
        let cond = self.c.atoms.read(written);
        self.usage.condition = self.usage.condition.max(cond.size());
        check_condition(
            &cond,
            &self.budgets,
            here,
            &format!("the condition of this `{kw}`"),
        )?;
        let shown: Rc<str> = self.c.atoms.show(&cond).into();
        let rc = ReadCond { cond, shown };
        self.conds.insert(here, rc.clone());
        Ok(rc)
    }

    /// `st` gone on under `c` too, through the hop `what`; past the condition budget (the path
    /// condition), an overrun at `here`.
    fn narrowed(
        &mut self,
        st: &State,
        c: &Cond,
        here: Place,
        what: &Rc<str>,
    ) -> Result<State, Overrun> {
        let cond = Rc::new((*st.cond).clone().and(c.clone()));
        self.check_path(&cond, here)?;
        Ok(State {
            cond,
            written: st.written.clone(),
            via: st.via.push(here, what.clone()),
        })
    }

    /// Past the condition budget, an overrun at `here`: a route's path condition.
    fn check_path(&mut self, cond: &Cond, here: Place) -> Result<(), Overrun> {
        self.usage.condition = self.usage.condition.max(cond.size());
        check_condition(
            cond,
            &self.budgets,
            here,
            "the path condition here (the conditions on the way, and-ed)",
        )?;
        Ok(())
    }

    /// Joins the states after the statement at `here` ([`join`]), within the condition budget.
    fn joined(&mut self, here: Place, states: Vec<State>) -> Result<Vec<State>, Overrun> {
        let n = states.len();
        let out = join(states);
        if out.len() < n {
            for st in &out {
                self.check_path(&st.cond, here)?;
            }
        }
        Ok(out)
    }

    fn block(
        &mut self,
        f: usize,
        flow: &str,
        body: &'a [Stmt],
        mut states: Vec<State>,
    ) -> Result<Out, Overrun> {
        let mut out = Out::default();
        for (k, s) in body.iter().enumerate() {
            if states.is_empty() {
                break;
            }
            let here = at(f, s);
            self.usage.steps = self.usage.steps.saturating_add(states.len());
            if self.usage.steps > self.budgets.steps {
                return Err(Overrun::new(
                    Budget::Steps,
                    self.budgets.steps,
                    here,
                    format!(
                        "walking the rulebook's routes passes {} statements here, counting a flow's statements again for each call and each path into it",
                        thousands(self.budgets.steps)
                    ),
                ));
            }
            self.reached.insert(here);
            let o = self.stmt(f, flow, s, states)?;
            out.ret.extend(o.ret);
            out.brk.extend(o.brk);
            states = self.joined(here, o.fall)?;
            if states.is_empty() {
                if let Some(next) = body.get(k + 1) {
                    let d = at(f, next);
                    if self.dead_seen.insert(d) {
                        let dead = Dead {
                            at: d,
                            what: first_words(next),
                            after: here,
                            ender: ender(s),
                        };
                        self.meter.spend(&dead, d, "statement")?;
                        self.dead_candidates.push(dead);
                    }
                }
            }
        }
        out.fall = states;
        Ok(out)
    }

    fn stmt(
        &mut self,
        f: usize,
        flow: &str,
        s: &'a Stmt,
        states: Vec<State>,
    ) -> Result<Out, Overrun> {
        let here = at(f, s);
        let mut out = Out::default();
        match &s.kind {
            StmtKind::Execute { action, result, .. } => {
                let what = self.text(here, "execute", || format!("execute {action}"));
                for st in &states {
                    let route = Route {
                        action: action.clone(),
                        at: here,
                        flow: flow.to_string(),
                        cond: (*st.cond).clone(),
                        via: st.via.push(here, what.clone()).hops(),
                    };
                    self.usage.routes += 1;
                    if self.usage.routes > self.budgets.routes {
                        return Err(Overrun::new(
                            Budget::Routes,
                            self.budgets.routes,
                            here,
                            format!(
                                "this execute makes the rulebook's routes more than {}",
                                thousands(self.budgets.routes)
                            ),
                        ));
                    }
                    self.meter.spend(&route, here, "execute")?;
                    self.c.routes.push(route);
                }
                out.fall = states;
                if let Some(r) = result {
                    self.assign(here, &mut out.fall, r)?;
                }
            }
            StmtKind::Set { var, .. } => {
                out.fall = states;
                self.assign(here, &mut out.fall, var)?;
            }
            StmtKind::User { intent } => {
                let what = self.text(here, "user", || format!("user {intent}"));
                out.fall = states.iter().map(|st| st.on(here, &what)).collect();
            }
            StmtKind::If { cond, then, else_ } => {
                let rc = self.cond_at(here, cond, "if")?;
                self.note_reads(here, &rc, else_, &states)?;
                let shown = rc.shown.clone();
                let then_what = self.text(here, "if", || format!("if {shown}"));
                let else_what = self.text(here, "else", || format!("else of if {shown}"));
                let negated = rc.cond.clone().negate();
                let mut t = Vec::with_capacity(states.len());
                let mut e = Vec::with_capacity(states.len());
                for st in &states {
                    t.push(self.narrowed(st, &rc.cond, here, &then_what)?);
                    e.push(self.narrowed(st, &negated, here, &else_what)?);
                }
                let ot = self.block(f, flow, then, t)?;
                let oe = self.block(f, flow, else_, e)?;
                for o in [ot, oe] {
                    out.fall.extend(o.fall);
                    out.ret.extend(o.ret);
                    out.brk.extend(o.brk);
                }
            }
            StmtKind::While { cond, body } => {
                let rc = self.cond_at(here, cond, "while")?;
                self.note_reads(here, &rc, &[], &states)?;
                let shown = rc.shown.clone();
                let in_what = self.text(here, "while", || format!("while {shown}"));
                let exit = self.text(here, "after while", || format!("after while {shown}"));
                let mut inside = Vec::with_capacity(states.len());
                for st in &states {
                    inside.push(self.narrowed(st, &rc.cond, here, &in_what)?);
                }
                let o = self.block(f, flow, body, inside)?;
                // Leaving the loop: the condition was checked false, on entry or after a round
                // (whose writes may have changed what it reads, so a round adds no condition).
                let negated = rc.cond.clone().negate();
                for st in &states {
                    out.fall.push(self.narrowed(st, &negated, here, &exit)?);
                }
                out.fall.extend(o.brk);
                out.ret = o.ret;
            }
            StmtKind::When { branches, else_ } => {
                for (on, body) in branches {
                    // The branch's event happens first: a user turn, or a flow or an action
                    // that runs and finishes (2.x `when await X`), walked like any statement.
                    let event = match &on.kind {
                        StmtKind::User { .. } | StmtKind::Other { .. } | StmtKind::Any { .. } => {
                            let on_at = at(f, on);
                            let what =
                                self.text(on_at, "when", || format!("when {}", first_words(on)));
                            Out {
                                fall: states.iter().map(|st| st.on(on_at, &what)).collect(),
                                ..Out::default()
                            }
                        }
                        _ => self.stmt(f, flow, on, states.clone())?,
                    };
                    out.ret.extend(event.ret);
                    out.brk.extend(event.brk);
                    let o = self.block(f, flow, body, event.fall)?;
                    out.fall.extend(o.fall);
                    out.ret.extend(o.ret);
                    out.brk.extend(o.brk);
                }
                if let Some(body) = else_ {
                    let o = self.block(f, flow, body, states)?;
                    out.fall.extend(o.fall);
                    out.ret.extend(o.ret);
                    out.brk.extend(o.brk);
                }
            }
            StmtKind::Call {
                flow: callee, how, ..
            } => {
                out.fall = self.call(here, flow, callee, how, states)?;
            }
            StmtKind::Return { .. } => out.ret = states,
            StmtKind::Break | StmtKind::Continue => out.brk = states,
            StmtKind::Stop | StmtKind::Abort => {}
            StmtKind::Bot { .. } | StmtKind::Any { .. } | StmtKind::Other { .. } => {
                out.fall = states;
            }
        }
        Ok(out)
    }

    /// Runs the called flow in place; a flow not defined here, or already running, does nothing
    /// the compiler governs. Past the depth budget, an overrun at the call.
    fn call(
        &mut self,
        here: Place,
        root: &str,
        callee: &str,
        how: &str,
        states: Vec<State>,
    ) -> Result<Vec<State>, Overrun> {
        let Some(&(cf, cflow)) = self.by_name.get(callee) else {
            return Ok(states);
        };
        if self.stack.iter().any(|n| n == callee) {
            return Ok(states);
        }
        if self.stack.len() >= self.budgets.depth {
            let how = if how.is_empty() {
                String::new()
            } else {
                format!("{how} ")
            };
            return Err(Overrun::new(
                Budget::Depth,
                self.budgets.depth,
                here,
                format!(
                    "`{how}{callee}` here runs a flow {} deep ({} → {callee})",
                    self.stack.len() + 1,
                    self.stack.join(" → ")
                ),
            ));
        }
        let what = self.text(here, "do", || format!("do {callee}"));
        let inside: Vec<State> = states
            .into_iter()
            .map(|st| {
                let mut st = st.on(here, &what);
                for p in &cflow.params {
                    st.written.insert(p.trim_start_matches('$').to_string());
                }
                st
            })
            .collect();
        self.stack.push(callee.to_string());
        self.usage.depth = self.usage.depth.max(self.stack.len());
        let o = self.block(cf, root, &cflow.body, inside);
        self.stack.pop();
        let o = o?;
        let mut back = o.fall;
        back.extend(o.ret);
        back.extend(o.brk);
        Ok(back)
    }

    /// `$var` is written: every route knows it is, and forgets what its condition said about
    /// the old value.
    fn assign(&mut self, here: Place, states: &mut [State], var: &str) -> Result<(), Overrun> {
        let var = var.trim_start_matches('$').to_string();
        let atoms = &self.c.atoms.list;
        let stale = |a: usize| atoms.get(a).is_some_and(|x| x.reads.contains(&var));
        let mut changed = Vec::new();
        for (k, st) in states.iter_mut().enumerate() {
            let forgot = st.cond.forget(&stale);
            if forgot != *st.cond {
                st.cond = Rc::new(forgot);
                changed.push(k);
            }
            st.written.insert(var.clone());
        }
        for k in changed {
            let cond = states[k].cond.clone();
            self.check_path(&cond, here)?;
        }
        Ok(())
    }

    /// Records the variables `c` reads that some incoming route has not written (QG007).
    fn note_reads(
        &mut self,
        here: Place,
        rc: &ReadCond,
        else_: &[Stmt],
        states: &[State],
    ) -> Result<(), Overrun> {
        let mut atoms = Vec::new();
        rc.cond.atoms(&mut atoms);
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
                if self.reads_seen.contains(&(here, var.clone())) {
                    continue;
                }
                let else_executes = self
                    .else_first
                    .entry(here)
                    .or_insert_with(|| first_execute(else_))
                    .clone();
                let read = Read {
                    var,
                    at: here,
                    cond: rc.shown.to_string(),
                    negated: neg,
                    else_executes,
                };
                self.meter.spend(&read, here, "condition")?;
                self.reads_seen.insert((here, read.var.clone()));
                self.c.reads.push(read);
            }
        }
        Ok(())
    }
}

/// Variables NeMo Guardrails' runtime itself writes before flows read them (its context:
/// messages, retrieval, configuration, the rails' own results). A read of one is never QG007.
pub(crate) const SYSTEM_VARIABLES: &[&str] = &[
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
