//! The run's wiring, on top of every floor: the command line ([`cli`]), the pipeline of one
//! `stalwart verify` ([`verify`]: inputs, model, engines, checks, into a report) and the progress
//! line a long run prints on a terminal ([`progress`]). Nothing below calls up into it.

pub(crate) mod cli;
pub(crate) mod progress;
pub(crate) mod verify;
