//! The sparse × dense products of a GIMC-LFF fit on Delicious (gimc-table2's largest learned
//! fits, m = 1,000 directions, D = 2m): the forward pass X·U, the backward pass XᵀH, and the
//! label cross product AᵀΦ, with X (12,920 × 500, 18.5 non-zeros a row) and A (12,920 × 983,
//! 19 a row) from Delicious's training rows and Gaussian dense operands. Each runs once per
//! line-search trial or gradient; 2·nnz·k flops.

use gimc_data::{Targets, load_named};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::zeros_padded;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sparse::{csr_mul_dense, csr_tr_mul_dense, csr_tr_mul_dense_add};

use super::{Benchmark, Measurement, median_secs};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// X·U, XᵀH and AᵀΦ on Delicious's training rows.
pub struct SparseProducts;

/// Fourier directions m of the fits (Φ has 2m columns).
const M: usize = 1000;

impl Benchmark for SparseProducts {
    fn name(&self) -> &'static str {
        "sparse-products"
    }

    fn description(&self) -> &'static str {
        "The sparse × dense products of one GIMC-LFF iteration on Delicious at m = 1,000 \
         (gimc-table2's learned fits), on both cores: X·U (X the 12,920 × 500 training \
         features, 18.5 non-zeros a row; U 500 × 1,000), XᵀH (H 12,920 × 1,000) and AᵀΦ (A the \
         12,920 × 983 labels, 19 a row; Φ 12,920 × 2,000). Median GFLOP/s (2·nnz·k flops) and \
         time of the kernel into an output allocated once, and time of the allocating call \
         a fit makes (page faults included)."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let named = load_named(&ctx.data_dir, "delicious")?;
        let train = named
            .part("train")
            .ok_or_else(|| fail("delicious lacks a train part"))?;
        let labels = match &train.targets {
            Targets::Labels { matrix, .. } => matrix,
            _ => return Err(fail("expected a multi-label set")),
        };
        let x = match &train.features {
            FeatureMatrix::Sparse(x) => x,
            FeatureMatrix::Dense(_) => return Err(fail("expected sparse Delicious features")),
        };
        let (n, d) = (x.rows(), x.cols());
        let (x_nnz, a_nnz) = (x.nnz() as f64, labels.nnz() as f64);
        let mut rng = seeded(ctx.seed);
        let u: Mat<f64> = gaussian_mat(&mut rng, d, M, 1.0);
        let h: Mat<f64> = gaussian_mat(&mut rng, n, M, 1.0);
        let phi: Mat<f64> = gaussian_mat(&mut rng, n, 2 * M, 1.0);
        let runs = if ctx.quick { 3 } else { 21 };
        // the kernels alone, into outputs allocated (and paged in) once: X·U = (Xᵀ)ᵀU
        let mut xu = zeros_padded(n, M);
        let mut xth = zeros_padded(d, M);
        let mut atphi = zeros_padded(labels.cols(), 2 * M);
        let xt = x.transpose_view();
        let (k_fwd, _) = median_secs(runs, || csr_tr_mul_dense_add(&xt, u.as_ref(), xu.as_mut()))?;
        let (k_bwd, _) = median_secs(runs, || csr_tr_mul_dense_add(x, h.as_ref(), xth.as_mut()))?;
        let (k_cross, _) = median_secs(runs, || {
            csr_tr_mul_dense_add(labels, phi.as_ref(), atphi.as_mut())
        })?;
        // the calls a fit makes, each allocating its product
        let (t_fwd, _) = median_secs(runs, || csr_mul_dense(x, u.as_ref()))?;
        let (t_bwd, _) = median_secs(runs, || csr_tr_mul_dense(x, h.as_ref()))?;
        let (t_cross, _) = median_secs(runs, || csr_tr_mul_dense(labels, phi.as_ref()))?;
        let mut out = Vec::new();
        for (case, kernel, call, nnz, k) in [
            (format!("X·U, U {d}x{M}"), k_fwd, t_fwd, x_nnz, M),
            (format!("XᵀH, H {n}x{M}"), k_bwd, t_bwd, x_nnz, M),
            (
                format!("AᵀΦ, Φ {n}x{}", 2 * M),
                k_cross,
                t_cross,
                a_nnz,
                2 * M,
            ),
        ] {
            out.push(Measurement::new(
                &case,
                "kernel rate (output allocated once)",
                2.0 * nnz * k as f64 / kernel / 1e9,
                "GFLOP/s",
            ));
            out.push(Measurement::new(&case, "kernel time", 1e3 * kernel, "ms"));
            out.push(Measurement::new(
                &case,
                "call time (product allocated)",
                1e3 * call,
                "ms",
            ));
        }
        Ok(out)
    }
}
