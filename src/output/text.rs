//! The human report (SPEC 8 `text`, the default format): the shape and wording of the seed's
//! `stalwart verify` output.
//!
//! Sections, in order, each printed only when it has something to say (the header, the proof line
//! and the gate line always are):
//!
//! ```text
//! stalwart verify agent.yaml
//! <the rulebook line>
//! Traces <file>: <runs read, and how many left the export's graph>
//! Warnings from the exporter:
//!   <each warning>
//! Lints from the runtime (none of these blocks the agent):
//!   <lint id> (warning) on <tool>: <message>
//! Code checks: no finding in <N> file(s) (rules <hash>).      (only when Python modules were read)
//!   or: Code checks: <K> finding(s) in <N> file(s) (rules <hash>); they do not change the gate:
//!   <check> <severity> on <tool> (<file>:<line>): <message>
//!     Fix: <fix>
//! Blocking: <N> finding(s) that fail the <ci|start> gate. Fix each before the agent runs.
//!   <rule> <severity> on <subject> (<file>:<line>)
//!     <message>
//!     OWASP <entries>
//!     Fix: <fix>
//!     <source excerpt: the declaring line and the witness, numbered>
//! Warnings: <N> finding(s) that do not block this agent. ...
//!   <the same shape>
//! Rules with nothing to read, so nothing raised:
//!   <rule>: <reason>
//! Rules this version does not check yet: <ids, wrapped>
//! Proof: <obligations searched and their verdicts, the bound, the states>
//! Limits:
//!   <each limit>
//! Gate: passed|failed. ...
//! ```
//!
//! The excerpt under each finding is rendered by codespan-reporting (labels may point into several
//! files: agent.yaml, the catalogue, the rulebook), without colour when `color` is false. Times are
//! never printed, so the same report gives the same bytes.

use crate::rules::RuleId;
use std::fmt::Write as _;
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::termcolor::{Ansi, NoColor, WriteColor};
use codespan_reporting::term::{self, Chars, Config};

use super::plural;
use crate::findings::{Evidence, Finding, StepKind};
use crate::input::source::{Loc, SourceMap};
use crate::report::Report;

/// Steps of a witness shown as labels before the middle is elided.
const MAX_WITNESS_LABELS: usize = 12;
/// Width the long one-line lists (rules not checked yet) are wrapped at.
const WRAP: usize = 100;

/// Renders `report` as the human report. `color` adds ANSI colours (headings and the source
/// excerpts); without it the output is plain text, byte for byte the same for the same report.
/// The result ends with a newline.
pub fn render(report: &Report, color: bool) -> String {
    crate::input::visible::neutralise(&render_raw(report, color), color)
}

