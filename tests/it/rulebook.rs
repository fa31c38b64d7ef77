//! The rulebook end to end (SPEC 2.4, 5): what `verify` prints for it, `rules compile` and the
//! record `verify` reads as it is, rule sheets, the Colang version choice, and the facts.

use crate::common;

use common::{snap, stalwart, without_times};

const SHOP: &str = "fixtures/shop/agent.yaml";

/// A miette diagnostic's text on one line (its renderer wraps long messages).
fn flat(s: &str) -> String {
    s.lines()
        .map(|l| l.trim_start_matches([' ', '│', '×']).trim())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_shop_prints_the_seeds_rulebook_line() {
    let r = stalwart(&["verify", SHOP, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(
        v["rulebook"],
        "Compiled the rulebook fixtures/shop/policy.co: the tool check enforces the rules verified here."
    );
    let info = &v["rulebook_info"];
    assert_eq!(info["compiled"], true);
    assert_eq!(info["kind"], "colang");
    assert_eq!(info["colang_version"], "1.0");
    assert_eq!(
        info["version_from"],
        "the default: nothing declares a version"
    );
    assert_eq!(info["routes"], 1);
    assert_eq!(info["governed"], serde_json::json!(["refund_card"]));
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert_eq!(rules, vec!["QG023", "QG105"]);
}

fn findings_of(json: &str) -> Vec<(String, String, String)> {
    let v: serde_json::Value = serde_json::from_str(json).expect("json");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                f["subject"].as_str().unwrap_or("").to_string(),
                f["fingerprint"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_compiled_record_reads_as_it_is_and_an_edit_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("compiled");
    let out_s = out.to_string_lossy().into_owned();
    for (case, rule) in [
        ("fixtures/QG002/breaks-weaker-route", "QG002"),
        ("fixtures/QG007/breaks-negated-unwritten", "QG007"),
    ] {
        let policy = format!("{case}/policy.co");
        let c = stalwart(&["rules", "compile", &policy, "--out", &out_s]);
        assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
        assert!(
            c.stdout.starts_with(&format!(
                "Compiled the rulebook {policy}, read as Colang 1.0 (the default: nothing declares a version), into "
            )),
            "{}",
            c.stdout
        );
        let agent = format!("{case}/agent.yaml");
        let from_co = stalwart(&["verify", &agent, "--format", "json"]);
        let from_record = stalwart(&["verify", &agent, "--rulebook", &out_s, "--format", "json"]);
        assert_eq!(from_co.code, from_record.code);
        let a = findings_of(&from_co.stdout);
        assert!(a.iter().any(|(r, _, _)| r == rule), "{a:?}");
        assert_eq!(a, findings_of(&from_record.stdout), "{case}");
        let v: serde_json::Value = serde_json::from_str(&from_record.stdout).expect("json");
        assert_eq!(v["rulebook_info"]["kind"], "record");
        assert!(v["rulebook_info"]["record_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:")));
    }
    // An edited record is refused, naming why: the proof would be of another rulebook.
    let rec = out.join("record.json");
    let text = std::fs::read_to_string(&rec).expect("record");
    std::fs::write(&rec, text.replace("account_blocked", "account_blocket")).expect("write");
    let r = stalwart(&[
        "verify",
        "fixtures/QG007/breaks-negated-unwritten/agent.yaml",
        "--rulebook",
        &out_s,
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("was changed after it was compiled"),
        "{}",
        r.stderr
    );
    // A file that is not a record is never overwritten.
    let other = dir.path().join("mine");
    std::fs::create_dir_all(&other).expect("dir");
    std::fs::write(other.join("record.json"), "my notes").expect("write");
    let r = stalwart(&[
        "rules",
        "compile",
        "fixtures/shop/policy.co",
        "--out",
        &other.to_string_lossy(),
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        std::fs::read_to_string(other.join("record.json")).expect("read"),
        "my notes"
    );
}

#[test]
fn a_rule_sheet_is_a_rulebook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sheet = dir.path().join("rules.yaml");
    std::fs::write(
        &sheet,
        "format: stalwart-rule-sheet/1\nrules:\n  - tool: refund_card\n    when: order_paid\n    name: refunds\n  - tool: refund_card\n    when: [order_paid, card_on_file]\n  - tool: refund_crad\n",
    )
    .expect("write");
    let s = sheet.to_string_lossy().into_owned();
    let r = stalwart(&["verify", SHOP, "--rulebook", &s, "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let f: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "QG002" || f["rule"] == "QG010")
        .collect();
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(f[0]["rule"], "QG002");
    assert_eq!(f[0]["location"]["line"], 3);
    assert!(
        f[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("executes it under `$order_paid`, while flow 'rule 2'")),
        "{}",
        f[0]["message"]
    );
    // The witness: the rule's line, then the facts Z3 found that pass the weaker route only.
    let kinds: Vec<(&str, &str, Option<bool>)> = f[0]["witness"]
        .as_array()
        .expect("witness")
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap_or(""),
                s["node"].as_str().unwrap_or(""),
                s["yes"].as_bool(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("flow", "rule refunds: refund_card when $order_paid", None),
            ("fact", "$order_paid", Some(true)),
            ("fact", "$card_on_file", Some(false)),
        ]
    );
    assert_eq!(f[1]["rule"], "QG010");
    assert_eq!(f[1]["location"]["line"], 8);
    // A sheet of the wrong shape is an unshippable policy, at its line.
    std::fs::write(
        &sheet,
        "format: stalwart-rule-sheet/1\nrules:\n  - tool: refund_card\n    wehn: order_paid\n",
    )
    .expect("write");
    let r = stalwart(&["verify", SHOP, "--rulebook", &s, "--format", "json"]);
    assert_eq!(r.code, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let qg005 = &v["findings"][0];
    assert_eq!(qg005["rule"], "QG005");
    assert_eq!(qg005["location"]["line"], 4);
    assert!(qg005["message"]
        .as_str()
        .is_some_and(|m| m.contains("unknown word 'wehn' in a rule")));
}

#[test]
fn facts_of_the_wrong_shape_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (facts, want) in [
        (
            "  order_paid: {from: get_ordr.status == paid}\n",
            "fact 'order_paid' is read from 'get_ordr', which is not in the catalogue",
        ),
        (
            "  order_paid: {from: read_inbox.status}\n",
            "which reads_outside",
        ),
        ("  order_paid: {from: status}\n", "must be `tool.field`"),
        (
            "  order_paid: {form: get_order.status}\n",
            "unknown word 'form'",
        ),
    ] {
        let shop = std::fs::read_to_string(common::root().join(SHOP)).expect("shop");
        let start = shop.find("facts:").expect("facts");
        let text = format!("{}facts:\n{facts}", &shop[..start]);
        let text = text
            .replace("./shop.catalogue.yaml", "SHOPCAT")
            .replace("./policy.co", "SHOPPOLICY");
        let root = common::root().join("fixtures/shop");
        let text = text
            .replace(
                "SHOPCAT",
                &root.join("shop.catalogue.yaml").to_string_lossy(),
            )
            .replace("SHOPPOLICY", &root.join("policy.co").to_string_lossy());
        let p = dir.path().join("agent.yaml");
        std::fs::write(&p, text).expect("write");
        let r = stalwart(&["verify", &p.to_string_lossy()]);
        assert_eq!(r.code, 2, "{facts}: {}", r.stdout);
        assert!(flat(&r.stderr).contains(want), "{facts}: {}", r.stderr);
        assert!(r.stderr.contains("agent.yaml:"), "{}", r.stderr);
    }
}

#[test]
fn the_colang_version_is_declared_never_guessed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let co = dir.path().join("policy.co");
    std::fs::write(
        &co,
        "flow refunds\n  match user asked for a refund\n  if $order_paid\n    await RefundCardAction(order_id=$id)\n",
    )
    .expect("write");
    let shop = std::fs::read_to_string(common::root().join(SHOP)).expect("shop");
    let root = common::root().join("fixtures/shop");
    let agent = shop
        .replace(
            "./shop.catalogue.yaml",
            &root.join("shop.catalogue.yaml").to_string_lossy(),
        )
        .replace("./policy.co", &co.to_string_lossy());
    let p = dir.path().join("agent.yaml");
    std::fs::write(&p, &agent).expect("write");
    // Read as 1.0 (nothing declares 2.x): it does not compile, and the help says how to declare it.
    let r = stalwart(&["verify", &p.to_string_lossy(), "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["findings"][0]["rule"], "QG005");
    let msg = v["findings"][0]["message"].as_str().unwrap_or("");
    assert!(msg.contains("Colang 1.0 syntax error"), "{msg}");
    assert!(msg.contains("the file reads as Colang 2.x"), "{msg}");
    // Declared in agent.yaml's settings, it compiles and governs refund_card.
    std::fs::write(
        &p,
        format!("{agent}settings: {{colang_version: \"2.x\"}}\n"),
    )
    .expect("write");
    let r = stalwart(&["verify", &p.to_string_lossy(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["rulebook_info"]["colang_version"], "2.x", "{}", r.stdout);
    assert_eq!(
        v["rulebook_info"]["version_from"],
        "agent.yaml's settings.colang_version"
    );
    assert_eq!(
        v["rulebook_info"]["governed"],
        serde_json::json!(["refund_card"])
    );
    // A config.yml beside the rulebook declares it too, as NeMo Guardrails' configurations do.
    std::fs::write(&p, &agent).expect("write");
    std::fs::write(
        dir.path().join("config.yml"),
        "models: []\ncolang_version: \"2.x\"\n",
    )
    .expect("write");
    let r = stalwart(&["verify", &p.to_string_lossy(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(
        v["rulebook_info"]["version_from"],
        "config.yml beside the rulebook"
    );
}

#[test]
fn rulebook_findings_in_text_json_and_sarif() {
    // Findings located in the .co file at the right line, with the route and the facts as the
    // witness (text: labels over the rulebook; SARIF: a code flow through policy.co).
    for (case, name) in [
        ("fixtures/QG001/breaks-rulebook-requires", "rulebook_qg001"),
        ("fixtures/QG002/breaks-weaker-route", "rulebook_qg002"),
        ("fixtures/QG005/breaks-syntax-error", "rulebook_qg005"),
    ] {
        let agent = format!("{case}/agent.yaml");
        let t = stalwart(&["verify", &agent]);
        assert_eq!(t.code, 1, "{}{}", t.stdout, t.stderr);
        snap(&format!("{name}.txt"), &t.stdout);
        let j = stalwart(&["verify", &agent, "--format", "json"]);
        snap(&format!("{name}.json"), &without_times(&j.stdout));
        let s = stalwart(&["verify", &agent, "--format", "sarif"]);
        let v: serde_json::Value = serde_json::from_str(&s.stdout).expect("sarif");
        let uri = v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
            ["artifactLocation"]["uri"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(uri.ends_with("policy.co"), "{name}: {uri}");
        snap(&format!("{name}.sarif"), &s.stdout);
    }
}

#[test]
fn the_shop_as_a_rule_sheet_gives_the_same_findings() {
    let colang = stalwart(&["verify", SHOP, "--format", "json"]);
    let sheet = stalwart(&[
        "verify",
        "fixtures/shop-sheet/agent.yaml",
        "--format",
        "json",
    ]);
    assert_eq!((colang.code, sheet.code), (0, 0), "{}", sheet.stderr);
    assert_eq!(findings_of(&colang.stdout), findings_of(&sheet.stdout));
    let v: serde_json::Value = serde_json::from_str(&sheet.stdout).expect("json");
    assert_eq!(v["rulebook_info"]["kind"], "sheet");
    assert_eq!(
        v["rulebook_info"]["governed"],
        serde_json::json!(["refund_card"])
    );
}

#[test]
fn a_folder_of_colang_files_is_one_rulebook() {
    // Messages defined in one file are defined for the flows of another (QG009 reads them all).
    let dir = tempfile::tempdir().expect("tempdir");
    let rails = dir.path().join("rails");
    std::fs::create_dir_all(rails.join("more")).expect("dir");
    std::fs::write(
        rails.join("flows.co"),
        "define flow refunds\n  user ask refund\n  if $order_paid\n    execute refund_card\n    bot confirm refund\n",
    )
    .expect("write");
    std::fs::write(
        rails.join("more/bot.co"),
        "define bot confirm refund\n  \"Your refund is on its way.\"\n",
    )
    .expect("write");
    let r = stalwart(&[
        "verify",
        SHOP,
        "--rulebook",
        &rails.to_string_lossy(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let files: Vec<String> = v["rulebook_info"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| {
            f.as_str()
                .map(|s| s.rsplit("rails/").next().unwrap_or("").to_string())
        })
        .collect();
    assert_eq!(files, ["flows.co", "more/bot.co"]);
    assert!(findings_of(&r.stdout)
        .iter()
        .all(|(rule, _, _)| rule != "QG009"));
    // Without the second file, the message is the model's to write.
    std::fs::remove_file(rails.join("more/bot.co")).expect("rm");
    let r = stalwart(&[
        "verify",
        SHOP,
        "--rulebook",
        &rails.to_string_lossy(),
        "--format",
        "json",
    ]);
    let f = findings_of(&r.stdout);
    assert!(
        f.iter()
            .any(|(rule, subject, _)| rule == "QG009" && subject == "confirm refund"),
        "{f:?}"
    );
}
