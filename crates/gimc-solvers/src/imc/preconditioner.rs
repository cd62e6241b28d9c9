//! The D × D half of the Kronecker preconditioner of the CG half-steps: the eigenbasis of one
//! side's count-weighted Gram ([`PreconditionerBasis`]).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::gram_tn;
use gimc_linalg::eig::sym_eig;
use gimc_linalg::faer::Mat;
use gimc_linalg::sums::{ONE_PROCESS, RowSums, sum_mat, sum_scalar};

use crate::Side;

/// Largest feature dimension D for which the half-steps build the Kronecker preconditioner: its
/// set-up is one n·D² Gram and one D × D eigendecomposition per map, and each application costs
/// 4·D²·k, against the 4·n·D·k of a Hessian product.
pub const PRECONDITIONER_MAX_DIM: usize = 2048;

/// The eigendecomposition G_c = V Λ Vᵀ of one side's count-weighted Gram Φᵀ diag(c) Φ
/// (c_i = the observed entries in line i of Ω): the D × D half of the Kronecker preconditioner
/// of the CG half-steps (DESIGN §3.2). It depends on the features and the pattern of Ω only, not
/// on λ or the factors, so one basis serves every half-step of a fit and, slightly stale, the
/// fits that follow a small change of the features.
#[derive(Debug, Clone)]
pub struct PreconditionerBasis {
    pub(super) vals: Vec<f64>,
    /// V, or `None` for the identity: the features are already in the eigenbasis (the rotated
    /// features of [`Reduced`], whose G_c is the diagonal Λ).
    pub(super) vecs: Option<Mat<f64>>,
}

impl PreconditionerBasis {
    /// The feature dimension D.
    pub fn dim(&self) -> usize {
        self.vals.len()
    }

    /// G_c for dense `phi` and line counts `counts`, or `None` when the side is not dense, D
    /// exceeds [`PRECONDITIONER_MAX_DIM`] or the number of rows n, or the eigendecomposition
    /// fails.
    pub(super) fn compute(side: Side<'_>, counts: &[f64]) -> Option<Self> {
        Self::compute_sharded(side, counts, &ONE_PROCESS)
    }

    /// [`PreconditionerBasis::compute`] when `side` holds this process's rows of the features
    /// (and `counts` their line counts): G_c and the row count n are summed across the
    /// processes of `sums` before the eigendecomposition, so every process gets the same basis.
    /// Every process must call it with the same kind of features (the decisions before the sums
    /// depend on that only).
    pub(super) fn compute_sharded(
        side: Side<'_>,
        counts: &[f64],
        sums: &dyn RowSums,
    ) -> Option<Self> {
        let Some(FeatureMatrix::Dense(phi)) = side.features() else {
            return None;
        };
        let n_total = sum_scalar(sums, phi.nrows() as f64);
        // D > n: G_c has rank ≤ n and its O(D³) factorisation outweighs many Hessian products
        if phi.ncols() as f64 > (PRECONDITIONER_MAX_DIM as f64).min(n_total)
            || counts.len() != phi.nrows()
        {
            return None;
        }
        // G_c = Σ over row blocks of (√c Φ_blk)ᵀ(√c Φ_blk): a scaled block at a time, never a
        // second n × D copy of Φ
        const BLOCK: usize = 1024;
        let (n, d) = (phi.nrows(), phi.ncols());
        let mut g = Mat::<f64>::zeros(d, d);
        for r0 in (0..n).step_by(BLOCK) {
            let len = BLOCK.min(n - r0);
            let blk = Mat::from_fn(len, d, |i, c| counts[r0 + i].sqrt() * phi[(r0 + i, c)]);
            g += gram_tn(blk.as_ref());
        }
        sum_mat(sums, &mut g);
        let (vals, vecs) = sym_eig(g.as_ref()).ok()?;
        Some(Self {
            vals,
            vecs: Some(vecs),
        })
    }
}
