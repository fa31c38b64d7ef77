//! The inputs floor, the bottom of the house. The readers (SPEC 2.1–2.3): agent.yaml, `qls-graph/1`
//! exports and catalogues, into the [`ir`] types, with every declaration's position in a
//! [`SourceMap`] ([`source`]).
//!
//! Beside the readers sit what they stand on: [`files`], the one reader every file a run opens
//! goes through; [`error`], the [`InputError`] that stops a run before the proof; [`visible`],
//! input text made safe to print.
//!
//! Two ways in, one result ([`Inputs`]):
//! - [`load_agent_yaml`]: a Bot Builder `agent.yaml`, compiled to a graph and a catalogue (SPEC 2.1);
//! - [`load_export`]: a `qls-graph/1` export and its catalogue (SPEC 2.2, 2.3).
//!
//! [`read_traces`] reads the traces of real runs (`--traces RUNS.jsonl`, SPEC 2.4) into the same
//! [`SourceMap`], for QG016.
//!
//! Both read, then validate every cross-reference; any bad input is an [`InputError`] pointing at
//! the offending word with the fix (exit status 2). Nothing here panics on any input.
//! [`write_export`] writes the pair back (`--export-only`), and loading what it wrote gives the
//! same export and catalogue.

use std::path::{Component, Path, PathBuf};

use crate::input::error::InputError;
use crate::input::ir::{Catalogue, Export};
use crate::input::source::SourceMap;

mod agent_yaml;
mod catalogue;
pub(crate) mod error;
mod export;
mod facts;
pub(crate) mod files;
pub(crate) mod guard;
pub(crate) mod ir;
pub(crate) mod mcp;
pub(crate) mod python;
pub(crate) mod source;
pub(crate) mod suggest;
pub(crate) mod traces;
pub(crate) mod tree;
mod validate;
pub(crate) mod visible;
mod write;

pub use guard::parse_guard;
pub use python::PyModule;
pub use traces::{read_traces, Trace};
pub(crate) use write::catalogue_path;
pub use write::write_export;

/// Everything a run reads, ready for the model.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The graph (compiled, for agent.yaml).
    pub export: Export,
    /// The catalogue (merged in order, for agent.yaml).
    pub catalogue: Catalogue,
    /// Every file read: agent.yaml or the export first, then the catalogue file(s).
    pub sources: SourceMap,
    /// The input as the user named it (agent.yaml's path, or the `--graph` path).
    pub(crate) input_display: String,
    /// True when the input was an agent.yaml.
    pub from_agent_yaml: bool,
    /// agent.yaml's `rulebook:`, resolved against agent.yaml's folder; it exists and lies in the
    /// workspace. `None` for exports.
    pub rulebook: Option<RulebookRef>,
    /// agent.yaml's `facts:` (SPEC 2.1): where each rulebook fact comes from. Empty for exports.
    pub(crate) facts: Vec<crate::input::ir::Fact>,
    /// agent.yaml's `settings.colang_version`, when given (`1.0`, `2.x`).
    pub(crate) colang_version: Option<crate::input::ir::Named>,
    /// agent.yaml's `settings.on_unread`, when given (every agent's default).
    pub(crate) default_on_unread: Option<String>,
    /// The Python tool modules agent.yaml's `tools:` named, in order (for the code checks).
    pub python_modules: Vec<PyModule>,
    /// The catalogue's words as written (`tools` → each tool's merged words, `channels`,
    /// `stores`), so `--export-only` can write words the IR does not keep (schemas, `bind`,
    /// unknown words) verbatim.
    pub catalogue_json: serde_json::Map<String, serde_json::Value>,
}

/// Where agent.yaml names its rulebook (SPEC 2.1 `rulebook:`), so that reading it is held to the
/// rule every path an input names follows ([`crate::input::files`]), with errors at this line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulebookRef {
    /// The path resolved against agent.yaml's folder, as displayed (`examples/shop/policy.co`).
    pub shown: String,
    /// The value of the `rulebook:` key.
    pub(crate) at: crate::input::source::Loc,
    /// agent.yaml's path: the rulebook's files lie under its folder or the current directory.
    pub(crate) named_by: PathBuf,
}

/// Reads and compiles a Bot Builder agent.yaml (SPEC 2.1) with the catalogues its `tools:` names.
///
/// Errors: the file (or a catalogue it names) unreadable or not YAML; any SPEC 2.1 word of the
/// wrong shape; a hand-off or `entry` naming no agent; a `python:` tool module that is not a
/// dotted name, is missing, lies outside the repository, or cannot be read statically (see
/// `src/input/python.rs`: each error names the module's line and column with the fix); a
/// `rulebook:` that does not exist; and every check of [`load_export`].
pub fn load_agent_yaml(path: &Path) -> Result<Inputs, InputError> {
    agent_yaml::load(path)
}

