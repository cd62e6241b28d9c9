//! Symmetric eigendecomposition and the matrix functions built on it (DESIGN §3.1: the Nyström
//! normalisation M = (E^†)^{1/2}).
//!
//! Inputs are symmetrised ((A + Aᵀ)/2) before factorising, so a kernel matrix that is symmetric
//! only up to rounding is handled consistently.

use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::{Mat, MatRef, Side};

use crate::dense::{self, check_finite, check_square};
use crate::{LinalgError, Result};

/// Eigenvalues (ascending) and eigenvectors (columns, orthonormal) of the symmetric part of `a`.
pub fn sym_eig(a: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>)> {
    let n = check_square("sym_eig", a)?;
    check_finite(a)?;
    if n == 0 {
        return Ok((Vec::new(), Mat::zeros(0, 0)));
    }
    let s = dense::symmetrize(a)?;
    let evd = s.self_adjoint_eigen(Side::Lower).map_err(|e| {
        LinalgError::Factorization("symmetric eigendecomposition", format!("{e:?}"))
    })?;
    let vals = evd.S().column_vector().iter().copied().collect();
    Ok((vals, evd.U().to_owned()))
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
    check_rel_tol(rel_tol)?;
    let (vals, vecs) = sym_eig(a)?;
    let lmax = vals.last().copied().unwrap_or(0.0).max(0.0);
    let cut = rel_tol * lmax;
    Ok(spectral_fn(
        &vals,
        &vecs,
        |l| l > cut && l > 0.0,
        |l| 1.0 / l.sqrt(),
    ))
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
    check_rel_tol(rel_tol)?;
    let (vals, vecs) = sym_eig(a)?;
    let lmax = vals.last().copied().unwrap_or(0.0).max(0.0);
    let cut = rel_tol * lmax;
    Ok(spectral_fn(
        &vals,
        &vecs,
        |l| l > cut && l > 0.0,
        |l| 1.0 / l,
    ))
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
