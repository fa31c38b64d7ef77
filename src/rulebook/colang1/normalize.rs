//! The rewrites NeMo applies to each line before reading it (`ColangParser._normalize_line_text`):
//! `execute x` → `run x`, `$x = execute y` → `run $x = y`, `$x = e` → `set $x = e`,
//! `create event E` → `infer event E`, `priority 2` → `meta {"priority": 2}`, `when X` →
//! `when event X`, and so on, in NeMo's order. Hand-written matchers stand for NeMo's regexes.

use super::text::{is_py_space, is_word, py_strip, split_max, word_split};

/// NeMo's `extract_main_token`: the first word; `else X` and `go X` keep their second word.
pub(super) fn main_token(text: &str) -> String {
    let first = text.split(' ').next().unwrap_or("");
    if first == "else" && py_strip(text) != "else" {
        let second = split_max(text, " ", 1)
            .get(1)
            .map(|r| py_strip(r).split(' ').next().unwrap_or("").to_string())
            .unwrap_or_default();
        return format!("else {second}");
    }
    if first == "go" {
        if let Some(r) = split_max(text, " ", 1).get(1) {
            return format!("go {}", py_strip(r).split(' ').next().unwrap_or(""));
        }
    }
    first.to_string()
}

/// NeMo's `remove_token`: the text after its first word, stripped.
pub(super) fn remove_token(text: &str) -> String {
    let t = py_strip(text);
    match t.split_once(' ') {
        Some((_, r)) => py_strip(r).to_string(),
        None => String::new(),
    }
}

/// `$` followed by `[\w.]+` at the start: the length in bytes of the whole `$name`.
fn var_len(t: &str) -> Option<usize> {
    let rest = t.strip_prefix('$')?;
    let n: usize = rest
        .chars()
        .take_while(|&c| is_word(c) || c == '.')
        .map(char::len_utf8)
        .sum();
    (n > 0).then_some(1 + n)
}

fn boundary_after(t: &str, at: usize) -> bool {
    // `\b` after a word character: the next character is not a word character.
    !t[at..].chars().next().is_some_and(is_word)
}

/// `^(user|bot) says\b` and `^(user|bot) something( else)?\b` after `prefix`.
fn says_something(t: &str, prefix: &str) -> Option<String> {
    let rest = t.strip_prefix(prefix)?;
    for who in ["user", "bot"] {
        let Some(r) = rest.strip_prefix(who) else {
            continue;
        };
        if let Some(r2) = r.strip_prefix(" says") {
            if boundary_after(r2, 0) {
                return Some(format!("{prefix}{who}{r2}"));
            }
        }
        if let Some(r2) = r.strip_prefix(" something") {
            if let Some(r3) = r2.strip_prefix(" else") {
                if boundary_after(r3, 0) {
                    return Some(format!("{prefix}{who} *{r3}"));
                }
            }
            if boundary_after(r2, 0) {
                return Some(format!("{prefix}{who} *{r2}"));
            }
        }
    }
    None
}

/// `^((?:else )?(?:when )?(?:user|bot)\s+[^"]*\s+)something(?: else)?\b` → `\1...`.
fn inner_something(t: &str) -> Option<String> {
    let mut k = 0;
    if t[k..].starts_with("else ") {
        k += 5;
    }
    if t[k..].starts_with("when ") {
        k += 5;
    }
    if t[k..].starts_with("user") {
        k += 4;
    } else if t[k..].starts_with("bot") {
        k += 3;
    } else {
        return None;
    }
    if !t[k..].starts_with(is_py_space) {
        return None;
    }
    let quote = t[k..].find('"').map_or(t.len(), |q| k + q);
    let mut best = None;
    for (j, _) in t.match_indices("something") {
        if j >= quote || j < k + 2 {
            continue;
        }
        let before = t[..j].chars().next_back();
        if !before.is_some_and(is_py_space) {
            continue;
        }
        let after = j + "something".len();
        let end = if t[after..].starts_with(" else") && boundary_after(t, after + 5) {
            Some(after + 5)
        } else if boundary_after(t, after) {
            Some(after)
        } else {
            None
        };
        if let Some(e) = end {
            best = Some((j, e));
        }
    }
    let (j, e) = best?;
    Some(format!("{}...{}", &t[..j], &t[e..]))
}

/// `^set ([^$]+) label (?:to )?(\$.*)` → `label \1 \2`.
fn set_label(t: &str) -> Option<String> {
    let rest = t.strip_prefix("set ")?;
    let dollar = rest.find('$').unwrap_or(rest.len());
    let mut best = None;
    for (p, _) in rest.match_indices(" label ") {
        if p == 0 || p > dollar {
            continue;
        }
        let after = &rest[p + 7..];
        let value = if after.starts_with("to $") {
            Some(&after[3..])
        } else if after.starts_with('$') {
            Some(after)
        } else {
            None
        };
        if let Some(v) = value {
            best = Some(format!("label {} {}", &rest[..p], v));
        }
    }
    best
}

