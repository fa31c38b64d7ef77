//! QG010 on names a rulebook writes that nothing defines (issue 20): a misspelt `execute` (1.0
//! and 2.x), a called flow and a `config.yml` rail defined nowhere, each at its line with "did
//! you mean"; the actions of a configuration's actions.py are defined, also when read back from a
//! compiled record.

use crate::common;

use common::{snap, stalwart, without_times};

fn qg010(json: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(json).expect("json");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "QG010")
        .cloned()
        .collect()
}

#[test]
fn names_nothing_defines_are_found_at_their_line_with_did_you_mean() {
    for (case, name, file, line, near) in [
        (
            "breaks-misspelt-action",
            "qg010_misspelt_action",
            "policy.co",
            8,
            "close_ticket",
        ),
        (
            "breaks-misspelt-action-2x",
            "qg010_misspelt_action_2x",
            "policy.co",
            10,
            "CloseTicketAction",
        ),
        (
            "breaks-undefined-flow",
            "qg010_undefined_flow",
            "policy.co",
            12,
            "check resolved",
        ),
        (
            "breaks-misspelt-rail",
            "qg010_misspelt_rail",
            "rails/config.yml",
            4,
            "self check input",
        ),
    ] {
        let agent = format!("fixtures/QG010/{case}/agent.yaml");
        let t = stalwart(&["verify", &agent]);
        assert_eq!(
            t.code, 0,
            "{case}: QG010 does not fail the gate\n{}",
            t.stderr
        );
        snap(&format!("{name}.txt"), &t.stdout);
        let j = stalwart(&["verify", &agent, "--format", "json"]);
        snap(&format!("{name}.json"), &without_times(&j.stdout));
        let found = qg010(&j.stdout);
        assert_eq!(found.len(), 1, "{case}: {found:?}");
        let f = &found[0];
        assert_eq!(
            f["location"]["file"],
            format!("fixtures/QG010/{case}/{file}"),
            "{case}"
        );
        assert_eq!(f["location"]["line"], line, "{case}");
        let msg = f["message"].as_str().unwrap_or("");
        assert!(
            msg.ends_with(&format!("did you mean `{near}`?")),
            "{case}: {msg}"
        );
    }
}

#[test]
fn the_tool_probably_meant_is_a_related_location() {
    let j = stalwart(&[
        "verify",
        "fixtures/QG010/breaks-misspelt-action/agent.yaml",
        "--format",
        "json",
    ]);
    let f = &qg010(&j.stdout)[0];
    let related = &f["related"][0];
    assert_eq!(
        related["location"]["file"],
        "fixtures/QG010/breaks-misspelt-action/catalogue.yaml"
    );
    assert_eq!(related["location"]["line"], 6);
    assert!(related["message"]
        .as_str()
        .unwrap_or("")
        .contains("'close_ticket', probably meant"));
}

#[test]
fn actions_py_defines_actions_and_a_record_keeps_them() {
    let holds = "fixtures/QG010/holds-known-names";
    let j = stalwart(&["verify", &format!("{holds}/agent.yaml"), "--format", "json"]);
    assert_eq!(qg010(&j.stdout), Vec::<serde_json::Value>::new());

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("compiled");
    let c = stalwart(&[
        "rules",
        "compile",
        &format!("{holds}/rails"),
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    let r = stalwart(&[
        "verify",
        &format!("{holds}/agent.yaml"),
        "--rulebook",
        &out.to_string_lossy(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(qg010(&r.stdout), Vec::<serde_json::Value>::new());

    // The same rulebook without its actions.py names two actions nothing defines.
    let copy = dir.path().join("desk");
    std::fs::create_dir_all(copy.join("rails")).expect("mkdir");
    for f in [
        "agent.yaml",
        "catalogue.yaml",
        "rails/policy.co",
        "rails/config.yml",
    ] {
        std::fs::copy(format!("{holds}/{f}"), copy.join(f)).expect("copy");
    }
    let r = stalwart(&[
        "verify",
        &copy.join("agent.yaml").to_string_lossy(),
        "--format",
        "json",
    ]);
    let subjects: Vec<String> = qg010(&r.stdout)
        .iter()
        .map(|f| f["subject"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        subjects,
        vec!["execute lookup_customer", "execute write_note"]
    );
}

#[test]
fn an_action_name_that_is_not_a_literal_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let holds = "fixtures/QG010/holds-known-names";
    std::fs::create_dir_all(dir.path().join("rails")).expect("mkdir");
    for f in ["agent.yaml", "catalogue.yaml", "rails/policy.co"] {
        std::fs::copy(format!("{holds}/{f}"), dir.path().join(f)).expect("copy");
    }
    std::fs::write(
        dir.path().join("rails/actions.py"),
        "from nemoguardrails.actions import action\n\nNAME = \"x\"\n\n@action(name=NAME)\ndef lookup():\n    pass\n",
    )
    .expect("write");
    let r = stalwart(&["verify", &dir.path().join("agent.yaml").to_string_lossy()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("actions.py:5"), "{}", r.stderr);
    assert!(r.stderr.contains("not a string"), "{}", r.stderr);
}