fn render_raw(report: &Report, color: bool) -> String {
    let p = Paint(color);
    let mut out = String::new();
    let _ = writeln!(out, "stalwart verify {}", report.input);
    if let Some(rulebook) = &report.rulebook {
        let _ = writeln!(out, "{rulebook}");
    }
    if let Some(t) = &report.traces {
        for l in wrap(&traces_line(t), WRAP, 2) {
            let _ = writeln!(out, "{l}");
        }
    }
    if !report.export_warnings.is_empty() {
        let _ = writeln!(out, "{}", p.yellow("Warnings from the exporter:"));
        for w in &report.export_warnings {
            push_indented(&mut out, 2, &w.replace('\n', "\\n"));
        }
    }
    push_triage(&mut out, report, &p);
    if !report.lints.is_empty() {
        let _ = writeln!(
            out,
            "Lints from the runtime (none of these blocks the agent):"
        );
        for lint in &report.lints {
            push_indented(
                &mut out,
                2,
                &format!("{} (warning) on {}: {}", lint.id, lint.tool, lint.message),
            );
        }
    }
    if let Some(cc) = &report.code_checks {
        push_code_checks(&mut out, report, cc);
    }

    let (accepted, open): (Vec<&Finding>, Vec<&Finding>) =
        report.findings.iter().partition(|f| f.accepted.is_some());
    let (blocking, warnings): (Vec<&Finding>, Vec<&Finding>) =
        open.into_iter().partition(|f| report.blocks(f));
    let files = Files::of(&report.sources);
    let gate = report.gate.as_str();
    if !blocking.is_empty() {
        let head = if blocking.len() == 1 {
            format!("Blocking: 1 finding that fails the {gate} gate. Fix it before the agent runs.")
        } else {
            format!(
                "Blocking: {} findings that fail the {gate} gate. Fix each before the agent runs.",
                blocking.len()
            )
        };
        let _ = writeln!(out, "{}", p.red(&head));
        for f in &blocking {
            push_finding(&mut out, report, &files, f, color);
        }
    }
    if !warnings.is_empty() {
        let mut head = if warnings.len() == 1 {
            "Warnings: 1 finding that does not block this agent. Look at it and weigh it"
                .to_string()
        } else {
            format!(
                "Warnings: {} findings that do not block this agent. Look at each and weigh it",
                warnings.len()
            )
        };
        head.push_str(if blocking.is_empty() {
            "; the agent can run as it is."
        } else {
            "."
        });
        let _ = writeln!(out, "{}", p.yellow(&head));
        push_grouped(&mut out, report, &files, &warnings, color);
    }
    if !accepted.is_empty() {
        let head = format!(
            "Accepted: {} the project accepted with a reason; {} not fail the gate.",
            plural(accepted.len(), "finding", "findings"),
            if accepted.len() == 1 {
                "it does"
            } else {
                "they do"
            }
        );
        let _ = writeln!(out, "{head}");
        for f in &accepted {
            push_finding(&mut out, report, &files, f, color);
        }
    }

    if !report.nothing_to_read.is_empty() {
        let _ = writeln!(out, "Rules with nothing to read, so nothing raised:");
        for (rule, reason) in &report.nothing_to_read {
            push_indented(&mut out, 2, &format!("{rule}: {reason}"));
        }
    }
    if !report.not_yet_checked.is_empty() {
        let line = format!(
            "Rules this version does not check yet: {}",
            report.not_yet_checked.join(", ")
        );
        for l in wrap(&line, WRAP, 2) {
            let _ = writeln!(out, "{l}");
        }
    }
    let _ = writeln!(out, "{}", proof_line(report));
    if !report.limits.is_empty() {
        let _ = writeln!(out, "Limits:");
        for l in &report.limits {
            push_indented(&mut out, 2, l);
        }
    }
    if let Some(b) = &report.baseline {
        let line = match b.known {
            0 => format!("Baseline {}: every finding above is new.", b.path),
            1 => format!(
                "Baseline {}: 1 finding it already has is not shown; only new findings count.",
                b.path
            ),
            n => format!(
                "Baseline {}: {n} findings it already has are not shown; only new findings count.",
                b.path
            ),
        };
        for l in wrap(&line, WRAP, 2) {
            let _ = writeln!(out, "{l}");
        }
    }
    push_weakened(&mut out, report, &p);
    let mut gate = gate_line(report, blocking.len(), warnings.len(), &p);
    if !accepted.is_empty() {
        let _ = write!(
            gate,
            " {} accepted with a reason.",
            plural(accepted.len(), "finding", "findings")
        );
    }
    if !report.weakened.is_empty() {
        let _ = write!(
            gate,
            " The proof is weakened: {}, listed above.",
            plural(report.weakened.len(), "weakening", "weakenings")
        );
    }
    if report.triage.strict && !report.triage.warnings.is_empty() && blocking.is_empty() {
        gate = p.red(&format!(
            "Gate: failed. {} under strict-accepts: fix or remove them and re-run.",
            plural(
                report.triage.warnings.len(),
                "accept does not apply",
                "accepts do not apply"
            )
        ));
    }
    let _ = writeln!(out, "{gate}");
    out
}

