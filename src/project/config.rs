//! Project configuration (issue 18): `stalwart.toml`, or `[tool.stalwart]` in a `pyproject.toml`,
//! found from the input's folder upward to the repository root, or named with `--config FILE`.
//!
//! Every key, with its meaning (the names are the command-line flags without `--`; a flag given
//! on the command line overrides the file):
//!
//! ```toml
//! session-steps = 2            # turns to search when the input declares none (1..=16)
//! gate = "ci"                  # ci | start
//! engine = "both"              # explicit | z3 | both
//! max-states = 4000000         # the state budget per obligation (then QG006)
//! max-run-states = 20000000    # the run's state budget, all obligations together (then QG006)
//! solver-rlimit = 100000000    # Z3's resource units per query (then QG006)
//! solver-obligation-rlimit = 300000000 # per obligation, its queries together (then QG006)
//! solver-run-rlimit = 1000000000 # the run's, all obligations together (then QG006)
//! solver-timeout-ms = 600000   # a wall-clock safety net per query, off unless given
//! solver-max-unrolling = 150000
//! min-severity = "medium"      # critical | high | medium | low | review: findings below are not shown
//! strict-accepts = false       # an accept that matches nothing, or has expired, fails the gate
//! undecided = "fail"           # fail | pass: an undecided obligation of a gate-failing rule fails the gate
//! undecided-reason = "..."     # with `undecided = "pass"`, required: why (itself a weakening, SPEC 8.1)
//!
//! [off]                        # rules or obligations this project is not held to, each with why
//! O1 = "this graph runs with no tool check at all; QG011 and QG014 say what matters"
//! QG023 = "the runtime's budget middleware bounds every loop"
//!
//! [[accept]]                   # one finding accepted, with a reason (and optionally until a date)
//! fingerprint = "451f34ab9c0e7d12"           # or: rule = "QG105", subject = "refund_card", node = "billing_tools"
//! reason = "refunds are reconciled by finance every night"
//! until = 2027-06-30
//! ```
//!
//! An unknown key, a value of the wrong kind, an unknown rule or obligation, an accept with no
//! reason or with neither a fingerprint nor a rule is an [`InputError`] at its line (exit 2).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::findings::{GateMode, Obligation, Severity};
use crate::input::error::InputError;
use crate::input::source::{FileId, Loc, SourceMap};
use crate::report::UndecidedPass;
use crate::rules::RuleId;

/// A number a setting takes: its `stalwart.toml` key (its flag is `--` and the key) and its range,
/// written once for the flag (`src/run/cli.rs`) and the file ([`parse`]); docs/configuration.md.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limit {
    /// The key, as the file and the flag spell it: `max-states`.
    pub(crate) key: &'static str,
    /// The smallest value taken.
    pub(crate) lo: i64,
    /// The largest value taken.
    pub(crate) hi: i64,
}

/// Conversation turns to search: [`crate::input::ir::SESSION_STEPS`].
pub(crate) const SESSION_STEPS: Limit = Limit {
    key: "session-steps",
    lo: *crate::input::ir::SESSION_STEPS.start() as i64,
    hi: *crate::input::ir::SESSION_STEPS.end() as i64,
};
/// States one obligation's search may keep.
pub(crate) const MAX_STATES: Limit = Limit {
    key: "max-states",
    lo: 1,
    hi: i64::MAX,
};
/// States all obligations' searches may generate together.
pub(crate) const MAX_RUN_STATES: Limit = Limit {
    key: "max-run-states",
    lo: 1,
    hi: i64::MAX,
};
/// Z3's resource units one query may spend (Z3 takes a 32-bit `rlimit`).
pub(crate) const SOLVER_RLIMIT: Limit = Limit {
    key: "solver-rlimit",
    lo: 1,
    hi: u32::MAX as i64,
};
/// Z3's resource units one obligation's queries may spend together.
pub(crate) const SOLVER_OBLIGATION_RLIMIT: Limit = Limit {
    key: "solver-obligation-rlimit",
    lo: 1,
    hi: i64::MAX,
};
/// Z3's resource units all obligations' queries may spend together.
pub(crate) const SOLVER_RUN_RLIMIT: Limit = Limit {
    key: "solver-run-rlimit",
    lo: 1,
    hi: i64::MAX,
};
/// Milliseconds Z3 may spend on one query (Z3 takes a 32-bit timeout).
pub(crate) const SOLVER_TIMEOUT_MS: Limit = Limit {
    key: "solver-timeout-ms",
    lo: 1,
    hi: u32::MAX as i64,
};
/// The largest unrolling the Z3 engine builds for one obligation.
pub(crate) const SOLVER_MAX_UNROLLING: Limit = Limit {
    key: "solver-max-unrolling",
    lo: 1,
    hi: i64::MAX,
};

