//! Issue 26, attacked again as a hostile pull request's author would (SPEC 8.1): each test
//! builds a repository of its own (the base commit, then the pull request's files), runs the
//! real binary under `--base-ref`, and asserts the gate still fails, every weakening is named,
//! and nothing outside the repository is read or written. The defences that held are kept here
//! too, with the values they must give.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::action::runner;
use common::{git, stalwart_in as run_in};

use std::path::Path;

use serde_json::Value;

/// The plain shop (it fails the gate: QG001 on desk's tools at agent.yaml line 5, QG011,
/// QG013) in a repository of its own, `edit` applied to its agent.yaml before the base commit;
/// returns the folder and the base's commit id.
fn shop_repo(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let from = common::root().join("fixtures/shop-plain");
    for f in ["graph.json", "catalogue.json", "agent.yaml"] {
        std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
    }
    let yaml = std::fs::read_to_string(dir.path().join("agent.yaml")).unwrap();
    std::fs::write(dir.path().join("agent.yaml"), edit(&yaml)).unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    let base = git(dir.path(), &["rev-parse", "HEAD"]);
    (dir, base)
}

/// The line of agent.yaml the plain shop's QG001, QG011 and QG013 findings point at.
const LINE5: &str = "    tools: [get_order, charge_card, send_receipt, read_inbox]";

/// An accept comment on [`LINE5`] for every rule that blocks there.
const ACCEPT_ALL: &str = "  # stalwart: accept QG001, QG011, QG013 -- the desk team reviewed it";

/// `agent.yaml` with billing's line (10) accepting its QG012: the plain shop's desk reads its
/// inbox plainly, which billing's guard never sees (SPEC 3.1 "The guard's view").
fn accept_billing(yaml: &str) -> String {
    yaml.replacen(
        "    tools: [refund_card]\n",
        "    tools: [refund_card]  # stalwart: accept QG012 -- billing reviewed it\n",
        1,
    )
}

fn verify_json(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "verify",
        "--graph",
        "graph.json",
        "--catalogue",
        "catalogue.json",
        "--format",
        "json",
    ];
    args.extend(extra);
    let r = run_in(dir, &args);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    (r.code, serde_json::from_str(&r.stdout).unwrap())
}

fn accepted(j: &Value) -> usize {
    j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.get("accepted").is_some())
        .count()
}

