//! `mpirun -np N gimc fit DATA --mpi --method NAME …`: one GIMC fit of the multi-label fast path,
//! data-parallel over the process group ([`gimc::fit_labels_sharded`]; shards and sums as in
//! [`crate::group`]).
//!
//! - **Map.** Its parameters must be drawn from the seed alone, not from the rows: the Fourier
//!   families (`gimc-lff`, `imc-rff`, `*-lff-phase`). Nyström landmarks come from the rows and
//!   are refused. γ's scale rule takes the value moments of every shard.
//! - **Fixed setting.** One m, γ and λ, and `--iters` outer iterations (no validation split:
//!   evaluate the model with `gimc predict` and `gimc eval`). Process 0 writes the model and
//!   prints the summary.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use gimc::{BoxedMap, Gamma, LabelData, LabelFit, LabelParams, Storage, estimate_fit_labels};
use gimc_linalg::{Preprocess, RowNorm, gamma_scale_from_moments};
use serde_json::json;

use super::args::FitArgs;
use crate::common::{Normalize, check_memory, label_data, memory_budget, write_output};
use crate::globals::Globals;
use crate::group::{Group, LocalShard, layout, load_rows, prepare_rows};
use crate::progress::IterationLog;

/// Runs `gimc fit --mpi` on `group`.
pub fn run(a: &FitArgs, g: &Globals, group: &dyn Group) -> Result<()> {
    let method = a.method.as_str();
    let (family, learn) = g.registry.map_method(method)?;
    if !matches!(family.name(), "lff" | "lff-phase") {
        bail!(
            "--mpi needs a map drawn from the seed alone (gimc-lff, imc-rff, gimc-lff-phase, \
             imc-rff-phase); `{}` draws from the rows, which differ between processes (the \
             default, --method auto, draws its maps on a sample that every process holds)",
            a.method
        );
    }
    let (m, gamma, lambda) = one_setting(a)?;
    let (data, row_norm, rows) = load(a, g, group)?;
    let gamma = resolve_gamma(group, &data, gamma);
    let map = family.build(
        data.features(),
        m,
        gamma,
        &mut gimc_linalg::rng::seeded(g.seed),
    )?;
    let mut params = LabelParams::default()
        .with_lambda(lambda)
        .with_max_iter(if learn { a.iters } else { 0 })
        .with_eval_train(false);
    params.storage = a.storage(
        "--precision f32 and --block-rows need --stream on or auto",
        |streamed| {
            // stream when any process's whole Φ would not fit (the decision must agree)
            let whole = estimate_fit_labels(&data, &map, &params, None);
            let over = gimc_linalg::memory::check_fits(&whole, memory_budget()?).is_err();
            let mut over = [f64::from(u8::from(over))];
            group.sum(&mut over);
            Ok(if over[0] > 0.0 {
                streamed
            } else {
                Storage::Whole
            })
        },
    )?;
    check_memory(
        &estimate_fit_labels(&data, &map, &params, None),
        memory_budget()?,
        "--m (or use more processes)",
    )?;
    if group.lead() {
        g.info(&format!(
            "fitting {method} (m = {m}, γ = {gamma}, λ = {lambda}, {} iterations, Φ {})",
            params.max_iter,
            if params.storage.is_streamed() {
                format!(
                    "streamed, {} block products",
                    params.storage.precision().name()
                )
            } else {
                "whole".to_string()
            }
        ));
    }
    let params = params.check()?;
    let t = Instant::now();
    let mut log = IterationLog::new(g, group.lead());
    let fit = gimc::fit_labels_sharded(&data, map, &params, None, &mut log, group)?;
    let seconds = t.elapsed().as_secs_f64();
    let rss = peak_rss(group);
    if !group.lead() {
        return Ok(());
    }
    let fitted = Fitted {
        method,
        setting: (m, gamma, lambda),
        rows,
        storage: params.storage,
        seconds,
        rss,
    };
    save_and_report(a, g, group, fit, row_norm, &fitted)
}

/// The one m, γ and λ of `--m`, `--gamma` and `--lambda` (default 500, `scale` and 1).
fn one_setting(a: &FitArgs) -> Result<(usize, Gamma, f64)> {
    match (a.m.as_slice(), a.gamma.as_slice(), a.lambda.as_slice()) {
        (m @ ([] | [_]), g @ ([] | [_]), l @ ([] | [_])) => Ok((
            m.first().copied().unwrap_or(500),
            g.first().copied().unwrap_or(Gamma::SCALE),
            l.first().copied().unwrap_or(1.0),
        )),
        _ => bail!("--mpi fits one setting: give one --m, one --gamma and one --lambda"),
    }
}

