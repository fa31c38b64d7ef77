//! The GitHub Action (`action.yml`), run as a runner runs it (`tests/it/action/runner.rs`): each `run:`
//! script under `bash --noprofile --norc -eo pipefail`, GitHub's step conditions, the `uses:`
//! steps recorded with the values they would be given. A passing and a failing gate end to end,
//! a proof that cannot run, the upload's conditions, the built verifier's cache (its key and its
//! save), and the pull request's base commit passed as `--base-ref`.

use crate::common;
pub(crate) mod expr;
pub(crate) mod runner;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use runner::{Event, Job, Ran, Status};

const BIN: &str = env!("CARGO_BIN_EXE_stalwart");

/// A job on a push with this build's verifier as the `stalwart` input.
fn job(t: &tempfile::TempDir) -> Job {
    Job::new(t.path()).input("stalwart", BIN)
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The runner's PATH without any folder that holds a `stalwart`, after `first` when given.
fn path_without_stalwart(first: Option<&Path>) -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let mut dirs: Vec<String> = first
        .map(|p| p.to_string_lossy().into_owned())
        .into_iter()
        .collect();
    dirs.extend(
        path.split(':')
            .filter(|d| !Path::new(d).join("stalwart").exists())
            .map(str::to_string),
    );
    dirs.join(":")
}

/// The SARIF file's results, read as JSON (it must parse), after `../shared/sarif/validate-sarif`
/// (GitHub's schema and ingestion rules) passes it, when `../shared` is here.
fn results(sarif: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sarif).unwrap_or_else(|e| panic!("{sarif}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).expect("the SARIF is JSON");
    assert_eq!(v["version"], "2.1.0", "{sarif}");
    let script =
        common::shared("the Action's SARIF validation").map(|s| s.join("sarif/validate-sarif"));
    if let Some(script) = script.filter(|s| s.exists()) {
        let out = Command::new("bash")
            .arg(&script)
            .arg(sarif)
            .output()
            .expect("run validate-sarif");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && !said.contains("error"),
            "validate-sarif: {said}"
        );
    }
    v["runs"][0]["results"].as_array().expect("results").clone()
}

fn status(r: &Ran, step: &str) -> Status {
    r.step(step).status.clone()
}

const UPLOAD: &str = "Upload the SARIF to code scanning";
const SAVE: &str = "Save the built verifier";

#[test]
fn a_passing_gate_writes_its_outputs_uploads_the_sarif_and_passes() {
    let t = temp();
    let r = job(&t).input("agent", "fixtures/shop/agent.yaml").run();
    assert!(!r.failed, "{}", r.log);
    let sarif = t.path().join("stalwart.sarif");
    let sarif = sarif.to_string_lossy();
    assert_eq!(r.outputs["verify.outputs.sarif"], sarif);
    assert_eq!(r.outputs["verify.outputs.findings"], "2");
    assert_eq!(r.outputs["verify.outputs.gate"], "passed");
    let outputs: BTreeMap<&str, &str> = r
        .action_outputs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        outputs,
        BTreeMap::from([("findings", "2"), ("gate", "passed"), ("sarif", &*sarif)])
    );
    let upload = r.step(UPLOAD);
    assert_eq!(upload.status, Status::WouldRun);
    assert_eq!(upload.with["sarif_file"], sarif);
    assert_eq!(results(&upload.with["sarif_file"]).len(), 2);
    // The verifier is the input: nothing is restored, built or saved.
    assert_eq!(status(&r, "restore"), Status::Skipped);
    assert_eq!(status(&r, SAVE), Status::Skipped);
    assert_eq!(status(&r, "gate"), Status::Passed);
    assert!(
        r.log
            .contains("::notice file=fixtures/shop/agent.yaml,line=10,"),
        "{}",
        r.log
    );
    assert!(
        r.log.contains("the gate passed (2 finding(s) to weigh)"),
        "{}",
        r.log
    );
}