fn pull_request_lines(j: &Value) -> Vec<(String, u64)> {
    j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "pull_request")
        .map(|w| {
            (
                w["location"]["file"].as_str().unwrap_or("").to_string(),
                w["location"]["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The base has the accept comment's whole line as text in a block scalar (a note, not a
/// comment); the pull request writes the same line over line 5. Comparing the trimmed line with
/// any line of the base passed it as the base's own, and the gate went green with nothing named.
/// Only a line that carries an accept comment on the base counts.
#[test]
fn an_accept_line_the_base_has_only_as_text_is_the_pull_requests() {
    let note = format!("notes: |\n{LINE5}{ACCEPT_ALL}\n");
    let (repo, base) = shop_repo(|y| format!("{y}{note}"));
    let dir = repo.path();
    let (code, j) = verify_json(dir, &["--base-ref", &base]);
    assert_eq!((code, accepted(&j)), (1, 0), "the base fails the gate");
    let yaml = std::fs::read_to_string(dir.join("agent.yaml")).unwrap();
    let pr = yaml.replacen(&format!("{LINE5}\n"), &format!("{LINE5}{ACCEPT_ALL}\n"), 1);
    assert_ne!(pr, yaml);
    std::fs::write(dir.join("agent.yaml"), pr).unwrap();
    let (code, j) = verify_json(dir, &["--base-ref", &base]);
    assert_eq!(code, 1, "{}", j["weakened"]);
    assert_eq!(accepted(&j), 0);
    assert_eq!(pull_request_lines(&j), vec![("agent.yaml".to_string(), 5)]);
}

/// The base accepts on one line (an agent the graph does not reach); the pull request copies the
/// line, comment and all, to line 5. The base's one comment cannot stand for two: the copy is
/// the pull request's, named and not applied, and the base's stays the base's.
#[test]
fn an_accept_line_copied_to_a_new_place_is_the_pull_requests() {
    let legacy = format!("legacy:\n  old_desk:\n{LINE5}{ACCEPT_ALL}\n");
    // The base also accepts billing's QG012 (SPEC 3.1: its guard never saw desk's plain read),
    // so that only line 5's findings are in play.
    let (repo, base) = shop_repo(|y| format!("{}{legacy}", accept_billing(y)));
    let dir = repo.path();
    let yaml = std::fs::read_to_string(dir.join("agent.yaml")).unwrap();
    let pr = yaml.replacen(&format!("{LINE5}\n"), &format!("{LINE5}{ACCEPT_ALL}\n"), 1);
    std::fs::write(dir.join("agent.yaml"), &pr).unwrap();
    let (code, j) = verify_json(dir, &["--base-ref", &base]);
    assert_eq!(code, 1, "{}", j["weakened"]);
    assert_eq!(accepted(&j), 1);
    assert_eq!(pull_request_lines(&j), vec![("agent.yaml".to_string(), 5)]);
    // The same comment on the base's line 5 is the base's: it accepts (the defence does not
    // refuse what the base has).
    git(dir, &["commit", "-qam", "accepted on the base"]);
    let base2 = git(dir, &["rev-parse", "HEAD"]);
    let (code, j) = verify_json(dir, &["--base-ref", &base2]);
    assert_eq!((code, accepted(&j)), (0, 8), "{}", j["weakened"]);
    assert!(pull_request_lines(&j).is_empty());
}

/// A lone carriage return ends a line for YAML (and so for the line a finding points at) but not
/// for `str::lines`: three of them at the end of line 1 put the agent `desk` (and its QG004) on
/// line 6, where the comment scanner counted the `on_unread` line whose accept comment the base
/// approved for something else. The comment moved onto another line's finding, unchanged as the
/// base has it. Comments are now counted on the lines YAML counts.
#[test]
fn a_lone_carriage_return_does_not_move_an_accept_comment_onto_another_finding() {
    let dir = tempfile::tempdir().unwrap();
    let from = common::root().join("fixtures/QG004/breaks-on-unread-ask");
    for f in ["agent.yaml", "catalogue.yaml", "policy.co"] {
        std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
    }
    let dir = dir.path();
    let yaml = std::fs::read_to_string(dir.join("agent.yaml")).unwrap();
    let on_unread = "    on_unread: ask\n";
    let base_yaml = yaml.replace(
        on_unread,
        "    on_unread: ask  # stalwart: accept QG004 -- the desk asks before a refund\n",
    );
    std::fs::write(dir.join("agent.yaml"), &base_yaml).unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    let qg004 = |extra: &[&str]| {
        let mut args = vec!["verify", "agent.yaml", "--format", "json"];
        args.extend(extra);
        let r = run_in(dir, &args);
        let j: Value = serde_json::from_str(&r.stdout).unwrap();
        let f = j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "QG004")
            .cloned()
            .unwrap();
        (
            f["location"]["line"].as_u64().unwrap(),
            f.get("accepted").is_some(),
        )
    };
    // On the base, the comment is on line 6 and the finding on line 3: nothing is accepted.
    assert_eq!(qg004(&["--base-ref", &base]), (3, false));
    let (first, rest) = base_yaml.split_once('\n').unwrap();
    std::fs::write(dir.join("agent.yaml"), format!("{first}\r\r\r\r\n{rest}")).unwrap();
    assert_eq!(qg004(&["--base-ref", &base]), (6, false));
    assert_eq!(qg004(&[]), (6, false));
}

/// The base holds the agent in `agents/shop/` with its `stalwart.toml` (three turns). The pull
/// request moves the folder to `evil/` and leaves `agents/shop` a symlink to it: the workflow
/// still names `agents/shop/graph.json`, but the base's configuration was looked for from where
/// the symlink leads (`evil/`, which the base does not have), so none applied (one turn) and,
/// the pull request's checkout having none there either, nothing was named. The base's copy is
/// looked for where the input is named.
#[cfg(unix)]
#[test]
fn a_symlinked_input_folder_does_not_lose_the_bases_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let shop = dir.join("agents/shop");
    std::fs::create_dir_all(&shop).unwrap();
    let from = common::root().join("fixtures/shop-plain");
    for f in ["graph.json", "catalogue.json", "agent.yaml"] {
        std::fs::copy(from.join(f), shop.join(f)).unwrap();
    }
    std::fs::write(shop.join("stalwart.toml"), "session-steps = 3\n").unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    let steps = || {
        let r = run_in(
            dir,
            &[
                "verify",
                "--graph",
                "agents/shop/graph.json",
                "--catalogue",
                "agents/shop/catalogue.json",
                "--format",
                "json",
                "--base-ref",
                &base,
            ],
        );
        assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
        let j: Value = serde_json::from_str(&r.stdout).unwrap();
        (j["scope"]["session_steps"].as_u64().unwrap(), j)
    };
    assert_eq!(steps().0, 3);
    git(dir, &["mv", "agents/shop", "evil"]);
    std::fs::remove_file(dir.join("evil/stalwart.toml")).unwrap();
    std::os::unix::fs::symlink("../evil", &shop).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "move the shop"]);
    let (n, j) = steps();
    assert_eq!(n, 3, "the base's configuration applies: {}", j["weakened"]);
}

