//! `stalwart catalogue from-mcp TOOLS.json` (issue 16, src/input/mcp.rs): an MCP `tools/list`
//! result as a catalogue, by the annotations' mapping with MCP's defaults for a hint not given (issue
//! 28); the catalogue verifies with an export, the tool without annotations a destructive write
//! reaching the open world; every bad file is exit 2 at its place.

use crate::common;

use common::{snap, stalwart};

#[test]
fn a_tools_list_result_becomes_a_catalogue() {
    let r = stalwart(&["catalogue", "from-mcp", "fixtures/mcp/tools-list.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    snap("mcp-catalogue.json", &r.stdout);
    let cat: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let t = &cat["tools"];
    assert_eq!(t["read_file"]["kind"], "read");
    assert_eq!(t["fetch_url"]["reads_outside"], true);
    assert_eq!(t["delete_file"]["kind"], "write");
    assert_eq!(t["delete_file"]["destructive"], true);
    assert_eq!(t["delete_file"]["idempotency"], true);
    // no annotation: MCP's defaults (readOnlyHint false, destructiveHint true, idempotentHint
    // false, openWorldHint true)
    assert_eq!(t["rename_file"]["kind"], "write");
    assert_eq!(t["rename_file"]["destructive"], true);
    assert_eq!(t["rename_file"]["idempotency"], false);
    assert_eq!(t["rename_file"]["reads_outside"], true);
    assert_eq!(t["rename_file"]["sends_out"], true);
    // openWorldHint unset on a write: its default, true
    assert_eq!(t["delete_file"]["sends_out"], true);
    assert!(t["read_file"].get("reads_outside").is_none());
    assert!(!r.stderr.contains("kind not declared"), "{}", r.stderr);
}

#[test]
fn the_catalogue_verifies_with_mcp_defaults() {
    let dir = std::env::temp_dir().join(format!("stalwart-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cat = dir.join("catalogue.json");
    let r = stalwart(&[
        "catalogue",
        "from-mcp",
        "fixtures/mcp/tools-list.json",
        "-o",
        cat.to_str().expect("utf-8"),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let graph = dir.join("graph.json");
    std::fs::write(
        &graph,
        r#"{"format": "qls-graph/1", "name": "files",
            "nodes": [{"id": "__start__", "kind": "start"},
                      {"id": "agent", "kind": "model"},
                      {"id": "tools", "kind": "tools_plain",
                       "tools": ["read_file", "fetch_url", "delete_file", "rename_file"]},
                      {"id": "__end__", "kind": "end"}],
            "edges": [{"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
                      {"from": "agent", "kind": "conditional", "destinations": ["tools", "__end__"]},
                      {"from": "tools", "kind": "fixed", "destinations": ["agent"]}]}"#,
    )
    .expect("write graph");
    let v = stalwart(&[
        "verify",
        "--graph",
        graph.to_str().expect("utf-8"),
        "--catalogue",
        cat.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(v.code, 1, "{}", v.stderr);
    let report: serde_json::Value = serde_json::from_str(&v.stdout).expect("json");
    let unset: Vec<&str> = report["lints"]
        .as_array()
        .expect("lints")
        .iter()
        .filter(|l| l["id"] == "kind_unset")
        .filter_map(|l| l["tool"].as_str())
        .collect();
    assert!(unset.is_empty(), "{unset:?}");
    // a write by MCP's defaults: after fetch_url's outside content, an unconfirmed rename is QG011
    let findings: Vec<(String, String)> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                f["subject"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(
        findings.contains(&("QG011".into(), "rename_file".into())),
        "{findings:?}"
    );
    assert!(
        findings.contains(&("QG011".into(), "delete_file".into())),
        "{findings:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_tools_list_is_exit_2_at_its_place() {
    let dir = std::env::temp_dir().join(format!("stalwart-mcp-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases = [
        ("not-json.json", "{\"tools\": [", "invalid JSON"),
        ("no-tools.json", "{\"result\": {}}", "no `tools` list"),
        (
            "no-name.json",
            "{\"tools\": [{\"description\": \"x\"}]}",
            "`name` of a tool of `tools` is missing",
        ),
        (
            "twice.json",
            "{\"tools\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
            "two tools are named 'a'",
        ),
        (
            "hint.json",
            "{\"tools\": [{\"name\": \"a\", \"annotations\": {\"readOnlyHint\": 1}}]}",
            "`readOnlyHint` of tool 'a' must be true or false",
        ),
        (
            "annotations.json",
            "{\"tools\": [{\"name\": \"a\", \"annotations\": [true]}]}",
            "`annotations` of tool 'a'",
        ),
        (
            "schema.json",
            "{\"tools\": [{\"name\": \"a\", \"inputSchema\": 3}]}",
            "`inputSchema` of tool 'a'",
        ),
    ];
    for (file, text, want) in cases {
        let p = dir.join(file);
        std::fs::write(&p, text).expect("write");
        let r = stalwart(&["catalogue", "from-mcp", p.to_str().expect("utf-8")]);
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        // miette wraps long messages: read them as one line
        let flat = r
            .stderr
            .replace('│', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains(want), "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{file}:1:")),
            "{file}: not located: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{file}: wrote {}", r.stdout);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
