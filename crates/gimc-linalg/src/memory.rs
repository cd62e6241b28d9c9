//! Memory pre-flight: the fitting paths estimate their peak memory from shapes and
//! parameters *before* allocating, and refuse with a typed error naming both figures and the
//! parameter to lower when the estimate exceeds the memory available, instead of being killed
//! by the kernel half-way.
//!
//! - [`available_bytes`]: the memory this process may still use: the minimum of
//!   `MemAvailable` in `/proc/meminfo` and the cgroup limit minus usage (v2 `memory.max` −
//!   `memory.current`, or v1 `memory.limit_in_bytes` − `memory.usage_in_bytes`); `None` when
//!   none of these can be read (not Linux).
//! - [`MemoryBudget`]: what a fitting path checks against (detect, a fixed figure, or no
//!   check); library parameter structs carry one so tests are deterministic.
//! - [`MemoryEstimate`] and [`Tally`]: an estimate built term by term with saturating
//!   arithmetic (a size that does not fit in a `u64` becomes `u64::MAX` and is refused, never
//!   wraps).
//! - [`check_fits`]: the refusal, [`InsufficientMemory`], whose message reads e.g. `fit needs
//!   about 54.1 GiB, 21.3 GiB available (lower m)`.
//! - `retain_freed_pages` (feature `mimalloc`) and [`release_freed_pages`]: the binaries keep
//!   the pages they free for reuse, and [`check_fits`] hands them back before it refuses.
//!
//! ```
//! use gimc_linalg::memory::{MemoryBudget, Tally, check_fits};
//!
//! let mut t = Tally::new("fit", "m");
//! t.f64s("Φ", 1211, 6_000_000);
//! let est = t.finish();
//! assert!(check_fits(&est, MemoryBudget::Bytes(1 << 30)).is_err());
//! assert!(check_fits(&est, MemoryBudget::Unchecked).is_ok());
//! ```

use std::fmt;

/// Bytes of one `f64` (and of one `usize` index on 64-bit targets).
const WORD: u64 = 8;

/// The memory a fitting path may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryBudget {
    /// Read the memory available at the time of the check ([`available_bytes`]); no check
    /// when it cannot be read.
    #[default]
    Detect,
    /// A fixed number of bytes (tests, or a limit chosen by the caller).
    Bytes(u64),
    /// No check.
    Unchecked,
}

impl MemoryBudget {
    /// The figure to check against: `None` means do not check.
    pub fn resolve(&self) -> Option<u64> {
        match self {
            Self::Detect => available_bytes(),
            Self::Bytes(b) => Some(*b),
            Self::Unchecked => None,
        }
    }
}

/// An estimate of the peak memory of a fitting path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Estimated peak, in bytes (saturated at `u64::MAX`).
    pub bytes: u64,
    /// What is estimated (`fit`, `completion`, …), for the message.
    pub what: &'static str,
    /// The parameter to lower (`m`, `rank`, …).
    pub parameter: &'static str,
    /// The largest terms, e.g. `Φ 1211 × 6000000 (54.1 GiB)`.
    pub detail: String,
}

impl fmt::Display for MemoryEstimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "about {}", human_bytes(self.bytes))?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

/// The refusal of [`check_fits`]: the estimate exceeds the memory available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} needs about {}, {} available (lower {parameter}; largest: {detail})",
    human_bytes(*.needed),
    human_bytes(*.available)
)]
pub struct InsufficientMemory {
    /// What was estimated (`fit`, `completion`, …).
    pub what: &'static str,
    /// Estimated peak, bytes.
    pub needed: u64,
    /// Memory available, bytes.
    pub available: u64,
    /// The parameter to lower.
    pub parameter: &'static str,
    /// The largest terms of the estimate.
    pub detail: String,
}

