//! The Hessian operator of a CG half-step with a sampled term ([`SampledHessian`]), its
//! Kronecker preconditioner built from the count-weighted Gram eigenbases
//! ([`PreconditionerBasis`], in `preconditioner`), and the row-space reduction of wide dense
//! sides ([`Reduced`]).

use std::cell::RefCell;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::cg::LinearOperator;
use gimc_linalg::dense::gram_tn;
use gimc_linalg::eig::sym_eig;
use gimc_linalg::faer;
use gimc_linalg::faer::linalg::matmul::triangular::BlockStructure;
use gimc_linalg::faer::{Mat, MatMut, MatRef};
use gimc_linalg::sums::{RowSums, sum_mat, sum_mat_mut, sum_scalar};
use gimc_linalg::thin::{THIN_MAX_COLS, thin_tr_mul_into};

use crate::Side;
use crate::kernel::{OmegaView, dense_row_gram_hessian, omega_gram_apply, row_gram_apply};

use super::preconditioner::PreconditionerBasis;
use super::problem::ImcProblem;

/// A wide dense side (D > n) in its row space: Φ = L Vᵀ with V (D × n) an orthonormal basis of
/// the row space and L = ΦV (n × n). A sampled ridge half-step's minimiser lies in span V
/// (the gradient is Φᵀ(·) + λW), so the half-step solves for α in W = Vα on the features L,
/// whose Hessian products cost 4n²k instead of 4nDk.
///
/// L is the Cholesky factor of the Gram ΦΦᵀ = L Lᵀ (set-up n²D for one triangle and n³/3),
/// with V = Φᵀ L⁻ᵀ, so ΦV = L and VᵀV = I, never formed: it is applied to the k columns of α or
/// W as a product with Φ and a triangular solve (2nDk + n²k). Cholesky QR loses orthogonality
/// as ε κ(Φ)², so it is used only while every pivot keeps L_ii² ≥ [`REDUCTION_PIVOT`] · max_i
/// (ΦΦᵀ)_ii (no row of Φ close to the span of the rows before it); otherwise one Householder QR
/// Φᵀ = V R (2nD·n, four to five times the cost at D = 3,200, n = 200) gives L = Rᵀ and V in
/// Householder form. Both give the same L up to the signs of its columns and rounding.
///
/// The half-step then runs in the eigenbasis E of the reduced count-weighted Gram
/// Lᵀ diag(c) L = E Λ Eᵀ (the Kronecker preconditioner's D-side basis, DESIGN §3.2): the
/// features are L E and the basis V E (still Φ = (LE)(VE)ᵀ with VE orthonormal), so the
/// preconditioner's D-side Gram is the diagonal Λ and each application costs 4·n·k² instead of
/// 4·n²·k + 4·n·k². CG is invariant under this orthogonal change of variables (the same
/// iterates and residual norms in exact arithmetic); it halves the n × n × k products per CG
/// iteration (two for the Hessian, none for the preconditioner) for one n³ product per
/// reduction.
#[derive(Debug)]
pub(super) struct Reduced<'a> {
    /// The features of the reduced half-step: L E (L when the basis is unavailable).
    pub(super) l: FeatureMatrix,
    /// The lower-triangular L of Φ = L Vᵀ.
    tri: Mat<f64>,
    pub(super) basis_v: ReducedBasis<'a>,
    /// E (n × n), when the features were rotated into the preconditioner's eigenbasis.
    rotation: Option<Mat<f64>>,
    /// The preconditioner basis of the rotated features: Λ, with the identity as eigenvectors.
    pub(super) basis: Option<PreconditionerBasis>,
}

/// Smallest accepted Cholesky pivot L_ii² of [`Reduced`], relative to the largest squared row
/// norm of Φ: up to it, Cholesky QR's loss of orthogonality stays near ε κ(Φ)² ≤ 1e-10.
const REDUCTION_PIVOT: f64 = 1e-6;

/// How [`Reduced`] applies V.
#[derive(Debug)]
pub(super) enum ReducedBasis<'a> {
    /// V = Φᵀ L⁻ᵀ.
    Cholesky(MatRef<'a, f64>),
    /// V in Householder form (the QR factors of Φᵀ).
    Householder(gimc_linalg::dense::HouseholderQr),
}

