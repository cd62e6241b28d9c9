//! Symmetric eigendecomposition and the matrix functions built on it (DESIGN §3.1: the Nyström
//! normalisation M = (E^†)^{1/2}).
//!
//! Inputs are symmetrised ((A + Aᵀ)/2) before factorising, so a kernel matrix that is symmetric
//! only up to rounding is handled consistently.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::{Conj, Mat, MatRef, Par, Side};

mod secular;
mod tridiagonal;

pub use secular::diag_rank_two_eigenvalues;

use crate::dense::{self, check_finite, check_square};
use crate::{LinalgError, Result};

/// Eigenvalues (ascending) and eigenvectors (columns, orthonormal) of the symmetric part of `a`.
///
/// faer's divide-and-conquer eigendecomposition, split into tasks by the size alone
/// ([`dense::factor_par`]), so the bits are the same on every machine.
pub fn sym_eig(a: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>)> {
    use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch};
    let n = check_square("sym_eig", a)?;
    check_finite(a)?;
    if n == 0 {
        return Ok((Vec::new(), Mat::zeros(0, 0)));
    }
    let s = dense::symmetrize(a)?;
    let mut vals = faer::diag::Diag::<f64>::zeros(n);
    let mut vecs = Mat::<f64>::zeros(n, n);
    let par = dense::factor_par(n);
    let mut buf = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::Yes,
        par,
        Default::default(),
    ));
    self_adjoint_evd(
        s.as_ref(),
        vals.as_mut(),
        Some(vecs.as_mut()),
        par,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .map_err(|e| LinalgError::Factorization("symmetric eigendecomposition", format!("{e:?}")))?;
    Ok((vals.column_vector().iter().copied().collect(), vecs))
}

/// Eigenvalues (ascending) and, with `vectors`, eigenvectors (columns, orthonormal; else a
/// 0 × 0 matrix) of a small symmetric matrix whose lower triangle is `a`'s, on the calling
/// thread: the inner eigendecompositions of iterative solvers (the FPC shrinkage's Gram
/// matrices, up to a few hundred rows).
///
/// faer's blocked Householder tridiagonalisation, then the implicit QL algorithm with Wilkinson
/// shifts (EISPACK tql1 / tql2) in place of faer's tridiagonal QR, and faer's blocked
/// back-transformation of the vectors. Below faer's divide-and-conquer threshold (128) both
/// run the same O(n³) rotations on the vectors; the QL here spends no `hypot` on its deflation
/// tests and rotations, which made faer's take 2–3 times as long at n = 31 and n = 118
/// (BENCHMARKS, `small-sym-eig`). Like any symmetric QR, the eigenvalues carry a backward error
/// of O(ε ‖A‖) absolute; they differ from faer's at rounding level.
///
/// ```
/// use gimc_linalg::eig::sym_eig_seq;
/// use gimc_linalg::faer::mat;
///
/// let a = mat![[2.0, 1.0], [1.0, 2.0]];
/// let (vals, vecs) = sym_eig_seq(a.as_ref(), true)?;
/// assert!((vals[0] - 1.0).abs() < 1e-14 && (vals[1] - 3.0).abs() < 1e-14);
/// assert!((vecs[(0, 1)].abs() - 0.5_f64.sqrt()).abs() < 1e-14);
/// # Ok::<(), gimc_linalg::LinalgError>(())
/// ```
pub fn sym_eig_seq(a: MatRef<'_, f64>, vectors: bool) -> Result<(Vec<f64>, Mat<f64>)> {
    use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
    let n = check_square("sym_eig_seq", a)?;
    check_finite(a)?;
    let dim = if vectors { n } else { 0 };
    if n <= 1 {
        let vals = (0..n).map(|i| a[(i, i)]).collect();
        return Ok((vals, Mat::identity(dim, dim)));
    }
    let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
    let mut trid = Mat::<f64>::zeros(n, n);
    trid.copy_from_triangular_lower(a);
    let mut householder = Mat::<f64>::zeros(bs, n - 1);
    let mut buf = MemBuffer::new(StackReq::any_of(&[
        tridiag_in_place_scratch::<f64>(n, Par::Seq, Default::default()),
        apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n - 1, bs, n),
    ]));
    let stack = MemStack::new(&mut buf);
    tridiag_in_place(
        trid.as_mut(),
        householder.as_mut(),
        Par::Seq,
        stack,
        Default::default(),
    );
    let mut d: Vec<f64> = (0..n).map(|i| trid[(i, i)]).collect();
    let mut e: Vec<f64> = (0..n)
        .map(|i| if i + 1 < n { trid[(i + 1, i)] } else { 0.0 })
        .collect();
    if !vectors {
        tridiagonal::tridiagonal_ql(&mut d, &mut e, None)?;
        d.sort_by(f64::total_cmp);
        return Ok((d, Mat::zeros(0, 0)));
    }
    // T's eigenvectors, column-major, from the identity
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    tridiagonal::tridiagonal_ql(&mut d, &mut e, Some(&mut v))?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| d[i].total_cmp(&d[j]));
    let mut u = Mat::from_fn(n, n, |r, c| v[order[c] * n + r]);
    apply_block_householder_sequence_on_the_left_in_place_with_conj(
        trid.as_ref().submatrix(1, 0, n - 1, n - 1),
        householder.as_ref(),
        Conj::No,
        u.as_mut().subrows_mut(1, n - 1),
        Par::Seq,
        stack,
    );
    Ok((order.iter().map(|&i| d[i]).collect(), u))
}

