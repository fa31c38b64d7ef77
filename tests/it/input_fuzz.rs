//! The readers never panic: random bytes, and random mutations (truncations, byte flips, deleted,
//! doubled and inserted lines) of the shop's agent.yaml and catalogue, a corpus export and a
//! corpus catalogue, go through every loader and come back as `Ok` or `Err`. Whatever loads also
//! writes (`--export-only`) and loads back.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use stalwart::input::{load_agent_yaml, load_export, write_export, Inputs};

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The seeds: (agent.yaml, its catalogue, its rulebook, an export, a catalogue for it). The shop
/// and the corpus when `../shared` is there, else this crate's own fixtures.
struct Seeds {
    agent: Vec<u8>,
    agent_catalogue: Vec<u8>,
    agent_catalogue_name: &'static str,
    rulebook: Vec<u8>,
    rulebook_name: &'static str,
    export: Vec<u8>,
    catalogue: Vec<u8>,
}

fn seeds() -> Seeds {
    let shared = manifest().join("../shared");
    let shop = [
        manifest().join("fixtures/shop"),
        shared.join("examples/shop"),
    ]
    .into_iter()
    .find(|d| d.join("agent.yaml").is_file() && d.join("shop.catalogue.yaml").is_file());
    let errors = manifest().join("fixtures/errors");
    let (agent, agent_catalogue, agent_catalogue_name, rulebook, rulebook_name) = match &shop {
        Some(d) => (
            read(&d.join("agent.yaml")),
            read(&d.join("shop.catalogue.yaml")),
            "shop.catalogue.yaml",
            read(&d.join("policy.co")),
            "policy.co",
        ),
        None => {
            println!("note: the shop is missing; fuzzing fixtures/errors/good.agent.yaml instead");
            (
                read(&errors.join("good.agent.yaml")),
                read(&errors.join("tools.catalogue.yaml")),
                "tools.catalogue.yaml",
                read(&errors.join("policy.co")),
                "policy.co",
            )
        }
    };
    let lg = shared.join("corpus/langgraph");
    let (export, catalogue) = if lg.join("swarm.json").is_file() {
        (
            read(&lg.join("swarm.json")),
            read(&lg.join("catalogue.json")),
        )
    } else {
        println!("note: ../shared is missing; fuzzing fixtures/errors/good_subgraph.json instead");
        (
            read(&errors.join("good_subgraph.json")),
            read(&errors.join("catalogue.json")),
        )
    };
    Seeds {
        agent,
        agent_catalogue,
        agent_catalogue_name,
        rulebook,
        rulebook_name,
        export,
        catalogue,
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Keep only the first (n mod len) bytes.
    Truncate(usize),
    /// Replace the byte at (i mod len).
    Flip(usize, u8),
    /// Insert a byte at (i mod len).
    Insert(usize, u8),
    /// Delete line (i mod lines).
    DeleteLine(usize),
    /// Write line (i mod lines) twice.
    DoubleLine(usize),
    /// 70,000 spaces inserted at a position: a minified file puts an error past column 65,535,
    /// where a renderer padding with `{:width$}` panics (issue 14).
    Pad(usize),
    /// Every line break removed: the whole file on one line.
    OneLine,
}

/// Bytes that matter to YAML and JSON, and a few that do not.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(b"{}[]:,\"'\n\t -#&*!|>%@?~/\\0123456789aeznull".to_vec()),
        1 => any::<u8>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), byte()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), byte()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DoubleLine),
        any::<usize>().prop_map(Mutation::Pad),
        Just(Mutation::OneLine),
    ]
}

