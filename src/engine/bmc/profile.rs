//! Where the Z3 engine's time goes (issue 19), for the benchmark harness (`bench --profile`):
//! obligations asked, Z3 contexts made, queries, and the nanoseconds spent per [`Phase`], summed
//! over the threads. The counters exist only with the `bench` feature; without it every call
//! here is empty (and [`take`] reads zeros), so a release build pays nothing.

/// A part of answering an obligation with Z3.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Phase {
    /// Slicing, grouping and planning the unrolling (no Z3 yet).
    Plan,
    /// Making a Z3 context and dropping it with everything made in it.
    Context,
    /// Building the unrolling (its solver, frames and transitions) and the queries' formulas.
    Encode,
    /// The solver deciding a query (`check_assumptions`).
    Check,
    /// Reading Z3's resource count around a query (its statistics).
    Stats,
    /// Reading models: the group a model breaks, its steps, and the witness.
    Model,
    /// Replaying Z3's witnesses on the plain interpreter (refinement).
    Replay,
}

/// The counters, as [`take`] returns them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Profile {
    /// Obligations handed to a Z3 context (the others were declined before one was made).
    pub obligations: u64,
    /// Z3 contexts made.
    pub contexts: u64,
    /// Queries asked.
    pub queries: u64,
    /// Nanoseconds in [`Phase::Plan`].
    pub plan_ns: u64,
    /// Nanoseconds in [`Phase::Context`].
    pub context_ns: u64,
    /// Nanoseconds in [`Phase::Encode`].
    pub encode_ns: u64,
    /// Nanoseconds in [`Phase::Check`].
    pub check_ns: u64,
    /// Nanoseconds in [`Phase::Stats`].
    pub stats_ns: u64,
    /// Nanoseconds in [`Phase::Model`].
    pub model_ns: u64,
    /// Nanoseconds in [`Phase::Replay`].
    pub replay_ns: u64,
}

#[cfg(feature = "bench")]
mod counters {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    /// obligations, contexts, queries, then one per phase in [`super::Phase`]'s order.
    pub(crate) static C: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];

    thread_local! {
        /// Nanoseconds this thread counted to any phase.
        static MINE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    pub(crate) fn add(i: usize, n: u64) {
        C[i].fetch_add(n, Relaxed);
        if i >= 3 {
            MINE.with(|m| m.set(m.get() + n));
        }
    }

    pub(crate) fn mine() -> u64 {
        MINE.with(|m| m.get())
    }

    pub(crate) fn take(i: usize) -> u64 {
        C[i].swap(0, Relaxed)
    }
}

/// Runs `f`, its time counted to `phase`.
#[inline]
pub(crate) fn timed<R>(phase: Phase, f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "bench")]
    {
        let t0 = std::time::Instant::now();
        let r = f();
        counters::add(3 + phase as usize, t0.elapsed().as_nanos() as u64);
        r
    }
    #[cfg(not(feature = "bench"))]
    {
        let _ = phase;
        f()
    }
}

/// Runs `f`, the time it takes beyond what the phases timed inside it on this thread took
/// counted to `phase` (the context's making and dropping, around the work done in it).
#[inline]
pub(crate) fn around<R>(phase: Phase, f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "bench")]
    {
        let inner0 = counters::mine();
        let t0 = std::time::Instant::now();
        let r = f();
        let all = t0.elapsed().as_nanos() as u64;
        let inner = counters::mine().saturating_sub(inner0);
        counters::add(3 + phase as usize, all.saturating_sub(inner));
        r
    }
    #[cfg(not(feature = "bench"))]
    {
        let _ = phase;
        f()
    }
}

/// Counts one obligation handed to a fresh Z3 context.
#[inline]
pub(crate) fn obligation_asked() {
    #[cfg(feature = "bench")]
    {
        counters::add(0, 1);
        counters::add(1, 1);
    }
}

/// Counts one query asked.
#[inline]
pub(crate) fn query() {
    #[cfg(feature = "bench")]
    counters::add(2, 1);
}

/// The counters since the last call, reset to zero.
pub fn take() -> Profile {
    #[cfg(feature = "bench")]
    {
        let t = counters::take;
        Profile {
            obligations: t(0),
            contexts: t(1),
            queries: t(2),
            plan_ns: t(3),
            context_ns: t(4),
            encode_ns: t(5),
            check_ns: t(6),
            stats_ns: t(7),
            model_ns: t(8),
            replay_ns: t(9),
        }
    }
    #[cfg(not(feature = "bench"))]
    Profile::default()
}
