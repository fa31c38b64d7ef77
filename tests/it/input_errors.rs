//! The readers (SPEC 2.1–2.3): every bad input is an error naming the file, line and column of the
//! offending word, with a help saying the fix; the shop, the LangGraph corpus and the AgentDojo
//! corpus load; `--export-only` output loads back into the same export and catalogue.
//!
//! Bad inputs live in `fixtures/errors/` (graphs check against `fixtures/errors/catalogue.json`,
//! catalogues against `fixtures/errors/good.json`, agent.yaml files read their neighbours).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use stalwart::input::{load_agent_yaml, load_export, parse_guard, write_export, Inputs};
use stalwart::InputError;
use stalwart::Loc;
use stalwart::{Compensation, EdgeKind, Export, GraphDef, NodeKind, NotAfter, Role, ToolDef};

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn errors_dir() -> PathBuf {
    manifest().join("fixtures/errors")
}

/// `../shared` beside the crate, or `None` (with a message) when it is missing.
fn shared() -> Option<PathBuf> {
    let p = manifest().join("../shared");
    if p.is_dir() {
        Some(p)
    } else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: {} is missing\n", p.display()),
        );
        None
    }
}

fn graph_err(name: &str) -> InputError {
    let d = errors_dir();
    match load_export(&d.join(name), &d.join("catalogue.json")) {
        Ok(_) => panic!("{name} loaded, but it is bad input"),
        Err(e) => e,
    }
}

fn catalogue_err(name: &str) -> InputError {
    let d = errors_dir();
    match load_export(&d.join("good.json"), &d.join(name)) {
        Ok(_) => panic!("{name} loaded, but it is bad input"),
        Err(e) => e,
    }
}

fn agent_err(name: &str) -> InputError {
    match load_agent_yaml(&errors_dir().join(name)) {
        Ok(_) => panic!("{name} loaded, but it is bad input"),
        Err(e) => e,
    }
}

/// The error's Display starts with `<...>/file:line:column: `, contains `msg`, and its help contains `help`.
#[track_caller]
fn check(e: &InputError, file: &str, line: u32, column: u32, msg: &str, help: &str) {
    let shown = e.to_string();
    let place = format!("{file}:{line}:{column}: ");
    assert!(shown.contains(&place), "expected {place:?} in {shown:?}");
    assert!(shown.contains(msg), "expected {msg:?} in {shown:?}");
    let h = e.help().map(|h| h.to_string()).unwrap_or_default();
    assert!(
        h.contains(help),
        "expected help {help:?} in {h:?} (error: {shown})"
    );
    let (f, l, c) = e.location().expect("a located error");
    assert!(
        f.ends_with(file) && l == line && c == column,
        "location {f}:{l}:{c}"
    );
    assert!(e.source_code().is_some(), "the error carries its file");
    assert!(
        e.labels().is_some_and(|mut l| l.next().is_some()),
        "the error labels the word"
    );
}

// ------------------------------------------------------------------------------------------------
// qls-graph/1 (SPEC 2.2)

#[test]
fn unknown_node_kind() {
    let e = graph_err("unknown_kind.json");
    check(
        &e,
        "unknown_kind.json",
        8,
        29,
        "unknown node kind 'toolz'",
        "tools_plain, step, router, subgraph, remote",
    );
}

#[test]
fn dangling_destination() {
    let e = graph_err("dangling_destination.json");
    check(
        &e,
        "dangling_destination.json",
        14,
        63,
        "goes to 'tool', which is not a node",
        "__start__, agent, tools, confirm, __end__",
    );
    assert!(e.to_string().contains("did you mean 'tools'"));
}

#[test]
fn duplicate_id() {
    let e = graph_err("duplicate_id.json");
    check(
        &e,
        "duplicate_id.json",
        9,
        12,
        "duplicate node id 'agent'",
        "rename one of the two",
    );
    assert!(e.to_string().contains("first declared at line 7"));
    assert_eq!(
        e.labels().unwrap().count(),
        2,
        "both declarations are labelled"
    );
}

#[test]
fn slash_in_id() {
    let e = graph_err("slash_id.json");
    check(
        &e,
        "slash_id.json",
        9,
        12,
        "contains `/`",
        "review%2Fconfirm",
    );
}

#[test]
fn empty_id() {
    let e = graph_err("empty_id.json");
    check(&e, "empty_id.json", 9, 12, "empty id", "non-empty `id`");
}

#[test]
fn interrupt_on_missing_node() {
    let e = graph_err("interrupt_missing_node.json");
    check(
        &e,
        "interrupt_missing_node.json",
        19,
        27,
        "pauses at 'tool', which is not a node",
        "name one of its nodes",
    );
}

/// SPEC 2.2, 12.2: a review of each call names its tool and takes no answer flag.
#[test]
fn a_call_review_names_its_tool_and_no_answer() {
    let e = graph_err("call_without_tool.json");
    check(
        &e,
        "call_without_tool.json",
        19,
        18,
        "the `call` interrupt at 'tools' names no `tool`",
        "name the tool whose calls the person reviews",
    );
    let e = graph_err("call_with_answer.json");
    check(
        &e,
        "call_with_answer.json",
        19,
        85,
        "the `call` interrupt at 'tools' has an `answer` ('approved')",
        "remove `answer`",
    );
}

/// A key a small edit away from a word of qls-graph/1 is refused at the key, naming the word
/// meant: read as metadata, a misspelt `hosted` or `interrupts` would drop a provider's calls or a
/// review from the proof unseen. A key far from every word stays metadata (`langgraph`).
#[test]
fn a_misspelt_word_of_the_export_is_refused() {
    let e = graph_err("misspelt_node_word.json");
    check(
        &e,
        "misspelt_node_word.json",
        6,
        6,
        "`hostd` on node 'agent' is not a word of qls-graph/1: did you mean `hosted`?",
        "write `hosted`",
    );
    let e = graph_err("misspelt_top_word.json");
    check(
        &e,
        "misspelt_top_word.json",
        14,
        3,
        "`interupts` on the export is not a word of qls-graph/1: did you mean `interrupts`?",
        "silently drop what it says from the proof",
    );
    let d = errors_dir();
    let i = load_export(&d.join("good_hosted.json"), &d.join("catalogue.json")).unwrap();
    assert!(i.export.graph.nodes.iter().any(|n| !n.hosted.is_empty()));
}

/// SPEC 2.2 `input`: a mapping whose `reads_outside` is a bool.
#[test]
fn input_is_a_mapping_of_bools() {
    let e = graph_err("input_not_a_map.json");
    check(
        &e,
        "input_not_a_map.json",
        5,
        12,
        "`input` is `true`, not a mapping",
        "\"input\": {\"reads_outside\": true}",
    );
    let e = graph_err("input_bad_bool.json");
    check(
        &e,
        "input_bad_bool.json",
        5,
        30,
        "`reads_outside` of `input` must be true or false",
        "without quotes",
    );
    let d = errors_dir();
    let i = load_export(&d.join("good_reviews.json"), &d.join("catalogue.json")).unwrap();
    assert!(i.export.input_reads_outside);
    let review = &i.export.graph.interrupts[0];
    assert_eq!(review.when, stalwart::When::Call);
    assert_eq!(
        review.tool.as_ref().map(|t| t.name.as_str()),
        Some("refund_card")
    );
    let i = load_export(&d.join("good.json"), &d.join("catalogue.json")).unwrap();
    assert!(!i.export.input_reads_outside);
}

