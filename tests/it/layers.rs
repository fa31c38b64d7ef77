//! The house's floors, held by reading the source (issue 31): no module reads a floor above its
//! own, the outputs read only the report floor, the findings' vocabulary reads nothing above the
//! rule metadata, and no two modules of `src/checks/` read each other. A path is what a line of code (not a comment) names after
//! `crate::`; grouped imports (`use crate::{a, b}`) are refused, so every path is seen.
#![allow(clippy::unwrap_used)]

use crate::common;
use std::collections::BTreeSet;
use std::path::Path;

/// The inputs floor's shared modules, once loose at `src/`'s root: each counts under its own name
/// wherever it sits (`crate::source` or `crate::input::source`).
const SHARED_INPUT: [&str; 5] = ["error", "files", "ir", "source", "visible"];

/// The first segments of the `crate::` paths the code lines of `text` name (`crate::report::X`
/// gives `report`, `crate::input::source::Loc` gives `source`, one of [`SHARED_INPUT`]); `{` when
/// a grouped import hides them. Comment lines are skipped.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let mut seg = word(after);
            if let Some(inner) = after.strip_prefix("input::").map(word) {
                if SHARED_INPUT.contains(&inner.as_str()) {
                    seg = inner;
                }
            }
            out.insert(if seg.is_empty() {
                after.chars().take(1).collect()
            } else {
                seg
            });
            rest = after;
        }
    }
    out
}

/// The `.rs` files under `dir` (its folders too), with their text.
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let name = p
                    .strip_prefix(common::root())
                    .unwrap()
                    .display()
                    .to_string();
                out.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_scanner_sees_every_crate_path_on_code_lines_only() {
    let text = "use crate::model::FlatModel;\n//! [`crate::engine`]\n    let v = crate::engine::z3_version(); \
                crate::visible::x(crate::replay::y);\nuse crate::{checks, report};\n";
    assert_eq!(
        crate_paths(text),
        set(&["engine", "model", "replay", "visible", "{"])
    );
    let moved = "use crate::input::source::Loc;\nuse crate::input::python;\n";
    assert_eq!(crate_paths(moved), set(&["input", "source"]));
}

