//! The methods of the figure: MC, IMC, IMC-RFF and GIMC-LFF, each with its grid and fit.

use super::grid::{Grid, Setting};
use crate::ExperimentError;
use gimc::{CompletionData, CompletionInputs, CompletionParams, fit_completion};
use gimc_data::synth::Fig1Toy;
use gimc_featmap::{FeatureMap, RandomFourier, RandomFourierParams};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{
    CgParams, ImcParams, ImcProblem, ImcStart, NoObserver, Side, fit_imc, fit_mc_als,
};

/// What a method sees of one toy problem.
#[derive(Debug, Clone, Copy)]
pub struct Fig1Task<'a> {
    /// The toy (features, clean and noisy matrix).
    pub toy: &'a Fig1Toy,
    /// X as a feature matrix (n × d).
    pub x: &'a FeatureMatrix,
    /// Y as a feature matrix (n × d).
    pub y: &'a FeatureMatrix,
    /// The rank to fit (k = 20).
    pub rank: usize,
    /// Whether the quick form runs (methods may use fewer iterations).
    pub quick: bool,
}

/// What a fit returns: the full prediction Â and, for a method that chooses part of its
/// setting while fitting (GIMC-LFF's iteration count, from its validation trajectory), the
/// setting actually used, which the refit on all of Ω then takes.
#[derive(Debug, Clone)]
pub struct Fig1Fit {
    /// Â (n × n, every entry).
    pub prediction: Mat<f64>,
    /// The effective setting when it differs from the one passed in.
    pub effective: Option<Setting>,
}

impl From<Mat<f64>> for Fig1Fit {
    fn from(prediction: Mat<f64>) -> Self {
        Self {
            prediction,
            effective: None,
        }
    }
}

/// A method of Figure 1: its hyper-parameter grid and how it fits and predicts.
pub trait Fig1Method: Send + Sync {
    /// Name printed in the table (e.g. `IMC-RFF`).
    fn name(&self) -> &'static str;
    /// The hyper-parameter grid searched on the validation split (`dim` = d, the feature
    /// dimension), by [`select`](super::grid::select). `base` is the chosen setting of the method named by
    /// [`Fig1Method::starts_from`], when there is one.
    fn grid(&self, quick: bool, dim: usize, base: Option<&Setting>) -> Grid;
    /// The method (earlier in [`fig1_methods`]) whose chosen setting and random stream this one
    /// starts from: GIMC-LFF starts from the IMC-RFF solution, as Algorithm 1 does. `None` by
    /// default.
    fn starts_from(&self) -> Option<&'static str> {
        None
    }
    /// Fits on the observed entries `train` with `setting` and returns Â. `validation`, when
    /// given, holds held-out entries the method may score while fitting (and then report the
    /// setting it settled on in [`Fig1Fit::effective`]). Any random draw comes from `rng`; the
    /// same stream is passed for the validation fit and for the refit on all of Ω, so a chosen
    /// random map is the one refitted.
    fn fit_predict(
        &self,
        task: &Fig1Task<'_>,
        train: &Observed,
        validation: Option<&Observed>,
        setting: &Setting,
        rng: &mut GimcRng,
    ) -> Result<Fig1Fit, ExperimentError>;
}

/// The methods of Figure 1, in table order (a method that [`Fig1Method::starts_from`] another
/// comes after it).
pub fn fig1_methods() -> Vec<Box<dyn Fig1Method>> {
    vec![
        Box::new(MC),
        Box::new(IMC),
        Box::new(ImcRff),
        Box::new(GimcLff),
    ]
}

