//! Scaling of the streamed GIMC-LFF fit: seconds per outer iteration and
//! peak resident memory against the number of rows of the AmazonCat-13K-shaped preset
//! (`gimc data synth xmc --preset amazoncat-13k`: 203,882 sparse features, 13,330 labels), in
//! f64 and with f32 block products, and `mpirun -np 1` against `-np 2` at the same two cores.
//!
//! Every case is one `gimc fit FILE --mpi --m 500 --lambda 1 --iters I --stream on` run under
//! `mpirun` (one process with two rayon threads, or two processes with one each), reading its
//! rows as byte ranges of the file: the fixed-setting fast path without a validation split, as
//! documented in docs/REPRODUCTION.md ("Extreme-multi-label scale"). Each run is a process of
//! its own, so its peak RSS (`VmHWM`, the largest over its processes, as `gimc fit --json`
//! reports it) is its alone.
//!
//! Needs the `gimc` binary built with `--features mpi` (`cargo xtask bench` builds it when
//! `mpirun` is on the PATH; else set `GIMC_BIN`) and OpenMPI's `mpirun`. Rows: 100,000 and
//! 300,000 (quick: 20,000 and one iteration), or the comma list in `GIMC_BENCH_XMC_ROWS`
//! (e.g. `1186239` for the full preset: about 47 minutes for 10 iterations, see
//! docs/REPRODUCTION.md).

use std::path::Path;
use std::process::Command;

use super::{Benchmark, Measurement};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// The scaling benchmark.
pub struct XmcScaling;

/// Random features m (D = 2m) and λ of every case.
const M: usize = 500;
const LAMBDA: f64 = 1.0;
/// Outer iterations per fit (quick: 1).
const ITERATIONS: usize = 3;

/// One case: processes, rayon threads per process, block precision.
struct Case {
    name: &'static str,
    processes: usize,
    threads: usize,
    precision: &'static str,
}

const CASES: [Case; 3] = [
    Case {
        name: "1 process × 2 threads, f64",
        processes: 1,
        threads: 2,
        precision: "f64",
    },
    Case {
        name: "1 process × 2 threads, f32 blocks",
        processes: 1,
        threads: 2,
        precision: "f32",
    },
    Case {
        name: "2 processes × 1 thread, f64",
        processes: 2,
        threads: 1,
        precision: "f64",
    },
];

/// Fails unless `mpirun` runs and `gimc` was built with the `mpi` feature.
fn check_mpi(gimc: &Path) -> Result<(), ExperimentError> {
    let mpirun = Command::new("mpirun").arg("--version").output();
    if !mpirun.is_ok_and(|o| o.status.success()) {
        return Err(fail(
            "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)",
        ));
    }
    let help = Command::new(gimc)
        .args(["fit", "--help"])
        .output()
        .map_err(ExperimentError::io(gimc))?;
    if !String::from_utf8_lossy(&help.stdout).contains("--mpi") {
        return Err(fail(format!(
            "{} was built without the mpi feature (cargo build --release -p gimc-cli \
             --features mpi)",
            gimc.display()
        )));
    }
    Ok(())
}

/// The row counts to measure.
fn sizes(quick: bool) -> Result<Vec<usize>, ExperimentError> {
    if let Ok(list) = std::env::var("GIMC_BENCH_XMC_ROWS") {
        return list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|e| fail(format!("GIMC_BENCH_XMC_ROWS: {s:?}: {e}")))
            })
            .collect();
    }
    Ok(if quick {
        vec![20_000]
    } else {
        vec![100_000, 300_000]
    })
}

/// What one fit reports (`gimc fit --mpi --json`).
struct Fit {
    seconds_per_iteration: Vec<f64>,
    line_search_trials: Vec<f64>,
    fit_seconds: f64,
    peak_rss_mib: f64,
}

