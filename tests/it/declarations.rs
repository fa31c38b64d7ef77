//! The declaration rules of SPEC 6 on their fixtures, with the values they must carry: QG019 and
//! QG021 as reachability questions with witnesses from both engines, the others read from the
//! catalogue and the graph.

use crate::common;

use stalwart::engine::EngineChoice;
use stalwart::{verify, Options};
use stalwart::{Finding, Obligation, StepKind};
use std::path::Path;

fn findings(case: &str, engine: EngineChoice) -> Vec<Finding> {
    let dir = common::root().join("fixtures").join(case);
    let inputs = common::load(&dir);
    let mut opts = Options::new(common::steps(&inputs));
    opts.engine = engine;
    verify(inputs, &opts)
        .unwrap_or_else(|e| panic!("{case}: {e}"))
        .findings
}

fn only<'a>(fs: &'a [Finding], rule: &str) -> &'a Finding {
    let hits: Vec<&Finding> = fs.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(
        hits.len(),
        1,
        "{rule}: {:?}",
        fs.iter().map(|f| f.rule).collect::<Vec<_>>()
    );
    hits[0]
}

/// The witness as (kind, node, tool) triples.
fn route(f: &Finding) -> Vec<(StepKind, String, Option<String>)> {
    f.witness
        .iter()
        .map(|s| (s.kind, s.node.clone(), s.tool.clone()))
        .collect()
}

#[test]
fn confidential_data_leaves_through_an_unconfirmed_send() {
    for engine in [EngineChoice::Explicit, EngineChoice::Z3, EngineChoice::Both] {
        let fs = findings("QG019/breaks-record-then-mail", engine);
        let f = only(&fs, "QG019");
        assert_eq!(f.obligation, Some(Obligation::O9));
        // A guarded read that sends out: the guard allows it unasked (SPEC 12.1 rule 9).
        assert_eq!(f.subject, "web_search");
        assert_eq!(f.node.as_deref(), Some("desk_tools"));
        // The record is read (and committed when the tool node is left) before the send.
        let calls: Vec<String> = route(f)
            .into_iter()
            .filter(|(k, ..)| *k == StepKind::Call)
            .filter_map(|(_, _, t)| t)
            .collect();
        // Z3 may call web_search in the first batch too (not yet a violation: the record's
        // `ran` commits when the batch ends); the route has as few node steps either way.
        assert_eq!(
            calls.first().map(String::as_str),
            Some("read_record"),
            "{engine:?}"
        );
        assert_eq!(
            calls.last().map(String::as_str),
            Some("web_search"),
            "{engine:?}"
        );
        assert_eq!(f.witness.last().map(|s| s.run_steps), Some(4), "{engine:?}");
        assert!(f
            .witness
            .last()
            .is_some_and(|s| s.violation && s.guarded == Some(true)));
        assert_eq!(f.severity.as_str(), "Medium", "a read");
    }
    let fs = findings("QG019/holds-send-confirmed", EngineChoice::Both);
    assert!(fs.iter().all(|f| f.rule != "QG019"));
}

