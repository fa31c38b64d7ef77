//! QG016, the unmodelled path (SPEC 4): a traced run (SPEC 2.4) that takes a transition the export
//! does not have, and goes on to a privileged call (a write, or a privileged tool).
//!
//! Each trace is read as a run from the model's entry: the transition entry → the first step's
//! node, then each step's node → the next step's node (consecutive steps at one node are no
//! transition). A transition `a -> b` is in the export when the flattened graph has an edge from
//! `a` to `b` (guards and `exit_after` ignored; the edges a `null` destination list expands to
//! count), or a path to `b` whose nodes in between are ones a trace need not list: `start` nodes,
//! a subgraph's `end` nodes, subgraph nodes (which only pass on to their subgraph's entry), and the
//! nodes inside `a` when `a` is a subgraph node (a trace of the parent graph shows a subgraph as one
//! step). A run that goes on after the top graph's `end` (listed as a step) starts its next turn at
//! the entry (SPEC 3), so `end -> x` is in the export when `entry -> x` is. A node id the flattened
//! graph does not have makes every transition touching it missing. Ids are qualified (`kb/retrieve`);
//! LangGraph's bare `__start__` and `__end__` name the entry and the top `end` when no node has
//! those ids.
//!
//! A call at a node of the export that does not bind the tool (or of a tool the catalogue does not
//! have) leaves the verified graph too: the code that ran made a call the graph cannot make.
//!
//! After a run's first missing transition (or such a call), the first step (the one that arrived by it included)
//! that calls a catalogue tool that is a write or privileged gives a QG016 finding on that tool at
//! that node, located at the call in the traces file, with the run's steps up to the call as its
//! witness. Findings with one fingerprint (rule, tool, node) are merged: the first run's witness is
//! kept, and the message says how many runs showed it.

use crate::rules::RuleId;
use std::collections::HashMap;

use super::{finding, Subject};
use crate::findings::{Evidence, Finding, Primary, Step, StepKind, TracesInfo};
use crate::input::ir::NodeKind;
use crate::input::source::Loc;
use crate::input::Trace;
use crate::model::{FlatModel, NodeIx, ToolIx};

/// Other runs named in a finding's message, at most; the rest are counted.
const MAX_RUNS_NAMED: usize = 5;
/// Other runs' calls added to a finding's related locations, at most.
const MAX_RUNS_RELATED: usize = 5;

/// The QG016 findings of `traces` on `m`, and what the traces showed. `path` names the traces file
/// as the report shows it.
pub fn unmodelled_paths(m: &FlatModel, traces: &[Trace], path: &str) -> (Vec<Finding>, TracesInfo) {
    let mut w = Walker::new(m);
    let mut info = TracesInfo {
        path: path.to_string(),
        runs: traces.len(),
        ..TracesInfo::default()
    };
    // Hits grouped by (tool, node), in the order their first run appears.
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<(ToolIx, String), usize> = HashMap::new();
    for t in traces {
        let walked = w.walk(t);
        if walked.gap.is_some() {
            info.unmodelled += 1;
        }
        let Some(hit) = walked.hit else { continue };
        info.privileged_after += 1;
        let key = (hit.tool, hit.node.clone());
        match index.get(&key) {
            Some(&g) => groups[g].others.push((clip(&t.run), hit.loc)),
            None => {
                index.insert(key, groups.len());
                groups.push(Group {
                    run: clip(&t.run),
                    hit,
                    gap: walked.gap.unwrap_or_default(),
                    others: Vec::new(),
                });
            }
        }
    }
    let findings = groups.into_iter().map(|g| g.finding(m)).collect();
    (findings, info)
}

/// A run id as messages show it: at most 60 characters (a trace may carry any id).
fn clip(id: &str) -> String {
    if id.chars().count() > 60 {
        format!("{}...", id.chars().take(60).collect::<String>())
    } else {
        id.to_string()
    }
}

/// The first missing transition of a run.
#[derive(Debug, Clone, Default)]
struct Gap {
    /// The node left, as the report names it.
    from: String,
    /// The node entered.
    to: String,
    /// Ids of the two that name no node of the export.
    unknown: Vec<String>,
    /// Set when the run left the graph by a call instead: the tool it called at `from`, which the
    /// export's node does not bind (or the catalogue does not have).
    call: Option<String>,
}

