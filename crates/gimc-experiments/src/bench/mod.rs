//! Benchmarks behind `cargo xtask bench` (DESIGN §5): whole-pipeline timings on real and
//! synthetic data, with the accuracy reached, the achieved GFLOP/s beside a GEMM measured in the
//! same run, and peak resident memory.
//!
//! Each [`Benchmark`] runs in a process of its own (`gimc-experiments bench-one NAME`), so the
//! peak resident set size it reports ([`peak_rss_bytes`], the kernel's `VmHWM`) belongs to that
//! benchmark alone. Timings are medians over repeated runs ([`median_secs`]); comparisons are
//! ratios measured in the same run. Tests never time anything: speed is shown here.

mod boxed_map;
mod fpc_path;
mod gemm;
mod gemm_padding;
mod gimc_lff;
mod imc;
mod kmeans;
mod multilabel_peers;
mod peers;
mod simd_state;
mod small_eig;
mod sparse_products;
mod thin;
mod xmc_scaling;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::{Context, ExperimentError};

pub use gemm::gemm_gflops;

/// One measured number of a benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The case within it (data set, size, method).
    pub case: String,
    /// What was measured (`fit s`, `P@1`, `GFLOP/s`, `peak RSS`…).
    pub metric: String,
    /// The value, in `unit`.
    pub value: f64,
    /// Unit of `value` (`s`, `%`, `GFLOP/s`, `MiB`…).
    pub unit: String,
    /// A reference figure to compare with (a peer's or a paper's), when there is one.
    pub reference: Option<f64>,
    /// Where the reference figure comes from.
    pub reference_source: Option<String>,
}

impl Measurement {
    /// A measurement without a reference figure.
    pub fn new(case: &str, metric: &str, value: f64, unit: &str) -> Self {
        Self {
            case: case.to_string(),
            metric: metric.to_string(),
            value,
            unit: unit.to_string(),
            reference: None,
            reference_source: None,
        }
    }

    /// Adds a reference figure and its source.
    pub fn with_reference(mut self, value: f64, source: &str) -> Self {
        self.reference = Some(value);
        self.reference_source = Some(source.to_string());
        self
    }
}

/// A named benchmark.
pub trait Benchmark {
    /// Stable name (`--only NAME`).
    fn name(&self) -> &'static str;
    /// One line saying what is measured.
    fn description(&self) -> &'static str;
    /// Runs the benchmark and returns its measurements (peak memory is added by the runner).
    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError>;
    /// A compact Markdown table of the measurements, shown in the report above the rows of
    /// every measurement; `None` (the default) shows the rows alone.
    fn summary_table(&self, _ms: &[Measurement]) -> Option<String> {
        None
    }
}

/// Every benchmark, in the order `cargo xtask bench` runs them.
pub fn bench_registry() -> Vec<Box<dyn Benchmark>> {
    vec![
        Box::new(gemm::Gemm),
        Box::new(imc::ImcBibtex),
        Box::new(imc::ImcCgStep),
        Box::new(imc::ImcWideFit),
        Box::new(gimc_lff::GimcLffBibtex),
        Box::new(boxed_map::BoxedMapCost),
        Box::new(peers::KernelRidgePeers),
        Box::new(multilabel_peers::MultilabelPeers),
        Box::new(kmeans::KMeansPeer),
        Box::new(simd_state::LibmAfterGemm),
        Box::new(gemm_padding::GemmLhsPadding),
        Box::new(small_eig::SmallSymEig),
        Box::new(thin::ThinProducts),
        Box::new(sparse_products::SparseProducts),
        Box::new(fpc_path::FpcPath),
        Box::new(xmc_scaling::XmcScaling),
    ]
}