/// Refuses `estimate` when it exceeds the budget (no check when the budget resolves to
/// `None`). With [`MemoryBudget::Detect`], before refusing it hands the freed pages the
/// allocator keeps back to the OS ([`release_freed_pages`]) and reads the figure again.
pub fn check_fits(
    estimate: &MemoryEstimate,
    budget: MemoryBudget,
) -> Result<(), InsufficientMemory> {
    let Some(mut available) = budget.resolve() else {
        return Ok(());
    };
    // a detected figure counts the freed pages this process keeps for reuse as used: hand
    // them back and look again before refusing
    if estimate.bytes > available
        && budget == MemoryBudget::Detect
        && release_freed_pages()
        && let Some(again) = available_bytes()
    {
        available = again;
    }
    if estimate.bytes > available {
        return Err(InsufficientMemory {
            what: estimate.what,
            needed: estimate.bytes,
            available,
            parameter: estimate.parameter,
            detail: estimate.detail.clone(),
        });
    }
    Ok(())
}

/// Builds a [`MemoryEstimate`] term by term with saturating arithmetic; the detail lists the
/// three largest terms.
#[derive(Debug, Clone)]
pub struct Tally {
    what: &'static str,
    parameter: &'static str,
    /// (name, bytes, the parameter that lowers this term when it is not the estimate's own).
    terms: Vec<(String, u64, Option<&'static str>)>,
}

impl Tally {
    /// An empty estimate of `what`, whose dominant parameter is `parameter`.
    pub fn new(what: &'static str, parameter: &'static str) -> Self {
        Self {
            what,
            parameter,
            terms: Vec::new(),
        }
    }

    /// Adds `bytes` under `name`.
    pub fn bytes(&mut self, name: impl Into<String>, bytes: u64) -> &mut Self {
        self.terms.push((name.into(), bytes, None));
        self
    }

    /// Names the parameter that lowers the term added last, when it is not the estimate's own
    /// (e.g. the number of feature columns for a per-column array of a fit whose parameter is
    /// `m`). The refusal names the parameter of the largest term.
    pub fn lowered_by(&mut self, parameter: &'static str) -> &mut Self {
        if let Some(t) = self.terms.last_mut() {
            t.2 = Some(parameter);
        }
        self
    }

    /// Adds a dense `rows × cols` matrix of `f64`.
    pub fn f64s(&mut self, name: &str, rows: usize, cols: usize) -> &mut Self {
        let b = mat_bytes(rows, cols);
        self.terms
            .push((format!("{name} {rows} × {cols}"), b, None));
        self
    }

    /// Adds another estimate's terms (e.g. a sub-step's peak).
    pub fn add(&mut self, other: &MemoryEstimate) -> &mut Self {
        self.terms.push((other.what.to_string(), other.bytes, None));
        self
    }

    /// The running total (saturating).
    pub fn total(&self) -> u64 {
        self.terms
            .iter()
            .fold(0u64, |acc, (_, b, _)| acc.saturating_add(*b))
    }

    /// The estimate.
    pub fn finish(&self) -> MemoryEstimate {
        let mut top: Vec<_> = self.terms.iter().filter(|t| t.1 > 0).collect();
        top.sort_by_key(|t| std::cmp::Reverse(t.1));
        let detail = top
            .iter()
            .take(3)
            .map(|(n, b, _)| format!("{n}: {}", human_bytes(*b)))
            .collect::<Vec<_>>()
            .join(", ");
        MemoryEstimate {
            bytes: self.total(),
            what: self.what,
            parameter: top.first().and_then(|t| t.2).unwrap_or(self.parameter),
            detail,
        }
    }
}

/// Bytes of a dense `rows × cols` matrix of `f64` (saturating).
pub fn mat_bytes(rows: usize, cols: usize) -> u64 {
    (rows as u64)
        .saturating_mul(cols as u64)
        .saturating_mul(WORD)
}

/// Bytes of a CSR matrix with `rows` rows and `nnz` stored entries of `f64` (values, column
/// indices and the row pointer; saturating).
pub fn csr_bytes(rows: usize, nnz: usize) -> u64 {
    (nnz as u64)
        .saturating_mul(2 * WORD)
        .saturating_add((rows as u64).saturating_add(1).saturating_mul(WORD))
}

/// `bytes` in binary units with one decimal, e.g. `58.1 GiB`, `512 B`; a saturated estimate
/// (`u64::MAX`) reads `more than 16 EiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    if bytes == u64::MAX {
        // a saturated estimate: the true figure does not fit in 64 bits
        return "more than 16 EiB".to_string();
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// Parses a byte count with an optional binary suffix (`K`, `M`, `G`, `T`, with or without
/// `iB`/`B`), e.g. `2G`, `512MiB`, `1000000`. `None` when malformed or overflowing.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit.trim_end_matches("ib").trim_end_matches('b');
    let mult: u64 = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    let b = v * mult as f64;
    (b.is_finite() && b >= 0.0 && b < u64::MAX as f64).then_some(b as u64)
}

