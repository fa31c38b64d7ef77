//! The `qls-graph/1` reader (SPEC 2.2).
//!
//! Reads the top graph (`nodes`, `edges`, `sends`, `interrupts`, `subgraphs`, `entry`) and the
//! run-wide words (`format`, `name`, `source`, `recursion_limit`, `session_steps`, `budget`,
//! `state`, `warnings`). Fields the SPEC does not name are ignored (exporters add their own
//! metadata). Shape errors, unknown node/edge kinds, bad `when`s and bad guards are reported
//! here; cross-references (ids, tools, flags) are checked by [`super::validate`].

use std::collections::HashSet;

use crate::input::error::InputError;
use crate::input::ir::{
    Budget, EdgeDef, EdgeKind, Export, FlagDecl, FlagScope, Framework, GraphDef, InterruptDef,
    Named, NodeDef, NodeKind, OpaqueDef, OpaqueWhat, SendDef, When, Written,
};
use crate::input::source::Loc;

use super::guard::parse_guard;
use super::tree::{Map, Node, Reader, Value};
use super::validate;

/// LangGraph's default `recursion_limit`.
pub(crate) const DEFAULT_RECURSION_LIMIT: u32 = 25;

/// The words of the export's top level (SPEC 2.2; `producer` and `warnings` are the exporters').
const TOP_WORDS: &[&str] = &[
    "format",
    "name",
    "source",
    "entry",
    "recursion_limit",
    "session_steps",
    "budget",
    "state",
    "nodes",
    "edges",
    "sends",
    "interrupts",
    "subgraphs",
    "warnings",
    "producer",
    "tool_locations",
    "input",
];
/// The words of a graph under `subgraphs`.
const GRAPH_WORDS: &[&str] = &[
    "entry",
    "budget",
    "nodes",
    "edges",
    "sends",
    "interrupts",
    "subgraphs",
];
/// The words of a node.
const NODE_WORDS: &[&str] = &[
    "id",
    "kind",
    "location",
    "tools",
    "agent",
    "hosted",
    "sets",
    "clears",
    "graph",
    "channel",
    "opaque",
    "guard_not_credited",
    "model_written",
];
/// The words of an edge.
const EDGE_WORDS: &[&str] = &[
    "from",
    "kind",
    "destinations",
    "guard",
    "exit_after",
    "location",
];
/// The words of a send.
const SEND_WORDS: &[&str] = &["from", "destinations"];
/// The words of an interrupt.
const INTERRUPT_WORDS: &[&str] = &["node", "when", "tool", "answer", "standing"];
/// The words of an `opaque` entry.
const OPAQUE_WORDS: &[&str] = &["what", "why", "location"];

/// Refuses a key of `m` (the map of `owner`: "node 'agent'") that is not one of `known` but a
/// small edit away from one ([`Reader::refuse_misspelt`]: `opaqe`, `hostd`, `interupts`). Keys
/// the reader does not know are an exporter's metadata and ignored, so a misspelt word would
/// silently drop what it says (an unseen tool, a hosted call, a pause) from the proof; any other
/// unknown key stays metadata. Errors: at the key, naming the word meant.
fn misspelt(r: Reader<'_>, m: Map<'_>, known: &[&str], owner: &str) -> Result<(), InputError> {
    r.refuse_misspelt(
        m,
        known,
        owner,
        "qls-graph/1",
        "a key the verifier does not know is read as an exporter's metadata and ignored",
    )
}

