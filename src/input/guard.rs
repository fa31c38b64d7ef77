//! Edge guards (SPEC 2.2 `guard`, SPEC 3.1 "Guards"): a boolean expression over state flags.
//!
//! ```text
//! or   := and ( "||" and )*
//! and  := not ( "&&" not )*
//! not  := "!" not | atom
//! atom := NAME | "(" or ")"
//! NAME := letters, digits, `_`, `.`, `-` (not starting with `-` or `.`)
//! ```
//!
//! Precedence `!` > `&&` > `||`; `&&` and `||` group to the left. Whitespace is free.

use crate::input::ir::Guard;

/// Parentheses and negations nested deeper than this are refused.
const MAX_DEPTH: usize = 100;
/// Most `&&`/`||` operators in one guard: every later stage walks the guard recursively, so a
/// longer one is refused here rather than exhausting the stack there.
const MAX_OPERATORS: usize = 256;

/// Parses a guard. On failure, gives the byte offset in `text` where it went wrong and what was
/// expected there (e.g. `(7, "expected a flag name, `!` or `(`, found `)`")`).
pub fn parse_guard(text: &str) -> Result<Guard, (usize, String)> {
    let mut p = Parser {
        text,
        pos: 0,
        depth: 0,
        operators: 0,
    };
    p.ws();
    if p.pos >= text.len() {
        return Err((
            0,
            "the guard is empty: write a flag name, or remove `guard`".to_string(),
        ));
    }
    let g = p.or()?;
    p.ws();
    if p.pos < text.len() {
        let found = p.found();
        let msg = if p.peek() == Some(')') {
            "unexpected `)`: no `(` is open".to_string()
        } else {
            format!("expected `&&`, `||` or the end of the guard, found {found}")
        };
        return Err((p.pos, msg));
    }
    Ok(g)
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    depth: usize,
    operators: usize,
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '-')
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the guard".to_string(),
            Some(_) => {
                let word: String = self
                    .rest()
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(20)
                    .collect();
                format!("`{word}`")
            }
        }
    }

    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    /// Consumes `op` (after whitespace) if it comes next. A single `&` or `|` is an error.
    fn op(&mut self, op: &str) -> Result<bool, (usize, String)> {
        self.ws();
        if self.rest().starts_with(op) {
            self.pos += op.len();
            return Ok(true);
        }
        let single = &op[..1];
        if self.rest().starts_with(single) {
            return Err((
                self.pos,
                format!("`{single}` must be doubled: write `{op}`"),
            ));
        }
        Ok(false)
    }

    fn enter(&mut self) -> Result<(), (usize, String)> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err((
                self.pos,
                format!("the guard nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn count_operator(&mut self) -> Result<(), (usize, String)> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err((
                self.pos,
                format!("the guard has more than {MAX_OPERATORS} `&&`/`||` operators: set a state flag in a step instead"),
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Guard, (usize, String)> {
        let mut left = self.and()?;
        while self.op("||")? {
            self.count_operator()?;
            let right = self.and()?;
            left = Guard::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Guard, (usize, String)> {
        let mut left = self.not()?;
        while self.op("&&")? {
            self.count_operator()?;
            let right = self.not()?;
            left = Guard::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Guard, (usize, String)> {
        self.ws();
        if self.peek() == Some('!') {
            self.pos += 1;
            self.enter()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Guard::Not(Box::new(inner)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Guard, (usize, String)> {
        self.ws();
        match self.peek() {
            Some('(') => {
                let open = self.pos;
                self.pos += 1;
                self.enter()?;
                let inner = self.or()?;
                self.depth -= 1;
                self.ws();
                if self.peek() == Some(')') {
                    self.pos += 1;
                    Ok(inner)
                } else if self.peek().is_none() {
                    Err((open, "this `(` is never closed: add `)`".to_string()))
                } else {
                    Err((
                        self.pos,
                        format!("expected `)`, `&&` or `||`, found {}", self.found()),
                    ))
                }
            }
            Some(c) if is_name_char(c) && !matches!(c, '-' | '.') => {
                let start = self.pos;
                while let Some(c) = self.peek() {
                    if is_name_char(c) {
                        self.pos += c.len_utf8();
                    } else {
                        break;
                    }
                }
                Ok(Guard::Flag(
                    self.text.get(start..self.pos).unwrap_or("").to_string(),
                ))
            }
            _ => Err((
                self.pos,
                format!("expected a flag name, `!` or `(`, found {}", self.found()),
            )),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn f(n: &str) -> Box<Guard> {
        Box::new(Guard::Flag(n.to_string()))
    }

    #[test]
    fn precedence() {
        assert_eq!(
            parse_guard("!a && b || c").unwrap(),
            Guard::Or(
                Box::new(Guard::And(Box::new(Guard::Not(f("a"))), f("b"))),
                f("c")
            )
        );
        assert_eq!(
            parse_guard("a && (b || c)").unwrap(),
            Guard::And(f("a"), Box::new(Guard::Or(f("b"), f("c"))))
        );
        assert_eq!(
            parse_guard(" approved ").unwrap(),
            Guard::Flag("approved".into())
        );
    }

    #[test]
    fn errors_point_at_the_right_byte() {
        assert_eq!(parse_guard("a && ").unwrap_err().0, 5);
        assert_eq!(parse_guard("a & b").unwrap_err().0, 2);
        assert_eq!(parse_guard("(a || b").unwrap_err().0, 0);
        assert_eq!(parse_guard("a b").unwrap_err().0, 2);
        assert_eq!(parse_guard("a)").unwrap_err().0, 1);
        assert_eq!(parse_guard("").unwrap_err().0, 0);
        assert!(parse_guard(&"!".repeat(10_000)).is_err());
        assert!(parse_guard(&"(".repeat(10_000)).is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "a",
            "!a",
            "a && b",
            "a || b && c",
            "(a || b) && !c",
            "!(a && b)",
        ] {
            let g = parse_guard(s).unwrap();
            assert_eq!(parse_guard(&g.to_string()).unwrap(), g, "{s}");
        }
    }
}
