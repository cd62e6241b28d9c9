//! Experiment `gimc-table2`: the GIMC paper's multi-label table, P@1/3/5 (%) on Bibtex and
//! Delicious (DESIGN §3.3, §4).
//!
//! Protocol. The manifest's train / test parts; dense sets would be standardised with training
//! statistics (both sets here are used as distributed). Every choice — λ of the baselines, the
//! iteration count of the learned maps, the λ of the combined W-step and which GIMC variant is
//! reported as "GIMC (validation pick)" — is made on one seeded validation split (20 %) of the
//! training rows (`gimc::validation_split`, the split `select_and_fit` uses with the same seed),
//! never on the test rows; the chosen model is then refitted on all training rows.
//!
//! Methods:
//! - linear ridge: W = (XᵀX + λI)⁻¹XᵀA on the raw features (identity map), λ on validation;
//! - IMC-RFF / IMC-NYS: the same random Fourier / Nyström draws as the learned fits, not learned
//!   (`select_and_fit` with `max_iter = 0`), λ on validation;
//! - GIMC-LFF / GIMC-LNYS: Algorithm 1 (alternating, Armijo) started from IMC-RFF / IMC-NYS,
//!   iteration count (≤ the cap) chosen by validation P@1;
//! - combined LFF + LNYS: the two learned maps concatenated, W-step λ on validation
//!   (`gimc::select_combined`);
//! - GIMC (validation pick): whichever of LFF, LNYS and combined has the best validation P@1.
//!
//! Published rows (GIMC and the Extreme Classification Repository's SLEEC / FastXML / LEML) are
//! shown beside ours; γ per set is the value of DESIGN §3.3 (Bibtex γ = 0.002 for both maps,
//! Delicious γ = 0.02 for LFF and 0.05 for LNYS) and m is chosen on validation for every kernel
//! method, from {1000, 2000} on Bibtex and {500, 1000} on Delicious ([`SetConfig::full`]; DESIGN
//! §3.3 reports m = 1,000 above m = 500 on both sets, and docs/REPRODUCTION.md why Bibtex's grid
//! moved up). The quick form runs Bibtex only with m = 100 and at most 4 outer iterations.

use std::path::Path;
use std::time::Instant;

use gimc::{
    Gamma, LabelData, LabelModel, MapRegistry, SelectionParams, select_and_fit, select_combined,
    validation_split,
};
use gimc_data::{Dataset, Targets, load_named};
use gimc_featmap::Identity;
use gimc_linalg::rng::{child, seeded};

use crate::report::{MISSING, Report, Table, format_value};
use crate::{Context, Experiment, ExperimentError};

/// The `gimc-table2` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct GimcTable2;

/// The λ grid of the unlearned baselines (linear ridge, IMC-RFF, IMC-NYS, combined W-step).
pub const BASELINE_LAMBDAS: [f64; 4] = [0.1, 1.0, 10.0, 100.0];

/// Metric names of the records, in k order.
pub const METRICS: [&str; 3] = ["P@1", "P@3", "P@5"];

/// Published peers per set: (method, P@1, P@3, P@5) in %.
pub fn published_rows(set: &str) -> Vec<(&'static str, [f64; 3])> {
    match set {
        "Bibtex" => vec![
            ("GIMC (paper)", [65.85, 41.17, 30.01]),
            ("SLEEC", [65.08, 39.64, 28.87]),
            ("FastXML", [63.42, 39.23, 28.86]),
            ("LEML", [62.54, 38.41, 28.21]),
        ],
        "Delicious" => vec![
            ("GIMC (paper)", [71.40, 65.16, 59.79]),
            ("SLEEC", [67.59, 61.38, 56.56]),
            ("FastXML", [69.61, 64.12, 59.27]),
            ("LEML", [65.67, 60.55, 56.08]),
        ],
        _ => Vec::new(),
    }
}

/// Settings of one data set's run.
#[derive(Debug, Clone, PartialEq)]
pub struct SetConfig {
    /// Display name (`Bibtex`, `Delicious`).
    pub name: &'static str,
    /// Directory name under the data dir.
    pub key: &'static str,
    /// Candidate numbers of random features / landmarks m (chosen on validation).
    pub ms: Vec<usize>,
    /// γ of the Fourier map.
    pub gamma_lff: f64,
    /// γ of the Nyström map.
    pub gamma_lnys: f64,
    /// λ grid of the learned fits.
    pub gimc_lambdas: Vec<f64>,
    /// Cap on the outer iterations of the learned fits.
    pub max_iter: usize,
    /// Master seed (split and draws).
    pub seed: u64,
}