#[test]
fn tool_bound_but_not_in_catalogue() {
    let e = graph_err("tool_not_in_catalogue.json");
    check(
        &e,
        "tool_not_in_catalogue.json",
        8,
        62,
        "node 'tools' binds tool 'refund'",
        "declare 'refund' in",
    );
    // Both places: the node (the position) and the catalogue (by name).
    assert!(e.to_string().contains("catalogue.json"));
    assert!(e
        .help()
        .unwrap()
        .to_string()
        .contains("read_inbox, get_order, refund_card"));
}

#[test]
fn interrupt_tool_not_in_catalogue() {
    let e = graph_err("interrupt_tool_missing.json");
    check(
        &e,
        "interrupt_tool_missing.json",
        19,
        62,
        "confirms tool 'wire_money'",
        "declare 'wire_money'",
    );
    assert!(e.to_string().contains("catalogue.json"));
}

#[test]
fn guard_naming_an_undeclared_flag() {
    let e = graph_err("guard_undeclared_flag.json");
    // `"guard": "approved && !refunded"`: the column of `refunded` inside the string.
    check(
        &e,
        "guard_undeclared_flag.json",
        15,
        100,
        "reads flag 'refunded'",
        "declare it under `state`",
    );
    let label = e.labels().unwrap().next().unwrap();
    assert_eq!(
        label.len(),
        "refunded".len(),
        "the label covers the flag only"
    );
}

#[test]
fn guard_syntax_error_points_inside_the_string() {
    let e = graph_err("guard_syntax.json");
    // `"guard": "approved &&"`: the end of the text, where a flag was expected.
    check(
        &e,
        "guard_syntax.json",
        15,
        98,
        "expected a flag name",
        "`e && e`",
    );
}

#[test]
fn sets_naming_an_undeclared_flag() {
    let e = graph_err("sets_undeclared.json");
    check(
        &e,
        "sets_undeclared.json",
        9,
        48,
        "sets flag 'aproved'",
        "declared flags: approved",
    );
}

#[test]
fn answer_naming_an_undeclared_flag() {
    let e = graph_err("answer_undeclared.json");
    check(
        &e,
        "answer_undeclared.json",
        19,
        87,
        "answers into flag 'said_yes'",
        "declare it under `state`",
    );
}

#[test]
fn fixed_edge_with_null_destinations() {
    let e = graph_err("fixed_null.json");
    check(
        &e,
        "fixed_null.json",
        16,
        5,
        "fixed edge from 'tools' has `null` destinations",
        "list where it goes",
    );
}

#[test]
fn edge_from_missing_node() {
    let e = graph_err("edge_from_missing.json");
    check(
        &e,
        "edge_from_missing.json",
        16,
        14,
        "an edge leaves 'toolz'",
        "`from` must name one of its nodes",
    );
}

#[test]
fn send_from_missing_node() {
    let e = graph_err("send_from_missing.json");
    check(
        &e,
        "send_from_missing.json",
        18,
        22,
        "a send leaves 'agnt'",
        "`from` must name one of its nodes",
    );
}

#[test]
fn parent_reference_in_the_top_graph() {
    let e = graph_err("parent_in_top.json");
    check(
        &e,
        "parent_in_top.json",
        16,
        57,
        "`../` leaves a subgraph and this is the top graph",
        "without `../`",
    );
}

#[test]
fn parent_reference_to_a_missing_node() {
    let e = graph_err("parent_missing.json");
    check(
        &e,
        "parent_missing.json",
        30,
        77,
        "has no node 'nowhere'",
        "after `../`",
    );
}

/// SPEC 3.1: `../` may repeat; `../../id` names a node two graphs up, and must be there.
#[test]
fn parent_references_may_repeat() {
    let d = errors_dir();
    let i = load_export(&d.join("parent_two_up_ok.json"), &d.join("catalogue.json")).unwrap();
    let m = stalwart::model::flatten(&i.export, &i.catalogue, 1).unwrap();
    let look = m.node_ix("kb/deeper/look").unwrap();
    let agent = m.node_ix("agent").unwrap();
    assert!(
        m.edges.iter().any(|e| e.from == look && e.to == agent),
        "no edge from kb/deeper/look to the top graph's agent"
    );
    let e = graph_err("parent_two_up_missing.json");
    check(
        &e,
        "parent_two_up_missing.json",
        43,
        77,
        "the top graph (2 graphs above subgraph 'inner_graph') has no node 'nowhere'",
        "after `../../`",
    );
    let e = graph_err("parent_three_up.json");
    check(
        &e,
        "parent_three_up.json",
        43,
        77,
        "'../../../agent', which leaves the top graph: subgraph 'inner_graph' is nested fewer than 3 subgraphs deep",
        "use one `../` per subgraph to leave",
    );
}

/// SPEC 3.1: a subgraph with neither `entry` nor a `start` node is bad input, as the same top
/// graph is (not QG006).
#[test]
fn subgraph_without_start_or_entry() {
    let e = graph_err("subgraph_no_start.json");
    check(
        &e,
        "subgraph_no_start.json",
        18,
        16,
        "subgraph 'kb_graph' has no `start` node and no `entry`",
        "add a node `{\"id\": \"__start__\", \"kind\": \"start\"}`",
    );
}

/// SPEC 3.1: one namespace of flags; a flag declared again with another scope is bad input.
#[test]
fn flag_declared_twice_with_different_scopes() {
    let e = graph_err("flag_scope_twice.json");
    check(
        &e,
        "flag_scope_twice.json",
        16,
        17,
        "state flag 'approved' is declared again with another scope",
        "give both the same scope, or rename one",
    );
}

/// SPEC 3.1: a `call` review on a node that does not call its tool reviews nothing: the lint
/// `interrupt_confirms_nothing`, not an input error.
#[test]
fn a_call_review_on_a_node_not_calling_its_tool_is_a_lint() {
    let d = errors_dir();
    let i = load_export(
        &d.join("call_review_elsewhere_ok.json"),
        &d.join("catalogue.json"),
    )
    .unwrap();
    let r = stalwart::verify(i, &stalwart::Options::new(1)).unwrap();
    let lint = r
        .lints
        .iter()
        .find(|l| l.id == "interrupt_confirms_nothing")
        .expect("the lint interrupt_confirms_nothing");
    assert_eq!(lint.tool, "agent");
    assert!(
        lint.message.contains("which 'agent' does not call"),
        "{}",
        lint.message
    );
}

#[test]
fn subgraph_node_without_graph() {
    let e = graph_err("subgraph_no_graph.json");
    check(
        &e,
        "subgraph_no_graph.json",
        10,
        12,
        "subgraph node 'kb' has no `graph`",
        "name the graph it runs",
    );
}

#[test]
fn subgraph_containing_itself() {
    let e = graph_err("subgraph_cycle.json");
    check(
        &e,
        "subgraph_cycle.json",
        26,
        54,
        "contains itself",
        "break the cycle",
    );
    assert!(e.to_string().contains("kb_graph → kb_graph"), "{e}");
}

#[test]
fn subgraph_with_a_missing_graph_is_not_an_input_error() {
    // QG006 reports it later.
    let d = errors_dir();
    let i = load_export(
        &d.join("subgraph_missing_graph_ok.json"),
        &d.join("catalogue.json"),
    )
    .unwrap();
    let kb = i
        .export
        .graph
        .nodes
        .iter()
        .find(|n| n.id.name == "kb")
        .unwrap();
    assert_eq!(kb.graph.as_ref().unwrap().name, "kb_graf");
}

