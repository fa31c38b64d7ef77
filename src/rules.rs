//! Rule metadata, read from the files in `rules/` (one per rule). HELPER FILLS THIS IN.

use crate::findings::Severity;

/// Type of a rule (the seed's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleType {
    /// A weakness an attacker can use.
    Vulnerability,
    /// A defect.
    Bug,
    /// For a person to review.
    SecurityHotspot,
}

/// One rule's metadata (one file in `rules/`).
#[derive(Debug, Clone)]
pub struct Rule {
    /// `QG011`.
    pub id: String,
    /// `Confused deputy`.
    pub title: String,
    /// Vulnerability, Bug or Security hotspot.
    pub rule_type: RuleType,
    /// Fails the `ci` gate.
    pub gate: bool,
    /// Stops `Agent(...)` (the `start` gate).
    pub stops: bool,
    /// Default severity.
    pub severity: Severity,
    /// OWASP LLM / ASI entries.
    pub owasp: Vec<String>,
    /// Description.
    pub description: String,
    /// Message template.
    pub message: String,
    /// Fix template.
    pub fix: String,
    /// Whether this version checks it.
    pub checked: bool,
}

/// Every rule, sorted by id.
pub fn all() -> &'static [Rule] {
    &[]
}

/// The rule `id`.
pub fn get(id: &str) -> Option<&'static Rule> {
    all().iter().find(|r| r.id == id)
}
