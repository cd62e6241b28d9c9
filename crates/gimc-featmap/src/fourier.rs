//! Random Fourier features for the RBF kernel k(x, y) = exp(−γ‖x − y‖²) (DESIGN §3.1, GIMC
//! eq. 6), learnable (GIMC-LFF).
//!
//! Directions U = [u_1 … u_m] (d × m) with u_r ~ N(0, 2γ I); S = XU (n × m);
//! Φ = m^{-1/2} [cos S, sin S] (D = 2m), so φ(x)ᵀφ(y) = m^{-1} Σ_r cos(u_rᵀ(x − y)) whose
//! expectation is k(x, y) and whose error falls like m^{-1/2}.
//!
//! Backward: with G = [G_c, G_s] split into its cos and sin halves,
//! ∂f/∂U = m^{-1/2} Xᵀ (G_s ∘ cos S − G_c ∘ sin S) (DESIGN §3.1), O(nnz(X)·m + n·m).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::check_finite;
use gimc_linalg::faer::{Mat, MatMut, MatRef};
use gimc_linalg::rng::{GimcRng, gaussian_mat};
use gimc_linalg::simd::sin_cos_into;
use rayon::prelude::*;

use crate::Result;
use crate::error::{check_pos, param_err};
use crate::map::{FeatureMap, LearnableMap, check_grad, check_input, check_params};

gimc_linalg::params! {
    /// Hyper-parameters of [`RandomFourier`]. Build with [`RandomFourierParams::new`] (neither
    /// field has a default); [`RandomFourierParams::check`] validates them into the
    /// [`ValidRandomFourierParams`] that [`RandomFourier::new`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct RandomFourierParams => ValidRandomFourierParams {
        /// m directions for the kernel exp(−γ‖x − y‖²).
        required {
            /// Number of directions m ≥ 1 (output dimension D = 2m).
            pub m: usize,
            /// RBF inverse length scale γ > 0 (finite).
            pub gamma: f64,
        }
    }
    /// Checks m ≥ 1 and γ finite and > 0, with 2γ finite (the directions' variance).
    check |this| -> crate::FeatMapError {
        if this.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        check_pos("gamma", this.gamma)?;
        if !(2.0 * this.gamma).is_finite() {
            return Err(param_err(
                "gamma",
                format!(
                    "{:e} is too large: the directions' variance 2·gamma overflows",
                    this.gamma
                ),
            ));
        }
    }
}

/// Random Fourier features Φ = m^{-1/2}[cos XU, sin XU]; learnable in U (d × m).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomFourier {
    u: Mat<f64>,
}

impl RandomFourier {
    /// Draws U (`input_dim` × m) with entries N(0, 2γ) from `rng`.
    pub fn new(
        input_dim: usize,
        params: &ValidRandomFourierParams,
        rng: &mut GimcRng,
    ) -> Result<Self> {
        let std = (2.0 * params.gamma).sqrt();
        Ok(Self {
            u: gaussian_mat(rng, input_dim, params.m, std),
        })
    }

    /// H = G_s ∘ Φ_cos − G_c ∘ Φ_sin (n × m), the rows whose product XᵀH is ∂⟨G, φ⟩/∂U when
    /// `features` = φ(X) = m^{-1/2}[cos S, sin S], after checking X, G and the features (`op`
    /// names the caller in errors).
    fn backward_rows(
        &self,
        op: &'static str,
        x: &FeatureMatrix,
        features: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
    ) -> Result<Mat<f64>> {
        check_input(op, x, self.input_dim())?;
        check_grad(op, g, x.nrows(), self.output_dim())?;
        if features.shape() != g.shape() {
            return Err(crate::error::dim_err(
                op,
                format!("features φ(X) of shape {} x {}", g.nrows(), g.ncols()),
                format!("{} x {}", features.nrows(), features.ncols()),
            ));
        }
        check_finite(features)?;
        let m = self.u.ncols();
        let (g_cos, g_sin) = g.split_at_col(m);
        let (f_cos, f_sin) = features.split_at_col(m);
        Ok(Mat::from_fn(features.nrows(), m, |i, r| {
            g_sin[(i, r)] * f_cos[(i, r)] - g_cos[(i, r)] * f_sin[(i, r)]
        }))
    }