/// The file names looked for in each folder, in order.
pub(crate) const FILE_NAME: &str = "stalwart.toml";
const PYPROJECT: &str = "pyproject.toml";

/// The engines a configuration may choose (the `engine` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// The explicit-state search only.
    Explicit,
    /// The Z3 bounded model checker only.
    Z3,
    /// Both, compared.
    Both,
}

/// What `[off]` turns off: a rule, or an obligation (its findings under any rule, QG003's
/// included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Off {
    /// A rule, of the proof or a code check (`QG023`, `CC001`).
    Rule(RuleId),
    /// An obligation (`O1`).
    Obligation(Obligation),
}

/// One `[off]` entry: what, why, and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OffEntry {
    /// The rule or obligation.
    pub(crate) what: Off,
    /// Why the project is not held to it.
    pub(crate) reason: String,
    /// The key's line in the configuration.
    pub(crate) loc: Loc,
}

/// Which findings an `[[accept]]` entry matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Matcher {
    /// A fingerprint, all 16 hex digits (a shorter prefix could be matched by a name chosen for
    /// its hash: 32 bits are minutes of work, issue 26).
    Fingerprint(String),
    /// A rule, and optionally the subject and the qualified node.
    Rule {
        /// The rule.
        rule: RuleId,
        /// The finding's subject (`refund_card`, `cycle:agent`), when given.
        subject: Option<String>,
        /// The finding's qualified node, when given.
        node: Option<String>,
    },
}

impl std::fmt::Display for Matcher {
    /// What it names, as messages say it: `fingerprint 451f34ab881b803e`, `QG105 on refund_card
    /// at billing_tools`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::Fingerprint(fp) => write!(f, "fingerprint {fp}"),
            Matcher::Rule {
                rule,
                subject,
                node,
            } => {
                write!(f, "{rule}")?;
                if let Some(x) = subject {
                    write!(f, " on {x}")?;
                }
                if let Some(n) = node {
                    write!(f, " at {n}")?;
                }
                Ok(())
            }
        }
    }
}

/// A calendar date (`until`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Date {
    /// The year.
    pub(crate) year: u16,
    /// 1..=12.
    pub(crate) month: u8,
    /// 1..=31.
    pub(crate) day: u8,
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Date {
    /// Today's date (UTC), from the system clock.
    pub(crate) fn today() -> Date {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Date::from_days(i64::try_from(secs / 86_400).unwrap_or(0))
    }

    /// The date `days` days after 1970-01-01 (the civil-from-days algorithm of H. Hinnant).
    pub(crate) fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        Date {
            year: u16::try_from(year).unwrap_or(0),
            month: u8::try_from(month).unwrap_or(1),
            day: u8::try_from(day).unwrap_or(1),
        }
    }
}

/// One `[[accept]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AcceptEntry {
    /// Which findings it accepts.
    pub(crate) matcher: Matcher,
    /// Why (required).
    pub(crate) reason: String,
    /// The last day it accepts, when given.
    pub(crate) until: Option<Date>,
    /// Where the entry was written.
    pub(crate) loc: Loc,
}

