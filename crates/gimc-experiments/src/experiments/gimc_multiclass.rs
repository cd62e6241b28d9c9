//! Experiment `gimc-multiclass`: accuracy (%) of GIMC-LFF / GIMC-LNYS against IMC-RFF /
//! IMC-NYS and a one-vs-rest linear SVM on multi-class sets (DESIGN §3.3, §4).
//!
//! Data: segment (the manifest's 1,500 / 810 train / test parts), white wine quality binned into
//! 3 classes (quality ≤ 5, 6, ≥ 7, the manifest's bins, as in `okmf-table2`) and mushrooms (2
//! classes); the last two have one part, split by a seeded class-stratified 70 / 30 split
//! (`gimc::labels::validation_split` with fraction 0.3). Dense features are standardised with the
//! training statistics; mushrooms (sparse one-hot) is used as distributed. Covtype is skipped:
//! its SVM cross-validation over tens of thousands of rows does not fit this run's time budget.
//!
//! Methods: IMC-RFF / IMC-NYS (maps drawn, not learned: `select_and_fit` with `max_iter = 0`),
//! GIMC-LFF / GIMC-LNYS (learned from those draws, iteration count ≤ the cap), with γ (grid
//! {1/(3d), 1/d, 3/d}) and λ chosen on a 20 % validation split of the training rows and a
//! refit on all of them; the linear SVM is `gimc_solvers::svm_per_label_cv` (one SVM per class,
//! C by 5-fold cross-validation on the training rows), predicting the class of largest decision
//! value. The GIMC paper publishes this comparison as a figure without a table; no published
//! numbers are shown.

use gimc_linalg::observe::NoObserver;
use std::time::Instant;

use gimc::labels::validation_split;
use gimc::{Gamma, LabelData, MapRegistry, SelectionParams, select_and_fit};
use gimc_data::{NamedOptions, load_named_part};
use gimc_linalg::Observed;
use gimc_linalg::rng::{child, seeded};
use gimc_solvers::{SvmCvParams, svm_per_label_cv};

use super::gimc_table2::load_train_test;
use crate::report::{Report, Table, format_value};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `gimc-multiclass` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct GimcMulticlass;

/// The sets of the full form.
pub const SETS: [&str; 3] = ["segment", "winequality-white", "mushrooms"];

/// Metric name of the records.
pub const METRIC: &str = "accuracy (%)";

/// Settings of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct MulticlassConfig {
    /// m of every map.
    pub m: usize,
    /// Cap on the outer iterations.
    pub max_iter: usize,
    /// λ grid.
    pub lambdas: Vec<f64>,
    /// Multipliers of 1/d forming the γ grid.
    pub gamma_factors: Vec<f64>,
    /// SVM C grid.
    pub svm_cs: Vec<f64>,
    /// Master seed.
    pub seed: u64,
}

impl MulticlassConfig {
    /// Full form: m = 200, ≤ 10 iterations, λ ∈ {0.1, 1, 10}, γ ∈ {1/3, 1, 3}/d,
    /// C ∈ 10^-3 … 10^3.
    pub fn full(seed: u64) -> Self {
        Self {
            m: 200,
            max_iter: 10,
            lambdas: vec![0.1, 1.0, 10.0],
            gamma_factors: vec![1.0 / 3.0, 1.0, 3.0],
            svm_cs: (-3..=3).map(|e| 10f64.powi(e)).collect(),
            seed,
        }
    }

    /// Quick form: m = 50, ≤ 3 iterations, λ = 1, γ = 1/d, C ∈ {0.1, 1, 10}.
    pub fn quick(seed: u64) -> Self {
        Self {
            m: 50,
            max_iter: 3,
            lambdas: vec![1.0],
            gamma_factors: vec![1.0],
            svm_cs: vec![0.1, 1.0, 10.0],
            seed,
        }
    }
}

/// One method's result on one set.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassResult {
    /// Row name.
    pub method: String,
    /// Chosen setting.
    pub setting: String,
    /// Test accuracy in %.
    pub accuracy: f64,
    /// Wall seconds.
    pub seconds: f64,
}