#[test]
fn session_steps_out_of_range() {
    let e = graph_err("session_steps.json");
    check(
        &e,
        "session_steps.json",
        4,
        20,
        "`session_steps` is 17, outside 1..=16",
        "from 1 to 16",
    );
}

#[test]
fn recursion_limit_zero() {
    let e = graph_err("recursion_limit_zero.json");
    check(
        &e,
        "recursion_limit_zero.json",
        4,
        22,
        "`recursion_limit` is 0",
        "node steps one run may take",
    );
}

#[test]
fn unknown_graph_format() {
    let e = graph_err("bad_format.json");
    check(
        &e,
        "bad_format.json",
        2,
        13,
        "unknown graph format 'qls-graph/2'",
        "qls-graph/1",
    );
}

#[test]
fn json_syntax_error() {
    let e = graph_err("json_syntax.json");
    check(
        &e,
        "json_syntax.json",
        10,
        22,
        "invalid JSON: expected `,` or `}`",
        "missing comma",
    );
}

#[test]
fn wrong_shape_names_key_expected_and_found() {
    let e = graph_err("bad_bool_type.json");
    check(
        &e,
        "bad_bool_type.json",
        4,
        23,
        "`steps` of `budget` must be a whole number, found the quoted text \"ten\"",
        "without quotes",
    );
}

#[test]
fn unreadable_file_is_named() {
    let d = errors_dir();
    let e = load_export(&d.join("no_such_graph.json"), &d.join("catalogue.json")).unwrap_err();
    assert!(e.to_string().contains("no_such_graph.json"), "{e}");
    assert!(e.to_string().contains("no such file"), "{e}");
    assert!(e.help().is_some());
}

// ------------------------------------------------------------------------------------------------
// The catalogue (SPEC 2.3)

#[test]
fn order_rule_naming_a_missing_tool() {
    let e = catalogue_err("order_after_missing.catalogue.json");
    check(
        &e,
        "order_after_missing.catalogue.json",
        6,
        82,
        "order rule of 'refund_card' (`after`) names tool 'lookup_order'",
        "declare 'lookup_order'",
    );
}

#[test]
fn compensation_naming_a_missing_tool() {
    let e = catalogue_err("compensation_missing.catalogue.json");
    check(
        &e,
        "compensation_missing.catalogue.json",
        6,
        63,
        "'refund_card' is undone by tool 'unrefund'",
        "declare 'unrefund'",
    );
}

#[test]
fn unknown_catalogue_format() {
    let e = catalogue_err("bad_format.catalogue.json");
    check(
        &e,
        "bad_format.catalogue.json",
        2,
        13,
        "unknown catalogue format 'qls-graph/1'",
        "qls-catalogue/1",
    );
}

#[test]
fn tool_without_kind() {
    let e = catalogue_err("no_kind.catalogue.json");
    check(
        &e,
        "no_kind.catalogue.json",
        5,
        5,
        "tool 'get_order' has no `kind`",
        "`kind: read`",
    );
}

#[test]
fn quoted_bool_is_text_not_a_bool() {
    let e = catalogue_err("quoted_bool.catalogue.json");
    check(
        &e,
        "quoted_bool.catalogue.json",
        4,
        53,
        "must be true or false, found the quoted text \"true\"",
        "without quotes",
    );
}

/// Issue 28: a word a typo away from a known one (`irreversable`, `reads_outsid`, `sends_ou`, an
/// order word, a role, a store's or a channel's word) is an error at the word naming the word it
/// meant, never a kept word the rules ignore (that silently weakened the proof: a QG013 dropped,
/// a Critical QG011 gone). Each is written into a catalogue of its own.
#[test]
fn a_misspelt_word_is_an_error_naming_the_word_meant() {
    let cases: &[(&str, &str, u32, u32, &str)] = &[
        (
            "{\"tools\": {\"pay\": {\"kind\": \"write\",\n  \"irreversable\": true}}}",
            "irreversable",
            2,
            3,
            "irreversible",
        ),
        (
            "{\"tools\": {\"read_inbox\": {\"kind\": \"read\", \"reads_outsid\": true}}}",
            "reads_outsid",
            1,
            43,
            "reads_outside",
        ),
        (
            "tools:\n  mail: {kind: write, sends_ou: true}\n",
            "sends_ou",
            2,
            23,
            "sends_out",
        ),
        (
            "tools:\n  pay:\n    kind: write\n    order: {aftr: [get_order]}\n",
            "aftr",
            4,
            13,
            "after",
        ),
        (
            "tools:\n  get: {kind: read, args: {to: {role: destinaton}}}\n",
            "destinaton",
            2,
            39,
            "destination",
        ),
        (
            "tools: {}\nstores:\n  mem: {multi_tenat: true}\n",
            "multi_tenat",
            3,
            9,
            "multi_tenant",
        ),
        (
            "tools: {}\nchannels:\n  bank: {auht: mtls}\n",
            "auht",
            3,
            10,
            "auth",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (k, (text, word, line, column, meant)) in cases.iter().enumerate() {
        let name = format!("typo{k}.catalogue.yaml");
        let cat = dir.path().join(&name);
        std::fs::write(&cat, text).unwrap();
        let e = load_export(&errors_dir().join("good.json"), &cat)
            .expect_err(&format!("{word} must be an error"));
        check(
            &e,
            &name,
            *line,
            *column,
            &format!("'{word}' on "),
            &format!("write '{meant}'"),
        );
        assert!(
            e.to_string().contains(&format!("did you mean '{meant}'?")),
            "{e}"
        );
    }
}

#[test]
fn unknown_words_and_roles_are_kept_not_errors() {
    let d = errors_dir();
    let i = load_export(
        &d.join("good.json"),
        &d.join("unknown_words.catalogue.json"),
    )
    .unwrap();
    let words: Vec<(&str, &str, u32)> = i
        .catalogue
        .unknown
        .iter()
        .map(|u| (u.tool.as_str(), u.word.as_str(), u.loc.line))
        .collect();
    assert_eq!(
        words,
        vec![
            ("read_inbox", "team_notes", 4),
            ("read_inbox", "args.folder.role: folder_path", 4)
        ]
    );
    let t = i.catalogue.tool("read_inbox").unwrap();
    assert!(t.reads_outside);
    assert_eq!(t.args[0].name, "folder");
    assert_eq!(t.args[0].role, None);
}

#[test]
fn the_content_role_is_known() {
    // SPEC 2.3: `content` is data the tool reads or stores (the guard's rule 4 does not scan it);
    // a role like the others, not an unknown word.
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("c.json");
    let text = std::fs::read_to_string(errors_dir().join("unknown_words.catalogue.json"))
        .unwrap()
        .replace("\"team_notes\": true, ", "")
        .replace("folder_path", "content");
    std::fs::write(&cat, text).unwrap();
    let i = load_export(&errors_dir().join("good.json"), &cat).unwrap();
    assert!(i.catalogue.unknown.is_empty(), "{:?}", i.catalogue.unknown);
    let t = i.catalogue.tool("read_inbox").unwrap();
    assert_eq!(t.args[0].role, Some(Role::Content));
    assert_eq!(Role::Content.as_str(), "content");
}

#[test]
fn every_catalogue_word_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("c.yaml");
    std::fs::write(
        &cat,
        r#"tools:
  read_inbox: {kind: read, reads_outside: true, confidential: true, description: "Reads mail",
               store: {name: mail, access: read}, source: {server: "https://x.invalid", pin: "sha256:1"}}
  send_mail:
    kind: write
    sends_out: [example.com]
    irreversible: true
    destructive: true
    idempotency: true
    result: {type: object}
    args:
      to: {type: string, role: destination}
      body: {role: template}
    order: {after: [read_inbox], not_after: [untrusted, wipe], at_most: {count: 2, per: turn}}
    privilege: high
    requires: [user_verified]
    checks: [spam_filter]
    spend: {max: 3}
  wipe:
    kind: write
    undo: none
    at_most: 1
  charge:
    kind: write
    compensation: {tool: wipe, bind: {id: id}}
  plain:
    kind: read
    description: null
    compensation: ~
channels: {partner_link: {auth: mtls}}
stores: {mail: {multi_tenant: true, persistent: false}}
"#,
    )
    .unwrap();
    let d = errors_dir();
    // The tools must be bound somewhere only if named; the good graph names read_inbox and refund_card.
    let graph = dir.path().join("g.json");
    let text = std::fs::read_to_string(d.join("good.json"))
        .unwrap()
        .replace("refund_card", "send_mail");
    std::fs::write(&graph, text).unwrap();
    let i = load_export(&graph, &cat).unwrap();
    let c = &i.catalogue;
    let names: Vec<&str> = c.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["read_inbox", "send_mail", "wipe", "charge", "plain"],
        "declaration order"
    );
    let r = c.tool("read_inbox").unwrap();
    assert!(r.reads_outside && r.confidential && !r.is_write());
    assert_eq!(r.description.as_deref(), Some("Reads mail"));
    assert_eq!(r.store, Some(("mail".to_string(), false)));
    assert_eq!(r.source, Some(("https://x.invalid".to_string(), true)));
    let s = c.tool("send_mail").unwrap();
    assert!(s.is_write() && s.sends_out && s.irreversible && s.destructive && s.idempotent);
    assert!(s.has_result_schema && s.privileged && s.has_checks && s.has_spend);
    assert_eq!(s.args[0].role, Some(Role::Destination));
    assert_eq!(s.args[1].role, Some(Role::Template));
    assert_eq!(s.order.after[0].name, "read_inbox");
    assert_eq!(s.order.not_after[0], NotAfter::Untrusted);
    assert!(matches!(&s.order.not_after[1], NotAfter::Tool(n) if n.name == "wipe"));
    let am = s.order.at_most.as_ref().unwrap();
    assert_eq!((am.count, am.per_turn), (2, true));
    assert_eq!(s.requires, ["user_verified"]);
    let w = c.tool("wipe").unwrap();
    assert_eq!(w.compensation, Compensation::NoneDeclared);
    assert_eq!(
        w.order.at_most.as_ref().map(|a| (a.count, a.per_turn)),
        Some((1, false))
    );
    assert!(
        matches!(&c.tool("charge").unwrap().compensation, Compensation::Tool(n) if n.name == "wipe")
    );
    let p = c.tool("plain").unwrap();
    assert_eq!(p.compensation, Compensation::Absent);
    assert_eq!(p.description, None, "unquoted null is null");
    assert_eq!(
        c.channels,
        [("partner_link".to_string(), Some("mtls".to_string()))]
    );
    assert!(c.stores[0].multi_tenant && !c.stores[0].persistent);
    assert!(c.unknown.is_empty(), "{:?}", c.unknown);
}