/// The benchmarks named in `only` (all when empty), or an error naming the known ones.
pub fn select_benches(only: &[String]) -> Result<Vec<Box<dyn Benchmark>>, ExperimentError> {
    let all = bench_registry();
    if only.is_empty() {
        return Ok(all);
    }
    let known: Vec<&str> = all.iter().map(|b| b.name()).collect();
    for name in only {
        if !known.contains(&name.as_str()) {
            return Err(ExperimentError::Failed(format!(
                "unknown benchmark {name:?}; known benchmarks: {}",
                known.join(", ")
            )));
        }
    }
    Ok(all
        .into_iter()
        .filter(|b| only.iter().any(|n| n == b.name()))
        .collect())
}

/// `$GIMC_BIN`, else the `gimc` beside this executable (both live in target/release); the
/// error names `build`, the command that makes it.
pub(crate) fn gimc_binary(build: &str) -> Result<std::path::PathBuf, ExperimentError> {
    if let Some(p) = std::env::var_os("GIMC_BIN") {
        return Ok(std::path::PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(ExperimentError::io("the current executable"))?;
    let sibling = exe.with_file_name("gimc");
    if sibling.is_file() {
        Ok(sibling)
    } else {
        Err(ExperimentError::Failed(format!(
            "no gimc binary at {} ({build}, or set GIMC_BIN)",
            sibling.display()
        )))
    }
}

/// The peer script `name` (e.g. `kmeans_sklearn.py`) from `$GIMC_PEERS`, else
/// `../shared/peers` from the working directory, else `peers/` beside the data directory.
pub(crate) fn peer_script(data_dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("GIMC_PEERS") {
        candidates.push(std::path::PathBuf::from(p));
    }
    candidates.push(std::path::PathBuf::from("../shared/peers"));
    if let Some(parent) = data_dir.parent() {
        candidates.push(parent.join("peers"));
    }
    candidates
        .into_iter()
        .map(|d| d.join(name))
        .find(|f| f.is_file())
}

/// A Python command for a peer script, with OpenBLAS's kernel named for this CPU
/// (`OPENBLAS_CORETYPE`, unless the caller set it). On a virtual CPU whose model OpenBLAS does
/// not recognise, its own detection falls back to a generic SSE3 kernel (`Prescott`), several
/// times slower at GEMM than the CPU's own (docs/BENCHMARKS.md, multilabel-peers), which would
/// handicap every NumPy and scikit-learn peer.
pub(crate) fn peer_command(python: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(python);
    if std::env::var_os("OPENBLAS_CORETYPE").is_none()
        && let Some(core) = openblas_core()
    {
        cmd.env("OPENBLAS_CORETYPE", core);
    }
    cmd
}

/// OpenBLAS's kernel for this CPU's instruction set: `SkylakeX` with AVX-512, `Haswell` with
/// AVX2 and FMA, none otherwise (OpenBLAS's own detection stands).
fn openblas_core() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl")
        {
            return Some("SkylakeX");
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return Some("Haswell");
        }
    }
    None
}

/// Whether `python3` can import scikit-learn (the peers' requirement).
pub(crate) fn sklearn_available() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import sklearn"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

pub use gimc_linalg::memory::peak_rss_bytes;

/// Runs `f` `runs` times (at least once) and returns the median wall time in seconds with the
/// result of the last run.
pub fn median_secs<T, E>(runs: usize, mut f: impl FnMut() -> Result<T, E>) -> Result<(f64, T), E> {
    let mut times = Vec::with_capacity(runs.max(1));
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let out = f()?;
        times.push(t0.elapsed().as_secs_f64());
        last = Some(out);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    match last {
        Some(out) => Ok((median, out)),
        None => unreachable!("runs.max(1) >= 1 iterations were made"),
    }
}

/// Where, when and how the benchmarks ran: the "Latest run" line of each section of
/// docs/BENCHMARKS.md.
#[derive(Debug, Clone, Copy)]
pub struct BenchRun<'a> {
    /// The machine (CPU, cores).
    pub machine: &'a str,
    /// The date.
    pub date: &'a str,
    /// The command that ran them.
    pub command: &'a str,
}

