//! The feature maps GIMC learns (DESIGN §3.1, §3.3): a hyper-parameter description
//! ([`MapSpec`]: random Fourier features (paired or random-phase) or Nyström, m, γ) that builds
//! a map from training rows,
//! and [`KnownMap`], the closed set of built-in learnable maps that model files can store. The
//! fitting routines are generic over any [`LearnableMap`]; only save / load needs a known kind.

use gimc_cluster::KMeansParams;
use gimc_featmap::{
    FeatureMap, LandmarkInit, LearnableMap, Nystrom, NystromNorm, NystromParams, RandomCosine,
    RandomFourier, RandomFourierParams,
};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Kernel};

use crate::Result;
use crate::error::{check_pos, param_err};

/// How Nyström landmarks are chosen (DESIGN §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Landmarks {
    /// m distinct training rows drawn uniformly.
    #[default]
    Uniform,
    /// The m centres of k-means on the training rows (one k-means++ start, at most 100 Lloyd
    /// iterations).
    KMeans,
}

/// Which kind of feature map (the RBF kernel exp(−γ‖x − y‖²) in both cases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// Random Fourier features Φ = m^{-1/2}[cos XU, sin XU] (GIMC eq. 6; D = 2m): IMC-RFF at
    /// the start, GIMC-LFF once learned.
    Fourier,
    /// Random-phase Fourier features Φ = √(2/D) cos(XU + 1bᵀ) with D = 2m directions and fixed
    /// phases b ~ U[0, 2π) (scikit-learn `RBFSampler`'s form, [`RandomCosine`]): the same D as
    /// [`MapKind::Fourier`] at the same m, spent on 2m distinct directions. IMC-RFF-phase at
    /// the start, GIMC-LFF-phase once the directions are learned.
    FourierPhase,
    /// Nyström features Φ = k(X, U) M (GIMC eq. 7–8; D = m): IMC-NYS at the start, GIMC-LNYS
    /// once learned.
    Nystrom {
        /// Landmark selection.
        landmarks: Landmarks,
        /// `false`: M = I (GIMC-LNYS as in the paper); `true`: M = (E^†)^{1/2} computed for the
        /// initial landmarks and then kept fixed.
        normalized: bool,
    },
}

impl MapKind {
    /// The learned-Nyström kind of the paper: uniform landmarks, M = I.
    pub const LEARNED_NYSTROM: MapKind = MapKind::Nystrom {
        landmarks: Landmarks::Uniform,
        normalized: false,
    };

    /// Short name: `lff`, `lff-phase` or `lnys`.
    pub fn short_name(&self) -> &'static str {
        match self {
            MapKind::Fourier => "lff",
            MapKind::FourierPhase => "lff-phase",
            MapKind::Nystrom { .. } => "lnys",
        }
    }
}

/// The hyper-parameters of one feature map: kind, m (directions or landmarks) and γ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapSpec {
    /// The kind of map.
    pub kind: MapKind,
    /// Number of Fourier directions (D = 2m) or landmarks (D = m), ≥ 1.
    pub m: usize,
    /// RBF inverse length scale γ > 0.
    pub gamma: f64,
}

impl MapSpec {
    /// Random Fourier features with m directions for exp(−γ‖x − y‖²).
    pub fn fourier(m: usize, gamma: f64) -> Self {
        Self {
            kind: MapKind::Fourier,
            m,
            gamma,
        }
    }

    /// Learned Nyström as in the paper (uniform landmarks, M = I).
    pub fn nystrom(m: usize, gamma: f64) -> Self {
        Self {
            kind: MapKind::LEARNED_NYSTROM,
            m,
            gamma,
        }
    }

    /// Random-phase Fourier features with 2m directions (D = 2m) for exp(−γ‖x − y‖²).
    pub fn fourier_phase(m: usize, gamma: f64) -> Self {
        Self {
            kind: MapKind::FourierPhase,
            m,
            gamma,
        }
    }

    /// Checks m ≥ 1 and γ finite and > 0.
    pub fn check(&self) -> Result<()> {
        if self.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        check_pos("gamma", self.gamma)
    }

