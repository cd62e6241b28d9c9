//! The constraint matrix and the spectral step of constraint-based clustering (DESIGN §3.3,
//! §3.4): the step shared by MCCC (Yi et al. 2013, `gimc::fit_mccc`) and GIMC's Algorithm 2
//! (`gimc::fit_semisupervised`).
//!
//! **Constraints.** Pairwise constraints (i, j, s) with s = 1 (similar / must-link) or
//! s = 0 (dissimilar / cannot-link) become the observed set Ω of the n × n similarity matrix A,
//! symmetrically: both (i, j) and (j, i) are observed with value s ([`constraint_matrix`]).
//!
//! **Spectral step.** Given an embedding source P (n × r; P = XW for MCCC, P = ΦW for
//! Algorithm 2), [`spectral_kmeans`] takes the top-k left singular vectors of P by a thin SVD of
//! the n × r matrix (O(nr²); never an n × n matrix) and runs k-means on their rows.

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::observe::NoObserver;
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Observed, thin_svd};

use crate::{ClusterError, KMeans, Result, ValidKMeansParams, fit_kmeans};

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
/// Errors: an empty `p`, NaN/Inf in `p` or k > n.
pub fn spectral_kmeans(
    p: MatRef<'_, f64>,
    kmeans: &ValidKMeansParams,
    rng: &mut GimcRng,
) -> Result<SpectralKMeans> {
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
    let km = fit_kmeans(&fx, kmeans, rng, &mut NoObserver)?;
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