/// Pushes `findings`, those of a rule with a `group` (QG023, the unbounded loops of a large
/// agent) as one entry: when two or more of them are there, one heading counts them, each gets a
/// line with its place and message, and the shared fix is said once (each is still its own
/// finding in JSON and SARIF).
fn push_grouped(
    out: &mut String,
    report: &Report,
    files: &Files,
    findings: &[&Finding],
    color: bool,
) {
    let mut said: Vec<RuleId> = Vec::new();
    for f in findings {
        if said.contains(&f.rule) {
            continue;
        }
        let r = f.rule.rule();
        let members: Vec<&&Finding> = match r.group {
            Some(_) => findings.iter().filter(|g| g.rule == f.rule).collect(),
            None => Vec::new(),
        };
        let Some(group) = r.group.as_deref().filter(|_| members.len() >= 2) else {
            push_finding(out, report, files, f, color);
            continue;
        };
        said.push(f.rule);
        push_indented(
            out,
            2,
            &format!(
                "{} {} on {} {group} (one entry here; each is its own finding in JSON and SARIF)",
                f.rule,
                f.severity.as_str(),
                members.len()
            ),
        );
        for l in &members {
            let at = l
                .location
                .line()
                .filter(|x| valid(&report.sources, *x))
                .map(|x| format!(" ({})", report.sources.file_line(x)))
                .unwrap_or_default();
            push_indented(out, 4, &format!("{}{at}: {}", l.subject, l.message));
        }
        if !r.owasp.is_empty() {
            push_indented(out, 4, &format!("OWASP {}", r.owasp.join(", ")));
        }
        if !f.fix.is_empty() {
            push_indented(out, 4, &format!("Fix, for each: {}", f.fix));
        }
    }
}

/// What the project configuration settled: the rules and obligations it is not held to (said
/// once, with why), what `min-severity` left out, and the accepts that did not apply.
fn push_triage(out: &mut String, report: &Report, p: &Paint) {
    let t = &report.triage;
    let config = t.config.as_deref().unwrap_or("the configuration");
    for o in &t.off {
        let removed = match o.removed {
            0 => String::new(),
            n => format!(" ({} not raised)", plural(n, "finding", "findings")),
        };
        let line = format!(
            "Not held to {} ({}), as {config} says: {}{removed}.",
            o.id,
            o.what,
            o.reason.trim_end_matches('.')
        );
        for l in wrap(&line, WRAP, 2) {
            let _ = writeln!(out, "{l}");
        }
    }
    if let Some((min, n)) = t.below.filter(|(_, n)| *n > 0) {
        let line = format!(
            "Below {config}'s min-severity {}: {} not shown.",
            min.as_str(),
            plural(n, "finding", "findings")
        );
        for l in wrap(&line, WRAP, 2) {
            let _ = writeln!(out, "{l}");
        }
    }
    if !t.warnings.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            p.yellow(&format!(
                "Accepts that do not apply ({}):",
                if t.strict {
                    "strict-accepts: each fails the gate"
                } else {
                    "--strict-accepts would fail the gate"
                }
            ))
        );
        for w in &t.warnings {
            push_indented(
                out,
                2,
                &format!("{}: {}", report.sources.file_line(w.at), w.message),
            );
        }
    }
}

/// What weakens the proof (SPEC 8.1), each on its own line with the place that makes it.
fn push_weakened(out: &mut String, report: &Report, p: &Paint) {
    if report.weakened.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{}",
        p.yellow(&format!(
            "Weakened ({}): this proof is weaker than the defaults by",
            report.weakened.len()
        ))
    );
    for w in &report.weakened {
        let line = match w.at {
            Some(at) => format!("{}: {}.", report.sources.file_line(at), w.message),
            None => format!("{}.", w.message),
        };
        push_indented(out, 2, &line);
    }
}

/// The code checks' line, then each code finding with its fix (no source excerpt: the line may
/// hold a secret).
fn push_code_checks(out: &mut String, report: &Report, cc: &crate::report::CodeChecks) {
    let files = cc.files;
    let hash = &cc.rules_hash;
    if cc.findings.is_empty() {
        let _ = writeln!(
            out,
            "Code checks: no finding in {files} file(s) (rules {hash})."
        );
        return;
    }
    let _ = writeln!(
        out,
        "Code checks: {} finding(s) in {files} file(s) (rules {hash}); they do not change the gate:",
        cc.findings.len()
    );
    for f in &cc.findings {
        let mut head = format!("{} {}", f.rule, f.severity.as_str());
        if let Some(t) = f.code_tool() {
            let _ = write!(head, " on {t}");
        }
        if let Some(l) = f.location.line().filter(|l| valid(&report.sources, *l)) {
            let _ = write!(head, " ({})", report.sources.file_line(l));
        }
        push_indented(out, 2, &format!("{head}: {}", f.message));
        if !f.fix.is_empty() {
            push_indented(out, 4, &format!("Fix: {}", f.fix));
        }
    }
}

