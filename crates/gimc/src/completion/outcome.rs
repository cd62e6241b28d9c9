//! What a completion fit returns: one record per outer iteration, the best-validation iterate
//! and the fit itself ([`CompletionFit`]).

use gimc_featmap::LearnableMap;
use gimc_linalg::faer::Mat;

use super::model::CompletionModel;
use crate::error::Result;
use crate::outer::FitStop;

/// One outer iteration of [`fit_completion`](crate::fit_completion) (iteration 0: the IMC start).
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

/// The result of [`fit_completion`](crate::fit_completion).
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionFit<MR, MC> {
    /// The final model.
    pub model: CompletionModel<MR, MC>,
    /// One record per iteration, starting with the IMC start.
    pub history: Vec<CompletionIteration>,
    /// The lowest-validation-error iterate (when a validation set was given).
    pub best: Option<BestCompletion>,
    /// The IMC start, iteration 0 (with [`CompletionParams::keep_start`](crate::CompletionParams::keep_start)); its `error` is the
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
