//! Rule sheets (SPEC 2.4; seed chapter 45, "POST /v1/rule-sheets/compile for a sheet"): a YAML
//! file that says, per tool, which facts must hold before the tool check lets it run.
//!
//! ```yaml
//! format: stalwart-rule-sheet/1
//! rules:
//!   - tool: refund_card
//!     when: order_paid                  # a condition over facts, as a Colang `if` writes it
//!     name: refunds                     # optional: shown as the rule's flow
//!   - tool: charge_card
//!     when: [card_on_file, order_open]  # a list: every item must hold
//!   - tool: get_order                   # no `when`: the rulebook allows it always
//! ```
//!
//! A tool may have several rules: it may run when any of them holds (SPEC 5: guards on one action
//! merge as an OR). Conditions use `not`, `and`, `or` and parentheses; a fact is written with or
//! without its `$` (`order_paid` and `$order_paid` are the same fact). Every rule compiles to one
//! route, located at its `tool:` line.

use crate::input::error::InputError;
use crate::input::source::SourceMap;
use crate::input::tree::{self, Node, Reader};

use super::budget::{check_condition, thousands, Budget, Budgets, Overrun};
use super::compile::{Compiled, Exec, Hop, Place, Route, SourceInfo};

/// The `format` a sheet declares.
pub(crate) const FORMAT: &str = "stalwart-rule-sheet/1";

const SHEET_WORDS: &[&str] = &["format", "rules", "description"];
const RULE_WORDS: &[&str] = &["tool", "when", "name", "description"];

/// True when `text` (a `.yaml`/`.yml` file) is a rule sheet: it declares the sheet format.
pub(crate) fn is_sheet(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_start().starts_with("format:") && l.contains(FORMAT))
}

/// Compiles the sheet held in `sources` as file `file` (its display is the path shown), within
/// `budgets` (the condition budget for each `when`, the route budget for the rules).
/// Errors: not YAML, a missing or other `format`, a rule without `tool`, an unknown word, a
/// `when` that is neither text nor a list of texts, a budget crossed; each at its line and
/// column.
pub(crate) fn compile(
    sources: &SourceMap,
    file: usize,
    budgets: &Budgets,
) -> Result<Compiled, InputError> {
    let root = tree::parse(sources, file)?;
    let r = Reader { sources };
    let map = r.map(&root, "the rule sheet")?;
    for e in map.entries {
        if !SHEET_WORDS.contains(&e.key.as_str()) {
            return Err(r
                .err(
                    e.key_loc,
                    format!("unknown word '{}' in the rule sheet", e.key),
                    format!("a rule sheet has {}", SHEET_WORDS.join(", ")),
                )
                .with_label("unknown word"));
        }
    }
    let format = r.req_text(
        map,
        "format",
        "the rule sheet's `format`",
        &format!("start the sheet with `format: {FORMAT}`"),
    )?;
    if format.name != FORMAT {
        return Err(r
            .err(
                format.loc,
                format!(
                    "the rule sheet's format is '{}', not '{FORMAT}'",
                    format.name
                ),
                format!("write `format: {FORMAT}`"),
            )
            .with_label("unknown format"));
    }
    let display = sources
        .files
        .get(file)
        .map(|f| f.display.clone())
        .unwrap_or_default();
    let mut c = Compiled {
        files: vec![SourceInfo {
            path: display,
            version: "sheet".into(),
        }],
        ..Compiled::default()
    };
    let rules = match map.get("rules") {
        Some(n) => r.seq(n, "`rules`")?,
        None => &[],
    };
    for (k, item) in rules.iter().enumerate() {
        let m = r.map(item, "a rule")?;
        for e in m.entries {
            if !RULE_WORDS.contains(&e.key.as_str()) {
                return Err(r
                    .err(
                        e.key_loc,
                        format!("unknown word '{}' in a rule", e.key),
                        format!("a rule has {}", RULE_WORDS.join(", ")),
                    )
                    .with_label("unknown word"));
            }
        }
        let tool = r.req_text(
            m,
            "tool",
            "a rule's `tool`",
            "name the tool the rule decides: `tool: refund_card`",
        )?;
        let name = r
            .opt_text(m, "name", "a rule's `name`")?
            .map_or_else(|| format!("rule {}", k + 1), |n| n.name);
        let when = m.get_some("when");
        let parts = match when {
            None => Vec::new(),
            Some(n) => when_parts(&r, n)?,
        };
        let mut cond = super::cond::Cond::True;
        for p in &parts {
            let read = c.atoms.read(&with_dollars(p));
            cond = cond.and(read);
        }
        let at = Place {
            file: 0,
            line: tool.loc.line as usize,
            column: tool.loc.column as usize,
        };
        if let Err(o) = check_condition(&cond, budgets, at, "this rule's `when`") {
            return Err(r.err(when.map_or(tool.loc, |n| n.loc), o.message(), o.help()));
        }
        if k >= budgets.routes {
            let o = Overrun::new(
                Budget::Routes,
                budgets.routes,
                at,
                format!(
                    "the sheet has more than {} rules",
                    thousands(budgets.routes)
                ),
            );
            return Err(r.err(tool.loc, o.message(), o.help()));
        }
        let shown = c.atoms.show(&cond);
        c.executes.push(Exec {
            action: tool.name.clone(),
            at,
            via_bot: false,
        });
        c.routes.push(Route {
            action: tool.name.clone(),
            at,
            flow: name.clone(),
            cond,
            via: vec![Hop {
                at,
                what: format!("rule {name}: {} when {shown}", tool.name),
            }],
        });
    }
    Ok(c)
}

fn when_parts(r: &Reader<'_>, n: &Node) -> Result<Vec<String>, InputError> {
    if let Some(t) = n.as_text() {
        return Ok(vec![t.to_string()]);
    }
    if let Some(b) = n.as_bool() {
        return Ok(vec![if b { "True" } else { "False" }.to_string()]);
    }
    let items = r.seq(n, "a rule's `when`")?;
    items
        .iter()
        .map(|i| r.text(i, "an item of `when`").map(|t| t.name))
        .collect()
}

/// Writes a `$` before each bare fact name (`order_paid and not x` → `$order_paid and not $x`).
fn with_dollars(s: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            let keyword = matches!(
                word.as_str(),
                "and" | "or" | "not" | "True" | "False" | "None" | "true" | "false" | "in" | "is"
            );
            let starts_ok = word
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_');
            if !keyword && starts_ok && !out.ends_with('$') && !out.ends_with('.') {
                out.push('$');
            }
            out.push_str(word);
            word.clear();
        }
    };
    for ch in s.chars() {
        if let Some(q) = quote {
            out.push(ch);
            if ch == q {
                quote = None;
            }
            continue;
        }
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
            continue;
        }
        flush(&mut word, &mut out);
        if ch == '"' || ch == '\'' {
            quote = Some(ch);
        }
        out.push(ch);
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_become_facts() {
        assert_eq!(
            with_dollars("order_paid and not $x"),
            "$order_paid and not $x"
        );
        assert_eq!(
            with_dollars("status == 'paid' or True"),
            "$status == 'paid' or True"
        );
        assert_eq!(with_dollars("$a.b"), "$a.b");
    }
}