/// Reads a whole export from its parsed tree.
pub(crate) fn read_export(r: Reader<'_>, root: &Node) -> Result<Export, InputError> {
    let map = r.map(root, "the export")?;
    match map.get("format") {
        None => {
            return Err(r
                .err(
                    map.loc,
                    "the export has no `format`: this verifier reads qls-graph/1",
                    "add `\"format\": \"qls-graph/1\"` (and check this is a graph export, not a catalogue)",
                )
                .with_label("no format"))
        }
        Some(f) => {
            let found = f.as_text().map(str::to_string);
            if found.as_deref() != Some("qls-graph/1") {
                let shown = found.map(|s| format!("'{s}'")).unwrap_or_else(|| f.describe());
                let hint = if shown.contains("catalogue") {
                    "this looks like a catalogue: pass it with --catalogue and the graph with --graph"
                } else {
                    "export the graph as qls-graph/1 (`\"format\": \"qls-graph/1\"`)"
                };
                return Err(r
                    .err(f.loc, format!("unknown graph format {shown}: this verifier reads qls-graph/1"), hint)
                    .with_label("unknown format"));
            }
        }
    }

    misspelt(r, map, TOP_WORDS, "the export")?;
    let mut state = Vec::new();
    collect_state(r, map, &mut state, 0)?;
    let flags: HashSet<String> = state.iter().map(|f: &FlagDecl| f.name.clone()).collect();

    let mut export = Export {
        name: r.opt_text(map, "name", "`name`")?.map(|n| n.name),
        source: r.opt_text(map, "source", "`source`")?.map(|n| n.name),
        recursion_limit: DEFAULT_RECURSION_LIMIT,
        ..Export::default()
    };
    read_run_settings(r, map, &mut export)?;
    if let Some(w) = map.get("warnings") {
        for item in r.seq(w, "`warnings`")? {
            // Metadata: shown, never a reason to reject the export.
            let text = match item.as_text() {
                Some(t) => t.to_string(),
                None => item.to_json().to_string(),
            };
            export.warnings.push(text);
        }
    }
    export.state = state;
    export.input_reads_outside = read_input(r, map)?;
    export.graph = read_graph(r, map, &flags, true, 0)?;
    export.tool_locations = read_tool_locations(r, map)?;
    let producer = map.get_some("producer");
    export.framework = framework(producer);
    export.producer = producer.map(Node::to_json);
    Ok(export)
}

/// `tool_locations` (SPEC 12.4): `{"refund_order": {"location": {"file", "line", "column"?}}}`,
/// where each tool is defined in the user's source. Absent or null: none. Errors: not a mapping,
/// an entry without a `location` mapping, a bad location (as a node's).
fn read_tool_locations(
    r: Reader<'_>,
    map: Map<'_>,
) -> Result<Vec<(String, Loc, Option<String>)>, InputError> {
    let Some(n) = map.get_some("tool_locations") else {
        return Ok(Vec::new());
    };
    let m = r.map(n, "`tool_locations`")?;
    let mut out = Vec::new();
    for e in m.entries {
        let what = format!("`tool_locations.{}`", e.key);
        let entry = r.map(&e.value, &what)?;
        let Some(l) = entry.get_some("location") else {
            return Err(r.err(
                e.value.loc,
                format!("{what} has no `location`"),
                "write `{\"location\": {\"file\": \"agent.py\", \"line\": 12}}`, or leave the tool out",
            ));
        };
        if let Some((loc, file)) = read_location(r, l, &format!("`location` of {what}"))? {
            out.push((e.key.clone(), loc, file));
        }
    }
    Ok(out)
}

/// `input` (SPEC 2.2, 12.3): `{"reads_outside": true}` when each turn starts with content from
/// outside. Absent or null: the person's own words. Other keys of `input` are ignored, as SPEC 2.2
/// ignores fields it does not name. Errors: `input` not a mapping, `reads_outside` not a bool.
fn read_input(r: Reader<'_>, map: Map<'_>) -> Result<bool, InputError> {
    let Some(n) = map.get_some("input") else {
        return Ok(false);
    };
    if n.as_map().is_none() {
        return Err(r
            .err(
                n.loc,
                format!("`input` is {}, not a mapping", n.describe()),
                "write `\"input\": {\"reads_outside\": true}` when each turn starts with content from outside (an inbound e-mail, a webhook), or leave `input` out",
            )
            .with_label("a mapping"));
    }
    let m = r.map(n, "`input`")?;
    misspelt(r, m, &["reads_outside"], "`input`")?;
    r.flag(m, "reads_outside", "`reads_outside` of `input`")
}

