//! Semi-supervised clustering by matrix completion: MCCC (Yi et al. 2013; DESIGN §3.4), the
//! linear baseline of GIMC's Algorithm 2 ([`fit_semisupervised`](crate::fit_semisupervised)).
//!
//! **Constraints.** Pairwise constraints (i, j, s) with s = 1 (similar / must-link) or
//! s = 0 (dissimilar / cannot-link) become the observed set Ω of the n × n similarity matrix A,
//! symmetrically: both (i, j) and (j, i) are observed with value s
//! ([`gimc_cluster::constraint_matrix`]).
//!
//! **MCCC.** Linear IMC (DESIGN §3.2) with Φ = Ψ = X: minimise
//! ½‖P_Ω(A − XWHᵀXᵀ)‖² + (λ/2)(‖W‖² + ‖H‖²) by [`gimc_solvers::fit_imc`] (rank r, 1 ≤ r < d),
//! then [`gimc_cluster::spectral_kmeans`] on P = XW (n × r): the top-k left singular vectors of
//! P by a thin SVD of the n × r matrix (O(nr²); never an n × n matrix), and k-means on their
//! rows.
//!
//! MCCC lives in `gimc` rather than `gimc-cluster` because it needs the IMC solver of
//! `gimc-solvers`; the constraint matrix and the spectral step it shares with Algorithm 2 stay
//! in `gimc-cluster`, which depends only on `gimc-linalg`.
//!
//! # Example
//!
//! Two well-separated blobs in 3 dimensions, clustered from 80 random pairwise constraints:
//!
//! ```
//! use gimc::{MccParams, fit_mccc};
//! use gimc_linalg::FeatureMatrix;
//! use gimc_linalg::faer::Mat;
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//! use rand::Rng;
//!
//! let n = 40;
//! let truth: Vec<usize> = (0..n).map(|i| i % 2).collect();
//! let noise = gaussian_mat(&mut seeded(1), n, 3, 0.3);
//! // blob 0 around (4, 0, 4), blob 1 around (0, 4, 0)
//! let x = Mat::from_fn(n, 3, |i, j| {
//!     let centre = if (truth[i] + j) % 2 == 0 { 4.0 } else { 0.0 };
//!     centre + noise[(i, j)]
//! });
//! let x = FeatureMatrix::dense(x)?;
//!
//! let mut rng = seeded(2);
//! let pairs: Vec<(usize, usize, f64)> = (0..80)
//!     .map(|_| {
//!         let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
//!         (i, j, if truth[i] == truth[j] { 1.0 } else { 0.0 })
//!     })
//!     .collect();
//!
//! let fit = fit_mccc(&x, &pairs, &MccParams::new(2).check()?, &mut seeded(3))?;
//! assert_eq!(fit.labels.len(), n);
//! // the two blobs are recovered (up to renaming the clusters)
//! assert!((0..n).all(|i| (fit.labels[i] == fit.labels[0]) == (truth[i] == truth[0])));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gimc_cluster::{
    ClusterError, KMeansParams, SpectralKMeans, ValidKMeansParams, constraint_matrix,
    spectral_kmeans,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::memory::{MemoryBudget, MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::GimcRng;
use gimc_solvers::{
    ImcModel, ImcParams, ImcProblem, ImcStart, NoObserver, Side, ValidImcParams, fit_imc,
};

use crate::error::Result;

/// Hyper-parameters of MCCC. Build with [`MccParams::new`] (k has no default) and the `with_*`
/// methods; [`MccParams::check`] validates them into the [`ValidMccParams`] that [`fit_mccc`]
/// takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MccParams {
    /// IMC settings (rank r with 1 ≤ r < d, λ, iterations). Default: `ImcParams::default()`
    /// with rank = k.
    pub imc: ImcParams,
    /// k-means on the embedding (k = number of clusters). Default `KMeansParams::new(k)` with 10
    /// restarts.
    pub kmeans: KMeansParams,
    /// The memory pre-flight: [`estimate_mccc`] is checked against it before Ω is built.
    /// Default [`MemoryBudget::Detect`] (the memory available now).
    pub memory: MemoryBudget,
}

impl MccParams {
    /// `k` clusters: IMC rank k (λ 0.1, the default iterations), k-means with 10 restarts.
    pub fn new(k: usize) -> Self {
        Self {
            imc: ImcParams::default().with_rank(k),
            kmeans: KMeansParams::new(k).with_n_init(10),
            memory: MemoryBudget::Detect,
        }
    }

    /// Sets the IMC rank r.
    pub fn with_rank(mut self, rank: usize) -> Self {
        self.imc.rank = rank;
        self
    }

    /// Sets the IMC ridge weight λ.
    pub fn with_lambda(mut self, lambda: f64) -> Self {
        self.imc.lambda = lambda;
        self
    }