impl<'a> Reduced<'a> {
    /// The reduction of dense `phi` (n × D, D > n) with the line counts `counts` of its side
    /// (for the preconditioner basis of L); `None` when L is not finite.
    pub(super) fn new(phi: MatRef<'a, f64>, counts: &[f64]) -> Option<Self> {
        let (l, basis_v) = match Self::cholesky(phi) {
            Some(l) => (l, ReducedBasis::Cholesky(phi)),
            None => {
                let qr = gimc_linalg::dense::HouseholderQr::new(phi.transpose());
                let l = qr.thin_r().transpose().to_owned();
                (l, ReducedBasis::Householder(qr))
            }
        };
        let tri = FeatureMatrix::dense(l).ok()?;
        let basis = PreconditionerBasis::compute(Side::Features(&tri), counts);
        let FeatureMatrix::Dense(tri) = tri else {
            unreachable!("L is built dense")
        };
        let (l, rotation, basis) = match basis {
            Some(PreconditionerBasis {
                vals,
                vecs: Some(vecs),
            }) => {
                // L E on the triangle of L (half the flops of a full product); zero padding, as
                // the Hessian's GEMMs take it as their left operand
                let mut le = gimc_linalg::dense::zeros_padded(tri.nrows(), vecs.ncols());
                faer::linalg::matmul::triangular::matmul(
                    le.as_mut(),
                    BlockStructure::Rectangular,
                    faer::Accum::Replace,
                    tri.as_ref(),
                    BlockStructure::TriangularLower,
                    vecs.as_ref(),
                    BlockStructure::Rectangular,
                    1.0,
                    faer::get_global_parallelism(),
                );
                let diagonal = PreconditionerBasis { vals, vecs: None };
                (FeatureMatrix::dense(le).ok()?, Some(vecs), Some(diagonal))
            }
            basis => (FeatureMatrix::Dense(tri.clone()), None, basis),
        };
        Some(Self {
            l,
            tri,
            basis_v,
            rotation,
            basis,
        })
    }

    /// L with ΦΦᵀ = L Lᵀ when every pivot passes [`REDUCTION_PIVOT`].
    fn cholesky(phi: MatRef<'_, f64>) -> Option<Mat<f64>> {
        let g = gimc_linalg::dense::gram_tn_with(phi.transpose(), faer::get_global_parallelism());
        let largest = (0..g.nrows()).map(|i| g[(i, i)]).fold(0.0, f64::max);
        if !(largest.is_finite() && largest > 0.0) {
            return None;
        }
        let llt = g.llt(faer::Side::Lower).ok()?;
        let l = llt.L().to_owned();
        (0..l.nrows())
            .all(|i| l[(i, i)] * l[(i, i)] >= REDUCTION_PIVOT * largest)
            .then_some(l)
    }

    /// The reduced dimension n (columns of V).
    pub(super) fn dim(&self) -> usize {
        self.l.ncols()
    }

