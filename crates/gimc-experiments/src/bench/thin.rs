//! Aᵀ U with a thin U (`gimc_linalg::thin`) against faer's GEMM on the same operands: the ALS
//! Hessian's Φ_blkᵀ U on a 256-row block of 500 features (gimc-table3's shape), with the k of
//! its data sets (2 clusters on mushrooms, 7 on segment and covtype), single-threaded. The
//! other product of that Hessian, Φ_blk S, is in the table for scale: it stays with faer.

use gimc_linalg::faer::linalg::matmul::matmul;
use gimc_linalg::faer::{Accum, Mat, Par};
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::thin::thin_tr_mul_into;

use super::{Benchmark, Measurement, median_secs};
use crate::{Context, ExperimentError};

/// Φ_blkᵀ U by `thin_tr_mul_into` and by faer, and Φ_blk S by faer.
pub struct ThinProducts;

impl Benchmark for ThinProducts {
    fn name(&self) -> &'static str {
        "thin-products"
    }

    fn description(&self) -> &'static str {
        "GFLOP/s of the ALS Hessian's thin products on a 256 × 500 block of a 2,310 × 500 \
         feature matrix (gimc-table3's segment), sequential: Φ_blkᵀ U by \
         gimc_linalg::thin::thin_tr_mul_into and by faer's GEMM, and Φ_blk S by faer's GEMM, \
         for k = 2 and 7 columns."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let mut rng = seeded(ctx.seed);
        let (n, d, rows) = (2310, 500, 256);
        let phi: Mat<f64> = gaussian_mat(&mut rng, n, d, 1.0);
        let blk = phi.as_ref().subrows(0, rows);
        let runs = if ctx.quick { 11 } else { 201 };
        let mut out = Vec::new();
        for k in [2, 7] {
            let s: Mat<f64> = gaussian_mat(&mut rng, d, k, 1.0);
            let u: Mat<f64> = gaussian_mat(&mut rng, rows, k, 1.0);
            let mut p = Mat::<f64>::zeros(rows, k);
            let mut acc = Mat::<f64>::zeros(d, k);
            let flops = 2.0 * (rows * d * k) as f64;
            let case = |what: &str| format!("{what}, k = {k}");
            let (thin_secs, _) = median_secs(runs, || -> Result<(), ExperimentError> {
                thin_tr_mul_into(blk, u.as_ref(), acc.as_mut())?;
                std::hint::black_box(&acc);
                Ok(())
            })?;
            let (faer_secs, _) = median_secs(runs, || -> Result<(), ExperimentError> {
                let (b, a) = (blk.transpose(), u.as_ref());
                matmul(acc.as_mut(), Accum::Replace, b, a, 1.0, Par::Seq);
                std::hint::black_box(&acc);
                Ok(())
            })?;
            let (fwd_secs, _) = median_secs(runs, || -> Result<(), ExperimentError> {
                matmul(p.as_mut(), Accum::Replace, blk, s.as_ref(), 1.0, Par::Seq);
                std::hint::black_box(&p);
                Ok(())
            })?;
            let faer_rate = flops / faer_secs / 1e9;
            out.push(Measurement::new(
                &case("Φᵀ U, faer GEMM"),
                "rate",
                faer_rate,
                "GFLOP/s",
            ));
            out.push(
                Measurement::new(
                    &case("Φᵀ U, thin_tr_mul_into"),
                    "rate",
                    flops / thin_secs / 1e9,
                    "GFLOP/s",
                )
                .with_reference(faer_rate, "faer GEMM, same run"),
            );
            out.push(Measurement::new(
                &case("Φ S, faer GEMM"),
                "rate",
                flops / fwd_secs / 1e9,
                "GFLOP/s",
            ));
        }
        Ok(out)
    }
}