/// Reads a `qls-graph/1` export (SPEC 2.2) and its catalogue (SPEC 2.3, JSON or YAML).
///
/// Errors (each at the offending word, with the fix): unreadable files, JSON/YAML syntax, a
/// `format` other than `qls-graph/1` / `qls-catalogue/1`, unknown node or edge kinds, bad guards,
/// dangling destinations or sources, duplicate / empty / `/`-holding ids, interrupts on missing
/// nodes, tools absent from the catalogue, undeclared flags, fixed edges with `null`
/// destinations, misplaced `../id`, subgraph nodes without `graph`, self-containing subgraphs,
/// `session_steps` outside 1..=16, `recursion_limit` 0.
pub fn load_export(graph: &Path, catalogue: &Path) -> Result<Inputs, InputError> {
    let mut sources = SourceMap::default();
    let gdisplay = graph.display().to_string();
    let cdisplay = catalogue.display().to_string();
    let gid = tree::read_file(&mut sources, graph, gdisplay.clone())
        .map_err(|e| InputError::io(graph, e))?;
    let cid = tree::read_file(&mut sources, catalogue, cdisplay.clone())
        .map_err(|e| InputError::io(catalogue, e))?;
    let r = tree::Reader { sources: &sources };
    let groot = tree::parse(&sources, gid)?;
    let mut export = export::read_export(r, &groot)?;
    let mut unlocated = Vec::new();
    let mut read = Resolved::default();
    resolve_locations(
        &mut export.graph,
        &mut sources,
        graph,
        gid,
        "",
        &mut unlocated,
        &mut read,
    );
    if export.framework != crate::input::ir::Framework::Other {
        // SPEC 12.4: a finding falls back to the export only where no source line is known,
        // and the report says so (the export's warnings are shown in it).
        export.warnings.extend(unlocated);
    }
    let defined = resolve_tool_locations(&export, &mut sources, graph, gid, &mut read);
    let r = tree::Reader { sources: &sources };
    let croot = tree::parse(&sources, cid)?;
    let mut parts = catalogue::Parts::default();
    catalogue::collect(r, &croot, &mut parts)?;
    let mut cat = catalogue::build(r, &parts)?;
    for t in &mut cat.tools {
        t.defined = defined.get(&t.name).copied();
    }
    validate::validate(r, &export, &cat, &cdisplay, false)?;
    let catalogue_json = parts.to_json();
    Ok(Inputs {
        export,
        catalogue: cat,
        sources,
        input_display: gdisplay,
        from_agent_yaml: false,
        rulebook: None,
        facts: Vec::new(),
        colang_version: None,
        default_on_unread: None,
        catalogue_json,
        python_modules: Vec::new(),
    })
}

/// Points each node whose `location` names another `file` into that file: resolved against the
/// export's folder, then the current directory, and read as a source when it lies under one of
/// them. A file that cannot be read, or lies elsewhere, leaves the node at its own entry in the
/// export, so no location points at a line of the wrong file.
///
/// `unlocated` gets, for each node that may carry a finding (not a start or an end) and is left
/// at its entry in the export, a sentence saying why (`prefix` qualifies subgraph nodes).
fn resolve_locations(
    g: &mut crate::input::ir::GraphDef,
    sources: &mut SourceMap,
    export: &Path,
    own: usize,
    prefix: &str,
    unlocated: &mut Vec<String>,
    read: &mut Resolved,
) {
    use crate::input::ir::NodeKind;
    for n in &mut g.nodes {
        let shown = if prefix.is_empty() {
            n.id.name.clone()
        } else {
            format!("{}' of subgraph '{prefix}", n.id.name)
        };
        let carries = !matches!(n.kind, NodeKind::Start | NodeKind::End);
        match resolve_file(n.declared_file.as_deref(), sources, export, own, read) {
            Ok(Some(i)) => n.loc.file = i,
            Ok(None) => {
                if carries && n.declared_file.is_none() {
                    unlocated.push(format!(
                        "node '{shown}' has no source line (the exporter found none): findings on it point at the export"
                    ));
                }
            }
            Err(()) => {
                if carries {
                    unlocated.push(format!(
                        "node '{shown}': its location names {}, which cannot be read from here or lies outside the repository: findings on it point at the export",
                        n.declared_file.as_deref().unwrap_or("?")
                    ));
                }
                n.loc = n.object_loc;
                n.declared_location = false;
            }
        }
        resolve_opaque(n, &shown, sources, export, own, unlocated, read);
    }
    // The first node of each name whose line is in the user's code, found by hash: a scan per
    // edge is quadratic in a graph of 20,000 nodes (issue 26).
    let mut coded: std::collections::HashMap<&str, crate::input::source::Loc> =
        std::collections::HashMap::new();
    for n in g.nodes.iter().filter(|n| n.loc.file != own) {
        coded.entry(n.id.name.as_str()).or_insert(n.loc);
    }
    for e in &mut g.edges {
        match resolve_file(e.declared_file.as_deref(), sources, export, own, read) {
            Ok(Some(i)) => e.loc.file = i,
            // An edge with no line of its own is the router's: findings on it (QG015) point at
            // the `from` node's source line when the user's code holds one (SPEC 12.4).
            Ok(None) if e.declared_file.is_none() => {
                if let Some(loc) = coded.get(e.from.name.as_str()) {
                    e.loc = *loc;
                }
            }
            Ok(None) => {}
            Err(()) => e.loc = e.object_loc,
        }
    }
    for (name, sub) in &mut g.subgraphs {
        resolve_locations(sub, sources, export, own, &name.name, unlocated, read);
    }
}