/// Loads one of [`SETS`] as (train, test, description of the split).
pub fn load_set(
    data_dir: &std::path::Path,
    set: &str,
    seed: u64,
) -> Result<(LabelData, LabelData, String), ExperimentError> {
    match set {
        "segment" => {
            let (tr, te) = load_train_test(data_dir, "segment")?;
            Ok((tr, te, "manifest train / test parts".into()))
        }
        "winequality-white" | "mushrooms" => {
            let (key, part) = if set == "mushrooms" {
                ("mushrooms", "all")
            } else {
                ("winequality", "white")
            };
            let d = load_named_part(data_dir, key, part, &NamedOptions { bin_targets: true })?;
            let classes = d
                .classes()
                .map(<[usize]>::to_vec)
                .ok_or_else(|| ExperimentError::Failed(format!("{set}: no classes")))?;
            let k = classes.iter().max().map_or(0, |c| c + 1);
            let all = LabelData::multi_class(d.features.clone(), &classes, k)?;
            let (tr, te) = validation_split(&all, 0.3, &mut child(&seeded(seed), 77))?;
            let (mut train, mut test) = (all.select_rows(&tr)?, all.select_rows(&te)?);
            if !train.features().is_sparse() {
                let st = gimc_linalg::Standardizer::fit(train.features(), true)?;
                let ftr = st.transform(train.features())?;
                let fte = st.transform(test.features())?;
                let ctr = train.classes().map(<[usize]>::to_vec).unwrap_or_default();
                let cte = test.classes().map(<[usize]>::to_vec).unwrap_or_default();
                train = LabelData::multi_class(ftr, &ctr, k)?;
                test = LabelData::multi_class(fte, &cte, k)?;
            }
            Ok((train, test, "seeded stratified 70 / 30 split".into()))
        }
        other => Err(ExperimentError::Failed(format!("unknown set {other}"))),
    }
}

fn accuracy_of(model: &gimc::LabelModel, test: &LabelData) -> Result<f64, ExperimentError> {
    let e = model.evaluate(test, &[1])?;
    Ok(100.0 * e.accuracy.unwrap_or(f64::NAN))
}

/// One-vs-rest linear SVM, C by 5-fold CV on the training rows; test accuracy (%) and the
/// chosen C per class.
pub fn linear_svm(
    train: &LabelData,
    test: &LabelData,
    cs: &[f64],
    seed: u64,
) -> Result<(f64, String), ExperimentError> {
    let (ntr, nte) = (train.nrows(), test.nrows());
    let k = train.n_labels();
    let (xtr, xte) = (train.features().to_dense(), test.features().to_dense());
    let d = xtr.ncols();
    // d × n with the training items first, then the test items (their labels unobserved).
    let x = gimc_linalg::faer::Mat::from_fn(d, ntr + nte, |i, j| {
        if j < ntr {
            xtr[(j, i)]
        } else {
            xte[(j - ntr, i)]
        }
    });
    let ctr = train.classes().unwrap_or_default();
    let cte = test.classes().unwrap_or_default();
    let mut rows = Vec::with_capacity(k * ntr);
    let mut cols = Vec::with_capacity(k * ntr);
    let mut vals = Vec::with_capacity(k * ntr);
    for (j, &c) in ctr.iter().enumerate() {
        for l in 0..k {
            rows.push(l);
            cols.push(j);
            vals.push(if l == c { 1.0 } else { -1.0 });
        }
    }
    let labels = Observed::from_triplets(k, ntr + nte, &rows, &cols, &vals)?;
    let params = SvmCvParams::default().with_cs(cs.to_vec()).check()?;
    let svms = svm_per_label_cv(x.as_ref(), &labels, &params, &mut child(&seeded(seed), 5))?;
    let correct = cte
        .iter()
        .enumerate()
        .filter(|&(i, &c)| {
            let j = ntr + i;
            let best = (0..k).fold(0, |b, l| {
                if svms.scores[(l, j)] > svms.scores[(b, j)] {
                    l
                } else {
                    b
                }
            });
            best == c
        })
        .count();
    let cs: Vec<String> = svms.c.iter().map(|c| format!("{c:.0e}")).collect();
    Ok((
        100.0 * correct as f64 / nte.max(1) as f64,
        format!("C per class = {}", cs.join("/")),
    ))
}