/// V diag(f(λ)) Vᵀ over the eigenpairs with `keep(λ)`; the rest contribute nothing.
fn spectral_fn(
    vals: &[f64],
    vecs: &Mat<f64>,
    keep: impl Fn(f64) -> bool,
    f: impl Fn(f64) -> f64,
) -> Mat<f64> {
    let n = vecs.nrows();
    let kept: Vec<usize> = (0..vals.len()).filter(|&i| keep(vals[i])).collect();
    // V_k diag(√f) so that the product is exactly symmetric: (V√F)(V√F)ᵀ when f ≥ 0
    let w = Mat::from_fn(n, kept.len(), |i, c| {
        vecs[(i, kept[c])] * f(vals[kept[c]]).sqrt()
    });
    dense::gram_nt(w.as_ref())
}

fn check_rel_tol(rel_tol: f64) -> Result<()> {
    if !(rel_tol.is_finite() && (0.0..1.0).contains(&rel_tol)) {
        return Err(LinalgError::InvalidParameter {
            name: "rel_tol",
            reason: format!("must be in [0, 1), got {rel_tol}"),
        });
    }
    Ok(())
}

/// (A^†)^{1/2} for a symmetric PSD `a`: V diag(λ^{-1/2}) Vᵀ over the eigenvalues
/// λ > rel_tol·λ_max (and > 0); the others, including the negative rounding noise of a PSD
/// kernel matrix, are dropped (DESIGN §3.1, Nyström M). A matrix with no eigenvalue above the
/// threshold gives the zero matrix. `rel_tol` must be in [0, 1).
pub fn pinv_sqrt(a: MatRef<'_, f64>, rel_tol: f64) -> Result<Mat<f64>> {
    pinv_fn(a, rel_tol, |l| 1.0 / l.sqrt())
}