/// The base's configuration asks for three turns; the pull request declares one in its export
/// (`session_steps: 1`), and the input's declaration wins over the configuration. The run
/// searched one turn and listed nothing; the turns below the configuration's are now a
/// weakening, named at the configuration's key.
#[test]
fn an_export_that_declares_fewer_turns_than_the_configuration_is_named() {
    let (repo, _) = shop_repo(|y| y.to_string());
    let dir = repo.path();
    std::fs::write(dir.join("stalwart.toml"), "session-steps = 3\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "three turns"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    let (_, j) = verify_json(dir, &["--base-ref", &base]);
    assert_eq!(j["scope"]["session_steps"], 3);
    assert_eq!(j["weakened"], serde_json::json!([]));
    let graph = std::fs::read_to_string(dir.join("graph.json")).unwrap();
    let pr = graph.replace("\"session_steps\": null", "\"session_steps\": 1");
    assert_ne!(pr, graph);
    std::fs::write(dir.join("graph.json"), pr).unwrap();
    let (_, j) = verify_json(dir, &["--base-ref", &base]);
    assert_eq!(j["scope"]["session_steps"], 1);
    let limits: Vec<&Value> = j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "limit")
        .collect();
    assert_eq!(limits.len(), 1, "{}", j["weakened"]);
    assert_eq!(
        limits[0]["message"],
        "`session-steps` is 1 (the input declares it), fewer turns than the configuration's 3"
    );
    assert_eq!(limits[0]["location"]["line"], 1);
}

/// A block scalar with an anchor or a tag (`notes: &notes |`) was not seen as one: its lines,
/// which are text, were scanned as YAML, and an accept marker written there as an example
/// counted as a comment for a finding the export places on that line. Its lines are text.
#[test]
fn an_accept_marker_in_an_anchored_or_tagged_block_scalar_is_text() {
    for header in ["notes: &notes |", "notes: !!str >-", "notes: &a !!str |+"] {
        let note = format!("{header}\n    # stalwart: accept QG001, QG011, QG013 -- an example\n");
        let (repo, _) = shop_repo(|y| format!("{y}{note}"));
        let dir = repo.path();
        let yaml = std::fs::read_to_string(dir.join("agent.yaml")).unwrap();
        let line = yaml.lines().count();
        let mut g: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("graph.json")).unwrap())
                .unwrap();
        for n in g["nodes"].as_array_mut().unwrap() {
            if n["id"] == "desk_tools" {
                n["location"]["line"] = line.into();
            }
        }
        std::fs::write(dir.join("graph.json"), g.to_string()).unwrap();
        let (code, j) = verify_json(dir, &[]);
        assert_eq!((code, accepted(&j)), (1, 0), "{header}");
    }
}

