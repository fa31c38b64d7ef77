//! stalwart-verify: proves that no route through an LLM agent's graph reaches a tool without its
//! check, its person's confirmation, its order rule or its taint rule, and that writes can be undone.
//!
//! Data flows one way (SPEC 0), one folder a floor: [`input`] reads agent.yaml / `qls-graph/1` /
//! catalogues (and the [`rulebook`]) into the `input::ir` types; [`model`] flattens them into one
//! transition system (with the obligations' table, `model::obligation`); [`engine`] answers each
//! obligation's reachability question with a witness; [`checks`] turns verdicts and structure into
//! findings; `report` gathers them; `project` applies what the project settles (its configuration,
//! accepts, baseline and base revision) and [`output`] prints text, JSON, SARIF and the rest. The
//! outputs read only the report floor: the `report` (which carries the code checks, the traces
//! read, the engines' versions, the `--replay` walkthrough and, built from the model before output,
//! the graph's picture), the findings' vocabulary, the rule metadata, the source map and the
//! escaping of `input::visible` (`tests/it/layers.rs` holds it). [`rules`] holds the rule metadata
//! every floor reads, the obligations' names and rules included; `run` (the command line and the
//! pipeline of one `verify`) wires the floors together on top. `findings` (the vocabulary),
//! `report` and [`replay`] sit at the root, between the checks and the outputs.
//!
//! # The public surface
//!
//! The crate is its binary: every module is private to it (`pub(crate)`) unless one of its users
//! outside `src/lib.rs` needs it, and `unreachable_pub` warns of a `pub` nothing outside can reach,
//! so the compiler finds dead code. The users are `src/main.rs` (the `stalwart` binary),
//! `src/bin/bench.rs` and `src/bin/rulebook_bench.rs` (`--features bench`) and the test binary
//! `tests/it`. What they reach:
//!
//! - at the crate root, the run and its vocabulary: [`main`] (the command line), [`verify()`] and
//!   [`Options`], the [`Report`] and its [`Finding`]s, the input declarations ([`Export`],
//!   [`Catalogue`], [`ToolDef`], ...), [`Loc`] and [`SourceMap`], [`InputError`], and the few
//!   helpers the hostile-input tests probe ([`confine`], [`read_text_limited`], [`is_unsafe`]);
//! - a few floors as modules, each exporting only the items the tests and benches drive: [`input`]
//!   (the readers), [`model`] (the flattened model), [`engine`] (the engines and their budgets),
//!   [`rulebook`] (the Colang readers and compiler), [`checks`], [`output`] (the renderers),
//!   [`replay`], [`rules`] (the rule metadata) and [`gen`] (generated graphs).
//!
//! To add to it, make the item `pub` and reach it from here (a `pub use` below, or through one of
//! the public modules); give it a doc comment. Everything else stays `pub(crate)`.

#![warn(unreachable_pub)]

pub mod checks;
pub mod engine;
mod findings;
pub mod gen;
pub mod input;
pub mod model;
pub mod output;
mod project;
pub mod replay;
mod report;
pub mod rulebook;
pub mod rules;
mod run;

// The run and its vocabulary (see "The public surface" above).
pub use findings::{
    fingerprint, CodeChecks, Engine, Evidence, Finding, GateMode, Lint, Obligation, Primary,
    Severity, Step, StepKind,
};
pub use input::error::InputError;
pub use input::files::{confine, read_text_limited, ReadError};
pub use input::ir::{
    Catalogue, Compensation, EdgeKind, Export, Framework, GraphDef, NodeKind, NotAfter, Role,
    ToolDef, ToolKind, When,
};
pub use input::source::{Loc, SourceMap, MAX_QUOTE, MAX_WINDOW_LINE};
pub use input::visible::is_unsafe;
pub use project::options::Options;
pub use report::{EngineStats, ProofScope, Report};
pub use run::cli::main;
pub use run::verify::{verify, verify_with_model};
