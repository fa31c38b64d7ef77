//! Rule metadata, read from the files in `rules/` (one per rule), as data.
//!
//! Every rule the verifier can raise has a file `rules/<ID>.toml` holding the columns of the seed's
//! table of rules (chapter 45, "The rules it proves": title, type, fails the gate, stops
//! `Agent(...)`) and what SPEC 7 needs to build and print a finding: its default severity, its
//! OWASP entries, its description, its message and fix templates, what a clean result proves and
//! what it does not, and (optionally) the line the report prints under "Rules with nothing to
//! read, so nothing raised". A file looks like:
//!
//! ```toml
//! id = "QG011"
//! title = "Confused deputy"
//! type = "Vulnerability"          # Vulnerability | Bug | Security hotspot
//! gate = true                      # "Fails the gate"
//! stops = true                     # "Stops Agent(...)"
//! severity = "High"                # Critical | High | Medium | Low | Review (hotspots: Review)
//! owasp = ["LLM01:2026", "ASI01:2026"]
//! status = "checked"               # "checked" | "not_yet_checked"
//! description = """What the rule finds."""
//! message = """'{tool}' can run on '{node}' ..."""
//! fix = """Bind '{tool}' to ..."""
//! fix_rulebook = """(optional) the fix when the finding comes from the rulebook."""
//! fix_langgraph = """(optional) the fix in LangGraph's terms, for a LangGraph export (SPEC 12)."""
//! fix_openai_agents = """(optional) the fix in the OpenAI Agents SDK's terms, for an SDK export (SPEC 13.1)."""
//! proves = """What a clean result proves."""
//! does_not_prove = """What it does not prove."""
//! nothing_to_read = """(optional) why nothing was raised when nothing declares what it reads"""
//! ```
//!
//! `build.rs` embeds the files at compile time (`$OUT_DIR/rules_index.rs`); they are parsed once,
//! on first use. A file that does not parse fails this module's unit tests and the meta-test
//! `tests/it/rules_meta.rs`, which also holds `status` to [`crate::checks::coverage::checked`].
//!
//! Two tables sit beside the files: [`code`], the code checks' (`rules/code_checks.toml`), and
//! [`obligation`], the obligations' names and the rules their violations are reported under, which
//! the findings, SARIF and `--replay` speak of without reading a model.

use crate::input::ir::Framework;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

mod index {
    include!(concat!(env!("OUT_DIR"), "/rules_index.rs"));
}

pub mod code;
pub mod obligation;

pub use index::RuleId;

impl RuleId {
    /// The id spelt exactly `id` (`QG011`, `CC001`): a rule of the proof or a code check.
    pub(crate) fn parse(id: &str) -> Option<RuleId> {
        RuleId::ALL.into_iter().find(|r| r.as_str() == id)
    }

    /// Its rule's metadata: every id has a file (a code check's, its entry of
    /// `rules/code_checks.toml`), so this cannot fail.
    pub(crate) fn rule(self) -> &'static Rule {
        let i = self as usize;
        match i.checked_sub(RuleId::PROOF.len()) {
            None => &all()[i],
            Some(k) => &code::rules()[k],
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `RuleId::QG011 == "QG011"`: an id compares with the text that spells it.
impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Severity of a finding (SPEC 7): by what the tool can do, else the rule's default; a Security
/// hotspot is always `Review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Severity {
    /// A destructive or irreversible write.
    Critical,
    /// A write.
    High,
    /// A read, or the rule's default.
    Medium,
    /// The rule's default for minor bugs.
    Low,
    /// A Security hotspot: for a person to weigh.
    Review,
}

impl Severity {
    /// The word the report prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "Critical",
            Severity::High => "High",
            Severity::Medium => "Medium",
            Severity::Low => "Low",
            Severity::Review => "Review",
        }
    }

    /// Parses the word a rule file uses.
    pub fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "Critical" => Severity::Critical,
            "High" => Severity::High,
            "Medium" => Severity::Medium,
            "Low" => Severity::Low,
            "Review" => Severity::Review,
            _ => return None,
        })
    }
}

