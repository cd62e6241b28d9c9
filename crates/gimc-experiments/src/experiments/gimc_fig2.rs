//! Experiment `gimc-fig2`: P@3 (%) against the number of random features / landmarks m for
//! IMC-RFF, IMC-NYS, GIMC-LFF and GIMC-LNYS, with linear ridge and linear IMC (LEML-style
//! low-rank IMC on the raw features) as flat reference lines, on Bibtex and Delicious
//! (DESIGN §4).
//!
//! For every m the IMC-RFF / IMC-NYS point uses the same seed — hence the same split and the
//! same random draws — as the GIMC-LFF / GIMC-LNYS fit that starts from it (`select_and_fit`
//! with `max_iter = 0`, a single W-step, so it costs no learning). The learned fits run at most
//! [`Fig2Config::max_iter`] outer iterations and keep the count with the best validation P@3 on
//! a 20 % split of the training rows, then refit on all of them. λ = 1 for the kernel methods;
//! γ as in `gimc-table2` (Bibtex 0.002 for both maps; Delicious 0.02 for Fourier, 0.05 for
//! Nyström). Linear ridge: λ on validation (`gimc_table2::linear_ridge`). Linear IMC:
//! `gimc_solvers::fit_imc` on the fully observed label matrix with Φ = X, Ψ = I, rank
//! [`Fig2Config::imc_rank`], λ on validation.
//!
//! The report carries one figure per set, written beside it as `<out>/gimc-fig2-bibtex.svg` and
//! `<out>/gimc-fig2-delicious.svg` (log-scaled m axis; `gimc-plot`). Both are drawn from the
//! records ([`set_chart`]), so `gimc-experiments render <out>/gimc-fig2.json` redraws them
//! without rerunning the sweep.

use std::time::Instant;

use rayon::prelude::*;

use gimc::labels::validation_split;
use gimc::{Gamma, LabelData, LabelModel, MapRegistry, SelectionParams, Task, select_and_fit};
use gimc_featmap::Identity;
use gimc_linalg::Observed;
use gimc_linalg::rng::{child, seeded};
use gimc_plot::LineChart;
use gimc_solvers::{ImcParams, ImcProblem, ImcStart, NoObserver, Side, fit_imc};

use super::gimc_table2::{LabelSet, linear_ridge, load_train_test};
use crate::report::{Record, Report, Table, format_value};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `gimc-fig2` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct GimcFig2;

/// Metric name of the records.
pub const METRIC: &str = "P@3";

/// The four curves, in legend order.
pub const CURVES: [&str; 4] = ["IMC-RFF", "IMC-NYS", "GIMC-LFF", "GIMC-LNYS"];

/// Settings of one set's sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig2Config {
    /// The data set, with the γ of the Fourier and the Nyström map.
    pub set: LabelSet,
    /// The m values.
    pub ms: Vec<usize>,
    /// Cap on outer iterations.
    pub max_iter: usize,
    /// Rank of the linear IMC line.
    pub imc_rank: usize,
    /// Master seed.
    pub seed: u64,
}

impl Fig2Config {
    /// Full form for `Bibtex` or `Delicious`: m ∈ {50, 100, 200, 500, 1000}, ≤ 10 iterations
    /// (Bibtex) / ≤ 8 (Delicious, where m = 1000 is the costly point), linear IMC rank 100.
    pub fn full(name: &'static str, seed: u64) -> Option<Self> {
        let ms = vec![50, 100, 200, 500, 1000];
        match name {
            "Bibtex" => Some(Self {
                set: LabelSet::BIBTEX,
                ms,
                max_iter: 10,
                imc_rank: 100,
                seed,
            }),
            "Delicious" => Some(Self {
                set: LabelSet::DELICIOUS,
                ms,
                max_iter: 8,
                imc_rank: 100,
                seed,
            }),
            _ => None,
        }
    }

