//! The pipeline of one `stalwart verify` run (SPEC 0): flatten the inputs, answer every
//! obligation, gather the findings, lints and coverage into a [`Report`]. The command line and the
//! tests both call [`verify`], so what the tests check is what users run.

use std::path::Path;

use crate::checks;
use crate::engine::{self, Depth, InstanceResult, Limits, Verdict};
use crate::findings::Finding;
use crate::input::error::InputError;
use crate::input::Inputs;
use crate::project::options::Options;
use crate::report::{EngineStats, ProofScope, Report, RulebookInfo};
use crate::rulebook::load::{self, LoadError, Loaded, VersionChoice};

/// Why a run could not prove anything (exit 2).
#[derive(Debug)]
pub enum VerifyError {
    /// Bad input, located (a rulebook that cannot be read, an edited record, an advisory list).
    Input(InputError),
    /// The model could not be built.
    Model(String),
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::Input(e) => write!(f, "{e}"),
            VerifyError::Model(m) => write!(f, "{m}"),
        }
    }
}

/// The rulebook as named, and either what it compiled to or why it does not compile (QG005).
type RulebookRead = (String, Result<Loaded, InputError>);

/// The rulebook the run reads: the command line's, else agent.yaml's. `Ok(None)`: none given;
/// `Ok(Some(Err(e)))`: it does not compile (QG005 at `e`). Errors: it cannot be read at all.
fn rulebook(inputs: &mut Inputs, opts: &Options) -> Result<Option<RulebookRead>, InputError> {
    let (path, origin) = match (&opts.rulebook, &inputs.rulebook) {
        (Some(p), _) => (p.clone(), load::Origin::command_line(Path::new(p))),
        (None, Some(r)) => (r.shown.clone(), load::Origin::named(r.at, &r.named_by)),
        (None, None) => return Ok(None),
    };
    let declared = match &inputs.colang_version {
        Some(v) => load::parse_version(&v.name).map(|version| VersionChoice {
            version,
            from: "agent.yaml's settings.colang_version".into(),
        }),
        None => None,
    };
    match load::load(
        &mut inputs.sources,
        Path::new(&path),
        &path,
        declared,
        &origin,
        &opts.rulebook_budgets,
    ) {
        Ok(l) => Ok(Some((path, Ok(l)))),
        Err(LoadError::Unshippable(e)) => Ok(Some((path, Err(e)))),
        Err(LoadError::Input(e)) => Err(e),
    }
}

/// Verifies `inputs`. Errors: the rulebook, the advisory list or the traces cannot be read (a
/// traces line of the wrong shape included), or the model could not be built.
pub fn verify(inputs: Inputs, opts: &Options) -> Result<Report, VerifyError> {
    verify_with_model(inputs, opts).map(|(report, _)| report)
}

/// The number of turns a run searches (SPEC 1): the flag's, else the export's `session_steps`,
/// else `stalwart.toml`'s, else 1. The export's and the configuration's are range-checked where
/// they are read (with their line); a number out of [`crate::input::ir::SESSION_STEPS`] is an input
/// error naming the range.
pub(crate) fn session_steps(
    flag: Option<u32>,
    export: Option<u32>,
    config: Option<u32>,
) -> Result<u32, InputError> {
    let n = flag.or(export).or(config).unwrap_or(1);
    let range = crate::input::ir::SESSION_STEPS;
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(InputError::plain(
            format!("--session-steps {n} is out of range"),
            format!(
                "give a number of turns from {} to {}",
                range.start(),
                range.end()
            ),
        ))
    }
}

