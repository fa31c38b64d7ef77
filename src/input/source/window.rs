//! A window of a file's lines that any diagnostic renderer can draw safely (issue 14): lines
//! longer than a limit clipped around what is labelled (a minified one-line export can put a
//! label past column 65,535, where renderers that pad with `{:width$}` panic), and every character
//! a terminal would act on ([`crate::input::visible::is_unsafe`]) escaped, with the labels' byte spans
//! carried over into the window's text.

use std::ops::Range;

use super::SourceFile;

/// The longest line a window quotes whole, in characters; longer ones are clipped around the
/// first label on them, with `…` where text was cut.
pub const MAX_WINDOW_LINE: usize = 240;

/// Lines of context shown around the labelled lines (what the renderers ask for).
const CONTEXT: u32 = 1;

/// At most this many lines between the first and the last label; farther labels are dropped
/// (the primary label is always kept).
const MAX_WINDOW_LINES: u32 = 12;

/// The window: its text (whole lines, each ending in `\n`), the 1-based number of its first line
/// in the file, and each requested span mapped into `text` (`None`: not in the window).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    /// The window's lines, clipped and escaped.
    pub(crate) text: String,
    /// The file's line number of the window's first line (1-based).
    pub(crate) first_line: u32,
    /// The spans, in the order asked, as byte ranges of `text`.
    pub(crate) spans: Vec<Option<Range<usize>>>,
}

impl SourceFile {
    /// True when `spans` (byte ranges of the file) can be drawn from the file's own text: every
    /// line a renderer could show around them (from one line before the first labelled line to
    /// one line after the last, the lines between labels included, since a renderer joins
    /// labels that are close) is at most [`MAX_WINDOW_LINE`] characters and holds nothing
    /// [`crate::input::visible::is_unsafe`] but a tab.
    pub(crate) fn drawable(&self, spans: &[Range<usize>]) -> bool {
        let Some(first) = spans.iter().map(|s| self.line_col(s.start).0).min() else {
            return true;
        };
        let last = spans
            .iter()
            .map(|s| self.line_col(s.end.max(s.start)).0)
            .max()
            .unwrap_or(first);
        (first.saturating_sub(CONTEXT).max(1)..=last.saturating_add(CONTEXT)).all(|l| {
            let t = self.line_text(l);
            t.chars().count() <= MAX_WINDOW_LINE
                && !t
                    .chars()
                    .any(|c| c != '\t' && crate::input::visible::is_unsafe(c))
        })
    }

    /// The window around `spans` (byte ranges of the file; the first is the primary one).
    pub(crate) fn window(&self, spans: &[Range<usize>]) -> Window {
        let lines: Vec<(u32, usize, usize)> = spans
            .iter()
            .map(|s| {
                let (l, c) = self.line_col(s.start);
                let end = s.end.max(s.start).min(self.line_end(l));
                let (_, ce) = self.line_col(end);
                (l, c as usize - 1, ce as usize - 1)
            })
            .collect();
        let primary = lines.first().map_or(1, |l| l.0);
        let keep: Vec<bool> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| i == 0 || l.0.abs_diff(primary) <= MAX_WINDOW_LINES)
            .collect();
        let kept = || {
            lines
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(l, _)| l.0)
        };
        let lo = kept().min().unwrap_or(1).saturating_sub(CONTEXT).max(1);
        let last_line = u32::try_from(self.line_starts.len()).unwrap_or(u32::MAX);
        let hi = kept()
            .max()
            .unwrap_or(1)
            .saturating_add(CONTEXT)
            .min(last_line);
        let mut text = String::new();
        let mut spans_out: Vec<Option<Range<usize>>> = vec![None; spans.len()];
        for line in lo..=hi {
            let chars: Vec<char> = self.line_text(line).chars().collect();
            // Clip around the first label on this line (in the order asked), else keep the start.
            let anchor = lines
                .iter()
                .zip(&keep)
                .find(|((l, _, _), k)| **k && *l == line)
                .map_or(0, |((_, c, _), _)| *c);
            let (from, to) = if chars.len() <= MAX_WINDOW_LINE {
                (0, chars.len())
            } else {
                let from = anchor.saturating_sub(MAX_WINDOW_LINE / 3);
                let from = from.min(chars.len() - MAX_WINDOW_LINE);
                (from, from + MAX_WINDOW_LINE)
            };
            // Byte position in `text` of each char index from..=to of the line.
            let mut at: Vec<usize> = Vec::with_capacity(to - from + 1);
            if from > 0 {
                text.push('…');
            }
            for &c in &chars[from..to] {
                at.push(text.len());
                if c == '\t' {
                    text.push(c);
                } else {
                    crate::input::visible::push_escaped(&mut text, c);
                }
            }
            at.push(text.len());
            if to < chars.len() {
                text.push('…');
            }
            let pos = |c: usize| at[c.clamp(from, to) - from];
            for (i, (l, c, ce)) in lines.iter().enumerate() {
                if *l == line && keep[i] {
                    let start = pos(*c);
                    let end = pos((*ce).max(*c)).max(start);
                    spans_out[i] = Some(start..end);
                }
            }
            text.push('\n');
        }
        Window {
            text,
            first_line: lo,
            spans: spans_out,
        }
    }

    /// Byte offset of the end of 1-based `line` (before its line break).
    fn line_end(&self, line: u32) -> usize {
        let li = line.max(1) as usize - 1;
        let start = self.line_starts.get(li).copied().unwrap_or(self.text.len());
        start + self.line_text(line).len()
    }
}

