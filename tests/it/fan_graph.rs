//! Issue 26, item 5: one model node routing to thousands of tool nodes (guarded and plain in
//! turn, two tools a node, reads and writes; `stalwart::gen::families::fan`), the graph a hostile
//! pull request writes to stall the gate. The parts that were quadratic in the fan-out now look
//! things up once per model (the taint regions and slices of [`stalwart::engine::share::groups`],
//! a group's possible violations, the edges' source lines, the lints, a replay's per-tool
//! latches); these tests hold what they answer: the fast forms equal the scans they replace on
//! every instance, and a 2,000-wide graph verifies with the findings the scans gave (counted on
//! the build before the change). The input is generated into a temporary folder. Nothing here is
//! timed.

use crate::common;

use stalwart::engine;
use stalwart::engine::slice::{self, Slice};
use stalwart::gen::families;
use stalwart::{verify, Options};
use std::collections::{BTreeMap, BTreeSet};

const WIDTH: usize = 2_000;

/// Each instance's taint bits and slice, worked out from the model-wide lists, are the ones the
/// scan of every node and tool gives.
#[test]
fn the_model_wide_lists_give_each_instance_the_bits_and_slice_a_scan_gives() {
    // Small enough to scan every instance in a debug build; every obligation kind is asked.
    let g = families::fan(7, 300, 2);
    let (_dir, inputs) = common::load_generated(&g);
    let m = common::flat(&inputs);
    let plain = slice::plain_regions(&m);
    let irrev = slice::irrev_confirmations(&m);
    let none = BTreeSet::new();
    let insts = engine::instances(&m);
    let mut split = 0;
    for inst in &insts {
        let own = slice::own_regions(&plain, *inst);
        assert_eq!(
            slice::taint_bits_of(&m, *inst, own),
            slice::taint_bits(&m, *inst),
            "{inst:?}"
        );
        split += usize::from(!own.is_empty());
        assert_eq!(
            Slice::with_confirmations(&m, inst.obligation, inst.tool, &none, &irrev),
            Slice::new(&m, inst.obligation, inst.tool, &none),
            "{inst:?}"
        );
    }
    // The regions matter for some instances (O6 on a tool a plain node binds).
    assert!(split > 0, "no instance is split by region");
    assert_eq!(insts.len(), 751);
}

#[test]
fn a_2000_wide_fan_verifies_with_the_findings_the_scans_gave() {
    let g = families::fan(42, WIDTH, 3);
    let (_dir, inputs) = common::load_generated(&g);
    let mut opts = Options::new(3);
    // A budget small enough for a debug build: the first batches are searched, the rest are
    // undecided (QG006) naming it.
    opts.max_run_states = 2_000_000;
    let report = verify(inputs, &opts).expect("verify");

    // Since SPEC 3.1 "The guard's view", the guarded nodes' calls of O4-O6 are judged too (the
    // plain nodes' reads are taint the guard never sees), so fewer instances fit the budget
    // than the scans' count gave (QG006 3485, QG011 25, QG013 10, QG014 18, QG105 30 before).
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.findings {
        *by_rule.entry(f.rule.as_str()).or_default() += 1;
    }
    let want: BTreeMap<&str, usize> = [
        ("QG001", 2000),
        ("QG006", 4878),
        ("QG011", 17),
        ("QG013", 4),
        ("QG014", 8),
        ("QG023", 1),
        ("QG101", 2533),
        ("QG105", 9),
    ]
    .into_iter()
    .collect();
    assert_eq!(by_rule, want);

    // QG001 on the two tools of each plain node (the odd ones), at that node.
    let qg001: BTreeSet<(String, String)> = report
        .findings
        .iter()
        .filter(|f| f.rule == "QG001")
        .map(|f| (f.subject.clone(), f.node.clone().unwrap_or_default()))
        .collect();
    let plain: BTreeSet<(String, String)> = (1..WIDTH)
        .step_by(2)
        .flat_map(|i| [2 * i, 2 * i + 1].map(|t| (format!("tool_{t:05}"), format!("f{i}"))))
        .collect();
    assert_eq!(qg001, plain);

    let explicit = report.engine("explicit").expect("the explicit engine ran");
    assert_eq!(
        (
            explicit.obligations,
            explicit.holds_every_depth,
            explicit.violated,
            explicit.undecided,
            explicit.states
        ),
        (5000, 9, 39, 4952, 689_061)
    );
    let z3 = report.engine("z3").expect("the z3 engine ran");
    assert_eq!(
        (
            z3.obligations,
            z3.holds_every_depth,
            z3.violated,
            z3.undecided
        ),
        (5000, 82, 0, 4918)
    );
    assert_eq!(
        (
            report.proof.holds_every_depth,
            report.proof.violated,
            report.proof.undecided
        ),
        (85, 39, 4876)
    );
    assert_eq!(report.disagreements, 0);

    let lints: BTreeMap<&str, usize> = report.lints.iter().fold(BTreeMap::new(), |mut m, l| {
        *m.entry(l.id).or_default() += 1;
        m
    });
    assert_eq!(
        lints,
        [("compensation_not_retry_safe", 267)].into_iter().collect()
    );
    assert_eq!(report.exit_code(), 1);
}
