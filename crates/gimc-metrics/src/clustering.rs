//! Clustering metrics (DESIGN §3.4 "Metrics", §4 `gimc-table3`, `okmf-table2`): pairwise
//! clustering error, Hungarian-matched clustering accuracy, and the error of a clustering or of
//! predicted similarities on a set of must-link / cannot-link constraints.
//!
//! Cluster and class labels are arbitrary `usize` values; only equality matters, so any
//! relabelling of either side gives the same pairwise error, and a permuted labelling of the
//! truth has accuracy 1. Both metrics go through the contingency table n_ab (items with
//! predicted cluster a and true class b), never through the O(n²) item pairs.

use std::collections::HashMap;

use pathfinding::prelude::{Matrix, kuhn_munkres};

use crate::error::{MetricsError, Position, Result};

/// The sparse contingency table of two labellings, with labels mapped to 0..C.
struct Contingency {
    /// Number of items.
    n: usize,
    /// Cluster sizes of the prediction (indexed by dense predicted id).
    pred_sizes: Vec<u64>,
    /// Class sizes of the truth (indexed by dense true id).
    truth_sizes: Vec<u64>,
    /// Non-zero cells ((pred id, truth id), count).
    cells: HashMap<(usize, usize), u64>,
}

/// Maps `label` to a dense id, in order of first appearance.
fn dense_id(ids: &mut HashMap<usize, usize>, sizes: &mut Vec<u64>, label: usize) -> usize {
    let next = ids.len();
    let id = *ids.entry(label).or_insert(next);
    if id == sizes.len() {
        sizes.push(0);
    }
    if let Some(s) = sizes.get_mut(id) {
        *s += 1;
    }
    id
}

impl Contingency {
    /// Builds the table in O(n) expected time. Errors on length mismatch or empty input.
    fn new(pred: &[usize], truth: &[usize]) -> Result<Self> {
        if pred.len() != truth.len() {
            return Err(MetricsError::LengthMismatch {
                what: "predicted clusters (must match truth)",
                expected: truth.len(),
                found: pred.len(),
            });
        }
        if pred.is_empty() {
            return Err(MetricsError::Empty { what: "labellings" });
        }
        let (mut pid, mut tid) = (HashMap::new(), HashMap::new());
        let (mut pred_sizes, mut truth_sizes) = (Vec::new(), Vec::new());
        let mut cells = HashMap::new();
        for (&p, &t) in pred.iter().zip(truth) {
            let a = dense_id(&mut pid, &mut pred_sizes, p);
            let b = dense_id(&mut tid, &mut truth_sizes, t);
            *cells.entry((a, b)).or_insert(0u64) += 1;
        }
        Ok(Self {
            n: pred.len(),
            pred_sizes,
            truth_sizes,
            cells,
        })
    }
}

/// Number of unordered pairs among `x` items, x(x − 1)/2, exactly.
fn pairs(x: u64) -> u128 {
    let x = u128::from(x);
    x * x.saturating_sub(1) / 2
}

/// Fraction of unordered item pairs on which `pred` and `truth` disagree about "same cluster".
///
/// DESIGN §3.4: the GIMC paper prints this with the indicator cases swapped; this is the usual
/// definition (one minus the Rand index). With n_ab the contingency table, a_i, b_j its margins,
/// the number of disagreeing pairs is Σ C(a_i, 2) + Σ C(b_j, 2) − 2 Σ C(n_ab, 2) (pairs together
/// in one labelling minus twice those together in both), computed exactly in u128 in O(n + cells)
/// and divided by C(n, 2).
///
/// Errors: length mismatch, fewer than two items.
pub fn pairwise_clustering_error(pred: &[usize], truth: &[usize]) -> Result<f64> {
    if pred.len() == truth.len() && pred.len() < 2 {
        return Err(MetricsError::TooFewItems {
            what: "pairwise clustering error",
            needed: 2,
            found: pred.len(),
        });
    }
    let c = Contingency::new(pred, truth)?;
    let same_pred: u128 = c.pred_sizes.iter().map(|&a| pairs(a)).sum();
    let same_truth: u128 = c.truth_sizes.iter().map(|&b| pairs(b)).sum();
    let same_both: u128 = c.cells.values().map(|&x| pairs(x)).sum();
    let disagree = same_pred + same_truth - 2 * same_both;
    Ok(disagree as f64 / pairs(c.n as u64) as f64)
}

