//! Dense helpers every solver needs, on top of faer (DESIGN §2, faer vocabulary).
//!
//! faer already offers `&a * &b`, `a.transpose()`, `a.norm_l2()` (the Frobenius norm) and
//! `faer::linalg::matmul::matmul` with an explicit `Par`; this module only adds what saves real
//! verbosity or turns faer's shape panics into [`LinalgError::DimensionMismatch`]:
//! dimension-checked products (`AB`, `AᵀB`, `ABᵀ`, the symmetric `AᵀA` computed on one
//! triangle), the Frobenius inner product, `axpy`, NaN/Inf checks with the offending position,
//! and orthonormalisation. Reductions here are sequential loops in a fixed order, so their
//! results do not depend on the number of threads.

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

use crate::error::dim_err;
use crate::{LinalgError, Result};

/// The parallelism used by the high-level calls of this crate: faer's global setting (by default
/// every thread of the current rayon pool).
pub fn par() -> Par {
    faer::get_global_parallelism()
}

/// Runs `f` inside a dedicated rayon pool of `threads` threads (faer's global parallelism
/// follows the current pool, so the dense products inside `f` use them too). Errors if the pool
/// cannot be built.
pub fn in_pool<T: Send>(
    threads: usize,
    f: impl FnOnce() -> T + Send,
) -> std::result::Result<T, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map(|pool| pool.install(f))
}

/// `A·B`, checking that the inner dimensions agree.
pub fn matmul(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    if a.ncols() != b.nrows() {
        return Err(dim_err(
            "matmul",
            format!("B with {} rows", a.ncols()),
            format!("{} rows", b.nrows()),
        ));
    }
    Ok(matmul_unchecked(a, b))
}

/// `Aᵀ·B`, checking that `A` and `B` have the same number of rows.
pub fn matmul_tn(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    if a.nrows() != b.nrows() {
        return Err(dim_err(
            "matmul_tn",
            format!("B with {} rows", a.nrows()),
            format!("{} rows", b.nrows()),
        ));
    }
    Ok(matmul_unchecked(a.transpose(), b))
}

/// `A·Bᵀ`, checking that `A` and `B` have the same number of columns.
pub fn matmul_nt(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    if a.ncols() != b.ncols() {
        return Err(dim_err(
            "matmul_nt",
            format!("B with {} columns", a.ncols()),
            format!("{} columns", b.ncols()),
        ));
    }
    Ok(matmul_unchecked(a, b.transpose()))
}

/// `A·B` for operands whose shapes the caller has already checked (the product has zero
/// padding, see [`zeros_padded`], as it is often the next product's left operand).
pub(crate) fn matmul_unchecked(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = zeros_padded(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(out.as_mut(), Accum::Replace, a, b, 1.0, par());
    out
}

/// A zero `nrows × ncols` matrix whose column padding is zero as well.
///
/// faer stores a `Mat<f64>` with each column padded to a multiple of 8 rows and leaves the
/// padding uninitialised. faer's AVX-512 GEMM kernels (crate `private-gemm-x86`) read a
/// column-major left operand in place and load its last, partial block of rows whole, padding
/// included, discarding those lanes. Heap memory that last held integers reads as subnormal
/// doubles, and every FMA on a subnormal lane takes a microcode assist: MC-1's 118 × 118 by
/// 118 × 2,417 shrinkage product ran 0.8 ms with zero padding and 9 to 12 ms with stale padding,
/// varying from run to run with the heap's history (bench `gemm-lhs-padding`). Allocate here
/// every matrix that becomes a GEMM's left operand; faer never writes the padding, so it stays
/// zero through later products into the matrix.
///
/// ```
/// let a = gimc_linalg::dense::zeros_padded(118, 3);
/// assert_eq!(a.shape(), (118, 3));
/// assert_eq!(a.col_stride(), 120);
/// ```
pub fn zeros_padded(nrows: usize, ncols: usize) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(nrows.next_multiple_of(8), ncols);
    out.truncate(nrows, ncols);
    out
}

/// [`zeros_padded`] filled with `f(i, j)`.
pub fn padded_from_fn(
    nrows: usize,
    ncols: usize,
    mut f: impl FnMut(usize, usize) -> f64,
) -> Mat<f64> {
    let mut out = zeros_padded(nrows, ncols);
    for j in 0..ncols {
        for (i, v) in out.col_mut(j).iter_mut().enumerate() {
            *v = f(i, j);
        }
    }
    out
}