#[cfg(test)]
mod tests {
    use crate::input::source::SourceMap;

    #[test]
    fn a_label_far_along_a_long_line_is_clipped_and_kept() {
        let mut line = "x".repeat(100_000);
        line.push_str("\"kind\": \"toolz\"");
        line.push_str(&"y".repeat(1000));
        let mut m = SourceMap::default();
        let id = m.add(
            "g.json".into(),
            "g.json".into(),
            format!("{{\n{line}\n}}\n"),
        );
        let f = m.file(id);
        let start = f.text.find("\"toolz\"").expect("there");
        let w = f.window(std::slice::from_ref(&(start..start + 7)));
        assert_eq!(w.first_line, 1);
        let span = w.spans[0].clone().expect("kept");
        assert_eq!(&w.text[span], "\"toolz\"");
        assert!(w
            .text
            .lines()
            .all(|l| l.chars().count() <= super::MAX_WINDOW_LINE + 2));
        assert!(!f.drawable(std::slice::from_ref(&(start..start + 7))));
    }

    #[test]
    fn control_characters_are_escaped_and_spans_follow() {
        let mut m = SourceMap::default();
        let id = m.add(
            "a.yaml".into(),
            "a.yaml".into(),
            "a: 1\nname: \"\u{1b}[2J\u{2028}bad\"\nc: 3\nd: 4\n".into(),
        );
        let f = m.file(id);
        let start = f.text.find("bad").expect("there");
        assert!(!f.drawable(std::slice::from_ref(&(start..start + 3))));
        let w = f.window(std::slice::from_ref(&(start..start + 3)));
        assert_eq!(w.first_line, 1);
        assert_eq!(w.text, "a: 1\nname: \"\\u{1b}[2J\\u{2028}bad\"\nc: 3\n");
        let span = w.spans[0].clone().expect("kept");
        assert_eq!(&w.text[span], "bad");
    }

    #[test]
    fn a_long_line_between_two_labels_is_not_drawn_raw() {
        let long = " ".repeat(70_000);
        let text = format!("a: 1\nkind: write\nb: 2\nc:{long}x\nd: 4\nkind: read\ne: 5\n");
        let mut m = SourceMap::default();
        let id = m.add("c.yaml".into(), "c.yaml".into(), text);
        let f = m.file(id);
        let one = f.text.find("kind").expect("there");
        let two = f.text.rfind("kind").expect("there");
        let spans = [two..two + 4, one..one + 4];
        assert!(!f.drawable(&spans));
        let w = f.window(&spans);
        assert_eq!(w.first_line, 1);
        assert!(w
            .text
            .lines()
            .all(|l| l.chars().count() <= super::MAX_WINDOW_LINE + 2));
        assert_eq!(&w.text[w.spans[0].clone().expect("kept")], "kind");
        assert_eq!(&w.text[w.spans[1].clone().expect("kept")], "kind");
    }
}
