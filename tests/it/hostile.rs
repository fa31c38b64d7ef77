//! A hostile pull request (issue 14): every file the verifier reads in CI is the pull request's,
//! so each input below is crafted as an attacker would write it, by the test itself, and each is
//! refused with a located error or neutralised: nothing read outside the repository, no panic, no
//! hang, no unbounded read, nothing a terminal would act on.
//!
//! Every run has a deadline (see [`run`]): a read that blocks on a FIFO fails the test instead of
//! hanging it. The deadline is generous (a slow, busy machine), not a timing assertion.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run gave.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A canary the child's environment holds: no report may print it.
const CANARY: &str = "STALWART_CANARY_7f3a9c";

/// Runs `stalwart ARGS` from the crate root, killed after a deadline of two minutes.
fn run(args: &[&str]) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stalwart"))
        .args(args)
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .env("STALWART_TEST_SECRET", CANARY)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("stalwart {args:?} did not finish: a read blocks or does not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Out {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&t_out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap()).into_owned(),
    }
}

/// `t` without white space and miette's frame (`│`), so a message miette wrapped anywhere (even
/// inside a path) still matches.
fn squash(t: &str) -> String {
    t.chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect()
}

/// True when `haystack`, as miette wrapped it, says `needle`.
fn says(haystack: &str, needle: &str) -> bool {
    squash(haystack).contains(&squash(needle))
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The shop in a folder of its own, its agent.yaml's `rulebook:` line replaced by `rulebook`.
/// Returns the folder and agent.yaml's path.
fn shop(rulebook: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = common::root().join("fixtures/shop");
    for f in ["shop.catalogue.yaml", "policy.co"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let agent = std::fs::read_to_string(src.join("agent.yaml")).unwrap();
    let agent: String = agent
        .lines()
        .map(|l| {
            if l.starts_with("rulebook:") {
                format!("rulebook: {rulebook}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let p = dir.path().join("agent.yaml");
    std::fs::write(&p, agent).unwrap();
    (dir, p)
}

/// The line of agent.yaml that names the rulebook.
fn rulebook_line(agent: &Path) -> usize {
    std::fs::read_to_string(agent)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("rulebook:"))
        .unwrap()
        + 1
}

/// True when the error on stderr is located at agent.yaml's `rulebook:` line, column 11.
fn at_rulebook_line(r: &Out, agent: &Path) -> bool {
    says(
        &r.stderr,
        &format!("agent.yaml:{}:11:", rulebook_line(agent)),
    )
}

fn mkfifo(p: &Path) -> bool {
    Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

/// `rulebook:` pointing out of the repository is refused at its line, printing nothing of it.
#[test]
fn a_rulebook_outside_the_repository_is_refused_at_its_line() {
    let passwd_line = std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string));
    for target in [
        "../../../../../../../../etc/passwd",
        "/etc/passwd",
        "/proc/self/environ",
    ] {
        let (_d, agent) = shop(target);
        let r = run(&["verify", &s(&agent)]);
        assert_eq!(r.code, 2, "{target}: {}", r.all());
        let want = format!(
            "agent.yaml:{}:11: cannot read the rulebook",
            rulebook_line(&agent)
        );
        assert!(says(&r.stderr, &want), "{target}: {}", r.stderr);
        assert!(says(&r.stderr, "outside the folder"), "{}", r.stderr);
        assert!(!r.all().contains(CANARY), "{target} leaked the environment");
        if let Some(l) = &passwd_line {
            assert!(!r.all().contains(l.as_str()), "{target} leaked /etc/passwd");
        }
        assert!(!r.stdout.contains("QG005"), "no finding quotes the file");
    }

    // A symlink in the repository to a file outside it.
    let (d, agent) = shop("./policy.co");
    std::fs::remove_file(d.path().join("policy.co")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", d.path().join("policy.co")).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(says(&r.stderr, "resolves to /proc/"), "{}", r.stderr);
    assert!(!r.all().contains(CANARY));

    // A `.co` file inside a rulebook folder that is a symlink out of the repository.
    let (d, agent) = shop("./rails");
    let rails = d.path().join("rails");
    std::fs::create_dir(&rails).unwrap();
    std::fs::copy(d.path().join("policy.co"), rails.join("a.co")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", rails.join("b.co")).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        at_rulebook_line(&r, &agent) && says(&r.stderr, "b.co"),
        "{}",
        r.stderr
    );
    assert!(!r.all().contains(CANARY));

    // The rulebook folder itself a symlink out of the repository.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.co"), "define flow x\n  bot hello\n").unwrap();
    let (d, agent) = shop("./rails");
    std::os::unix::fs::symlink(outside.path(), d.path().join("rails")).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(says(&r.stderr, "outside the folder"), "{}", r.stderr);

    // A rulebook named on the command line is the user's own, but a symlink out of its folder
    // (which the pull request controls) is still refused.
    let (d, _agent) = shop("./policy.co");
    let rails = d.path().join("rails");
    std::fs::create_dir(&rails).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", rails.join("b.co")).unwrap();
    let r = run(&[
        "rules",
        "compile",
        &s(&rails),
        "--out",
        &s(&d.path().join("out")),
    ]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        says(&r.stderr, "b.co") && says(&r.stderr, "outside"),
        "{}",
        r.stderr
    );
    assert!(!r.all().contains(CANARY));
}

/// Devices, FIFOs and files past the size limit are refused quickly: for agent.yaml's
/// `rulebook:` (at its line), the `config.yml` beside a rulebook, `--baseline`, `--advisories`,
/// `--traces` and a catalogue.
#[test]
fn special_and_huge_files_are_refused_not_read() {
    // `rulebook:` naming a device in the repository (a symlink to /dev/zero).
    let (d, agent) = shop("./zero.co");
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.co")).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(at_rulebook_line(&r, &agent), "{}", r.stderr);

    // A `config.yml` beside the rulebook that points at a device, is a FIFO, a folder or too
    // large is an error, never ignored.
    let (d, agent) = shop("./policy.co");
    let config = d.path().join("config.yml");
    std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        says(&r.stderr, "config.yml") && says(&r.stderr, "resolves to /dev/zero"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(&config).unwrap();
    if mkfifo(&config) {
        let r = run(&["verify", &s(&agent)]);
        assert_eq!(r.code, 2, "{}", r.all());
        assert!(says(&r.stderr, "a FIFO"), "{}", r.stderr);
        std::fs::remove_file(&config).unwrap();
    }
    std::fs::create_dir(&config).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    std::fs::remove_dir(&config).unwrap();
    let big = std::fs::File::create(&config).unwrap();
    big.set_len(65 << 20).unwrap(); // sparse: nothing is written
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(says(&r.stderr, "larger than 64 MiB"), "{}", r.stderr);
    std::fs::remove_file(&config).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &config).unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(says(&r.stderr, "outside the folder"), "{}", r.stderr);

    // Files the command line names: bounded the same way.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let have_fifo = mkfifo(&fifo);
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(447 << 20)
        .unwrap();
    let shop_yaml = "fixtures/shop/agent.yaml";
    let mut specials = vec!["/dev/zero".to_string(), s(&huge)];
    if have_fifo {
        specials.push(s(&fifo));
    }
    for special in &specials {
        for flag in ["--baseline", "--advisories", "--traces", "--rulebook"] {
            let r = run(&["verify", shop_yaml, flag, special]);
            assert_eq!(r.code, 2, "{flag} {special}: {}", r.all());
            assert!(
                says(&r.stderr, "not a regular file") || says(&r.stderr, "larger than"),
                "{flag} {special}: {}",
                r.stderr
            );
        }
        let r = run(&[
            "verify",
            "--graph",
            "fixtures/shop-plain/graph.json",
            "--catalogue",
            special,
        ]);
        assert_eq!(r.code, 2, "catalogue {special}: {}", r.all());
    }
}

/// An error far along one line (a minified export) renders a clipped snippet at the right
/// column instead of panicking in the renderer; a finding there, and its replay, too.
#[test]
fn an_error_past_column_65535_renders_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("c.json");
    std::fs::write(&cat, r#"{"tools": {"pay": {"kind": "write"}}}"#).unwrap();
    let name = "n".repeat(70_000);
    let bad = format!(
        r#"{{"format": "qls-graph/1", "name": "{name}", "nodes": [{{"id": "__start__", "kind": "start"}}, {{"id": "a", "kind": "toolz"}}, {{"id": "__end__", "kind": "end"}}], "edges": []}}"#
    );
    let g = dir.path().join("g.json");
    std::fs::write(&g, &bad).unwrap();
    let col = bad.find("\"toolz\"").unwrap() + 1;
    let r = run(&["verify", "--graph", &s(&g), "--catalogue", &s(&cat)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        says(
            &r.stderr,
            &format!("g.json:1:{col}: unknown node kind 'toolz'")
        ),
        "{}",
        r.stderr
    );
    assert!(
        says(&r.stderr, &format!("[{}:1:{col}]", s(&g))),
        "{}",
        r.stderr
    );
    assert!(says(&r.stderr, "…"), "the line is clipped: {}", r.stderr);
    assert!(r.stderr.lines().all(|l| l.chars().count() < 600));

    // A valid one-line export whose nodes lie past column 65,535: findings and --replay.
    let good = format!(
        r#"{{"format": "qls-graph/1", "name": "{name}", "nodes": [{{"id": "__start__", "kind": "start"}}, {{"id": "agent", "kind": "model", "tools": ["pay"]}}, {{"id": "tools", "kind": "tools_plain", "tools": ["pay"]}}, {{"id": "__end__", "kind": "end"}}], "edges": [{{"from": "__start__", "kind": "fixed", "destinations": ["agent"]}}, {{"from": "agent", "kind": "conditional", "destinations": ["tools", "__end__"]}}, {{"from": "tools", "kind": "fixed", "destinations": ["agent"]}}]}}"#
    );
    std::fs::write(&g, &good).unwrap();
    let r = run(&["verify", "--graph", &s(&g), "--catalogue", &s(&cat)]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.stdout.contains("QG001"), "{}", r.stdout);
    let r = run(&[
        "verify",
        "--graph",
        &s(&g),
        "--catalogue",
        &s(&cat),
        "--replay",
        "1",
    ]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("Reproduced: step"), "{}", r.stdout);
}

/// Text a terminal would act on never reaches an output or an error raw.
#[test]
fn control_characters_are_escaped_everywhere() {
    let raw = |t: &str| t.chars().any(|c| c != '\n' && stalwart::is_unsafe(c));

    // A Colang bot message named with ESC and an OSC 8 hyperlink, in every format.
    let (d, agent) = shop("./policy.co");
    let forged =
        "\u{1b}]8;;https://evil.invalid\u{7}click\u{1b}]8;;\u{7}\u{1b}[2J\u{9b}31m\u{2028}";
    std::fs::write(
        d.path().join("policy.co"),
        format!(
            "define flow refunds\n  if $order_paid\n    execute refund_card\n  else\n    bot {forged}\n"
        ),
    )
    .unwrap();
    for format in ["text", "github", "json", "sarif"] {
        let r = run(&["verify", &s(&agent), "--format", format]);
        assert!(r.code == 0 || r.code == 1, "{format}: {}", r.all());
        assert!(!raw(&r.stdout), "{format} prints a raw control character");
        assert!(r.stdout.contains("QG009"), "{format}: {}", r.stdout);
    }

    // A guard holding ESC[2J and NUL, echoed in the error escaped.
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("c.json");
    std::fs::write(&cat, r#"{"tools": {"pay": {"kind": "write"}}}"#).unwrap();
    let g = dir.path().join("g.json");
    std::fs::write(
        &g,
        r#"{"format": "qls-graph/1", "state": {"f": {"scope": "turn"}}, "nodes": [{"id": "__start__", "kind": "start"}, {"id": "agent", "kind": "model", "tools": ["pay"]}, {"id": "tools", "kind": "tools_plain", "tools": ["pay"]}, {"id": "__end__", "kind": "end"}], "edges": [{"from": "__start__", "kind": "fixed", "destinations": ["agent"]}, {"from": "agent", "kind": "conditional", "destinations": ["tools", "__end__"], "guard": "f && \u001b[2J\u0000"}, {"from": "tools", "kind": "fixed", "destinations": ["agent"]}]}"#,
    )
    .unwrap();
    let r = run(&["verify", "--graph", &s(&g), "--catalogue", &s(&cat)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        !raw(&r.stderr),
        "raw control characters on stderr: {:?}",
        r.stderr
    );
    assert!(says(&r.stderr, "\\u{1b}[2J"), "{}", r.stderr);

    // U+2028 in a tool id is refused, and shown escaped.
    let good = std::fs::read_to_string(&g)
        .unwrap()
        .replace(r#", "guard": "f && \u001b[2J\u0000""#, "");
    std::fs::write(&g, good).unwrap();
    std::fs::write(
        &cat,
        "{\"tools\": {\"pay\u{2028}x\": {\"kind\": \"write\"}}}",
    )
    .unwrap();
    let r = run(&["verify", "--graph", &s(&g), "--catalogue", &s(&cat)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(says(&r.stderr, "line separator"), "{}", r.stderr);
    assert!(!raw(&r.stderr), "{:?}", r.stderr);
}

/// Errors that had no line name one: a file that is not UTF-8 (the line of its first bad byte,
/// or the key that named it), and the whole-graph limit (the node's line).
#[test]
fn errors_name_a_line() {
    let (d, agent) = shop("./policy.co");
    std::fs::write(
        d.path().join("policy.co"),
        b"define flow x\n  bot \xff\xfe\n",
    )
    .unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        at_rulebook_line(&r, &agent) && says(&r.stderr, "line 2, column 7"),
        "{}",
        r.stderr
    );
    std::fs::write(&agent, b"agents:\n  desk: {model: m\xff}\n").unwrap();
    let r = run(&["verify", &s(&agent)]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        says(&r.stderr, "agent.yaml:2:18: cannot read"),
        "{}",
        r.stderr
    );

    // Subgraphs that multiply past 200,000 nodes: the error names the node where it crossed.
    let dir = tempfile::tempdir().unwrap();
    let level = |name: &str, next: Option<&str>| {
        let mut nodes = vec![r#"{"id": "__start__", "kind": "start"}"#.to_string()];
        let mut edges = Vec::new();
        let mut prev = "__start__".to_string();
        for i in 0..10 {
            match next {
                Some(n) => nodes.push(format!(
                    r#"{{"id": "s{i}", "kind": "subgraph", "graph": "{n}"}}"#
                )),
                None => nodes.push(format!(r#"{{"id": "s{i}", "kind": "step"}}"#)),
            }
            edges.push(format!(
                r#"{{"from": "{prev}", "kind": "fixed", "destinations": ["s{i}"]}}"#
            ));
            prev = format!("s{i}");
        }
        nodes.push(r#"{"id": "__end__", "kind": "end"}"#.to_string());
        edges.push(format!(
            r#"{{"from": "{prev}", "kind": "fixed", "destinations": ["__end__"]}}"#
        ));
        format!(
            "\"{name}\": {{\"nodes\": [\n{}], \"edges\": [{}]}}",
            nodes.join(",\n"),
            edges.join(", ")
        )
    };
    let subs: Vec<String> = (1..6)
        .map(|k| {
            level(
                &format!("l{k}"),
                (k < 5).then(|| format!("l{}", k + 1)).as_deref(),
            )
        })
        .collect();
    let top = level("top", Some("l1"));
    let top_body = top.trim_start_matches("\"top\": {").trim_end_matches('}');
    let g = dir.path().join("g.json");
    std::fs::write(
        &g,
        format!(
            "{{\"format\": \"qls-graph/1\", {top_body}, \"subgraphs\": {{{}}}}}",
            subs.join(",\n")
        ),
    )
    .unwrap();
    let cat = dir.path().join("c.json");
    std::fs::write(&cat, r#"{"tools": {}}"#).unwrap();
    let r = run(&["verify", "--graph", &s(&g), "--catalogue", &s(&cat)]);
    assert_eq!(r.code, 2, "{}", r.all());
    // Located at the node where the limit was crossed, its id labelled.
    assert!(
        says(&r.stderr, "g.json:") && says(&r.stderr, "more than 200000 nodes"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("╰── here"),
        "the node is labelled: {}",
        r.stderr
    );
}

/// A baseline that starts with a byte-order mark is read, as every other input is.
#[test]
fn a_baseline_with_a_byte_order_mark_is_read() {
    let j = run(&["verify", "fixtures/shop/agent.yaml", "--format", "json"]);
    assert_eq!(j.code, 0);
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b.json");
    std::fs::write(&b, format!("\u{feff}{}", j.stdout)).unwrap();
    let r = run(&["verify", "fixtures/shop/agent.yaml", "--baseline", &s(&b)]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout.contains("2 findings it already has are not shown"),
        "{}",
        r.stdout
    );
}

mod path_rule {
    //! The path rule as a property: random relative paths (with `..`, `.`, and symlinks in and
    //! out of the folder) are resolved by a small model of the file tree, written apart from the
    //! reader, and [`stalwart::confine`] must accept exactly those the model resolves to a
    //! file or folder under the naming file's folder, refuse the others as outside, and report
    //! the ones that do not exist.

    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;
    use stalwart::{confine, read_text_limited, ReadError};

    #[derive(Clone, Debug)]
    enum Entry {
        Dir,
        File,
        Link(&'static str),
    }

    /// The tree under the temporary root, relative paths to entries.
    fn tree() -> BTreeMap<&'static str, Entry> {
        BTreeMap::from([
            ("base", Entry::Dir),
            ("base/a", Entry::Dir),
            ("base/a/f", Entry::File),
            ("base/f2", Entry::File),
            ("base/lo", Entry::Link("../out")),
            ("base/a/li", Entry::Link("..")),
            ("base/lf", Entry::Link("../out/g")),
            ("base/a/lb", Entry::Link("../f2")),
            ("out", Entry::Dir),
            ("out/g", Entry::File),
            ("out/back", Entry::Link("../base/a")),
        ])
    }

    fn build(root: &Path) {
        for (p, e) in tree() {
            let full = root.join(p);
            match e {
                Entry::Dir => std::fs::create_dir_all(&full).unwrap(),
                Entry::File => std::fs::write(&full, "x").unwrap(),
                Entry::Link(_) => {}
            }
        }
        for (p, e) in tree() {
            if let Entry::Link(t) = e {
                std::os::unix::fs::symlink(t, root.join(p)).unwrap();
            }
        }
    }

    /// Above the temporary root: folders the model does not know (outside, and they exist).
    const ABOVE: &str = "<above>";

    /// The model's resolution of `rel` from `base`: `Some(components from the root)` when it
    /// exists, physical `..` after each symlink, as the operating system resolves paths.
    /// `[ABOVE]` for a path that ends above the temporary root.
    fn resolve(rel: &[&str]) -> Option<Vec<String>> {
        let t = tree();
        let mut at: Vec<String> = vec!["base".into()];
        let mut todo: Vec<String> = rel.iter().rev().map(|s| s.to_string()).collect();
        let mut hops = 0;
        while let Some(c) = todo.pop() {
            if at.first().map(String::as_str) == Some(ABOVE) {
                // Only `..` and `.` are known to exist above the root.
                if c == "." || c == ".." {
                    continue;
                }
                return Some(vec![ABOVE.into(), "?".into()]);
            }
            // Every component, `.` and `..` included, is looked up in a folder.
            let here = at.join("/");
            if !here.is_empty() && !matches!(t.get(here.as_str()), Some(Entry::Dir)) {
                return None;
            }
            match c.as_str() {
                "." => continue,
                ".." => {
                    if at.pop().is_none() {
                        at = vec![ABOVE.into()];
                    }
                    continue;
                }
                _ => {}
            }
            let mut next = at.clone();
            next.push(c);
            match t.get(next.join("/").as_str())? {
                Entry::Dir | Entry::File => at = next,
                Entry::Link(target) => {
                    hops += 1;
                    if hops > 40 {
                        return None;
                    }
                    for part in target.split('/').rev() {
                        todo.push(part.to_string());
                    }
                }
            }
        }
        Some(at)
    }

    fn component() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a", "f", "f2", "g", "lo", "li", "lf", "lb", "back", "out", "..", ".",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn confine_follows_the_model(rel in prop::collection::vec(component(), 1..6)) {
            let root = tempfile::tempdir().unwrap();
            // The current directory is inside the workspace too: the model assumes it is not an
            // ancestor of the temporary folder (it is the crate root).
            let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
            prop_assume!(!root.path().canonicalize().unwrap().starts_with(&cwd));
            build(root.path());
            let base = root.path().join("base");
            let named_by = base.join("agent.yaml");
            let path: PathBuf = rel.iter().fold(base.clone(), |p, c| p.join(c));
            let got = confine(&path, &named_by);
            let model = resolve(&rel);
            // A name looked up above the temporary root: what is there is not the model's.
            prop_assume!(model.as_ref().is_none_or(|m| m.len() != 2 || m[0] != ABOVE));
            match model {
                None => prop_assert!(
                    matches!(got, Err(ReadError::NotFound) | Err(ReadError::Io(_))),
                    "{rel:?}: the model says missing, got {got:?}"
                ),
                Some(at) => {
                    let inside = at.first().map(String::as_str) == Some("base");
                    if inside {
                        prop_assert!(got.is_ok(), "{rel:?} resolves inside to {at:?}, got {got:?}");
                    } else {
                        prop_assert!(
                            matches!(got, Err(ReadError::Outside(_))),
                            "{rel:?} resolves outside to {at:?}, got {got:?}"
                        );
                    }
                }
            }
        }

        #[test]
        fn the_size_cap_holds(len in 0usize..200, limit in 0u64..200) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("t");
            std::fs::write(&p, "y".repeat(len)).unwrap();
            let got = read_text_limited(&p, limit);
            if len as u64 <= limit {
                prop_assert_eq!(got.unwrap().len(), len);
            } else {
                prop_assert!(matches!(got, Err(ReadError::TooLarge(l)) if l == limit));
            }
        }
    }
}