// ------------------------------------------------------------------------------------------------
// agent.yaml (SPEC 2.1)

#[test]
fn python_tool_module() {
    let e = agent_err("python_module.agent.yaml");
    check(
        &e,
        "python_module.agent.yaml",
        11,
        13,
        "no Python module 'shop.tools': neither shop/tools.py nor shop/tools/__init__.py is beside agent.yaml",
        "`python: shop.tools` reads shop/tools.py",
    );
}

#[test]
fn missing_rulebook() {
    let e = agent_err("rulebook_missing.agent.yaml");
    check(
        &e,
        "rulebook_missing.agent.yaml",
        12,
        11,
        "the rulebook './nope.co' does not exist",
        "relative to agent.yaml's folder",
    );
}

#[test]
fn missing_catalogue_file() {
    let e = agent_err("catalogue_missing.agent.yaml");
    check(
        &e,
        "catalogue_missing.agent.yaml",
        11,
        16,
        "cannot read the catalogue './missing.catalogue.yaml'",
        "relative to agent.yaml's folder",
    );
}

#[test]
fn hand_off_to_unknown_agent() {
    let e = agent_err("handoff_unknown.agent.yaml");
    check(
        &e,
        "handoff_unknown.agent.yaml",
        6,
        20,
        "hands off to 'biling', which is not an agent",
        "desk, billing",
    );
}

#[test]
fn agent_tool_not_in_catalogue() {
    let e = agent_err("agent_tool_missing.agent.yaml");
    check(
        &e,
        "agent_tool_missing.agent.yaml",
        5,
        24,
        "agent 'desk' lists tool 'refund_crd'",
        "declare 'refund_crd' in",
    );
    assert!(
        e.to_string().contains("tools.catalogue.yaml"),
        "names the catalogue: {e}"
    );
    assert!(e.to_string().contains("did you mean 'refund_card'"));
}

#[test]
fn undo_shorthand_naming_unknown_tools() {
    let e = agent_err("undo_unknown_tool.agent.yaml");
    check(
        &e,
        "undo_unknown_tool.agent.yaml",
        14,
        8,
        "`undo` names tool 'charge_card'",
        "declare the tool",
    );
    let e = agent_err("undo_unknown_undoer.agent.yaml");
    check(
        &e,
        "undo_unknown_undoer.agent.yaml",
        14,
        21,
        "'refund_card' is undone by tool 'unrefund_card'",
        "declare 'unrefund_card'",
    );
}

#[test]
fn agent_yaml_syntax_error() {
    let e = agent_err("yaml_syntax.agent.yaml");
    check(
        &e,
        "yaml_syntax.agent.yaml",
        6,
        17,
        "invalid YAML",
        "fix the YAML syntax",
    );
}

#[test]
fn agent_yaml_session_steps_and_recursion_limit() {
    let e = agent_err("session_steps_zero.agent.yaml");
    check(
        &e,
        "session_steps_zero.agent.yaml",
        13,
        16,
        "`session_steps` is 0",
        "from 1 to 16",
    );
    let e = agent_err("recursion_limit_zero.agent.yaml");
    check(
        &e,
        "recursion_limit_zero.agent.yaml",
        13,
        18,
        "`recursion_limit` is 0",
        "node steps",
    );
}

#[test]
fn agent_yaml_entry_and_privilege() {
    let e = agent_err("entry_unknown.agent.yaml");
    check(
        &e,
        "entry_unknown.agent.yaml",
        14,
        8,
        "`entry` names 'front'",
        "desk, billing",
    );
    let e = agent_err("privilege_bad.agent.yaml");
    check(
        &e,
        "privilege_bad.agent.yaml",
        8,
        16,
        "unknown privilege 'medium'",
        "`privilege: high`",
    );
}

