//! Row kernels on Ω shared by the ALS solvers (DESIGN §3.2, the sampled-product kernel).
//!
//! Ω is walked in either orientation through [`OmegaView`]: by rows of A (CSR order, for the W
//! half-step) or by columns (the CSC permutation of [`Observed`], for the H half-step), so both
//! half-steps run parallel over their own rows without atomics. Two kernels live here because
//! `gimc-linalg` offers them only as separate passes:
//! - [`omega_gram_apply`]: u_i = w Σ_{j∈Ω_i} (p_i·q_j) q_j, i.e. P_Ω(PQᵀ)Q fused into one pass,
//!   so a CG Hessian–vector product needs no |Ω|-long intermediate and writes into a reused
//!   buffer (the separate form is `sampled_dot` followed by `omega_mul_dense`);
//! - [`rowwise_ridge`]: the exact row-wise ridge solves of plain-MC ALS (identity side), one
//!   k × k Cholesky per row.
//!
//! Every output row is produced by one rayon task in a fixed order, so results do not depend on
//! the number of threads.

use gimc_linalg::Observed;
use gimc_linalg::dense::{axpy_slice, dot};
use gimc_linalg::faer::{MatMut, MatRef};
use gimc_linalg::thin::{THIN_MAX_COLS, thin_tr_mul_into};
use rayon::prelude::*;

/// Target floating-point operations per rayon task.
const TASK_FLOPS: usize = 1 << 15;

/// The pattern of Ω seen by rows (CSR) or by columns (CSC).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OmegaView<'a> {
    /// Pointers: the entries of outer line `i` are `ptr[i]..ptr[i + 1]`.
    ptr: &'a [usize],
    /// Inner index (the other coordinate) of every entry, in this orientation's order.
    idx: &'a [usize],
}

impl<'a> OmegaView<'a> {
    /// Ω by rows of A.
    pub(crate) fn rows(o: &'a Observed) -> Self {
        Self {
            ptr: o.row_ptr(),
            idx: o.col_indices(),
        }
    }

    /// Ω by columns of A (the rows of Aᵀ).
    pub(crate) fn cols(o: &'a Observed) -> Self {
        Self {
            ptr: o.col_ptr(),
            idx: o.csc_row_indices(),
        }
    }

