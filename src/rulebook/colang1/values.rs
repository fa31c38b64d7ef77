//! Values and inline parameters as NeMo reads them (`coyml_parser._to_value`,
//! `_extract_inline_params`, `utils.split_args`, and the `with`/`for` rewrites of
//! `colang_parser`): `name(a=1, $b)` and `name with $b` become a name and its arguments.

use std::collections::HashMap;

use serde_json::Value;

use super::text::{is_word, py_strip, word_split};

/// The marker NeMo gives a parameter written without a value (`x($b)`).
pub(super) const IS_NOT_NONE: &str = "<<IS NOT NONE>>";

/// Python's `ast.literal_eval` for the literals Colang files use: strings, numbers,
/// `True`/`False`/`None`, lists and tuples of those. Anything else is an error message.
pub(super) fn literal_eval(s: &str) -> Result<Value, String> {
    literal(s.trim_start_matches([' ', '\t']).trim_end(), 0)
}

fn literal(s: &str, depth: usize) -> Result<Value, String> {
    let bad =
        || format!("'{s}' is not a value (a string, a number, True, False, None or a $variable)");
    if depth > 16 {
        return Err(bad());
    }
    match s {
        "True" => return Ok(Value::Bool(true)),
        "False" => return Ok(Value::Bool(false)),
        "None" => return Ok(Value::Null),
        _ => {}
    }
    if let Some(v) = string_literal(s) {
        return Ok(Value::String(v));
    }
    let open_close = [('[', ']'), ('(', ')')];
    for (o, c) in open_close {
        if s.starts_with(o) && s.ends_with(c) && s.len() >= 2 {
            let inner = &s[1..s.len() - 1];
            let items = split_args(inner).map_err(|_| bad())?;
            let mut out = Vec::new();
            for (k, it) in items.iter().enumerate() {
                if it.is_empty() && k + 1 == items.len() {
                    continue;
                }
                out.push(literal(it, depth + 1)?);
            }
            return Ok(Value::Array(out));
        }
    }
    number(s).ok_or_else(bad)
}

fn number(s: &str) -> Option<Value> {
    let t: String = s.chars().filter(|&c| c != '_').collect();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, py_strip(b).to_string()),
        None => (false, t.trim_start_matches('+').to_string()),
    };
    if body.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if body.chars().all(|c| c.is_ascii_digit()) {
        if let Ok(v) = body.parse::<i64>() {
            return Some(Value::from(if neg { -v } else { v }));
        }
    }
    let f: f64 = body.parse().ok()?;
    if !f.is_finite() || body.contains(|c: char| c.is_alphabetic() && c != 'e' && c != 'E') {
        return None;
    }
    serde_json::Number::from_f64(if neg { -f } else { f }).map(Value::Number)
}

/// A Python string literal `'..'` or `".."` (simple escapes), unquoted.
fn string_literal(s: &str) -> Option<String> {
    let q = s.chars().next()?;
    if (q != '\'' && q != '"') || s.chars().count() < 2 || !s.ends_with(q) {
        return None;
    }
    let inner: Vec<char> = s.chars().skip(1).collect();
    let inner = &inner[..inner.len() - 1];
    let mut out = String::new();
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        if c == q {
            return None;
        }
        if c == '\\' {
            let n = *inner.get(i + 1)?;
            match n {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '\'' | '"' => out.push(n),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Some(out)
}

/// Python's `str()` of a value, for a value used as a key.
pub(super) fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::Number(n) => {
            if n.is_f64() {
                let f = n.as_f64().unwrap_or(0.0);
                if f.fract() == 0.0 && f.abs() < 1e16 {
                    format!("{f:.1}")
                } else {
                    format!("{f}")
                }
            } else {
                n.to_string()
            }
        }
        other => other.to_string(),
    }
}

/// NeMo's `_to_value`: a `$variable` stays as written, anything else is a Python literal.
pub(super) fn to_value(s: &str) -> Result<Value, String> {
    let mut it = s.chars();
    if it.next() == Some('$')
        && it
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    {
        return Ok(Value::String(s.to_string()));
    }
    literal_eval(s)
}

