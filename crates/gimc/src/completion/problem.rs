//! The general path as an [`OuterProblem`]: the blocks U then V (those learned), step (1)
//! before the searches ([`OuterProblem::factors_before_search`]: warm-started IMC alternations),
//! [`NoStep::Skip`](crate::outer::NoStep::Skip) (a side whose search fails takes no step), the
//! objective and the map gradients.

use gimc_featmap::LearnableMap;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{
    FactorProducts, FeatureSides, ImcProblem, ImcStart, ImcWorkspace, IterationRecord, NoObserver,
    PreconditionerBasis, ScreenedFeatures, ValidImcParams, fit_imc, preconditioner_bases,
};

use super::data::CompletionData;
use super::model::{CompletionModel, CompletionParts};
use super::outcome::{BestCompletion, CompletionFit, CompletionIteration};
use super::params::ValidCompletionParams;
use crate::error::Result;
use crate::outer::{Goal, OuterIteration, OuterProblem, OuterRun};

/// Which map a line search updates: a block of [`CompletionOuter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
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
    pub(crate) fn screened(self, features: Mat<f64>) -> Result<ScreenedFeatures> {
        let what = match self {
            Which::Rows => "row features Φ",
            Which::Cols => "column features Ψ",
        };
        Ok(ScreenedFeatures::new(FeatureMatrix::Dense(features), what)?)
    }
}

/// f(W, H, U, V) at the features Φ, Ψ, with the products `pq` = (ΦW, ΨH).
pub(crate) fn objective(
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
pub(crate) fn products(
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
pub(crate) fn side_gradient<M: LearnableMap>(
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
pub(crate) struct CompletionSnapshot {
    pub(crate) row_params: Mat<f64>,
    pub(crate) col_params: Mat<f64>,
    pub(crate) w: Mat<f64>,
    pub(crate) h: Mat<f64>,
}

/// The general path as an [`OuterProblem`] (module documentation): blocks U then V (those
/// learned), W and H by warm-started IMC alternations before the searches (step (1)).
pub(crate) struct CompletionOuter<'a, MR, MC> {
    pub(crate) data: CompletionData<'a>,
    pub(crate) params: &'a ValidCompletionParams,
    pub(crate) validation: Option<&'a Observed>,
    /// The IMC solve of step (1).
    pub(crate) inner: ValidImcParams,
    /// The Kronecker preconditioner bases of the start, reused by every IMC solve.
    pub(crate) bases: (Option<PreconditionerBasis>, Option<PreconditionerBasis>),
    pub(crate) row_map: MR,
    pub(crate) col_map: MC,
    /// Φ = φ_U(X) at the current U, screened for NaN / Inf once, when the map produced it.
    pub(crate) phi: ScreenedFeatures,
    /// Ψ = ψ_V(Y) at the current V, screened likewise.
    pub(crate) psi: ScreenedFeatures,
    pub(crate) w: Mat<f64>,
    pub(crate) h: Mat<f64>,
    /// (ΦW, ΨH) at the current Φ, Ψ, W and H, kept in step with them: the gradients and the
    /// objective after the IMC step share them, and a trial on one side forms only its own.
    pub(crate) pq: FactorProducts,
    /// The learned maps, in search order.
    pub(crate) sides: Vec<Which>,
    /// The IMC start, kept with [`CompletionParams::keep_start`].
    pub(crate) start: Option<CompletionSnapshot>,
}

impl<'a, MR: LearnableMap, MC: LearnableMap> CompletionOuter<'a, MR, MC> {
    /// Iteration 0: IMC with the initial maps from the spectral start (the IMC-RFF / IMC-NYS
    /// solution), with its objective.
    pub(crate) fn start(
        data: &CompletionData<'a>,
        row_map: MR,
        col_map: MC,
        params: &'a ValidCompletionParams,
        validation: Option<&'a Observed>,
        rng: &mut GimcRng,
    ) -> Result<(Self, f64)> {
        let phi = Which::Rows.screened(row_map.forward(data.x)?)?;
        let psi = Which::Cols.screened(col_map.forward(data.y)?)?;
        // the Kronecker preconditioner bases of the start (symmetric problems compute one)
        let bases = preconditioner_bases(&ImcProblem::partial_screened(&phi, &psi, data.omega)?);
        let imc_start = {
            let prob = ImcProblem::partial_screened(&phi, &psi, data.omega)?
                .with_preconditioner_bases(bases.0.as_ref(), bases.1.as_ref())?;
            fit_imc(
                &prob,
                params.valid_imc_start(),
                ImcStart::Draw(rng),
                &mut NoObserver,
            )?
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
    pub(crate) fn objective_at(
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
    pub(crate) fn validation_error(&self) -> Result<Option<f64>> {
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
    pub(crate) fn step_of(&self, side: Which, steps: &[Option<f64>]) -> Option<f64> {
        self.sides
            .iter()
            .zip(steps)
            .find(|(s, _)| **s == side)
            .and_then(|(_, step)| *step)
    }

    /// The fit's result from the loop's: the model at the last iterate, the best iterate.
    pub(crate) fn into_fit(
        self,
        run: OuterRun<CompletionIteration, CompletionSnapshot>,
    ) -> Result<CompletionFit<MR, MC>> {
        let model = CompletionModel::new(CompletionParts {
            row_map: self.row_map,
            col_map: self.col_map,
            w: self.w,
            h: self.h,
            lambda: self.params.lambda,
        })?;
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

impl<MR: LearnableMap, MC: LearnableMap> OuterProblem for CompletionOuter<'_, MR, MC> {
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
        let warm = ImcStart::Warm(
            std::mem::replace(&mut self.w, Mat::new()),
            std::mem::replace(&mut self.h, Mat::new()),
        );
        let m = fit_imc(&prob, &self.inner, warm, &mut NoObserver)?;
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