/// λ candidates (full form, quick form) of MC.
pub(super) const MC_LAMBDAS: (&[f64], &[f64]) = (
    &[0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
    &[100.0, 300.0],
);
/// λ candidates of IMC (raw features: ‖x‖² ≈ d, so larger λ than RFF).
pub(super) const IMC_LAMBDAS: (&[f64], &[f64]) =
    (&[100.0, 300.0, 1000.0, 3000.0, 10000.0], &[300.0, 1000.0]);
/// λ candidates of IMC-RFF (‖φ(x)‖² = 1, but with γ ≈ 0.03/d most of that is the near-constant
/// cosine half, so the informative sine half is small and λ must reach well below 1: the last
/// full run with λ ≥ 0.3 chose the grid's lower end almost everywhere). The first is the start.
pub(super) const RFF_LAMBDAS: (&[f64], &[f64]) = (
    &[1.0, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 3.0],
    &[0.1, 1.0],
);

pub(super) fn lambda_grid(grid: (&[f64], &[f64]), quick: bool) -> Grid {
    Grid::single("λ", if quick { grid.1 } else { grid.0 })
}

pub(super) fn imc_params(rank: usize, lambda: f64, quick: bool) -> ImcParams {
    ImcParams::default()
        .with_rank(rank)
        .with_lambda(lambda)
        .with_max_outer(if quick { 8 } else { 25 })
        .with_tol(1e-6)
        .with_cg(
            CgParams::default()
                .with_tol(1e-6)
                .with_max_iter(if quick { 15 } else { 20 }),
        )
}

/// How a [`LambdaMethod`] fits: on the observed entries `train` with λ, returning Â.
type LambdaFit =
    fn(&Fig1Task<'_>, &Observed, f64, &mut GimcRng) -> Result<Mat<f64>, ExperimentError>;

/// A method whose only hyper-parameter is λ ([`MC`], [`IMC`]): its name, λ candidates (full
/// form, quick form) and fit.
#[derive(Debug, Clone, Copy)]
pub struct LambdaMethod {
    name: &'static str,
    lambdas: (&'static [f64], &'static [f64]),
    fit: LambdaFit,
}

impl Fig1Method for LambdaMethod {
    fn name(&self) -> &'static str {
        self.name
    }
    fn grid(&self, quick: bool, _dim: usize, _base: Option<&Setting>) -> Grid {
        lambda_grid(self.lambdas, quick)
    }
    fn fit_predict(
        &self,
        task: &Fig1Task<'_>,
        train: &Observed,
        _validation: Option<&Observed>,
        setting: &Setting,
        rng: &mut GimcRng,
    ) -> Result<Fig1Fit, ExperimentError> {
        (self.fit)(task, train, setting.get("λ")?, rng).map(Fig1Fit::from)
    }
}

/// Plain MC by ALS (GIMC eq. 2).
pub const MC: LambdaMethod = LambdaMethod {
    name: "MC",
    lambdas: MC_LAMBDAS,
    fit: |task, train, lambda, rng| {
        let params = imc_params(task.rank, lambda, task.quick).check()?;
        let model = fit_mc_als(train, &params, ImcStart::Draw(rng), &mut NoObserver)?;
        Ok(&model.w * model.h.transpose())
    },
};

/// IMC with the raw features Φ = X, Ψ = Y (GIMC eq. 3).
pub const IMC: LambdaMethod = LambdaMethod {
    name: "IMC",
    lambdas: IMC_LAMBDAS,
    fit: |task, train, lambda, rng| fit_features(task, task.x, task.y, train, lambda, rng),
};

/// Fits IMC with features `phi`, `psi` and returns the full prediction.
pub(super) fn fit_features(
    task: &Fig1Task<'_>,
    phi: &FeatureMatrix,
    psi: &FeatureMatrix,
    train: &Observed,
    lambda: f64,
    rng: &mut GimcRng,
) -> Result<Mat<f64>, ExperimentError> {
    let params = imc_params(task.rank, lambda, task.quick).check()?;
    let (phi, psi) = (Side::Features(phi), Side::Features(psi));
    let problem = ImcProblem::partial(phi, psi, train)?;
    let model = fit_imc(&problem, &params, ImcStart::Draw(rng), &mut NoObserver)?;
    model
        .scores_for_rows(phi, psi)
        .map_err(ExperimentError::from)
}

/// The row and column RFF maps of IMC-RFF and GIMC-LFF: separate draws from `rng`, in this
/// order, with the setting's m and γ (so GIMC-LFF starts from exactly IMC-RFF's maps).
pub(super) fn draw_rff_pair(
    task: &Fig1Task<'_>,
    setting: &Setting,
    rng: &mut GimcRng,
) -> Result<(RandomFourier, RandomFourier), ExperimentError> {
    let rff = RandomFourierParams::new(setting.get("m")? as usize, setting.get("γ")?).check()?;
    let d = task.x.ncols();
    let fx = RandomFourier::new(d, &rff, rng)?;
    let fy = RandomFourier::new(d, &rff, rng)?;
    Ok((fx, fy))
}

/// IMC on random Fourier features, Φ = RFF(X), Ψ = RFF(Y) (separate draws, same m and γ).
#[derive(Debug, Clone, Copy)]
pub struct ImcRff;

impl Fig1Method for ImcRff {
    fn name(&self) -> &'static str {
        "IMC-RFF"
    }
    fn grid(&self, quick: bool, dim: usize, _base: Option<&Setting>) -> Grid {
        // γ in units of 1/d: ‖x − y‖² ≈ 2d for standard Gaussian rows
        let (ms, gs): (&[f64], &[f64]) = if quick {
            (&[50.0], &[0.03])
        } else {
            (
                &[100.0, 200.0, 400.0, 800.0, 1600.0],
                &[0.01, 0.03, 0.1, 0.3, 1.0, 3.0],
            )
        };
        let lambdas = if quick { RFF_LAMBDAS.1 } else { RFF_LAMBDAS.0 };
        Grid {
            axes: vec![
                ("m", ms.to_vec()),
                ("γ", gs.iter().map(|g| g / dim as f64).collect()),
                ("λ", lambdas.to_vec()),
            ],
            // the smallest m, γ = 0.03/d, λ = 1
            start: vec![0, gs.iter().position(|&g| g == 0.03).unwrap_or(0), 0],
        }
    }
    fn fit_predict(
        &self,
        task: &Fig1Task<'_>,
        train: &Observed,
        _validation: Option<&Observed>,
        setting: &Setting,
        rng: &mut GimcRng,
    ) -> Result<Fig1Fit, ExperimentError> {
        let (fx, fy) = draw_rff_pair(task, setting, rng)?;
        let phi = FeatureMatrix::dense(fx.forward(task.x)?)?;
        let psi = FeatureMatrix::dense(fy.forward(task.y)?)?;
        fit_features(task, &phi, &psi, train, setting.get("λ")?, rng).map(Fig1Fit::from)
    }
}