    /// Quick form: Bibtex, m ∈ {20, 50}, ≤ 3 iterations, linear IMC rank 20.
    pub fn quick(seed: u64) -> Self {
        Self {
            set: LabelSet::BIBTEX,
            ms: vec![20, 50],
            max_iter: 3,
            imc_rank: 20,
            seed,
        }
    }
}

/// One set's sweep: per curve, the (m, test P@3 %, chosen iterations) points; the two flat
/// reference lines with their settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig2Result {
    /// Per entry of [`CURVES`]: (m, P@3, iterations).
    pub curves: Vec<Vec<(usize, f64, usize)>>,
    /// Linear ridge test P@3 and setting.
    pub ridge: (f64, String),
    /// Linear IMC test P@3 and setting.
    pub linear_imc: (f64, String),
    /// Wall seconds.
    pub seconds: f64,
}

fn p_at_3<M: gimc_featmap::FeatureMap>(
    model: &LabelModel<M>,
    test: &LabelData,
) -> Result<f64, ExperimentError> {
    let e = model.evaluate(test, &[3])?;
    Ok(100.0 * e.precision_at(3).unwrap_or(f64::NAN))
}

/// LEML-style linear IMC: Z = WHᵀ with Φ = X, Ψ = I on the fully observed labels (squared
/// loss, ridge λ on W and H, rank `rank`); λ ∈ {0.1, 1, 10} on the validation split.
pub fn linear_imc(
    train: &LabelData,
    test: &LabelData,
    rank: usize,
    seed: u64,
) -> Result<(f64, String), ExperimentError> {
    let fit = |data: &LabelData, lambda: f64| -> Result<LabelModel<Identity>, ExperimentError> {
        let labels = data.labels();
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for (v, (i, j)) in labels.iter() {
            rows.push(i);
            cols.push(j);
            vals.push(*v);
        }
        let y = Observed::from_triplets(labels.rows(), labels.cols(), &rows, &cols, &vals)?;
        let problem = ImcProblem::fully_observed(
            Side::Features(data.features()),
            Side::Identity(data.n_labels()),
            &y,
        )?;
        let params = ImcParams::default()
            .with_rank(rank)
            .with_lambda(lambda)
            .check()?;
        let model = fit_imc(
            &problem,
            &params,
            ImcStart::Draw(&mut child(&seeded(seed), 9)),
            &mut NoObserver,
        )?;
        let z = &model.w * model.h.transpose();
        let d = data.features().ncols();
        LabelModel::new(vec![Identity::new(d)], z, Task::MultiLabel, lambda)
            .map_err(ExperimentError::from)
    };
    let (tr, va) = validation_split(train, 0.2, &mut child(&seeded(seed), 0))?;
    let (fit_rows, val_rows) = (train.select_rows(&tr)?, train.select_rows(&va)?);
    let mut best = (1.0, f64::NEG_INFINITY);
    for lambda in [0.1, 1.0, 10.0] {
        let s = p_at_3(&fit(&fit_rows, lambda)?, &val_rows)?;
        if s > best.1 {
            best = (lambda, s);
        }
    }
    let model = fit(train, best.0)?;
    Ok((
        p_at_3(&model, test)?,
        format!("rank={rank} λ={} (validation P@3 {:.2})", best.0, best.1),
    ))
}