/// This process's shard as training data with its row normalisation, and the row count of
/// the whole; every process must agree on the numbers of features and labels before any fit
/// sum.
fn load(a: &FitArgs, g: &Globals, group: &dyn Group) -> Result<(LabelData, RowNorm, usize)> {
    let t0 = Instant::now();
    let (mut ds, announced) = load_rows(a.target.as_deref(), &a.part, g, group)?;
    let normalize_mode = a.normalize.unwrap_or(Normalize::None);
    let (_, row_norm) = prepare_rows(group, &mut ds, a.standardize, normalize_mode)?;
    let data = label_data(ds)?;
    let (d, labels) = (data.features().ncols(), data.n_labels());
    let whole = layout(
        group,
        LocalShard {
            rows: data.nrows(),
            widths: &[d, labels],
            announced,
        },
        || {
            format!(
                "the shards disagree on the number of features or labels (classes): process {} \
             has {d} and {labels}",
                group.rank()
            )
        },
    )?;
    if group.lead() {
        g.info(&format!(
            "{} processes: {} rows, {d} features, {labels} labels; process 0 holds {} rows (read in {:.1} s)",
            group.processes(),
            whole.rows,
            data.nrows(),
            t0.elapsed().as_secs_f64()
        ));
    }
    Ok((data, row_norm, whole.rows))
}

/// γ as a number: `F*scale` from the value moments of every shard.
fn resolve_gamma(group: &dyn Group, data: &LabelData, gamma: Gamma) -> f64 {
    match gamma {
        Gamma::Value(v) => v,
        Gamma::Scale(f) => {
            let (s, q, c) = data.features().value_moments();
            let mut moments = [s, q, c];
            group.sum(&mut moments);
            f * gamma_scale_from_moments(
                (moments[0], moments[1], moments[2]),
                data.features().ncols(),
            )
        }
    }
}

/// Every process's peak resident set (MiB), one slot each, on every process.
fn peak_rss(group: &dyn Group) -> Vec<f64> {
    let mut rss = vec![0.0; group.processes()];
    rss[group.rank()] =
        gimc_linalg::memory::peak_rss_bytes().map_or(f64::NAN, |b| b as f64 / 1048576.0);
    group.sum(&mut rss);
    rss
}

/// What the data-parallel fit ran, for its summary.
struct Fitted<'m> {
    method: &'m str,
    /// m, γ and λ.
    setting: (usize, f64, f64),
    /// Rows of every shard together.
    rows: usize,
    storage: Storage,
    /// Seconds of the fit.
    seconds: f64,
    /// Every process's peak resident set (MiB).
    rss: Vec<f64>,
}

/// Saves the model with its setting in the hyper-parameters, and prints the summary (the
/// lead process).
fn save_and_report(
    a: &FitArgs,
    g: &Globals,
    group: &dyn Group,
    fit: LabelFit<BoxedMap>,
    row_norm: RowNorm,
    f: &Fitted<'_>,
) -> Result<()> {
    let (m, gamma, lambda) = f.setting;
    let (method, rows, seconds, size) = (f.method, f.rows, f.seconds, group.processes());
    let iterations = fit.history.len().saturating_sub(1);
    let objective = fit.history.last().map_or(f64::NAN, |h| h.objective);
    let mut model = fit.model;
    model.set_method(method);
    let hp = model.hyper_parameters_mut();
    hp.insert("m".into(), m as f64);
    hp.insert("gamma".into(), gamma);
    hp.insert("lambda".into(), lambda);
    hp.insert("iterations".into(), iterations as f64);
    hp.insert("processes".into(), size as f64);
    let preprocess = Preprocess {
        standardizer: None,
        row_norm,
        ..Preprocess::default()
    };
    gimc::persist::save_label_model_with_preprocess(&model, &preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    if g.json {
        let v = json!({
            "model": a.out.display().to_string(),
            "method": method,
            "processes": size,
            "rows": rows,
            "features": model.input_dim(),
            "labels": model.n_labels(),
            "m": m,
            "gamma": gamma,
            "lambda": lambda,
            "iterations": iterations,
            "objective": objective,
            "streamed": f.storage.is_streamed(),
            "precision": f.storage.precision().name(),
            "fit_seconds": seconds,
            "peak_rss_mib": f.rss,
            "seconds_per_iteration": fit.history.windows(2).map(|w| w[1].seconds - w[0].seconds).collect::<Vec<_>>(),
            "line_search_trials": fit.history.iter().skip(1).map(|h| h.trials).collect::<Vec<_>>(),
        });
        write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?))
    } else {
        write_output(
            None,
            &format!(
                "fitted {method} on {rows} rows with {size} processes: {iterations} iterations in {seconds:.1} s, objective {objective:.6e}\nmodel: {}\n",
                a.out.display()
            ),
        )
    }
}
