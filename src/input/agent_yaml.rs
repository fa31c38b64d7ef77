//! The Bot Builder `agent.yaml` reader and compiler (SPEC 2.1).
//!
//! Compiles `agents:` into one graph, for each agent `A` in order: the router `A`, `A_model` (only
//! with `model`), `A_tools` (kind `tools`, only with `tools`), or for a remote agent the `remote`
//! node `A`; plus `__start__` and `__end__`. Edges are all `conditional` except `__start__` → the
//! entry agent (`fixed`):
//!
//! - router `A` → [`A_tools`, `A_model`, `__end__`] (those that exist), and, when `A` has no
//!   model, its hand-off targets;
//! - `A_model` → [`A_tools`, `__end__`, each hand-off target];
//! - `A_tools` → [`A_model`, `A`, `__end__`];
//! - remote `A` → [`__end__`, each agent that hands off to it].
//!
//! Every node's location is the line of the key `A:` (the tool node's: A's `tools:` key). The
//! catalogue is merged from the `tools:` list in order (`catalogue: path` files, relative to
//! agent.yaml's folder; inline `name:` entries; `python:` modules, read statically by
//! [`super::python`]). `undo: {tool: undoer}` sets compensations; an agent
//! of `privilege: high` makes each of its tools privileged.

use std::collections::HashSet;
use std::path::Path;

use crate::input::error::InputError;
use crate::input::ir::{AgentInfo, EdgeDef, EdgeKind, Export, GraphDef, Named, NodeDef, NodeKind};
use crate::input::source::{FileId, Loc, SourceMap};

use super::catalogue::{self, Parts};
use super::export::{read_budget, read_run_settings};
use super::facts;
use super::python::{self, PyModule};
use super::tree::{self, Entry, Map, Node, Reader};
use super::{resolve_path, validate, Inputs};

/// agent.yaml's default `recursion_limit` (SPEC 2.2).
pub(crate) const DEFAULT_RECURSION_LIMIT: u32 = 60;

const TOP_WORDS: &[&str] = &[
    "agents",
    "tools",
    "rulebook",
    "facts",
    "undo",
    "budget",
    "session_steps",
    "settings",
    "entry",
    "recursion_limit",
];
const AGENT_WORDS: &[&str] = &[
    "model",
    "tools",
    "hands_off_to",
    "on_unread",
    "privilege",
    "budget",
    "remote",
    "description",
    "instructions",
];
/// The words of `settings:`: `colang_version` and `on_unread` are read; `language` and
/// `taint_policy` are Bot Builder's, accepted and not read (taint is always checked).
const SETTINGS_WORDS: &[&str] = &["colang_version", "on_unread", "language", "taint_policy"];
/// The words of an agent's `remote:`.
const REMOTE_WORDS: &[&str] = &["url", "channel"];
/// What agent.yaml's reader does with a word it does not know (a misspelt one is refused).
const UNKNOWN: &str = "a word agent.yaml's reader does not know is ignored, with a warning";

/// Refuses a word of `m` (the map of `owner`) a small edit away from one of `known`, and warns of
/// every other word not in `known`, which is ignored.
fn words(
    r: Reader<'_>,
    m: Map<'_>,
    known: &[&str],
    owner: &str,
    warnings: &mut Vec<String>,
) -> Result<(), InputError> {
    r.refuse_misspelt(m, known, owner, "agent.yaml", UNKNOWN)?;
    for e in m
        .entries
        .iter()
        .filter(|e| !known.contains(&e.key.as_str()))
    {
        warnings.push(format!(
            "{}: unknown word '{}' on {owner} is ignored (known: {})",
            r.sources.file_line(e.key_loc),
            e.key,
            known.join(", ")
        ));
    }
    Ok(())
}

