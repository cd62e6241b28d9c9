//! Nyström features (DESIGN §3.1, GIMC eq. 7–8), and learned Nyström (GIMC-LNYS).
//!
//! Landmarks u_1 … u_m (rows of U, m × d) are sampled uniformly from the data or taken as
//! k-means centres ([`gimc_cluster`]). C_ir = k(x_i, u_r) is computed by
//! [`gimc_linalg::kernel_block`] (one product X·Uᵀ plus row norms, so sparse X stays sparse),
//! E_rs = k(u_r, u_s), and Φ = C M with M Mᵀ = E^†, dropping eigenvalues ≤ `rel_tol`·λ_max.
//! Then ΦΦᵀ = C E^† Cᵀ, which equals the kernel matrix exactly when every point is a landmark
//! (up to the dropped eigenvalues). Two such M are offered: the symmetric (E^†)^{1/2} from the
//! eigendecomposition ([`NystromNorm::PinvSqrt`], [`gimc_linalg::pinv_sqrt`]) and, by default,
//! the inverse Cholesky factor L⁻ᵀ when E is certified well-conditioned
//! ([`NystromNorm::Whiten`], [`gimc_linalg::pinv_factor`]). They differ by an orthogonal
//! rotation of Φ, which leaves ΦΦᵀ — hence every ridge / IMC fit with ‖W‖² regularisation, its
//! objective and its predictions — unchanged, and the Cholesky route is about ten times cheaper.
//!
//! Learned Nyström keeps M fixed (GIMC uses M = I, [`NystromNorm::Identity`]) and learns U. With
//! H = (G Mᵀ) ∘ ∂C, the backward pass is, per kernel:
//! - RBF, ∂k(x, u)/∂u = 2γ (x − u) k(x, u): ∂f/∂U = 2γ (Hᵀ X − diag(1ᵀH) U) with
//!   H = (G Mᵀ) ∘ C (DESIGN §3.1; sign confirmed by finite differences);
//! - linear, ∂k/∂u = x: ∂f/∂U = (G Mᵀ)ᵀ X;
//! - polynomial (γ x·u + c₀)^p, ∂k/∂u = pγ (γ x·u + c₀)^{p−1} x: ∂f/∂U = Hᵀ X with
//!   H = (G Mᵀ) ∘ pγ (γ XUᵀ + c₀)^{p−1}.
//!
//! Cost O(nnz(X)·m + n·m) (+ O(n·m²) for a non-identity M).

use gimc_cluster::{KMeansParams, ValidKMeansParams, fit_kmeans};
use gimc_linalg::dense::{self, check_finite};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::observe::NoObserver;
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{
    FeatureMatrix, Kernel, kernel_block, kernel_block_dense, pinv_factor, pinv_sqrt,
};

use crate::Result;
use crate::affine::{column_sums, par_zip_map};
use crate::error::{FeatMapError, param_err};
use crate::map::{FeatureMap, LearnableMap, check_grad, check_input, check_params};

/// Default relative eigenvalue threshold of the Nyström square root M = (E^†)^{1/2}.
pub const DEFAULT_REL_TOL: f64 = 1e-12;

/// How the landmarks are chosen by [`Nystrom::fit`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LandmarkInit {
    /// m distinct rows of X drawn uniformly (the default).
    Uniform,
    /// The m centres of k-means on X (the `k` field of the given parameters is replaced by m).
    KMeans(KMeansParams),
}

/// The normalisation M in Φ = C M.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum NystromNorm {
    /// M = (E^†)^{1/2}, dropping eigenvalues of E ≤ `rel_tol`·λ_max; rel_tol in [0, 1).
    PinvSqrt {
        /// Relative eigenvalue threshold.
        rel_tol: f64,
    },
    /// Some M with M Mᵀ = E^† under the same threshold: L⁻ᵀ (E = LLᵀ) when E is certified to
    /// have no eigenvalue below it, else (E^†)^{1/2} ([`gimc_linalg::pinv_factor`]). Same ΦΦᵀ
    /// as [`NystromNorm::PinvSqrt`] at a fraction of the set-up cost. The default, with
    /// [`DEFAULT_REL_TOL`].
    Whiten {
        /// Relative eigenvalue threshold.
        rel_tol: f64,
    },
    /// M = I (GIMC-LNYS as in the paper).
    Identity,
}

