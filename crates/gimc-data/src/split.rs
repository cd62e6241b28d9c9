//! Seeded splits and sampling (DESIGN §4: hyper-parameters are chosen on a validation split of
//! the training data; §3.3 / `gimc-table3`: pairwise constraints for semi-supervised clustering,
//! with a held-out part for choosing λ; covtype-sub: a balanced class subsample).
//!
//! Every function draws from the [`GimcRng`] passed in, so equal seeds give equal results.

use std::collections::{BTreeMap, HashSet};

use gimc_linalg::rng::GimcRng;
use rand::seq::SliceRandom;

use crate::error::param_err;
use crate::{DataError, Dataset, Result};

/// A pairwise constraint (i, j, S_ij) with i < j and S_ij = 1 (same class) or 0.
pub type Pair = (usize, usize, f64);

/// Row indices of a train / validation split, each sorted ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSplit {
    /// Rows kept for training.
    pub train: Vec<usize>,
    /// Rows held out for validation.
    pub validation: Vec<usize>,
}

fn check_fraction(name: &'static str, f: f64) -> Result<()> {
    if (0.0..=1.0).contains(&f) {
        Ok(())
    } else {
        Err(param_err(name, format!("{f} is not in [0, 1]")))
    }
}

/// Splits rows 0..n at random: round(`validation_fraction`·n) rows go to validation.
pub fn split_rows(n: usize, validation_fraction: f64, rng: &mut GimcRng) -> Result<RowSplit> {
    check_fraction("validation_fraction", validation_fraction)?;
    let n_val = ((n as f64) * validation_fraction).round() as usize;
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(rng);
    let mut validation = idx[..n_val.min(n)].to_vec();
    let mut train = idx[n_val.min(n)..].to_vec();
    validation.sort_unstable();
    train.sort_unstable();
    Ok(RowSplit { train, validation })
}

/// Stratified split: within each class, round(`validation_fraction`·count) rows go to
/// validation, so class proportions are kept.
pub fn stratified_split(
    classes: &[usize],
    validation_fraction: f64,
    rng: &mut GimcRng,
) -> Result<RowSplit> {
    check_fraction("validation_fraction", validation_fraction)?;
    let mut train = Vec::new();
    let mut validation = Vec::new();
    for mut rows in rows_by_class(classes) {
        rows.shuffle(rng);
        let k = ((rows.len() as f64) * validation_fraction).round() as usize;
        validation.extend_from_slice(&rows[..k]);
        train.extend_from_slice(&rows[k..]);
    }
    validation.sort_unstable();
    train.sort_unstable();
    Ok(RowSplit { train, validation })
}

/// Rows of each class present, in increasing class order.
fn rows_by_class(classes: &[usize]) -> Vec<Vec<usize>> {
    let mut by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &k) in classes.iter().enumerate() {
        by.entry(k).or_default().push(i);
    }
    by.into_values().collect()
}

impl Dataset {
    /// Splits the rows into (train, validation) data sets; stratified by class when `stratify`
    /// and the targets are classes.
    pub fn split(
        &self,
        validation_fraction: f64,
        stratify: bool,
        rng: &mut GimcRng,
    ) -> Result<(Dataset, Dataset)> {
        let s = match (stratify, self.classes()) {
            (true, Some(c)) => stratified_split(c, validation_fraction, rng)?,
            _ => split_rows(self.nrows(), validation_fraction, rng)?,
        };
        Ok((
            self.select_rows(&s.train)?,
            self.select_rows(&s.validation)?,
        ))
    }

    /// A balanced class subsample of `total` rows ([`balanced_subsample`]).
    pub fn balanced_subsample(&self, total: usize, rng: &mut GimcRng) -> Result<Dataset> {
        let classes = self.classes().ok_or_else(|| {
            DataError::Incompatible("balanced subsample needs class targets".into())
        })?;
        let rows = balanced_subsample(classes, total, rng)?;
        self.select_rows(&rows)
    }
}

/// Number of distinct unordered pairs {i, j}, i ≠ j, among n items.
pub fn pair_count(n: usize) -> usize {
    n.saturating_mul(n.saturating_sub(1)) / 2
}

/// The k-th unordered pair (i < j) in row-major order of the strict upper triangle.
fn decode_pair(n: usize, k: usize) -> (usize, usize) {
    // offset(i) = number of pairs with first index < i = i·n − i(i+1)/2
    let offset = |i: usize| i * n - i * (i + 1) / 2;
    let (mut lo, mut hi) = (0usize, n - 1); // find the largest i with offset(i) <= k
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if offset(mid) <= k {
            lo = mid
        } else {
            hi = mid - 1
        }
    }
    (lo, lo + 1 + (k - offset(lo)))
}

