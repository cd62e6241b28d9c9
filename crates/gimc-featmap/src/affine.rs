//! Shared building blocks of the maps whose first layer is affine in x (polynomial and
//! activation maps): Z = a·X·W_top + b·1·w_lastᵀ for parameters W = [W_top; w_lastᵀ] of shape
//! (d + 1) × c, and its vector–Jacobian product [a·XᵀH; b·1ᵀH]. Products go through
//! [`FeatureMatrix`], so sparse X stays sparse: O(nnz(X)·c).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::Result;

/// Z = a·X·W[..d, :] + b·1·W[d, :] (n × c) for W of shape (d + 1) × c.
pub(crate) fn affine(x: &FeatureMatrix, w: MatRef<'_, f64>, a: f64, b: f64) -> Result<Mat<f64>> {
    let d = x.ncols();
    let mut z = x.mul_dense(w.subrows(0, d))?;
    z.as_mut()
        .par_col_iter_mut()
        .enumerate()
        .for_each(|(j, col)| {
            let bias = b * w[(d, j)];
            for v in col.iter_mut() {
                *v = a * *v + bias;
            }
        });
    Ok(z)
}

/// [a·XᵀH; b·1ᵀH] ((d + 1) × c): the gradient with respect to W of ⟨H, Z⟩ for Z = affine(X, W).
pub(crate) fn affine_backward(
    x: &FeatureMatrix,
    h: MatRef<'_, f64>,
    a: f64,
    b: f64,
) -> Result<Mat<f64>> {
    let d = x.ncols();
    let top = x.tr_mul_dense(h)?;
    let sums = column_sums(h);
    Ok(Mat::from_fn(d + 1, h.ncols(), |i, j| {
        if i < d { a * top[(i, j)] } else { b * sums[j] }
    }))
}

/// Column sums 1ᵀH, each summed in row order (deterministic), parallel over columns.
pub(crate) fn column_sums(h: MatRef<'_, f64>) -> Vec<f64> {
    (0..h.ncols())
        .into_par_iter()
        .map(|j| h.col(j).iter().sum())
        .collect()
}

/// Applies `f` to every entry of `z` in place, parallel over columns.
pub(crate) fn par_map(z: &mut Mat<f64>, f: impl Fn(f64) -> f64 + Sync) {
    z.as_mut().par_col_iter_mut().for_each(|col| {
        // f is typically a libm call after the GEMM that formed z (gimc_linalg::simd)
        gimc_linalg::simd::clear_upper_state();
        for v in col.iter_mut() {
            *v = f(*v);
        }
    });
}

/// `z ← f(z, g)` entrywise for two matrices of equal shape (checked by the caller), parallel
/// over columns.
pub(crate) fn par_zip_map(
    z: &mut Mat<f64>,
    g: MatRef<'_, f64>,
    f: impl Fn(f64, f64) -> f64 + Sync,
) {
    z.as_mut()
        .par_col_iter_mut()
        .enumerate()
        .for_each(|(j, col)| {
            gimc_linalg::simd::clear_upper_state();
            for (v, &gv) in col.iter_mut().zip(g.col(j).iter()) {
                *v = f(*v, gv);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    #[test]
    fn affine_and_its_backward_match_dense_formulas() {
        let x = gaussian_mat(&mut seeded(1), 6, 3, 1.0);
        let w = gaussian_mat(&mut seeded(2), 4, 2, 1.0);
        let h = gaussian_mat(&mut seeded(3), 6, 2, 1.0);
        let fx = FeatureMatrix::dense(x.clone()).unwrap();
        let (a, b) = (0.7, 1.9);
        let z = affine(&fx, w.as_ref(), a, b).unwrap();
        let zr = Mat::from_fn(6, 2, |i, j| {
            a * (0..3).map(|k| x[(i, k)] * w[(k, j)]).sum::<f64>() + b * w[(3, j)]
        });
        assert!((&z - &zr).norm_max() < 1e-14);
        // ⟨H, Z(W)⟩ is linear in W, so its gradient is exact: compare against unit directions
        let gw = affine_backward(&fx, h.as_ref(), a, b).unwrap();
        for i in 0..4 {
            for j in 0..2 {
                let mut e = Mat::<f64>::zeros(4, 2);
                e[(i, j)] = 1.0;
                let ze = affine(&fx, e.as_ref(), a, b).unwrap();
                let dir: f64 = (0..6).map(|r| h[(r, j)] * ze[(r, j)]).sum();
                assert!((gw[(i, j)] - dir).abs() < 1e-13);
            }
        }
        assert_eq!(column_sums(h.as_ref()).len(), 2);
    }
}
