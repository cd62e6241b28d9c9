//! Linear label models from the linear toolbox of [`gimc_solvers::linear`] (DESIGN §3.2):
//! ridge regression, reduced-rank regression, L2 logistic regression and a linear SVM on the
//! rows as they are. Each is chosen over its grid (λ, or the rank) on a validation split of the
//! training rows, refitted on all of them and returned as a [`LabelModel`] with the maps
//! [`Identity`] and [`Constant`] (Φ = [X, 1], W = [W_X; bᵀ]), so model files, `gimc predict`
//! and `gimc eval` treat it as every other label model.
//!
//! - **Ridge**: W = (X_cᵀX_c + λI)⁻¹X_cᵀA_c on centred X and A, with an unpenalised intercept
//!   (one multi-target solve; the label matrix A stays sparse).
//! - **Reduced-rank regression**: W = V_X Σ_X⁻¹ M_k with M = U_Xᵀ A on centred X, the
//!   least-squares fit of rank at most k, with an unpenalised intercept (X is densified for its
//!   thin SVD).
//! - **Logistic regression** and the **linear SVM** (squared hinge, dual coordinate descent):
//!   one binary model per label (multi-label) or per class (multi-class, one-vs-rest; a single
//!   model for two classes), each with C = 1/λ and a bias feature of value 1.
//!
//! Scores are the models' margins X W + b: labels are ranked by them (P@k) and a class is their
//! arg max, as for every label model.

use gimc_featmap::{Constant, Identity};
use gimc_linalg::Observed;
use gimc_linalg::faer::Mat;
use gimc_linalg::memory::{MemoryBudget, MemoryEstimate, check_fits, human_bytes};
use gimc_linalg::rng::{child, seeded};
use gimc_solvers::linear::logistic::{LogisticParams, fit_logistic, fit_logistic_binary};
use gimc_solvers::linear::regression::{ReducedRank, RidgeSystem};
use gimc_solvers::linear::svm::{SvmParams, fit_linear_svm, fit_linear_svm_binary};
use gimc_solvers::linear::{BinaryData, ClassData, LinearClassifier, Targets};

use crate::error::{GimcError, Result, param_err};
use crate::labels::data::{LabelData, Task};
use crate::labels::model::LabelModel;
use crate::labels::select::{
    Forward, SelectionObserver, check_validation_fraction, validation_split,
};
use crate::registry::BoxedMap;
use gimc_solvers::NoObserver;
use rayon::prelude::*;

/// A linear label model of [`fit_linear`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinearMethod {
    /// Multi-target ridge regression with an intercept. Name `ridge`.
    Ridge,
    /// Reduced-rank regression. Name `rrr`.
    ReducedRank,
    /// L2 logistic regression, one model per label or class. Name `logistic`.
    Logistic,
    /// Linear SVM (squared hinge), one model per label or class. Name `svm`.
    Svm,
}

impl LinearMethod {
    /// Every linear method.
    pub const ALL: [LinearMethod; 4] = [
        LinearMethod::Ridge,
        LinearMethod::ReducedRank,
        LinearMethod::Logistic,
        LinearMethod::Svm,
    ];

    /// The method's name (`gimc fit --method NAME`, model files).
    pub fn name(self) -> &'static str {
        match self {
            LinearMethod::Ridge => "ridge",
            LinearMethod::ReducedRank => "rrr",
            LinearMethod::Logistic => "logistic",
            LinearMethod::Svm => "svm",
        }
    }

    /// The method of a name given by [`LinearMethod::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

