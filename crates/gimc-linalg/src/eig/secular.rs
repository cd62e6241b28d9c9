//! Eigenvalues of a diagonal matrix plus a symmetric rank-two term by secular equations:
//! O(n²) instead of the O(n³) of a tridiagonalisation.
//!
//! D + a bᵀ + b aᵀ = D + p pᵀ − r rᵀ with p, r = (a/t ± t b)/√2 (t² = ‖a‖/‖b‖ balances the two).
//! The eigenvalues e of E = D + p pᵀ are the roots of 1 + Σ p_i²/(d_i − λ) (Golub 1973), one
//! between consecutive poles and the last above the largest; E's eigenvectors
//! (D − e_j)⁻¹ p̂ with Gu & Eisenstat's p̂ (1994), rebuilt from the computed roots so that they
//! are orthogonal to working precision, give y = Vᵀ r; the eigenvalues of diag(e) − y yᵀ are then
//! minus those of −diag(e) + y yᵀ, the same equation again. Each root is found from the nearer
//! pole (every d_i − λ is formed from the shifted poles without cancellation) by the rational
//! two-pole model of Bunch, Nielsen & Sorensen (1978), safeguarded by bisection of a bracket on
//! which the secular function changes sign. Deflation as LAPACK's `dlaed2`: a weight below
//! 8ε max(‖D‖, ‖p‖²) leaves its pole an eigenvalue, and two poles closer than that are rotated
//! so that one of them does (the rotation is applied to r as well). The eigenvalues carry an
//! absolute error of O(ε (‖D‖ + ‖a‖ ‖b‖)), as a symmetric QR's would.

use crate::error::dim_err;
use crate::{LinalgError, Result};

/// Iteration cap per root. The rational steps converge in a handful (about 3.3 per root on a
/// k = 118 core); the cap only bounds the bisection fallback, whose 200 halvings shrink any
/// bracket by 2⁻²⁰⁰.
const MAX_ROOT_ITERS: usize = 200;

/// Eigenvalues (ascending) of diag(`d`) + `a` `b`ᵀ + `b` `a`ᵀ.
///
/// ```
/// use gimc_linalg::eig::diag_rank_two_eigenvalues;
///
/// // diag(1, 2) + e₁e₂ᵀ + e₂e₁ᵀ = [[1, 1], [1, 2]]: (3 ∓ √5)/2, to a few ε ‖M‖
/// let vals = diag_rank_two_eigenvalues(&[1.0, 2.0], &[1.0, 0.0], &[0.0, 1.0])?;
/// assert!((vals[0] - (3.0 - 5f64.sqrt()) / 2.0).abs() < 1e-14);
/// assert!((vals[1] - (3.0 + 5f64.sqrt()) / 2.0).abs() < 1e-14);
/// # Ok::<(), gimc_linalg::LinalgError>(())
/// ```
pub fn diag_rank_two_eigenvalues(d: &[f64], a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    let n = d.len();
    for (name, v) in [("a", a), ("b", b)] {
        if v.len() != n {
            return Err(dim_err(
                "diag_rank_two_eigenvalues",
                format!("{name} of length {n}"),
                format!("length {}", v.len()),
            ));
        }
    }
    for (col, v) in [d, a, b].iter().enumerate() {
        if let Some((row, &value)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(LinalgError::NonFinite { row, col, value });
        }
    }
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        let mut vals = d.to_vec();
        vals.sort_by(f64::total_cmp);
        return Ok(vals);
    }
    let t = (na / nb).sqrt();
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let p: Vec<f64> = a.iter().zip(b).map(|(x, y)| h * (x / t + t * y)).collect();
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| h * (x / t - t * y)).collect();
    // E = D + p pᵀ and r in E's eigenbasis
    let (e, y) = rank_one_update(d, &p, Some(&r));
    // diag(e) − y yᵀ = −(−diag(e) + y yᵀ)
    let neg: Vec<f64> = e.iter().map(|v| -v).collect();
    let (nu, _) = rank_one_update(&neg, &y, None);
    let mut vals: Vec<f64> = nu.iter().map(|v| -v).collect();
    vals.sort_by(f64::total_cmp);
    Ok(vals)
}

/// One root of a secular equation, λ = d[origin] + tau, kept relative to the nearer pole.
#[derive(Debug, Clone, Copy)]
struct Root {
    origin: usize,
    tau: f64,
}

