//! Issue 28 item 6: fix texts a LangGraph user can apply. A step's own call is guarded where it is
//! made (`guard.call`), never by replacing the step with `guard.tool_node` (that deletes its
//! logic); the fix names `create_react_agent`'s own form; and the builder code a fix writes names
//! the node as the user wrote it in `add_node`, not the qualified id.

use crate::common;

use serde_json::json;
use stalwart::Finding;
use stalwart::{verify, Options};

/// Verifies a LangGraph export (its `producer` says so) of `nodes`, `edges` and `subgraphs`, over a
/// catalogue with the read `search_web` and the write `book_hotel`.
fn findings(
    nodes: serde_json::Value,
    edges: serde_json::Value,
    subgraphs: serde_json::Value,
) -> Vec<Finding> {
    let dir = tempfile::tempdir().expect("tempdir");
    let graph = json!({
        "format": "qls-graph/1",
        "name": "LangGraph",
        "recursion_limit": 25,
        "nodes": nodes,
        "edges": edges,
        "subgraphs": subgraphs,
        "producer": {"exporter": "stalwart_export", "versions": {"langgraph": "1.2.24"}},
    });
    let catalogue = json!({
        "format": "qls-catalogue/1",
        "tools": {
            "search_web": {"kind": "read", "args": {"query": {"type": "string"}}},
            "book_hotel": {"kind": "write", "args": {"hotel": {"type": "string"}}},
        }
    });
    std::fs::write(dir.path().join("graph.json"), graph.to_string()).expect("write");
    std::fs::write(dir.path().join("catalogue.json"), catalogue.to_string()).expect("write");
    let inputs = common::load(dir.path());
    let opts = Options::new(common::steps(&inputs));
    verify(inputs, &opts).expect("verify").findings
}

/// Each QG001 finding as `node / tool` and its fix, for a snapshot.
fn qg001_fixes(fs: &[Finding]) -> String {
    let mut out = String::new();
    for f in fs.iter().filter(|f| f.rule == "QG001") {
        out.push_str(&format!(
            "{} / {}\n{}\n\n",
            f.node.as_deref().unwrap_or("-"),
            f.subject,
            f.fix
        ));
    }
    out
}

#[test]
fn a_step_is_kept_and_its_call_guarded_where_it_is_made() {
    let fs = findings(
        json!([
            {"id": "__start__", "kind": "start"},
            {"id": "agent", "kind": "model", "tools": []},
            {"id": "book", "kind": "step", "tools": ["book_hotel"]},
            {"id": "__end__", "kind": "end"},
        ]),
        json!([
            {"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
            {"from": "agent", "kind": "conditional", "destinations": ["book", "__end__"]},
            {"from": "book", "kind": "fixed", "destinations": ["__end__"]},
        ]),
        json!({}),
    );
    let fix = &fs
        .iter()
        .find(|f| f.rule == "QG001" && f.subject == "book_hotel")
        .expect("QG001 on the step's call")
        .fix;
    assert!(!fix.contains("guard.tool_node"), "{fix}");
    assert!(fix.contains("guard.call(book_hotel, args, state)"), "{fix}");
    assert!(
        fix.contains("await guard.acall(book_hotel, args, state)"),
        "{fix}"
    );
    common::snap("fix-texts-step", &qg001_fixes(&fs));
}

#[test]
fn a_fix_names_the_builder_node_not_the_qualified_id() {
    let fs = findings(
        json!([
            {"id": "__start__", "kind": "start"},
            {"id": "agent", "kind": "model", "tools": ["search_web"]},
            {"id": "research", "kind": "subgraph", "graph": "research"},
            {"id": "__end__", "kind": "end"},
        ]),
        json!([
            {"from": "__start__", "kind": "fixed", "destinations": ["agent"]},
            {"from": "agent", "kind": "conditional", "destinations": ["research", "__end__"]},
            {"from": "research", "kind": "fixed", "destinations": ["agent"]},
        ]),
        json!({"research": {
            "nodes": [
                {"id": "__start__", "kind": "start"},
                {"id": "fetch", "kind": "tools_plain", "tools": ["search_web"]},
                {"id": "__end__", "kind": "end"},
            ],
            "edges": [
                {"from": "__start__", "kind": "fixed", "destinations": ["fetch"]},
                {"from": "fetch", "kind": "fixed", "destinations": ["__end__"]},
            ],
        }}),
    );
    let f = fs
        .iter()
        .find(|f| f.rule == "QG001" && f.subject == "search_web")
        .expect("QG001 on the plain tool node");
    assert_eq!(f.node.as_deref(), Some("research/fetch"));
    assert!(
        f.fix
            .contains("builder.add_node(\"fetch\", guard.tool_node(tools))"),
        "{}",
        f.fix
    );
    assert!(!f.fix.contains("research/fetch"), "{}", f.fix);
    assert!(
        f.fix.contains("tools=guard.tool_node([...])") && f.fix.contains("stalwart_guard"),
        "create_react_agent's form: {}",
        f.fix
    );
    common::snap("fix-texts-subgraph", &qg001_fixes(&fs));
}

#[test]
fn a_guard_the_export_does_not_credit_is_named_with_why_not() {
    // Issue 29 item 3: the exporter saw the guard on a tool node (an agent built inside a node
    // function, `tools=guard.tool_node([...])`) but did not credit it; the fix is what keeps the
    // guard's history, not "use guard.tool_node" (done already).
    let why = "the guard's history does not outlive the subgraph (node 'writer' returns only the \
               answer; across the node's runs `at_most` (rule 5) does not hold); fix: return \
               result[\"stalwart_guard\"] with the update";
    let fs = findings(
        json!([
            {"id": "__start__", "kind": "start"},
            {"id": "writer", "kind": "subgraph", "graph": "writer"},
            {"id": "__end__", "kind": "end"},
        ]),
        json!([
            {"from": "__start__", "kind": "fixed", "destinations": ["writer"]},
            {"from": "writer", "kind": "fixed", "destinations": ["__end__"]},
        ]),
        json!({"writer": {
            "nodes": [
                {"id": "__start__", "kind": "start"},
                {"id": "tools", "kind": "tools_plain", "tools": ["book_hotel"],
                 "guard_not_credited": why},
                {"id": "__end__", "kind": "end"},
            ],
            "edges": [
                {"from": "__start__", "kind": "fixed", "destinations": ["tools"]},
                {"from": "tools", "kind": "fixed", "destinations": ["__end__"]},
            ],
        }}),
    );
    let f = fs
        .iter()
        .find(|f| f.rule == "QG001" && f.subject == "book_hotel")
        .expect("QG001 on the uncredited tool node");
    assert_eq!(f.node.as_deref(), Some("writer/tools"));
    let head = "'tools' runs its calls through the guard, but the export does not credit it: the guard's history";
    assert!(f.fix.starts_with(head), "{}", f.fix);
    assert!(
        f.fix.contains("`at_most` (rule 5)") && f.fix.contains("result[\"stalwart_guard\"]"),
        "{}",
        f.fix
    );
    assert!(!f.fix.contains("guard.tool_node(tools)"), "{}", f.fix);
    assert!(
        f.message.contains("which the export does not credit"),
        "{}",
        f.message
    );
}