#[test]
fn agent_yaml_inline_tools() {
    let e = agent_err("inline_no_kind.agent.yaml");
    check(
        &e,
        "inline_no_kind.agent.yaml",
        12,
        11,
        "tool 'send_receipt' has no `kind`",
        "`kind: write`",
    );
    let e = agent_err("quoted_bool.agent.yaml");
    check(
        &e,
        "quoted_bool.agent.yaml",
        14,
        19,
        "found the quoted text \"true\"",
        "without quotes",
    );
}

#[test]
fn agent_yaml_duplicate_key() {
    let e = agent_err("duplicate_key.agent.yaml");
    check(
        &e,
        "duplicate_key.agent.yaml",
        7,
        3,
        "duplicate key 'desk' (first written at line 3)",
        "remove one",
    );
}

/// `fixtures/errors/good.agent.yaml` with `edit` applied, loaded from a folder holding its
/// catalogue and rulebook: the error, or the warnings of what loaded.
fn agent_variant(edit: impl Fn(&str) -> String) -> Result<Vec<String>, InputError> {
    let dir = tempfile::tempdir().unwrap();
    for f in ["tools.catalogue.yaml", "policy.co"] {
        std::fs::copy(errors_dir().join(f), dir.path().join(f)).unwrap();
    }
    let good = std::fs::read_to_string(errors_dir().join("good.agent.yaml")).unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, edit(&good)).unwrap();
    load_agent_yaml(&path).map(|i| i.export.warnings)
}

/// A word of agent.yaml one small edit from a known one is refused, naming the word meant: ignored
/// with a warning, a misspelt `hands_off_to` would cut the hand-off (and every route through the
/// agent handed to) out of the proof, a misspelt `privilege` would drop its tools' privilege, and
/// the gate would pass. Each level of agent.yaml is held: the top, an agent, `remote`, `settings`.
#[test]
fn a_misspelt_word_of_agent_yaml_is_refused() {
    let cases: [(&str, &str, u32, u32, &str, &str); 6] = [
        (
            "    hands_off_to:",
            "    hands_of_to:",
            6,
            5,
            "`hands_of_to` on agent 'desk'",
            "hands_off_to",
        ),
        (
            "    privilege: high",
            "    privilage: high",
            8,
            5,
            "`privilage` on agent 'billing'",
            "privilege",
        ),
        (
            "rulebook: ./policy.co",
            "rulebok: ./policy.co",
            12,
            1,
            "`rulebok` on the top level",
            "rulebook",
        ),
        (
            "session_steps: 2",
            "session_step: 2",
            13,
            1,
            "`session_step` on the top level",
            "session_steps",
        ),
        (
            "session_steps: 2",
            "session_steps: 2\nsettings: {on_unred: refuse}",
            14,
            12,
            "`on_unred` on `settings`",
            "on_unread",
        ),
        (
            "  billing:\n    privilege: high\n    tools: [refund_card]",
            "  billing:\n    remote: {url: \"https://b.invalid\", chanel: link}",
            8,
            40,
            "`chanel` on `remote` of agent 'billing'",
            "channel",
        ),
    ];
    for (from, to, line, column, msg, meant) in cases {
        let e = match agent_variant(|g| {
            assert!(g.contains(from), "{from}");
            g.replacen(from, to, 1)
        }) {
            Ok(w) => panic!("{to:?} loaded (warnings {w:?}), but it is misspelt"),
            Err(e) => e,
        };
        check(
            &e,
            "agent.yaml",
            line,
            column,
            msg,
            &format!("write `{meant}`"),
        );
        assert!(
            e.to_string().contains(&format!("did you mean `{meant}`?")),
            "{e}"
        );
    }
}

/// A word of agent.yaml far from every known one is ignored with a warning naming it, at each
/// level; `settings`' Bot Builder words `language` and `taint_policy` are accepted without one.
#[test]
fn an_unknown_word_of_agent_yaml_is_a_warning() {
    let warnings = agent_variant(|g| {
        g.replacen("    privilege: high", "    privilege: high\n    owner: finance", 1)
            + "notes: kept by the team\nsettings: {language: en, taint_policy: confirm, theme: dark}\n"
    })
    .unwrap();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings[0].contains("agent.yaml:15: unknown word 'notes' on the top level"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains("agent.yaml:9: unknown word 'owner' on agent 'billing'"),
        "{warnings:?}"
    );
    assert!(
        warnings[2].contains("agent.yaml:16: unknown word 'theme' on `settings`"),
        "{warnings:?}"
    );
}

/// A budget bounds every cycle it covers (no QG023), so one that bounds nothing is refused rather
/// than silencing QG023: a word other than `steps` and `turns` (`step:`), an empty mapping, or
/// both bounds null. The same reader serves the export's budgets.
#[test]
fn a_budget_that_bounds_nothing_is_refused() {
    let cases: [(&str, u32, u32, &str, &str); 4] = [
        (
            "budget: {step: 20}",
            14,
            10,
            "`step` is not a word of `budget` (did you mean `steps`?)",
            "`steps`",
        ),
        (
            "budget: {}",
            14,
            9,
            "`budget` bounds nothing",
            "silence QG023",
        ),
        (
            "budget: {steps: null, turns: null}",
            14,
            9,
            "`budget` bounds nothing",
            "`steps: N`",
        ),
        (
            "budget: {max_steps: 20}",
            14,
            10,
            "`max_steps` is not a word of `budget`",
            "`turns`",
        ),
    ];
    for (budget, line, column, msg, help) in cases {
        let e = match agent_variant(|g| format!("{g}{budget}\n")) {
            Ok(_) => panic!("{budget:?} loaded, but it bounds nothing"),
            Err(e) => e,
        };
        check(&e, "agent.yaml", line, column, msg, help);
    }
    let agent = agent_variant(|g| {
        g.replacen(
            "    privilege: high",
            "    privilege: high\n    budget: {stpes: 5}",
            1,
        )
    })
    .unwrap_err();
    check(
        &agent,
        "agent.yaml",
        9,
        14,
        "`stpes` is not a word of `budget` of agent 'billing'",
        "`steps`",
    );
    assert!(agent_variant(|g| format!("{g}budget: {{turns: 3}}\n")).is_ok());
    let d = errors_dir();
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("good.json")).unwrap()).unwrap();
    g["budget"] = serde_json::json!({"step": 20});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.json");
    std::fs::write(&path, serde_json::to_string_pretty(&g).unwrap()).unwrap();
    let e = load_export(&path, &d.join("catalogue.json"))
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.to_string().contains("`step` is not a word of `budget`"),
        "{e}"
    );
}

/// The first `yaml` block of `docs/agent-yaml.md`, the shop with every word in use, written into a
/// folder holding the shop's catalogue and rulebook, after `edit`.
fn agent_yaml_page_example(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, PathBuf) {
    let page = std::fs::read_to_string(manifest().join("docs/agent-yaml.md")).unwrap();
    let start = page.find("```yaml\n").expect("the page has a yaml example") + "```yaml\n".len();
    let example = &page[start..start + page[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    for f in ["shop.catalogue.yaml", "policy.co"] {
        std::fs::copy(manifest().join("fixtures/shop").join(f), dir.path().join(f)).unwrap();
    }
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, edit(example)).unwrap();
    (dir, path)
}

/// The backticked words of the first column of the table under `heading` in `page`.
fn page_words(page: &str, heading: &str) -> BTreeSet<String> {
    let at = page
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?}"));
    page[at + heading.len() + 2..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.split('|')
                .nth(1)
                .unwrap()
                .trim()
                .trim_matches('`')
                .to_string()
        })
        .collect()
}

