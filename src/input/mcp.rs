//! `stalwart catalogue from-mcp TOOLS.json` (issue 16): an MCP server's `tools/list` result read
//! into a `qls-catalogue/1` (SPEC 2.3), by the mapping the LangGraph exporter uses for tools loaded
//! through langchain-mcp-adapters (`python/stalwart_export/_mcp.py`).
//!
//! The file is what `tools/list` answers: `{"tools": [...]}`, or the whole JSON-RPC response
//! `{"jsonrpc": "2.0", "id": 1, "result": {"tools": [...]}}`. Each tool's `name`, `description`
//! and `inputSchema.properties` (as `args`: `type`, `description`, `enum`, `items`, `format`), and
//! its `annotations`, which the server declared:
//!
//! | annotation (given, or MCP's default) | word |
//! |---|---|
//! | `readOnlyHint: true` | `kind: read` |
//! | `readOnlyHint: false` (the default) | `kind: write` |
//! | `destructiveHint` (on a write; default true) | `destructive` |
//! | `idempotentHint` (on a write; default false) | `idempotency` |
//! | `openWorldHint: true` (the default) | `reads_outside` (what it returns may be the open world's content), and `sends_out` on a write |
//!
//! A hint the server did not give takes MCP's default (the specification's `ToolAnnotations`:
//! `readOnlyHint` false, `destructiveHint` true, `idempotentHint` false, `openWorldHint` true), so a
//! tool with no annotation is a destructive write reaching the open world, never a tool of unknown
//! kind (issue 28). Nothing is guessed from a name. Errors, each at its place in the file with the
//! fix (exit 2): unreadable or not JSON, no `tools` list, a tool that is not a mapping or has no
//! `name`, two tools of one name, a hint that is not a boolean, `annotations` or `inputSchema` of
//! the wrong shape.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map as JsonMap, Value as Json};

use super::tree::{self, Node, Reader};
use crate::input::error::InputError;
use crate::input::source::SourceMap;

/// The hints read, in the order MCP's `ToolAnnotations` lists them.
const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// The JSON-schema keys of an argument kept in `args` (as the exporter keeps them).
const ARG_KEYS: [&str; 5] = ["type", "description", "enum", "items", "format"];

/// The catalogue of the tools a `tools/list` result lists. Errors: see the module's documentation.
pub(crate) fn catalogue_from_mcp(path: &Path) -> Result<Json, InputError> {
    let mut sources = SourceMap::default();
    let id = tree::read_file(&mut sources, path, path.display().to_string())
        .map_err(|e| InputError::io(path, e))?;
    let r = Reader { sources: &sources };
    let root = tree::parse(&sources, id)?;
    let top = r.map(&root, "the tools/list result")?;
    let list = match (top.get_some("tools"), top.get_some("result")) {
        (Some(t), _) => t,
        (None, Some(res)) => r
            .map(res, "`result`")?
            .get_some("tools")
            .ok_or_else(|| no_tools(r, res))?,
        (None, None) => return Err(no_tools(r, &root)),
    };
    let mut tools: BTreeMap<String, Json> = BTreeMap::new();
    for item in r.seq(list, "`tools`")? {
        let m = r.map(item, "a tool of `tools`")?;
        let name = r.req_text(
            m,
            "name",
            "the `name` of a tool of `tools`",
            "give each tool its `name`, as the server lists it",
        )?;
        if tools.contains_key(&name.name) {
            return Err(r
                .err(
                    name.loc,
                    format!("two tools are named '{}'", name.name),
                    "a server lists each tool once: keep one entry per name",
                )
                .with_label("listed twice"));
        }
        let mut entry = JsonMap::new();
        let mut hints: BTreeMap<&str, bool> = BTreeMap::new();
        if let Some(a) = m.get_some("annotations") {
            let am = r.map(a, &format!("`annotations` of tool '{}'", name.name))?;
            for h in HINTS {
                if let Some(v) = am.get_some(h) {
                    hints.insert(h, r.bool(v, &format!("`{h}` of tool '{}'", name.name))?);
                }
            }
        }
        words(&hints, &mut entry);
        if let Some(d) = r.opt_text(
            m,
            "description",
            &format!("`description` of tool '{}'", name.name),
        )? {
            entry.insert("description".into(), json!(d.name));
        }
        entry.insert(
            "args".into(),
            Json::Object(args(r, m.get_some("inputSchema"), &name.name)?),
        );
        tools.insert(name.name, Json::Object(entry));
    }
    let tools: JsonMap<String, Json> = tools.into_iter().collect();
    Ok(json!({"format": "qls-catalogue/1", "tools": tools}))
}

