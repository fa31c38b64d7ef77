//! stalwart-verify: proves that no route through an LLM agent's graph reaches a tool without its
//! check, its person's confirmation, its order rule or its taint rule, and that writes can be undone.
//!
//! Data flows one way (SPEC 0): [`input`] reads agent.yaml / `qls-graph/1` / catalogues into the
//! [`ir`] types; [`model`] flattens them into one transition system; [`engine`] answers each
//! obligation's reachability question with a witness; [`checks`] turns verdicts and structure into
//! [`findings`]; [`report`] gathers them and [`output`] prints text, JSON or SARIF. [`rules`] holds
//! the rule metadata every stage reads; [`cli`] wires the stages together.

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
