//! The fused column passes of [`TransductionFpc`]: the gradient step's A from Y, the
//! accelerated candidate's MC-1 reset, margins, feature loss and restart product, and the
//! extrapolation y ← z + c (z − x).

use gimc_linalg::dense;
use gimc_linalg::faer::{MatMut, MatRef};

#[cfg(doc)]
use super::TransductionFpc;
use crate::transduction::loss::ColumnEntries;
use crate::transduction::shrink;

/// What the column pass of [`TransductionFpc::descent_fused`] reads and writes: A = Y −
/// τ_Z ∇f(Y) written from Y, the label gradients (from the sigmoids at Y) cached in `grad`,
/// and MC-b's bias step in `new_b`.
pub(super) struct DescentColumns<'p> {
    pub(super) a: MatMut<'p, f64>,
    pub(super) y: MatRef<'p, f64>,
    pub(super) t: usize,
    pub(super) d: usize,
    pub(super) features: (&'p [f64], &'p [f64]),
    pub(super) steps: (f64, f64),
    pub(super) weights: (f64, f64),
    pub(super) entries: &'p ColumnEntries,
    pub(super) sigmoid: &'p [f64],
    pub(super) grad: &'p mut [f64],
    pub(super) new_b: Option<&'p mut Vec<f64>>,
}

gimc_linalg::avx2_dispatch! {
    /// [`descent_columns`] four lanes wide where the CPU has AVX2 (no fused multiply-add, no
    /// sum reordered: the same bits).
    pub(super) fn descent_columns_dispatch(cols: DescentColumns<'_>) -> bool = descent_columns;
}

/// The pass itself; returns whether every entry of A is finite (screened column by column
/// while it is in cache).
#[inline(always)]
fn descent_columns(cols: DescentColumns<'_>) -> bool {
    let DescentColumns {
        mut a,
        y,
        t,
        d,
        features: (fx_all, fm_all),
        steps: (tau_z, tau_b),
        weights: (wy, wx),
        entries: e,
        sigmoid,
        grad,
        mut new_b,
    } = cols;
    let mut finite = true;
    for j in 0..a.ncols() {
        let range = j * d..(j + 1) * d;
        let (xc, mc) = (&fx_all[range.clone()], &fm_all[range]);
        let ycol = y.col(j);
        let mut col = a.as_mut().col_mut(j);
        // A = Y − τ ∇f(Y) written straight from Y (no copy pass): the feature block in one
        // pass, the other rows copied, then the label entries updated in place
        match (col.as_mut().try_as_col_major_mut(), ycol.try_as_col_major()) {
            (Some(out), Some(yc)) => {
                let (out, yc) = (out.as_slice_mut(), yc.as_slice());
                out[..t].copy_from_slice(&yc[..t]);
                out[t + d..].copy_from_slice(&yc[t + d..]);
                let feats = out[t..t + d].iter_mut().zip(&yc[t..t + d]);
                for ((v, &yv), (&x, &m)) in feats.zip(xc.iter().zip(mc)) {
                    *v = yv - tau_z * (wx * ((yv - x) * m));
                }
            }
            _ => {
                col.copy_from(ycol);
                let mut block = col.as_mut().subrows_mut(t, d);
                for i in 0..d {
                    block[i] -= tau_z * (wx * ((block[i] - xc[i]) * mc[i]));
                }
            }
        }
        let r = e.label_ptr[j]..e.label_ptr[j + 1];
        for k in r {
            let (i, yv) = (e.rows[k], e.vals[k]);
            // d/dz log(1 + e^{−m}) = −y / (1 + e^{m}), m = y (z + b) (as in `eval_with`)
            let g = -wy * yv * sigmoid[k];
            grad[k] = g;
            col[i] -= tau_z * g;
            if let Some(b) = new_b.as_deref_mut() {
                b[i] -= tau_b * g;
            }
        }
        // the NaN screen of the step, on the column while it is in cache (A is a `Mat`:
        // its columns are contiguous)
        finite &= col
            .as_ref()
            .try_as_col_major()
            .is_none_or(|out| dense::all_finite(out.as_slice()));
    }
    finite
}

/// What the pass over the candidate's columns in
/// [`TransductionFpc::accelerated_candidate`] reads and writes: the candidate Z (MC-1's ones
/// row reset in place, its c = 1 − Z_m and A c accumulated when `ac` is not empty), the
/// iterate X, the extrapolated point Y (overwritten by the next extrapolation with coefficient
/// `c2`), the label margins at (Z, b) and the feature block (x, mask) for the feature loss.
pub(super) struct CandidateColumns<'p> {
    pub(super) mc1: bool,
    pub(super) t: usize,
    pub(super) d: usize,
    pub(super) z: MatMut<'p, f64>,
    pub(super) c: &'p mut [f64],
    pub(super) ac: &'p mut [f64],
    pub(super) a: MatRef<'p, f64>,
    pub(super) x: MatRef<'p, f64>,
    pub(super) y: MatMut<'p, f64>,
    pub(super) entries: &'p ColumnEntries,
    pub(super) margins: &'p mut [f64],
    pub(super) bias: &'p [f64],
    pub(super) features: (&'p [f64], &'p [f64]),
    pub(super) c2: f64,
}