/// mimalloc's option index of `purge_delay` (`mi_option_purge_delay` in `mimalloc.h`, the same
/// slot in mimalloc 2 and 3; libmimalloc-sys names no constant for it).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps a freed range before handing it back to the OS under
/// [`retain_freed_pages`]: an hour, i.e. for the whole of a fit, while
/// [`release_freed_pages`] can still hand the ranges back at once.
#[cfg(feature = "mimalloc")]
const RETAIN_MS: std::ffi::c_long = 3_600_000;

/// For a binary whose global allocator is mimalloc: keep freed pages for reuse instead of
/// returning them to the OS ("purging" them) after mimalloc's default delay of a second. A fit
/// allocates and frees blocks of n × D doubles every outer iteration; purged, each one is
/// faulted in again page by page (gimc-fig2 took 545,873 page faults and 17.5 s of system time
/// with the default; docs/BENCHMARKS.md, retained-pages). The kept pages count as used in
/// [`available_bytes`], so [`check_fits`] hands them back ([`release_freed_pages`]) and looks
/// again before it refuses a fit. Returns whether mimalloc took the setting. Call it first
/// thing in `main`, before any thread starts (mimalloc's options are not thread safe).
#[cfg(feature = "mimalloc")]
#[allow(unsafe_code)]
pub fn retain_freed_pages() -> bool {
    // SAFETY: plain option setters of the linked mimalloc; called before other threads exist.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, RETAIN_MS);
        libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) == RETAIN_MS
    }
}

/// Hands the freed pages that mimalloc keeps (`retain_freed_pages`, feature `mimalloc`) back to
/// the OS now. Returns whether anything could be handed back: false without the feature.
pub fn release_freed_pages() -> bool {
    #[cfg(feature = "mimalloc")]
    #[allow(unsafe_code)]
    // SAFETY: mimalloc's collection entry point, callable from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    cfg!(feature = "mimalloc")
}

/// The memory this process may still use: the minimum of `MemAvailable` (`/proc/meminfo`)
/// and the cgroup limit minus the cgroup's usage (v2, else v1); `None` if none is readable.
pub fn available_bytes() -> Option<u64> {
    let mem = meminfo_available();
    let cg = cgroup_v2_headroom().or_else(cgroup_v1_headroom);
    match (mem, cg) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn meminfo_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// The cgroup v2 directory of this process (`/proc/self/cgroup` line `0::/path`), falling
/// back to the mount root.
fn cgroup_v2_dir() -> String {
    let rel = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("0::").map(|p| p.trim().to_string()))
        })
        .unwrap_or_default();
    let dir = format!("/sys/fs/cgroup{rel}");
    if std::path::Path::new(&format!("{dir}/memory.max")).exists() {
        dir
    } else {
        "/sys/fs/cgroup".to_string()
    }
}

fn cgroup_v2_headroom() -> Option<u64> {
    let dir = cgroup_v2_dir();
    let max = std::fs::read_to_string(format!("{dir}/memory.max")).ok()?;
    let max: u64 = max.trim().parse().ok()?; // "max": no limit
    let current = read_u64(&format!("{dir}/memory.current")).unwrap_or(0);
    Some(max.saturating_sub(current))
}

