//! Benchmark harness: `cargo run --release --features bench --bin bench [-- [FAMILY,...] [SIZE...] [--profile] [--write DIR]]`.
//!
//! For each graph family (`react`, `mesh`, `subgraphs`, `chain`, `wide`, `fan`; see
//! `stalwart::gen`) and size (default 10, 100 and 1,000 nodes; give 10000 to add the largest),
//! it generates an export with
//! a tenth as many tools and a twentieth as many order rules at `session_steps` 3, verifies it
//! with both engines (`--engine both`, the default) and prints: the flattened nodes, tools and
//! obligations; each engine's wall time in milliseconds and their ratio; how many obligations
//! each engine decided (the rest are undecided, QG006: for the explicit engine, those past the
//! run's state budget, `--max-run-states`; for Z3, a query or obligation past its resource limit,
//! `--solver-rlimit` and `--solver-obligation-rlimit`, those past the run's, `--solver-run-rlimit`,
//! or an unrolling past its size limit); whether the engines agreed; the whole verification's time;
//! and Z3's resource units (the run's total in millions, the most one obligation and one query
//! spent, the figures the default budgets are set from). One run each: compare the figures as
//! ratios within one run on a shared machine. The `wide` family's size is its fan-out (one model
//! routing to that many plain tool nodes, a tool each; not in the default list), and so is the
//! `fan` family's (guarded and plain tool nodes in turn, two tools each, reads and writes; not in
//! the default list either).
//!
//! The family `corpus` (in the default list, last) is every graph of `../shared/corpus/langgraph`
//! and `../shared/corpus/agentdojo` (skipped, saying so, where `../shared` is absent), each
//! verified twice in this process, `--engine explicit` and `--engine both`, at its own
//! `session_steps` (1 where it declares none, as `stalwart verify` does): the wall time of each
//! verification and their ratio.
//!
//! `--profile` adds, per graph, where the Z3 engine's time goes (`stalwart::engine::bmc::profile`):
//! obligations asked, Z3 contexts made, queries and queries per obligation asked, and the time
//! summed over the threads in planning, making and dropping contexts, encoding (the unrolling
//! and the queries), `check` (the solver), reading the resource count, reading models into
//! witnesses, and replaying witnesses. `--write DIR` only writes each generated export and
//! catalogue to `DIR` (`FAMILY-SIZE.json`, `FAMILY-SIZE.catalogue.json`), for `stalwart verify`
//! by hand, and verifies nothing.

use stalwart::engine::{bmc::profile, EngineChoice};
use stalwart::gen::{self, families, Generated};
use stalwart::input::{self, Inputs};
use stalwart::Report;
use stalwart::{verify, Options};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn generate(family: &str, n: usize) -> Option<Generated> {
    Some(match family {
        "react" => families::react(42, n, 3),
        "mesh" => gen::mesh(42, n, (n / 10).max(5), (n / 20).max(2), 3),
        "subgraphs" => families::subgraphs(42, n, 3),
        "chain" => families::chain(42, n, 3),
        "wide" => families::wide(42, n, 3),
        "fan" => families::fan(42, n, 3),
        _ => return None,
    })
}

/// Verifies `inputs` with `opts`, or says why not and exits 2.
fn verified(name: &str, inputs: Inputs, opts: &Options) -> (Report, f64) {
    let t0 = Instant::now();
    match verify(inputs, opts) {
        Ok(r) => (r, t0.elapsed().as_secs_f64() * 1e3),
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(2);
        }
    }
}

fn load(name: &str, graph: &Path, catalogue: &Path) -> Inputs {
    match input::load_export(graph, catalogue) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(2);
        }
    }
}