impl SetConfig {
    /// The full-form settings of `set` (`Bibtex` or `Delicious`).
    ///
    /// Bibtex's m grid is {1000, 2000}: on {500, 1000} validation picked the grid's top for
    /// every kernel method, and GIMC-LFF's validation P@1 rises again at m = 2,000 (64.65 →
    /// 65.37); m = 500 was never picked. Delicious keeps {500, 1000} (m = 2,000–4,000 there is
    /// measured in docs/REPRODUCTION.md; it stays below the exact kernel's bound).
    pub fn full(name: &'static str, seed: u64) -> Option<Self> {
        match name {
            "Bibtex" => Some(Self {
                name,
                key: "bibtex",
                ms: vec![1000, 2000],
                gamma_lff: 0.002,
                gamma_lnys: 0.002,
                gimc_lambdas: vec![1.0],
                max_iter: 20,
                seed,
            }),
            "Delicious" => Some(Self {
                name,
                key: "delicious",
                ms: vec![500, 1000],
                gamma_lff: 0.02,
                gamma_lnys: 0.05,
                gimc_lambdas: vec![1.0],
                max_iter: 15,
                seed,
            }),
            _ => None,
        }
    }

    /// The quick form: Bibtex, m = 100, at most 4 outer iterations.
    pub fn quick(seed: u64) -> Self {
        Self {
            name: "Bibtex",
            key: "bibtex",
            ms: vec![100],
            gamma_lff: 0.002,
            gamma_lnys: 0.002,
            gimc_lambdas: vec![1.0],
            max_iter: 4,
            seed,
        }
    }
}

/// One row of our results: method, chosen setting, test P@1/3/5 (%), validation P@1 (%),
/// seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodResult {
    /// Row name.
    pub method: String,
    /// The chosen hyper-parameters, printed beside the numbers.
    pub setting: String,
    /// Test P@1, P@3, P@5 in %.
    pub precision: [f64; 3],
    /// Validation P@1 (%) of the chosen setting.
    pub validation: f64,
    /// Wall seconds (selection + refit).
    pub seconds: f64,
}

fn gimc_err(e: gimc::GimcError) -> ExperimentError {
    ExperimentError::Failed(format!("gimc: {e}"))
}

/// A loaded part as [`LabelData`] (multi-label or multi-class, with label names).
pub(crate) fn to_label_data(d: &Dataset) -> Result<LabelData, ExperimentError> {
    match &d.targets {
        Targets::Labels { matrix, names } => {
            LabelData::multi_label(d.features.clone(), matrix.clone())
                .and_then(|l| l.with_label_names(names.clone()))
                .map_err(gimc_err)
        }
        Targets::Classes { classes, names } => {
            LabelData::multi_class(d.features.clone(), classes, names.len())
                .and_then(|l| l.with_label_names(names.clone()))
                .map_err(gimc_err)
        }
        _ => Err(ExperimentError::Failed(
            "data set has no label / class targets".into(),
        )),
    }
}

/// Loads the train and test parts of a labelled set as [`LabelData`]; dense feature sets are
/// standardised with the training statistics.
pub fn load_train_test(
    data_dir: &Path,
    key: &str,
) -> Result<(LabelData, LabelData), ExperimentError> {
    let named = load_named(data_dir, key)?;
    let part = |p: &str| {
        named
            .part(p)
            .cloned()
            .ok_or_else(|| ExperimentError::Failed(format!("{key}: no {p} part")))
    };
    let (mut tr, mut te) = (part("train")?, part("test")?);
    if !tr.features.is_sparse() {
        let st = gimc_linalg::Standardizer::fit(&tr.features, true)?;
        tr.features = st.transform(&tr.features)?;
        te.features = st.transform(&te.features)?;
    }
    Ok((to_label_data(&tr)?, to_label_data(&te)?))
}

fn test_precision<M: gimc_featmap::FeatureMap>(
    model: &LabelModel<M>,
    test: &LabelData,
) -> Result<[f64; 3], ExperimentError> {
    let e = model.evaluate(test, &[1, 3, 5]).map_err(gimc_err)?;
    let p = |k| e.precision_at(k).map_or(f64::NAN, |v| 100.0 * v);
    Ok([p(1), p(3), p(5)])
}