    /// The reduced features (L E, or L unrotated) as a dense matrix.
    #[cfg(test)]
    pub(super) fn l_dense(&self) -> MatRef<'_, f64> {
        match &self.l {
            FeatureMatrix::Dense(l) => l.as_ref(),
            FeatureMatrix::Sparse(_) => unreachable!("L is built dense"),
        }
    }

    /// y ← Q y, or y ← Qᵀ y when `transpose`, for the Householder sequence Q of `qr`.
    fn apply_q(
        qr: &gimc_linalg::dense::HouseholderQr,
        y: MatMut<'_, f64>,
        transpose: bool,
        par: faer::Par,
    ) {
        use faer::linalg::householder as hh;
        let mut buf = faer::dyn_stack::MemBuffer::new(
            hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                qr.basis().nrows(),
                qr.coeff().nrows(),
                y.ncols(),
            ),
        );
        let apply = if transpose {
            hh::apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj::<f64>
        } else {
            hh::apply_block_householder_sequence_on_the_left_in_place_with_conj::<f64>
        };
        apply(
            qr.basis(),
            qr.coeff(),
            faer::Conj::No,
            y,
            par,
            faer::dyn_stack::MemStack::new(&mut buf),
        );
    }

    /// Vᵀx (n × k) for x (D × k).
    pub(super) fn v_t_mul(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let par = faer::get_global_parallelism();
        match &self.basis_v {
            ReducedBasis::Cholesky(phi) => {
                // L⁻¹ (Φ x)
                let mut y = gimc_linalg::dense::zeros_padded(phi.nrows(), x.ncols());
                faer::linalg::matmul::matmul(y.as_mut(), faer::Accum::Replace, *phi, x, 1.0, par);
                faer::linalg::triangular_solve::solve_lower_triangular_in_place(
                    self.tri.as_ref(),
                    y.as_mut(),
                    par,
                );
                self.rotate_t(y)
            }
            ReducedBasis::Householder(qr) => {
                let mut y = x.to_owned();
                Self::apply_q(qr, y.as_mut(), true, par);
                self.rotate_t(y.subrows(0, self.dim()).to_owned())
            }
        }
    }

    /// Eᵀy (y itself without a rotation).
    fn rotate_t(&self, y: Mat<f64>) -> Mat<f64> {
        match &self.rotation {
            Some(e) => e.transpose() * y,
            None => y,
        }
    }

    /// Vα (D × k) for α (n × k), with V rotated (V E) when the features are.
    pub(super) fn v_mul(&self, alpha: MatRef<'_, f64>) -> Mat<f64> {
        let par = faer::get_global_parallelism();
        let rotated = self.rotation.as_ref().map(|e| e * alpha);
        let alpha = rotated.as_ref().map_or(alpha, |a| a.as_ref());
        match &self.basis_v {
            ReducedBasis::Cholesky(phi) => {
                // Φᵀ (L⁻ᵀ α)
                let mut z = alpha.to_owned();
                faer::linalg::triangular_solve::solve_upper_triangular_in_place(
                    self.tri.transpose(),
                    z.as_mut(),
                    par,
                );
                let mut y = Mat::<f64>::zeros(phi.ncols(), alpha.ncols());
                faer::linalg::matmul::matmul(
                    y.as_mut(),
                    faer::Accum::Replace,
                    phi.transpose(),
                    z.as_ref(),
                    1.0,
                    par,
                );
                y
            }
            ReducedBasis::Householder(qr) => {
                let mut y = Mat::<f64>::zeros(qr.basis().nrows(), alpha.ncols());
                y.as_mut().subrows_mut(0, self.dim()).copy_from(alpha);
                Self::apply_q(qr, y.as_mut(), false, par);
                y
            }
        }
    }
}

/// The Kronecker preconditioner bases (Φ side, Ψ side) of `problem`'s CG half-steps; `None` for
/// a side without dense features of dimension ≤ min(D_max, n) (D_max is
/// [`PRECONDITIONER_MAX_DIM`](super::PRECONDITIONER_MAX_DIM)), or for problems with a fully
/// observed term. Costs n·D² + O(D³) per side; when both sides have the same
/// features and counts (a symmetric Ω on X = Y), the basis is computed once and cloned.
pub fn preconditioner_bases(
    problem: &ImcProblem<'_>,
) -> (Option<PreconditionerBasis>, Option<PreconditionerBasis>) {
    let Some(t) = problem.sampled else {
        return (None, None);
    };
    if problem.full.is_some() {
        return (None, None);
    }
    let rows = OmegaView::rows(t.a).line_counts();
    let cols = OmegaView::cols(t.a).line_counts();
    let phi = PreconditionerBasis::compute(problem.phi, &rows);
    let same = rows == cols
        && match (problem.phi.features(), problem.psi.features()) {
            (Some(FeatureMatrix::Dense(a)), Some(FeatureMatrix::Dense(b))) => a == b,
            _ => false,
        };
    let psi = if same {
        phi.clone()
    } else {
        PreconditionerBasis::compute(problem.psi, &cols)
    };
    (phi, psi)
}

