//! The IMC factors W, H (the state of every IMC solver), how they start without a warm start,
//! and the rank they may have.

use gimc_linalg::faer::Mat;

use crate::SolverError;
use crate::error::param_err;

/// How W, H are initialised when no warm start is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImcInit {
    /// H from the top-k right singular vectors of Φᵀ A Ψ (a D_x × D_y operator, never formed),
    /// W from the left ones, scaled by √σ and then by the scalar that minimises the loss along
    /// ΦWHᵀΨᵀ; the classical spectral start of provable IMC / MC.
    #[default]
    Spectral,
    /// Independent N(0, 1/D) entries.
    Random,
}

/// Checks 1 ≤ k < min(D_x, D_y).
pub(crate) fn check_rank(rank: usize, dx: usize, dy: usize) -> Result<(), SolverError> {
    let m = dx.min(dy);
    if rank == 0 || rank >= m {
        return Err(param_err(
            "rank",
            format!("must satisfy 1 <= rank < min(D_x, D_y) = {m}, got {rank}"),
        ));
    }
    Ok(())
}

/// The IMC factors, the state of [`ImcAls`](super::ImcAls).
#[derive(Debug, Clone, PartialEq)]
pub struct ImcFactors {
    /// W (D_x × k).
    pub w: Mat<f64>,
    /// H (D_y × k).
    pub h: Mat<f64>,
}