/// The eigenvalues of diag(`d`) + z zᵀ (in no particular order) and, with `r`, the
/// components of `r` along the matching eigenvectors.
fn rank_one_update(d: &[f64], z: &[f64], r: Option<&[f64]>) -> (Vec<f64>, Vec<f64>) {
    let n = d.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| d[i].total_cmp(&d[j]));
    let mut ds: Vec<f64> = order.iter().map(|&i| d[i]).collect();
    let mut zs: Vec<f64> = order.iter().map(|&i| z[i]).collect();
    let mut rs: Vec<f64> = r.map_or_else(Vec::new, |r| order.iter().map(|&i| r[i]).collect());
    let with_r = r.is_some();
    let z2: f64 = zs.iter().map(|v| v * v).sum();
    let dmax = ds.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let tol = 8.0 * f64::EPSILON * dmax.max(z2);
    let znorm = z2.sqrt();
    let mut values = Vec::with_capacity(n);
    let mut along = Vec::with_capacity(if with_r { n } else { 0 });
    // deflation (LAPACK dlaed2): `prev` is the last pole kept so far, not yet committed
    let mut keep: Vec<usize> = Vec::with_capacity(n);
    let mut prev: Option<usize> = None;
    for i in 0..n {
        if znorm * zs[i].abs() <= tol {
            values.push(ds[i]);
            if with_r {
                along.push(rs[i]);
            }
            continue;
        }
        if let Some(p) = prev {
            let rho = zs[p].hypot(zs[i]);
            let (c, s) = (zs[i] / rho, -zs[p] / rho);
            if ((ds[i] - ds[p]) * c * s).abs() <= tol {
                // rotate (p, i) so that p's weight vanishes: p is then an eigenvalue
                zs[i] = rho;
                zs[p] = 0.0;
                let dp = ds[p] * c * c + ds[i] * s * s;
                ds[i] = ds[p] * s * s + ds[i] * c * c;
                ds[p] = dp;
                values.push(dp);
                if with_r {
                    let (rp, ri) = (rs[p], rs[i]);
                    rs[p] = c * rp + s * ri;
                    rs[i] = c * ri - s * rp;
                    along.push(rs[p]);
                }
                prev = Some(i);
                continue;
            }
            keep.push(p);
        }
        prev = Some(i);
    }
    keep.extend(prev);
    let k = keep.len();
    if k == 0 {
        return (values, along);
    }
    let dk: Vec<f64> = keep.iter().map(|&i| ds[i]).collect();
    let w: Vec<f64> = keep.iter().map(|&i| zs[i] * zs[i]).collect();
    let wsum: f64 = w.iter().sum();
    let mut shifted = vec![0.0; k];
    let mut roots = Vec::with_capacity(k);
    crate::simd::with_avx2(|| {
        for j in 0..k {
            let root = secular_root(&dk, &w, wsum, j, &mut shifted);
            values.push(dk[root.origin] + root.tau);
            roots.push(root);
        }
    });
    if with_r {
        crate::simd::with_avx2(|| project(&dk, &roots, &keep, &zs, &rs, &mut shifted, &mut along));
    }
    (values, along)
}

/// r's components along the eigenvectors of the non-deflated D + z zᵀ (poles `dk`, the
/// kept positions `keep` of `zs` and `rs`), appended to `along`: with Gu & Eisenstat's
/// ẑ_i² = −Π_j (d_i − λ_j) / Π_{j≠i} (d_i − d_j), eigenvector j is (D − λ_j)⁻¹ ẑ normalised.
#[inline(always)]
fn project(
    dk: &[f64],
    roots: &[Root],
    keep: &[usize],
    zs: &[f64],
    rs: &[f64],
    shifted: &mut [f64],
    along: &mut Vec<f64>,
) {
    let k = dk.len();
    // d_i − λ_j without cancellation
    let delta = |i: usize, j: usize| (dk[i] - dk[roots[j].origin]) - roots[j].tau;
    let zhat: Vec<f64> = (0..k)
        .map(|i| {
            let mut prod = delta(i, i);
            for j in (0..k).filter(|&j| j != i) {
                prod *= delta(i, j) / (dk[i] - dk[j]);
            }
            (-prod).max(0.0).sqrt().copysign(zs[keep[i]])
        })
        .collect();
    let zr: Vec<f64> = zhat.iter().zip(keep).map(|(z, &i)| z * rs[i]).collect();
    let zz: Vec<f64> = zhat.iter().map(|z| z * z).collect();
    for root in roots {
        for (s, &di) in shifted.iter_mut().zip(dk) {
            *s = di - dk[root.origin];
        }
        let (num, den) = inverse_sums(shifted, &zr, &zz, root.tau);
        along.push(if den > 0.0 { num / den.sqrt() } else { 0.0 });
    }
}

