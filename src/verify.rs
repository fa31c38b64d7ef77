//! The pipeline of one `stalwart verify` run (SPEC 0): flatten the inputs, answer every
//! obligation, gather the findings, lints and coverage into a [`Report`]. The command line and the
//! tests both call [`verify`], so what the tests check is what users run.

use crate::checks;
use crate::engine::{self, bmc, Depth, EngineChoice, InstanceResult, Limits};
use crate::findings::GateMode;
use crate::input::Inputs;
use crate::report::{EngineStats, ProofScope, Report};

/// Options of one run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Turns to search (1..=16, already chosen).
    pub session_steps: u32,
    /// The gate.
    pub gate: GateMode,
    /// A rulebook given on the command line, overriding the input's.
    pub rulebook: Option<String>,
    /// States one obligation's search may keep before it is undecided (QG006).
    pub max_states: usize,
    /// The engine(s) to run.
    pub engine: EngineChoice,
    /// The Z3 engine's settings (its per-query timeout).
    pub z3: bmc::Config,
}

impl Options {
    /// Options for `session_steps` turns under the `ci` gate, with the default state budget.
    pub fn new(session_steps: u32) -> Options {
        Options {
            session_steps,
            gate: GateMode::Ci,
            rulebook: None,
            max_states: Limits::default().max_states,
            engine: EngineChoice::Both,
            z3: bmc::Config::default(),
        }
    }
}

/// Verifies `inputs`. Errors: the model could not be built (a message naming the input).
pub fn verify(inputs: Inputs, opts: &Options) -> Result<Report, String> {
    let session_steps = opts.session_steps;
    let model = match crate::model::flatten(&inputs.export, &inputs.catalogue, session_steps) {
        Ok(m) => m,
        Err(e) => return Err(format!("{}: {e}", inputs.input_display)),
    };
    let outcome = engine::run(
        &model,
        opts.engine,
        Limits {
            max_states: opts.max_states,
        },
        &opts.z3,
    );
    let engines: Vec<EngineStats> = outcome
        .runs
        .iter()
        .map(|r| stats(r.name.to_string(), &r.results, r.millis))
        .collect();
    let names: Vec<&str> = outcome.runs.iter().map(|r| r.name).collect();
    let millis = outcome.runs.iter().map(|r| r.millis).sum();
    let mut proof = stats(names.join(" and "), &outcome.results, millis);
    proof.states = engines.iter().map(|e| e.states).sum();
    proof.queries = engines.iter().map(|e| e.queries).sum();
    let results = outcome.results;
    let mut findings = checks::engines::disagreements(&model, &outcome.disagreements);
    findings.extend(checks::graph::findings(&model, &results));
    findings.extend(checks::engines::unchecked(&outcome.unchecked));
    findings.extend(checks::structure::unbounded_loops(&model));
    findings.extend(checks::structure::undeclared_routes(&model));
    findings.extend(checks::structure::opaque_subgraphs(&model));
    checks::sort(&mut findings);
    let (nothing_to_read, not_yet_checked) = checks::coverage::coverage(&model, &inputs.catalogue);
    let rulebook = opts
        .rulebook
        .clone()
        .or_else(|| inputs.rulebook.clone())
        .map(|p| {
            format!("Rulebook {p}: this version does not compile rulebooks yet, so its rules are not checked here (listed below).")
        });
    let report = Report {
        input: inputs.input_display.clone(),
        sources: inputs.sources,
        rulebook,
        export_warnings: inputs.export.warnings.clone(),
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
        limits: checks::coverage::limits(&inputs.export),
    };
    Ok(report)
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
        if !r.violations.is_empty() {
            s.violated += 1;
        } else {
            match r.depth {
                Depth::Every => s.holds_every_depth += 1,
                Depth::Bound(_) => s.holds_to_bound += 1,
                Depth::Undecided => s.undecided += 1,
            }
        }
    }
    s
}