/// A privileged call after a gap.
struct Hit {
    tool: ToolIx,
    /// The node called at (its qualified id, or the id as traced when the export lacks it).
    node: String,
    node_ix: Option<NodeIx>,
    /// The call in the traces file.
    loc: Loc,
    witness: Vec<Step>,
}

/// What walking one run found.
struct Walked {
    gap: Option<Gap>,
    hit: Option<Hit>,
}

/// One finding's runs: the first, and the others with the same (tool, node).
struct Group {
    run: String,
    hit: Hit,
    gap: Gap,
    others: Vec<(String, Loc)>,
}

impl Group {
    fn finding(self, m: &FlatModel) -> Finding {
        let Group {
            run,
            hit,
            gap,
            others,
        } = self;
        let mut detail = match &gap.call {
            Some(tool) => format!(
                "run '{run}' called '{tool}' at '{}', which that node of the export does not call",
                gap.from
            ),
            None => format!(
                "run '{run}' took '{}' -> '{}', which the export does not have",
                gap.from, gap.to
            ),
        };
        for u in &gap.unknown {
            detail.push_str(&format!(" ('{u}' is not a node of the export)"));
        }
        if !others.is_empty() {
            let mut named: Vec<String> = std::iter::once(&run)
                .chain(others.iter().map(|(r, _)| r))
                .take(MAX_RUNS_NAMED)
                .map(|r| format!("'{r}'"))
                .collect();
            let total = others.len() + 1;
            if total > MAX_RUNS_NAMED {
                named.push(format!("{} more", total - MAX_RUNS_NAMED));
            }
            detail.push_str(&format!(
                "; {total} runs made this call after a transition the export does not have ({})",
                named.join(", ")
            ));
        }
        let tool = &m.tools[hit.tool];
        let mut f = finding(
            Subject {
                rule: RuleId::QG016,
                obligation: None,
                subject: tool.name.clone(),
                tool: Some(tool),
                node: Some(hit.node.clone()),
                location: Primary::Line(hit.loc),
            },
            None,
            hit.witness,
            &[("detail", &detail)],
        );
        f.evidence = Evidence::TracedRun;
        if let Some(n) = hit.node_ix {
            let node = &m.nodes[n];
            f.related
                .push((node.loc, format!("'{}' is declared here", node.qid)));
        }
        for (r, loc) in others.iter().take(MAX_RUNS_RELATED) {
            f.related
                .push((*loc, format!("run '{r}' makes the same call here")));
        }
        f
    }
}

/// Walks runs over the flattened graph, remembering which transitions it has.
struct Walker<'m> {
    m: &'m FlatModel,
    ids: HashMap<&'m str, NodeIx>,
    present: HashMap<(NodeIx, NodeIx), bool>,
}

impl<'m> Walker<'m> {
    fn new(m: &'m FlatModel) -> Walker<'m> {
        let mut ids: HashMap<&str, NodeIx> = HashMap::new();
        for (i, n) in m.nodes.iter().enumerate() {
            ids.entry(n.qid.as_str()).or_insert(i);
        }
        Walker {
            m,
            ids,
            present: HashMap::new(),
        }
    }

    /// The node a traced id names: its qualified id, else LangGraph's `__start__` (the entry) or
    /// `__end__` (the top graph's first `end`).
    fn resolve(&self, id: &str) -> Option<NodeIx> {
        self.ids.get(id).copied().or_else(|| match id {
            "__start__" => Some(self.m.entry),
            "__end__" => self.m.top_ends.first().copied(),
            _ => None,
        })
    }

    /// Where a run can go from `v` in one move: its edges' destinations, and from a top `end` the
    /// entry (the next turn).
    fn successors(&self, v: NodeIx) -> impl Iterator<Item = NodeIx> + '_ {
        let next_turn = self.m.top_ends.contains(&v).then_some(self.m.entry);
        self.m.out[v]
            .iter()
            .map(|&e| self.m.edges[e].to)
            .chain(next_turn)
    }

