//! Real input nobody here wrote (`../shared/corpus`): LangGraph's own prebuilt and documented
//! graphs, exported to qls-graph/1, and the AgentDojo benchmark's tool suites on a plain and a
//! guarded ReAct graph. Skipped, saying so, where `../shared` is absent (a user's clone).

use crate::common;

use stalwart::engine::interp;
use stalwart::input;
use stalwart::Options;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

fn verify(graph: &Path, catalogue: &Path) -> stalwart::Report {
    let inputs =
        input::load_export(graph, catalogue).unwrap_or_else(|e| panic!("{}: {e}", graph.display()));
    let (m, results) = common::results(&inputs);
    for r in &results {
        for v in &r.violations {
            if let Err(e) = interp::replay_violation(&m, v) {
                panic!("{}: a witness does not replay: {e}", graph.display());
            }
        }
    }
    let opts = Options::new(common::steps(&inputs));
    stalwart::verify(inputs, &opts).unwrap_or_else(|e| panic!("{}: {e}", graph.display()))
}

#[test]
fn langgraph_exports_verify() {
    let Some(shared) = common::shared("langgraph_exports_verify") else {
        return;
    };
    let dir = shared.join("corpus/langgraph");
    let catalogue = dir.join("catalogue.json");
    let mut graphs: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus/langgraph")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name().is_some_and(|n| n != "catalogue.json")
        })
        .collect();
    graphs.sort();
    assert!(graphs.len() >= 10, "the corpus has its graphs");
    let mut table = String::new();
    for g in &graphs {
        let report = verify(g, &catalogue);
        let mut seen = BTreeSet::new();
        for f in &report.findings {
            seen.insert(format!("{} {}", f.rule, f.subject));
        }
        let name = g
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = writeln!(
            table,
            "{name}: exit {} | {}",
            report.exit_code(),
            seen.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    // What each of LangGraph's own graphs gives, for review: a change in the reading shows here.
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("corpus_langgraph", table);
    });
}

#[test]
fn agentdojo_plain_flags_every_write_and_guarded_none() {
    let Some(shared) = common::shared("agentdojo_plain_flags_every_write_and_guarded_none") else {
        return;
    };
    let dir = shared.join("corpus/agentdojo");
    let targets =
        std::fs::read_to_string(dir.join("injection_targets.tsv")).expect("injection_targets.tsv");
    let mut lines = targets.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let (suite_col, writes_col) = (col("suite"), col("write_tools"));
    for suite in ["banking", "slack", "travel", "workspace"] {
        let cat_path = dir.join(format!("{suite}.catalogue.json"));
        let cat: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&cat_path).expect("catalogue"))
                .expect("json");
        let tools = cat["tools"].as_object().expect("tools");
        let writes: BTreeSet<String> = tools
            .iter()
            .filter(|(_, t)| t["kind"] == "write")
            .map(|(n, _)| n.clone())
            .collect();
        let reads_outside = tools.values().any(|t| t["reads_outside"] == true);
        assert!(
            reads_outside,
            "{suite}: every AgentDojo suite has a tool that reads outside"
        );
        let injected: BTreeSet<String> = lines
            .clone()
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .filter(|r| r.get(suite_col) == Some(&suite))
            .flat_map(|r| {
                r.get(writes_col)
                    .map(|w| w.split(',').map(str::to_string).collect::<Vec<_>>())
                    .unwrap_or_default()
            })
            .filter(|w| !w.is_empty())
            .collect();
        assert!(!injected.is_empty(), "{suite}: injection targets listed");

        let plain = verify(&dir.join(format!("{suite}.react.plain.json")), &cat_path);
        let flagged: BTreeSet<String> = plain
            .findings
            .iter()
            .filter(|f| f.rule == "QG011")
            .map(|f| f.subject.clone())
            .collect();
        let missing: Vec<_> = writes.difference(&flagged).collect();
        assert!(
            missing.is_empty(),
            "{suite}: writes not flagged QG011 on the plain graph: {missing:?}"
        );
        let missed: Vec<_> = injected.difference(&flagged).collect();
        assert!(
            missed.is_empty(),
            "{suite}: injection targets not flagged: {missed:?}"
        );
        assert_eq!(
            plain.exit_code(),
            1,
            "{suite}: the plain graph fails the gate"
        );

        let guarded = verify(&dir.join(format!("{suite}.react.guarded.json")), &cat_path);
        let taint: Vec<_> = guarded
            .findings
            .iter()
            .filter(|f| matches!(f.rule.as_str(), "QG011" | "QG012" | "QG001" | "QG003"))
            .collect();
        assert!(
            taint.is_empty(),
            "{suite}: the guarded graph has {} taint or check findings",
            taint.len()
        );
    }
}