/// The framework that made the export, from its `producer` metadata (SPEC 2.2): the OpenAI
/// Agents SDK when `producer.exporter` is `stalwart_export.openai_agents` (what
/// `python/stalwart_export/openai_agents/export.py` writes); LangGraph when `producer.versions`
/// names `langgraph` or `producer.exporter` is `stalwart_export` (what
/// `python/stalwart_export/langgraph/graph.py` writes, with or without provenance). Never an error:
/// metadata is not part of the contract.
fn framework(producer: Option<&Node>) -> Framework {
    let entry = |key: &str| {
        producer
            .and_then(Node::as_map)
            .and_then(|es| es.iter().find(|e| e.key == key))
            .map(|e| &e.value)
    };
    let exporter = entry("exporter").and_then(Node::as_text);
    if exporter.is_some_and(|x| x == "stalwart_export.openai_agents") {
        return Framework::OpenAiAgents;
    }
    let versions = entry("versions")
        .and_then(Node::as_map)
        .is_some_and(|es| es.iter().any(|e| e.key == "langgraph"));
    if exporter.is_some_and(|x| x == "stalwart_export") || versions {
        Framework::LangGraph
    } else {
        Framework::Other
    }
}

/// `{steps, turns}` or null. Its presence is what QG023 reads.
/// Reads the run-wide words an export and an agent.yaml share: `recursion_limit`,
/// `session_steps` and `budget` (SPEC 2.1, 2.2), over the defaults already in `export`.
pub(crate) fn read_run_settings(
    r: Reader<'_>,
    map: Map<'_>,
    export: &mut Export,
) -> Result<(), InputError> {
    if let Some(n) = map.get_some("recursion_limit") {
        export.recursion_limit = validate::recursion_limit(r, n)?;
    }
    if let Some(n) = map.get_some("session_steps") {
        export.session_steps = Some(validate::session_steps(r, n)?);
    }
    if let Some(b) = map.get("budget") {
        export.budget = read_budget(r, b, "`budget`")?;
    }
    Ok(())
}

/// The words of a budget.
const BUDGET_WORDS: &[&str] = &["steps", "turns"];

/// Reads a budget `{steps, turns}` (`what` names it: "`budget`", "`budget` of agent 'desk'");
/// null is none. A budget bounds every cycle it covers (no QG023), so one that bounds nothing is
/// refused rather than read as a bound. Errors: not a mapping, a word other than `steps` and
/// `turns` (a misspelt `step:` would bound nothing), neither `steps` nor `turns` given as a
/// whole number, or one that is not a whole number.
pub(crate) fn read_budget(
    r: Reader<'_>,
    n: &Node,
    what: &str,
) -> Result<Option<Budget>, InputError> {
    if n.is_null() {
        return Ok(None);
    }
    let m = r.map(n, what)?;
    if let Some(e) = m
        .entries
        .iter()
        .find(|e| !BUDGET_WORDS.contains(&e.key.as_str()))
    {
        let meant = crate::input::suggest::closest(&e.key, BUDGET_WORDS.iter().copied())
            .map(|w| format!(" (did you mean `{w}`?)"))
            .unwrap_or_default();
        return Err(r
            .err(
                e.key_loc,
                format!("`{}` is not a word of {what}{meant}", e.key),
                "a budget takes `steps` (node steps in one run) and `turns` (conversation turns), each a whole \
                 number; any other word would bound nothing while the budget still counted as declared",
            )
            .with_label("steps or turns"));
    }
    let num = |k: &str| -> Result<Option<u64>, InputError> {
        m.get_some(k)
            .map(|v| r.u64(v, &format!("`{k}` of {what}")))
            .transpose()
    };
    let budget = Budget {
        steps: num("steps")?,
        turns: num("turns")?,
    };
    if budget.steps.is_none() && budget.turns.is_none() {
        return Err(r
            .err(
                m.loc,
                format!("{what} bounds nothing: it gives neither `steps` nor `turns`"),
                "write `steps: N` (node steps in one run) or `turns: N` (conversation turns), or remove the \
                 budget; an empty one would count as a declared bound and silence QG023",
            )
            .with_label("no bound"));
    }
    Ok(Some(budget))
}

