//! stalwart-verify: proves that no route through an LLM agent's graph reaches a tool without its
//! check, its person's confirmation, its order rule or its taint rule, and that writes can be undone.
//!
//! Data flows one way (SPEC 0): [`input`] reads agent.yaml / `qls-graph/1` / catalogues into the
//! [`ir`] types; [`model`] flattens them into one transition system; [`engine`] answers each
//! obligation's reachability question with a witness; [`checks`] turns verdicts and structure into
//! [`findings`]; [`report`] gathers them and [`output`] prints text, JSON or SARIF. [`rules`] holds
//! the rule metadata every stage reads; [`cli`] wires the stages together.

#![warn(unreachable_pub)]

mod base_ref;
mod baseline;
pub mod checks;
mod cli;
mod config;
pub mod engine;
mod error;
mod files;
mod findings;
pub mod gen;
pub mod input;
mod ir;
pub mod model;
mod obligation;
pub mod output;
mod progress;
pub mod replay;
mod report;
pub mod rulebook;
pub mod rules;
mod source;
mod triage;
mod verify;
mod visible;
mod weaken;

pub use cli::main;
pub use error::InputError;
pub use files::{confine, read_text_limited, ReadError};
pub use findings::{
    fingerprint, Engine, Evidence, Finding, GateMode, Lint, Obligation, Primary, Severity, Step,
    StepKind,
};
pub use ir::{
    Catalogue, Compensation, EdgeKind, Export, Framework, GraphDef, NodeKind, NotAfter, Role,
    ToolDef, ToolKind, When,
};
pub use report::{EngineStats, ProofScope, Report};
pub use source::{Loc, SourceMap, MAX_QUOTE, MAX_WINDOW_LINE};
pub use verify::{verify, verify_with_model, Options};
pub use visible::is_unsafe;
