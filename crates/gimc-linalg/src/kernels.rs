//! Kernel functions (RBF, linear, polynomial) evaluated as GEMM blocks (DESIGN §3.1).
//!
//! A block K_ir = k(x_i, u_r) is computed from one product `X·Uᵀ` plus row norms: the squared
//! distance is ‖x‖² − 2 x·u + ‖u‖² (clamped at 0 against rounding), so sparse `X` stays sparse
//! and the cost is O(nnz(X)·m) for the product plus O(n·m) for the elementwise map.

use faer::{Mat, MatRef};

use crate::dense::{self, check_finite, rows_contiguous};
use crate::error::dim_err;
use crate::{FeatureMatrix, LinalgError, Result, sparse};

/// A positive-semidefinite kernel k(x, y).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Kernel {
    /// k(x, y) = exp(−γ‖x − y‖²).
    Rbf {
        /// Inverse length scale γ > 0.
        gamma: f64,
    },
    /// k(x, y) = x·y.
    Linear,
    /// k(x, y) = (γ x·y + c₀)^degree.
    Polynomial {
        /// Scale γ > 0 of the inner product.
        gamma: f64,
        /// Offset c₀ (finite).
        coef0: f64,
        /// Degree ≥ 1.
        degree: u32,
    },
}

impl Kernel {
    /// Checks the parameters: γ finite and > 0, c₀ finite, degree ≥ 1.
    pub fn check(&self) -> Result<()> {
        let bad_gamma = |gamma: f64| LinalgError::InvalidParameter {
            name: "gamma",
            reason: format!("must be finite and > 0, got {gamma}"),
        };
        match *self {
            Kernel::Rbf { gamma } => {
                if !(gamma.is_finite() && gamma > 0.0) {
                    return Err(bad_gamma(gamma));
                }
            }
            Kernel::Linear => {}
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            } => {
                if !(gamma.is_finite() && gamma > 0.0) {
                    return Err(bad_gamma(gamma));
                }
                if !coef0.is_finite() {
                    return Err(LinalgError::InvalidParameter {
                        name: "coef0",
                        reason: format!("must be finite, got {coef0}"),
                    });
                }
                if degree == 0 {
                    return Err(LinalgError::InvalidParameter {
                        name: "degree",
                        reason: "must be at least 1".into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// k(x, y) for two points given as slices (the direct per-pair evaluation).
    pub fn eval(&self, x: &[f64], y: &[f64]) -> Result<f64> {
        if x.len() != y.len() {
            return Err(dim_err(
                "Kernel::eval",
                format!("points of equal dimension ({})", x.len()),
                format!("{}", y.len()),
            ));
        }
        let dot: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        Ok(match *self {
            Kernel::Rbf { gamma } => {
                let d2: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
                (-gamma * d2).exp()
            }
            // the other kernels read the inner product only
            Kernel::Linear | Kernel::Polynomial { .. } => self.eval_parts(dot, 0.0, 0.0),
        })
    }

    /// k from the inner product x·y and the squared norms ‖x‖², ‖y‖².
    #[inline]
    fn eval_parts(&self, dot: f64, xx: f64, yy: f64) -> f64 {
        match *self {
            Kernel::Rbf { gamma } => rbf_exponent(gamma, dot, xx, yy).exp(),
            Kernel::Linear => dot,
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            } => poly(gamma * dot + coef0, degree),
        }
    }

    /// Whether the kernel needs the row norms (RBF only).
    fn needs_norms(&self) -> bool {
        matches!(self, Kernel::Rbf { .. })
    }
}

#[inline]
fn poly(base: f64, degree: u32) -> f64 {
    match i32::try_from(degree) {
        Ok(d) => base.powi(d),
        Err(_) => base.powf(f64::from(degree)),
    }
}

/// Largest fraction of non-zeros for which landmark products go through compressed forms.
const SPARSE_FRACTION: f64 = 0.2;

/// Applies the kernel elementwise to the inner-product block `g` (n × m) in place, parallel
/// over columns (each entry is independent, so the result does not depend on threads).
fn finish_block(kernel: &Kernel, g: &mut Mat<f64>, xx: &[f64], uu: &[f64]) {
    use rayon::prelude::*;
    if matches!(kernel, Kernel::Linear) {
        return;
    }
    g.as_mut()
        .par_col_iter_mut()
        .enumerate()
        .for_each(|(r, mut col)| {
            let ur = uu.get(r).copied().unwrap_or(0.0);
            if let (Kernel::Rbf { gamma }, Some(slice)) =
                (kernel, col.as_mut().try_as_col_major_mut())
            {
                // the exponent of eval_parts, then the exponential vectorised (crate::simd)
                let slice = slice.as_slice_mut();
                for (i, v) in slice.iter_mut().enumerate() {
                    *v = rbf_exponent(*gamma, *v, xx.get(i).copied().unwrap_or(0.0), ur);
                }
                crate::simd::exp_in_place(slice);
                return;
            }
            // a libm call per entry right after the GEMM that formed g (crate::simd)
            crate::simd::clear_upper_state();
            for (i, v) in col.iter_mut().enumerate() {
                let xi = xx.get(i).copied().unwrap_or(0.0);
                *v = kernel.eval_parts(*v, xi, ur);
            }
        });
}

/// Squared norms of the rows of a dense matrix.
fn dense_row_sq_norms(a: MatRef<'_, f64>) -> Vec<f64> {
    let t = rows_contiguous(a);
    (0..a.nrows())
        .map(|i| t.col_as_slice(i).iter().map(|v| v * v).sum())
        .collect()
}

/// The kernel block K (n × m), K_ir = k(x_i, u_r), for features `x` (n × d, dense or sparse) and
/// landmarks given as the rows of `landmarks` (m × d), through one product `X·Uᵀ`.
pub fn kernel_block(
    kernel: &Kernel,
    x: &FeatureMatrix,
    landmarks: MatRef<'_, f64>,
) -> Result<Mat<f64>> {
    kernel.check()?;
    if landmarks.ncols() != x.ncols() {
        return Err(dim_err(
            "kernel_block",
            format!("landmarks with {} columns", x.ncols()),
            format!("{} columns", landmarks.ncols()),
        ));
    }
    check_finite(landmarks)?;
    let (xx, uu) = if kernel.needs_norms() {
        (x.row_sq_norms(), dense_row_sq_norms(landmarks))
    } else {
        (Vec::new(), Vec::new())
    };
    match x {
        // Landmarks drawn from the rows of a sparse set are themselves mostly zeros: multiply
        // through their compressed form (O(nnz(X)·nnz per landmark column) instead of
        // O(nnz(X)·m)), with the kernel applied as each block of rows is finished. Learned
        // landmarks are dense and take the blocked product.
        FeatureMatrix::Sparse(xs) if sparse::nonzero_fraction(landmarks) <= SPARSE_FRACTION => {
            let mut g = sparse::csr_mul_sparse_dense_tr_map(xs, landmarks, |i, r, dot| {
                fused_entry(kernel, dot, &xx, &uu, i, r)
            })?;
            finish_fused(kernel, &mut g);
            Ok(g)
        }
        _ => {
            let mut g = x.mul_dense(landmarks.transpose())?;
            finish_block(kernel, &mut g, &xx, &uu);
            Ok(g)
        }
    }
}

/// The entry of a product fused with the kernel ([`sparse::rows_times_rows_map`]), from the
/// inner product and the squared norms (absent when the kernel needs none): k(a_i, b_r), except
/// for RBF its exponent −γ ‖a_i − b_r‖², which [`finish_fused`] exponentiates vectorised.
#[inline]
fn fused_entry(kernel: &Kernel, dot: f64, xx: &[f64], uu: &[f64], i: usize, r: usize) -> f64 {
    let xi = xx.get(i).copied().unwrap_or(0.0);
    let ur = uu.get(r).copied().unwrap_or(0.0);
    match *kernel {
        Kernel::Rbf { gamma } => rbf_exponent(gamma, dot, xi, ur),
        _ => kernel.eval_parts(dot, xi, ur),
    }
}

/// −γ ‖x − y‖² from x·y, ‖x‖² and ‖y‖² (clamped at 0 against rounding): the exponent of
/// [`Kernel::eval_parts`]'s RBF.
#[inline]
fn rbf_exponent(gamma: f64, dot: f64, xx: f64, yy: f64) -> f64 {
    -gamma * (xx - 2.0 * dot + yy).max(0.0)
}

/// After a product fused by [`fused_entry`]: the RBF exponentials, column by column in parallel
/// ([`crate::simd::exp_in_place`]); nothing for the other kernels.
fn finish_fused(kernel: &Kernel, g: &mut Mat<f64>) {
    use rayon::prelude::*;
    if matches!(kernel, Kernel::Rbf { .. }) {
        g.as_mut().par_col_iter_mut().for_each(|mut col| {
            if let Some(slice) = col.as_mut().try_as_col_major_mut() {
                crate::simd::exp_in_place(slice.as_slice_mut());
            } else {
                col.iter_mut().for_each(|v| *v = v.exp());
            }
        });
    }
}

/// The kernel block K (n × m), K_ij = k(a_i, b_j), between the rows of two dense matrices
/// `a` (n × d) and `b` (m × d), through one GEMM `A·Bᵀ`.
pub fn kernel_block_dense(
    kernel: &Kernel,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
) -> Result<Mat<f64>> {
    kernel.check()?;
    check_finite(a)?;
    check_finite(b)?;
    if a.ncols() != b.ncols() {
        return Err(dim_err(
            "kernel_block_dense",
            format!("b with {} columns", a.ncols()),
            format!("{} columns", b.ncols()),
        ));
    }
    let mostly_zero = |m: MatRef<'_, f64>| sparse::nonzero_fraction(m) <= SPARSE_FRACTION;
    let (xx, uu) = if kernel.needs_norms() {
        (dense_row_sq_norms(a), dense_row_sq_norms(b))
    } else {
        (Vec::new(), Vec::new())
    };
    if mostly_zero(a) && mostly_zero(b) {
        let mut g = sparse::sparse_dense_mul_tr_map(a, b, |i, r, dot| {
            fused_entry(kernel, dot, &xx, &uu, i, r)
        });
        finish_fused(kernel, &mut g);
        return Ok(g);
    }
    let mut g = dense::matmul_nt(a, b)?;
    finish_block(kernel, &mut g, &xx, &uu);
    Ok(g)
}

/// The diagonal k(x_i, x_i) for every row of `x` (1 for RBF).
pub fn kernel_diag(kernel: &Kernel, x: &FeatureMatrix) -> Result<Vec<f64>> {
    kernel.check()?;
    let norms = x.row_sq_norms();
    Ok(norms.iter().map(|&s| kernel.eval_parts(s, s, s)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};

    #[test]
    fn check_rejects_bad_parameters() {
        assert!(Kernel::Rbf { gamma: 0.0 }.check().is_err());
        assert!(Kernel::Rbf { gamma: -1.0 }.check().is_err());
        assert!(Kernel::Rbf { gamma: f64::NAN }.check().is_err());
        assert!(Kernel::Rbf { gamma: 0.5 }.check().is_ok());
        assert!(Kernel::Linear.check().is_ok());
        let p = |gamma, coef0, degree| {
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            }
            .check()
        };
        assert!(p(1.0, 1.0, 3).is_ok());
        assert!(p(f64::INFINITY, 1.0, 3).is_err());
        assert!(p(1.0, f64::NAN, 3).is_err());
        assert!(p(1.0, 1.0, 0).is_err());
    }

    #[test]
    fn dense_block_matches_pairwise() {
        let mut rng = seeded(21);
        let a = gaussian_mat(&mut rng, 6, 4, 1.0);
        let b = gaussian_mat(&mut rng, 3, 4, 1.0);
        for k in [
            Kernel::Rbf { gamma: 0.3 },
            Kernel::Linear,
            Kernel::Polynomial {
                gamma: 0.5,
                coef0: 1.0,
                degree: 3,
            },
        ] {
            let blk = kernel_block_dense(&k, a.as_ref(), b.as_ref()).unwrap();
            for i in 0..6 {
                for j in 0..3 {
                    let ai: Vec<f64> = (0..4).map(|c| a[(i, c)]).collect();
                    let bj: Vec<f64> = (0..4).map(|c| b[(j, c)]).collect();
                    let direct = k.eval(&ai, &bj).unwrap();
                    assert!((blk[(i, j)] - direct).abs() < 1e-12, "{k:?}");
                }
            }
        }
        // the RBF block of a set with itself has a unit diagonal even under rounding
        let self_blk = kernel_block_dense(&Kernel::Rbf { gamma: 2.0 }, a.as_ref(), a.as_ref());
        let self_blk = self_blk.unwrap();
        for i in 0..6 {
            assert!((self_blk[(i, i)] - 1.0).abs() < 1e-12);
            assert!(self_blk[(i, i)] <= 1.0);
        }
        assert!(Kernel::Linear.eval(&[1.0], &[1.0, 2.0]).is_err());
        assert!(kernel_block_dense(&Kernel::Linear, a.as_ref(), a.transpose()).is_err());
    }
}