/// The traces line: how many runs were read, and how many left the export's graph.
fn traces_line(t: &crate::report::TracesInfo) -> String {
    let runs = plural(t.runs, "run", "runs");
    if t.unmodelled == 0 {
        return format!(
            "Traces {}: {runs} read; every transition they took is in the export.",
            t.path
        );
    }
    let took = if t.unmodelled == 1 {
        "1 took a transition the export does not have".to_string()
    } else {
        format!("{} took transitions the export does not have", t.unmodelled)
    };
    let after = match t.privileged_after {
        0 => "none of them then made a privileged call".to_string(),
        n if n == t.unmodelled && n == 1 => "and then made a privileged call (QG016)".to_string(),
        n if n == t.unmodelled => "and each then made a privileged call (QG016)".to_string(),
        1 => "1 of them then made a privileged call (QG016)".to_string(),
        n => format!("{n} of them then made a privileged call (QG016)"),
    };
    format!("Traces {}: {runs} read; {took}, {after}.", t.path)
}

/// The gate line, the report's last (SPEC 8; the seed's wording).
fn gate_line(report: &Report, blocking: usize, warnings: usize, p: &Paint) -> String {
    if blocking > 0 {
        let gate = report.gate.as_str();
        let s = if blocking == 1 {
            format!("Gate: failed. 1 finding blocks this agent under the {gate} gate: fix it and re-run.")
        } else {
            format!("Gate: failed. {blocking} findings block this agent under the {gate} gate: fix them and re-run.")
        };
        return p.red(&s);
    }
    let s = match warnings {
        0 => "Gate: passed. Nothing blocks this agent.".to_string(),
        1 => "Gate: passed. Nothing blocks this agent: the warning above is for you to look at and weigh.".to_string(),
        n => format!("Gate: passed. Nothing blocks this agent: the {n} warnings above are for you to look at and weigh."),
    };
    p.green(&s)
}

/// The proof line: which engines searched, whether they agree, what they concluded, and the bound
/// it holds to. No time and no solver query counts: the text report is deterministic.
fn proof_line(report: &Report) -> String {
    let e = &report.proof;
    let s = &report.scope;
    let bound = format!(
        "{} of at most {} step{}",
        plural(s.session_steps as usize, "turn", "turns"),
        s.recursion_limit,
        if s.recursion_limit == 1 { "" } else { "s" }
    );
    if e.obligations == 0 {
        return format!("Proof: no obligation to search (the bound is {bound}).");
    }
    let by = match report.engines.len() {
        2 => match report.disagreements {
            0 if report.unchecked > 0 => format!(
                "by the explicit and the z3 engines, which agree where both decided ({} by one engine alone, QG006)",
                report.unchecked
            ),
            0 => "by the explicit and the z3 engines, which agree".to_string(),
            n => format!(
                "by the explicit and the z3 engines, which disagree on {} (QG312 above)",
                plural(n, "violation", "violations")
            ),
        },
        _ => format!(
            "by the {} engine alone",
            report.engines.first().map_or("", |e| e.name.as_str())
        ),
    };
    let hold = |n: usize| if n == 1 { "holds" } else { "hold" };
    let states = report
        .engines
        .iter()
        .find(|x| x.name == "explicit")
        .map(|x| format!("; {}", plural(x.states as usize, "state", "states")))
        .unwrap_or_default();
    format!(
        "Proof: {} searched {by}: {} {} at every depth, {} {} to the bound ({bound}), {} violated, {} undecided{states}.",
        plural(e.obligations, "obligation", "obligations"),
        e.holds_every_depth,
        hold(e.holds_every_depth),
        e.holds_to_bound,
        hold(e.holds_to_bound),
        e.violated,
        e.undecided,
    )
}

