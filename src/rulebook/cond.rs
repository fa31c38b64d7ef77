//! Conditions of a rulebook's `if`, `else if`/`elif` and `while` lines, read as Boolean formulas
//! over atoms (SPEC 5: "the conjunction of the `if`/`when` conditions over facts").
//!
//! Both Colang versions write Python-like expressions. `not`, `and`, `or` and parentheses are
//! read as logic; `True`/`False` as constants; everything else is an **atom** whose truth the
//! compiler does not know: a bare variable (`$order_paid`, `$result.is_blocked`) is true when the
//! value is truthy, and a comparison or call (`$status == "paid"`, `len($x) > 0`) is an atom of
//! its own. Two atoms with the same text (spaces aside) are the same atom. An expression the
//! reader cannot follow is one atom, whole, reading the variables it names: never an error, and
//! never stronger than what was written (the atom may be either, so nothing is proved from it).

use std::collections::HashMap;
use std::fmt::Write as _;

/// Nesting deeper than this is read as one opaque atom (no recursion blow-up on hostile input).
const MAX_DEPTH: usize = 64;

/// A Boolean formula over atoms (indices into an [`Atoms`] table).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cond {
    /// Always holds (no condition).
    True,
    /// Never holds.
    False,
    /// The atom with this index.
    Atom(usize),
    /// Negation.
    Not(Box<Cond>),
    /// Conjunction (empty: true).
    And(Vec<Cond>),
    /// Disjunction (empty: false).
    Or(Vec<Cond>),
}

/// One atom: what it says and which variables it reads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Atom {
    /// The atom as written, spaces normalised (`$order_paid`, `$status == "paid"`).
    pub(crate) text: String,
    /// For a bare variable (`$x`, `$x.field`): the variable's name without `$` and fields (`x`).
    pub(crate) var: Option<String>,
    /// Every variable the atom reads, without `$`, in order of first appearance.
    pub(crate) reads: Vec<String>,
}

/// The atoms of one rulebook, shared by all its conditions.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Atoms {
    /// The atoms; [`Cond::Atom`] indexes this.
    pub(crate) list: Vec<Atom>,
    /// Each atom's index by its text (rebuilt when it lags `list`, as after reading a record):
    /// interning stays linear in the rulebook's size.
    #[serde(skip)]
    index: HashMap<String, usize>,
}

impl PartialEq for Atoms {
    fn eq(&self, other: &Atoms) -> bool {
        self.list == other.list
    }
}

impl Eq for Atoms {}

impl Atoms {
    /// The index of the atom written `text` (normalised), adding it if new.
    fn intern(&mut self, text: &str) -> usize {
        let text = normalise(text);
        if self.index.len() != self.list.len() {
            self.index = self
                .list
                .iter()
                .enumerate()
                .map(|(i, a)| (a.text.clone(), i))
                .collect();
        }
        if let Some(&i) = self.index.get(&text) {
            return i;
        }
        let reads = variables(&text);
        let var = bare_variable(&text);
        self.index.insert(text.clone(), self.list.len());
        self.list.push(Atom { text, var, reads });
        self.list.len() - 1
    }

    /// Reads `expr` (an `if`/`while` condition as written) into a formula, interning its atoms.
    pub(crate) fn read(&mut self, expr: &str) -> Cond {
        let toks = tokenize(expr);
        let mut p = Parser {
            toks: &toks,
            pos: 0,
            depth: 0,
            ranges: Vec::new(),
        };
        match p.or() {
            Some(c) if p.pos == toks.len() => c,
            _ => Cond::Atom(self.intern_raw(expr)),
        }
        .resolve(self, &toks, &p.ranges)
    }

    fn intern_raw(&mut self, expr: &str) -> usize {
        self.intern(expr.trim())
    }

    /// Renders `c` in the rulebook's own words (`$a and not $b`).
    pub fn show(&self, c: &Cond) -> String {
        let mut out = String::new();
        self.show_into(c, &mut out, 0);
        out
    }

