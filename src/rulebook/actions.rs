//! The actions a NeMo Guardrails configuration defines in Python beside its rulebook (issue 20,
//! QG010): `actions.py` in the rulebook's folder and every `.py` file under its `actions/`
//! package, the files NeMo's `ActionDispatcher.load_actions_from_path` loads. They are read
//! statically, as the Python tool modules are ([`crate::input::python`]), with tree-sitter:
//!
//! - every top-level function or class decorated `@action` or `@action(...)` (any dotted name
//!   ending in `action`, such as `@nemoguardrails.actions.action(...)`) defines an action;
//! - its name is the decorator's `name=` string, else the function's or class's name, as NeMo's
//!   `action` decorator gives it.
//!
//! What cannot be read statically is an [`InputError`] at its line with the fix: a syntax error,
//! or a `name=` that is not a string literal.

use std::path::{Path, PathBuf};

use tree_sitter::Node as TsNode;

use crate::input::error::InputError;
use crate::input::python;
use crate::input::source::{FileId, Loc, SourceMap};

/// `.py` files an `actions/` package may hold before the rest are passed over.
pub(crate) const MAX_FILES: usize = 500;
/// Folder nesting read below `actions/`.
const MAX_DEPTH: usize = 6;

/// The Python files NeMo would load actions from for a configuration in `folder`: `actions.py`,
/// then the `.py` files under `actions/` (sorted, at most [`MAX_FILES`]). Symlinked folders are
/// not followed.
pub(crate) fn files_beside(folder: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let single = folder.join("actions.py");
    if single.is_file() {
        out.push(single);
    }
    let mut found = Vec::new();
    walk(&folder.join("actions"), 0, &mut found);
    found.sort();
    found.truncate(MAX_FILES);
    out.extend(found);
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let p = e.path();
        if kind.is_dir() {
            walk(&p, depth + 1, out);
        } else if kind.is_file() && p.extension().is_some_and(|x| x == "py") {
            out.push(p);
        }
    }
}

/// The names of the actions the module `file` (in `sources`) defines, in file order. Errors:
/// see the module documentation.
pub(crate) fn read(sources: &SourceMap, file: FileId) -> Result<Vec<String>, InputError> {
    let f = sources.file(file);
    let at = |n: TsNode<'_>| {
        let (line, column) = f.line_col(n.start_byte());
        Loc::new(file, line, column)
    };
    let Some(tree) = python::parse(&f.text) else {
        return Err(InputError::at(
            sources,
            Loc::new(file, 1, 1),
            format!("cannot read {} as Python", f.display),
            "check the file is Python source",
        ));
    };
    let root = tree.root_node();
    if root.has_error() {
        let bad = python::preorder(root)
            .into_iter()
            .find(|n| n.is_error() || n.is_missing())
            .unwrap_or(root);
        return Err(InputError::at(
            sources,
            at(bad),
            format!("a syntax error in {}: Python cannot read this", f.display),
            "fix the module so `python -m py_compile` accepts it; the rulebook's actions are read from it without running it",
        ));
    }
    let src = |n: TsNode<'_>| f.text.get(n.byte_range()).unwrap_or("");
    let mut names = Vec::new();
    let mut cursor = root.walk();
    for top in root.named_children(&mut cursor) {
        if top.kind() != "decorated_definition" {
            continue;
        }
        let Some(def) = top.child_by_field_name("definition") else {
            continue;
        };
        let Some(def_name) = def.child_by_field_name("name") else {
            continue;
        };
        let mut dc = top.walk();
        for d in top
            .named_children(&mut dc)
            .filter(|n| n.kind() == "decorator")
        {
            let Some(expr) = d.named_child(0) else {
                continue;
            };
            let (callee, args) = match expr.kind() {
                "call" => (
                    expr.child_by_field_name("function"),
                    expr.child_by_field_name("arguments"),
                ),
                _ => (Some(expr), None),
            };
            let is_action = callee.is_some_and(|c| match c.kind() {
                "identifier" => src(c) == "action",
                "attribute" => c
                    .child_by_field_name("attribute")
                    .is_some_and(|a| src(a) == "action"),
                _ => false,
            });
            if !is_action {
                continue;
            }
            let mut name = src(def_name).to_string();
            if let Some(args) = args {
                let mut ac = args.walk();
                for a in args.named_children(&mut ac) {
                    if a.kind() != "keyword_argument"
                        || a.child_by_field_name("name").map(src) != Some("name")
                    {
                        continue;
                    }
                    let Some(v) = a.child_by_field_name("value") else {
                        continue;
                    };
                    match python::string_value(&f.text, v) {
                        Some(s) => name = s,
                        None if src(v) == "None" => {}
                        None => {
                            return Err(InputError::at(
                                sources,
                                at(v),
                                format!(
                                    "{} names the action of '{}' with `name={}`, which is not a string: it cannot be read without running Python",
                                    f.display,
                                    src(def_name),
                                    src(v)
                                ),
                                "write the action's name as a string literal (`@action(name=\"check_order\")`)",
                            ));
                        }
                    }
                }
            }
            names.push(name);
            break;
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Result<Vec<String>, String> {
        let mut sources = SourceMap::default();
        let id = sources.add("actions.py".into(), "actions.py".into(), text.to_string());
        read(&sources, id).map_err(|e| e.to_string())
    }

    #[test]
    fn decorated_functions_and_classes_with_their_names() {
        let text = "from nemoguardrails.actions import action\nimport nemoguardrails\n\n@action()\nasync def check_order(context=None):\n    return True\n\n@action(name=\"close ticket\", is_system_action=True)\ndef close(x):\n    pass\n\n@nemoguardrails.actions.action\nclass LookupAction:\n    pass\n\n@other\ndef not_an_action():\n    pass\n\ndef plain():\n    pass\n";
        assert_eq!(
            names(text).expect("reads"),
            vec!["check_order", "close ticket", "LookupAction"]
        );
    }

    #[test]
    fn what_cannot_be_read_statically_is_an_error() {
        let e = names("@action(name=NAME)\ndef f():\n    pass\n").expect_err("not a literal");
        assert!(e.contains("not a string"), "{e}");
        let e = names("def f(:\n").expect_err("syntax");
        assert!(e.contains("syntax error"), "{e}");
    }
}
