//! How model selection draws a map: a [`MapFamily`] turns the training rows, m and γ and a seeded
//! random generator into an initial [`LearnableMap`] (DESIGN §3.3, Algorithm 1 step 1). The
//! built-in families ([`FourierFamily`], [`CosineFamily`], [`NystromFamily`]) implement the same
//! trait a user's family does, so every entry point that searches over (m, γ) — selection,
//! combined features, completion, semi-supervised clustering, the command line — accepts any
//! family.

use gimc_cluster::KMeansParams;
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Kernel};

use crate::Result;
use crate::error::param_err;
use crate::map::LearnableMap;
use crate::{
    LandmarkInit, Nystrom, NystromNorm, NystromParams, RandomCosine, RandomFourier,
    RandomFourierParams,
};

/// A family of learnable maps indexed by a size m and an inverse length scale γ: what model
/// selection needs to draw a candidate map.
///
/// `build` must be deterministic given the generator's state, accept dense and sparse rows, and
/// return an error (never panic) for m = 0, a non-finite or non-positive γ, or an m the family
/// cannot serve (e.g. more Nyström landmarks than rows).
pub trait MapFamily {
    /// The maps the family builds.
    type Map: LearnableMap;

    /// The family's short name (`lff`, `lff-phase`, `lnys`, or a user's): the command line
    /// offers it as `--method gimc-NAME` (learned) and `imc-NAME` (fixed), and fitted models
    /// record it as their method `gimc-NAME`.
    fn name(&self) -> &str;

    /// The output dimension D of a map built with size `m` (2m for paired Fourier features,
    /// m for Nyström). Errors if m is 0 or too large.
    fn output_dim(&self, m: usize) -> Result<usize>;

    /// The initial map for training rows `x` (its input dimension is `x.ncols()`; maps that do
    /// not depend on the data use only that), size `m` and inverse length scale `gamma`,
    /// drawing every random number from `rng`.
    fn build(
        &self,
        x: &FeatureMatrix,
        m: usize,
        gamma: f64,
        rng: &mut GimcRng,
    ) -> Result<Self::Map>;
}

/// Implements [`MapFamily`] for pointers to a family (`&F`, `Box<F>`) by delegating to it.
macro_rules! delegate_map_family {
    ($($pointer:ty),+) => {$(
        impl<F: MapFamily + ?Sized> MapFamily for $pointer {
            type Map = F::Map;
            fn name(&self) -> &str {
                (**self).name()
            }
            fn output_dim(&self, m: usize) -> Result<usize> {
                (**self).output_dim(m)
            }
            fn build(
                &self,
                x: &FeatureMatrix,
                m: usize,
                gamma: f64,
                rng: &mut GimcRng,
            ) -> Result<Self::Map> {
                (**self).build(x, m, gamma, rng)
            }
        }
    )+};
}

delegate_map_family!(&F, Box<F>);

/// Checks m ≥ 1 and returns `factor`·m, or an error when it overflows.
pub fn scaled_dim(m: usize, factor: usize) -> Result<usize> {
    if m == 0 {
        return Err(param_err("m", "must be at least 1"));
    }
    m.checked_mul(factor)
        .ok_or_else(|| param_err("m", format!("{m} is too large")))
}

/// Random Fourier features for exp(−γ‖x − y‖²), Φ = m^{-1/2}[cos XU, sin XU] with u_r ~
/// N(0, 2γI) (GIMC eq. 6; D = 2m): IMC-RFF unlearned, GIMC-LFF learned. Name `lff`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FourierFamily;

impl MapFamily for FourierFamily {
    type Map = RandomFourier;
    fn name(&self) -> &str {
        "lff"
    }
    fn output_dim(&self, m: usize) -> Result<usize> {
        scaled_dim(m, 2)
    }
    fn build(
        &self,
        x: &FeatureMatrix,
        m: usize,
        gamma: f64,
        rng: &mut GimcRng,
    ) -> Result<RandomFourier> {
        RandomFourier::new(x.ncols(), &RandomFourierParams::new(m, gamma).check()?, rng)
    }
}

