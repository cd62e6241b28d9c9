//! The bound on worker threads: a thread count asked for (`gimc --threads`, Python's `n_jobs`)
//! must be at least 1 and at most [`max_threads`], so that a typo cannot start thousands of
//! threads.
//!
//! ```
//! use gimc::threads::{check_threads, max_threads};
//!
//! assert_eq!(check_threads(1)?, 1);
//! assert_eq!(check_threads(max_threads())?, max_threads());
//! assert!(check_threads(0).is_err());
//! assert!(check_threads(100_000).is_err());
//! # Ok::<(), gimc::GimcError>(())
//! ```

use crate::error::{GimcError, Result};

/// The most worker threads a count may ask for on any machine.
pub const THREAD_CAP: usize = 1024;

/// The worker threads a count may ask for per core the machine makes available.
pub const THREADS_PER_CORE: usize = 4;

/// The cores this process may use (`std::thread::available_parallelism`; 1 when unknown).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads a count may ask for here: [`THREADS_PER_CORE`] per available core,
/// at most [`THREAD_CAP`].
pub fn max_threads() -> usize {
    bound(available_cores())
}

/// [`max_threads`] on a machine with `cores` cores.
fn bound(cores: usize) -> usize {
    cores.saturating_mul(THREADS_PER_CORE).clamp(1, THREAD_CAP)
}

/// Checks a requested number of worker threads: at least 1 and at most [`max_threads`].
/// Errors with [`GimcError::InvalidParameter`] (`threads`), whose reason names the bound and
/// the machine's core count; callers name their own option (`--threads`, `n_jobs`) beside it.
pub fn check_threads(n: usize) -> Result<usize> {
    check_on(n, available_cores())
}

/// [`check_threads`] on a machine with `cores` cores.
fn check_on(n: usize, cores: usize) -> Result<usize> {
    let max = bound(cores);
    let reason = if n == 0 {
        "must be at least 1".to_string()
    } else if n > max {
        format!(
            "{n} is more than the {max} allowed ({THREADS_PER_CORE} per core of the {cores} \
             core(s) available here, at most {THREAD_CAP})"
        )
    } else {
        return Ok(n);
    };
    Err(GimcError::InvalidParameter {
        name: "threads",
        reason,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_bound_is_four_per_core_and_at_most_1024() {
        assert_eq!(bound(1), 4);
        assert_eq!(bound(2), 8);
        assert_eq!(bound(256), 1024);
        assert_eq!(bound(10_000), 1024);
        assert_eq!(bound(usize::MAX), 1024);
        assert_eq!(check_on(8, 2).unwrap(), 8);
        assert_eq!(check_on(1, 1).unwrap(), 1);
        let err = check_on(9, 2).unwrap_err().to_string();
        assert!(err.contains("9 is more than the 8 allowed"), "{err}");
        assert!(err.contains("2 core(s)"), "{err}");
        assert!(check_on(100_000, 64).is_err());
        assert!(
            check_on(0, 2)
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        assert!(max_threads() >= THREADS_PER_CORE && max_threads() <= THREAD_CAP);
    }
}