    /// A map with the given directions U (d × m, m ≥ 1, finite).
    pub fn from_directions(u: Mat<f64>) -> Result<Self> {
        if u.ncols() == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        check_finite(u.as_ref())?;
        Ok(Self { u })
    }

    /// The directions U (d × m).
    pub fn directions(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    /// Number of directions m.
    pub fn n_directions(&self) -> usize {
        self.u.ncols()
    }

    fn scale(&self) -> f64 {
        1.0 / (self.u.ncols() as f64).sqrt()
    }
}

impl FeatureMap for RandomFourier {
    fn input_dim(&self) -> usize {
        self.u.nrows()
    }

    fn output_dim(&self) -> usize {
        2 * self.u.ncols()
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("RandomFourier::forward", x, self.input_dim())?;
        let s = x.mul_dense(self.u.as_ref())?;
        let (n, m) = s.shape();
        let scale = self.scale();
        let mut phi = gimc_linalg::dense::zeros_padded(n, 2 * m);
        let (cos_half, sin_half) = phi.as_mut().split_at_col_mut(m);
        cos_half
            .par_col_iter_mut()
            .zip(sin_half.par_col_iter_mut())
            .enumerate()
            .for_each(|(r, (mut c, mut sn))| {
                let src = s.col_as_slice(r);
                match (
                    c.as_mut().try_as_col_major_mut(),
                    sn.as_mut().try_as_col_major_mut(),
                ) {
                    (Some(c), Some(sn)) => {
                        sin_cos_into(src, scale, sn.as_slice_mut(), c.as_slice_mut());
                    }
                    _ => {
                        let (mut sv, mut cv) = (vec![0.0; src.len()], vec![0.0; src.len()]);
                        sin_cos_into(src, scale, &mut sv, &mut cv);
                        for (i, (&a, &b)) in sv.iter().zip(&cv).enumerate() {
                            sn[i] = a;
                            c[i] = b;
                        }
                    }
                }
            });
        Ok(phi)
    }
}

impl LearnableMap for RandomFourier {
    fn params(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        check_params("RandomFourier::set_params", params.as_ref(), self.u.shape())?;
        self.u = params;
        Ok(())
    }

    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("RandomFourier::backward", x, self.input_dim())?;
        check_grad("RandomFourier::backward", g, x.nrows(), self.output_dim())?;
        let mut h = x.mul_dense(self.u.as_ref())?;
        let m = h.ncols();
        let scale = self.scale();
        let (g_cos, g_sin) = g.split_at_col(m);
        // H = m^{-1/2} (G_s ∘ cos S − G_c ∘ sin S), overwriting S
        h.as_mut()
            .par_col_iter_mut()
            .enumerate()
            .for_each(|(r, col)| {
                let args: Vec<f64> = col.as_ref().iter().copied().collect();
                let (mut sin, mut cos) = (vec![0.0; args.len()], vec![0.0; args.len()]);
                sin_cos_into(&args, 1.0, &mut sin, &mut cos);
                let grads = g_cos.col(r).iter().zip(g_sin.col(r).iter());
                for ((v, (&gc, &gs)), (&sn, &cs)) in
                    col.iter_mut().zip(grads).zip(sin.iter().zip(&cos))
                {
                    *v = scale * (gs * cs - gc * sn);
                }
            });
        Ok(x.tr_mul_dense(h.as_ref())?)
    }

    /// As [`backward`](LearnableMap::backward), with cos S and sin S read from `features`
    /// = φ(X) = m^{-1/2}[cos S, sin S] instead of recomputed: H = G_s ∘ Φ_cos − G_c ∘ Φ_sin.
    fn backward_at(
        &self,
        x: &FeatureMatrix,
        features: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
    ) -> Result<Mat<f64>> {
        let h = self.backward_rows("RandomFourier::backward_at", x, features, g)?;
        Ok(x.tr_mul_dense(h.as_ref())?)
    }