/// The reference page of agent.yaml holds: its example loads with no warning, and each table lists
/// exactly the words the reader knows at that level (as its warnings name them).
#[test]
fn the_agent_yaml_page_is_the_readers_words() {
    let (_dir, path) = agent_yaml_page_example(str::to_string);
    let loaded = load_agent_yaml(&path).unwrap();
    assert!(
        loaded.export.warnings.is_empty(),
        "{:?}",
        loaded.export.warnings
    );
    assert_eq!(loaded.export.agents.len(), 3);

    let (_dir, path) = agent_yaml_page_example(|e| {
        e.replacen("    hands_off_to:", "    zzqx: 1\n    hands_off_to:", 1)
            .replacen(
                "channel: partner_link}",
                "channel: partner_link, zzqx: 1}",
                1,
            )
            .replacen("settings: {", "settings: {zzqx: 1, ", 1)
            + "zzqx: 1\n"
    });
    let warnings = load_agent_yaml(&path).unwrap().export.warnings;
    let known = |owner: &str| -> BTreeSet<String> {
        let w = warnings
            .iter()
            .find(|w| w.contains(&format!("'zzqx' on {owner} is ignored")))
            .unwrap_or_else(|| panic!("no warning on {owner}: {warnings:?}"));
        let list = &w[w.find("(known: ").unwrap() + "(known: ".len()..w.len() - 1];
        list.split(", ").map(str::to_string).collect()
    };
    let page = std::fs::read_to_string(manifest().join("docs/agent-yaml.md")).unwrap();
    assert_eq!(
        page_words(&page, "## The top level"),
        known("the top level")
    );
    assert_eq!(page_words(&page, "## An agent"), known("agent 'desk'"));
    assert_eq!(
        page_words(&page, "### `remote`"),
        known("`remote` of agent 'partner'")
    );
    assert_eq!(page_words(&page, "## Settings"), known("`settings`"));
    assert_eq!(
        page_words(&page, "## A budget"),
        BTreeSet::from(["steps".into(), "turns".into()])
    );
}

#[test]
fn agent_yaml_full_compile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cat.json"),
        r#"{"tools": {"a": {"kind": "read"}, "b": {"kind": "write"}}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("rules.co"), "define flow x\n  execute b\n").unwrap();
    let yaml = r#"agents:
  front:
    hands_off_to: [back, partner]
  back:
    model: m
    tools:
      - a
      - b
    hands_off_to: [partner]
    privilege: high
    budget: {steps: 20}
    on_unread: ask
  partner:
    remote: {url: "https://partner.invalid", channel: partner_link}
tools:
  - catalogue: cat.json
  - name: c
    kind: write
    irreversible: true
  - name: b
    idempotency: true
entry: back
undo: {b: a, c: none}
budget: {steps: 60, turns: 10}
session_steps: 3
recursion_limit: 40
settings: {language: en}
facts: {}
rulebook: rules.co
"#;
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, yaml).unwrap();
    let i = load_agent_yaml(&path).unwrap();
    let g = &i.export.graph;
    let nodes: Vec<(&str, NodeKind, Option<&str>, u32)> = g
        .nodes
        .iter()
        .map(|n| (n.id.name.as_str(), n.kind, n.agent.as_deref(), n.loc.line))
        .collect();
    assert_eq!(
        nodes,
        [
            ("__start__", NodeKind::Start, None, 1),
            ("front", NodeKind::Router, Some("front"), 2),
            ("back", NodeKind::Router, Some("back"), 4),
            ("back_model", NodeKind::Model, Some("back"), 4),
            ("back_tools", NodeKind::Tools, Some("back"), 6),
            ("partner", NodeKind::Remote, Some("partner"), 13),
            ("__end__", NodeKind::End, None, 1),
        ]
    );
    let partner = g.nodes.iter().find(|n| n.id.name == "partner").unwrap();
    assert_eq!(partner.channel.as_deref(), Some("partner_link"));
    let edges: Vec<(&str, EdgeKind, Vec<&str>)> = g
        .edges
        .iter()
        .map(|e| {
            (
                e.from.name.as_str(),
                e.kind,
                e.destinations
                    .as_ref()
                    .unwrap()
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect(),
            )
        })
        .collect();
    use EdgeKind::{Conditional as C, Fixed as F};
    assert_eq!(
        edges,
        [
            ("__start__", F, vec!["back"]),
            ("front", C, vec!["__end__", "back", "partner"]),
            ("back", C, vec!["back_tools", "back_model", "__end__"]),
            ("back_model", C, vec!["back_tools", "__end__", "partner"]),
            ("back_tools", C, vec!["back_model", "back", "__end__"]),
            ("partner", C, vec!["__end__", "front", "back"]),
        ]
    );
    let e = &i.export;
    assert_eq!(e.name.as_deref(), Some("back"));
    assert_eq!(
        e.source.as_deref(),
        Some(path.display().to_string().as_str())
    );
    assert_eq!((e.recursion_limit, e.session_steps), (40, Some(3)));
    assert_eq!(
        e.budget.as_ref().map(|b| (b.steps, b.turns)),
        Some((Some(60), Some(10)))
    );
    assert_eq!(e.agents.len(), 3);
    assert!(e.agents[1].privilege_high);
    assert_eq!(e.agents[1].on_unread.as_deref(), Some("ask"));
    assert!(e.agents[1].budget.is_some());
    let c = &i.catalogue;
    let names: Vec<&str> = c.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let b = c.tool("b").unwrap();
    assert!(
        b.is_write() && b.idempotent && b.privileged,
        "inline words merge into the catalogue's"
    );
    assert!(matches!(&b.compensation, Compensation::Tool(n) if n.name == "a"));
    assert!(c.tool("a").unwrap().privileged);
    assert_eq!(
        c.tool("c").unwrap().compensation,
        Compensation::NoneDeclared
    );
    assert!(!c.tool("c").unwrap().privileged);
    assert!(i.from_agent_yaml);
    assert!(i.rulebook.as_ref().unwrap().shown.ends_with("rules.co"));
    assert!(i.sources.files.len() == 2, "agent.yaml and cat.json");
}

// ------------------------------------------------------------------------------------------------
// Good inputs

/// The shop example: `fixtures/shop/` if another engineer has made it, else a copy of
/// `../shared/examples/shop` in a temporary folder.
fn shop() -> Option<(Option<tempfile::TempDir>, PathBuf)> {
    let fx = manifest().join("fixtures/shop/agent.yaml");
    if fx.is_file() {
        return Some((None, fx));
    }
    let s = shared()?;
    let src = s.join("examples/shop");
    let dir = tempfile::tempdir().unwrap();
    for f in ["agent.yaml", "shop.catalogue.yaml", "policy.co"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let p = dir.path().join("agent.yaml");
    Some((Some(dir), p))
}

#[test]
fn the_shop_loads() {
    let Some((_keep, path)) = shop() else {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"skipped: neither fixtures/shop/ nor ../shared/examples/shop exists\n",
        );
        return;
    };
    let i = load_agent_yaml(&path).unwrap();
    let g = &i.export.graph;
    let nodes: Vec<(&str, NodeKind, u32)> = g
        .nodes
        .iter()
        .map(|n| (n.id.name.as_str(), n.kind, n.loc.line))
        .collect();
    assert_eq!(
        nodes,
        [
            ("__start__", NodeKind::Start, 2),
            ("desk", NodeKind::Router, 3),
            ("desk_model", NodeKind::Model, 3),
            ("desk_tools", NodeKind::Tools, 5),
            ("billing", NodeKind::Router, 8),
            ("billing_tools", NodeKind::Tools, 10),
            ("__end__", NodeKind::End, 2),
        ]
    );
    assert_eq!(i.export.recursion_limit, 60);
    assert_eq!(i.export.name.as_deref(), Some("desk"));
    assert!(i.export.warnings.is_empty(), "{:?}", i.export.warnings);
    let refund = i.catalogue.tool("refund_card").unwrap();
    assert!(refund.privileged, "billing is privilege: high");
    assert!(!i.catalogue.tool("charge_card").unwrap().privileged);
    assert!(
        matches!(&i.catalogue.tool("charge_card").unwrap().compensation, Compensation::Tool(n) if n.name == "refund_card")
    );
    assert!(i.rulebook.as_ref().unwrap().shown.ends_with("policy.co"));
    // The tool binding in billing's `tools:` is at agent.yaml:10 (QG105's location).
    let bt = g
        .nodes
        .iter()
        .find(|n| n.id.name == "billing_tools")
        .unwrap();
    assert_eq!(bt.tools[0].loc.line, 10);
    assert_eq!(i.sources.short_name(bt.tools[0].loc.file), "agent.yaml");
}

