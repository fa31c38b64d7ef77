//! Python tool modules (agent.yaml `tools: - python: mod`) and the code checks over them.
//!
//! - `fixtures/shop-python/`: the shop with its five tools in `shop/tools.py` gives the seed's
//!   report, with the `Code checks:` line, and QG105 points back at `def refund_card`.
//! - `fixtures/code-checks/`: each code check (CC001-CC003, `rules/code_checks.toml`) fires once,
//!   at its line; the near misses beside them do not; the gate is not changed.
//! - `fixtures/errors/python/<case>/`: what cannot be read statically is exit 2 naming
//!   `tools.py:LINE:COL` with the fix.
//! - `fixtures/python-forms/`: the decorator forms, the argument schema, the docstring.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use miette::Diagnostic;
use stalwart::checks::code;
use stalwart::input::load_agent_yaml;
use stalwart::Finding;
use stalwart::ToolKind;

/// The seed's shop report (chapter 30 of `../shared/seeds/000_77bd99207bb7e3fc.txt`), whose code
/// checks line read four files with the seed's own rules.
const SEED: &str = "\
stalwart verify agent.yaml
Compiled the rulebook policy.co: the tool check enforces the rules verified here.
Lints from the runtime (none of these blocks the agent):
  write_not_retry_safe (warning) on charge_card: a write with no idempotency, so an ambiguous failure goes to a person
  write_without_result_schema (warning) on charge_card: a write with no result schema, so its outcome could not be reported
  compensation_not_retry_safe (warning) on charge_card: 'refund_card' undoes it and is not retry-safe
  write_not_retry_safe (warning) on refund_card: a write with no idempotency, so an ambiguous failure goes to a person
  write_without_result_schema (warning) on refund_card: a write with no result schema, so its outcome could not be reported
  write_without_result_schema (warning) on send_receipt: a write with no result schema, so its outcome could not be reported
  compensation_out_of_reach (warning) on charge_card: agent 'desk' can call it but not 'refund_card', which undoes it, so a run of that agent cannot undo it
Code checks: no finding in 4 file(s) (rules d656f9ab32d3).
Warnings: 2 findings that do not block this agent. Look at each and weigh it; the agent can run as it is.
  QG023 Medium on cycle:desk_model (agent.yaml:3)
    the cycle through 'desk_model' calls the model or a tool, and nothing declares a budget: the framework's recursion limit of 60 is the run's only ceiling
    OWASP LLM06:2026, ASI08:2026
    Fix: Declare a budget for the agent or the run, or add an exit the model cannot avoid -- a counter in the state, declared on the edge as exit_after.
  QG105 Review on refund_card (agent.yaml:10)
    the write 'refund_card' has no compensation, is not irreversible, and runs on a path with another write
    OWASP LLM03:2026, ASI08:2026
    Fix: Give 'refund_card' an undo -- `undo:` in agent.yaml or `compensation` in the catalogue, which may be the tool itself with its arguments swapped -- or say a failed run may leave it done (`undo: none`), or mark it irreversible.
Rules with nothing to read, so nothing raised:
  QG017: no argument is declared as code or a shell command
  QG018: no argument is declared as SQL, a query, a path, a URL or a template
  QG019: no tool is declared confidential
  QG020: no retrieval from a store declared multi-tenant
  QG021: no tool is declared to write a store declared persistent
  QG106: no tool declares a source or a server, and the catalogue declares no modules
  QG107: no agent in the catalogue declares a remote channel
Gate: passed. Nothing blocks this agent: the 2 warnings above are for you to look at and weigh.
";

fn fixture(rel: &str) -> PathBuf {
    common::root().join("fixtures").join(rel)
}

/// Runs `stalwart verify agent.yaml ARGS` inside `dir`, colour off, CI variables cleared.
fn verify_in(dir: &Path, args: &[&str]) -> common::Run {
    let out = Command::new(env!("CARGO_BIN_EXE_stalwart"))
        .arg("verify")
        .arg("agent.yaml")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run stalwart");
    common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The 1-based line of the first line of `file` holding `marker`.
fn line_of(file: &Path, marker: &str) -> u32 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{marker:?} is not in {}", file.display())) as u32
        + 1
}

