//! A picture of the route (issue 18): `--format mermaid` and `--format dot` draw the flattened
//! graph, with one finding's witness highlighted (`--witness N|FINGERPRINT`).
//!
//! What is drawn, in both languages:
//! - each node with its qualified id and kind, shaped by kind (start and end round, a model a
//!   hexagon, a router a rhombus, a tool node a box with double sides, a step a box, a subgraph
//!   node a folder, a remote agent a trapezoid); a guarded tool node (`tools`) green and a plain
//!   one (`tools_plain`, or a step calling tools) red, each listing its tools;
//! - each node's pauses for a person (`before`, `after`, `inside`, `call` with the tool);
//! - subgraphs as clusters, nested as their paths are (`kb`, `kb/inner`);
//! - each edge once per source and destination, with its guard when it has one;
//! - the witness: the nodes it enters and the edges it takes in red, thicker, and the call that
//!   breaks the obligation named in the title.
//!
//! They draw a [`Picture`], built from the model before output ([`crate::report::picture`]): this
//! module reads no model. Both are deterministic: the same model and finding give the same bytes.
//! Labels are escaped for their language, and every character a terminal would act on is escaped
//! ([`crate::input::visible`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::findings::{Finding, StepKind};
use crate::report::picture::{Calls, Picture, Shape};

/// The witness to highlight: the nodes entered and the edges (from, to) taken, by node index.
struct Route {
    nodes: BTreeSet<usize>,
    edges: BTreeSet<(usize, usize)>,
    title: String,
}

fn route(m: &Picture, f: Option<&Finding>) -> Option<Route> {
    let f = f?;
    let ix: BTreeMap<&str, usize> = m
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut nodes = BTreeSet::new();
    let mut edges = BTreeSet::new();
    for s in &f.witness {
        match s.kind {
            StepKind::Enter | StepKind::Call => {
                if let Some(&i) = ix.get(s.node.as_str()) {
                    nodes.insert(i);
                }
            }
            StepKind::Choose => {
                if let (Some(&a), Some(&b)) = (
                    ix.get(s.node.as_str()),
                    s.to.as_deref().and_then(|t| ix.get(t)),
                ) {
                    edges.insert((a, b));
                    nodes.insert(b);
                }
            }
            _ => {}
        }
    }
    let on = f
        .node
        .as_deref()
        .map(|n| format!(" at {n}"))
        .unwrap_or_default();
    Some(Route {
        nodes,
        edges,
        title: format!(
            "{} {} on {}{on}: {}",
            f.rule,
            f.severity.as_str(),
            f.subject,
            f.message
        ),
    })
}

/// The subgraph paths, each with its nodes (the top graph's are under `""`).
fn clusters(m: &Picture) -> BTreeMap<String, Vec<usize>> {
    let mut c: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, n) in m.nodes.iter().enumerate() {
        c.entry(n.path.clone()).or_default().push(i);
        // Every enclosing path exists, even one that holds no node of its own.
        let mut p = n.path.as_str();
        while let Some((parent, _)) = p.rsplit_once('/') {
            c.entry(parent.to_string()).or_default();
            p = parent;
        }
    }
    c
}

/// The subgraph paths directly inside `path`.
fn children<'a>(groups: &'a BTreeMap<String, Vec<usize>>, path: &str) -> Vec<&'a String> {
    groups
        .keys()
        .filter(|k| {
            !k.is_empty()
                && match k.rsplit_once('/') {
                    Some((parent, _)) => parent == path,
                    None => path.is_empty(),
                }
        })
        .collect()
}

/// Mermaid text for a quoted label, lines joined by `<br/>` (issue 26): every character that
/// could end the string, start markup or a directive is an entity (`#35;` for `#`, `#quot;`,
/// `#lt;`, `#gt;`, `#96;` for a backtick, which would start a Markdown string, `#37;` for `%`,
/// which `%%{init}%%` directives and comments need), and invisible characters are shown by their
/// code points ([`crate::input::visible`]). Inside the quotes, `;`, `|`, `]` and a `click` are text, and
/// no line break reaches the label: a crafted name stays inside it, and cannot add a node, an
/// edge, a `click` or a directive.
fn mermaid_text(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| mermaid_escape(l))
        .collect::<Vec<_>>()
        .join("<br/>")
}