    /// Output dimension D of the map (2m for both Fourier kinds, m for Nyström).
    pub fn output_dim(&self) -> usize {
        match self.kind {
            MapKind::Fourier | MapKind::FourierPhase => 2 * self.m,
            MapKind::Nystrom { .. } => self.m,
        }
    }

    /// Builds the initial map for training rows `x`, drawing from `rng` (Fourier directions
    /// u_r ~ N(0, 2γI), and for the random-phase kind phases U[0, 2π); Nyström landmarks
    /// uniform rows or k-means centres of `x`).
    pub fn build(&self, x: &FeatureMatrix, rng: &mut GimcRng) -> Result<KnownMap> {
        self.check()?;
        match self.kind {
            MapKind::Fourier => {
                let p = RandomFourierParams::new(self.m, self.gamma);
                Ok(KnownMap::Fourier(RandomFourier::new(x.ncols(), &p, rng)?))
            }
            MapKind::FourierPhase => {
                let d = self
                    .m
                    .checked_mul(2)
                    .ok_or_else(|| param_err("m", "too large"))?;
                Ok(KnownMap::Cosine(RandomCosine::new(
                    x.ncols(),
                    d,
                    self.gamma,
                    rng,
                )?))
            }
            MapKind::Nystrom {
                landmarks,
                normalized,
            } => {
                let init = match landmarks {
                    Landmarks::Uniform => LandmarkInit::Uniform,
                    Landmarks::KMeans => LandmarkInit::KMeans(
                        KMeansParams::new(self.m).with_n_init(1).with_max_iter(100),
                    ),
                };
                let mut p = NystromParams::new(self.m, Kernel::Rbf { gamma: self.gamma })
                    .with_landmarks(init);
                if !normalized {
                    p = p.with_normalization(NystromNorm::Identity);
                }
                Ok(KnownMap::Nystrom(Nystrom::fit(x, &p, rng)?))
            }
        }
    }
}

/// The built-in learnable maps a model file can store.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum KnownMap {
    /// Random Fourier features (learned: GIMC-LFF).
    Fourier(RandomFourier),
    /// Nyström features (learned: GIMC-LNYS).
    Nystrom(Nystrom),
    /// Random-phase Fourier features (learned: GIMC-LFF-phase).
    Cosine(RandomCosine),
}

impl KnownMap {
    /// Short name of the kind: `random-fourier`, `random-cosine` or `nystrom`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            KnownMap::Fourier(_) => "random-fourier",
            KnownMap::Cosine(_) => "random-cosine",
            KnownMap::Nystrom(_) => "nystrom",
        }
    }
}

impl From<RandomFourier> for KnownMap {
    fn from(m: RandomFourier) -> Self {
        KnownMap::Fourier(m)
    }
}

impl From<RandomCosine> for KnownMap {
    fn from(m: RandomCosine) -> Self {
        KnownMap::Cosine(m)
    }
}

impl From<Nystrom> for KnownMap {
    fn from(m: Nystrom) -> Self {
        KnownMap::Nystrom(m)
    }
}

impl FeatureMap for KnownMap {
    fn input_dim(&self) -> usize {
        match self {
            KnownMap::Fourier(m) => m.input_dim(),
            KnownMap::Cosine(m) => m.input_dim(),
            KnownMap::Nystrom(m) => m.input_dim(),
        }
    }

    fn output_dim(&self) -> usize {
        match self {
            KnownMap::Fourier(m) => m.output_dim(),
            KnownMap::Cosine(m) => m.output_dim(),
            KnownMap::Nystrom(m) => m.output_dim(),
        }
    }

    fn forward(&self, x: &FeatureMatrix) -> gimc_featmap::Result<Mat<f64>> {
        match self {
            KnownMap::Fourier(m) => m.forward(x),
            KnownMap::Cosine(m) => m.forward(x),
            KnownMap::Nystrom(m) => m.forward(x),
        }
    }

    fn forward_factored(
        &self,
        x: &FeatureMatrix,
    ) -> gimc_featmap::Result<(Mat<f64>, Option<Mat<f64>>)> {
        match self {
            KnownMap::Fourier(m) => m.forward_factored(x),
            KnownMap::Cosine(m) => m.forward_factored(x),
            KnownMap::Nystrom(m) => m.forward_factored(x),
        }
    }
}