/// Asserts that `block` appears in `lines` as consecutive lines, and returns where.
fn contiguous(lines: &[&str], block: &[&str]) -> usize {
    lines
        .windows(block.len())
        .position(|w| w == block)
        .unwrap_or_else(|| {
            panic!(
                "these lines are not consecutive in the output:\n{}\n--- output:\n{}",
                block.join("\n"),
                lines.join("\n")
            )
        })
}

// ------------------------------------------------------------------------------------------------
// The rules file

#[test]
fn the_code_checks_are_declared_once_in_their_rules_file() {
    let all = code::all();
    let ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["CC001", "CC002", "CC003"]);
    for c in all {
        for (word, text) in [
            ("title", &c.title),
            ("finds", &c.finds),
            ("why", &c.why),
            ("message", &c.message),
            ("fix", &c.fix),
        ] {
            assert!(!text.trim().is_empty(), "{}: `{word}` is empty", c.id);
        }
        assert!(
            stalwart::Severity::parse(&c.severity).is_some(),
            "{}: severity {:?}",
            c.id,
            c.severity
        );
        let m = c.message.trim();
        assert!(
            m.starts_with(|ch: char| !ch.is_uppercase()) && !m.ends_with('.'),
            "{}: a message starts lowercase and has no final period: {m:?}",
            c.id
        );
    }
    // The hash is SHA-256 of the file's bytes, its first 12 hex digits.
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(common::root().join("rules/code_checks.toml")).unwrap();
    let full: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(code::rules_hash(), full[..12]);
    assert_eq!(code::RULES_TEXT.as_bytes(), bytes.as_slice());
}

// ------------------------------------------------------------------------------------------------
// The shop in Python

