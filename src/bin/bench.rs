//! Benchmark harness: `cargo run --release --features bench --bin bench [-- [FAMILY,...] [SIZE...] [--write DIR]]`.
//!
//! For each graph family (`react`, `mesh`, `subgraphs`, `chain`, `wide`; see `stalwart::gen`) and size
//! (default 10, 100 and 1,000 nodes; give 10000 to add the largest), it generates an export with
//! a tenth as many tools and a twentieth as many order rules at `session_steps` 3, verifies it
//! with both engines (`--engine both`, the default) and prints: the flattened nodes, tools and
//! obligations; each engine's wall time in milliseconds and their ratio; how many obligations
//! each engine decided (the rest are undecided, QG006: for the explicit engine, those past the
//! run's state budget, `--max-run-states`; for Z3, a query timed out or the unrolling passed its
//! size limit); whether the engines agreed; and the whole verification's time. One run each: compare
//! the figures as ratios within one run on a shared machine. The `wide` family's size is its
//! fan-out (one model routing to that many plain tool nodes, a tool each; not in the default
//! list). `--write DIR` only writes each generated export and catalogue to `DIR`
//! (`FAMILY-SIZE.json`, `FAMILY-SIZE.catalogue.json`), for `stalwart verify` by hand, and
//! verifies nothing.

use stalwart::gen::{self, families, Generated};
use stalwart::input;
use stalwart::verify::{self, Options};
use std::time::Instant;

fn generate(family: &str, n: usize) -> Option<Generated> {
    Some(match family {
        "react" => families::react(42, n, 3),
        "mesh" => gen::mesh(42, n, (n / 10).max(5), (n / 20).max(2), 3),
        "subgraphs" => families::subgraphs(42, n, 3),
        "chain" => families::chain(42, n, 3),
        "wide" => families::wide(42, n, 3),
        _ => return None,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut fams: Vec<String> = vec!["react", "mesh", "subgraphs", "chain"]
        .into_iter()
        .map(String::from)
        .collect();
    let mut sizes: Vec<usize> = Vec::new();
    let mut write_only: Option<std::path::PathBuf> = None;
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
    if write_only.is_none() {
        println!(
            "{:<10} {:>6} {:>5} {:>5} {:>12} {:>12} {:>10} {:>10} {:>12} {:>7} {:>10}",
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
            "both ms"
        );
    }
    for fam in &fams {
        for &n in &sizes {
            let Some(g) = generate(fam, n) else {
                eprintln!("no family '{fam}' (react, mesh, subgraphs, chain, wide)");
                std::process::exit(2);
            };
            let gp = dir.join(format!("{fam}-{n}.json"));
            let cp = dir.join(format!("{fam}-{n}.catalogue.json"));
            let write = |p: &std::path::Path, v: &serde_json::Value| {
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
            let inputs = match input::load_export(&gp, &cp) {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("{fam} {n}: {e}");
                    std::process::exit(2);
                }
            };
            let t0 = Instant::now();
            let report = match verify::verify(inputs, &Options::new(3)) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{fam} {n}: {e}");
                    std::process::exit(2);
                }
            };
            let total = t0.elapsed().as_secs_f64() * 1e3;
            let ms = |name: &str| {
                report
                    .engines
                    .iter()
                    .find(|e| e.name == name)
                    .map(|e| (e.millis as f64, e.obligations - e.undecided))
                    .unwrap_or((0.0, 0))
            };
            let (e_ms, e_decided) = ms("explicit");
            let (z_ms, z_decided) = ms("z3");
            println!(
                "{:<10} {:>6} {:>5} {:>5} {:>12.0} {:>12} {:>10.0} {:>10.1} {:>12} {:>7} {:>10.0}",
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
                total
            );
        }
    }
    if write_only.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
