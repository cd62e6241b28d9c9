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
//! The loop is the shared driver of [`crate::outer`]; this module is the general path's
//! [`OuterProblem`]: the blocks U then V (those learned), step (1) before the searches
//! ([`OuterProblem::factors_before_search`]) and [`NoStep::Skip`] (a side whose search fails
//! takes no step; an iteration in which neither moved ends the fit).

use std::time::Instant;

use gimc_featmap::{FeatureMap, LearnableMap, MapFamily};
use gimc_linalg::dense::check_finite;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::memory::{MemoryBudget, MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{CgParams, FeatureMatrix, Observed, ValidCgParams};
use gimc_solvers::{
    FactorProducts, FeatureSides, ImcInit, ImcParams, ImcProblem, ImcWorkspace, IterationRecord,
    NoObserver, Observer, PreconditionerBasis, ScreenedFeatures, Side, ValidImcParams, fit_imc,
    preconditioner_bases,
};
use rayon::prelude::*;

use crate::error::{GimcError, Result};
use crate::error::{check_nonneg, dim_err, input_err, param_err};
use crate::linesearch::LineSearchParams;
use crate::outer::{
    FitStop, Goal, NoStep, OuterIteration, OuterProblem, OuterRun, OuterSettings, run_outer,
};
use crate::registry::BoxedMap;

/// A partially observed matrix with row and column features: A on Ω (n_x × n_y), X (n_x × d_x),
/// Y (n_y × d_y).
#[derive(Debug, Clone, Copy)]
pub struct CompletionData<'a> {
    omega: &'a Observed,
    x: &'a FeatureMatrix,
    y: &'a FeatureMatrix,
}

impl<'a> CompletionData<'a> {
    /// Checks that Ω is not empty and that X has n_x rows and Y has n_y rows (Ω's values are
    /// finite by construction of [`Observed`]).
    pub fn new(omega: &'a Observed, x: &'a FeatureMatrix, y: &'a FeatureMatrix) -> Result<Self> {
        if omega.is_empty() {
            return Err(GimcError::Empty("observed set Ω"));
        }
        if x.nrows() != omega.nrows() {
            return Err(dim_err(
                "row features X",
                format!("{} rows (rows of A)", omega.nrows()),
                format!("{} rows", x.nrows()),
            ));
        }
        if y.nrows() != omega.ncols() {
            return Err(dim_err(
                "column features Y",
                format!("{} rows (columns of A)", omega.ncols()),
                format!("{} rows", y.nrows()),
            ));
        }
        Ok(Self { omega, x, y })
    }

    /// Ω with the observed values.
    pub fn omega(&self) -> &'a Observed {
        self.omega
    }

    /// Row features X.
    pub fn x(&self) -> &'a FeatureMatrix {
        self.x
    }

    /// Column features Y.
    pub fn y(&self) -> &'a FeatureMatrix {
        self.y
    }
}

/// Hyper-parameters of [`fit_completion`]. Build with [`CompletionParams::default`] and the
/// `with_*` methods; [`CompletionParams::check`] validates them into the
/// [`ValidCompletionParams`] that [`fit_completion`] takes.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CompletionParams {
    /// Rank k of Z = WHᵀ, 1 ≤ k < min(D_x, D_y). Default 10.
    pub rank: usize,
    /// Ridge weight λ ≥ 0 on ‖W‖² + ‖H‖². Default 0.1.
    pub lambda: f64,
    /// Outer iterations of Algorithm 1 (0: just the IMC start). Default 10.
    pub max_iter: usize,
    /// IMC alternations for the start (iteration 0). Default 50.
    pub start_iters: usize,
    /// Warm-started IMC alternations in step (1) of every outer iteration. Default 3.
    pub inner_iters: usize,
    /// Stopping rule of the IMC solves (relative decrease per alternation). Default 1e-6.
    pub imc_tol: f64,
    /// CG stopping rule of the IMC half-steps. Default tol 1e-6, 50 iterations.
    pub cg: CgParams,
    /// Learn the row map U. Default true.
    pub learn_rows: bool,
    /// Learn the column map V. Default true.
    pub learn_cols: bool,
    /// The Armijo line search (one state per side).
    pub line_search: LineSearchParams,
    /// Stop when the relative decrease of f over one outer iteration is ≤ `tol` (0 disables).
    /// Default 0.
    pub tol: f64,
    /// Stop once the validation error has not beaten its best for this many outer iterations
    /// in a row ([`FitStop::NoValidationGain`]); acts only when a validation set is given.
    /// Default `None` (run to `max_iter`).
    pub patience: Option<usize>,
    /// Keep a copy of the IMC start (iteration 0: the unlearned IMC-RFF / IMC-NYS fit) in
    /// [`CompletionFit::start`], so one fit serves as both the unlearned baseline and GIMC.
    /// Default false.
    pub keep_start: bool,
    /// The memory pre-flight: [`estimate_completion`] is checked against it before Φ and Ψ
    /// are formed. Default [`MemoryBudget::Detect`] (the memory available now).
    pub memory: MemoryBudget,
}

