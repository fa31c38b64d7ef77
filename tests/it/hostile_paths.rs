//! Symlinks a pull request commits (issue 26, item 3): every file a run reads or writes, the ones
//! the command line names too, resolves inside the repository, or the run stops (exit 2) with a
//! message naming the path and printing nothing of the file it leads to; an output never writes
//! through a link out of the repository, nor over an input, nor into `.git`.
//!
//! Each test builds the repository as the attacker would: a temporary folder holding `repo/.git`,
//! the verifier's inputs, and a secret outside `repo` whose first line is a marker that must
//! appear in no output. The run's current directory is `repo`, as in a CI job.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use crate::common;

use common::Run as Out;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// The first line of every secret: no output may show it.
const MARKER: &str = "STALWART_SECRET_MARKER_5d1e";

impl Out {
    fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A repository in a temporary folder: `repo/` (with `.git/`, the shop's graph and catalogue)
/// and, beside it, `secret` (text every reader would quote in a syntax error) and `victim` (a
/// file an output must not overwrite).
struct Repo {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    repo: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let repo = top.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(
            repo.join(".git/config"),
            format!("{MARKER} [http] extraheader = AUTHORIZATION: basic c2VjcmV0\n"),
        )
        .unwrap();
        let plain = common::root().join("fixtures/shop-plain");
        for f in ["graph.json", "catalogue.json"] {
            std::fs::copy(plain.join(f), repo.join(f)).unwrap();
        }
        std::fs::write(top.join("secret"), format!("{MARKER} = {{[\n:\n")).unwrap();
        std::fs::write(top.join("victim"), "untouched\n").unwrap();
        Repo {
            _tmp: tmp,
            top,
            repo,
        }
    }

    /// `repo/name` made a symlink to `to`.
    fn link(&self, name: &str, to: &Path) -> PathBuf {
        let p = self.repo.join(name);
        symlink(to, &p).unwrap();
        p
    }

    fn secret(&self) -> PathBuf {
        self.top.join("secret")
    }

    fn victim(&self) -> PathBuf {
        self.top.join("victim")
    }

    /// Runs `stalwart ARGS` in `repo`.
    fn run(&self, args: &[&str]) -> Out {
        common::stalwart_in(&self.repo, args)
    }

    /// The victim still holds what it held.
    fn victim_untouched(&self) -> bool {
        std::fs::read_to_string(self.victim()).unwrap() == "untouched\n"
    }
}

/// `t` without white space and miette's frame, so a wrapped message still matches.
fn squash(t: &str) -> String {
    t.chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect()
}

fn says(haystack: &str, needle: &str) -> bool {
    squash(haystack).contains(&squash(needle))
}

/// The run was refused at `path` (exit 2, the path named, the symlink's rule said), and the
/// secret shows nowhere.
fn refused(r: &Out, path: &str, why: &str) {
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        says(&r.stderr, path),
        "the message names {path}: {}",
        r.stderr
    );
    assert!(says(&r.stderr, why), "the message says {why}: {}", r.stderr);
    assert!(!r.all().contains(MARKER), "the secret leaked: {}", r.all());
}

const GRAPH: [&str; 5] = [
    "verify",
    "--graph",
    "graph.json",
    "--catalogue",
    "catalogue.json",
];

