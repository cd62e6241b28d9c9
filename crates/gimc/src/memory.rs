//! Memory pre-flight of the fitting paths: peak-memory estimates from shapes and
//! parameters, checked before anything large is allocated (see [`gimc_linalg::memory`]).
//!
//! The estimates count the arrays a path holds at its peak, 8 bytes per `f64` (CSR: 16 bytes
//! per stored entry plus the row pointer), plus [`PROCESS_BASE_BYTES`] for the process itself
//! (code, thread stacks, allocator arenas, the GEMM workspaces). They are meant to be within a
//! factor of 2 of the measured peak resident set size; the arithmetic saturates, so a size
//! that does not fit in 64 bits is refused rather than wrapped.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::memory::{Tally, csr_bytes, mat_bytes};
use gimc_linalg::sprs::CsMat;

/// The process's own footprint counted in every estimate: code and static data, one 2 MiB
/// stack and GEMM workspace per thread, allocator arenas (measured: `gimc fit` of a 10-row
/// file peaks at about 20 MiB resident).
pub const PROCESS_BASE_BYTES: u64 = 24 << 20;

/// Bytes held by a feature matrix (dense n·d, or CSR).
pub(crate) fn feature_bytes(x: &FeatureMatrix) -> u64 {
    if x.is_sparse() {
        csr_bytes(x.nrows(), x.nnz())
    } else {
        mat_bytes(x.nrows(), x.ncols())
    }
}

/// Bytes held by a CSR matrix.
pub(crate) fn sparse_bytes(a: &CsMat<f64>) -> u64 {
    csr_bytes(a.rows(), a.nnz())
}

/// Bytes of an observed set Ω with `nnz` entries on `rows × cols` (CSR values and column
/// indices, the CSC permutation and row indices, both pointers; saturating).
pub(crate) fn observed_bytes(rows: usize, cols: usize, nnz: usize) -> u64 {
    (nnz as u64).saturating_mul(32).saturating_add(
        (rows as u64)
            .saturating_add(cols as u64)
            .saturating_add(2)
            .saturating_mul(8),
    )
}

/// One side of a completion fit: n rows, input dimension d, map size m, feature dimension D.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side {
    pub rows: usize,
    pub features: usize,
    pub m: usize,
    pub dim: usize,
    pub learn: bool,
}

/// Shapes of one general-Ω completion fit (`fit_completion`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompletionShape {
    pub x: Side,
    pub y: Side,
    pub rank: usize,
    /// Observed entries |Ω|.
    pub nnz: usize,
    /// Validation entries (0: none).
    pub validation_nnz: usize,
    pub max_iter: usize,
    /// A copy of the IMC start is kept ([`crate::CompletionParams::keep_start`]).
    pub keep_start: bool,
}

/// Bytes an IMC half-step keeps for one side of n rows and D features (`gimc_solvers` imc.rs,
/// DESIGN §3.2): for wide features (D > n) the row-space reduction V (D × n) and L = ΦV
/// (n × n) with, for n ≤ [`gimc_solvers::PRECONDITIONER_MAX_DIM`], its preconditioner basis
/// (n × n); otherwise, for D up to that bound, the preconditioner basis (D × D), the weighted Gram being formed (D × D) and its
/// 1024-row block; and the per-row grams B_i (n × k²).
pub(crate) fn imc_workspace_bytes(side: Side, rank: usize) -> u64 {
    use gimc_solvers::PRECONDITIONER_MAX_DIM;
    let (n, dim) = (side.rows, side.dim);
    let grams = mat_bytes(n, rank.saturating_mul(rank));
    let solve = if dim > n {
        let basis = if n <= PRECONDITIONER_MAX_DIM {
            mat_bytes(n, n)
        } else {
            0
        };
        mat_bytes(dim, n)
            .saturating_add(mat_bytes(n, n))
            .saturating_add(basis)
    } else if dim <= PRECONDITIONER_MAX_DIM {
        mat_bytes(dim, dim)
            .saturating_mul(2)
            .saturating_add(mat_bytes(1024.min(n), dim))
    } else {
        0
    };
    solve.saturating_add(grams)
}

/// Adds the peak of one completion fit to `t` (the data are counted by the caller):
///
/// - held throughout: Φ (n_x × D_x), Ψ (n_y × D_y), W, H (D × r), the map parameters and the
///   best-validation snapshot (and the copy of the start, with `keep_start`);
/// - plus the largest of
///   - the IMC steps: the residual on Ω and its sampled products (2|Ω|), P = ΦW, Q = ΨH and
///     their gradients RQ, RᵀP (2(n_x + n_y)·r), the CG work vectors (8(D_x + D_y)·r), the
///     validation predictions and the half-steps' workspace ([`imc_workspace_bytes`]);
///   - a map step on either side: ∂f/∂Φ and ∂f/∂Ψ (both formed, n_x·D_x + n_y·D_y), the
///     backward pass (two n × m blocks), U, g and the trial U (3·d·m), and the trial's
///     features (n × D and n × m).
pub(crate) fn add_completion(t: &mut Tally, s: &CompletionShape) {
    let r = s.rank;
    let (x, y) = (s.x, s.y);
    let (px, py) = (mat_bytes(x.features, x.m), mat_bytes(y.features, y.m));
    t.f64s("Φ", x.rows, x.dim)
        .f64s("Ψ", y.rows, y.dim)
        .bytes(
            "W, H",
            mat_bytes(x.dim, r).saturating_add(mat_bytes(y.dim, r)),
        )
        .bytes("U, V", px.saturating_add(py));
    let iterate = px
        .saturating_add(py)
        .saturating_add(mat_bytes(x.dim, r))
        .saturating_add(mat_bytes(y.dim, r));
    if s.validation_nnz > 0 {
        t.bytes("best iterate", iterate);
    }
    if s.keep_start {
        t.bytes("IMC start", iterate);
    }
    let imc = mat_bytes(s.nnz, 2)
        .saturating_add(mat_bytes(
            x.rows.saturating_add(y.rows),
            r.saturating_mul(2),
        ))
        .saturating_add(mat_bytes(x.dim.saturating_add(y.dim), r.saturating_mul(8)))
        .saturating_add(mat_bytes(s.validation_nnz, 1))
        .saturating_add(imc_workspace_bytes(x, r).saturating_add(imc_workspace_bytes(y, r)));
    let (mut phase, mut name) = (imc, "IMC steps".to_string());
    if s.max_iter > 0 {
        let grads = mat_bytes(x.rows, x.dim).saturating_add(mat_bytes(y.rows, y.dim));
        for (side, p, label) in [(x, px, "rows"), (y, py, "columns")] {
            if !side.learn {
                continue;
            }
            let step = grads
                .saturating_add(mat_bytes(s.nnz, 1))
                .saturating_add(mat_bytes(side.rows, side.m).saturating_mul(3))
                .saturating_add(p.saturating_mul(3))
                .saturating_add(mat_bytes(side.rows, side.dim));
            if step > phase {
                (phase, name) = (
                    step,
                    format!("map step on the {label} ({} × {})", side.rows, side.dim),
                );
            }
        }
    }
    t.bytes(name, phase);
}