/// Linear ridge on the raw features, λ from [`BASELINE_LAMBDAS`] on the validation split
/// (the split `select_and_fit` makes with the same seed); test P@1/3/5.
pub fn linear_ridge(
    train: &LabelData,
    test: &LabelData,
    seed: u64,
) -> Result<MethodResult, ExperimentError> {
    let t = Instant::now();
    let (tr, va) = validation_split(train, 0.2, &mut child(&seeded(seed), 0)).map_err(gimc_err)?;
    let fit = train.select_rows(&tr).map_err(gimc_err)?;
    let val = train.select_rows(&va).map_err(gimc_err)?;
    let d = train.features().ncols();
    let mut best = (f64::NAN, f64::NEG_INFINITY);
    for &l in &BASELINE_LAMBDAS {
        let m = LabelModel::fit_w(vec![Identity::new(d)], &fit, l).map_err(gimc_err)?;
        let s = m
            .evaluate(&val, &[1])
            .map_err(gimc_err)?
            .precision_at(1)
            .unwrap_or(f64::NEG_INFINITY);
        if s > best.1 {
            best = (l, s);
        }
    }
    let model = LabelModel::fit_w(vec![Identity::new(d)], train, best.0).map_err(gimc_err)?;
    Ok(MethodResult {
        method: "linear ridge".into(),
        setting: format!("λ={}", best.0),
        precision: test_precision(&model, test)?,
        validation: 100.0 * best.1,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// The columns of a Table 2 report whose first column is `first`: our P@1/3/5, the published
/// GIMC P@1/3/5, validation P@1, time and the chosen setting.
pub(crate) fn table_header(first: &str) -> Vec<String> {
    [
        first,
        "P@1",
        "P@3",
        "P@5",
        "published P@1",
        "published P@3",
        "published P@5",
        "validation P@1",
        "time (s)",
        "chosen setting",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect()
}

/// Runs every method of the table on one set.
pub fn run_set(
    cfg: &SetConfig,
    train: &LabelData,
    test: &LabelData,
) -> Result<Vec<MethodResult>, ExperimentError> {
    let mut out = vec![linear_ridge(train, test, cfg.seed)?];
    let base = SelectionParams::default()
        .with_ms(cfg.ms.clone())
        .with_seed(cfg.seed);
    let registry = MapRegistry::builtin();
    let kinds = [
        ("lff", cfg.gamma_lff, "RFF", "LFF"),
        ("lnys", cfg.gamma_lnys, "NYS", "LNYS"),
    ];
    let mut learned = Vec::new();
    for (family_name, gamma, fixed_name, learned_name) in kinds {
        let family = registry.family(family_name).map_err(gimc_err)?;
        // IMC-*: the same draws (same seed) with no learning.
        let t = Instant::now();
        let fixed = select_and_fit(
            train,
            family,
            &base
                .clone()
                .with_gammas(vec![Gamma::Value(gamma)])
                .with_lambdas(BASELINE_LAMBDAS.to_vec())
                .with_max_iter(0)
                .check()
                .map_err(gimc_err)?,
        )
        .map_err(gimc_err)?;
        out.push(MethodResult {
            method: format!("IMC-{fixed_name}"),
            setting: format!("m={} γ={} λ={}", fixed.chosen.m, gamma, fixed.chosen.lambda),
            precision: test_precision(&fixed.model, test)?,
            validation: 100.0 * fixed.chosen.validation_score,
            seconds: t.elapsed().as_secs_f64(),
        });
        let t = Instant::now();
        let sel = select_and_fit(
            train,
            family,
            &base
                .clone()
                .with_gammas(vec![Gamma::Value(gamma)])
                .with_lambdas(cfg.gimc_lambdas.clone())
                .with_max_iter(cfg.max_iter)
                .check()
                .map_err(gimc_err)?,
        )
        .map_err(gimc_err)?;
        // Validation P@1 by iteration of every m tried, e.g. `m=500: 60.1 62.3 … | m=1000: …`.
        let curve: Vec<String> = sel
            .candidates
            .iter()
            .map(|c| {
                let scores: Vec<String> = c
                    .scores
                    .iter()
                    .map(|s| format!("{:.1}", 100.0 * s))
                    .collect();
                format!("m={}: {}", c.m, scores.join(" "))
            })
            .collect();
        out.push(MethodResult {
            method: format!("GIMC-{learned_name}"),
            setting: format!(
                "m={} γ={} λ={} iterations={} (of ≤{}; validation P@1 by iteration: {})",
                sel.chosen.m,
                gamma,
                sel.chosen.lambda,
                sel.chosen.iterations,
                cfg.max_iter,
                curve.join(" | ")
            ),
            precision: test_precision(&sel.model, test)?,
            validation: 100.0 * sel.chosen.validation_score,
            seconds: t.elapsed().as_secs_f64(),
        });
        learned.push(sel);
    }
    let t = Instant::now();
    let lff_chosen = learned[0].chosen.clone();
    let lnys_chosen = learned[1].chosen.clone();
    let comb = select_combined(train, learned, &BASELINE_LAMBDAS, 1).map_err(gimc_err)?;
    let comb_secs = t.elapsed().as_secs_f64() + out[2].seconds + out[4].seconds;
    let comb_setting = format!(
        "LFF(m={}, γ={}, {} it) + LNYS(m={}, γ={}, {} it), W-step λ={}",
        lff_chosen.m,
        cfg.gamma_lff,
        lff_chosen.iterations,
        lnys_chosen.m,
        cfg.gamma_lnys,
        lnys_chosen.iterations,
        comb.lambda
    );
    out.push(MethodResult {
        method: "combined LFF+LNYS".into(),
        setting: comb_setting,
        precision: test_precision(&comb.model, test)?,
        validation: 100.0 * comb.validation_score,
        seconds: comb_secs,
    });
    // The validation pick among the three GIMC variants (rows 2, 4, 5).
    let pick = [2usize, 4, 5]
        .into_iter()
        .filter_map(|i| out.get(i))
        .fold(None::<&MethodResult>, |acc, r| match acc {
            Some(b) if b.validation >= r.validation => Some(b),
            _ => Some(r),
        })
        .cloned()
        .ok_or_else(|| ExperimentError::Failed("no GIMC variant".into()))?;
    out.push(MethodResult {
        method: "GIMC (validation pick)".into(),
        setting: format!("{}: {}", pick.method, pick.setting),
        ..pick
    });
    Ok(out)
}

impl Experiment for GimcTable2 {
    fn name(&self) -> &'static str {
        "gimc-table2"
    }

    fn description(&self) -> &'static str {
        "GIMC Table 2: Bibtex / Delicious P@1/3/5 of IMC-RFF/NYS, linear ridge, GIMC-LFF/LNYS, combined, validation pick"
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let mut report = Report::new(
            self.name(),
            "GIMC Table 2: multi-label P@1/3/5 (%), ours beside published",
        );
        let configs: Vec<SetConfig> = if ctx.quick {
            vec![SetConfig::quick(ctx.seed)]
        } else {
            ["Bibtex", "Delicious"]
                .iter()
                .filter_map(|s| SetConfig::full(s, ctx.seed))
                .collect()
        };
        for cfg in &configs {
            let (train, test) = load_train_test(&ctx.data_dir, cfg.key)?;
            let results = run_set(cfg, &train, &test)?;
            let paper = published_rows(cfg.name);
            let gimc_paper = paper.first().map(|p| p.1);
            let mut table = Table::new(
                format!(
                    "{} (train {}, test {}, {} labels)",
                    cfg.name,
                    train.nrows(),
                    test.nrows(),
                    train.n_labels()
                ),
                table_header("method"),
            );
            for r in &results {
                // The paper's GIMC row beside our GIMC-LFF (the variant the paper's multi-label
                // results are built on) and our validation pick, not beside every variant.
                let published = if r.method == "GIMC-LFF" || r.method == "GIMC (validation pick)" {
                    gimc_paper
                } else {
                    None
                };
                let mut row = vec![r.method.clone()];
                row.extend(r.precision.iter().map(|v| format_value(Some(*v), 2)));
                row.extend((0..3).map(|i| format_value(published.map(|p| p[i]), 2)));
                row.push(format_value(Some(r.validation), 2));
                row.push(format_value(Some(r.seconds), 1));
                row.push(r.setting.clone());
                table.push_row(row);
                for (i, metric) in METRICS.iter().enumerate() {
                    report.record(
                        cfg.name,
                        r.method.clone(),
                        r.setting.clone(),
                        *metric,
                        r.precision.get(i).copied(),
                        published.map(|p| p[i]),
                    );
                }
            }
            for (method, p) in &paper {
                let mut row = vec![format!("{method} (published)")];
                row.extend((0..3).map(|_| MISSING.to_string()));
                row.extend(p.iter().map(|v| format_value(Some(*v), 2)));
                table.push_row(row);
                for (i, metric) in METRICS.iter().enumerate() {
                    report.record(
                        cfg.name,
                        *method,
                        "published",
                        *metric,
                        None,
                        p.get(i).copied(),
                    );
                }
            }
            report.tables.push(table);
            report.note(format!(
                "{}: m grid {:?}, γ_LFF={}, γ_LNYS={}, GIMC λ grid {:?}, iteration cap {}, baseline λ grid {:?}, seed {}; every choice (m, λ, iterations, variant) on a 20 % validation split of train, refit on all of train.",
                cfg.name, cfg.ms, cfg.gamma_lff, cfg.gamma_lnys, cfg.gimc_lambdas, cfg.max_iter, BASELINE_LAMBDAS, cfg.seed
            ));
        }
        if ctx.quick {
            report.note("quick form: Bibtex only, m = 100, at most 4 outer iterations");
        }
        Ok(report)
    }
}