#[test]
fn the_langgraph_corpus_loads() {
    let Some(s) = shared() else { return };
    let dir = s.join("corpus/langgraph");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let is_export = p.extension().is_some_and(|x| x == "json")
            && p.file_name().is_some_and(|f| f != "catalogue.json");
        if !is_export {
            continue;
        }
        if let Err(e) = load_export(&p, &dir.join("catalogue.json")) {
            panic!("{} does not load: {e}", p.display());
        }
        n += 1;
    }
    assert!(n >= 14, "{n} exports");
}

#[test]
fn the_agentdojo_corpus_loads() {
    let Some(s) = shared() else { return };
    let dir = s.join("corpus/agentdojo");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let Some((suite, _)) = name.split_once(".react.") else {
            continue;
        };
        if !name.ends_with(".json") {
            continue;
        }
        let cat = dir.join(format!("{suite}.catalogue.json"));
        let i = match load_export(&p, &cat) {
            Ok(i) => i,
            Err(e) => panic!("{} does not load: {e}", p.display()),
        };
        assert!(!i.catalogue.tools.is_empty());
        n += 1;
    }
    assert!(n >= 8, "{n} exports");
}

#[test]
fn declared_locations_and_subgraphs_are_read() {
    let Some(s) = shared() else { return };
    let dir = s.join("corpus/langgraph");
    let i = load_export(&dir.join("swarm.json"), &dir.join("catalogue.json")).unwrap();
    let parent_refs: Vec<&str> = all_graphs(&i.export.graph)
        .into_iter()
        .flat_map(|g| g.edges.iter())
        .flat_map(|e| e.destinations.iter().flatten())
        .filter(|d| d.name.starts_with("../"))
        .map(|d| d.name.as_str())
        .collect();
    assert!(!parent_refs.is_empty());
    let i = load_export(
        &dir.join("conditional_edges.json"),
        &dir.join("catalogue.json"),
    )
    .unwrap();
    assert!(
        i.export
            .graph
            .edges
            .iter()
            .any(|e| e.destinations.is_none()),
        "null destinations stay null"
    );
    assert_eq!(i.export.recursion_limit, 25, "LangGraph's default");
}

fn all_graphs(g: &GraphDef) -> Vec<&GraphDef> {
    let mut out = vec![g];
    for (_, s) in &g.subgraphs {
        out.extend(all_graphs(s));
    }
    out
}

#[test]
fn node_location_is_declared_or_where_the_node_starts() {
    let dir = tempfile::tempdir().unwrap();
    let d = errors_dir();
    let text = std::fs::read_to_string(d.join("good.json")).unwrap().replace(
        r#"{"id": "agent", "kind": "model","#,
        r#"{"id": "agent", "location": {"file": "agent.yaml", "line": 3, "column": 3}, "kind": "model","#,
    );
    let g = dir.path().join("g.json");
    std::fs::write(&g, text).unwrap();
    let i = load_export(&g, &d.join("catalogue.json")).unwrap();
    let agent = &i.export.graph.nodes[1];
    assert_eq!(
        (
            agent.loc.file,
            agent.loc.line,
            agent.loc.column,
            agent.declared_location
        ),
        (0, 7, 12, false),
        "a location in a file that is not there falls back to the node's id in the export"
    );
    // With agent.yaml beside the export, the location points into it.
    std::fs::write(
        dir.path().join("agent.yaml"),
        "agents:\n  desk:\n    model: m\n",
    )
    .unwrap();
    let i = load_export(&g, &d.join("catalogue.json")).unwrap();
    let agent = &i.export.graph.nodes[1];
    assert_eq!(
        (agent.loc.line, agent.loc.column, agent.declared_location),
        (3, 3, true)
    );
    assert!(i
        .sources
        .file(agent.loc.file)
        .display
        .ends_with("agent.yaml"));
    let tools = &i.export.graph.nodes[2];
    assert_eq!(
        (tools.loc.line, tools.loc.column, tools.declared_location),
        (8, 12, false)
    );
}

// ------------------------------------------------------------------------------------------------
// --export-only round trip

/// The export with every position that the round trip may move (names' own positions, flags,
/// sends, interrupts, agents) blanked; node and edge locations keep their line and column.
fn norm_export(e: &Export) -> String {
    fn graph(g: &mut GraphDef) {
        let blank = Loc::default();
        if let Some(en) = &mut g.entry {
            en.loc = blank;
        }
        for n in &mut g.nodes {
            n.id.loc = blank;
            n.loc.file = 0;
            // Written locations are always explicit, so they read back as declared.
            n.declared_location = false;
            n.declared_file = None;
            n.object_loc = blank;
            for x in n
                .tools
                .iter_mut()
                .chain(n.hosted.iter_mut())
                .chain(n.sets.iter_mut())
                .chain(n.clears.iter_mut())
            {
                x.loc = blank;
            }
            if let Some(x) = &mut n.graph {
                x.loc = blank;
            }
        }
        for ed in &mut g.edges {
            ed.declared_file = None;
            ed.object_loc = blank;
            ed.from.loc = blank;
            ed.loc.file = 0;
            for d in ed.destinations.iter_mut().flatten() {
                d.loc = blank;
            }
        }
        for s in &mut g.sends {
            s.from.loc = blank;
            s.loc = blank;
            for d in &mut s.destinations {
                d.loc = blank;
            }
        }
        for i in &mut g.interrupts {
            i.loc = blank;
            i.node.loc = blank;
            if let Some(t) = &mut i.tool {
                t.loc = blank;
            }
            if let Some(a) = &mut i.answer {
                a.loc = blank;
            }
        }
        for (n, s) in &mut g.subgraphs {
            n.loc = blank;
            graph(s);
        }
    }
    let mut e = e.clone();
    e.agents.clear();
    for f in &mut e.state {
        f.loc = Loc::default();
    }
    graph(&mut e.graph);
    format!("{e:#?}")
}

fn norm_tool(t: &ToolDef) -> String {
    let mut t = t.clone();
    t.loc = Loc::default();
    for a in &mut t.args {
        a.loc = Loc::default();
    }
    if let Compensation::Tool(n) = &mut t.compensation {
        n.loc = Loc::default();
    }
    for a in &mut t.order.after {
        a.loc = Loc::default();
    }
    for na in &mut t.order.not_after {
        if let NotAfter::Tool(n) = na {
            n.loc = Loc::default();
        }
    }
    format!("{t:#?}")
}