    fn show_into(&self, c: &Cond, out: &mut String, prec: u8) {
        match c {
            Cond::True => out.push_str("True"),
            Cond::False => out.push_str("False"),
            Cond::Atom(i) => {
                let t = self.list.get(*i).map_or("?", |a| a.text.as_str());
                let simple = !t.contains(' ');
                if simple || prec == 0 {
                    out.push_str(t);
                } else {
                    let _ = write!(out, "({t})");
                }
            }
            Cond::Not(x) => {
                out.push_str("not ");
                self.show_into(x, out, 3);
            }
            Cond::And(xs) | Cond::Or(xs) => {
                let (word, me) = if matches!(c, Cond::And(_)) {
                    (" and ", 2)
                } else {
                    (" or ", 1)
                };
                if xs.is_empty() {
                    out.push_str(if me == 2 { "True" } else { "False" });
                    return;
                }
                let paren = prec > me && xs.len() > 1;
                if paren {
                    out.push('(');
                }
                for (k, x) in xs.iter().enumerate() {
                    if k > 0 {
                        out.push_str(word);
                    }
                    self.show_into(x, out, me + 1);
                }
                if paren {
                    out.push(')');
                }
            }
        }
    }
}

impl Cond {
    /// The conjunction of `self` and `other`, flattened, `True` dropped.
    pub(crate) fn and(self, other: Cond) -> Cond {
        let mut parts = Vec::new();
        for c in [self, other] {
            match c {
                Cond::True => {}
                Cond::And(xs) => parts.extend(xs),
                c => parts.push(c),
            }
        }
        match parts.len() {
            0 => Cond::True,
            1 => parts.pop().unwrap_or(Cond::True),
            _ => Cond::And(parts),
        }
    }

    /// Atoms and operators in the formula (constants count one): the measure of the
    /// condition-size budget ([`super::budget::Budgets::condition`]).
    pub(crate) fn size(&self) -> usize {
        match self {
            Cond::True | Cond::False | Cond::Atom(_) => 1,
            Cond::Not(x) => 1 + x.size(),
            Cond::And(xs) | Cond::Or(xs) => 1 + xs.iter().map(Cond::size).sum::<usize>(),
        }
    }

    /// How deep the formula nests (an atom or a constant is 1): the measure of the nesting limit
    /// ([`super::budget::NESTING`]).
    pub(crate) fn depth(&self) -> usize {
        match self {
            Cond::True | Cond::False | Cond::Atom(_) => 1,
            Cond::Not(x) => 1 + x.depth(),
            Cond::And(xs) | Cond::Or(xs) => 1 + xs.iter().map(Cond::depth).max().unwrap_or(0),
        }
    }

    /// The negation of `self` (double negation removed).
    pub(crate) fn negate(self) -> Cond {
        match self {
            Cond::True => Cond::False,
            Cond::False => Cond::True,
            Cond::Not(x) => *x,
            c => Cond::Not(Box::new(c)),
        }
    }

    /// The formula in negation normal form: `Not` only around atoms.
    pub(crate) fn nnf(&self) -> Cond {
        self.nnf_in(false)
    }

    fn nnf_in(&self, neg: bool) -> Cond {
        match (self, neg) {
            (Cond::True, false) | (Cond::False, true) => Cond::True,
            (Cond::True, true) | (Cond::False, false) => Cond::False,
            (Cond::Atom(i), false) => Cond::Atom(*i),
            (Cond::Atom(i), true) => Cond::Not(Box::new(Cond::Atom(*i))),
            (Cond::Not(x), n) => x.nnf_in(!n),
            (Cond::And(xs), false) | (Cond::Or(xs), true) => {
                Cond::And(xs.iter().map(|x| x.nnf_in(neg)).collect())
            }
            (Cond::Or(xs), false) | (Cond::And(xs), true) => {
                Cond::Or(xs.iter().map(|x| x.nnf_in(neg)).collect())
            }
        }
    }