#[test]
fn the_shop_in_python_gives_the_seeds_report() {
    let dir = fixture("shop-python");
    let run = verify_in(&dir, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let seed: Vec<&str> = SEED.lines().collect();
    // Header, rulebook line, lints, then the code checks line: one file, these rules.
    assert_eq!(&lines[..10], &seed[..10], "\n{}", run.stdout);
    assert_eq!(
        lines[10],
        format!(
            "Code checks: no finding in 1 file(s) (rules {}).",
            code::rules_hash()
        )
    );
    // The warnings, each finding's four lines, the rules with nothing to read, the gate line.
    assert_eq!(lines[11], seed[11]);
    let q = contiguous(&lines, &seed[12..16]);
    let r = contiguous(&lines, &seed[16..20]);
    assert!(r > q);
    let n = contiguous(&lines, &["Rules with nothing to read, so nothing raised:"]);
    assert!(n > r);
    for l in &seed[21..28] {
        contiguous(&lines[n..], &[l]);
    }
    assert_eq!(lines.last().copied(), Some(seed[28]));

    // Exactly the catalogue shop's report, but for the code checks line and the folder's name.
    let shop = verify_in(&fixture("shop"), &[]);
    assert_eq!(shop.code, 0);
    assert!(!shop.stdout.contains("Code checks"), "no module, no line");
    let mut expected: Vec<&str> = shop.stdout.lines().collect();
    expected.insert(10, lines[10]);
    assert_eq!(lines, expected);
}

#[test]
fn the_shop_in_python_snapshots() {
    let dir = fixture("shop-python");
    let text = common::stalwart(&["verify", "fixtures/shop-python/agent.yaml"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    common::snap("shop-python.txt", &text.stdout);
    let json = common::stalwart(&[
        "verify",
        "fixtures/shop-python/agent.yaml",
        "--format",
        "json",
    ]);
    assert_eq!(json.code, 0);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["code_checks"]["files"], 1);
    assert_eq!(v["code_checks"]["rules_hash"], code::rules_hash());
    assert_eq!(v["code_checks"]["findings"], serde_json::json!([]));
    common::snap("shop-python.json", &common::without_times(&json.stdout));
    let report = common::report(&dir);
    let sarif = stalwart::output::sarif::render(&report, Some(&common::root()));
    let s: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let rules: Vec<&str> = s["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(&rules[rules.len() - 3..], ["CC001", "CC002", "CC003"]);
    common::snap("shop-python.sarif", &sarif);
}

#[test]
fn qg105_on_refund_card_points_at_its_def_line() {
    let dir = fixture("shop-python");
    let report = common::report(&dir);
    let f = report
        .findings
        .iter()
        .find(|f| f.rule == "QG105" && f.subject == "refund_card")
        .expect("QG105 on refund_card");
    let tools = dir.join("shop/tools.py");
    let def = line_of(&tools, "def refund_card");
    let (loc, msg) = f
        .related
        .iter()
        .find(|(l, _)| {
            report
                .sources
                .file(l.file)
                .display
                .ends_with("shop/tools.py")
        })
        .expect("a related location in shop/tools.py");
    assert_eq!(loc.line, def, "{msg}");
    assert_eq!(msg, "'refund_card' is declared here");
    let code = report.code_checks.as_ref().expect("code checks ran");
    assert_eq!((code.files, code.findings.len()), (1, 0));
}

#[test]
fn no_module_no_code_checks() {
    let report = common::report(&fixture("shop"));
    assert!(report.code_checks.is_none());
    let json = stalwart::output::json::to_value(&report);
    assert!(json["code_checks"].is_null());
    let sarif = stalwart::output::sarif::render(&report, Some(&common::root()));
    assert!(!sarif.contains("\"CC001\""));
}

// ------------------------------------------------------------------------------------------------
// The code checks

fn code_findings(dir: &Path) -> Vec<Finding> {
    let report = common::report(dir);
    report.code_checks.expect("code checks ran").findings
}

#[test]
fn each_code_check_fires_once_and_the_near_misses_do_not() {
    let dir = fixture("code-checks");
    let tools = dir.join("tools.py");
    let findings = code_findings(&dir);
    let found: Vec<(&str, Option<&str>, u32)> = findings
        .iter()
        .map(|f| {
            (
                f.rule.as_str(),
                f.code_tool(),
                f.location.line().unwrap().line,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("CC002", None, line_of(&tools, "# CC002")),
            ("CC001", Some("fetch_price"), line_of(&tools, "# CC001")),
            ("CC003", Some("read_feed"), line_of(&tools, "# CC003")),
        ]
    );
    // Columns: the call, the literal, the read.
    let col = |marker: &str, what: &str| {
        let text = std::fs::read_to_string(&tools).unwrap();
        let line = text.lines().find(|l| l.contains(marker)).unwrap();
        line.find(what).unwrap() as u32 + 1
    };
    assert_eq!(
        findings[0].location.line().unwrap().column,
        col("# CC002", "\"sk-")
    );
    assert_eq!(
        findings[1].location.line().unwrap().column,
        col("# CC001", "h.get")
    );
    assert_eq!(
        findings[2].location.line().unwrap().column,
        col("# CC003", "os.environ")
    );
    // CC001 and CC003 point back at the tool's entry (its def line).
    assert_eq!(
        findings[1].related[0].0.line,
        line_of(&tools, "def fetch_price")
    );
    assert_eq!(
        findings[2].related[0].0.line,
        line_of(&tools, "def read_feed")
    );
    // The secret is never printed: its first four characters and its length only.
    let secret = "sk-proj-Zq8xV3nL0pT5rW2yK7bM4cJ9";
    assert!(findings[0].message.contains("`sk-p...`, 32 characters"));
    for f in &findings {
        assert!(!f.message.contains(secret) && !f.fix.contains(secret));
        assert!(!f.message.contains("Zq8x"));
    }
    assert!(findings[1].message.contains("httpx.get"));
    assert!(findings[2].message.contains("`FEED_TOKEN`"));
}

#[test]
fn code_findings_do_not_change_the_gate_and_print_after_the_lints() {
    let run = common::stalwart(&["verify", "fixtures/code-checks/agent.yaml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let secret = "sk-proj-Zq8xV3nL0pT5rW2yK7bM4cJ9";
    assert!(!run.stdout.contains(secret), "{}", run.stdout);
    assert!(run.stdout.contains(&format!(
        "Code checks: 3 finding(s) in 1 file(s) (rules {}); they do not change the gate:",
        code::rules_hash()
    )));
    assert!(run.stdout.contains(
        "  CC001 High on fetch_price (tools.py:23): 'fetch_price' calls `h.get` (httpx.get)"
    ));
    common::snap("code-checks.txt", &run.stdout);

    let json = common::stalwart(&[
        "verify",
        "fixtures/code-checks/agent.yaml",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["gate"]["passed"], true);
    let checks: Vec<&str> = v["code_checks"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["CC002", "CC001", "CC003"]);
    assert!(!json.stdout.contains(secret));

    let gh = common::stalwart(&[
        "verify",
        "fixtures/code-checks/agent.yaml",
        "--format",
        "github",
    ]);
    assert_eq!(gh.code, 0);
    assert!(gh.stdout.contains(
        "::warning file=fixtures/code-checks/tools.py,line=23,col=12,title=CC001 High on fetch_price (Undeclared network call)::"
    ), "{}", gh.stdout);
    assert!(!gh.stdout.contains(secret));

    let report = common::report(&fixture("code-checks"));
    let sarif = stalwart::output::sarif::render(&report, Some(&common::root()));
    assert!(!sarif.contains(secret));
    let s: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let run0 = &s["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    for r in run0["results"].as_array().unwrap() {
        let id = r["ruleId"].as_str().unwrap();
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], id);
        if id.starts_with("CC") {
            assert_eq!(r["level"], "warning");
            assert_eq!(
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                "fixtures/code-checks/tools.py"
            );
        }
    }
}

#[test]
fn the_credential_patterns() {
    for name in [
        "api_key",
        "API_KEY",
        "apiKey",
        "apikey",
        "OPENAI_API_KEY",
        "github_token",
        "client_secret",
        "db_password",
        "passwd",
        "aws_access_key",
        "private_key",
        "auth",
        "Authorization",
        "X-Api-Key",
    ] {
        assert!(
            code::credential_name(name),
            "{name} looks like a credential"
        );
    }
    for name in [
        "author",
        "max_tokens",
        "tokens",
        "token_url",
        "api_key_env",
        "password_field",
        "key",
        "monkey",
        "secretary",
        "authority",
    ] {
        assert!(
            !code::credential_name(name),
            "{name} does not look like a credential"
        );
    }
    for v in [
        "",
        "  ",
        "changeme",
        "<your key>",
        "xxxxxxxx",
        "****",
        "${API_KEY}",
        "{{ secrets.KEY }}",
        "$TOKEN",
        "your-api-key-here",
        "os.environ['KEY']",
        "OPENAI_API_KEY",
        "Bearer",
    ] {
        assert!(code::placeholder(v), "{v:?} is a placeholder");
    }
    for v in ["hunter2", "s3cr3t-Passw0rd", "Bearer abc123def456"] {
        assert!(!code::placeholder(v), "{v:?} is not a placeholder");
    }
    for s in [
        "\"sk-abcdefghijklmnopqrstuvwxyz\"",
        "'Bearer sk-ant-api03-abcdefghijklmnopqrst'",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-abcdefghij",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE...",
    ] {
        assert!(code::key_shape(s).is_some(), "{s:?} is a key shape");
    }
    for s in [
        "sk-short",
        "task-abcdefghijklmnopqrstuvwxyz",
        "AKIAlower",
        "ghp_",
        "-----BEGIN CERTIFICATE-----",
        "xoxb-",
    ] {
        assert!(code::key_shape(s).is_none(), "{s:?} is not a key shape");
    }
    for n in [
        "requests.get",
        "requests.Session",
        "httpx.AsyncClient",
        "urllib.request.urlopen",
        "urllib3.PoolManager",
        "aiohttp.ClientSession",
        "http.client.HTTPSConnection",
        "socket.create_connection",
        "smtplib.SMTP",
        "ftplib.FTP",
        "boto3.client",
        "boto3.resource",
        "openai.OpenAI",
        "anthropic.Anthropic",
    ] {
        assert!(code::is_network(n), "{n} is a network call");
    }
    for n in [
        "requests.exceptions.HTTPError",
        "httpx.HTTPStatusError",
        "urllib.parse.quote",
        "boto3.session",
        "requestsx.get",
        "json.dumps",
    ] {
        assert!(!code::is_network(n), "{n} is not a network call");
    }
}

#[test]
fn imports_resolve_each_form() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agent.yaml"),
        "agents:\n  desk:\n    tools: [a, b, c, d, e, f]\ntools:\n  - python: t\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.py"),
        r#"import requests
import httpx as h
import urllib.request
from urllib.request import urlopen as fetch
from aiohttp import ClientSession
from langchain_core.tools import tool


@tool(kind="read")
def a():
    return requests.get("https://x.invalid")


@tool(kind="read")
def b():
    return h.Client().get("/")


@tool(kind="read")
def c():
    return urllib.request.urlopen("https://x.invalid")


@tool(kind="read")
def d():
    return fetch("https://x.invalid")


@tool(kind="read")
async def e():
    async with ClientSession() as s:
        return await s.get("https://x.invalid")


@tool(kind="read")
def f():
    try:
        return local.get("https://x.invalid")
    except requests.exceptions.HTTPError:
        return None
"#,
    )
    .unwrap();
    let inputs = load_agent_yaml(&dir.path().join("agent.yaml")).unwrap();
    let cc = code::check(&inputs).unwrap();
    let got: Vec<(&str, u32)> = cc
        .findings
        .iter()
        .map(|f| (f.code_tool().unwrap(), f.location.line().unwrap().line))
        .collect();
    assert_eq!(
        got,
        [("a", 11), ("b", 16), ("c", 21), ("d", 26), ("e", 31)],
        "{:#?}",
        cc.findings
    );
    assert!(cc.findings.iter().all(|f| f.rule == "CC001"));
}

#[test]
fn credentials_in_every_place_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agent.yaml"),
        "agents:\n  desk:\n    tools: [a]\ntools:\n  - python: t\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.py"),
        r#"from langchain_core.tools import tool

password: str = "hunter22"


class Client:
    def __init__(self, token="tok-123456"):
        self.api_key = "k-abcdef"


HEADERS = {"Authorization": "Basic dXNlcjpwYXNz"}
DOC = """The key AKIAIOSFODNN7EXAMPLE opens the bucket."""


@tool(kind="read")
def a():
    return call(secret="s3cr3t-" "value")
"#,
    )
    .unwrap();
    let inputs = load_agent_yaml(&dir.path().join("agent.yaml")).unwrap();
    let cc = code::check(&inputs).unwrap();
    let got: Vec<(&str, Option<&str>, u32)> = cc
        .findings
        .iter()
        .map(|f| {
            (
                f.rule.as_str(),
                f.code_tool(),
                f.location.line().unwrap().line,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("CC002", None, 3),
            ("CC002", None, 7),
            ("CC002", None, 8),
            ("CC002", None, 11),
            ("CC002", None, 12),
            ("CC002", Some("a"), 17),
        ],
        "{:#?}",
        cc.findings
    );
    assert!(cc.findings[0].message.contains("`hunt...`, 8 characters"));
    assert!(cc.findings[4].message.contains("an AWS access key id"));
    assert!(cc.findings[5].message.contains("12 characters"));
    for f in &cc.findings {
        assert!(!f.message.contains("hunter22") && !f.message.contains("AKIAIOSFODNN7EXAMPLE"));
    }
}