/// A copy of `a` with zero padding (see [`zeros_padded`]).
pub fn padded_copy(a: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = zeros_padded(a.nrows(), a.ncols());
    out.copy_from(a);
    out
}

/// The symmetric product `AᵀA` (d × d for an n × d `A`), computing one triangle through faer's
/// triangular GEMM and mirroring it, so the result is exactly symmetric.
pub fn gram_tn(a: MatRef<'_, f64>) -> Mat<f64> {
    gram_tn_with(a, par())
}

/// [`gram_tn`] with an explicit parallelism (e.g. `Par::Seq` inside tasks that already fill
/// the cores).
pub fn gram_tn_with(a: MatRef<'_, f64>, parallelism: faer::Par) -> Mat<f64> {
    let d = a.ncols();
    let mut out = zeros_padded(d, d);
    triangular::matmul(
        out.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        a.transpose(),
        BlockStructure::Rectangular,
        a,
        BlockStructure::Rectangular,
        1.0,
        parallelism,
    );
    mirror_lower(out.as_mut());
    out
}

/// The symmetric product `AAᵀ` (n × n for an n × d `A`); see [`gram_tn`].
pub fn gram_nt(a: MatRef<'_, f64>) -> Mat<f64> {
    gram_tn(a.transpose())
}

/// Copies the strict lower triangle of a square matrix onto its upper triangle.
pub(crate) fn mirror_lower(mut a: MatMut<'_, f64>) {
    let n = a.nrows().min(a.ncols());
    for j in 0..n {
        for i in (j + 1)..n {
            let v = a[(i, j)];
            a[(j, i)] = v;
        }
    }
}

/// The Frobenius norm ‖A‖_F (faer's `norm_l2`, named for readability in solver code).
pub fn frob_norm(a: MatRef<'_, f64>) -> f64 {
    a.norm_l2()
}

/// The Frobenius inner product ⟨A, B⟩ = Σ_ij A_ij B_ij, summed column by column in a fixed
/// order (deterministic).
pub fn frob_dot(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<f64> {
    if a.shape() != b.shape() {
        return Err(dim_err(
            "frob_dot",
            format!("{} x {}", a.nrows(), a.ncols()),
            format!("{} x {}", b.nrows(), b.ncols()),
        ));
    }
    Ok(frob_dot_unchecked(a, b))
}

/// ⟨A, B⟩ for operands of equal shape (checked by the caller).
pub(crate) fn frob_dot_unchecked(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let mut total = 0.0;
    for j in 0..a.ncols() {
        let (ca, cb) = (a.col(j), b.col(j));
        total += match (ca.try_as_col_major(), cb.try_as_col_major()) {
            (Some(x), Some(y)) => dot(x.as_slice(), y.as_slice()),
            _ => ca.iter().zip(cb.iter()).map(|(x, y)| x * y).sum::<f64>(),
        };
    }
    total
}

/// Dot product of two slices (over the shorter length) with four interleaved partial sums
/// (fixed order, so deterministic, and vectorised without `-ffast-math`): the kernel of the
/// workspace's sparse and row-wise products.
///
/// ```
/// assert_eq!(gimc_linalg::dense::dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
/// ```
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc[0] += x[0] * y[0];
        acc[1] += x[1] * y[1];
        acc[2] += x[2] * y[2];
        acc[3] += x[3] * y[3];
    }
    let mut tail = 0.0;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `y += α·x` on equally long slices.
