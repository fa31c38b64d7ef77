//! Helpers shared by the integration tests: loading a fixture folder, running the pipeline, and
//! finding `../shared` (present in CI and on developer machines, absent in a user's clone).
#![allow(dead_code)]

use stalwart::engine::{self, bmc, EngineChoice, InstanceResult, Limits, Outcome};
use stalwart::gen;
use stalwart::input::{self, Inputs};
use stalwart::model::{self, FlatModel};
use stalwart::Report;
use stalwart::{verify, Options};
use std::path::{Path, PathBuf};

/// The crate root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` when it exists; otherwise prints why the caller skips and returns `None`.
pub fn shared(test: &str) -> Option<PathBuf> {
    let p = root().join("../shared");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!(
            "skipped {test}: ../shared is not here (it exists in CI and on developer machines)"
        );
        None
    }
}

/// Says a test was skipped, in the test's output (`cargo test -- --show-output` shows it; a
/// failing run shows it anyway).
pub fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{why}");
}

/// Loads a fixture folder: `agent.yaml`, or `graph.json` with `catalogue.json`/`catalogue.yaml`.
pub fn load(dir: &Path) -> Inputs {
    let r = if dir.join("agent.yaml").exists() && !dir.join("graph.json").exists() {
        input::load_agent_yaml(&dir.join("agent.yaml"))
    } else {
        let cat = ["catalogue.json", "catalogue.yaml"]
            .iter()
            .map(|c| dir.join(c))
            .find(|p| p.exists());
        input::load_export(
            &dir.join("graph.json"),
            &cat.unwrap_or_else(|| dir.join("catalogue.json")),
        )
    };
    match r {
        Ok(i) => i,
        Err(e) => panic!("{}: {e}", dir.display()),
    }
}

/// The session steps a run of `inputs` uses by default.
pub fn steps(inputs: &Inputs) -> u32 {
    inputs.export.session_steps.unwrap_or(1)
}

/// Runs the whole pipeline on a fixture folder, as `stalwart verify` does: with `--advisories
/// advisories.toml` and `--traces runs.jsonl` when the folder has them.
pub fn report(dir: &Path) -> Report {
    let inputs = load(dir);
    let mut opts = Options::new(steps(&inputs));
    // A fixture may carry its own advisory list (QG022) and traces of real runs (QG016).
    let adv = dir.join("advisories.toml");
    opts.advisories = adv.exists().then_some(adv);
    let runs = dir.join("runs.jsonl");
    opts.traces = runs.exists().then_some(runs);
    verify(inputs, &opts).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// The flattened model and the explicit engine's results for a fixture folder.
pub fn results(inputs: &Inputs) -> (FlatModel, Vec<InstanceResult>) {
    let (m, o) = outcome(inputs, EngineChoice::Explicit);
    let r = o
        .runs
        .into_iter()
        .next()
        .map(|r| r.results)
        .unwrap_or_default();
    (m, r)
}

/// The flattened model and what the chosen engines concluded.
pub fn outcome(inputs: &Inputs, choice: EngineChoice) -> (FlatModel, Outcome) {
    let m = flat(inputs);
    let o = run(&m, choice);
    (m, o)
}

/// The flattened model of `inputs`.
pub fn flat(inputs: &Inputs) -> FlatModel {
    model::flatten(&inputs.export, &inputs.catalogue, steps(inputs)).expect("flatten")
}

/// The flattened model of a generated input, with its rulebook gates set.
pub fn flat_gated(inputs: &Inputs, g: &gen::Generated) -> FlatModel {
    let mut m = flat(inputs);
    g.set_gates(&mut m);
    m
}

/// A generated export and its catalogue written to a temporary folder (kept while the returned
/// guard lives) and read as a user's would be.
pub fn load_generated(g: &gen::Generated) -> (tempfile::TempDir, Inputs) {
    let dir = tempfile::tempdir().expect("tempdir");
    let gp = dir.path().join("graph.json");
    let cp = dir.path().join("catalogue.json");
    std::fs::write(&gp, serde_json::to_string_pretty(&g.graph).expect("json")).expect("write");
    std::fs::write(
        &cp,
        serde_json::to_string_pretty(&g.catalogue).expect("json"),
    )
    .expect("write");
    let inputs = input::load_export(&gp, &cp)
        .unwrap_or_else(|e| panic!("generated input rejected: {e}\n{}", g.graph));
    (dir, inputs)
}

/// What the chosen engines conclude on `m`.
pub fn run(m: &FlatModel, choice: EngineChoice) -> Outcome {
    engine::run(m, choice, Limits::default(), &bmc::Config::default())
}

/// The explicit engine's results on `m`.
pub fn results_of(m: &FlatModel) -> Vec<InstanceResult> {
    run(m, EngineChoice::Explicit)
        .runs
        .into_iter()
        .next()
        .map(|r| r.results)
        .unwrap_or_default()
}

/// Every fixture case folder (`fixtures/<rule>/<holds|breaks>-*`), sorted.
pub fn cases() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(rules) = std::fs::read_dir(root().join("fixtures")) else {
        return out;
    };
    for r in rules.flatten() {
        let rule = r.file_name().to_string_lossy().into_owned();
        if !rule.starts_with("QG") {
            continue;
        }
        for c in std::fs::read_dir(r.path()).into_iter().flatten().flatten() {
            out.push((rule.clone(), c.path()));
        }
    }
    out.sort();
    out
}

/// What a run of the binary gave.
pub struct Run {
    /// The exit status.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the `stalwart` binary from the crate root, colour off, CI variables cleared.
pub fn stalwart(args: &[&str]) -> Run {
    stalwart_in(&root(), args)
}

/// Runs the `stalwart` binary in `dir`, colour off, CI variables cleared.
pub fn stalwart_in(dir: &Path, args: &[&str]) -> Run {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stalwart"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run stalwart");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `git ARGS` in `dir` as a throwaway identity (no signing, branch `main`) and returns its
/// standard output, trimmed; panics, with git's words, when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .args(["-c", "user.email=ci@example.com", "-c", "user.name=ci"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// An insta snapshot in `snapshots/`.
pub fn snap(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

/// The JSON report with what differs from run to run or from one libz3 to another - each
/// engine's wall time, the solver queries Z3 needed, the libz3 version - replaced by a marker,
/// after checking each is there.
pub fn without_times(json: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("json");
    for (engine, key) in [("explicit", "millis"), ("z3", "millis"), ("z3", "queries")] {
        if let Some(x) = v["engines"][engine].get_mut(key) {
            assert!(x.is_u64(), "{engine} {key}: {x}");
            *x = serde_json::json!(format!("[{key}]"));
        }
    }
    let version = &mut v["engines"]["z3"]["version"];
    assert!(version.as_str().is_some_and(|s| !s.is_empty()));
    *version = serde_json::json!("[libz3 version]");
    serde_json::to_string_pretty(&v).expect("json") + "\n"
}

/// The cases of a Colang corpus laid out as `root/<version>/*.co` with what NeMo's parsers read
/// in `root/expected/<stem>.json` (the shared corpus, `tests/data/nemo_probes`): `(stem, source,
/// NeMo's reading)`, by file name. Panics, naming the file, when one cannot be read.
pub fn oracle_cases(root: &Path, version: &str) -> Vec<(String, String, serde_json::Value)> {
    let dir = root.join(version);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "co"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let src = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let at = root.join("expected").join(format!("{stem}.json"));
            let text =
                std::fs::read_to_string(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
            let expected =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
            (stem, src, expected)
        })
        .collect()
}
