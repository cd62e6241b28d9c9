//! GIMC on any observed set Ω: Algorithm 1 of the paper (DESIGN §3.3, GIMC eq. 9 with the
//! squared loss and the ridge regulariser of §3.2):
//!
//! f(W, H, U, V) = ½‖P_Ω(A − Φ W Hᵀ Ψᵀ)‖² + (λ/2)(‖W‖² + ‖H‖²),  Φ = φ_U(X), Ψ = ψ_V(Y).
//!
//! Iteration 0 fits IMC with the initial maps (the IMC-RFF / IMC-NYS solution, spectral start).
//! Each outer iteration then (1) updates Z = WHᵀ by a few warm-started IMC alternations
//! (`gimc_solvers::fit_imc`, CG half-steps on Ω, never an n_x × n_y matrix), (2) takes an
//! Armijo step on U along ∂f/∂U = backward(X, (RQ)Wᵀ), (3) the same on V along
//! backward(Y, (RᵀP)Hᵀ), with P = ΦW, Q = ΨH and R the residual on Ω (the sampled-product
//! kernel of `gimc-linalg`, through `gimc_solvers::ImcWorkspace::feature_gradients`). Every
//! piece decreases f, so f never increases across outer iterations (checked), and the final
//! objective is at most that of the IMC start.
//!
//! The loop is the shared driver of [`crate::outer`], run on the general path's outer problem
//! (the sibling `problem` module: the blocks U then V, those learned, step (1) before the
//! searches, and a side whose search fails takes no step; an iteration in which neither moved
//! ends the fit).

use std::time::Instant;

use gimc_featmap::{LearnableMap, MapFamily};
use gimc_linalg::memory::{MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::Observer;

use super::data::CompletionData;
use super::outcome::CompletionFit;
use super::params::{CompletionParams, ValidCompletionParams};
use super::problem::CompletionOuter;
use crate::error::{GimcError, Result};
use crate::error::{dim_err, param_err};
use crate::outer::run_outer;

/// The estimated peak memory of [`fit_completion`] with these maps on `data` (with its
/// validation entries): X, Y, Ω, Φ, Ψ, the factors and the larger of the IMC steps and a map
/// step (see [`crate::memory`]). The parameter to lower is `m`.
pub fn estimate_completion<MR, MC>(
    data: &CompletionData<'_>,
    row_map: &MR,
    col_map: &MC,
    params: &CompletionParams,
) -> MemoryEstimate
where
    MR: LearnableMap + ?Sized,
    MC: LearnableMap + ?Sized,
{
    let m_of = |n_params: usize, x: &FeatureMatrix| n_params / x.ncols().max(1);
    completion_estimate(
        data,
        (m_of(row_map.n_params(), data.x), row_map.output_dim()),
        (m_of(col_map.n_params(), data.y), col_map.output_dim()),
        params,
        data.validation,
    )
}

/// [`estimate_completion`] before the maps are drawn: both maps of `family` with size `m`
/// (taken to have d·m parameters), so a fit that cannot fit is refused before its maps are
/// allocated. Errors when the family refuses m.
pub fn estimate_completion_family<F: MapFamily + ?Sized>(
    data: &CompletionData<'_>,
    family: &F,
    m: usize,
    params: &CompletionParams,
) -> Result<MemoryEstimate> {
    let dim = family.output_dim(m)?;
    Ok(completion_estimate(
        data,
        (m, dim),
        (m, dim),
        params,
        data.validation,
    ))
}

/// The estimate from (m, D) of each side.
pub(crate) fn completion_estimate(
    data: &CompletionData<'_>,
    row: (usize, usize),
    col: (usize, usize),
    params: &CompletionParams,
    validation: Option<&Observed>,
) -> MemoryEstimate {
    use crate::memory::{CompletionShape, Side, add_completion, feature_bytes, observed_bytes};
    let omega = data.omega;
    let mut t = Tally::new("completion", "m");
    t.bytes("process", crate::memory::PROCESS_BASE_BYTES)
        .bytes("X", feature_bytes(data.x))
        .bytes("Y", feature_bytes(data.y))
        .bytes(
            "Ω",
            observed_bytes(omega.nrows(), omega.ncols(), omega.len()),
        );
    if let Some(v) = validation {
        t.bytes(
            "validation Ω",
            observed_bytes(v.nrows(), v.ncols(), v.len()),
        );
    }
    let side = |x: &FeatureMatrix, (m, dim): (usize, usize), learn: bool| Side {
        rows: x.nrows(),
        features: x.ncols(),
        m,
        dim,
        learn,
    };
    add_completion(
        &mut t,
        &CompletionShape {
            x: side(data.x, row, params.learn_rows),
            y: side(data.y, col, params.learn_cols),
            rank: params.rank,
            nnz: omega.len(),
            validation_nnz: validation.map_or(0, Observed::len),
            max_iter: params.max_iter,
            keep_start: params.keep_start,
        },
    );
    t.finish()
}

/// What [`fit_completion`] fits: the data and the maps of both sides at their initial
/// parameters.
#[derive(Debug, Clone)]
pub struct CompletionInputs<'a, MR, MC> {
    /// The observed matrix, its features and (optionally) its validation entries.
    pub data: CompletionData<'a>,
    /// The row map (U), learned when `learn_rows`.
    pub row_map: MR,
    /// The column map (V), learned when `learn_cols`.
    pub col_map: MC,
}

/// Fits GIMC on a partially observed matrix (Algorithm 1, DESIGN §3.3), learning the row map
/// (U) and the column map (V) of `inputs` from their initial parameters. The validation entries
/// of the data ([`CompletionData::with_validation`]), when given, are scored after every
/// iteration by their relative error and the best iterate kept, so the iteration count can be
/// chosen on validation data. `rng` is used by the spectral IMC start only.
///
/// Errors: parameter / shape errors (rank ≥ min(D_x, D_y), …) before any work;
/// [`GimcError::NonFinite`] if the objective or a gradient stops being finite;
/// [`GimcError::ObjectiveIncreased`] if the monotonicity invariant fails.
pub fn fit_completion<MR, MC, O>(
    inputs: CompletionInputs<'_, MR, MC>,
    params: &ValidCompletionParams,
    rng: &mut GimcRng,
    observer: &mut O,
) -> Result<CompletionFit<MR, MC>>
where
    MR: LearnableMap,
    MC: LearnableMap,
    O: Observer + ?Sized,
{
    let CompletionInputs {
        data,
        row_map,
        col_map,
    } = inputs;
    let data = &data;
    let validation = data.validation;
    let dx = row_map.output_dim();
    let dy = col_map.output_dim();
    if params.rank >= dx.min(dy) {
        return Err(param_err(
            "rank",
            format!(
                "must be below min(D_x, D_y) = {}, got {}",
                dx.min(dy),
                params.rank
            ),
        ));
    }
    if let Some(v) = validation {
        if v.shape() != data.omega.shape() {
            return Err(dim_err(
                "validation entries",
                format!("a {} x {} set", data.omega.nrows(), data.omega.ncols()),
                format!("{} x {}", v.nrows(), v.ncols()),
            ));
        }
        if v.is_empty() {
            return Err(GimcError::Empty("validation entries"));
        }
    }
    check_fits(
        &estimate_completion(data, &row_map, &col_map, params),
        params.memory,
    )?;
    let started = Instant::now();
    let (mut outer, f0) = CompletionOuter::start(data, row_map, col_map, params, validation, rng)?;
    let run = run_outer(&mut outer, f0, &params.outer_settings(), started, observer)?;
    outer.into_fit(run)
}
