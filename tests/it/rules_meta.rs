//! Meta-test of `rules/`: the rule files are data, and this holds them to the seed's table of rules
//! (chapter 45, "The rules it proves"), to the checkers (`stalwart::checks::coverage::checked`), and
//! to the house style of their prose.

use crate::common;
use stalwart::rules::{self, RuleType};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The seed's table, chapter 45: rule, title, type, fails the gate, stops `Agent(...)`.
const SEED_TABLE: &[(&str, &str, &str, bool, bool)] = &[
    ("QG001", "Missing check", "Vulnerability", true, true),
    ("QG002", "Escapable guard", "Vulnerability", true, true),
    ("QG003", "Multi-turn escape", "Vulnerability", true, true),
    ("QG004", "Permissive by default", "Bug", false, false),
    ("QG005", "Unshippable policy", "Bug", true, false),
    ("QG006", "Unverified region", "Bug", false, false),
    ("QG007", "Read before written", "Vulnerability", false, true),
    (
        "QG008",
        "Call without execute",
        "Vulnerability",
        false,
        true,
    ),
    (
        "QG009",
        "Undefined bot message",
        "Vulnerability",
        false,
        true,
    ),
    ("QG010", "Dead action", "Vulnerability", false, true),
    ("QG011", "Confused deputy", "Vulnerability", true, true),
    ("QG012", "Cascading injection", "Vulnerability", true, true),
    ("QG013", "Irreversible before undoable", "Bug", false, false),
    ("QG014", "Order rule escapable", "Vulnerability", true, true),
    ("QG015", "Undeclared route", "Bug", false, false),
    ("QG016", "Unmodelled path", "Vulnerability", true, true),
    (
        "QG017",
        "Model writes code that runs",
        "Vulnerability",
        true,
        true,
    ),
    (
        "QG018",
        "Model writes a query or a destination",
        "Vulnerability",
        false,
        true,
    ),
    (
        "QG019",
        "Confidential data leaves",
        "Vulnerability",
        false,
        true,
    ),
    (
        "QG020",
        "Retrieval not bound to the user",
        "Vulnerability",
        false,
        true,
    ),
    (
        "QG021",
        "Untrusted content persisted",
        "Vulnerability",
        false,
        true,
    ),
    (
        "QG022",
        "Rail with a published advisory",
        "Vulnerability",
        true,
        true,
    ),
    ("QG023", "Unbounded loop", "Bug", false, false),
    // Issue 28, SPEC 12.5: what the exporter saw but could not read fails the gate.
    ("QG024", "Unread code", "Vulnerability", true, true),
    (
        "QG101",
        "Unchecked action",
        "Security hotspot",
        false,
        false,
    ),
    (
        "QG104",
        "Check missing against its peers",
        "Security hotspot",
        false,
        false,
    ),
    (
        "QG105",
        "Unrecoverable write",
        "Security hotspot",
        false,
        false,
    ),
    (
        "QG106",
        "Unpinned tool source",
        "Security hotspot",
        false,
        false,
    ),
    (
        "QG107",
        "Unauthenticated agent channel",
        "Security hotspot",
        false,
        false,
    ),
    ("QG312", "Engine disagreement", "Bug", true, false),
];

/// Files in `rules/` that are data, not rules: QG022's advisories (SPEC 5), and the code checks
/// (`code_checks.toml`, read by `src/checks/code.rs`, held by `tests/it/python_tools.rs`), and
/// NeMo Guardrails' own names QG010 knows (`nemo_library.toml`, `src/rulebook/library.rs`).
const NOT_RULES: &[&str] = &["advisories.toml", "code_checks.toml", "nemo_library.toml"];

/// Columns every rule file must have, each non-empty.
const COLUMNS: &[&str] = &[
    "id",
    "title",
    "type",
    "gate",
    "stops",
    "severity",
    "owasp",
    "status",
    "description",
    "message",
    "fix",
    "proves",
    "does_not_prove",
];

fn rules_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("rules")
}

