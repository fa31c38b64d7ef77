//! The progress line (issue 18): when a run passes a second and standard error is a terminal, one
//! line on standard error says what is being proved and for how long, rewritten in place each
//! second and erased when the run ends. Nothing is printed otherwise (CI logs, pipes, tests).

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running progress line; dropping it stops and erases the line.
pub(crate) struct Progress {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts the line for `what` (`verifying agent.yaml`), shown after one second, when standard
    /// error is a terminal.
    pub(crate) fn start(what: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress {
                stop: None,
                thread: None,
            };
        }
        let what = crate::input::visible::visible(what).into_owned();
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut shown = false;
            while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(1)) {
                let secs = start.elapsed().as_secs();
                let mut e = std::io::stderr().lock();
                let _ = write!(e, "\r\x1b[Kstalwart: {what}... {secs} s");
                let _ = e.flush();
                shown = true;
            }
            if shown {
                let mut e = std::io::stderr().lock();
                let _ = write!(e, "\r\x1b[K");
                let _ = e.flush();
            }
        });
        Progress {
            stop: Some(tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