    /// What the formula still says once the atoms `stale` picks may have changed (a variable
    /// they read was assigned again): in negation normal form, each such atom's literal becomes
    /// true. The result is implied by the formula under any new value of those atoms, so no
    /// route is lost, and a route never carries a condition about a value it has overwritten.
    pub(crate) fn forget(&self, stale: &dyn Fn(usize) -> bool) -> Cond {
        fn go(c: &Cond, stale: &dyn Fn(usize) -> bool) -> Cond {
            match c {
                Cond::Atom(i) if stale(*i) => Cond::True,
                Cond::Not(x) if matches!(**x, Cond::Atom(i) if stale(i)) => Cond::True,
                Cond::And(xs) => xs.iter().fold(Cond::True, |acc, x| acc.and(go(x, stale))),
                Cond::Or(xs) => {
                    let parts: Vec<Cond> = xs.iter().map(|x| go(x, stale)).collect();
                    if parts.contains(&Cond::True) {
                        Cond::True
                    } else {
                        Cond::Or(parts)
                    }
                }
                c => c.clone(),
            }
        }
        let mut any = Vec::new();
        self.atoms(&mut any);
        if !any.iter().any(|(a, _)| stale(*a)) {
            return self.clone();
        }
        go(&self.nnf(), stale)
    }

    /// Every atom index the formula mentions, with whether it occurs under a negation.
    pub(crate) fn atoms(&self, out: &mut Vec<(usize, bool)>) {
        self.atoms_in(false, out);
    }

    fn atoms_in(&self, neg: bool, out: &mut Vec<(usize, bool)>) {
        match self {
            Cond::True | Cond::False => {}
            Cond::Atom(i) => out.push((*i, neg)),
            Cond::Not(x) => x.atoms_in(!neg, out),
            Cond::And(xs) | Cond::Or(xs) => xs.iter().for_each(|x| x.atoms_in(neg, out)),
        }
    }

