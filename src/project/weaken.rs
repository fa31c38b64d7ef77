//! What weakens the proof, said everywhere (SPEC 8.1): the list every output prints, built once
//! after the configuration, the accepts and the baseline have been applied.
//!
//! In order: the changes a pull request makes to the configuration, the baseline and the accept
//! comments (`--base-ref`: named, not applied); every obligation or region left undecided
//! (QG006); `undecided = "pass"`; each rule or obligation turned off, and why; each finding
//! accepted (in the source or by the configuration); each state, solver or unrolling limit below
//! its default, a solver timeout, fewer turns than the input declares, fewer rulebook
//! comparisons; an engine other than `both`; the `start` gate; `min-severity`; a baseline and
//! how many findings it hid.

use std::collections::BTreeMap;

use crate::engine::{bmc, EngineChoice, Limits};
use crate::findings::GateMode;
use crate::input::source::Loc;
use crate::project::config::{self, AcceptEntry, Config, Engine, Off};
use crate::project::options::Options;
use crate::report::{Report, WeakKind, Weakening};
use crate::rules::RuleId;

/// `1 finding`, `2 findings`.
fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn w(kind: WeakKind, message: String, at: Option<Loc>) -> Weakening {
    Weakening { kind, message, at }
}

/// The weakenings of `report`, run with `opts`, its configuration `config` (the one applied),
/// the turns the input declares (`declared_steps`), and `changes` ([`config_changes`] and the
/// baseline's, under `--base-ref`), which come first.
pub(crate) fn list(
    report: &Report,
    opts: &Options,
    config: &Config,
    declared_steps: Option<u32>,
    changes: Vec<Weakening>,
) -> Vec<Weakening> {
    let mut out = changes;
    for a in &report.triage.added_accepts {
        out.push(w(WeakKind::PullRequest, a.message.clone(), Some(a.at)));
    }
    for f in report
        .findings
        .iter()
        .chain(&report.known)
        .filter(|f| f.rule == RuleId::QG006)
    {
        let blocks = if report.blocks(f) {
            " (it fails the gate)"
        } else {
            ""
        };
        out.push(w(
            WeakKind::Undecided,
            format!("{}{blocks}", f.message),
            f.location.line(),
        ));
    }
    if let Some(p) = &report.triage.undecided_pass {
        out.push(w(
            WeakKind::UndecidedPass,
            format!(
                "an obligation no engine decided does not fail the gate (`undecided = \"pass\"`): {}",
                p.reason
            ),
            Some(p.loc),
        ));
    }
    for (o, e) in report.triage.off.iter().zip(&config.off) {
        out.push(w(
            WeakKind::Off,
            format!(
                "{} ({}) is off, {} removed: {}",
                o.id,
                o.what,
                plural(o.removed, "finding", "findings"),
                o.reason
            ),
            Some(e.loc),
        ));
    }
    for f in report.findings.iter().chain(&report.known) {
        if let Some(a) = &f.accepted {
            let how = match a.kind {
                crate::findings::AcceptKind::InSource => "by a comment in the source",
                crate::findings::AcceptKind::External => "by the configuration",
            };
            out.push(w(
                WeakKind::Accept,
                format!(
                    "{} on {} ({}) is accepted {how}: {}",
                    f.rule, f.subject, f.fingerprint, a.reason
                ),
                Some(a.at),
            ));
        }
    }
    limits(&mut out, opts, config, declared_steps);
    let key = |k: &str| config.keys.get(k).copied();
    match opts.engine {
        EngineChoice::Both => {}
        EngineChoice::Explicit | EngineChoice::Z3 => out.push(w(
            WeakKind::Engine,
            format!(
                "only the {} engine ran: its verdicts are not cross-checked",
                if opts.engine == EngineChoice::Z3 {
                    "z3"
                } else {
                    "explicit"
                }
            ),
            key("engine"),
        )),
    }
    if opts.gate == GateMode::Start {
        out.push(w(
            WeakKind::Gate,
            "the gate is `start` (what stops Agent(...)), not `ci`".into(),
            key("gate"),
        ));
    }
    if let Some((min, n)) = report.triage.below {
        out.push(w(
            WeakKind::MinSeverity,
            format!(
                "findings below {} are not shown and do not fail the gate ({} left out)",
                min.as_str(),
                n
            ),
            key("min-severity"),
        ));
    }
    if let Some(b) = &report.baseline {
        out.push(w(
            WeakKind::Baseline,
            format!(
                "the baseline (--baseline) hides {} it already has",
                plural(b.known, "finding", "findings")
            ),
            None,
        ));
    }
    out
}

