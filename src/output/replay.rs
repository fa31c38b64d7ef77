//! The `--replay FINDING` outputs (SPEC 10): the walkthrough as text, each step numbered with the
//! latches it changed and the source lines it passed drawn by ariadne as numbered labels; or as
//! the JSON script a harness around the real graph replays.
//!
//! The script (`--replay FINDING --format json`, `"format": "stalwart-replay/1"`):
//!
//! ```text
//! {
//!   "format": "stalwart-replay/1",
//!   "input": "agent.yaml",                     // as the user named it
//!   "finding": FINDING,                        // as in the JSON report: "index" (its number)
//!                                              // added, "witness" left out (see "steps")
//!   "recursion_limit": 60,                     // node steps a run may take
//!   "reproduces": true,                        // false: the interpreter does not reproduce it
//!   "stopped_at": 14,                          // the step (1-based) the walk ended on
//!   "qg312": FINDING | null,                   // the QG312 finding when it does not reproduce
//!   "steps": [{                                // in order; every key of a witness step, and
//!     "step": 1,                               // 1-based
//!     "node_kind": "model",                    // the node's kind in qls-graph/1
//!     "kind": "enter" | "choose" | "call" | "confirm" | "turn_end",
//!     "node": "agent", "to": "tools",          // choose: the node left, the destination
//!     "tool": "refund_order", "guarded": false, "refused": true,    // call
//!     "yes": true, "when": "before",           // confirm: the person's answer; on a call its
//!                                              // node reviews (SPEC 12.2): "when": "call" and
//!                                              // "yes", the person's answer to that call (a no
//!                                              // is also "refused": it ran nothing)
//!     "standing": true,                        // a yes for the rest of the run (with "when":
//!                                              // "call"), or, without "when", a call not asked
//!                                              // that ran on such a yes (SPEC 3.1)
//!     "turn": 1, "violation": true, "location": LOCATION | null,
//!     "run_steps": 2,                          // node steps taken in this turn's run
//!     "changes": ["ran[get_order] = true"]     // latches the step changed (SPEC 3 names)
//!   }],
//!   "latches_at_last_step": ["ran[read_inbox] = true", "tainted = {agent}"]
//! }
//! ```
//!
//! A harness drives the real graph from `steps`: at a model (or router) node a `choose` is the
//! destination its scripted model picks; the `call`s at the tool node entered next are the tool
//! calls that model's message asks for (in LangGraph, one AI message with those tool calls); a
//! `confirm` is the person's answer to the interrupt, and a reviewed call's `yes` the answer to
//! that call's review (accept, or reject: the call does not run); a `turn_end` starts the next
//! user turn.
//! Each tool is a stub that records its call; the run reproduces the finding when it makes the
//! same calls at the same nodes. `python -m stalwart_export replay` (python/stalwart_export/replay.py)
//! is such a harness.

use std::fmt::Write as _;

use ariadne::{Color, Config, IndexType, Label, Report as Ariadne, ReportKind};
use serde_json::{json, Value};

use super::describe_step;
use crate::findings::StepKind;
use crate::report::{Report, Walkthrough};

/// The `format` the JSON script declares.
pub(crate) const SCRIPT_FORMAT: &str = "stalwart-replay/1";

/// The walkthrough as text, ending with a newline. `color` adds ANSI colours (ariadne's labels).
/// Text from the inputs is escaped ([`crate::input::visible::neutralise`]), as in the report.
pub fn text(report: &Report, w: &Walkthrough, color: bool) -> String {
    crate::input::visible::neutralise(&text_raw(report, w, color), color)
}

fn text_raw(report: &Report, w: &Walkthrough, color: bool) -> String {
    let f = &w.finding;
    let ob = f.obligation.map(|o| o.as_str()).unwrap_or(f.rule.as_str());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Replay of finding {} of {}: {} {} on {}{}",
        w.index,
        report.input,
        f.rule,
        f.severity.as_str(),
        f.subject,
        f.node
            .as_deref()
            .map(|n| format!(" at {n}"))
            .unwrap_or_default(),
    );
    let _ = writeln!(out, "  {}", f.message);
    let _ = writeln!(
        out,
        "  Fingerprint {}. Every tool is a stub that records its call; a scripted model makes the witness's choices.",
        f.fingerprint
    );
    let stopped = w.unreproduced.as_ref().and_then(|(_, s)| *s);
    out.push_str("Steps:\n");
    let mut turn = 0;
    for (i, s) in w.steps.iter().enumerate() {
        let turn_col = if s.step.turn != turn {
            turn = s.step.turn;
            format!("turn {turn}")
        } else {
            String::new()
        };
        let mut line = format!("  {:>3}  {:<7} {}", i + 1, turn_col, plain(&s.step, ob));
        if s.step.kind == StepKind::Enter && !matches!(s.node_kind, "start" | "end") {
            let _ = write!(
                line,
                " ({}, node step {} of {})",
                s.node_kind, s.step.run_steps, w.recursion_limit
            );
        }
        if stopped == Some(i) {
            line.push_str("  <- the walk stops here");
        } else if i + 1 == w.steps.len() && w.reproduces() {
            let _ = write!(
                line,
                "  <- breaks {ob} ({})",
                f.obligation.map(|o| o.describe()).unwrap_or("")
            );
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if !s.changes.is_empty() {
            let _ = writeln!(out, "{:>16}{}", "", s.changes.join("; "));
        }
    }
    let view = source_view(report, w, color);
    if !view.is_empty() {
        out.push_str("Where the steps are declared:\n");
        out.push_str(&view);
        if !view.ends_with('\n') {
            out.push('\n');
        }
    }
    let last = w.steps.len();
    match &w.unreproduced {
        None => {
            let state = if w.at_violation.is_empty() {
                "every latch is unset".to_string()
            } else {
                w.at_violation.join(", ")
            };
            let _ = writeln!(out, "Latches at step {last}: {state}.");
            let _ = writeln!(
                out,
                "Reproduced: step {last}, {} at {}, breaks {ob} ({}) in turn {}, as finding {} says.",
                plain(&w.steps[last - 1].step, ob),
                w.steps[last - 1].step.node,
                f.obligation.map(|o| o.describe()).unwrap_or(""),
                w.steps[last - 1].step.turn,
                w.index,
            );
        }
        Some((q, _)) => {
            let _ = writeln!(
                out,
                "Not reproduced: {} {} on {}",
                q.rule,
                q.severity.as_str(),
                q.subject
            );
            let _ = writeln!(out, "  {}", q.message);
            let _ = writeln!(out, "  Fix: {}", q.fix);
        }
    }
    out
}

