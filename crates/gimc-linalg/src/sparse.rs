//! Products of sprs compressed matrices with faer dense blocks, and sprs ↔ faer conversions
//! (DESIGN §2: this crate is the only place converting between the two).
//!
//! All products are parallel over output rows with rayon. Each output row is accumulated by one
//! task, in increasing order of the stored entries, so results are bitwise identical for any
//! number of threads. `Aᵀ·B` is computed by first building the compressed-row form of `Aᵀ`
//! (a counting sort, O(nnz(A) + ncols(A))) and then running the row kernel on it: this costs far
//! less than the product itself (O(nnz(A)·k)) and keeps the result deterministic, unlike
//! per-thread partial sums.
//!
//! Functions accept any sprs matrix over slice-like buffers ([`AsSparseView`]: an owned `CsMat`,
//! a view, or the shared [`Csr`](crate::shared::Csr) of sparse features) in either storage
//! order (CSR or CSC), and produce the same result.

use std::borrow::Cow;

use faer::{Mat, MatMut, MatRef};
use rayon::prelude::*;
use std::ops::Deref;

use sprs::{CsMat, CsMatBase, CsMatView};

use crate::dense;
use crate::error::dim_err;
use crate::{LinalgError, Result};

/// Target number of floating-point operations per rayon task in the row kernels.
const TASK_FLOPS: usize = 1 << 14;

/// An sprs matrix of `f64` with `usize` indices over any slice-like buffers, seen as a view:
/// what every function of this module takes.
pub trait AsSparseView {
    /// The borrowed view.
    fn sparse_view(&self) -> CsMatView<'_, f64>;
}

impl<IpS, IS, DS> AsSparseView for CsMatBase<f64, usize, IpS, IS, DS>
where
    IpS: Deref<Target = [usize]>,
    IS: Deref<Target = [usize]>,
    DS: Deref<Target = [f64]>,
{
    fn sparse_view(&self) -> CsMatView<'_, f64> {
        self.view()
    }
}

/// A compressed-row matrix (`outer` rows of length `inner`), borrowed or owned.
#[derive(Debug, Clone)]
pub(crate) struct Compressed<'a> {
    pub(crate) outer: usize,
    pub(crate) inner: usize,
    pub(crate) ptr: Cow<'a, [usize]>,
    pub(crate) idx: Cow<'a, [usize]>,
    pub(crate) val: Cow<'a, [f64]>,
}

impl<'a> Compressed<'a> {
    /// The stored layout of `a` read as rows: rows of `A` if CSR, rows of `Aᵀ` if CSC.
    pub(crate) fn stored(a: &'a CsMatView<'_, f64>) -> Self {
        Self {
            outer: a.outer_dims(),
            inner: a.inner_dims(),
            ptr: a.proper_indptr(),
            idx: Cow::Borrowed(a.indices()),
            val: Cow::Borrowed(a.data()),
        }
    }

    /// `A` in compressed-row form, borrowing when `a` is CSR.
    pub(crate) fn rows_of(a: &'a CsMatView<'_, f64>) -> Self {
        let s = Self::stored(a);
        if a.is_csr() { s } else { s.transpose() }
    }

    /// `Aᵀ` in compressed-row form, borrowing when `a` is CSC.
    pub(crate) fn rows_of_transpose(a: &'a CsMatView<'_, f64>) -> Self {
        let s = Self::stored(a);
        if a.is_csr() { s.transpose() } else { s }
    }

    /// Number of stored entries.
    pub(crate) fn nnz(&self) -> usize {
        self.idx.len()
    }

    /// The column indices and values of row `i` (which must be `< outer`).
    #[inline(always)]
    pub(crate) fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.ptr[i]..self.ptr[i + 1];
        (&self.idx[r.clone()], &self.val[r])
    }

    /// The transpose, in compressed-row form (counting sort; entries of each new row come in
    /// increasing order of the old row index).
    pub(crate) fn transpose(&self) -> Compressed<'static> {
        let (ptr, idx, pos) = transpose_pattern(self.outer, self.inner, &self.ptr, &self.idx);
        let val = pos.iter().map(|&p| self.val[p]).collect();
        Compressed {
            outer: self.inner,
            inner: self.outer,
            ptr: Cow::Owned(ptr),
            idx: Cow::Owned(idx),
            val: Cow::Owned(val),
        }
    }

    /// A rayon grain (rows per task) for a kernel doing `flops_per_entry` work per stored entry.
    fn grain(&self, flops_per_entry: usize) -> usize {
        let per_row = (self.nnz() / self.outer.max(1) + 1) * flops_per_entry.max(1);
        (TASK_FLOPS / per_row).max(1)
    }
}