fn cgroup_v1_headroom() -> Option<u64> {
    let limit = read_u64("/sys/fs/cgroup/memory/memory.limit_in_bytes")?;
    // an unlimited v1 group reports a page-rounded i64::MAX
    if limit >= 1 << 60 {
        return None;
    }
    let usage = read_u64("/sys/fs/cgroup/memory/memory.usage_in_bytes").unwrap_or(0);
    Some(limit.saturating_sub(usage))
}

/// Peak resident set size of this process so far, in bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// CPU seconds (user + system, every thread) this process has used so far (Linux
/// `/proc/self/stat`, in the kernel's fixed 100 Hz user ticks), if known. Beside a wall clock it
/// tells how many cores a stretch of work kept busy.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_cpu_seconds(&stat)
}

/// utime + stime of a `/proc/<pid>/stat` line, in seconds: fields 14 and 15, counted after the
/// command name, which is in parentheses and may itself hold spaces or parentheses.
fn parse_cpu_seconds(stat: &str) -> Option<f64> {
    /// USER_HZ: the unit of the times in `/proc`, 100 on every Linux ABI.
    const TICKS_PER_SECOND: f64 = 100.0;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // the fields after the name start at field 3 (state); utime is field 14, stime 15
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_SECOND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_seconds_are_fields_14_and_15_after_the_name() {
        let line = "4242 (a (b) c) R 1 4242 4242 0 -1 4194304 100 0 0 0 1234 56 0 0 20 0 3 0 99";
        assert_eq!(parse_cpu_seconds(line), Some(12.9));
        assert_eq!(parse_cpu_seconds("4242 (x) R 1 2"), None);
        assert_eq!(parse_cpu_seconds("no name"), None);
        if cfg!(target_os = "linux") {
            let before = process_cpu_seconds().expect("/proc/self/stat");
            let mut x = 1.0_f64;
            let start = std::time::Instant::now();
            while start.elapsed().as_secs_f64() < 0.2 {
                x = std::hint::black_box(x.sin() + 1.0);
            }
            let used = process_cpu_seconds().expect("/proc/self/stat") - before;
            assert!(used >= 0.05, "0.2 s of spinning counted as {used} s");
        }
    }

    #[test]
    fn human_and_parse() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(u64::MAX), "more than 16 EiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(58_100_000_000), "54.1 GiB");
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("512MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("1.5k"), Some(1536));
        assert_eq!(parse_bytes("x"), None);
        assert_eq!(parse_bytes("3Q"), None);
    }

    #[test]
    fn saturates_and_refuses() {
        assert_eq!(mat_bytes(usize::MAX, usize::MAX), u64::MAX);
        let mut t = Tally::new("fit", "m");
        t.f64s("Φ", usize::MAX, 3).f64s("W", 10, 10);
        let est = t.finish();
        assert_eq!(est.bytes, u64::MAX);
        let e = check_fits(&est, MemoryBudget::Bytes(1 << 30)).unwrap_err();
        assert_eq!(e.needed, u64::MAX);
        assert_eq!(e.parameter, "m");
        let msg = e.to_string();
        assert!(
            msg.contains("1.0 GiB available") && msg.contains("lower m"),
            "{msg}"
        );
        assert!(check_fits(&est, MemoryBudget::Unchecked).is_ok());
        let mut small = Tally::new("fit", "m");
        small.f64s("W", 10, 10);
        assert!(check_fits(&small.finish(), MemoryBudget::Bytes(800)).is_ok());
        assert!(check_fits(&small.finish(), MemoryBudget::Bytes(799)).is_err());
    }

    #[test]
    fn the_refusal_names_the_parameter_of_the_largest_term() {
        let mut t = Tally::new("fit", "m");
        t.f64s("U", 1000, 50)
            .bytes("per-column statistics", 1 << 40)
            .lowered_by("the feature columns");
        assert_eq!(t.finish().parameter, "the feature columns");
        t.f64s("Φ", 1 << 20, 1 << 20);
        assert_eq!(t.finish().parameter, "m");
    }

    #[test]
    fn detects_something_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(available_bytes().is_some_and(|b| b > 0));
        }
    }
}