fn apply(text: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut t = text.to_vec();
    for m in muts {
        let len = t.len().max(1);
        match *m {
            Mutation::Truncate(n) => t.truncate(n % len),
            Mutation::Flip(i, b) => {
                if let Some(x) = t.get_mut(i % len) {
                    *x = b;
                }
            }
            Mutation::Insert(i, b) => t.insert((i % len).min(t.len()), b),
            Mutation::Pad(i) => {
                let at = (i % len).min(t.len());
                t.splice(at..at, std::iter::repeat_n(b' ', 70_000));
            }
            Mutation::OneLine => t.retain(|&c| c != b'\n'),
            Mutation::DeleteLine(i) | Mutation::DoubleLine(i) => {
                let mut lines: Vec<Vec<u8>> =
                    t.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let k = i % lines.len().max(1);
                if matches!(m, Mutation::DeleteLine(_)) {
                    if k < lines.len() {
                        lines.remove(k);
                    }
                } else if let Some(l) = lines.get(k).cloned() {
                    lines.insert(k, l);
                }
                t = lines.join(&b'\n');
            }
        }
    }
    t
}

/// Whatever loads must write and load back.
fn writes_and_reloads(i: &Inputs, dir: &Path) {
    let out = dir.join("out.json");
    write_export(i, &out).unwrap();
    let back = load_export(&out, &dir.join("out.catalogue.json"));
    assert!(
        back.is_ok(),
        "the written export does not load: {}",
        back.err().map(|e| e.to_string()).unwrap_or_default()
    );
}

/// An error renders as the command line renders it (miette's graphical handler), without a
/// panic, with nothing a terminal would act on, and with no line longer than the window allows.
fn renders(e: &stalwart::InputError) {
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, e)
        .unwrap();
    assert!(
        !out.chars().any(|c| c != '\n' && stalwart::is_unsafe(c)),
        "an unescaped character reaches the terminal:\n{out:?}"
    );
    // A quoted source line is at most the window plus its frame (messages are miette's to wrap).
    for l in out.lines() {
        let t = l.trim_start();
        if t.starts_with(|c: char| c.is_ascii_digit()) && t.contains(" │ ") {
            assert!(l.chars().count() < 2 * stalwart::MAX_WINDOW_LINE, "{l}");
        }
    }
}

fn run_agent(s: &Seeds, agent: &[u8], cat: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.yaml");
    std::fs::write(&p, agent).unwrap();
    std::fs::write(dir.path().join(s.agent_catalogue_name), cat).unwrap();
    std::fs::write(dir.path().join(s.rulebook_name), &s.rulebook).unwrap();
    match load_agent_yaml(&p) {
        Ok(i) => writes_and_reloads(&i, dir.path()),
        Err(e) => renders(&e),
    }
}

fn run_export(graph: &[u8], graph_name: &str, cat: &[u8], cat_name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let g: PathBuf = dir.path().join(graph_name);
    let c: PathBuf = dir.path().join(cat_name);
    std::fs::write(&g, graph).unwrap();
    std::fs::write(&c, cat).unwrap();
    match load_export(&g, &c) {
        Ok(i) => writes_and_reloads(&i, dir.path()),
        Err(e) => renders(&e),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let s = seeds();
        run_agent(&s, &bytes, &s.agent_catalogue);
        run_agent(&s, &s.agent, &bytes);
        run_export(&bytes, "g.json", &s.catalogue, "c.json");
        run_export(&bytes, "g.yaml", &s.catalogue, "c.json");
        run_export(&s.export, "g.json", &bytes, "c.json");
        run_export(&s.export, "g.json", &bytes, "c.yaml");
    }

    #[test]
    fn random_texts_never_panic(text in "[{}\\[\\]:,\"' \\n\\-a-z0-9#&*!|>~]{0,300}") {
        let s = seeds();
        run_agent(&s, text.as_bytes(), &s.agent_catalogue);
        run_export(text.as_bytes(), "g.json", &s.catalogue, "c.json");
        run_export(text.as_bytes(), "g.yaml", &s.catalogue, "c.yaml");
        run_export(&s.export, "g.json", text.as_bytes(), "c.yaml");
    }

    #[test]
    fn mutated_agent_yaml_never_panics(muts in prop::collection::vec(mutation(), 1..6)) {
        let s = seeds();
        run_agent(&s, &apply(&s.agent, &muts), &s.agent_catalogue);
    }

    #[test]
    fn mutated_shop_catalogue_never_panics(muts in prop::collection::vec(mutation(), 1..6)) {
        let s = seeds();
        run_agent(&s, &s.agent, &apply(&s.agent_catalogue, &muts));
    }

    #[test]
    fn mutated_export_never_panics(muts in prop::collection::vec(mutation(), 1..6)) {
        let s = seeds();
        run_export(&apply(&s.export, &muts), "g.json", &s.catalogue, "c.json");
    }
}

