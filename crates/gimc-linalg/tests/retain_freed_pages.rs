//! `memory::retain_freed_pages` under mimalloc: a large block freed and allocated again is
//! served from the kept pages, with no fresh page faults, even after mimalloc has collected
//! (its own test binary, because the global allocator is per binary).
#![allow(clippy::unwrap_used)]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Minor page faults of this process so far (`/proc/self/stat`, field 10).
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the command name (field 2) is in parentheses and may hold spaces
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(7)?.parse().ok()
}

/// Allocates `len` doubles, writes one per 4 KiB page and frees them.
fn touch_block(len: usize) -> f64 {
    let mut v = vec![0.0f64; len];
    for (i, x) in v.iter_mut().enumerate().step_by(512) {
        *x = i as f64;
    }
    std::hint::black_box(v.iter().step_by(512).sum())
}

/// What a fit's allocations trigger now and then: mimalloc's collection, which purges the
/// freed ranges whose delay has passed (forced here, so the test needs no wait).
#[allow(unsafe_code)]
fn collect() {
    // SAFETY: mimalloc's own collection entry point, callable from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[test]
fn a_freed_block_is_reused_without_page_faults() {
    assert!(gimc_linalg::memory::retain_freed_pages());
    if minor_faults().is_none() {
        eprintln!("skipped: /proc/self/stat is not readable here");
        return;
    }
    // 128 MiB: far above glibc's mmap threshold and mimalloc's small-object pages
    let len = 16 << 20;
    touch_block(len);
    collect();
    let before = minor_faults().unwrap();
    touch_block(len);
    let faults = minor_faults().unwrap() - before;
    // purged, the 128 MiB would come back as 32,768 small pages or 64 huge ones
    assert!(
        faults < 32,
        "{faults} page faults reusing a freed 128 MiB block"
    );
}
