//! Python literals (SPEC 2.4): NeMo evaluates decorator arguments with `ast.literal_eval`; this
//! does the same for the literals a decorator takes (strings, numbers, True/False/None, lists,
//! tuples, dicts, sets), into JSON as the oracle writes them (tuples and sets as lists, dict keys
//! as Python's `str` of the key).

use serde_json::{Map, Number, Value};

/// Evaluates `src` as a Python literal; `None` when it is not one.
pub(crate) fn eval(src: &str) -> Option<Value> {
    let c: Vec<char> = src.chars().collect();
    let mut r = Reader {
        c: &c,
        i: 0,
        depth: 0,
    };
    let v = r.value()?;
    r.ws();
    (r.i == c.len()).then_some(v)
}

struct Reader<'a> {
    c: &'a [char],
    i: usize,
    depth: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.c.get(self.i).is_some_and(|c| c.is_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, ch: char) -> bool {
        self.ws();
        if self.c.get(self.i) == Some(&ch) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Option<Value> {
        self.ws();
        let c = *self.c.get(self.i)?;
        match c {
            '"' | '\'' => {
                let mut s = self.string()?;
                // Adjacent strings concatenate.
                loop {
                    self.ws();
                    match self.c.get(self.i) {
                        Some('"' | '\'') => s.push_str(&self.string()?),
                        _ => return Some(Value::String(s)),
                    }
                }
            }
            '[' | '(' => {
                self.i += 1;
                let close = if c == '[' { ']' } else { ')' };
                let mut out = Vec::new();
                loop {
                    if self.eat(close) {
                        break;
                    }
                    out.push(self.value()?);
                    if !self.eat(',') {
                        if !self.eat(close) {
                            return None;
                        }
                        break;
                    }
                }
                Some(Value::Array(out))
            }
            '{' => {
                self.i += 1;
                let mut map = Map::new();
                let mut set = Vec::new();
                loop {
                    if self.eat('}') {
                        break;
                    }
                    let k = self.value()?;
                    if self.eat(':') {
                        if !set.is_empty() {
                            return None;
                        }
                        let v = self.value()?;
                        map.insert(key_str(&k), v);
                    } else {
                        if !map.is_empty() {
                            return None;
                        }
                        set.push(k);
                    }
                    if !self.eat(',') {
                        if !self.eat('}') {
                            return None;
                        }
                        break;
                    }
                }
                Some(if set.is_empty() {
                    Value::Object(map)
                } else {
                    Value::Array(set)
                })
            }
            '-' | '+' => {
                self.i += 1;
                match self.value()? {
                    Value::Number(n) if c == '+' => Some(Value::Number(n)),
                    Value::Number(n) => {
                        if let Some(i) = n.as_i64() {
                            Some(Value::Number(Number::from(-i)))
                        } else {
                            Number::from_f64(-n.as_f64()?).map(Value::Number)
                        }
                    }
                    _ => None,
                }
            }
            c if c.is_ascii_digit() || c == '.' => self.number(),
            _ => {
                let start = self.i;
                while self
                    .c
                    .get(self.i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    self.i += 1;
                }
                let w: String = self.c[start..self.i].iter().collect();
                match w.as_str() {
                    "True" => Some(Value::Bool(true)),
                    "False" => Some(Value::Bool(false)),
                    "None" => Some(Value::Null),
                    _ => None,
                }
            }
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while self
            .c
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_'))
            || (matches!(self.c.get(self.i), Some('+' | '-'))
                && matches!(self.c.get(self.i.wrapping_sub(1)), Some('e' | 'E')))
        {
            self.i += 1;
        }
        let text: String = self.c[start..self.i]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Some(Value::Number(Number::from(i)));
        }
        let f: f64 = text.parse().ok()?;
        Number::from_f64(f).map(Value::Number)
    }

    fn string(&mut self) -> Option<String> {
        let q = *self.c.get(self.i)?;
        let triple = self.c.get(self.i + 1) == Some(&q) && self.c.get(self.i + 2) == Some(&q);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = *self.c.get(self.i)?;
            if c == q
                && (!triple
                    || (self.c.get(self.i + 1) == Some(&q) && self.c.get(self.i + 2) == Some(&q)))
            {
                self.i += if triple { 3 } else { 1 };
                return Some(out);
            }
            if c == '\n' && !triple {
                return None;
            }
            self.i += 1;
            if c != '\\' {
                out.push(c);
                continue;
            }
            let e = *self.c.get(self.i)?;
            self.i += 1;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                '\n' => {}
                '\\' | '\'' | '"' => out.push(e),
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = self.c.get(self.i..self.i + n)?.iter().collect();
                    self.i += n;
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }
}

/// Python's `str()` of a dict key.
fn key_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Null => "None".to_string(),
        other => other.to_string(),
    }
}
