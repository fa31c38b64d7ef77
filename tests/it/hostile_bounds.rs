//! Bounds on what a crafted source file costs (issue 26, item 5): an export whose nodes' locations
//! point into one huge one-line file (a line past its end, the line itself far along, the lines
//! around it) gives reports of a few kilobytes, every quoted line clipped with `…`, and the file
//! is read once. Sizes are asserted, never times.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::process::Command;

/// Bytes of the one long line: a few megabytes is enough to see a report that copies it.
const LONG: usize = 3 << 20;

/// The shop's export in a folder of its own, each node located in `app.py` at the (line,
/// column) of `spots` in turn; `app.py` is `a = 1`, one line of [`LONG`] characters (with a
/// two-byte character every so often, so a cut on a byte would split one), and `b = 2`.
fn crafted(spots: &[(u32, u32)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let plain = common::root().join("fixtures/shop-plain");
    std::fs::copy(
        plain.join("catalogue.json"),
        dir.path().join("catalogue.json"),
    )
    .unwrap();
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plain.join("graph.json")).unwrap()).unwrap();
    for (i, n) in g["nodes"].as_array_mut().unwrap().iter_mut().enumerate() {
        let (line, column) = spots[i % spots.len()];
        // Two spellings of one file: it is still read once.
        let file = if i % 2 == 0 { "app.py" } else { "./app.py" };
        n["location"] = serde_json::json!({"file": file, "line": line, "column": column});
    }
    std::fs::write(dir.path().join("graph.json"), g.to_string()).unwrap();
    let long: String = (0..LONG / 10).map(|_| "xxxxxxxé_").collect();
    std::fs::write(dir.path().join("app.py"), format!("a = 1\n{long}\nb = 2\n")).unwrap();
    dir
}

fn run(dir: &Path, extra: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_stalwart"))
        .args([
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
        ])
        .args(extra)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).expect("UTF-8: no character was cut");
    (o.status.code().unwrap_or(-1), out)
}

/// Every output stays small and no line of it is long.
fn bounded(dir: &Path) -> String {
    let mut text = String::new();
    for format in ["text", "json", "sarif", "github", "concise"] {
        let (code, out) = run(dir, &["--format", format]);
        assert_eq!(code, 1, "{format}");
        assert!(out.len() < 400_000, "{format}: {} bytes", out.len());
        assert!(
            !out.contains(&"x".repeat(400)),
            "{format} copies the long line"
        );
        if format == "text" {
            text = out;
        }
    }
    let (_, replay) = run(dir, &["--replay", "1"]);
    assert!(replay.len() < 50_000, "replay: {} bytes", replay.len());
    assert!(!replay.contains(&"x".repeat(400)));
    text
}

#[test]
fn a_location_past_the_end_of_a_huge_line_is_clipped() {
    // Past the end (the last line), on the long line at its start and far along, and around it.
    let d = crafted(&[(7, 1), (2, 1), (2, 3_000_000), (1, 1), (3, 1)]);
    let text = bounded(d.path());
    assert!(text.contains('…'), "the clip is said: {text}");
    assert!(text.contains("(app.py:2:3000000): …"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() < 400, "a long line: {}", &line[..200]);
    }
}

#[test]
fn labels_around_a_huge_line_do_not_draw_it() {
    // Labels on the lines before and after it: the renderer draws the lines between them.
    let d = crafted(&[(1, 1), (3, 1)]);
    let text = bounded(d.path());
    assert!(text.contains("a = 1") && text.contains("b = 2"), "{text}");
    assert!(
        text.contains("xxxxxx…\n"),
        "the line between, clipped: {text}"
    );
}

#[test]
fn a_source_file_is_read_once() {
    let d = crafted(&[(1, 1), (2, 5), (3, 1)]);
    let inputs = stalwart::input::load_export(
        &d.path().join("graph.json"),
        &d.path().join("catalogue.json"),
    )
    .unwrap();
    let app = inputs
        .sources
        .files
        .iter()
        .filter(|f| f.path.ends_with("app.py"))
        .count();
    assert_eq!(app, 1, "app.py is one source, read once");
}

/// The quote itself: on character boundaries, at most 200 characters and the two ellipses.
#[test]
fn the_quote_is_clipped_on_character_boundaries() {
    let mut m = stalwart::SourceMap::default();
    let line: String = "é".repeat(1000);
    let id = m.add("f".into(), "f".into(), format!("{line}\nshort\n"));
    let q = m.file(id).quote(stalwart::Loc::new(id, 1, 500));
    assert!(q.starts_with('…') && q.ends_with('…'), "{q}");
    assert_eq!(q.chars().count(), stalwart::MAX_QUOTE + 2);
    let q = m.file(id).quote(stalwart::Loc::new(id, 9, 1));
    assert_eq!(q, "", "past the end: the last line, empty");
    let q = m.file(id).quote(stalwart::Loc::new(id, 2, 1));
    assert_eq!(q, "short");
}
