//! Ranking metrics for multi-label prediction: precision@k and nDCG@k (DESIGN §3.3 "Prediction",
//! §4 `gimc-table2`), and the partial-sort top-k helper used to turn scores into ranked lists.
//!
//! Definitions follow the Extreme Classification Repository (Bhatia et al.), which is what the
//! GIMC paper and its peers (SLEEC, FastXML, LEML) report. For a row with true label set y and
//! predicted ranking r_1, r_2, … (best first):
//! - P@k = (1/k) Σ_{l=1}^{k} 1[r_l ∈ y], always divided by k, even when k > |y| or k > L;
//! - DCG@k = Σ_{l=1}^{k} 1[r_l ∈ y] / log2(l + 1), and nDCG@k = DCG@k / Σ_{l=1}^{min(k,|y|)} 1/log2(l + 1),
//!   the DCG normalised by that of an ideal ranking of the min(k, |y|) relevant labels.
//!
//! The dataset value is the mean over rows. In the repository's convention a row with no true
//! label scores 0 and stays in the denominator ([`EmptyRows::CountAsZero`], the default, used by
//! the functions without a suffix); some papers drop such rows instead ([`EmptyRows::Skip`], via
//! the `_with` functions). Delicious has 14 such rows, so the two differ in the third decimal.
//! All values are fractions in [0, 1]; multiply by 100 for the papers' percentages.

use std::borrow::Cow;
use std::cmp::Ordering;

use gimc_linalg::faer::MatRef;
use gimc_linalg::sprs::CsMat;

use crate::error::{MetricsError, Position, Result};

/// How rows with no true label enter a dataset-level ranking metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmptyRows {
    /// Extreme Classification Repository convention: such a row scores 0 and is counted in the
    /// denominator (the mean is over all n rows).
    #[default]
    CountAsZero,
    /// Such rows are left out; the mean is over the rows with at least one true label. It is an
    /// error if no row has a label.
    Skip,
}

/// Orders label `a` before label `b` when its score is higher; NaN ranks below every number;
/// ties (and NaN pairs) are broken by the lower index.
fn rank_cmp(row: &[f64], a: usize, b: usize) -> Ordering {
    let (x, y) = (row[a], row[b]);
    match (x.is_nan(), y.is_nan()) {
        (true, true) => a.cmp(&b),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => y.partial_cmp(&x).unwrap_or(Ordering::Equal).then(a.cmp(&b)),
    }
}

/// The indices of the `min(k, row.len())` largest entries of `row`, best first.
///
/// Uses a partial sort (`select_nth_unstable_by`, O(L + k log k)). Ties are broken by the lower
/// index, so the result is deterministic; NaN entries rank below every number (−∞ included) and
/// among themselves by index. `k = 0` gives an empty list.
pub fn top_k_indices(row: &[f64], k: usize) -> Vec<usize> {
    let k = k.min(row.len());
    if k == 0 {
        return Vec::new();
    }
    if k <= SCAN_MAX_K {
        return top_k_by_scan(row, k);
    }
    let mut idx: Vec<usize> = (0..row.len()).collect();
    let cmp = |a: &usize, b: &usize| rank_cmp(row, *a, *b);
    if k < idx.len() {
        idx.select_nth_unstable_by(k - 1, cmp);
        idx.truncate(k);
    }
    idx.sort_unstable_by(cmp);
    idx
}

/// Up to this k, [`top_k_indices`] keeps a sorted list of the k best while scanning the row once
/// (about L comparisons against the k-th best); above it, a partial sort.
const SCAN_MAX_K: usize = 16;

/// [`top_k_indices`] by one scan: `best` holds the k best seen so far, best first, and an entry
/// enters only when it ranks before the current k-th (insertion into a list of at most k).
fn top_k_by_scan(row: &[f64], k: usize) -> Vec<usize> {
    let mut best: Vec<usize> = Vec::with_capacity(k + 1);
    for j in 0..row.len() {
        if best.len() == k && rank_cmp(row, j, best[k - 1]) != Ordering::Less {
            continue;
        }
        let at = best.partition_point(|&b| rank_cmp(row, b, j) == Ordering::Less);
        best.insert(at, j);
        best.truncate(k);
    }
    best
}

/// The top-k label lists (best first) of every row of an n × L score matrix.
///
/// Errors: `k = 0`, or a NaN score (reported with its position). Infinite scores are allowed and
/// ordered as usual (−∞ is a common way to mask labels).
pub fn top_k_rows(scores: MatRef<'_, f64>, k: usize) -> Result<Vec<Vec<usize>>> {
    if k == 0 {
        return Err(MetricsError::ZeroK);
    }
    let (n, l) = (scores.nrows(), scores.ncols());
    let mut buf = vec![0.0; l];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        for (j, b) in buf.iter_mut().enumerate() {
            let v = scores[(i, j)];
            if v.is_nan() {
                return Err(MetricsError::NonFinite {
                    what: "scores",
                    position: Position::Entry(i, j),
                    value: v,
                });
            }
            *b = v;
        }
        out.push(top_k_indices(&buf, k));
    }
    Ok(out)
}