/// A factor M with M Mᵀ = A^† for a symmetric PSD `a`, with the eigenvalue threshold of
/// [`pinv_sqrt`] (DESIGN §3.1, Nyström M: any such M gives the same ΦΦᵀ = C A^† Cᵀ).
///
/// The fast path is the Cholesky factorisation A = LLᵀ and M = L⁻ᵀ (upper triangular,
/// O(n³/3) against the eigendecomposition's ~9n³). It is taken only when it provably drops
/// nothing that [`pinv_sqrt`] would keep or keep anything it would drop: λ_min(A) ≥
/// 1 / ‖L⁻¹‖²_F (as ‖A⁻¹‖₂ = ‖L⁻¹‖²₂ ≤ ‖L⁻¹‖²_F) and λ_max(A) ≤ tr A, so when
/// 1 / ‖L⁻¹‖²_F > rel_tol · tr A every eigenvalue is above rel_tol·λ_max. Otherwise (a singular
/// or badly conditioned A) the result is [`pinv_sqrt`]'s. `rel_tol` must be in [0, 1).
pub fn pinv_factor(a: MatRef<'_, f64>, rel_tol: f64) -> Result<Mat<f64>> {
    check_rel_tol(rel_tol)?;
    let n = check_square("pinv_factor", a)?;
    check_finite(a)?;
    if n == 0 {
        return Ok(Mat::zeros(0, 0));
    }
    let s = dense::symmetrize(a)?;
    if let Ok(llt) = s.llt(Side::Lower) {
        let mut l_inv = Mat::<f64>::zeros(n, n);
        invert_lower_triangular(l_inv.as_mut(), llt.L(), dense::par());
        let inv_frob_sq = l_inv.squared_norm_l2();
        let trace: f64 = (0..n).map(|i| s[(i, i)]).sum();
        if inv_frob_sq.is_finite() && rel_tol * trace * inv_frob_sq < 1.0 {
            return Ok(l_inv.transpose().to_owned());
        }
    }
    pinv_sqrt(s.as_ref(), rel_tol)
}

/// A^† for a symmetric PSD `a`, dropping eigenvalues ≤ rel_tol·λ_max as in [`pinv_sqrt`].
pub fn sym_pinv(a: MatRef<'_, f64>, rel_tol: f64) -> Result<Mat<f64>> {
    pinv_fn(a, rel_tol, |l| 1.0 / l)
}

/// V diag(f(λ)) Vᵀ over the eigenvalues λ > rel_tol·λ_max (and > 0) of a symmetric PSD `a`.
fn pinv_fn(a: MatRef<'_, f64>, rel_tol: f64, f: impl Fn(f64) -> f64) -> Result<Mat<f64>> {
    check_rel_tol(rel_tol)?;
    let (vals, vecs) = sym_eig(a)?;
    let lmax = vals.last().copied().unwrap_or(0.0).max(0.0);
    let cut = rel_tol * lmax;
    Ok(spectral_fn(&vals, &vecs, |l| l > cut && l > 0.0, f))
}