/// The case the gate exists for: exit 1 must not end the verify step (GitHub's `-e`), so the
/// outputs are written, the upload runs with the SARIF, and only the Gate step fails the job.
#[test]
fn a_failing_gate_uploads_its_sarif_then_fails_the_job() {
    let t = temp();
    let sarif = t.path().join("out.sarif").to_string_lossy().into_owned();
    let r = job(&t)
        .input("graph", "fixtures/shop-plain/graph.json")
        .input("catalogue", "fixtures/shop-plain/catalogue.json")
        .input("sarif", &sarif)
        .input("category", "agents/shop-plain")
        .run();
    assert_eq!(status(&r, "verify"), Status::Passed, "{}", r.log);
    assert_eq!(r.outputs["verify.outputs.gate"], "failed");
    // SPEC 11's findings, QG101 on each of the three writes (no rulebook, nothing bounds them),
    // and QG012 on the guarded refund_card after desk's plain read the guard never saw (SPEC 3.1).
    assert_eq!(r.outputs["verify.outputs.findings"], "13");
    assert_eq!(r.action_outputs["gate"], "failed");
    let upload = r.step(UPLOAD);
    assert_eq!(upload.status, Status::WouldRun, "{}", r.log);
    assert_eq!(upload.with["sarif_file"], sarif);
    assert_eq!(upload.with["category"], "agents/shop-plain");
    let found = results(&sarif);
    assert_eq!(found.len(), 13);
    assert!(found.iter().any(|f| f["ruleId"] == "QG001"), "{found:?}");
    let text = std::fs::read_to_string(&sarif).expect("sarif");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        v["runs"][0]["automationDetails"]["id"],
        "agents/shop-plain/"
    );
    assert_eq!(status(&r, "gate"), Status::Failed(1));
    assert!(r.failed);
    assert_eq!(r.code, 1);
    assert!(
        r.log
            .contains("::error::the gate failed: 13 finding(s) reported"),
        "{}",
        r.log
    );
}

/// Exit 2 (the proof could not run) fails the verify step at once with an error, and nothing is
/// uploaded: there is no SARIF of a proof.
#[test]
fn a_proof_that_cannot_run_fails_at_the_verify_step_and_uploads_nothing() {
    let t = temp();
    let r = job(&t).input("agent", "fixtures/no-such/agent.yaml").run();
    assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
    assert_eq!(r.code, 2);
    assert!(
        r.log
            .contains("::error::stalwart could not run the proof (exit 2)"),
        "{}",
        r.log
    );
    assert_eq!(status(&r, UPLOAD), Status::Skipped);
    assert_eq!(status(&r, "gate"), Status::Skipped);
    assert!(!r.outputs.contains_key("verify.outputs.gate"));
    assert_eq!(r.action_outputs["gate"], "");
    let r = job(&t).run();
    assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
    assert!(r.log.contains("give the action an agent"), "{}", r.log);
    assert_eq!(status(&r, UPLOAD), Status::Skipped);
}

/// The upload's `if:` as GitHub reads it: skipped for pull requests from forks (a read-only
/// token) and when `upload` is "false"; under "auto" (the default) a failed upload does not fail
/// the job (`continue-on-error`), under "true" it does.
#[test]
fn the_upload_runs_where_the_token_can_and_skips_forks() {
    let t = temp();
    let sha = "1111111111111111111111111111111111111111";
    let cases = [
        (Event::push(), "auto", true),
        (
            Event::pull_request("pull_request", sha, "acme/agents"),
            "auto",
            true,
        ),
        (
            Event::pull_request("pull_request", sha, "fork/agents"),
            "auto",
            false,
        ),
        (
            Event::pull_request("pull_request", sha, "fork/agents"),
            "true",
            false,
        ),
        (Event::push(), "false", false),
        (Event::push(), "true", true),
    ];
    for (event, upload, runs) in cases {
        let name = event.name.clone();
        let mut j = job(&t)
            .input("agent", "fixtures/shop/agent.yaml")
            .input("upload", upload)
            // The base commit is another test's: here the upload alone is asked about.
            .input("base-ref", "");
        j.event = event;
        let r = j.run();
        assert!(!r.failed, "{}", r.log);
        let step = r.step(UPLOAD);
        let want = if runs {
            Status::WouldRun
        } else {
            Status::Skipped
        };
        assert_eq!(step.status, want, "{name}, upload {upload}");
        assert_eq!(step.continue_on_error, upload == "auto", "upload {upload}");
    }
}

/// Another program named `stalwart` is never run as the proof: given as the input it is an
/// error, found on PATH it is passed over with a warning.
#[test]
fn a_stalwart_that_is_not_this_verifier_is_refused() {
    let t = temp();
    let fake = t.path().join("stalwart");
    executable(
        &fake,
        "#!/bin/sh\necho 'Stalwart Mail Server 0.11'\nexit 0\n",
    );
    let r = job(&t)
        .input("agent", "fixtures/shop/agent.yaml")
        .input("stalwart", &fake.to_string_lossy())
        .run();
    assert_eq!(status(&r, "find"), Status::Failed(2), "{}", r.log);
    assert!(r.log.contains("is not stalwart-verify"), "{}", r.log);
    assert_eq!(status(&r, "verify"), Status::Skipped);
    assert!(!r.outputs.contains_key("verify.outputs.gate"));
}

