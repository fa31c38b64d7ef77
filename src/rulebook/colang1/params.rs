//! Parameters on indented lines under a statement (NeMo's `_extract_indented_lines` and
//! `_extract_params`, which rewrite the lines into YAML): the flat `key: value` form is read
//! here; nested or bracketed YAML is refused with a syntax error.

use serde_json::Value;

use super::parser::Parser;
use super::text::{params_tokenize, py_strip, Line};
use super::SyntaxError;

impl Parser {
    /// The lines indented under the current one (NeMo's `_extract_indented_lines`); moves the
    /// reader to the last of them.
    pub(super) fn indented_lines(&mut self) -> Vec<Line> {
        let initial = self.idx;
        let base = self.lines.get(initial).map_or(0, |l| l.indentation);
        let mut p = initial + 1;
        let mut out = Vec::new();
        while let Some(l) = self.lines.get(p) {
            if l.indentation <= base {
                break;
            }
            out.push(l.clone());
            p += 1;
        }
        if !out.is_empty() && self.params_ind == 2 {
            let first = out[0].indentation;
            match out.iter().position(|l| l.indentation < first) {
                Some(i) => {
                    out.truncate(i);
                    self.idx = initial + i - 1;
                }
                None => {
                    out.clear();
                    self.idx = initial;
                }
            }
        } else {
            self.idx = p - 1;
        }
        out
    }

    /// The parameters on the lines indented under the current one, if the next line is.
    pub(super) fn params_if_indented(&mut self) -> Result<Vec<(String, Value)>, SyntaxError> {
        if self
            .next
            .as_ref()
            .is_some_and(|n| n.indentation > self.cur_ind)
        {
            let lines = self.indented_lines();
            self.params(&lines)
        } else {
            Ok(Vec::new())
        }
    }

    /// NeMo's `_extract_params` for the flat form: keys without `$`, YAML scalar values.
    pub(super) fn params(&self, lines: &[Line]) -> Result<Vec<(String, Value)>, SyntaxError> {
        let mut out: super::values::Dict<Value> = super::values::Dict::default();
        let Some(first) = lines.first() else {
            return Ok(Vec::new());
        };
        let unsupported = |l: &Line| SyntaxError {
            line: l.number,
            column: l.column,
            message: format!("'{}': parameters in this form are not supported", l.text),
            help: Some(
                "write one `name: value` per line, or pass them inline: `x(name=value)`".into(),
            ),
        };
        let raw: String = lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if raw.contains('{') || raw.contains('[') {
            return Err(unsupported(first));
        }
        for (i, l) in lines.iter().enumerate() {
            if l.indentation != first.indentation {
                return Err(unsupported(l));
            }
            let mut t = l.text.clone();
            for (kw, sep) in [("set ", " to"), ("set ", " =")] {
                if let Some(r) = t.strip_prefix(kw) {
                    let r = r.strip_prefix('$').unwrap_or(r);
                    let n = r.find(sep).filter(|&n| {
                        n > 0 && r[..n].chars().all(|c| super::text::is_word(c) || c == '.')
                    });
                    if let Some(n) = n {
                        t = format!("_{}:{}", &r[..n], &r[n + sep.len()..]);
                        break;
                    }
                }
            }
            if t.starts_with('"') {
                t = format!("_text: {t}");
            }
            let mut tokens = params_tokenize(&t);
            let next_deeper = lines
                .get(i + 1)
                .is_some_and(|n| n.indentation > l.indentation);
            if tokens.len() > 3 && tokens[1] == ":" && tokens[3] == ","
                || tokens.len() > 2 && tokens[1] != ":" && tokens[2] == ","
            {
                return Err(unsupported(l));
            } else if tokens.len() == 2 && tokens[1] != ":" && tokens[0] != "-" {
                tokens = vec![tokens[0].clone(), ":".into(), tokens[1].clone()];
            } else if tokens.len() == 3 && tokens[1] == "=" {
                tokens[1] = ":".into();
            } else if tokens.len() == 1 && next_deeper {
                return Err(unsupported(l));
            }
            if tokens.len() < 2 || tokens[1] != ":" {
                return Err(unsupported(l));
            }
            let key = tokens[0]
                .strip_prefix('$')
                .unwrap_or(&tokens[0])
                .to_string();
            let value = yaml_scalar(&tokens[2..].join(" "));
            out.set(key, value);
        }
        Ok(out.into_vec())
    }
}

/// A YAML 1.1 scalar as PyYAML reads it (plain or quoted).
fn yaml_scalar(s: &str) -> Value {
    let s = py_strip(s);
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        return Value::String(
            s[1..s.len() - 1]
                .replace("\\\"", "\"")
                .replace("\\\\", "\\"),
        );
    }
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        return Value::String(s[1..s.len() - 1].replace("''", "'"));
    }
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true)
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false)
        }
        _ => {}
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    if s.contains('.') && s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) {
        if let Some(n) = s.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(s.to_string())
}