/// Which ranking metric a shared loop computes.
#[derive(Clone, Copy)]
enum Metric {
    Precision,
    Ndcg,
}

/// The truth in CSR order (borrowed when it already is).
fn as_csr(truth: &CsMat<f64>) -> Cow<'_, CsMat<f64>> {
    if truth.is_csr() {
        Cow::Borrowed(truth)
    } else {
        Cow::Owned(truth.to_csr())
    }
}

/// Mean P@k or nDCG@k over rows from ranked lists; the shared core of every public function.
fn ranking_metric(
    topk: &[Vec<usize>],
    truth: &CsMat<f64>,
    k: usize,
    empty: EmptyRows,
    metric: Metric,
) -> Result<f64> {
    if k == 0 {
        return Err(MetricsError::ZeroK);
    }
    let truth = as_csr(truth);
    let (n, l) = (truth.rows(), truth.cols());
    if topk.len() != n {
        return Err(MetricsError::LengthMismatch {
            what: "top-k lists (one per truth row)",
            expected: n,
            found: topk.len(),
        });
    }
    if n == 0 {
        return Err(MetricsError::Empty { what: "truth rows" });
    }
    // 1/log2(p + 2) for ranks p = 0, 1, …; no list or ideal ranking is longer than min(k, L).
    let discounts: Vec<f64> = (0..k.min(l))
        .map(|p| 1.0 / ((p + 2) as f64).log2())
        .collect();
    let mut seen = vec![false; l];
    let mut total = 0.0;
    let mut counted = 0usize;
    for (i, (list, yrow)) in topk.iter().zip(truth.outer_iterator()).enumerate() {
        let take = &list[..list.len().min(k)];
        for (p, &lab) in take.iter().enumerate() {
            if lab >= l {
                return Err(MetricsError::IndexOutOfRange {
                    what: "top-k lists",
                    position: Position::Entry(i, p),
                    index: lab,
                    bound: l,
                });
            }
            if seen[lab] {
                for &m in take {
                    if m < l {
                        seen[m] = false;
                    }
                }
                return Err(MetricsError::DuplicateLabel { row: i, label: lab });
            }
            seen[lab] = true;
        }
        for &lab in take {
            seen[lab] = false;
        }
        let mut n_rel = 0usize;
        for (j, &v) in yrow.iter() {
            if !v.is_finite() {
                return Err(MetricsError::NonFinite {
                    what: "truth",
                    position: Position::Entry(i, j),
                    value: v,
                });
            }
            if v != 0.0 {
                n_rel += 1;
            }
        }
        if n_rel == 0 {
            if empty == EmptyRows::CountAsZero {
                counted += 1;
            }
            continue;
        }
        counted += 1;
        let (idx, val) = (yrow.indices(), yrow.data());
        let relevant = |lab: usize| match idx.binary_search(&lab) {
            Ok(pos) => val.get(pos).is_some_and(|&v| v != 0.0),
            Err(_) => false,
        };
        match metric {
            Metric::Precision => {
                let hits = take.iter().filter(|&&lab| relevant(lab)).count();
                total += hits as f64 / k as f64;
            }
            Metric::Ndcg => {
                let dcg: f64 = take
                    .iter()
                    .zip(&discounts)
                    .filter(|(lab, _)| relevant(**lab))
                    .map(|(_, d)| d)
                    .sum();
                let ideal: f64 = discounts.iter().take(k.min(n_rel)).sum();
                total += dcg / ideal;
            }
        }
    }
    if counted == 0 {
        return Err(MetricsError::ZeroDenominator {
            what: "ranking metric (no row has a true label)",
        });
    }
    Ok(total / counted as f64)
}

/// Checks that an n × L score matrix matches the n × L truth.
fn check_shapes(scores: MatRef<'_, f64>, truth: &CsMat<f64>) -> Result<()> {
    let found = (scores.nrows(), scores.ncols());
    let expected = (truth.rows(), truth.cols());
    if found != expected {
        return Err(MetricsError::ShapeMismatch {
            what: "scores (must match the truth matrix)",
            expected,
            found,
        });
    }
    Ok(())
}