/// A quoted string after a tag or an anchor (`notes: !!str "..."`), or after a JSON-like key
/// with no space (`{"k":"..."}`), was not seen opening: the marker inside it counted as a
/// comment for a finding the export places on that line. It is a string.
#[test]
fn an_accept_marker_in_a_tagged_anchored_or_json_string_is_text() {
    const M: &str = "# stalwart: accept QG001, QG011, QG013 -- in a string";
    for line in [
        format!("notes: !!str \"x {M}\""),
        format!("notes: &n 'x {M}'"),
        format!("notes: {{\"k\":\"x {M}\"}}"),
    ] {
        let (repo, _) = shop_repo(|y| format!("{y}{line}\n"));
        let dir = repo.path();
        let n = std::fs::read_to_string(dir.join("agent.yaml"))
            .unwrap()
            .lines()
            .count();
        let mut g: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("graph.json")).unwrap())
                .unwrap();
        for node in g["nodes"].as_array_mut().unwrap() {
            if node["id"] == "desk_tools" {
                node["location"]["line"] = n.into();
            }
        }
        std::fs::write(dir.join("graph.json"), g.to_string()).unwrap();
        let (code, j) = verify_json(dir, &[]);
        assert_eq!((code, accepted(&j)), (1, 0), "{line}");
    }
}

/// The Action in a merge queue (`merge_group`): the merge group's commit holds the pull
/// request's changes, and `base-ref` defaulted to the pull request's base only, so it was empty
/// there and the pull request's own `stalwart.toml` (turning off every blocking rule) applied,
/// with no warning: a workflow that gates only in the queue passed. The queue's base commit is
/// the default there too.
#[test]
fn a_merge_queue_run_holds_the_pull_request_to_the_queues_base() {
    let (repo, base) = shop_repo(|y| y.to_string());
    let dir = repo.path();
    std::fs::write(
        dir.join("stalwart.toml"),
        "[off]\nO1 = \"the pull request says so\"\nQG011 = \"so does this\"\nQG012 = \"this\"\nQG013 = \"and this\"\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "turn the gate off"]);
    // The pull request's configuration, applied, passes the gate.
    let (code, _) = verify_json(dir, &[]);
    assert_eq!(code, 0);
    let t = tempfile::tempdir().unwrap();
    let mut job = runner::Job::new(t.path())
        .input("stalwart", env!("CARGO_BIN_EXE_stalwart"))
        .input("graph", "graph.json")
        .input("catalogue", "catalogue.json")
        .input("upload", "false");
    job.workspace = dir.to_path_buf();
    job.event = runner::Event {
        name: "merge_group".into(),
        payload: serde_json::json!({
            "merge_group": {
                "base_sha": base,
                "base_ref": "refs/heads/main",
                "head_sha": git(dir, &["rev-parse", "HEAD"]),
                "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-0123456789abcdef"
            }
        }),
    };
    let r = job.run();
    assert!(r.failed, "{}", r.log);
    assert_eq!(
        r.outputs.get("verify.outputs.gate").map(String::as_str),
        Some("failed"),
        "{}",
        r.log
    );
    assert!(
        r.log.contains("this pull request turns off O1"),
        "{}",
        r.log
    );
}

/// The base's configuration shows findings from High up (`min-severity = "high"`, a choice
/// against noise). The pull request's graph leaves obligations undecided (a search starved of
/// states stands here for a graph grown past the budget): each is a QG006 of severity Medium,
/// so `min-severity` removed them, the gate passed and no undecided obligation was listed. An
/// undecided region is never below the shown severity.
#[test]
fn min_severity_does_not_hide_an_undecided_obligation() {
    let (repo, _) = shop_repo(|y| y.to_string());
    let dir = repo.path();
    std::fs::write(dir.join("stalwart.toml"), "min-severity = \"high\"\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "show High and up"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    let (code, j) = verify_json(
        dir,
        &[
            "--base-ref",
            &base,
            "--max-states",
            "1",
            "--engine",
            "explicit",
        ],
    );
    assert_eq!(code, 1, "{}", j["weakened"]);
    let undecided = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "QG006" && f["blocks"] == true)
        .count();
    assert!(undecided > 0);
    let listed = j["weakened"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "undecided")
        .count();
    assert!(listed >= undecided, "{}", j["weakened"]);
}

