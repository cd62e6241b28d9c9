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

use crate::labels::fastpath::BLOCK_ENTRIES;

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

/// Shapes of one fast-path fit (`fit_labels`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FitShape {
    /// Training rows n.
    pub rows: usize,
    /// Validation rows scored after each iteration (0: none).
    pub validation_rows: usize,
    /// Input dimension d.
    pub features: usize,
    /// Labels L.
    pub labels: usize,
    /// Map size m.
    pub m: usize,
    /// Feature dimension D.
    pub dim: usize,
    /// Outer iterations (0: only the W-step at the initial map).
    pub max_iter: usize,
    /// Rows of Φ held at once: n for the whole path, the block for the streamed one
    /// ([`crate::Storage`]).
    pub block_rows: usize,
}

/// Adds the peak of one fast-path fit to `t` (the data it reads are counted by the caller):
///
/// - held throughout: Φ (n × D), ΦᵀΦ (D × D), AᵀΦ (L × D), W (D × L), the map parameters U
///   (d·m) and the best-validation snapshot (d·m + D·L);
/// - plus the largest of three phases:
///   - the gradient: ∂f/∂Φ (n × D; the Gram form Φ(WWᵀ) − AWᵀ when 2L ≥ D holds a second
///     n × D and WWᵀ) and the map's backward pass (two n × m blocks: XU or k(X, U), and its
///     weighting);
///   - a line-search trial: U, g and the trial U (3·d·m), the trial's Φ (n × D) with its
///     pre-activation or kernel block (n × m), ΦᵀΦ and AᵀΦ;
///   - the W-step and validation scoring: the Cholesky factor (D × D), the validation Φ
///     (n_val × D and n_val × m) and one block of scores.
///
/// Streamed ([`crate::Storage::Streamed`]), every n × · buffer above is one block of rows
/// instead (validation rows too), and a block's AᵀΦ_B (L × D) and f32 copies are added.
pub(crate) fn add_fit(t: &mut Tally, s: &FitShape) {
    let streamed = s.block_rows < s.rows.max(s.validation_rows);
    let n = s.block_rows.min(s.rows);
    let validation_rows = s.validation_rows.min(s.block_rows);
    let (d, l, m, dd) = (s.features, s.labels, s.m, s.dim);
    let p = mat_bytes(d, m);
    let per_block = if streamed {
        // A_BᵀΦ_B before it is added in, and the f32 copies of a block and its product
        mat_bytes(l, dd).saturating_add(mat_bytes(n, dd))
    } else {
        0
    };
    let phi = if streamed { "Φ block" } else { "Φ" };
    t.f64s(phi, n, dd)
        .f64s("ΦᵀΦ", dd, dd)
        .f64s("AᵀΦ", l, dd)
        .f64s("W", dd, l)
        .bytes("U", p);
    if s.validation_rows > 0 {
        t.bytes("best iterate", p.saturating_add(mat_bytes(dd, l)));
    }
    let block = (BLOCK_ENTRIES as u64).saturating_mul(8);
    let evaluate = mat_bytes(dd, dd)
        .saturating_add(mat_bytes(validation_rows, dd))
        .saturating_add(mat_bytes(validation_rows, m))
        .saturating_add(block);
    let (mut phase, mut name) = (evaluate, "W-step and validation".to_string());
    if s.max_iter > 0 {
        let gram_form = 2 * l >= dd;
        let gradient = mat_bytes(n, dd)
            .saturating_mul(if gram_form { 2 } else { 1 })
            .saturating_add(if gram_form { mat_bytes(dd, dd) } else { block })
            .saturating_add(mat_bytes(n, m).saturating_mul(2))
            .saturating_add(p)
            .saturating_add(if streamed {
                p.saturating_add(per_block)
            } else {
                0
            });
        let trial = p
            .saturating_mul(3)
            .saturating_add(mat_bytes(n, dd))
            .saturating_add(mat_bytes(n, m))
            .saturating_add(mat_bytes(dd, dd))
            .saturating_add(mat_bytes(l, dd))
            .saturating_add(per_block);
        if gradient >= phase {
            (phase, name) = (
                gradient,
                format!("gradient ∂f/∂{phi} {n} × {dd} and backward pass"),
            );
        }
        if trial > phase {
            (phase, name) = (trial, format!("line-search trial {phi} {n} × {dd}"));
        }
    }
    t.bytes(name, phase);
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
