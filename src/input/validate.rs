//! Cross-reference checks run by both loaders after reading (SPEC 2.2 "Bad input", SPEC 2.3,
//! SPEC 3.1): every bad input is an [`InputError`] at the offending word, saying the fix.
//!
//! Checked, per graph (the top graph and every subgraph): node ids (non-empty, no `/`, unique),
//! `entry` (or a `start` node: a graph with neither is bad input, a subgraph as the top graph),
//! edge and send sources and destinations (`../id` only inside a subgraph, naming a node of the
//! graph that runs it; `../../id` of the graph that runs that one, and so on), fixed edges with
//! `null` destinations, interrupts on missing nodes, subgraph nodes without `graph`, subgraphs
//! that contain themselves; tools bound by nodes or named by interrupts, order rules and
//! compensations, against the catalogue; flags named by `sets`, `clears` and `answer` against
//! `state` (guards are checked as they are read, where the column inside the guard text is
//! known). A subgraph node whose graph is missing, or empty, is
//! not an error here (it is QG006).

use std::collections::HashSet;

use crate::input::error::InputError;
use crate::input::ir::{
    Catalogue, Compensation, EdgeKind, Export, GraphDef, Named, NodeKind, NotAfter,
};

use super::tree::{Node, Reader};

/// `recursion_limit`: a whole number of steps, at least 1.
pub(crate) fn recursion_limit(r: Reader<'_>, n: &Node) -> Result<u32, InputError> {
    let v = r.u32(n, "`recursion_limit`")?;
    if v == 0 {
        return Err(r
            .err(
                n.loc,
                "`recursion_limit` is 0: no run could take a single step",
                "give the number of node steps one run may take (LangGraph's default is 25)",
            )
            .with_label("at least 1"));
    }
    Ok(v)
}

/// `session_steps`: the number of conversation turns to search, in [`crate::input::ir::SESSION_STEPS`]
/// (SPEC 1).
pub(crate) fn session_steps(r: Reader<'_>, n: &Node) -> Result<u32, InputError> {
    let v = r.u32(n, "`session_steps`")?;
    let range = crate::input::ir::SESSION_STEPS;
    if !range.contains(&v) {
        let (lo, hi) = (range.start(), range.end());
        return Err(r
            .err(
                n.loc,
                format!("`session_steps` is {v}, outside {lo}..={hi}"),
                format!("give a number of turns from {lo} to {hi}"),
            )
            .with_label(format!("{lo} to {hi}")));
    }
    Ok(v)
}

/// One graph definition: the top graph or a subgraph, with the graphs lexically around it.
struct Def<'a> {
    g: &'a GraphDef,
    /// Enclosing definitions, outermost (the top graph) first.
    chain: Vec<usize>,
    /// "the top graph" or "subgraph 'kb_graph'".
    label: String,
}

/// Runs every check on a read export and catalogue. `catalogue_desc` names where the catalogue
/// came from (e.g. `catalogue.json`), for messages.
pub(crate) fn validate(
    r: Reader<'_>,
    export: &Export,
    catalogue: &Catalogue,
    catalogue_desc: &str,
    from_agent_yaml: bool,
) -> Result<(), InputError> {
    let v = Validator {
        r,
        catalogue,
        catalogue_desc,
        from_agent_yaml,
        flags: export.state.iter().map(|f| f.name.clone()).collect(),
        tools: catalogue.tools.iter().map(|t| t.name.as_str()).collect(),
    };
    for t in &catalogue.tools {
        if let Some(cp) = crate::input::visible::first_unsafe(&t.name) {
            return Err(r.err(
                t.loc,
                format!("the tool name {:?} holds {cp}, a control character, a line separator or an invisible character (two names that differ by it look the same)", t.name),
                format!("name tools with letters, digits and `_` only: delete the {cp} from the name"),
            ));
        }
    }
    let mut defs = Vec::new();
    collect_defs(
        &export.graph,
        Vec::new(),
        "the top graph".to_string(),
        &mut defs,
    );

    // Which graphs run each definition (for `../id`).
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); defs.len()];
    for (i, d) in defs.iter().enumerate() {
        for n in &d.g.nodes {
            if let (NodeKind::Subgraph, Some(name)) = (n.kind, &n.graph) {
                if let Some(e) = resolve(&defs, i, &name.name) {
                    if let Some(h) = holders.get_mut(e) {
                        if !h.contains(&i) {
                            h.push(i);
                        }
                    }
                }
            }
        }
    }

    check_cycles(r, &defs)?;
    for (i, d) in defs.iter().enumerate() {
        v.check_graph(&defs, i, d, &holders)?;
    }
    v.check_catalogue()?;
    Ok(())
}

