//! `memory::retain_freed_pages` under mimalloc: a large block freed and allocated again is
//! served from the kept pages, with no fresh page faults, even after mimalloc has collected;
//! `memory::release_freed_pages` hands them back (its own test binary, because the global
//! allocator is per binary).
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
/// freed ranges whose delay has passed (the default delay is a second: a sleep stands in for
/// the time a fit takes between two uses of a block).
#[allow(unsafe_code)]
fn collect_after_a_while() {
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: mimalloc's own collection entry point, callable from any thread.
    unsafe { libmimalloc_sys::mi_collect(false) }
}

/// Page faults of allocating, touching and freeing `len` doubles once more.
fn faults_of_reuse(len: usize) -> u64 {
    let before = minor_faults().unwrap();
    touch_block(len);
    minor_faults().unwrap() - before
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
    collect_after_a_while();
    // purged, the 128 MiB would come back as 32,768 small pages or 64 huge ones
    let kept = faults_of_reuse(len);
    assert!(
        kept < 32,
        "{kept} page faults reusing a freed 128 MiB block"
    );
    // handed back on demand (what `check_fits` does before it refuses a fit)
    assert!(gimc_linalg::memory::release_freed_pages());
    let released = faults_of_reuse(len);
    assert!(
        released >= 32,
        "only {released} page faults after handing the pages back"
    );
}