gimc_linalg::params! {
    /// The fit of [`fit_linear`]: the method, its grid and the validation split that chooses
    /// from the grid. [`LinearParams::check`] validates it into [`ValidLinearParams`].
    #[derive(Debug, Clone, PartialEq)]
    pub struct LinearParams => ValidLinearParams {
        /// The model. Default [`LinearMethod::Ridge`].
        pub method: LinearMethod = LinearMethod::Ridge => with_method,
        /// Candidate penalties λ: ridge's λ; C = 1/λ for logistic regression and the SVM
        /// (reduced-rank regression takes none). Default {0.1, 1, 10, 100, 1000}: on the
        /// seven multi-label sets of `cargo xtask bench --only multilabel-peers`, ridge's and
        /// the SVM's validation optimum lies between 1 and 1000 (or ties at the top end).
        pub lambdas: Vec<f64> = vec![0.1, 1.0, 10.0, 100.0, 1000.0] => with_lambdas,
        /// Candidate ranks of reduced-rank regression, each capped at min(d, L) (duplicates
        /// after the cap are tried once). Default {16, 64, 256}.
        pub ranks: Vec<usize> = vec![16, 64, 256] => with_ranks,
        /// Fraction of the training rows held out to choose from the grid, in (0, 1) (a grid of
        /// one setting is fitted on every row at once). Default 0.2.
        pub validation_fraction: f64 = 0.2 => with_validation_fraction,
        /// The k of the validation P@k that decides (multi-label; multi-class uses accuracy).
        /// Default 1.
        pub select_k: usize = 1 => with_select_k,
        /// Seed of the split and of the SVM's coordinate order. Default 0.
        pub seed: u64 = 0 => with_seed,
        /// The memory pre-flight ([`estimate_linear`]). Default [`MemoryBudget::Detect`].
        pub memory: MemoryBudget = MemoryBudget::Detect => with_memory,
    }
    /// Checks the grid of the method, the split and k.
    check |this| -> crate::GimcError {
        if this.method == LinearMethod::ReducedRank {
            if this.ranks.is_empty() || this.ranks.contains(&0) {
                return Err(param_err("ranks", "must be one or more ranks of at least 1"));
            }
        } else {
            if this.lambdas.is_empty() {
                return Err(GimcError::Empty("lambdas"));
            }
            if let Some(l) = this.lambdas.iter().find(|l| !(**l > 0.0 && l.is_finite())) {
                return Err(param_err("lambda", format!("must be finite and > 0, got {l}")));
            }
        }
        check_validation_fraction(this.validation_fraction)?;
        if this.select_k == 0 {
            return Err(param_err("select_k", "must be at least 1"));
        }
    }
}

/// One setting of the grid: λ (ridge, logistic, SVM) or the rank (reduced-rank regression).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinearSetting {
    /// The penalty λ (C = 1/λ for logistic regression and the SVM).
    Lambda(f64),
    /// The rank k.
    Rank(usize),
}

impl LinearSetting {
    /// `lambda=…` or `rank=…`.
    pub fn describe(&self) -> String {
        match self {
            LinearSetting::Lambda(l) => format!("lambda={l}"),
            LinearSetting::Rank(k) => format!("rank={k}"),
        }
    }
}

/// A setting and its validation score (P@`select_k`, or accuracy); `None` when the grid had one
/// setting and no split was made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearTrial {
    /// The setting.
    pub setting: LinearSetting,
    /// Its validation score.
    pub score: Option<f64>,
}

/// What [`fit_linear`] chose and fitted.
#[derive(Debug)]
pub struct LinearSelection {
    /// Every setting tried, in grid order.
    pub tried: Vec<LinearTrial>,
    /// The chosen one (the best validation score; ties go to the simpler model: the larger λ,
    /// the smaller rank).
    pub chosen: LinearTrial,
    /// The chosen setting refitted on every row.
    pub model: LabelModel,
}

/// The settings of `params`' grid for `data` (ranks capped at min(d, L), each once).
fn grid(data: &LabelData, params: &ValidLinearParams) -> Vec<LinearSetting> {
    if params.method != LinearMethod::ReducedRank {
        return params
            .lambdas
            .iter()
            .map(|&l| LinearSetting::Lambda(l))
            .collect();
    }
    let cap = data.features().ncols().min(data.n_labels()).max(1);
    let mut ranks: Vec<usize> = Vec::new();
    for &k in &params.ranks {
        let k = k.min(cap);
        if !ranks.contains(&k) {
            ranks.push(k);
        }
    }
    ranks.into_iter().map(LinearSetting::Rank).collect()
}