#[inline]
pub fn axpy_slice(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `Y ← Y + α·X` in place.
pub fn axpy(alpha: f64, x: MatRef<'_, f64>, y: MatMut<'_, f64>) -> Result<()> {
    if x.shape() != y.shape() {
        return Err(dim_err(
            "axpy",
            format!("{} x {}", y.nrows(), y.ncols()),
            format!("{} x {}", x.nrows(), x.ncols()),
        ));
    }
    axpy_unchecked(alpha, x, y);
    Ok(())
}

pub(crate) fn axpy_unchecked(alpha: f64, x: MatRef<'_, f64>, y: MatMut<'_, f64>) {
    faer::zip!(y, x).for_each(|faer::unzip!(y, x)| *y += alpha * *x);
}

/// `Y ← α·X + β·Y` in place (the general update used by CG's direction step).
pub fn axpby(alpha: f64, x: MatRef<'_, f64>, beta: f64, y: MatMut<'_, f64>) -> Result<()> {
    if x.shape() != y.shape() {
        return Err(dim_err(
            "axpby",
            format!("{} x {}", y.nrows(), y.ncols()),
            format!("{} x {}", x.nrows(), x.ncols()),
        ));
    }
    faer::zip!(y, x).for_each(|faer::unzip!(y, x)| *y = alpha * *x + beta * *y);
    Ok(())
}
/// Row i of `p` dotted with row j of `q` for every pair (i, j) of `pairs`, in order: the
/// entries Â_ij = P_i · Q_j of a factored matrix Â = PQᵀ, parallel over the pairs. A pair out
/// of range is an error naming it.
pub fn row_pair_dots(
    p: MatRef<'_, f64>,
    q: MatRef<'_, f64>,
    pairs: &[(usize, usize)],
) -> Result<Vec<f64>> {
    if p.ncols() != q.ncols() {
        return Err(dim_err(
            "row_pair_dots",
            format!("{} columns", p.ncols()),
            format!("{} columns", q.ncols()),
        ));
    }
    if let Some(&(i, j)) = pairs
        .iter()
        .find(|&&(i, j)| i >= p.nrows() || j >= q.nrows())
    {
        return Err(LinalgError::InvalidParameter {
            name: "pairs",
            reason: format!(
                "pair ({i}, {j}) out of range for {} rows and {} columns",
                p.nrows(),
                q.nrows()
            ),
        });
    }
    // rows as contiguous columns
    let (pt, qt) = (p.transpose().to_owned(), q.transpose().to_owned());
    Ok(pairs
        .par_iter()
        .with_min_len(1024)
        .map(|&(i, j)| {
            pt.col_as_slice(i)
                .iter()
                .zip(qt.col_as_slice(j))
                .map(|(x, y)| x * y)
                .sum()
        })
        .collect())
}

/// `A ← A + λI` for a square `A`.
pub fn add_to_diagonal(mut a: MatMut<'_, f64>, lambda: f64) -> Result<()> {
    if a.nrows() != a.ncols() {
        return Err(dim_err(
            "add_to_diagonal",
            "a square matrix".to_string(),
            format!("{} x {}", a.nrows(), a.ncols()),
        ));
    }
    for i in 0..a.nrows() {
        a[(i, i)] += lambda;
    }
    Ok(())
}

/// Checks that every entry is finite, reporting the first NaN/Inf (column-major order) with its
/// position.
pub fn check_finite(a: MatRef<'_, f64>) -> Result<()> {
    match first_non_finite(a) {
        Some((row, col, value)) => Err(LinalgError::NonFinite { row, col, value }),
        None => Ok(()),
    }
}

/// Whether every value of `x` is finite, in one branch-free vectorisable pass: x·0 is 0 for a
/// finite x and NaN for ±∞ or NaN, and a NaN survives any sum.
#[inline]
pub fn all_finite(x: &[f64]) -> bool {
    let mut acc = [0.0f64; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            acc[l] += c[l] * 0.0;
        }
    }
    let tail: f64 = chunks.remainder().iter().map(|v| v * 0.0).sum();
    (acc.iter().sum::<f64>() + tail) == 0.0
}

/// The first non-finite entry of `a` in column-major order, as (row, column, value): columns
/// stored contiguously are screened by [`all_finite`] and searched only when they fail.
pub fn first_non_finite(a: MatRef<'_, f64>) -> Option<(usize, usize, f64)> {
    for j in 0..a.ncols() {
        let col = a.col(j);
        if col
            .try_as_col_major()
            .is_some_and(|c| all_finite(c.as_slice()))
        {
            continue;
        }
        if let Some((i, &v)) = col.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Some((i, j, v));
        }
    }
    None
}

/// Checks that `a` is square, returning its order.
pub(crate) fn check_square(op: &'static str, a: MatRef<'_, f64>) -> Result<usize> {
    if a.nrows() != a.ncols() {
        return Err(dim_err(
            op,
            "a square matrix".to_string(),
            format!("{} x {}", a.nrows(), a.ncols()),
        ));
    }
    Ok(a.nrows())
}

/// The symmetric part (A + Aᵀ)/2 of a square matrix.
pub fn symmetrize(a: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let n = check_square("symmetrize", a)?;
    Ok(Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)])))
}

/// Smallest dimension min(m, n) from which [`factor_par`] factors in parallel.
pub const PARALLEL_FACTOR_MIN: usize = 256;