/// Clustering accuracy: the fraction of items whose predicted cluster maps to their class under
/// the best one-to-one matching of clusters to classes (Hungarian algorithm on the contingency
/// table, `pathfinding::kuhn_munkres`).
///
/// When the numbers of clusters and classes differ, the table is padded with zero rows or
/// columns to a square, so surplus clusters (or classes) stay unmatched and their items count as
/// errors. Cost O(n + C³), C = max(#clusters, #classes).
///
/// Errors: length mismatch, empty input.
pub fn clustering_accuracy(pred: &[usize], truth: &[usize]) -> Result<f64> {
    let c = Contingency::new(pred, truth)?;
    let size = c.pred_sizes.len().max(c.truth_sizes.len());
    let mut weights = Matrix::new(size, size, 0i64);
    for (&(a, b), &count) in &c.cells {
        // Counts are at most n ≤ isize::MAX, so they fit in i64.
        weights[(a, b)] = i64::try_from(count).unwrap_or(i64::MAX);
    }
    let (matched, _) = kuhn_munkres(&weights);
    Ok(matched as f64 / c.n as f64)
}

/// Checks that a constraint list is non-empty, names items below `n` and has 0/1 labels.
fn check_constraints(pairs: &[(usize, usize, f64)], n: usize) -> Result<()> {
    if pairs.is_empty() {
        return Err(MetricsError::Empty {
            what: "constraints",
        });
    }
    for (p, &(i, j, s)) in pairs.iter().enumerate() {
        for (slot, idx) in [(0, i), (1, j)] {
            if idx >= n {
                return Err(MetricsError::IndexOutOfRange {
                    what: "constraint item",
                    position: Position::Entry(p, slot),
                    index: idx,
                    bound: n,
                });
            }
        }
        if s != 0.0 && s != 1.0 {
            return Err(MetricsError::InvalidValue {
                what: "constraint label",
                position: Position::Index(p),
                value: s,
                expected: "1 (similar) or 0 (dissimilar)",
            });
        }
    }
    Ok(())
}

/// Fraction of pairwise constraints `(i, j, s)` (s = 1 similar / must-link, s = 0 dissimilar /
/// cannot-link) that the clustering `pred_clusters` violates: a similar pair split across
/// clusters, or a dissimilar pair put in one cluster (DESIGN §3.3 Algorithm 2, §3.4).
///
/// Errors: no constraints, an item index ≥ `pred_clusters.len()`, a label other than 0 or 1.
pub fn constraint_error(pairs: &[(usize, usize, f64)], pred_clusters: &[usize]) -> Result<f64> {
    check_constraints(pairs, pred_clusters.len())?;
    let wrong = pairs
        .iter()
        .filter(|&&(i, j, s)| (pred_clusters[i] == pred_clusters[j]) != (s == 1.0))
        .count();
    Ok(wrong as f64 / pairs.len() as f64)
}