    /// As [`backward_at`](LearnableMap::backward_at), with XᵀH accumulated into `out` in place.
    fn backward_add_at(
        &self,
        x: &FeatureMatrix,
        features: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
    ) -> Result<()> {
        let h = self.backward_rows("RandomFourier::backward_add_at", x, features, g)?;
        Ok(x.tr_mul_dense_add(h.as_ref(), out)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    /// The backward pass from the held features is the recomputing one up to rounding, and
    /// rejects features of the wrong shape.
    #[test]
    fn backward_at_reuses_features_and_matches_backward() {
        let mut rng = seeded(9);
        let (n, d, m) = (17, 6, 11);
        let map = RandomFourier::new(
            d,
            &RandomFourierParams::new(m, 0.3).check().unwrap(),
            &mut rng,
        )
        .unwrap();
        let x = FeatureMatrix::dense(gaussian_mat(&mut rng, n, d, 1.0)).unwrap();
        let g = gaussian_mat(&mut rng, n, 2 * m, 1.0);
        let phi = map.forward(&x).unwrap();
        let plain = map.backward(&x, g.as_ref()).unwrap();
        let reused = map.backward_at(&x, phi.as_ref(), g.as_ref()).unwrap();
        assert_eq!(reused.shape(), plain.shape());
        assert!((&reused - &plain).norm_l2() <= 1e-12 * plain.norm_l2());
        // features of other parameters give another (wrong) gradient: they are really read
        let other = RandomFourier::new(
            d,
            &RandomFourierParams::new(m, 0.3).check().unwrap(),
            &mut rng,
        )
        .unwrap();
        let stale = other.forward(&x).unwrap();
        let wrong = map.backward_at(&x, stale.as_ref(), g.as_ref()).unwrap();
        assert!((&wrong - &plain).norm_l2() > 1e-3 * plain.norm_l2());
        assert!(map.backward_at(&x, phi.subcols(0, m), g.as_ref()).is_err());
        // accumulated in place over two row blocks: the whole-X gradient plus what was there
        let start = gaussian_mat(&mut rng, d, m, 1.0);
        let mut acc = start.clone();
        for (lo, b) in [(0, 9), (9, n - 9)] {
            let rows: Vec<usize> = (lo..lo + b).collect();
            let xb = x.select_rows(&rows).unwrap();
            let pb = map.forward(&xb).unwrap();
            map.backward_add_at(&xb, pb.as_ref(), g.subrows(lo, b), acc.as_mut())
                .unwrap();
        }
        assert!((&acc - &start - &plain).norm_l2() <= 1e-12 * plain.norm_l2());
        let sparse = FeatureMatrix::sparse(
            gimc_linalg::sparse::dense_to_csr(x.to_dense().as_ref()).unwrap(),
        )
        .unwrap();
        let mut acc_sparse = start.clone();
        map.backward_add_at(&sparse, phi.as_ref(), g.as_ref(), acc_sparse.as_mut())
            .unwrap();
        assert!((&acc_sparse - &start - &plain).norm_l2() <= 1e-12 * plain.norm_l2());
        assert!(
            map.backward_add_at(&x, phi.as_ref(), g.as_ref(), acc.as_mut().subcols_mut(0, 1))
                .is_err()
        );
    }

    #[test]
    fn check_refuses_a_gamma_whose_variance_overflows() {
        assert!(RandomFourierParams::new(4, 1e300).check().is_ok());
        let err = RandomFourierParams::new(4, 1e308).check().unwrap_err();
        assert!(err.to_string().contains("gamma"), "{err}");
        assert!(RandomFourierParams::new(4, f64::INFINITY).check().is_err());
        assert!(RandomFourierParams::new(0, 1.0).check().is_err());
    }
}
