//! Clustering: semi-supervised from pairwise constraints, and OKMF with its prediction of new
//! rows.

use gimc::{GimcError, MapRegistry, SemiSupInputs, SemiSupParams, fit_semisupervised};
use gimc_linalg::Preprocess;
use gimc_linalg::rng::seeded;
use numpy::{IntoPyArray, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{
    InputRows, family_name, features, mat_from_py, mat_to_py, parse_gamma, row_norm,
};
use crate::interrupt::{StopOnSignal, run_interruptible};
use crate::value_err;

/// The cluster of every row and the fit's description.
pub(crate) type ClusterFit<'py> = (Bound<'py, numpy::PyArray1<i64>>, Bound<'py, PyDict>);

/// Semi-supervised clustering from pairwise constraints (GIMC Algorithm 2,
/// `gimc::fit_semisupervised`, as `gimc cluster --constraints`): `pairs` is a p × 3 float64
/// array of (i, j, 1 same / 0 different). Returns the cluster of every row and a dict of the
/// chosen λ, iteration count, γ and the training constraint error. An empty `alpha` keeps the
/// paper's λ grid.
#[pyfunction]
#[pyo3(signature = (x, pairs, k, map, m, gamma, alpha, max_iter, seed, standardize, normalize,
                    n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_clusters<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    pairs: PyReadonlyArray2<'py, f64>,
    k: usize,
    map: &str,
    m: usize,
    gamma: &str,
    alpha: Vec<f64>,
    max_iter: usize,
    seed: u64,
    standardize: &str,
    normalize: &str,
    n_jobs: Option<usize>,
) -> PyResult<ClusterFit<'py>> {
    let rows = InputRows::new(x, standardize, normalize)?;
    let (family, learn) = family_name(map)?;
    let gamma = parse_gamma(gamma)?;
    let p = pairs.as_array();
    if p.ncols() != 3 {
        return Err(value_err(format!(
            "constraints must be a (n_pairs, 3) array of (i, j, same), got {} columns",
            p.ncols()
        )));
    }
    let mut list = Vec::with_capacity(p.nrows());
    for (r, row) in p.rows().into_iter().enumerate() {
        let idx = |v: f64| -> PyResult<usize> {
            if v >= 0.0 && v.fract() == 0.0 && v < usize::MAX as f64 {
                Ok(v as usize)
            } else {
                Err(value_err(format!(
                    "constraint {r}: row index {v} is not a non-negative integer"
                )))
            }
        };
        list.push((idx(row[0])?, idx(row[1])?, row[2]));
    }
    let fit = run_interruptible(py, n_jobs, |cancel| {
        let (x, _) = rows.transform()?;
        let registry = MapRegistry::builtin();
        let fam = registry.family(family)?;
        let mut params = SemiSupParams::new(k, m, gamma).with_learn(learn);
        if !alpha.is_empty() {
            params = params.with_lambdas(alpha);
        }
        params.completion.max_iter = max_iter;
        let params = params.check()?;
        let r = fit_semisupervised(
            SemiSupInputs {
                x: &x,
                pairs: &list,
                family: fam,
            },
            &params,
            &mut seeded(seed),
            &mut StopOnSignal(cancel),
        )?;
        Ok((
            r.labels,
            r.lambda,
            r.iterations,
            r.gamma,
            r.train_constraint_error,
        ))
    })?;
    let (labels, lambda, iterations, gamma, err) = fit;
    let info = PyDict::new(py);
    info.set_item("alpha", lambda)?;
    info.set_item("iterations", iterations)?;
    info.set_item("gamma", gamma)?;
    info.set_item("train_constraint_error", err)?;
    let labels: Vec<i64> = labels.into_iter().map(|c| c as i64).collect();
    Ok((labels.into_pyarray(py), info))
}