/// The parallelism of a dense factorisation (eigen, SVD, QR) of a matrix whose smaller
/// dimension is `size`: sequential below [`PARALLEL_FACTOR_MIN`], else faer split into 4 tasks,
/// whatever the machine's core count or faer's global setting.
///
/// faer's blocked factorisations round differently with the number of tasks they are split
/// into (every entry of an eigenvector matrix differs in its last bits between one and two
/// tasks at n = 100), but for a given number of tasks give the same bits on any number of
/// threads. Fixing the split by the matrix's size alone keeps every result built on them the
/// same on every machine (tested), and keeps the small factorisations of the iterative solvers,
/// which run inside parallel loops, on their calling thread.
pub fn factor_par(size: usize) -> Par {
    if size >= PARALLEL_FACTOR_MIN {
        Par::rayon(4)
    } else {
        Par::Seq
    }
}

/// An orthonormal basis of the column space of `a` (m × min(m, n)): the thin `Q` of a
/// Householder QR ([`HouseholderQr`]). Columns of `a` that are linearly dependent still give
/// orthonormal columns.
pub fn orthonormalize(a: MatRef<'_, f64>) -> Mat<f64> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Mat::zeros(a.nrows(), a.nrows().min(a.ncols()));
    }
    HouseholderQr::new(a).thin_q()
}

/// The Householder QR A = QR of an m × n matrix, in faer's blocked form (the Householder
/// vectors and their block coefficients), factored with [`factor_par`].
///
/// faer's `Mat::qr` factors with the global parallelism, whose split into tasks changes R in
/// its last bits, so every result built on it would depend on the machine's core count.
/// Applying Q (here, or with faer's Householder functions on [`Self::basis`] and
/// [`Self::coeff`]) gives the same bits on any number of threads.
///
/// ```
/// use gimc_linalg::dense::HouseholderQr;
/// use gimc_linalg::faer::mat;
/// let a = mat![[3.0, 1.0], [4.0, 2.0], [0.0, 2.0]];
/// let qr = HouseholderQr::new(a.as_ref());
/// let rebuilt = qr.thin_q() * qr.thin_r();
/// assert!((&rebuilt - &a).norm_max() < 1e-12);
/// assert!((qr.thin_r()[(0, 0)].abs() - 5.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone)]
pub struct HouseholderQr {
    /// The Householder vectors: unit lower trapezoidal, m × min(m, n).
    basis: Mat<f64>,
    /// The block coefficients.
    coeff: Mat<f64>,
    /// R: upper trapezoidal, min(m, n) × n.
    r: Mat<f64>,
}

impl HouseholderQr {
    /// Factors `a` (m × n).
    pub fn new(a: MatRef<'_, f64>) -> Self {
        use faer::dyn_stack::{MemBuffer, MemStack};
        use faer::linalg::qr::no_pivoting::factor::{
            qr_in_place, qr_in_place_scratch, recommended_block_size,
        };
        let (m, n) = a.shape();
        let size = m.min(n);
        let block = recommended_block_size::<f64>(m, n);
        let mut qr = a.to_owned();
        let mut coeff = Mat::<f64>::zeros(block, size);
        let par = factor_par(size);
        let mut buf = MemBuffer::new(qr_in_place_scratch::<f64>(
            m,
            n,
            block,
            par,
            Default::default(),
        ));
        qr_in_place(
            qr.as_mut(),
            coeff.as_mut(),
            par,
            MemStack::new(&mut buf),
            Default::default(),
        );
        // R on and above the diagonal; the vectors below it (unit diagonal), kept in the
        // factored matrix's own storage (no copy of the m × min(m, n) part)
        let r = Mat::from_fn(size, n, |i, j| if i <= j { qr[(i, j)] } else { 0.0 });
        qr.truncate(m, size);
        for j in 0..size {
            qr[(j, j)] = 1.0;
            for i in 0..j {
                qr[(i, j)] = 0.0;
            }
        }
        Self {
            basis: qr,
            coeff,
            r,
        }
    }

