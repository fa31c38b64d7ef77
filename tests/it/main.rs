//! The integration tests, one binary (issue 31): each module is what was once a file of its own
//! under `tests/`, so the crate's dependencies are linked once rather than once a file. Run one
//! module with `cargo test --test it MODULE::` (`cargo test --test it engines::`), one test with
//! its path (`cargo test --test it cli::a_baseline_hides_known_findings`). `common` holds the
//! helpers the modules share; the snapshots they compare with are in `snapshots/` at the root.
//!
//! Tests share this process: none sets the process's environment or current directory (a child
//! process is given its own with `Command::env` and `Command::current_dir`), and each writes
//! only under a temporary directory of its own.

mod action;
mod cli;
mod colang1_corpus;
mod colang2_corpus;
mod colang_corpus_names;
mod common;
mod corpus;
mod declarations;
mod engines;
mod fan_graph;
mod fix_texts;
mod fixtures;
mod gates;
mod guard_parity;
mod hostile;
mod hostile_bounds;
mod hostile_gate;
mod hostile_paths;
mod hostile_text;
mod input_errors;
mod input_fuzz;
mod layers;
mod mcp_catalogue;
mod output_formats;
mod project;
mod properties;
mod python_tools;
mod readings;
mod replay;
mod rulebook;
mod rulebook_budgets;
mod rulebook_compile;
mod rulebook_names;
mod rules_meta;
mod sarif_validate;
mod shared_search;
mod traces;
mod unread_code;
mod weakened;
mod wide_graph;
mod z3_budgets;
