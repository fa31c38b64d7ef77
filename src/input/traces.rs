//! Traces of real runs (SPEC 2.4), read for the unmodelled-path rule (QG016, SPEC 4).
//!
//! A traces file is JSON Lines: one JSON object a line,
//!
//! ```json
//! {"run": "r-0193", "steps": [{"node": "agent"}, {"node": "tools", "tool": "charge_card"}]}
//! ```
//!
//! - `run`: the run's id, a JSON string or number (kept as written: `7`, `"r-0193"`);
//! - `steps`: the nodes the run went through, in order; each `{"node": id, "tool": name?}`, where
//!   `node` is the node's qualified id in the flattened graph (`kb/retrieve` for node `retrieve` of
//!   subgraph node `kb`) and `tool`, when present (and not `null`), a tool the node called there.
//!
//! Blank lines are skipped and unknown keys ignored. A node the export does not have, or a tool the
//! catalogue does not have, is not an error: traces come from real runs of a graph that may differ
//! from the one verified, and that difference is what QG016 looks for. Anything else that is not of
//! this shape is an [`InputError`] at its line and column (exit 2); nothing here panics.

use std::path::Path;

use super::tree::{self, Node, Value};
use crate::input::error::InputError;
use crate::input::source::{Loc, SourceMap};

/// The help every JSON syntax error of a traces file carries.
const SYNTAX_HELP: &str = "each line of a traces file is one whole JSON object, \
    `{\"run\": id, \"steps\": [{\"node\": id, \"tool\": name}, ...]}`: fix the JSON syntax here \
    (a missing comma, quote or bracket, or an object written over several lines, is the usual cause)";

/// One traced run: a line of the traces file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The run's id as written: the text of a JSON string, or a JSON number's digits.
    pub run: String,
    /// The steps, in the order the run took them.
    pub steps: Vec<TraceStep>,
    /// Where the line's object starts.
    pub loc: Loc,
}

/// One step of a traced run: a node the run was at, and the tool it called there, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStep {
    /// The node's qualified id, as written (it may name no node of the export).
    pub node: String,
    /// The tool called at this step, as written (it may name no tool of the catalogue).
    pub tool: Option<String>,
    /// Where the step's `node` value is written.
    pub loc: Loc,
    /// Where the step's `tool` value is written, when it has one.
    pub(crate) tool_loc: Option<Loc>,
}

/// Reads the traces file at `path` into `sources` (so findings can point at its lines) and returns
/// its runs in file order.
///
/// Errors (exit 2), each at the line and column of the offending value with the fix: the file
/// cannot be read (missing, not a regular file, not UTF-8); a line is not JSON; a line is not an
/// object; it has no `run`, or a `run` that is neither a string nor a number; `steps` is missing or
/// not a list; a step is not an object, has no `node`, or a `node` that is not a string; a `tool`
/// that is neither a string nor `null`.
pub fn read_traces(sources: &mut SourceMap, path: &Path) -> Result<Vec<Trace>, InputError> {
    let display = path.display().to_string();
    let file = tree::read_file(sources, path, display).map_err(|e| InputError::io(path, e))?;
    let sources: &SourceMap = sources;
    let lines = u32::try_from(sources.file(file).text.lines().count()).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    for line in 1..=lines {
        if sources.file(file).line_text(line).trim().is_empty() {
            continue;
        }
        let node = tree::parse_json_line(sources, file, line, SYNTAX_HELP)?;
        out.push(trace(sources, &node)?);
    }
    Ok(out)
}

/// An error at `loc` with the fix `help`.
fn err(sources: &SourceMap, loc: Loc, msg: String, help: &str) -> InputError {
    InputError::at(sources, loc, msg, help)
}

/// True for a JSON string (a quoted scalar).
fn is_string(n: &Node) -> bool {
    matches!(n.value, Value::Scalar { plain: false, .. })
}