    /// The Householder vectors (m × min(m, n), unit lower trapezoidal), for faer's
    /// `apply_block_householder_*` functions.
    pub fn basis(&self) -> MatRef<'_, f64> {
        self.basis.as_ref()
    }

    /// The block coefficients of the Householder vectors.
    pub fn coeff(&self) -> MatRef<'_, f64> {
        self.coeff.as_ref()
    }

    /// R (min(m, n) × n, upper trapezoidal).
    pub fn thin_r(&self) -> MatRef<'_, f64> {
        self.r.as_ref()
    }

    /// The first min(m, n) columns of Q.
    pub fn thin_q(&self) -> Mat<f64> {
        use faer::dyn_stack::{MemBuffer, MemStack};
        use faer::linalg::householder::{
            apply_block_householder_sequence_on_the_left_in_place_scratch,
            apply_block_householder_sequence_on_the_left_in_place_with_conj,
        };
        let (m, size) = self.basis.shape();
        let mut q = Mat::<f64>::identity(m, size);
        let mut buf = MemBuffer::new(
            apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                m,
                self.coeff.nrows(),
                size,
            ),
        );
        apply_block_householder_sequence_on_the_left_in_place_with_conj(
            self.basis.as_ref(),
            self.coeff.as_ref(),
            faer::Conj::No,
            q.as_mut(),
            faer::get_global_parallelism(),
            MemStack::new(&mut buf),
        );
        q
    }
}

/// A column-major copy of `a` whose columns are the rows of `a`, so row `i` of `a` is the
/// contiguous slice `t.col_as_slice(i)` of the result `t` (k × n for an n × k `a`).
pub(crate) fn rows_contiguous(a: MatRef<'_, f64>) -> Mat<f64> {
    a.transpose().to_owned()
}

