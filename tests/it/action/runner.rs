//! A local runner for the composite action in `action.yml`, faithful to how GitHub runs one:
//! each `run:` script is written to a file and run as `bash --noprofile --norc -eo pipefail FILE`
//! (GitHub's command line for `shell: bash`), in the workspace, with `GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`, `GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`,
//! `RUNNER_TEMP`, `RUNNER_OS`, `RUNNER_ARCH` and `GITHUB_ACTION_PATH` set and the step's `env:`
//! filled from the inputs, the event and earlier steps' outputs. A step's `if:` without a status
//! function gets GitHub's implicit `success()`; `continue-on-error` lets a step fail without
//! failing the job. A `uses:` step is not run: the runner records whether it would run and with
//! what `with:` values (its outputs can be given, as a cache's `cache-hit`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::expr::{self, Context, Value};
use marked_yaml::Node;

/// The event that started the workflow: its name and its payload (`github.event`).
pub struct Event {
    pub name: String,
    pub payload: serde_json::Value,
}

impl Event {
    /// A push to the default branch.
    pub fn push() -> Event {
        Event {
            name: "push".into(),
            payload: serde_json::json!({ "ref": "refs/heads/main" }),
        }
    }

    /// A pull request (`pull_request`, or `pull_request_target` with `name`) whose base commit
    /// is `base_sha`, from the repository `head_repo`.
    pub fn pull_request(name: &str, base_sha: &str, head_repo: &str) -> Event {
        Event {
            name: name.into(),
            payload: serde_json::json!({
                "pull_request": {
                    "base": { "sha": base_sha, "repo": { "full_name": REPOSITORY } },
                    "head": { "sha": "0123456789abcdef0123456789abcdef01234567",
                              "repo": { "full_name": head_repo } }
                }
            }),
        }
    }
}

/// The repository the modelled workflow runs in (`github.repository`).
pub const REPOSITORY: &str = "acme/agents";

/// One run of the action.
pub struct Job {
    /// The text of `action.yml` (a test may change it).
    pub action: String,
    /// `GITHUB_ACTION_PATH`: where the action's files are.
    pub action_path: PathBuf,
    /// The working directory (`GITHUB_WORKSPACE`).
    pub workspace: PathBuf,
    /// `RUNNER_TEMP`.
    pub temp: PathBuf,
    /// The inputs given (the rest take their defaults).
    pub inputs: Vec<(String, String)>,
    pub event: Event,
    /// More environment for every step (a `PATH`, `RUNNER_OS`, ...), over the defaults.
    pub env: Vec<(String, String)>,
    /// The outputs a `uses:` step (by id) would set when it runs.
    pub uses_outputs: BTreeMap<String, BTreeMap<String, String>>,
    /// Stop after the step with this id.
    pub stop_after: Option<String>,
}

/// What became of a step.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Its `if:` was false.
    Skipped,
    /// A `run:` step that exited 0.
    Passed,
    /// A `run:` step that exited with this status.
    Failed(i32),
    /// A `uses:` step whose `if:` was true (it is not run here).
    WouldRun,
}

/// One step's record.
pub struct Step {
    pub id: String,
    pub name: String,
    pub uses: Option<String>,
    /// Its `with:` values, filled (for a `uses:` step that would run).
    pub with: BTreeMap<String, String>,
    pub status: Status,
    /// Its `continue-on-error`, evaluated.
    pub continue_on_error: bool,
    /// Its stdout and stderr.
    pub log: String,
}

/// The record of a run.
pub struct Ran {
    pub steps: Vec<Step>,
    /// Every step's outputs, keyed `id.outputs.name`.
    pub outputs: BTreeMap<String, String>,
    /// The action's own outputs (`outputs.x.value`), filled at the end.
    pub action_outputs: BTreeMap<String, String>,
    /// The exit status of the first step that failed the job, or 0.
    pub code: i32,
    /// The job failed (a step failed without `continue-on-error`).
    pub failed: bool,
    /// Every step's log, in order.
    pub log: String,
    /// The job summary (each step's `GITHUB_STEP_SUMMARY`, in order).
    pub summary: String,
}