impl BenchRun<'_> {
    /// The "Latest run" line.
    fn line(&self) -> String {
        let BenchRun {
            machine,
            date,
            command,
        } = self;
        format!("Latest run: {date}, `{command}`, {machine}.")
    }
}

/// Renders measurements of the benchmarks of `run` as the Markdown of docs/BENCHMARKS.md.
pub fn render_markdown(
    benches: &[(String, String, Vec<Measurement>)],
    run: &BenchRun<'_>,
) -> String {
    let mut s = String::new();
    s.push_str("# Benchmarks\n\n");
    s.push_str(
        "Measured by `cargo xtask bench`; each section gives its latest run. Times are medians \
         over repeated runs in one process; peak memory is the process's resident high-water mark \
         (each benchmark runs in its own process). A later run replaces the part of each section \
         between its `bench` markers and keeps the rest.\n\n",
    );
    let registry = bench_registry();
    for (name, description, ms) in benches {
        let (open, close) = markers(name);
        let block = bench_block(name, ms, &registry, &run.line());
        s.push_str(&format!(
            "## {name}\n\n{description}\n\n{open}\n{block}{close}\n\n"
        ));
    }
    s
}

/// The generated part of one benchmark's section: the run line, its summary table (if any) and
/// the rows of every measurement.
fn bench_block(
    name: &str,
    ms: &[Measurement],
    registry: &[Box<dyn Benchmark>],
    run_line: &str,
) -> String {
    let mut s = format!("{run_line}\n\n");
    if let Some(table) = registry
        .iter()
        .find(|b| b.name() == name)
        .and_then(|b| b.summary_table(ms))
    {
        s.push_str(&table);
        s.push('\n');
    }
    s.push_str("| case | metric | value | unit | reference | source |\n");
    s.push_str("| --- | --- | ---: | --- | ---: | --- |\n");
    for m in ms {
        let reference = m.reference.map(fmt_value).unwrap_or_else(|| "—".into());
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            m.case,
            m.metric,
            fmt_value(m.value),
            m.unit,
            reference,
            m.reference_source.as_deref().unwrap_or("")
        ));
    }
    s
}

/// The markers around a benchmark's generated part in docs/BENCHMARKS.md.
fn markers(name: &str) -> (String, String) {
    (
        format!("<!-- bench {name} -->"),
        format!("<!-- /bench {name} -->"),
    )
}

/// Updates an existing docs/BENCHMARKS.md with the benchmarks just run (by `run`): the
/// generated part of each (between its `<!-- bench NAME -->` and `<!-- /bench NAME -->`
/// markers) is replaced, and everything around it (what the benchmark measures, against what,
/// the discussion) is kept. A benchmark without markers gets a new section at the end.
pub fn update_markdown(
    existing: &str,
    benches: &[(String, String, Vec<Measurement>)],
    run: &BenchRun<'_>,
) -> String {
    let registry = bench_registry();
    let mut doc = existing.to_string();
    for (name, description, ms) in benches {
        let block = bench_block(name, ms, &registry, &run.line());
        let (open, close) = markers(name);
        let span = doc
            .find(&open)
            .and_then(|a| doc[a..].find(&close).map(|b| (a + open.len(), a + b)));
        match span {
            Some((a, b)) => doc.replace_range(a..b, &format!("\n{block}")),
            None => {
                if !doc.ends_with('\n') {
                    doc.push('\n');
                }
                doc.push_str(&format!(
                    "\n## {name}\n\n{description}\n\n{open}\n{block}{close}\n"
                ));
            }
        }
    }
    doc
}