/// Placeholders a `fix` (or `fix_rulebook`) template may use: the finding's tool, the qualified id
/// of the node where the call happens, the finding's subject (a tool, `cycle:<node>`,
/// `edge:<from>`, or a rulebook line), as SPEC 7 names them, and `name`: the node's id as the
/// user wrote it in its graph's builder (`add_node("retrieve", ...)` for node `kb/retrieve`).
pub const FIX_PLACEHOLDERS: &[&str] = &["tool", "node", "subject", "name"];

/// Placeholders a `message` template may use: those of [`FIX_PLACEHOLDERS`], and `limit` (the
/// recursion limit, QG023), `depth` (the turn at which a violation is first reachable, QG003),
/// `obligation` (`O1`..`O10`) and `detail` (a rule-specific clause the checker writes).
pub const MESSAGE_PLACEHOLDERS: &[&str] = &[
    "tool",
    "node",
    "subject",
    "limit",
    "depth",
    "obligation",
    "detail",
];

/// Type of a rule (the seed's table, chapter 45, "Type" column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleType {
    /// A weakness an attacker can use.
    Vulnerability,
    /// A defect.
    Bug,
    /// For a person to review.
    SecurityHotspot,
}

impl RuleType {
    /// The word the seed's table, the reports and the rule files use: `Vulnerability`, `Bug` or
    /// `Security hotspot`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleType::Vulnerability => "Vulnerability",
            RuleType::Bug => "Bug",
            RuleType::SecurityHotspot => "Security hotspot",
        }
    }

    /// Parses the word a rule file uses (exactly as [`RuleType::as_str`] prints it).
    pub(crate) fn parse(s: &str) -> Option<RuleType> {
        Some(match s {
            "Vulnerability" => RuleType::Vulnerability,
            "Bug" => RuleType::Bug,
            "Security hotspot" => RuleType::SecurityHotspot,
            _ => return None,
        })
    }
}

impl fmt::Display for RuleType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule's metadata (one file in `rules/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `QG011`: also the file's name, `rules/QG011.toml`.
    pub id: String,
    /// `Confused deputy`, as the seed's table spells it.
    pub title: String,
    /// Vulnerability, Bug or Security hotspot.
    pub rule_type: RuleType,
    /// Fails the `ci` gate ("Fails the gate").
    pub gate: bool,
    /// Stops `Agent(...)`: fails the `start` gate.
    pub stops: bool,
    /// Default severity, used when a finding is not on a tool (SPEC 7); `Review` for a hotspot.
    pub severity: Severity,
    /// OWASP entries, each `LLMnn:2026` (Top 10 for LLM applications) or `ASInn:2026` (Agentic
    /// top 10).
    pub owasp: Vec<String>,
    /// The CWE weaknesses its findings are instances of (`CWE-862`), when there are any: SARIF
    /// tags them `external/cwe/cwe-862` and links the first as the rule's `helpUri`.
    pub cwe: Vec<String>,
    /// What the rule finds, one to three sentences.
    pub description: String,
    /// Message template, lower-case first, no final period (placeholders: [`MESSAGE_PLACEHOLDERS`]).
    pub message: String,
    /// Fix template, a sentence or two (placeholders: [`FIX_PLACEHOLDERS`]); fill it with [`fill`].
    pub fix: String,
    /// The fix when the finding comes from the rulebook rather than the graph (QG001), if it
    /// differs.
    pub fix_rulebook: Option<String>,
    /// The fix in LangGraph's own terms (the guard, `interrupt_before`, the review middleware,
    /// with a one-line example), used for a graph finding on a LangGraph export (SPEC 12), if
    /// the rule has one (placeholders: [`FIX_PLACEHOLDERS`]).
    pub fix_langgraph: Option<String>,
    /// The fix in the OpenAI Agents SDK's terms (`fix_openai_agents`), for an SDK export (SPEC 13.1).
    pub(crate) fix_openai_agents: Option<String>,
    /// Whether this version checks it (`status = "checked"`), held to
    /// [`crate::checks::coverage::checked`].
    pub checked: bool,
    /// What a clean result of this rule proves.
    pub proves: String,
    /// What a clean result does not prove.
    pub does_not_prove: String,
    /// Why nothing was raised when the input declares nothing this rule reads, as the report
    /// prints it under "Rules with nothing to read, so nothing raised" (for example QG017: `no
    /// argument is declared as code or a shell command`); `None` when the rule always has
    /// something to read.
    pub nothing_to_read: Option<String>,
    /// `always_shown = true`: its findings are listed first and nothing hides them (a baseline,
    /// an accept, a rule or obligation turned off, `min-severity`). QG312's: when the engines
    /// disagree, neither answer is a proof, so no filter may make the report look clean.
    pub(crate) always_shown: bool,
    /// `group = "cycles without a budget"`: the text report prints two or more of its findings as
    /// one entry, `QG023 High on 3 cycles without a budget (...)`, with a line per finding and
    /// the shared fix once (JSON and SARIF keep one result each).
    pub(crate) group: Option<String>,
}