    /// Replaces the parser's placeholder atoms (indices into `ranges`, above [`PLACEHOLDER`])
    /// by interned atoms.
    fn resolve(self, atoms: &mut Atoms, toks: &[Tok<'_>], ranges: &[(usize, usize)]) -> Cond {
        match self {
            Cond::Atom(i) if i >= PLACEHOLDER => {
                let (a, b) = ranges.get(i - PLACEHOLDER).copied().unwrap_or((0, 0));
                let text = join(toks.get(a..b).unwrap_or(&[]));
                Cond::Atom(atoms.intern(&text))
            }
            Cond::Not(x) => Cond::Not(Box::new(x.resolve(atoms, toks, ranges))),
            Cond::And(xs) => Cond::And(
                xs.into_iter()
                    .map(|x| x.resolve(atoms, toks, ranges))
                    .collect(),
            ),
            Cond::Or(xs) => Cond::Or(
                xs.into_iter()
                    .map(|x| x.resolve(atoms, toks, ranges))
                    .collect(),
            ),
            c => c,
        }
    }
}

/// Placeholder atom indices (the parser's atoms before they are interned) start here; the
/// placeholder `PLACEHOLDER + k` is the token range `ranges[k]`.
const PLACEHOLDER: usize = 1 << 40;

/// A token of a condition, borrowing the condition's text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Open,
    Close,
    Other(&'a str),
}

fn tokenize(s: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    let word_char = |c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == '.';
    while let Some((start, c)) = it.next() {
        if c.is_whitespace() {
            continue;
        }
        if c == '(' {
            out.push(Tok::Open);
        } else if c == ')' {
            out.push(Tok::Close);
        } else if "[{]}".contains(c) {
            out.push(Tok::Other(&s[start..start + c.len_utf8()]));
        } else if c == '"' || c == '\'' {
            // Up to the closing quote (a backslash escapes the next character), or the end.
            let mut escaped = false;
            let mut end = s.len();
            for (i, d) in it.by_ref() {
                if escaped {
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == c {
                    end = i + d.len_utf8();
                    break;
                }
            }
            out.push(Tok::Other(&s[start..end]));
        } else if word_char(c) {
            let end = scan_while(s, &mut it, &word_char);
            out.push(Tok::Word(&s[start..end]));
        } else {
            let end = scan_while(s, &mut it, &|d: char| {
                !d.is_whitespace() && !d.is_alphanumeric() && !"()[]{}\"'_$.".contains(d)
            });
            out.push(Tok::Other(&s[start..end]));
        }
    }
    out
}

/// Takes the characters `keep` accepts; returns the byte offset after them.
fn scan_while(
    s: &str,
    it: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    keep: &dyn Fn(char) -> bool,
) -> usize {
    while let Some(&(_, d)) = it.peek() {
        if !keep(d) {
            break;
        }
        it.next();
    }
    it.peek().map_or(s.len(), |&(i, _)| i)
}

fn join(toks: &[Tok<'_>]) -> String {
    let mut s = String::new();
    for (k, t) in toks.iter().enumerate() {
        let piece = match t {
            Tok::Word(w) | Tok::Other(w) => w,
            Tok::Open => "(",
            Tok::Close => ")",
        };
        let glue = k > 0
            && !matches!(t, Tok::Close | Tok::Open)
            && !matches!(toks[k - 1], Tok::Open)
            && !matches!(t, Tok::Other(o) if *o == "," || *o == "]" || *o == "}")
            && !matches!(&toks[k - 1], Tok::Other(o) if *o == "[" || *o == "{");
        if glue {
            s.push(' ');
        }
        s.push_str(piece);
    }
    s
}

struct Parser<'a> {
    toks: &'a [Tok<'a>],
    pos: usize,
    depth: usize,
    /// The token ranges of the placeholder atoms made so far.
    ranges: Vec<(usize, usize)>,
}

impl Parser<'_> {
    fn word(&self, w: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Word(x)) if *x == w)
    }

    fn or(&mut self) -> Option<Cond> {
        let mut xs = vec![self.and()?];
        while self.word("or") {
            self.pos += 1;
            xs.push(self.and()?);
        }
        Some(if xs.len() == 1 {
            xs.pop()?
        } else {
            Cond::Or(xs)
        })
    }

    fn and(&mut self) -> Option<Cond> {
        let mut xs = vec![self.not()?];
        while self.word("and") {
            self.pos += 1;
            xs.push(self.not()?);
        }
        Some(if xs.len() == 1 {
            xs.pop()?
        } else {
            Cond::And(xs)
        })
    }

    fn not(&mut self) -> Option<Cond> {
        if self.word("not") {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return None;
            }
            self.pos += 1;
            let x = self.not()?;
            self.depth = self.depth.saturating_sub(1);
            return Some(x.negate());
        }
        self.primary()
    }

    /// A parenthesised formula, a constant, or an atom: the tokens up to the next top-level
    /// `and`/`or` or closing parenthesis.
    fn primary(&mut self) -> Option<Cond> {
        if matches!(self.toks.get(self.pos), Some(Tok::Open)) {
            // A parenthesised formula, unless the parenthesis is followed by more atom text
            // (`($a + 1) > 2`): then the whole is an atom.
            let (save, depth) = (self.pos, self.depth);
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return None;
            }
            self.pos += 1;
            if let Some(c) = self.or() {
                if matches!(self.toks.get(self.pos), Some(Tok::Close)) {
                    self.pos += 1;
                    self.depth -= 1;
                    if self.at_boundary() {
                        return Some(c);
                    }
                }
            }
            self.depth = depth;
            self.pos = save;
        }
        let start = self.pos;
        let mut level = 0usize;
        while let Some(t) = self.toks.get(self.pos) {
            match t {
                Tok::Open => level += 1,
                Tok::Close if level == 0 => break,
                Tok::Close => level -= 1,
                Tok::Word(w) if level == 0 && (*w == "and" || *w == "or") => break,
                _ => {}
            }
            self.pos += 1;
        }
        if self.pos == start || level != 0 {
            return None;
        }
        match &self.toks[start..self.pos] {
            [Tok::Word(w)] if *w == "True" || *w == "true" => return Some(Cond::True),
            [Tok::Word(w)] if *w == "False" || *w == "false" || *w == "None" => {
                return Some(Cond::False)
            }
            _ => {}
        }
        self.ranges.push((start, self.pos));
        Some(Cond::Atom(PLACEHOLDER + self.ranges.len() - 1))
    }

    fn at_boundary(&self) -> bool {
        match self.toks.get(self.pos) {
            None | Some(Tok::Close) => true,
            Some(Tok::Word(w)) => *w == "and" || *w == "or",
            _ => false,
        }
    }
}

