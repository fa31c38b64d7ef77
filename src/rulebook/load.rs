//! Reading a rulebook as `verify` and `rules compile` are given it (SPEC 2.4): a `.co` file, a
//! folder of them, a rule sheet (`.yaml`/`.yml` declaring `format: stalwart-rule-sheet/1`), or a
//! record folder (`record.json`) that `stalwart rules compile` wrote, read as it is.
//!
//! **Which Colang** (seed chapter 45; never guessed silently): agent.yaml's
//! `settings.colang_version` when given; else a `config.yml`/`config.yaml` beside the file (or in
//! the rulebook folder) declaring `colang_version`, as NeMo Guardrails' own configurations do;
//! else Colang 1.0. The report says which and why. A file that does not parse as the chosen
//! version but does as the other gets an error saying so and how to declare it.

use std::path::{Path, PathBuf};

use crate::input::error::InputError;
use crate::input::source::{FileId, Loc, SourceMap};
use crate::input::tree;

use super::budget::{self, Budget, Budgets, Overrun};
use super::compile::{self, Compiled, Place};
use super::flows::{FileFlows, Version};
use super::record::{self, Record};
use super::{actions, colang1, colang2, sheet, SyntaxError};

/// `.co` files a folder may hold before it is refused (a guard against walking a home folder).
pub(crate) const MAX_FILES: usize = 2000;
/// Folder nesting read below the rulebook folder.
pub(crate) const MAX_DEPTH: usize = 8;

/// What kind of rulebook was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Colang files.
    Colang,
    /// A rule sheet.
    Sheet,
    /// A compiled record folder.
    Record,
}

/// A Colang version with the reason it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VersionChoice {
    /// The version.
    pub(crate) version: Version,
    /// Why (`agent.yaml's settings.colang_version`, `config.yml beside the rulebook`, `the
    /// default: nothing declares a version`).
    pub(crate) from: String,
}

/// A rulebook read and compiled.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    /// The rulebook as named (`policy.co`, `rails/`, `compiled/`).
    pub(crate) display: String,
    /// What was read.
    pub(crate) kind: Kind,
    /// The Colang version and why (none for a sheet).
    pub(crate) version: Option<VersionChoice>,
    /// The compiled rulebook.
    pub(crate) compiled: Compiled,
    /// The source-map ids of the rulebook's files, aligned with `compiled.files`.
    pub(crate) file_ids: Vec<FileId>,
    /// The record's content hash, when a record was read.
    pub(crate) record_hash: Option<String>,
}

/// Where a rulebook was named, which decides where its files may lie and where an error about
/// reading them points (issue 14).
///
/// Every file read for a rulebook (the file, each `.co` under a folder, a `record.json`, the
/// `config.yml` beside it) must be a regular file of at most [`crate::input::files::MAX_FILE_BYTES`]
/// under `within` or the current directory, symlinks resolved first ([`crate::input::files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    /// The line that named the rulebook (agent.yaml's `rulebook:`), when a file named it; read
    /// errors are located there and print nothing of the file.
    pub(crate) at: Option<Loc>,
    /// The folder its files must lie under (or the current directory).
    pub(crate) within: PathBuf,
}

impl Origin {
    /// A rulebook the command line names (`--rulebook`, `rules compile POLICY`): the user's own
    /// choice, so the path itself is not confined, but the files under a folder, and the
    /// `config.yml` beside a file, must lie under it.
    pub(crate) fn command_line(path: &Path) -> Origin {
        let within = if path.is_dir() {
            path.to_path_buf()
        } else {
            crate::input::files::folder_of(path)
        };
        Origin { at: None, within }
    }

    /// The rulebook agent.yaml names at `at`: every file under agent.yaml's folder (`named_by`
    /// is agent.yaml's path) or the current directory.
    pub(crate) fn named(at: Loc, named_by: &Path) -> Origin {
        Origin {
            at: Some(at),
            within: crate::input::files::folder_of(named_by),
        }
    }