/// The inputs of a team's CI: a configuration, a baseline, an engine, more arguments, and the
/// job summary with the first blocking finding's picture.
#[test]
fn config_baseline_engine_args_and_the_job_summary() {
    let t = temp();
    let plain = |j: Job| {
        j.input("graph", "fixtures/shop-plain/graph.json")
            .input("catalogue", "fixtures/shop-plain/catalogue.json")
    };
    let first = plain(job(&t)).input("engine", "explicit").run();
    assert_eq!(first.code, 1, "{}", first.log);
    assert!(
        first.summary.contains("gate failed (ci)")
            && first.summary.contains("```mermaid\nflowchart TD\n"),
        "{}",
        first.summary
    );
    // The run's SARIF as the baseline: every finding known, the gate passes, nothing dropped.
    let base = t.path().join("base.sarif");
    std::fs::copy(&first.outputs["verify.outputs.sarif"], &base).expect("copy");
    let config = t.path().join("stalwart.toml");
    std::fs::write(&config, "gate = \"start\"\n").expect("write");
    let r = plain(job(&t))
        .input("baseline", &base.to_string_lossy())
        .input("config", &config.to_string_lossy())
        .input("args", "--strict-accepts  --max-states 100000")
        .input("summary", "false")
        .run();
    assert!(!r.failed, "{}", r.log);
    assert_eq!(r.summary, "", "summary: false writes none");
    assert_eq!(
        r.outputs["verify.outputs.findings"], "13",
        "baselined results stay in the SARIF"
    );
    let sarif = std::fs::read_to_string(&r.outputs["verify.outputs.sarif"]).expect("sarif");
    assert!(sarif.contains("\"baselineState\": \"unchanged\""));
    assert!(
        sarif.contains("\"gate\": \"start\""),
        "the configuration's gate was read"
    );
    // A word of `args` that is not an option is an error of the verifier, not shell code.
    let pwned = t.path().join("pwned");
    let r = plain(job(&t))
        .input(
            "args",
            &format!("$(touch {}) `touch {0}` --bogus", pwned.display()),
        )
        .run();
    assert_eq!(r.code, 2, "{}", r.log);
    assert!(!pwned.exists());
    // `args` over several lines (a YAML block) passes every line, not the first alone: the
    // bogus option on the second line reaches the verifier, which refuses it.
    let r = plain(job(&t))
        .input("args", "--strict-accepts\n--bogus-second-line\n")
        .run();
    assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
    assert!(r.log.contains("--bogus-second-line"), "{}", r.log);
}

#[test]
fn traces_given_to_the_action_are_compared_with_the_graph() {
    let t = temp();
    let dir = "fixtures/QG016/breaks-unmodelled-path";
    let (graph, catalogue, traces) = (
        format!("{dir}/graph.json"),
        format!("{dir}/catalogue.json"),
        format!("{dir}/runs.jsonl"),
    );
    let with_inputs = |j: Job| j.input("graph", &graph).input("catalogue", &catalogue);
    let without = with_inputs(job(&t)).run();
    let with = with_inputs(job(&t)).input("traces", &traces).run();
    assert!(!without.log.contains("title=QG016"), "{}", without.log);
    assert_eq!(with.code, 1, "{}", with.log);
    assert_eq!(with.outputs["verify.outputs.gate"], "failed");
    assert!(
        with.log.contains(&format!("::error file={traces},line=1,")),
        "{}",
        with.log
    );
}

