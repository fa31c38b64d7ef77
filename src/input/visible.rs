//! Text an input wrote, made safe to print (issue 14): control characters, line and paragraph
//! separators and bidirectional overrides become visible escapes (`\u{1b}`, `\r`, `\u{2028}`), so
//! a crafted name cannot clear a terminal, forge a line of a CI log (`Gate: passed`), hide text
//! or open a hyperlink (OSC 8). Every output and every error that shows text from an input passes
//! it through [`visible`]; the text report and the GitHub annotations keep their own line breaks
//! and escape everything else with [`escape_char`].

use std::borrow::Cow;

/// True for a character that must not reach a terminal or a log as it is: a control character
/// (C0, DEL, C1: ESC, NUL, CR, NEL...), U+2028/U+2029 (line and paragraph separators), or an
/// invisible character ([`is_invisible`]: the bidirectional controls, zero-width characters, the
/// byte-order mark and every other format character).
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_invisible(c)
}

/// True for a character that shows nothing, or changes how the text around it shows, so two names
/// that differ by it look the same (issue 26): Unicode's format characters (general category Cf:
/// U+00AD soft hyphen, U+200B-U+200F zero-width characters and marks, U+202A-U+202E and
/// U+2066-U+2069 bidirectional controls, U+2060-U+2064, U+180E, U+FEFF, the tag characters...),
/// and the invisible characters outside Cf: U+034F (combining grapheme joiner), the Hangul fillers
/// (U+115F, U+1160, U+3164, U+FFA0) and U+17B4/U+17B5.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        // General category Cf (Unicode 15.1).
        '\u{00ad}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061c}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
            // Invisible, though not Cf.
            | '\u{034f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{3164}'
            | '\u{ffa0}'
    )
}

/// The first unsafe character of `s` ([`is_unsafe`]), as a refusal names it: `U+200B`.
pub(crate) fn first_unsafe(s: &str) -> Option<String> {
    s.chars()
        .find(|&c| is_unsafe(c))
        .map(|c| format!("U+{:04X}", c as u32))
}

/// The visible escape of an unsafe character (`\r`, `\t`, `\n`, `\0`, else `\u{hex}`); `None` for
/// a safe one.
pub(crate) fn escape_char(c: char) -> Option<String> {
    if !is_unsafe(c) {
        return None;
    }
    Some(match c {
        '\r' => "\\r".to_string(),
        '\n' => "\\n".to_string(),
        '\t' => "\\t".to_string(),
        '\0' => "\\0".to_string(),
        c => format!("\\u{{{:x}}}", c as u32),
    })
}

/// Appends `c` to `out`, escaped when it is unsafe ([`escape_char`]).
pub(crate) fn push_escaped(out: &mut String, c: char) {
    match escape_char(c) {
        Some(e) => out.push_str(&e),
        None => out.push(c),
    }
}

/// `s` with every unsafe character ([`is_unsafe`]) escaped; borrowed when nothing needed it.
pub(crate) fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// `s` with its own line breaks kept and every other unsafe character escaped: for multi-line
/// text the verifier itself composed around input text (a message with a list, a help line).
pub(crate) fn visible_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\n' {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// A whole report made safe to print: its own line breaks kept and, with colour on, its own SGR
/// colour codes (`ESC [ digits;... m`); tabs become four spaces; every other unsafe character an
/// input smuggled into a name or a warning is escaped, so a crafted export cannot hide lines or
/// forge a `Gate: passed` in a terminal or a CI log.
pub(crate) fn neutralise(text: &str, color: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push(c),
            // Our own SGR colour codes: ESC [ digits/semicolons m.
            '\u{1b}' if color && chars.peek() == Some(&'[') => {
                let seq: String = chars.clone().take_while(|&x| x != 'm').collect();
                if seq.len() < 16 && seq[1..].chars().all(|x| x.is_ascii_digit() || x == ';') {
                    out.push(c);
                } else {
                    out.push_str("\\u{1b}");
                }
            }
            '\t' => out.push_str("    "),
            c => push_escaped(&mut out, c),
        }
    }
    out
}

/// Pretty-printed JSON of `v`, ending with a newline, with every unsafe character ([`is_unsafe`])
/// inside a string written as a `\uXXXX` escape: the same JSON value, safe to print to a terminal
/// (serde_json already escapes C0 controls; DEL, C1, U+2028/9 and bidi overrides it leaves raw).
pub(crate) fn json_pretty<T: serde::Serialize>(v: &T) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".to_string());
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if c != '\n' && is_unsafe(c) {
            // One escape for each UTF-16 unit (a tag character takes two).
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        } else {
            out.push(c);
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_act_on() {
        assert_eq!(visible("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(visible("a\0b\r\n"), "a\\0b\\r\\n");
        assert_eq!(
            visible("x\u{2028}y\u{202e}z\u{85}"),
            "x\\u{2028}y\\u{202e}z\\u{85}"
        );
        assert_eq!(
            visible("\u{1b}]8;;https://evil.invalid\u{7}link\u{1b}]8;;\u{7}"),
            "\\u{1b}]8;;https://evil.invalid\\u{7}link\\u{1b}]8;;\\u{7}"
        );
        assert!(matches!(visible("plain ünïcode"), Cow::Borrowed(_)));
        // Invisible characters (issue 26): each shown by its code point.
        assert_eq!(
            visible("a\u{200b}b\u{ad}c\u{34f}d\u{2060}e\u{180e}f\u{e0041}"),
            "a\\u{200b}b\\u{ad}c\\u{34f}d\\u{2060}e\\u{180e}f\\u{e0041}"
        );
        assert_eq!(first_unsafe("ok\u{200d}x").as_deref(), Some("U+200D"));
        let j = json_pretty(&serde_json::json!("\u{e0041}"));
        assert_eq!(j, "\"\\udb40\\udc41\"\n");
        assert_eq!(
            serde_json::from_str::<String>(&j).expect("JSON"),
            "\u{e0041}"
        );
        assert_eq!(visible_lines("a\nb\u{1b}c"), "a\nb\\u{1b}c");
        let j = json_pretty(&serde_json::json!({"k": "a\u{1b}\u{9b}\u{2028}\u{202e}b"}));
        assert_eq!(j, "{\n  \"k\": \"a\\u001b\\u009b\\u2028\\u202eb\"\n}\n");
        let back: serde_json::Value = serde_json::from_str(&j).expect("still JSON");
        assert_eq!(back["k"], "a\u{1b}\u{9b}\u{2028}\u{202e}b");
    }
}
