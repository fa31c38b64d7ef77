//! The bodies of `define user X` and `define bot X` (NeMo's `_extract_markdown` and its
//! Markdown stage, `comd_parser`): each quoted line is an utterance. In user examples `$name`
//! becomes `{name}` and an unquoted line naming another intent becomes `{intent:a|b}`; in bot
//! texts `` `x` `` becomes `$x`. `if`/`else`/`context`/`param`/`set` lines are conditions and
//! declarations, not utterances.

use super::normalize;
use super::parser::Parser;
use super::text::{py_strip, word_split};
use super::{Message, SyntaxError};

/// Which kind of block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Symbol {
    /// `define user`.
    Intent,
    /// `define bot` (or an inline `bot X "text"`).
    Utterance,
}

/// Characters an utterance's rewrites may pass over (parameters x length): 50 million, about
/// a twentieth of a second.
const MAX_REWRITE: usize = 50_000_000;

impl Parser {
    /// Read the block that starts at the line after the current one; leaves the reader at the
    /// first line after it. Records the message (merged by name at output).
    pub(super) fn markdown(
        &mut self,
        symbol: Symbol,
        name: String,
        at: (usize, usize),
    ) -> Result<(), SyntaxError> {
        self.idx += 1;
        let mut md_ind: Option<usize> = None;
        let mut texts = Vec::new();
        while let Some(line) = self.lines.get(self.idx).cloned() {
            self.cur = line;
            self.cur_ind = self.cur.indentation;
            let text = normalize::markdown(&self.cur.text);
            let md_line = py_strip(&text).to_string();
            let ind = *md_ind.get_or_insert(self.cur.indentation);
            let tokens = word_split(&md_line, " ");
            let t0 = tokens.first().map(String::as_str).unwrap_or("");
            match t0 {
                "param" | "parameter" | "entity" | "property" | "attribute" | "attr" | "prop" => {
                    if !(tokens.len() == 4 || tokens.len() == 5 && tokens[2] == "as") {
                        return Err(self.error(
                            "Invalid parameters syntax.".into(),
                            "write `param <name> : <type>`",
                        ));
                    }
                }
                "set" => {
                    if !tokens.get(2).is_some_and(|t| t == "=" || t == "to") {
                        return Err(self.error(
                            format!("'{md_line}' sets nothing"),
                            "write `set $name = value`",
                        ));
                    }
                }
                "context" => {}
                "if" | "else" if symbol == Symbol::Utterance => {}
                "bot" => {
                    return Err(self.error(
                        "a 'bot' line inside 'define user' is not supported by this reader".into(),
                        "write the response as a flow: `define flow` with `user X` then `bot Y`",
                    ))
                }
                _ => {
                    if !text.starts_with('"') {
                        let parts = word_split(&text, ":");
                        if parts.len() > 1 || parts.len() == 1 && text.ends_with(':') {
                            return Err(self.error(
                                format!("'{md_line}': rich (YAML) messages are not supported"),
                                "write each utterance as a quoted string on its own line",
                            ));
                        }
                    }
                    texts.push(self.utterance(symbol, &md_line)?);
                }
            }
            self.idx += 1;
            match self.lines.get(self.idx) {
                Some(n) if n.indentation >= ind => {}
                _ => break,
            }
        }
        let list = match symbol {
            Symbol::Intent => &mut self.file.user_messages,
            Symbol::Utterance => &mut self.file.bot_messages,
        };
        list.push(Message {
            name,
            line: at.0,
            column: at.1,
            texts,
        });
        Ok(())
    }

    /// NeMo rewrites an utterance once per parameter, each a pass over the whole text: past
    /// [`MAX_REWRITE`] characters rewritten, the line is refused rather than read for minutes.
    fn within_rewrites(&self, passes: usize, len: usize) -> Result<(), SyntaxError> {
        if passes.saturating_mul(len) > MAX_REWRITE {
            return Err(self.error(
                format!(
                    "this utterance is too large to read: {passes} parameters rewritten over {len} characters"
                ),
                "split it into several shorter utterances",
            ));
        }
        Ok(())
    }

    fn utterance(&self, symbol: Symbol, md_line: &str) -> Result<String, SyntaxError> {
        let mut parts = word_split(md_line, " and ");
        for part in &mut parts {
            let p = py_strip(part).to_string();
            if p.starts_with('"') {
                if !p.ends_with('"') {
                    return Err(self.error(
                        "Invalid syntax, missing \"".into(),
                        "close the utterance with a double quote",
                    ));
                }
                let n = p.chars().count();
                let mut inner: String = p.chars().skip(1).take(n.saturating_sub(2)).collect();
                if symbol == Symbol::Intent {
                    let params = dollar_params(&inner);
                    self.within_rewrites(params.len(), inner.len())?;
                    for param in params {
                        inner = inner.replace(&format!("${param}"), &format!("[x]({param})"));
                    }
                }
                *part = inner;
            } else {
                *part = format!("{{intent:{}}}", p.replace(' ', "|"));
            }
        }
        let joined = parts.join(" {intent:and} ");
        let joined = py_strip(&joined);
        self.within_rewrites(joined.matches("](").count(), joined.len())?;
        let mut text = parse_pattern(joined);
        if symbol == Symbol::Utterance {
            let spans = backticks(&text);
            self.within_rewrites(spans.len(), text.len())?;
            for param in spans {
                text = text.replace(&format!("`{param}`"), &format!("${param}"));
            }
        }
        // An utterance whose string spans lines: NeMo's Markdown stage reads its first line as
        // the item and passes over the rest.
        match text.split_once('\n') {
            Some((first, _)) => Ok(first.to_string()),
            None => Ok(text),
        }
    }
}

/// NeMo's `\$([^ "'!?\-,;</]*(?:\w|]))` matches, each once, in order.
fn dollar_params(s: &str) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] != '$' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < c.len() && !" \"'!?-,;</".contains(c[end]) {
            end += 1;
        }
        while end > start && !(super::text::is_word(c[end - 1]) || c[end - 1] == ']') {
            end -= 1;
        }
        if end > start {
            let p: String = c[start..end].iter().collect();
            if seen.insert(p.clone()) {
                out.push(p);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// NeMo's `parse_pattern`: `[text](param)` → `{param}`.
fn parse_pattern(s: &str) -> String {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut from = 0;
    while let Some(o) = s[from..].find('[') {
        let open = from + o;
        let Some(mid) = s[open + 1..].find("](").map(|m| open + 1 + m) else {
            break;
        };
        let Some(close) = s[mid + 2..].find(')').map(|c| mid + 2 + c) else {
            break;
        };
        found.push((s[open..=close].to_string(), s[mid + 2..close].to_string()));
        from = close + 1;
    }
    let mut out = s.to_string();
    for (whole, param) in found {
        out = out.replace(&whole, &format!("{{{param}}}"));
    }
    out
}

/// The `` `x` `` spans (non-greedy).
fn backticks(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(a) = rest.find('`') {
        let after = &rest[a + 1..];
        let Some(b) = after.find('`') else { break };
        out.push(after[..b].to_string());
        rest = &after[b + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert_eq!(dollar_params("order $id please"), vec!["id"]);
        assert_eq!(parse_pattern("a [x](id) b"), "a {id} b");
    }
}