gimc_linalg::params! {
    /// Hyper-parameters of [`Nystrom::fit`]. Build with [`NystromParams::new`] (m and the kernel
    /// have no default) and the `with_*` methods; [`NystromParams::check`] validates them into the
    /// [`ValidNystromParams`] that [`Nystrom::fit`] takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct NystromParams => ValidNystromParams {
        /// m uniform landmarks for `kernel`, M Mᵀ = E^† ([`NystromNorm::Whiten`]).
        required {
            /// Number of landmarks m ≥ 1 (output dimension D = m; at most the number of rows).
            pub m: usize,
            /// The kernel k.
            pub kernel: Kernel,
        }
        /// Landmark selection. Default [`LandmarkInit::Uniform`].
        pub landmarks: LandmarkInit = LandmarkInit::Uniform => with_landmarks,
        /// Normalisation M. Default [`NystromNorm::Whiten`] with [`DEFAULT_REL_TOL`].
        pub normalization: NystromNorm = NystromNorm::Whiten { rel_tol: DEFAULT_REL_TOL }
            => with_normalization,
    }
    check(manual) -> crate::FeatMapError;
}

impl NystromParams {
    /// Checks m ≥ 1, the kernel's parameters, rel_tol ∈ [0, 1) and the k-means parameters (with
    /// k = m). m ≤ n is checked by the fit.
    pub fn check(&self) -> Result<ValidNystromParams> {
        if self.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        self.kernel.check()?;
        check_norm(&self.normalization)?;
        let kmeans = match &self.landmarks {
            LandmarkInit::KMeans(p) => {
                let mut p = p.clone();
                p.k = self.m;
                Some(p.check()?)
            }
            LandmarkInit::Uniform => None,
        };
        Ok(ValidNystromParams {
            params: self.clone(),
            kmeans,
        })
    }
}

/// [`NystromParams`] that passed [`NystromParams::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidNystromParams {
    params: NystromParams,
    kmeans: Option<ValidKMeansParams>,
}

impl ValidNystromParams {
    /// The checked k-means parameters of [`LandmarkInit::KMeans`], with k = m; `None` for
    /// uniform landmarks.
    pub fn landmark_kmeans(&self) -> Option<&ValidKMeansParams> {
        self.kmeans.as_ref()
    }
}

impl std::ops::Deref for ValidNystromParams {
    type Target = NystromParams;
    fn deref(&self) -> &NystromParams {
        &self.params
    }
}

fn check_norm(norm: &NystromNorm) -> Result<()> {
    if let NystromNorm::PinvSqrt { rel_tol } | NystromNorm::Whiten { rel_tol } = *norm
        && !(rel_tol.is_finite() && (0.0..1.0).contains(&rel_tol))
    {
        return Err(param_err(
            "rel_tol",
            format!("must be in [0, 1), got {rel_tol}"),
        ));
    }
    Ok(())
}

/// Nyström features Φ = k(X, U) M; learnable in the landmarks U (m × d) with M fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct Nystrom {
    kernel: Kernel,
    landmarks: Mat<f64>,
    /// M (m × m); `None` means the identity.
    norm: Option<Mat<f64>>,
}

impl Nystrom {
    /// Chooses landmarks from the rows of `x` as `params` says and builds the map.
    pub fn fit(x: &FeatureMatrix, params: &ValidNystromParams, rng: &mut GimcRng) -> Result<Self> {
        check_input("Nystrom::fit", x, x.ncols())?;
        let n = x.nrows();
        if params.m > n {
            return Err(param_err(
                "m",
                format!("{} landmarks requested from {n} rows", params.m),
            ));
        }
        let landmarks = match params.landmark_kmeans() {
            None => {
                let rows = rand::seq::index::sample(rng, n, params.m).into_vec();
                x.select_rows(&rows)?.to_dense()
            }
            Some(kmeans) => fit_kmeans(x, kmeans, rng, &mut NoObserver)?.centers,
        };
        Self::from_landmarks(params.kernel, landmarks, params.normalization)
    }

    /// A map with the given landmarks (rows, m × d, m ≥ 1) and normalisation.
    pub fn from_landmarks(kernel: Kernel, landmarks: Mat<f64>, norm: NystromNorm) -> Result<Self> {
        kernel.check()?;
        check_norm(&norm)?;
        if landmarks.nrows() == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        check_finite(landmarks.as_ref())?;
        let norm = match norm {
            NystromNorm::Identity => None,
            other => Some(normalization_of(&kernel, &landmarks, other)?),
        };
        Ok(Self {
            kernel,
            landmarks,
            norm,
        })
    }

    /// A map with the given landmarks and an explicit normalisation M (m × m); `None` is the
    /// identity.
    pub fn from_parts(kernel: Kernel, landmarks: Mat<f64>, m: Option<Mat<f64>>) -> Result<Self> {
        let mut map = Self::from_landmarks(kernel, landmarks, NystromNorm::Identity)?;
        if let Some(m) = &m {
            check_params(
                "Nystrom::from_parts",
                m.as_ref(),
                (map.landmarks.nrows(), map.landmarks.nrows()),
            )?;
        }
        map.norm = m;
        Ok(map)
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The landmarks (rows, m × d).
    pub fn landmarks(&self) -> MatRef<'_, f64> {
        self.landmarks.as_ref()
    }