/// Σ u_i/δ_i and Σ w_i/δ_i² over δ_i = s_i − τ, in four lanes (vectorised under
/// [`with_avx2`](crate::simd::with_avx2)): the secular function and its slope (u = w), or r's
/// component along an eigenvector and its norm (u = ẑ r, w = ẑ²).
#[inline(always)]
fn inverse_sums(shifted: &[f64], u: &[f64], w: &[f64], tau: f64) -> (f64, f64) {
    let (mut f, mut g) = ([0.0; 4], [0.0; 4]);
    let mut sc = shifted.chunks_exact(4);
    let mut uc = u.chunks_exact(4);
    let mut wc = w.chunks_exact(4);
    for ((s, u), w) in (&mut sc).zip(&mut uc).zip(&mut wc) {
        for l in 0..4 {
            let inv = 1.0 / (s[l] - tau);
            f[l] += u[l] * inv;
            g[l] += w[l] * inv * inv;
        }
    }
    let (mut fs, mut gs) = ((f[0] + f[1]) + (f[2] + f[3]), (g[0] + g[1]) + (g[2] + g[3]));
    for ((&s, &u), &w) in sc
        .remainder()
        .iter()
        .zip(uc.remainder())
        .zip(wc.remainder())
    {
        let inv = 1.0 / (s - tau);
        fs += u * inv;
        gs += w * inv * inv;
    }
    (fs, gs)
}

/// The root of 1 + Σ w_i/(d_i − λ) = 0 between d_j and d_{j+1} (above d_j for the last j),
/// with `d` strictly ascending and every w_i > 0. `shifted` is scratch of length d.len().
#[inline(always)]
fn secular_root(d: &[f64], w: &[f64], wsum: f64, j: usize, shifted: &mut [f64]) -> Root {
    let n = d.len();
    let last = j + 1 == n;
    let gap = if last { 0.0 } else { d[j + 1] - d[j] };
    for (s, &di) in shifted.iter_mut().zip(d) {
        *s = di - d[j];
    }
    // τ = λ − d[origin], bracketed by [lo, hi]; the function increases with τ
    let (origin, mut lo, mut hi, start) = if last {
        (j, 0.0, wsum, wsum)
    } else {
        // at the interval's middle: its sign says which pole is nearer, and the model below
        // gives the first iterate
        let mid = 0.5 * gap;
        let (psi, dpsi) = inverse_sums(&shifted[..=j], &w[..=j], &w[..=j], mid);
        let (phi, dphi) = inverse_sums(&shifted[j + 1..], &w[j + 1..], &w[j + 1..], mid);
        let (q1, q2) = (dpsi * mid * mid, dphi * mid * mid);
        let c = 1.0 + psi + q1 / mid + phi - q2 / mid;
        if 1.0 + psi + phi >= 0.0 {
            (j, 0.0, mid, model_left(c, q1, q2, gap))
        } else {
            for (s, &di) in shifted.iter_mut().zip(d) {
                *s = di - d[j + 1];
            }
            (j + 1, -mid, 0.0, -model_right(c, q1, q2, gap))
        }
    };
    let mut tau = if start > lo && start < hi {
        start
    } else {
        0.5 * (lo + hi)
    };
    for _ in 0..MAX_ROOT_ITERS {
        // ψ over the poles at or left of d_j, φ over the rest, with derivatives
        let (psi, dpsi) = inverse_sums(&shifted[..=j], &w[..=j], &w[..=j], tau);
        let (phi, dphi) = inverse_sums(&shifted[j + 1..], &w[j + 1..], &w[j + 1..], tau);
        let f = 1.0 + psi + phi;
        if f.abs() <= 4.0 * f64::EPSILON * n as f64 * (1.0 + psi.abs() + phi.abs()) {
            break;
        }
        if f < 0.0 {
            lo = tau;
        } else {
            hi = tau;
        }
        // ψ ≈ p1 − q1/L and φ ≈ p2 + q2/R, with L = λ − d_j and R = d_{j+1} − λ, matching
        // value and slope at τ; the model's root
        let l = tau - shifted[j];
        let q1 = dpsi * l * l;
        let next = if last {
            shifted[j] + q1 / (1.0 + psi + q1 / l)
        } else {
            let r = shifted[j + 1] - tau;
            let q2 = dphi * r * r;
            let c = 1.0 + psi + q1 / l + phi - q2 / r;
            if origin == j {
                model_left(c, q1, q2, gap)
            } else {
                -model_right(c, q1, q2, gap)
            }
        };
        let next = if next > lo && next < hi {
            next
        } else {
            0.5 * (lo + hi)
        };
        if next == tau || hi - lo <= 2.0 * f64::EPSILON * lo.abs().max(hi.abs()) {
            tau = next;
            break;
        }
        tau = next;
    }
    Root { origin, tau }
}

/// The root L in (0, Δ) of C − q1/L + q2/(Δ − L) = 0 (q1, q2 > 0), i.e. of
/// C L² − (C Δ + q1 + q2) L + q1 Δ = 0, in the form without cancellation.
#[inline(always)]
fn model_left(c: f64, q1: f64, q2: f64, gap: f64) -> f64 {
    let b = c * gap + q1 + q2;
    2.0 * q1 * gap / (b + (b * b - 4.0 * c * q1 * gap).max(0.0).sqrt())
}

