//! A fitted IMC model ([`ImcModel`]) and its predictions: entries, score rows and top-k
//! lists of Â = Φ W Hᵀ Ψᵀ.

use gimc_linalg::faer::Mat;
use rayon::prelude::*;

use crate::error::dim_err;
use crate::iter::StopReason;
use crate::{Side, SolverError};

/// A fitted (inductive) matrix-completion model Â = Φ W Hᵀ Ψᵀ.
#[derive(Debug, Clone, PartialEq)]
pub struct ImcModel {
    /// W (D_x × k).
    pub w: Mat<f64>,
    /// H (D_y × k).
    pub h: Mat<f64>,
    /// Objective after initialisation and after every iteration.
    pub objective_trace: Vec<f64>,
    /// Iterations performed.
    pub iterations: usize,
    /// Why the solver stopped.
    pub stop_reason: StopReason,
}

impl ImcModel {
    /// The rank k (columns of W and H).
    pub fn rank(&self) -> usize {
        self.w.ncols()
    }

    fn projected(&self, phi: Side<'_>, psi: Side<'_>) -> Result<(Mat<f64>, Mat<f64>), SolverError> {
        if phi.dim() != self.w.nrows() {
            return Err(dim_err(
                "row features for prediction",
                format!("{} columns (D_x)", self.w.nrows()),
                format!("{}", phi.dim()),
            ));
        }
        if psi.dim() != self.h.nrows() {
            return Err(dim_err(
                "column features for prediction",
                format!("{} columns (D_y)", self.h.nrows()),
                format!("{}", psi.dim()),
            ));
        }
        phi.check_finite("row features for prediction")?;
        psi.check_finite("column features for prediction")?;
        Ok((phi.mul(self.w.as_ref())?, psi.mul(self.h.as_ref())?))
    }

    /// Â_ij = (φ_i W)·(ψ_j H) for every pair (i, j), i indexing rows of `phi`, j rows of `psi`
    /// (new, unseen rows are fine: this is inductive prediction). Out-of-range pairs are
    /// errors.
    pub fn predict_entries(
        &self,
        phi: Side<'_>,
        psi: Side<'_>,
        pairs: &[(usize, usize)],
    ) -> Result<Vec<f64>, SolverError> {
        let (p, q) = self.projected(phi, psi)?;
        Ok(gimc_linalg::dense::row_pair_dots(
            p.as_ref(),
            q.as_ref(),
            pairs,
        )?)
    }

    /// Scores of the rows of `phi_rows` against every column: (Φ_rows W)(ΨH)ᵀ, a dense
    /// rows × n_y matrix. Call it on a block of rows (see [`ImcModel::top_k_for_rows`]).
    pub fn scores_for_rows(
        &self,
        phi_rows: Side<'_>,
        psi: Side<'_>,
    ) -> Result<Mat<f64>, SolverError> {
        let (p, q) = self.projected(phi_rows, psi)?;
        Ok(&p * q.transpose())
    }

    /// The `top` highest-scoring columns of every row of `phi_rows`, best first (ties broken
    /// by the lower column index): the multi-label prediction of DESIGN §3.3. Scores are
    /// computed in row blocks of at most ~4M entries, so no rows × n_y matrix is formed.
    pub fn top_k_for_rows(
        &self,
        phi_rows: Side<'_>,
        psi: Side<'_>,
        top: usize,
    ) -> Result<Vec<Vec<usize>>, SolverError> {
        let (p, q) = self.projected(phi_rows, psi)?;
        let (n, ny) = (p.nrows(), q.nrows());
        let top = top.min(ny);
        let block = ((1usize << 22) / ny.max(1)).clamp(1, n.max(1));
        let mut out = Vec::with_capacity(n);
        let mut lo = 0;
        while lo < n {
            let hi = (lo + block).min(n);
            let scores = p.as_ref().subrows(lo, hi - lo) * q.transpose();
            let rows: Vec<Vec<usize>> = (0..hi - lo)
                .into_par_iter()
                .map(|r| top_indices(scores.row(r).iter().copied().collect(), top))
                .collect();
            out.extend(rows);
            lo = hi;
        }
        Ok(out)
    }
}

/// Indices of the `top` largest values, best first, ties by lower index; NaN ranks last.
pub(super) fn top_indices(scores: Vec<f64>, top: usize) -> Vec<usize> {
    let cmp = |a: &usize, b: &usize| {
        let (x, y) = (scores[*a], scores[*b]);
        match (x.is_nan(), y.is_nan()) {
            (true, true) => a.cmp(b),
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            (false, false) => y.total_cmp(&x).then(a.cmp(b)),
        }
    };
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    if top == 0 {
        return Vec::new();
    }
    if top < idx.len() {
        idx.select_nth_unstable_by(top - 1, cmp);
        idx.truncate(top);
    }
    idx.sort_by(cmp);
    idx
}