fn run_case(
    gimc: &Path,
    data: &Path,
    model: &Path,
    case: &Case,
    iterations: usize,
) -> Result<Fit, ExperimentError> {
    let out = Command::new("mpirun")
        .args([
            "-np",
            &case.processes.to_string(),
            "--oversubscribe",
            "--bind-to",
            "none",
        ])
        .arg(gimc)
        .args(["--json", "--seed", "5", "fit"])
        .arg(data)
        .args([
            "--mpi",
            "--method",
            "gimc-lff",
            "--m",
            &M.to_string(),
            "--lambda",
            &LAMBDA.to_string(),
        ])
        .args(["--iters", &iterations.to_string(), "--stream", "on"])
        .args(["--precision", case.precision, "-o"])
        .arg(model)
        .env("RAYON_NUM_THREADS", case.threads.to_string())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .map_err(ExperimentError::io("mpirun"))?;
    if !out.status.success() {
        return Err(fail(format!(
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let numbers = |key: &str| -> Vec<f64> {
        v[key]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default()
    };
    Ok(Fit {
        seconds_per_iteration: numbers("seconds_per_iteration"),
        line_search_trials: numbers("line_search_trials"),
        fit_seconds: v["fit_seconds"].as_f64().unwrap_or(f64::NAN),
        peak_rss_mib: numbers("peak_rss_mib").into_iter().fold(f64::NAN, f64::max),
    })
}

impl Benchmark for XmcScaling {
    fn name(&self) -> &'static str {
        "xmc-scaling"
    }

    fn description(&self) -> &'static str {
        "GIMC-LFF (m = 500, streamed Φ) on the AmazonCat-13K-shaped preset against n: s per \
         iteration and peak RSS, f64 / f32, mpirun -np 1 / 2 at two cores"
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let gimc = super::gimc_binary("cargo build --release -p gimc-cli --features mpi")?;
        check_mpi(&gimc)?;
        let iterations = if ctx.quick { 1 } else { ITERATIONS };
        let dir = std::env::temp_dir().join(format!("gimc-xmc-scaling-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(ExperimentError::io(&dir))?;
        let mut out = Vec::new();
        for n in sizes(ctx.quick)? {
            let data = dir.join(format!("xmc-{n}.txt"));
            let made = Command::new(&gimc)
                .args(["-q", "--seed", "1", "data", "synth", "xmc"])
                .args(["--preset", "amazoncat-13k", "--rows", &n.to_string(), "-o"])
                .arg(&data)
                .output()
                .map_err(ExperimentError::io(&gimc))?;
            if !made.status.success() {
                return Err(fail(String::from_utf8_lossy(&made.stderr)));
            }
            for case in &CASES {
                let fit = run_case(&gimc, &data, &dir.join("model.gimc"), case, iterations)?;
                let label = format!("{n} rows, {}", case.name);
                let per_iter = fit.seconds_per_iteration.iter().sum::<f64>()
                    / fit.seconds_per_iteration.len().max(1) as f64;
                out.push(Measurement::new(
                    &label,
                    &format!("s per iteration (mean of {iterations})"),
                    per_iter,
                    "s",
                ));
                // an iteration is one gradient pass plus its line-search trials (a trial costs
                // about 0.6 of a gradient pass at these shapes: docs/REPRODUCTION.md, cost
                // model), so s per pass is a rough normalisation across runs whose searches
                // took different numbers of trials
                let trials: f64 = fit.line_search_trials.iter().sum();
                let passes = fit.seconds_per_iteration.len() as f64 + trials;
                out.push(Measurement::new(
                    &label,
                    "line-search trials (all iterations)",
                    trials,
                    "",
                ));
                out.push(Measurement::new(
                    &label,
                    "s per pass (gradient or trial)",
                    fit.seconds_per_iteration.iter().sum::<f64>() / passes.max(1.0),
                    "s",
                ));
                out.push(Measurement::new(&label, "fit", fit.fit_seconds, "s"));
                out.push(Measurement::new(
                    &label,
                    "peak RSS (largest process)",
                    fit.peak_rss_mib,
                    "MiB",
                ));
            }
            std::fs::remove_file(&data).map_err(ExperimentError::io(&data))?;
        }
        std::fs::remove_dir_all(&dir).map_err(ExperimentError::io(&dir))?;
        Ok(out)
    }
}