impl Default for CompletionParams {
    fn default() -> Self {
        Self {
            rank: 10,
            lambda: 0.1,
            max_iter: 10,
            start_iters: 50,
            inner_iters: 3,
            imc_tol: 1e-6,
            cg: CgParams::default().with_tol(1e-6).with_max_iter(50),
            learn_rows: true,
            learn_cols: true,
            line_search: LineSearchParams::default(),
            tol: 0.0,
            patience: None,
            keep_start: false,
            memory: MemoryBudget::Detect,
        }
    }
}

impl CompletionParams {
    /// Sets the rank k of Z = WHᵀ.
    pub fn with_rank(mut self, rank: usize) -> Self {
        self.rank = rank;
        self
    }

    /// Sets the ridge weight λ.
    pub fn with_lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self
    }

    /// Sets the number of outer iterations.
    pub fn with_max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    /// Sets the IMC alternations of the start.
    pub fn with_start_iters(mut self, start_iters: usize) -> Self {
        self.start_iters = start_iters;
        self
    }

    /// Sets the warm-started IMC alternations of every outer iteration.
    pub fn with_inner_iters(mut self, inner_iters: usize) -> Self {
        self.inner_iters = inner_iters;
        self
    }

    /// Sets the stopping rule of the IMC solves.
    pub fn with_imc_tol(mut self, imc_tol: f64) -> Self {
        self.imc_tol = imc_tol;
        self
    }

    /// Sets the CG stopping rule of the IMC half-steps.
    pub fn with_cg(mut self, cg: CgParams) -> Self {
        self.cg = cg;
        self
    }

    /// Sets whether the row map U is learned.
    pub fn with_learn_rows(mut self, learn_rows: bool) -> Self {
        self.learn_rows = learn_rows;
        self
    }

    /// Sets whether the column map V is learned.
    pub fn with_learn_cols(mut self, learn_cols: bool) -> Self {
        self.learn_cols = learn_cols;
        self
    }

    /// Sets the Armijo line search.
    pub fn with_line_search(mut self, line_search: LineSearchParams) -> Self {
        self.line_search = line_search;
        self
    }

    /// Sets the relative-decrease stopping rule (0 disables it).
    pub fn with_tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Sets the validation patience (`None`: run to `max_iter`).
    pub fn with_patience(mut self, patience: Option<usize>) -> Self {
        self.patience = patience;
        self
    }

    /// Sets whether the fit keeps a copy of its IMC start ([`CompletionFit::start`]).
    pub fn with_keep_start(mut self, keep_start: bool) -> Self {
        self.keep_start = keep_start;
        self
    }

    /// Sets the memory budget of the pre-flight.
    pub fn with_memory(mut self, memory: MemoryBudget) -> Self {
        self.memory = memory;
        self
    }

    /// Checks rank ≥ 1, λ, tolerances, patience ≥ 1, the CG stopping rule and the line search
    /// (the rank is checked against the feature dimensions by the fit), and derives the checked
    /// IMC parameters of the start and of step (1).
    pub fn check(&self) -> Result<ValidCompletionParams> {
        if self.rank == 0 {
            return Err(param_err("rank", "must be at least 1"));
        }
        check_nonneg("lambda", self.lambda)?;
        check_nonneg("imc_tol", self.imc_tol)?;
        check_nonneg("tol", self.tol)?;
        check_nonneg("cg.tol", self.cg.tol)?;
        if self.patience == Some(0) {
            return Err(param_err("patience", "must be at least 1"));
        }
        self.line_search.check()?;
        // cannot fail after the checks above
        Ok(ValidCompletionParams {
            params: *self,
            start: self.imc(self.start_iters)?,
            inner: self.imc(self.inner_iters.max(1))?,
        })
    }

    /// The outer loop's settings: a side without a step stays put for the iteration
    /// ([`NoStep::Skip`]).
    fn outer_settings(&self) -> OuterSettings<'_> {
        OuterSettings::new(self.max_iter, self.tol, &self.line_search, NoStep::Skip)
            .with_patience(self.patience)
    }

    fn imc(&self, max_outer: usize) -> Result<ValidImcParams> {
        Ok(ImcParams::default()
            .with_rank(self.rank)
            .with_lambda(self.lambda)
            .with_max_outer(max_outer)
            .with_tol(self.imc_tol)
            .with_cg(self.cg)
            .with_init(ImcInit::Spectral)
            .check()?)
    }
}

/// [`CompletionParams`] that passed [`CompletionParams::check`]; it derefs to the parameters
/// and keeps the checked IMC parameters of the solves (their CG stopping rule included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidCompletionParams {
    params: CompletionParams,
    start: ValidImcParams,
    inner: ValidImcParams,
}

impl ValidCompletionParams {
    /// The checked IMC parameters of the start (iteration 0): `start_iters` alternations.
    pub fn valid_imc_start(&self) -> &ValidImcParams {
        &self.start
    }

