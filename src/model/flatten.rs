//! Flattening (SPEC 3, 3.1): subgraphs inlined under qualified ids, `null` destinations expanded,
//! sends turned into edges, interrupts attached to the nodes they pause at (`call` reviews as the
//! node's `reviews`), a subgraph node's own flags moved to its inner ends, every
//! node ranked in the file's declaration order, and `input.reads_outside` as the region each turn
//! starts tainted in.
//!
//! The input has been validated by [`crate::input`]; anything still inconsistent here is reported
//! as a [`FlattenError`] (never a panic), which the command line turns into exit 2, at the line of
//! the node that crossed a limit.

use super::{
    FlagIx, FlatEdge, FlatModel, FlatNode, Names, NodeIx, NullEdge, Pause, Region, RegionKind,
};
use crate::input::ir::{Catalogue, EdgeKind, Export, GraphDef, NodeKind, When};
use std::collections::HashMap;

/// Deepest subgraph nesting accepted (self-containing subgraphs are refused by the reader first).
const MAX_DEPTH: usize = 64;
/// Most nodes after inlining: a subgraph used twice at each of many levels multiplies, and a
/// graph past this is refused rather than searched for hours.
pub(crate) const MAX_NODES: usize = 200_000;

/// Why a graph could not be flattened: what is wrong and, for the whole-graph limits, the
/// declaration of the node where the limit was crossed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlattenError {
    /// What is wrong, naming the qualified node.
    pub(crate) message: String,
    /// The node's declaration, when one node is where it went wrong.
    pub(crate) at: Option<crate::input::source::Loc>,
}

impl From<String> for FlattenError {
    fn from(message: String) -> FlattenError {
        FlattenError { message, at: None }
    }
}

impl std::fmt::Display for FlattenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Flattens `export` with its `catalogue` into one [`FlatModel`].
///
/// `session_steps` is the number of turns to search, already chosen and in
/// [`crate::input::ir::SESSION_STEPS`] ([`crate::run::verify::session_steps`]).
/// Errors: a name that does not resolve, subgraphs nested deeper than 64 (a loop), or more than
/// [`MAX_NODES`] nodes after inlining (located at the node that crossed it).
pub fn flatten(
    export: &Export,
    catalogue: &Catalogue,
    session_steps: u32,
) -> Result<FlatModel, FlattenError> {
    let flags: Vec<(String, crate::input::ir::FlagScope)> = export
        .state
        .iter()
        .map(|f| (f.name.clone(), f.scope))
        .collect();
    let mut b = Builder {
        m: FlatModel {
            nodes: Vec::new(),
            edges: Vec::new(),
            out: Vec::new(),
            entry: 0,
            top_ends: Vec::new(),
            tools: catalogue.tools.clone(),
            flags,
            counters: Vec::new(),
            regions: Vec::new(),
            recursion_limit: export.recursion_limit.max(1),
            session_steps,
            null_edges: Vec::new(),
            opaque_subgraphs: Vec::new(),
            budget_paths: Vec::new(),
            budget_agents: export
                .agents
                .iter()
                .filter(|a| a.budget.is_some())
                .map(|a| a.name.clone())
                .collect(),
            top_budget: export.budget.is_some(),
            interrupted: vec![false; catalogue.tools.len()],
            standing: vec![false; catalogue.tools.len()],
            gates: vec![None; catalogue.tools.len()],
            input_taint: None,
            unseen: super::Unseen::default(),
            persists: catalogue
                .tools
                .iter()
                .map(|t| {
                    t.store.as_ref().is_some_and(|(s, write)| {
                        *write
                            && catalogue
                                .stores
                                .iter()
                                .any(|d| &d.name == s && d.persistent)
                    })
                })
                .collect(),
            names: Names::of(&[], &catalogue.tools),
        },
        top_name: export.name.clone().unwrap_or_else(|| "graph".to_string()),
        region_ix: HashMap::new(),
        decl_base: HashMap::new(),
    };
    let mut next = 0;
    b.number_definitions(&export.graph, &mut next, 0);
    let top = b.inline(&export.graph, "", &[], &mut Vec::new(), 0)?;
    if export.input_reads_outside {
        let top_region = b.top_name.clone();
        b.m.input_taint = Some(b.region(RegionKind::Graph, &top_region));
    }
    b.m.entry = top
        .entry
        .ok_or_else(|| "the top graph has no `start` node and no `entry`".to_string())?;
    b.m.top_ends = top.ends;
    b.m.out = vec![Vec::new(); b.m.nodes.len()];
    for (i, e) in b.m.edges.iter().enumerate() {
        b.m.out[e.from].push(i);
    }
    b.m.names = Names::of(&b.m.nodes, &b.m.tools);
    b.m.unseen = super::Unseen::of(&b.m.nodes, &b.m.tools);
    Ok(b.m)
}