/// A^{1/2} for a symmetric PSD `a` (negative eigenvalues, i.e. rounding noise, are clamped to 0).
pub fn sym_sqrt(a: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let (vals, vecs) = sym_eig(a)?;
    Ok(spectral_fn(&vals, &vecs, |l| l > 0.0, f64::sqrt))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};

    #[test]
    fn eig_reconstructs_and_sorts() {
        let g = gaussian_mat(&mut seeded(1), 5, 5, 1.0);
        let a = &g + g.transpose();
        let (vals, vecs) = sym_eig(a.as_ref()).unwrap();
        assert!(vals.windows(2).all(|w| w[0] <= w[1]));
        let d = Mat::from_fn(5, 5, |i, j| if i == j { vals[i] } else { 0.0 });
        assert!((&vecs * d * vecs.transpose() - &a).norm_l2() < 1e-10);
        assert!(sym_eig(Mat::<f64>::zeros(2, 3).as_ref()).is_err());
    }

    /// ‖A − U Λ Uᵀ‖_F and ‖UᵀU − I‖_F relative to ‖A‖_F, and the largest eigenvalue difference
    /// to faer's, relative to ‖A‖_F.
    fn eig_seq_errors(a: &Mat<f64>) -> (f64, f64, f64) {
        let n = a.nrows();
        let (vals, vecs) = sym_eig_seq(a.as_ref(), true).unwrap();
        let (vals_only, none) = sym_eig_seq(a.as_ref(), false).unwrap();
        assert_eq!(none.shape(), (0, 0));
        assert!(vals.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(vals, vals_only, "the same QL with or without vectors");
        let norm = a.norm_l2().max(f64::MIN_POSITIVE);
        let d = Mat::from_fn(n, n, |i, j| if i == j { vals[i] } else { 0.0 });
        let recon = (&vecs * d * vecs.transpose() - a).norm_l2() / norm;
        let orth = (vecs.transpose() * &vecs - Mat::<f64>::identity(n, n)).norm_l2();
        let (reference, _) = sym_eig(a.as_ref()).unwrap();
        let gap = vals
            .iter()
            .zip(&reference)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
            / norm;
        (recon, orth, gap)
    }

    #[test]
    fn small_eig_matches_faer_on_hard_spectra() {
        let mut rng = seeded(7);
        let mut cases: Vec<(String, Mat<f64>)> = Vec::new();
        for n in [2, 3, 5, 31, 64, 118, 130] {
            let g = gaussian_mat(&mut rng, n, n, 1.0);
            cases.push((format!("symmetric {n}"), &g + g.transpose()));
            // a rank-deficient Gram (the FPC shrinkage's case): eigenvalues near zero
            let b = gaussian_mat(&mut rng, n, n / 2 + 1, 1.0);
            cases.push((format!("Gram rank {}", n / 2 + 1), &b * b.transpose()));
        }
        // repeated eigenvalues, an already diagonal matrix, zero, and a graded matrix whose
        // entries span 10^±150 (the rotations' hypot fallback)
        let x = gaussian_mat(&mut rng, 40, 1, 1.0);
        cases.push((
            "identity + rank 1".into(),
            Mat::<f64>::identity(40, 40) + &x * x.transpose(),
        ));
        cases.push((
            "diagonal".into(),
            Mat::from_fn(20, 20, |i, j| {
                if i == j {
                    (i as f64 - 7.5).powi(3)
                } else {
                    0.0
                }
            }),
        ));
        cases.push(("zero".into(), Mat::zeros(6, 6)));
        let g = gaussian_mat(&mut rng, 12, 12, 1.0);
        let graded = Mat::from_fn(12, 12, |i, j| {
            (g[(i, j)] + g[(j, i)]) * 10f64.powi(150 - 25 * (i.max(j) as i32))
        });
        cases.push(("graded".into(), graded));
        for (name, a) in &cases {
            let n = a.nrows() as f64;
            let (recon, orth, gap) = eig_seq_errors(a);
            assert!(
                recon < 50.0 * n * f64::EPSILON,
                "{name}: ‖A − UΛUᵀ‖ / ‖A‖ = {recon:e}"
            );
            assert!(
                orth < 50.0 * n * f64::EPSILON,
                "{name}: ‖UᵀU − I‖ = {orth:e}"
            );
            assert!(
                gap < 50.0 * n * f64::EPSILON,
                "{name}: eigenvalues off faer's by {gap:e}"
            );
        }
        // a 1 × 1 matrix, and the errors
        let (v, u) = sym_eig_seq(Mat::from_fn(1, 1, |_, _| -3.0).as_ref(), true).unwrap();
        assert_eq!((v, u[(0, 0)]), (vec![-3.0], 1.0));
        assert!(sym_eig_seq(Mat::<f64>::zeros(2, 3).as_ref(), false).is_err());
        let mut nan = Mat::<f64>::identity(3, 3);
        nan[(2, 1)] = f64::NAN;
        assert!(sym_eig_seq(nan.as_ref(), true).is_err());
    }

    #[test]
    fn sqrt_and_pinv() {
        let g = gaussian_mat(&mut seeded(2), 6, 6, 1.0);
        let a = g.transpose() * &g;
        let r = sym_sqrt(a.as_ref()).unwrap();
        assert!((&r * &r - &a).norm_l2() < 1e-9);
        let p = sym_pinv(a.as_ref(), 0.0).unwrap();
        assert!((&p * &a - Mat::<f64>::identity(6, 6)).norm_l2() < 1e-7);
        assert!(pinv_sqrt(a.as_ref(), 1.0).is_err());
        assert!(pinv_sqrt(a.as_ref(), -0.1).is_err());
        assert_eq!(
            pinv_sqrt(Mat::<f64>::zeros(3, 3).as_ref(), 1e-8).unwrap(),
            Mat::zeros(3, 3)
        );
    }
}