/// Collapses runs of whitespace to one space and trims.
fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `$variables` an expression reads (outside string literals), without `$` and fields.
pub(crate) fn variables(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == '\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else if c == '$' {
            let start = i + 1;
            let mut j = start;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            if j > start {
                let name: String = chars[start..j].iter().collect();
                if !out.contains(&name) {
                    out.push(name);
                }
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// `x` for an atom that is only a variable reference (`$x`, `$x.field.sub`).
fn bare_variable(text: &str) -> Option<String> {
    let rest = text.strip_prefix('$')?;
    let ok = !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    if !ok {
        return None;
    }
    let name = rest.split('.').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> (Cond, Atoms) {
        let mut a = Atoms::default();
        let c = a.read(s);
        (c, a)
    }

    #[test]
    fn reads_logic_and_atoms() {
        let (c, a) = read("$order_paid and not ($banned or $status == \"closed\")");
        assert_eq!(
            c,
            Cond::And(vec![
                Cond::Atom(0),
                Cond::Not(Box::new(Cond::Or(vec![Cond::Atom(1), Cond::Atom(2)])))
            ])
        );
        assert_eq!(a.list[0].var.as_deref(), Some("order_paid"));
        assert_eq!(a.list[2].text, "$status == \"closed\"");
        assert_eq!(a.list[2].var, None);
        assert_eq!(a.list[2].reads, vec!["status".to_string()]);
        assert_eq!(
            a.show(&c),
            "$order_paid and not ($banned or ($status == \"closed\"))"
        );
    }

    #[test]
    fn same_text_is_same_atom_and_fields_read_the_variable() {
        let (c, a) = read("$result.is_blocked or  $result.is_blocked");
        assert_eq!(c, Cond::Or(vec![Cond::Atom(0), Cond::Atom(0)]));
        assert_eq!(a.list[0].var.as_deref(), Some("result"));
    }

    #[test]
    fn arithmetic_in_parentheses_is_one_atom() {
        let (c, a) = read("($score + 1) > 0.5");
        assert_eq!(c, Cond::Atom(0));
        assert_eq!(a.list[0].reads, vec!["score".to_string()]);
    }

    #[test]
    fn constants_and_unreadable_text() {
        assert_eq!(read("True").0, Cond::True);
        assert_eq!(read("not False").0, Cond::True);
        let (c, a) = read("$a and (");
        assert_eq!(c, Cond::Atom(0));
        assert_eq!(a.list[0].text, "$a and (");
        let deep = format!("{}$x{}", "(".repeat(500), ")".repeat(500));
        let (c, _) = read(&deep);
        assert_eq!(c, Cond::Atom(0));
    }

    #[test]
    fn strings_do_not_hide_variables_or_split_words() {
        let (c, a) = read("$x == \"a and b\" and $y");
        assert_eq!(c, Cond::And(vec![Cond::Atom(0), Cond::Atom(1)]));
        assert_eq!(a.list[0].text, "$x == \"a and b\"");
        assert_eq!(variables("'$no' + $yes"), vec!["yes".to_string()]);
    }
}
