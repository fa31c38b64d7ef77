//! `bot X`, `bot "text"`, `bot X "text"` (which also defines X), `bot inform with $value`
//! (NeMo's `_parse_bot`, its regexes matched by hand here).

use serde_json::{Map, Value};

use super::build::{Item, Raw, RawKind};
use super::markdown::Symbol;
use super::normalize::remove_token;
use super::parser::Parser;
use super::text::{is_py_space, is_word, py_strip, word_split, Line};
use super::{ElementKind, SyntaxError};

impl Parser {
    /// `bot ...`.
    pub(super) fn bot(&mut self) -> Result<(), SyntaxError> {
        if py_strip(&self.text) == "bot" {
            return Err(self.error(
                "a 'bot' with its message on the indented lines is not supported by this reader"
                    .into(),
                "name the message on the same line: `bot <message>`",
            ));
        }
        let mut text = remove_token(py_strip(&self.text));
        if text.starts_with('{') {
            return Err(self.error(
                "a 'bot' with a literal dict is not supported by this reader".into(),
                "name the message: `bot <message>`",
            ));
        }
        let mut params: Map<String, Value> = Map::new();
        let chars: Vec<char> = text.chars().collect();
        if let Some(s) = params_at_end(&chars) {
            let params_str: String = chars[s..].iter().collect();
            text = py_strip(&chars[..s].iter().collect::<String>()).to_string();
            let list = params_str.split_once(' ').map_or("", |(_, r)| py_strip(r));
            for (idx, part) in word_split(list, ",").iter().enumerate() {
                let kvs = param_values(part);
                if kvs.is_empty() {
                    let k = if part.starts_with('$') && !part.contains('.') {
                        part[1..].to_string()
                    } else {
                        format!("${idx}")
                    };
                    params.insert(k, Value::String(part.clone()));
                } else {
                    for (k, v) in kvs {
                        params.insert(k, Value::String(v));
                    }
                }
            }
        }
        let quoted = quoted_spans(&text);
        if quoted.len() > 1 {
            return Err(self.error(
                format!(
                    "Expected only 1 parameter assignment, got {}.",
                    quoted.len()
                ),
                "give the bot one inline text: `bot \"text\"`",
            ));
        }
        let utterance = quoted.into_iter().next();
        if let Some(u) = &utterance {
            text = py_strip(&text.replace(u.as_str(), "")).to_string();
        }
        let id = (!text.is_empty()).then_some(text);
        let initial = self.idx;
        let indented = self.indented_lines();
        let i = indented
            .iter()
            .position(|l| {
                let t = py_strip(&l.text);
                t.split(' ').next() == Some("if") || t.starts_with('"')
            })
            .unwrap_or(indented.len());
        for (k, v) in self.params(&indented[..i])? {
            params.insert(k, v);
        }
        if let Some(id) = &id {
            if utterance.is_some() || i < indented.len() {
                if self.test_or_sample_flow() {
                    self.idx = initial + indented.len();
                } else {
                    self.idx = initial + i;
                    if let Some(u) = &utterance {
                        let ind = indented.get(i).map_or(self.cur_ind + 2, |l| l.indentation);
                        self.lines.insert(
                            self.idx + 1,
                            Line {
                                text: u.clone(),
                                number: self.cur.number,
                                indentation: ind,
                                column: self.cur.column,
                            },
                        );
                    }
                    let at = (self.cur.number, self.cur.column);
                    self.markdown(Symbol::Utterance, id.clone(), at)?;
                    self.idx = self.idx.saturating_sub(1);
                }
            }
        }
        let kind = match (id, utterance) {
            (Some(name), _) => ElementKind::Bot {
                name: Some(name),
                text: None,
                params,
            },
            (None, Some(u)) => {
                let n = u.chars().count();
                ElementKind::Bot {
                    name: None,
                    text: Some(u.chars().skip(1).take(n.saturating_sub(2)).collect()),
                    params,
                }
            }
            (None, None) => {
                return Err(self.error(
                    "'bot' names no message".into(),
                    "write `bot <message>` or `bot \"text\"`",
                ))
            }
        };
        self.add(RawKind::Leaf(kind))
    }

    /// NeMo's `_is_test_flow`/`_is_sample_flow`: the open list starts with a meta saying so.
    fn test_or_sample_flow(&self) -> bool {
        let Some(b) = self.branches.last() else {
            return false;
        };
        match self.arena.lists.get(b.list).and_then(|l| l.first()) {
            Some(Item::El(Raw {
                kind: RawKind::Leaf(ElementKind::Meta { meta }),
                ..
            })) => {
                meta.get("is_test") == Some(&Value::Bool(true))
                    || meta.get("is_sample") == Some(&Value::Bool(true))
            }
            _ => false,
        }
    }
}

/// The `"..."` spans of a text (`"[^"]*"`), quotes included.
fn quoted_spans(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(a) = rest.find('"') {
        let after = &rest[a + 1..];
        let Some(b) = after.find('"') else { break };
        out.push(format!("\"{}\"", &after[..b]));
        rest = &after[b + 1..];
    }
    out
}

type Ends = Vec<bool>;

fn word_run(c: &[char], i: usize) -> usize {
    let mut e = i;
    while e < c.len() && (is_word(c[e]) || c[e] == '.') {
        e += 1;
    }
    e
}

