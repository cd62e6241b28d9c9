//! The peak memory of one fast-path fit ([`add_fit`]): what [`crate::memory`]'s estimates of
//! `fit_labels`, the selection and `auto` add for each fit they run.

use gimc_linalg::memory::{Tally, mat_bytes};

use crate::labels::fastpath::BLOCK_ENTRIES;

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