/// The peak memory of [`fit_linear`] on `data`, before anything is allocated: the d × d Gram
/// matrix and its factor (ridge), the dense rows with their thin SVD (reduced-rank regression),
/// and the weights W (d × L) with one model's working vectors (every method).
pub fn estimate_linear(data: &LabelData, params: &ValidLinearParams) -> MemoryEstimate {
    let (n, d, l) = (
        data.nrows() as u64,
        data.features().ncols() as u64 + 1,
        data.n_labels() as u64,
    );
    let f = 8u64;
    let weights = f.saturating_mul(d).saturating_mul(l).saturating_mul(3);
    let (main, what) = match params.method {
        LinearMethod::Ridge => (
            f.saturating_mul(d).saturating_mul(d).saturating_mul(3),
            "XᵀX",
        ),
        LinearMethod::ReducedRank => {
            let r = n.min(d);
            // the dense X, its thin SVD and the SVD's workspace: about ten n × d arrays on
            // Bibtex (646 MiB peak for 4,880 × 1,836)
            (
                f.saturating_mul(n.saturating_mul(d).saturating_mul(10) + d.saturating_mul(r)),
                "X and its SVD",
            )
        }
        LinearMethod::Logistic | LinearMethod::Svm => {
            (f.saturating_mul(n + d).saturating_mul(8), "one model")
        }
    };
    MemoryEstimate {
        bytes: main.saturating_add(weights),
        what: "linear fit",
        parameter: "features",
        detail: format!(
            "{what} {}, W {d} × {l} {}",
            human_bytes(main),
            human_bytes(weights)
        ),
    }
}

/// Fits `params.method` on `data`: every setting of its grid on a seeded split of the rows
/// (`validation_fraction` held out), the best by validation P@`select_k` (or accuracy) refitted
/// on every row (module documentation). `observer` sees the iterations of logistic regression
/// and the SVM on multi-class data, and is asked between labels on multi-label data; one that
/// asks to stop ends the fit with [`GimcError::Interrupted`].
///
/// ```
/// use gimc::{LabelData, LinearMethod, LinearParams, NoObserver, fit_linear};
/// use gimc_linalg::FeatureMatrix;
/// use gimc_linalg::faer::Mat;
///
/// // 80 rows, 2 features; class 1 when the first feature is positive
/// let x = Mat::from_fn(80, 2, |i, j| ((i * 7 + j * 3) % 13) as f64 - 5.5);
/// let classes: Vec<usize> = (0..80).map(|i| usize::from(x[(i, 0)] > 0.0)).collect();
/// let data = LabelData::multi_class(FeatureMatrix::dense(x).unwrap(), &classes, 2).unwrap();
/// let params = LinearParams::default().with_method(LinearMethod::Logistic).check().unwrap();
/// let sel = fit_linear(&data, &params, &mut NoObserver).unwrap();
/// let predicted = sel.model.predict_classes(data.features()).unwrap();
/// assert_eq!(predicted, classes);
/// ```
pub fn fit_linear<S: SelectionObserver + ?Sized>(
    data: &LabelData,
    params: &ValidLinearParams,
    observer: &mut S,
) -> Result<LinearSelection> {
    if data.nrows() == 0 {
        return Err(GimcError::Empty("training rows"));
    }
    check_fits(&estimate_linear(data, params), params.memory)?;
    let settings = grid(data, params);
    let mut rng = seeded(params.seed);
    let tried = if settings.len() == 1 {
        vec![LinearTrial {
            setting: settings[0],
            score: None,
        }]
    } else {
        let (train, val) = validation_split(data, params.validation_fraction, &mut rng)?;
        let (train, val) = (data.select_rows(&train)?, data.select_rows(&val)?);
        let mut tried = Vec::with_capacity(settings.len());
        fit_settings(&train, params, &settings, observer, |setting, model| {
            let e = model.evaluate(&val, &[params.select_k])?;
            tried.push(LinearTrial {
                setting,
                score: e.score(val.task(), params.select_k),
            });
            Ok(())
        })?;
        tried
    };
    let chosen = best(&tried);
    let mut refit = None;
    fit_settings(data, params, &[chosen.setting], observer, |_, model| {
        refit = Some(model);
        Ok(())
    })?;
    let mut model = refit.ok_or(GimcError::Empty("linear model"))?;
    if !data.label_names().is_empty() {
        model.set_label_names(data.label_names().to_vec())?;
    }
    model.set_method(params.method.name());
    let hp = model.hyper_parameters_mut();
    match chosen.setting {
        LinearSetting::Lambda(l) => hp.insert("lambda".into(), l),
        LinearSetting::Rank(k) => hp.insert("rank".into(), k as f64),
    };
    if let Some(s) = chosen.score {
        hp.insert("validation_score".into(), s);
    }
    Ok(LinearSelection {
        tried,
        chosen,
        model,
    })
}