/// One agent as written.
struct Agent {
    name: Named,
    /// `model:` given (a name or a mapping of settings): the agent calls a model.
    model: bool,
    tools: Vec<Named>,
    tools_key: Option<Loc>,
    hands_off_to: Vec<Named>,
    remote_channel: Option<Option<String>>,
    info: AgentInfo,
}

/// Loads `path` (agent.yaml), compiles it and validates the result.
pub(crate) fn load(path: &Path) -> Result<Inputs, InputError> {
    let mut sources = SourceMap::default();
    let display = path.display().to_string();
    let file = tree::read_file(&mut sources, path, display.clone())
        .map_err(|e| InputError::io(path, e))?;
    let root = tree::parse(&sources, file)?;

    // The catalogue first: it may read more files into `sources`.
    let mut parts = Parts::default();
    let mut catalogue_files: Vec<String> = Vec::new();
    let mut python_modules: Vec<PyModule> = Vec::new();
    {
        let r = Reader { sources: &sources };
        let map = r.map(&root, "agent.yaml")?;
        if let Some(t) = map.get("tools") {
            let items = r.seq(t, "`tools`")?.to_vec();
            collect_tools(
                &mut sources,
                path,
                &items,
                &mut parts,
                &mut catalogue_files,
                &mut python_modules,
            )?;
        }
    }
    let r = Reader { sources: &sources };
    let map = r.map(&root, "agent.yaml")?;

    let mut warnings = Vec::new();
    words(r, map, TOP_WORDS, "the top level", &mut warnings)?;

    // `undo:` shorthand: tool → undoer (or none), merged as the tool's `undo` word.
    if let Some(u) = map.get("undo") {
        for e in r.map_or_null(u, "`undo`")?.entries {
            if !parts.has_tool(&e.key) {
                return Err(r
                    .err(
                        e.key_loc,
                        format!("`undo` names tool '{}', which no catalogue declares", e.key),
                        "declare the tool (a `tools:` catalogue or an inline `- name:` entry), or fix the name",
                    )
                    .with_label("not in the catalogue"));
            }
            parts.add_tool(
                e.named(),
                e.key_loc,
                vec![Entry {
                    key: "undo".into(),
                    key_loc: e.key_loc,
                    value: e.value.clone(),
                }],
            );
        }
    }
    let mut cat = catalogue::build(r, &parts)?;

    let agents_node =
        match map.get("agents") {
            Some(a) => a,
            None => return Err(r
                .err(
                    map.loc,
                    "agent.yaml declares no `agents`",
                    "add `agents:` with at least one agent (`desk: {model: ..., tools: [...]}`)",
                )
                .with_label("no agents")),
        };
    let agents_map = r.map_or_null(agents_node, "`agents`")?;
    if agents_map.entries.is_empty() {
        return Err(r.err(
            agents_node.loc,
            "`agents` is empty",
            "declare at least one agent under `agents:`",
        ));
    }
    let agents_loc = map.entry("agents").map_or(map.loc, |e| e.key_loc);

    let mut agents = Vec::new();
    for e in agents_map.entries {
        agents.push(read_agent(r, e, &mut warnings)?);
    }
    let names: Vec<&str> = agents.iter().map(|a| a.name.name.as_str()).collect();
    for a in &agents {
        for h in &a.hands_off_to {
            if !names.contains(&h.name.as_str()) {
                return Err(r
                    .err(
                        h.loc,
                        format!(
                            "agent '{}' hands off to '{}', which is not an agent",
                            a.name.name, h.name
                        ),
                        format!("name one of the agents ({})", names.join(", ")),
                    )
                    .with_label("no such agent"));
            }
        }
    }
    let entry_idx = match r.opt_text(map, "entry", "`entry`")? {
        None => 0,
        Some(e) => names.iter().position(|n| *n == e.name).ok_or_else(|| {
            r.err(
                e.loc,
                format!("`entry` names '{}', which is not an agent", e.name),
                format!("name one of the agents ({})", names.join(", ")),
            )
            .with_label("no such agent")
        })?,
    };

    // Privileged agents make their tools privileged.
    let privileged: std::collections::HashSet<&str> = agents
        .iter()
        .filter(|a| a.info.privilege_high)
        .flat_map(|a| a.tools.iter().map(|t| t.name.as_str()))
        .collect();
    for td in cat.tools.iter_mut() {
        if privileged.contains(td.name.as_str()) {
            td.privileged = true;
        }
    }

    let mut export = Export {
        name: agents.get(entry_idx).map(|a| a.name.name.clone()),
        source: Some(display.clone()),
        recursion_limit: DEFAULT_RECURSION_LIMIT,
        ..Export::default()
    };
    read_run_settings(r, map, &mut export)?;
    let settings = match map.get("settings") {
        Some(n) => Some(r.map_or_null(n, "`settings`")?),
        None => None,
    };
    if let Some(m) = settings {
        words(r, m, SETTINGS_WORDS, "`settings`", &mut warnings)?;
    }
    let colang_version = facts::read_colang_version(&r, settings)?;
    let default_on_unread = facts::read_default_on_unread(&r, settings)?;
    let facts = facts::read_facts(&r, map.get("facts"), &cat)?;
    let rulebook = match r.opt_text(map, "rulebook", "`rulebook`")? {
        None => None,
        Some(rb) => {
            let (resolved, shown) = resolve_path(path, &rb.name);
            match crate::input::files::confine(&resolved, path) {
                Ok(()) => {}
                Err(crate::input::files::ReadError::NotFound) => {
                    return Err(r
                        .err(
                            rb.loc,
                            format!(
                                "the rulebook '{}' does not exist (looked for {shown})",
                                rb.name
                            ),
                            "check the path: it is read relative to agent.yaml's folder",
                        )
                        .with_label("no such file"))
                }
                Err(e) => {
                    return Err(InputError::unreadable_at(
                        r.sources,
                        rb.loc,
                        &format!("the rulebook '{}'", rb.name),
                        &shown,
                        &e,
                    ))
                }
            }
            Some(super::RulebookRef {
                shown,
                at: rb.loc,
                named_by: path.to_path_buf(),
            })
        }
    };

    export.graph = compile(&agents, entry_idx, agents_loc);
    export.agents = agents.iter().map(|a| a.info.clone()).collect();
    export.warnings = warnings;

    let desc = if catalogue_files.is_empty() {
        format!("{display}'s `tools:` (it names no catalogue)")
    } else {
        let mut all = catalogue_files.clone();
        if parts.tools.iter().any(|(n, _, _)| n.loc.file == file) {
            all.push(format!("{display}'s inline tools"));
        }
        all.join(", ")
    };
    validate::validate(r, &export, &cat, &desc, true)?;
    cat.tools.shrink_to_fit();

    Ok(Inputs {
        export,
        catalogue: cat,
        catalogue_json: parts.to_json(),
        input_display: display,
        from_agent_yaml: true,
        rulebook,
        facts,
        colang_version,
        default_on_unread,
        sources,
        python_modules,
    })
}

