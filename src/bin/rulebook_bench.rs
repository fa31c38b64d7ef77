//! Rulebook benchmark: `cargo run --release --bin rulebook_bench [-- CORPUS_DIR] [ROUNDS]`.
//!
//! Parses every Colang file of the corpus (default `../shared/corpus/colang`: `v1/*.co` read as
//! Colang 1.0, `v2/*.co` as 2.x), lowers it and compiles it (routes, path conditions, the rules'
//! inputs), and prints per version the files, bytes, flows and routes, and the best of ROUNDS
//! (default 5) wall times for parsing and for compiling, in milliseconds. The goal: the
//! whole corpus well under a second in release mode.

use std::path::{Path, PathBuf};
use std::time::Instant;

use stalwart::rulebook::compile::{compile, Input};
use stalwart::rulebook::flows::{FileFlows, Version};
use stalwart::rulebook::{colang1, colang2};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().and_then(|e| e.to_str()) == Some("co"));
    v.sort();
    v
}

fn parse(v: Version, text: &str) -> Option<FileFlows> {
    match v {
        Version::V1 => colang1::parse(text).ok().map(|f| colang1::lower(&f)),
        Version::V2 => colang2::parse(text).ok().map(|f| colang2::lower(&f)),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .iter()
        .find(|a| a.parse::<usize>().is_err())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../shared/corpus/colang"
            ))
        });
    let rounds: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(5).max(1);
    if !dir.is_dir() {
        eprintln!(
            "no corpus at {}: give the folder holding v1/ and v2/",
            dir.display()
        );
        std::process::exit(2);
    }
    println!(
        "{:<8} {:>6} {:>9} {:>7} {:>7} {:>7} {:>10} {:>12}",
        "version", "files", "bytes", "failed", "flows", "routes", "parse ms", "compile ms"
    );
    let mut total = 0.0;
    for (sub, v) in [("v1", Version::V1), ("v2", Version::V2)] {
        let texts: Vec<(String, String)> = files(&dir.join(sub))
            .into_iter()
            .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
            .collect();
        let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
        let (mut best_parse, mut best_compile) = (f64::MAX, f64::MAX);
        let (mut failed, mut flows, mut routes) = (0, 0, 0);
        for _ in 0..rounds {
            let t0 = Instant::now();
            let parsed: Vec<(String, Option<FileFlows>)> = texts
                .iter()
                .map(|(p, t)| (p.clone(), parse(v, t)))
                .collect();
            let t1 = Instant::now();
            failed = parsed.iter().filter(|(_, f)| f.is_none()).count();
            flows = 0;
            routes = 0;
            for (p, f) in &parsed {
                let Some(f) = f else { continue };
                flows += f.flows.len();
                let c = compile(&[Input {
                    path: p.clone(),
                    version: v,
                    flows: f,
                }]);
                routes += c.routes.len();
            }
            let t2 = Instant::now();
            best_parse = best_parse.min((t1 - t0).as_secs_f64() * 1e3);
            best_compile = best_compile.min((t2 - t1).as_secs_f64() * 1e3);
        }
        total += best_parse + best_compile;
        println!(
            "{:<8} {:>6} {:>9} {:>7} {:>7} {:>7} {:>10.2} {:>12.2}",
            v.as_str(),
            texts.len(),
            bytes,
            failed,
            flows,
            routes,
            best_parse,
            best_compile
        );
    }
    println!("whole corpus, parse and compile: {total:.2} ms (best of {rounds})");
}