// ------------------------------------------------------------------------------------------------
// What cannot be read statically

/// `fixtures/errors/python/<case>/agent.yaml` must not load: the error is at `file:line:column`,
/// says `msg` and its help says `help`; the binary exits 2 naming the place and the fix.
#[track_caller]
fn refused(case: &str, file: &str, line: u32, column: u32, msg: &str, help: &str) {
    let dir = fixture("errors/python").join(case);
    let e = match load_agent_yaml(&dir.join("agent.yaml")) {
        Ok(_) => panic!("{case} loaded, but it cannot be read statically"),
        Err(e) => e,
    };
    let shown = e.to_string();
    let place = format!("{file}:{line}:{column}: ");
    assert!(shown.contains(&place), "expected {place:?} in {shown:?}");
    assert!(shown.contains(msg), "expected {msg:?} in {shown:?}");
    let h = e.help().map(|h| h.to_string()).unwrap_or_default();
    assert!(h.contains(help), "expected help {help:?} in {h:?}");
    assert!(e.labels().is_some_and(|mut l| l.next().is_some()));

    let run = verify_in(&dir, &[]);
    assert_eq!(run.code, 2, "{case}: {}{}", run.stdout, run.stderr);
    // miette wraps long lines: compare with the frame and the wrapping taken out.
    let flat = |s: &str| {
        s.replace(['│', '×'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let err = flat(&run.stderr);
    assert!(
        err.contains(&format!("{file}:{line}:{column}:")),
        "{case}: {}",
        run.stderr
    );
    assert!(
        err.contains(&flat(help)),
        "{case}: the fix is not in\n{}",
        run.stderr
    );
}

#[test]
fn a_syntax_error() {
    refused(
        "syntax",
        "tools.py",
        6,
        5,
        "syntax/tools.py: Python cannot read this",
        "`python -m py_compile` accepts it",
    );
}

#[test]
fn a_word_that_is_a_name_not_a_literal() {
    refused(
        "kind_name",
        "tools.py",
        7,
        12,
        "`kind` is `KIND`, which cannot be read without running Python",
        "write `kind` as a literal",
    );
}

#[test]
fn words_from_a_splat() {
    refused(
        "splat",
        "tools.py",
        7,
        7,
        "takes its words from `**OPTS`",
        "write each word as a keyword with a literal value",
    );
}

#[test]
fn a_tool_made_at_run_time() {
    refused(
        "runtime_tool",
        "tools.py",
        8,
        13,
        "makes a tool at run time (tool(...))",
        "decorate the tool's function with `@tool(kind=...)` instead",
    );
    refused(
        "structured_tool",
        "tools.py",
        8,
        13,
        "makes a tool at run time (StructuredTool.from_function(...))",
        "or declare the tool in a catalogue",
    );
}

#[test]
fn a_module_with_no_tool() {
    refused(
        "no_tool",
        "tools.py",
        1,
        1,
        "tools.py declares no tool",
        "decorate each tool function with `@tool(kind=\"read\")`",
    );
}

#[test]
fn a_tool_declared_twice() {
    refused(
        "twice",
        "tools.py",
        9,
        7,
        "declares the tool 'get_order' twice (first at line 5)",
        "give each tool its own name",
    );
    let e = load_agent_yaml(&fixture("errors/python/twice/agent.yaml")).unwrap_err();
    assert_eq!(e.labels().unwrap().count(), 2, "both declarations");
}

#[test]
fn a_tool_with_no_kind_is_the_catalogues_error_in_the_module() {
    refused(
        "no_kind",
        "tools.py",
        5,
        5,
        "tool 'get_order' has no `kind`",
        "@tool(kind=\"read\")",
    );
}

#[test]
fn a_module_name_that_is_not_dotted() {
    refused(
        "outside",
        "agent.yaml",
        6,
        13,
        "'../outside.mod' is not a Python module name",
        "`python: shop.tools` reads shop/tools.py",
    );
    refused(
        "bad_name",
        "agent.yaml",
        6,
        13,
        "'shop-tools' is not a Python module name",
        "`python: shop.tools` reads shop/tools.py",
    );
}

#[test]
fn an_unknown_word_is_the_unknown_word_lint() {
    let report = common::report(&fixture("errors/python/unknown_word"));
    let lint = report
        .lints
        .iter()
        .find(|l| l.id == "unknown_word")
        .expect("the unknown_word lint");
    assert_eq!(lint.tool, "get_order");
    assert!(lint.message.contains("'team_notes'"), "{}", lint.message);
    let loc = lint.loc.expect("located");
    assert!(report.sources.file(loc.file).display.ends_with("tools.py"));
    assert_eq!(loc.line, 4);
}

/// Issue 28: a word a typo away from a known one is an error at its line in the module, naming
/// the word meant (kept and ignored, `reads_outsde` would drop the tool's taint from the proof).
#[test]
fn a_misspelt_word_is_an_error_in_the_module() {
    refused(
        "typo_word",
        "tools.py",
        4,
        20,
        "'reads_outsde' on tool 'get_order' is not a word of the catalogue: did you mean 'reads_outside'?",
        "write 'reads_outside'",
    );
}

#[test]
fn a_package_is_read_from_its_init() {
    let inputs = load_agent_yaml(&fixture("errors/python/package/agent.yaml")).unwrap();
    let t = inputs.catalogue.tool("get_order").expect("get_order");
    assert_eq!(t.kind, ToolKind::Read);
    assert_eq!(t.description.as_deref(), Some("Look up an order."));
    let file = &inputs.sources.file(t.loc.file).display;
    assert!(
        file.ends_with("pkg/tools/__init__.py"),
        "declared in {file}"
    );
    assert_eq!(t.loc.line, 5);
    assert_eq!(inputs.python_modules.len(), 1);
    assert_eq!(inputs.python_modules[0].module, "pkg.tools");
}

// ------------------------------------------------------------------------------------------------
// The forms

#[test]
fn the_decorator_forms_and_the_argument_schema() {
    let inputs = load_agent_yaml(&fixture("python-forms/agent.yaml")).unwrap();
    let cat = &inputs.catalogue;
    let names: Vec<&str> = cat.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["lookup_order", "fetch_page", "note"]);

    // `@tool("lookup_order", ...)` names the tool; the docstring's first paragraph describes it.
    let lookup = cat.tool("lookup_order").unwrap();
    assert_eq!(
        lookup.description.as_deref(),
        Some("Look up an order by its id.")
    );
    let forms = fixture("python-forms/forms.py");
    assert_eq!(lookup.loc.line, line_of(&forms, "def get_order_impl"));
    let json = &inputs.catalogue_json["tools"];
    let ty = |tool: &str, arg: &str| json[tool]["args"][arg]["type"].as_str().map(str::to_string);
    for (arg, t) in [
        ("order_id", "string"),
        ("count", "integer"),
        ("ratio", "number"),
        ("paid", "boolean"),
        ("tags", "array"),
        ("extra", "object"),
    ] {
        assert_eq!(ty("lookup_order", arg).as_deref(), Some(t), "{arg}");
    }

    // `@stalwart.tool(...)`; injected parameters are not arguments; `args=` adds a role.
    let fetch = cat.tool("fetch_page").unwrap();
    assert!(fetch.reads_outside);
    assert_eq!(fetch.loc.line, line_of(&forms, "def fetch_page"));
    let args: Vec<&str> = fetch.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(args, ["url", "timeout"]);
    assert_eq!(
        fetch.args[0].role,
        Some(stalwart::Role::Url),
        "the decorator's role"
    );
    assert_eq!(ty("fetch_page", "url").as_deref(), Some("string"));
    assert_eq!(ty("fetch_page", "timeout").as_deref(), Some("integer"));

    // `description=` wins over the docstring; self, *args, **kwargs are not arguments.
    let note = cat.tool("note").unwrap();
    assert_eq!(note.description.as_deref(), Some("Write a note."));
    assert!(note.irreversible);
    let args: Vec<&str> = note.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(args, ["text"]);
}

#[test]
fn a_tool_inside_a_class_is_refused_at_its_line() {
    refused(
        "nested",
        "tools.py",
        7,
        5,
        "declares the tool 'a' inside a class: only tools defined at the module's top level can be read without running Python",
        "define the tool function at the top level of the module",
    );
}
