//! Semi-supervised clustering by matrix completion: MCCC (Yi et al. 2013; DESIGN §3.4) and the
//! "top-k left singular vectors, then k-means" step it shares with GIMC's Algorithm 2 (§3.3).
//!
//! **Constraints.** Pairwise constraints (i, j, s) with s = 1 (similar / must-link) or
//! s = 0 (dissimilar / cannot-link) become the observed set Ω of the n × n similarity matrix A,
//! symmetrically: both (i, j) and (j, i) are observed with value s ([`constraint_matrix`]).
//!
//! **MCCC.** Linear IMC (DESIGN §3.2) with Φ = Ψ = X: minimise
//! ½‖P_Ω(A − XWHᵀXᵀ)‖² + (λ/2)(‖W‖² + ‖H‖²) by `gimc_solvers::fit_imc` (rank r, 1 ≤ r < d),
//! then [`spectral_kmeans`] on P = XW (n × r): the top-k left singular vectors of P by a thin
//! SVD of the n × r matrix (O(nr²); never an n × n matrix), and k-means on their rows.
//!
//! **Reuse.** GIMC's Algorithm 2 calls [`spectral_kmeans`] with its learned Φ = φ_U(X) in
//! place of X.

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Observed, thin_svd};
use gimc_solvers::{ImcModel, ImcParams, ImcProblem, NoObserver, Side, fit_imc};

use crate::{ClusterError, KMeans, KMeansParams, Result, fit_kmeans};

/// The result of [`spectral_kmeans`].
#[derive(Debug, Clone, PartialEq)]
pub struct SpectralKMeans {
    /// T: the top-k left singular vectors of the input (n × k', k' = min(k, r), orthonormal
    /// columns), one row per item.
    pub embedding: Mat<f64>,
    /// The matching singular values, non-increasing.
    pub singular_values: Vec<f64>,
    /// k-means on the rows of T (`labels` are the clusters).
    pub kmeans: KMeans,
}

/// The top-k left singular vectors of `p` (n × r, e.g. P = ΦW) from its thin SVD (O(nr²), no
/// n × n matrix), then k-means (`kmeans.k` clusters) on their rows. When r < k only the r
/// available vectors are used. DESIGN §3.3 (Algorithm 2, last step) and §3.4 (MCCC).
///
/// Errors: an empty `p`, NaN/Inf in `p`, `kmeans` invalid or k > n.
pub fn spectral_kmeans(
    p: MatRef<'_, f64>,
    kmeans: &KMeansParams,
    rng: &mut GimcRng,
) -> Result<SpectralKMeans> {
    kmeans.check()?;
    let (n, r) = p.shape();
    if n == 0 || r == 0 {
        return Err(ClusterError::InvalidInput {
            what: "embedding source P",
            reason: format!("must be non-empty, got {n} x {r}"),
        });
    }
    if kmeans.k > n {
        return Err(ClusterError::TooFewPoints { k: kmeans.k, n });
    }
    let svd = thin_svd(p)?.truncate(kmeans.k);
    let embedding = svd.u;
    let fx = FeatureMatrix::dense(embedding.clone())?;
    let km = fit_kmeans(&fx, kmeans, rng)?;
    Ok(SpectralKMeans {
        embedding,
        singular_values: svd.s,
        kmeans: km,
    })
}

/// The observed similarity matrix of `n` items from pairwise constraints (i, j, s), s ∈ {0, 1}:
/// both (i, j) and (j, i) get value s (a pair given twice, in either order, with the same label
/// is kept once; (i, i) is allowed and observed once).
///
/// Errors: no constraints, an index ≥ n, a label other than 0 or 1, or the same pair with both
/// labels (each reported with its position in `pairs`).
pub fn constraint_matrix(n: usize, pairs: &[(usize, usize, f64)]) -> Result<Observed> {
    if pairs.is_empty() {
        return Err(ClusterError::InvalidInput {
            what: "constraints",
            reason: "no pairs given".into(),
        });
    }
    let mut seen: std::collections::HashMap<(usize, usize), (f64, usize)> =
        std::collections::HashMap::with_capacity(pairs.len());
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for (pos, &(i, j, s)) in pairs.iter().enumerate() {
        if i >= n || j >= n {
            return Err(ClusterError::InvalidInput {
                what: "constraints",
                reason: format!("pair {pos} = ({i}, {j}) names an item >= n = {n}"),
            });
        }
        if s != 0.0 && s != 1.0 {
            return Err(ClusterError::InvalidInput {
                what: "constraints",
                reason: format!("pair {pos} has label {s}; expected 1 (similar) or 0 (dissimilar)"),
            });
        }
        let key = (i.min(j), i.max(j));
        match seen.get(&key) {
            Some(&(prev, prev_pos)) => {
                if prev != s {
                    return Err(ClusterError::InvalidInput {
                        what: "constraints",
                        reason: format!(
                            "pair {pos} = ({i}, {j}) has label {s} but pair {prev_pos} gave {prev}"
                        ),
                    });
                }
            }
            None => {
                seen.insert(key, (s, pos));
                rows.push(i);
                cols.push(j);
                vals.push(s);
                if i != j {
                    rows.push(j);
                    cols.push(i);
                    vals.push(s);
                }
            }
        }
    }
    Ok(Observed::from_triplets(n, n, &rows, &cols, &vals)?)
}

/// Hyper-parameters of MCCC.
#[derive(Debug, Clone, PartialEq)]
pub struct MccParams {
    /// IMC settings (rank r with 1 ≤ r < d, λ, iterations). Default: `ImcParams::default()`
    /// with rank = k.
    pub imc: ImcParams,
    /// k-means on the embedding (k = number of clusters). Default `KMeansParams::new(k)` with 10
    /// restarts.
    pub kmeans: KMeansParams,
}

impl MccParams {
    /// `k` clusters: IMC rank k (λ 0.1, the default iterations), k-means with 10 restarts.
    pub fn new(k: usize) -> Self {
        Self {
            imc: ImcParams {
                rank: k,
                ..ImcParams::default()
            },
            kmeans: KMeansParams::new(k).with_n_init(10),
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

/// MCCC (module documentation): IMC on the symmetric constraint matrix with Φ = Ψ = `x`, then
/// [`spectral_kmeans`] on XW.
///
/// Errors: invalid constraints ([`constraint_matrix`]), invalid parameters (including
/// rank ≥ d), NaN/Inf in `x`, solver failures.
pub fn fit_mccc(
    x: &FeatureMatrix,
    pairs: &[(usize, usize, f64)],
    params: &MccParams,
    rng: &mut GimcRng,
) -> Result<Mccc> {
    params.kmeans.check()?;
    let valid = params.imc.check()?;
    let n = x.nrows();
    if params.kmeans.k > n {
        return Err(ClusterError::TooFewPoints {
            k: params.kmeans.k,
            n,
        });
    }
    let omega = constraint_matrix(n, pairs)?;
    let problem = ImcProblem::partial(Side::Features(x), Side::Features(x), &omega)?;
    let imc = fit_imc(&problem, &valid, None, rng, &mut NoObserver)?;
    let p = x.mul_dense(imc.w.as_ref())?;
    let spectral = spectral_kmeans(p.as_ref(), &params.kmeans, rng)?;
    Ok(Mccc {
        labels: spectral.kmeans.labels.clone(),
        imc,
        spectral,
    })
}
