//! The hyper-parameters of the general path ([`CompletionParams`]) and their checked form.

use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::{CgParams, ValidCgParams};
use gimc_solvers::{ImcInit, ImcParams, ValidImcParams};

use crate::error::Result;
use crate::error::{check_nonneg, param_err};
use crate::linesearch::LineSearchParams;
use crate::outer::{NoStep, OuterSettings};

gimc_linalg::params! {
    /// Hyper-parameters of [`fit_completion`](crate::fit_completion). Build with
    /// [`CompletionParams::default`] and the `with_*` methods; [`CompletionParams::check`]
    /// validates them into the [`ValidCompletionParams`] that
    /// [`fit_completion`](crate::fit_completion) takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CompletionParams => ValidCompletionParams {
        /// Rank k of Z = WHᵀ, 1 ≤ k < min(D_x, D_y). Default 10.
        pub rank: usize = 10 => with_rank,
        /// Ridge weight λ ≥ 0 on ‖W‖² + ‖H‖². Default 0.1.
        pub lambda: f64 = 0.1 => with_lambda,
        /// Outer iterations of Algorithm 1 (0: just the IMC start). Default 10.
        pub max_iter: usize = 10 => with_max_iter,
        /// IMC alternations for the start (iteration 0). Default 50.
        pub start_iters: usize = 50 => with_start_iters,
        /// Warm-started IMC alternations in step (1) of every outer iteration. Default 3.
        pub inner_iters: usize = 3 => with_inner_iters,
        /// Stopping rule of the IMC solves (relative decrease per alternation). Default 1e-6.
        pub imc_tol: f64 = 1e-6 => with_imc_tol,
        /// CG stopping rule of the IMC half-steps. Default tol 1e-6, 50 iterations.
        pub cg: CgParams = CgParams::default().with_tol(1e-6).with_max_iter(50) => with_cg,
        /// Learn the row map U. Default true.
        pub learn_rows: bool = true => with_learn_rows,
        /// Learn the column map V. Default true.
        pub learn_cols: bool = true => with_learn_cols,
        /// The Armijo line search (one state per side).
        pub line_search: LineSearchParams = LineSearchParams::default() => with_line_search,
        /// Stop when the relative decrease of f over one outer iteration is ≤ `tol` (0 disables).
        /// Default 0.
        pub tol: f64 = 0.0 => with_tol,
        /// Stop once the validation error has not beaten its best for this many outer iterations in
        /// a row ([`FitStop::NoValidationGain`](crate::FitStop::NoValidationGain)); acts only when
        /// a validation set is given. Default `None` (run to `max_iter`).
        pub patience: Option<usize> = None => with_patience,
        /// Keep a copy of the IMC start (iteration 0: the unlearned IMC-RFF / IMC-NYS fit) in
        /// [`CompletionFit::start`](crate::CompletionFit::start), so one fit serves as both the
        /// unlearned baseline and GIMC. Default false.
        pub keep_start: bool = false => with_keep_start,
        /// The memory pre-flight: [`estimate_completion`](crate::estimate_completion) is checked
        /// against it before Φ and Ψ are formed. Default [`MemoryBudget::Detect`] (the memory
        /// available now).
        pub memory: MemoryBudget = MemoryBudget::Detect => with_memory,
    }
    check(manual) -> crate::GimcError;
}

impl CompletionParams {
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