/// A warm cache: the install step installs the cached wheel (the verifier with libz3 inside) into
/// a virtual environment without building anything, the proof runs with it, and nothing is saved
/// (the key is there already). Skipped, saying so, without a wheel (`.ci/run` builds one in
/// `.ci/wheels` before the tests).
#[test]
fn a_cached_wheel_is_installed_without_a_build() {
    let wheel = std::fs::read_dir(common::root().join(".ci/wheels"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"));
    let Some(wheel) = wheel else {
        common::skip(
            "no wheel in .ci/wheels (.ci/run builds one): the cached-wheel install is not tried",
        );
        return;
    };
    let t = temp();
    // The restore step restores `<dir>/wheels`; the find step names <dir> as $RUNNER_TEMP/stalwart-verify.
    let wheels = t.path().join("stalwart-verify/wheels");
    std::fs::create_dir_all(&wheels).expect("mkdir");
    std::fs::copy(&wheel, wheels.join(wheel.file_name().expect("a name"))).expect("copy");
    // No `stalwart` input and none on PATH: the action finds its own.
    let mut j = Job::new(t.path())
        .input("agent", "fixtures/shop/agent.yaml")
        .env("PATH", &path_without_stalwart(None));
    j.uses_outputs.insert(
        "restore".into(),
        BTreeMap::from([("cache-hit".to_string(), "true".to_string())]),
    );
    let r = j.run();
    assert!(!r.failed, "{}", r.log);
    assert_eq!(status(&r, "restore"), Status::WouldRun);
    assert!(
        r.outputs["install.outputs.bin"].ends_with("stalwart-verify/venv/bin/stalwart"),
        "{:?}",
        r.outputs
    );
    assert_eq!(r.outputs["install.outputs.built"], "false");
    assert_eq!(status(&r, SAVE), Status::Skipped);
    assert_eq!(r.outputs["verify.outputs.gate"], "passed");
}

/// Inputs reach the scripts only through `env:`: no `run:` text holds an expression, so nothing
/// an input or the event carries is ever read as shell code. Every `uses:` is pinned by a full
/// commit, and the cache's restore and save by the same one.
#[test]
fn scripts_hold_no_expressions_and_every_action_is_pinned() {
    let action = std::fs::read_to_string(common::root().join("action.yml")).expect("action.yml");
    let doc = marked_yaml::parse_yaml(0, &action).expect("action.yml parses");
    let steps = doc
        .as_mapping()
        .and_then(|m| m.get_node("runs"))
        .and_then(|r| r.as_mapping())
        .and_then(|r| r.get_node("steps"))
        .and_then(|s| s.as_sequence())
        .expect("runs.steps");
    let mut cache_pins = Vec::new();
    let mut uses_count = 0;
    for step in steps.iter() {
        let m = step.as_mapping().expect("a step is a mapping");
        if let Some(run) = m.get_scalar("run") {
            assert!(!run.as_str().contains("${{"), "{}", run.as_str());
        }
        if let Some(uses) = m.get_scalar("uses") {
            uses_count += 1;
            let (name, pin) = uses.as_str().split_once('@').expect("uses names a ref");
            assert!(
                pin.len() == 40 && pin.chars().all(|c| c.is_ascii_hexdigit()),
                "{name}@{pin}: pin actions by commit"
            );
            if name.starts_with("actions/cache") {
                cache_pins.push((name.to_string(), pin.to_string()));
            }
        }
    }
    assert_eq!(uses_count, 3);
    let names: Vec<&str> = cache_pins.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["actions/cache/restore", "actions/cache/save"]);
    assert!(cache_pins
        .iter()
        .all(|(_, p)| p == "5a3ec84eff668545956fd18022155c47e93e2684"));
}

/// A fake `stalwart` that is "ours" (it lists QG001), logs each call's arguments to `calls` (one
/// call a line, the arguments separated by U+001F) and writes a SARIF with no results.
fn fake_verifier(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("fake-stalwart");
    let calls = dir.join("calls");
    executable(
        &bin,
        &format!(
            r#"#!/bin/bash
{{ printf '%s\037' "$@"; echo; }} >> '{calls}'
if [ "$1 $2" = "rules list" ]; then
  echo '[{{"id": "QG001"}}]'
  exit 0
fi
while [ $# -gt 0 ]; do
  if [ "$1" = --sarif ]; then
    echo '{{"version": "2.1.0", "runs": [{{"results": []}}]}}' > "$2"
  fi
  shift
done
"#,
            calls = calls.display()
        ),
    );
    (bin, calls)
}

/// The argument lists of the fake verifier's `verify` calls.
fn verify_calls(calls: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            l.split('\u{1f}')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|a| a.first().map(String::as_str) == Some("verify"))
        .collect()
}

/// No findings at all: the count is 0 and the gate passes (a `grep` that matched nothing would
/// have exited 1 and, under `pipefail`, ended the step).
#[test]
fn a_sarif_without_results_counts_zero_and_passes() {
    let t = temp();
    let (bin, calls) = fake_verifier(t.path());
    let r = Job::new(t.path())
        .input("stalwart", &bin.to_string_lossy())
        .input("agent", "fixtures/shop/agent.yaml")
        .run();
    assert!(!r.failed, "{}", r.log);
    assert_eq!(verify_calls(&calls).len(), 1);
    assert_eq!(r.outputs["verify.outputs.findings"], "0");
    assert_eq!(r.outputs["verify.outputs.gate"], "passed");
    assert_eq!(status(&r, UPLOAD), Status::WouldRun);
}

mod base_ref;
mod cache;
