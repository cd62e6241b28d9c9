//! A minimal elapsed-time spinner on stderr for long steps. It is shown only when stderr is a
//! terminal and `--quiet` is off, so piped or redirected output never sees it. (A stand-in for
//! indicatif, which the machine could not fetch and build in time; same behaviour for a single
//! indeterminate step.)

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::Globals;

/// A running spinner; [`Spinner::finish`] stops it and clears its line.
pub struct Spinner {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Starts a spinner labelled `msg` (a no-op when hidden). It first draws after one second, so
/// short steps print nothing.
pub fn spinner(g: &Globals, msg: &str) -> Spinner {
    let stop = Arc::new(AtomicBool::new(false));
    if g.quiet || !std::io::stderr().is_terminal() {
        return Spinner { stop, handle: None };
    }
    let flag = Arc::clone(&stop);
    let msg = msg.to_string();
    let handle = std::thread::spawn(move || {
        let start = Instant::now();
        let frames = ['|', '/', '-', '\\'];
        let mut i = 0usize;
        let mut drawn = false;
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let t = start.elapsed().as_secs_f64();
            if t >= 1.0 {
                let mut e = std::io::stderr().lock();
                let _ = write!(e, "\r{} {msg} ({t:.0} s)", frames[i % 4]);
                let _ = e.flush();
                drawn = true;
                i += 1;
            }
        }
        if drawn {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
        }
    });
    Spinner {
        stop,
        handle: Some(handle),
    }
}

impl Spinner {
    /// Stops the spinner and clears its line.
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
