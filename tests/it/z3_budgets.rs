//! Issue 19: the Z3 engine is bounded by Z3's own resource units (its `rlimit`), per query
//! (`--solver-rlimit`), per obligation (`--solver-obligation-rlimit`) and per run
//! (`--solver-run-rlimit`), never by the wall clock, so the same input gets the same findings on
//! any machine: a query or obligation past its budget is undecided (QG006 naming the budget and
//! its flag), and past the run's budget the obligations not yet asked are undecided unasked,
//! whole batches in instance order, whatever the threads. `engines.z3.undecided` counts every
//! obligation Z3 could not decide, also one where it found some violations first. Nothing here
//! is timed.

use crate::common;

use stalwart::engine::bmc::budget::Budget;
use stalwart::engine::{self, bmc, Depth, EngineChoice, InstanceResult, Limits, RUN_BATCH};
use stalwart::gen::{self, families, Generated};
use stalwart::input::{self, Inputs};
use stalwart::{verify, Options};
use z3::ast::Bool;
use z3::{Params, SatResult, Solver};

/// Asserts the pigeonhole principle for `n + 1` pigeons and `n` holes on `solver`, as clauses:
/// unsatisfiable, and work for a SAT solver (resolution needs exponentially many steps).
fn pigeonhole(solver: &Solver, n: usize) {
    let p: Vec<Vec<Bool>> = (0..=n)
        .map(|_| (0..n).map(|_| Bool::fresh_const("p")).collect())
        .collect();
    for row in &p {
        solver.assert(Bool::or(row));
    }
    for h in 0..n {
        for (a, pa) in p.iter().enumerate() {
            for pb in &p[a + 1..] {
                solver.assert(Bool::and(&[&pa[h], &pb[h]]).not());
            }
        }
    }
}

/// The solver the Z3 engine makes (`Unrolling::new`).
fn engine_solver() -> Solver {
    Solver::new_for_logic("QF_FD").expect("Z3 knows QF_FD")
}

#[test]
fn a_z3_solver_honours_its_rlimit_per_query() {
    let s = engine_solver();
    pigeonhole(&s, 7);
    let mut p = Params::new();
    p.set_u32("rlimit", 1);
    s.set_params(&p);
    assert_eq!(
        s.check(),
        SatResult::Unknown,
        "one resource unit decides nothing"
    );
    // The limit is per query, not spent for good: a larger one on the same solver decides.
    let mut p = Params::new();
    p.set_u32("rlimit", u32::MAX);
    s.set_params(&p);
    assert_eq!(s.check(), SatResult::Unsat);
}

#[test]
fn a_budget_counts_the_units_its_queries_spend_and_names_the_flag_that_ran_out() {
    let s = engine_solver();
    pigeonhole(&s, 6);
    let q = Bool::from_bool(true);
    let roomy = bmc::Config::default();
    let mut b = Budget::new(&roomy);
    assert!(matches!(b.ask(&s, &q), Some(None)), "unsatisfiable");
    let spent = b.used;
    assert!(spent > 1000, "the pigeonhole costs Z3 work: {spent} units");
    assert_eq!((b.queries, b.peak), (1, spent));

    // The same query on a fresh solver spends the same units: the count is deterministic.
    let s2 = engine_solver();
    pigeonhole(&s2, 6);
    let mut b2 = Budget::new(&roomy);
    assert!(matches!(b2.ask(&s2, &q), Some(None)));
    assert_eq!(b2.used, spent);

    // Under `cfg`, the pigeonhole asked on a fresh solver runs out: the budget's note says why.
    let runs_out = |cfg: &bmc::Config, s: &z3::Solver| -> String {
        pigeonhole(s, 6);
        let mut b = Budget::new(cfg);
        assert!(b.ask(s, &q).is_none());
        b.why.clone().unwrap_or_default()
    };

    // A query limit below what it needs: unknown, naming --solver-rlimit.
    let tight = bmc::Config {
        query_rlimit: (spent / 2) as u32,
        ..bmc::Config::default()
    };
    let why = runs_out(&tight, &engine_solver());
    let want = format!("resource limit of {} (--solver-rlimit)", spent / 2);
    assert!(why.contains(&want), "{why}");

    // An obligation budget below it: the query gets only what is left, and the note names
    // --solver-obligation-rlimit; with nothing left, no query is asked.
    let small = bmc::Config {
        obligation_rlimit: spent / 2,
        ..bmc::Config::default()
    };
    let why = runs_out(&small, &engine_solver());
    let want = format!(
        "resource budget of {} (--solver-obligation-rlimit)",
        spent / 2
    );
    assert!(why.contains(&want), "{why}");
    let s4 = engine_solver();
    pigeonhole(&s4, 6);
    let mut b4 = Budget::new(&small);
    assert!(b4.ask(&s4, &q).is_none());
    assert!(b4.used > 0 && b4.used < spent, "{}", b4.used);
    // With the obligation's budget spent, a query is not asked at all.
    b4.used = small.obligation_rlimit;
    assert!(b4.ask(&s4, &q).is_none());
    assert_eq!((b4.queries, b4.used), (1, small.obligation_rlimit));
}