/// The limits set below their defaults.
fn limits(out: &mut Vec<Weakening>, opts: &Options, config: &Config, declared: Option<u32>) {
    let d = Limits::default();
    let z = bmc::Config::default();
    let key = |k: &str| config.keys.get(k).copied();
    let z3_ran = opts.engine != EngineChoice::Explicit;
    let explicit_ran = opts.engine != EngineChoice::Z3;
    let mut below = |ran: bool, name: &str, value: u64, default: u64| {
        if ran && value < default {
            out.push(w(
                WeakKind::Limit,
                format!("`{name}` is {value}, below its default {default}"),
                key(name),
            ));
        }
    };
    below(
        explicit_ran,
        config::MAX_STATES.key,
        opts.max_states as u64,
        d.max_states as u64,
    );
    below(
        explicit_ran,
        config::MAX_RUN_STATES.key,
        opts.max_run_states,
        d.max_run_states,
    );
    below(
        z3_ran,
        config::SOLVER_RLIMIT.key,
        opts.z3.query_rlimit.into(),
        z.query_rlimit.into(),
    );
    below(
        z3_ran,
        config::SOLVER_OBLIGATION_RLIMIT.key,
        opts.z3.obligation_rlimit,
        z.obligation_rlimit,
    );
    below(
        z3_ran,
        config::SOLVER_RUN_RLIMIT.key,
        opts.z3.run_rlimit,
        z.run_rlimit,
    );
    below(
        z3_ran,
        config::SOLVER_MAX_UNROLLING.key,
        opts.z3.max_size as u64,
        z.max_size as u64,
    );
    below(
        true,
        "rulebook-max-implications",
        opts.rulebook_budgets.implications as u64,
        crate::rulebook::budget::IMPLICATIONS as u64,
    );
    if let (true, Some(ms)) = (z3_ran, opts.z3.timeout_ms) {
        out.push(w(
            WeakKind::Limit,
            format!(
                "`solver-timeout-ms` is {ms}: a query cut short by the clock is undecided, and \
                 where depends on the machine's load"
            ),
            key(config::SOLVER_TIMEOUT_MS.key),
        ));
    }
    if let Some(declared) = declared.filter(|d| opts.session_steps < *d) {
        out.push(w(
            WeakKind::Limit,
            format!(
                "`session-steps` is {}, fewer turns than the input declares ({declared})",
                opts.session_steps
            ),
            key(config::SESSION_STEPS.key),
        ));
    }
    // The input's declaration (or the command line) wins over the configuration's turns: fewer
    // than the configuration asks is said, so a pull request that declares one turn in its
    // export is seen doing it (issue 26).
    if let Some(asked) = config.session_steps.filter(|c| opts.session_steps < *c) {
        let why = if declared == Some(opts.session_steps) {
            " (the input declares it)"
        } else {
            ""
        };
        out.push(w(
            WeakKind::Limit,
            format!(
                "`session-steps` is {}{why}, fewer turns than the configuration's {asked}",
                opts.session_steps
            ),
            key(config::SESSION_STEPS.key),
        ));
    }
}

