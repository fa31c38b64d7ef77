//! What the project settles about a run, above the report and below the outputs: its
//! configuration ([`config`]: `stalwart.toml` or `[tool.stalwart]`), the findings it accepts or
//! holds back ([`triage`], its accept comments, and [`baseline`], the findings already known), the
//! pull request's base revision they are read at ([`base_ref`]), and what weakens the proof,
//! said once for every output ([`weaken`]).
//!
//! The run's settings ([`options`]) sit here too, since [`weaken`] reads them. These read the
//! inputs' types, the rule metadata and the report, never the run; the run's wiring
//! ([`crate::run`]) reads the configuration first and applies the rest after the proof.

pub(crate) mod base_ref;
pub(crate) mod baseline;
pub(crate) mod config;
pub(crate) mod options;
pub(crate) mod triage;
pub(crate) mod weaken;