/// Gathers `state` from the top graph and every subgraph (one namespace of flags, SPEC 3.1).
fn collect_state(
    r: Reader<'_>,
    g: Map<'_>,
    out: &mut Vec<FlagDecl>,
    depth: usize,
) -> Result<(), InputError> {
    if let Some(s) = g.get("state") {
        for e in r.map_or_null(s, "`state`")?.entries {
            let what = format!("state flag '{}'", e.key);
            let scope = match &e.value.value {
                _ if e.value.is_null() => FlagScope::Session,
                Value::Map(_) => {
                    let m = r.map(&e.value, &what)?;
                    match r.opt_text(m, "scope", &format!("`scope` of {what}"))? {
                        None => FlagScope::Session,
                        Some(s) => scope(r, &s)?,
                    }
                }
                _ => scope(r, &r.text(&e.value, &what)?)?,
            };
            match out.iter().find(|f| f.name == e.key) {
                Some(first) if first.scope != scope => {
                    return Err(r
                        .err(
                            e.key_loc,
                            format!(
                                "state flag '{}' is declared again with another scope (first at {})",
                                e.key,
                                r.sources.file_line(first.loc)
                            ),
                            "flags share one namespace across subgraphs: give both the same scope, or rename one",
                        )
                        .also_at(r.sources, first.loc, "first declared here"));
                }
                Some(_) => {}
                None => out.push(FlagDecl {
                    name: e.key.clone(),
                    scope,
                    loc: e.key_loc,
                }),
            }
        }
    }
    if let Some(subs) = g.get("subgraphs") {
        if depth > 64 {
            return Ok(());
        }
        for e in r.map_or_null(subs, "`subgraphs`")?.entries {
            if let Some(m) = e.value.as_map() {
                collect_state(
                    r,
                    Map {
                        loc: e.value.loc,
                        entries: m,
                    },
                    out,
                    depth + 1,
                )?;
            }
        }
    }
    Ok(())
}

fn scope(r: Reader<'_>, s: &Named) -> Result<FlagScope, InputError> {
    match s.name.as_str() {
        "session" => Ok(FlagScope::Session),
        "turn" => Ok(FlagScope::Turn),
        other => Err(r
            .err(
                s.loc,
                format!("unknown flag scope '{other}'"),
                "write `scope: session` (kept across turns) or `scope: turn` (reset each turn)",
            )
            .with_label("session or turn")),
    }
}

fn read_location(
    r: Reader<'_>,
    n: &Node,
    what: &str,
) -> Result<Option<(Loc, Option<String>)>, InputError> {
    if n.is_null() {
        return Ok(None);
    }
    let m = r.map(n, what)?;
    let help = "write `location: {line: 12, column: 5}` (line and column count from 1; `file` is optional)";
    let line = match m.get_some("line") {
        Some(l) => r.u32(l, &format!("`line` of {what}"))?,
        None => return Err(r.err(n.loc, format!("{what} has no `line`"), help)),
    };
    let column = r
        .opt_u32(m, "column", &format!("`column` of {what}"))?
        .unwrap_or(1);
    if line == 0 || column == 0 {
        let at = m
            .get("line")
            .filter(|_| line == 0)
            .or_else(|| m.get("column"))
            .map_or(n.loc, |x| x.loc);
        return Err(r.err(at, format!("{what} counts from 1, found 0"), help));
    }
    // `file`, when it names another file, is resolved by the loader (`resolve_locations`).
    let file = r
        .opt_text(m, "file", &format!("`file` of {what}"))?
        .map(|f| f.name);
    Ok(Some((Loc::new(n.loc.file, line, column), file)))
}