/// Samples `count` distinct unordered pairs (i, j), i < j, uniformly without replacement, and
/// labels them S_ij = 1 when `classes[i] == classes[j]` (must-link) else 0 (cannot-link).
/// Returned sorted by (i, j).
pub fn sample_pairs(classes: &[usize], count: usize, rng: &mut GimcRng) -> Result<Vec<Pair>> {
    let n = classes.len();
    let total = pair_count(n);
    if count > total {
        return Err(param_err(
            "count",
            format!("{count} pairs requested but only {total} exist among {n} items"),
        ));
    }
    if n.checked_mul(n).is_none() {
        return Err(param_err("classes", "too many items"));
    }
    let picks = rand::seq::index::sample(rng, total, count);
    let mut pairs: Vec<Pair> = picks
        .into_iter()
        .map(|k| {
            let (i, j) = decode_pair(n, k);
            (i, j, if classes[i] == classes[j] { 1.0 } else { 0.0 })
        })
        .collect();
    pairs.sort_unstable_by_key(|&(i, j, _)| (i, j));
    Ok(pairs)
}

/// Splits constraint pairs into (kept, held out): round(`holdout_fraction`·len) random pairs are
/// held out (for choosing λ by constraint error, DESIGN §3.3). Both keep the input order.
pub fn split_pairs(
    pairs: &[Pair],
    holdout_fraction: f64,
    rng: &mut GimcRng,
) -> Result<(Vec<Pair>, Vec<Pair>)> {
    check_fraction("holdout_fraction", holdout_fraction)?;
    let k = ((pairs.len() as f64) * holdout_fraction).round() as usize;
    let held: HashSet<usize> = rand::seq::index::sample(rng, pairs.len(), k.min(pairs.len()))
        .into_iter()
        .collect();
    let mut kept = Vec::with_capacity(pairs.len() - held.len());
    let mut out = Vec::with_capacity(held.len());
    for (i, &p) in pairs.iter().enumerate() {
        if held.contains(&i) {
            out.push(p)
        } else {
            kept.push(p)
        }
    }
    Ok((kept, out))
}

/// A class-balanced subsample of `total` rows: each of the C classes gets ⌊total/C⌋ rows and
/// the first total mod C classes (in class order) one more, drawn without replacement; returns
/// sorted row indices. Errors if a class has too few rows. (covtype-sub: 1,711 rows over 7
/// classes = 3 × 245 + 4 × 244.)
pub fn balanced_subsample(
    classes: &[usize],
    total: usize,
    rng: &mut GimcRng,
) -> Result<Vec<usize>> {
    let present = rows_by_class(classes);
    let c = present.len();
    if c == 0 {
        return Err(param_err("classes", "no rows"));
    }
    let (base, extra) = (total / c, total % c);
    let mut out = Vec::with_capacity(total);
    for (k, rows) in present.iter().enumerate() {
        let want = base + usize::from(k < extra);
        if want > rows.len() {
            return Err(param_err(
                "total",
                format!("a class has {} rows but {want} are needed", rows.len()),
            ));
        }
        let pick = rand::seq::index::sample(rng, rows.len(), want);
        out.extend(pick.into_iter().map(|i| rows[i]));
    }
    out.sort_unstable();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::seeded;

    #[test]
    fn decode_pair_enumerates_the_triangle() {
        for n in 2..8 {
            let mut all = Vec::new();
            for k in 0..pair_count(n) {
                all.push(decode_pair(n, k));
            }
            let expected: Vec<(usize, usize)> = (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .collect();
            assert_eq!(all, expected);
        }
    }

    #[test]
    fn all_pairs_when_count_is_total() {
        let classes = [0, 1, 0, 1, 1];
        let p = sample_pairs(&classes, 10, &mut seeded(1)).unwrap();
        assert_eq!(p.len(), 10);
        assert!(sample_pairs(&classes, 11, &mut seeded(1)).is_err());
    }

    #[test]
    fn balanced_counts() {
        let classes: Vec<usize> = (0..700).map(|i| i % 7).collect();
        let rows = balanced_subsample(&classes, 59, &mut seeded(3)).unwrap();
        let mut counts = [0usize; 7];
        for &r in &rows {
            counts[classes[r]] += 1;
        }
        assert_eq!(counts, [9, 9, 9, 8, 8, 8, 8]);
        assert!(balanced_subsample(&classes, 701, &mut seeded(3)).is_err());
    }
}