/// `(file name, text)` of every `.toml` rule file on disk, sorted.
fn files_on_disk() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(rules_dir())
        .expect("rules/ is readable")
        .map(|e| e.expect("an entry of rules/").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let name = p
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, text)
        })
        .filter(|(name, _)| !NOT_RULES.contains(&name.as_str()))
        .collect();
    files.sort();
    files
}

fn is_owasp_entry(s: &str) -> bool {
    // ^(LLM|ASI)\d\d:2026$
    let b = s.as_bytes();
    b.len() == 10
        && (s.starts_with("LLM") || s.starts_with("ASI"))
        && b[3].is_ascii_digit()
        && b[4].is_ascii_digit()
        && &s[5..] == ":2026"
}

// (a) Every file parses, has every column non-empty, and is named by its id.
#[test]
fn every_rule_file_parses_with_every_column_and_its_id_as_name() {
    let files = files_on_disk();
    assert!(!files.is_empty(), "rules/ holds no rule file");
    for (name, text) in &files {
        let table: toml::Table =
            toml::from_str(text).unwrap_or_else(|e| panic!("rules/{name}: not TOML: {e}"));
        for col in COLUMNS {
            let value = table
                .get(*col)
                .unwrap_or_else(|| panic!("rules/{name}: no `{col}`"));
            let empty = match value {
                toml::Value::String(s) => s.trim().is_empty(),
                toml::Value::Array(a) => a.is_empty(),
                toml::Value::Boolean(_) => false,
                other => panic!(
                    "rules/{name}: `{col}` is a {}, not a string, list or boolean",
                    other.type_str()
                ),
            };
            assert!(!empty, "rules/{name}: `{col}` is empty");
        }
        for col in ["fix_rulebook", "fix_langgraph", "nothing_to_read"] {
            if let Some(v) = table.get(col) {
                assert!(
                    v.as_str().is_some_and(|s| !s.trim().is_empty()),
                    "rules/{name}: `{col}` is empty"
                );
            }
        }
        let id = table["id"].as_str().expect("id is a string");
        assert_eq!(
            name,
            &format!("{id}.toml"),
            "rules/{name}: the file's name is not its id"
        );
        let rule = rules::parse(name, text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rule.id, id);
    }

    // What the build embedded is what is on disk.
    let embedded: Vec<(String, String)> = rules::sources()
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    assert_eq!(
        embedded, files,
        "the rules embedded at build time differ from rules/ on disk"
    );
    assert_eq!(rules::all().len(), files.len());
}

// (b) The rules marked checked are exactly the rules the checkers check.
#[test]
fn checked_status_equals_checked_rules() {
    let marked: BTreeSet<&str> = rules::all()
        .iter()
        .filter(|r| r.checked)
        .map(|r| r.id.as_str())
        .collect();
    let checked: BTreeSet<&str> = stalwart::rules::RuleId::PROOF
        .iter()
        .filter(|id| stalwart::checks::coverage::checked(**id))
        .map(|id| id.as_str())
        .collect();
    let unmarked: Vec<_> = checked.difference(&marked).collect();
    let unchecked: Vec<_> = marked.difference(&checked).collect();
    assert!(
        unmarked.is_empty() && unchecked.is_empty(),
        "drift between rules/ and checks::coverage::reads: checked but not marked `status = \"checked\"`: {unmarked:?}; \
         marked checked but not checked: {unchecked:?}"
    );
    for r in rules::all() {
        assert_eq!(
            r.status(),
            if checked.contains(r.id.as_str()) {
                "checked"
            } else {
                "not_yet_checked"
            }
        );
    }
}

// (c) The ids are exactly the seed's, and each row matches the seed's table.
#[test]
fn rules_match_the_seed_table() {
    let ids: Vec<&str> = rules::all().iter().map(|r| r.id.as_str()).collect();
    let seed: Vec<&str> = SEED_TABLE.iter().map(|row| row.0).collect();
    assert_eq!(ids, seed, "the rule ids are not the seed's table");
    for &(id, title, ty, gate, stops) in SEED_TABLE {
        let r = rules::get(id).unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(r.title, title, "{id}: title");
        assert_eq!(r.rule_type.as_str(), ty, "{id}: type");
        assert_eq!(r.gate, gate, "{id}: fails the gate");
        assert_eq!(r.stops, stops, "{id}: stops Agent(...)");
        if r.rule_type == RuleType::SecurityHotspot {
            assert_eq!(
                r.severity.as_str(),
                "Review",
                "{id}: a hotspot's severity is Review"
            );
        } else {
            assert_ne!(
                r.severity.as_str(),
                "Review",
                "{id}: only a hotspot's severity is Review"
            );
        }
    }
}