/// Random-phase Fourier features Φ = √(2/D) cos(XU + 1bᵀ) with D = 2m directions and phases
/// b ~ U[0, 2π) (scikit-learn `RBFSampler`'s form, [`RandomCosine`]): the same D as
/// [`FourierFamily`] at the same m, spent on 2m distinct directions. Name `lff-phase`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CosineFamily;

impl MapFamily for CosineFamily {
    type Map = RandomCosine;
    fn name(&self) -> &str {
        "lff-phase"
    }
    fn output_dim(&self, m: usize) -> Result<usize> {
        scaled_dim(m, 2)
    }
    fn build(
        &self,
        x: &FeatureMatrix,
        m: usize,
        gamma: f64,
        rng: &mut GimcRng,
    ) -> Result<RandomCosine> {
        RandomCosine::new(x.ncols(), self.output_dim(m)?, gamma, rng)
    }
}

/// Nyström features Φ = k(X, U)·M for the RBF kernel exp(−γ‖x − y‖²) with m landmarks (GIMC
/// eq. 7–8; D = m): IMC-NYS unlearned, GIMC-LNYS learned.
///
/// [`NystromFamily::default`] is the paper's GIMC-LNYS (name `lnys`): uniform landmarks and
/// M = I. [`NystromFamily::new`] sets the landmark choice and M under a name of your own.
#[derive(Debug, Clone, PartialEq)]
pub struct NystromFamily {
    name: String,
    landmarks: LandmarkInit,
    normalization: NystromNorm,
}

impl Default for NystromFamily {
    fn default() -> Self {
        Self {
            name: "lnys".into(),
            landmarks: LandmarkInit::Uniform,
            normalization: NystromNorm::Identity,
        }
    }
}

impl NystromFamily {
    /// A Nyström family named `name` with the given landmark choice and normalisation M
    /// (computed for the initial landmarks and then kept fixed while they are learned).
    pub fn new(
        name: impl Into<String>,
        landmarks: LandmarkInit,
        normalization: NystromNorm,
    ) -> Self {
        Self {
            name: name.into(),
            landmarks,
            normalization,
        }
    }

    /// k-means landmarks (one k-means++ start, at most 100 Lloyd iterations) with a whitening
    /// M (M Mᵀ = E^†, [`NystromNorm::Whiten`]): the unlearned IMC-NYS baseline of the benchmarks. Name `nys-kmeans`.
    pub fn kmeans_whitened() -> Self {
        Self::new(
            "nys-kmeans",
            LandmarkInit::KMeans(KMeansParams::new(1).with_n_init(1).with_max_iter(100)),
            NystromNorm::Whiten {
                rel_tol: crate::DEFAULT_REL_TOL,
            },
        )
    }

    /// Uniform landmarks with whitening M: the normalised Nyström of the benchmarks. Name
    /// `nys-whiten`.
    pub fn uniform_whitened() -> Self {
        Self::new(
            "nys-whiten",
            LandmarkInit::Uniform,
            NystromNorm::Whiten {
                rel_tol: crate::DEFAULT_REL_TOL,
            },
        )
    }

    /// The landmark choice.
    pub fn landmarks(&self) -> &LandmarkInit {
        &self.landmarks
    }

    /// The normalisation M.
    pub fn normalization(&self) -> NystromNorm {
        self.normalization
    }
}

impl MapFamily for NystromFamily {
    type Map = Nystrom;
    fn name(&self) -> &str {
        &self.name
    }
    fn output_dim(&self, m: usize) -> Result<usize> {
        scaled_dim(m, 1)
    }
    fn build(&self, x: &FeatureMatrix, m: usize, gamma: f64, rng: &mut GimcRng) -> Result<Nystrom> {
        let p = NystromParams::new(m, Kernel::Rbf { gamma })
            .with_landmarks(self.landmarks.clone())
            .with_normalization(self.normalization)
            .check()?;
        Nystrom::fit(x, &p, rng)
    }
}
