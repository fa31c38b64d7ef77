//! The GitHub Action (`action.yml`), run as a runner would run it, locally: each step's `run:`
//! script in bash, with `GITHUB_OUTPUT`, `RUNNER_TEMP` and `GITHUB_ACTION_PATH` set, its `env:`
//! filled from the inputs and the earlier steps' outputs, and `if:` conditions on the upload
//! read for a push, a pull request from the same repository and one from a fork. The upload
//! (`uses:`) itself is GitHub's and is not run; the test checks it is pinned by commit.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use marked_yaml::Node;

fn map<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    n.as_mapping().and_then(|m| m.get_node(key))
}

fn text<'a>(n: &'a Node, key: &str) -> Option<&'a str> {
    map(n, key).and_then(|v| v.as_scalar()).map(|s| s.as_str())
}

/// Fills `${{ inputs.x }}` and `${{ steps.id.outputs.y }}` in an `env:` value.
fn fill(v: &str, inputs: &BTreeMap<&str, String>, outputs: &BTreeMap<String, String>) -> String {
    let inner = v.trim();
    let Some(expr) = inner.strip_prefix("${{").and_then(|x| x.strip_suffix("}}")) else {
        return v.to_string();
    };
    let expr = expr.trim();
    if let Some(name) = expr.strip_prefix("inputs.") {
        return inputs.get(name).cloned().unwrap_or_default();
    }
    if let Some(rest) = expr.strip_prefix("steps.") {
        return outputs.get(rest).cloned().unwrap_or_default();
    }
    panic!("unexpected expression in action.yml env: {v}");
}

struct Ran {
    outputs: BTreeMap<String, String>,
    /// The exit status of the first step that failed, or 0.
    code: i32,
    log: String,
}

/// Runs the action's `run:` steps with `given` inputs (the rest at their defaults), the `stalwart`
/// input set to this build's binary unless `given` sets it.
fn run_action(given: &[(&str, &str)], temp: &Path) -> Ran {
    run_action_with_path(given, temp, None)
}

/// [`run_action`], with the steps' `PATH` replaced when `path` is given.
fn run_action_with_path(given: &[(&str, &str)], temp: &Path, path: Option<&str>) -> Ran {
    let root = common::root();
    let action = std::fs::read_to_string(root.join("action.yml")).expect("action.yml");
    let doc = marked_yaml::parse_yaml(0, &action).expect("action.yml parses");
    let mut inputs: BTreeMap<&str, String> = BTreeMap::new();
    for (k, v) in map(&doc, "inputs")
        .and_then(|n| n.as_mapping())
        .expect("inputs")
        .iter()
    {
        let default = text(v, "default").unwrap_or("").to_string();
        assert!(
            text(v, "description").is_some(),
            "input {} needs a description",
            k.as_str()
        );
        inputs.insert(k.as_str(), default);
    }
    let bin = env!("CARGO_BIN_EXE_stalwart");
    inputs.insert("stalwart", bin.to_string());
    for (k, v) in given {
        assert!(inputs.contains_key(k), "no input {k}");
        inputs.insert(k, v.to_string());
    }
    let steps = map(&doc, "runs")
        .and_then(|r| map(r, "steps"))
        .and_then(|s| s.as_sequence())
        .expect("runs.steps");
    let mut outputs = BTreeMap::new();
    let mut log = String::new();
    for step in steps.iter() {
        let Some(script) = text(step, "run") else {
            let uses = text(step, "uses").expect("a step runs or uses");
            let (_, pin) = uses.split_once('@').expect("uses names a ref");
            assert!(
                pin.len() == 40 && pin.chars().all(|c| c.is_ascii_hexdigit()),
                "{uses}: pin actions by commit"
            );
            continue;
        };
        assert_eq!(text(step, "shell"), Some("bash"));
        let id = text(step, "id").unwrap_or("");
        let out_file = temp.join(format!("output-{id}"));
        std::fs::write(&out_file, "").expect("GITHUB_OUTPUT");
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(script)
            .current_dir(&root)
            .env("GITHUB_OUTPUT", &out_file)
            .env("RUNNER_TEMP", temp)
            .env("GITHUB_ACTION_PATH", &root)
            .env("GITHUB_STEP_SUMMARY", temp.join("summary.md"))
            .env("NO_COLOR", "1");
        if let Some(p) = path {
            cmd.env("PATH", p);
        }
        if let Some(env) = map(step, "env").and_then(|e| e.as_mapping()) {
            for (k, v) in env.iter() {
                let v = v.as_scalar().map(|s| s.as_str()).unwrap_or("");
                cmd.env(k.as_str(), fill(v, &inputs, &outputs));
            }
        }
        let out = cmd.output().expect("bash");
        log.push_str(&String::from_utf8_lossy(&out.stdout));
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        for line in std::fs::read_to_string(&out_file)
            .unwrap_or_default()
            .lines()
        {
            if let Some((k, v)) = line.split_once('=') {
                outputs.insert(format!("{id}.outputs.{k}"), v.to_string());
            }
        }
        let code = out.status.code().unwrap_or(-1);
        if code != 0 {
            return Ran { outputs, code, log };
        }
    }
    Ran {
        outputs,
        code: 0,
        log,
    }
}

