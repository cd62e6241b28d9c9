//! MC-1 / MC-b transduction of a table with missing features and partly known labels.

use gimc_linalg::rng::seeded;
use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::completion::CompletionFit;
use crate::convert::{mat_from_py, mat_to_py};
use crate::interrupt::run_interruptible;
use crate::value_err;

/// MC-1 / MC-b transduction of a table (`gimc_solvers::transduction::data::transduce`, as
/// `gimc transduce`): `x` n × d with NaN in the missing cells, `y` n × t with +1 / −1 known
/// labels and 0 unknown. Returns the n × t scores, the n × d imputed features and a dict of the
/// chosen λ, μ and the cross-validated label error (%).
#[pyfunction]
#[pyo3(signature = (x, y, method, lambdas, folds, mu_count, max_stage_iters, standardize, seed,
                    n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn transduce<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray2<'py, f64>,
    method: &str,
    lambdas: Vec<f64>,
    folds: usize,
    mu_count: usize,
    max_stage_iters: usize,
    standardize: bool,
    seed: u64,
    n_jobs: Option<usize>,
) -> PyResult<CompletionFit<'py>> {
    use gimc_solvers::transduction::data::{Baseline, TransductionTable, transduce_baseline};
    let (variant, baseline) = match method {
        "mc1" => (gimc_solvers::TransductionVariant::Mc1, None),
        "mcb" => (gimc_solvers::TransductionVariant::McB, None),
        "fpc-svm" => (
            gimc_solvers::TransductionVariant::Mc1,
            Some(Baseline::FpcSvm(
                gimc_solvers::FpcImputeParams::default()
                    .with_folds(folds)
                    .with_mu_count(mu_count)
                    .with_max_stage_iters(max_stage_iters)
                    .with_accelerate(true)
                    .check()
                    .map_err(|e| value_err(e.to_string()))?,
            )),
        ),
        "mean-svm" => (
            gimc_solvers::TransductionVariant::Mc1,
            Some(Baseline::MeanSvm),
        ),
        "zero-svm" => (
            gimc_solvers::TransductionVariant::Mc1,
            Some(Baseline::ZeroSvm),
        ),
        _ => {
            return Err(value_err(format!(
                "method must be 'mc1', 'mcb', 'fpc-svm', 'mean-svm' or 'zero-svm', got {method:?}"
            )));
        }
    };
    let (x, y) = (mat_from_py(&x), mat_from_py(&y));
    let table = TransductionTable {
        x: x.as_ref(),
        y: y.as_ref(),
        standardize,
    };
    let out = run_interruptible(py, n_jobs, |_cancel| {
        if let Some(b) = &baseline {
            let svm = gimc_solvers::SvmCvParams::default()
                .with_folds(folds)
                .check()?;
            return Ok(transduce_baseline(table, b, &svm, &mut seeded(seed))?);
        }
        let params = gimc_solvers::TransductionParams::default()
            .with_variant(variant)
            .with_max_stage_iters(max_stage_iters)
            .with_accelerate(true)
            .check()?;
        let cv = gimc_solvers::TransductionCvParams::default()
            .with_folds(folds)
            .with_lambdas(lambdas)
            .with_mu_count(mu_count)
            .check()?;
        Ok(gimc_solvers::transduction::data::transduce(
            table,
            &params,
            &cv,
            &mut seeded(seed),
        )?)
    })?;
    let info = PyDict::new(py);
    info.set_item("alpha", out.lambda)?;
    info.set_item("mu", out.mu)?;
    info.set_item("cv_label_error", out.cv_label_error)?;
    info.set_item("svm_c", out.svm_c.clone())?;
    Ok((
        mat_to_py(py, &out.scores),
        mat_to_py(py, &out.imputed),
        info,
    ))
}
