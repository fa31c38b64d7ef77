//! The code checks' declarations (issue 6; issue 17: declared once, with ids of the same type as
//! the proof's rules): `rules/code_checks.toml`, embedded, parsed once. Each check's id, CWE,
//! title, default severity, what it finds, why it matters, and its message and fix templates. The
//! patterns that raise them are [`crate::checks::code`]'s.
//!
//! The report prints `rules <hash>`, the first 12 hex digits of SHA-256 of the file's bytes
//! ([`rules_hash`]), so a report says which version of the checks read the code.

use std::sync::OnceLock;

use serde::Deserialize;

use super::{Rule, RuleType, Severity};

/// The checks' data file, `rules/code_checks.toml`, as embedded.
pub const RULES_TEXT: &str = include_str!("../../rules/code_checks.toml");

/// One code check, as `rules/code_checks.toml` declares it.
#[derive(Debug, Clone, Deserialize)]
pub struct CodeCheck {
    /// `CC001`.
    pub id: String,
    /// The CWE weaknesses it finds (`CWE-798`), for SARIF.
    #[serde(default)]
    pub(crate) cwe: Vec<String>,
    /// A short title (`Undeclared network call`).
    pub title: String,
    /// The default severity's word (`High`).
    pub severity: String,
    /// What it flags.
    pub finds: String,
    /// Why it matters.
    pub why: String,
    /// The message template (`{tool}`, `{callee}`, `{name}`, `{shown}`, `{length}`, `{key}`).
    pub message: String,
    /// The fix template (the same placeholders).
    pub fix: String,
}

impl CodeCheck {
    /// The default severity (High when the file's word is not one the crate knows).
    pub(crate) fn default_severity(&self) -> Severity {
        Severity::parse(&self.severity).unwrap_or(Severity::High)
    }

    /// The check as a [`Rule`], for what every finding reads of its rule (title, severity,
    /// whether it fails a gate: never, as code findings are evidence about the code, not a proof
    /// about the graph). What only a rule of the proof has is empty.
    fn as_rule(&self) -> Rule {
        Rule {
            id: self.id.clone(),
            title: self.title.trim().to_string(),
            rule_type: RuleType::Vulnerability,
            gate: false,
            stops: false,
            severity: self.default_severity(),
            owasp: Vec::new(),
            cwe: self.cwe.clone(),
            description: self.finds.trim().to_string(),
            message: self.message.trim().to_string(),
            fix: self.fix.trim().to_string(),
            fix_rulebook: None,
            fix_langgraph: None,
            fix_openai_agents: None,
            checked: true,
            proves: String::new(),
            does_not_prove: String::new(),
            nothing_to_read: None,
            always_shown: false,
            group: None,
        }
    }
}

#[derive(Deserialize)]
struct File {
    check: Vec<CodeCheck>,
}

/// Every code check, in `rules/code_checks.toml`'s order (CC001, CC002, CC003): `RuleId::CODE`'s.
///
/// The file is compiled in and held by this module's tests and `tests/it/python_tools.rs`, so a
/// file that does not parse cannot ship; should one, this panics saying so.
pub fn all() -> &'static [CodeCheck] {
    static ALL: OnceLock<Vec<CodeCheck>> = OnceLock::new();
    ALL.get_or_init(|| {
        toml::from_str::<File>(RULES_TEXT)
            .map(|f| f.check)
            .expect("rules/code_checks.toml parses (held by this module's tests)")
    })
}

/// The check with id `id`.
pub(crate) fn get(id: &str) -> Option<&'static CodeCheck> {
    all().iter().find(|c| c.id == id)
}

/// Every code check as a [`Rule`], in [`all`]'s order.
pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| all().iter().map(CodeCheck::as_rule).collect())
}

/// The first 12 hex digits of SHA-256 of `rules/code_checks.toml`'s bytes: the `rules <hash>` the
/// report prints.
pub fn rules_hash() -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(RULES_TEXT.as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleId;

    #[test]
    fn every_check_id_has_its_entry_at_its_index() {
        assert_eq!(RuleId::CODE.len(), all().len());
        for (k, id) in RuleId::CODE.iter().enumerate() {
            assert_eq!(*id as usize, RuleId::PROOF.len() + k);
            assert_eq!(all()[k].id, id.as_str());
            assert_eq!(id.rule().id, id.as_str());
            assert_eq!(RuleId::parse(id.as_str()), Some(*id));
            assert!(!id.rule().gate && !id.rule().stops);
            assert_eq!(get(id.as_str()).map(|c| c.id.as_str()), Some(id.as_str()));
        }
        assert!(RuleId::PROOF
            .iter()
            .all(|id| RuleId::parse(id.as_str()) == Some(*id) && id.rule().id == id.as_str()));
        assert_eq!(RuleId::parse("qg011"), None);
        assert_eq!(RuleId::CC002.to_string(), "CC002");
    }
}