/// Transposes a compressed pattern: returns (ptr, idx, pos) of the transpose, where `pos[e]` is
/// the position in the original arrays of the transpose's entry `e`.
pub(crate) fn transpose_pattern(
    outer: usize,
    inner: usize,
    ptr: &[usize],
    idx: &[usize],
) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let nnz = idx.len();
    let mut tptr = vec![0usize; inner + 1];
    for &j in idx {
        tptr[j + 1] += 1;
    }
    for j in 0..inner {
        tptr[j + 1] += tptr[j];
    }
    let mut next = tptr.clone();
    let mut tidx = vec![0usize; nnz];
    let mut pos = vec![0usize; nnz];
    for i in 0..outer {
        let start = ptr[i];
        for (off, &j) in idx[start..ptr[i + 1]].iter().enumerate() {
            let e = start + off;
            let slot = next[j];
            tidx[slot] = i;
            pos[slot] = e;
            next[j] += 1;
        }
    }
    (tptr, tidx, pos)
}

/// Width of the column blocks of [`rows_times_dense`]: eight f64 accumulators per row stay in
/// registers and vectorise.
const BLOCK: usize = 8;

/// `M·B` (outer × k, column-major) for a compressed-row `M` (outer × inner) and a dense `B`
/// (inner × k); O(nnz(M)·k).
///
/// Blocked by eight columns of `B` at a time: each block of `B` is packed row-major (inner × 8,
/// a few hundred KiB at most, so it stays in cache) and every row of `M` gathers from it into
/// eight register accumulators, writing the result straight into the column-major output (no
/// transposed copies of `B` or of the result). Tasks are (column block × row block) pairs; each
/// output entry is accumulated by one task in increasing order of the stored entries, so the
/// result is bitwise identical for any number of threads.
pub(crate) fn rows_times_dense(m: &Compressed<'_>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = dense::zeros_padded(m.outer, b.ncols());
    rows_times_dense_add(m, b, out.as_mut());
    out
}

/// `out += M·B` for the compressed rows of M, as [`rows_times_dense`] (same order of sums, so
/// on a zero `out` the same bits); rows of M without entries leave `out` untouched.
pub(crate) fn rows_times_dense_add(m: &Compressed<'_>, b: MatRef<'_, f64>, out: MatMut<'_, f64>) {
    let (n, k) = (m.outer, b.ncols());
    if n == 0 || k == 0 || m.nnz() == 0 {
        return;
    }
    let inner = b.nrows();
    let rows_per_task = m.grain(2 * BLOCK).max(16);
    out.par_col_chunks_mut(BLOCK)
        .enumerate()
        .for_each(|(chunk, cols)| {
            let c0 = chunk * BLOCK;
            let w = cols.ncols();
            let mut packed = vec![0.0f64; inner * BLOCK];
            for t in 0..w {
                for (j, &v) in b.col(c0 + t).iter().enumerate() {
                    packed[j * BLOCK + t] = v;
                }
            }
            let packed = &packed;
            cols.par_row_chunks_mut(rows_per_task)
                .enumerate()
                .for_each(|(block, mut dst)| {
                    gather_rows_dispatch(m, packed, block * rows_per_task, dst.as_mut());
                });
        });
}

crate::avx2_dispatch! {
    /// [`gather_rows`] four lanes wide where the CPU has AVX2 (no fused multiply-add: the same
    /// bits; [`crate::avx2_dispatch`]).
    fn gather_rows_dispatch(m: &Compressed<'_>, packed: &[f64], r0: usize, dst: MatMut<'_, f64>) = gather_rows;
}