/// Cases for the mutated catalogue: `STALWART_PROPTEST_CASES`, else 64 (a valid catalogue verifies
/// the whole export, so each case costs a run; 256 took over a minute of the suite).
fn catalogue_cases() -> u32 {
    std::env::var("STALWART_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: catalogue_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_catalogue_never_panics(muts in prop::collection::vec(mutation(), 1..6)) {
        let s = seeds();
        run_export(&s.export, "g.json", &apply(&s.catalogue, &muts), "c.json");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let s = seeds();
    for depth in [300, 5_000, 50_000] {
        let json = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        run_export(json.as_bytes(), "g.json", &s.catalogue, "c.json");
        let json = format!(
            "{{\"format\": \"qls-graph/1\", \"x\": {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        run_export(json.as_bytes(), "g.json", &s.catalogue, "c.json");
        let yaml = format!("agents: {}{}\n", "[".repeat(depth), "]".repeat(depth));
        run_agent(&s, yaml.as_bytes(), &s.agent_catalogue);
        let yaml = format!("agents: {}\n", "{a: ".repeat(depth));
        run_agent(&s, yaml.as_bytes(), &s.agent_catalogue);
    }
}

#[test]
fn odd_but_valid_inputs_load_or_fail_cleanly() {
    let s = seeds();
    for text in [
        "",
        "{}",
        "[]",
        "null",
        "\u{feff}{}",
        "{\"format\": \"qls-graph/1\"}",
        "{\"format\": \"qls-graph/1\", \"nodes\": null, \"edges\": {}}",
        "{\"format\": \"qls-graph/1\", \"nodes\": [{\"id\": 1, \"kind\": \"start\"}]}",
        "{\"format\": \"qls-graph/1\", \"nodes\": [{\"id\": \"\\ud83d\\ude00\", \"kind\":\t\"start\"}]}",
        "format: qls-graph/1\nnodes:\n  - {id: s, kind: start}\n",
        "---\na: 1\n---\nb: 2\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "? [a]\n: 1\n",
    ] {
        run_export(text.as_bytes(), "g.json", &s.catalogue, "c.json");
        run_export(text.as_bytes(), "g.yaml", &s.catalogue, "c.json");
        run_export(&s.export, "g.json", text.as_bytes(), "c.yaml");
        run_agent(&s, text.as_bytes(), &s.agent_catalogue);
    }
}

/// The traces reader and QG016's walk (SPEC 2.4): whatever the bytes, `read_traces` returns `Ok`
/// or `Err`, and whatever it reads walks the shop's flattened graph without a panic.
fn run_traces(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("runs.jsonl");
    std::fs::write(&p, bytes).unwrap();
    let mut inputs = load_agent_yaml(&manifest().join("fixtures/shop/agent.yaml")).unwrap();
    if let Ok(traces) = stalwart::input::read_traces(&mut inputs.sources, &p) {
        let m = stalwart::model::flatten(&inputs.export, &inputs.catalogue, 1).unwrap();
        let (found, info) = stalwart::checks::traces::unmodelled_paths(&m, &traces, "runs.jsonl");
        assert_eq!(info.runs, traces.len());
        assert!(found.len() <= info.privileged_after);
        for f in &found {
            assert!(f.witness.last().is_some_and(|s| s.violation));
        }
    }
}

/// A line of a traces file the shop's nodes and tools (and some it does not have) appear in.
fn trace_line() -> impl Strategy<Value = String> {
    let node = prop::sample::select(vec![
        "__start__",
        "__end__",
        "desk",
        "desk_model",
        "desk_tools",
        "billing",
        "billing_model",
        "billing_tools",
        "ghost",
        "kb/retrieve",
        "",
    ]);
    let tool = prop::option::of(prop::sample::select(vec![
        "get_order",
        "charge_card",
        "refund_card",
        "send_receipt",
        "read_inbox",
        "mystery",
    ]));
    let run = prop_oneof![
        "[a-z0-9-]{0,6}".prop_map(|s| format!("\"{s}\"")),
        any::<u16>().prop_map(|n| n.to_string()),
    ];
    (run, prop::collection::vec((node, tool), 0..12)).prop_map(|(run, steps)| {
        let steps: Vec<String> = steps
            .iter()
            .map(|(n, t)| match t {
                Some(t) => format!("{{\"node\": \"{n}\", \"tool\": \"{t}\"}}"),
                None => format!("{{\"node\": \"{n}\"}}"),
            })
            .collect();
        format!("{{\"run\": {run}, \"steps\": [{}]}}", steps.join(", "))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_traces_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        run_traces(&bytes);
    }

    #[test]
    fn random_traces_texts_never_panic(text in "[{}\\[\\]:,\"' \\n\\-a-z0-9_\\\\]{0,300}") {
        run_traces(text.as_bytes());
    }

    #[test]
    fn mutated_traces_never_panic(
        lines in prop::collection::vec(trace_line(), 1..6),
        muts in prop::collection::vec(mutation(), 0..6),
    ) {
        let text = lines.join("\n");
        run_traces(&apply(text.as_bytes(), &muts));
    }
}

#[test]
fn odd_traces_load_or_fail_cleanly() {
    let deep = format!(
        "{{\"run\": 1, \"steps\": {}{}}}",
        "[".repeat(5_000),
        "]".repeat(5_000)
    );
    for text in [
        "",
        "\n\n",
        "\u{feff}{\"run\": 1, \"steps\": []}",
        "{\"run\": 1, \"steps\": []}\r\n{\"run\": 2, \"steps\": []}\r\n",
        "{\"run\": 1e400, \"steps\": []}",
        "{\"run\": -0, \"steps\": [{\"node\": \"\\ud83d\\ude00\"}]}",
        "{\"run\": \"a\",\n\"steps\": []}",
        "{\"run\": 1, \"steps\": []} {\"run\": 2, \"steps\": []}",
        "{\"run\": 1, \"steps\": []}\u{2028}",
        "null",
        deep.as_str(),
    ] {
        run_traces(text.as_bytes());
    }
}

// ------------------------------------------------------------------------------------------------
// Python tool modules and the code checks

/// Cases per Python property: `STALWART_PROPTEST_CASES`, else 128.
fn python_cases() -> u32 {
    std::env::var("STALWART_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

/// The Python seeds: the shop's tools and the code checks' fixture.
fn python_seeds() -> Vec<Vec<u8>> {
    [
        "fixtures/shop-python/shop/tools.py",
        "fixtures/code-checks/tools.py",
    ]
    .iter()
    .map(|p| read(&manifest().join(p)))
    .collect()
}

/// Feeds `text` as `shop/tools.py` to the module reader (through an agent.yaml that names it) and,
/// whatever the reader says, to the code checks: a catalogue tool that reads outside and does not
/// send out, spanning the first half of the text, so every check looks at it.
fn run_python(text: &[u8]) {
    use stalwart::checks::code;
    use stalwart::input::PyModule;
    use stalwart::{Catalogue, ToolDef, ToolKind};
    use stalwart::{Loc, SourceMap};

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("shop")).unwrap();
    std::fs::write(dir.path().join("shop/tools.py"), text).unwrap();
    let agent = dir.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "agents:\n  desk:\n    model: \"anthropic:claude-sonnet-5-5\"\ntools:\n  - python: shop.tools\n",
    )
    .unwrap();
    if let Ok(i) = load_agent_yaml(&agent) {
        let cc = code::check(&i).expect("a module was read");
        assert_eq!(cc.files, 1);
        for f in &cc.findings {
            let loc = f.location.line().expect("a code finding is located");
            assert!(loc.line >= 1 && loc.column >= 1);
        }
    }
    let text = String::from_utf8_lossy(text).into_owned();
    let half = text.len() / 2;
    let mut sources = SourceMap::default();
    let file = sources.add("tools.py".into(), "tools.py".into(), text);
    let mut t = ToolDef::new("t", ToolKind::Read, Loc::new(file, 1, 1));
    t.reads_outside = true;
    let catalogue = Catalogue {
        tools: vec![t],
        ..Catalogue::default()
    };
    let module = PyModule {
        module: "tools".into(),
        file,
        tools: vec![("t".into(), "t".into(), 0..half)],
    };
    let _ = code::check_module(&sources, &module, &catalogue);
}

/// Bytes that matter to Python.
fn py_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(b"()[]{}:=,.\"'@#\\\n\t *-+rbf_0123456789aeiostkxAKI".to_vec()),
        1 => any::<u8>(),
    ]
}

fn py_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), py_byte()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), py_byte()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DoubleLine),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: python_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_python_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        run_python(&bytes);
    }

    #[test]
    fn random_python_texts_never_panic(
        text in "(@tool\\(|def |kind=|\"read\"|\"write\"|import |from |requests\\.get\\(|os\\.environ\\[|api_key = |\"sk-[a-z]{24}\"|[()\\[\\]{}:=,.\"' \\n#a-z0-9_*]){0,120}"
    ) {
        run_python(text.as_bytes());
    }

    #[test]
    fn mutated_python_never_panics(
        seed in 0usize..2,
        muts in prop::collection::vec(py_mutation(), 0..8),
    ) {
        let seeds = python_seeds();
        run_python(&apply(&seeds[seed], &muts));
    }
}