impl Ran {
    /// The step with this id (or, for a step without one, this name).
    pub fn step(&self, key: &str) -> &Step {
        self.steps
            .iter()
            .find(|s| s.id == key || s.name == key)
            .unwrap_or_else(|| panic!("no step {key}"))
    }
}

struct Ctx<'a> {
    inputs: BTreeMap<String, String>,
    outputs: &'a BTreeMap<String, String>,
    statuses: &'a BTreeMap<String, (Status, bool)>,
    event: &'a Event,
    workspace: &'a Path,
    action_path: &'a Path,
    temp: &'a Path,
    failed: bool,
    inputs_known: bool,
}

impl Context for Ctx<'_> {
    fn lookup(&self, path: &[String]) -> Value {
        let p: Vec<&str> = path.iter().map(String::as_str).collect();
        let s = |v: &str| Value::Str(v.to_string());
        match p.as_slice() {
            ["inputs", name] => {
                assert!(self.inputs_known, "an input's default reads inputs.{name}");
                s(self
                    .inputs
                    .get(*name)
                    .unwrap_or_else(|| panic!("action.yml reads an undeclared input {name}")))
            }
            ["steps", id, "outputs", k] => self
                .outputs
                .get(&format!("{id}.outputs.{k}"))
                .map_or(Value::Null, |v| s(v)),
            ["steps", id, what @ ("outcome" | "conclusion")] => match self.statuses.get(*id) {
                Some((Status::Passed | Status::WouldRun, _)) => s("success"),
                // `continue-on-error`: the outcome is failure, the conclusion success.
                Some((Status::Failed(_), true)) if *what == "conclusion" => s("success"),
                Some((Status::Failed(_), _)) => s("failure"),
                Some((Status::Skipped, _)) => s("skipped"),
                None => Value::Null,
            },
            ["github", "event_name"] => s(&self.event.name),
            ["github", "repository"] => s(REPOSITORY),
            ["github", "workspace"] => s(&self.workspace.to_string_lossy()),
            ["github", "action_path"] => s(&self.action_path.to_string_lossy()),
            ["github", "event", rest @ ..] => {
                let mut v = &self.event.payload;
                for k in rest {
                    match v.get(*k) {
                        Some(x) => v = x,
                        None => return Value::Null,
                    }
                }
                match v {
                    serde_json::Value::String(x) => s(x),
                    serde_json::Value::Bool(b) => Value::Bool(*b),
                    serde_json::Value::Number(n) => Value::Num(n.as_f64().unwrap_or(f64::NAN)),
                    serde_json::Value::Null => Value::Null,
                    other => s(&other.to_string()),
                }
            }
            ["runner", "temp"] => s(&self.temp.to_string_lossy()),
            ["runner", "os"] => s("Linux"),
            _ => panic!("the runner does not model {}", p.join(".")),
        }
    }

    fn failed(&self) -> bool {
        self.failed
    }
}

fn map<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    n.as_mapping().and_then(|m| m.get_node(key))
}

fn text<'a>(n: &'a Node, key: &str) -> Option<&'a str> {
    map(n, key).and_then(|v| v.as_scalar()).map(|s| s.as_str())
}

/// The `KEY=VALUE` and `KEY<<DELIMITER` lines of a `GITHUB_OUTPUT` file.
fn parse_outputs(file: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = file.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.push((k.to_string(), v.join("\n")));
        } else if let Some((k, v)) = line.split_once('=') {
            out.push((k.to_string(), v.to_string()));
        } else if !line.is_empty() {
            panic!("a GITHUB_OUTPUT line GitHub would refuse: {line:?}");
        }
    }
    out
}

