//! The database of rails with published advisories that QG022 reads (`rules/advisories.toml`,
//! built into the binary; `--advisories FILE` adds a team's own list in the same format).

use std::path::Path;

/// The built-in list, as shipped in `rules/advisories.toml`.
pub(crate) const BUILT_IN: &str = include_str!("../../rules/advisories.toml");

/// One published advisory about a rail.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Advisory {
    /// Its identifier (`GHSA-…`, `CVE-…`, `PYSEC-…`).
    pub(crate) id: String,
    /// Other identifiers of the same advisory.
    #[serde(default)]
    pub(crate) aliases: Vec<String>,
    /// Where it is published.
    pub(crate) url: String,
    /// The package it concerns.
    #[serde(default)]
    pub(crate) package: Option<String>,
    /// The versions affected, as the advisory says.
    #[serde(default)]
    pub(crate) affected: Option<String>,
    /// The version that fixes it.
    #[serde(default)]
    pub(crate) fixed: Option<String>,
    /// Colang flow names of the rails it concerns.
    #[serde(default)]
    pub(crate) rails: Vec<String>,
    /// Actions those rails execute, when the advisory is about the action.
    #[serde(default)]
    pub(crate) actions: Vec<String>,
    /// One sentence.
    pub(crate) summary: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    advisory: Vec<Advisory>,
}

/// Reads a list from TOML text. Errors: the TOML parser's message (with its line).
pub(crate) fn parse(text: &str) -> Result<Vec<Advisory>, String> {
    toml::from_str::<File>(text)
        .map(|f| f.advisory)
        .map_err(|e| e.to_string())
}

/// The built-in list and, when given, the list at `extra`. Errors: `extra` unreadable or not of
/// this format, naming the file.
pub(crate) fn load(extra: Option<&Path>) -> Result<Vec<Advisory>, String> {
    let mut all = parse(BUILT_IN).map_err(|e| format!("rules/advisories.toml: {e}"))?;
    if let Some(p) = extra {
        let text =
            crate::input::files::read_text(p).map_err(|e| format!("{}: {e}", p.display()))?;
        all.extend(parse(&text).map_err(|e| format!("{}: {e}", p.display()))?);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_reads() {
        // Empty today: no advisory about a NeMo Guardrails rail has been published (see the file).
        assert_eq!(
            parse(BUILT_IN).expect("the built-in list reads"),
            Vec::new()
        );
        let one = parse(
            "[[advisory]]\nid = \"TEST-1\"\nurl = \"https://example.invalid\"\nrails = [\"self check input\"]\nsummary = \"s\"\n",
        )
        .expect("one advisory");
        assert_eq!(one[0].rails, vec!["self check input".to_string()]);
        assert!(parse("[[advisory]]\nid = 1\n").is_err());
    }
}
