//! SPEC 8.1, the Action's part: on a pull request the verifier is given the base commit
//! (`--base-ref SHA`, taken from the event through `env:`), so it reads the configuration and the
//! baseline as they are there; a shallow checkout's missing base is fetched, and one that cannot
//! be fetched stops the step with an error saying how to fix it, never a silent fall-back to the
//! pull request's own configuration. The verifier is a fake that logs its arguments.

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with two commits: the base (a `stalwart.toml`), and the pull request's head,
/// which lowers a limit in it. Returns the repository and the base commit. `None`, saying so,
/// without git.
fn repository(t: &Path) -> Option<(PathBuf, String)> {
    if Command::new("git").arg("--version").output().is_err() {
        common::skip("git is not installed: the base-ref tests are not run");
        return None;
    }
    let repo = t.join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("agent.yaml"), "agent: base\n").expect("write");
    std::fs::write(repo.join("stalwart.toml"), "max-states = 1000000\n").expect("write");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join("stalwart.toml"), "max-states = 1\n").expect("write");
    git(&repo, &["commit", "-q", "-am", "head: lower the limit"]);
    Some((repo, base))
}

/// The action in `workspace` on `event`, with the fake verifier.
fn run(t: &Path, workspace: &Path, event: Event, more: &[(&str, &str)]) -> (Ran, Vec<Vec<String>>) {
    let (bin, calls) = fake_verifier(t);
    let _ = std::fs::remove_file(&calls);
    let mut j = Job::new(t)
        .input("stalwart", &bin.to_string_lossy())
        .input("agent", "agent.yaml");
    for (k, v) in more {
        j = j.input(k, v);
    }
    j.workspace = workspace.to_path_buf();
    j.event = event;
    let r = j.run();
    (r, verify_calls(&calls))
}

/// `--base-ref` and the value after it, if the call has them.
fn base_ref(call: &[String]) -> Option<&str> {
    let at = call.iter().position(|a| a == "--base-ref")?;
    call.get(at + 1).map(String::as_str)
}

#[test]
fn a_pull_request_passes_its_base_commit_and_a_push_does_not() {
    let t = temp();
    let Some((repo, base)) = repository(t.path()) else {
        return;
    };
    for name in ["pull_request", "pull_request_target"] {
        let (r, calls) = run(
            t.path(),
            &repo,
            Event::pull_request(name, &base, runner::REPOSITORY),
            &[],
        );
        assert!(!r.failed, "{}", r.log);
        assert_eq!(calls.len(), 1, "{}", r.log);
        assert_eq!(
            base_ref(&calls[0]),
            Some(base.as_str()),
            "{name}: {calls:?}"
        );
        assert!(!r.log.contains("fetching"), "the base was there: {}", r.log);
    }
    let (r, calls) = run(t.path(), &repo, Event::push(), &[]);
    assert!(!r.failed, "{}", r.log);
    assert_eq!(calls.len(), 1);
    assert_eq!(base_ref(&calls[0]), None, "{calls:?}");
    assert!(!r.log.contains("::warning"), "{}", r.log);
    // A workflow may name the commit itself, on any event.
    let (r, calls) = run(t.path(), &repo, Event::push(), &[("base-ref", &base)]);
    assert!(!r.failed, "{}", r.log);
    assert_eq!(base_ref(&calls[0]), Some(base.as_str()));
    // A workflow that empties it on a pull request is told what that means.
    let event = Event::pull_request("pull_request", &base, runner::REPOSITORY);
    let (r, calls) = run(t.path(), &repo, event, &[("base-ref", "")]);
    assert!(!r.failed, "{}", r.log);
    assert_eq!(base_ref(&calls[0]), None);
    assert!(
        r.log
            .contains("::warning::base-ref is empty on a pull request"),
        "{}",
        r.log
    );
}

/// actions/checkout's default (depth 1) lacks the base commit: the step fetches it from origin.
#[test]
fn a_shallow_checkout_fetches_the_base_commit() {
    let t = temp();
    let Some((repo, base)) = repository(t.path()) else {
        return;
    };
    let clone = t.path().join("clone");
    let url = format!("file://{}", repo.display());
    git(
        t.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            &clone.to_string_lossy(),
        ],
    );
    let present = |dir: &Path| {
        Command::new("git")
            .args(["cat-file", "-e", &format!("{base}^{{commit}}")])
            .current_dir(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git")
            .success()
    };
    assert!(!present(&clone), "the shallow clone has only the head");
    let event = Event::pull_request("pull_request", &base, runner::REPOSITORY);
    let (r, calls) = run(t.path(), &clone, event, &[]);
    assert!(!r.failed, "{}", r.log);
    assert!(r.log.contains("fetching it from origin"), "{}", r.log);
    assert!(present(&clone));
    assert_eq!(base_ref(&calls[0]), Some(base.as_str()));
}