fn with(extra: &[&str]) -> Vec<String> {
    GRAPH.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn inputs_named_on_the_command_line_do_not_follow_a_link_out() {
    let r = Repo::new();
    r.link("agent.yaml", &r.secret());
    refused(
        &r.run(&["verify", "agent.yaml"]),
        "agent.yaml",
        "outside the repository",
    );

    let r = Repo::new();
    r.link("g.json", &r.secret());
    refused(
        &r.run(&[
            "verify",
            "--graph",
            "g.json",
            "--catalogue",
            "catalogue.json",
        ]),
        "g.json",
        "outside the repository",
    );
    r.link("c.json", &r.secret());
    refused(
        &r.run(&["verify", "--graph", "graph.json", "--catalogue", "c.json"]),
        "c.json",
        "outside the repository",
    );
    // A folder on the way that is a link out of the repository.
    std::fs::create_dir(r.top.join("elsewhere")).unwrap();
    std::fs::copy(r.secret(), r.top.join("elsewhere/graph.json")).unwrap();
    r.link("sub", &r.top.join("elsewhere"));
    refused(
        &r.run(&[
            "verify",
            "--graph",
            "sub/graph.json",
            "--catalogue",
            "catalogue.json",
        ]),
        "sub/graph.json",
        "outside the repository",
    );
    for (flag, name) in [
        ("--baseline", "base.sarif"),
        ("--config", "conf.toml"),
        ("--rulebook", "rules.co"),
        ("--traces", "runs.jsonl"),
        ("--advisories", "adv.toml"),
    ] {
        r.link(name, &r.secret());
        let out = r.run(&args(&with(&[flag, name])));
        refused(&out, name, "outside the repository");
    }
}

#[test]
fn a_configuration_found_upward_does_not_follow_a_link_out() {
    let r = Repo::new();
    r.link("stalwart.toml", &r.secret());
    refused(&r.run(&GRAPH), "stalwart.toml", "outside the repository");

    let r = Repo::new();
    let py = r.top.join("py");
    std::fs::write(&py, format!("[tool.stalwart]\n{MARKER} = {{[\n")).unwrap();
    r.link("pyproject.toml", &py);
    refused(&r.run(&GRAPH), "pyproject.toml", "outside the repository");
}

#[test]
fn a_link_inside_the_repository_is_followed() {
    let r = Repo::new();
    std::fs::create_dir(r.repo.join("real")).unwrap();
    std::fs::rename(r.repo.join("graph.json"), r.repo.join("real/graph.json")).unwrap();
    r.link("graph.json", Path::new("real/graph.json"));
    r.link("reports", Path::new("real"));
    let out = r.run(&args(&with(&["-o", "reports/r.json", "--format", "json"])));
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(r.repo.join("real/r.json").is_file());
    // A path outside any repository is the user's own, as the Action's `$RUNNER_TEMP` is.
    let outside = r.top.join("out.sarif");
    let outside_s = outside.display().to_string();
    let out = r.run(&args(&with(&["--sarif", &outside_s, "-q"])));
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(std::fs::read_to_string(&outside).unwrap().contains("2.1.0"));
    // A device or a pipe the user names is written as before (git cannot commit one).
    let out = r.run(&args(&with(&["-o", "/dev/null", "--format", "json"])));
    assert_eq!(out.code, 1, "{}", out.all());
    let out = r.run(&args(&with(&["-o", "/dev/stdout", "--format", "json"])));
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stdout.contains("\"findings\""), "{}", out.all());
}

#[test]
fn outputs_do_not_write_through_a_link_out() {
    for flag in ["-o", "--sarif", "--summary", "--export-only"] {
        let r = Repo::new();
        r.link("out.file", &r.victim());
        let out = r.run(&args(&with(&[flag, "out.file"])));
        refused(&out, "out.file", "outside the repository");
        assert!(r.victim_untouched(), "{flag} wrote through the link");
    }
    // The catalogue --export-only writes beside the export.
    let r = Repo::new();
    r.link("x.catalogue.json", &r.victim());
    let out = r.run(&args(&with(&["--export-only", "x.json"])));
    refused(&out, "x.catalogue.json", "outside the repository");
    assert!(r.victim_untouched());
    assert!(!r.repo.join("x.json").exists(), "nothing half-written");
    // A folder on the way.
    let r = Repo::new();
    std::fs::create_dir(r.top.join("dir")).unwrap();
    r.link("reports", &r.top.join("dir"));
    let out = r.run(&args(&with(&["--sarif", "reports/s.sarif"])));
    refused(&out, "reports/s.sarif", "outside the repository");
    assert!(!r.top.join("dir/s.sarif").exists());
    // A dangling link whose target does not exist yet.
    let r = Repo::new();
    r.link("new.json", &r.top.join("created"));
    let out = r.run(&args(&with(&["-o", "new.json"])));
    refused(&out, "new.json", "outside the repository");
    assert!(!r.top.join("created").exists());
}