/// Reads the Python tool module `module` (a dotted name, resolved against agent.yaml's folder)
/// into `sources` and its tools into `parts`.
fn read_python(
    sources: &mut SourceMap,
    agent_path: &Path,
    module: &Named,
    parts: &mut Parts,
) -> Result<PyModule, InputError> {
    let base = agent_path.parent().unwrap_or(Path::new(""));
    let r = Reader { sources: &*sources };
    if !python::valid_name(&module.name) {
        return Err(r
            .err(
                module.loc,
                format!(
                    "'{}' is not a Python module name: write the module as Python imports it, identifiers joined by dots",
                    module.name
                ),
                "name the module as Python imports it from agent.yaml's folder (`python: shop.tools` reads shop/tools.py); a module outside agent.yaml's folder is not read",
            )
            .with_label("not a module name"));
    }
    let (found, tried) = python::resolve(base, &module.name);
    let Some(file) = found else {
        let dotted = module.name.replace('.', "/");
        return Err(r
            .err(
                module.loc,
                format!(
                    "no Python module '{}': neither {dotted}.py nor {dotted}/__init__.py is beside agent.yaml ({})",
                    module.name,
                    tried.display()
                ),
                "name the module as Python imports it from agent.yaml's folder (`python: shop.tools` reads shop/tools.py)",
            )
            .with_label("no such module"));
    };
    if !crate::input::files::in_workspace(&file, agent_path) {
        return Err(r
            .err(
                module.loc,
                format!("the module '{}' ({}) lies outside agent.yaml's folder and the current directory", module.name, file.display()),
                "keep the module in the repository, beside agent.yaml or below it",
            )
            .with_label("outside the repository"));
    }
    let shown = file
        .strip_prefix(".")
        .unwrap_or(&file)
        .display()
        .to_string();
    let id = tree::read_file(sources, &file, shown.clone()).map_err(|e| {
        InputError::unreadable_at(
            sources,
            module.loc,
            &format!("the module '{}'", module.name),
            &shown,
            &e,
        )
    })?;
    let tools = python::read(sources, id)?;
    let mut out = PyModule {
        module: module.name.clone(),
        file: id,
        tools: Vec::new(),
    };
    for t in tools {
        out.tools
            .push((t.name.name.clone(), t.function.clone(), t.span.clone()));
        // The entry is located at the `def` line, even when the decorator gives the name.
        let name = Named {
            name: t.name.name,
            loc: t.loc,
        };
        parts.add_tool(name, t.loc, t.words);
    }
    Ok(out)
}

