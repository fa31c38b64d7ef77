//! "Did you mean": which known name a misspelt one is near, in two strengths. [`nearest`] is
//! strict (a word of the catalogue or the export that is this near a known one is refused, and a
//! rulebook's unknown name is reported with it, QG010); [`closest`] is loose (a suggestion added to
//! an error or a lint that is raised anyway). The distances are `strsim`'s.

use std::collections::HashSet;

/// The candidate nearest `name` when it is a small edit away (optimal string alignment over
/// characters, so `tikcet` is one edit from `ticket`; at most a quarter of the name's length, at
/// least 1, at most 3 edits), the first of equals in candidate order; `name` itself is never its
/// own suggestion.
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
        let d = strsim::osa_distance(name, c);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The candidate closest to `name` when near enough to be a typo (Levenshtein over characters, at
/// most a third of its length, at least 2 edits), the first of equals; `name` itself is never its
/// own suggestion.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, _)| *d <= limit && *d > 0)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transposition_is_one_edit_for_the_strict_and_two_for_the_loose() {
        assert_eq!(strsim::osa_distance("close_tikcet", "close_ticket"), 1);
        assert_eq!(strsim::levenshtein("close_tikcet", "close_ticket"), 2);
        assert_eq!(strsim::osa_distance("abc", ""), 3);
        assert_eq!(
            nearest("close_tikcet", ["refund_card", "close_ticket"]),
            Some("close_ticket")
        );
        assert_eq!(nearest("refund", ["close_ticket"]), None);
        assert_eq!(nearest("ab", ["ab", "xy"]), None);
        assert_eq!(nearest("refnd", ["refund", "refunds"]), Some("refund"));
    }

    #[test]
    fn the_loose_suggests_further_than_the_strict() {
        // Two edits in a six-letter name: past the strict limit (1), within the loose one (2).
        assert_eq!(nearest("refxnx", ["refund"]), None);
        assert_eq!(closest("refxnx", ["refund"].into_iter()), Some("refund"));
        assert_eq!(closest("refund", ["refund"].into_iter()), None);
        assert_eq!(closest("abcdef", ["zzzzzz"].into_iter()), None);
        assert_eq!(
            closest("agnet", ["tools", "agent", "agents"].into_iter()),
            Some("agent")
        );
    }
}
