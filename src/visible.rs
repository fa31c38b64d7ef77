//! Text an input wrote, made safe to print (issue 14): control characters, line and paragraph
//! separators and bidirectional overrides become visible escapes (`\u{1b}`, `\r`, `\u{2028}`), so
//! a crafted name cannot clear a terminal, forge a line of a CI log (`Gate: passed`), hide text
//! or open a hyperlink (OSC 8). Every output and every error that shows text from an input passes
//! it through [`visible`]; the text report and the GitHub annotations keep their own line breaks
//! and escape everything else with [`escape_char`].

use std::borrow::Cow;

/// True for a character that must not reach a terminal or a log as it is: a control character
/// (C0, DEL, C1: ESC, NUL, CR, NEL...), U+2028/U+2029 (line and paragraph separators), a
/// bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
/// U+061C), or the byte-order mark (U+FEFF).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{061c}'
                | '\u{feff}'
        )
}

/// The visible escape of an unsafe character (`\r`, `\t`, `\n`, `\0`, else `\u{hex}`); `None` for
/// a safe one.
pub fn escape_char(c: char) -> Option<String> {
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
pub fn push_escaped(out: &mut String, c: char) {
    match escape_char(c) {
        Some(e) => out.push_str(&e),
        None => out.push(c),
    }
}

/// `s` with every unsafe character ([`is_unsafe`]) escaped; borrowed when nothing needed it.
pub fn visible(s: &str) -> Cow<'_, str> {
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
pub fn visible_lines(s: &str) -> Cow<'_, str> {
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
pub fn neutralise(text: &str, color: bool) -> String {
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
pub fn json_pretty<T: serde::Serialize>(v: &T) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".to_string());
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if c != '\n' && is_unsafe(c) {
            // Every unsafe character is in the Basic Multilingual Plane: one escape each.
            out.push_str(&format!("\\u{:04x}", c as u32));
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
        assert_eq!(visible_lines("a\nb\u{1b}c"), "a\nb\\u{1b}c");
        let j = json_pretty(&serde_json::json!({"k": "a\u{1b}\u{9b}\u{2028}\u{202e}b"}));
        assert_eq!(j, "{\n  \"k\": \"a\\u001b\\u009b\\u2028\\u202eb\"\n}\n");
        let back: serde_json::Value = serde_json::from_str(&j).expect("still JSON");
        assert_eq!(back["k"], "a\u{1b}\u{9b}\u{2028}\u{202e}b");
    }
}