    /// The checked IMC parameters of step (1) of every outer iteration: `inner_iters`
    /// alternations (at least 1).
    pub fn valid_imc_inner(&self) -> &ValidImcParams {
        &self.inner
    }

    /// The checked CG stopping rule of the IMC half-steps (the `cg` field).
    pub fn valid_cg(&self) -> &ValidCgParams {
        self.start.valid_cg()
    }
}

impl std::ops::Deref for ValidCompletionParams {
    type Target = CompletionParams;
    fn deref(&self) -> &CompletionParams {
        &self.params
    }
}

/// A fitted completion model Â = φ_U(X) W Hᵀ ψ_V(Y)ᵀ, inductive on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionModel<MR = BoxedMap, MC = BoxedMap> {
    row_map: MR,
    col_map: MC,
    w: Mat<f64>,
    h: Mat<f64>,
    lambda: f64,
    method: String,
}

impl<MR: FeatureMap, MC: FeatureMap> CompletionModel<MR, MC> {
    /// A model from its parts. Errors: W not D_x × k, H not D_y × k, non-finite factors.
    pub fn new(row_map: MR, col_map: MC, w: Mat<f64>, h: Mat<f64>, lambda: f64) -> Result<Self> {
        if w.nrows() != row_map.output_dim() || h.nrows() != col_map.output_dim() {
            return Err(dim_err(
                "factors (W, H)",
                format!(
                    "{} and {} rows (the maps' output dimensions)",
                    row_map.output_dim(),
                    col_map.output_dim()
                ),
                format!("{} and {}", w.nrows(), h.nrows()),
            ));
        }
        if w.ncols() != h.ncols() || w.ncols() == 0 {
            return Err(dim_err(
                "factors (W, H)",
                "the same number (>= 1) of columns".to_string(),
                format!("{} and {}", w.ncols(), h.ncols()),
            ));
        }
        check_finite(w.as_ref())?;
        check_finite(h.as_ref())?;
        Ok(Self {
            row_map,
            col_map,
            w,
            h,
            lambda,
            method: String::from("gimc"),
        })
    }

    /// The row map φ_U.
    pub fn row_map(&self) -> &MR {
        &self.row_map
    }

    /// The column map ψ_V.
    pub fn col_map(&self) -> &MC {
        &self.col_map
    }

    /// Consumes the model, returning its row and column maps.
    pub fn into_maps(self) -> (MR, MC) {
        (self.row_map, self.col_map)
    }