    /// The normalisation M (m × m), or `None` for the identity.
    pub fn normalization(&self) -> Option<MatRef<'_, f64>> {
        self.norm.as_ref().map(|m| m.as_ref())
    }

    /// Recomputes M = (E^†)^{1/2} for the current landmarks (e.g. after learning them).
    pub fn refresh_normalization(&mut self, rel_tol: f64) -> Result<()> {
        let norm = NystromNorm::PinvSqrt { rel_tol };
        check_norm(&norm)?;
        self.norm = Some(normalization_of(&self.kernel, &self.landmarks, norm)?);
        Ok(())
    }
}

/// M for E = k(U, U) as `norm` says (not called for the identity).
fn normalization_of(kernel: &Kernel, landmarks: &Mat<f64>, norm: NystromNorm) -> Result<Mat<f64>> {
    let e = kernel_block_dense(kernel, landmarks.as_ref(), landmarks.as_ref())?;
    Ok(match norm {
        NystromNorm::PinvSqrt { rel_tol } => pinv_sqrt(e.as_ref(), rel_tol)?,
        NystromNorm::Whiten { rel_tol } => pinv_factor(e.as_ref(), rel_tol)?,
        NystromNorm::Identity => Mat::identity(landmarks.nrows(), landmarks.nrows()),
    })
}

impl FeatureMap for Nystrom {
    fn input_dim(&self) -> usize {
        self.landmarks.ncols()
    }

    fn output_dim(&self) -> usize {
        self.landmarks.nrows()
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("Nystrom::forward", x, self.input_dim())?;
        let c = kernel_block(&self.kernel, x, self.landmarks.as_ref())?;
        match &self.norm {
            Some(m) => Ok(dense::matmul(c.as_ref(), m.as_ref())?),
            None => Ok(c),
        }
    }

    fn forward_factored(&self, x: &FeatureMatrix) -> Result<(Mat<f64>, Option<Mat<f64>>)> {
        check_input("Nystrom::forward_factored", x, self.input_dim())?;
        let c = kernel_block(&self.kernel, x, self.landmarks.as_ref())?;
        Ok((c, self.norm.clone()))
    }
}

impl LearnableMap for Nystrom {
    fn params(&self) -> MatRef<'_, f64> {
        self.landmarks.as_ref()
    }

    /// Replaces the landmarks; M stays fixed (call [`Nystrom::refresh_normalization`] to
    /// recompute it).
    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        check_params(
            "Nystrom::set_params",
            params.as_ref(),
            self.landmarks.shape(),
        )?;
        self.landmarks = params;
        Ok(())
    }

    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("Nystrom::backward", x, self.input_dim())?;
        check_grad("Nystrom::backward", g, x.nrows(), self.output_dim())?;
        // ∂f/∂C = G Mᵀ
        let mut h = match &self.norm {
            Some(m) => dense::matmul_nt(g, m.as_ref())?,
            None => g.to_owned(),
        };
        let u = self.landmarks.as_ref();
        match self.kernel {
            Kernel::Rbf { gamma } => {
                // H = (G Mᵀ) ∘ C;  ∂f/∂U = 2γ (Hᵀ X − diag(1ᵀH) U)
                let c = kernel_block(&self.kernel, x, u)?;
                par_zip_map(&mut h, c.as_ref(), |a, b| a * b);
                let htx = x.tr_mul_dense(h.as_ref())?; // d × m = (HᵀX)ᵀ
                let sums = column_sums(h.as_ref());
                Ok(Mat::from_fn(u.nrows(), u.ncols(), |r, j| {
                    2.0 * gamma * (htx[(j, r)] - sums[r] * u[(r, j)])
                }))
            }
            Kernel::Linear => Ok(x.tr_mul_dense(h.as_ref())?.transpose().to_owned()),
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            } => {
                let p = x.mul_dense(u.transpose())?;
                let pm1 = i32::try_from(degree.saturating_sub(1)).map_err(|_| {
                    param_err::<FeatMapError>(
                        "degree",
                        format!("{degree} is too large for the backward pass"),
                    )
                })?;
                let coef = f64::from(degree) * gamma;
                par_zip_map(&mut h, p.as_ref(), |a, dot| {
                    a * coef * (gamma * dot + coef0).powi(pm1)
                });
                Ok(x.tr_mul_dense(h.as_ref())?.transpose().to_owned())
            }
            other => Err(FeatMapError::Unsupported(format!(
                "Nyström backward pass for kernel {other:?}"
            ))),
        }
    }
}
