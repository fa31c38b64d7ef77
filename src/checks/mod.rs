//! Checks: turn the model's structure and the engines' verdicts into findings. (In progress.)

/// Rules this version checks. A meta-test holds `rules/` to this list: a rule file marked
/// `status = "checked"` must be here and every rule here must be so marked.
pub const CHECKED_RULES: &[&str] = &[
    "QG001", "QG003", "QG006", "QG011", "QG012", "QG013", "QG014", "QG015", "QG023", "QG105",
];
