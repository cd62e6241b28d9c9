//! The hyper-parameters of the general path ([`CompletionParams`]) and their checked form.

use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::{CgParams, ValidCgParams};
use gimc_solvers::{ImcInit, ImcParams, ValidImcParams};

use crate::error::Result;
use crate::error::{check_nonneg, param_err};
use crate::linesearch::LineSearchParams;
use crate::outer::{NoStep, OuterSettings};

/// Hyper-parameters of [`fit_completion`](crate::fit_completion). Build with [`CompletionParams::default`] and the
/// `with_*` methods; [`CompletionParams::check`] validates them into the
/// [`ValidCompletionParams`] that [`fit_completion`](crate::fit_completion) takes.
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
    /// in a row ([`FitStop::NoValidationGain`](crate::FitStop::NoValidationGain)); acts only when a validation set is given.
    /// Default `None` (run to `max_iter`).
    pub patience: Option<usize>,
    /// Keep a copy of the IMC start (iteration 0: the unlearned IMC-RFF / IMC-NYS fit) in
    /// [`CompletionFit::start`](crate::CompletionFit::start), so one fit serves as both the unlearned baseline and GIMC.
    /// Default false.
    pub keep_start: bool,
    /// The memory pre-flight: [`estimate_completion`](crate::estimate_completion) is checked against it before Φ and Ψ
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

    /// Sets whether the fit keeps a copy of its IMC start ([`CompletionFit::start`](crate::CompletionFit::start)).
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
    pub(crate) fn outer_settings(&self) -> OuterSettings<'_> {
        OuterSettings::new(self.max_iter, self.tol, &self.line_search, NoStep::Skip)
            .with_patience(self.patience)
    }

    pub(crate) fn imc(&self, max_outer: usize) -> Result<ValidImcParams> {
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
    pub(crate) params: CompletionParams,
    pub(crate) start: ValidImcParams,
    pub(crate) inner: ValidImcParams,
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
