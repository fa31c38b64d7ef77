//! Names a pull request crafts for the job summary, the annotations and the pictures (issue 26,
//! item 4): a backtick, a link, a remote image, a heading or HTML in a tool or node name stays
//! text in the Markdown summary; a Mermaid label cannot add a node, an edge, a `click` or a
//! directive; invisible characters are refused in ids and names, and shown by their code points
//! wherever other input text is shown.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::stalwart_in as run;

/// The shop's export in a folder of its own, with the tool `charge_card` renamed `tool` and the
/// node `desk_tools` renamed `node` (JSON-escaped where they are written).
fn crafted(tool: &str, node: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let plain = common::root().join("fixtures/shop-plain");
    let json = |s: &str| serde_json::to_string(s).unwrap();
    for f in ["graph.json", "catalogue.json"] {
        let text = std::fs::read_to_string(plain.join(f))
            .unwrap()
            .replace("\"charge_card\"", &json(tool))
            .replace("\"desk_tools\"", &json(node));
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    dir
}

/// The text of `line` outside its code spans (CommonMark: a run of n backticks opens a span that
/// the next run of exactly n closes; an unclosed run is literal), and the spans' contents with one
/// space stripped from each side when both have one.
fn split_code(line: &str) -> (String, Vec<String>) {
    let b: Vec<char> = line.chars().collect();
    let mut outside = String::new();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '\\' && i + 1 < b.len() {
            outside.push(b[i]);
            outside.push(b[i + 1]);
            i += 2;
            continue;
        }
        if b[i] != '`' {
            outside.push(b[i]);
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|&&c| c == '`').count();
        let mut j = i + n;
        let mut close = None;
        while j < b.len() {
            if b[j] == '`' {
                let m = b[j..].iter().take_while(|&&c| c == '`').count();
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                let mut s: String = b[i + n..j].iter().collect();
                if s.len() >= 2 && s.starts_with(' ') && s.ends_with(' ') && s.trim() != "" {
                    s = s[1..s.len() - 1].to_string();
                }
                spans.push(s);
                i = j + n;
            }
            None => {
                outside.extend(&b[i..i + n]);
                i += n;
            }
        }
    }
    (outside, spans)
}

/// A character outside code that is not backslash-escaped and would start markup.
fn unescaped_markup(text: &str) -> Option<char> {
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' | ']' | '<' | '>' | '!' | '*' | '_' | '`' => return Some(c),
            _ => {}
        }
    }
    None
}

/// The Markdown summary: outside the Mermaid block, no line is a heading but the first, and no
/// text outside a code span can start a link, an image or HTML; returns the code spans' texts and
/// the Mermaid block.
fn check_summary(md: &str) -> (Vec<String>, String) {
    let (before, rest) = md.split_once("```mermaid\n").unwrap_or((md, ""));
    let (mermaid, after) = rest.split_once("```\n").unwrap_or((rest, ""));
    assert!(
        !mermaid.contains('`'),
        "a backtick in the Mermaid block: {mermaid}"
    );
    let mut spans = Vec::new();
    for (k, line) in before.lines().chain(after.lines()).enumerate() {
        assert!(
            k == 0 || !line.trim_start().starts_with('#'),
            "a heading: {line}"
        );
        let (outside, s) = split_code(line);
        // Our own table syntax aside, nothing outside code may open markup.
        if !line.starts_with('|') {
            assert_eq!(unescaped_markup(&outside), None, "markup in {line:?}");
        }
        spans.extend(s);
    }
    (spans, mermaid.to_string())
}