/// The profile line of the Z3 time `profile::take` collected since the last one.
fn print_profile(name: &str, z3_ms: u64) {
    let p = profile::take();
    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "  profile {name}: z3 wall {z3_ms} ms; {} obligations asked, {} contexts, {} queries ({:.1} a obligation); \
         thread-ms: plan {:.0}, contexts {:.0}, encode {:.0}, check {:.0}, rlimit-read {:.0}, models {:.0}, replay {:.0}",
        p.obligations,
        p.contexts,
        p.queries,
        p.queries as f64 / (p.obligations.max(1) as f64),
        ms(p.plan_ns),
        ms(p.context_ns),
        ms(p.encode_ns),
        ms(p.check_ns),
        ms(p.stats_ns),
        ms(p.model_ns),
        ms(p.replay_ns),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut fams: Vec<String> = vec!["react", "mesh", "subgraphs", "chain", "corpus"]
        .into_iter()
        .map(String::from)
        .collect();
    let mut sizes: Vec<usize> = Vec::new();
    let mut write_only: Option<PathBuf> = None;
    let mut show_profile = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--write" {
            let Some(d) = it.next() else {
                eprintln!("--write needs a folder");
                std::process::exit(2);
            };
            write_only = Some(d.into());
            continue;
        }
        if a == "--profile" {
            show_profile = true;
            continue;
        }
        match a.parse() {
            Ok(n) => sizes.push(n),
            Err(_) => fams = a.split(',').map(String::from).collect(),
        }
    }
    if sizes.is_empty() {
        sizes = vec![10, 100, 1_000];
    }
    let dir = write_only.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("stalwart-bench-{}", std::process::id()))
    });
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        std::process::exit(2);
    }
    let generated: Vec<&String> = fams.iter().filter(|f| *f != "corpus").collect();
    if write_only.is_none() && !generated.is_empty() {
        println!(
            "{:<10} {:>6} {:>5} {:>5} {:>12} {:>12} {:>10} {:>10} {:>12} {:>7} {:>10} {:>9} {:>11} {:>11}",
            "family",
            "nodes",
            "tools",
            "oblig",
            "explicit ms",
            "expl decided",
            "z3 ms",
            "z3/expl",
            "z3 decided",
            "agree",
            "both ms",
            "z3 Mrl",
            "max oblig",
            "max query"
        );
    }
    let _ = profile::take();
    for fam in &generated {
        for &n in &sizes {
            let Some(g) = generate(fam, n) else {
                eprintln!("no family '{fam}' (react, mesh, subgraphs, chain, wide, fan, corpus)");
                std::process::exit(2);
            };
            let gp = dir.join(format!("{fam}-{n}.json"));
            let cp = dir.join(format!("{fam}-{n}.catalogue.json"));
            let write = |p: &Path, v: &serde_json::Value| {
                std::fs::write(p, serde_json::to_string_pretty(v).unwrap_or_default())
            };
            if write(&gp, &g.graph).and(write(&cp, &g.catalogue)).is_err() {
                eprintln!("cannot write the generated graph");
                std::process::exit(2);
            }
            if write_only.is_some() {
                println!("{fam} {n}: {} {}", gp.display(), cp.display());
                continue;
            }
            let name = format!("{fam} {n}");
            let (report, total) = verified(&name, load(&name, &gp, &cp), &Options::new(3));
            let ms = |name: &str| {
                report
                    .engine(name)
                    .map(|e| (e.millis as f64, e.obligations - e.undecided))
                    .unwrap_or((0.0, 0))
            };
            let (e_ms, e_decided) = ms("explicit");
            let (z_ms, z_decided) = ms("z3");
            let z3 = report.engine("z3");
            let rl = |f: &dyn Fn(&stalwart::EngineStats) -> u64| z3.map(f).unwrap_or(0);
            println!(
                "{:<10} {:>6} {:>5} {:>5} {:>12.0} {:>12} {:>10.0} {:>10.1} {:>12} {:>7} {:>10.0} {:>9.1} {:>11} {:>11}",
                fam,
                report.scope.nodes,
                report.scope.tools,
                report.proof.obligations,
                e_ms,
                format!("{e_decided}/{}", report.proof.obligations),
                z_ms,
                z_ms / e_ms.max(1.0),
                format!("{z_decided}/{}", report.proof.obligations),
                if report.disagreements == 0 {
                    "yes".to_string()
                } else {
                    format!("no ({})", report.disagreements)
                },
                total,
                rl(&|e| e.rlimit) as f64 / 1e6,
                rl(&|e| e.rlimit_obligation_peak),
                rl(&|e| e.rlimit_query_peak),
            );
            if show_profile {
                print_profile(&name, z_ms as u64);
            }
        }
    }
    if write_only.is_none() && fams.iter().any(|f| f == "corpus") {
        corpus(show_profile);
    }
    if write_only.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The corpus graphs: (name, graph, catalogue), sorted; `None` where `../shared` is absent.
fn corpus_graphs() -> Option<Vec<(String, PathBuf, PathBuf)>> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !shared.is_dir() {
        return None;
    }
    let mut out = Vec::new();
    let lg = shared.join("langgraph");
    let mut graphs: Vec<PathBuf> = std::fs::read_dir(&lg)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name().is_some_and(|n| n != "catalogue.json")
        })
        .collect();
    graphs.sort();
    for g in graphs {
        let stem = g.file_stem().map(|s| s.to_string_lossy().into_owned());
        out.push((
            format!("langgraph/{}", stem.unwrap_or_default()),
            g,
            lg.join("catalogue.json"),
        ));
    }
    let ad = shared.join("agentdojo");
    for suite in ["banking", "slack", "travel", "workspace"] {
        for kind in ["plain", "guarded"] {
            out.push((
                format!("agentdojo/{suite}.{kind}"),
                ad.join(format!("{suite}.react.{kind}.json")),
                ad.join(format!("{suite}.catalogue.json")),
            ));
        }
    }
    Some(out)
}

/// Times `--engine explicit` and `--engine both` on every corpus graph.
fn corpus(show_profile: bool) {
    let Some(graphs) = corpus_graphs() else {
        println!(
            "corpus: skipped, ../shared is not here (it exists in CI and on developer machines)"
        );
        return;
    };
    println!();
    println!(
        "{:<34} {:>6} {:>5} {:>5} {:>12} {:>10} {:>10} {:>9} {:>11} {:>11}",
        "corpus graph",
        "nodes",
        "tools",
        "oblig",
        "explicit ms",
        "both ms",
        "both/expl",
        "z3 Mrl",
        "max oblig",
        "max query"
    );
    for (name, g, c) in graphs {
        let inputs = load(&name, &g, &c);
        let steps = inputs.export.session_steps.unwrap_or(1);
        let mut opts = Options::new(steps);
        opts.engine = EngineChoice::Explicit;
        let (_, e_ms) = verified(&name, inputs, &opts);
        let _ = profile::take();
        opts.engine = EngineChoice::Both;
        let (report, b_ms) = verified(&name, load(&name, &g, &c), &opts);
        let z3 = report.engine("z3");
        let rl = |f: &dyn Fn(&stalwart::EngineStats) -> u64| z3.map(f).unwrap_or(0);
        println!(
            "{:<34} {:>6} {:>5} {:>5} {:>12.1} {:>10.1} {:>10.1} {:>9.1} {:>11} {:>11}",
            name,
            report.scope.nodes,
            report.scope.tools,
            report.proof.obligations,
            e_ms,
            b_ms,
            b_ms / e_ms.max(0.01),
            rl(&|e| e.rlimit) as f64 / 1e6,
            rl(&|e| e.rlimit_obligation_peak),
            rl(&|e| e.rlimit_query_peak),
        );
        if show_profile {
            print_profile(&name, z3.map(|e| e.millis).unwrap_or(0));
        }
    }
}