impl Rule {
    /// `checked` or `not_yet_checked`, as the rule file spells it.
    pub fn status(&self) -> &'static str {
        if self.checked {
            "checked"
        } else {
            "not_yet_checked"
        }
    }

    /// The fix, filled with `vars` (see [`fill`]).
    pub(crate) fn fix_with(&self, vars: &[(&str, &str)]) -> String {
        fill(&self.fix, vars)
    }

    /// The fix template for a graph finding on an export made with `framework`: the LangGraph
    /// remedy where the export is LangGraph's and the rule has one, the SDK's where it is the
    /// OpenAI Agents SDK's, else [`Rule::fix`].
    pub(crate) fn fix_template(&self, framework: Framework) -> &str {
        match (framework, &self.fix_langgraph, &self.fix_openai_agents) {
            (Framework::LangGraph, Some(f), _) | (Framework::OpenAiAgents, _, Some(f)) => f,
            _ => &self.fix,
        }
    }

    /// The message, filled with `vars` (see [`fill`]).
    pub(crate) fn message_with(&self, vars: &[(&str, &str)]) -> String {
        fill(&self.message, vars)
    }
}

/// A rule file that could not be read as a rule: the file's name and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rules/{file}: {message}")]
pub struct RuleFileError {
    /// The file's name in `rules/`.
    pub(crate) file: String,
    /// What is wrong.
    pub(crate) message: String,
}

/// The shape of a rule file (`deny_unknown_fields`: a misspelt column is an error, not a silent
/// default).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    id: String,
    title: String,
    #[serde(rename = "type")]
    rule_type: String,
    gate: bool,
    stops: bool,
    severity: String,
    owasp: Vec<String>,
    #[serde(default)]
    cwe: Vec<String>,
    status: String,
    description: String,
    message: String,
    fix: String,
    #[serde(default)]
    fix_rulebook: Option<String>,
    #[serde(default)]
    fix_langgraph: Option<String>,
    #[serde(default)]
    fix_openai_agents: Option<String>,
    proves: String,
    does_not_prove: String,
    #[serde(default)]
    nothing_to_read: Option<String>,
    #[serde(default)]
    always_shown: bool,
    #[serde(default)]
    group: Option<String>,
}

/// True for `CWE-<digits>`.
pub(crate) fn is_cwe(s: &str) -> bool {
    s.strip_prefix("CWE-")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The MITRE page of `cwe` (`CWE-862` → `https://cwe.mitre.org/data/definitions/862.html`).
pub fn cwe_uri(cwe: &str) -> String {
    format!(
        "https://cwe.mitre.org/data/definitions/{}.html",
        cwe.trim_start_matches("CWE-")
    )
}

/// The SARIF tag of `cwe`, as CodeQL writes it (`external/cwe/cwe-862`).
pub fn cwe_tag(cwe: &str) -> String {
    format!("external/cwe/{}", cwe.to_ascii_lowercase())
}

/// The embedded rule files, `(file name, text)`, sorted by file name (`rules/QG*.toml` at build
/// time).
pub fn sources() -> &'static [(&'static str, &'static str)] {
    &index::RULE_FILES
}