/// dst[li, t] += Σ_e v_e·packed[j_e, t] over the entries of M's row r0 + li, in order, for the
/// rows of `dst` (`packed`: a block of [`BLOCK`] columns of B, row-major).
#[inline(always)]
fn gather_rows(m: &Compressed<'_>, packed: &[f64], r0: usize, mut dst: MatMut<'_, f64>) {
    let w = dst.ncols();
    for li in 0..dst.nrows() {
        let (idx, val) = m.row(r0 + li);
        if idx.is_empty() {
            continue;
        }
        let mut acc = [0.0f64; BLOCK];
        for (&j, &v) in idx.iter().zip(val) {
            let src = &packed[j * BLOCK..j * BLOCK + BLOCK];
            for (a, &p) in acc.iter_mut().zip(src) {
                *a += v * p;
            }
        }
        for (t, &a) in acc.iter().enumerate().take(w) {
            dst[(li, t)] += a;
        }
    }
}

/// The fraction of entries of a dense matrix that are non-zero (1 for an empty matrix).
pub(crate) fn nonzero_fraction(a: MatRef<'_, f64>) -> f64 {
    let total = a.nrows() * a.ncols();
    if total == 0 {
        return 1.0;
    }
    let nz: usize = (0..a.ncols())
        .map(|j| a.col(j).iter().filter(|v| **v != 0.0).count())
        .sum();
    nz as f64 / total as f64
}