/// A project configuration, read. Every field is `None` (or empty) when the file does not set
/// it; the command line's flags win over every field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Config {
    /// The file read (`None`: no configuration was found).
    pub(crate) file: Option<FileId>,
    /// `session-steps`.
    pub(crate) session_steps: Option<u32>,
    /// `gate`.
    pub(crate) gate: Option<GateMode>,
    /// `engine`.
    pub(crate) engine: Option<Engine>,
    /// `max-states`.
    pub(crate) max_states: Option<usize>,
    /// `max-run-states`.
    pub(crate) max_run_states: Option<u64>,
    /// `solver-rlimit`.
    pub(crate) solver_rlimit: Option<u32>,
    /// `solver-obligation-rlimit`.
    pub(crate) solver_obligation_rlimit: Option<u64>,
    /// `solver-run-rlimit`.
    pub(crate) solver_run_rlimit: Option<u64>,
    /// `solver-timeout-ms`.
    pub(crate) solver_timeout_ms: Option<u32>,
    /// `solver-max-unrolling`.
    pub(crate) solver_max_unrolling: Option<usize>,
    /// `min-severity`.
    pub(crate) min_severity: Option<Severity>,
    /// `strict-accepts`.
    pub(crate) strict_accepts: Option<bool>,
    /// `undecided = "pass"` with its `undecided-reason`: an obligation no engine decided does
    /// not fail the gate (SPEC 8.1); `None` when the file says `"fail"` or nothing.
    pub(crate) undecided_pass: Option<UndecidedPass>,
    /// Where each top-level key is written (`max-states` -> its line), for naming a key a pull
    /// request changed (SPEC 8.1).
    pub(crate) keys: std::collections::BTreeMap<String, Loc>,
    /// `[off]`, in the file's order.
    pub(crate) off: Vec<OffEntry>,
    /// `[[accept]]`, in the file's order.
    pub(crate) accepts: Vec<AcceptEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    session_steps: Option<Spanned<i64>>,
    gate: Option<Spanned<String>>,
    engine: Option<Spanned<String>>,
    max_states: Option<Spanned<i64>>,
    max_run_states: Option<Spanned<i64>>,
    solver_rlimit: Option<Spanned<i64>>,
    solver_obligation_rlimit: Option<Spanned<i64>>,
    solver_run_rlimit: Option<Spanned<i64>>,
    solver_timeout_ms: Option<Spanned<i64>>,
    solver_max_unrolling: Option<Spanned<i64>>,
    min_severity: Option<Spanned<String>>,
    strict_accepts: Option<Spanned<bool>>,
    undecided: Option<Spanned<String>>,
    undecided_reason: Option<Spanned<String>>,
    off: Option<toml::map::Map<String, toml::Value>>,
    accept: Option<Vec<Spanned<RawAccept>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccept {
    fingerprint: Option<Spanned<String>>,
    rule: Option<Spanned<String>>,
    subject: Option<String>,
    node: Option<String>,
    reason: Option<Spanned<String>>,
    until: Option<Spanned<toml::value::Datetime>>,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyTool>,
}

#[derive(Deserialize)]
struct PyTool {
    stalwart: Option<Spanned<Raw>>,
}

/// The configuration that applies to `input` (agent.yaml or the export): the first
/// `stalwart.toml`, or `pyproject.toml` with a `[tool.stalwart]` table, in the input's folder or
/// a folder above it, stopping at the repository root (the folder holding `.git`). Without a
/// repository above it, only the input's own folder is looked in. `Ok(None)`: none found.
pub(crate) fn find(input: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(input)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))?;
    let in_repo = start.ancestors().any(|d| d.join(".git").exists());
    for dir in start.ancestors() {
        let toml = dir.join(FILE_NAME);
        if toml.is_file() {
            return Some(toml);
        }
        let py = dir.join(PYPROJECT);
        // A pyproject.toml that may not be read (a symlink out of the repository) is returned,
        // so reading it says why, rather than passed over (issue 26).
        let refused = |e: &crate::input::files::ReadError| {
            matches!(
                e,
                crate::input::files::ReadError::Escapes { .. }
                    | crate::input::files::ReadError::GitFolder
            )
        };
        if py.is_file()
            && crate::input::files::read_text(&py)
                .map_or_else(|e| refused(&e), |t| t.contains("[tool.stalwart]"))
        {
            return Some(py);
        }
        if !in_repo || dir.join(".git").exists() {
            break;
        }
    }
    None
}

/// Reads the configuration at `path` (a `stalwart.toml`, or a `pyproject.toml` whose
/// `[tool.stalwart]` table is read) into `sources`.
///
/// Errors (each an [`InputError`] at its line, exit 2): the file cannot be read (see
/// [`crate::input::files`]); TOML syntax; an unknown key; a value of the wrong kind or out of range; an
/// `[off]` key that is no rule or obligation, or an empty reason; an `[[accept]]` with no
/// `reason`, with neither `fingerprint` nor `rule`, with both, or with a rule that does not exist.
pub(crate) fn read(sources: &mut SourceMap, path: &Path) -> Result<Config, InputError> {
    // Shown relative to the current directory when it lies under it (`find` resolves the path).
    let display = std::env::current_dir()
        .ok()
        .and_then(|cwd| std::fs::canonicalize(cwd).ok())
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string();
    let text = crate::input::files::read_text(path).map_err(|e| InputError::io(path, e))?;
    parse(sources, display, path, text)
}

