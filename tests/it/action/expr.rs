//! GitHub's expression language, as much of it as `action.yml` uses: `${{ }}` interpolation,
//! context paths (`inputs.x`, `steps.id.outputs.y`, `github.event.pull_request.base.sha`),
//! string literals, `==`, `!=`, `!`, `&&`, `||`, parentheses and the status functions
//! `success()`, `failure()`, `always()`, `cancelled()`. Comparison follows GitHub's rules: strings
//! compare ignoring case, values of different types compare as numbers (`null` and `''` are 0).
//! An expression it does not know panics, so a new construct in `action.yml` cannot be
//! evaluated wrongly without the test saying so.

/// A value of an expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
}

impl Value {
    /// GitHub's truthiness: `null`, `false`, `0`, `NaN` and `''` are false.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Str(s) => !s.is_empty(),
        }
    }

    /// The value spliced into a string: `null` is empty.
    pub fn text(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Num(n) => n.to_string(),
            Value::Str(s) => s.clone(),
        }
    }

    fn num(&self) -> f64 {
        match self {
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Num(n) => *n,
            Value::Str(s) if s.trim().is_empty() => 0.0,
            Value::Str(s) => s.trim().parse().unwrap_or(f64::NAN),
        }
    }

    fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Str(a), Value::Str(b)) => a.eq_ignore_ascii_case(b),
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            _ => self.num() == other.num(),
        }
    }
}

/// What an expression reads: context paths and the job's status.
pub trait Context {
    /// The value at a dotted path (`inputs.agent`, `steps.find.outputs.key`).
    fn lookup(&self, path: &[String]) -> Value;
    /// Whether an earlier step failed (and was not allowed to).
    fn failed(&self) -> bool;
}

/// An expression's value, and whether it called a status function.
pub struct Evaluated {
    pub value: Value,
    pub status_function: bool,
}

/// Evaluates the expression `src` (without `${{ }}`).
pub fn eval(src: &str, ctx: &dyn Context) -> Evaluated {
    let mut p = Parser {
        s: src.as_bytes(),
        i: 0,
        ctx,
        status_function: false,
    };
    let value = p.or();
    p.ws();
    assert!(
        p.i == p.s.len(),
        "unparsed expression text in {src:?} at {}",
        p.i
    );
    Evaluated {
        value,
        status_function: p.status_function,
    }
}

/// Splices every `${{ expr }}` of `s` with its value.
pub fn interpolate(s: &str, ctx: &dyn Context) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after
            .find("}}")
            .unwrap_or_else(|| panic!("unclosed ${{{{ in {s:?}"));
        out.push_str(&eval(&after[..end], ctx).value.text());
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// An `if:` condition: `${{ }}` optional, and an implicit `success() &&` when the expression
/// calls no status function (GitHub's rule).
pub fn condition(src: Option<&str>, ctx: &dyn Context) -> bool {
    let Some(src) = src else {
        return !ctx.failed();
    };
    let t = src.trim();
    let inner = t
        .strip_prefix("${{")
        .and_then(|x| x.strip_suffix("}}"))
        .unwrap_or(t);
    let e = eval(inner, ctx);
    if e.status_function {
        e.value.truthy()
    } else {
        !ctx.failed() && e.value.truthy()
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    ctx: &'a dyn Context,
    status_function: bool,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(tok.as_bytes()) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Value {
        let mut v = self.and();
        while self.eat("||") {
            let r = self.and();
            v = if v.truthy() { v } else { r };
        }
        v
    }

    fn and(&mut self) -> Value {
        let mut v = self.cmp();
        while self.eat("&&") {
            let r = self.cmp();
            v = if v.truthy() { r } else { v };
        }
        v
    }

    fn cmp(&mut self) -> Value {
        let l = self.unary();
        if self.eat("==") {
            let r = self.unary();
            return Value::Bool(l.equals(&r));
        }
        if self.eat("!=") {
            let r = self.unary();
            return Value::Bool(!l.equals(&r));
        }
        l
    }

    fn unary(&mut self) -> Value {
        self.ws();
        if self.s.get(self.i) == Some(&b'!') && self.s.get(self.i + 1) != Some(&b'=') {
            self.i += 1;
            return Value::Bool(!self.unary().truthy());
        }
        self.primary()
    }

    fn primary(&mut self) -> Value {
        self.ws();
        if self.eat("(") {
            let v = self.or();
            assert!(self.eat(")"), "expected ) in expression");
            return v;
        }
        if self.s.get(self.i) == Some(&b'\'') {
            let mut out = String::new();
            self.i += 1;
            loop {
                let c = *self.s.get(self.i).expect("unclosed string literal");
                self.i += 1;
                if c == b'\'' {
                    if self.s.get(self.i) == Some(&b'\'') {
                        out.push('\'');
                        self.i += 1;
                        continue;
                    }
                    break;
                }
                out.push(char::from(c));
            }
            return Value::Str(out);
        }
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_-.".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.i]).expect("ascii");
        assert!(
            !word.is_empty(),
            "expected a value in expression at {start}"
        );
        if self.eat("(") {
            assert!(
                self.eat(")"),
                "only functions without arguments are modelled: {word}"
            );
            self.status_function = true;
            return Value::Bool(match word {
                "success" => !self.ctx.failed(),
                "failure" => self.ctx.failed(),
                "always" => true,
                "cancelled" => false,
                _ => panic!("function {word}() is not modelled"),
            });
        }
        match word {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            _ => {
                let path: Vec<String> = word.split('.').map(str::to_string).collect();
                self.ctx.lookup(&path)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Job {
        failed: bool,
    }

    impl Context for Job {
        fn lookup(&self, path: &[String]) -> Value {
            match path.join(".").as_str() {
                "steps.find.outputs.bin" => Value::Null,
                "inputs.upload" => Value::Str("AUTO".into()),
                other => panic!("{other}"),
            }
        }
        fn failed(&self) -> bool {
            self.failed
        }
    }

    /// GitHub's rules for `if:`: without a status function a step runs only while nothing has
    /// failed; `always()`, `!cancelled()` and `failure()` run it after a failure.
    #[test]
    fn status_functions_and_the_implicit_success() {
        let ok = Job { failed: false };
        let bad = Job { failed: true };
        let cases: [(Option<&str>, bool, bool); 8] = [
            (None, true, false),
            (Some("${{ steps.find.outputs.bin == '' }}"), true, false),
            (Some("steps.find.outputs.bin != ''"), false, false),
            (Some("${{ always() }}"), true, true),
            (Some("${{ !cancelled() }}"), true, true),
            (Some("failure()"), false, true),
            (Some("success() || failure()"), true, true),
            (
                Some("${{ always() && inputs.upload == 'auto' }}"),
                true,
                true,
            ),
        ];
        for (cond, before, after) in cases {
            assert_eq!(condition(cond, &ok), before, "{cond:?} with no failure");
            assert_eq!(condition(cond, &bad), after, "{cond:?} after a failure");
        }
        assert_eq!(interpolate("${{ inputs.upload == 'auto' }}", &ok), "true");
        assert_eq!(
            interpolate("a/${{ steps.find.outputs.bin }}/b", &ok),
            "a//b"
        );
    }
}
