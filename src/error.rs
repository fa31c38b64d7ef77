//! Errors that stop a run.
