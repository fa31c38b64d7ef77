//! Benchmark harness: `cargo run --release --bin bench [-- SIZES...]`.
//!
//! Verifies generated multi-agent meshes (see `stalwart::gen::mesh`) of 100, 1,000 and 10,000
//! nodes - with a tenth as many tools, a twentieth as many order rules, at `session_steps` 3 - and
//! prints, per size, the time to read and to verify (flatten, search, findings), the total time
//! relative to the 1,000-node graph's (sizes after it), the states explored and the obligations.
//! Timings are wall-clock medians of three runs (one at 5,000 nodes and more); compare them as
//! ratios within one run on a shared machine.

use stalwart::gen;
use stalwart::input;
use stalwart::verify::{self, Options};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1_000, 10_000]
    } else {
        sizes
    };
    let dir = std::env::temp_dir().join(format!("stalwart-bench-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        std::process::exit(2);
    }
    println!(
        "{:>7} {:>6} {:>6} {:>9} {:>9} {:>10} {:>8} {:>9} {:>11} {:>11}",
        "nodes",
        "tools",
        "rules",
        "read ms",
        "verify ms",
        "total ms",
        "x 1,000",
        "findings",
        "states",
        "obligations"
    );
    let mut base: Option<f64> = None;
    for &n in &sizes {
        let tools = (n / 10).max(5);
        let rules = (n / 20).max(2);
        let g = gen::mesh(42, n, tools, rules, 3);
        let gp = dir.join(format!("mesh-{n}.json"));
        let cp = dir.join(format!("mesh-{n}.catalogue.json"));
        let write = |p: &std::path::Path, v: &serde_json::Value| {
            std::fs::write(p, serde_json::to_string_pretty(v).unwrap_or_default())
        };
        if write(&gp, &g.graph).and(write(&cp, &g.catalogue)).is_err() {
            eprintln!("cannot write the generated graph");
            std::process::exit(2);
        }
        let mut reads = Vec::new();
        let mut verifies = Vec::new();
        let mut last = None;
        let runs = if n >= 5_000 { 1 } else { 3 };
        for _ in 0..runs {
            let t0 = Instant::now();
            let inputs = match input::load_export(&gp, &cp) {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(2);
                }
            };
            let t1 = Instant::now();
            let opts = Options::new(3);
            let report = match verify::verify(inputs, &opts) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(2);
                }
            };
            let t2 = Instant::now();
            reads.push((t1 - t0).as_secs_f64() * 1e3);
            verifies.push((t2 - t1).as_secs_f64() * 1e3);
            last = Some(report);
        }
        let (r, v) = (median(reads), median(verifies));
        if n == 1_000 {
            base = Some(r + v);
        }
        let ratio = base
            .map(|b| format!("{:.2}", (r + v) / b))
            .unwrap_or_else(|| "-".to_string());
        if let Some(report) = last {
            println!(
                "{:>7} {:>6} {:>6} {:>9.1} {:>9.1} {:>10.1} {:>8} {:>9} {:>11} {:>11}",
                report.scope.nodes,
                tools,
                rules,
                r,
                v,
                r + v,
                ratio,
                report.findings.len(),
                report.proof.states,
                report.proof.obligations
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
