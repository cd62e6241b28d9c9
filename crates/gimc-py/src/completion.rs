//! Matrix completion: the solver methods with a held-out choice of λ, GIMC completion with
//! kernel maps on both sides, and the factors of new rows or columns under a completion model.

use std::sync::atomic::AtomicBool;

use gimc::{Completed, CompletionMethod, MapRegistry};
use gimc_linalg::Observed;
use gimc_solvers::Side;
use numpy::{PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{family_name, features, indices, mat_to_py, parse_gammas};
use crate::interrupt::{StopOnSignal, run_interruptible};
use crate::value_err;

/// W, H and the fit's description.
pub(crate) type CompletionFit<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyDict>,
);

/// `gimc::complete` by `method` of `omega` with its rows and columns described by `phi` and
/// `psi`, its fits stopped when `cancel` is set.
fn complete(
    method: &CompletionMethod,
    phi: Side<'_>,
    psi: Side<'_>,
    omega: &Observed,
    params: &gimc::ValidCompletionSelectionParams,
    registry: &MapRegistry,
    cancel: &AtomicBool,
) -> Result<Completed, gimc::GimcError> {
    let matrix = gimc::ObservedMatrix { phi, psi, omega };
    gimc::complete(method, matrix, params, registry, &mut StopOnSignal(cancel))
}

/// Matrix completion by `method` (`gimc::complete`, as `gimc complete --method`): `mc-als`, `imc` (ALS + CG), `mc-nuclear` / `imc-nuclear` (FPC), `pu-imc`.
/// Z = X W (Y H)ᵀ is fitted to the observed `(rows, cols, values)`; `x_rows` / `x_cols` are the
/// row and column features (None: the identity, with `n_rows` / `n_cols` entries). A grid
/// `alpha` is chosen by the RMSE on a held-out `holdout` fraction of Ω; for `pu-imc`, the grids
/// `alpha` and `rho` by the AUC of the held-out positives against entries outside Ω
/// Returns W, H and a dict of the chosen λ (and ρ), the held-out RMSE per
/// λ (or AUC per (λ, ρ)), the rank, the iterations and the objective.
#[pyfunction]
#[pyo3(signature = (method, x_rows, n_rows, x_cols, n_cols, rows, cols, values, rank, alpha,
                    holdout, rho, max_iter, seed, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_completion<'py>(
    py: Python<'py>,
    method: &str,
    x_rows: Option<&Bound<'py, PyAny>>,
    n_rows: usize,
    x_cols: Option<&Bound<'py, PyAny>>,
    n_cols: usize,
    rows: PyReadonlyArray1<'py, i64>,
    cols: PyReadonlyArray1<'py, i64>,
    values: PyReadonlyArray1<'py, f64>,
    rank: usize,
    alpha: Vec<f64>,
    holdout: f64,
    rho: Vec<f64>,
    max_iter: usize,
    seed: u64,
    n_jobs: Option<usize>,
) -> PyResult<CompletionFit<'py>> {
    let registry = MapRegistry::builtin();
    let method = CompletionMethod::parse(method, &registry).map_err(value_err)?;
    if matches!(method, CompletionMethod::Maps { .. }) {
        return Err(value_err(format!(
            "method {}: the map methods are fit_gimc_completion's",
            method.name()
        )));
    }
    let pu = method == CompletionMethod::PuImc;
    if !pu && rho.len() > 1 {
        return Err(value_err("rho is a grid of pu-imc only"));
    }
    let params = gimc::CompletionSelectionParams::default()
        .with_lambdas(alpha)
        .with_rhos(rho)
        .with_holdout(holdout)
        .with_rank(rank)
        .with_max_iter(max_iter)
        .with_seed(seed)
        .check()
        .map_err(|e| value_err(e.to_string()))?;
    let fx = x_rows.map(features).transpose()?;
    let fy = x_cols.map(features).transpose()?;
    let (r, c) = (
        indices(&rows, "row index")?,
        indices(&cols, "column index")?,
    );
    let vals = values.as_slice()?.to_vec();
    let fit = run_interruptible(py, n_jobs, |cancel| {
        let n1 = fx.as_ref().map_or(n_rows, |f| f.nrows());
        let n2 = fy.as_ref().map_or(n_cols, |f| f.nrows());
        let omega = Observed::from_triplets(n1, n2, &r, &c, &vals)?;
        let phi = fx.as_ref().map_or(Side::Identity(n1), Side::Features);
        let psi = fy.as_ref().map_or(Side::Identity(n2), Side::Features);
        let Completed::Factors(f) =
            complete(&method, phi, psi, &omega, &params, &registry, cancel)?
        else {
            return Err(gimc::GimcError::Empty("factor model"));
        };
        let holdout_rmse: Vec<(f64, f64)> = if pu {
            Vec::new()
        } else {
            f.scores.iter().map(|s| (s.lambda, s.score)).collect()
        };
        let holdout_auc: Vec<(f64, f64, f64)> = f
            .scores
            .iter()
            .filter_map(|s| s.rho.map(|rho| (s.lambda, rho, s.score)))
            .collect();
        Ok((f.lambda, f.rho, holdout_rmse, holdout_auc, f.model))
    })?;
    let (lambda, chosen_rho, holdout_rmse, holdout_auc, model) = fit;
    let info = PyDict::new(py);
    info.set_item("alpha", lambda)?;
    info.set_item("rho", chosen_rho)?;
    info.set_item("holdout_rmse", holdout_rmse)?;
    info.set_item("holdout_auc", holdout_auc)?;
    info.set_item("rank", model.rank())?;
    info.set_item("iterations", model.iterations)?;
    info.set_item("objective", model.objective_trace.last().copied())?;
    info.set_item("stop_reason", format!("{:?}", model.stop_reason))?;
    Ok((mat_to_py(py, &model.w), mat_to_py(py, &model.h), info))
}