/// A base commit that cannot be had stops the verify step with an error that says how to fix
/// it; the verifier never runs on the pull request's own configuration, nothing is uploaded.
#[test]
fn a_base_commit_that_cannot_be_fetched_is_an_error() {
    let t = temp();
    let Some((repo, _)) = repository(t.path()) else {
        return;
    };
    let clone = t.path().join("clone");
    let url = format!("file://{}", repo.display());
    git(
        t.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            &clone.to_string_lossy(),
        ],
    );
    let missing = "e".repeat(40);
    for workspace in [&repo, &clone] {
        let event = Event::pull_request("pull_request", &missing, runner::REPOSITORY);
        let (r, calls) = run(t.path(), workspace, event, &[]);
        assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
        assert!(
            r.log.contains(&format!(
                "::error::the base commit {missing} is not in the checkout and could not be fetched"
            )) && r.log.contains("fetch-depth: 0"),
            "{}",
            r.log
        );
        assert!(calls.is_empty(), "the verifier ran: {calls:?}");
        assert_eq!(status(&r, UPLOAD), Status::Skipped);
        assert_eq!(status(&r, "gate"), Status::Skipped);
    }
    // A base-ref that is not in a git checkout at all.
    let plain = t.path().join("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    std::fs::write(plain.join("agent.yaml"), "agent: x\n").expect("write");
    let event = Event::pull_request("pull_request", &missing, runner::REPOSITORY);
    let (r, calls) = run(t.path(), &plain, event, &[]);
    assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
    assert!(r.log.contains("is not in a git checkout"), "{}", r.log);
    assert!(calls.is_empty());
}

/// A `base-ref` that git would read as an option (`--upload-pack=...` runs a program) is refused
/// before git sees it.
#[test]
fn a_base_ref_that_reads_as_an_option_is_refused() {
    let t = temp();
    let Some((repo, _)) = repository(t.path()) else {
        return;
    };
    let pwned = t.path().join("pwned");
    let evil = format!("--upload-pack=touch {}", pwned.display());
    let (r, calls) = run(t.path(), &repo, Event::push(), &[("base-ref", &evil)]);
    assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
    assert!(r.log.contains("is not a git revision"), "{}", r.log);
    assert!(!pwned.exists());
    assert!(calls.is_empty());
    // A line break would start a workflow command of its own if the value were echoed.
    let (r, calls) = run(
        t.path(),
        &repo,
        Event::push(),
        &[("base-ref", "HEAD\n::warning::injected")],
    );
    assert_eq!(status(&r, "verify"), Status::Failed(2), "{}", r.log);
    assert!(!r.log.contains("::warning::injected"), "{}", r.log);
    assert!(calls.is_empty());
}

/// End to end with this build's verifier: a pull request that passes the plain shop's gate by
/// turning O1, O6 and O7 off and lowering a limit in `stalwart.toml`. The base's configuration (none)
/// applies, so the gate still fails; the SARIF is uploaded; each change is a `::warning` on the
/// line that makes it and is listed in the job summary.
#[test]
fn a_pull_request_that_weakens_its_configuration_still_fails_and_says_so() {
    let t = temp();
    if Command::new("git").arg("--version").output().is_err() {
        common::skip("git is not installed: the base-ref tests are not run");
        return;
    }
    let repo = t.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let plain = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/shop-plain");
    for f in ["graph.json", "catalogue.json", "agent.yaml"] {
        std::fs::copy(plain.join(f), repo.join(f)).expect("copy");
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(
        repo.join("stalwart.toml"),
        "max-states = 1\n\n[off]\nO1 = \"not here\"\nO6 = \"nor here\"\nO7 = \"nor here\"\n",
    )
    .expect("write");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "head: turn the gate green"]);
    let graph = |j: Job| {
        let mut j = j
            .input("stalwart", BIN)
            .input("graph", "graph.json")
            .input("catalogue", "catalogue.json");
        j.workspace = repo.clone();
        j
    };
    // On a push the pull request's own configuration applies: that is what a push is.
    let r = graph(Job::new(t.path())).run();
    assert_eq!(r.outputs["verify.outputs.gate"], "passed", "{}", r.log);
    // On the pull request, the base's applies.
    let mut j = graph(Job::new(t.path()));
    j.event = Event::pull_request("pull_request", &base, runner::REPOSITORY);
    let r = j.run();
    assert_eq!(r.outputs["verify.outputs.gate"], "failed", "{}", r.log);
    assert_eq!(status(&r, UPLOAD), Status::WouldRun);
    assert!(!results(&r.step(UPLOAD).with["sarif_file"]).is_empty());
    assert!(r.failed, "the Gate step fails the job");
    for line in [1, 4, 5, 6] {
        let warning = format!("::warning file=stalwart.toml,line={line},col=1,title=stalwart-verify%3A the proof is weakened (pull_request)::this pull request");
        assert!(r.log.contains(&warning), "{warning}\n{}", r.log);
    }
    assert!(
        r.summary
            .contains("**The proof is weakened** (4 weakenings):"),
        "{}",
        r.summary
    );
    assert!(r.summary.contains("turns off O1"), "{}", r.summary);
}