/// OKMF (online kernel matrix factorisation, `gimc_cluster::fit_okmf`, as `gimc cluster
/// --method okmf`) with an RBF kernel. Returns the clusters of the rows and the model's parts:
/// `budget` (p × d, in the transformed feature space), `w` (p × k), `gamma`, `lambda`, `alpha`,
/// the standardisation (`mean`, `scale`, `center`, or None) and `loss_trace`.
#[pyfunction]
#[pyo3(signature = (x, k, budget_size, gamma, epochs, batch_size, seed, standardize, normalize,
                    n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_okmf<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    k: usize,
    budget_size: usize,
    gamma: &str,
    epochs: usize,
    batch_size: usize,
    seed: u64,
    standardize: &str,
    normalize: &str,
    n_jobs: Option<usize>,
) -> PyResult<ClusterFit<'py>> {
    let rows = InputRows::new(x, standardize, normalize)?;
    let gamma = parse_gamma(gamma)?;
    let (labels, model, st, g) = run_interruptible(py, n_jobs, |cancel| {
        let (x, st) = rows.transform()?;
        let g = gamma.resolve(&x);
        let params = gimc_cluster::OkmfParams::new(k, gimc_linalg::Kernel::Rbf { gamma: g })
            .with_budget_size(budget_size)
            .with_epochs(epochs)
            .with_batch_size(batch_size)
            .check()?;
        let mut until_cancelled = StopOnSignal(cancel);
        let model = gimc_cluster::fit_okmf(&x, &params, &mut seeded(seed), &mut until_cancelled)?;
        let labels = model.predict(&x)?;
        Ok((labels, model, st, g))
    })?;
    let info = PyDict::new(py);
    info.set_item("budget", mat_to_py(py, &model.budget))?;
    info.set_item("w", mat_to_py(py, &model.w))?;
    info.set_item("gamma", g)?;
    info.set_item("lambda", model.lambda())?;
    info.set_item("alpha", model.alpha())?;
    info.set_item("loss_trace", model.loss_trace.clone())?;
    match st {
        Some(st) => {
            info.set_item("mean", st.mean.clone())?;
            info.set_item("scale", st.scale.clone())?;
            info.set_item("center", st.center)?;
        }
        None => info.set_item("mean", py.None())?,
    }
    let labels: Vec<i64> = labels.into_iter().map(|c| c as i64).collect();
    Ok((labels.into_pyarray(py), info))
}

/// The OKMF clusters of new rows from a model's parts (see [`fit_okmf`]); `mean` / `scale` /
/// `center` restore the standardisation (None: none) and `normalize` the row normalisation.
#[pyfunction]
#[pyo3(signature = (x, budget, w, gamma, lambda_, alpha, mean, scale, center, normalize))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn okmf_predict<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    budget: PyReadonlyArray2<'py, f64>,
    w: PyReadonlyArray2<'py, f64>,
    gamma: f64,
    lambda_: f64,
    alpha: f64,
    mean: Option<Vec<f64>>,
    scale: Option<Vec<f64>>,
    center: bool,
    normalize: &str,
) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
    let x = features(x)?;
    let (budget, w) = (mat_from_py(&budget), mat_from_py(&w));
    let pre = Preprocess {
        standardizer: match (mean, scale) {
            (Some(mean), Some(scale)) => Some(gimc_linalg::Standardizer {
                mean,
                scale,
                center,
            }),
            (None, None) => None,
            _ => return Err(value_err("give both mean and scale, or neither")),
        },
        row_norm: row_norm(normalize)?,
        ..Preprocess::default()
    };
    let labels = py
        .detach(|| -> Result<Vec<usize>, GimcError> {
            let model = gimc_cluster::Okmf::from_parts(gimc_cluster::OkmfParts {
                budget,
                w,
                kernel: gimc_linalg::Kernel::Rbf { gamma },
                lambda: lambda_,
                alpha,
            })?;
            let x = pre.apply(&x)?;
            Ok(model.predict(&x)?)
        })
        .map_err(value_err)?;
    let labels: Vec<i64> = labels.into_iter().map(|c| c as i64).collect();
    Ok(labels.into_pyarray(py))
}