fn ws_run(c: &[char], i: usize) -> usize {
    let mut e = i;
    while e < c.len() && is_py_space(c[e]) {
        e += 1;
    }
    e
}

/// Ends of `"[^"]*"|\$[\w.]+|[-\d.]+` from i.
fn value_ends(c: &[char], i: usize, out: &mut Ends) {
    if i >= c.len() {
        return;
    }
    if c[i] == '"' {
        if let Some(q) = c[i + 1..].iter().position(|&x| x == '"') {
            out[i + 1 + q + 1] = true;
        }
    }
    if c[i] == '$' {
        let r = word_run(c, i + 1);
        out[i + 2..=r].iter_mut().for_each(|x| *x = true);
    }
    let mut e = i;
    while e < c.len() && (c[e] == '-' || c[e] == '.' || c[e].is_numeric()) {
        e += 1;
        out[e] = true;
    }
}

/// Ends of `\s*=\s*VALUE` from i.
fn assign_ends(c: &[char], i: usize, out: &mut Ends) {
    let w = ws_run(c, i);
    if w < c.len() && c[w] == '=' {
        let v = ws_run(c, w + 1);
        for s in w + 1..=v {
            value_ends(c, s, out);
        }
    }
}

/// Ends of `\$?[\w.]+` from i (every prefix of the run).
fn name_ends(c: &[char], i: usize) -> std::ops::RangeInclusive<usize> {
    let s = if c.get(i) == Some(&'$') { i + 1 } else { i };
    // Empty (s + 1..=s) when there is no name.
    s + 1..=word_run(c, s)
}

/// Ends of NeMo's first parameter of `with`: `\$[\w.]+` or `\$?[\w.]+\s*=\s*VALUE`.
fn first_param_ends(c: &[char], i: usize, out: &mut Ends) {
    if c.get(i) == Some(&'$') {
        let r = word_run(c, i + 1);
        out[i + 2..=r].iter_mut().for_each(|x| *x = true);
    }
    for e in name_ends(c, i) {
        assign_ends(c, e, out);
    }
}

/// Ends of a further parameter: `\$?[\w.]+\s*(=\s*VALUE)?`.
fn param_ends(c: &[char], i: usize, out: &mut Ends) {
    for e in name_ends(c, i) {
        for w in e..=ws_run(c, e) {
            out[w] = true;
            assign_ends(c, w, out);
        }
    }
}

/// Whether `c[s..]` is `(with|for) FIRST(\s*,\s*PARAM)*` to the end.
fn params_match(c: &[char], s: usize) -> bool {
    let kw = if c[s..].starts_with(&['w', 'i', 't', 'h', ' ']) {
        5
    } else if c[s..].starts_with(&['f', 'o', 'r', ' ']) {
        4
    } else {
        return false;
    };
    let mut reach: Ends = vec![false; c.len() + 2];
    first_param_ends(c, s + kw, &mut reach);
    let mut done: Ends = vec![false; c.len() + 2];
    while let Some(p) = (0..=c.len()).find(|&p| reach[p] && !done[p]) {
        done[p] = true;
        let w = ws_run(c, p);
        if w < c.len() && c[w] == ',' {
            for s2 in w + 1..=ws_run(c, w + 1) {
                param_ends(c, s2, &mut reach);
            }
        }
    }
    reach[c.len()]
}

/// Where `^.* ((?:with|for) ...)$` starts its group (the last such place), if anywhere.
fn params_at_end(c: &[char]) -> Option<usize> {
    if c.len() > 2000 {
        return None;
    }
    (1..c.len())
        .rev()
        .find(|&s| c[s - 1] == ' ' && params_match(c, s))
}

/// `\s*\$?([\w.]+)\s*[:=]\s*("[^"]*"|\$[\w.]+|[-\d.]+)` matches (name, value unquoted).
fn param_values(part: &str) -> Vec<(String, String)> {
    let c: Vec<char> = part.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match one_param(&c, i) {
            Some((k, v, end)) if end > i => {
                out.push((k, v));
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

fn one_param(c: &[char], i: usize) -> Option<(String, String, usize)> {
    let mut p = ws_run(c, i);
    if c.get(p) == Some(&'$') {
        p += 1;
    }
    let e = word_run(c, p);
    if e == p {
        return None;
    }
    let key: String = c[p..e].iter().collect();
    let w = ws_run(c, e);
    if !matches!(c.get(w), Some(':') | Some('=')) {
        return None;
    }
    let v = ws_run(c, w + 1);
    let first = *c.get(v)?;
    let end = if first == '"' {
        v + 2 + c[v + 1..].iter().position(|&x| x == '"')?
    } else if first == '$' {
        let r = word_run(c, v + 1);
        if r == v + 1 {
            return None;
        }
        r
    } else {
        let mut r = v;
        while r < c.len() && (c[r] == '-' || c[r] == '.' || c[r].is_numeric()) {
            r += 1;
        }
        if r == v {
            return None;
        }
        r
    };
    let mut val: String = c[v..end].iter().collect();
    if first == '"' {
        val = val[1..val.len() - 1].to_string();
    }
    Some((key, val, end))
}
