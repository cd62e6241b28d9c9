//! The cost of the dirty upper SIMD state that faer's GEMMs leave (`gimc_linalg::simd`): a loop
//! of libm calls timed on a clean state, right after a faer GEMM, and after the GEMM followed by
//! [`clear_upper_state`], the call every libm loop of the workspace now starts with; beside
//! them the vectorised [`sin_cos_into`] (the random Fourier map) and [`logistic_terms`] (the
//! transduction FPC's label terms), which call no libm at all.

use gimc_linalg::faer::linalg::matmul::matmul;
use gimc_linalg::faer::{Accum, Mat, Par};
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::simd::{clear_upper_state, exp_in_place, logistic_terms, sin_cos_into};

use super::{Benchmark, Measurement, median_secs};
use crate::{Context, ExperimentError};

/// libm loops after a GEMM, with and without clearing the upper state.
pub struct LibmAfterGemm;

/// A timed loop over the values (returns a sum so that it is not optimised away).
type LibmLoop = fn(&[f64]) -> f64;

/// What precedes the timed loop.
#[derive(Clone, Copy)]
enum Before {
    Nothing,
    Gemm,
    GemmThenClear,
}

/// Σ log(1 + e^{−|v|}) + max(−v, 0): the logistic loss of the transduction FPC.
fn logistic_sum(v: &[f64]) -> f64 {
    v.iter()
        .map(|&m| (-m).max(0.0) + (-m.abs()).exp().ln_1p())
        .sum()
}

/// Σ e^{−|v|}: the RBF kernel blocks' exponential.
fn exp_sum(v: &[f64]) -> f64 {
    v.iter().map(|&x| (-x.abs()).exp()).sum()
}

/// The same sum through [`exp_in_place`] (no libm), in blocks of 1,024 values as the kernel
/// blocks pass one column at a time.
fn exp_vectorised_sum(v: &[f64]) -> f64 {
    let mut e = [0.0; 1024];
    let mut total = 0.0;
    for block in v.chunks(1024) {
        let n = block.len();
        for (e, &x) in e.iter_mut().zip(block) {
            *e = -x.abs();
        }
        exp_in_place(&mut e[..n]);
        total += e[..n].iter().sum::<f64>();
    }
    total
}

/// The same sum through [`logistic_terms`] (no libm), in blocks of 1,024 values.
fn logistic_vectorised_sum(v: &[f64]) -> f64 {
    let mut sp = [0.0; 1024];
    let mut total = 0.0;
    for block in v.chunks(1024) {
        let n = block.len();
        logistic_terms(block, Some(&mut sp[..n]), None);
        total += sp[..n].iter().sum::<f64>();
    }
    total
}

/// Σ (sin v + cos v): the random Fourier map's nonlinearity.
fn sincos_sum(v: &[f64]) -> f64 {
    v.iter()
        .map(|&x| {
            let (s, c) = x.sin_cos();
            s + c
        })
        .sum()
}

/// Σ (sin v + cos v) through [`sin_cos_into`] (no libm), in blocks of 1,024 values as the
/// map passes one column at a time.
fn sincos_vectorised_sum(v: &[f64]) -> f64 {
    let (mut s, mut c) = ([0.0; 1024], [0.0; 1024]);
    let mut total = 0.0;
    for block in v.chunks(1024) {
        let n = block.len();
        sin_cos_into(block, 1.0, &mut s[..n], &mut c[..n]);
        total += s[..n].iter().zip(&c[..n]).map(|(a, b)| a + b).sum::<f64>();
    }
    total
}

impl Benchmark for LibmAfterGemm {
    fn name(&self) -> &'static str {
        "libm-after-gemm"
    }

    fn description(&self) -> &'static str {
        "Nanoseconds per element of a libm loop (exp, exp + log1p, sin_cos over 100,000 values, one \
         thread) on a clean SIMD state, right after a faer GEMM (64 × 400 × 64, sequential), and \
         after the GEMM followed by gimc_linalg::simd::clear_upper_state (vzeroupper); and the \
         same exp, sin / cos and logistic loss by gimc_linalg::simd's exp_in_place, sin_cos_into \
         and logistic_terms (vectorised, no libm), which the RBF kernel blocks, the random \
         Fourier map and the transduction FPC use."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let mut rng = seeded(ctx.seed);
        let v: Vec<f64> = gaussian_mat(&mut rng, 100_000, 1, 3.0)
            .col_as_slice(0)
            .to_vec();
        let a = gaussian_mat(&mut rng, 64, 400, 1.0);
        let mut g = Mat::<f64>::zeros(64, 64);
        let runs = if ctx.quick { 3 } else { 15 };
        let mut out = Vec::new();
        let loops: [(&str, LibmLoop); 6] = [
            ("exp", exp_sum),
            ("exp_in_place (vectorised)", exp_vectorised_sum),
            ("exp + log1p", logistic_sum),
            ("logistic_terms (vectorised)", logistic_vectorised_sum),
            ("sin_cos", sincos_sum),
            ("sin_cos_into (vectorised)", sincos_vectorised_sum),
        ];
        for (name, f) in loops {
            let mut clean_ns = None;
            for (before, label) in [
                (Before::Nothing, "clean state"),
                (Before::Gemm, "after a GEMM"),
                (Before::GemmThenClear, "after a GEMM, cleared"),
            ] {
                let (secs, _) = median_secs(runs, || -> Result<f64, ExperimentError> {
                    // the preparation is inside the timed closure but costs microseconds
                    // against the loop's milliseconds
                    match before {
                        Before::Nothing => clear_upper_state(),
                        Before::Gemm | Before::GemmThenClear => {
                            matmul(
                                g.as_mut(),
                                Accum::Replace,
                                a.as_ref(),
                                a.transpose(),
                                1.0,
                                Par::Seq,
                            );
                            if matches!(before, Before::GemmThenClear) {
                                clear_upper_state();
                            }
                        }
                    }
                    Ok(std::hint::black_box(f(std::hint::black_box(&v))))
                })?;
                let ns = secs / v.len() as f64 * 1e9;
                let m = Measurement::new(name, label, ns, "ns/element");
                out.push(match clean_ns {
                    Some(c) => m.with_reference(c, "clean state, same run"),
                    None => m,
                });
                clean_ns.get_or_insert(ns);
            }
        }
        Ok(out)
    }
}