    /// W (D_x × k).
    pub fn w(&self) -> MatRef<'_, f64> {
        self.w.as_ref()
    }

    /// H (D_y × k).
    pub fn h(&self) -> MatRef<'_, f64> {
        self.h.as_ref()
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The rank k.
    pub fn rank(&self) -> usize {
        self.w.ncols()
    }

    /// The method name stored in model files.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Sets the method name.
    pub fn set_method(&mut self, method: impl Into<String>) {
        self.method = method.into();
    }

    /// P = φ_U(X) W (n_x × k): the row embedding (semi-supervised clustering takes the top
    /// left singular vectors of it, DESIGN §3.3).
    pub fn row_factors(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        let phi = self.row_map.forward(x)?;
        Ok(gimc_linalg::dense::matmul(phi.as_ref(), self.w.as_ref())?)
    }

    /// Q = ψ_V(Y) H (n_y × k).
    pub fn col_factors(&self, y: &FeatureMatrix) -> Result<Mat<f64>> {
        let psi = self.col_map.forward(y)?;
        Ok(gimc_linalg::dense::matmul(psi.as_ref(), self.h.as_ref())?)
    }

    /// Â_ij for the pairs (i, j), i a row of `x`, j a row of `y` (new rows are fine).
    pub fn predict_entries(
        &self,
        x: &FeatureMatrix,
        y: &FeatureMatrix,
        pairs: &[(usize, usize)],
    ) -> Result<Vec<f64>> {
        let pt = self.row_factors(x)?.transpose().to_owned();
        let qt = self.col_factors(y)?.transpose().to_owned();
        if let Some(&(i, j)) = pairs
            .iter()
            .find(|&&(i, j)| i >= pt.ncols() || j >= qt.ncols())
        {
            return Err(input_err(
                "pairs",
                format!(
                    "pair ({i}, {j}) out of range for {} rows and {} columns",
                    pt.ncols(),
                    qt.ncols()
                ),
            ));
        }
        Ok(pairs
            .par_iter()
            .with_min_len(1024)
            .map(|&(i, j)| {
                pt.col_as_slice(i)
                    .iter()
                    .zip(qt.col_as_slice(j))
                    .map(|(a, b)| a * b)
                    .sum()
            })
            .collect())
    }

    /// Â_ij = W_i · H_j for the pairs (i, j) of the training matrix, for a model whose row and
    /// column features are the indicators of the indices themselves (plain matrix completion,
    /// `gimc complete --method mc-als | mc-nuclear`: identity maps as wide as the matrix), so
    /// no feature rows are needed. Errors when a map is not of that shape (D ≠ its input
    /// dimension, or W / H not one row per index) or a pair is out of range.
    pub fn predict_by_index(&self, pairs: &[(usize, usize)]) -> Result<Vec<f64>> {
        let indexed = |input: usize, output: usize, rows: usize| input == output && output == rows;
        if !indexed(
            self.row_map.input_dim(),
            self.row_map.output_dim(),
            self.w.nrows(),
        ) || !indexed(
            self.col_map.input_dim(),
            self.col_map.output_dim(),
            self.h.nrows(),
        ) {
            return Err(input_err(
                "model",
                format!(
                    "a {} model maps feature rows: give the row and column features",
                    self.method
                ),
            ));
        }
        let (w, h) = (self.w.as_ref(), self.h.as_ref());
        if let Some(&(i, j)) = pairs
            .iter()
            .find(|&&(i, j)| i >= w.nrows() || j >= h.nrows())
        {
            return Err(input_err(
                "pairs",
                format!(
                    "pair ({i}, {j}) out of range for {} rows and {} columns",
                    w.nrows(),
                    h.nrows()
                ),
            ));
        }
        Ok(pairs
            .iter()
            .map(|&(i, j)| (0..w.ncols()).map(|c| w[(i, c)] * h[(j, c)]).sum())
            .collect())
    }

    /// The dense Â (n_x × n_y) for small problems (e.g. the toy of `gimc-fig1`).
    pub fn predict_dense(&self, x: &FeatureMatrix, y: &FeatureMatrix) -> Result<Mat<f64>> {
        let p = self.row_factors(x)?;
        let q = self.col_factors(y)?;
        Ok(gimc_linalg::dense::matmul_nt(p.as_ref(), q.as_ref())?)
    }

    /// f(W, H, U, V) on `data`.
    pub fn objective(&self, data: &CompletionData<'_>) -> Result<f64> {
        let (phi, psi) = self.features(data)?;
        let problem = problem(&phi, &psi, data.omega)?;
        Ok(ImcWorkspace::new(&problem).objective(self.lambda, self.w.as_ref(), self.h.as_ref())?)
    }

    fn features(&self, data: &CompletionData<'_>) -> Result<(FeatureMatrix, FeatureMatrix)> {
        Ok((
            FeatureMatrix::Dense(self.row_map.forward(data.x)?),
            FeatureMatrix::Dense(self.col_map.forward(data.y)?),
        ))
    }

    /// The W half-step (ridge in W with H and the maps fixed, solved by CG warm-started from
    /// the current W), as in step (1) of Algorithm 1.
    pub fn w_step(&mut self, data: &CompletionData<'_>, cg: &ValidCgParams) -> Result<()> {
        let (phi, psi) = self.features(data)?;
        let problem = problem(&phi, &psi, data.omega)?;
        ImcWorkspace::new(&problem).w_step(self.lambda, self.h.as_ref(), self.w.as_mut(), cg)?;
        Ok(())
    }
}

impl<MR: LearnableMap, MC: LearnableMap> CompletionModel<MR, MC> {
    /// (∂f/∂U, ∂f/∂V) at the current (W, H, U, V): the backward passes of ∂f/∂Φ = (RQ)Wᵀ and
    /// ∂f/∂Ψ = (RᵀP)Hᵀ.
    pub fn gradients(&self, data: &CompletionData<'_>) -> Result<(Mat<f64>, Mat<f64>)> {
        let (phi, psi) = self.features(data)?;
        let problem = problem(&phi, &psi, data.omega)?;
        let fg = ImcWorkspace::new(&problem).feature_gradients(
            self.w.as_ref(),
            self.h.as_ref(),
            FeatureSides::Both,
        )?;
        let (Some(d_phi), Some(d_psi)) = (fg.d_phi, fg.d_psi) else {
            return Err(input_err("features", "both sides must have features"));
        };
        Ok((
            self.row_map.backward(data.x, d_phi.as_ref())?,
            self.col_map.backward(data.y, d_psi.as_ref())?,
        ))
    }
}

fn problem<'a>(
    phi: &'a FeatureMatrix,
    psi: &'a FeatureMatrix,
    omega: &'a Observed,
) -> Result<ImcProblem<'a>> {
    Ok(ImcProblem::partial(
        Side::Features(phi),
        Side::Features(psi),
        omega,
    )?)
}

/// One outer iteration of [`fit_completion`] (iteration 0: the IMC start).
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionIteration {
    /// Iteration number.
    pub iteration: usize,
    /// f after the iteration.
    pub objective: f64,
    /// f after step (1), the IMC update (equal to `objective` at iteration 0).
    pub objective_after_imc: f64,
    /// Accepted step on U (None if not learned or no step accepted).
    pub step_rows: Option<f64>,
    /// Accepted step on V.
    pub step_cols: Option<f64>,
    /// Line-search trials this iteration (both sides).
    pub trials: usize,
    /// Seconds since the fit started.
    pub seconds: f64,
    /// Relative error on the validation entries, sqrt(Σ(Â_ij − A_ij)² / Σ A_ij²) over the
    /// validation set (when one was given).
    pub validation_error: Option<f64>,
}