/// Appends one finding: the header, the message, the OWASP entries, the fix, then the excerpt.
fn push_finding(out: &mut String, report: &Report, files: &Files, f: &Finding, color: bool) {
    let rule = f.rule.rule();
    let mut head = format!("{} {} on {}", f.rule, f.severity.as_str(), f.subject);
    if let Some(loc) = f.location.line().filter(|l| valid(&report.sources, *l)) {
        let _ = write!(head, " ({})", report.sources.file_line(loc));
    }
    push_indented(out, 2, &head);
    push_indented(out, 4, &f.message);
    if !rule.owasp.is_empty() {
        push_indented(out, 4, &format!("OWASP {}", rule.owasp.join(", ")));
    }
    if !f.fix.is_empty() {
        push_indented(out, 4, &format!("Fix: {}", f.fix));
    }
    if let Some(a) = &f.accepted {
        let until = a
            .until
            .as_ref()
            .map(|u| format!(", until {u}"))
            .unwrap_or_default();
        push_indented(
            out,
            4,
            &format!(
                "Accepted ({}{until}): {}",
                report.sources.file_line(a.at),
                a.reason
            ),
        );
    }
    let excerpt = excerpt(report, files, f, color);
    for line in excerpt.lines() {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some((engine, w)) = &f.other_witness {
        let violated = f.obligation.map(|o| o.as_str()).unwrap_or(f.rule.as_str());
        push_indented(
            out,
            4,
            &format!("The {engine} engine's witness ({} steps):", w.len()),
        );
        for (i, step) in w.iter().enumerate() {
            let line = format!("{}. {}", i + 1, super::describe_step(step, violated));
            push_indented(out, 6, &line);
        }
    }
}

/// True when `loc` names a file of `sources`.
fn valid(sources: &SourceMap, loc: Loc) -> bool {
    loc.file < sources.files.len()
}

/// One label of the excerpt: a span of a file and the texts of everything that happens there.
struct Spot {
    file: usize,
    span: Range<usize>,
    primary: bool,
    texts: Vec<String>,
}

/// The finding's source excerpt, rendered by codespan-reporting: a primary label on the line that
/// declared the node (or edge), and the witness's steps, numbered, as labels over the lines that
/// declared their nodes (steps at the same place share one label). Steps whose node has no
/// location become notes, and a witness longer than [`MAX_WITNESS_LABELS`] loses its middle to a
/// note. Returns an empty string when there is nothing to point at. Trailing blank lines are cut.
/// Lines longer than this are not drawn in an excerpt (minified JSON): the place is named and the
/// line quoted clipped ([`crate::input::source::SourceFile::quote`]).
const MAX_EXCERPT_LINE: usize = crate::input::source::MAX_WINDOW_LINE;

/// The excerpt's heading: where the finding is declared, or how far into the run its route goes.
fn route_message(f: &Finding) -> String {
    if f.witness.is_empty() {
        return if f.evidence == Evidence::CompilerStop {
            "where the compiler stops".to_string()
        } else {
            "where it is declared".to_string()
        };
    }
    match f.evidence {
        Evidence::TracedRun => {
            let steps = f.witness.last().map_or(0, |s| s.run_steps) as usize;
            return format!(
                "the traced run, {} up to the call",
                plural(steps, "step", "steps")
            );
        }
        Evidence::RulebookRoute => {
            let facts = f.witness.iter().any(|s| s.kind == StepKind::Fact);
            return if facts {
                "the rulebook's route to it, and the facts that let it through".to_string()
            } else {
                "in the rulebook".to_string()
            };
        }
        Evidence::GraphRoute
        | Evidence::Declaration
        | Evidence::CompilerStop
        | Evidence::ToolCode => {}
    }
    let steps = f.witness.last().map_or(0, |s| s.run_steps) as usize;
    let turn = f.depth.map(|d| format!(" in turn {d}")).unwrap_or_default();
    format!(
        "a route that reaches it{turn}, {} into the run",
        plural(steps, "node step", "node steps")
    )
}

/// The run's files as codespan-reporting reads them, built once per report: building one finds
/// every line start of its file, so building them per finding cost the findings times the files'
/// size (issue 14: minutes on a 20,000-tool export).
///
/// A file with a line longer than [`MAX_EXCERPT_LINE`] is given to the renderer with that line
/// clipped to its first [`MAX_EXCERPT_LINE`] characters and `…` (issue 26): no label lies on such a
/// line (its place is a note), but the renderer shows the lines between two close labels, and a
/// 60 MB line among them was printed whole once per finding.
struct Files<'a> {
    files: SimpleFiles<String, std::borrow::Cow<'a, str>>,
    /// The codespan id of each [`SourceMap`] file, by its index.
    ids: Vec<usize>,
    /// For a clipped file, each line's start in the file and in the clipped text.
    starts: Vec<Option<Vec<(usize, usize)>>>,
}

