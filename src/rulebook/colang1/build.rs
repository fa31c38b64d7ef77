//! The parser's working tree (NeMo's nested lists, kept in an arena so open blocks can be
//! appended to by index) and its conversion into the [`super::Element`] tree.

use super::{Element, ElementKind, WhenBranch};

/// An element still being filled in.
#[derive(Debug, Clone)]
pub(super) struct Raw {
    pub(crate) line: usize,
    pub(crate) column: usize,
    /// `when`/`else when` when the line it was read from starts with that keyword.
    pub(crate) kw: Option<&'static str>,
    pub(crate) kind: RawKind,
}

/// Leaves are final; blocks point at arena lists.
#[derive(Debug, Clone)]
pub(super) enum RawKind {
    Leaf(ElementKind),
    If(usize),
    While { cond: String, body: usize },
    Any(usize),
    Infer(usize),
}

/// An entry of a list: an element, or a `when` branch (NeMo's nested list).
#[derive(Debug, Clone)]
pub(super) enum Item {
    El(Raw),
    When(usize),
}

/// An `if` being filled in.
#[derive(Debug, Clone)]
pub(super) struct IfData {
    pub(crate) cond: String,
    pub(crate) elif: bool,
    pub(crate) then: usize,
    pub(crate) else_: Option<usize>,
}

/// Lists and ifs.
#[derive(Debug, Default)]
pub(super) struct Arena {
    pub(crate) lists: Vec<Vec<Item>>,
    pub(crate) ifs: Vec<IfData>,
}

impl Arena {
    /// A new empty list's index.
    pub(super) fn new_list(&mut self) -> usize {
        self.lists.push(Vec::new());
        self.lists.len() - 1
    }

    /// Append to a list (ignored for a bad index).
    pub(super) fn push(&mut self, list: usize, item: Item) {
        if let Some(l) = self.lists.get_mut(list) {
            l.push(item);
        }
    }

    /// The items of a list, built (`when` branches grouped, as NeMo's reading groups them).
    /// Nesting is bounded by the parser's depth cap, so the recursion is too.
    pub(super) fn build(&self, list: usize) -> Vec<Element> {
        let items = self.lists.get(list).map(Vec::as_slice).unwrap_or(&[]);
        self.build_items(items)
    }

    fn build_items(&self, items: &[Item]) -> Vec<Element> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < items.len() {
            if let Item::When(_) = items[i] {
                let mut branches = Vec::new();
                while let Some(Item::When(l)) = items.get(i) {
                    branches.push(self.branch(*l));
                    i += 1;
                }
                let line = branches.first().and_then(|b| b.line);
                let column = branches
                    .first()
                    .and_then(|b| b.on.as_ref().map(|e| e.column))
                    .unwrap_or(1);
                out.push(Element {
                    line: line.unwrap_or(0),
                    column,
                    kind: ElementKind::When { branches },
                });
                continue;
            }
            if let Item::El(raw) = &items[i] {
                out.push(self.element(raw));
            }
            i += 1;
        }
        out
    }

    fn branch(&self, list: usize) -> WhenBranch {
        let items = self.lists.get(list).map(Vec::as_slice).unwrap_or(&[]);
        let (keyword, line) = match items.first() {
            Some(Item::El(r)) => (r.kw.map(str::to_string), Some(r.line)),
            _ => (None, None),
        };
        let on = items
            .first()
            .and_then(|_| self.build_items(&items[..1]).into_iter().next())
            .map(Box::new);
        let body = if items.is_empty() {
            Vec::new()
        } else {
            self.build_items(&items[1..])
        };
        WhenBranch {
            keyword,
            line,
            on,
            body,
        }
    }

    fn element(&self, raw: &Raw) -> Element {
        let kind = match &raw.kind {
            RawKind::Leaf(k) => k.clone(),
            RawKind::If(id) => match self.ifs.get(*id) {
                Some(d) => ElementKind::If {
                    cond: d.cond.clone(),
                    elif: d.elif,
                    then: self.build(d.then),
                    else_: d.else_.map(|e| self.build(e)),
                },
                None => ElementKind::Continue,
            },
            RawKind::While { cond, body } => ElementKind::While {
                cond: cond.clone(),
                body: self.build(*body),
            },
            RawKind::Any(l) => ElementKind::Any {
                body: self.build(*l),
            },
            RawKind::Infer(l) => ElementKind::CreateEvent {
                body: self.build(*l),
            },
        };
        Element {
            line: raw.line,
            column: raw.column,
            kind,
        }
    }
}