fn collect_defs<'a>(g: &'a GraphDef, chain: Vec<usize>, label: String, out: &mut Vec<Def<'a>>) {
    let me = out.len();
    out.push(Def {
        g,
        chain: chain.clone(),
        label,
    });
    let mut inner = chain;
    inner.push(me);
    for (name, sub) in &g.subgraphs {
        collect_defs(sub, inner.clone(), format!("subgraph '{}'", name.name), out);
    }
}

/// The definition a node of definition `at` runs under graph name `name`: the `subgraphs` of the
/// graph that holds the node, then of each enclosing graph (SPEC 2.2).
fn resolve(defs: &[Def<'_>], at: usize, name: &str) -> Option<usize> {
    let d = defs.get(at)?;
    let find_in = |idx: usize| -> Option<usize> {
        let holder = defs.get(idx)?;
        let (_, sub) = holder.g.subgraphs.iter().find(|(n, _)| n.name == name)?;
        defs.iter().position(|x| std::ptr::eq(x.g, sub))
    };
    std::iter::once(at)
        .chain(d.chain.iter().rev().copied())
        .find_map(find_in)
}

/// The graphs that run definition `at`: those with a subgraph node naming it, or, for one no
/// graph runs, the graph it is declared in.
fn runners(defs: &[Def<'_>], holders: &[Vec<usize>], at: usize) -> Vec<usize> {
    match holders.get(at) {
        Some(h) if !h.is_empty() => h.clone(),
        _ => defs
            .get(at)
            .and_then(|d| d.chain.last().copied())
            .into_iter()
            .collect(),
    }
}

fn check_cycles(r: Reader<'_>, defs: &[Def<'_>]) -> Result<(), InputError> {
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; defs.len()];
    let mut stack: Vec<(usize, String)> = Vec::new();
    for start in 0..defs.len() {
        if state.get(start) == Some(&0) {
            dfs(r, defs, start, &mut state, &mut stack)?;
        }
    }
    Ok(())
}

fn dfs(
    r: Reader<'_>,
    defs: &[Def<'_>],
    at: usize,
    state: &mut Vec<u8>,
    stack: &mut Vec<(usize, String)>,
) -> Result<(), InputError> {
    if let Some(s) = state.get_mut(at) {
        *s = 1;
    }
    let Some(d) = defs.get(at) else { return Ok(()) };
    for n in &d.g.nodes {
        let (NodeKind::Subgraph, Some(name)) = (n.kind, &n.graph) else {
            continue;
        };
        let Some(e) = resolve(defs, at, &name.name) else {
            continue;
        };
        match state.get(e).copied() {
            Some(1) => {
                let from = stack
                    .iter()
                    .position(|(i, _)| *i == e)
                    .unwrap_or(stack.len());
                let mut path: Vec<&str> = stack
                    .get(from..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|(_, g)| g.as_str())
                    .collect();
                path.push(&name.name);
                let start = path.first().copied().unwrap_or(&name.name);
                let cycle = if path.len() > 1 {
                    path.join(" → ")
                } else {
                    format!("{start} → {start}")
                };
                return Err(r
                    .err(
                        name.loc,
                        format!("subgraph node '{}' runs graph '{}', which contains itself ({cycle})", n.id.name, name.name),
                        "a graph cannot run itself, directly or through another subgraph: break the cycle (point this node at another graph, or make it a `step`)",
                    )
                    .with_label("runs itself"));
            }
            Some(0) => {
                stack.push((e, name.name.clone()));
                dfs(r, defs, e, state, stack)?;
                stack.pop();
            }
            _ => {}
        }
    }
    if let Some(s) = state.get_mut(at) {
        *s = 2;
    }
    Ok(())
}

struct Validator<'a> {
    r: Reader<'a>,
    catalogue: &'a Catalogue,
    catalogue_desc: &'a str,
    from_agent_yaml: bool,
    flags: HashSet<String>,
    /// The catalogue's tool names, so a tool a node names is found by hash, not by a scan of
    /// the catalogue (issue 14: a scan per name is quadratic in a wide graph).
    tools: HashSet<&'a str>,
}