gimc_linalg::avx2_dispatch! {
    /// [`candidate_columns`] four lanes wide where the CPU has AVX2
    /// ([`gimc_linalg::avx2_dispatch`]). No sum is reordered (the feature loss stays one
    /// chain, the restart product its four lanes), so both paths give the same bits; only the
    /// elementwise work and the restart product's four lanes run in 256-bit registers instead
    /// of baseline x86-64's scalar and 128-bit code.
    pub(super) fn candidate_columns_dispatch(cols: CandidateColumns<'_>) -> Option<(f64, [f64; 4])> =
        candidate_columns;
}

/// The pass itself: per column, MC-1's reset and A c, the label margins, the feature loss
/// (summed in one chain over columns, then rows, as `eval_with`'s loss-only pass) and the
/// restart product with the extrapolation ([`restart_column`]). Returns the feature loss and
/// the restart product's four partial sums; `None` when an iterate's column is not
/// contiguous.
#[inline(always)]
fn candidate_columns(cols: CandidateColumns<'_>) -> Option<(f64, [f64; 4])> {
    let CandidateColumns {
        mc1,
        t,
        d,
        mut z,
        c,
        ac,
        a,
        x,
        mut y,
        entries: e,
        margins,
        bias,
        features: (fx_all, fm_all),
        c2,
    } = cols;
    let (m, n) = (z.nrows(), z.ncols());
    let mut lx = 0.0;
    // four partial sums, as in `restart_product_extrapolate`
    let mut acc = [0.0; 4];
    for j in 0..n {
        if mc1 {
            c[j] = 1.0 - z[(m - 1, j)];
            z[(m - 1, j)] = 1.0;
            if !ac.is_empty() {
                shrink::add_scaled_col(ac, a, j, c[j]);
            }
        }
        let (Some(zc), Some(xc), Some(yc)) = (
            z.as_ref().col(j).try_as_col_major(),
            x.col(j).try_as_col_major(),
            y.as_mut().col_mut(j).try_as_col_major_mut(),
        ) else {
            return None;
        };
        let (zc, xc, yc) = (zc.as_slice(), xc.as_slice(), yc.as_slice_mut());
        // the label margins at the candidate (as `LogisticScratch::fill`)
        let r = e.label_ptr[j]..e.label_ptr[j + 1];
        for ((m, &i), &v) in margins[r.clone()]
            .iter_mut()
            .zip(&e.rows[r.clone()])
            .zip(&e.vals[r])
        {
            *m = v * (zc[i] + bias[i]);
        }
        // the feature loss (as `eval_with`'s loss-only pass)
        let range = j * d..(j + 1) * d;
        let (fx, fm) = (&fx_all[range.clone()], &fm_all[range]);
        for ((&zv, &xv), &mv) in zc[t..t + d].iter().zip(fx).zip(fm) {
            let r = (zv - xv) * mv;
            lx += 0.5 * r * r;
        }
        // the restart product and the extrapolation
        restart_column(yc, zc, xc, c2, &mut acc);
    }
    Some((lx, acc))
}

/// The adaptive restart test of accelerated FPC, ⟨y − z, z − x⟩ over the Z blocks and the
/// biases (all Z of the same shape, unit row stride), returned, and in the same pass the
/// extrapolation y ← z + c (z − x) written over y (each entry of y is read before it is
/// written).
pub(super) fn restart_product_extrapolate(
    mut y: MatMut<'_, f64>,
    yb: &mut [f64],
    (z, zb): (MatRef<'_, f64>, &[f64]),
    (x, xb): (MatRef<'_, f64>, &[f64]),
    c: f64,
) -> f64 {
    // four partial sums: the result only decides a restart
    let mut acc = [0.0; 4];
    for j in 0..z.ncols() {
        let (zc, xc) = (z.col(j), x.col(j));
        match (
            y.as_mut().col_mut(j).try_as_col_major_mut(),
            zc.try_as_col_major(),
            xc.try_as_col_major(),
        ) {
            (Some(yc), Some(zc), Some(xc)) => {
                let (yc, zc, xc) = (yc.as_slice_mut(), zc.as_slice(), xc.as_slice());
                restart_column(yc, zc, xc, c, &mut acc);
            }
            _ => {
                for i in 0..z.nrows() {
                    acc[0] += (y[(i, j)] - zc[i]) * (zc[i] - xc[i]);
                    y[(i, j)] = zc[i] + c * (zc[i] - xc[i]);
                }
            }
        }
    }
    acc.iter().sum::<f64>() + restart_bias(yb, zb, xb, c)
}

/// One column of [`restart_product_extrapolate`]: (y − z)(z − x) added to four partial sums
/// (lane l takes rows ≡ l mod 4, the tail lane 0) and y ← z + c (z − x), each entry of y read
/// before it is written.
#[inline(always)]
fn restart_column(yc: &mut [f64], zc: &[f64], xc: &[f64], c: f64, acc: &mut [f64; 4]) {
    let len = yc.len();
    let tail = len - len % 4;
    let mut chunks = yc
        .chunks_exact_mut(4)
        .zip(zc.chunks_exact(4))
        .zip(xc.chunks_exact(4));
    for ((y4, z4), x4) in &mut chunks {
        for l in 0..4 {
            acc[l] += (y4[l] - z4[l]) * (z4[l] - x4[l]);
            y4[l] = z4[l] + c * (z4[l] - x4[l]);
        }
    }
    for i in tail..len {
        acc[0] += (yc[i] - zc[i]) * (zc[i] - xc[i]);
        yc[i] = zc[i] + c * (zc[i] - xc[i]);
    }
}

/// The biases' part of [`restart_product_extrapolate`]: Σ (y − z)(z − x) in order, and
/// y ← z + c (z − x).
#[inline(always)]
pub(super) fn restart_bias(yb: &mut [f64], zb: &[f64], xb: &[f64], c: f64) -> f64 {
    let mut sum = 0.0;
    for ((v, &z), &x) in yb.iter_mut().zip(zb).zip(xb) {
        sum += (*v - z) * (z - x);
        *v = z + c * (z - x);
    }
    sum
}

/// out = a + c (b − d) entrywise (all of the same shape, unit row stride), column by column.
pub(super) fn add_scaled_diff(
    mut out: MatMut<'_, f64>,
    a: MatRef<'_, f64>,
    c: f64,
    b: MatRef<'_, f64>,
    d: MatRef<'_, f64>,
) {
    for j in 0..out.ncols() {
        let (ac, bc, dc) = (a.col(j), b.col(j), d.col(j));
        let slices = (
            ac.try_as_col_major(),
            bc.try_as_col_major(),
            dc.try_as_col_major(),
        );
        match (out.as_mut().col_mut(j).try_as_col_major_mut(), slices) {
            (Some(o), (Some(a), Some(b), Some(d))) => {
                let (o, a, b, d) = (o.as_slice_mut(), a.as_slice(), b.as_slice(), d.as_slice());
                for (((o, &a), &b), &d) in o.iter_mut().zip(a).zip(b).zip(d) {
                    *o = a + c * (b - d);
                }
            }
            _ => {
                for i in 0..out.nrows() {
                    out[(i, j)] = ac[i] + c * (bc[i] - dc[i]);
                }
            }
        }
    }
}