/// The source lines the steps passed, as one ariadne report with a numbered label per line (the
/// step numbers that passed it); empty when no step has a location.
fn source_view(report: &Report, w: &Walkthrough, color: bool) -> String {
    let src = &report.sources;
    // Labels merged by (file, span), in order of first step.
    let mut labels: Vec<(usize, std::ops::Range<usize>, Vec<String>, bool)> = Vec::new();
    let ob = w.finding.obligation.map(|o| o.as_str()).unwrap_or("");
    let stopped = w.unreproduced.as_ref().and_then(|(_, s)| *s);
    for (i, s) in w.steps.iter().enumerate() {
        // A line too long to draw (a minified export) is left out of the picture: the steps
        // above name every node.
        let Some(loc) = s.step.loc.filter(|l| {
            l.file < src.files.len()
                && !src
                    .file(l.file)
                    .line_longer_than(l.line, crate::input::source::MAX_WINDOW_LINE)
        }) else {
            continue;
        };
        let span = src.file(loc.file).word_span(loc);
        let text = format!("{} {}", i + 1, plain(&s.step, ob));
        let key = i + 1 == w.steps.len() || stopped == Some(i);
        match labels
            .iter_mut()
            .find(|(f, sp, _, _)| *f == loc.file && *sp == span)
        {
            Some(l) => {
                l.2.push(text);
                l.3 |= key;
            }
            None => labels.push((loc.file, span, vec![text], key)),
        }
    }
    let Some(primary) = labels.iter().rev().find(|l| l.3).or(labels.last()).cloned() else {
        return String::new();
    };
    let name = |f: usize| src.file(f).display.clone();
    let title = if w.reproduces() {
        format!("the witness of finding {}, step by step", w.index)
    } else {
        format!("the witness of finding {}, up to where it fails", w.index)
    };
    let mut b = Ariadne::build(
        ReportKind::Custom("Replay", Color::Cyan),
        (name(primary.0), primary.1.clone()),
    )
    .with_config(
        Config::default()
            .with_color(color)
            .with_index_type(IndexType::Byte),
    )
    .with_message(title);
    for (order, (f, span, texts, key)) in labels.iter().enumerate() {
        let mut label = Label::new((name(*f), span.clone()))
            .with_message(texts.join("; "))
            .with_order(order as i32);
        if color {
            label = label.with_color(if *key { Color::Red } else { Color::Blue });
        }
        b = b.with_label(label);
    }
    let mut files: Vec<usize> = labels.iter().map(|l| l.0).collect();
    files.sort_unstable();
    files.dedup();
    let cache = ariadne::sources(
        files
            .into_iter()
            .map(|f| (name(f), src.file(f).text.clone())),
    );
    let mut buf = Vec::new();
    if b.finish().write(cache, &mut buf).is_err() {
        return String::new();
    }
    let view = String::from_utf8_lossy(&buf).into_owned();
    if color {
        view
    } else {
        // ariadne 0.5 colours a custom report kind's header even when told not to.
        strip_ansi(&view)
    }
}

/// `s` without ANSI SGR sequences (`ESC [ ... m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A step as the walkthrough names it (the breaking step is marked apart, so not here).
fn plain(step: &crate::findings::Step, ob: &str) -> String {
    let mut s = step.clone();
    s.violation = false;
    describe_step(&s, ob)
}

/// The walkthrough as the JSON script described above, pretty-printed, ending with a newline.
pub(crate) fn json(report: &Report, w: &Walkthrough) -> String {
    let src = &report.sources;
    let mut finding = super::json::finding(report, &w.finding);
    let qg312 = w.unreproduced.as_ref().map(|(q, _)| {
        let mut q = super::json::finding(report, q);
        if let Value::Object(m) = &mut q {
            m.remove("witness");
        }
        q
    });
    if let Value::Object(m) = &mut finding {
        m.insert("index".into(), json!(w.index));
        // The steps below carry the witness, with what each changed.
        m.remove("witness");
    }
    let steps: Vec<Value> = w
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut v = super::json::step(src, &s.step);
            if let Value::Object(m) = &mut v {
                let mut o = serde_json::Map::new();
                o.insert("step".into(), json!(i + 1));
                o.insert("node_kind".into(), json!(s.node_kind));
                o.extend(std::mem::take(m));
                o.insert("run_steps".into(), json!(s.step.run_steps));
                o.insert("changes".into(), json!(s.changes));
                *m = o;
            }
            v
        })
        .collect();
    let v = json!({
        "format": SCRIPT_FORMAT,
        "input": report.input,
        "finding": finding,
        "recursion_limit": w.recursion_limit,
        "reproduces": w.reproduces(),
        "stopped_at": w.steps.len(),
        "qg312": qg312,
        "steps": steps,
        "latches_at_last_step": w.at_violation,
    });
    crate::input::visible::json_pretty(&v)
}
