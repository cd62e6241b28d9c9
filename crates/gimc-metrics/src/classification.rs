//! Classification accuracy for multi-class prediction (DESIGN §4 `gimc-fig2`, `gimc-multiclass`)
//! and the ROC AUC of scores (PU completion, `pu-imc`).

use crate::error::{MetricsError, Position, Result};

/// Fraction of items whose predicted class equals the true class, in [0, 1].
///
/// Errors: length mismatch, empty input.
pub fn accuracy(pred: &[usize], truth: &[usize]) -> Result<f64> {
    if pred.len() != truth.len() {
        return Err(MetricsError::LengthMismatch {
            what: "predicted classes (must match truth)",
            expected: truth.len(),
            found: pred.len(),
        });
    }
    if pred.is_empty() {
        return Err(MetricsError::Empty { what: "labels" });
    }
    let right = pred.iter().zip(truth).filter(|(p, t)| p == t).count();
    Ok(right as f64 / pred.len() as f64)
}

/// Area under the ROC curve of the scores of positives against those of negatives: the
/// probability that a random positive outscores a random negative, ties counting one half
/// (Mann–Whitney, from one sort: O((p + q) log(p + q))).
///
/// Errors: either side empty, a NaN or infinite score (with its position).
pub fn roc_auc(positives: &[f64], negatives: &[f64]) -> Result<f64> {
    if positives.is_empty() {
        return Err(MetricsError::Empty { what: "positives" });
    }
    if negatives.is_empty() {
        return Err(MetricsError::Empty { what: "negatives" });
    }
    for (what, scores) in [("positives", positives), ("negatives", negatives)] {
        if let Some((i, &value)) = scores.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(MetricsError::NonFinite {
                what,
                position: Position::Index(i),
                value,
            });
        }
    }
    let mut all: Vec<(f64, bool)> = positives
        .iter()
        .map(|&s| (s, true))
        .chain(negatives.iter().map(|&s| (s, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    // sum of the (mid-)ranks of the positives, ranks starting at 1
    let mut rank_sum = 0.0;
    let mut start = 0;
    while start < all.len() {
        let mut end = start + 1;
        while end < all.len() && all[end].0 == all[start].0 {
            end += 1;
        }
        let mid_rank = (start + end + 1) as f64 / 2.0;
        let pos_in_tie = all[start..end].iter().filter(|e| e.1).count();
        rank_sum += mid_rank * pos_in_tie as f64;
        start = end;
    }
    let (np, nn) = (positives.len() as f64, negatives.len() as f64);
    Ok((rank_sum - np * (np + 1.0) / 2.0) / (np * nn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_matches_pair_counting() {
        let pos = [0.9, 0.5, 0.5, 0.2];
        let neg = [0.5, 0.1, 0.3, 0.95, 0.2];
        let mut wins = 0.0;
        for p in pos {
            for n in neg {
                wins += if p > n {
                    1.0
                } else if p == n {
                    0.5
                } else {
                    0.0
                };
            }
        }
        assert!((roc_auc(&pos, &neg).unwrap() - wins / 20.0).abs() < 1e-12);
        assert_eq!(roc_auc(&[1.0, 2.0], &[0.0]).unwrap(), 1.0);
        assert_eq!(roc_auc(&[0.0], &[1.0, 2.0]).unwrap(), 0.0);
        assert!(matches!(
            roc_auc(&[], &[1.0]),
            Err(MetricsError::Empty { .. })
        ));
        assert!(matches!(
            roc_auc(&[1.0, f64::NAN], &[1.0]),
            Err(MetricsError::NonFinite {
                position: Position::Index(1),
                ..
            })
        ));
    }

    #[test]
    fn hand_computed() {
        assert_eq!(accuracy(&[0, 1, 2, 2], &[0, 1, 1, 2]).unwrap(), 0.75);
        assert_eq!(accuracy(&[3], &[3]).unwrap(), 1.0);
        assert!(matches!(
            accuracy(&[], &[]),
            Err(MetricsError::Empty { .. })
        ));
        assert!(matches!(
            accuracy(&[0], &[0, 1]),
            Err(MetricsError::LengthMismatch {
                expected: 2,
                found: 1,
                ..
            })
        ));
    }
}