/// The non-zeros of a dense `b` (r × c) as compressed rows of `bᵀ` (c rows of length r): row j
/// holds the non-zeros of column j of `b`, in increasing row order.
pub(crate) fn compress_columns(b: MatRef<'_, f64>) -> Compressed<'static> {
    let mut ptr = Vec::with_capacity(b.ncols() + 1);
    let (mut idx, mut val) = (Vec::new(), Vec::new());
    ptr.push(0);
    for j in 0..b.ncols() {
        for (i, &v) in b.col(j).iter().enumerate() {
            if v != 0.0 {
                idx.push(i);
                val.push(v);
            }
        }
        ptr.push(idx.len());
    }
    Compressed {
        outer: b.ncols(),
        inner: b.nrows(),
        ptr: Cow::Owned(ptr),
        idx: Cow::Owned(idx),
        val: Cow::Owned(val),
    }
}

/// `A·Bᵀ` (n × m) for a sparse `A` (n × d, CSR or CSC) and a dense but mostly-zero `B` (m × d),
/// such as Nyström landmarks drawn from the rows of a sparse data set. `Bᵀ` is compressed first,
/// so the cost is O(Σ_i Σ_{j ∈ row i of A} nnz(column j of B)) rather than the O(nnz(A)·m) of
/// [`csr_mul_dense`]; the values equal that product's (the skipped terms are exact zeros).
pub fn csr_mul_sparse_dense_tr(a: &impl AsSparseView, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let a = a.sparse_view();
    csr_mul_sparse_dense_tr_map(&a, b, |_, _, v| v)
}

/// `f(i, j, (A·Bᵀ)_ij)` (n × m) for a sparse `A` (n × d) and a dense but mostly-zero `B`
/// (m × d): [`csr_mul_sparse_dense_tr`] with an elementwise map fused into the product.
pub(crate) fn csr_mul_sparse_dense_tr_map(
    a: &impl AsSparseView,
    b: MatRef<'_, f64>,
    f: impl Fn(usize, usize, f64) -> f64 + Sync,
) -> Result<Mat<f64>> {
    let a = a.sparse_view();
    if a.cols() != b.ncols() {
        return Err(dim_err(
            "csr_mul_sparse_dense_tr",
            format!("B with {} columns", a.cols()),
            format!("{} columns", b.ncols()),
        ));
    }
    Ok(rows_times_rows_map(
        &Compressed::rows_of(&a),
        &compress_columns(b),
        f,
    ))
}

/// `f(i, j, (A·Bᵀ)_ij)` (n × m) for dense but mostly-zero `A` (n × d) and `B` (m × d), through
/// their compressed forms; the same values as the dense product, mapped by `f`.
pub(crate) fn sparse_dense_mul_tr_map(
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    f: impl Fn(usize, usize, f64) -> f64 + Sync,
) -> Mat<f64> {
    rows_times_rows_map(&compress_columns(a.transpose()), &compress_columns(b), f)
}

/// `M·N` for two compressed-row matrices (p × m and m × q), densely (p × q). Row `i` of the
/// result is Σ_e M_ie · N_e,: accumulated in increasing order of `e`.
pub(crate) fn rows_times_rows_dense(m: &Compressed<'_>, n: &Compressed<'_>) -> Mat<f64> {
    rows_times_rows_map(m, n, |_, _, v| v)
}

/// Entries of the row-major scratch block of [`rows_times_rows_map`] (rows × q), sized to stay
/// in a core's L2 cache.
const ROW_BLOCK_ENTRIES: usize = 1 << 14;

/// `f(i, j, (M·N)_ij)` for every entry of the p × q product of two compressed-row matrices,
/// written straight into a column-major result: each task accumulates a block of rows in a
/// small row-major scratch (in increasing order of `e`, as [`rows_times_rows_dense`]), applies
/// `f` and stores the block column by column. Fusing `f` (a kernel's elementwise map) and the
/// transposition into the product saves two passes over, and one copy of, the p × q result.
pub(crate) fn rows_times_rows_map(
    m: &Compressed<'_>,
    n: &Compressed<'_>,
    f: impl Fn(usize, usize, f64) -> f64 + Sync,
) -> Mat<f64> {
    let (p, q) = (m.outer, n.inner);
    let mut out = dense::zeros_padded(p, q);
    if p == 0 || q == 0 {
        return out;
    }
    let rows = (ROW_BLOCK_ENTRIES / q).clamp(1, 256);
    out.as_mut()
        .par_row_chunks_mut(rows)
        .enumerate()
        .for_each(|(block, mut chunk)| {
            let r0 = block * rows;
            let h = chunk.nrows();
            let mut buf = vec![0.0f64; h * q];
            for (r, acc) in buf.chunks_exact_mut(q).enumerate() {
                let (cols, vals) = m.row(r0 + r);
                for (&j, &v) in cols.iter().zip(vals) {
                    let (ncols, nvals) = n.row(j);
                    for (&c, &w) in ncols.iter().zip(nvals) {
                        acc[c] += v * w;
                    }
                }
            }
            // f is typically a kernel's exp, and this task's thread may have just run a GEMM
            crate::simd::clear_upper_state();
            for c in 0..q {
                let mut col = chunk.as_mut().col_mut(c);
                for r in 0..h {
                    col[r] = f(r0 + r, c, buf[r * q + c]);
                }
            }
        });
    out
}

/// `A·B` (n × k) for a sparse `A` (n × m, CSR or CSC) and a dense `B` (m × k), parallel over
/// the rows of `A`; O(nnz(A)·k).
pub fn csr_mul_dense(a: &impl AsSparseView, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let a = a.sparse_view();
    if a.cols() != b.nrows() {
        return Err(dim_err(
            "csr_mul_dense",
            format!("B with {} rows", a.cols()),
            format!("{} rows", b.nrows()),
        ));
    }
    Ok(rows_times_dense(&Compressed::rows_of(&a), b))
}

/// `Aᵀ·B` (m × k) for a sparse `A` (n × m, CSR or CSC) and a dense `B` (n × k), parallel over
/// the columns of `A` (rows of the result); O(nnz(A)·k + m). For CSR input the transposed
/// pattern is built once per call (O(nnz(A)), much cheaper than the product).
pub fn csr_tr_mul_dense(a: &impl AsSparseView, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let a = a.sparse_view();
    if a.rows() != b.nrows() {
        return Err(dim_err(
            "csr_tr_mul_dense",
            format!("B with {} rows", a.rows()),
            format!("{} rows", b.nrows()),
        ));
    }
    let mut out = dense::zeros_padded(a.cols(), b.ncols());
    tr_times_dense_add(&a, b, out.as_mut());
    Ok(out)
}

/// `out += Aᵀ·B` for a sparse `A` (n × m) and a dense `B` (n × k), `out` m × k: as
/// [`csr_tr_mul_dense`] without allocating the product (a sum over row blocks of A and B
/// accumulates in place; rows of the result that no stored entry reaches are not touched).
pub fn csr_tr_mul_dense_add(
    a: &impl AsSparseView,
    b: MatRef<'_, f64>,
    out: MatMut<'_, f64>,
) -> Result<()> {
    let a = a.sparse_view();
    if a.rows() != b.nrows() || out.shape() != (a.cols(), b.ncols()) {
        return Err(dim_err(
            "csr_tr_mul_dense_add",
            format!(
                "B with {} rows and out {} x {}",
                a.rows(),
                a.cols(),
                b.ncols()
            ),
            format!("{} rows and {} x {}", b.nrows(), out.nrows(), out.ncols()),
        ));
    }
    tr_times_dense_add(&a, b, out);
    Ok(())
}

/// `out += Aᵀ·B` (A n × m, B n × k, out m × k): by [`rows_scatter_tr_add`] over A's rows when A
/// is CSR, B's columns are contiguous, the per-task sums (m × [`SCATTER_BLOCK`]) stay in cache
/// and B is wide enough for two of its column blocks per thread (the scatter's only
/// parallelism), else by [`rows_times_dense_add`] over the rows of Aᵀ. Both sum each output
/// entry over A's rows in increasing order, so they give the same bits.
fn tr_times_dense_add(a: &CsMatView<'_, f64>, b: MatRef<'_, f64>, out: MatMut<'_, f64>) {
    let wide = b.ncols() >= 2 * SCATTER_BLOCK * rayon::current_num_threads();
    if a.is_csr() && wide && b.row_stride() == 1 && a.cols() * SCATTER_BLOCK <= SCATTER_MAX_SUMS {
        rows_scatter_tr_add(&Compressed::stored(a), b, out);
    } else {
        rows_times_dense_add(&Compressed::rows_of_transpose(a), b, out);
    }
}

/// Column width of [`rows_scatter_tr_add`]'s tasks.
const SCATTER_BLOCK: usize = 32;

/// Most entries (256 KiB) of one task's sums in [`rows_scatter_tr_add`].
const SCATTER_MAX_SUMS: usize = 1 << 15;

crate::avx2_dispatch! {
    /// [`scatter_rows`] four lanes wide where the CPU has AVX2 (no fused multiply-add: the same
    /// bits; [`crate::avx2_dispatch`]): code in a closure passed to [`crate::simd::with_avx2`]
    /// was left out of line here and ran two lanes wide.
    fn scatter_rows_dispatch(m: &Compressed<'_>, src: &[&[f64]], sums: &mut [[f64; SCATTER_BLOCK]]) = scatter_rows;
}

/// sums[j][t] += Σ_i M[i, j]·src[t][i] over M's rows i in increasing order (`src` holds up to
/// [`SCATTER_BLOCK`] columns of B).
#[inline(always)]
fn scatter_rows(m: &Compressed<'_>, src: &[&[f64]], sums: &mut [[f64; SCATTER_BLOCK]]) {
    let mut row = [0.0f64; SCATTER_BLOCK];
    for i in 0..m.outer {
        let (idx, val) = m.row(i);
        if idx.is_empty() {
            continue;
        }
        for (r, col) in row.iter_mut().zip(src) {
            *r = col[i];
        }
        for (&j, &v) in idx.iter().zip(val) {
            for (s, &p) in sums[j].iter_mut().zip(&row) {
                *s += v * p;
            }
        }
    }
}

/// `out += Mᵀ·B` (inner × k) for the compressed rows of M (outer × inner) and B (outer × k,
/// contiguous columns): each task takes [`SCATTER_BLOCK`] columns of B, streams M's rows in
/// order, reads B's row segment once per row and adds v·B[i, ·] into the sums of every entry
/// (i, j, v), kept as inner × [`SCATTER_BLOCK`] in cache. B is read in place, one pass, and no
/// transposed pattern is built; [`rows_times_dense_add`] on Mᵀ instead gathers B's rows at
/// random. Each output entry is summed from zero over M's rows in increasing order and then
/// added to `out` (columns j of M without entries are not touched), as there: the same bits.
fn rows_scatter_tr_add(m: &Compressed<'_>, b: MatRef<'_, f64>, out: MatMut<'_, f64>) {
    let (inner, k) = (m.inner, b.ncols());
    if m.outer == 0 || k == 0 || m.nnz() == 0 {
        return;
    }
    let mut touched = vec![false; inner];
    for &j in m.idx.iter() {
        touched[j] = true;
    }
    out.par_col_chunks_mut(SCATTER_BLOCK)
        .enumerate()
        .for_each(|(chunk, mut cols)| {
            let c0 = chunk * SCATTER_BLOCK;
            let w = cols.ncols();
            let src: Vec<&[f64]> = (0..w)
                .map(|t| {
                    let col = b.col(c0 + t);
                    col.try_as_col_major().map_or(&[][..], |c| c.as_slice())
                })
                .collect();
            let mut sums = vec![[0.0f64; SCATTER_BLOCK]; inner];
            scatter_rows_dispatch(m, &src, &mut sums);
            for t in 0..w {
                let col = cols.as_mut().col_mut(t);
                for ((d, s), &hit) in col.iter_mut().zip(&sums).zip(&touched) {
                    if hit {
                        *d += s[t];
                    }
                }
            }
        });
}

/// `AᵀA` (m × m, dense) for a sparse `A` (n × m); O(Σ_i nnz(row i)²), never densifying `A`.
pub fn csr_gram(a: &impl AsSparseView) -> Mat<f64> {
    let a = a.sparse_view();
    rows_times_rows_dense(&Compressed::rows_of_transpose(&a), &Compressed::rows_of(&a))
}

/// `AAᵀ` (n × n, dense) for a sparse `A` (n × m); O(Σ_j nnz(column j)²), never densifying `A`.
pub fn csr_outer_gram(a: &impl AsSparseView) -> Mat<f64> {
    let a = a.sparse_view();
    rows_times_rows_dense(&Compressed::rows_of(&a), &Compressed::rows_of_transpose(&a))
}

/// The dense copy of a sparse matrix (either storage order).
pub fn csr_to_dense(a: &impl AsSparseView) -> Mat<f64> {
    let a = a.sparse_view();
    let mut out = dense::zeros_padded(a.rows(), a.cols());
    let s = Compressed::stored(&a);
    for o in 0..s.outer {
        let (idx, val) = s.row(o);
        for (&i, &v) in idx.iter().zip(val) {
            if a.is_csr() {
                out[(o, i)] = v;
            } else {
                out[(i, o)] = v;
            }
        }
    }
    out
}

/// The CSR form of a dense matrix, keeping its non-zero entries (exact zeros are dropped).
/// NaN / infinite entries are rejected with their position.
pub fn dense_to_csr(a: MatRef<'_, f64>) -> Result<CsMat<f64>> {
    let (n, m) = a.shape();
    let mut ptr = Vec::with_capacity(n + 1);
    let mut idx = Vec::new();
    let mut val = Vec::new();
    ptr.push(0);
    for i in 0..n {
        for j in 0..m {
            let v = a[(i, j)];
            if !v.is_finite() {
                return Err(LinalgError::NonFinite {
                    row: i,
                    col: j,
                    value: v,
                });
            }
            if v != 0.0 {
                idx.push(j);
                val.push(v);
            }
        }
        ptr.push(idx.len());
    }
    build_csr((n, m), ptr, idx, val)
}

/// Checks that every stored value is finite, reporting the first offender with its position.
pub fn csr_check_finite(a: &impl AsSparseView) -> Result<()> {
    let a = a.sparse_view();
    let s = Compressed::stored(&a);
    for o in 0..s.outer {
        let (idx, val) = s.row(o);
        for (&i, &value) in idx.iter().zip(val) {
            if !value.is_finite() {
                let (row, col) = if a.is_csr() { (o, i) } else { (i, o) };
                return Err(LinalgError::NonFinite { row, col, value });
            }
        }
    }
    Ok(())
}

/// Squared Euclidean norm of every row.
pub fn csr_row_sq_norms(a: &impl AsSparseView) -> Vec<f64> {
    let a = a.sparse_view();
    let s = Compressed::rows_of(&a);
    (0..s.outer)
        .into_par_iter()
        .with_min_len(s.grain(2))
        .map(|i| s.row(i).1.iter().map(|v| v * v).sum())
        .collect()
}

/// The rows `rows` of `a` (in the given order, repetitions allowed), as a CSR matrix.
pub fn csr_select_rows(a: &impl AsSparseView, rows: &[usize]) -> Result<CsMat<f64>> {
    let a = a.sparse_view();
    let s = Compressed::rows_of(&a);
    let mut ptr = Vec::with_capacity(rows.len() + 1);
    let mut idx = Vec::new();
    let mut val = Vec::new();
    ptr.push(0);
    for &r in rows {
        if r >= s.outer {
            return Err(LinalgError::IndexOutOfBounds {
                row: r,
                col: 0,
                nrows: a.rows(),
                ncols: a.cols(),
            });
        }
        let (c, v) = s.row(r);
        idx.extend_from_slice(c);
        val.extend_from_slice(v);
        ptr.push(idx.len());
    }
    build_csr((rows.len(), a.cols()), ptr, idx, val)
}

/// A CSR matrix from raw parts built by this crate, turning sprs's structure check into an
/// error instead of a panic.
pub(crate) fn build_csr(
    shape: (usize, usize),
    ptr: Vec<usize>,
    idx: Vec<usize>,
    val: Vec<f64>,
) -> Result<CsMat<f64>> {
    CsMat::try_new(shape, ptr, idx, val).map_err(|(_, _, _, e)| LinalgError::InvalidParameter {
        name: "sparse structure",
        reason: e.to_string(),
    })
}

/// ‖A‖²_F: the sum of the squared stored values.
pub fn csr_frob_sq(a: &impl AsSparseView) -> f64 {
    let a = a.sparse_view();
    a.data().iter().map(|v| v * v).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};

    fn example() -> CsMat<f64> {
        // 4 x 5 with an empty row and an empty column
        CsMat::new(
            (4, 5),
            vec![0, 2, 2, 5, 6],
            vec![0, 3, 1, 3, 4, 0],
            vec![1.0, -2.0, 3.0, 0.5, 4.0, -1.0],
        )
    }

    #[test]
    fn transposed_products_scatter_and_gather_give_the_same_bits() {
        // 300 x 40, about 6 entries a row, an empty row and an empty column (7)
        let (n, m) = (300, 40);
        let mut rng = seeded(5);
        let vals = gaussian_mat(&mut rng, n, 6, 1.0);
        let mut tri = sprs::TriMat::new((n, m));
        for i in (0..n).filter(|&i| i != 17) {
            for e in 0..6 {
                let j = (i * 7 + e * 13 + i / 9) % m;
                if j != 7 {
                    tri.add_triplet(i, j, vals[(i, e)]);
                }
            }
        }
        let csr: CsMat<f64> = tri.to_csr();
        let csc = csr.to_csc();
        for k in [1, 32, 70, 300] {
            let b = gaussian_mat(&mut rng, n, k, 1.0);
            // the scatter over A's rows and the gather over the rows of Aᵀ, and what
            // `csr_tr_mul_dense` chooses for either storage
            let view = csr.view();
            let mut scatter = Mat::<f64>::zeros(m, k);
            rows_scatter_tr_add(&Compressed::stored(&view), b.as_ref(), scatter.as_mut());
            let mut gather = Mat::<f64>::zeros(m, k);
            rows_times_dense_add(
                &Compressed::rows_of_transpose(&view),
                b.as_ref(),
                gather.as_mut(),
            );
            let chosen_csr = csr_tr_mul_dense(&csr, b.as_ref()).unwrap();
            let chosen_csc = csr_tr_mul_dense(&csc, b.as_ref()).unwrap();
            // the sum both promise: from zero, over A's rows in increasing order
            let mut naive = Mat::<f64>::zeros(m, k);
            for (i, row) in csr.outer_iterator().enumerate() {
                for (j, &v) in row.iter() {
                    for t in 0..k {
                        naive[(j, t)] += v * b[(i, t)];
                    }
                }
            }
            for t in 0..k {
                for j in 0..m {
                    let want = naive[(j, t)].to_bits();
                    assert_eq!(
                        scatter[(j, t)].to_bits(),
                        want,
                        "scatter ({j}, {t}), k = {k}"
                    );
                    assert_eq!(gather[(j, t)].to_bits(), want, "gather ({j}, {t}), k = {k}");
                    assert_eq!(chosen_csr[(j, t)].to_bits(), want);
                    assert_eq!(chosen_csc[(j, t)].to_bits(), want);
                }
            }
            // accumulating: the empty column's row keeps its -0.0, the others add
            let mut out = Mat::<f64>::from_fn(m, k, |_, _| -0.0);
            rows_scatter_tr_add(&Compressed::stored(&view), b.as_ref(), out.as_mut());
            let mut out_add = Mat::<f64>::from_fn(m, k, |_, _| -0.0);
            csr_tr_mul_dense_add(&csr, b.as_ref(), out_add.as_mut()).unwrap();
            for o in [&out, &out_add] {
                assert!(o[(7, 0)] == 0.0 && o[(7, 0)].is_sign_negative());
                assert_eq!(o[(3, 0)].to_bits(), (-0.0 + naive[(3, 0)]).to_bits());
            }
        }
    }

    #[test]
    fn conversions_round_trip() {
        let a = example();
        let d = csr_to_dense(&a);
        assert_eq!(d[(0, 3)], -2.0);
        assert_eq!(d[(2, 4)], 4.0);
        assert_eq!(d[(1, 1)], 0.0);
        assert_eq!(dense_to_csr(d.as_ref()).unwrap(), a);
        let csc = a.to_csc();
        assert_eq!(csr_to_dense(&csc), d);
    }

    #[test]
    fn products_match_dense_for_both_storages() {
        let a = example();
        let d = csr_to_dense(&a);
        let mut rng = seeded(5);
        let b = gaussian_mat(&mut rng, 5, 3, 1.0);
        let g = gaussian_mat(&mut rng, 4, 3, 1.0);
        for m in [a.clone(), a.to_csc()] {
            let ab = csr_mul_dense(&m, b.as_ref()).unwrap();
            assert!((ab - &d * &b).norm_l2() < 1e-12);
            let atg = csr_tr_mul_dense(&m, g.as_ref()).unwrap();
            assert!((atg - d.transpose() * &g).norm_l2() < 1e-12);
            assert!((csr_gram(&m) - d.transpose() * &d).norm_l2() < 1e-12);
            assert!((csr_outer_gram(&m) - &d * d.transpose()).norm_l2() < 1e-12);
            let norms = csr_row_sq_norms(&m);
            assert_eq!(norms, vec![5.0, 0.0, 9.0 + 0.25 + 16.0, 1.0]);
        }
        assert!(matches!(
            csr_mul_dense(&a, g.as_ref()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            csr_tr_mul_dense(&a, b.as_ref()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn select_rows_and_checks() {
        let a = example();
        let s = csr_select_rows(&a, &[2, 0, 2]).unwrap();
        let d = csr_to_dense(&a);
        let ds = csr_to_dense(&s);
        for (r, &src) in [2usize, 0, 2].iter().enumerate() {
            for j in 0..5 {
                assert_eq!(ds[(r, j)], d[(src, j)]);
            }
        }
        assert!(matches!(
            csr_select_rows(&a, &[4]),
            Err(LinalgError::IndexOutOfBounds { row: 4, .. })
        ));
        let bad = CsMat::new((2, 2), vec![0, 1, 2], vec![1, 0], vec![1.0, f64::INFINITY]);
        assert!(matches!(
            csr_check_finite(&bad),
            Err(LinalgError::NonFinite { row: 1, col: 0, .. })
        ));
        assert!(matches!(
            csr_check_finite(&bad.to_csc()),
            Err(LinalgError::NonFinite { row: 1, col: 0, .. })
        ));
        assert!(matches!(
            dense_to_csr(csr_to_dense(&bad).as_ref()),
            Err(LinalgError::NonFinite { row: 1, col: 0, .. })
        ));
        assert_eq!(csr_frob_sq(&a), 1.0 + 4.0 + 9.0 + 0.25 + 16.0 + 1.0);
    }

    #[test]
    fn empty_shapes() {
        let a = CsMat::<f64>::zero((0, 3));
        let b = Mat::<f64>::zeros(3, 2);
        assert_eq!(csr_mul_dense(&a, b.as_ref()).unwrap().shape(), (0, 2));
        let z = CsMat::<f64>::zero((3, 2));
        let r = csr_tr_mul_dense(&z, Mat::<f64>::zeros(3, 0).as_ref()).unwrap();
        assert_eq!(r.shape(), (2, 0));
        assert_eq!(csr_gram(&z), Mat::<f64>::zeros(2, 2));
    }
}