/// The best trial: the highest score; on ties the simpler model (the larger λ, the smaller
/// rank).
fn best(tried: &[LinearTrial]) -> LinearTrial {
    let simpler = |a: &LinearSetting, b: &LinearSetting| match (a, b) {
        (LinearSetting::Lambda(x), LinearSetting::Lambda(y)) => x > y,
        (LinearSetting::Rank(x), LinearSetting::Rank(y)) => x < y,
        _ => false,
    };
    let mut out = tried[0];
    for t in &tried[1..] {
        let (s, b) = (
            t.score.unwrap_or(f64::NEG_INFINITY),
            out.score.unwrap_or(f64::NEG_INFINITY),
        );
        if s > b || (s == b && simpler(&t.setting, &out.setting)) {
            out = *t;
        }
    }
    out
}

/// Fits every setting of `settings` on `data` in turn and hands each model (over Φ = [X, 1])
/// to `each`; ridge forms its normal equations once for all λ, reduced-rank regression its
/// SVDs once for all ranks.
fn fit_settings<S: SelectionObserver + ?Sized>(
    data: &LabelData,
    params: &ValidLinearParams,
    settings: &[LinearSetting],
    observer: &mut S,
    mut each: impl FnMut(LinearSetting, LabelModel) -> Result<()>,
) -> Result<()> {
    let x = data.features();
    // what every setting shares: ridge's normal equations, reduced-rank regression's SVDs
    let (mut ridge, mut rrr) = (None, None);
    if matches!(
        params.method,
        LinearMethod::Ridge | LinearMethod::ReducedRank
    ) {
        let a = Observed::from_csr(data.labels())?;
        if params.method == LinearMethod::Ridge {
            ridge = Some(RidgeSystem::new(x, Targets::Sparse(&a), true)?);
        } else {
            rrr = Some(ReducedRank::new(x, Targets::Sparse(&a), true)?);
        }
    }
    for &setting in settings {
        let (w, bias) = match (params.method, setting, &ridge, &rrr) {
            (LinearMethod::Ridge, LinearSetting::Lambda(lambda), Some(system), _) => {
                let fit = system.fit(lambda)?;
                (fit.w, fit.intercept)
            }
            (LinearMethod::ReducedRank, LinearSetting::Rank(rank), _, Some(rr)) => {
                let fit = rr.fit(rank)?;
                (fit.w, fit.intercept)
            }
            (LinearMethod::Logistic | LinearMethod::Svm, LinearSetting::Lambda(lambda), ..) => {
                classifiers(data, params, 1.0 / lambda, observer)?
            }
            _ => {
                return Err(param_err(
                    "setting",
                    format!("{} takes no {}", params.method.name(), setting.describe()),
                ));
            }
        };
        each(setting, linear_model(data, w, &bias, setting)?)?;
    }
    Ok(())
}