/// One line of [`mermaid_text`].
fn mermaid_escape(l: &str) -> String {
    let mut out = String::with_capacity(l.len());
    for c in crate::input::visible::visible(l).chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '`' => out.push_str("#96;"),
            '%' => out.push_str("#37;"),
            c => out.push(c),
        }
    }
    out
}

/// The Mermaid flowchart of `m`, with `witness`'s route highlighted; ends with a newline.
pub(crate) fn mermaid(m: &Picture, witness: Option<&Finding>) -> String {
    let r = route(m, witness);
    let mut out = String::from("flowchart TD\n");
    if let Some(r) = &r {
        let _ = writeln!(out, "  %% {}", mermaid_comment(&r.title));
    }
    let shape = |k: Shape, text: &str| -> String {
        match k {
            Shape::Start | Shape::End => format!("([\"{text}\"])"),
            Shape::Model => format!("{{{{\"{text}\"}}}}"),
            Shape::Router => format!("{{\"{text}\"}}"),
            Shape::Tools => format!("[[\"{text}\"]]"),
            Shape::Subgraph => format!("[/\"{text}\"\\]"),
            Shape::Remote => format!("[\\\"{text}\"/]"),
            Shape::Step => format!("[\"{text}\"]"),
        }
    };
    let groups = clusters(m);
    fn emit(
        out: &mut String,
        m: &Picture,
        groups: &BTreeMap<String, Vec<usize>>,
        path: &str,
        depth: usize,
        counter: &mut usize,
        shape: &dyn Fn(Shape, &str) -> String,
    ) {
        let pad = "  ".repeat(depth + 1);
        for &i in groups.get(path).map(Vec::as_slice).unwrap_or(&[]) {
            let text = mermaid_text(&m.nodes[i].label);
            let _ = writeln!(out, "{pad}n{i}{}", shape(m.nodes[i].shape, &text));
        }
        for c in children(groups, path) {
            let id = *counter;
            *counter += 1;
            let _ = writeln!(
                out,
                "{pad}subgraph sg{id}[\"{}\"]",
                mermaid_text(&[format!("subgraph {c}")])
            );
            emit(out, m, groups, c, depth + 1, counter, shape);
            let _ = writeln!(out, "{pad}end");
        }
    }
    let mut counter = 0;
    emit(&mut out, m, &groups, "", 0, &mut counter, &shape);
    let mut hot = Vec::new();
    for (k, e) in m.edges.iter().enumerate() {
        let (a, b) = (e.from, e.to);
        match &e.guard {
            Some(g) => {
                let _ = writeln!(
                    out,
                    "  n{a} -->|\"{}\"| n{b}",
                    mermaid_text(std::slice::from_ref(g))
                );
            }
            None => {
                let _ = writeln!(out, "  n{a} --> n{b}");
            }
        }
        if r.as_ref().is_some_and(|r| r.edges.contains(&(a, b))) {
            hot.push(k.to_string());
        }
    }
    out.push_str("  classDef guarded fill:#e6f4ea,stroke:#1e8e3e\n");
    out.push_str("  classDef plain fill:#fce8e6,stroke:#d93025\n");
    out.push_str("  classDef route stroke:#d93025,stroke-width:3px\n");
    let guarded: Vec<String> = m
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.calls == Calls::Guarded)
        .map(|(i, _)| format!("n{i}"))
        .collect();
    let plain: Vec<String> = m
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.calls == Calls::Plain)
        .map(|(i, _)| format!("n{i}"))
        .collect();
    if !guarded.is_empty() {
        let _ = writeln!(out, "  class {} guarded", guarded.join(","));
    }
    if !plain.is_empty() {
        let _ = writeln!(out, "  class {} plain", plain.join(","));
    }
    if let Some(r) = &r {
        if !r.nodes.is_empty() {
            let ns: Vec<String> = r.nodes.iter().map(|i| format!("n{i}")).collect();
            let _ = writeln!(out, "  class {} route", ns.join(","));
        }
    }
    if !hot.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#d93025,stroke-width:3px",
            hot.join(",")
        );
    }
    out
}