fn round_trip(i: &Inputs) {
    let dir = tempfile::tempdir().unwrap();
    round_trip_in(i, dir.path());
}

/// Writes `i` into `dir` and reads it back. Locations naming files outside `dir` and the current
/// directory are not read (they fall back to the node's entry), so inputs from elsewhere are
/// copied into `dir` first.
fn round_trip_in(i: &Inputs, dir: &Path) {
    let out = dir.join("out.json");
    write_export(i, &out).unwrap();
    let cat = dir.join("out.catalogue.json");
    assert!(cat.is_file());
    let back =
        load_export(&out, &cat).unwrap_or_else(|e| panic!("the written export does not load: {e}"));
    let (a, b) = (norm_export(&back.export), norm_export(&i.export));
    if a != b {
        for (x, y) in a.lines().zip(b.lines()) {
            assert_eq!(x, y, "the export read back differs");
        }
        assert_eq!(a.lines().count(), b.lines().count());
    }
    assert_eq!(back.catalogue.tools.len(), i.catalogue.tools.len());
    for (a, b) in back.catalogue.tools.iter().zip(&i.catalogue.tools) {
        assert_eq!(norm_tool(a), norm_tool(b));
    }
    let words = |c: &stalwart::Catalogue| {
        let mut w = c
            .unknown
            .iter()
            .map(|u| (u.tool.clone(), u.word.clone()))
            .collect::<Vec<_>>();
        w.sort();
        w
    };
    assert_eq!(words(&back.catalogue), words(&i.catalogue));
    assert_eq!(back.catalogue.channels, i.catalogue.channels);
    // Deterministic: writing again gives the same bytes.
    let out2 = dir.join("again.json");
    write_export(i, &out2).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&out2).unwrap());
    // Every node has a location.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for n in v["nodes"].as_array().unwrap() {
        assert!(
            n["location"]["line"].as_u64().is_some() && n["location"]["file"].is_string(),
            "{n}"
        );
    }
}

#[test]
fn export_only_round_trips_the_shop() {
    let Some((_keep, path)) = shop() else {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"skipped: neither fixtures/shop/ nor ../shared/examples/shop exists\n",
        );
        return;
    };
    let i = load_agent_yaml(&path).unwrap();
    round_trip(&i);
    // The compiled locations point into agent.yaml as written.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shop.json");
    write_export(&i, &out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let desk_model = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == "desk_model")
        .unwrap();
    assert_eq!(desk_model["location"]["line"], 3);
    assert!(desk_model["location"]["file"]
        .as_str()
        .unwrap()
        .ends_with("agent.yaml"));
    let c: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("shop.catalogue.json")).unwrap())
            .unwrap();
    assert_eq!(c["format"], "qls-catalogue/1");
    assert_eq!(
        c["tools"]["charge_card"]["compensation"]["bind"]["order_id"], "order_id",
        "bind kept verbatim"
    );
    assert_eq!(
        c["tools"]["get_order"]["result"]["type"], "object",
        "result schema kept verbatim"
    );
    assert_eq!(c["tools"]["refund_card"]["privilege"], "high");
}

#[test]
fn export_only_round_trips_exports() {
    let d = errors_dir();
    for g in [
        "good.json",
        "good_subgraph.json",
        "good_reviews.json",
        "good_hosted.json",
        "good_standing.json",
    ] {
        round_trip(&load_export(&d.join(g), &d.join("catalogue.json")).unwrap());
    }
    round_trip(
        &load_export(
            &d.join("good.json"),
            &d.join("unknown_words.catalogue.json"),
        )
        .unwrap(),
    );
    let Some(s) = shared() else { return };
    let lg = s.join("corpus/langgraph");
    let ad = s.join("corpus/agentdojo");
    let pairs = [
        (lg.join("swarm.json"), lg.join("catalogue.json")),
        (lg.join("subgraph_parent.json"), lg.join("catalogue.json")),
        (lg.join("conditional_edges.json"), lg.join("catalogue.json")),
        (lg.join("edge_cases.json"), lg.join("catalogue.json")),
        (
            ad.join("banking.react.guarded.json"),
            ad.join("banking.catalogue.json"),
        ),
    ];
    for (g, c) in pairs {
        let dir = tempfile::tempdir().unwrap();
        let (g2, c2) = (
            dir.path().join("in.json"),
            dir.path().join("in.catalogue.json"),
        );
        std::fs::copy(&g, &g2).unwrap();
        std::fs::copy(&c, &c2).unwrap();
        round_trip_in(&load_export(&g2, &c2).unwrap(), dir.path());
    }
}

#[test]
fn guard_grammar() {
    assert_eq!(
        parse_guard("a && (b || !c)").unwrap().to_string(),
        "a && (b || !c)"
    );
    assert_eq!(
        parse_guard("a || b && c").unwrap().to_string(),
        "a || b && c"
    );
    assert_eq!(parse_guard("x &&").unwrap_err().0, 4);
    assert_eq!(parse_guard("x | y").unwrap_err().0, 2);
}

/// SPEC 2.2 `hosted`: only a model node has hosted tools, and each is a catalogue tool.
#[test]
fn hosted_only_on_a_model_node_and_in_the_catalogue() {
    let e = graph_err("hosted_not_model.json");
    check(
        &e,
        "hosted_not_model.json",
        7,
        17,
        "node 'tools' is a `tools` node and lists `hosted` tools, which only a `model` node has",
        "move `hosted` to the model node",
    );
    let e = graph_err("hosted_missing.json");
    check(
        &e,
        "hosted_missing.json",
        6,
        17,
        "model node 'agent' hosts tool 'web_search', which the catalogue",
        "declare 'web_search'",
    );
}

/// SPEC 2.2 `standing`: only a review of each call (`when: "call"`) may be answered yes for the
/// rest of the run; on a pause that confirms once it is exit 2, naming the file, line and fix.
#[test]
fn standing_only_on_a_call_review() {
    let e = graph_err("standing_not_call.json");
    check(
        &e,
        "standing_not_call.json",
        16,
        18,
        "the `before` interrupt at 'tools' says `standing`: only a review of each call",
        "remove `standing`, or write `\"when\": \"call\"`",
    );
    // `standing` is a plain true or false.
    let dir = tempfile::tempdir().unwrap();
    let d = errors_dir();
    let text = std::fs::read_to_string(d.join("good_standing.json"))
        .unwrap()
        .replace(r#""standing": true"#, r#""standing": "yes""#);
    let g = dir.path().join("g.json");
    std::fs::write(&g, text).unwrap();
    let e = load_export(&g, &d.join("catalogue.json")).expect_err("a quoted standing");
    let shown = e.to_string();
    assert!(shown.contains("g.json:20:87:"), "{shown}");
    assert!(shown.contains("must be true or false"), "{shown}");
    // Read as written: the good export's review stands, the reviews' does not.
    let i = load_export(&d.join("good_standing.json"), &d.join("catalogue.json")).unwrap();
    assert!(i.export.graph.interrupts.iter().all(|x| x.standing));
    let i = load_export(&d.join("good_reviews.json"), &d.join("catalogue.json")).unwrap();
    assert!(i.export.graph.interrupts.iter().all(|x| !x.standing));
}
