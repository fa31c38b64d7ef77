//! The comments of a source file, where an in-source accept may be written (issue 26: an accept
//! marker counts only in a comment, never in a string, a node's name or a block of text).
//!
//! Only the files whose comments a person writes next to a finding's line are read: YAML
//! (`.yaml`, `.yml`: agent.yaml) and Python (`.py`: tool modules, a LangGraph agent's source).
//! Python's comments are the `comment` nodes tree-sitter-python parses; YAML's are found by a
//! scanner that knows quoted scalars (single and double, over several lines) and block scalars
//! (`|` and `>`, whose lines are text however they look). Any other file has no comments here.

/// One comment: its 1-based line, the 1-based column (in characters) of its `#`, and its text
/// after the `#`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Comment {
    /// 1-based line.
    pub(crate) line: u32,
    /// 1-based column of the `#`, in characters.
    pub(crate) column: u32,
    /// The text after `#`, to the end of the line.
    pub(crate) text: String,
}

/// `text` with each carriage return that ends a line alone (not followed by a line feed) made a
/// line feed, byte for byte: YAML and Python end a line there too, and the lines a finding points
/// at are counted so, so the comments are counted the same way (issue 26: a lone `\r` must not
/// move a comment onto another line's finding).
pub(super) fn normalize(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
    if !(0..bytes.len()).any(lone) {
        return std::borrow::Cow::Borrowed(text);
    }
    let out: Vec<u8> = (0..bytes.len())
        .map(|i| if lone(i) { b'\n' } else { bytes[i] })
        .collect();
    // One ASCII byte for another: still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// The comments of the file at `path` holding `text` (none for a kind of file not read here).
/// Lines are numbered as [`normalize`] ends them.
pub(super) fn of(path: &str, text: &str) -> Vec<Comment> {
    let text = &*normalize(text);
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".py") {
        python(text)
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        yaml(text)
    } else {
        Vec::new()
    }
}

/// Python's comments, from tree-sitter's parse (a `#` inside a string is no comment).
fn python(text: &str) -> Vec<Comment> {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        return Vec::new();
    }
    let Some(tree) = parser.parse(text, None) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "comment" {
            let start = node.start_position();
            let body = &text[node.byte_range()];
            let line_start = node.start_byte() - start.column;
            let column = text[line_start..node.start_byte()].chars().count() + 1;
            out.push(Comment {
                line: start.row as u32 + 1,
                column: column as u32,
                text: body.strip_prefix('#').unwrap_or(body).to_string(),
            });
            continue;
        }
        stack.extend(node.children(&mut cursor));
    }
    out.sort_by_key(|c| (c.line, c.column));
    out
}

/// The quote a YAML scalar is open in, carried from one line to the next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    None,
    Single,
    Double,
}

/// YAML's comments: a `#` at the start of a line or after white space, outside a quoted scalar
/// and outside a block scalar's lines.
fn yaml(text: &str) -> Vec<Comment> {
    let mut out = Vec::new();
    let mut open = Open::None;
    // Inside a block scalar: the indentation its lines must exceed (-1: a document's own
    // block scalar, whose lines may start at the margin, to the next document marker).
    let mut block: Option<isize> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = block {
            let marker = line.starts_with("---") || line.starts_with("...");
            if line.trim().is_empty() || (indent as isize > parent && !(parent < 0 && marker)) {
                continue;
            }
            block = None;
        }
        let mut scalar_start = open == Open::None;
        let mut prev_space = true;
        let mut comment_at = None;
        let mut chars = line.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match open {
                Open::Single => {
                    if c == '\'' {
                        if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                            chars.next();
                        } else {
                            open = Open::None;
                        }
                    }
                    prev_space = false;
                    continue;
                }
                Open::Double => {
                    if c == '\\' {
                        chars.next();
                    } else if c == '"' {
                        open = Open::None;
                    }
                    prev_space = false;
                    continue;
                }
                Open::None => {}
            }
            if c == '#' && prev_space {
                comment_at = Some(at);
                break;
            }
            if c == ' ' || c == '\t' {
                prev_space = true;
                continue;
            }
            if scalar_start && (c == '\'' || c == '"') {
                open = if c == '\'' {
                    Open::Single
                } else {
                    Open::Double
                };
                scalar_start = false;
                prev_space = false;
                continue;
            }
            if scalar_start && (c == '!' || c == '&') {
                // A tag or an anchor: the scalar (a quoted one too) starts after it.
                while chars
                    .peek()
                    .is_some_and(|&(_, n)| !matches!(n, ' ' | '\t' | ',' | '[' | ']' | '{' | '}'))
                {
                    chars.next();
                }
                prev_space = false;
                continue;
            }
            let next = chars.peek().map(|&(_, n)| n);
            let next_space = next.is_none_or(|n| n == ' ' || n == '\t');
            // `"key":"value"`: after a quoted key, `:` needs no space; taking a quote after any
            // `:` as a string's start can only hide a comment, never make one of a string.
            let next_quote = matches!(next, Some('"' | '\''));
            scalar_start = matches!(c, '[' | '{' | ',')
                || (matches!(c, ':' | '-' | '?') && next_space)
                || (c == ':' && next_quote);
            prev_space = false;
        }
        let content = &line[..comment_at.unwrap_or(line.len())];
        if open == Open::None {
            block = block_parent(content, indent);
        }
        if let Some(at) = comment_at {
            out.push(Comment {
                line: i as u32 + 1,
                column: line[..at].chars().count() as u32 + 1,
                text: line[at + 1..].to_string(),
            });
        }
    }
    out
}