fn temp(name: &str) -> std::path::PathBuf {
    let t = std::env::temp_dir().join(format!("stalwart-action-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&t);
    std::fs::create_dir_all(&t).expect("temp");
    t
}

#[test]
fn a_passing_agent_passes_the_step_and_writes_sarif() {
    let t = temp("pass");
    let r = run_action(&[("agent", "fixtures/shop/agent.yaml")], &t);
    assert_eq!(r.code, 0, "{}", r.log);
    let sarif = t.join("stalwart.sarif");
    assert_eq!(r.outputs["verify.outputs.sarif"], sarif.to_string_lossy());
    assert_eq!(r.outputs["verify.outputs.findings"], "2");
    assert_eq!(r.outputs["verify.outputs.gate"], "passed");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif written"))
            .expect("json");
    assert_eq!(v["runs"][0]["results"].as_array().map(|a| a.len()), Some(2));
    // The job log has one annotation a finding.
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
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn a_failing_agent_writes_sarif_then_fails_the_gate_step() {
    let t = temp("fail");
    let sarif = t.join("out.sarif").to_string_lossy().into_owned();
    let r = run_action(
        &[
            ("graph", "fixtures/shop-plain/graph.json"),
            ("catalogue", "fixtures/shop-plain/catalogue.json"),
            ("sarif", &sarif),
            ("category", "agents/shop-plain"),
        ],
        &t,
    );
    // The verify step succeeds (so the upload runs), the gate step fails.
    assert_eq!(r.code, 1, "{}", r.log);
    assert_eq!(r.outputs["verify.outputs.gate"], "failed");
    // SPEC 11's findings, and QG101 on each of the three writes (no rulebook, nothing bounds them).
    assert_eq!(r.outputs["verify.outputs.findings"], "12");
    assert!(
        r.log
            .contains("::error::the gate failed: 12 finding(s) reported"),
        "{}",
        r.log
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif written"))
            .expect("json");
    assert_eq!(
        v["runs"][0]["automationDetails"]["id"],
        "agents/shop-plain/"
    );
    assert_eq!(
        v["runs"][0]["results"].as_array().map(|a| a.len()),
        Some(12)
    );
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn input_that_cannot_be_verified_stops_at_the_verify_step() {
    let t = temp("bad");
    let r = run_action(&[("agent", "fixtures/no-such/agent.yaml")], &t);
    assert_eq!(r.code, 2, "{}", r.log);
    assert!(
        r.log.contains("could not run the proof (exit 2)"),
        "{}",
        r.log
    );
    assert!(!r.outputs.contains_key("verify.outputs.gate"));
    let r = run_action(&[], &t);
    assert_eq!(r.code, 2, "{}", r.log);
    assert!(r.log.contains("give the action an agent"), "{}", r.log);
    let _ = std::fs::remove_dir_all(&t);
}

/// The upload is skipped for pull requests from forks (a read-only token) and when `upload` is
/// "false"; under "auto" (the default) a failed upload (a private repository without Advanced
/// Security) does not fail the job. The conditions are the ones written in action.yml.
#[test]
fn the_upload_condition_skips_forks() {
    let action = std::fs::read_to_string(common::root().join("action.yml")).expect("action.yml");
    let cond = "${{ inputs.upload != 'false' && (github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository) }}";
    assert!(
        action.contains(&format!("if: {cond}")),
        "the upload's if: changed"
    );
    assert!(action.contains("continue-on-error: ${{ inputs.upload == 'auto' }}"));
    let doc = marked_yaml::parse_yaml(0, &action).expect("action.yml parses");
    assert_eq!(
        map(&doc, "inputs")
            .and_then(|i| map(i, "upload"))
            .and_then(|u| text(u, "default")),
        Some("auto")
    );
    // The same condition, evaluated for the cases a runner meets.
    let upload = |upload: &str, event: &str, head: &str, repo: &str| {
        upload != "false" && (event != "pull_request" || head == repo)
    };
    assert!(upload("auto", "push", "", "o/r"));
    assert!(upload("true", "pull_request", "o/r", "o/r"));
    assert!(!upload("auto", "pull_request", "fork/r", "o/r"));
    assert!(!upload("false", "push", "", "o/r"));
}

/// Another program named `stalwart` is never run as the proof: given as the input it is an
/// error, found on PATH it is passed over with a warning.
#[test]
fn a_stalwart_that_is_not_this_verifier_is_refused() {
    let t = temp("impostor");
    let fake = t.join("stalwart");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'Stalwart Mail Server 0.11'\nexit 0\n",
    )
    .expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let f = fake.to_string_lossy().into_owned();
    let r = run_action(
        &[("agent", "fixtures/shop/agent.yaml"), ("stalwart", &f)],
        &t,
    );
    assert_eq!(r.code, 2, "{}", r.log);
    assert!(r.log.contains("is not stalwart-verify"), "{}", r.log);
    assert!(!r.outputs.contains_key("verify.outputs.gate"));
    let _ = std::fs::remove_dir_all(&t);
}

/// The inputs of a team's CI: a configuration, a baseline, an engine, more arguments, and the
/// job summary with the first blocking finding's picture.
#[test]
fn config_baseline_engine_args_and_the_job_summary() {
    let t = temp("inputs");
    let plain = [
        ("graph", "fixtures/shop-plain/graph.json"),
        ("catalogue", "fixtures/shop-plain/catalogue.json"),
    ];
    let first = run_action(&[plain[0], plain[1], ("engine", "explicit")], &t);
    assert_eq!(first.code, 1, "{}", first.log);
    let summary = std::fs::read_to_string(t.join("summary.md")).expect("the job summary");
    assert!(
        summary.contains("gate failed (ci)") && summary.contains("```mermaid\nflowchart TD\n"),
        "{summary}"
    );
    // The run's SARIF as the baseline: every finding known, the gate passes, nothing dropped.
    let base = t.join("base.sarif");
    std::fs::copy(&first.outputs["verify.outputs.sarif"], &base).expect("copy");
    let b = base.to_string_lossy().into_owned();
    let config = t.join("stalwart.toml");
    std::fs::write(&config, "gate = \"start\"\n").expect("write");
    let c = config.to_string_lossy().into_owned();
    let r = run_action(
        &[
            plain[0],
            plain[1],
            ("baseline", &b),
            ("config", &c),
            ("args", "--strict-accepts  --max-states 100000"),
            ("summary", "false"),
        ],
        &t,
    );
    assert_eq!(r.code, 0, "{}", r.log);
    assert_eq!(
        r.outputs["verify.outputs.findings"], "12",
        "baselined results stay in the SARIF"
    );
    let sarif = std::fs::read_to_string(&r.outputs["verify.outputs.sarif"]).expect("sarif");
    assert!(sarif.contains("\"baselineState\": \"unchanged\""));
    assert!(
        sarif.contains("\"gate\": \"start\""),
        "the configuration's gate was read"
    );
    // A word of `args` that is not an option is an error of the verifier, not shell code.
    let r = run_action(
        &[plain[0], plain[1], ("args", "$(touch /tmp/pwned) --bogus")],
        &t,
    );
    assert_eq!(r.code, 2, "{}", r.log);
    assert!(!Path::new("/tmp/pwned").exists());
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn traces_given_to_the_action_are_compared_with_the_graph() {
    let t = temp("traces");
    let dir = "fixtures/QG016/breaks-unmodelled-path";
    let (graph, catalogue, traces) = (
        format!("{dir}/graph.json"),
        format!("{dir}/catalogue.json"),
        format!("{dir}/runs.jsonl"),
    );
    let without = run_action(&[("graph", &graph), ("catalogue", &catalogue)], &t);
    let with = run_action(
        &[
            ("graph", &graph),
            ("catalogue", &catalogue),
            ("traces", &traces),
        ],
        &t,
    );
    assert!(!without.log.contains("title=QG016"), "{}", without.log);
    assert_eq!(with.code, 1, "{}", with.log);
    assert_eq!(with.outputs["verify.outputs.gate"], "failed");
    assert!(
        with.log.contains(&format!("::error file={traces},line=1,")),
        "{}",
        with.log
    );
    let _ = std::fs::remove_dir_all(&t);
}

/// A warm cache: the install step installs the cached wheel (the verifier with libz3 inside) into
/// a virtual environment without building anything, and the proof runs with it. Skipped, saying
/// so, without a wheel (`.ci/run` builds one in `.ci/wheels` before the tests).
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
    let t = temp("wheel");
    // The cache step restores `<dir>/wheels`; the find step names <dir> as $RUNNER_TEMP/stalwart-verify.
    let wheels = t.join("stalwart-verify/wheels");
    std::fs::create_dir_all(&wheels).expect("mkdir");
    std::fs::copy(&wheel, wheels.join(wheel.file_name().expect("a name"))).expect("copy");
    // No `stalwart` input and none on PATH: the action finds its own.
    let path = std::env::var("PATH").unwrap_or_default();
    let path: Vec<&str> = path
        .split(':')
        .filter(|d| !Path::new(d).join("stalwart").exists())
        .collect();
    let path = path.join(":");
    let r = run_action_with_path(
        &[("agent", "fixtures/shop/agent.yaml"), ("stalwart", "")],
        &t,
        Some(&path),
    );
    assert_eq!(r.code, 0, "{}", r.log);
    assert!(
        r.outputs["install.outputs.bin"].ends_with("stalwart-verify/venv/bin/stalwart"),
        "{:?}",
        r.outputs
    );
    assert_eq!(r.outputs["verify.outputs.gate"], "passed");
    let _ = std::fs::remove_dir_all(&t);
}