/// The iterate with the lowest validation error: a snapshot of both maps' parameters and the
/// factors ([`CompletionFit::into_chosen`] restores it; the maps need not be `Clone`).
#[derive(Debug, Clone, PartialEq)]
pub struct BestCompletion {
    /// Its outer iteration (0 = the IMC start).
    pub iteration: usize,
    /// Its validation error.
    pub error: f64,
    /// The row map's parameters U at that iteration.
    pub row_params: Mat<f64>,
    /// The column map's parameters V at that iteration.
    pub col_params: Mat<f64>,
    /// W at that iteration.
    pub w: Mat<f64>,
    /// H at that iteration.
    pub h: Mat<f64>,
}

impl BestCompletion {
    /// `model` with this iterate's map parameters and factors restored.
    pub fn restore_into<MR: LearnableMap, MC: LearnableMap>(
        self,
        mut model: CompletionModel<MR, MC>,
    ) -> Result<CompletionModel<MR, MC>> {
        model.row_map.set_params(self.row_params)?;
        model.col_map.set_params(self.col_params)?;
        Ok(CompletionModel {
            w: self.w,
            h: self.h,
            ..model
        })
    }
}

/// The result of [`fit_completion`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionFit<MR, MC> {
    /// The final model.
    pub model: CompletionModel<MR, MC>,
    /// One record per iteration, starting with the IMC start.
    pub history: Vec<CompletionIteration>,
    /// The lowest-validation-error iterate (when a validation set was given).
    pub best: Option<BestCompletion>,
    /// The IMC start, iteration 0 (with [`CompletionParams::keep_start`]); its `error` is the
    /// validation error there (NaN without a validation set).
    pub start: Option<BestCompletion>,
    /// Why the fit stopped.
    pub stop_reason: FitStop,
}

impl<MR: LearnableMap, MC: LearnableMap> CompletionFit<MR, MC> {
    /// The iteration of the model [`CompletionFit::into_chosen`] returns.
    pub fn chosen_iteration(&self) -> usize {
        self.best.as_ref().map_or_else(
            || self.history.last().map_or(0, |h| h.iteration),
            |b| b.iteration,
        )
    }

    /// Consumes the fit, returning the best-validation model when there is one (both maps'
    /// parameters and the factors restored into the last model), else the last.
    pub fn into_chosen(self) -> Result<CompletionModel<MR, MC>> {
        let model = self.model;
        match self.best {
            Some(b) => b.restore_into(model),
            None => Ok(model),
        }
    }

    /// The objective values, the IMC start first.
    pub fn objectives(&self) -> Vec<f64> {
        self.history.iter().map(|h| h.objective).collect()
    }

    /// The objective of the IMC start (iteration 0).
    pub fn start_objective(&self) -> f64 {
        self.history.first().map_or(f64::NAN, |h| h.objective)
    }
}

/// The estimated peak memory of [`fit_completion`] with these maps on `data` (and
/// `validation`): X, Y, Ω, Φ, Ψ, the factors and the larger of the IMC steps and a map step
/// (see [`crate::memory`]). The parameter to lower is `m`.
pub fn estimate_completion<MR, MC>(
    data: &CompletionData<'_>,
    row_map: &MR,
    col_map: &MC,
    params: &CompletionParams,
    validation: Option<&Observed>,
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
        validation,
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
    validation: Option<&Observed>,
) -> Result<MemoryEstimate> {
    let dim = family.output_dim(m)?;
    Ok(completion_estimate(
        data,
        (m, dim),
        (m, dim),
        params,
        validation,
    ))
}

/// The estimate from (m, D) of each side.
fn completion_estimate(
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

/// Fits GIMC on a partially observed matrix (Algorithm 1, DESIGN §3.3), learning `row_map`
/// (U) and `col_map` (V) from their initial parameters. `validation` (optional: held-out
/// entries of the same matrix, same shape as Ω) is scored after every iteration by its relative
/// error and the best iterate kept, so the iteration count can be chosen on validation data.
/// `rng` is used by the spectral IMC start only.
///
/// Errors: parameter / shape errors (rank ≥ min(D_x, D_y), …) before any work;
/// [`GimcError::NonFinite`] if the objective or a gradient stops being finite;
/// [`GimcError::ObjectiveIncreased`] if the monotonicity invariant fails.
pub fn fit_completion<MR, MC, O>(
    data: &CompletionData<'_>,
    row_map: MR,
    col_map: MC,
    params: &ValidCompletionParams,
    validation: Option<&Observed>,
    rng: &mut GimcRng,
    observer: &mut O,
) -> Result<CompletionFit<MR, MC>>
where
    MR: LearnableMap,
    MC: LearnableMap,
    O: Observer + ?Sized,
{
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
        &estimate_completion(data, &row_map, &col_map, params, validation),
        params.memory,
    )?;
    let started = Instant::now();
    let (mut outer, f0) = CompletionOuter::start(data, row_map, col_map, params, validation, rng)?;
    let run = run_outer(&mut outer, f0, &params.outer_settings(), started, observer)?;
    outer.into_fit(run)
}