#[test]
fn odd_python_reads_or_fails_cleanly() {
    let deep_list = format!(
        "@tool(kind={}\"read\"{})\ndef f():\n    pass\n",
        "[".repeat(3_000),
        "]".repeat(3_000)
    );
    let deep_call = format!(
        "@tool(kind=\"read\")\ndef f():\n    return {}x{}\n",
        "requests.get(".repeat(2_000),
        ")".repeat(2_000)
    );
    let deep_attr = format!(
        "import os\n@tool(kind=\"read\")\ndef f():\n    return os{}\n",
        ".environ".repeat(5_000)
    );
    for text in [
        "",
        "\u{feff}from langchain_core.tools import tool\n@tool(kind=\"read\")\ndef f():\n    pass\n",
        "@tool(kind=\"read\")\r\ndef f():\r\n    pass\r\n",
        "@tool(kind=\"read\")\ndef f(x: Optional[Optional[Optional[int]]]):\n    pass\n",
        "@tool(kind='read', description=f'{x}')\ndef f():\n    pass\n",
        "@tool(kind=b'read')\ndef f():\n    pass\n",
        "@tool(kind=\"read\")\ndef f():\n    token = \"\\u00e9\\N{BULLET}\\x00\"\n",
        "@tool(kind=\"read\")\ndef f():\n    '''\u{202e}sk-aaaaaaaaaaaaaaaaaaaaaaaa'''\n",
        deep_list.as_str(),
        deep_call.as_str(),
        deep_attr.as_str(),
    ] {
        run_python(text.as_bytes());
    }
}

/// A case the fuzzer found in CI: a catalogue line doubled, 70,000 spaces padded in, a line
/// deleted; the error it raised quoted a line longer than the window.
#[test]
fn padded_catalogue_line_is_clipped() {
    let s = seeds();
    let muts = [
        Mutation::DoubleLine(1011425219477050437),
        Mutation::Pad(15055621412360488266),
        Mutation::DeleteLine(7316141245143654990),
    ];
    run_agent(&s, &s.agent, &apply(&s.agent_catalogue, &muts));
}