/// Reads a configuration from `text`, shown as `display` and named by `path` (whose file name
/// says whether it is a `pyproject.toml`): [`read`]'s work once the text is in hand, also used
/// for the copy a git revision holds (`--base-ref`, SPEC 8.1).
///
/// # Errors
/// As [`read`], but for reading the file.
pub(crate) fn parse(
    sources: &mut SourceMap,
    display: String,
    path: &Path,
    text: String,
) -> Result<Config, InputError> {
    let file = sources.add(display, path.to_path_buf(), text);
    let text = &sources.file(file).text;
    let at = |span: std::ops::Range<usize>| {
        let (line, column) = sources.file(file).line_col(span.start);
        Loc::new(file, line, column)
    };
    let de_err = |e: toml::de::Error| {
        let loc = e.span().map_or(Loc::new(file, 1, 1), at);
        InputError::at(
            sources,
            loc,
            format!("invalid configuration: {}", e.message().trim()),
            "see the keys `stalwart.toml` takes in docs/configuration.md",
        )
    };
    let is_py = path.file_name().is_some_and(|n| n == PYPROJECT);
    let raw: Raw = if is_py {
        let py: Pyproject = toml::from_str(text).map_err(de_err)?;
        match py.tool.and_then(|t| t.stalwart) {
            Some(s) => s.into_inner(),
            None => {
                return Ok(Config {
                    file: Some(file),
                    ..Config::default()
                })
            }
        }
    } else {
        toml::from_str(text).map_err(de_err)?
    };
    resolve(sources, file, raw)
}