/// Which map a line search updates: a block of [`CompletionOuter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    /// The row map U (Φ = φ_U(X)).
    Rows,
    /// The column map V (Ψ = ψ_V(Y)).
    Cols,
}

impl Which {
    /// This side's map output, screened for NaN / Inf once here, where it is produced (an
    /// overflow inside the map is an error naming the side, as from [`ImcProblem::partial`]);
    /// every problem of the loop is then built from it by
    /// [`ImcProblem::partial_screened`] without screening it again.
    fn screened(self, features: Mat<f64>) -> Result<ScreenedFeatures> {
        let what = match self {
            Which::Rows => "row features Φ",
            Which::Cols => "column features Ψ",
        };
        Ok(ScreenedFeatures::new(FeatureMatrix::Dense(features), what)?)
    }
}

/// f(W, H, U, V) at the features Φ, Ψ, with the products `pq` = (ΦW, ΨH).
fn objective(
    phi: &ScreenedFeatures,
    psi: &ScreenedFeatures,
    omega: &Observed,
    lambda: f64,
    (w, h): (MatRef<'_, f64>, MatRef<'_, f64>),
    pq: &FactorProducts,
) -> Result<f64> {
    let prob = ImcProblem::partial_screened(phi, psi, omega)?;
    Ok(ImcWorkspace::new(&prob).objective_with(lambda, w, h, pq)?)
}

/// (ΦW, ΨH).
fn products(
    phi: &ScreenedFeatures,
    psi: &ScreenedFeatures,
    omega: &Observed,
    (w, h): (MatRef<'_, f64>, MatRef<'_, f64>),
) -> Result<FactorProducts> {
    let prob = ImcProblem::partial_screened(phi, psi, omega)?;
    Ok(ImcWorkspace::new(&prob).products(w, h)?)
}

/// ∂f/∂U = backward(X, ∂f/∂Φ) for one side's map, `feats` being its forward pass at the
/// current parameters (reused by the backward pass when dense); `None` without ∂f/∂Φ.
fn side_gradient<M: LearnableMap>(
    map: &M,
    feats: &FeatureMatrix,
    input: &FeatureMatrix,
    d_feats: Option<Mat<f64>>,
) -> Result<Option<Mat<f64>>> {
    let Some(d) = d_feats else {
        return Ok(None);
    };
    let g = match feats {
        FeatureMatrix::Dense(f) => map.backward_at(input, f.as_ref(), d.as_ref())?,
        FeatureMatrix::Sparse(_) => map.backward(input, d.as_ref())?,
    };
    Ok(Some(g))
}

/// The iterate kept when it has the lowest validation error so far (a [`BestCompletion`]
/// without its iteration and error, which the loop keeps).
struct CompletionSnapshot {
    row_params: Mat<f64>,
    col_params: Mat<f64>,
    w: Mat<f64>,
    h: Mat<f64>,
}

/// The general path as an [`OuterProblem`] (module documentation): blocks U then V (those
/// learned), W and H by warm-started IMC alternations before the searches (step (1)).
struct CompletionOuter<'a, 'r, MR, MC> {
    data: CompletionData<'a>,
    params: &'a ValidCompletionParams,
    validation: Option<&'a Observed>,
    /// The stream of the IMC solves.
    rng: &'r mut GimcRng,
    /// The IMC solve of step (1).
    inner: ValidImcParams,
    /// The Kronecker preconditioner bases of the start, reused by every IMC solve.
    bases: (Option<PreconditionerBasis>, Option<PreconditionerBasis>),
    row_map: MR,
    col_map: MC,
    /// Φ = φ_U(X) at the current U, screened for NaN / Inf once, when the map produced it.
    phi: ScreenedFeatures,
    /// Ψ = ψ_V(Y) at the current V, screened likewise.
    psi: ScreenedFeatures,
    w: Mat<f64>,
    h: Mat<f64>,
    /// (ΦW, ΨH) at the current Φ, Ψ, W and H, kept in step with them: the gradients and the
    /// objective after the IMC step share them, and a trial on one side forms only its own.
    pq: FactorProducts,
    /// The learned maps, in search order.
    sides: Vec<Which>,
    /// The IMC start, kept with [`CompletionParams::keep_start`].
    start: Option<CompletionSnapshot>,
}