fn read_graph(
    r: Reader<'_>,
    g: Map<'_>,
    flags: &HashSet<String>,
    top: bool,
    depth: usize,
) -> Result<GraphDef, InputError> {
    if !top {
        misspelt(r, g, GRAPH_WORDS, "a subgraph")?;
    }
    let mut out = GraphDef {
        entry: r.opt_text(g, "entry", "`entry`")?,
        ..GraphDef::default()
    };
    if !top {
        if let Some(b) = g.get("budget") {
            out.budget = read_budget(r, b, "`budget` of the subgraph")?;
        }
    }
    if let Some(nodes) = g.get("nodes") {
        for n in r.seq(nodes, "`nodes`")? {
            out.nodes.push(read_node(r, n)?);
        }
    }
    if let Some(edges) = g.get("edges") {
        for e in r.seq(edges, "`edges`")? {
            out.edges.push(read_edge(r, e, flags)?);
        }
    }
    if let Some(sends) = g.get("sends") {
        for s in r.seq(sends, "`sends`")? {
            let m = r.map(s, "a send")?;
            let from = r.req_text(
                m,
                "from",
                "`from` of a send",
                "write the sending node's id as `from`",
            )?;
            misspelt(r, m, SEND_WORDS, &format!("the send from '{}'", from.name))?;
            let destinations = match m.get_some("destinations") {
                Some(d) => r.names(
                    d,
                    &format!("`destinations` of the send from '{}'", from.name),
                )?,
                None => {
                    return Err(r.err(
                        s.loc,
                        format!("the send from '{}' has no `destinations`", from.name),
                        "list the nodes it sends to: `\"destinations\": [\"worker\"]`",
                    ))
                }
            };
            out.sends.push(SendDef {
                from,
                destinations,
                loc: s.loc,
            });
        }
    }
    if let Some(ints) = g.get("interrupts") {
        for i in r.seq(ints, "`interrupts`")? {
            out.interrupts.push(read_interrupt(r, i)?);
        }
    }
    if let Some(subs) = g.get("subgraphs") {
        if depth > 64 {
            return Err(r.err(
                subs.loc,
                "subgraphs nest more than 64 deep",
                "flatten the export",
            ));
        }
        for e in r.map_or_null(subs, "`subgraphs`")?.entries {
            let what = format!("subgraph '{}'", e.key);
            let sm = r.map_or_null(&e.value, &what)?;
            let sub = read_graph(r, sm, flags, false, depth + 1)?;
            out.subgraphs.push((e.named(), sub));
        }
    }
    Ok(out)
}

fn read_node(r: Reader<'_>, n: &Node) -> Result<NodeDef, InputError> {
    let m = r.map(n, "a node")?;
    let id = r.req_text(m, "id", "the `id` of a node", "give the node an `id`")?;
    let what = |w: &str| format!("`{w}` of node '{}'", id.name);
    misspelt(r, m, NODE_WORDS, &format!("node '{}'", id.name))?;
    let kind = match m.get_some("kind") {
        None => {
            return Err(r
                .err(
                    id.loc,
                    format!("node '{}' has no `kind`", id.name),
                    format!("add a `kind`, one of: {}", NodeKind::ALL.join(", ")),
                )
                .with_label("no kind"))
        }
        Some(k) => {
            let k = r.text(k, &what("kind"))?;
            NodeKind::parse(&k.name).ok_or_else(|| {
                r.err(
                    k.loc,
                    format!("unknown node kind '{}'", k.name),
                    format!("use one of: {}", NodeKind::ALL.join(", ")),
                )
                .with_label("unknown kind")
            })?
        }
    };
    let (loc, declared_location, declared_file) = match m.get("location") {
        Some(l) => match read_location(r, l, &what("location"))? {
            Some((loc, file)) => (loc, true, file),
            None => (id.loc, false, None),
        },
        None => (id.loc, false, None),
    };
    let tools = r.opt_names(m, "tools", &what("tools"))?;
    Ok(NodeDef {
        kind,
        agent: r.opt_text(m, "agent", &what("agent"))?.map(|a| a.name),
        model_written: read_model_written(r, m, &id.name, &tools)?,
        tools,
        hosted: r.opt_names(m, "hosted", &what("hosted"))?,
        sets: r.opt_names(m, "sets", &what("sets"))?,
        clears: r.opt_names(m, "clears", &what("clears"))?,
        graph: r.opt_text(m, "graph", &what("graph"))?,
        channel: r.opt_text(m, "channel", &what("channel"))?.map(|c| c.name),
        loc,
        declared_location,
        declared_file,
        object_loc: id.loc,
        opaque: read_opaque(r, m, &id.name)?,
        guard_not_credited: r
            .opt_text(m, "guard_not_credited", &what("guard_not_credited"))?
            .map(|t| t.name),
        id,
    })
}