struct Builder {
    m: FlatModel,
    top_name: String,
    /// Each region's index, by kind and name (SPEC 3.1: kinds and names together).
    region_ix: HashMap<(RegionKind, String), usize>,
    /// Per graph definition (by address: each is one object of the file), the declaration rank
    /// of its first node (SPEC 3.1 declaration order).
    decl_base: HashMap<*const GraphDef, usize>,
}

/// What inlining one graph gives its caller.
struct Inlined {
    entry: Option<NodeIx>,
    ends: Vec<NodeIx>,
}

impl Builder {
    fn flag(&self, name: &str) -> Result<FlagIx, String> {
        self.m
            .flags
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| format!("undeclared state flag '{name}'"))
    }

    fn tool(&self, name: &str) -> Result<usize, String> {
        self.m
            .tool_ix(name)
            .ok_or_else(|| format!("tool '{name}' is not in the catalogue"))
    }

    /// The index of the region of `kind` named `name`, added at first use.
    fn region(&mut self, kind: RegionKind, name: &str) -> usize {
        let key = (kind, name.to_string());
        if let Some(&i) = self.region_ix.get(&key) {
            return i;
        }
        self.m.regions.push(Region {
            kind,
            name: name.to_string(),
        });
        self.region_ix.insert(key, self.m.regions.len() - 1);
        self.m.regions.len() - 1
    }

    /// Numbers the nodes of `g` and of every subgraph definition under it in declaration order
    /// (SPEC 3.1): `g`'s nodes, then each definition its `subgraphs` lists, depth first.
    fn number_definitions(&mut self, g: &GraphDef, next: &mut usize, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        self.decl_base.insert(std::ptr::from_ref(g), *next);
        *next += g.nodes.len();
        for (_, d) in &g.subgraphs {
            self.number_definitions(d, next, depth + 1);
        }
    }

    /// Inlines `g` under `prefix` (`""` or `kb/`). `scopes` are the enclosing graphs, innermost
    /// first, for looking up subgraph names; `maps` the id maps of the enclosing graphs, for `../`.
    fn inline(
        &mut self,
        g: &GraphDef,
        prefix: &str,
        scopes: &[&GraphDef],
        maps: &mut Vec<HashMap<String, NodeIx>>,
        depth: usize,
    ) -> Result<Inlined, FlattenError> {
        let path = prefix.trim_end_matches('/').to_string();
        let mut local: HashMap<String, NodeIx> = HashMap::new();
        let base = self
            .decl_base
            .get(&std::ptr::from_ref(g))
            .copied()
            .unwrap_or(usize::MAX / 2);
        for (pos, n) in g.nodes.iter().enumerate() {
            let region = match (&n.agent, path.is_empty()) {
                (Some(a), _) => self.region(RegionKind::Agent, a),
                (None, false) => self.region(RegionKind::Subgraph, &path),
                (None, true) => {
                    let top = self.top_name.clone();
                    self.region(RegionKind::Graph, &top)
                }
            };
            let tools = n
                .tools
                .iter()
                .map(|t| self.tool(&t.name))
                .collect::<Result<Vec<_>, _>>()?;
            let hosted = n
                .hosted
                .iter()
                .map(|t| self.tool(&t.name))
                .collect::<Result<Vec<_>, _>>()?;
            let model_written = n
                .model_written
                .iter()
                .map(|w| Ok((self.tool(&w.tool.name)?, w.args.clone())))
                .collect::<Result<Vec<_>, String>>()?;
            let sets = n
                .sets
                .iter()
                .map(|f| self.flag(&f.name))
                .collect::<Result<Vec<_>, _>>()?;
            let clears = n
                .clears
                .iter()
                .map(|f| self.flag(&f.name))
                .collect::<Result<Vec<_>, _>>()?;
            let ix = self.m.nodes.len();
            if ix >= MAX_NODES {
                return Err(FlattenError {
                    message: format!(
                        "inlining the subgraphs gives more than {MAX_NODES} nodes (reached at '{prefix}{}'): a subgraph used several times at each of several levels multiplies; use it fewer times or export it as one node",
                        n.id.name
                    ),
                    at: Some(n.loc),
                });
            }
            self.m.nodes.push(FlatNode {
                qid: format!("{prefix}{}", n.id.name),
                kind: n.kind,
                agent: n.agent.clone(),
                region,
                tools,
                hosted,
                model_written,
                sets,
                clears,
                on_enter: Vec::new(),
                on_leave: Vec::new(),
                reviews: Vec::new(),
                taints_on_leave: n.kind == NodeKind::Remote,
                channel: n.channel.clone(),
                path: path.clone(),
                loc: n.loc,
                guard_not_credited: n.guard_not_credited.clone(),
                decl: base + pos,
            });
            local.insert(n.id.name.clone(), ix);
        }
        let entry = match &g.entry {
            Some(e) => Some(
                *local
                    .get(&e.name)
                    .ok_or_else(|| format!("entry '{}' is not a node", e.name))?,
            ),
            None => g
                .nodes
                .iter()
                .find(|n| n.kind == NodeKind::Start)
                .and_then(|n| local.get(&n.id.name).copied()),
        };
        let ends: Vec<NodeIx> = g
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::End)
            .filter_map(|n| local.get(&n.id.name).copied())
            .collect();
        if g.budget.is_some() && !path.is_empty() {
            self.m.budget_paths.push(path.clone());
        }

        // Subgraphs: inline each subgraph node's graph, remembering where its edges leave from.
        let mut leave_from: HashMap<NodeIx, Vec<NodeIx>> = HashMap::new();
        maps.push(local.clone());
        let mut inner_scopes: Vec<&GraphDef> = vec![g];
        inner_scopes.extend_from_slice(scopes);
        for n in g.nodes.iter().filter(|n| n.kind == NodeKind::Subgraph) {
            let s = local[&n.id.name];
            let name = n.graph.as_ref().map(|x| x.name.clone()).unwrap_or_default();
            let def = inner_scopes.iter().find_map(|sc| {
                sc.subgraphs
                    .iter()
                    .find(|(k, _)| k.name == name)
                    .map(|(_, d)| d)
            });
            match def {
                Some(d) if !d.nodes.is_empty() => {
                    let qid = self.m.nodes[s].qid.clone();
                    if depth >= MAX_DEPTH {
                        return Err(FlattenError {
                            message: format!(
                                "subgraphs are nested more than {MAX_DEPTH} levels deep at '{qid}': flatten some of them into their parents"
                            ),
                            at: Some(n.loc),
                        });
                    }
                    let inner =
                        self.inline(d, &format!("{qid}/"), &inner_scopes, maps, depth + 1)?;
                    match inner.entry {
                        Some(e) => {
                            self.push_edge(s, e, None, None);
                            self.move_flags_to_ends(s, &inner.ends);
                            leave_from.insert(s, inner.ends);
                        }
                        None => self.m.opaque_subgraphs.push((s, name)),
                    }
                }
                _ => self.m.opaque_subgraphs.push((s, name)),
            }
        }
        maps.pop();

        let sources = |ix: NodeIx| leave_from.get(&ix).cloned().unwrap_or_else(|| vec![ix]);
        let resolve =
            |b: &Builder, d: &str, maps: &Vec<HashMap<String, NodeIx>>| -> Result<NodeIx, String> {
                let mut level = 0;
                let mut rest = d;
                while let Some(r) = rest.strip_prefix("../") {
                    level += 1;
                    rest = r;
                }
                let map = if level == 0 {
                    &local
                } else {
                    maps.len()
                        .checked_sub(level)
                        .and_then(|i| maps.get(i))
                        .ok_or_else(|| {
                            format!(
                                "destination '{d}' leaves the top graph (from '{}')",
                                b.top_name
                            )
                        })?
                };
                map.get(rest)
                    .copied()
                    .ok_or_else(|| format!("destination '{d}' is not a node"))
            };

        for e in &g.edges {
            let from = *local
                .get(&e.from.name)
                .ok_or_else(|| format!("edge from unknown node '{}'", e.from.name))?;
            if self.m.nodes[from].kind == NodeKind::End {
                continue; // SPEC 3.1: edges from an end node are ignored
            }
            let guard = match &e.guard {
                Some(g) => Some(
                    g.try_map(&|f: &String| self.flag(f).ok())
                        .ok_or_else(|| format!("guard '{g}' names an undeclared flag"))?,
                ),
                None => None,
            };
            let dests = match &e.destinations {
                Some(ds) => ds
                    .iter()
                    .map(|d| resolve(self, &d.name, maps))
                    .collect::<Result<Vec<_>, _>>()?,
                None => {
                    self.m.null_edges.push(NullEdge {
                        from: self.m.nodes[from].qid.clone(),
                        kind: if e.kind == EdgeKind::Command {
                            "command"
                        } else {
                            "conditional"
                        },
                        loc: e.loc,
                    });
                    g.nodes
                        .iter()
                        .filter(|n| n.kind != NodeKind::Start)
                        .map(|n| local[&n.id.name])
                        .collect::<Vec<_>>()
                }
            };
            let counter = e.exit_after.map(|n| {
                self.m.counters.push(self.m.nodes[from].qid.clone());
                (self.m.counters.len() - 1, n)
            });
            for src in sources(from) {
                for &d in &dests {
                    self.push_edge(src, d, guard.clone(), counter);
                }
            }
        }
        for s in &g.sends {
            let from = *local
                .get(&s.from.name)
                .ok_or_else(|| format!("send from unknown node '{}'", s.from.name))?;
            let dests = s
                .destinations
                .iter()
                .map(|d| resolve(self, &d.name, maps))
                .collect::<Result<Vec<_>, _>>()?;
            for src in sources(from) {
                for &d in &dests {
                    self.push_edge(src, d, None, None);
                }
            }
        }
        for i in &g.interrupts {
            let node = *local
                .get(&i.node.name)
                .ok_or_else(|| format!("interrupt on unknown node '{}'", i.node.name))?;
            let tool = match &i.tool {
                Some(t) => Some(self.tool(&t.name)?),
                None => None,
            };
            if let Some(t) = tool {
                self.m.interrupted[t] = true;
                if i.standing {
                    self.m.standing[t] = true;
                }
            }
            let answer = match &i.answer {
                Some(a) => Some(self.flag(&a.name)?),
                None => None,
            };
            let pause = Pause {
                when: i.when,
                tool,
                answer,
                standing: i.standing,
                loc: i.loc,
            };
            match i.when {
                When::Call => {
                    // One review per tool: a second names nothing new, but a standing one makes
                    // the node's review standing.
                    let reviews = &mut self.m.nodes[node].reviews;
                    match reviews.iter_mut().find(|p| p.tool == tool) {
                        Some(p) => p.standing |= pause.standing,
                        None => reviews.push(pause),
                    }
                }
                When::Before | When::Inside => self.m.nodes[node].on_enter.push(pause),
                When::After => {
                    for src in sources(node) {
                        self.m.nodes[src].on_leave.push(pause.clone());
                    }
                }
            }
        }
        // `before` pauses first, then `inside` (SPEC 3.1: inside asks on entering, before the batch).
        for &ix in local.values() {
            self.m.nodes[ix]
                .on_enter
                .sort_by_key(|p| p.when != When::Before);
        }
        Ok(Inlined { entry, ends })
    }

    /// SPEC 3.1: a `subgraph` node's own `sets`/`clears` apply once, when its run leaves the
    /// subgraph's inner `end`, after that end's own (never on entering the subgraph node; a
    /// hand-off out with `../` leaves without them). Applying the end's clears, its sets, then
    /// the node's clears and sets in turn is one clears-then-sets step: clears `Ce ∪ Cs`, sets
    /// `(Se \ Cs) ∪ Ss`.
    fn move_flags_to_ends(&mut self, s: NodeIx, ends: &[NodeIx]) {
        let sets = std::mem::take(&mut self.m.nodes[s].sets);
        let clears = std::mem::take(&mut self.m.nodes[s].clears);
        for &end in ends {
            let e = &mut self.m.nodes[end];
            e.sets.retain(|f| !clears.contains(f));
            e.clears.extend(clears.iter().copied());
            e.sets.extend(sets.iter().copied());
            e.clears.sort_unstable();
            e.clears.dedup();
            e.sets.sort_unstable();
            e.sets.dedup();
        }
    }

    fn push_edge(
        &mut self,
        from: NodeIx,
        to: NodeIx,
        guard: Option<super::FlatGuard>,
        exit_after: Option<(usize, u32)>,
    ) {
        self.m.edges.push(FlatEdge {
            from,
            to,
            guard,
            exit_after,
        });
    }
}
