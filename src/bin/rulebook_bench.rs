//! Rulebook benchmark:
//! `cargo run --release --features bench --bin rulebook_bench [-- CORPUS_DIR] [ROUNDS] [--flows N]`.
//!
//! Parses every Colang file of the corpus (default `../shared/corpus/colang`: `v1/*.co` read as
//! Colang 1.0, `v2/*.co` as 2.x), lowers it and compiles it (routes, path conditions, the rules'
//! inputs), and prints per version the files, bytes, flows and routes, and the best of ROUNDS
//! (default 5) wall times for parsing and for compiling, in milliseconds. The goal: the
//! whole corpus well under a second in release mode.
//!
//! Then it verifies a large generated rulebook: `--flows N` (default 2,000) flows, each reading
//! `get_order` and calling three of 50 write tools under `if`/`else if`/`else` conditions over 20
//! facts (the shape a tester used to find a quadratic blow-up), with an agent.yaml and catalogue
//! written to the temporary directory, and prints the routes, findings and whole `verify` time.

use std::path::{Path, PathBuf};
use std::time::Instant;

use stalwart::rulebook::budget::Budgets;
use stalwart::rulebook::compile::{compile_measured, Input, Usage};
use stalwart::rulebook::flows::{FileFlows, Version};
use stalwart::rulebook::{colang1, colang2};
use stalwart::{verify, Options};

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
    let flows_at = args.iter().position(|a| a == "--flows");
    let big_flows: usize = flows_at
        .and_then(|i| args.get(i + 1))
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000);
    let args: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| flows_at.is_none_or(|f| *i != f && *i != f + 1))
        .map(|(_, a)| a.clone())
        .collect();
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
    let mut most = Usage::default();
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
                let (c, u) = compile_measured(
                    &[Input {
                        path: p.clone(),
                        version: v,
                        flows: f,
                    }],
                    &Budgets::default(),
                    0,
                );
                match c {
                    Ok(c) => routes += c.routes.len(),
                    Err(o) => {
                        eprintln!("{p}: {}", o.message());
                        std::process::exit(2);
                    }
                }
                most = Usage {
                    condition: most.condition.max(u.condition),
                    depth: most.depth.max(u.depth),
                    steps: most.steps.max(u.steps),
                    routes: most.routes.max(u.routes),
                    record_bytes: most.record_bytes.max(u.record_bytes),
                };
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
    let b = Budgets::default();
    println!(
        "most one file spends of the rulebook budgets (default): condition {} ({}), depth {} ({}), steps {} ({}), routes {} ({}), record bytes without the source {} ({})",
        most.condition, b.condition, most.depth, b.depth, most.steps, b.steps, most.routes,
        b.routes, most.record_bytes, b.record_bytes
    );
    large(big_flows);
}

/// Writes the large generated agent (see the module doc) and times its whole verification.
fn large(flows: usize) {
    let dir = std::env::temp_dir().join(format!("stalwart-rulebook-bench-{}", std::process::id()));
    let (agent, catalogue, policy) = generate(flows);
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("agent.yaml"), agent))
        .and_then(|_| std::fs::write(dir.join("catalogue.yaml"), catalogue))
        .and_then(|_| std::fs::write(dir.join("policy.co"), policy));
    if let Err(e) = written {
        eprintln!("cannot write the generated agent in {}: {e}", dir.display());
        std::process::exit(2);
    }
    let t0 = Instant::now();
    let report = stalwart::input::load_agent_yaml(&dir.join("agent.yaml"))
        .map_err(|e| e.to_string())
        .and_then(|i| verify(i, &Options::new(3)).map_err(|e| e.to_string()));
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    match report {
        Ok(r) => println!(
            "large rulebook: {flows} flows, {} routes, {} findings, verify {ms:.0} ms",
            r.rulebook_info.as_ref().map_or(0, |i| i.routes),
            r.findings.len()
        ),
        Err(e) => {
            eprintln!("the generated agent did not verify: {e}");
            std::process::exit(2);
        }
    }
}

/// agent.yaml, catalogue.yaml and policy.co for `flows` flows (deterministic).
fn generate(flows: usize) -> (String, String, String) {
    let mut seed: u64 = 42;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) % n) as usize
    };
    let tools: Vec<String> = (0..50).map(|i| format!("tool{i}")).collect();
    let mut agent = format!(
        "agents:\n  desk:\n    model: \"anthropic:claude-sonnet-5-5\"\n    tools: [get_order, {}]\n    on_unread: refuse\ntools:\n  - catalogue: ./catalogue.yaml\nrulebook: ./policy.co\nfacts:\n",
        tools.join(", ")
    );
    let mut catalogue =
        String::from("format: qls-catalogue/1\ntools:\n  get_order:\n    kind: read\n");
    let mut policy = String::new();
    for f in 0..20 {
        agent.push_str(&format!("  f{f}: {{from: get_order.s{f} == yes}}\n"));
    }
    for t in &tools {
        catalogue.push_str(&format!(
            "  {t}:\n    kind: write\n    idempotency: true\n    compensation: none\n"
        ));
    }
    for i in 0..flows {
        policy.push_str(&format!("define user ask u{i}\n  \"utterance {i}\"\n\n"));
    }
    for i in 0..flows {
        policy.push_str(&format!(
            "define flow flow{i}\n  user ask u{i}\n  $o = execute get_order\n"
        ));
        for _ in 0..3 {
            let (t, a, b) = (next(50), next(20), next(20));
            policy.push_str(&format!(
                "  if $f0 and ($f{a} or not $f{b})\n    execute tool{t}\n  else if $f{b}\n    bot refuse\n  else\n    bot refuse\n"
            ));
        }
        policy.push('\n');
    }
    (agent, catalogue, policy)
}