/// A node's `model_written` (issue 28 item 2): a list whose entries each name one of the node's
/// own `tools` whose arguments its code takes from what a model wrote (an exporter writes it for
/// a step that runs `tool.invoke(last.tool_calls[0]["args"])` or `run_python.invoke({"code":
/// last.content})`): the tool's name (any of its arguments may be the model's), or
/// `{"tool": name, "args": [names]}` (only those arguments are). Such an argument is chosen by a
/// model for QG017/QG018 (SPEC 6), as a tool node's are; the engines read the node as before.
/// Absent or null: none. Errors: not a list, an entry neither text nor such a mapping, or a tool
/// the node's `tools` do not list.
fn read_model_written(
    r: Reader<'_>,
    m: Map<'_>,
    id: &str,
    tools: &[Named],
) -> Result<Vec<Written>, InputError> {
    let Some(list) = m.get_some("model_written") else {
        return Ok(Vec::new());
    };
    let what = format!("`model_written` of node '{id}'");
    let mut out = Vec::new();
    for e in r.seq(list, &what)? {
        let entry = if e.as_map().is_some() {
            let em = r.map(e, &format!("an entry of {what}"))?;
            let tool = r.req_text(
                em,
                "tool",
                &format!("the `tool` of an entry of {what}"),
                "write `{\"tool\": \"run_python\", \"args\": [\"code\"]}`, or the tool's name alone",
            )?;
            let args = match em.get_some("args") {
                Some(a) => Some(
                    r.names(a, &format!("the `args` of '{}' in {what}", tool.name))?
                        .into_iter()
                        .map(|n| n.name)
                        .collect(),
                ),
                None => None,
            };
            Written { tool, args }
        } else {
            Written {
                tool: r.text(e, &format!("an entry of {what}"))?,
                args: None,
            }
        };
        if !tools.iter().any(|t| t.name == entry.tool.name) {
            let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let bad = &entry.tool.name;
            return Err(r
                .err(
                    entry.tool.loc,
                    format!("{what} names '{bad}', which the node's `tools` do not list"),
                    if listed.is_empty() {
                        format!("node '{id}' lists no `tools`: drop `model_written`, or add '{bad}' to its `tools`")
                    } else {
                        format!(
                            "name one of its tools ({}), or add '{bad}' to its `tools`",
                            listed.join(", ")
                        )
                    },
                )
                .with_label("not a tool of the node"));
        }
        out.push(entry);
    }
    Ok(out)
}

/// A node's `opaque` (SPEC 2.2, 12.5): a list of `{"what", "why", "location"?}`, each what the
/// exporter saw the node's code do but could not read. Absent or null: none. Errors: not a list,
/// an entry not a mapping, a `what` missing or not one of [`OpaqueWhat::ALL`], a `why` missing or
/// not text, a bad location (as a node's).
fn read_opaque(r: Reader<'_>, m: Map<'_>, id: &str) -> Result<Vec<OpaqueDef>, InputError> {
    let Some(list) = m.get_some("opaque") else {
        return Ok(Vec::new());
    };
    let shape = "write `\"opaque\": [{\"what\": \"pause\", \"why\": \"interrupt() in a helper\", \"location\": {\"file\": \"agent.py\", \"line\": 12}}]`, or leave `opaque` out";
    if !matches!(list.value, Value::Seq(_)) {
        return Err(r
            .err(
                list.loc,
                format!("`opaque` of node '{id}' is {}, not a list", list.describe()),
                shape,
            )
            .with_label("a list"));
    }
    let mut out = Vec::new();
    for (i, e) in r
        .seq(list, &format!("`opaque` of node '{id}'"))?
        .iter()
        .enumerate()
    {
        let what_entry = format!("entry {} of `opaque` of node '{id}'", i + 1);
        if e.as_map().is_none() {
            return Err(r
                .err(
                    e.loc,
                    format!("{what_entry} is {}, not a mapping", e.describe()),
                    shape,
                )
                .with_label("a mapping"));
        }
        let em = r.map(e, &what_entry)?;
        misspelt(r, em, OPAQUE_WORDS, &what_entry)?;
        let kinds = OpaqueWhat::ALL.join(", ");
        let what = match em.get_some("what") {
            None => {
                return Err(r
                    .err(
                        e.loc,
                        format!("{what_entry} has no `what`"),
                        format!("add `\"what\"`, one of: {kinds}"),
                    )
                    .with_label("no what"))
            }
            Some(w) => {
                let w = r.text(w, &format!("`what` of {what_entry}"))?;
                OpaqueWhat::parse(&w.name).ok_or_else(|| {
                    r.err(
                        w.loc,
                        format!("unknown `what` '{}' in {what_entry}", w.name),
                        format!("use one of: {kinds}"),
                    )
                    .with_label("unknown what")
                })?
            }
        };
        let why = match em.get_some("why") {
            Some(w) => r.text(w, &format!("`why` of {what_entry}"))?.name,
            None => {
                return Err(r
                    .err(
                        e.loc,
                        format!("{what_entry} has no `why`"),
                        "say what the exporter could not read: `\"why\": \"interrupt() in helper ask_person, which the exporter does not follow\"`",
                    )
                    .with_label("no why"))
            }
        };
        let (loc, declared_file) = match em.get("location") {
            Some(l) => match read_location(r, l, &format!("`location` of {what_entry}"))? {
                Some((loc, file)) => (Some(loc), file),
                None => (None, None),
            },
            None => (None, None),
        };
        out.push(OpaqueDef {
            what,
            why,
            loc,
            declared_file,
        });
    }
    Ok(out)
}

