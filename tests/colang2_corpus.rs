//! Colang 2.x (SPEC 2.4): the parser against NeMo Guardrails' own reading of the corpus
//! (`shared/corpus/colang/expected/<stem>.json`, written by its `oracle.py`), syntax errors with
//! exact positions, the lowering onto the neutral flow tree, and a fuzz test (never a panic).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;
use stalwart::rulebook::colang2::{lower, parse, to_oracle_json};
use stalwart::rulebook::flows::StmtKind;

/// Files whose reading still differs from NeMo's, with why.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// The fields of the oracle's JSON that say what NeMo read.
const FIELDS: &[&str] = &["ok", "imports", "import_lines", "flows"];

fn corpus() -> Option<PathBuf> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/colang"
    ));
    (dir.join("v2").is_dir() && dir.join("expected").is_dir()).then(|| dir.to_path_buf())
}

/// The first place two JSON values differ, as a path.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    None => return Some(format!("{path}.{k}: only ours has it")),
                    Some(w) => {
                        if let Some(d) = first_difference(&format!("{path}.{k}"), v, w) {
                            return Some(d);
                        }
                    }
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k}: only NeMo has it"))
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                if let Some(d) = first_difference(&format!("{path}[{i}]"), v, w) {
                    return Some(d);
                }
            }
            (x.len() != y.len()).then(|| format!("{path}: {} items, NeMo {}", x.len(), y.len()))
        }
        _ => (a != b).then(|| format!("{path}: ours {a}, NeMo {b}")),
    }
}

/// Compares one file; `None` when it matches.
fn check(src: &str, expected: &Value) -> Option<String> {
    let ok = expected.get("ok").and_then(Value::as_bool).unwrap_or(false);
    match parse(src) {
        Err(e) if !ok => {
            let line = expected.get("error_line").and_then(Value::as_u64);
            match line {
                Some(l) if l as usize != e.line => Some(format!(
                    "both reject it, ours at line {} ({}), NeMo at line {l}",
                    e.line, e.message
                )),
                _ => None,
            }
        }
        Err(e) => Some(format!("we reject it at {e}; NeMo reads it")),
        Ok(_) if !ok => Some("we read it; NeMo rejects it".to_string()),
        Ok(file) => {
            let ours = to_oracle_json(&file);
            FIELDS.iter().find_map(|f| {
                first_difference(
                    f,
                    ours.get(*f).unwrap_or(&Value::Null),
                    expected.get(*f).unwrap_or(&Value::Null),
                )
            })
        }
    }
}

#[test]
fn corpus_matches_nemo() {
    let Some(dir) = corpus() else {
        println!(
            "skipped: the Colang corpus (../shared/corpus/colang with v2/ and expected/) is not beside this crate"
        );
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("v2"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "co"))
        .collect();
    files.sort();
    let mut unexpected = Vec::new();
    let mut matched = 0;
    for p in &files {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(p).unwrap();
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("expected").join(format!("{stem}.json"))).unwrap(),
        )
        .unwrap();
        let diff = check(&src, &expected);
        let known = KNOWN_DIFFERENCES.iter().any(|(k, _)| *k == stem);
        match (diff, known) {
            (None, false) => matched += 1,
            (None, true) => unexpected.push(format!("{stem}: listed as a known difference but matches now")),
            (Some(d), false) => unexpected.push(format!("{stem}: {d}")),
            (Some(_), true) => {}
        }
    }
    println!("colang 2.x: {matched}/{} files read as NeMo reads them", files.len());
    assert!(unexpected.is_empty(), "{} files differ:\n{}", unexpected.len(), unexpected.join("\n"));
}