/// Precision@k (XC-repository convention) of an n × L score matrix against the n × L 0/1
/// truth (CSR or CSC; any non-zero stored value counts as a true label).
///
/// Rows with no true label count as 0 and stay in the denominator; see [`EmptyRows`] and
/// [`precision_at_k_from_topk_with`] for the other convention. Ties in scores are broken by
/// the lower label index.
pub fn precision_at_k(scores: MatRef<'_, f64>, truth: &CsMat<f64>, k: usize) -> Result<f64> {
    check_shapes(scores, truth)?;
    let topk = top_k_rows(scores, k)?;
    precision_at_k_from_topk(&topk, truth, k)
}

/// Precision@k from predicted ranked label lists (best first, one list per truth row), the form
/// used when the n × L scores are never materialised.
///
/// Only the first k entries of each list are used, so lists computed once with the largest k
/// serve every smaller k. Shorter lists are padded with misses (the divisor is still k). A list
/// must not repeat a label or name one ≥ L.
pub fn precision_at_k_from_topk(topk: &[Vec<usize>], truth: &CsMat<f64>, k: usize) -> Result<f64> {
    precision_at_k_from_topk_with(topk, truth, k, EmptyRows::CountAsZero)
}

/// [`precision_at_k_from_topk`] with an explicit convention for rows with no true label.
pub fn precision_at_k_from_topk_with(
    topk: &[Vec<usize>],
    truth: &CsMat<f64>,
    k: usize,
    empty: EmptyRows,
) -> Result<f64> {
    ranking_metric(topk, truth, k, empty, Metric::Precision)
}

/// nDCG@k (XC-repository definition: DCG normalised by the ideal DCG of min(k, |y|) relevant
/// labels) of an n × L score matrix against the n × L 0/1 truth.
///
/// Rows with no true label count as 0 and stay in the denominator; see [`EmptyRows`].
pub fn ndcg_at_k(scores: MatRef<'_, f64>, truth: &CsMat<f64>, k: usize) -> Result<f64> {
    check_shapes(scores, truth)?;
    let topk = top_k_rows(scores, k)?;
    ndcg_at_k_from_topk(&topk, truth, k)
}

/// nDCG@k from predicted ranked label lists (same list rules as [`precision_at_k_from_topk`]).
pub fn ndcg_at_k_from_topk(topk: &[Vec<usize>], truth: &CsMat<f64>, k: usize) -> Result<f64> {
    ndcg_at_k_from_topk_with(topk, truth, k, EmptyRows::CountAsZero)
}