/// One line's object as a [`Trace`].
fn trace(sources: &SourceMap, node: &Node) -> Result<Trace, InputError> {
    let Some(entries) = node.as_map() else {
        return Err(err(
            sources,
            node.loc,
            format!(
                "a trace line must be a JSON object, found {}",
                node.describe()
            ),
            "write each run as `{\"run\": id, \"steps\": [...]}` on a line of its own",
        )
        .with_label("expected an object"));
    };
    let get = |key: &str| entries.iter().find(|e| e.key == key);
    let run = match get("run") {
        None => {
            return Err(err(
                sources,
                node.loc,
                "the trace has no `run`".to_string(),
                "add `\"run\": ` with the run's id, a string or a number",
            ))
        }
        Some(e) => match &e.value.value {
            Value::Scalar { text, .. } if !e.value.is_null() && e.value.as_bool().is_none() => {
                text.clone()
            }
            _ => {
                return Err(err(
                    sources,
                    e.value.loc,
                    format!(
                        "`run` must be a string or a number, found {}",
                        e.value.describe()
                    ),
                    "write the run's id as a string (`\"run\": \"r-17\"`) or a number",
                )
                .with_label("expected a string or a number"))
            }
        },
    };
    let steps =
        match get("steps") {
            None => return Err(err(
                sources,
                node.loc,
                format!("the trace of run '{run}' has no `steps`"),
                "add `\"steps\": [{\"node\": id}, ...]`, the nodes the run went through in order",
            )),
            Some(e) => match &e.value.value {
                Value::Seq(items) => items,
                _ => {
                    return Err(err(
                        sources,
                        e.value.loc,
                        format!(
                            "`steps` of run '{run}' must be a list, found {}",
                            e.value.describe()
                        ),
                        "write the steps as a list: `\"steps\": [{\"node\": id}, ...]`",
                    )
                    .with_label("expected a list"))
                }
            },
        };
    let steps = steps
        .iter()
        .map(|s| step(sources, &run, s))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Trace {
        run,
        steps,
        loc: node.loc,
    })
}

/// One step's object as a [`TraceStep`].
fn step(sources: &SourceMap, run: &str, s: &Node) -> Result<TraceStep, InputError> {
    let Some(entries) = s.as_map() else {
        return Err(err(
            sources,
            s.loc,
            format!(
                "a step of run '{run}' must be an object, found {}",
                s.describe()
            ),
            "write each step as `{\"node\": id}`, or `{\"node\": id, \"tool\": name}` for a call",
        )
        .with_label("expected an object"));
    };
    let get = |key: &str| entries.iter().find(|e| e.key == key).map(|e| &e.value);
    let node = match get("node") {
        Some(n) if is_string(n) => n,
        Some(n) => {
            return Err(err(
                sources,
                n.loc,
                format!(
                    "`node` of a step of run '{run}' must be a string, found {}",
                    n.describe()
                ),
                "write the node's qualified id as a string: `\"node\": \"kb/retrieve\"`",
            )
            .with_label("expected a string"))
        }
        None => {
            return Err(err(
                sources,
                s.loc,
                format!("a step of run '{run}' has no `node`"),
                "add `\"node\": id`, the qualified id of the node the run was at",
            ))
        }
    };
    let tool = match get("tool") {
        None => None,
        Some(t) if t.is_null() => None,
        Some(t) if is_string(t) => Some(t),
        Some(t) => {
            return Err(err(
                sources,
                t.loc,
                format!(
                    "`tool` of a step of run '{run}' must be a string, found {}",
                    t.describe()
                ),
                "write the tool's name as a string (`\"tool\": \"charge_card\"`), or leave `tool` out for a step with no call",
            )
            .with_label("expected a string"))
        }
    };
    let text = |n: &Node| match &n.value {
        Value::Scalar { text, .. } => text.clone(),
        _ => String::new(),
    };
    Ok(TraceStep {
        node: text(node),
        tool: tool.map(text),
        loc: node.loc,
        tool_loc: tool.map(|t| t.loc),
    })
}