    /// True when the export has the transition `a -> b` (see the module's doc).
    fn has(&mut self, a: NodeIx, b: NodeIx) -> bool {
        if let Some(&known) = self.present.get(&(a, b)) {
            return known;
        }
        let m = self.m;
        let inside =
            (m.nodes[a].kind == NodeKind::Subgraph).then(|| format!("{}/", m.nodes[a].qid));
        // The top `end` is never passed silently: a run that goes on after it starts a new turn,
        // which a trace shows by listing the `end`.
        let silent = |v: NodeIx| {
            (matches!(
                m.nodes[v].kind,
                NodeKind::Start | NodeKind::End | NodeKind::Subgraph
            ) && !m.top_ends.contains(&v))
                || inside
                    .as_deref()
                    .is_some_and(|p| m.nodes[v].qid.starts_with(p))
        };
        let mut seen = vec![false; m.nodes.len()];
        let mut queue = vec![a];
        seen[a] = true;
        let mut found = false;
        'search: while let Some(v) = queue.pop() {
            for u in self.successors(v) {
                if u == b {
                    found = true;
                    break 'search;
                }
                if !seen[u] && silent(u) {
                    seen[u] = true;
                    queue.push(u);
                }
            }
        }
        self.present.insert((a, b), found);
        found
    }

    /// Walks one run from the entry (see the module's doc).
    fn walk(&mut self, t: &Trace) -> Walked {
        let m = self.m;
        let mut at: (Option<NodeIx>, String) = (Some(m.entry), m.nodes[m.entry].qid.clone());
        let mut gap: Option<Gap> = None;
        let mut witness: Vec<Step> = Vec::new();
        let mut turn = 1u32;
        for (i, s) in t.steps.iter().enumerate() {
            let ix = self.resolve(&s.node);
            let name = ix.map_or_else(|| s.node.clone(), |n| m.nodes[n].qid.clone());
            let steps = u32::try_from(i + 1).unwrap_or(u32::MAX);
            if name != at.1 {
                if at.0.is_some_and(|n| m.top_ends.contains(&n)) {
                    turn = turn.saturating_add(1);
                }
                let ok = match (at.0, ix) {
                    (Some(a), Some(b)) => self.has(a, b),
                    _ => false,
                };
                let mut enter = Step::new(StepKind::Enter, &name, turn);
                enter.loc = Some(s.loc);
                enter.run_steps = steps;
                if !ok {
                    enter.unmodelled_from = Some(at.1.clone());
                    if gap.is_none() {
                        let unknown = [(at.0, &at.1), (ix, &name)]
                            .into_iter()
                            .filter(|(n, _)| n.is_none())
                            .map(|(_, id)| id.clone())
                            .collect();
                        gap = Some(Gap {
                            from: at.1.clone(),
                            to: name.clone(),
                            unknown,
                            call: None,
                        });
                    }
                }
                witness.push(enter);
                at = (ix, name.clone());
            }
            let Some(tool) = &s.tool else { continue };
            // A call the export's node cannot make (it does not bind the tool, or the catalogue
            // does not have it) leaves the verified graph as a missing transition does.
            // A model node's hosted tools (SPEC 2.2) are calls it makes.
            let bound = ix.is_some_and(|n| m.tool_ix(tool).is_some_and(|u| m.nodes[n].can_call(u)));
            if !bound && gap.is_none() && ix.is_some() {
                gap = Some(Gap {
                    from: name.clone(),
                    to: name.clone(),
                    unknown: Vec::new(),
                    call: Some(tool.clone()),
                });
            }
            let mut call = Step::new(StepKind::Call, &name, turn);
            call.tool = Some(tool.clone());
            call.guarded = ix.map(|n| m.nodes[n].guarded());
            call.loc = Some(s.tool_loc.unwrap_or(s.loc));
            call.run_steps = steps;
            let privileged = m.tool_ix(tool).filter(|&u| m.write_or_privileged(u));
            if let (Some(u), Some(_)) = (privileged, &gap) {
                call.violation = true;
                let loc = call.loc.unwrap_or(s.loc);
                witness.push(call);
                return Walked {
                    gap,
                    hit: Some(Hit {
                        tool: u,
                        node: name,
                        node_ix: ix,
                        loc,
                        witness,
                    }),
                };
            }
            witness.push(call);
        }
        Walked { gap, hit: None }
    }
}