/// Every method on one set.
pub fn run_set(
    cfg: &MulticlassConfig,
    train: &LabelData,
    test: &LabelData,
) -> Result<Vec<ClassResult>, ExperimentError> {
    let d = train.features().ncols() as f64;
    let gammas: Vec<f64> = cfg.gamma_factors.iter().map(|f| f / d).collect();
    let mut out = Vec::new();
    let registry = MapRegistry::builtin();
    for (family_name, fixed_name, learned_name) in [
        ("lff", "IMC-RFF", "GIMC-LFF"),
        ("lnys", "IMC-NYS", "GIMC-LNYS"),
    ] {
        let family = registry.family(family_name)?;
        for (name, iters) in [(fixed_name, 0), (learned_name, cfg.max_iter)] {
            let t = Instant::now();
            let sel = select_and_fit(
                train,
                family,
                &SelectionParams::default()
                    .with_gammas(gammas.iter().map(|&g| Gamma::Value(g)).collect())
                    .with_lambdas(cfg.lambdas.clone())
                    .with_ms(vec![cfg.m])
                    .with_max_iter(iters)
                    .with_seed(cfg.seed)
                    .check()?,
                &mut NoObserver,
            )?;
            let c = &sel.chosen;
            out.push(ClassResult {
                method: name.into(),
                setting: format!(
                    "m={} γ={:.4} λ={} iterations={} (validation accuracy {:.2})",
                    c.m,
                    c.gamma,
                    c.lambda,
                    c.iterations,
                    100.0 * c.validation_score
                ),
                accuracy: accuracy_of(&sel.model, test)?,
                seconds: t.elapsed().as_secs_f64(),
            });
        }
    }
    let t = Instant::now();
    let (acc, setting) = linear_svm(train, test, &cfg.svm_cs, cfg.seed)?;
    out.push(ClassResult {
        method: "linear SVM (one-vs-rest)".into(),
        setting,
        accuracy: acc,
        seconds: t.elapsed().as_secs_f64(),
    });
    Ok(out)
}

impl Experiment for GimcMulticlass {
    fn name(&self) -> &'static str {
        "gimc-multiclass"
    }

    fn description(&self) -> &'static str {
        "GIMC multi-class: accuracy of GIMC-LFF/LNYS vs IMC-RFF/NYS vs linear SVM on segment, white wine, mushrooms"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(10, 0)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let mut report = Report::new(self.name(), "GIMC multi-class accuracy (%)");
        let (cfg, sets): (MulticlassConfig, &[&str]) = if ctx.quick {
            (MulticlassConfig::quick(ctx.seed), &SETS[..1])
        } else {
            (MulticlassConfig::full(ctx.seed), &SETS[..])
        };
        for set in sets {
            let (train, test, split) = load_set(&ctx.data_dir, set, ctx.seed)?;
            let results = run_set(&cfg, &train, &test)?;
            let mut table = Table::new(
                format!(
                    "{set} (train {}, test {}, {} features, {} classes; {split})",
                    train.nrows(),
                    test.nrows(),
                    train.features().ncols(),
                    train.n_labels()
                ),
                ["method", "accuracy (%)", "time (s)", "chosen setting"]
                    .iter()
                    .map(|s| (*s).to_string())
                    .collect(),
            );
            for r in &results {
                table.push_row(vec![
                    r.method.clone(),
                    format_value(Some(r.accuracy), 2),
                    format_value(Some(r.seconds), 1),
                    r.setting.clone(),
                ]);
                report.record(
                    *set,
                    r.method.clone(),
                    r.setting.clone(),
                    METRIC,
                    Some(r.accuracy),
                    None,
                );
            }
            report.tables.push(table);
        }
        report.note(format!(
            "m={}, iteration cap {}, λ grid {:?}, γ grid {:?}/d, SVM C grid {:?}, seed {}; GIMC/IMC choices on a 20 % validation split of train, SVM C by 5-fold CV; covtype skipped (time budget).",
            cfg.m, cfg.max_iter, cfg.lambdas, cfg.gamma_factors, cfg.svm_cs, cfg.seed
        ));
        if ctx.quick {
            report.note("quick form: segment only, m = 50, at most 3 iterations");
        }
        Ok(report)
    }
}