#[test]
fn rules_compile_does_not_write_through_a_link_out() {
    let policy = common::root().join("fixtures/shop/policy.co");
    let r = Repo::new();
    std::fs::copy(&policy, r.repo.join("policy.co")).unwrap();
    std::fs::create_dir(r.top.join("dir")).unwrap();
    r.link("out", &r.top.join("dir"));
    let out = r.run(&["rules", "compile", "policy.co", "--out", "out"]);
    refused(&out, "record.json", "outside the repository");
    assert!(!r.top.join("dir/record.json").exists());
    std::fs::create_dir(r.repo.join("out2")).unwrap();
    symlink(r.victim(), r.repo.join("out2/record.json")).unwrap();
    let out = r.run(&["rules", "compile", "policy.co", "--out", "out2"]);
    refused(&out, "record.json", "outside the repository");
    assert!(r.victim_untouched());
    let out = r.run(&["rules", "compile", "policy.co", "--out", "fine"]);
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn an_output_never_overwrites_an_input() {
    let r = Repo::new();
    let before = std::fs::read(r.repo.join("graph.json")).unwrap();
    for flag in ["-o", "--sarif", "--summary", "--export-only"] {
        for name in ["graph.json", "./sub/../graph.json", "catalogue.json"] {
            std::fs::create_dir_all(r.repo.join("sub")).unwrap();
            let out = r.run(&args(&with(&[flag, name])));
            assert_eq!(out.code, 2, "{flag} {name}: {}", out.all());
            assert!(says(&out.stderr, "an input of this run"), "{}", out.stderr);
        }
    }
    // Another name for the same file: a hard link, and a link inside the repository.
    std::fs::hard_link(r.repo.join("graph.json"), r.repo.join("hard.json")).unwrap();
    r.link("soft.json", Path::new("graph.json"));
    for name in ["hard.json", "soft.json"] {
        let out = r.run(&args(&with(&["-o", name])));
        assert_eq!(out.code, 2, "{name}: {}", out.all());
        assert!(says(&out.stderr, "an input of this run"), "{}", out.stderr);
    }
    // A bad input's error, written as JSON to -o, is not written over the input either.
    std::fs::write(r.repo.join("bad.json"), "{").unwrap();
    let out = r.run(&[
        "verify",
        "--graph",
        "bad.json",
        "--catalogue",
        "catalogue.json",
        "--format",
        "json",
        "-o",
        "bad.json",
    ]);
    assert_eq!(out.code, 2, "{}", out.all());
    assert_eq!(
        std::fs::read_to_string(r.repo.join("bad.json")).unwrap(),
        "{"
    );
    assert_eq!(std::fs::read(r.repo.join("graph.json")).unwrap(), before);
}

#[test]
fn nothing_in_git_is_read_or_written() {
    let r = Repo::new();
    for flag in ["-o", "--sarif", "--summary"] {
        let out = r.run(&args(&with(&[flag, ".git/hooks-pre-commit"])));
        refused(&out, ".git/hooks-pre-commit", ".git");
        assert!(!r.repo.join(".git/hooks-pre-commit").exists());
    }
    let out = r.run(&args(&with(&["--baseline", ".git/config"])));
    refused(&out, ".git/config", ".git");
    // A link into .git is refused as resolved.
    r.link("conf", Path::new(".git/config"));
    let out = r.run(&args(&with(&["--baseline", "conf"])));
    refused(&out, "conf", ".git");
}

#[test]
fn an_export_location_into_git_or_out_is_never_read() {
    let r = Repo::new();
    r.link("app.py", &r.secret());
    let graph = std::fs::read_to_string(r.repo.join("graph.json")).unwrap();
    let mut g: serde_json::Value = serde_json::from_str(&graph).unwrap();
    let nodes = g["nodes"].as_array_mut().unwrap();
    let files = [".git/config", "app.py", "./.git/config", "../secret"];
    for (i, n) in nodes.iter_mut().enumerate() {
        n["location"] = serde_json::json!({"file": files[i % files.len()], "line": 1});
    }
    std::fs::write(r.repo.join("graph.json"), g.to_string()).unwrap();
    for format in ["text", "json", "sarif", "github", "concise"] {
        let out = r.run(&args(&with(&["--format", format])));
        assert!(out.code == 0 || out.code == 1, "{format}: {}", out.all());
        assert!(
            !out.all().contains(MARKER),
            "{format} leaked: {}",
            out.all()
        );
        assert!(!out.all().contains("c2VjcmV0"), "{format} leaked the token");
    }
}

#[test]
fn catalogue_from_mcp_reads_and_writes_inside_the_repository() {
    let r = Repo::new();
    let tools = common::root().join("fixtures/mcp/tools-list.json");
    std::fs::copy(&tools, r.repo.join("tools.json")).unwrap();
    r.link("t.json", &r.secret());
    let out = r.run(&["catalogue", "from-mcp", "t.json"]);
    refused(&out, "t.json", "outside the repository");
    r.link("cat.json", &r.victim());
    let out = r.run(&["catalogue", "from-mcp", "tools.json", "-o", "cat.json"]);
    refused(&out, "cat.json", "outside the repository");
    assert!(r.victim_untouched());
    let out = r.run(&["catalogue", "from-mcp", "tools.json", "-o", "tools.json"]);
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(says(&out.stderr, "an input of this run"), "{}", out.stderr);
    assert_eq!(
        std::fs::read(r.repo.join("tools.json")).unwrap(),
        std::fs::read(&tools).unwrap()
    );
}