/// A generated family's export, loaded (written to a temporary folder, as a user's would be).
fn load(g: &Generated) -> (tempfile::TempDir, Inputs) {
    let dir = tempfile::tempdir().expect("tempdir");
    let gp = dir.path().join("graph.json");
    let cp = dir.path().join("catalogue.json");
    std::fs::write(&gp, serde_json::to_string(&g.graph).expect("graph")).expect("write");
    std::fs::write(&cp, serde_json::to_string(&g.catalogue).expect("cat")).expect("write");
    let inputs = input::load_export(&gp, &cp).expect("the generated export reads");
    (dir, inputs)
}

/// The Z3 engine's results on `m` under `cfg`, in the order the engine asks them
/// ([`engine::instances`]; the run returns them sorted).
fn z3_results(m: &stalwart::model::FlatModel, cfg: &bmc::Config) -> Vec<InstanceResult> {
    let mut rs = engine::run(m, EngineChoice::Z3, Limits::default(), cfg)
        .runs
        .into_iter()
        .find(|r| r.name == engine::Engine::Z3)
        .map(|r| r.results)
        .expect("the z3 engine ran");
    let order = engine::instances(m);
    rs.sort_by_key(|r| order.iter().position(|&i| i == r.instance));
    rs
}

/// What the findings are made of, per instance: its verdict, its note and its violations.
fn verdicts(rs: &[InstanceResult]) -> Vec<String> {
    rs.iter()
        .map(|r| {
            let v: Vec<String> = r
                .violations
                .iter()
                .map(|v| {
                    format!(
                        "{}/{}/{:?}@{}:{}",
                        v.tool,
                        v.node,
                        v.class,
                        v.turn,
                        v.witness.len()
                    )
                })
                .collect();
            format!(
                "{:?} {:?} {:?} {} [{}]",
                r.instance,
                r.depth,
                r.note,
                r.rlimit,
                v.join(" ")
            )
        })
        .collect()
}

#[test]
fn a_query_budget_too_small_leaves_z3_undecided_and_says_so_in_qg006() {
    let g = families::react(42, 10, 3);
    let (_dir, inputs) = load(&g);
    let mut opts = Options::new(3);
    opts.z3.query_rlimit = 1;
    let report = verify(inputs, &opts).expect("verify");
    let z3 = report.engine("z3").expect("the z3 engine ran");
    let explicit = report.engine("explicit").expect("the explicit engine ran");
    assert!(z3.undecided > 0 && explicit.undecided == 0);
    let qg006: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "QG006" && f.subject == "the z3 engine's cross-check")
        .collect();
    assert_eq!(qg006.len(), 1, "one QG006 for the cross-check");
    assert!(
        qg006[0]
            .message
            .contains("a query ran past its resource limit of 1 (--solver-rlimit)"),
        "{}",
        qg006[0].message
    );
    assert!(
        qg006[0].fix.contains("`--solver-rlimit`"),
        "{}",
        qg006[0].fix
    );
    assert!(
        qg006[0]
            .message
            .contains(&format!("could not decide {} obligation", z3.undecided)),
        "the count and the finding say the same: {}",
        qg006[0].message
    );
}

#[test]
fn an_obligation_z3_partly_decided_is_counted_undecided() {
    let g = families::chain(42, 10, 3);
    let (_dir, inputs) = load(&g);
    let m = common::flat_gated(&inputs, &g);
    let roomy = z3_results(&m, &bmc::Config::default());
    // An obligation Z3 finds broken in several queries: a budget of part of what it spends
    // leaves it with some violations found and the rest undecided.
    let common_ = bmc::Common::new(&m);
    let mut partly = None;
    'search: for r in roomy
        .iter()
        .filter(|r| !r.violations.is_empty() && r.queries >= 3)
    {
        for k in 1..20 {
            let cfg = bmc::Config {
                obligation_rlimit: r.rlimit * k / 20,
                ..bmc::Config::default()
            };
            let got = bmc::check(&m, &common_, r.instance, &cfg, &bmc::Hints::default());
            if got.depth == Depth::Undecided && !got.violations.is_empty() {
                partly = Some((r.instance, cfg));
                break 'search;
            }
        }
    }
    let (inst, cfg) = partly.expect("some obligation is decided in parts");
    let rs = z3_results(&m, &cfg);
    let undecided = rs.iter().filter(|r| r.depth == Depth::Undecided).count();
    assert!(rs
        .iter()
        .any(|r| r.instance == inst && r.depth == Depth::Undecided && !r.violations.is_empty()));

    let mut opts = Options::new(3);
    opts.engine = EngineChoice::Z3;
    opts.z3 = cfg;
    let report = verify(inputs, &opts).expect("verify");
    let z3 = report.engine("z3").expect("the z3 engine ran");
    assert_eq!(
        z3.undecided, undecided,
        "every undecided obligation is counted"
    );
    assert_eq!(
        z3.violated,
        rs.iter()
            .filter(|r| r.depth != Depth::Undecided && !r.violations.is_empty())
            .count()
    );
    assert_eq!(
        z3.obligations,
        z3.holds_every_depth + z3.holds_to_bound + z3.violated + z3.undecided
    );
    // The QG006 of that obligation names the obligation's budget.
    assert!(report
        .findings
        .iter()
        .any(|f| f.rule == "QG006" && f.message.contains("(--solver-obligation-rlimit)")));
}