/// NeMo's colang-mode rewrites, in order. `anonymous` names an anonymous `define flow`.
pub(super) fn colang(text: &str, anonymous: &dyn Fn() -> String) -> String {
    let mut t = word_split(text, " ").join(" ");
    let mut named = false;
    let mut check = |t: &mut String| {
        if !named && py_strip(t) == "define flow" {
            named = true;
            t.push_str(" anonymous-");
            t.push_str(&anonymous());
        }
    };
    // 1. a trailing ':'
    if t.ends_with(':') {
        t.pop();
    }
    check(&mut t);
    // 2. infer X → infer event X
    if let Some(r) = t.strip_prefix("infer ") {
        if !["user ", "bot ", "event "].iter().any(|p| r.starts_with(p)) {
            t = format!("infer event {r}");
        }
    }
    check(&mut t);
    // 3, 4. (else) when X → (else) when event X
    for kw in ["when ", "else when "] {
        if let Some(r) = t.strip_prefix(kw) {
            if !["user ", "bot ", "event ", "flow ", "no ", "any"]
                .iter()
                .any(|p| r.starts_with(p))
            {
                t = format!("{kw}event {r}");
            }
        }
        check(&mut t);
    }
    // 5. def → define
    if let Some(r) = t.strip_prefix("def ") {
        t = format!("define {r}");
    }
    check(&mut t);
    // 6-11. user/bot says, user/bot something
    for prefix in ["", "when ", "else when "] {
        if let Some(n) = says_something(&t, prefix) {
            t = n;
        }
        check(&mut t);
    }
    // 12. another "something" → "..."
    if let Some(n) = inner_something(&t) {
        t = n;
    }
    check(&mut t);
    // 13, 14. execute/exec → run
    for kw in ["execute ", "exec "] {
        if let Some(r) = t.strip_prefix(kw) {
            t = format!("run {r}");
        }
        check(&mut t);
    }
    // 15. set X label to $v → label X $v
    if let Some(n) = set_label(&t) {
        t = n;
    }
    check(&mut t);
    // 16, 17. $x = run y → run $x = y; $x = e → set $x = e
    if let Some(n) = var_len(&t) {
        if let Some(r) = t[n..].strip_prefix(" = ") {
            let var = &t[..n];
            if let Some(kw) = ["run ", "execute ", "exec "]
                .iter()
                .find(|k| r.starts_with(**k))
            {
                t = format!("run {var} = {}", &r[kw.len()..]);
            } else {
                t = format!("set {var} = {r}");
            }
        }
    }
    check(&mut t);
    // 18. priority N → meta {"priority": N}
    if let Some(r) = t.trim_start().strip_prefix("priority") {
        let v = py_strip(r);
        if !v.is_empty() && v.chars().all(|c| c == '.' || c.is_numeric()) {
            t = format!("meta {{\"priority\": {v}}}");
        }
    }
    check(&mut t);
    // 19, 20. $x += e → set $x = $x + e
    if let Some(n) = var_len(&t) {
        let var = t[..n].to_string();
        let r = t[n..].trim_start_matches(is_py_space);
        for op in ["+", "-"] {
            if let Some(rest) = r.strip_prefix(&format!("{op}=")) {
                t = format!("set {var} = {var} {op}{rest}");
                break;
            }
        }
    }
    check(&mut t);
    // 21, 22. new/create → infer
    for kw in ["new", "create"] {
        if let Some(r) = t.strip_prefix(kw) {
            if r.is_empty() || r.starts_with(' ') {
                t = format!("infer{r}");
            }
        }
        check(&mut t);
    }
    t
}

/// NeMo's markdown-mode rewrites (inside `define user|bot`).
pub(super) fn markdown(text: &str) -> String {
    let mut t = text.to_string();
    let mut k = 0;
    for p in ["in ", "the "] {
        if t[k..].starts_with(p) {
            k += p.len();
        }
    }
    if t[k..].starts_with("context") {
        let mut r = &t[k + 7..];
        if let Some(x) = r.strip_prefix(" of") {
            r = x;
        }
        t = format!("context{r}");
    }
    for (pat, rep) in [
        ("expecting user ", "expecting(\"{}\")"),
        ("context user ", "context expecting(\"{}\")"),
    ] {
        if let Some(p) = t.find(pat) {
            let rest = &t[p + pat.len()..];
            t = format!("{}{}", &t[..p], rep.replace("{}", rest));
        }
    }
    t
}