/// Runs the sweep of one set.
pub fn run_set(
    cfg: &Fig2Config,
    train: &LabelData,
    test: &LabelData,
) -> Result<Fig2Result, ExperimentError> {
    let t = Instant::now();
    let ridge = linear_ridge(train, test, cfg.seed)?;
    let linear_imc = linear_imc(train, test, cfg.imc_rank, cfg.seed)?;
    let registry = MapRegistry::builtin();
    // every (m, family, learned) point is its own selection; they run side by side on the pool
    // (each fit's products still split for the whole pool, so every result is bitwise the one
    // of a run in turn), which keeps both cores busy through the small-m fits
    let families = [("lff", cfg.set.gamma_lff), ("lnys", cfg.set.gamma_lnys)];
    let jobs: Vec<(usize, usize, bool)> = cfg
        .ms
        .iter()
        .flat_map(|&m| {
            (0..families.len()).flat_map(move |c| [false, true].map(move |learned| (m, c, learned)))
        })
        .collect();
    let points = jobs
        .par_iter()
        .map(|&(m, c, learned)| -> Result<_, ExperimentError> {
            let (family_name, gamma) = families[c];
            let iters = if learned { cfg.max_iter } else { 0 };
            let sel = select_and_fit(
                train,
                registry.family(family_name)?,
                &SelectionParams::default()
                    .with_gammas(vec![Gamma::Value(gamma)])
                    .with_lambdas(vec![1.0])
                    .with_ms(vec![m])
                    .with_max_iter(iters)
                    .with_select_k(3)
                    .with_seed(cfg.seed)
                    .check()?,
                &mut NoObserver,
            )?;
            Ok((p_at_3(&sel.model, test)?, sel.chosen.iterations))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut curves = vec![Vec::new(); CURVES.len()];
    for (&(m, c, learned), (p3, iterations)) in jobs.iter().zip(points) {
        let idx = c + if learned { 2 } else { 0 };
        if let Some(curve) = curves.get_mut(idx) {
            curve.push((m, p3, iterations));
        }
    }
    Ok(Fig2Result {
        curves,
        ridge: (ridge.precision[1], ridge.setting),
        linear_imc,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// The chart of one set's sweep: the `curves` (name, (m, P@3) points) against a log-scaled m
/// axis, and each of the `flat` lines (name, P@3) drawn across the curves' m range.
pub fn sweep_chart(
    set: &str,
    curves: Vec<(String, Vec<(f64, f64)>)>,
    flat: Vec<(String, f64)>,
) -> LineChart {
    let ms = curves.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.0));
    let (lo, hi) = ms.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| {
        (a.min(m), b.max(m))
    });
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (1.0, 1.0) };
    let mut chart = LineChart::new(
        format!("{set}: P@3 against m"),
        "m (random features / landmarks)",
        "test P@3 (%)",
    );
    chart.log_x = true;
    for (name, pts) in curves {
        chart = chart.with_series(name, pts);
    }
    for (name, p) in flat {
        chart = chart.with_series(name, vec![(lo, p), (hi, p)]);
    }
    chart
}

/// The chart of one set's sweep read back from the records: a record whose setting starts
/// with `m=N` is a point of its method's curve, any other a flat line (linear ridge, linear
/// IMC). Methods keep their order of appearance.
pub fn set_chart(set: &str, records: &[Record]) -> LineChart {
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut flat: Vec<(String, f64)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.dataset == set && r.metric == METRIC)
    {
        let Some(p) = r.ours else { continue };
        let m = r
            .setting
            .strip_prefix("m=")
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse::<f64>().ok());
        match m {
            Some(m) => match curves.iter_mut().find(|(name, _)| *name == r.method) {
                Some((_, pts)) => pts.push((m, p)),
                None => curves.push((r.method.clone(), vec![(m, p)])),
            },
            None => flat.push((r.method.clone(), p)),
        }
    }
    sweep_chart(set, curves, flat)
}

/// The SVG of one set's sweep: the four curves and the two flat lines over the m range.
pub fn render_svg(cfg: &Fig2Config, r: &Fig2Result) -> Result<String, ExperimentError> {
    let curves = CURVES
        .iter()
        .zip(&r.curves)
        .map(|(name, pts)| {
            let pts = pts.iter().map(|&(m, p, _)| (m as f64, p)).collect();
            ((*name).to_owned(), pts)
        })
        .collect();
    let flat = vec![
        ("linear ridge".to_owned(), r.ridge.0),
        ("linear IMC".to_owned(), r.linear_imc.0),
    ];
    sweep_chart(cfg.set.name, curves, flat)
        .to_svg()
        .map_err(|e| ExperimentError::Failed(format!("plot: {e}")))
}