// The texts the seed prints verbatim.
#[test]
fn seed_texts_are_verbatim() {
    let get = |id: &str| rules::get(id).unwrap_or_else(|| panic!("{id} missing"));
    assert_eq!(get("QG023").owasp, ["LLM06:2026", "ASI08:2026"]);
    assert_eq!(get("QG105").owasp, ["LLM03:2026", "ASI08:2026"]);
    assert_eq!(get("QG023").severity.as_str(), "Medium");
    assert_eq!(
        get("QG023").fix,
        "Declare a budget for the agent or the run, or add an exit the model cannot avoid -- a counter in \
         the state, declared on the edge as exit_after."
    );
    assert_eq!(
        rules::fill(&get("QG023").message, &[("node", "desk_model"), ("limit", "60")]),
        "the cycle through 'desk_model' calls the model or a tool, and nothing declares a budget: the \
         framework's recursion limit of 60 is the run's only ceiling"
    );
    assert_eq!(
        rules::fill(&get("QG105").fix, &[("tool", "refund_card")]),
        "Give 'refund_card' an undo -- `undo:` in agent.yaml or `compensation` in the catalogue, which may \
         be the tool itself with its arguments swapped -- or say a failed run may leave it done (`undo: \
         none`), or mark it irreversible."
    );
    assert_eq!(
        rules::fill(&get("QG105").message, &[("tool", "refund_card")]),
        "the write 'refund_card' has no compensation, is not irreversible, and runs on a path with another write"
    );
    let nothing = [
        (
            "QG017",
            "no argument is declared as code or a shell command",
        ),
        (
            "QG018",
            "no argument is declared as SQL, a query, a path, a URL or a template",
        ),
        ("QG019", "no tool is declared confidential"),
        ("QG020", "no retrieval from a store declared multi-tenant"),
        (
            "QG021",
            "no tool is declared to write a store declared persistent",
        ),
        (
            "QG106",
            "no tool declares a source or a server, and the catalogue declares no modules",
        ),
        (
            "QG107",
            "no agent in the catalogue declares a remote channel",
        ),
    ];
    for (id, text) in nothing {
        assert_eq!(
            get(id).nothing_to_read.as_deref(),
            Some(text),
            "{id}: nothing_to_read"
        );
    }
    assert!(get("QG001").fix.contains("'{tool}'") && get("QG001").fix.contains("'{node}'"));
    assert!(get("QG015").fix.contains("{subject}"));
}

// (d) Prose: fixes and descriptions end with a period, descriptions start with a capital;
// templates use only the placeholders the findings fill.
#[test]
fn prose_is_in_house_style() {
    for r in rules::all() {
        let id = &r.id;
        let first = r.description.chars().next().unwrap_or(' ');
        assert!(
            first.is_uppercase(),
            "{id}: the description starts with a capital: {:?}",
            r.description
        );
        for (col, text) in [
            ("description", Some(&r.description)),
            ("fix", Some(&r.fix)),
            ("fix_rulebook", r.fix_rulebook.as_ref()),
            ("fix_langgraph", r.fix_langgraph.as_ref()),
            ("proves", Some(&r.proves)),
            ("does_not_prove", Some(&r.does_not_prove)),
        ] {
            if let Some(t) = text {
                assert!(t.ends_with('.'), "{id}: {col} ends with a period: {t:?}");
                assert!(!t.contains("  "), "{id}: {col} holds a double space: {t:?}");
            }
        }
        let fix_first = r.fix.chars().next().unwrap_or(' ');
        assert!(
            fix_first.is_uppercase(),
            "{id}: the fix starts with a capital"
        );
        assert!(
            !r.message.ends_with('.'),
            "{id}: a message has no final period (the report adds context)"
        );
        if let Some(n) = &r.nothing_to_read {
            assert!(
                !n.ends_with('.'),
                "{id}: nothing_to_read has no final period, as the seed prints it"
            );
        }
        for (col, text, allowed) in [
            ("fix", &r.fix, rules::FIX_PLACEHOLDERS),
            ("message", &r.message, rules::MESSAGE_PLACEHOLDERS),
        ] {
            for p in rules::placeholders(text) {
                assert!(allowed.contains(&p), "{id}: {col} uses {{{p}}}");
            }
        }
    }
}