/// NeMo's `split_args`: split on commas outside brackets and quotes, parts stripped.
pub(super) fn split_args(args: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut stack: Vec<char> = Vec::new();
    let mut cur = String::new();
    for c in args.chars() {
        if "([{".contains(c) || (c == '"' || c == '\'') && stack.last() != Some(&c) {
            stack.push(c);
            cur.push(c);
        } else if ")]}\"'".contains(c) {
            let want = match stack.last() {
                Some('[') => ']',
                Some('(') => ')',
                Some('{') => '}',
                Some(&q) => q,
                None => return Err(format!("unbalanced '{c}' in '{args}'")),
            };
            if c != want {
                return Err(format!("expected '{want}' and got '{c}' in '{args}'"));
            }
            stack.pop();
            cur.push(c);
        } else if c == ',' && stack.is_empty() {
            parts.push(py_strip(&cur).to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    parts.push(py_strip(&cur).to_string());
    Ok(parts)
}

/// One inline parameter's value: given (`a=1`), or a bare name (`$b`), which NeMo marks
/// [`IS_NOT_NONE`] and keys by the name's own value.
#[derive(Debug, Clone)]
pub(super) enum Param {
    /// `name=value`: the value, read by [`to_value`].
    Given(Value),
    /// A bare `$b` or literal: the name's value (NeMo keys it by its `str()`).
    Bare(Value),
}

/// NeMo's `_extract_inline_params`: `name(a=1, $b)` → (`name`, params in order).
pub(super) fn inline_params(value: &str) -> Result<(String, Vec<(String, Param)>), String> {
    let Some((name, rest)) = value.split_once('(') else {
        return Ok((value.to_string(), Vec::new()));
    };
    let name = py_strip(name).to_string();
    let rest = py_strip(rest);
    let Some(inner) = rest.strip_suffix(')') else {
        return Err(format!("the arguments of '{name}' do not end with ')'"));
    };
    let mut params: Dict<Param> = Dict::default();
    for pair in split_args(inner)? {
        if pair.is_empty() {
            continue;
        }
        let parts = word_split(&pair, "=");
        if parts.len() > 1 {
            if parts.len() != 2 {
                return Err(format!("'{pair}' is not an argument (name=value)"));
            }
            params.set(parts[0].clone(), Param::Given(to_value(&parts[1])?));
        } else {
            let key = to_value(&pair)?;
            params.set(py_str(&key), Param::Bare(key));
        }
    }
    Ok((name, params.into_vec()))
}

/// Pairs in insertion order with a Python dict's `d[k] = v` ([`Dict::set`]): a repeated key
/// keeps its first place and takes the last value, found by a hash rather than a scan.
#[derive(Debug, Clone)]
pub(super) struct Dict<T> {
    pairs: Vec<(String, T)>,
    index: HashMap<String, usize>,
}

impl<T> Default for Dict<T> {
    fn default() -> Dict<T> {
        Dict {
            pairs: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T> Dict<T> {
    /// Insert or overwrite, keeping the first position.
    pub(super) fn set(&mut self, k: String, v: T) {
        match self.index.get(&k) {
            Some(&i) => self.pairs[i].1 = v,
            None => {
                self.index.insert(k.clone(), self.pairs.len());
                self.pairs.push((k, v));
            }
        }
    }

    /// The pairs in order.
    pub(super) fn into_vec(self) -> Vec<(String, T)> {
        self.pairs
    }
}

/// NeMo's `with`/`for` rewrite: `x with $a, b=1` → `x($a, b=1)` (the first ` with $..`/` for $..`
/// wins, else the first ` with name=..`).
pub(super) fn with_params(value: &str) -> String {
    if let Some((name, vars)) = first_with(value, |rest| {
        rest.starts_with('$') && rest.chars().count() > 1
    }) {
        return format!("{name}({vars})");
    }
    if let Some((name, vars)) = first_with(value, starts_with_assignment) {
        return format!("{name}({vars})");
    }
    value.to_string()
}

/// The earliest ` with `/` for ` whose rest satisfies `ok`.
fn first_with(value: &str, ok: impl Fn(&str) -> bool) -> Option<(String, String)> {
    let mut best: Option<usize> = None;
    for kw in [" with ", " for "] {
        let mut from = 0;
        while let Some(p) = value[from..].find(kw) {
            let at = from + p;
            let rest = &value[at + kw.len()..];
            if ok(rest) && !rest.contains('\n') {
                best = Some(best.map_or(at, |b: usize| b.min(at)));
                break;
            }
            from = at + 1;
        }
    }
    let at = best?;
    let kw_len = if value[at..].starts_with(" with ") {
        6
    } else {
        5
    };
    Some((value[..at].to_string(), value[at + kw_len..].to_string()))
}

/// `\w+\s*=\s*.+`
fn starts_with_assignment(rest: &str) -> bool {
    let n = rest.chars().take_while(|&c| is_word(c)).count();
    if n == 0 {
        return false;
    }
    let r: String = rest.chars().skip(n).collect();
    let r = r.trim_start();
    match r.strip_prefix('=') {
        Some(v) => !v.is_empty(),
        None => false,
    }
}