/// Each top-level setting's value, as written, for comparing two configurations.
fn settings(c: &Config) -> BTreeMap<&'static str, String> {
    let mut m = BTreeMap::new();
    let mut put = |k: &'static str, v: Option<String>| {
        if let Some(v) = v {
            m.insert(k, v);
        }
    };
    put(
        config::SESSION_STEPS.key,
        c.session_steps.map(|v| v.to_string()),
    );
    put("gate", c.gate.map(|g| format!("\"{}\"", g.as_str())));
    put(
        "engine",
        c.engine.map(|e| {
            match e {
                Engine::Explicit => "\"explicit\"",
                Engine::Z3 => "\"z3\"",
                Engine::Both => "\"both\"",
            }
            .to_string()
        }),
    );
    put(config::MAX_STATES.key, c.max_states.map(|v| v.to_string()));
    put(
        config::MAX_RUN_STATES.key,
        c.max_run_states.map(|v| v.to_string()),
    );
    put(
        config::SOLVER_RLIMIT.key,
        c.solver_rlimit.map(|v| v.to_string()),
    );
    put(
        config::SOLVER_OBLIGATION_RLIMIT.key,
        c.solver_obligation_rlimit.map(|v| v.to_string()),
    );
    put(
        config::SOLVER_RUN_RLIMIT.key,
        c.solver_run_rlimit.map(|v| v.to_string()),
    );
    put(
        config::SOLVER_TIMEOUT_MS.key,
        c.solver_timeout_ms.map(|v| v.to_string()),
    );
    put(
        config::SOLVER_MAX_UNROLLING.key,
        c.solver_max_unrolling.map(|v| v.to_string()),
    );
    put(
        "min-severity",
        c.min_severity
            .map(|s| format!("\"{}\"", s.as_str().to_ascii_lowercase())),
    );
    put("strict-accepts", c.strict_accepts.map(|b| b.to_string()));
    put(
        "undecided",
        c.undecided_pass
            .as_ref()
            .map(|p| format!("\"pass\" ({})", p.reason)),
    );
    m
}

fn off_id(o: Off) -> String {
    match o {
        Off::Rule(r) => r.to_string(),
        Off::Obligation(ob) => ob.as_str().to_string(),
    }
}

fn accept_words(a: &AcceptEntry) -> String {
    match a.until {
        Some(u) => format!("{} until {u}", a.matcher),
        None => a.matcher.to_string(),
    }
}

/// The changes the pull request's configuration `head` makes to the base's `base` (SPEC 8.1),
/// each named at its line of `head` and not applied: a setting added or changed (or removed), a
/// new `[off]`, a new `[[accept]]`. `rev` is the base's short name.
pub(crate) fn config_changes(base: &Config, head: &Config, rev: &str) -> Vec<Weakening> {
    let mut out = Vec::new();
    let (b, h) = (settings(base), settings(head));
    let not_applied = format!("not applied (this run uses the base's configuration, at {rev})");
    for (k, v) in &h {
        if b.get(k) != Some(v) {
            let was = b.get(k).map_or("unset".to_string(), Clone::clone);
            out.push(w(
                WeakKind::PullRequest,
                format!("this pull request sets `{k} = {v}` (the base's: {was}), {not_applied}"),
                head.keys.get(*k).copied(),
            ));
        }
    }
    for (k, v) in &b {
        if !h.contains_key(k) {
            out.push(w(
                WeakKind::PullRequest,
                format!("this pull request removes `{k} = {v}`, {not_applied}"),
                None,
            ));
        }
    }
    for o in &head.off {
        if !base.off.iter().any(|x| x.what == o.what) {
            out.push(w(
                WeakKind::PullRequest,
                format!(
                    "this pull request turns off {} (\"{}\"), {not_applied}",
                    off_id(o.what),
                    o.reason
                ),
                Some(o.loc),
            ));
        }
    }
    for a in &head.accepts {
        if !base
            .accepts
            .iter()
            .any(|x| x.matcher == a.matcher && x.until == a.until)
        {
            out.push(w(
                WeakKind::PullRequest,
                format!(
                    "this pull request accepts {} (\"{}\"), {not_applied}",
                    accept_words(a),
                    a.reason
                ),
                Some(a.loc),
            ));
        }
    }
    out
}