// (d') SPEC 12: the rules whose fix a LangGraph user applies in their own code say how, naming the
// guard with an example, in the same placeholders.
#[test]
fn the_langgraph_fixes_name_the_guard() {
    for r in rules::all() {
        let wanted = ["QG001", "QG011", "QG012", "QG013", "QG014"].contains(&r.id.as_str());
        assert_eq!(
            r.fix_langgraph.is_some(),
            wanted,
            "{}: fix_langgraph is for QG001 and QG011-QG014",
            r.id
        );
        if let Some(f) = &r.fix_langgraph {
            assert!(f.starts_with("In LangGraph,"), "{}: {f}", r.id);
            assert!(
                f.contains("from stalwart_export import")
                    && f.contains("Guard(\"catalogue.json\")"),
                "{}: names the guard with an example: {f}",
                r.id
            );
            for p in rules::placeholders(f) {
                assert!(
                    rules::FIX_PLACEHOLDERS.contains(&p),
                    "{}: uses {{{p}}}",
                    r.id
                );
            }
        }
    }
}

// (e) OWASP tags are spelt `LLMnn:2026` or `ASInn:2026`, are not repeated, and name a real entry.
#[test]
fn owasp_tags_are_well_formed() {
    for r in rules::all() {
        assert!(!r.owasp.is_empty(), "{}: no OWASP entry", r.id);
        let mut seen = BTreeSet::new();
        for o in &r.owasp {
            assert!(
                is_owasp_entry(o),
                "{}: OWASP entry {o:?} is not ^(LLM|ASI)\\d\\d:2026$",
                r.id
            );
            let n: u32 = o[3..5].parse().expect("two digits");
            assert!((1..=10).contains(&n), "{}: {o} is not one of the ten", r.id);
            assert!(seen.insert(o), "{}: {o} repeated", r.id);
        }
    }
}

/// Nothing a user sees cites the product's specification, which a clone does not have
/// (CONTRIBUTING.md, "`SPEC n.m` in the code"): not the rule files (`rules explain`, SARIF's help),
/// not the outputs (every snapshot), not `--help`, not the README or `docs/`.
#[test]
fn nothing_a_user_sees_cites_the_specification() {
    let root = common::root();
    let mut read: Vec<(String, String)> = Vec::new();
    for dir in ["rules", "snapshots", "docs", "docs/rules"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("the folder is in the repository")
            .map(|e| e.expect("a folder entry").path())
            .filter(|p| p.is_file())
            // What the repository keeps: not a pending `.snap.new` a failed run leaves behind.
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e == "snap" || e == "toml" || e == "md")
            })
            .collect();
        files.sort();
        for p in files {
            if let Ok(text) = std::fs::read_to_string(&p) {
                read.push((p.display().to_string(), text));
            }
        }
    }
    for f in ["README.md", "python/README.md"] {
        let text = std::fs::read_to_string(root.join(f)).expect("the README is in the repository");
        read.push((f.to_string(), text));
    }
    for args in [
        &["verify", "--help"][..],
        &["--help"],
        &["rules", "explain", "QG024"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stalwart"))
            .args(args)
            .output()
            .expect("the binary runs");
        read.push((
            args.join(" "),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ));
    }
    // The rule files, the snapshots and the two READMEs are read, not skipped.
    assert!(read.len() > 60, "{} files read", read.len());
    let citing: Vec<&str> = read
        .iter()
        .filter(|(_, text)| text.contains("SPEC ") || text.contains("SPEC.md"))
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(citing, Vec::<&str>::new());
}
