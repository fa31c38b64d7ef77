//! QG024 (Unread code, SPEC 12.5): one finding per `opaque` entry of a node, at each place the
//! node runs (a subgraph used at two subgraph nodes gives two), at the entry's location, else the
//! node's.

use super::{finding, Subject};
use crate::findings::{Finding, Primary};
use crate::input::ir::{GraphDef, NodeKind, OpaqueWhat};

/// Deepest subgraph nesting walked (the reader refuses self-containing subgraphs, and the
/// flattener deeper nests, first).
const MAX_DEPTH: usize = 64;

/// QG024: every `opaque` entry of every node of `g` and of the subgraphs its subgraph nodes run
/// (looked up as SPEC 2.2 says: the holding graph's `subgraphs`, then each enclosing graph's).
/// The subject is `<what>:<qualified id>` (`pause:approve`), so the fingerprint holds across
/// unrelated edits; two entries of one `what` on one node are told apart by
/// [`super::unique_fingerprints`].
pub(crate) fn unread_code(g: &GraphDef) -> Vec<Finding> {
    let mut out = Vec::new();
    walk(g, "", &[], 0, &mut out);
    out
}

fn walk(g: &GraphDef, prefix: &str, scopes: &[&GraphDef], depth: usize, out: &mut Vec<Finding>) {
    for n in &g.nodes {
        let qid = format!("{prefix}{}", n.id.name);
        for o in &n.opaque {
            let detail = format!(
                "holds code the exporter could not read ({}): {}",
                o.what.as_str(),
                o.why.trim_end_matches('.')
            );
            let mut f = finding(
                Subject {
                    rule: crate::rules::RuleId::QG024,
                    obligation: None,
                    subject: format!("{}:{qid}", o.what.as_str()),
                    tool: None,
                    node: Some(qid.clone()),
                    location: Primary::Line(o.loc.unwrap_or(n.loc)),
                },
                None,
                Vec::new(),
                &[("detail", &detail)],
            );
            f.fix = fix(&qid, o.what);
            out.push(f);
        }
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let mut inner: Vec<&GraphDef> = vec![g];
    inner.extend_from_slice(scopes);
    for n in g.nodes.iter().filter(|n| n.kind == NodeKind::Subgraph) {
        let Some(name) = &n.graph else { continue };
        let def = inner.iter().find_map(|sc| {
            sc.subgraphs
                .iter()
                .find(|(k, _)| k.name == name.name)
                .map(|(_, d)| d)
        });
        if let Some(d) = def {
            walk(
                d,
                &format!("{prefix}{}/", n.id.name),
                &inner,
                depth + 1,
                out,
            );
        }
    }
}

/// The fix of one entry: restructure, or the words that declare what this kind of entry hides -
/// only those (a `pure` does not clear a pause, `reviews` do not clear a tool call).
fn fix(node: &str, what: OpaqueWhat) -> String {
    let words = match what {
        OpaqueWhat::Pause => format!(
            "`{{\"nodes\": {{\"{node}\": {{\"reviews\": [\"<tool>\"]}}}}}}` naming the tools whose \
             calls the pause confirms (`[]` when it confirms none)"
        ),
        OpaqueWhat::Model => format!("`{{\"nodes\": {{\"{node}\": {{\"model\": true}}}}}}`"),
        OpaqueWhat::Tools | OpaqueWhat::Code | OpaqueWhat::Subgraph => format!(
            "`{{\"nodes\": {{\"{node}\": {{\"calls\": {{\"<effect>\": {{\"kind\": \"write\", ...}}}}}}}}}}` \
             naming each effect it has (a tool it runs, an API it writes to), or \
             `{{\"nodes\": {{\"{node}\": {{\"pure\": \"why this node has no effect\"}}}}}}` when it has none"
        ),
    };
    format!(
        "Restructure '{node}' so the exporter can read it (a compiled graph as the node, a tool \
         object, a module-level model, an `interrupt()` in the node or tool itself whose answer \
         picks the route), or declare what it does with the exporter's words: {words}; then \
         re-export."
    )
}