/// A Mermaid comment line: no line break, no `%` (so no `%%{init}%%` directive, which Mermaid
/// finds anywhere in the text) and no backtick (the summary's code fence), as [`mermaid_text`].
fn mermaid_comment(s: &str) -> String {
    mermaid_escape(s)
}

/// A DOT string's contents: `"` and `\` escaped, lines joined by `\n`.
fn dot_text(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| {
            crate::input::visible::visible(l)
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
        })
        .collect::<Vec<_>>()
        .join("\\n")
}

/// The Graphviz DOT digraph of `m`, with `witness`'s route highlighted; ends with a newline.
pub(crate) fn dot(m: &Picture, witness: Option<&Finding>) -> String {
    let r = route(m, witness);
    let mut out = String::from("digraph stalwart {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
    if let Some(r) = &r {
        let _ = writeln!(
            out,
            "  labelloc=t;\n  label=\"{}\";",
            dot_text(std::slice::from_ref(&r.title))
        );
    }
    let groups = clusters(m);
    let attrs = |i: usize| -> String {
        let n = &m.nodes[i];
        let shape = match n.shape {
            Shape::Start => "circle",
            Shape::End => "doublecircle",
            Shape::Model => "hexagon",
            Shape::Router => "diamond",
            Shape::Tools => "box3d",
            Shape::Step => "box",
            Shape::Subgraph => "folder",
            Shape::Remote => "trapezium",
        };
        let extra = match n.calls {
            Calls::None => "",
            Calls::Guarded => ", style=filled, fillcolor=\"#e6f4ea\", color=\"#1e8e3e\"",
            Calls::Plain => ", style=filled, fillcolor=\"#fce8e6\", color=\"#d93025\"",
        };
        let hot = if r.as_ref().is_some_and(|r| r.nodes.contains(&i)) {
            ", penwidth=3, color=\"#d93025\""
        } else {
            ""
        };
        format!(
            "shape={shape}, label=\"{}\"{extra}{hot}",
            dot_text(&n.label)
        )
    };
    fn emit(
        out: &mut String,
        groups: &BTreeMap<String, Vec<usize>>,
        path: &str,
        depth: usize,
        counter: &mut usize,
        attrs: &dyn Fn(usize) -> String,
    ) {
        let pad = "  ".repeat(depth + 1);
        for &i in groups.get(path).map(Vec::as_slice).unwrap_or(&[]) {
            let _ = writeln!(out, "{pad}n{i} [{}];", attrs(i));
        }
        for c in children(groups, path) {
            let id = *counter;
            *counter += 1;
            let _ = writeln!(
                out,
                "{pad}subgraph cluster_{id} {{\n{pad}  label=\"{}\";\n{pad}  style=rounded;",
                dot_text(&[format!("subgraph {c}")])
            );
            emit(out, groups, c, depth + 1, counter, attrs);
            let _ = writeln!(out, "{pad}}}");
        }
    }
    let mut counter = 0;
    emit(&mut out, &groups, "", 0, &mut counter, &attrs);
    for e in &m.edges {
        let (a, b) = (e.from, e.to);
        let mut at = Vec::new();
        if let Some(g) = &e.guard {
            at.push(format!("label=\"{}\"", dot_text(std::slice::from_ref(g))));
        }
        if r.as_ref().is_some_and(|r| r.edges.contains(&(a, b))) {
            at.push("color=\"#d93025\", penwidth=3".to_string());
        }
        if at.is_empty() {
            let _ = writeln!(out, "  n{a} -> n{b};");
        } else {
            let _ = writeln!(out, "  n{a} -> n{b} [{}];", at.join(", "));
        }
    }
    out.push_str("}\n");
    out
}