/// The Hessian of a half-step with a sampled term, on D × k directions S:
/// Φᵀ[w P_Ω((ΦS)Qᵀ) Q] + G S C + λS (DESIGN §3.2), with G = ΦᵀΦ and C = w_F QᵀQ when the
/// problem also has a fully observed term. Buffers for ΦS (as rows) and the Ω product are
/// allocated once per half-step and reused by every CG iteration. When `grams` holds the
/// per-line B_i = w Σ_{j∈Ω_i} q_j q_jᵀ (Q is fixed for the half-step), the Ω term is
/// u_i = B_i (ΦS)_i, and for dense Φ the whole product runs as one blocked pass over Φ
/// ([`dense_row_gram_hessian`]).
pub(super) struct SampledHessian<'s> {
    pub(super) grams: Option<Vec<f64>>,
    pub(super) side: &'s FeatureMatrix,
    pub(super) side_t: Option<&'s FeatureMatrix>,
    pub(super) view: OmegaView<'s>,
    pub(super) weight: f64,
    pub(super) qt: MatRef<'s, f64>,
    pub(super) full: Option<(MatRef<'s, f64>, MatRef<'s, f64>)>,
    pub(super) lambda: f64,
    pub(super) pt: RefCell<Mat<f64>>,
    pub(super) u: RefCell<Vec<f64>>,
    /// Sums the Ω part across the processes (each holds its own entries of Ω).
    pub(super) sums: &'s dyn RowSums,
}

impl SampledHessian<'_> {
    /// out = sideᵀ U with u_i the Ω part of line i (through the B_i when given), NaN when a
    /// product fails.
    fn omega_part(&self, s: MatRef<'_, f64>, mut out: MatMut<'_, f64>, n: usize, k: usize) {
        let Ok(t) = self.side.mul_dense(s) else {
            out.fill(f64::NAN);
            return;
        };
        let mut pt = self.pt.borrow_mut();
        pt.as_mut().copy_from(t.transpose());
        drop(t);
        let mut u = self.u.borrow_mut();
        match &self.grams {
            Some(grams) => row_gram_apply(grams, pt.as_ref(), &mut u),
            None => omega_gram_apply(self.view, pt.as_ref(), self.qt, self.weight, &mut u),
        }
        let um = MatRef::from_row_major_slice(&u, n, k);
        let g = match self.side_t {
            Some(st) => st.mul_dense(um),
            None => self.side.tr_mul_dense(um),
        };
        let Ok(g) = g else {
            out.fill(f64::NAN);
            return;
        };
        out.copy_from(&g);
    }
}

impl LinearOperator for SampledHessian<'_> {
    fn shape(&self) -> (usize, usize) {
        (self.side.ncols(), self.qt.nrows())
    }

    fn apply(&self, s: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let n = self.side.nrows();
        let k = self.qt.nrows();
        if let (Some(grams), FeatureMatrix::Dense(phi)) = (&self.grams, self.side) {
            dense_row_gram_hessian(phi.as_ref(), s, grams, out.as_mut());
        } else {
            self.omega_part(s, out.as_mut(), n, k);
        }
        // the Ω part is a sum over this process's entries; with the sum, every process holds
        // the whole product (a non-finite part reaches every process and stops CG everywhere)
        sum_mat_mut(self.sums, out.as_mut());
        faer::zip!(out.as_mut(), s).for_each(|faer::unzip!(o, s)| *o += self.lambda * *s);
        if let Some((gram, c)) = self.full {
            let sc = s * c;
            faer::linalg::matmul::matmul(
                out.as_mut(),
                faer::Accum::Add,
                gram,
                sc.as_ref(),
                1.0,
                faer::get_global_parallelism(),
            );
        }
    }
}