/// Reads the `tools:` list: catalogue files (read into `sources`), inline entries, python modules.
fn collect_tools(
    sources: &mut SourceMap,
    agent_path: &Path,
    items: &[Node],
    parts: &mut Parts,
    files: &mut Vec<String>,
    modules: &mut Vec<PyModule>,
) -> Result<(), InputError> {
    let help = "write `- catalogue: ./tools.catalogue.yaml`, or an inline `- name: tool_name` with `kind: read|write` and its words";
    for item in items {
        let r = Reader { sources: &*sources };
        let m = r.map(item, "an entry of `tools`")?;
        if let Some(p) = m.entry("python") {
            let module = r.text(&p.value, "`python` in `tools`")?;
            if let Some(other) = m.entries.iter().find(|e| e.key != "python") {
                return Err(r.err(
                    other.key_loc,
                    format!(
                        "a `python:` entry of `tools` takes no other word (found '{}')",
                        other.key
                    ),
                    "give the tool's words in its decorator, or add an inline `- name:` entry after the module",
                ));
            }
            let m = read_python(sources, agent_path, &module, parts)?;
            files.push(sources.file(m.file).display.clone());
            modules.push(m);
            continue;
        }
        if let Some(c) = m.entry("catalogue") {
            let rel = r.text(&c.value, "`catalogue` in `tools`")?;
            if let Some(other) = m.entries.iter().find(|e| e.key != "catalogue") {
                return Err(r.err(
                    other.key_loc,
                    format!(
                        "a `catalogue:` entry of `tools` takes no other word (found '{}')",
                        other.key
                    ),
                    help,
                ));
            }
            let (resolved, shown) = resolve_path(agent_path, &rel.name);
            let read = crate::input::files::confine(&resolved, agent_path)
                .and_then(|()| tree::read_file(sources, &resolved, shown.clone()));
            let id: FileId = match read {
                Ok(id) => id,
                Err(e) => {
                    return Err(InputError::unreadable_at(
                        sources,
                        rel.loc,
                        &format!("the catalogue '{}'", rel.name),
                        &shown,
                        &e,
                    ))
                }
            };
            let croot = tree::parse(sources, id)?;
            catalogue::collect(Reader { sources: &*sources }, &croot, parts)?;
            files.push(shown);
            continue;
        }
        match m.entry("name") {
            Some(n) => {
                let name = r.text(&n.value, "`name` of an inline tool")?;
                let words: Vec<Entry> = m.entries.iter().filter(|e| e.key != "name").cloned().collect();
                parts.add_tool(name, item.loc, words);
            }
            None => {
                return Err(r
                    .err(item.loc, "this `tools` entry is neither `catalogue:`, `python:` nor an inline tool with `name:`", help)
                    .with_label("unknown entry"))
            }
        }
    }
    Ok(())
}