impl LearnableMap for KnownMap {
    fn params(&self) -> MatRef<'_, f64> {
        match self {
            KnownMap::Fourier(m) => m.params(),
            KnownMap::Cosine(m) => m.params(),
            KnownMap::Nystrom(m) => m.params(),
        }
    }

    fn set_params(&mut self, params: Mat<f64>) -> gimc_featmap::Result<()> {
        match self {
            KnownMap::Fourier(m) => m.set_params(params),
            KnownMap::Cosine(m) => m.set_params(params),
            KnownMap::Nystrom(m) => m.set_params(params),
        }
    }

    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> gimc_featmap::Result<Mat<f64>> {
        match self {
            KnownMap::Fourier(m) => m.backward(x, g),
            KnownMap::Cosine(m) => m.backward(x, g),
            KnownMap::Nystrom(m) => m.backward(x, g),
        }
    }
}

/// Φ = [φ_1(X), φ_2(X), …] (n × Σ D_i): the features of several maps side by side (the
/// combined LFF + LNYS features of DESIGN §3.3). One map gives its own forward pass.
pub fn concat_features<M: FeatureMap>(maps: &[M], x: &FeatureMatrix) -> Result<Mat<f64>> {
    match maps {
        [] => Err(crate::GimcError::Empty("feature maps")),
        [one] => Ok(one.forward(x)?),
        many => {
            let total: usize = many.iter().map(FeatureMap::output_dim).sum();
            let mut out = Mat::<f64>::zeros(x.nrows(), total);
            let mut col = 0;
            for m in many {
                let phi = m.forward(x)?;
                let d = phi.ncols();
                out.as_mut()
                    .submatrix_mut(0, col, x.nrows(), d)
                    .copy_from(&phi);
                col += d;
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    #[test]
    fn specs_build_maps_of_the_right_size() {
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 30, 4, 1.0)).unwrap();
        let f = MapSpec::fourier(7, 0.5).build(&x, &mut seeded(2)).unwrap();
        assert_eq!((f.input_dim(), f.output_dim()), (4, 14));
        assert_eq!(f.kind_name(), "random-fourier");
        let spec = MapSpec::fourier_phase(7, 0.5);
        let c = spec.build(&x, &mut seeded(2)).unwrap();
        assert_eq!((c.input_dim(), c.output_dim()), (4, spec.output_dim()));
        assert_eq!(c.output_dim(), 14);
        assert_eq!(c.kind_name(), "random-cosine");
        assert_eq!(spec.kind.short_name(), "lff-phase");
        assert!(
            MapSpec::fourier_phase(0, 1.0)
                .build(&x, &mut seeded(1))
                .is_err()
        );
        assert!(
            MapSpec::fourier_phase(usize::MAX, 1.0)
                .build(&x, &mut seeded(1))
                .is_err()
        );
        let n = MapSpec::nystrom(5, 0.5).build(&x, &mut seeded(2)).unwrap();
        assert_eq!((n.input_dim(), n.output_dim()), (4, 5));
        let k = MapSpec {
            kind: MapKind::Nystrom {
                landmarks: Landmarks::KMeans,
                normalized: true,
            },
            m: 5,
            gamma: 0.5,
        }
        .build(&x, &mut seeded(2))
        .unwrap();
        assert_eq!(k.output_dim(), 5);
        assert!(MapSpec::fourier(0, 1.0).check().is_err());
        assert!(MapSpec::fourier(3, -1.0).check().is_err());
        assert!(
            MapSpec::fourier(3, f64::NAN)
                .build(&x, &mut seeded(1))
                .is_err()
        );
        let both = concat_features(&[f.clone(), n.clone()], &x).unwrap();
        assert_eq!(both.shape(), (30, 19));
        let pf = f.forward(&x).unwrap();
        assert_eq!(both.as_ref().subcols(0, 14), pf.as_ref());
        assert!(concat_features::<KnownMap>(&[], &x).is_err());
    }
}
