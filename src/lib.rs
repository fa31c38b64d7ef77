//! stalwart-verify: proves that no route through an LLM agent's graph reaches a tool without its
//! check, its person's confirmation, its order rule or its taint rule, and that writes can be undone.
//!
//! Data flows one way (SPEC 0): [`input`] reads agent.yaml / `qls-graph/1` / catalogues into the
//! [`ir`] types; [`model`] flattens them into one transition system (with the obligations' table,
//! [`model::obligation`]); [`engine`] answers each obligation's reachability question with a
//! witness; [`checks`] turns verdicts and structure into [`findings`]; [`report`] gathers them and
//! [`output`] prints text, JSON, SARIF and the rest. The outputs read only the report floor: the
//! [`report`] (which carries the code checks, the traces read, the engines' versions, the
//! `--replay` walkthrough and, built from the model before output, the graph's
//! [`report::picture`]), the [`findings`]' vocabulary, the rule metadata, the [`source`] map and
//! [`visible`]'s escaping (`tests/it/layers.rs` holds it). [`rules`] holds the rule metadata every
//! stage reads, the obligations' names and rules included ([`rules::obligation`]); [`cli`] wires
//! the stages together.

pub mod base_ref;
pub mod baseline;
pub mod checks;
pub mod cli;
pub mod config;
pub mod engine;
pub mod error;
pub mod files;
pub mod findings;
pub mod gen;
pub mod input;
pub mod ir;
pub mod model;
pub mod output;
pub mod progress;
pub mod replay;
pub mod report;
pub mod rulebook;
pub mod rules;
pub mod source;
pub mod triage;
pub mod verify;
pub mod visible;
pub mod weaken;