impl<'a, 'r, MR: LearnableMap, MC: LearnableMap> CompletionOuter<'a, 'r, MR, MC> {
    /// Iteration 0: IMC with the initial maps from the spectral start (the IMC-RFF / IMC-NYS
    /// solution), with its objective.
    fn start(
        data: &CompletionData<'a>,
        row_map: MR,
        col_map: MC,
        params: &'a ValidCompletionParams,
        validation: Option<&'a Observed>,
        rng: &'r mut GimcRng,
    ) -> Result<(Self, f64)> {
        let phi = Which::Rows.screened(row_map.forward(data.x)?)?;
        let psi = Which::Cols.screened(col_map.forward(data.y)?)?;
        // the Kronecker preconditioner bases of the start (symmetric problems compute one)
        let bases = preconditioner_bases(&ImcProblem::partial_screened(&phi, &psi, data.omega)?);
        let imc_start = {
            let prob = ImcProblem::partial_screened(&phi, &psi, data.omega)?
                .with_preconditioner_bases(bases.0.as_ref(), bases.1.as_ref())?;
            fit_imc(&prob, params.valid_imc_start(), None, rng, &mut NoObserver)?
        };
        let (w, h) = (imc_start.w, imc_start.h);
        let factors = (w.as_ref(), h.as_ref());
        let pq = products(&phi, &psi, data.omega, factors)?;
        let f0 = objective(&phi, &psi, data.omega, params.lambda, factors, &pq)?;
        let sides = [
            (params.learn_rows, Which::Rows),
            (params.learn_cols, Which::Cols),
        ]
        .into_iter()
        .filter_map(|(learn, side)| learn.then_some(side))
        .collect();
        let mut outer = Self {
            data: *data,
            params,
            validation,
            rng,
            inner: *params.valid_imc_inner(),
            bases,
            row_map,
            col_map,
            phi,
            psi,
            w,
            h,
            pq,
            sides,
            start: None,
        };
        if params.keep_start {
            outer.start = Some(outer.snapshot());
        }
        Ok((outer, f0))
    }

    /// f at the features Φ, Ψ with the current W, H and their products `pq`.
    fn objective_at(
        &self,
        phi: &ScreenedFeatures,
        psi: &ScreenedFeatures,
        pq: &FactorProducts,
    ) -> Result<f64> {
        objective(
            phi,
            psi,
            self.data.omega,
            self.params.lambda,
            (self.w.as_ref(), self.h.as_ref()),
            pq,
        )
    }

    /// The relative error sqrt(Σ(Â_ij − A_ij)² / Σ A_ij²) on the validation entries, if any.
    fn validation_error(&self) -> Result<Option<f64>> {
        let Some(v) = self.validation else {
            return Ok(None);
        };
        let pred = gimc_linalg::sampled_dot(v, self.pq.p.as_ref(), self.pq.q.as_ref())?;
        let num: f64 = pred
            .iter()
            .zip(v.values())
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        Ok(Some(
            (num / v.values_sq_norm().max(f64::MIN_POSITIVE)).sqrt(),
        ))
    }

    /// The accepted step of `side` in `steps` (given in the order of `self.sides`).
    fn step_of(&self, side: Which, steps: &[Option<f64>]) -> Option<f64> {
        self.sides
            .iter()
            .zip(steps)
            .find(|(s, _)| **s == side)
            .and_then(|(_, step)| *step)
    }

    /// The fit's result from the loop's: the model at the last iterate, the best iterate.
    fn into_fit(
        self,
        run: OuterRun<CompletionIteration, CompletionSnapshot>,
    ) -> Result<CompletionFit<MR, MC>> {
        let model = CompletionModel::new(
            self.row_map,
            self.col_map,
            self.w,
            self.h,
            self.params.lambda,
        )?;
        let start_error = run
            .history
            .first()
            .and_then(|h| h.validation_error)
            .unwrap_or(f64::NAN);
        Ok(CompletionFit {
            model,
            history: run.history,
            start: self.start.map(|s| BestCompletion {
                iteration: 0,
                error: start_error,
                row_params: s.row_params,
                col_params: s.col_params,
                w: s.w,
                h: s.h,
            }),
            best: run.best.map(|b| BestCompletion {
                iteration: b.iteration,
                error: b.value,
                row_params: b.snapshot.row_params,
                col_params: b.snapshot.col_params,
                w: b.snapshot.w,
                h: b.snapshot.h,
            }),
            stop_reason: run.stop_reason,
        })
    }
}

impl<MR: LearnableMap, MC: LearnableMap> OuterProblem for CompletionOuter<'_, '_, MR, MC> {
    type Info = CompletionIteration;
    type Snapshot = CompletionSnapshot;
    /// The side's features at the trial map, and their product with the side's factor.
    type Trial = (ScreenedFeatures, Mat<f64>);
    type Block = Which;

    const GOAL: Goal = Goal::Minimise;

    fn blocks(&self) -> Vec<Which> {
        self.sides.clone()
    }