/// Parses one rule file's `text`; `file_name` (such as `QG011.toml`) must be its id plus `.toml`.
///
/// Besides the TOML shape it checks: a known type, severity and status; a Security hotspot's
/// severity is `Review`; every text column is non-empty; OWASP entries are `LLMnn:2026` or
/// `ASInn:2026`; templates use only the placeholders [`FIX_PLACEHOLDERS`] and
/// [`MESSAGE_PLACEHOLDERS`] name.
pub fn parse(file_name: &str, text: &str) -> Result<Rule, RuleFileError> {
    let err = |message: String| RuleFileError {
        file: file_name.to_string(),
        message,
    };
    let raw: RuleFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;

    if file_name != format!("{}.toml", raw.id) {
        return Err(err(format!(
            "the file's name must be its id: `{}.toml`",
            raw.id
        )));
    }
    if !is_rule_id(&raw.id) {
        return Err(err(format!(
            "`{}` is not a rule id (QG and three digits)",
            raw.id
        )));
    }
    let rule_type = RuleType::parse(&raw.rule_type).ok_or_else(|| {
        err(format!(
            "type `{}`: expected Vulnerability, Bug or Security hotspot",
            raw.rule_type
        ))
    })?;
    let severity = Severity::parse(&raw.severity).ok_or_else(|| {
        err(format!(
            "severity `{}`: expected Critical, High, Medium, Low or Review",
            raw.severity
        ))
    })?;
    if rule_type == RuleType::SecurityHotspot && severity != Severity::Review {
        return Err(err("a Security hotspot's severity is Review".to_string()));
    }
    let checked = match raw.status.as_str() {
        "checked" => true,
        "not_yet_checked" => false,
        other => {
            return Err(err(format!(
                "status `{other}`: expected checked or not_yet_checked"
            )))
        }
    };
    if raw.owasp.is_empty() {
        return Err(err("owasp is empty".to_string()));
    }
    if let Some(bad) = raw.cwe.iter().find(|c| !is_cwe(c)) {
        return Err(err(format!("cwe entry `{bad}`: expected CWE-<number>")));
    }
    if let Some(bad) = raw.owasp.iter().find(|o| !is_owasp_entry(o)) {
        return Err(err(format!(
            "owasp entry `{bad}`: expected LLMnn:2026 or ASInn:2026"
        )));
    }

    let texts: [(&str, Option<&String>); 12] = [
        ("title", Some(&raw.title)),
        ("description", Some(&raw.description)),
        ("message", Some(&raw.message)),
        ("fix", Some(&raw.fix)),
        ("fix_rulebook", raw.fix_rulebook.as_ref()),
        ("fix_langgraph", raw.fix_langgraph.as_ref()),
        ("fix_openai_agents", raw.fix_openai_agents.as_ref()),
        ("proves", Some(&raw.proves)),
        ("does_not_prove", Some(&raw.does_not_prove)),
        ("nothing_to_read", raw.nothing_to_read.as_ref()),
        ("group", raw.group.as_ref()),
        ("id", Some(&raw.id)),
    ];
    for (name, value) in texts {
        if let Some(v) = value {
            if v.trim().is_empty() {
                return Err(err(format!("{name} is empty")));
            }
        }
    }
    let templates: [(&str, Option<&String>, &[&str]); 5] = [
        ("fix", Some(&raw.fix), FIX_PLACEHOLDERS),
        ("fix_rulebook", raw.fix_rulebook.as_ref(), FIX_PLACEHOLDERS),
        (
            "fix_langgraph",
            raw.fix_langgraph.as_ref(),
            FIX_PLACEHOLDERS,
        ),
        (
            "fix_openai_agents",
            raw.fix_openai_agents.as_ref(),
            FIX_PLACEHOLDERS,
        ),
        ("message", Some(&raw.message), MESSAGE_PLACEHOLDERS),
    ];
    for (name, value, allowed) in templates {
        if let Some(v) = value {
            if let Some(p) = placeholders(v).into_iter().find(|p| !allowed.contains(p)) {
                return Err(err(format!(
                    "{name} uses the placeholder {{{p}}}, which is not one of {allowed:?}"
                )));
            }
        }
    }

    let trim = |s: String| s.trim().to_string();
    Ok(Rule {
        id: raw.id,
        title: trim(raw.title),
        rule_type,
        gate: raw.gate,
        stops: raw.stops,
        severity,
        owasp: raw.owasp,
        cwe: raw.cwe,
        description: trim(raw.description),
        message: trim(raw.message),
        fix: trim(raw.fix),
        fix_rulebook: raw.fix_rulebook.map(trim),
        fix_langgraph: raw.fix_langgraph.map(trim),
        fix_openai_agents: raw.fix_openai_agents.map(trim),
        checked,
        proves: trim(raw.proves),
        does_not_prove: trim(raw.does_not_prove),
        nothing_to_read: raw.nothing_to_read.map(trim),
        always_shown: raw.always_shown,
        group: raw.group.map(trim),
    })
}