/// The model bytes, the row and column factors Φ(X) W and Ψ(Y) H of the training features,
/// and the fit's description.
pub(crate) type GimcCompletionFit<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyDict>,
);

/// GIMC completion with kernel maps on both sides (`gimc::complete`, as `gimc complete
/// --method gimc-lff|gimc-lnys|imc-rff|imc-nys`): `map` is `lff` / `lnys` (learned) or `rff` /
/// `nys` (kept at the random draw); `learn` is `both`, `rows` or `cols`; m, γ and λ are grids
/// chosen with the iteration count on a held-out `holdout` fraction of Ω, then refitted.
/// `patience` stops each grid point's map learning that many iterations without a better
/// held-out error (None: run to `max_iter`). Returns the model file's bytes, Φ(X) W, Ψ(Y) H
/// and a dict of the choice and every grid point's held-out relative error.
#[pyfunction]
#[pyo3(signature = (map, learn, x_rows, x_cols, rows, cols, values, ms, gammas, alpha, rank,
                    max_iter, holdout, seed, n_jobs=None, patience=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_gimc_completion<'py>(
    py: Python<'py>,
    map: &str,
    learn: &str,
    x_rows: &Bound<'py, PyAny>,
    x_cols: &Bound<'py, PyAny>,
    rows: PyReadonlyArray1<'py, i64>,
    cols: PyReadonlyArray1<'py, i64>,
    values: PyReadonlyArray1<'py, f64>,
    ms: Vec<usize>,
    gammas: Vec<String>,
    alpha: Vec<f64>,
    rank: usize,
    max_iter: usize,
    holdout: f64,
    seed: u64,
    n_jobs: Option<usize>,
    patience: Option<usize>,
) -> PyResult<GimcCompletionFit<'py>> {
    let (family, learned) = family_name(map)?;
    let (learn_rows, learn_cols) = match learn {
        "both" => (true, true),
        "rows" => (true, false),
        "cols" => (false, true),
        _ => {
            return Err(value_err(format!(
                "learn must be 'both', 'rows' or 'cols', got {learn:?}"
            )));
        }
    };
    let gammas = parse_gammas(&gammas)?;
    let (fx, fy) = (features(x_rows)?, features(x_cols)?);
    let (r, c) = (
        indices(&rows, "row index")?,
        indices(&cols, "column index")?,
    );
    let vals = values.as_slice()?.to_vec();
    let params = gimc::CompletionSelectionParams::default()
        .with_ms(ms)
        .with_gammas(gammas)
        .with_lambdas(alpha)
        .with_rank(rank)
        .with_max_iter(max_iter)
        .with_learn(learn_rows, learn_cols)
        .with_holdout(holdout)
        .with_patience(patience)
        .with_seed(seed)
        .check()
        .map_err(|e| value_err(e.to_string()))?;
    let method = CompletionMethod::Maps {
        family: family.to_string(),
        learn: learned,
    };
    let (bytes, p, q, sel) = run_interruptible(py, n_jobs, |cancel| {
        let omega = Observed::from_triplets(fx.nrows(), fy.nrows(), &r, &c, &vals)?;
        let registry = MapRegistry::builtin();
        let (phi, psi) = (Side::Features(&fx), Side::Features(&fy));
        let Completed::Maps(sel) = complete(&method, phi, psi, &omega, &params, &registry, cancel)?
        else {
            return Err(gimc::GimcError::Empty("map model"));
        };
        let bytes = gimc::persist::completion_model_to_bytes(&sel.model)?;
        let p = sel.model.row_factors(&fx)?;
        let q = sel.model.col_factors(&fy)?;
        Ok((bytes, p, q, sel))
    })?;
    let info = PyDict::new(py);
    let c = sel.chosen;
    info.set_item("alpha", c.lambda)?;
    info.set_item("m", c.m)?;
    info.set_item("gamma", c.gamma.to_string())?;
    info.set_item("gamma_resolved", sel.gamma_resolved)?;
    info.set_item("iterations", c.iterations)?;
    info.set_item("holdout_error", c.holdout_relative_error)?;
    let grid: Vec<(usize, String, f64, usize, f64)> = sel
        .scores
        .iter()
        .map(|s| {
            (
                s.m,
                s.gamma.to_string(),
                s.lambda,
                s.iterations,
                s.holdout_relative_error,
            )
        })
        .collect();
    info.set_item("holdout_errors", grid)?;
    info.set_item("rank", sel.model.rank())?;
    Ok((
        PyBytes::new(py, &bytes),
        mat_to_py(py, &p),
        mat_to_py(py, &q),
        info,
    ))
}

/// The factors of new rows (`side = "rows"`: Φ(X) W) or columns (`"cols"`: Ψ(Y) H) under a
/// completion model's bytes.
#[pyfunction]
pub(crate) fn completion_factors<'py>(
    py: Python<'py>,
    model: &[u8],
    x: &Bound<'py, PyAny>,
    side: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let f = features(x)?;
    let m = gimc::persist::completion_model_from_bytes(model, &MapRegistry::builtin())
        .map_err(|e| value_err(e.to_string()))?;
    let out = match side {
        "rows" => m.row_factors(&f),
        "cols" => m.col_factors(&f),
        _ => {
            return Err(value_err(format!(
                "side must be 'rows' or 'cols', got {side:?}"
            )));
        }
    }
    .map_err(|e| value_err(e.to_string()))?;
    Ok(mat_to_py(py, &out))
}
