//! What NeMo Guardrails itself provides that a rulebook may name without defining it (QG010,
//! issue 20): its registered actions, the UMIM actions a 2.x flow sends to the interaction
//! system, and the flows of its own Colang library (`rules/nemo_library.toml`, written by
//! `rules/gen_nemo_library.py` from NeMo's runtime and the corpus's library files).
//!
//! Also the two name questions QG010 asks: which spelling of an action NeMo's dispatcher looks
//! up ([`action_key`]) and which known name is near a misspelt one ([`nearest`]).

use std::collections::HashSet;
use std::sync::OnceLock;

use super::flows::Version;

/// The list, as shipped in `rules/nemo_library.toml`.
pub(crate) const BUILT_IN: &str = include_str!("../../rules/nemo_library.toml");

/// NeMo Guardrails' own names (see the module documentation).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Library {
    /// The `nemoguardrails` version the lists were taken from.
    pub(crate) version: String,
    /// Actions NeMo's runtime registers itself, as registered (`self_check_input`,
    /// `GenerateUserIntentAction`, `wolfram alpha request`).
    pub(crate) actions: Vec<String>,
    /// UMIM actions (`UtteranceBotAction`): a 2.x flow's `await` sends them out as events.
    pub(crate) umim_actions: Vec<String>,
    /// Flows of NeMo's Colang 1.0 library (`self check input`, `generate user intent`).
    pub(crate) flows_1: Vec<String>,
    /// Flows of NeMo's Colang 2.x library and standard library (`bot say`, `user said`).
    pub(crate) flows_2: Vec<String>,
}

/// The built-in list, parsed once. It is checked by a unit test, so a broken file fails the
/// build's tests rather than a run; were it unreadable anyway, the list is empty.
pub(crate) fn library() -> &'static Library {
    static LIB: OnceLock<Library> = OnceLock::new();
    LIB.get_or_init(|| toml::from_str(BUILT_IN).unwrap_or_default())
}

/// The name NeMo's action dispatcher looks `name` up by when it is not registered as written:
/// `Action` dropped and CamelCase made snake_case (`SelfCheckInputAction` → `self_check_input`),
/// as `ActionDispatcher._normalize_action_name` does.
pub(crate) fn action_key(name: &str) -> String {
    let base = name.strip_suffix("Action").unwrap_or(name);
    let mut snake = String::with_capacity(base.len() + 4);
    for (k, ch) in base.chars().enumerate() {
        if ch.is_uppercase() {
            if k > 0 {
                snake.push('_');
            }
            snake.extend(ch.to_lowercase());
        } else {
            snake.push(ch);
        }
    }
    snake
}

/// True when NeMo Guardrails provides the action `name` itself (registered, or a UMIM action).
pub(crate) fn is_action(name: &str) -> bool {
    let lib = library();
    let key = action_key(name);
    lib.umim_actions.iter().any(|a| a == name)
        || lib
            .actions
            .iter()
            .any(|a| a == name || action_key(a) == key)
}

/// The flows NeMo's library defines for Colang `version`.
pub(crate) fn flows(version: Version) -> &'static [String] {
    let lib = library();
    match version {
        Version::V1 => &lib.flows_1,
        Version::V2 => &lib.flows_2,
    }
}

/// Optimal string alignment distance (Levenshtein with adjacent transpositions counted as one
/// edit: `tikcet` is one edit from `ticket`), over characters.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The candidate nearest `name` when it is a small edit away (at most a quarter of the name's
/// length, at least 1, at most 3 edits), the first of equals in candidate order; `name` itself
/// is never its own suggestion.
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 4).clamp(1, 3);
    let mut seen = HashSet::new();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || !seen.insert(c) {
            continue;
        }
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_reads_and_holds_nemos_names() {
        let lib: Library = toml::from_str(BUILT_IN).expect("rules/nemo_library.toml reads");
        assert!(lib.actions.iter().any(|a| a == "self_check_input"));
        assert!(lib.umim_actions.iter().any(|a| a == "UtteranceBotAction"));
        assert!(lib.flows_1.iter().any(|f| f == "self check input"));
        assert!(lib.flows_2.iter().any(|f| f == "bot say"));
        assert!(is_action("SelfCheckInputAction"));
        assert!(is_action("wolfram alpha request"));
        assert!(!is_action("close_ticket"));
    }

    #[test]
    fn names_near_a_typo() {
        assert_eq!(distance("close_tikcet", "close_ticket"), 1);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(
            nearest("close_tikcet", ["refund_card", "close_ticket"]),
            Some("close_ticket")
        );
        assert_eq!(nearest("refund", ["close_ticket"]), None);
        assert_eq!(nearest("ab", ["ab", "xy"]), None);
        assert_eq!(action_key("CloseTicketAction"), "close_ticket");
    }
}