/// When a line's content (its comment removed, indented `indent`) ends with a block scalar's
/// header (`|` or `>`, with an optional chomping and indentation indicator, after a key, a `-`,
/// a `?`, a document marker or alone, a tag or an anchor between): the indentation its lines
/// must exceed. A header alone at the margin, or after `---`, is the document's own (-1); alone
/// on an indented line, its node's indentation is not known, so any indented line is its text.
fn block_parent(content: &str, indent: usize) -> Option<isize> {
    let t = content.trim_end();
    let header = t.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
    let before = header
        .strip_suffix('|')
        .or_else(|| header.strip_suffix('>'))?;
    // A tag or an anchor may stand between the key and the header (`text: &notes |`,
    // `- !!str >-`).
    let mut before = before.trim_end();
    while let Some(last) = before.split_whitespace().last() {
        if !(last.starts_with('!') || last.starts_with('&')) {
            break;
        }
        before = before[..before.len() - last.len()].trim_end();
    }
    let indent = indent as isize;
    if before.trim_start() == "---" || (before.is_empty() && indent == 0) {
        Some(-1)
    } else if before.is_empty() {
        Some(0)
    } else if before.ends_with(':') || before.ends_with('-') || before.ends_with('?') {
        Some(indent)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{of, Comment};

    fn lines(v: &[Comment]) -> Vec<(u32, u32, &str)> {
        v.iter()
            .map(|c| (c.line, c.column, c.text.as_str()))
            .collect()
    }

    #[test]
    fn yaml_comments_are_outside_strings_and_block_scalars() {
        let text = "\
name: shop # stalwart: accept QG105 -- a comment
title: \"a # stalwart: accept QG105 -- in a string\"
other: 'it''s # stalwart: accept QG105 -- single'
plain: a#b # real
words: don't # after an apostrophe
text: |
  # stalwart: accept QG105 -- inside a block
  more
after: x
long: \"first
  # stalwart: accept QG105 -- a multi-line string\"
- |-
  # block in a sequence
anchored: &notes |
  # stalwart: accept QG105 -- inside an anchored block
tagged: !!str >-
  # stalwart: accept QG105 -- inside a tagged block
? |
  # stalwart: accept QG105 -- inside a complex key's block
: x
tag: !!str \"a # stalwart: accept QG105 -- in a tagged string\"
anchor: &a 'b # stalwart: accept QG105 -- in an anchored string'
- &x \"c # stalwart: accept QG105 -- in a sequence\"
flow: {\"k\":\"d # stalwart: accept QG105 -- after a JSON key\", e: [&y \"f # g\"]}
--- |
# stalwart: accept QG105 -- the document's own block, at the margin
...
# alone
";
        assert_eq!(
            lines(&of("agent.yaml", text)),
            vec![
                (1, 12, " stalwart: accept QG105 -- a comment"),
                (4, 12, " real"),
                (5, 14, " after an apostrophe"),
                (28, 1, " alone"),
            ]
        );
    }

    #[test]
    fn python_comments_are_the_parsers() {
        let text = "\
x = \"# stalwart: accept QG105 -- in a string\"  # stalwart: accept QG105 -- real
def f():
    \"\"\"
    # stalwart: accept QG105 -- in a docstring
    \"\"\"
    return 1  # two
";
        assert_eq!(
            lines(&of("tools.py", text)),
            vec![(1, 48, " stalwart: accept QG105 -- real"), (6, 15, " two")]
        );
    }

    #[test]
    fn other_files_have_no_comments_here() {
        assert!(of("graph.json", "{\"a\": \"# stalwart: accept QG105 -- x\"}").is_empty());
        assert!(of("policy.co", "# stalwart: accept QG105 -- x").is_empty());
    }
}
