//! Running a fit on a worker thread with the GIL released, stopped by a signal (Ctrl-C) seen on
//! the calling thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gimc::{GimcError, IterationRecord, SelectionObserver};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::value_err;

/// Stops the selection when the polling thread saw a signal.
pub(crate) struct Cancel<'a>(pub(crate) &'a AtomicBool);

impl SelectionObserver for Cancel<'_> {
    fn interrupted(&mut self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl gimc_solvers::Observer for Cancel<'_> {
    fn observe(&mut self, _record: &IterationRecord) -> gimc_solvers::ObserverAction {
        if self.0.load(Ordering::Relaxed) {
            gimc_solvers::ObserverAction::Stop
        } else {
            gimc_solvers::ObserverAction::Continue
        }
    }
}

/// Stops an iterative solver when the polling thread saw a signal (the solver returns its
/// iterate; [`run_interruptible`] then raises the signal's exception).
pub(crate) struct StopOnSignal<'a>(pub(crate) &'a AtomicBool);

impl gimc_solvers::Observer for StopOnSignal<'_> {
    fn observe(&mut self, _record: &gimc_solvers::IterationRecord) -> gimc_solvers::ObserverAction {
        if self.0.load(Ordering::Relaxed) {
            gimc_solvers::ObserverAction::Stop
        } else {
            gimc_solvers::ObserverAction::Continue
        }
    }
}

/// Runs `work` on a worker thread (inside a pool of `n_jobs` threads when given) with the GIL
/// released, polling for signals on the calling thread every 20 ms; a signal's exception (e.g.
/// `KeyboardInterrupt`) sets the cancel flag and is raised once the work has stopped.
pub(crate) fn run_interruptible<T: Send>(
    py: Python<'_>,
    n_jobs: Option<usize>,
    work: impl FnOnce(&AtomicBool) -> Result<T, GimcError> + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    let pool = match n_jobs {
        Some(n) => {
            // the bound `gimc --threads` has too
            let n = gimc::threads::check_threads(n).map_err(|e| match e {
                GimcError::InvalidParameter { reason, .. } => {
                    PyValueError::new_err(format!("n_jobs: {reason}"))
                }
                other => value_err(other),
            })?;
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| PyRuntimeError::new_err(format!("thread pool: {e}")))?,
            )
        }
        None => None,
    };
    let (result, signal) = py.detach(|| {
        std::thread::scope(|s| {
            let handle = s.spawn(|| match &pool {
                Some(p) => p.install(|| work(&cancel)),
                None => work(&cancel),
            });
            let mut signal: Option<PyErr> = None;
            while !handle.is_finished() {
                std::thread::sleep(Duration::from_millis(20));
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    cancel.store(true, Ordering::Relaxed);
                    signal = Some(e);
                }
            }
            let result = handle
                .join()
                .map_err(|_| PyRuntimeError::new_err("the gimc worker thread panicked"));
            (result, signal)
        })
    });
    if let Some(e) = signal {
        return Err(e);
    }
    result?.map_err(value_err)
}
