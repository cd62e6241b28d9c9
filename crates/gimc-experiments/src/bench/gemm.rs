//! The reference rate: a dense f64 GEMM through faer, measured in the same run as the pipelines
//! so their achieved GFLOP/s can be put beside it (DESIGN §5, "Limit").

use gimc_linalg::dense::matmul;
use gimc_linalg::rng::{gaussian_mat, seeded};

use super::{Benchmark, Measurement, median_secs};
use crate::{Context, ExperimentError};

/// Square-ish GEMM C (m × n) = A (m × k) · B (k × n).
pub struct Gemm;

/// Median GFLOP/s of an (m × k)·(k × n) product over `runs` runs.
pub fn gemm_gflops(m: usize, k: usize, n: usize, runs: usize) -> Result<f64, ExperimentError> {
    let mut rng = seeded(1);
    let a = gaussian_mat(&mut rng, m, k, 1.0);
    let b = gaussian_mat(&mut rng, k, n, 1.0);
    let (secs, _) = median_secs(runs, || matmul(a.as_ref(), b.as_ref()))?;
    Ok(2.0 * (m * k * n) as f64 / secs / 1e9)
}

impl Benchmark for Gemm {
    fn name(&self) -> &'static str {
        "gemm"
    }

    fn description(&self) -> &'static str {
        "Dense f64 GEMM through faer (all threads): the machine's practical limit for the \
         dense products of every other benchmark."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let sizes: &[(usize, usize, usize)] = if ctx.quick {
            &[(1000, 1000, 1000)]
        } else {
            &[(2000, 2000, 2000), (4880, 1000, 1000)]
        };
        let mut out = Vec::new();
        for &(m, k, n) in sizes {
            let gflops = gemm_gflops(m, k, n, if ctx.quick { 3 } else { 5 })?;
            out.push(
                Measurement::new(&format!("{m}x{k} * {k}x{n}"), "rate", gflops, "GFLOP/s")
                    .with_reference(80.0, "DESIGN §5 (2-core AVX2, faer)"),
            );
        }
        Ok(out)
    }
}
