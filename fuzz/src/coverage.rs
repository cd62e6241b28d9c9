//! Edge coverage from LLVM's SanitizerCoverage `trace-pc-guard` instrumentation, which stable
//! rustc emits with `-C passes=sancov-module -C llvm-args=-sanitizer-coverage-level=3
//! -C llvm-args=-sanitizer-coverage-trace-pc-guard` (`cargo xtask fuzz` builds with them).
//!
//! The instrumented code calls [`__sanitizer_cov_trace_pc_guard_init`] once per module with
//! its guards, and [`__sanitizer_cov_trace_pc_guard`] on every edge it takes. Each guard gets
//! an index into a fixed map of hit counters; an input is new when it moves some counter into
//! a hit-count bucket never seen before (AFL's buckets: 1, 2, 3, 4–7, 8–15, 16–31, 32–127,
//! 128+). Without the instrumentation nothing calls these functions, the map stays empty and
//! the fuzzer mutates blind.

use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};

/// Counters in the map (a power of two; guards beyond it share counters).
const MAP_SIZE: usize = 1 << 16;

static COUNTERS: [AtomicU8; MAP_SIZE] = [const { AtomicU8::new(0) }; MAP_SIZE];
static GUARDS: AtomicU32 = AtomicU32::new(0);

/// Numbers the guards of one instrumented module (1, 2, …; 0 would mean "off").
///
/// # Safety
/// Called by the instrumentation with `[start, stop)` the module's guard array.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard_init(start: *mut u32, stop: *mut u32) {
    // SAFETY: the instrumentation passes a valid, writable guard array [start, stop).
    unsafe {
        if start == stop || *start != 0 {
            return;
        }
        let mut p = start;
        while p < stop {
            let id = GUARDS.fetch_add(1, Ordering::Relaxed) + 1;
            *p = id;
            p = p.add(1);
        }
    }
}

/// Counts one pass over the edge of `guard`.
///
/// # Safety
/// Called by the instrumentation with a pointer into a guard array it initialised.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard(guard: *mut u32) {
    // SAFETY: `guard` points into a guard array numbered by the init function above.
    let id = unsafe { *guard } as usize;
    if id != 0 {
        let c = &COUNTERS[id & (MAP_SIZE - 1)];
        // saturating increment (a wrap to 0 would hide a hot edge)
        let v = c.load(Ordering::Relaxed);
        if v != u8::MAX {
            c.store(v + 1, Ordering::Relaxed);
        }
    }
}

/// The number of instrumented edges (0 when the build is not instrumented).
pub fn instrumented_edges() -> u32 {
    GUARDS.load(Ordering::Relaxed)
}

/// AFL's hit-count bucket of a counter value, as one bit (0 for no hit).
fn bucket(v: u8) -> u8 {
    match v {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 4,
        4..=7 => 8,
        8..=15 => 16,
        16..=31 => 32,
        32..=127 => 64,
        128.. => 128,
    }
}

/// The (edge, bucket) pairs seen over a whole run.
pub struct Coverage {
    seen: Vec<u8>,
    edges: usize,
}

impl Coverage {
    /// Nothing seen yet.
    pub fn new() -> Self {
        Self {
            seen: vec![0; MAP_SIZE],
            edges: 0,
        }
    }

    /// Clears the counters before one execution.
    pub fn reset(&self) {
        for c in &COUNTERS {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// Folds the counters of the last execution in; true when it reached a new edge or a new
    /// hit-count bucket of one.
    pub fn absorb(&mut self) -> bool {
        let mut new = false;
        for (c, s) in COUNTERS.iter().zip(&mut self.seen) {
            let b = bucket(c.load(Ordering::Relaxed));
            if b & !*s != 0 {
                if *s == 0 {
                    self.edges += 1;
                }
                *s |= b;
                new = true;
            }
        }
        new
    }

    /// Distinct edges reached so far.
    pub fn edges(&self) -> usize {
        self.edges
    }
}