/// GIMC-LFF (DESIGN §3.3, Algorithm 1 on Ω), started from the IMC-RFF solution as the paper's
/// Algorithm 1 is: IMC-RFF's chosen m, γ, λ and its random stream (so iteration 0 is exactly
/// IMC-RFF's fit, same map draws and same spectral start), then U and V learned by Armijo
/// steps alternating with warm-started IMC. The number of outer iterations is chosen on the
/// validation entries from one trajectory (`fit_completion` scores them after every iteration
/// and keeps the best iterate, 0 included), then the refit on all of Ω runs that many.
#[derive(Debug, Clone, Copy)]
pub struct GimcLff;

/// Most outer iterations GIMC-LFF may take (full form, quick form).
pub const LFF_MAX_ITERS: (usize, usize) = (100, 10);

/// GIMC-LFF's validation patience: a selection trajectory stops after this many outer
/// iterations in a row without a new lowest validation error. In a full run no trajectory of
/// the 170 waits longer than 36 iterations for a new best, so this cut keeps every chosen
/// iteration count (docs/REPRODUCTION.md, gimc-fig1).
pub const LFF_PATIENCE: usize = 40;

impl Fig1Method for GimcLff {
    fn name(&self) -> &'static str {
        "GIMC-LFF"
    }
    fn starts_from(&self) -> Option<&'static str> {
        Some("IMC-RFF")
    }
    fn grid(&self, quick: bool, dim: usize, base: Option<&Setting>) -> Grid {
        let max = if quick {
            LFF_MAX_ITERS.1
        } else {
            LFF_MAX_ITERS.0
        };
        // IMC-RFF's choice (or its starting point when run alone)
        let base = base.cloned().unwrap_or_else(|| {
            let g = ImcRff.grid(quick, dim, None);
            g.setting(&g.start)
        });
        // λ: IMC-RFF's and its neighbours on IMC-RFF's λ grid (learning the map changes how
        // much shrinkage is right), searched from IMC-RFF's; m, γ: IMC-RFF's
        let mut lambdas = (if quick { RFF_LAMBDAS.1 } else { RFF_LAMBDAS.0 }).to_vec();
        lambdas.sort_by(f64::total_cmp);
        let base_lambda = base.get("λ").unwrap_or(1.0);
        let at = lambdas
            .iter()
            .position(|&l| l == base_lambda)
            .unwrap_or(lambdas.len() / 2);
        let near: Vec<f64> = lambdas[at.saturating_sub(1)..(at + 2).min(lambdas.len())].to_vec();
        let start_lambda = near.iter().position(|&l| l == base_lambda).unwrap_or(0);
        let mut axes: Vec<(&'static str, Vec<f64>)> = Vec::new();
        let mut start = Vec::new();
        for &(name, v) in &base.values {
            if name == "λ" {
                axes.push((name, near.clone()));
                start.push(start_lambda);
            } else {
                axes.push((name, vec![v]));
                start.push(0);
            }
        }
        axes.push(("iterations", vec![max as f64]));
        start.push(0);
        Grid { axes, start }
    }
    fn fit_predict(
        &self,
        task: &Fig1Task<'_>,
        train: &Observed,
        validation: Option<&Observed>,
        setting: &Setting,
        rng: &mut GimcRng,
    ) -> Result<Fig1Fit, ExperimentError> {
        let (fx, fy) = draw_rff_pair(task, setting, rng)?;
        let imc = imc_params(task.rank, setting.get("λ")?, task.quick);
        let params = CompletionParams::default()
            .with_rank(task.rank)
            .with_lambda(setting.get("λ")?)
            .with_max_iter(setting.get("iterations")? as usize)
            .with_patience(Some(LFF_PATIENCE))
            .with_start_iters(imc.max_outer)
            .with_inner_iters(3)
            .with_imc_tol(imc.tol)
            .with_cg(imc.cg)
            .check()?;
        let data = CompletionData::new(train, task.x, task.y)?;
        let fit = fit_completion(
            CompletionInputs {
                data: data.with_validation(validation),
                row_map: fx,
                col_map: fy,
            },
            &params,
            rng,
            &mut NoObserver,
        )?;
        let effective = fit.best.as_ref().map(|b| {
            let mut s = setting.clone();
            for (name, v) in &mut s.values {
                if *name == "iterations" {
                    *v = b.iteration as f64;
                }
            }
            s
        });
        let prediction = fit
            .into_chosen()
            .and_then(|model| model.predict_dense(task.x, task.y))?;
        Ok(Fig1Fit {
            prediction,
            effective,
        })
    }
}