const EDGE_KINDS: &str = "fixed, conditional, command, stalwart_edge";

fn read_edge(r: Reader<'_>, e: &Node, flags: &HashSet<String>) -> Result<EdgeDef, InputError> {
    let m = r.map(e, "an edge")?;
    let from = r.req_text(
        m,
        "from",
        "the `from` of an edge",
        "write the id of the node the edge leaves as `from`",
    )?;
    let what = |w: &str| format!("`{w}` of the edge from '{}'", from.name);
    misspelt(r, m, EDGE_WORDS, &format!("the edge from '{}'", from.name))?;
    let kind = match m.get_some("kind") {
        None => {
            return Err(r.err(
                e.loc,
                format!("the edge from '{}' has no `kind`", from.name),
                format!("add a `kind`, one of: {EDGE_KINDS}"),
            ))
        }
        Some(k) => {
            let k = r.text(k, &what("kind"))?;
            match k.name.as_str() {
                "fixed" => EdgeKind::Fixed,
                "conditional" => EdgeKind::Conditional,
                "command" => EdgeKind::Command,
                "stalwart_edge" => EdgeKind::StalwartEdge,
                other => {
                    return Err(r
                        .err(
                            k.loc,
                            format!("unknown edge kind '{other}'"),
                            format!("use one of: {EDGE_KINDS}"),
                        )
                        .with_label("unknown kind"))
                }
            }
        }
    };
    let destinations = match m.get_some("destinations") {
        None => None,
        Some(d) => Some(r.names(d, &what("destinations"))?),
    };
    let guard = match m.get_some("guard") {
        None => None,
        Some(g) => Some(read_guard(r, g, flags, &from.name)?),
    };
    let exit_after = r.opt_u32(m, "exit_after", &what("exit_after"))?;
    let (loc, declared_file) = match m.get("location") {
        Some(l) => read_location(r, l, &what("location"))?.unwrap_or((e.loc, None)),
        None => (e.loc, None),
    };
    Ok(EdgeDef {
        from,
        kind,
        destinations,
        guard,
        exit_after,
        loc,
        declared_file,
        object_loc: e.loc,
    })
}

/// The position of byte `offset` of a scalar's text: its start, past an opening quote.
fn offset_loc(n: &Node, text: &str, offset: usize) -> Loc {
    let quoted = matches!(n.value, Value::Scalar { plain: false, .. });
    let mut end = offset.min(text.len());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    let chars = text.get(..end).map_or(0, |s| s.chars().count());
    let col = n.loc.column as usize + usize::from(quoted) + chars;
    Loc {
        column: u32::try_from(col).unwrap_or(u32::MAX),
        ..n.loc
    }
}