fn resolve(sources: &SourceMap, file: FileId, raw: Raw) -> Result<Config, InputError> {
    let at = |span: std::ops::Range<usize>| {
        let (line, column) = sources.file(file).line_col(span.start);
        Loc::new(file, line, column)
    };
    let err = |span: std::ops::Range<usize>, msg: String, help: &str| {
        InputError::at(sources, at(span), msg, help)
    };
    let number = |v: &Option<Spanned<i64>>, limit: Limit| {
        let Limit { key, lo, hi } = limit;
        v.as_ref()
            .map(|n| {
                let x = *n.get_ref();
                if (lo..=hi).contains(&x) {
                    Ok(x)
                } else {
                    Err(err(
                        n.span(),
                        format!("`{key}` is {x}, outside {lo}..={hi}"),
                        "give a number in the range",
                    ))
                }
            })
            .transpose()
    };
    let word = |v: &Option<Spanned<String>>, key: &str, words: &[&str]| {
        v.as_ref()
            .map(|w| {
                let s = w.get_ref().to_ascii_lowercase();
                if words.contains(&s.as_str()) {
                    Ok(s)
                } else {
                    Err(err(
                        w.span(),
                        format!("`{key}` is '{}'", w.get_ref()),
                        &format!("give one of: {}", words.join(", ")),
                    ))
                }
            })
            .transpose()
    };
    let as_usize = |x: Option<i64>| x.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    let mut c = Config {
        file: Some(file),
        session_steps: number(&raw.session_steps, SESSION_STEPS)?
            .map(|v| u32::try_from(v).unwrap_or(1)),
        gate: word(&raw.gate, "gate", &["ci", "start"])?.map(|g| match g.as_str() {
            "start" => GateMode::Start,
            _ => GateMode::Ci,
        }),
        engine: word(&raw.engine, "engine", &["explicit", "z3", "both"])?.map(|e| {
            match e.as_str() {
                "explicit" => Engine::Explicit,
                "z3" => Engine::Z3,
                _ => Engine::Both,
            }
        }),
        max_states: as_usize(number(&raw.max_states, MAX_STATES)?),
        max_run_states: number(&raw.max_run_states, MAX_RUN_STATES)?.map(|n| n as u64),
        solver_rlimit: number(&raw.solver_rlimit, SOLVER_RLIMIT)?
            .map(|v| u32::try_from(v).unwrap_or(u32::MAX)),
        solver_obligation_rlimit: number(&raw.solver_obligation_rlimit, SOLVER_OBLIGATION_RLIMIT)?
            .map(|n| n as u64),
        solver_run_rlimit: number(&raw.solver_run_rlimit, SOLVER_RUN_RLIMIT)?.map(|n| n as u64),
        solver_timeout_ms: number(&raw.solver_timeout_ms, SOLVER_TIMEOUT_MS)?
            .map(|v| u32::try_from(v).unwrap_or(u32::MAX)),
        solver_max_unrolling: as_usize(number(&raw.solver_max_unrolling, SOLVER_MAX_UNROLLING)?),
        min_severity: word(
            &raw.min_severity,
            "min-severity",
            &["critical", "high", "medium", "low", "review"],
        )?
        .and_then(|s| {
            let mut cap = s.clone();
            if let Some(f) = cap.get_mut(0..1) {
                f.make_ascii_uppercase();
            }
            Severity::parse(&cap)
        }),
        strict_accepts: raw.strict_accepts.as_ref().map(|b| *b.get_ref()),
        undecided_pass: None,
        keys: std::collections::BTreeMap::new(),
        off: Vec::new(),
        accepts: Vec::new(),
    };
    let spans = [
        (
            SESSION_STEPS.key,
            raw.session_steps.as_ref().map(Spanned::span),
        ),
        ("gate", raw.gate.as_ref().map(Spanned::span)),
        ("engine", raw.engine.as_ref().map(Spanned::span)),
        (MAX_STATES.key, raw.max_states.as_ref().map(Spanned::span)),
        (
            MAX_RUN_STATES.key,
            raw.max_run_states.as_ref().map(Spanned::span),
        ),
        (
            SOLVER_RLIMIT.key,
            raw.solver_rlimit.as_ref().map(Spanned::span),
        ),
        (
            SOLVER_OBLIGATION_RLIMIT.key,
            raw.solver_obligation_rlimit.as_ref().map(Spanned::span),
        ),
        (
            SOLVER_RUN_RLIMIT.key,
            raw.solver_run_rlimit.as_ref().map(Spanned::span),
        ),
        (
            SOLVER_TIMEOUT_MS.key,
            raw.solver_timeout_ms.as_ref().map(Spanned::span),
        ),
        (
            SOLVER_MAX_UNROLLING.key,
            raw.solver_max_unrolling.as_ref().map(Spanned::span),
        ),
        ("min-severity", raw.min_severity.as_ref().map(Spanned::span)),
        (
            "strict-accepts",
            raw.strict_accepts.as_ref().map(Spanned::span),
        ),
        ("undecided", raw.undecided.as_ref().map(Spanned::span)),
    ];
    for (key, span) in spans {
        if let Some(span) = span {
            // The key's line, from its first column.
            let line = at(span).line;
            c.keys.insert(key.to_string(), Loc::new(file, line, 1));
        }
    }
    let reason = raw
        .undecided_reason
        .as_ref()
        .map(|r| r.get_ref().trim().to_string());
    match word(&raw.undecided, "undecided", &["fail", "pass"])?.as_deref() {
        Some("pass") => {
            let Some(reason) = reason.filter(|r| !r.is_empty()) else {
                let span = raw.undecided.as_ref().map_or(0..0, Spanned::span);
                return Err(err(
                    span,
                    "`undecided = \"pass\"` without a reason".into(),
                    "give `undecided-reason = \"...\"`: why an obligation no engine decided may pass the gate",
                ));
            };
            let loc = at(raw.undecided.as_ref().map_or(0..0, Spanned::span));
            c.undecided_pass = Some(UndecidedPass { reason, loc });
        }
        _ => {
            if let Some(r) = &raw.undecided_reason {
                return Err(err(
                    r.span(),
                    "`undecided-reason` without `undecided = \"pass\"`".into(),
                    "remove it, or say `undecided = \"pass\"` with it",
                ));
            }
        }
    }
    if let Some(off) = raw.off {
        for (key, value) in off {
            let loc = key_loc(sources, file, "off", &key);
            let what = parse_off(&key).ok_or_else(|| {
                InputError::at(
                    sources,
                    loc,
                    format!("`[off]` names '{key}', which is no rule or obligation"),
                    "name a rule (`stalwart rules list`) or an obligation O1..O10",
                )
            })?;
            if what == Off::Rule(RuleId::QG006) {
                return Err(InputError::at(
                    sources,
                    loc,
                    "`[off]` cannot turn off QG006: an undecided obligation is said, never silenced".to_string(),
                    "say `undecided = \"pass\"` with `undecided-reason = \"...\"` if undecided obligations may pass the gate (each is still listed)",
                ));
            }
            let reason = match value {
                toml::Value::String(s) if !s.trim().is_empty() => s,
                _ => return Err(InputError::at(
                    sources,
                    loc,
                    format!("`[off]` turns off '{key}' without a reason"),
                    "write the reason as its value: `O1 = \"why this project is not held to it\"`",
                )),
            };
            c.off.push(OffEntry { what, reason, loc });
        }
        // TOML tables keep no order: the file's is the order of the lines.
        c.off.sort_by_key(|o| (o.loc.line, o.loc.column));
    }
    for a in raw.accept.unwrap_or_default() {
        let span = a.span();
        let a = a.into_inner();
        let reason = match &a.reason {
            Some(r) if !r.get_ref().trim().is_empty() => r.get_ref().clone(),
            _ => {
                return Err(err(
                    span,
                    "an `[[accept]]` without a reason".into(),
                    "give `reason = \"...\"`: why this finding is accepted",
                ))
            }
        };
        let matcher = match (&a.fingerprint, &a.rule) {
            (Some(fp), None) => {
                let f = fp.get_ref().to_ascii_lowercase();
                if f.len() != 16 || !f.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(err(
                        fp.span(),
                        format!("`fingerprint` '{}' is not a finding's fingerprint", fp.get_ref()),
                        "copy the whole fingerprint the report prints (16 hex digits): a shorter prefix \
                         could be matched by a finding whose names were chosen for their hash",
                    ));
                }
                Matcher::Fingerprint(f)
            }
            (None, Some(rule)) => {
                let Some(rule_id) = RuleId::parse(&rule.get_ref().to_ascii_uppercase()) else {
                    return Err(err(
                        rule.span(),
                        format!("`rule` '{}' is no rule", rule.get_ref()),
                        "name a rule `stalwart rules list` shows",
                    ));
                };
                Matcher::Rule {
                    rule: rule_id,
                    subject: a.subject.clone(),
                    node: a.node.clone(),
                }
            }
            _ => {
                return Err(err(
                    span,
                    "an `[[accept]]` names a finding by `fingerprint` or by `rule` (with `subject` and `node`), one of the two".into(),
                    "copy the finding's fingerprint from the report, or give its rule, subject and node",
                ))
            }
        };
        if matches!(matcher, Matcher::Fingerprint(_)) && (a.subject.is_some() || a.node.is_some()) {
            return Err(err(
                span,
                "`subject` and `node` go with `rule`, not with `fingerprint`".into(),
                "keep the fingerprint alone, or name the finding by rule, subject and node",
            ));
        }
        let until = match &a.until {
            None => None,
            Some(u) => match u.get_ref().date {
                Some(d) if u.get_ref().time.is_none() => Some(Date {
                    year: d.year,
                    month: d.month,
                    day: d.day,
                }),
                _ => {
                    return Err(err(
                        u.span(),
                        "`until` is a date, written `until = 2027-06-30`".into(),
                        "give the last day the accept holds, as YYYY-MM-DD without quotes",
                    ))
                }
            },
        };
        c.accepts.push(AcceptEntry {
            matcher,
            reason,
            until,
            loc: at(span),
        });
    }
    Ok(c)
}