/// Issue 28 item 3: a guarded write that sends out is confirmed by the tool check, which asks
/// the person about every write shown its arguments (SPEC 3, 12.1 rule 8), so no QG019 is raised
/// on it (it was, although QG019's own fix recommends the guarded node).
#[test]
fn a_guarded_write_that_sends_out_is_confirmed() {
    for engine in [EngineChoice::Explicit, EngineChoice::Z3, EngineChoice::Both] {
        let fs = findings("QG019/holds-guarded-write-send", engine);
        assert!(
            fs.iter().all(|f| f.rule != "QG019"),
            "{engine:?}: {:?}",
            fs.iter().map(|f| (f.rule, &f.subject)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn untrusted_content_persisted_after_the_inbox() {
    for engine in [EngineChoice::Explicit, EngineChoice::Z3] {
        let fs = findings("QG021/breaks-inbox-to-memory", engine);
        let f = only(&fs, "QG021");
        assert_eq!(f.obligation, Some(Obligation::O10));
        assert_eq!(f.subject, "save_note");
        let calls: Vec<String> = route(f)
            .into_iter()
            .filter(|(k, ..)| *k == StepKind::Call)
            .filter_map(|(_, _, t)| t)
            .collect();
        assert_eq!(
            calls.first().map(String::as_str),
            Some("read_inbox"),
            "{engine:?}"
        );
        assert_eq!(
            calls.last().map(String::as_str),
            Some("save_note"),
            "{engine:?}"
        );
    }
}

#[test]
fn catalogue_rules_name_what_they_read() {
    let f = findings("QG017/breaks-model-writes-shell", EngineChoice::Explicit);
    let f = only(&f, "QG017");
    assert_eq!(f.subject, "run_command");
    assert!(
        f.message.ends_with("(argument 'command' (shell))"),
        "{}",
        f.message
    );
    // At the argument's role (catalogue.yaml line 8), the tool's entry (line 3) related.
    assert_eq!(f.location.line().map(|l| (l.line, l.column)), Some((8, 37)));
    assert_eq!(f.related.first().map(|(l, _)| l.line), Some(3));
    assert!(!f.fix.is_empty());

    let f = findings("QG018/breaks-model-writes-url", EngineChoice::Explicit);
    assert!(only(&f, "QG018").message.contains("'url' (url)"));

    let f = findings("QG020/breaks-shared-store", EngineChoice::Explicit);
    assert!(only(&f, "QG020").message.ends_with("(store 'documents')"));

    let f = findings("QG104/breaks-one-write-unlimited", EngineChoice::Explicit);
    let q = only(&f, "QG104");
    assert_eq!(q.subject, "send_voucher");
    assert!(
        q.message.contains("lacks `at_most`") && q.message.ends_with("(agent 'desk')"),
        "{}",
        q.message
    );
    // Located at the tool's catalogue entry.
    let loc = q.location.line().expect("located");
    assert_eq!(loc.line, 4);

    let f = findings("QG106/breaks-unpinned-server", EngineChoice::Explicit);
    assert!(only(&f, "QG106")
        .message
        .contains("'https://rates.example/mcp'"));

    let f = findings("QG107/breaks-auth-none", EngineChoice::Explicit);
    let q = only(&f, "QG107");
    assert_eq!(q.subject, "partner");
    assert!(
        q.message
            .ends_with("(its channel 'partner_link' declares `auth: none`)"),
        "{}",
        q.message
    );

    let f = findings("QG101/breaks-nothing-bounds-it", EngineChoice::Explicit);
    assert_eq!(only(&f, "QG101").subject, "delete_account");
    let f = findings("QG004/breaks-on-unread-ask", EngineChoice::Explicit);
    assert!(only(&f, "QG004")
        .message
        .contains("its `on_unread` is `ask`"));
}

#[test]
fn the_shop_raises_no_declaration_rule() {
    // SPEC 11: the shop verifies with exactly QG023 and QG105, every declaration rule having run.
    let fs = findings("shop", EngineChoice::Both);
    let rules: Vec<&str> = fs.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["QG023", "QG105"]);
    assert!(Path::new(&common::root().join("fixtures/shop/agent.yaml")).exists());
}

/// A copy of fixture `case` with `from` replaced by `to` in its catalogue.yaml; its findings.
fn edited(case: &str, from: &str, to: &str) -> Vec<Finding> {
    let src = common::root().join("fixtures").join(case);
    let dir = tempfile::tempdir().expect("tempdir");
    for f in ["agent.yaml", "catalogue.yaml"] {
        let text = std::fs::read_to_string(src.join(f)).expect("read");
        let text = if f == "catalogue.yaml" {
            assert!(text.contains(from), "{case}: no {from:?}");
            text.replace(from, to)
        } else {
            text
        };
        std::fs::write(dir.path().join(f), text).expect("write");
    }
    let inputs = stalwart::input::load_agent_yaml(&dir.path().join("agent.yaml")).expect("load");
    verify(inputs, &Options::new(1)).expect("verify").findings
}

#[test]
fn an_empty_or_unknown_auth_is_no_authentication() {
    for auth in ["\"\"", "\"NONE\"", "\"none \"", "basic"] {
        let fs = edited(
            "QG107/holds-mtls",
            "{auth: mtls}",
            &format!("{{auth: {auth}}}"),
        );
        assert_eq!(
            fs.iter().filter(|f| f.rule == "QG107").count(),
            1,
            "auth: {auth}"
        );
    }
    for auth in ["MTLS", "oauth2", "signed_messages"] {
        let fs = edited(
            "QG107/holds-mtls",
            "{auth: mtls}",
            &format!("{{auth: {auth}}}"),
        );
        assert!(fs.iter().all(|f| f.rule != "QG107"), "auth: {auth}");
    }
}

#[test]
fn an_empty_or_moving_pin_pins_nothing() {
    for pin in ["\"\"", "\" \"", "latest", "\"*\"", "main"] {
        let fs = edited(
            "QG106/holds-pinned-server",
            "pin: \"sha256:4f1c0d3e\"",
            &format!("pin: {pin}"),
        );
        assert_eq!(
            fs.iter().filter(|f| f.rule == "QG106").count(),
            1,
            "pin: {pin}"
        );
    }
}

/// The lints of QG014/holds-guarded with `interrupts` set to `interrupts` (JSON), and with the
/// tool node's kind set to `kind`: (id, tool, message) of each `asked_twice`.
fn asked_twice(interrupts: &str, kind: &str) -> Vec<(String, String, String)> {
    let src = common::root().join("fixtures/QG014/holds-guarded");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("graph.json")).expect("read"))
            .expect("json");
    g["interrupts"] = serde_json::from_str(interrupts).expect("interrupts");
    for n in g["nodes"].as_array_mut().expect("nodes") {
        if n["id"] == "tools" {
            n["kind"] = kind.into();
        }
    }
    std::fs::write(dir.path().join("graph.json"), g.to_string()).expect("write");
    std::fs::copy(
        src.join("catalogue.json"),
        dir.path().join("catalogue.json"),
    )
    .expect("copy");
    let inputs = stalwart::input::load_export(
        &dir.path().join("graph.json"),
        &dir.path().join("catalogue.json"),
    )
    .expect("load");
    verify(inputs, &Options::new(1))
        .expect("verify")
        .lints
        .into_iter()
        .filter(|l| l.id == "asked_twice")
        .map(|l| (l.id.to_string(), l.tool, l.message))
        .collect()
}

/// Issue 29 item 4: the author's review of a write the guard checks at every call asks the person
/// twice for one call (the tool check confirms every write, SPEC 12.1 rule 8): the lint
/// `asked_twice` says which question to drop. A review of a read, or of a write some node calls
/// plainly, is the only question and is not remarked.
#[test]
fn an_authors_review_of_a_guarded_write_is_asked_twice() {
    for (interrupts, at) in [
        (
            r#"[{"node": "tools", "when": "call", "tool": "refund"}]"#,
            "call 'tools'",
        ),
        (
            r#"[{"node": "tools", "when": "before", "tool": "refund"}]"#,
            "before 'tools'",
        ),
        (
            r#"[{"node": "agent", "when": "after", "tool": "refund"}]"#,
            "after 'agent'",
        ),
    ] {
        let lints = asked_twice(interrupts, "tools");
        assert_eq!(lints.len(), 1, "{interrupts}: {lints:?}");
        let (_, tool, message) = &lints[0];
        assert_eq!(tool, "refund");
        assert!(
            message.starts_with(&format!(
                "the interrupt {at} asks the person about 'refund', and the guard asks again at each call on 'tools'"
            )),
            "{message}"
        );
        assert!(message.contains("drop this review"), "{message}");
    }
    // A read is not asked about by the guard; a plain tool node asks nothing itself.
    assert!(asked_twice(
        r#"[{"node": "tools", "when": "call", "tool": "get_order"}]"#,
        "tools"
    )
    .is_empty());
    assert!(asked_twice(
        r#"[{"node": "tools", "when": "call", "tool": "refund"}]"#,
        "tools_plain"
    )
    .is_empty());
}

/// Fixture QG017/holds-code-calls-it (a step running `run_command` with its own arguments) with
/// `model_written` on its step when given; the findings, or the load error's text.
fn step_writes(model_written: Option<&str>) -> Result<Vec<Finding>, String> {
    let src = common::root().join("fixtures/QG017/holds-code-calls-it");
    let dir = tempfile::tempdir().expect("tempdir");
    let graph = std::fs::read_to_string(src.join("graph.json")).expect("read");
    let from = "\"kind\": \"step\",";
    assert!(graph.contains(from));
    let graph = match model_written {
        Some(list) => graph.replace(
            from,
            &format!("{from} \"model_written\": {list}, \"x_note\": 1,"),
        ),
        None => graph,
    };
    std::fs::write(dir.path().join("graph.json"), graph).expect("write");
    std::fs::copy(
        src.join("catalogue.json"),
        dir.path().join("catalogue.json"),
    )
    .expect("copy");
    let inputs = stalwart::input::load_export(
        &dir.path().join("graph.json"),
        &dir.path().join("catalogue.json"),
    )
    .map_err(|e| format!("{} | {}", e.message(), e.help_text().unwrap_or_default()))?;
    Ok(verify(inputs, &Options::new(1)).expect("verify").findings)
}

#[test]
fn a_step_running_what_the_model_wrote_raises_qg017() {
    // Issue 28 item 2: the step's code runs `run_command` with the model's text (the exporter's
    // `model_written`): the model writes the shell command, as at a tool node.
    let f = step_writes(Some("[\"run_command\"]")).expect("loads");
    let q = only(&f, "QG017");
    assert_eq!(q.subject, "run_command");
    assert!(
        q.message.ends_with(
            "(argument 'command' (shell)); node 'cleanup' runs it with what a model wrote (a tool \
             call's arguments or a message's text)"
        ),
        "{}",
        q.message
    );
    // The fix is in the step's code: run_command is offered to no model.
    assert!(
        q.fix.starts_with(
            "In node 'cleanup', stop running what the model wrote through 'run_command'"
        ),
        "{}",
        q.fix
    );
    // Only the arguments a model wrote, when the export names them: the shell command is one.
    let f = step_writes(Some(
        "[{\"tool\": \"run_command\", \"args\": [\"command\"]}]",
    ))
    .expect("loads");
    assert_eq!(only(&f, "QG017").subject, "run_command");
    // The same step with its own arguments, an empty list, or the model writing only another
    // argument (the command is the code's own): nothing for QG017.
    for given in [
        None,
        Some("[]"),
        Some("null"),
        Some("[{\"tool\": \"run_command\", \"args\": [\"cwd\"]}]"),
        Some("[{\"tool\": \"run_command\", \"args\": []}]"),
    ] {
        let f = step_writes(given).expect("loads");
        assert!(!f.iter().any(|x| x.rule == "QG017"), "{given:?}");
    }
}

#[test]
fn model_written_names_only_the_nodes_tools() {
    let e = step_writes(Some("[\"get_order\"]")).expect_err("get_order is not the step's tool");
    assert!(
        e.contains("`model_written` of node 'cleanup' names 'get_order', which the node's `tools` do not list")
            && e.contains("name one of its tools (run_command)"),
        "{e}"
    );
    let e = step_writes(Some(
        "[{\"tool\": \"get_order\", \"args\": [\"order_id\"]}]",
    ))
    .expect_err("get_order is not the step's tool");
    assert!(e.contains("names 'get_order'"), "{e}");
    let e = step_writes(Some("\"run_command\"")).expect_err("not a list");
    assert!(e.contains("model_written"), "{e}");
    let e = step_writes(Some("[true]")).expect_err("an entry neither text nor a mapping");
    assert!(
        e.contains("an entry of `model_written` of node 'cleanup'"),
        "{e}"
    );
    let e = step_writes(Some("[{\"args\": [\"command\"]}]")).expect_err("no tool");
    assert!(
        e.contains("the `tool` of an entry of `model_written`"),
        "{e}"
    );
}
