//! Data-parallel fits: every process holds a shard of the rows, and every quantity the fast path
//! needs from the rows is a sum (ΦᵀΦ, AᵀΦ, ‖A‖², the map gradient, the validation hits; see
//! [`crate::Storage`]), so a fit on shards is the fit on their union once those sums are summed
//! across the processes. What comes after the sums (the W-step, the objective, the line-search
//! and stopping decisions, the best-iterate choice) is small dense work that every process
//! repeats on identical numbers, so every process takes the same decisions.
//!
//! The one operation this needs, [`RowSums::sum`], is defined in `gimc_linalg::sums` (k-means
//! shards its rows the same way); the command line implements it with MPI (`gimc-cli`'s `mpi`
//! feature), and [`OneProcess`] is the identity.

pub(crate) use gimc_linalg::sums::{ONE_PROCESS, sum_mat, sum_scalar};
pub use gimc_linalg::sums::{OneProcess, RowSums};
