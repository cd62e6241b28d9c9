//! The observed-entry set Ω with its values, and the sampled-product kernel (DESIGN §3.2).
//!
//! [`Observed`] stores Ω of an n_x × n_y matrix in CSR order (the order of [`Observed::values`]
//! and of every per-entry vector in this module) together with a CSC permutation, so products
//! with both `R` and `Rᵀ` can run parallel over rows without atomics.
//!
//! The kernel is the hot loop of MC, IMC, GIMC and MCCC:
//! - [`sampled_dot`]: p_i · q_j for every (i, j) ∈ Ω (the entries of P_Ω(P Qᵀ));
//! - [`omega_mul_dense`]: `R·Q` for the sparse `R` on Ω;
//! - [`omega_tr_mul_dense`]: `Rᵀ·P`, walking Ω in CSC order.
//!
//! Each output entry / row is computed by one rayon task with a fixed summation order, so the
//! results are bitwise identical for any number of threads.

use faer::{Mat, MatRef};
use rayon::prelude::*;
use sprs::CsMat;

use crate::dense::{axpy_slice, dot, from_row_major, rows_contiguous};
use crate::error::dim_err;
use crate::memory::{MemoryBudget, MemoryEstimate, Tally, check_fits, csr_bytes};
use crate::sparse::{self, AsSparseView, Compressed, transpose_pattern};
use crate::{LinalgError, Result};

/// Target number of floating-point operations per rayon task.
const TASK_FLOPS: usize = 1 << 14;

/// The observed entries Ω of an `nrows × ncols` matrix with their values, in CSR order plus a
/// CSC permutation.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    nrows: usize,
    ncols: usize,
    /// CSR row pointers (nrows + 1).
    row_ptr: Vec<usize>,
    /// Column of each entry, CSR order (sorted within each row).
    col_idx: Vec<usize>,
    /// Value of each entry, CSR order.
    values: Vec<f64>,
    /// CSC column pointers (ncols + 1).
    col_ptr: Vec<usize>,
    /// Row of each entry, CSC order (sorted within each column).
    row_idx: Vec<usize>,
    /// For each entry in CSC order, its position in the CSR arrays.
    csc_to_csr: Vec<usize>,
}