impl Job {
    /// A job on a push, in the crate's root, with the action as it is in the crate.
    pub fn new(temp: &Path) -> Job {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        Job {
            action: std::fs::read_to_string(root.join("action.yml")).expect("action.yml"),
            action_path: root.clone(),
            workspace: root,
            temp: temp.to_path_buf(),
            inputs: Vec::new(),
            event: Event::push(),
            env: Vec::new(),
            uses_outputs: BTreeMap::new(),
            stop_after: None,
        }
    }

    /// Gives an input.
    pub fn input(mut self, k: &str, v: &str) -> Job {
        self.inputs.push((k.to_string(), v.to_string()));
        self
    }

    /// Sets a variable for every step.
    pub fn env(mut self, k: &str, v: &str) -> Job {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    /// Runs the steps, as a runner would.
    pub fn run(&self) -> Ran {
        let doc = marked_yaml::parse_yaml(0, &self.action).expect("action.yml parses");
        let files = self.temp.join("_runner_file_commands");
        std::fs::create_dir_all(&files).expect("runner files");
        let event_path = files.join("event.json");
        std::fs::write(&event_path, self.event.payload.to_string()).expect("event");
        let mut outputs = BTreeMap::new();
        let mut statuses = BTreeMap::new();
        let mut ctx = Ctx {
            inputs: BTreeMap::new(),
            outputs: &BTreeMap::new(),
            statuses: &BTreeMap::new(),
            event: &self.event,
            workspace: &self.workspace,
            action_path: &self.action_path,
            temp: &self.temp,
            failed: false,
            inputs_known: false,
        };
        let mut inputs = BTreeMap::new();
        for (k, v) in map(&doc, "inputs")
            .and_then(|n| n.as_mapping())
            .expect("inputs")
            .iter()
        {
            assert!(
                text(v, "description").is_some(),
                "input {} needs a description",
                k.as_str()
            );
            let default = expr::interpolate(text(v, "default").unwrap_or(""), &ctx);
            inputs.insert(k.as_str().to_string(), default);
        }
        for (k, v) in &self.inputs {
            assert!(inputs.contains_key(k), "no input {k}");
            inputs.insert(k.clone(), v.clone());
        }
        let steps = map(&doc, "runs")
            .and_then(|r| map(r, "steps"))
            .and_then(|s| s.as_sequence())
            .expect("runs.steps");
        let mut ran = Ran {
            steps: Vec::new(),
            outputs: BTreeMap::new(),
            action_outputs: BTreeMap::new(),
            code: 0,
            failed: false,
            log: String::new(),
            summary: String::new(),
        };
        for (n, step) in steps.iter().enumerate() {
            let id = text(step, "id").unwrap_or("").to_string();
            let name = text(step, "name").unwrap_or("").to_string();
            let c = Ctx {
                inputs: inputs.clone(),
                outputs: &outputs,
                statuses: &statuses,
                failed: ran.failed,
                inputs_known: true,
                ..ctx
            };
            let runs = expr::condition(text(step, "if"), &c);
            let continue_on_error =
                expr::interpolate(text(step, "continue-on-error").unwrap_or("false"), &c) == "true";
            let fill = |key: &str| -> BTreeMap<String, String> {
                map(step, key)
                    .and_then(|e| e.as_mapping())
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                let v = v.as_scalar().map(|s| s.as_str()).unwrap_or("");
                                (k.as_str().to_string(), expr::interpolate(v, &c))
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let mut rec = Step {
                id: id.clone(),
                name,
                uses: text(step, "uses").map(str::to_string),
                with: BTreeMap::new(),
                status: Status::Skipped,
                continue_on_error,
                log: String::new(),
            };
            if !runs {
            } else if rec.uses.is_some() {
                assert!(text(step, "run").is_none(), "a step both runs and uses");
                rec.with = fill("with");
                rec.status = Status::WouldRun;
                for (k, v) in self.uses_outputs.get(&id).into_iter().flatten() {
                    outputs.insert(format!("{id}.outputs.{k}"), v.clone());
                }
            } else {
                let script = text(step, "run").expect("a step runs or uses");
                assert_eq!(text(step, "shell"), Some("bash"), "step {id}: shell");
                let env = fill("env");
                let file = files.join(format!("{n}.sh"));
                let out_file = files.join(format!("output-{n}"));
                let summary_file = files.join(format!("summary-{n}.md"));
                std::fs::write(&file, script).expect("the step's script");
                for f in [&out_file, &summary_file] {
                    std::fs::write(f, "").expect("a file command");
                }
                let mut cmd = Command::new("bash");
                cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                    .arg(&file)
                    .current_dir(&self.workspace);
                for (k, _) in std::env::vars_os() {
                    let k = k.to_string_lossy();
                    if k.starts_with("GITHUB_") || k.starts_with("RUNNER_") {
                        cmd.env_remove(&*k);
                    }
                }
                cmd.env("CI", "true")
                    .env("GITHUB_ACTIONS", "true")
                    .env("GITHUB_OUTPUT", &out_file)
                    .env("GITHUB_STEP_SUMMARY", &summary_file)
                    .env("GITHUB_ENV", files.join(format!("env-{n}")))
                    .env("GITHUB_PATH", files.join(format!("path-{n}")))
                    .env("GITHUB_EVENT_NAME", &self.event.name)
                    .env("GITHUB_EVENT_PATH", &event_path)
                    .env("GITHUB_REPOSITORY", REPOSITORY)
                    .env("GITHUB_WORKSPACE", &self.workspace)
                    .env("GITHUB_ACTION_PATH", &self.action_path)
                    .env("RUNNER_TEMP", &self.temp)
                    .env("RUNNER_OS", "Linux")
                    .env("RUNNER_ARCH", "X64")
                    .env("NO_COLOR", "1");
                for (k, v) in self.env.iter().map(|(k, v)| (k, v)).chain(env.iter()) {
                    cmd.env(k, v);
                }
                let out = cmd.output().expect("bash");
                rec.log.push_str(&String::from_utf8_lossy(&out.stdout));
                rec.log.push_str(&String::from_utf8_lossy(&out.stderr));
                let written = std::fs::read_to_string(&out_file).expect("GITHUB_OUTPUT");
                for (k, v) in parse_outputs(&written) {
                    outputs.insert(format!("{id}.outputs.{k}"), v);
                }
                ran.summary
                    .push_str(&std::fs::read_to_string(&summary_file).unwrap_or_default());
                for f in ["env", "path"] {
                    let written = files.join(format!("{f}-{n}"));
                    assert!(
                        std::fs::read(&written).map_or(true, |b| b.is_empty()),
                        "step {id} writes GITHUB_{}: the runner does not model it",
                        f.to_uppercase()
                    );
                }
                let code = out.status.code().unwrap_or(-1);
                rec.status = if code == 0 {
                    Status::Passed
                } else {
                    Status::Failed(code)
                };
                if code != 0 && !continue_on_error && !ran.failed {
                    ran.failed = true;
                    ran.code = code;
                }
            }
            ran.log.push_str(&rec.log);
            if !id.is_empty() {
                statuses.insert(id.clone(), (rec.status.clone(), continue_on_error));
            }
            ran.steps.push(rec);
            if self.stop_after.as_deref() == Some(id.as_str()) {
                break;
            }
        }
        ctx.inputs = inputs;
        ctx.inputs_known = true;
        ctx.outputs = &outputs;
        ctx.statuses = &statuses;
        for (k, v) in map(&doc, "outputs")
            .and_then(|n| n.as_mapping())
            .into_iter()
            .flat_map(|m| m.iter())
        {
            let value = expr::interpolate(text(v, "value").unwrap_or(""), &ctx);
            ran.action_outputs.insert(k.as_str().to_string(), value);
        }
        ran.outputs = outputs;
        ran
    }
}