    /// Sets all the IMC settings.
    pub fn with_imc(mut self, imc: ImcParams) -> Self {
        self.imc = imc;
        self
    }

    /// Sets the k-means on the embedding.
    pub fn with_kmeans(mut self, kmeans: KMeansParams) -> Self {
        self.kmeans = kmeans;
        self
    }

    /// Sets the memory budget of the pre-flight.
    pub fn with_memory(mut self, memory: MemoryBudget) -> Self {
        self.memory = memory;
        self
    }

    /// Checks the k-means parameters, then the IMC parameters (k ≤ n and rank < d are checked
    /// by the fit).
    pub fn check(&self) -> Result<ValidMccParams> {
        let kmeans = self.kmeans.check()?;
        let imc = self.imc.check()?;
        Ok(ValidMccParams {
            params: self.clone(),
            imc,
            kmeans,
        })
    }
}

/// [`MccParams`] that passed [`MccParams::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidMccParams {
    params: MccParams,
    imc: ValidImcParams,
    kmeans: ValidKMeansParams,
}

impl ValidMccParams {
    /// The checked IMC parameters.
    pub fn valid_imc(&self) -> &ValidImcParams {
        &self.imc
    }

    /// The checked k-means parameters.
    pub fn valid_kmeans(&self) -> &ValidKMeansParams {
        &self.kmeans
    }
}

impl std::ops::Deref for ValidMccParams {
    type Target = MccParams;
    fn deref(&self) -> &MccParams {
        &self.params
    }
}

/// A fitted MCCC clustering.
#[derive(Debug, Clone, PartialEq)]
pub struct Mccc {
    /// Cluster of every item.
    pub labels: Vec<usize>,
    /// The IMC model (W, H, objective trace).
    pub imc: ImcModel,
    /// The embedding and k-means of [`spectral_kmeans`] on XW.
    pub spectral: SpectralKMeans,
}

/// The estimated peak memory of [`fit_mccc`] on `x` with `n_pairs` constraints: X, Ω (both
/// orientations of every pair), IMC with X on both sides (factors, residual, CG work vectors,
/// the n × r products) and the spectral k-means (n × k). The parameter to lower is `rank`.
pub fn estimate_mccc(x: &FeatureMatrix, n_pairs: usize, params: &MccParams) -> MemoryEstimate {
    use crate::memory::{PROCESS_BASE_BYTES, feature_bytes, observed_bytes};
    use gimc_linalg::memory::mat_bytes;
    let (n, d, r) = (x.nrows(), x.ncols(), params.imc.rank);
    let entries = n_pairs.saturating_mul(2);
    let mut t = Tally::new("MCCC", "rank");
    t.bytes("process", PROCESS_BASE_BYTES)
        .bytes("X", feature_bytes(x))
        .bytes(
            "constraints and Ω",
            observed_bytes(n, n, entries).saturating_add(mat_bytes(n_pairs, 3)),
        )
        .bytes("residual on Ω", mat_bytes(entries, 2))
        .bytes(
            "IMC factors and CG vectors",
            mat_bytes(d, r.saturating_mul(16)),
        )
        .bytes("n × r products", mat_bytes(n, r.saturating_mul(4)))
        .bytes(
            "k-means",
            mat_bytes(n, params.kmeans.k.saturating_add(r)).saturating_mul(2),
        );
    t.finish()
}

/// MCCC ([module documentation](self)): IMC on the symmetric constraint matrix with
/// Φ = Ψ = `x`, then [`spectral_kmeans`] on XW.
///
/// Errors ([`GimcError`](crate::GimcError)): invalid constraints ([`constraint_matrix`]) or
/// k > n (`GimcError::Cluster`), rank ≥ d and solver failures (`GimcError::Solver`), NaN/Inf
/// in `x`. The parameters themselves were checked by [`MccParams::check`].
pub fn fit_mccc(
    x: &FeatureMatrix,
    pairs: &[(usize, usize, f64)],
    params: &ValidMccParams,
    rng: &mut GimcRng,
) -> Result<Mccc> {
    let n = x.nrows();
    if params.kmeans.k > n {
        return Err(ClusterError::TooFewPoints {
            k: params.kmeans.k,
            n,
        }
        .into());
    }
    check_fits(&estimate_mccc(x, pairs.len(), params), params.memory)?;
    let omega = constraint_matrix(n, pairs)?;
    let problem = ImcProblem::partial(Side::Features(x), Side::Features(x), &omega)?;
    let imc = fit_imc(
        &problem,
        params.valid_imc(),
        ImcStart::Draw(rng),
        &mut NoObserver,
    )?;
    let p = x.mul_dense(imc.w.as_ref())?;
    let spectral = spectral_kmeans(p.as_ref(), params.valid_kmeans(), rng)?;
    Ok(Mccc {
        labels: spectral.kmeans.labels.clone(),
        imc,
        spectral,
    })
}