fn read_guard(
    r: Reader<'_>,
    n: &Node,
    flags: &HashSet<String>,
    from: &str,
) -> Result<crate::input::ir::Guard, InputError> {
    let text = r
        .text(n, &format!("`guard` of the edge from '{from}'"))?
        .name;
    let guard = parse_guard(&text).map_err(|(off, msg)| {
        r.err(
            offset_loc(n, &text, off),
            format!("bad guard on the edge from '{from}': {msg}"),
            "a guard is a flag name, `!e`, `e && e`, `e || e` or `(e)`, e.g. \"approved && !refunded\"",
        )
        .with_label("here")
    })?;
    // Flags in the text, in order, with their offsets: the parser accepted it, so every run of
    // name characters is a flag.
    let mut rest = text.char_indices().peekable();
    while let Some((start, c)) = rest.next() {
        if !(c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, d)) = rest.peek() {
            if d.is_alphanumeric() || matches!(d, '_' | '.' | '-') {
                end = i + d.len_utf8();
                rest.next();
            } else {
                break;
            }
        }
        let name = text.get(start..end).unwrap_or("");
        if !flags.contains(name) {
            return Err(InputError::at_width(
                    r.sources,
                    offset_loc(n, &text, start),
                    name.chars().count(),
                    format!("the guard on the edge from '{from}' reads flag '{name}', which `state` does not declare"),
                    validate::declare_flag_help(name, flags),
                )
                .with_label("undeclared flag"));
        }
    }
    Ok(guard)
}

fn read_interrupt(r: Reader<'_>, i: &Node) -> Result<InterruptDef, InputError> {
    let m = r.map(i, "an interrupt")?;
    let node = r.req_text(
        m,
        "node",
        "the `node` of an interrupt",
        "write the id of the node it pauses at as `node`",
    )?;
    let what = |w: &str| format!("`{w}` of the interrupt at '{}'", node.name);
    misspelt(
        r,
        m,
        INTERRUPT_WORDS,
        &format!("the interrupt at '{}'", node.name),
    )?;
    let times = "write `when`: before, after, inside or call";
    let when = match m.get_some("when") {
        None => {
            return Err(r.err(
                i.loc,
                format!("the interrupt at '{}' has no `when`", node.name),
                "add `when`: before, after, inside or call",
            ))
        }
        Some(w) => {
            let w = r.text(w, &what("when"))?;
            match w.name.as_str() {
                "before" => When::Before,
                "after" => When::After,
                "inside" => When::Inside,
                "call" => When::Call,
                other => {
                    return Err(r
                        .err(w.loc, format!("unknown interrupt time '{other}'"), times)
                        .with_label("before, after, inside or call"))
                }
            }
        }
    };
    let tool = r.opt_text(m, "tool", &what("tool"))?;
    let answer = r.opt_text(m, "answer", &what("answer"))?;
    let standing = r.flag(m, "standing", &what("standing"))?;
    if standing && when != When::Call {
        // SPEC 2.2, 3.1 "Standing approvals": a yes for the rest of the run is an answer to a
        // review of each call; a pause that confirms once has no later calls to cover.
        let at = m.get("standing").map_or(i.loc, |s| s.loc);
        return Err(r
            .err(
                at,
                format!(
                    "the `{}` interrupt at '{}' says `standing`: only a review of each call (`\"when\": \"call\"`) can be answered yes for the rest of the run",
                    when.as_str(),
                    node.name
                ),
                "remove `standing`, or write `\"when\": \"call\"` if the person reviews each call of the tool",
            )
            .with_label("only on a call review"));
    }
    if when == When::Call {
        // SPEC 2.2, 12.2: a review of each call names the tool whose calls it reviews, and its
        // answer is per call, so no state flag holds it.
        if tool.is_none() {
            return Err(r
                .err(
                    m.get("tool").map_or(i.loc, |t| t.loc),
                    format!(
                        "the `call` interrupt at '{}' names no `tool`: a review of each call reviews the calls of one tool",
                        node.name
                    ),
                    "name the tool whose calls the person reviews (`\"tool\": \"send_email\"`), one interrupt per tool",
                )
                .with_label("no tool"));
        }
        if let Some(a) = &answer {
            return Err(r
                .err(
                    a.loc,
                    format!(
                        "the `call` interrupt at '{}' has an `answer` ('{}'): the person answers each call, so no flag holds the answer",
                        node.name, a.name
                    ),
                    "remove `answer`; a no declines that one call. To route on a single answer, use `\"when\": \"inside\"` with `answer`",
                )
                .with_label("not allowed on a call review"));
        }
    }
    Ok(InterruptDef {
        tool,
        answer,
        standing,
        when,
        loc: i.loc,
        node,
    })
}