/// Up to 20 names, for "which ids exist" lists.
fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = names.collect();
    if all.is_empty() {
        return "none".to_string();
    }
    let mut s = all.iter().take(20).copied().collect::<Vec<_>>().join(", ");
    if all.len() > 20 {
        s.push_str(&format!(", ... ({} in all)", all.len()));
    }
    s
}

/// ` (did you mean 'x'?)` when a candidate is close to `name`.
fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    super::suggest::closest(name, candidates)
        .map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default()
}

impl Validator<'_> {
    fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.catalogue.tools.iter().map(|t| t.name.as_str())
    }

    /// A tool named at `tool` by `who` must be in the catalogue.
    fn need_tool(&self, tool: &Named, who: &str) -> Result<(), InputError> {
        if self.tools.contains(tool.name.as_str()) {
            return Ok(());
        }
        Err(self
            .r
            .err(
                tool.loc,
                format!(
                    "{who} tool '{}', which the catalogue ({}) does not declare{}",
                    tool.name,
                    self.catalogue_desc,
                    suggest(&tool.name, self.tool_names())
                ),
                format!(
                    "declare '{}' in {} (`tools: {{{}: {{kind: read}}}}`, or `kind: write`), or fix the name (the catalogue declares: {})",
                    tool.name,
                    self.catalogue_desc,
                    tool.name,
                    list(self.tool_names())
                ),
            )
            .with_label("not in the catalogue"))
    }

    fn need_flag(&self, flag: &Named, who: &str) -> Result<(), InputError> {
        if self.flags.contains(&flag.name) {
            return Ok(());
        }
        Err(self
            .r
            .err(
                flag.loc,
                format!("{who} flag '{}', which `state` does not declare", flag.name),
                declare_flag_help(&flag.name, &self.flags),
            )
            .with_label("undeclared flag"))
    }

    fn check_graph(
        &self,
        defs: &[Def<'_>],
        at: usize,
        d: &Def<'_>,
        holders: &[Vec<usize>],
    ) -> Result<(), InputError> {
        let r = self.r;
        let g = d.g;
        let label = &d.label;
        let ids = || g.nodes.iter().map(|n| n.id.name.as_str());
        let id_set: std::collections::HashSet<&str> =
            g.nodes.iter().map(|n| n.id.name.as_str()).collect();
        let has = |id: &str| id_set.contains(id);

        let mut first_at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            let id = &n.id;
            if id.name.is_empty() {
                return Err(r
                    .err(
                        id.loc,
                        format!("a node of {label} has an empty id"),
                        "give the node a non-empty `id`",
                    )
                    .with_label("empty id"));
            }
            if let Some(cp) = crate::input::visible::first_unsafe(&id.name) {
                return Err(r.err(
                    id.loc,
                    format!("node id {:?} in {label} holds {cp}, a control character, a line separator or an invisible character (two ids that differ by it look the same)", id.name),
                    format!("name nodes with letters, digits, `_`, `-` and `.` only: delete the {cp} from the id"),
                ));
            }
            if id.name.contains('/') {
                return Err(r
                    .err(
                        id.loc,
                        format!(
                            "node id '{}' contains `/`, which separates subgraph paths",
                            id.name
                        ),
                        format!(
                            "rename the node without `/` (exporters write it as `%2F`: '{}')",
                            id.name.replace('/', "%2F")
                        ),
                    )
                    .with_label("no `/` in ids"));
            }
            let first = match first_at.insert(id.name.as_str(), i) {
                Some(j) => {
                    first_at.insert(id.name.as_str(), j);
                    g.nodes.get(j)
                }
                None => None,
            };
            if let Some(first) = first {
                return Err(r
                    .err(
                        id.loc,
                        format!(
                            "duplicate node id '{}' in {label} (first declared at line {})",
                            id.name, first.id.loc.line
                        ),
                        "node ids must be unique in their graph: rename one of the two",
                    )
                    .with_label("second declaration")
                    .also_at(r.sources, first.id.loc, "first declared here"));
            }
        }
        // SPEC 3.1: a subgraph with neither `entry` nor a `start` node is bad input, as the same
        // top graph is (an empty subgraph is QG006, not this).
        if (at == 0 || !g.nodes.is_empty())
            && g.entry.is_none()
            && !g.nodes.iter().any(|n| n.kind == NodeKind::Start)
        {
            let loc = g
                .nodes
                .first()
                .map_or(crate::input::source::Loc::new(0, 1, 1), |n| n.id.loc);
            let run = if at == 0 { "no run" } else { "no run of it" };
            return Err(r
                .err(loc, format!("{label} has no `start` node and no `entry`: {run} could begin"), "add a node `{\"id\": \"__start__\", \"kind\": \"start\"}` with an edge to the first node, or name the first node in `entry`")
                .with_label("no start"));
        }
        if let Some(entry) = &g.entry {
            if !has(&entry.name) {
                return Err(r
                    .err(
                        entry.loc,
                        format!("`entry` names '{}', which is not a node of {label}{}", entry.name, suggest(&entry.name, ids())),
                        format!("name one of its nodes ({}), or leave `entry` out to start at its `start` node", list(ids())),
                    )
                    .with_label("no such node"));
            }
        }

        // A destination: a node of this graph, or `../id` a node of each graph that runs it;
        // `../` may repeat (SPEC 3.1): `../../id` is a node of each graph that runs those.
        let dest = |dst: &Named, who: &str| -> Result<(), InputError> {
            if let Some(first) = dst.name.strip_prefix("../") {
                if at == 0 {
                    return Err(r
                        .err(dst.loc, format!("{who} goes to '{}', but `../` leaves a subgraph and this is the top graph", dst.name), format!("name a node of the top graph without `../` ({})", list(ids())))
                        .with_label("no enclosing graph"));
                }
                let mut up = first;
                let mut parents = runners(defs, holders, at);
                let mut levels = 1;
                while let Some(rest) = up.strip_prefix("../") {
                    up = rest;
                    levels += 1;
                    if parents.contains(&0) {
                        return Err(r
                            .err(dst.loc, format!("{who} goes to '{}', which leaves the top graph: {label} is nested fewer than {levels} subgraphs deep", dst.name), format!("use one `../` per subgraph to leave: `../id` names a node of the graph that runs {label}"))
                            .with_label("leaves the top graph"));
                    }
                    let mut next: Vec<usize> = Vec::new();
                    for p in parents {
                        for q in runners(defs, holders, p) {
                            if !next.contains(&q) {
                                next.push(q);
                            }
                        }
                    }
                    parents = next;
                }
                for p in parents {
                    let Some(pd) = defs.get(p) else { continue };
                    if !pd.g.nodes.iter().any(|n| n.id.name == up) {
                        let pids = || pd.g.nodes.iter().map(|n| n.id.name.as_str());
                        return Err(r
                            .err(
                                dst.loc,
                                format!(
                                    "{who} goes to '{}', but {} ({}) has no node '{up}'{}",
                                    dst.name,
                                    pd.label,
                                    if levels == 1 {
                                        format!("which runs {label}")
                                    } else {
                                        format!("{levels} graphs above {label}")
                                    },
                                    suggest(up, pids())
                                ),
                                format!(
                                    "name a node of {} after `{}` ({})",
                                    pd.label,
                                    "../".repeat(levels),
                                    list(pids())
                                ),
                            )
                            .with_label("no such node in the enclosing graph"));
                    }
                }
                return Ok(());
            }
            if has(&dst.name) {
                return Ok(());
            }
            Err(r
                .err(
                    dst.loc,
                    format!(
                        "{who} goes to '{}', which is not a node of {label}{}",
                        dst.name,
                        suggest(&dst.name, ids())
                    ),
                    format!(
                        "name one of its nodes ({}), or `../id` for a node of the enclosing graph",
                        list(ids())
                    ),
                )
                .with_label("no such node"))
        };
        let source = |from: &Named, what: &str| -> Result<(), InputError> {
            if has(&from.name) {
                return Ok(());
            }
            Err(r
                .err(
                    from.loc,
                    format!(
                        "{what} leaves '{}', which is not a node of {label}{}",
                        from.name,
                        suggest(&from.name, ids())
                    ),
                    format!("`from` must name one of its nodes ({})", list(ids())),
                )
                .with_label("no such node"))
        };

        for e in &g.edges {
            source(&e.from, "an edge")?;
            match &e.destinations {
                None => {
                    if matches!(e.kind, EdgeKind::Fixed | EdgeKind::StalwartEdge) {
                        return Err(r
                            .err(
                                e.loc,
                                format!("the {} edge from '{}' has `null` destinations", e.kind.as_str(), e.from.name),
                                "list where it goes (`\"destinations\": [\"tools\"]`); only a conditional or command edge whose author declared none may be null",
                            )
                            .with_label("null destinations"));
                    }
                }
                Some(ds) => {
                    for dst in ds {
                        dest(dst, &format!("the edge from '{}'", e.from.name))?;
                    }
                }
            }
        }
        for s in &g.sends {
            source(&s.from, "a send")?;
            for dst in &s.destinations {
                dest(dst, &format!("the send from '{}'", s.from.name))?;
            }
        }
        for i in &g.interrupts {
            if !has(&i.node.name) {
                return Err(r
                    .err(
                        i.node.loc,
                        format!(
                            "an interrupt pauses at '{}', which is not a node of {label}{}",
                            i.node.name,
                            suggest(&i.node.name, ids())
                        ),
                        format!("name one of its nodes ({})", list(ids())),
                    )
                    .with_label("no such node"));
            }
            if let Some(t) = &i.tool {
                self.need_tool(t, &format!("the interrupt at '{}' confirms", i.node.name))?;
            }
            if let Some(a) = &i.answer {
                self.need_flag(
                    a,
                    &format!("the interrupt at '{}' answers into", i.node.name),
                )?;
            }
        }
        for n in &g.nodes {
            let who = match (&n.agent, self.from_agent_yaml) {
                (Some(a), true) => format!("agent '{a}' lists"),
                _ if n.kind == NodeKind::Model => format!("node '{}' offers", n.id.name),
                _ => format!("node '{}' binds", n.id.name),
            };
            for t in &n.tools {
                self.need_tool(t, &who)?;
            }
            // SPEC 2.2 `hosted`: the model's provider runs them, so only a model node has them.
            if let (Some(first), false) = (n.hosted.first(), n.kind == NodeKind::Model) {
                return Err(r
                    .err(
                        first.loc,
                        format!(
                            "node '{}' is a `{}` node and lists `hosted` tools, which only a `model` node has",
                            n.id.name,
                            n.kind.as_str()
                        ),
                        "move `hosted` to the model node whose provider runs these tools, or list them as the node's `tools` if its own code calls them",
                    )
                    .with_label("hosted on a node that is not a model"));
            }
            for t in &n.hosted {
                self.need_tool(t, &format!("model node '{}' hosts", n.id.name))?;
            }
            for f in &n.sets {
                self.need_flag(f, &format!("node '{}' sets", n.id.name))?;
            }
            for f in &n.clears {
                self.need_flag(f, &format!("node '{}' clears", n.id.name))?;
            }
            if n.kind == NodeKind::Subgraph && n.graph.is_none() {
                return Err(r
                    .err(n.id.loc, format!("subgraph node '{}' has no `graph`", n.id.name), "name the graph it runs (`\"graph\": \"kb_graph\"`, a key of `subgraphs`), or give the node another kind")
                    .with_label("no graph"));
            }
        }
        Ok(())
    }

    fn check_catalogue(&self) -> Result<(), InputError> {
        for t in &self.catalogue.tools {
            for a in &t.order.after {
                self.need_tool(
                    a,
                    &format!("the order rule of '{}' (`after`) names", t.name),
                )?;
            }
            for na in &t.order.not_after {
                if let NotAfter::Tool(a) = na {
                    self.need_tool(
                        a,
                        &format!("the order rule of '{}' (`not_after`) names", t.name),
                    )?;
                }
            }
            if let Compensation::Tool(c) = &t.compensation {
                self.need_tool(c, &format!("'{}' is undone by", t.name))?;
            }
        }
        Ok(())
    }
}

/// The fix for an undeclared flag: declare it, or one of the declared names.
pub(crate) fn declare_flag_help(name: &str, flags: &HashSet<String>) -> String {
    let mut declared: Vec<&str> = flags.iter().map(String::as_str).collect();
    declared.sort_unstable();
    let list = if declared.is_empty() {
        "none".to_string()
    } else {
        declared.join(", ")
    };
    format!(
        "declare it under `state` (`\"{name}\": {{\"scope\": \"session\"}}` or `\"turn\"`), or fix the name (declared flags: {list})"
    )
}