/// Points each `opaque` entry of `n` (SPEC 12.5) whose `location` names another `file` into that
/// file, as a node's; an entry whose file cannot be read falls back to the node's own location,
/// and `unlocated` says so.
fn resolve_opaque(
    n: &mut crate::input::ir::NodeDef,
    shown: &str,
    sources: &mut SourceMap,
    export: &Path,
    own: usize,
    unlocated: &mut Vec<String>,
    read: &mut Resolved,
) {
    for o in &mut n.opaque {
        let Some(loc) = &mut o.loc else { continue };
        match resolve_file(o.declared_file.as_deref(), sources, export, own, read) {
            Ok(Some(i)) => loc.file = i,
            Ok(None) => {}
            Err(()) => {
                unlocated.push(format!(
                    "node '{shown}': the location of its opaque {} names {}, which cannot be read from here or lies outside the repository: its finding points at the node",
                    o.what.as_str(),
                    o.declared_file.as_deref().unwrap_or("?")
                ));
                o.loc = None;
            }
        }
    }
}

/// Each tool's definition an export's `tool_locations` gives (SPEC 12.4), resolved as a node's
/// `location.file` is; a location whose file cannot be read (or lies outside the repository) is
/// left out, so a related location never points at a line of the wrong file.
fn resolve_tool_locations(
    export: &crate::input::ir::Export,
    sources: &mut SourceMap,
    path: &Path,
    own: usize,
    read: &mut Resolved,
) -> std::collections::HashMap<String, crate::input::source::Loc> {
    let mut out = std::collections::HashMap::new();
    for (tool, loc, file) in &export.tool_locations {
        match resolve_file(file.as_deref(), sources, path, own, read) {
            Ok(Some(i)) => {
                let mut l = *loc;
                l.file = i;
                out.insert(tool.clone(), l);
            }
            Ok(None) if file.is_none() => {
                out.insert(tool.clone(), *loc);
            }
            _ => {}
        }
    }
    out
}

/// Each `location.file` an export names, as resolved the first time (issue 26): a source file is
/// found, checked and read once per run, however many nodes name it.
type Resolved = std::collections::HashMap<String, Result<Option<usize>, ()>>;

/// The source id of `file` as a location names it: `Ok(None)` for no file or the export itself,
/// `Err(())` for a file that cannot be read. Looked up in `read` first.
fn resolve_file(
    file: Option<&str>,
    sources: &mut SourceMap,
    export: &Path,
    own: usize,
    read: &mut Resolved,
) -> Result<Option<usize>, ()> {
    let Some(f) = file else { return Ok(None) };
    if let Some(known) = read.get(f) {
        return *known;
    }
    let got = resolve_new_file(f, sources, export, own);
    read.insert(f.to_string(), got);
    got
}

/// [`resolve_file`] of a name not resolved before. A path with a `.git` component is never read,
/// as named or as resolved (`.git/config` holds the checkout's token).
fn resolve_new_file(
    f: &str,
    sources: &mut SourceMap,
    export: &Path,
    own: usize,
) -> Result<Option<usize>, ()> {
    if crate::input::files::has_git_component(Path::new(f)) {
        return Err(());
    }
    let own_name = export
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if f == own_name || f == sources.file(own).display {
        return Ok(None);
    }
    let near = export.parent().map(|d| d.join(f)).filter(|p| p.is_file());
    let found = near
        .or_else(|| Some(PathBuf::from(f)).filter(|p| p.is_file()))
        .ok_or(())?;
    if !crate::input::files::in_repository(&found, export) {
        return Err(());
    }
    let canon = std::fs::canonicalize(&found).ok();
    if let Some(i) = sources
        .files
        .iter()
        .position(|s| std::fs::canonicalize(&s.path).ok() == canon)
    {
        return Ok(Some(i));
    }
    let text = crate::input::files::read_text(&found).map_err(|_| ())?;
    let shown = lexical(&found).display().to_string();
    Ok(Some(sources.add(shown, found, text)))
}

/// `path` with its `.` and `name/..` components removed, as a report shows it
/// (`build/../app/agent.py` is `app/agent.py`).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// `rel` as written in the file at `base`: resolved against `base`'s folder (unless absolute),
/// with `.` components dropped. Returns the path and how messages show it.
pub(crate) fn resolve_path(base: &Path, rel: &str) -> (PathBuf, String) {
    let relp = Path::new(rel);
    let joined = if relp.is_absolute() {
        relp.to_path_buf()
    } else {
        base.parent().unwrap_or(Path::new("")).join(relp)
    };
    let clean: PathBuf = joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    let clean = if clean.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        clean
    };
    let shown = clean.display().to_string();
    (clean, shown)
}