/// MCP's default for a hint the server did not give.
fn hint(h: &BTreeMap<&str, bool>, name: &str) -> bool {
    h.get(name).copied().unwrap_or(match name {
        "readOnlyHint" | "idempotentHint" => false,
        _ => true, // destructiveHint, openWorldHint
    })
}

/// The words of a tool's hints, MCP's defaults for those absent (the module's table).
fn words(h: &BTreeMap<&str, bool>, entry: &mut JsonMap<String, Json>) {
    let read = hint(h, "readOnlyHint");
    entry.insert("kind".into(), json!(if read { "read" } else { "write" }));
    if !read {
        entry.insert("destructive".into(), json!(hint(h, "destructiveHint")));
        entry.insert("idempotency".into(), json!(hint(h, "idempotentHint")));
    } else if let Some(i) = h.get("idempotentHint") {
        entry.insert("idempotency".into(), json!(i));
    }
    if hint(h, "openWorldHint") {
        entry.insert("reads_outside".into(), json!(true));
        if !read {
            entry.insert("sends_out".into(), json!(true));
        }
    }
}

/// `args` from a tool's `inputSchema.properties`.
fn args(
    r: Reader<'_>,
    schema: Option<&Node>,
    tool: &str,
) -> Result<JsonMap<String, Json>, InputError> {
    let mut out = JsonMap::new();
    let Some(s) = schema else { return Ok(out) };
    let sm = r.map(s, &format!("`inputSchema` of tool '{tool}'"))?;
    let Some(props) = sm.get_some("properties") else {
        return Ok(out);
    };
    let pm = r.map(props, &format!("`inputSchema.properties` of tool '{tool}'"))?;
    for e in pm.entries {
        let mut arg = JsonMap::new();
        if let Some(am) = e.value.as_map() {
            for x in am.iter().filter(|x| ARG_KEYS.contains(&x.key.as_str())) {
                arg.insert(x.key.clone(), x.value.to_json());
            }
        }
        out.insert(e.key.clone(), Json::Object(arg));
    }
    Ok(out)
}

fn no_tools(r: Reader<'_>, at: &Node) -> InputError {
    r.err(
        at.loc,
        "no `tools` list: this is not a tools/list result",
        "give the JSON a server answers to tools/list: {\"tools\": [{\"name\": ..., \"annotations\": {...}}]}, or the whole JSON-RPC response",
    )
    .with_label("no tools")
}

/// `stalwart catalogue from-mcp TOOLS.json [-o OUT]`: writes the catalogue (to `out`, else
/// standard output). Returns the exit status: 0, or 2 with the error (located in the file) on
/// standard error.
pub(crate) fn run(tools: &Path, out: Option<&Path>) -> i32 {
    let cat = match catalogue_from_mcp(tools) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            return 2;
        }
    };
    let mut text = serde_json::to_string_pretty(&cat).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    let written = match out {
        Some(p) => crate::input::files::write::write_text(
            p,
            &text,
            crate::input::files::write::Mode::Replace,
            &[tools.to_path_buf()],
        )
        .map_err(|e| format!("cannot write {} (-o): {e}", p.display())),
        None => {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            o.write_all(text.as_bytes())
                .and_then(|()| o.flush())
                .map_err(|e| format!("cannot write the catalogue to standard output: {e}"))
        }
    };
    if let Err(e) = written {
        eprintln!(
            "{:?}",
            miette::miette!(help = "check the path and the disk", "{e}")
        );
        return 2;
    }
    0
}