/// Every module of `src/output/` imports from the report floor only: the report (with its parts:
/// the picture, the code checks, the traces, the walkthrough), the findings' vocabulary, the rule
/// metadata, the source map and the escaping of text. Before issue 31 they also read `checks`,
/// `engine`, `ir`, `model`, `obligation` and `replay`.
#[test]
fn outputs_read_only_the_report() {
    let files = sources(&common::root().join("src/output"));
    assert_eq!(
        files.len(),
        10,
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let allowed = set(&["findings", "report", "rules", "source", "visible"]);
    let mut all = BTreeSet::new();
    for (name, text) in &files {
        let used = crate_paths(text);
        let outside: Vec<&String> = used.difference(&allowed).collect();
        assert!(outside.is_empty(), "{name} imports crate::{outside:?}");
        for bad in ["super::super", "stalwart::"] {
            assert!(
                !text.contains(bad),
                "{name} reaches past the report through {bad}"
            );
        }
        all.extend(used);
    }
    assert_eq!(all, allowed);
}

/// Beyond the report floor, the outputs `use` the standard library, their own siblings and the
/// libraries that write the formats (JSON, SARIF, codespan's and ariadne's source excerpts):
/// never the solver or the parsers, and never the crate by its name.
#[test]
fn outputs_use_only_the_formats_libraries() {
    let mut roots = BTreeSet::new();
    for (name, text) in sources(&common::root().join("src/output")) {
        for line in text
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with("use "))
        {
            let root: String = line["use ".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            roots.insert(root);
        }
        for heavy in ["z3::", "tree_sitter::", "stalwart::"] {
            let mut code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
            assert!(!code.any(|l| l.contains(heavy)), "{name} names {heavy}");
        }
    }
    assert_eq!(
        roots,
        set(&[
            "ariadne",
            "codespan_reporting",
            "crate",
            "serde_json",
            "serde_sarif",
            "std",
            "super"
        ])
    );
}

/// The findings (the vocabulary every stage speaks) and the obligations' names stand below the
/// model: they read the source map, the rule metadata and the inputs' words, nothing above.
#[test]
fn the_vocabulary_reads_nothing_above_the_model() {
    let root = common::root();
    let findings = std::fs::read_to_string(root.join("src/findings.rs")).unwrap();
    assert_eq!(crate_paths(&findings), set(&["ir", "rules", "source"]));
    let names = std::fs::read_to_string(root.join("src/rules/obligation.rs")).unwrap();
    assert_eq!(crate_paths(&names), set(&[]));
    assert!(names.contains("use super::RuleId;"));
    assert!(!root.join("src/obligation.rs").exists());
    let table = std::fs::read_to_string(root.join("src/model/obligation.rs")).unwrap();
    assert!(crate_paths(&table).contains("model"));
}

/// No two modules of `src/checks/` read each other (`super::x` or `crate::checks::x`): the
/// circle `rulebook` <-> `rulebook_names` went in issue 31, and `rulebook` reads `rulebook_names`.
#[test]
fn no_two_checks_read_each_other() {
    let files = sources(&common::root().join("src/checks"));
    let module = |name: &str| {
        Path::new(name)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_string()
    };
    let modules: Vec<String> = files
        .iter()
        .map(|(n, _)| module(n))
        .filter(|m| m != "mod")
        .collect();
    assert!(modules.len() >= 12, "{modules:?}");
    let reads = |text: &str, other: &str| {
        text.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .any(|l| {
                l.contains(&format!("super::{other}::"))
                    || l.contains(&format!("checks::{other}::"))
            })
    };
    let mut arrows = Vec::new();
    for (name, text) in &files {
        let me = module(name);
        for other in modules.iter().filter(|o| **o != me) {
            if reads(text, other) {
                arrows.push((me.clone(), other.clone()));
            }
        }
    }
    assert!(
        arrows.contains(&("rulebook".to_string(), "rulebook_names".to_string())),
        "{arrows:?}"
    );
    for (a, b) in &arrows {
        assert!(
            !arrows.contains(&(b.clone(), a.clone())),
            "{a} <-> {b}: {arrows:?}"
        );
    }
}

/// The floors of `src/`, lowest first (CONTRIBUTING.md): the inputs, the rule metadata, the
/// findings' vocabulary, the model (and the graphs generated for benches), the rulebook's compiler,
/// the engines, the checks, the report, what the project settles (with the run's settings), the
/// replay, the outputs, and the run's wiring on top.
const FLOORS: [&str; 13] = [
    "input", "rules", "findings", "model", "gen", "rulebook", "engine", "checks", "report",
    "project", "replay", "output", "run",
];

/// The floor a file of `src/` stands on (`src/input/source/map.rs` → `input`), `None` for the
/// crate's roots (`lib.rs`, `main.rs`) and the benches (`src/bin/`).
fn floor_of(name: &str) -> Option<usize> {
    let top = name.strip_prefix("src/")?.split('/').next()?;
    let top = top.strip_suffix(".rs").unwrap_or(top);
    if ["lib", "main", "bin"].contains(&top) {
        return None;
    }
    let at = FLOORS.iter().position(|f| *f == top);
    assert!(
        at.is_some(),
        "{name}: its floor `{top}` is not one of {FLOORS:?}"
    );
    at
}

/// The floors the `crate::` paths of `text` name: [`crate_paths`], with the inputs floor's shared
/// modules counted as `input`.
fn floors_named(text: &str) -> BTreeSet<String> {
    crate_paths(text)
        .into_iter()
        .map(|seg| {
            if SHARED_INPUT.contains(&seg.as_str()) {
                "input".to_string()
            } else {
                seg
            }
        })
        .collect()
}

/// No module reads a floor above its own: the house is one way. Before this test three arrows
/// pointed up (the inputs asked the rulebook's "did you mean", the report named the
/// configuration's `undecided = "pass"`, what weakens the proof read the run's `Options`).
#[test]
fn no_floor_reads_one_above_it() {
    let mut arrows = BTreeSet::new();
    let mut files = 0;
    for (name, text) in sources(&common::root().join("src")) {
        let Some(me) = floor_of(&name) else { continue };
        files += 1;
        for seg in floors_named(&text) {
            assert_ne!(
                seg, "{",
                "{name}: a grouped `use crate::{{..}}` hides its floors"
            );
            let Some(there) = FLOORS.iter().position(|f| *f == seg) else {
                panic!("{name} names crate::{seg}, which is no floor of {FLOORS:?}")
            };
            if there > me {
                arrows.insert(format!("{name} ({}) -> {seg}", FLOORS[me]));
            }
        }
    }
    assert!(files > 100, "{files} files");
    assert!(arrows.is_empty(), "arrows up: {arrows:#?}");
}

#[test]
fn the_floor_scanner_sees_an_arrow_up() {
    assert_eq!(floor_of("src/input/source/map.rs"), Some(0));
    assert_eq!(floor_of("src/report.rs"), Some(8));
    assert_eq!(floor_of("src/bin/bench.rs"), None);
    let text =
        "use crate::input::source::Loc;\nuse crate::run::verify::Options;\n// crate::output\n";
    assert_eq!(floors_named(text), set(&["input", "run"]));
}