impl Experiment for GimcFig2 {
    fn name(&self) -> &'static str {
        "gimc-fig2"
    }

    fn description(&self) -> &'static str {
        "GIMC Figure 2: P@3 against m for IMC-RFF/NYS and GIMC-LFF/LNYS, linear ridge and linear IMC lines (Bibtex, Delicious; SVG)"
    }

    /// One chart per set in the records, `bibtex` and `delicious` ([`set_chart`]).
    fn figures(&self, records: &[Record]) -> Result<Vec<(String, LineChart)>, ExperimentError> {
        let mut sets: Vec<&str> = Vec::new();
        for r in records.iter().filter(|r| r.metric == METRIC) {
            if !sets.contains(&r.dataset.as_str()) {
                sets.push(&r.dataset);
            }
        }
        Ok(sets
            .into_iter()
            .map(|set| (set.to_lowercase(), set_chart(set, records)))
            .collect())
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(170, 14)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let mut report = Report::new(self.name(), "GIMC Figure 2: P@3 (%) against m");
        let configs: Vec<Fig2Config> = if ctx.quick {
            vec![Fig2Config::quick(ctx.seed)]
        } else {
            ["Bibtex", "Delicious"]
                .iter()
                .filter_map(|s| Fig2Config::full(s, ctx.seed))
                .collect()
        };
        for cfg in &configs {
            let (train, test) = load_train_test(&ctx.data_dir, cfg.set.key)?;
            let r = run_set(cfg, &train, &test)?;
            let mut header = vec!["method".to_string()];
            header.extend(cfg.ms.iter().map(|m| format!("m={m}")));
            header.push("setting".into());
            let mut table = Table::new(
                format!(
                    "{}: test P@3 (%) against m ({:.0} s)",
                    cfg.set.name, r.seconds
                ),
                header,
            );
            for (name, pts) in CURVES.iter().zip(&r.curves) {
                let mut row = vec![(*name).to_string()];
                row.extend(pts.iter().map(|&(_, p, _)| format_value(Some(p), 2)));
                let its: Vec<String> = pts.iter().map(|p| p.2.to_string()).collect();
                let gamma = if name.ends_with("FF") {
                    cfg.set.gamma_lff
                } else {
                    cfg.set.gamma_lnys
                };
                row.push(format!(
                    "γ={gamma} λ=1; iterations chosen per m: {}",
                    its.join("/")
                ));
                table.push_row(row);
                for &(m, p, it) in pts {
                    report.record(
                        cfg.set.name,
                        *name,
                        format!("m={m} γ={gamma} λ=1 iterations={it}"),
                        METRIC,
                        Some(p),
                        None,
                    );
                }
            }
            for (name, (p, setting)) in [("linear ridge", &r.ridge), ("linear IMC", &r.linear_imc)]
            {
                let mut row = vec![name.to_string()];
                row.extend(cfg.ms.iter().map(|_| format_value(Some(*p), 2)));
                row.push(setting.clone());
                table.push_row(row);
                report.record(cfg.set.name, name, setting.clone(), METRIC, Some(*p), None);
            }
            report.tables.push(table);
            // drawn from the records, as `gimc-experiments render` redraws it from the JSON
            let suffix = cfg.set.name.to_lowercase();
            report.figure(&suffix, &set_chart(cfg.set.name, &report.records))?;
            let path = ctx.out_dir.join(format!("gimc-fig2-{suffix}.svg"));
            report.note(format!(
                "{}: figure {}; cap {} outer iterations, iteration count by validation P@3, seed {}",
                cfg.set.name,
                path.display(),
                cfg.max_iter,
                cfg.seed
            ));
        }
        report.note("the paper plots this figure without printing numbers; no published column");
        Ok(report)
    }
}
