//! The small symmetric eigendecompositions of the FPC shrinkage (MC-1 / MC-b): the Gram matrix
//! of the iterate with vectors, and the values of MC-1's nuclear-norm core, at the sizes of
//! mc1-synthetic (31) and mc1-yeast (118). `gimc_linalg::eig::sym_eig_seq` (faer's
//! tridiagonalisation, then the implicit QL of EISPACK's tql1 / tql2) against faer's own
//! sequential `self_adjoint_evd` (tridiagonal QR), which the shrinkage called before. And the
//! values of MC-1's core as it is now computed, by two secular equations
//! (`gimc_linalg::eig::diag_rank_two_eigenvalues`), against the QL on the dense core.

use gimc_linalg::eig::{diag_rank_two_eigenvalues, sym_eig_seq};
use gimc_linalg::faer::dyn_stack::{MemBuffer, MemStack};
use gimc_linalg::faer::linalg::evd::{
    ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch,
};
use gimc_linalg::faer::{Mat, MatRef, Par};
use gimc_linalg::rng::{gaussian_mat, seeded};

use super::{Benchmark, Measurement, median_secs};
use crate::{Context, ExperimentError};

/// Microseconds per sequential symmetric eigendecomposition, ours against faer's.
pub struct SmallSymEig;

/// faer's sequential self-adjoint EVD, as the shrinkage called it before.
fn faer_evd(g: MatRef<'_, f64>, vectors: bool) -> Result<Vec<f64>, ExperimentError> {
    let n = g.nrows();
    let compute = if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    };
    let mut s = gimc_linalg::faer::diag::Diag::<f64>::zeros(n);
    let mut u = Mat::<f64>::zeros(if vectors { n } else { 0 }, if vectors { n } else { 0 });
    let mut buf = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
        n,
        compute,
        Par::Seq,
        Default::default(),
    ));
    self_adjoint_evd(
        g,
        s.as_mut(),
        vectors.then_some(u.as_mut()),
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .map_err(|e| ExperimentError::Failed(format!("faer self_adjoint_evd: {e:?}")))?;
    Ok(s.column_vector().iter().copied().collect())
}

impl Benchmark for SmallSymEig {
    fn name(&self) -> &'static str {
        "small-sym-eig"
    }

    fn description(&self) -> &'static str {
        "Microseconds per sequential symmetric eigendecomposition of a Gram matrix A Aᵀ \
         (A 31 × 400: mc1-synthetic; 118 × 2,417: mc1-yeast), with vectors and values only: \
         eig::sym_eig_seq (implicit QL) against faer's self_adjoint_evd (tridiagonal QR); and \
         the values of MC-1's nuclear-norm core diag(S², 0) + a q̂ᵀ + q̂ aᵀ at k = 30 and 118 \
         by eig::diag_rank_two_eigenvalues (secular equations) against sym_eig_seq on the \
         dense core."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let mut rng = seeded(ctx.seed);
        let mut out = Vec::new();
        for (m, n) in [(31, 400), (118, 2417)] {
            let a = gaussian_mat(&mut rng, m, n, 1.0);
            let g = &a * a.transpose();
            let runs = if ctx.quick {
                11
            } else if m < 64 {
                401
            } else {
                101
            };
            for vectors in [true, false] {
                let case = format!(
                    "n = {m}, {}",
                    if vectors {
                        "with vectors"
                    } else {
                        "values only"
                    }
                );
                let (faer_s, reference) = median_secs(runs, || faer_evd(g.as_ref(), vectors))?;
                let (ours_s, (vals, _)) = median_secs(runs, || sym_eig_seq(g.as_ref(), vectors))?;
                out.extend(timed_pair(
                    &case,
                    (ours_s, &vals),
                    (faer_s, &reference),
                    "faer self_adjoint_evd",
                    "faer's",
                ));
            }
        }
        for k in [30, 118] {
            let (d, a, q) = mc1_core(&mut rng, k);
            let dense = Mat::from_fn(k + 1, k + 1, |i, j| {
                (if i == j { d[i] } else { 0.0 }) + a[i] * q[j] + q[i] * a[j]
            });
            let runs = if ctx.quick { 11 } else { 401 };
            let case = format!("MC-1 core, k = {k}, values only");
            let (ql_s, (reference, _)) = median_secs(runs, || sym_eig_seq(dense.as_ref(), false))?;
            let (ours_s, vals) = median_secs(runs, || diag_rank_two_eigenvalues(&d, &a, &q))?;
            out.extend(timed_pair(
                &case,
                (ours_s, &vals),
                (ql_s, &reference),
                "sym_eig_seq on the dense core",
                "the QL's",
            ));
        }
        Ok(out)
    }
}

/// The time row (µs, against the reference's time in the same run) and the largest gap
/// between the two sets of ascending eigenvalues, relative to the reference's λ_max.
fn timed_pair(
    case: &str,
    (secs, vals): (f64, &[f64]),
    (ref_secs, reference): (f64, &[f64]),
    ref_name: &str,
    ref_whose: &str,
) -> [Measurement; 2] {
    let top = reference.last().copied().unwrap_or(1.0).abs();
    let gap = vals
        .iter()
        .zip(reference)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / top.max(f64::MIN_POSITIVE);
    [
        Measurement::new(case, "time", secs * 1e6, "µs")
            .with_reference(ref_secs * 1e6, &format!("{ref_name}, same run")),
        Measurement::new(
            case,
            &format!("largest gap to {ref_whose} λ, relative to λ_max"),
            gap,
            "",
        ),
    ]
}

/// A core of MC-1's nuclear norm in the shape FPC meets on yeast: squared singular values
/// decaying from 2,500 over four decades, a unit q̂ and a = ŵ + (γ/2) q̂ with γ = cᵀc large.
fn mc1_core(rng: &mut gimc_linalg::rng::GimcRng, k: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    use rand::Rng;
    let decay = 1e-4f64.powf(1.0 / k as f64);
    let s: Vec<f64> = (0..k).map(|i| 50.0 * decay.powi(i as i32)).collect();
    let mut q: Vec<f64> = (0..=k).map(|_| rng.random::<f64>() - 0.5).collect();
    let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    q.iter_mut().for_each(|x| *x /= norm);
    let mut d: Vec<f64> = s.iter().map(|v| v * v).collect();
    d.push(0.0);
    let a = (0..=k)
        .map(|i| if i < k { s[i] * (rng.random::<f64>() - 0.5) } else { 0.0 } + 150.0 * q[i])
        .collect();
    (d, a, q)
}