fn fmt_value(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e6) {
        let digits = if v.abs() >= 100.0 { 1 } else { 3 };
        format!("{v:.digits$}")
    } else {
        format!("{v:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let mut calls = 0;
        let (t, last) = median_secs::<_, ()>(3, || {
            calls += 1;
            Ok(calls)
        })
        .unwrap();
        assert!(t >= 0.0);
        assert_eq!(last, 3);
    }

    #[test]
    fn peak_rss_is_read_on_linux() {
        let rss = peak_rss_bytes().expect("VmHWM in /proc/self/status");
        assert!(rss > 1 << 20, "peak RSS {rss} bytes is implausibly small");
    }

    #[test]
    fn unknown_benchmark_is_an_error_listing_known_ones() {
        let err = select_benches(&["nope".into()])
            .err()
            .expect("error")
            .to_string();
        assert!(err.contains("gemm"), "{err}");
        assert_eq!(select_benches(&["gemm".into()]).unwrap().len(), 1);
    }

    #[test]
    fn markdown_has_one_row_per_measurement() {
        let ms = vec![
            Measurement::new("c", "fit s", 1.5, "s").with_reference(3.0, "peer"),
            Measurement::new("c", "P@1", 64.2, "%"),
        ];
        let md = render_markdown(
            &[("b".into(), "d".into(), ms)],
            &BenchRun {
                machine: "m",
                date: "today",
                command: "cmd",
            },
        );
        assert_eq!(md.matches("\n| c |").count(), 2, "{md}");
        assert!(md.contains("| 3.000 | peer |"), "{md}");
    }

    #[test]
    fn an_update_replaces_the_generated_part_and_keeps_the_prose() {
        let old = vec![Measurement::new("c", "fit s", 1.5, "s")];
        let fresh = render_markdown(
            &[("b".into(), "d".into(), old)],
            &BenchRun {
                machine: "m",
                date: "day 1",
                command: "cmd",
            },
        );
        let doc = fresh.replace("## b\n\nd\n\n", "## b\n\nWhat b measures, by hand.\n\n")
            + "A discussion of b.\n";
        let new = vec![Measurement::new("c", "fit s", 2.5, "s")];
        let later = vec![Measurement::new("c", "fit s", 9.0, "s")];
        let updated = update_markdown(
            &doc,
            &[
                ("b".into(), "d".into(), new),
                ("e".into(), "f".into(), later),
            ],
            &BenchRun {
                machine: "m",
                date: "day 2",
                command: "cmd",
            },
        );
        assert!(updated.contains("What b measures, by hand."), "{updated}");
        assert!(updated.contains("A discussion of b."), "{updated}");
        assert!(updated.contains("| c | fit s | 2.500 | s |"), "{updated}");
        assert!(!updated.contains("1.500"), "{updated}");
        assert!(updated.contains("Latest run: day 2"), "{updated}");
        assert!(!updated.contains("day 1"), "{updated}");
        // a benchmark without markers gets a section of its own at the end
        let e = updated
            .find("## e\n\nf\n\n<!-- bench e -->")
            .expect("new section");
        assert!(
            e > updated.find("A discussion of b.").unwrap_or(0),
            "{updated}"
        );
        // updating again with the same figures changes nothing
        let again = update_markdown(
            &updated,
            &[(
                "e".into(),
                "f".into(),
                vec![Measurement::new("c", "fit s", 9.0, "s")],
            )],
            &BenchRun {
                machine: "m",
                date: "day 2",
                command: "cmd",
            },
        );
        assert_eq!(again, updated);
    }

    #[test]
    fn markdown_has_a_bench_summary_table_above_its_rows() {
        let ms = vec![
            Measurement::new("flags gimc", "P@1", 75.0, "%"),
            Measurement::new("flags gimc", "fit", 0.5, "s"),
        ];
        let md = render_markdown(
            &[("multilabel-peers".into(), "d".into(), ms)],
            &BenchRun {
                machine: "m",
                date: "today",
                command: "cmd",
            },
        );
        let table = md.find("| flags | gimc | 75.00 |").expect("summary table");
        let rows = md.find("| flags gimc | P@1 |").expect("measurement rows");
        assert!(table < rows, "{md}");
    }
}