impl Observed {
    /// Builds Ω from coordinate triplets (any order). Rejects mismatched slice lengths
    /// ([`LinalgError::DimensionMismatch`]), out-of-range indices
    /// ([`LinalgError::IndexOutOfBounds`]), duplicate (i, j) pairs
    /// ([`LinalgError::InvalidParameter`] naming the pair), NaN / infinite values
    /// ([`LinalgError::NonFinite`]), and dimensions whose pointer arrays would not fit in the
    /// memory available ([`LinalgError::InsufficientMemory`], checked before allocating; see
    /// [`Observed::estimate`]).
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        rows: &[usize],
        cols: &[usize],
        values: &[f64],
    ) -> Result<Self> {
        if rows.len() != cols.len() || rows.len() != values.len() {
            return Err(dim_err(
                "Observed::from_triplets",
                format!("rows, cols and values of equal length ({})", rows.len()),
                format!("{}, {}, {}", rows.len(), cols.len(), values.len()),
            ));
        }
        for ((&i, &j), &value) in rows.iter().zip(cols).zip(values) {
            if i >= nrows || j >= ncols {
                return Err(LinalgError::IndexOutOfBounds {
                    row: i,
                    col: j,
                    nrows,
                    ncols,
                });
            }
            if !value.is_finite() {
                return Err(LinalgError::NonFinite {
                    row: i,
                    col: j,
                    value,
                });
            }
        }
        check_fits(
            &Self::estimate(nrows, ncols, rows.len()),
            MemoryBudget::Detect,
        )?;
        // counting sort by row, then sort each row by column
        let mut row_ptr = vec![0usize; nrows + 1];
        for &i in rows {
            row_ptr[i + 1] += 1;
        }
        for i in 0..nrows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut next = row_ptr.clone();
        let mut order = vec![0usize; rows.len()];
        for (t, &i) in rows.iter().enumerate() {
            order[next[i]] = t;
            next[i] += 1;
        }
        for i in 0..nrows {
            order[row_ptr[i]..row_ptr[i + 1]].sort_unstable_by_key(|&t| cols[t]);
        }
        let col_idx: Vec<usize> = order.iter().map(|&t| cols[t]).collect();
        let vals: Vec<f64> = order.iter().map(|&t| values[t]).collect();
        for i in 0..nrows {
            let r = &col_idx[row_ptr[i]..row_ptr[i + 1]];
            if let Some(w) = r.windows(2).find(|w| w[0] == w[1]) {
                return Err(duplicate(i, w[0]));
            }
        }
        Ok(Self::from_sorted_parts(
            nrows, ncols, row_ptr, col_idx, vals,
        ))
    }

    /// The peak memory of [`Observed::from_triplets`] for an `nrows × ncols` matrix with `nnz`
    /// entries: two row-pointer and two column-pointer arrays, and five per-entry arrays (the
    /// CSR order, columns, values, CSC rows and the CSC → CSR permutation). The dimensions
    /// count, not only the entries: one entry at row 4·10⁹ needs 64 GB of row pointers.
    pub fn estimate(nrows: usize, ncols: usize, nnz: usize) -> MemoryEstimate {
        let mut t = Tally::new("the observed-entry set", "the row and column indices");
        t.bytes(
            format!("row pointers {}", nrows.saturating_add(1)),
            csr_bytes(nrows, 0).saturating_mul(2),
        );
        t.bytes(
            format!("column pointers {}", ncols.saturating_add(1)),
            csr_bytes(ncols, 0).saturating_mul(2),
        );
        t.bytes(
            format!("{nnz} entries"),
            (nnz as u64).saturating_mul(5 * std::mem::size_of::<usize>() as u64),
        );
        t.finish()
    }

    /// Builds Ω from the stored entries of a sparse matrix (either storage order; explicitly
    /// stored zeros are observed entries). Rejects NaN / infinite values.
    pub fn from_csr(a: &impl AsSparseView) -> Result<Self> {
        sparse::csr_check_finite(a)?;
        let a = a.sparse_view();
        let rows = Compressed::rows_of(&a);
        let (nrows, ncols) = (a.rows(), a.cols());
        for i in 0..rows.outer {
            let (c, _) = rows.row(i);
            if let Some(w) = c.windows(2).find(|w| w[0] >= w[1]) {
                return Err(duplicate(i, w[1]));
            }
        }
        Ok(Self::from_sorted_parts(
            nrows,
            ncols,
            rows.ptr.into_owned(),
            rows.idx.into_owned(),
            rows.val.into_owned(),
        ))
    }

    /// Every entry of a dense matrix (Ω = all pairs), rejecting NaN / infinite values.
    pub fn full_from_dense(a: MatRef<'_, f64>) -> Result<Self> {
        crate::dense::check_finite(a)?;
        let (n, m) = a.shape();
        let row_ptr = (0..=n).map(|i| i * m).collect();
        let col_idx = (0..n).flat_map(|_| 0..m).collect();
        let vals = (0..n)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .map(|(i, j)| a[(i, j)])
            .collect();
        Ok(Self::from_sorted_parts(n, m, row_ptr, col_idx, vals))
    }

    /// Completes the CSC side from valid, sorted CSR parts.
    fn from_sorted_parts(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<usize>,
        col_idx: Vec<usize>,
        values: Vec<f64>,
    ) -> Self {
        let (col_ptr, row_idx, csc_to_csr) = transpose_pattern(nrows, ncols, &row_ptr, &col_idx);
        Self {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
            col_ptr,
            row_idx,
            csc_to_csr,
        }
    }

    /// The same pattern with new values (CSR order), rejecting a wrong length or non-finite
    /// values.
    pub fn with_values(&self, values: Vec<f64>) -> Result<Self> {
        self.check_values("Observed::with_values", &values)?;
        let mut out = self.clone();
        out.values = values;
        Ok(out)
    }

    /// Replaces the values in place (same checks as [`Observed::with_values`]).
    pub fn set_values(&mut self, values: Vec<f64>) -> Result<()> {
        self.check_values("Observed::set_values", &values)?;
        self.values = values;
        Ok(())
    }

    fn check_values(&self, op: &'static str, values: &[f64]) -> Result<()> {
        self.check_len(op, values.len())?;
        if let Some(e) = values.iter().position(|v| !v.is_finite()) {
            let (row, col) = self.entry(e).map_or((0, 0), |(i, j, _)| (i, j));
            return Err(LinalgError::NonFinite {
                row,
                col,
                value: values[e],
            });
        }
        Ok(())
    }

    pub(crate) fn check_len(&self, op: &'static str, len: usize) -> Result<()> {
        if len != self.len() {
            return Err(dim_err(
                op,
                format!("{} values (one per observed entry)", self.len()),
                format!("{len}"),
            ));
        }
        Ok(())
    }

    /// Number of rows n_x of the underlying matrix.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns n_y of the underlying matrix.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// (nrows, ncols).
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }

    /// |Ω|.
    pub fn len(&self) -> usize {
        self.col_idx.len()
    }

    /// Whether Ω is empty.
    pub fn is_empty(&self) -> bool {
        self.col_idx.is_empty()
    }

    /// The observed values in CSR order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// CSR row pointers (length nrows + 1): row i's entries are positions
    /// `row_ptr[i]..row_ptr[i + 1]`.
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// Column index of every entry, CSR order.
    pub fn col_indices(&self) -> &[usize] {
        &self.col_idx
    }

    /// CSC column pointers (length ncols + 1) into [`Observed::csc_row_indices`] and
    /// [`Observed::csc_to_csr`].
    pub fn col_ptr(&self) -> &[usize] {
        &self.col_ptr
    }

    /// Row index of every entry, CSC order.
    pub fn csc_row_indices(&self) -> &[usize] {
        &self.row_idx
    }

    /// For every entry in CSC order, its position in CSR order (an index into
    /// [`Observed::values`]).
    pub fn csc_to_csr(&self) -> &[usize] {
        &self.csc_to_csr
    }

    /// Row `i`: its column indices and values, or `None` if `i >= nrows`.
    pub fn row(&self, i: usize) -> Option<(&[usize], &[f64])> {
        let r = self.row_range(i)?;
        Some((&self.col_idx[r.clone()], &self.values[r]))
    }

    /// The CSR positions of row `i`'s entries, or `None` if `i >= nrows`.
    pub fn row_range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        if i >= self.nrows {
            return None;
        }
        Some(self.row_ptr[i]..self.row_ptr[i + 1])
    }

    /// Column `j`: the row indices of its entries and their CSR positions (indices into
    /// [`Observed::values`]), or `None` if `j >= ncols`.
    pub fn col(&self, j: usize) -> Option<(&[usize], &[usize])> {
        if j >= self.ncols {
            return None;
        }
        let r = self.col_ptr[j]..self.col_ptr[j + 1];
        Some((&self.row_idx[r.clone()], &self.csc_to_csr[r]))
    }

    /// The `e`-th entry in CSR order as (row, col, value).
    pub fn entry(&self, e: usize) -> Option<(usize, usize, f64)> {
        let j = *self.col_idx.get(e)?;
        // the row whose range contains e: last i with row_ptr[i] <= e
        let i = self.row_ptr.partition_point(|&p| p <= e).checked_sub(1)?;
        Some((i, j, self.values[e]))
    }

    /// Iterator over (row, col, value) in CSR order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        (0..self.nrows).flat_map(move |i| {
            let r = self.row_ptr[i]..self.row_ptr[i + 1];
            self.col_idx[r.clone()]
                .iter()
                .zip(&self.values[r])
                .map(move |(&j, &v)| (i, j, v))
        })
    }

    /// Row index of every entry, CSR order (the COO row array).
    pub fn row_indices(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.len());
        for i in 0..self.nrows {
            out.extend(std::iter::repeat_n(
                i,
                self.row_ptr[i + 1] - self.row_ptr[i],
            ));
        }
        out
    }

    /// Number of observed entries in each row.
    pub fn row_counts(&self) -> Vec<usize> {
        self.row_ptr.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Number of observed entries in each column.
    pub fn col_counts(&self) -> Vec<usize> {
        self.col_ptr.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Σ_Ω value².
    pub fn values_sq_norm(&self) -> f64 {
        self.values.iter().map(|v| v * v).sum()
    }

    /// Ωᵀ: the set for the transposed matrix (its CSR order is this set's CSC order).
    pub fn transpose(&self) -> Observed {
        let values = self.csc_to_csr.iter().map(|&p| self.values[p]).collect();
        Self::from_sorted_parts(
            self.ncols,
            self.nrows,
            self.col_ptr.clone(),
            self.row_idx.clone(),
            values,
        )
    }

    /// The subset of entries at the given CSR positions (any order, no repetitions), e.g. the
    /// training part of a split of Ω. Positions out of range or repeated are errors.
    pub fn select_entries(&self, positions: &[usize]) -> Result<Observed> {
        let mut rows = Vec::with_capacity(positions.len());
        let mut cols = Vec::with_capacity(positions.len());
        let mut vals = Vec::with_capacity(positions.len());
        for &e in positions {
            let (i, j, v) = self.entry(e).ok_or_else(|| LinalgError::InvalidParameter {
                name: "positions",
                reason: format!("entry {e} out of range for |Ω| = {}", self.len()),
            })?;
            rows.push(i);
            cols.push(j);
            vals.push(v);
        }
        Self::from_triplets(self.nrows, self.ncols, &rows, &cols, &vals)
    }

    /// The values as an sprs CSR matrix (explicit zeros kept).
    pub fn to_csr(&self) -> Result<CsMat<f64>> {
        self.values_to_csr(&self.values)
    }

    /// Other per-entry values `vals` (CSR order) on this pattern as an sprs CSR matrix.
    pub fn values_to_csr(&self, vals: &[f64]) -> Result<CsMat<f64>> {
        self.check_len("Observed::values_to_csr", vals.len())?;
        sparse::build_csr(
            self.shape(),
            self.row_ptr.clone(),
            self.col_idx.clone(),
            vals.to_vec(),
        )
    }

    /// Dense n_x × n_y matrix with the values on Ω and zeros elsewhere (for tests and small
    /// problems only).
    pub fn to_dense(&self) -> Mat<f64> {
        let mut out = Mat::<f64>::zeros(self.nrows, self.ncols);
        for (i, j, v) in self.iter() {
            out[(i, j)] = v;
        }
        out
    }

    /// Rows `lo..hi` split into blocks of about `target` entries (at least one row each).
    fn row_blocks(&self, target: usize) -> Vec<(usize, usize)> {
        let mut blocks = Vec::new();
        let mut lo = 0;
        while lo < self.nrows {
            let mut hi = lo + 1;
            while hi < self.nrows && self.row_ptr[hi] - self.row_ptr[lo] < target {
                hi += 1;
            }
            blocks.push((lo, hi));
            lo = hi;
        }
        blocks
    }
}

fn duplicate(row: usize, col: usize) -> LinalgError {
    LinalgError::InvalidParameter {
        name: "observed entries",
        reason: format!("duplicate entry ({row}, {col})"),
    }
}

fn check_factor(
    op: &'static str,
    what: &str,
    m: MatRef<'_, f64>,
    nrows: usize,
    k: Option<usize>,
) -> Result<()> {
    if m.nrows() != nrows {
        return Err(dim_err(
            op,
            format!("{what} with {nrows} rows"),
            format!("{} rows", m.nrows()),
        ));
    }
    if let Some(k) = k
        && m.ncols() != k
    {
        return Err(dim_err(
            op,
            format!("{what} with {k} columns"),
            format!("{} columns", m.ncols()),
        ));
    }
    Ok(())
}

/// p_i · q_j for every (i, j) ∈ Ω, in CSR order (the entries of P_Ω(P Qᵀ), DESIGN §3.2).
/// `p` is n_x × k, `q` is n_y × k. O(|Ω|·k), parallel over rows of Ω.
pub fn sampled_dot(omega: &Observed, p: MatRef<'_, f64>, q: MatRef<'_, f64>) -> Result<Vec<f64>> {
    check_factor("sampled_dot", "P", p, omega.nrows, None)?;
    check_factor("sampled_dot", "Q", q, omega.ncols, Some(p.ncols()))?;
    let k = p.ncols();
    let mut out = vec![0.0f64; omega.len()];
    if k == 0 || omega.is_empty() {
        return Ok(out);
    }
    let pt = rows_contiguous(p);
    let qt = rows_contiguous(q);
    let blocks = omega.row_blocks((TASK_FLOPS / (2 * k)).max(1));
    let mut chunks = Vec::with_capacity(blocks.len());
    let mut rest: &mut [f64] = &mut out;
    for &(lo, hi) in &blocks {
        let (head, tail) = rest.split_at_mut(omega.row_ptr[hi] - omega.row_ptr[lo]);
        chunks.push((lo, hi, head));
        rest = tail;
    }
    chunks
        .into_par_iter()
        .for_each(|(lo, hi, chunk)| sampled_dot_rows(omega, &pt, &qt, lo..hi, chunk));
    Ok(out)
}

crate::avx2_dispatch! {
    /// [`sampled_dot_rows_body`] four lanes wide where the CPU has AVX2 (the same bits).
    fn sampled_dot_rows(
        omega: &Observed,
        pt: &Mat<f64>,
        qt: &Mat<f64>,
        rows: std::ops::Range<usize>,
        chunk: &mut [f64],
    ) = sampled_dot_rows_body;
}

/// [`sampled_dot`] for the rows `rows` of Ω, into `chunk` (their entries, in CSR order).
#[inline(always)]
fn sampled_dot_rows_body(
    omega: &Observed,
    pt: &Mat<f64>,
    qt: &Mat<f64>,
    rows: std::ops::Range<usize>,
    chunk: &mut [f64],
) {
    let base = omega.row_ptr[rows.start];
    for i in rows {
        let pi = pt.col_as_slice(i);
        for e in omega.row_ptr[i]..omega.row_ptr[i + 1] {
            chunk[e - base] = dot(pi, qt.col_as_slice(omega.col_idx[e]));
        }
    }
}

/// The residual entries p_i · q_j − A_ij on Ω (CSR order), where A_ij are the values stored in
/// `omega`: the sparse `R = P_Ω(P Qᵀ − A)` of DESIGN §3.2.
pub fn sampled_residual(
    omega: &Observed,
    p: MatRef<'_, f64>,
    q: MatRef<'_, f64>,
) -> Result<Vec<f64>> {
    let mut r = sampled_dot(omega, p, q)?;
    r.par_iter_mut()
        .zip(omega.values.par_iter())
        .with_min_len(4096)
        .for_each(|(r, a)| *r -= a);
    Ok(r)
}

/// `R·Q` (n_x × k) for the sparse `R` with entries `vals` (CSR order) on Ω and a dense `Q`
/// (n_y × k). O(|Ω|·k), parallel over rows of Ω.
pub fn omega_mul_dense(omega: &Observed, vals: &[f64], q: MatRef<'_, f64>) -> Result<Mat<f64>> {
    omega.check_len("omega_mul_dense", vals.len())?;
    check_factor("omega_mul_dense", "Q", q, omega.ncols, None)?;
    let (n, k) = (omega.nrows, q.ncols());
    if n == 0 || k == 0 {
        return Ok(Mat::zeros(n, k));
    }
    let qt = rows_contiguous(q);
    let grain = grain(omega.len(), n, k);
    let mut buf = vec![0.0f64; n * k];
    buf.par_chunks_mut(k)
        .enumerate()
        .with_min_len(grain)
        .for_each(|(i, out)| {
            let r = omega.row_ptr[i]..omega.row_ptr[i + 1];
            for (&j, &v) in omega.col_idx[r.clone()].iter().zip(&vals[r]) {
                axpy_slice(v, qt.col_as_slice(j), out);
            }
        });
    Ok(from_row_major(&buf, n, k))
}

/// `Rᵀ·P` (n_y × k) for the sparse `R` with entries `vals` (CSR order) on Ω and a dense `P`
/// (n_x × k). Walks Ω in CSC order, so it is parallel over the columns of `R` (rows of the
/// result) too. O(|Ω|·k).
pub fn omega_tr_mul_dense(omega: &Observed, vals: &[f64], p: MatRef<'_, f64>) -> Result<Mat<f64>> {
    omega.check_len("omega_tr_mul_dense", vals.len())?;
    check_factor("omega_tr_mul_dense", "P", p, omega.nrows, None)?;
    let (n, k) = (omega.ncols, p.ncols());
    if n == 0 || k == 0 {
        return Ok(Mat::zeros(n, k));
    }
    let pt = rows_contiguous(p);
    let grain = grain(omega.len(), n, k);
    let mut buf = vec![0.0f64; n * k];
    buf.par_chunks_mut(k)
        .enumerate()
        .with_min_len(grain)
        .for_each(|(j, out)| {
            for e in omega.col_ptr[j]..omega.col_ptr[j + 1] {
                let v = vals[omega.csc_to_csr[e]];
                axpy_slice(v, pt.col_as_slice(omega.row_idx[e]), out);
            }
        });
    Ok(from_row_major(&buf, n, k))
}

/// Rows per rayon task for a row kernel with `nnz` entries over `n` rows and width `k`.
fn grain(nnz: usize, n: usize, k: usize) -> usize {
    let per_row = (nnz / n.max(1) + 1) * 2 * k.max(1);
    (TASK_FLOPS / per_row).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};

    fn small() -> Observed {
        // 3 x 4, row 1 empty, column 2 empty; given out of order
        Observed::from_triplets(
            3,
            4,
            &[2, 0, 2, 0, 2],
            &[3, 1, 0, 0, 1],
            &[5.0, 2.0, 3.0, 1.0, 4.0],
        )
        .unwrap()
    }

    #[test]
    fn layout_is_csr_with_csc_permutation() {
        let o = small();
        assert_eq!(o.shape(), (3, 4));
        assert_eq!(o.len(), 5);
        assert_eq!(o.row_ptr(), &[0, 2, 2, 5]);
        assert_eq!(o.col_indices(), &[0, 1, 0, 1, 3]);
        assert_eq!(o.values(), &[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(o.col_ptr(), &[0, 2, 4, 4, 5]);
        assert_eq!(o.csc_row_indices(), &[0, 2, 0, 2, 2]);
        assert_eq!(o.csc_to_csr(), &[0, 2, 1, 3, 4]);
        assert_eq!(o.row(1), Some((&[][..], &[][..])));
        assert_eq!(o.row(3), None);
        assert_eq!(o.col(1), Some((&[0usize, 2][..], &[1usize, 3][..])));
        assert_eq!(o.entry(2), Some((2, 0, 3.0)));
        assert_eq!(o.entry(5), None);
        assert_eq!(o.row_indices(), vec![0, 0, 2, 2, 2]);
        assert_eq!(o.row_counts(), vec![2, 0, 3]);
        assert_eq!(o.col_counts(), vec![2, 2, 0, 1]);
        let t = o.transpose();
        assert_eq!(t.to_dense(), o.to_dense().transpose().to_owned());
        assert_eq!(t.transpose(), o);
        let csr = o.to_csr().unwrap();
        assert_eq!(Observed::from_csr(&csr).unwrap(), o);
        assert_eq!(Observed::from_csr(&csr.to_csc()).unwrap(), o);
        let sub = o.select_entries(&[4, 0]).unwrap();
        assert_eq!(
            sub.iter().collect::<Vec<_>>(),
            vec![(0, 0, 1.0), (2, 3, 5.0)]
        );
    }

    #[test]
    fn huge_dimensions_are_refused_before_allocating() {
        // one entry at row 2⁵⁹: its row pointers alone would need 2⁶⁴ bytes
        let (n, i) = (1usize << 60, 1usize << 59);
        let err = Observed::from_triplets(n, 2, &[i], &[1], &[0.5]).unwrap_err();
        assert!(matches!(err, LinalgError::InsufficientMemory(_)), "{err}");
        assert!(err.to_string().contains("row pointers"), "{err}");
        assert!(Observed::estimate(n, 2, 1).bytes > Observed::estimate(4, 2, 1).bytes);
    }

    #[test]
    fn constructor_errors() {
        assert!(matches!(
            Observed::from_triplets(2, 2, &[0, 2], &[0, 0], &[1.0, 1.0]),
            Err(LinalgError::IndexOutOfBounds { row: 2, col: 0, .. })
        ));
        assert!(matches!(
            Observed::from_triplets(2, 2, &[0, 1, 0], &[1, 0, 1], &[1.0, 1.0, 2.0]),
            Err(LinalgError::InvalidParameter { .. })
        ));
        assert!(matches!(
            Observed::from_triplets(2, 2, &[0, 1], &[1, 0], &[1.0, f64::NAN]),
            Err(LinalgError::NonFinite { row: 1, col: 0, .. })
        ));
        assert!(matches!(
            Observed::from_triplets(2, 2, &[0, 1], &[1], &[1.0, 1.0]),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        let o = small();
        assert!(matches!(
            o.with_values(vec![1.0; 4]),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            o.with_values(vec![0.0, 0.0, 0.0, f64::INFINITY, 0.0]),
            Err(LinalgError::NonFinite { row: 2, col: 1, .. })
        ));
        assert_eq!(o.with_values(vec![0.0; 5]).unwrap().values(), &[0.0; 5]);
        assert!(o.select_entries(&[5]).is_err());
        assert!(o.select_entries(&[1, 1]).is_err());
    }

    #[test]
    fn kernels_on_small_example() {
        let o = small();
        let mut rng = seeded(4);
        let p = gaussian_mat(&mut rng, 3, 2, 1.0);
        let q = gaussian_mat(&mut rng, 4, 2, 1.0);
        let pq = &p * q.transpose();
        let d = sampled_dot(&o, p.as_ref(), q.as_ref()).unwrap();
        for ((i, j, _), v) in o.iter().zip(&d) {
            assert!((pq[(i, j)] - v).abs() < 1e-14);
        }
        let r = sampled_residual(&o, p.as_ref(), q.as_ref()).unwrap();
        for ((&di, &ri), &a) in d.iter().zip(&r).zip(o.values()) {
            assert_eq!(ri, di - a);
        }
        let dense = o.to_dense();
        let rq = omega_mul_dense(&o, o.values(), q.as_ref()).unwrap();
        assert!((rq - &dense * &q).norm_l2() < 1e-12);
        let rtp = omega_tr_mul_dense(&o, o.values(), p.as_ref()).unwrap();
        assert!((rtp - dense.transpose() * &p).norm_l2() < 1e-12);
        assert!(sampled_dot(&o, q.as_ref(), p.as_ref()).is_err());
        assert!(omega_mul_dense(&o, &[1.0], q.as_ref()).is_err());
        assert!(omega_tr_mul_dense(&o, o.values(), q.as_ref()).is_err());
    }

    #[test]
    fn full_from_dense_covers_everything() {
        let mut rng = seeded(9);
        let a = gaussian_mat(&mut rng, 3, 5, 1.0);
        let o = Observed::full_from_dense(a.as_ref()).unwrap();
        assert_eq!(o.len(), 15);
        assert_eq!(o.to_dense(), a);
    }
}