impl<'a> Files<'a> {
    fn of(sources: &'a SourceMap) -> Files<'a> {
        let mut files = SimpleFiles::new();
        let mut ids = Vec::new();
        let mut starts = Vec::new();
        for sf in &sources.files {
            let long = sf
                .text
                .split('\n')
                .any(|l| l.len() > MAX_EXCERPT_LINE && l.chars().nth(MAX_EXCERPT_LINE).is_some());
            if !long {
                ids.push(files.add(
                    sf.display.clone(),
                    std::borrow::Cow::Borrowed(sf.text.as_str()),
                ));
                starts.push(None);
                continue;
            }
            let mut text = String::with_capacity(sf.text.len().min(1 << 20));
            let mut map = Vec::new();
            let mut old = 0;
            for line in sf.text.split_inclusive('\n') {
                map.push((old, text.len()));
                old += line.len();
                let body = line.strip_suffix('\n').unwrap_or(line);
                match body.char_indices().nth(MAX_EXCERPT_LINE) {
                    Some((cut, _)) => {
                        text.push_str(&body[..cut]);
                        text.push('…');
                        if line.ends_with('\n') {
                            text.push('\n');
                        }
                    }
                    None => text.push_str(line),
                }
            }
            ids.push(files.add(sf.display.clone(), std::borrow::Cow::Owned(text)));
            starts.push(Some(map));
        }
        Files { files, ids, starts }
    }

    /// `span` of the file `file` as the renderer's text holds it (a span on a short line).
    fn span(&self, file: usize, span: Range<usize>) -> Range<usize> {
        let Some(Some(map)) = self.starts.get(file) else {
            return span;
        };
        let i = match map.binary_search_by_key(&span.start, |&(old, _)| old) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let (old, new) = map.get(i).copied().unwrap_or((0, 0));
        (span.start - old + new)..(span.end - old + new)
    }
}

fn excerpt(report: &Report, files: &Files, f: &Finding, color: bool) -> String {
    let sources = &report.sources;
    let mut spots: Vec<Spot> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let add =
        |spots: &mut Vec<Spot>, notes: &mut Vec<String>, loc: Loc, primary: bool, text: String| {
            // A minified file puts everything on one line: its place is named and the line quoted
            // clipped, never whole (issue 26: a 60 MB line once per finding). The line is the one
            // the location lands on, a line past the end being the last.
            let file = sources.file(loc.file);
            if file.line_longer_than(loc.line, MAX_EXCERPT_LINE) {
                notes.push(format!(
                    "{text} ({}:{}:{}): {}",
                    file.display,
                    loc.line,
                    loc.column,
                    file.quote(loc)
                ));
                return;
            }
            let span = sources.file(loc.file).word_span(loc);
            if let Some(s) = spots
                .iter_mut()
                .find(|s| s.file == loc.file && s.span == span)
            {
                s.primary |= primary;
                s.texts.push(text);
            } else {
                spots.push(Spot {
                    file: loc.file,
                    span,
                    primary,
                    texts: vec![text],
                });
            }
        };

    if let Some(loc) = f.location.line().filter(|l| valid(sources, *l)) {
        let what = f.node.as_deref().unwrap_or(&f.subject);
        add(
            &mut spots,
            &mut notes,
            loc,
            true,
            match f.evidence {
                Evidence::RulebookRoute | Evidence::CompilerStop | Evidence::ToolCode => {
                    "here".to_string()
                }
                Evidence::TracedRun => format!("the run calls {} here", f.subject),
                Evidence::GraphRoute | Evidence::Declaration => format!("declares {what}"),
            },
        );
    }

    let violated = f.obligation.map(|o| o.as_str()).unwrap_or(f.rule.as_str());
    let n = f.witness.len();
    let (head, tail) = if n > MAX_WITNESS_LABELS {
        let head = MAX_WITNESS_LABELS / 2 - 1;
        (head, n - (MAX_WITNESS_LABELS - head))
    } else {
        (n, n)
    };
    for (i, step) in f.witness.iter().enumerate() {
        if i == head && tail > head {
            notes.push(format!(
                "... {} more steps (`--replay {}` walks every step)",
                tail - head,
                f.fingerprint
            ));
        }
        if i >= head && i < tail {
            continue;
        }
        let text = format!("{} {}", i + 1, super::describe_step(step, violated));
        match step.loc.filter(|l| valid(sources, *l)) {
            Some(loc) => add(&mut spots, &mut notes, loc, false, text),
            None => notes.push(format!("{text} (no source location)")),
        }
    }
    if spots.is_empty() {
        if notes.is_empty() {
            return String::new();
        }
        let mut text = format!("note: {}", route_message(f));
        for n in notes {
            text.push_str(&format!("\n  = {n}"));
        }
        return text;
    }

    let ids = &files.ids;
    let labels: Vec<Label<usize>> = spots
        .into_iter()
        .map(|s| {
            let label = if s.primary {
                Label::primary(ids[s.file], files.span(s.file, s.span))
            } else {
                Label::secondary(ids[s.file], files.span(s.file, s.span))
            };
            label.with_message(s.texts.join("; "))
        })
        .collect();
    let message = route_message(f);
    let diagnostic = Diagnostic::note()
        .with_message(message)
        .with_labels(labels)
        .with_notes(notes);
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let rendered = if color {
        let mut w = Ansi::new(Vec::new());
        emit(&mut w, &config, &files.files, &diagnostic).then(|| w.into_inner())
    } else {
        let mut w = NoColor::new(Vec::new());
        emit(&mut w, &config, &files.files, &diagnostic).then(|| w.into_inner())
    };
    let text = rendered
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    text.trim_end().to_string()
}

/// Emits `diagnostic`; false when codespan-reporting could not (a span out of its file).
fn emit(
    w: &mut dyn WriteColor,
    config: &Config,
    files: &SimpleFiles<String, std::borrow::Cow<'_, str>>,
    diagnostic: &Diagnostic<usize>,
) -> bool {
    term::emit(w, config, files, diagnostic).is_ok()
}

/// Appends `text` with every line indented by `n` spaces.
fn push_indented(out: &mut String, n: usize, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "{:n$}{line}", "");
    }
    if text.is_empty() {
        out.push('\n');
    }
}

/// Wraps `line` at spaces to at most `width` characters; continuation lines are indented by
/// `indent` spaces.
fn wrap(line: &str, width: usize, indent: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in line.split(' ') {
        let cur = lines.last_mut().map(|l| l.len()).unwrap_or(0);
        if cur > indent && cur + 1 + word.len() > width {
            lines.push(" ".repeat(indent));
        }
        let last = lines.len() - 1;
        let l = &mut lines[last];
        if !l.trim().is_empty() {
            l.push(' ');
        }
        l.push_str(word);
    }
    lines
}

/// ANSI colours for headings, on or off.
struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn red(&self, s: &str) -> String {
        self.wrap("1;31", s)
    }
    fn yellow(&self, s: &str) -> String {
        self.wrap("1;33", s)
    }
    fn green(&self, s: &str) -> String {
        self.wrap("1;32", s)
    }
}