    /// Reads `path` (shown as `shown`) into `sources`, held to the rule; errors are located at
    /// [`Origin::at`] when a file named the rulebook.
    fn read(
        &self,
        sources: &mut SourceMap,
        path: &Path,
        shown: &str,
        what: &str,
    ) -> Result<FileId, LoadError> {
        crate::input::files::confine_to(path, &self.within)
            .and_then(|()| tree::read_file(sources, path, shown.to_string()))
            .map_err(|e| LoadError::Input(self.error(sources, path, shown, what, &e)))
    }

    /// The error for `path` that could not be read.
    fn error(
        &self,
        sources: &SourceMap,
        path: &Path,
        shown: &str,
        what: &str,
        e: &crate::input::files::ReadError,
    ) -> InputError {
        match self.at {
            Some(at) => InputError::unreadable_at(sources, at, what, shown, e),
            None => InputError::io(path, clone_read_error(e)),
        }
    }
}

/// A copy of `e` for a message (the OS error is rebuilt from its kind and text).
fn clone_read_error(e: &crate::input::files::ReadError) -> crate::input::files::ReadError {
    use crate::input::files::ReadError as R;
    match e {
        R::NotFound => R::NotFound,
        R::Directory => R::Directory,
        R::NotRegular(w) => R::NotRegular(w),
        R::TooLarge(n) => R::TooLarge(*n),
        R::NotUtf8 { line, column } => R::NotUtf8 {
            line: *line,
            column: *column,
        },
        R::Outside(p) => R::Outside(p.clone()),
        R::Escapes { link, to } => R::Escapes {
            link: link.clone(),
            to: to.clone(),
        },
        R::GitFolder => R::GitFolder,
        R::Io(io) => R::Io(std::io::Error::new(io.kind(), io.to_string())),
    }
}

/// Why a rulebook could not be read.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// It does not compile (a syntax error, a sheet of the wrong shape): QG005 in `verify`,
    /// exit 2 in `rules compile`. The error is located in the rulebook.
    Unshippable(InputError),
    /// It could not be read at all (missing, unreadable, an edited or foreign record): exit 2.
    Input(InputError),
}

impl LoadError {
    /// The error, whichever it is.
    pub(crate) fn into_error(self) -> InputError {
        match self {
            LoadError::Unshippable(e) | LoadError::Input(e) => e,
        }
    }
}

