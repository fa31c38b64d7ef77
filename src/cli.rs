//! Command line (SPEC 1).

/// Runs the command line; returns the exit status.
pub fn main() -> i32 {
    0
}