/// Fraction of pairwise constraints misclassified by predicted similarity scores:
/// `scores[p]` is the model's Ŝ for `pairs[p]`, read as "similar" when Ŝ ≥ 0.5 and "dissimilar"
/// otherwise (the threshold halfway between the two targets; used to choose λ on held-out
/// constraints, DESIGN §3.3).
///
/// Item indices are not checked against a clustering (there is none); the labels must be 0 or 1.
/// Errors: no constraints, length mismatch, a non-0/1 label, a NaN score.
pub fn constraint_error_from_scores(pairs: &[(usize, usize, f64)], scores: &[f64]) -> Result<f64> {
    if scores.len() != pairs.len() {
        return Err(MetricsError::LengthMismatch {
            what: "similarity scores (one per constraint)",
            expected: pairs.len(),
            found: scores.len(),
        });
    }
    check_constraints(pairs, usize::MAX)?;
    let mut wrong = 0usize;
    for (p, (&(_, _, s), &score)) in pairs.iter().zip(scores).enumerate() {
        if score.is_nan() {
            return Err(MetricsError::NonFinite {
                what: "similarity scores",
                position: Position::Index(p),
                value: score,
            });
        }
        if (score >= 0.5) != (s == 1.0) {
            wrong += 1;
        }
    }
    Ok(wrong as f64 / pairs.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_pairwise_error() {
        // pred {0,1,2}{3}, truth {0,1}{2,3}: pairs (6 total) disagreeing: (0,2),(1,2),(2,3) → 1/2.
        let e = pairwise_clustering_error(&[5, 5, 5, 9], &[1, 1, 0, 0]).unwrap();
        assert_eq!(e, 0.5);
        assert_eq!(pairwise_clustering_error(&[0, 1], &[3, 3]).unwrap(), 1.0);
        assert_eq!(
            pairwise_clustering_error(&[0, 0, 1], &[7, 7, 2]).unwrap(),
            0.0
        );
    }

    #[test]
    fn hand_computed_accuracy() {
        // clusters {0,1,2}→class 1 (2 right), {3}→class 0 (1 right): 3/4.
        assert_eq!(
            clustering_accuracy(&[5, 5, 5, 9], &[1, 1, 0, 0]).unwrap(),
            0.75
        );
        // one cluster, two classes: best match gets the larger class.
        assert_eq!(
            clustering_accuracy(&[0, 0, 0], &[1, 2, 2]).unwrap(),
            2.0 / 3.0
        );
        // three clusters, one class: only one cluster can match.
        assert_eq!(
            clustering_accuracy(&[0, 1, 2, 2], &[4, 4, 4, 4]).unwrap(),
            0.5
        );
    }

    #[test]
    fn hand_computed_constraint_error() {
        let clusters = [0, 0, 1, 1];
        let pairs = [(0, 1, 1.0), (0, 2, 1.0), (1, 3, 0.0), (2, 3, 0.0)];
        // violated: (0,2) similar but split; (2,3) dissimilar but together → 2/4.
        assert_eq!(constraint_error(&pairs, &clusters).unwrap(), 0.5);
        let scores = [0.9, 0.5, 0.1, 0.49];
        // (0,2): 0.5 ≥ 0.5 → similar, right; all right.
        assert_eq!(constraint_error_from_scores(&pairs, &scores).unwrap(), 0.0);
        let scores = [0.2, 0.4, 0.7, 0.49];
        assert_eq!(constraint_error_from_scores(&pairs, &scores).unwrap(), 0.75);
    }

    #[test]
    fn errors() {
        assert!(matches!(
            pairwise_clustering_error(&[0], &[0]),
            Err(MetricsError::TooFewItems { .. })
        ));
        assert!(matches!(
            pairwise_clustering_error(&[0, 1], &[0]),
            Err(MetricsError::LengthMismatch { .. })
        ));
        assert!(matches!(
            clustering_accuracy(&[], &[]),
            Err(MetricsError::Empty { .. })
        ));
        assert!(matches!(
            constraint_error(&[(0, 4, 1.0)], &[0, 0]),
            Err(MetricsError::IndexOutOfRange {
                position: Position::Entry(0, 1),
                index: 4,
                ..
            })
        ));
        assert!(matches!(
            constraint_error(&[(0, 1, 0.5)], &[0, 0]),
            Err(MetricsError::InvalidValue { .. })
        ));
        assert!(matches!(
            constraint_error(&[], &[0, 0]),
            Err(MetricsError::Empty { .. })
        ));
        assert!(matches!(
            constraint_error_from_scores(&[(0, 1, 1.0)], &[f64::NAN]),
            Err(MetricsError::NonFinite { .. })
        ));
        assert!(matches!(
            constraint_error_from_scores(&[(0, 1, 1.0)], &[]),
            Err(MetricsError::LengthMismatch { .. })
        ));
    }
}