/// Reads and compiles the rulebook at `path` (shown as `display`), its files added to `sources`,
/// within `budgets` ([`budget`]: past one, [`LoadError::Unshippable`] at the line that crossed
/// it). `declared` is agent.yaml's `settings.colang_version`, when given; `origin` says where the
/// rulebook was named, which decides where its files may lie ([`Origin`]).
///
/// Errors: [`LoadError::Unshippable`] for a rulebook that does not compile or passes a budget;
/// [`LoadError::Input`] for one that cannot be read (missing, not a regular file, larger than the
/// input limit, not UTF-8, a file or symlink out of the workspace, an unreadable `config.yml`,
/// an edited record).
pub(crate) fn load(
    sources: &mut SourceMap,
    path: &Path,
    display: &str,
    declared: Option<VersionChoice>,
    origin: &Origin,
    budgets: &Budgets,
) -> Result<Loaded, LoadError> {
    let what = "the rulebook";
    let meta = std::fs::metadata(path)
        .map_err(|e| LoadError::Input(origin.error(sources, path, display, what, &e.into())))?;
    if meta.is_dir() {
        let rec = path.join(record::FILE_NAME);
        if std::fs::symlink_metadata(&rec).is_ok() {
            return load_record(
                sources,
                &rec,
                &format!("{}/{}", display.trim_end_matches('/'), record::FILE_NAME),
                display,
                origin,
                budgets,
            );
        }
        let mut files = Vec::new();
        collect_co(path, 0, &mut files)
            .map_err(|e| LoadError::Input(origin.error(sources, path, display, what, &e.into())))?;
        if files.is_empty() {
            return Err(LoadError::Input(InputError::plain(
                format!("the rulebook folder {display} holds no .co file and no {}", record::FILE_NAME),
                "name a Colang file, a folder of them, a rule sheet, or a folder `stalwart rules compile` wrote",
            )));
        }
        if files.len() > MAX_FILES {
            return Err(LoadError::Input(InputError::plain(
                format!("the rulebook folder {display} holds more than {MAX_FILES} .co files"),
                "name the folder that holds the agent's rails",
            )));
        }
        let shown: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|f| {
                let rel = f.strip_prefix(path).unwrap_or(&f).display().to_string();
                let d = format!("{}/{rel}", display.trim_end_matches('/'));
                (f, d)
            })
            .collect();
        let what = ColangFiles {
            files: &shown,
            root: path,
            display,
            one_file: false,
        };
        return load_colang(sources, what, declared, origin, budgets);
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".json") {
        return load_record(sources, path, display, display, origin, budgets);
    }
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        let file = read_named(sources, path, display, origin)?;
        if !sheet::is_sheet(&sources.files[file].text) {
            return Err(LoadError::Input(InputError::at(
                sources,
                Loc::new(file, 1, 1),
                format!(
                    "{display} is YAML but not a rule sheet: it does not declare `format: {}`",
                    sheet::FORMAT
                ),
                format!(
                    "start a rule sheet with `format: {}`, or name the Colang rulebook",
                    sheet::FORMAT
                ),
            )));
        }
        if sources.files[file].text.len() > budgets.source_bytes {
            let o = budget::sources_overrun(&sources.files[file].text, 0, budgets);
            return Err(LoadError::Unshippable(o.into_error(sources, &[file])));
        }
        let compiled = sheet::compile(sources, file, budgets).map_err(LoadError::Unshippable)?;
        return within_record_budget(
            Loaded {
                display: display.to_string(),
                kind: Kind::Sheet,
                version: None,
                compiled,
                file_ids: vec![file],
                record_hash: None,
            },
            sources,
            budgets,
        );
    }
    let folder = crate::input::files::folder_of(path);
    let one = [(path.to_path_buf(), display.to_string())];
    let what = ColangFiles {
        files: &one,
        root: &folder,
        display,
        one_file: true,
    };
    load_colang(sources, what, declared, origin, budgets)
}

/// Reads the file the rulebook names (the file itself, not one under a folder): a path the
/// command line names is the user's own and is not confined; one agent.yaml names was confined
/// when agent.yaml was read, and is checked again here (it may have changed since).
fn read_named(
    sources: &mut SourceMap,
    path: &Path,
    display: &str,
    origin: &Origin,
) -> Result<FileId, LoadError> {
    if origin.at.is_some() {
        return origin.read(sources, path, display, "the rulebook");
    }
    tree::read_file(sources, path, display.to_string())
        .map_err(|e| LoadError::Input(origin.error(sources, path, display, "the rulebook", &e)))
}

fn collect_co(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if depth > MAX_DEPTH || out.len() > MAX_FILES {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let ft = std::fs::symlink_metadata(&p)?.file_type();
        if ft.is_dir() {
            collect_co(&p, depth + 1, out)?;
        } else if p.extension().and_then(|e| e.to_str()) == Some("co") {
            out.push(p);
        }
    }
    Ok(())
}

/// The version declared by a NeMo `config.yml`/`config.yaml` in `dir`, if any. A config file that
/// is there but cannot be read (not a regular file, too large, not UTF-8, out of the workspace)
/// is an error, never ignored: it may be what declares the version.
fn config_version(
    sources: &SourceMap,
    dir: &Path,
    origin: &Origin,
) -> Result<Option<Version>, LoadError> {
    for name in ["config.yml", "config.yaml"] {
        let p = dir.join(name);
        if std::fs::symlink_metadata(&p).is_err() {
            continue;
        }
        let shown = p.display().to_string();
        let what = format!("the {name} beside the rulebook");
        let text = crate::input::files::confine_to(&p, &origin.within)
            .and_then(|()| crate::input::files::read_text(&p))
            .map_err(|e| LoadError::Input(origin.error(sources, &p, &shown, &what, &e)))?;
        for line in text.lines() {
            if let Some(v) = line.trim_start().strip_prefix("colang_version:") {
                if line.starts_with(' ') || line.starts_with('\t') {
                    continue;
                }
                return Ok(parse_version(
                    v.trim().trim_matches(|c| c == '"' || c == '\''),
                ));
            }
        }
    }
    Ok(None)
}