    fn params(&self, side: Which) -> MatRef<'_, f64> {
        match side {
            Which::Rows => self.row_map.params(),
            Which::Cols => self.col_map.params(),
        }
    }

    fn set_params(&mut self, side: Which, params: Mat<f64>) -> Result<()> {
        match side {
            Which::Rows => self.row_map.set_params(params)?,
            Which::Cols => self.col_map.set_params(params)?,
        }
        Ok(())
    }

    /// ∂f/∂U = backward(X, (RQ)Wᵀ) or ∂f/∂V = backward(Y, (RᵀP)Hᵀ) at (W, H, U, V).
    fn gradient(&mut self, side: Which) -> Result<Option<Mat<f64>>> {
        let prob = ImcProblem::partial_screened(&self.phi, &self.psi, self.data.omega)?;
        let sides = match side {
            Which::Rows => FeatureSides::Rows,
            Which::Cols => FeatureSides::Cols,
        };
        let fg = ImcWorkspace::new(&prob).feature_gradients_with(
            self.w.as_ref(),
            self.h.as_ref(),
            &self.pq,
            sides,
        )?;
        match side {
            Which::Rows => side_gradient(&self.row_map, &self.phi, self.data.x, fg.d_phi),
            Which::Cols => side_gradient(&self.col_map, &self.psi, self.data.y, fg.d_psi),
        }
    }

    /// f with the side's features at its trial map, W, H and the other side fixed (the other
    /// side's product too).
    fn trial(&mut self, side: Which) -> Result<Option<(f64, Self::Trial)>> {
        let trial = match side {
            Which::Rows => {
                let phi = side.screened(self.row_map.forward(self.data.x)?)?;
                let pq = FactorProducts {
                    p: phi.mul_dense(self.w.as_ref())?,
                    q: self.pq.q.clone(),
                };
                (self.objective_at(&phi, &self.psi, &pq)?, (phi, pq.p))
            }
            Which::Cols => {
                let psi = side.screened(self.col_map.forward(self.data.y)?)?;
                let pq = FactorProducts {
                    p: self.pq.p.clone(),
                    q: psi.mul_dense(self.h.as_ref())?,
                };
                (self.objective_at(&self.phi, &psi, &pq)?, (psi, pq.q))
            }
        };
        Ok(Some(trial))
    }

    fn accept(&mut self, side: Which, (feats, product): Self::Trial) {
        match side {
            Which::Rows => (self.phi, self.pq.p) = (feats, product),
            Which::Cols => (self.psi, self.pq.q) = (feats, product),
        }
    }

    /// Step (1): Z = WHᵀ by `inner_iters` warm-started IMC alternations with the current
    /// features, and f there (nothing when `inner_iters` = 0).
    fn factors_before_search(&mut self, f: f64) -> Result<f64> {
        if self.params.inner_iters == 0 {
            return Ok(f);
        }
        let prob = ImcProblem::partial_screened(&self.phi, &self.psi, self.data.omega)?
            .with_preconditioner_bases(self.bases.0.as_ref(), self.bases.1.as_ref())?;
        let warm = (
            std::mem::replace(&mut self.w, Mat::new()),
            std::mem::replace(&mut self.h, Mat::new()),
        );
        let m = fit_imc(&prob, &self.inner, Some(warm), self.rng, &mut NoObserver)?;
        (self.w, self.h) = (m.w, m.h);
        self.pq = products(
            &self.phi,
            &self.psi,
            self.data.omega,
            (self.w.as_ref(), self.h.as_ref()),
        )?;
        self.objective_at(&self.phi, &self.psi, &self.pq)
    }

    fn info(&self, it: &OuterIteration<'_>) -> Result<CompletionIteration> {
        Ok(CompletionIteration {
            iteration: it.iteration,
            objective: it.objective,
            objective_after_imc: it.objective_after_factors,
            step_rows: self.step_of(Which::Rows, it.steps),
            step_cols: self.step_of(Which::Cols, it.steps),
            trials: it.trials,
            seconds: it.seconds(),
            validation_error: self.validation_error()?,
        })
    }

    fn record(&self, info: &CompletionIteration) -> IterationRecord {
        let mut extras = vec![
            ("objective_after_imc", info.objective_after_imc),
            ("trials", info.trials as f64),
        ];
        if let Some(s) = info.step_rows {
            extras.push(("step_rows", s));
        }
        if let Some(s) = info.step_cols {
            extras.push(("step_cols", s));
        }
        if let Some(e) = info.validation_error {
            extras.push(("val_error", e));
        }
        IterationRecord {
            iteration: info.iteration,
            objective: info.objective,
            elapsed_secs: info.seconds,
            extras,
        }
    }

    fn validation(&self, info: &CompletionIteration) -> Option<f64> {
        info.validation_error
    }

    fn snapshot(&self) -> CompletionSnapshot {
        CompletionSnapshot {
            row_params: self.row_map.params().to_owned(),
            col_params: self.col_map.params().to_owned(),
            w: self.w.clone(),
            h: self.h.clone(),
        }
    }
}