/// Parses every embedded rule file, sorted by id; the first file that does not parse is the error.
pub(crate) fn load() -> Result<Vec<Rule>, RuleFileError> {
    let mut rules = sources()
        .iter()
        .map(|(name, text)| parse(name, text))
        .collect::<Result<Vec<_>, _>>()?;
    rules.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(rules)
}

/// Every rule, sorted by id, parsed once from the files embedded at build time.
///
/// The files are compiled in and held by the unit tests and `tests/it/rules_meta.rs`, so a file that
/// does not parse cannot ship; should one, this panics naming the file.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        load().expect("the rule files embedded from rules/ parse (held by tests/it/rules_meta.rs)")
    })
}

/// The rule `id` (exactly: `QG011`), if there is one.
pub fn get(id: &str) -> Option<&'static Rule> {
    all().iter().find(|r| r.id == id)
}

/// Replaces each `{name}` placeholder of `template` whose name is in `vars` with its value, in one
/// pass: a value that itself holds braces is not expanded again, and a placeholder `vars` does not
/// name is kept as written.
///
/// `fill("Bind '{tool}' to '{node}'", &[("tool", "refund_card"), ("node", "tools")])` gives
/// `Bind 'refund_card' to 'tools'`.
pub fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if after[..close].contains('{') => {
                // `{{tool}`: this brace opens nothing; the next one may.
                out.push('{');
                rest = after;
            }
            Some(close) => {
                let name = &after[..close];
                match vars.iter().find(|(k, _)| *k == name) {
                    Some((_, value)) if is_placeholder_name(name) => out.push_str(value),
                    _ => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names of the `{name}` placeholders in `template`, in order (names are ASCII letters, digits
/// and `_`; other brace pairs are not placeholders).
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if after[..close].contains('{') => rest = after,
            Some(close) => {
                let name = &after[..close];
                if is_placeholder_name(name) {
                    names.push(name);
                }
                rest = &after[close + 1..];
            }
            None => break,
        }
    }
    names
}

fn is_placeholder_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_rule_id(id: &str) -> bool {
    id.len() == 5 && id.starts_with("QG") && id[2..].bytes().all(|b| b.is_ascii_digit())
}