fn read_agent(r: Reader<'_>, e: &Entry, warnings: &mut Vec<String>) -> Result<Agent, InputError> {
    let a = &e.key;
    let what = |w: &str| format!("`{w}` of agent '{a}'");
    let m = r.map_or_null(&e.value, &format!("agent '{a}'"))?;
    words(r, m, AGENT_WORDS, &format!("agent '{a}'"), warnings)?;
    let model = m
        .get_some("model")
        .is_some_and(|n| n.as_bool() != Some(false));
    let tools = r.opt_names(m, "tools", &what("tools"))?;
    let tools_key = m
        .entry("tools")
        .filter(|_| !tools.is_empty())
        .map(|t| t.key_loc);
    let hands_off_to = r.opt_names(m, "hands_off_to", &what("hands_off_to"))?;
    let on_unread = r.opt_text(m, "on_unread", &what("on_unread"))?;
    if let Some(o) = &on_unread {
        if !matches!(o.name.as_str(), "refuse" | "model" | "ask" | "answer") {
            return Err(r
                .err(
                    o.loc,
                    format!("unknown `on_unread` '{}' on agent '{a}'", o.name),
                    "write one of: refuse, model, ask, answer",
                )
                .with_label("refuse, model, ask or answer"));
        }
    }
    let privilege_high = r
        .opt_choice(
            m,
            "privilege",
            &format!("agent '{a}'"),
            &[("low", false), ("high", true)],
        )?
        .unwrap_or(false);
    let budget = match m.get("budget") {
        Some(b) => read_budget(r, b, &what("budget"))?,
        None => None,
    };
    let remote_channel = match m.get_some("remote") {
        None => None,
        Some(rn) => {
            let rm = r.map(rn, &what("remote"))?;
            words(r, rm, REMOTE_WORDS, &what("remote"), warnings)?;
            let _url = r.opt_text(rm, "url", &format!("`remote.url` of agent '{a}'"))?;
            let channel = r
                .opt_text(rm, "channel", &format!("`remote.channel` of agent '{a}'"))?
                .map(|c| c.name);
            if let Some(inside) = ["model", "tools", "hands_off_to"]
                .iter()
                .find_map(|w| m.entry(w))
            {
                return Err(r
                    .err(
                        inside.key_loc,
                        format!("agent '{a}' is remote, so its `{}` is not ours to declare", inside.key),
                        "remove it (a remote agent's inside is not ours), or remove `remote` to make the agent local",
                    )
                    .with_label("on a remote agent"));
            }
            Some(channel)
        }
    };
    Ok(Agent {
        name: e.named(),
        model,
        tools,
        tools_key,
        hands_off_to,
        remote_channel,
        info: AgentInfo {
            name: a.clone(),
            budget,
            on_unread: on_unread.map(|o| o.name),
            privilege_high,
            loc: e.key_loc,
        },
    })
}

fn named(name: &str, loc: Loc) -> Named {
    Named {
        name: name.to_string(),
        loc,
    }
}