/// Builds an `n × k` faer matrix from a row-major buffer of length `n·k`.
///
/// A tiled, column-parallel transpose: each task owns a block of 32 output columns and copies
/// 32 × 32 tiles, so the 32 source rows it reads stay in L1 (several times faster than an
/// element-wise strided copy).
pub(crate) fn from_row_major(buf: &[f64], n: usize, k: usize) -> Mat<f64> {
    const TILE: usize = 32;
    let mut out = Mat::<f64>::zeros(n, k);
    if n == 0 || k == 0 {
        return out;
    }
    out.as_mut()
        .par_col_chunks_mut(TILE)
        .enumerate()
        .for_each(|(block, mut cols)| {
            let c0 = block * TILE;
            for r0 in (0..n).step_by(TILE) {
                let r1 = (r0 + TILE).min(n);
                for t in 0..cols.ncols() {
                    let mut col = cols.as_mut().col_mut(t);
                    for i in r0..r1 {
                        col[i] = buf[i * k + c0 + t];
                    }
                }
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rng::{gaussian_mat, seeded};

    #[test]
    fn row_pair_dots_are_entries_of_the_product() {
        let p = Mat::from_fn(4, 3, |i, j| (i * 3 + j) as f64 - 4.0);
        let q = Mat::from_fn(5, 3, |i, j| (i + 2 * j) as f64 * 0.5);
        let full = &p * q.transpose();
        let pairs = [(0, 4), (3, 0), (2, 2), (3, 4)];
        let got = row_pair_dots(p.as_ref(), q.as_ref(), &pairs).unwrap();
        for (&(i, j), v) in pairs.iter().zip(got) {
            assert_eq!(v, full[(i, j)]);
        }
        let err = row_pair_dots(p.as_ref(), q.as_ref(), &[(4, 0)]).unwrap_err();
        assert!(
            err.to_string().contains("pair (4, 0) out of range"),
            "{err}"
        );
        assert!(row_pair_dots(p.as_ref(), q.as_ref().subcols(0, 2), &pairs).is_err());
    }

    #[test]
    fn padded_matrices_keep_their_padding_rows_out_of_view() {
        let mut rng = seeded(4);
        let a = gaussian_mat(&mut rng, 13, 6, 1.0);
        let b = gaussian_mat(&mut rng, 6, 9, 1.0);
        for m in [
            padded_copy(a.as_ref()),
            padded_from_fn(13, 6, |i, j| a[(i, j)]),
        ] {
            assert_eq!(m.shape(), (13, 6));
            // the stride covers the zeroed rows 13..16 that stay behind the view
            assert_eq!(m.col_stride(), 16);
            assert_eq!(m, a);
            assert_eq!(&m * &b, &a * &b);
        }
        let z = zeros_padded(16, 2);
        assert_eq!((z.col_stride(), z.norm_l2()), (16, 0.0));
        assert_eq!(zeros_padded(0, 3).shape(), (0, 3));
    }

    #[test]
    fn products_match_faer_operators() {
        let mut rng = seeded(1);
        let a = gaussian_mat(&mut rng, 7, 5, 1.0);
        let b = gaussian_mat(&mut rng, 5, 3, 1.0);
        let c = gaussian_mat(&mut rng, 7, 3, 1.0);
        let d = gaussian_mat(&mut rng, 4, 5, 1.0);
        assert!((matmul(a.as_ref(), b.as_ref()).unwrap() - &a * &b).norm_l2() < 1e-12);
        assert!(
            (matmul_tn(a.as_ref(), c.as_ref()).unwrap() - a.transpose() * &c).norm_l2() < 1e-12
        );
        assert!(
            (matmul_nt(a.as_ref(), d.as_ref()).unwrap() - &a * d.transpose()).norm_l2() < 1e-12
        );
        let g = gram_tn(a.as_ref());
        assert!((&g - a.transpose() * &a).norm_l2() < 1e-12);
        assert_eq!(g, g.transpose().to_owned());
        assert!((gram_nt(a.as_ref()) - &a * a.transpose()).norm_l2() < 1e-12);
    }

    #[test]
    fn shape_errors() {
        let a = Mat::<f64>::zeros(3, 2);
        let b = Mat::<f64>::zeros(3, 2);
        assert!(matches!(
            matmul(a.as_ref(), b.as_ref()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            matmul_nt(a.as_ref(), Mat::<f64>::zeros(2, 3).as_ref()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        assert!(frob_dot(a.as_ref(), Mat::<f64>::zeros(2, 3).as_ref()).is_err());
        let mut y = Mat::<f64>::zeros(2, 2);
        assert!(axpy(1.0, a.as_ref(), y.as_mut()).is_err());
        assert!(add_to_diagonal(Mat::<f64>::zeros(2, 3).as_mut(), 1.0).is_err());
    }

    #[test]
    fn dot_axpy_and_checks() {
        let mut rng = seeded(2);
        let a = gaussian_mat(&mut rng, 6, 3, 1.0);
        let b = gaussian_mat(&mut rng, 6, 3, 1.0);
        let reference: f64 = (0..3)
            .flat_map(|j| (0..6).map(move |i| (i, j)))
            .map(|(i, j)| a[(i, j)] * b[(i, j)])
            .sum();
        assert!((frob_dot(a.as_ref(), b.as_ref()).unwrap() - reference).abs() < 1e-12);
        // strided (transposed) operands take the generic path
        let at = a.transpose().to_owned();
        let bt = b.transpose().to_owned();
        let strided = frob_dot(at.transpose(), bt.transpose()).unwrap();
        assert!((strided - reference).abs() < 1e-12);
        let mut y = b.clone();
        axpy(2.0, a.as_ref(), y.as_mut()).unwrap();
        assert!((&y - (&b + &a * faer::Scale(2.0))).norm_l2() < 1e-12);
        let mut z = b.clone();
        axpby(2.0, a.as_ref(), -1.0, z.as_mut()).unwrap();
        assert!((&z - (&a * faer::Scale(2.0) - &b)).norm_l2() < 1e-12);
        let mut bad = a.clone();
        bad[(4, 2)] = f64::NAN;
        assert!(matches!(
            check_finite(bad.as_ref()),
            Err(LinalgError::NonFinite { row: 4, col: 2, .. })
        ));
        assert_eq!(dot(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0; 5]), 15.0);
    }

    #[test]
    fn non_finite_values_are_found_wherever_they_are() {
        // every position of a 21-row column (8-wide chunks and the tail), both layouts
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for i in 0..21 {
                let mut a = Mat::<f64>::from_fn(21, 3, |r, c| 1e300 * (r as f64 - c as f64));
                assert!(all_finite(a.col_as_slice(1)));
                assert_eq!(first_non_finite(a.as_ref()), None);
                a[(i, 1)] = bad;
                assert!(!all_finite(a.col_as_slice(1)));
                let found = first_non_finite(a.as_ref()).unwrap();
                assert_eq!((found.0, found.1), (i, 1));
                let t = a.transpose().to_owned();
                let found = first_non_finite(t.transpose()).unwrap();
                assert_eq!((found.0, found.1), (i, 1));
            }
        }
    }

    #[test]
    fn orthonormalize_gives_orthonormal_columns_spanning_input() {
        let mut rng = seeded(3);
        let a = gaussian_mat(&mut rng, 9, 4, 1.0);
        let q = orthonormalize(a.as_ref());
        assert_eq!(q.shape(), (9, 4));
        assert!((q.transpose() * &q - Mat::<f64>::identity(4, 4)).norm_l2() < 1e-12);
        // projecting a onto span(q) leaves it unchanged
        let proj = &q * (q.transpose() * &a);
        assert!((proj - &a).norm_l2() < 1e-10);
    }
}