/// [`verify`], also returning the flattened model the findings were drawn from (with the
/// rulebook's gates), for `--replay` (SPEC 10) to walk a witness on.
pub fn verify_with_model(
    mut inputs: Inputs,
    opts: &Options,
) -> Result<(Report, crate::model::FlatModel), VerifyError> {
    let session_steps =
        self::session_steps(Some(opts.session_steps), None, None).map_err(VerifyError::Input)?;
    let rulebook = rulebook(&mut inputs, opts).map_err(VerifyError::Input)?;
    let advisories =
        crate::rulebook::advisories::load(opts.advisories.as_deref()).map_err(|e| {
            VerifyError::Input(InputError::plain(
                format!("the advisory list cannot be read: {e}"),
                "fix the list at the line named; its format is described in rules/advisories.toml",
            ))
        })?;
    let traces = match &opts.traces {
        Some(p) => Some((
            p.display().to_string(),
            crate::input::read_traces(&mut inputs.sources, p).map_err(VerifyError::Input)?,
        )),
        None => None,
    };
    let mut model = match crate::model::flatten(&inputs.export, &inputs.catalogue, session_steps) {
        Ok(m) => m,
        Err(e) => {
            return Err(match e.at {
                Some(at) => VerifyError::Input(InputError::at(
                    &inputs.sources,
                    at,
                    e.message,
                    "make the graph smaller: export a subgraph used many times as one node",
                )),
                None => VerifyError::Model(format!("{}: {e}", inputs.input_display)),
            })
        }
    };
    if let Some((_, Ok(l))) = &rulebook {
        model.gates = crate::rulebook::gate::gates(&l.compiled, &model.tools, &inputs.facts);
    }
    let outcome = engine::run(
        &model,
        opts.engine,
        Limits {
            max_states: opts.max_states,
            max_run_states: opts.max_run_states,
        },
        &opts.z3,
    );
    let engines: Vec<EngineStats> = outcome
        .runs
        .iter()
        .map(|r| stats(r.name.as_str().to_string(), &r.results, r.millis))
        .collect();
    let names: Vec<&str> = outcome.runs.iter().map(|r| r.name.as_str()).collect();
    let millis = outcome.runs.iter().map(|r| r.millis).sum();
    let mut proof = stats(names.join(" and "), &outcome.results, millis);
    proof.states = engines.iter().map(|e| e.states).sum();
    proof.queries = engines.iter().map(|e| e.queries).sum();
    let results = outcome.results;
    let mut findings = checks::engines::disagreements(&model, &outcome.disagreements);
    findings.extend(checks::graph::findings(
        &model,
        &results,
        inputs.export.framework,
    ));
    findings.extend(checks::engines::unchecked(&outcome.unchecked));
    findings.extend(checks::structure::unbounded_loops(&model));
    findings.extend(checks::structure::undeclared_routes(&model));
    findings.extend(checks::structure::opaque_subgraphs(&model));
    findings.extend(checks::opaque::unread_code(&inputs.export.graph));
    findings.extend(checks::declarations::permissive_by_default(&model, &inputs));
    let compiled = matches!(&rulebook, Some((_, Ok(_))));
    findings.extend(checks::catalogue_rules::findings(
        &model,
        &inputs.catalogue,
        compiled,
    ));
    let (line, info) = rulebook_findings(
        &rulebook,
        &model,
        &inputs,
        &advisories,
        opts.rulebook_budgets.implications,
        &mut findings,
    );
    let traces_info = traces.map(|(path, traces)| {
        let (found, info) = checks::traces::unmodelled_paths(&model, &traces, &path);
        findings.extend(found);
        info
    });
    checks::sort(&mut findings);
    checks::unique_fingerprints(&mut findings);
    let given = checks::coverage::Given {
        rulebook: rulebook.is_some(),
        traces: traces_info.is_some(),
    };
    let (nothing_to_read, not_yet_checked) =
        checks::coverage::coverage(&model, &inputs.catalogue, given);
    let code_checks = checks::code::check(&inputs);
    let report = Report {
        input: inputs.input_display.clone(),
        sources: inputs.sources,
        rulebook: line,
        rulebook_info: info,
        export_warnings: inputs.export.warnings.clone(),
        framework: inputs.export.framework,
        lints: checks::lints::lints(&model, &inputs.catalogue),
        findings,
        nothing_to_read,
        not_yet_checked,
        gate: opts.gate,
        scope: ProofScope {
            session_steps,
            recursion_limit: model.recursion_limit,
            nodes: model.nodes.len(),
            edges: model.edges.len(),
            tools: model.tools.len(),
        },
        proof,
        engines,
        disagreements: outcome.disagreements.len(),
        unchecked: outcome.unchecked.len(),
        z3_version: crate::engine::z3_version(),
        limits: checks::coverage::limits(&inputs.export),
        baseline: None,
        traces: traces_info,
        code_checks,
        triage: crate::report::Triage::default(),
        known: Vec::new(),
        weakened: Vec::new(),
    };
    Ok((report, model))
}