/// The same equation's root as R = Δ − L in (0, Δ), for a root near the right pole.
#[inline(always)]
fn model_right(c: f64, q1: f64, q2: f64, gap: f64) -> f64 {
    let b = q1 + q2 - c * gap;
    2.0 * q2 * gap / (b + (b * b + 4.0 * c * q2 * gap).max(0.0).sqrt())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::eig::sym_eig_seq;
    use crate::rng::seeded;
    use faer::Mat;
    use rand::Rng;

    fn dense_eigenvalues(d: &[f64], a: &[f64], b: &[f64]) -> Vec<f64> {
        let n = d.len();
        let m = Mat::from_fn(n, n, |i, j| {
            (if i == j { d[i] } else { 0.0 }) + a[i] * b[j] + b[i] * a[j]
        });
        sym_eig_seq(m.as_ref(), false).unwrap().0
    }

    fn assert_close(d: &[f64], a: &[f64], b: &[f64], what: &str) {
        let got = diag_rank_two_eigenvalues(d, a, b).unwrap();
        let want = dense_eigenvalues(d, a, b);
        let scale = d.iter().fold(0.0f64, |m, v| m.max(v.abs()))
            + a.iter().map(|x| x * x).sum::<f64>().sqrt()
                * b.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-12 * scale.max(1e-300),
                "{what}: {g} vs {w} (scale {scale})\n{got:?}\n{want:?}"
            );
        }
    }

    #[test]
    fn matches_a_dense_eigensolver() {
        let mut rng = seeded(11);
        for n in [1, 2, 3, 7, 40, 119] {
            for case in 0..4 {
                let mut d: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 10.0).collect();
                let mut a: Vec<f64> = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
                let b: Vec<f64> = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
                match case {
                    // graded poles, as the squared singular values of an FPC iterate
                    1 => d
                        .iter_mut()
                        .enumerate()
                        .for_each(|(i, v)| *v = 10f64.powi(-(i as i32) / 4)),
                    // repeated poles and zero weights
                    2 => {
                        for i in (0..n).step_by(3) {
                            d[i] = 1.0;
                            a[i] = 0.0;
                        }
                        if n > 1 {
                            d[n - 1] = 0.0;
                        }
                    }
                    // a ∥ b: a rank-one term, all of p or all of r
                    3 => a.iter_mut().zip(&b).for_each(|(x, y)| *x = 2.5 * y),
                    _ => {}
                }
                assert_close(&d, &a, &b, &format!("n = {n}, case {case}"));
            }
        }
    }

    #[test]
    fn the_mc1_core_shape() {
        // diag(s², 0) + q̂ŵᵀ + ŵq̂ᵀ + γ q̂q̂ᵀ with ‖q̂‖ = 1, written as a bᵀ + b aᵀ
        let mut rng = seeded(12);
        let k: usize = 60;
        let s: Vec<f64> = (0..k)
            .map(|i| 50.0 * 0.9f64.powi(i as i32) + 1e-3)
            .collect();
        let mut q: Vec<f64> = (0..=k).map(|_| rng.random::<f64>() - 0.5).collect();
        let nq = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        q.iter_mut().for_each(|x| *x /= nq);
        let gamma = 300.0;
        let mut d: Vec<f64> = s.iter().map(|v| v * v).collect();
        d.push(0.0);
        let a: Vec<f64> = (0..=k)
            .map(|i| {
                (if i < k {
                    s[i] * (rng.random::<f64>() - 0.5)
                } else {
                    0.0
                }) + 0.5 * gamma * q[i]
            })
            .collect();
        assert_close(&d, &a, &q, "mc1 core");
        let vals = diag_rank_two_eigenvalues(&d, &a, &q).unwrap();
        // the core is positive semi-definite up to rounding
        assert!(vals[0] >= -1e-10 * vals[k]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(diag_rank_two_eigenvalues(&[1.0, 2.0], &[1.0], &[0.0, 1.0]).is_err());
        assert!(diag_rank_two_eigenvalues(&[1.0, f64::NAN], &[1.0, 0.0], &[0.0, 1.0]).is_err());
        assert_eq!(
            diag_rank_two_eigenvalues(&[], &[], &[]).unwrap(),
            Vec::<f64>::new()
        );
        // a zero term leaves the diagonal
        assert_eq!(
            diag_rank_two_eigenvalues(&[3.0, 1.0], &[0.0, 0.0], &[1.0, 1.0]).unwrap(),
            vec![1.0, 3.0]
        );
    }
}