    /// Number of outer lines.
    pub(crate) fn outer(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Number of entries of every outer line.
    pub(crate) fn line_counts(&self) -> Vec<f64> {
        self.ptr.windows(2).map(|w| (w[1] - w[0]) as f64).collect()
    }

    /// Number of entries.
    pub(crate) fn nnz(&self) -> usize {
        self.idx.len()
    }
}

/// Outer lines per rayon task for a kernel costing about `per_entry` flops per entry and
/// `per_line` per line.
fn grain(view: &OmegaView<'_>, per_entry: usize, per_line: usize) -> usize {
    let n = view.outer().max(1);
    let per = (view.nnz() / n + 1) * per_entry + per_line;
    (TASK_FLOPS / per.max(1)).max(1)
}

/// u_i = w · Σ_{e ∈ line i} (p_i · q_{idx[e]}) q_{idx[e]} for every outer line i.
///
/// `pt` is k × n (column i = p_i), `qt` is k × m (column j = q_j), `out` is a row-major n × k
/// buffer (row i = u_i), overwritten. This is P_Ω(P Qᵀ) Q (DESIGN §3.2, the Hessian–vector
/// product of an ALS half-step) without the |Ω|-long intermediate. O(|Ω|·k).
pub(crate) fn omega_gram_apply(
    view: OmegaView<'_>,
    pt: MatRef<'_, f64>,
    qt: MatRef<'_, f64>,
    weight: f64,
    out: &mut [f64],
) {
    let k = pt.nrows();
    if k == 0 {
        return;
    }
    let g = grain(&view, 4 * k, k);
    out.par_chunks_mut(k)
        .enumerate()
        .with_min_len(g)
        .for_each(|(i, u)| {
            let idx = &view.idx[view.ptr[i]..view.ptr[i + 1]];
            omega_line(u, col(pt, i), qt, idx, weight);
        });
}

gimc_linalg::avx2_dispatch! {
    /// [`omega_line_body`] four lanes wide where the CPU has AVX2 (the same bits).
    fn omega_line(u: &mut [f64], p: &[f64], qt: MatRef<'_, f64>, idx: &[usize], weight: f64) =
        omega_line_body;
}

/// u = w · Σ_{j ∈ idx} (p · q_j) q_j, one line of [`omega_gram_apply`] (u overwritten).
#[inline(always)]
fn omega_line_body(u: &mut [f64], p: &[f64], qt: MatRef<'_, f64>, idx: &[usize], weight: f64) {
    u.fill(0.0);
    for &j in idx {
        let q = col(qt, j);
        axpy_slice(weight * dot(p, q), q, u);
    }
}

/// B_i = w · Σ_{j∈Ω_i} q_j q_jᵀ for every outer line i, packed row-major (line i holds
/// `out[i·k²..(i+1)·k²]`, entry (a, b) at a·k + b). With Q fixed for a whole ALS half-step,
/// the Ω part of every Hessian–vector product is then u_i = B_i p_i: O(n·k²) per CG iteration
/// instead of the O(|Ω|·k) of [`omega_gram_apply`], a saving whenever k < |Ω|/n (entries per
/// line). Building the B_i costs O(|Ω|·k²) once per half-step.
pub(crate) fn omega_row_grams(view: OmegaView<'_>, qt: MatRef<'_, f64>, weight: f64) -> Vec<f64> {
    let k = qt.nrows();
    let kk = k * k;
    let mut out = vec![0.0f64; view.outer() * kk];
    if kk == 0 {
        return out;
    }
    let g = grain(&view, kk, kk);
    out.par_chunks_mut(kk)
        .enumerate()
        .with_min_len(g)
        .for_each(|(i, b)| {
            add_lower_gram(b, qt, &view.idx[view.ptr[i]..view.ptr[i + 1]], weight);
            // mirror the lower triangle
            for a in 0..k {
                for c in a + 1..k {
                    b[a * k + c] = b[c * k + a];
                }
            }
        });
    out
}

gimc_linalg::avx2_dispatch! {
    /// [`add_lower_gram_body`] four lanes wide where the CPU has AVX2 (the same bits).
    fn add_lower_gram(gram: &mut [f64], qt: MatRef<'_, f64>, cols: &[usize], w: f64) =
        add_lower_gram_body;
}

/// The lower triangle (entries (a, c), c ≤ a) of the row-major k × k `gram` plus
/// w · Σ_{j ∈ cols} q_j q_jᵀ, with q_j the column j of `qt` (k × m). Four columns are added per
/// pass over the triangle (|cols|·k²/2 multiply-adds, a quarter of the loads and stores of
/// one rank-one update at a time).
#[inline(always)]
fn add_lower_gram_body(gram: &mut [f64], qt: MatRef<'_, f64>, cols: &[usize], w: f64) {
    let k = qt.nrows();
    let mut quads = cols.chunks_exact(4);
    for quad in &mut quads {
        let [q0, q1, q2, q3] = [0, 1, 2, 3].map(|t| col(qt, quad[t]));
        for a in 0..k {
            let (c0, c1, c2, c3) = (w * q0[a], w * q1[a], w * q2[a], w * q3[a]);
            let row = &mut gram[a * k..a * k + a + 1];
            for ((((g, x0), x1), x2), x3) in row.iter_mut().zip(q0).zip(q1).zip(q2).zip(q3) {
                *g += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3;
            }
        }
    }
    for &j in quads.remainder() {
        let q = col(qt, j);
        for a in 0..k {
            axpy_slice(w * q[a], &q[..=a], &mut gram[a * k..a * k + a + 1]);
        }
    }
}

/// u_i = B_i p_i for every line i: `grams` from [`omega_row_grams`], `pt` k × n (column i =
/// p_i), `out` a row-major n × k buffer, overwritten. O(n·k²).
pub(crate) fn row_gram_apply(grams: &[f64], pt: MatRef<'_, f64>, out: &mut [f64]) {
    let k = pt.nrows();
    if k == 0 {
        return;
    }
    let kk = k * k;
    out.par_chunks_mut(k)
        .zip(grams.par_chunks(kk))
        .enumerate()
        .with_min_len((TASK_FLOPS / (2 * kk)).max(1))
        .for_each(|(i, (u, b))| {
            let p = col(pt, i);
            for (a, ua) in u.iter_mut().enumerate() {
                *ua = dot(&b[a * k..(a + 1) * k], p);
            }
        });
}

gimc_linalg::avx2_dispatch! {
    /// [`apply_row_grams_body`] four lanes wide where the CPU has AVX2 (the same bits).
    fn apply_row_grams(grams: &[f64], p: MatRef<'_, f64>, u: MatMut<'_, f64>) =
        apply_row_grams_body;
}

/// u_r = B_r p_r for the rows r of `p` (len × k), `grams` their packed B_r (k × k each), into
/// `u` (len × k, overwritten).
#[inline(always)]
fn apply_row_grams_body(grams: &[f64], p: MatRef<'_, f64>, mut u: MatMut<'_, f64>) {
    let k = p.ncols();
    let kk = k * k;
    let mut p_row = vec![0.0; k];
    let mut u_row = vec![0.0; k];
    for r in 0..p.nrows() {
        let b = &grams[r * kk..(r + 1) * kk];
        for (c, v) in p_row.iter_mut().enumerate() {
            *v = p[(r, c)];
        }
        // u_a = Σ_c b_ac p_c, summed over c in order, as u += p_c · (row c of B_r): B_r is
        // exactly symmetric (mirrored by `omega_row_grams`), so b_ca = b_ac and each sum is
        // the same sequence of operations as a dot product of row a, while the update runs
        // down contiguous rows (vectorised across a)
        u_row.fill(0.0);
        for (&pc, b_c) in p_row.iter().zip(b.chunks_exact(k)) {
            for (ua, &bca) in u_row.iter_mut().zip(b_c) {
                *ua += bca * pc;
            }
        }
        for (a, &ua) in u_row.iter().enumerate() {
            u[(r, a)] = ua;
        }
    }
}

/// Rows of Φ per rayon task in [`dense_row_gram_hessian`] (fixed, so the summation order and
/// the result do not depend on the number of threads). 256 rows of a few hundred features
/// (≈ 1 MB) stay in cache between the two products over them.
const HESSIAN_TASK_ROWS: usize = 256;

/// out = Φᵀ U with u_i = B_i (ΦS)_i: the sampled part of the ALS half-step Hessian applied to
/// S (D × k) for dense Φ (n × D), with the B_i of [`omega_row_grams`].
///
/// One pass over Φ in blocks of [`HESSIAN_TASK_ROWS`] rows, one rayon task each: P = Φ_blk S
/// (sequential GEMM), u_i = B_i p_i, then the block's contribution Φ_blkᵀ U while the block is
/// still in cache (for k ≤ 8 by `gimc_linalg::thin::thin_tr_mul_into`, which reads Φ_blk in
/// place: faer packs the transposed block first, and took 1.6 times as long at k = 7 and 3
/// times at k = 2, BENCHMARKS `thin-products`). Φ is read from memory once per product
/// instead of twice (the two thin products ΦS and ΦᵀU are memory-bound for k ≪ D), and the
/// blocks run in parallel without the synchronisation of two parallel GEMMs per CG iteration.
/// The D × k partial sums are added in block order. 4·n·D·k + 2·n·k² flops.
pub(crate) fn dense_row_gram_hessian(
    phi: MatRef<'_, f64>,
    s: MatRef<'_, f64>,
    grams: &[f64],
    mut out: MatMut<'_, f64>,
) {
    use gimc_linalg::faer::linalg::matmul::matmul;
    use gimc_linalg::faer::{Accum, Mat, Par};
    let (n, d) = (phi.nrows(), phi.ncols());
    let k = s.ncols();
    let kk = k * k;
    let tasks = n.div_ceil(HESSIAN_TASK_ROWS);
    // one block's contribution Φ_blkᵀ U_blk, written into `acc`
    let block = |t: usize, mut acc: MatMut<'_, f64>| {
        let r0 = t * HESSIAN_TASK_ROWS;
        let len = HESSIAN_TASK_ROWS.min(n - r0);
        let blk = phi.subrows(r0, len);
        let mut p = Mat::<f64>::zeros(len, k);
        matmul(p.as_mut(), Accum::Replace, blk, s, 1.0, Par::Seq);
        let mut u = Mat::<f64>::zeros(len, k);
        apply_row_grams(&grams[r0 * kk..(r0 + len) * kk], p.as_ref(), u.as_mut());
        let thin = k <= THIN_MAX_COLS && thin_tr_mul_into(blk, u.as_ref(), acc.as_mut()).is_ok();
        if !thin {
            matmul(
                acc,
                Accum::Replace,
                blk.transpose(),
                u.as_ref(),
                1.0,
                Par::Seq,
            );
        }
    };
    if tasks == 1 {
        // one block (n ≤ 256, e.g. gimc-fig1's 200 rows): straight into the output
        block(0, out);
        return;
    }
    let partials: Vec<Mat<f64>> = (0..tasks)
        .into_par_iter()
        .map(|t| {
            let mut acc = Mat::<f64>::zeros(d, k);
            block(t, acc.as_mut());
            acc
        })
        .collect();
    out.fill(0.0);
    for part in &partials {
        out += part;
    }
}

/// The contiguous column `j` of a column-major matrix (callers pass `to_owned` matrices or
/// views of them, whose columns are contiguous).
#[inline]
fn col(m: MatRef<'_, f64>, j: usize) -> &[f64] {
    m.col(j)
        .try_as_col_major()
        .map(|c| c.as_slice())
        .unwrap_or(&[])
}

/// Exact row-wise ridge solves (DESIGN §3.2, plain MC by row-wise ALS): for every outer line i,
///
/// (w_Ω Σ_{j∈Ω_i} q_j q_jᵀ + C + λI) x_i = b_i,
///
/// where `c` (k × k, already weighted, symmetric PSD) is the fully-observed term w_F QᵀQ, `rhs`
/// holds the b_i as the rows of an n × k matrix and `out` (n × k) receives the x_i. Rayon-
/// parallel over lines, one k × k Cholesky each. Returns the first line whose system is not
/// positive definite (possible only with λ = 0).
pub(crate) fn rowwise_ridge(
    omega: Option<(OmegaView<'_>, f64)>,
    c: Option<MatRef<'_, f64>>,
    qt: MatRef<'_, f64>,
    lambda: f64,
    rhs: MatRef<'_, f64>,
    out: MatMut<'_, f64>,
) -> Result<(), usize> {
    let (n, k) = (rhs.nrows(), rhs.ncols());
    if k == 0 || n == 0 {
        return Ok(());
    }
    let mut base = vec![0.0f64; k * k];
    if let Some(c) = c {
        for a in 0..k {
            for b in 0..k {
                base[a * k + b] = c[(a, b)];
            }
        }
    }
    for a in 0..k {
        base[a * k + a] += lambda;
    }
    // row-major output buffer so each task owns a contiguous slice
    let mut buf = vec![0.0f64; n * k];
    let g = omega.map_or(64, |(v, _)| grain(&v, k * k, k * k * k / 3 + 1));
    let res: Result<(), usize> = buf
        .par_chunks_mut(k)
        .enumerate()
        .with_min_len(g)
        .try_for_each_init(
            || vec![0.0f64; k * k],
            |gram, (i, x)| {
                gram.copy_from_slice(&base);
                for (a, xa) in x.iter_mut().enumerate() {
                    *xa = rhs[(i, a)];
                }
                if let Some((view, w)) = omega {
                    add_lower_gram(gram, qt, &view.idx[view.ptr[i]..view.ptr[i + 1]], w);
                }
                if cholesky_solve_in_place(gram, k, x) {
                    Ok(())
                } else {
                    Err(i)
                }
            },
        );
    res?;
    let mut out = out;
    for i in 0..n {
        for a in 0..k {
            out[(i, a)] = buf[i * k + a];
        }
    }
    Ok(())
}

/// Exact row-wise ridge solves from precomputed line Grams: (B_i + λI) x_i = b_i for every line
/// i, with `grams` the packed B_i of [`omega_row_grams`] (e.g. summed across the processes of a
/// fit on row shards), `rhs` the b_i as rows of an n × k matrix and `out` (n × k) receiving the
/// x_i. Returns the first line whose system is not positive definite (possible only with λ = 0).
pub(crate) fn rowwise_ridge_from_grams(
    grams: &[f64],
    lambda: f64,
    rhs: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) -> Result<(), usize> {
    let (n, k) = (rhs.nrows(), rhs.ncols());
    let kk = k * k;
    if k == 0 || n == 0 {
        return Ok(());
    }
    if grams.len() != n * kk {
        return Err(0);
    }
    let mut buf = vec![0.0f64; n * k];
    buf.par_chunks_mut(k)
        .zip(grams.par_chunks(kk))
        .enumerate()
        .with_min_len((TASK_FLOPS / (kk * k / 3 + 1)).max(1))
        .try_for_each_init(
            || vec![0.0f64; kk],
            |g, (i, (x, b))| {
                g.copy_from_slice(b);
                for a in 0..k {
                    g[a * k + a] += lambda;
                    x[a] = rhs[(i, a)];
                }
                if cholesky_solve_in_place(g, k, x) {
                    Ok(())
                } else {
                    Err(i)
                }
            },
        )?;
    for i in 0..n {
        for a in 0..k {
            out[(i, a)] = buf[i * k + a];
        }
    }
    Ok(())
}

/// Solves G x = b for a symmetric positive definite k × k `g` (row-major; only the lower
/// triangle is read and it is overwritten by the Cholesky factor). Returns `false` when a pivot
/// is not positive.
pub(crate) fn cholesky_solve_in_place(g: &mut [f64], k: usize, x: &mut [f64]) -> bool {
    for j in 0..k {
        let mut d = g[j * k + j];
        for p in 0..j {
            d -= g[j * k + p] * g[j * k + p];
        }
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = d.sqrt();
        g[j * k + j] = d;
        for i in (j + 1)..k {
            let mut s = g[i * k + j];
            for p in 0..j {
                s -= g[i * k + p] * g[j * k + p];
            }
            g[i * k + j] = s / d;
        }
    }
    // L y = b
    for i in 0..k {
        let mut s = x[i];
        for p in 0..i {
            s -= g[i * k + p] * x[p];
        }
        x[i] = s / g[i * k + i];
    }
    // Lᵀ x = y
    for i in (0..k).rev() {
        let mut s = x[i];
        for p in (i + 1)..k {
            s -= g[p * k + i] * x[p];
        }
        x[i] = s / g[i * k + i];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::faer;
    use gimc_linalg::faer::Mat;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    fn omega() -> Observed {
        let rows = [0, 0, 1, 2, 2, 2, 3];
        let cols = [1, 4, 0, 0, 2, 4, 3];
        let vals = [1.0, -2.0, 0.5, 3.0, 1.5, -1.0, 2.0];
        Observed::from_triplets(4, 5, &rows, &cols, &vals).unwrap()
    }

    #[test]
    fn fused_kernel_matches_dense_reference_both_orientations() {
        let o = omega();
        let mask = o.to_dense().map(|&v| if v != 0.0 { 1.0 } else { 0.0 });
        let p = gaussian_mat(&mut seeded(1), 4, 3, 1.0);
        let q = gaussian_mat(&mut seeded(2), 5, 3, 1.0);
        let pq = &p * q.transpose();
        let masked = Mat::<f64>::from_fn(4, 5, |i, j| pq[(i, j)] * mask[(i, j)]);
        let want = &masked * &q * faer::Scale(2.0);
        let mut out = vec![0.0; 4 * 3];
        let (pt, qt) = (p.transpose().to_owned(), q.transpose().to_owned());
        omega_gram_apply(OmegaView::rows(&o), pt.as_ref(), qt.as_ref(), 2.0, &mut out);
        let got = MatRef::from_row_major_slice(&out, 4, 3);
        assert!((got - &want).norm_l2() < 1e-12);
        // columns: Rᵀ-side product P_Ω(PQᵀ)ᵀ P
        let want_t = masked.transpose() * &p;
        let mut out_t = vec![0.0; 5 * 3];
        omega_gram_apply(
            OmegaView::cols(&o),
            qt.as_ref(),
            pt.as_ref(),
            1.0,
            &mut out_t,
        );
        let got_t = MatRef::from_row_major_slice(&out_t, 5, 3);
        assert!((got_t - &want_t).norm_l2() < 1e-12);
    }

    #[test]
    fn row_grams_reproduce_the_fused_kernel_and_the_blocked_dense_hessian() {
        // n spans several tasks and a ragged last block
        let (n, m, d, k) = (2 * HESSIAN_TASK_ROWS + 77, 40, 13, 3);
        let mut rng = seeded(5);
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..n {
            for j in 0..m {
                if rand::Rng::random::<f64>(&mut rng) < 0.2 {
                    rows.push(i);
                    cols.push(j);
                    vals.push(1.0);
                }
            }
        }
        let o = Observed::from_triplets(n, m, &rows, &cols, &vals).unwrap();
        let q = gaussian_mat(&mut seeded(6), m, k, 1.0);
        let qt = q.transpose().to_owned();
        let phi = gaussian_mat(&mut seeded(7), n, d, 1.0);
        let sdir = gaussian_mat(&mut seeded(8), d, k, 1.0);
        let p = &phi * &sdir;
        let pt = p.transpose().to_owned();
        let view = OmegaView::rows(&o);
        let mut want_u = vec![0.0; n * k];
        omega_gram_apply(view, pt.as_ref(), qt.as_ref(), 0.7, &mut want_u);
        let grams = omega_row_grams(view, qt.as_ref(), 0.7);
        let mut got_u = vec![0.0; n * k];
        row_gram_apply(&grams, pt.as_ref(), &mut got_u);
        let diff: f64 = want_u.iter().zip(&got_u).map(|(a, b)| (a - b).abs()).sum();
        assert!(
            diff < 1e-9,
            "row grams differ from the fused kernel by {diff}"
        );
        let want = phi.transpose() * MatRef::from_row_major_slice(&want_u, n, k);
        let mut got = Mat::<f64>::zeros(d, k);
        dense_row_gram_hessian(phi.as_ref(), sdir.as_ref(), &grams, got.as_mut());
        let rel = (&got - &want).norm_l2() / want.norm_l2();
        assert!(rel < 1e-12, "blocked dense Hessian off by {rel}");
    }

    #[test]
    fn rowwise_ridge_solves_each_row() {
        let o = omega();
        let q = gaussian_mat(&mut seeded(3), 5, 2, 1.0);
        let c = q.transpose() * &q * faer::Scale(0.3);
        let rhs = gaussian_mat(&mut seeded(4), 4, 2, 1.0);
        let mut x = Mat::<f64>::zeros(4, 2);
        let qt = q.transpose().to_owned();
        rowwise_ridge(
            Some((OmegaView::rows(&o), 0.7)),
            Some(c.as_ref()),
            qt.as_ref(),
            0.1,
            rhs.as_ref(),
            x.as_mut(),
        )
        .unwrap();
        for i in 0..4 {
            let (cols, _) = o.row(i).unwrap();
            let mut g = &c + Mat::<f64>::identity(2, 2) * faer::Scale(0.1);
            for &j in cols {
                let qj = q.row(j).transpose().to_owned();
                g += &qj * qj.transpose() * faer::Scale(0.7);
            }
            let r = &g * x.row(i).transpose() - rhs.row(i).transpose();
            assert!(r.norm_l2() < 1e-12);
        }
        // λ = 0 and an empty-ish row: singular
        let err = rowwise_ridge(
            Some((OmegaView::rows(&o), 1.0)),
            None,
            qt.as_ref(),
            0.0,
            rhs.as_ref(),
            x.as_mut(),
        );
        assert!(err.is_err());
    }
}