fn is_owasp_entry(entry: &str) -> bool {
    let b = entry.as_bytes();
    let family = entry.starts_with("LLM") || entry.starts_with("ASI");
    b.len() == 10
        && family
        && b[3].is_ascii_digit()
        && b[4].is_ascii_digit()
        && &entry[5..] == ":2026"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_every_embedded_file_parses() {
        assert!(
            !sources().is_empty(),
            "no rule file was embedded from rules/"
        );
        for (name, text) in sources() {
            if let Err(e) = parse(name, text) {
                panic!("{e}");
            }
        }
        assert_eq!(all().len(), sources().len());
    }

    #[test]
    fn rules_all_is_sorted_and_get_finds_each() {
        let ids: Vec<&str> = all().iter().map(|r| r.id.as_str()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted, "ids are sorted and unique");
        for r in all() {
            assert_eq!(get(&r.id).map(|g| g.id.as_str()), Some(r.id.as_str()));
        }
        assert!(get("QG999").is_none());
        assert!(get("qg011").is_none());
    }

    #[test]
    fn rules_every_id_has_its_file_at_its_index() {
        assert_eq!(RuleId::PROOF.len(), all().len());
        for (k, id) in RuleId::PROOF.iter().enumerate() {
            assert_eq!(*id as usize, k);
            assert_eq!(id.rule().id, id.as_str());
            assert_eq!(get(id.as_str()).map(|r| r.id.as_str()), Some(id.as_str()));
        }
        assert_eq!(RuleId::QG011.to_string(), "QG011");
    }

    #[test]
    fn rules_seed_examples() {
        let r = get("QG023").expect("QG023");
        assert_eq!(r.title, "Unbounded loop");
        assert_eq!(r.rule_type, RuleType::Bug);
        assert_eq!(r.severity, Severity::Medium);
        assert_eq!(r.owasp, ["LLM06:2026", "ASI08:2026"]);
        assert_eq!(
            r.fix,
            "Declare a budget for the agent or the run, or add an exit the model cannot avoid -- a counter in the state, declared on the edge as exit_after."
        );
        let r = get("QG105").expect("QG105");
        assert_eq!(r.rule_type, RuleType::SecurityHotspot);
        assert_eq!(r.severity, Severity::Review);
        assert_eq!(r.owasp, ["LLM03:2026", "ASI08:2026"]);
        assert_eq!(
            r.fix_with(&[("tool", "refund_card")]),
            "Give 'refund_card' an undo -- `undo:` in agent.yaml or `compensation` in the catalogue, which may be the tool itself with its arguments swapped -- or say a failed run may leave it done (`undo: none`), or mark it irreversible."
        );
        assert_eq!(
            r.message_with(&[("tool", "refund_card")]),
            "the write 'refund_card' has no compensation, is not irreversible, and runs on a path with another write"
        );
        assert_eq!(
            get("QG017").and_then(|r| r.nothing_to_read.as_deref()),
            Some("no argument is declared as code or a shell command")
        );
    }

    #[test]
    fn rules_parse_rejects_bad_files() {
        let good = sources()
            .iter()
            .find(|(n, _)| *n == "QG011.toml")
            .map(|(_, t)| *t)
            .expect("QG011.toml");
        assert!(parse("QG011.toml", good).is_ok());
        // The file's name must be its id.
        assert!(parse("QG012.toml", good).is_err());
        // An unknown column.
        assert!(parse("QG011.toml", &format!("{good}\nsevertiy = \"High\"\n")).is_err());
        // Bad enumerations.
        assert!(parse(
            "QG011.toml",
            &good.replace("type = \"Vulnerability\"", "type = \"Vuln\"")
        )
        .is_err());
        assert!(parse(
            "QG011.toml",
            &good.replace("status = \"checked\"", "status = \"done\"")
        )
        .is_err());
        assert!(parse("QG011.toml", &good.replace("LLM01:2026", "LLM01:2025")).is_err());
        // Not TOML at all.
        assert!(parse("QG011.toml", "id = ").is_err());
    }

    #[test]
    fn rules_fill_replaces_named_placeholders_once() {
        assert_eq!(
            fill(
                "Bind '{tool}' to '{node}'.",
                &[("tool", "refund_card"), ("node", "tools")]
            ),
            "Bind 'refund_card' to 'tools'."
        );
        // Unknown names, non-names and unclosed braces are kept.
        assert_eq!(
            fill("{other} {tool} {a b} {", &[("tool", "t")]),
            "{other} t {a b} {"
        );
        // A value is not expanded again.
        assert_eq!(
            fill("{tool}{node}", &[("tool", "{node}"), ("node", "n")]),
            "{node}n"
        );
        assert_eq!(fill("", &[]), "");
        assert_eq!(fill("{{tool}}", &[("tool", "t")]), "{t}");
        assert_eq!(
            placeholders("a {tool} b {x y} {{node}"),
            vec!["tool", "node"]
        );
    }

    #[test]
    fn rules_type_words_round_trip() {
        for t in [
            RuleType::Vulnerability,
            RuleType::Bug,
            RuleType::SecurityHotspot,
        ] {
            assert_eq!(RuleType::parse(t.as_str()), Some(t));
        }
        assert_eq!(RuleType::SecurityHotspot.as_str(), "Security hotspot");
    }
}