/// [`ndcg_at_k_from_topk`] with an explicit convention for rows with no true label.
pub fn ndcg_at_k_from_topk_with(
    topk: &[Vec<usize>],
    truth: &CsMat<f64>,
    k: usize,
    empty: EmptyRows,
) -> Result<f64> {
    ranking_metric(topk, truth, k, empty, Metric::Ndcg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::faer::Mat;
    use gimc_linalg::sprs::TriMat;

    fn csr(rows: usize, cols: usize, ones: &[(usize, usize)]) -> CsMat<f64> {
        let mut t = TriMat::new((rows, cols));
        for &(i, j) in ones {
            t.add_triplet(i, j, 1.0);
        }
        t.to_csr()
    }

    #[test]
    fn top_k_partial_sort_ties_and_nan() {
        let row = [0.5, f64::NAN, 0.9, 0.5, f64::NEG_INFINITY, 0.9];
        assert_eq!(top_k_indices(&row, 3), vec![2, 5, 0]);
        assert_eq!(top_k_indices(&row, 6), vec![2, 5, 0, 3, 4, 1]);
        assert_eq!(top_k_indices(&row, 100).len(), 6);
        assert!(top_k_indices(&row, 0).is_empty());
        assert!(top_k_indices(&[], 3).is_empty());
    }

    #[test]
    fn scan_and_partial_sort_agree() {
        // Rows with many ties, NaN and infinities, from a fixed arithmetic sequence.
        let values = [
            0.25,
            f64::NAN,
            -1.0,
            0.25,
            f64::INFINITY,
            3.0,
            f64::NEG_INFINITY,
            0.0,
        ];
        for len in [1usize, 2, 7, 40, 300] {
            let row: Vec<f64> = (0..len)
                .map(|j| values[(j * 7 + j / 3) % values.len()])
                .collect();
            let mut idx: Vec<usize> = (0..len).collect();
            idx.sort_by(|&a, &b| rank_cmp(&row, a, b));
            for k in [1, 2, 3, 5, SCAN_MAX_K, SCAN_MAX_K + 1, 50] {
                let k = k.min(len);
                assert_eq!(top_k_indices(&row, k), idx[..k].to_vec(), "len {len} k {k}");
            }
        }
    }

    #[test]
    fn hand_computed_precision_and_ndcg() {
        // Row 0: truth {0, 2}; scores rank 2, 1, 0, 3. Row 1: truth {3}; ranks 3 first.
        // Row 2: no labels.
        let truth = csr(3, 4, &[(0, 0), (0, 2), (1, 3)]);
        let scores = Mat::from_fn(3, 4, |i, j| {
            [
                [0.2, 0.5, 0.9, 0.1],
                [0.0, 0.1, 0.2, 0.3],
                [1.0, 0.0, 0.0, 0.0],
            ][i][j]
        });
        // P@1: row0 hit, row1 hit, row2 0 → 2/3. P@2: (1/2 + 1/2 + 0)/3 = 1/3.
        assert!((precision_at_k(scores.as_ref(), &truth, 1).unwrap() - 2.0 / 3.0).abs() < 1e-15);
        assert!((precision_at_k(scores.as_ref(), &truth, 2).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        // P@3: row0 ranks 2,1,0 → 2/3; row1 ranks 3,2,1 → 1/3; mean over 3 rows = 1/3.
        assert!((precision_at_k(scores.as_ref(), &truth, 3).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        // Skip convention: mean over rows 0 and 1 only → (2/3 + 1/3)/2 = 1/2.
        let topk = top_k_rows(scores.as_ref(), 3).unwrap();
        let p3 = precision_at_k_from_topk_with(&topk, &truth, 3, EmptyRows::Skip).unwrap();
        assert!((p3 - 0.5).abs() < 1e-15);
        // nDCG@3 row0: hits at ranks 1 and 3: (1 + 1/log2 4) / (1 + 1/log2 3).
        let r0 = (1.0 + 0.5) / (1.0 + 1.0 / 3f64.log2());
        let n3 = ndcg_at_k(scores.as_ref(), &truth, 3).unwrap();
        assert!((n3 - (r0 + 1.0 + 0.0) / 3.0).abs() < 1e-14);
        // nDCG@1: row0 hit → 1, row1 hit → 1, row2 → 0.
        let n1 = ndcg_at_k(scores.as_ref(), &truth, 1).unwrap();
        assert!((n1 - 2.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn explicit_zeros_and_csc_input() {
        let mut t = TriMat::new((1, 3));
        t.add_triplet(0, 0, 0.0);
        t.add_triplet(0, 1, 1.0);
        let csr = t.to_csr::<usize>();
        let csc = t.to_csc::<usize>();
        let topk = vec![vec![0, 1]];
        assert_eq!(precision_at_k_from_topk(&topk, &csr, 2).unwrap(), 0.5);
        assert_eq!(precision_at_k_from_topk(&topk, &csc, 2).unwrap(), 0.5);
        assert_eq!(precision_at_k_from_topk(&topk, &csr, 1).unwrap(), 0.0);
    }

    #[test]
    fn errors() {
        let truth = csr(2, 3, &[(0, 0)]);
        let good = vec![vec![0], vec![1]];
        assert_eq!(
            precision_at_k_from_topk(&good, &truth, 0),
            Err(MetricsError::ZeroK)
        );
        assert!(matches!(
            precision_at_k_from_topk(&good[..1], &truth, 1),
            Err(MetricsError::LengthMismatch { .. })
        ));
        assert!(matches!(
            ndcg_at_k_from_topk(&[vec![3], vec![0]], &truth, 1),
            Err(MetricsError::IndexOutOfRange {
                position: Position::Entry(0, 0),
                index: 3,
                ..
            })
        ));
        assert_eq!(
            precision_at_k_from_topk(&[vec![1, 1], vec![0]], &truth, 2),
            Err(MetricsError::DuplicateLabel { row: 0, label: 1 })
        );
        let empty = csr(2, 3, &[]);
        assert!(matches!(
            precision_at_k_from_topk_with(&good, &empty, 1, EmptyRows::Skip),
            Err(MetricsError::ZeroDenominator { .. })
        ));
        assert!(matches!(
            precision_at_k_from_topk(&[], &csr(0, 3, &[]), 1),
            Err(MetricsError::Empty { .. })
        ));
        let scores = Mat::from_fn(2, 2, |_, _| 0.0);
        assert!(matches!(
            precision_at_k(scores.as_ref(), &truth, 1),
            Err(MetricsError::ShapeMismatch { .. })
        ));
        let nan = Mat::from_fn(2, 3, |i, j| if (i, j) == (1, 2) { f64::NAN } else { 0.0 });
        assert!(matches!(
            ndcg_at_k(nan.as_ref(), &truth, 1),
            Err(MetricsError::NonFinite {
                position: Position::Entry(1, 2),
                ..
            })
        ));
        let mut t = TriMat::new((1, 2));
        t.add_triplet(0, 1, f64::INFINITY);
        assert!(matches!(
            precision_at_k_from_topk(&[vec![0]], &t.to_csr(), 1),
            Err(MetricsError::NonFinite { .. })
        ));
    }
}