/// Each Mermaid line with its quoted strings emptied: a crafted label must leave the same shape.
fn shape(mermaid: &str) -> Vec<String> {
    mermaid
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("%%") {
                return "%% comment".to_string();
            }
            let mut out = String::new();
            let mut quoted = false;
            for c in l.chars() {
                if c == '"' {
                    quoted = !quoted;
                    out.push(c);
                } else if !quoted {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// Every `message.text` under `v`.
fn collect_texts(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(o) => {
            if let Some(serde_json::Value::String(t)) = o.get("message").and_then(|m| m.get("text"))
            {
                out.push(t.clone());
            }
            o.values().for_each(|x| collect_texts(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_texts(x, out)),
        _ => {}
    }
}

/// True when every unescaped `](` in a SARIF message leads to a number (`[text](2)`, a related
/// location), never to a URI.
fn only_numbered_links(t: &str) -> bool {
    let c: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '\\' {
            i += 2;
            continue;
        }
        if c[i] == ']' && c.get(i + 1) == Some(&'(') {
            let target: String = c[i + 2..].iter().take_while(|&&x| x != ')').collect();
            if target.is_empty() || !target.chars().all(|x| x.is_ascii_digit()) {
                return false;
            }
        }
        i += 1;
    }
    true
}

const NAMES: [(&str, &str); 4] = [
    (
        "a`b ![x](http://evil/img.png) [l](http://x) <img src=http://evil/i.png> # h",
        "n` ## heading <img src=x onerror=alert(1)> [l](https:evil) ![i](https:evil)",
    ),
    ("``x``` *b* _i_ | cell |", "`lead and trail`"),
    (
        "t\"] --> n0\n",
        "q\"]\n  click n0 href \"https:evil\"\n  n9[\"x",
    ),
    (
        "%%{init: {'securityLevel':'loose'}}%% x;y #quot; &lt;",
        "m %%%%{init: {'theme':'dark'}}%% %%",
    ),
];

#[test]
fn crafted_names_stay_text_in_the_summary_and_the_picture() {
    let plain = common::root().join("fixtures/shop-plain");
    let base = run(
        &plain,
        &[
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
            "--format",
            "mermaid",
        ],
    );
    assert_eq!(base.code, 1, "{}", base.stderr);
    for (tool, node) in NAMES {
        let d = crafted(tool, node);
        let args = [
            "verify",
            "--graph",
            "graph.json",
            "--catalogue",
            "catalogue.json",
        ];
        let newline = tool.contains('\n') || node.contains('\n');
        let summary = d.path().join("summary.md");
        let mut a = args.to_vec();
        let ss = summary.to_string_lossy().into_owned();
        a.extend(["--summary", &ss]);
        let r = run(d.path(), &a);
        if newline {
            // A line break in a name is refused, located, before any output.
            assert_eq!(r.code, 2, "{tool:?} {node:?}: {}", r.stderr);
            assert!(r.stderr.contains("U+000A"), "{}", r.stderr);
            assert!(!summary.exists());
            continue;
        }
        assert_eq!(r.code, 1, "{tool:?} {node:?}: {}", r.stderr);
        let md = std::fs::read_to_string(&summary).unwrap();
        let (spans, mermaid) = check_summary(&md);
        assert!(
            spans.iter().any(|s| s == tool),
            "{tool:?} whole in a span: {md}"
        );
        assert!(
            spans.iter().any(|s| s == node),
            "{node:?} whole in a span: {md}"
        );
        // The picture: the same lines, the same shape; no directive, no click.
        let mut m = args.to_vec();
        m.extend(["--format", "mermaid"]);
        let pic = run(d.path(), &m);
        assert_eq!(pic.code, 1);
        assert_eq!(pic.stdout, mermaid, "the summary draws the same picture");
        assert_eq!(shape(&pic.stdout), shape(&base.stdout), "{}", pic.stdout);
        assert!(!pic.stdout.contains("%%{"), "{}", pic.stdout);
        assert_eq!(pic.stdout.matches("%%").count(), 1, "{}", pic.stdout);
        if format!("{tool}{node}").contains('`') {
            assert!(pic.stdout.contains("#96;"), "a backtick is an entity");
        }
        // SARIF: an embedded link in a message is only ours, to a related location by number.
        let mut sa = args.to_vec();
        sa.extend(["--format", "sarif"]);
        let sarif: serde_json::Value = serde_json::from_str(&run(d.path(), &sa).stdout).unwrap();
        let mut texts = Vec::new();
        collect_texts(&sarif["runs"][0]["results"], &mut texts);
        assert!(texts
            .iter()
            .any(|t| t.contains(tool.split('`').next().unwrap())));
        for t in &texts {
            assert!(only_numbered_links(t), "a link in a SARIF message: {t}");
        }
        // The DOT picture: every quote inside a label escaped.
        let mut dd = args.to_vec();
        dd.extend(["--format", "dot"]);
        let dot = run(d.path(), &dd);
        for l in dot.stdout.lines() {
            let unescaped = l
                .replace("\\\\", "")
                .replace("\\\"", "")
                .matches('"')
                .count();
            assert_eq!(unescaped % 2, 0, "{l}");
        }
    }
}

#[test]
fn the_markdown_escapes_are_exact() {
    use stalwart::output::summary::{code, text};
    assert_eq!(code("plain"), "`plain`");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x``"), "``` `x`` ```");
    assert_eq!(code(" x"), "`  x `");
    assert_eq!(code("a\u{200b}b"), "`a\\u{200b}b`");
    assert_eq!(
        text("[l](http://x) ![i](y) <b> # h | *e*"),
        "\\[l\\]\\(http\\:\\/\\/x\\) \\!\\[i\\]\\(y\\) \\<b\\> \\# h \\| \\*e\\*"
    );
}

/// Invisible characters, one of each class, in a tool name and in a node id: each refused with
/// exit 2, the code point named.
#[test]
fn invisible_characters_are_refused_in_names_and_ids() {
    let classes = [
        '\u{200b}',
        '\u{200c}',
        '\u{200d}',
        '\u{200e}',
        '\u{2060}',
        '\u{2063}',
        '\u{00ad}',
        '\u{034f}',
        '\u{180e}',
        '\u{feff}',
        '\u{202e}',
        '\u{2066}',
        '\u{061c}',
        '\u{e0041}',
        '\u{3164}',
    ];
    for c in classes {
        let cp = format!("U+{:04X}", c as u32);
        let tool = format!("charge{c}card");
        let d = crafted(&tool, "desk_tools");
        let r = run(
            d.path(),
            &[
                "verify",
                "--graph",
                "graph.json",
                "--catalogue",
                "catalogue.json",
            ],
        );
        assert_eq!(r.code, 2, "{cp} in a tool name: {}", r.stderr);
        assert!(r.stderr.contains(&cp), "{cp}: {}", r.stderr);
        assert!(!r.stderr.contains(c), "{cp} shown raw: {}", r.stderr);
        let node = format!("desk{c}tools");
        let d = crafted("charge_card", &node);
        let r = run(
            d.path(),
            &[
                "verify",
                "--graph",
                "graph.json",
                "--catalogue",
                "catalogue.json",
            ],
        );
        assert_eq!(r.code, 2, "{cp} in a node id: {}", r.stderr);
        assert!(r.stderr.contains(&cp), "{cp}: {}", r.stderr);
        assert!(!r.stderr.contains(c), "{cp} shown raw: {}", r.stderr);
    }
}

/// Input text that is not an id (here the input's own file name) is shown with its invisible
/// characters escaped in every output.
#[test]
fn invisible_characters_elsewhere_are_shown_escaped() {
    let d = crafted("charge_card", "desk_tools");
    let name = "g\u{200b}raph.json";
    std::fs::rename(d.path().join("graph.json"), d.path().join(name)).unwrap();
    for format in ["text", "github", "concise", "json", "sarif"] {
        let r = run(
            d.path(),
            &[
                "verify",
                "--graph",
                name,
                "--catalogue",
                "catalogue.json",
                "--format",
                format,
            ],
        );
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        assert!(!r.stdout.contains('\u{200b}'), "{format} shows it raw");
        // The text formats show it escaped; SARIF and the annotations' `file=` percent-encode the
        // path as a URI.
        let shown = ["\\u{200b}", "\\u200b", "%E2%80%8B", "%25E2%2580%258B"];
        assert!(
            shown.iter().any(|e| r.stdout.contains(e)),
            "{format}: {}",
            r.stdout
        );
    }
    let s = d.path().join("s.md");
    let ss = s.to_string_lossy().into_owned();
    let r = run(
        d.path(),
        &[
            "verify",
            "--graph",
            name,
            "--catalogue",
            "catalogue.json",
            "--summary",
            &ss,
        ],
    );
    assert_eq!(r.code, 1);
    let md = std::fs::read_to_string(&s).unwrap();
    assert!(
        !md.contains('\u{200b}') && md.contains("g\\u{200b}raph.json"),
        "{md}"
    );
}