/// The Kronecker preconditioner of a sampled half-step (DESIGN §3.2). The Hessian on D × k
/// directions S is Σ_i φ_i φ_iᵀ S B_i + λS with B_i = w Σ_{j∈Ω_i} q_j q_jᵀ. When Ω is spread
/// evenly, B_i ≈ c_i B̄ with c_i = |Ω_i| and B̄ = (w/|Ω|) Σ_j c'_j q_j q_jᵀ (c'_j = the
/// entries of the other side's line j, so that Σ_i c_i B̄ = Σ_i B_i exactly), and the Hessian
/// is close to 𝓜(S) = G_c S B̄ + λS with G_c = Φᵀ diag(c) Φ. With G_c = V Λ Vᵀ and
/// B̄ = U M Uᵀ, 𝓜⁻¹(R) = V [(Vᵀ R U) ⊘ (Λ_a M_b + λ)] Uᵀ: 4·D²·k + 4·D·k² flops per
/// application. Preconditioned CG then stops on the same true residual as plain CG.
pub(super) struct KroneckerPreconditioner<'e> {
    g_vals: &'e [f64],
    /// V, or `None` when it is the identity (rotated features: 𝓜⁻¹(R) = (R U ⊘ ·) Uᵀ).
    g_vecs: Option<&'e Mat<f64>>,
    b_vecs: Mat<f64>,
    /// 1 / (Λ_a M_b + λ), D × k.
    inv_diag: Mat<f64>,
}

impl<'e> KroneckerPreconditioner<'e> {
    /// `None` when B̄ cannot be factorised or the spectrum gives no positive definite 𝓜.
    /// `q` and `other_counts` are the rows of the other side this process holds: `sums` adds
    /// the total count and the k × k Gram of B̄ across the processes (pass
    /// [`ONE_PROCESS`] when they are whole on every process).
    pub(super) fn new(
        eig: &'e PreconditionerBasis,
        q: MatRef<'_, f64>,
        other_counts: &[f64],
        weight: f64,
        lambda: f64,
        sums: &dyn RowSums,
    ) -> Option<Self> {
        let (g_vals, g_vecs) = (&eig.vals, eig.vecs.as_ref());
        let total: f64 = sum_scalar(sums, other_counts.iter().sum());
        if total <= 0.0 || q.nrows() != other_counts.len() {
            return None;
        }
        let s = weight / total;
        let scaled = Mat::from_fn(q.nrows(), q.ncols(), |j, a| {
            (s * other_counts[j]).sqrt() * q[(j, a)]
        });
        let mut b_bar = gram_tn(scaled.as_ref());
        sum_mat(sums, &mut b_bar);
        let (b_vals, b_vecs) = sym_eig(b_bar.as_ref()).ok()?;
        let top = g_vals.iter().fold(0.0f64, |m, &v| m.max(v.abs()))
            * b_vals.iter().fold(0.0f64, |m, &v| m.max(v.abs()));
        let floor = (top * 1e-12).max(f64::MIN_POSITIVE);
        let inv_diag = Mat::from_fn(g_vals.len(), b_vals.len(), |a, b| {
            1.0 / (g_vals[a].max(0.0) * b_vals[b].max(0.0) + lambda).max(floor)
        });
        Some(Self {
            g_vals,
            g_vecs,
            b_vecs,
            inv_diag,
        })
    }
}

impl LinearOperator for KroneckerPreconditioner<'_> {
    fn shape(&self) -> (usize, usize) {
        (self.g_vals.len(), self.b_vecs.nrows())
    }

    fn apply(&self, r: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let Some(g_vecs) = self.g_vecs else {
            let mut t = r * &self.b_vecs;
            faer::zip!(t.as_mut(), self.inv_diag.as_ref()).for_each(|faer::unzip!(t, d)| *t *= *d);
            out.copy_from(t * self.b_vecs.transpose());
            return;
        };
        // Vᵀ R with thin R (k ≤ 8) without packing V (`gimc_linalg::thin`); else a GEMM
        let mut vt_r = Mat::<f64>::zeros(g_vecs.ncols(), r.ncols());
        let thin = r.ncols() <= THIN_MAX_COLS
            && thin_tr_mul_into(g_vecs.as_ref(), r, vt_r.as_mut()).is_ok();
        if !thin {
            vt_r = g_vecs.transpose() * r;
        }
        let mut t = vt_r * &self.b_vecs;
        faer::zip!(t.as_mut(), self.inv_diag.as_ref()).for_each(|faer::unzip!(t, d)| *t *= *d);
        out.copy_from(g_vecs * t * self.b_vecs.transpose());
    }
}