/// `QG023` → a rule, `O1` → an obligation.
fn parse_off(key: &str) -> Option<Off> {
    let k = key.to_ascii_uppercase();
    if let Some(o) = Obligation::parse(&k) {
        return Some(Off::Obligation(o));
    }
    RuleId::parse(&k).map(Off::Rule)
}

/// Where `key` is written under the table `table`: the first line after `[table]` starting with
/// the key (TOML keeps no span for a map's keys).
fn key_loc(sources: &SourceMap, file: FileId, table: &str, key: &str) -> Loc {
    let f = sources.file(file);
    let mut in_table = false;
    for (i, line) in f.text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            in_table = t.trim_end().trim_matches(['[', ']']).trim() == table
                || t.starts_with(&format!("[tool.stalwart.{table}]"));
            continue;
        }
        if in_table && (t.starts_with(key) || t.starts_with(&format!("\"{key}\""))) {
            let col = line.len() - t.len() + 1;
            return Loc::new(file, i as u32 + 1, col as u32);
        }
    }
    Loc::new(file, 1, 1)
}

#[cfg(test)]
mod tests {
    use super::Date;

    #[test]
    fn civil_dates() {
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days(20_454).to_string(), "2026-01-01");
        assert_eq!(Date::from_days(11_016).to_string(), "2000-02-29");
        assert!(
            Date::from_days(20_789)
                > Date {
                    year: 2026,
                    month: 12,
                    day: 1
                }
        );
    }
}
