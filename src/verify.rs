//! The pipeline of one `stalwart verify` run (SPEC 0): flatten the inputs, answer every
//! obligation, gather the findings, lints and coverage into a [`Report`]. The command line and the
//! tests both call [`verify`], so what the tests check is what users run.

use crate::checks;
use crate::engine::{self, Depth, Limits};
use crate::findings::GateMode;
use crate::input::Inputs;
use crate::report::{EngineStats, ProofScope, Report};
use std::time::Instant;

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
}

impl Options {
    /// Options for `session_steps` turns under the `ci` gate, with the default state budget.
    pub fn new(session_steps: u32) -> Options {
        Options {
            session_steps,
            gate: GateMode::Ci,
            rulebook: None,
            max_states: Limits::default().max_states,
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
    let started = Instant::now();
    let results = engine::run(
        &model,
        Limits {
            max_states: opts.max_states,
        },
    );
    let millis = started.elapsed().as_millis() as u64;
    let mut stats = EngineStats {
        obligations: results.len(),
        millis,
        ..EngineStats::default()
    };
    for r in &results {
        stats.states += r.states;
        if !r.violations.is_empty() {
            stats.violated += 1;
        } else {
            match r.depth {
                Depth::Every => stats.holds_every_depth += 1,
                Depth::Bound(_) => stats.holds_to_bound += 1,
                Depth::Undecided => stats.undecided += 1,
            }
        }
    }
    let mut findings = checks::graph::findings(&model, &results);
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
        explicit: stats,
        limits: checks::coverage::limits(&inputs.export),
    };
    Ok(report)
}