/// Builds the graph of SPEC 2.1 from the agents.
fn compile(agents: &[Agent], entry: usize, agents_loc: Loc) -> GraphDef {
    let mut g = GraphDef::default();
    let node = |id: &str, kind: NodeKind, agent: Option<&str>, loc: Loc, declared: bool| NodeDef {
        id: named(id, loc),
        kind,
        agent: agent.map(str::to_string),
        tools: Vec::new(),
        hosted: Vec::new(),
        model_written: Vec::new(),
        sets: Vec::new(),
        clears: Vec::new(),
        graph: None,
        channel: None,
        loc,
        declared_location: declared,
        declared_file: None,
        object_loc: loc,
        opaque: Vec::new(),
        guard_not_credited: None,
    };
    g.nodes
        .push(node("__start__", NodeKind::Start, None, agents_loc, false));
    for a in agents {
        let name = a.name.name.as_str();
        let loc = a.name.loc;
        if let Some(channel) = &a.remote_channel {
            let mut n = node(name, NodeKind::Remote, Some(name), loc, true);
            n.channel = channel.clone();
            g.nodes.push(n);
            continue;
        }
        g.nodes
            .push(node(name, NodeKind::Router, Some(name), loc, true));
        if a.model {
            let mut n = node(
                &format!("{name}_model"),
                NodeKind::Model,
                Some(name),
                loc,
                true,
            );
            n.tools = a.tools.clone();
            g.nodes.push(n);
        }
        if let Some(tloc) = a.tools_key {
            let mut n = node(
                &format!("{name}_tools"),
                NodeKind::Tools,
                Some(name),
                tloc,
                true,
            );
            n.id.loc = tloc;
            n.tools = a.tools.clone();
            g.nodes.push(n);
        }
    }
    g.nodes
        .push(node("__end__", NodeKind::End, None, agents_loc, false));

    let edge = |from: &str, kind: EdgeKind, dests: Vec<String>, loc: Loc| {
        let mut seen = HashSet::new();
        let destinations = dests
            .into_iter()
            .filter(|d| seen.insert(d.clone()))
            .map(|d| named(&d, loc))
            .collect();
        EdgeDef {
            from: named(from, loc),
            kind,
            destinations: Some(destinations),
            guard: None,
            exit_after: None,
            loc,
            declared_file: None,
            object_loc: loc,
        }
    };
    if let Some(e) = agents.get(entry) {
        g.edges.push(edge(
            "__start__",
            EdgeKind::Fixed,
            vec![e.name.name.clone()],
            e.name.loc,
        ));
    }
    for a in agents {
        let name = a.name.name.as_str();
        let loc = a.name.loc;
        let model_id = a.model.then(|| format!("{name}_model"));
        let tools_id = a.tools_key.map(|_| format!("{name}_tools"));
        let handoffs: Vec<String> = a.hands_off_to.iter().map(|h| h.name.clone()).collect();
        if a.remote_channel.is_some() {
            let mut dests = vec!["__end__".to_string()];
            dests.extend(
                agents
                    .iter()
                    .filter(|b| b.hands_off_to.iter().any(|h| h.name == name))
                    .map(|b| b.name.name.clone()),
            );
            g.edges.push(edge(name, EdgeKind::Conditional, dests, loc));
            continue;
        }
        let mut router: Vec<String> = tools_id.iter().chain(model_id.iter()).cloned().collect();
        router.push("__end__".to_string());
        if model_id.is_none() {
            router.extend(handoffs.iter().cloned());
        }
        g.edges.push(edge(name, EdgeKind::Conditional, router, loc));
        if let Some(mid) = &model_id {
            let mut dests: Vec<String> = tools_id.iter().cloned().collect();
            dests.push("__end__".to_string());
            dests.extend(handoffs.iter().cloned());
            g.edges.push(edge(mid, EdgeKind::Conditional, dests, loc));
        }
        if let (Some(tid), Some(tloc)) = (&tools_id, a.tools_key) {
            let mut dests: Vec<String> = model_id.iter().cloned().collect();
            dests.push(name.to_string());
            dests.push("__end__".to_string());
            g.edges.push(edge(tid, EdgeKind::Conditional, dests, tloc));
        }
    }
    g
}
