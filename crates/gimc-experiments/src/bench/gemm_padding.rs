//! The cost of stale column padding in a GEMM's left operand (`gimc_linalg::dense::zeros_padded`):
//! faer's AVX-512 kernels read a column-major left operand in place and load the padding rows of
//! its last row block with the rest, so subnormal garbage there makes every FMA of that block
//! take a microcode assist. The shape is MC-1's shrinkage product on yeast (Z = P·A with P
//! 118 × 118 and A 118 × 2,417).

use gimc_linalg::dense::{padded_from_fn, zeros_padded};
use gimc_linalg::faer::linalg::matmul::matmul;
use gimc_linalg::faer::{Accum, Mat, Par};
use gimc_linalg::rng::{gaussian_mat, seeded};

use super::{Benchmark, Measurement, median_secs};
use crate::{Context, ExperimentError};

/// One sequential `P·A` with zero padding and with subnormal padding in `P`.
pub struct GemmLhsPadding;

/// A 118 × 118 matrix equal to `p` whose two padding rows hold `fill`: built 120 rows tall and
/// truncated, as faer never reads or writes the padding itself.
fn with_padding(p: &Mat<f64>, fill: f64) -> Mat<f64> {
    let m = p.nrows();
    let mut out = padded_from_fn(m.next_multiple_of(8), p.ncols(), |i, j| {
        if i < m { p[(i, j)] } else { fill }
    });
    out.truncate(m, p.ncols());
    out
}

impl Benchmark for GemmLhsPadding {
    fn name(&self) -> &'static str {
        "gemm-lhs-padding"
    }

    fn description(&self) -> &'static str {
        "Milliseconds per sequential faer product P·A (P 118 × 118, A 118 × 2,417: MC-1's \
         shrinkage on yeast) with P's two padding rows zero (dense::zeros_padded) and holding \
         subnormal doubles, as heap memory that last held integers does."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let mut rng = seeded(ctx.seed);
        let (m, n) = (118, 2417);
        let p = gaussian_mat(&mut rng, m, m, 1.0);
        let a = gaussian_mat(&mut rng, m, n, 1.0);
        let mut z = zeros_padded(m, n);
        let runs = if ctx.quick { 5 } else { 41 };
        let flops = 2.0 * (m * m * n) as f64;
        let mut out = Vec::new();
        let mut zero_ms = None;
        for (label, fill) in [("zero padding", 0.0), ("subnormal padding", 1e-310)] {
            let lhs = with_padding(&p, fill);
            let (secs, _) = median_secs(runs, || -> Result<(), ExperimentError> {
                matmul(
                    z.as_mut(),
                    Accum::Replace,
                    lhs.as_ref(),
                    a.as_ref(),
                    1.0,
                    Par::Seq,
                );
                std::hint::black_box(&z);
                Ok(())
            })?;
            let ms = secs * 1e3;
            let m_ms = Measurement::new(label, "time", ms, "ms");
            out.push(match zero_ms {
                Some(c) => m_ms.with_reference(c, "zero padding, same run"),
                None => m_ms,
            });
            out.push(Measurement::new(
                label,
                "rate",
                flops / secs / 1e9,
                "GFLOP/s",
            ));
            zero_ms.get_or_insert(ms);
        }
        Ok(out)
    }
}