/// The label model over Φ = [X, 1] of the weights `w` (d × L) and biases `bias`.
fn linear_model(
    data: &LabelData,
    w: Mat<f64>,
    bias: &[f64],
    setting: LinearSetting,
) -> Result<LabelModel> {
    let d = w.nrows();
    let mut full = Mat::zeros(d + 1, w.ncols());
    full.as_mut().subrows_mut(0, d).copy_from(w.as_ref());
    for (j, b) in bias.iter().enumerate() {
        full[(d, j)] = *b;
    }
    let maps: Vec<BoxedMap> = vec![Box::new(Identity::new(d)), Box::new(Constant::new(d))];
    let lambda = match setting {
        LinearSetting::Lambda(l) => l,
        LinearSetting::Rank(_) => 0.0,
    };
    LabelModel::new(maps, full, data.task(), lambda)
}

/// Logistic regression or the SVM with C = `c` on `data`: one binary model per label
/// (multi-label) or the one-vs-rest models of the classes (multi-class), as W (d × L) and the
/// biases; a two-class model's single margin s becomes the scores (−s, s).
fn classifiers<S: SelectionObserver + ?Sized>(
    data: &LabelData,
    params: &ValidLinearParams,
    c: f64,
    observer: &mut S,
) -> Result<(Mat<f64>, Vec<f64>)> {
    let x = data.features();
    let mut rng = child(&seeded(params.seed), 1);
    let logistic = || LogisticParams::default().with_c(c).check();
    let svm = || SvmParams::default().with_c(c).check();
    let Some(classes) = data.classes().filter(|_| data.task() == Task::MultiClass) else {
        // multi-label: one binary model per label, over the label's column of A; the labels
        // run side by side in chunks, the observer asked between chunks
        let columns = data.labels().to_other_storage();
        let mut w = Mat::zeros(x.ncols(), data.n_labels());
        let mut bias = Vec::with_capacity(data.n_labels());
        let chunk = 4 * rayon::current_num_threads().max(1);
        let labels: Vec<usize> = (0..data.n_labels()).collect();
        for part in labels.chunks(chunk) {
            let models = part
                .par_iter()
                .map(|&label| {
                    let mut y = vec![false; data.nrows()];
                    if let Some(rows) = columns.outer_view(label) {
                        for (i, &v) in rows.iter() {
                            y[i] = v != 0.0;
                        }
                    }
                    let binary = BinaryData { x, y: &y };
                    Ok(match params.method {
                        LinearMethod::Logistic => {
                            fit_logistic_binary(binary, &logistic()?, &mut NoObserver)?
                        }
                        _ => fit_linear_svm_binary(
                            binary,
                            &svm()?,
                            &mut child(&rng, label as u64),
                            &mut NoObserver,
                        )?,
                    })
                })
                .collect::<Result<Vec<LinearClassifier>>>()?;
            interrupted(observer)?;
            for (&label, m) in part.iter().zip(models) {
                w.as_mut().col_mut(label).copy_from(m.w.as_ref().col(0));
                bias.push(m.bias[0]);
            }
        }
        return Ok((w, bias));
    };
    let cd = ClassData {
        x,
        labels: classes,
        n_classes: data.n_labels(),
    };
    let mut forward = Forward(&mut *observer);
    let model: LinearClassifier = match params.method {
        LinearMethod::Logistic => fit_logistic(cd, &logistic()?, &mut forward)?,
        _ => fit_linear_svm(cd, &svm()?, &mut rng, &mut forward)?,
    };
    interrupted(observer)?;
    if model.w.ncols() == 1 {
        // two classes: one margin s, class 1 when s > 0
        let (w, b) = (model.w, model.bias[0]);
        let both = Mat::from_fn(
            w.nrows(),
            2,
            |i, j| {
                if j == 0 { -w[(i, 0)] } else { w[(i, 0)] }
            },
        );
        return Ok((both, vec![-b, b]));
    }
    Ok((model.w, model.bias))
}

/// [`GimcError::Interrupted`] once the observer asks to stop.
fn interrupted<S: SelectionObserver + ?Sized>(observer: &mut S) -> Result<()> {
    if observer.interrupted() {
        Err(GimcError::Interrupted)
    } else {
        Ok(())
    }
}