/// `1.0`/`1` → 1.0, `2.x`/`2`/`2.0` → 2.x.
pub(crate) fn parse_version(v: &str) -> Option<Version> {
    match v {
        "1" | "1.0" => Some(Version::V1),
        "2" | "2.0" | "2.x" => Some(Version::V2),
        _ => None,
    }
}

fn parse_as(v: Version, text: &str) -> Result<FileFlows, SyntaxError> {
    match v {
        Version::V1 => colang1::parse(text).map(|f| colang1::lower(&f)),
        Version::V2 => colang2::parse(text).map(|f| colang2::lower(&f)),
    }
}

/// The Colang files of one rulebook, as [`load`] found them: each file with how it is shown,
/// the rulebook's folder, how the rulebook is shown, and whether it was named as one file
/// (whose read errors are located where it was named).
struct ColangFiles<'a> {
    files: &'a [(PathBuf, String)],
    root: &'a Path,
    display: &'a str,
    one_file: bool,
}

fn load_colang(
    sources: &mut SourceMap,
    what: ColangFiles<'_>,
    declared: Option<VersionChoice>,
    origin: &Origin,
    budgets: &Budgets,
) -> Result<Loaded, LoadError> {
    let ColangFiles {
        files,
        root,
        display,
        one_file,
    } = what;
    let mut ids = Vec::new();
    // Bytes of the files read, and of the record spent by them (it keeps every source whole).
    let (mut read, mut spent) = (0usize, 0usize);
    let mut lowered = Vec::new();
    let mut chosen: Option<VersionChoice> = None;
    for (path, shown) in files {
        let id = if one_file {
            read_named(sources, path, shown, origin)?
        } else {
            origin.read(
                sources,
                path,
                shown,
                &format!("the rulebook's file {shown}"),
            )?
        };
        let choice = match declared.clone() {
            Some(c) => c,
            None => {
                let dir = path.parent().unwrap_or(root);
                let found = match config_version(sources, dir, origin)? {
                    Some(v) => Some(v),
                    None => config_version(sources, root, origin)?,
                };
                match found {
                    Some(v) => VersionChoice {
                        version: v,
                        from: "config.yml beside the rulebook".into(),
                    },
                    None => VersionChoice {
                        version: Version::V1,
                        from: "the default: nothing declares a version".into(),
                    },
                }
            }
        };
        let text_len = sources.files[id].text.len();
        if read.saturating_add(text_len) > budgets.source_bytes {
            let o = budget::sources_overrun(&sources.files[id].text, read, budgets);
            return Err(LoadError::Unshippable(o.into_error(sources, &[id])));
        }
        read += text_len;
        spent = spent.saturating_add(budget::json_bytes(&sources.files[id].text));
        let text = sources.files[id].text.clone();
        let flows = match parse_as(choice.version, &text) {
            Ok(f) => f,
            Err(e) => {
                return Err(LoadError::Unshippable(syntax_error(
                    sources, id, &choice, &text, e,
                )))
            }
        };
        ids.push(id);
        lowered.push((shown.clone(), choice.version, flows));
        if chosen.is_none() {
            chosen = Some(choice);
        }
    }
    let inputs: Vec<compile::Input<'_>> = lowered
        .iter()
        .map(|(p, v, f)| compile::Input {
            path: p.clone(),
            version: *v,
            flows: f,
        })
        .collect();
    let mut compiled = compile::compile_measured(&inputs, budgets, spent)
        .0
        .map_err(|o| LoadError::Unshippable(o.into_error(sources, &ids)))?;
    compiled.defined_actions = defined_actions(sources, root, display, origin)?;
    config_rails(sources, root, display, origin, &mut compiled, &mut ids)?;
    within_record_budget(
        Loaded {
            display: display.to_string(),
            kind: Kind::Colang,
            version: chosen,
            compiled,
            file_ids: ids,
            record_hash: None,
        },
        sources,
        budgets,
    )
}

