//! Bad inputs give an error at the offending word with the fix; good inputs load.

use std::path::{Path, PathBuf};

use stalwart::input::{load_agent_yaml, load_export};

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if p.is_dir() {
        Some(p)
    } else {
        println!("skipped: {} is missing", p.display());
        None
    }
}

#[test]
fn smoke() {
    let Some(s) = shared() else { return };
    let i = load_agent_yaml(&s.join("examples/shop/agent.yaml")).unwrap();
    println!("{:#?}", i.export.graph.nodes.iter().map(|n| (n.id.name.clone(), n.kind, n.loc.line, n.tools.len())).collect::<Vec<_>>());
    for e in &i.export.graph.edges { println!("{} {:?} {:?}", e.from.name, e.kind, e.destinations.as_ref().map(|d| d.iter().map(|x| x.name.clone()).collect::<Vec<_>>())); }
    println!("{:?} {:?}", i.rulebook, i.export.warnings);
    for t in &i.catalogue.tools { println!("{} {:?} priv={} comp={:?} args={:?} loc={:?}", t.name, t.kind, t.privileged, t.compensation, t.args, t.loc); }
}

#[test]
fn corpus_smoke() {
    let Some(s) = shared() else { return };
    let lg = s.join("corpus/langgraph");
    for e in std::fs::read_dir(&lg).unwrap() {
        let p = e.unwrap().path();
        if p.extension().map_or(false, |x| x == "json") && !p.ends_with("catalogue.json") {
            match load_export(&p, &lg.join("catalogue.json")) { Ok(_) => println!("ok {}", p.display()), Err(e) => println!("ERR {e}") }
        }
    }
    let ad = s.join("corpus/agentdojo");
    for e in std::fs::read_dir(&ad).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        if n.contains(".react.") {
            let suite = n.split('.').next().unwrap();
            match load_export(&p, &ad.join(format!("{suite}.catalogue.json"))) { Ok(_) => println!("ok {}", p.display()), Err(e) => println!("ERR {e}") }
        }
    }
}

#[test]
fn dump_all() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/errors");
    let mut names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for p in names {
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        let r = if n.ends_with(".agent.yaml") { load_agent_yaml(&p) }
            else if n.ends_with(".catalogue.json") { load_export(&d.join("good.json"), &p) }
            else if n.ends_with(".json") && n != "catalogue.json" { load_export(&p, &d.join("catalogue.json")) }
            else { continue };
        match r {
            Ok(i) => println!("== {n}: OK {:?}", i.catalogue.unknown),
            Err(e) => println!("== {n}:\n   {e}\n   help: {}", miette::Diagnostic::help(&e).map(|h| h.to_string()).unwrap_or_default()),
        }
    }
}

#[test]
fn render() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/errors");
    for (g, c) in [("unknown_kind.json", "catalogue.json"), ("duplicate_id.json", "catalogue.json"), ("guard_undeclared_flag.json", "catalogue.json")] {
        let e = load_export(&d.join(g), &d.join(c)).unwrap_err();
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).render_report(&mut out, &e).unwrap();
        println!("{out}");
    }
    let e = load_agent_yaml(&d.join("python_module.agent.yaml")).unwrap_err();
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).render_report(&mut out, &e).unwrap();
    println!("{out}");
}