/// The pull request commits, in the agent's folder, the files of a bare repository (`HEAD`,
/// `objects/`, `refs/`, a `config` whose `remote.origin.uploadpack` is a command). Git looking
/// for the repository from that folder took it for one, so the Action's fetch of a base commit
/// the checkout lacks ran the pull request's command (under `pull_request_target`, with the
/// base's token and secrets). No bare repository is found by looking: the step stops, and
/// nothing runs.
#[cfg(unix)]
#[test]
fn a_folder_that_looks_like_a_bare_repository_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let marker = dir.join("ran");
    let shop = dir.join("agents/shop");
    std::fs::create_dir_all(shop.join("objects")).unwrap();
    std::fs::create_dir_all(shop.join("refs")).unwrap();
    std::fs::write(shop.join("objects/.keep"), "").unwrap();
    std::fs::write(shop.join("refs/.keep"), "").unwrap();
    std::fs::write(shop.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        shop.join("config"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n[remote \"origin\"]\n\turl = {}\n\tuploadpack = touch {};false\n",
            dir.display(),
            marker.display()
        ),
    )
    .unwrap();
    let from = common::root().join("fixtures/shop-plain");
    for f in ["graph.json", "catalogue.json", "agent.yaml"] {
        std::fs::copy(from.join(f), shop.join(f)).unwrap();
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "the pull request"]);
    let t = tempfile::tempdir().unwrap();
    let mut job = runner::Job::new(t.path())
        .input("stalwart", env!("CARGO_BIN_EXE_stalwart"))
        .input("graph", "agents/shop/graph.json")
        .input("catalogue", "agents/shop/catalogue.json")
        .input("upload", "false");
    job.workspace = dir.to_path_buf();
    job.event = runner::Event::pull_request(
        "pull_request_target",
        "0123456789abcdef0123456789abcdef01234567",
        "someone/fork",
    );
    let r = job.run();
    assert!(
        !marker.exists(),
        "the pull request's command ran: {}",
        r.log
    );
    assert!(r.failed, "{}", r.log);
    assert_eq!(r.code, 2, "{}", r.log);
    // The verifier itself, given the base, does not take the folder for the repository either.
    let r = run_in(
        dir,
        &[
            "verify",
            "--graph",
            "agents/shop/graph.json",
            "--catalogue",
            "agents/shop/catalogue.json",
            "--base-ref",
            "HEAD",
        ],
    );
    assert!(!marker.exists());
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Defences that held, kept: text the pull request writes in its `stalwart.toml` (a reason with
/// a line break and a workflow command, Markdown and HTML) is one annotation's escaped text under
/// `--format github`, and escaped text in the job summary.
#[test]
fn a_pull_requests_words_are_escaped_in_annotations_and_the_summary() {
    let (repo, base) = shop_repo(|y| y.to_string());
    let dir = repo.path();
    std::fs::write(
        dir.join("stalwart.toml"),
        "[off]\nO1 = \"x\\n::error file=agent.yaml,line=1::forged\\n# Heading <img src=x> ![i](https://e/x.png) [l](javascript:alert(1))\"\n",
    )
    .unwrap();
    let r = run_in(
        dir,
        &[
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
            "--format",
            "github",
            "--base-ref",
            &base,
            "--summary",
            "summary.md",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .lines()
            .all(|l| !l.starts_with("::error file=agent.yaml,line=1::forged")),
        "{}",
        r.stdout
    );
    let named: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("turns off O1"))
        .collect();
    assert_eq!(named.len(), 1, "{}", r.stdout);
    assert!(
        named[0].starts_with("::warning file=stalwart.toml,line=2"),
        "{}",
        named[0]
    );
    assert!(
        named[0].contains("x%0A::error file=agent.yaml"),
        "{}",
        named[0]
    );
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let line = md.lines().find(|l| l.contains("turns off O1")).unwrap();
    // Each Markdown or HTML character is escaped with a backslash: no image, link, tag or
    // heading renders.
    for escaped in ["\\<img", "\\!\\[i\\]\\(", "\\[l\\]\\(javascript"] {
        assert!(line.contains(escaped), "{escaped} not in {line}");
    }
    assert!(
        !md.lines().any(|l| l.trim_start().starts_with("# Heading")),
        "{md}"
    );
}

/// Defences that held, kept: an export whose node points into `.git/config` or through a
/// symlink out of the repository prints nothing of either file, and no output is written
/// through a committed symlink into `.git` or out of the repository.
#[cfg(unix)]
#[test]
fn nothing_outside_the_repository_or_in_git_is_read_or_written() {
    let (repo, _) = shop_repo(|y| y.to_string());
    let dir = repo.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.yaml"), "SECRET_TOKEN: abc\n").unwrap();
    git(
        dir,
        &[
            "config",
            "http.extraheader",
            "AUTHORIZATION: basic SECRETTOKEN",
        ],
    );
    std::os::unix::fs::symlink(outside.path().join("secret.yaml"), dir.join("notes.yaml")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("out")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", dir.join("hooks")).unwrap();
    let graph = std::fs::read_to_string(dir.join("graph.json")).unwrap();
    for file in [".git/config", "notes.yaml", "./sub/../.git/config"] {
        let mut g: Value = serde_json::from_str(&graph).unwrap();
        for n in g["nodes"].as_array_mut().unwrap() {
            if n["id"] == "desk_tools" {
                n["location"]["file"] = file.into();
                n["location"]["line"] = 1.into();
            }
        }
        std::fs::write(dir.join("graph.json"), g.to_string()).unwrap();
        for format in ["text", "json", "sarif", "github"] {
            let r = run_in(
                dir,
                &[
                    "verify",
                    "--graph",
                    "graph.json",
                    "--catalogue",
                    "catalogue.json",
                    "--format",
                    format,
                ],
            );
            assert!(r.code == 1 || r.code == 2, "{file} {format}: {}", r.stderr);
            let all = format!("{}{}", r.stdout, r.stderr);
            assert!(!all.contains("SECRET"), "{file} {format}: {all}");
        }
    }
    std::fs::write(dir.join("graph.json"), &graph).unwrap();
    for target in [
        "out/x.sarif",
        "hooks/pre-commit",
        ".git/hooks/pre-push",
        "graph.json",
    ] {
        let r = run_in(
            dir,
            &[
                "verify",
                "--graph",
                "graph.json",
                "--catalogue",
                "catalogue.json",
                "--sarif",
                target,
            ],
        );
        assert_eq!(r.code, 2, "{target}: {}", r.stderr);
    }
    assert!(!outside.path().join("x.sarif").exists());
    assert!(!dir.join(".git/hooks/pre-commit").exists());
    assert!(!dir.join(".git/hooks/pre-push").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("graph.json")).unwrap(),
        graph
    );
}