/// The actions the configuration in `root` defines in Python ([`actions`]), each file read
/// under the rulebook's [`Origin`] and shown beside `display`. Errors: a file that cannot be
/// read, or read statically, at its line.
fn defined_actions(
    sources: &mut SourceMap,
    root: &Path,
    display: &str,
    origin: &Origin,
) -> Result<Vec<String>, LoadError> {
    let mut names = Vec::new();
    for p in actions::files_beside(root) {
        let shown = shown_beside(display, root, &p);
        let id = origin.read(sources, &p, &shown, "the rulebook's actions")?;
        for n in actions::read(sources, id).map_err(LoadError::Input)? {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    Ok(names)
}

/// `p`, a file in the rulebook's folder `root`, shown as the rulebook `display` is.
fn shown_beside(display: &str, root: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(root).unwrap_or(p);
    let base = if Path::new(display).is_dir() {
        PathBuf::from(display)
    } else {
        crate::input::files::folder_of(Path::new(display))
    };
    base.join(rel).display().to_string()
}

/// The rails `config.yml` in `root` lists (`rails: <kind>: flows: [...]`, as NeMo Guardrails
/// reads them), added to `compiled` as uses (`how: "rail"`) located in the config file, which
/// becomes one of the rulebook's files (version `config`, its id pushed to `ids`). Nothing is
/// added when there is no config file or it lists no rail. Errors: a config file that cannot be
/// read or is not YAML, at its line.
fn config_rails(
    sources: &mut SourceMap,
    root: &Path,
    display: &str,
    origin: &Origin,
    compiled: &mut Compiled,
    ids: &mut Vec<FileId>,
) -> Result<(), LoadError> {
    let Some(p) = ["config.yml", "config.yaml"]
        .iter()
        .map(|n| root.join(n))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
    else {
        return Ok(());
    };
    let shown = shown_beside(display, root, &p);
    let id = origin.read(sources, &p, &shown, "the config.yml beside the rulebook")?;
    let doc = tree::parse(sources, id).map_err(LoadError::Input)?;
    let mut rails = Vec::new();
    let kinds = doc
        .as_map()
        .and_then(|m| m.iter().find(|e| e.key == "rails"))
        .and_then(|e| e.value.as_map())
        .unwrap_or(&[]);
    for kind in kinds {
        let flows = kind
            .value
            .as_map()
            .and_then(|m| m.iter().find(|e| e.key == "flows"));
        if let Some(tree::Value::Seq(items)) = flows.map(|e| &e.value.value) {
            for item in items {
                if let Some(text) = item.as_text() {
                    // `content safety check input $model=content_safety`: the flow and its
                    // arguments, as NeMo splits them.
                    let name = text.split(" $").next().unwrap_or(text).trim();
                    rails.push((name.to_string(), item.loc));
                }
            }
        }
    }
    if rails.is_empty() {
        return Ok(());
    }
    let file = compiled.files.len();
    compiled.files.push(compile::SourceInfo {
        path: shown,
        version: "config".into(),
    });
    ids.push(id);
    for (name, loc) in rails {
        compiled.uses.push(compile::Use {
            name,
            at: Place {
                file,
                line: loc.line as usize,
                column: loc.column as usize,
            },
            how: "rail".into(),
        });
    }
    Ok(())
}

/// `l` if its record is within the record budget; else the overrun, at its last route's
/// execute (the routes are most of a record), or the first file's first line.
fn within_record_budget(
    l: Loaded,
    sources: &SourceMap,
    budgets: &Budgets,
) -> Result<Loaded, LoadError> {
    let (kind, version, from, texts) = record_parts(&l, sources);
    let rec = Record::unhashed(kind, version, from, texts, l.compiled);
    let len = rec.json_len();
    let l = Loaded {
        compiled: rec.compiled,
        ..l
    };
    if len <= budgets.record_bytes {
        return Ok(l);
    }
    let at = l.compiled.routes.last().map_or(
        Place {
            file: 0,
            line: 1,
            column: 1,
        },
        |r| r.at,
    );
    let o = Overrun::new(
        Budget::Record,
        budgets.record_bytes,
        at,
        format!(
            "the compiled record would take {} bytes",
            budget::thousands(len)
        ),
    );
    Err(LoadError::Unshippable(o.into_error(sources, &l.file_ids)))
}

fn syntax_error(
    sources: &SourceMap,
    id: FileId,
    choice: &VersionChoice,
    text: &str,
    e: SyntaxError,
) -> InputError {
    let other = match choice.version {
        Version::V1 => Version::V2,
        Version::V2 => Version::V1,
    };
    let mut help = e.help.clone().unwrap_or_default();
    if parse_as(other, text).is_ok() {
        if !help.is_empty() {
            help.push_str("; ");
        }
        help.push_str(&format!(
            "the file reads as Colang {o}: it was read as Colang {v} ({why}); declare Colang {o} with `settings: {{colang_version: \"{o}\"}}` in agent.yaml or `colang_version: \"{o}\"` in a config.yml beside it",
            o = other.as_str(),
            v = choice.version.as_str(),
            why = choice.from,
        ));
    }
    InputError::at(
        sources,
        Loc::new(
            id,
            e.line.min(u32::MAX as usize) as u32,
            e.column.min(u32::MAX as usize) as u32,
        ),
        format!(
            "Colang {} syntax error: {}",
            choice.version.as_str(),
            e.message
        ),
        help,
    )
}

fn load_record(
    sources: &mut SourceMap,
    path: &Path,
    shown: &str,
    display: &str,
    origin: &Origin,
    budgets: &Budgets,
) -> Result<Loaded, LoadError> {
    let file = if shown == display {
        read_named(sources, path, shown, origin)?
    } else {
        origin.read(sources, path, shown, "the rulebook's record")?
    };
    let rec = Record::from_json(&sources.files[file].text).map_err(|why| {
        LoadError::Input(InputError::at(
            sources,
            Loc::new(file, 1, 1),
            format!("{shown} cannot be read as a compiled rulebook: {why}"),
            "compile the rulebook again with `stalwart rules compile POLICY --out DIR`, and name DIR",
        ))
    })?;
    let ids: Vec<FileId> = rec
        .sources
        .iter()
        .map(|s| sources.add(s.path.clone(), PathBuf::from(&s.path), s.text.clone()))
        .collect();
    // A record is read as it is, but held to the same budgets as a compile.
    compile::check_compiled(&rec.compiled, budgets)
        .map_err(|o| LoadError::Unshippable(o.into_error(sources, &ids)))?;
    let version = rec
        .colang_version
        .as_deref()
        .and_then(parse_version)
        .map(|v| VersionChoice {
            version: v,
            from: rec.version_from.clone(),
        });
    Ok(Loaded {
        display: display.to_string(),
        kind: Kind::Record,
        version,
        record_hash: Some(rec.content_hash.clone()),
        compiled: rec.compiled,
        file_ids: ids,
    })
}

/// The record of a loaded rulebook (for `rules compile`): its sources' texts and what compiled.
pub(crate) fn to_record(l: &Loaded, sources: &SourceMap) -> Record {
    let (kind, version, from, texts) = record_parts(l, sources);
    Record::new(kind, version, from, texts, l.compiled.clone())
}

/// What a record of `l` holds besides the compiled rulebook: its kind, Colang version and why,
/// and its sources' texts.
fn record_parts(
    l: &Loaded,
    sources: &SourceMap,
) -> (&'static str, Option<String>, String, Vec<(String, String)>) {
    let texts = l
        .file_ids
        .iter()
        .map(|&id| {
            (
                sources.files[id].display.clone(),
                sources.files[id].text.clone(),
            )
        })
        .collect();
    let kind = if l.version.is_none() {
        "sheet"
    } else {
        "colang"
    };
    (
        kind,
        l.version.as_ref().map(|v| v.version.as_str().to_string()),
        l.version
            .as_ref()
            .map_or_else(|| "a rule sheet".to_string(), |v| v.from.clone()),
        texts,
    )
}