/// The rulebook's findings, its report line and its summary.
fn rulebook_findings(
    rulebook: &Option<RulebookRead>,
    model: &crate::model::FlatModel,
    inputs: &Inputs,
    advisories: &[crate::rulebook::advisories::Advisory],
    implications: usize,
    findings: &mut Vec<Finding>,
) -> (Option<String>, Option<RulebookInfo>) {
    let Some((display, loaded)) = rulebook else {
        return (None, None);
    };
    match loaded {
        Err(e) => {
            findings.push(checks::rulebook::unshippable(e, display, &inputs.sources));
            (
                Some(format!("The rulebook {display} does not compile (QG005 below): an agent under it does not start, and its rules are not verified here.")),
                Some(RulebookInfo {
                    path: display.clone(),
                    compiled: false,
                    ..RulebookInfo::default()
                }),
            )
        }
        Ok(l) => {
            let ctx = checks::rulebook::Context {
                loaded: l,
                model,
                facts: &inputs.facts,
                advisories,
                implications,
            };
            findings.extend(checks::rulebook::findings(&ctx));
            let governed: Vec<String> = model
                .gates
                .iter()
                .enumerate()
                .filter(|(_, g)| g.is_some())
                .map(|(u, _)| model.tools[u].name.clone())
                .collect();
            let info = RulebookInfo {
                path: display.clone(),
                compiled: true,
                kind: match l.kind {
                    load::Kind::Colang => "colang",
                    load::Kind::Sheet => "sheet",
                    load::Kind::Record => "record",
                }
                .into(),
                colang_version: l.version.as_ref().map(|v| v.version.as_str().to_string()),
                version_from: l.version.as_ref().map(|v| v.from.clone()),
                record_hash: l.record_hash.clone(),
                files: l.compiled.files.iter().map(|f| f.path.clone()).collect(),
                routes: l.compiled.routes.len(),
                governed,
            };
            (
                Some(format!("Compiled the rulebook {display}: the tool check enforces the rules verified here.")),
                Some(info),
            )
        }
    }
}

/// Verdict counts of `results`.
fn stats(name: String, results: &[InstanceResult], millis: u64) -> EngineStats {
    let mut s = EngineStats {
        name,
        obligations: results.len(),
        millis,
        ..EngineStats::default()
    };
    for r in results {
        s.states += r.states;
        s.queries += r.queries;
        s.rlimit += r.rlimit;
        s.rlimit_obligation_peak = s.rlimit_obligation_peak.max(r.rlimit);
        s.rlimit_query_peak = s.rlimit_query_peak.max(r.rlimit_peak);
        // An obligation the engine could not finish is undecided, also where it found some of
        // its violations first (they are reported, and so is its QG006): the counts say what the
        // findings say.
        match r.verdict() {
            Verdict::Undecided(_)
            | Verdict::Violated {
                undecided: Some(_), ..
            } => s.undecided += 1,
            Verdict::Violated {
                undecided: None, ..
            } => s.violated += 1,
            Verdict::Holds(Depth::Every) => s.holds_every_depth += 1,
            Verdict::Holds(_) => s.holds_to_bound += 1,
            Verdict::NotRun => {}
        }
    }
    s
}