#[test]
fn the_run_budget_stops_whole_batches_in_instance_order_whatever_the_threads() {
    let g = gen::mesh(42, 12, 60, 3, 3);
    let (_dir, inputs) = load(&g);
    let m = common::flat_gated(&inputs, &g);
    let all = engine::instances(&m);
    assert!(all.len() > 3 * RUN_BATCH, "{} instances", all.len());

    // One unit: the first batch is asked (its spend is known only after), the rest are not.
    let one = bmc::Config {
        run_rlimit: 1,
        ..bmc::Config::default()
    };
    let roomy = z3_results(&m, &bmc::Config::default());
    assert!(roomy[..RUN_BATCH].iter().map(|r| r.rlimit).sum::<u64>() > 0);
    let rs = z3_results(&m, &one);
    for r in &rs[RUN_BATCH..] {
        assert_eq!(r.depth, Depth::Undecided);
        let note = r.note.clone().unwrap_or_default();
        assert!(
            note.starts_with("not asked: the obligations asked before it spent ")
                && note.ends_with("past the run's budget of 1 (--solver-run-rlimit)"),
            "{note}"
        );
    }
    assert!(rs[..RUN_BATCH].iter().all(|r| !r
        .note
        .clone()
        .unwrap_or_default()
        .starts_with("not asked")));

    // A budget that runs out inside a later batch k that asks Z3: batches 0..=k are asked, on
    // any number of threads, with the same answers, and the rest are not.
    let spend: Vec<u64> = roomy
        .chunks(RUN_BATCH)
        .map(|b| b.iter().map(|r| r.rlimit).sum())
        .collect();
    let k = (1..spend.len() - 1)
        .find(|&k| spend[k] > 1)
        .expect("a batch past the first, not the last, asks Z3");
    let cfg = bmc::Config {
        run_rlimit: spend[..k].iter().sum::<u64>() + spend[k] / 2,
        ..bmc::Config::default()
    };
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool")
            .install(|| verdicts(&z3_results(&m, &cfg)))
    };
    let asked = (k + 1) * RUN_BATCH;
    let one_thread = on(1);
    assert_eq!(one_thread, on(3));
    assert_eq!(one_thread[..asked], verdicts(&roomy)[..asked]);
    assert!(one_thread[asked..]
        .iter()
        .all(|v| v.contains("not asked: the obligations asked before it spent")));
}

#[test]
fn the_budgets_are_flags_and_stalwart_toml_keys() {
    let r = common::stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--solver-rlimit",
        "1",
        "--no-config",
    ]);
    assert!(
        r.stdout.contains("(--solver-rlimit)"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("stalwart.toml");
    std::fs::write(&cfg, "solver-obligation-rlimit = 1\n").expect("write");
    let r = common::stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--config",
        cfg.to_str().expect("utf-8 path"),
    ]);
    assert!(
        r.stdout.contains("(--solver-obligation-rlimit)"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    for flag in [
        "--solver-rlimit",
        "--solver-obligation-rlimit",
        "--solver-run-rlimit",
    ] {
        let r = common::stalwart(&["verify", "fixtures/shop/agent.yaml", flag, "0"]);
        assert_eq!(r.code, 2, "{flag} 0 exits 2\n{}", r.stderr);
        assert!(r.stderr.contains(flag), "{}", r.stderr);
    }
    std::fs::write(&cfg, "solver-run-rlimit = 0\n").expect("write");
    let r = common::stalwart(&[
        "verify",
        "fixtures/shop/agent.yaml",
        "--config",
        cfg.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("`solver-run-rlimit` is 0"),
        "{}",
        r.stderr
    );
}
