//! What NeMo Guardrails itself provides that a rulebook may name without defining it (QG010,
//! issue 20): its registered actions, the UMIM actions a 2.x flow sends to the interaction
//! system, and the flows of its own Colang library (`rules/nemo_library.toml`, written by
//! `rules/gen_nemo_library.py` from NeMo's runtime and the corpus's library files).
//!
//! Also the two name questions QG010 asks: which spelling of an action NeMo's dispatcher looks
//! up ([`action_key`]) and which known name is near a misspelt one
//! ([`crate::input::suggest::nearest`]).

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
    fn the_dispatchers_key_of_an_action() {
        assert_eq!(action_key("CloseTicketAction"), "close_ticket");
    }
}
