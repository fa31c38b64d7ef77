//! Issue 14, item 5: a wide graph (one model routing by one conditional edge to 20,000 plain
//! tool nodes, a tool each) is read, checked and answered within budgets, never silently: the
//! explicit engine searches obligations until the run's state budget (`--max-run-states`) is
//! spent and reports every later one undecided (QG006) naming that budget; the Z3 engine declines
//! every obligation at once, naming its unrolling limit. The input is generated into a temporary
//! folder by the test (`stalwart::gen::families::wide`), not checked in. Nothing here is timed.

use stalwart::engine::{Limits, RUN_BATCH};
use stalwart::gen::families;
use stalwart::input;
use stalwart::{verify, Options};
use std::collections::BTreeSet;

const WIDTH: usize = 20_000;

/// Writes the wide export and its catalogue into `dir`; returns their paths.
fn write_wide(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let g = families::wide(42, WIDTH, 3);
    let gp = dir.join("graph.json");
    let cp = dir.join("catalogue.json");
    std::fs::write(&gp, serde_json::to_string_pretty(&g.graph).expect("graph")).expect("write");
    std::fs::write(
        &cp,
        serde_json::to_string_pretty(&g.catalogue).expect("cat"),
    )
    .expect("write");
    (gp, cp)
}

#[test]
fn a_20000_wide_graph_is_stopped_by_the_run_state_budget_undecided() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (gp, cp) = write_wide(dir.path());
    let inputs = input::load_export(&gp, &cp).expect("the wide export reads");
    let mut opts = Options::new(3);
    // A small budget, so the test is quick in a debug build; the default is
    // `Limits::default().max_run_states`.
    opts.max_run_states = 200_000;
    assert!(opts.max_run_states < Limits::default().max_run_states);
    let report = verify(inputs, &opts).expect("verify");

    // QG001 on every tool, at its own tool node: the one O1 search, in the first batch.
    let qg001: BTreeSet<(String, String)> = report
        .findings
        .iter()
        .filter(|f| f.rule == "QG001")
        .map(|f| (f.subject.clone(), f.node.clone().unwrap_or_default()))
        .collect();
    let want: BTreeSet<(String, String)> = (0..WIDTH)
        .map(|i| (format!("tool_{i:05}"), format!("t{i}")))
        .collect();
    assert_eq!(qg001, want);

    let explicit = report.engine("explicit").expect("the explicit engine ran");
    let z3 = report.engine("z3").expect("the z3 engine ran");
    // O1 once for every tool, then the per-tool obligations its catalogue words call for.
    let obligations = 25_000;
    assert_eq!(explicit.obligations, obligations);
    assert_eq!(z3.obligations, obligations);
    // The Z3 engine declines every obligation (its unrolling would be past its limit); the
    // explicit engine searched some whole batches and left the rest to the budget.
    assert_eq!(z3.undecided, obligations);
    assert!(explicit.undecided > 0 && explicit.undecided < obligations);
    let searched = obligations - explicit.undecided;
    assert_eq!(searched % RUN_BATCH, 0, "whole batches are searched");

    assert_eq!(report.proof.undecided, explicit.undecided);

    // Each undecided obligation is one QG006 that names both budgets and their flags.
    let qg006: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "QG006" && f.obligation.is_some())
        .collect();
    assert_eq!(qg006.len(), explicit.undecided);
    for f in &qg006 {
        assert!(
            f.message
                .contains("not searched: the obligations searched before it generated ")
                && f.message.contains(
                "past the run's state budget of 200000 (--max-run-states) (the explicit engine)"
            ) && f
                .message
                .contains("past its limit of 150000 (--solver-max-unrolling) (the z3 engine)"),
            "{}",
            f.message
        );
        assert!(
            f.fix.starts_with("Raise the bound the message names"),
            "{}",
            f.fix
        );
    }
    // The obligations decided were all violated (every tool node is plain): the gate fails.
    assert_eq!(explicit.violated, searched);
    assert_eq!(report.disagreements, 0);
    assert_eq!(report.exit_code(), 1);
}
