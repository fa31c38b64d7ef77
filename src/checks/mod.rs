//! Checks: turn the model's structure and the engines' verdicts into findings (SPEC 4, 6, 7).
//!
//! [`graph`] reads the obligation verdicts (QG001, QG003, QG011-QG014, QG105, and QG006 for an
//! undecided search); [`engines`] the engines' disagreements (QG312); [`structure`] reads the flattened graph itself (QG023, QG015, QG006 for an
//! opaque subgraph); [`lints`] gives the runtime lints; [`coverage`] says which rules had nothing
//! to read and which this version does not check yet; [`rulebook`] reads the compiled rulebook
//! (QG001's rulebook side, QG002, QG004, QG005, QG007-QG010, QG022), [`declarations`] QG004's
//! graph side, and [`traces`] the traces of real runs (QG016). [`code`] reads the Python tool modules' code
//! (CC001-CC003, which do not change the gate). [`opaque`] reads the nodes' `opaque` entries (QG024,
//! SPEC 12.5). Checks never print.

pub(crate) mod catalogue_rules;
pub mod code;
pub mod coverage;
pub(crate) mod declarations;
pub(crate) mod engines;
pub(crate) mod graph;
pub(crate) mod lints;
pub(crate) mod opaque;
pub(crate) mod rulebook;
pub mod rulebook_names;
pub(crate) mod structure;
pub mod traces;

use crate::findings::{fingerprint, Evidence, Finding, Obligation, Primary, Severity, Step};
use crate::input::ir::{Framework, ToolDef};
use crate::input::source::Loc;
use crate::rules::RuleId;
use crate::rules::{self, RuleType};

/// The severity of a finding of `rule` (SPEC 7): a hotspot is Review; a finding on a tool goes
/// by what the tool can do (destructive or irreversible write Critical, write High, read Medium);
/// otherwise the rule's default.
pub(crate) fn severity(rule: RuleId, tool: Option<&ToolDef>) -> Severity {
    let r = rule.rule();
    if r.rule_type == RuleType::SecurityHotspot {
        return Severity::Review;
    }
    match tool {
        Some(t) if t.is_write() && (t.destructive || t.irreversible) => Severity::Critical,
        Some(t) if t.is_write() => Severity::High,
        Some(_) => Severity::Medium,
        None => r.severity,
    }
}

/// What a finding is about, for its message and fix templates.
pub(crate) struct Subject<'a> {
    /// The rule id.
    pub rule: RuleId,
    /// The obligation, for graph rules.
    pub obligation: Option<Obligation>,
    /// The subject as SPEC 7 spells it.
    pub subject: String,
    /// The tool, when the finding is on one.
    pub tool: Option<&'a ToolDef>,
    /// The qualified node id.
    pub node: Option<String>,
    /// Where the finding points ([`crate::findings::Primary`]).
    pub location: Primary,
}

/// Builds a finding from the rule's templates: `vars` add `limit`, `depth`, `obligation`, `detail`.
pub(crate) fn finding(
    s: Subject<'_>,
    depth: Option<u32>,
    witness: Vec<Step>,
    vars: &[(&str, &str)],
) -> Finding {
    finding_in(s, Framework::Other, depth, witness, vars)
}

/// [`finding`] on an export made with `framework`: its fix in that framework's terms where the
/// rule has them ([`crate::rules::Rule::fix_template`], SPEC 12).
pub(crate) fn finding_in(
    s: Subject<'_>,
    framework: Framework,
    depth: Option<u32>,
    witness: Vec<Step>,
    vars: &[(&str, &str)],
) -> Finding {
    let tool_name = s.tool.map(|t| t.name.clone()).unwrap_or_default();
    let node = s.node.clone().unwrap_or_default();
    let name = builder_name(&node).to_string();
    let mut all: Vec<(&str, &str)> = vec![
        ("tool", &tool_name),
        ("node", &node),
        ("name", &name),
        ("subject", &s.subject),
    ];
    all.extend_from_slice(vars);
    let r = s.rule.rule();
    let (message, fix) = (
        r.message_with(&all),
        rules::fill(r.fix_template(framework), &all),
    );
    let mut related = Vec::new();
    if let Some(t) = s.tool {
        related.extend(defined_here(t));
        related.push((t.loc, format!("'{}' is declared here", t.name)));
    }
    Finding {
        rule: s.rule,
        obligation: s.obligation,
        fingerprint: fingerprint(s.rule.as_str(), s.obligation, &s.subject, s.node.as_deref()),
        severity: severity(s.rule, s.tool),
        subject: s.subject,
        node: s.node,
        depth,
        location: s.location,
        related,
        message,
        fix,
        evidence: Evidence::of(&witness),
        witness,
        drawn_from: None,
        other_witness: None,
        accepted: None,
        unproved: Vec::new(),
    }
}

/// The id the user wrote in the builder of the node's own graph (`add_node("retrieve", ...)`) for
/// a qualified id (`kb/retrieve`): its last part (issue 28: a fix names the builder's node).
pub(crate) fn builder_name(qid: &str) -> &str {
    qid.rsplit('/').next().unwrap_or(qid)
}

/// Makes every fingerprint unique (issue 18: two findings never share one, or code scanning
/// merges their alerts). Findings are in their sorted order; the first of a run of equal
/// fingerprints keeps its own, the n-th (n >= 2) hashes its subject with `#n` appended (two null
/// edges from one node, QG015: the edge is keyed by its place among its node's, and an unrelated
/// edit keeps both).
pub(crate) fn unique_fingerprints(findings: &mut [Finding]) {
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for f in findings.iter_mut() {
        let n = seen.entry(f.fingerprint.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            let keyed = format!("{}#{n}", f.subject);
            f.fingerprint = fingerprint(f.rule.as_str(), f.obligation, &keyed, f.node.as_deref());
        }
    }
}

/// The tool's definition in the user's source (an export's `tool_locations`, SPEC 12.4) as a
/// finding's related location, when the export gave one.
pub(crate) fn defined_here(
    t: &crate::input::ir::ToolDef,
) -> Option<(crate::input::source::Loc, String)> {
    t.defined
        .map(|l| (l, format!("'{}' is defined here", t.name)))
}

/// Sorts findings as the outputs list them: those of an `always_shown` rule (QG312) first, then
/// by rule, subject, node.
pub(crate) fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (!a.always_shown(), a.rule, &a.subject, &a.node, a.obligation).cmp(&(
            !b.always_shown(),
            b.rule,
            &b.subject,
            &b.node,
            b.obligation,
        ))
    });
}

/// A finding of a rulebook rule; `key` makes the fingerprint unique without line numbers.
pub(crate) fn rb_finding(
    rule: RuleId,
    subject: String,
    tool: Option<&ToolDef>,
    at: Loc,
    key: &str,
    witness: Vec<Step>,
    vars: &[(&str, &str)],
) -> Finding {
    let mut f = finding(
        Subject {
            rule,
            obligation: None,
            subject,
            tool,
            node: None,
            location: Primary::Line(at),
        },
        None,
        witness,
        vars,
    );
    f.fingerprint = fingerprint(rule.as_str(), None, &f.subject, Some(key));
    f
}
