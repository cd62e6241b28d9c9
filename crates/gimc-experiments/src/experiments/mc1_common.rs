//! Shared machinery of the transduction experiments (`mc1-synthetic`, `mc1-emotions`,
//! `mc1-yeast`; DESIGN §3.5, §4): one trial runs the requested methods on a d × n feature
//! matrix and a t × n ±1 label matrix with observed masks Ω_X and Ω_Y, and scores every method
//! by the transductive label error (%) on the unobserved labels and the relative imputation
//! error Σ_{∉Ω_X}(x − x̂)²/Σ_{∉Ω_X} x² on the unobserved features. Trials run in parallel
//! (rayon), trial k drawing everything from `child(master, k)`; mean and sample standard
//! deviation over trials, formatted "mean (std)" as the paper prints them.
//!
//! Methods: MC-b and MC-1 (λ and μ by 5-fold CV over Ω_X and Ω_Y, label error criterion);
//! FPC+SVM (nuclear-norm completion of X alone, μ by 5-fold CV of the held-out feature error,
//! then one linear SVM per label); EM1+SVM (one-Gaussian EM imputation); Mean+SVM; Zero+SVM.
//! Every SVM's C is chosen by 5-fold CV on that label's observed entries.

use gimc_linalg::Observed;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, child};
use gimc_solvers::transduction::baselines::{
    EmParams, FpcImputeParams, SvmCvParams, impute_em_gaussian, impute_fpc_cv, impute_mean,
    impute_zero, svm_per_label_cv,
};
use gimc_solvers::transduction::{
    TransductionCvParams, TransductionParams, TransductionProblem, TransductionVariant,
    fit_transduction_cv,
};
use rayon::prelude::*;

use crate::ExperimentError;
pub use crate::experiments::support::{SequentialFaer, mean_std};

/// Metric name of the label error.
pub const METRIC_LABEL: &str = "label error (%)";
/// Metric name of the imputation error.
pub const METRIC_IMPUTATION: &str = "relative imputation error";

/// A method of the transduction tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// MC-b.
    McB,
    /// MC-1.
    Mc1,
    /// FPC imputation + SVM.
    FpcSvm,
    /// One-Gaussian EM imputation + SVM.
    Em1Svm,
    /// Mean imputation + SVM.
    MeanSvm,
    /// Zero imputation + SVM.
    ZeroSvm,
}

impl Method {
    /// The name printed in the paper's tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::McB => "MC-b",
            Self::Mc1 => "MC-1",
            Self::FpcSvm => "FPC+SVM",
            Self::Em1Svm => "EM1+SVM",
            Self::MeanSvm => "Mean+SVM",
            Self::ZeroSvm => "Zero+SVM",
        }
    }
}

/// Settings shared by every trial of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Mc1Config {
    /// Trials (independent masks, and data for the synthetic sets).
    pub trials: usize,
    /// Methods to run, in table order.
    pub methods: Vec<Method>,
    /// MC-1 / MC-b cross-validation (folds, λ candidates, μ grid length).
    pub cv: TransductionCvParams,
    /// FPC parameters of MC-1 / MC-b (λ and variant are set per run).
    pub fpc: TransductionParams,
    /// FPC imputation baseline.
    pub fpc_impute: FpcImputeParams,
    /// SVM C grid and folds.
    pub svm: SvmCvParams,
    /// EM imputation.
    pub em: EmParams,
}

impl Mc1Config {
    /// The MC-1 / MC-b settings in a report's words: the λ grid and the μ continuation path
    /// chosen by CV, and the FPC stage settings.
    pub fn mc1_note(&self) -> String {
        let lambdas: Vec<String> = self.cv.lambdas.iter().map(|l| format!("{l}")).collect();
        format!(
            "MC-1 / MC-b: λ ∈ {{{}}} and μ on the continuation path σ_1 η^k (k = 1..{}, η = {}, σ_1 of the gradient of the loss at Z = 0) by {}-fold CV over Ω_X and Ω_Y with the held-out label error; stage tolerance {:e} on the relative objective change, at most {} FPC steps per stage; FPC accelerated (monotone FISTA), every stage after the second started from a secant prediction along the path when that lowers its objective.",
            lambdas.join(", "),
            self.cv.mu_count,
            self.fpc.eta_mu,
            self.cv.folds,
            self.fpc.tol,
            self.fpc.max_stage_iters,
        )
    }

    /// The SVM settings in a report's words: the C grid and its CV.
    pub fn svm_note(&self) -> String {
        let cs: Vec<String> = self.svm.cs.iter().map(|c| format!("{c:.0e}")).collect();
        format!(
            "SVM: squared-hinge linear SVM with bias, C ∈ {{{}}} by {}-fold CV per label.",
            cs.join(", "),
            self.svm.folds
        )
    }

    /// The paper's settings: 5 folds, λ ∈ {1e-3, 1e-2, 1e-1, 1}, μ grid σ_1 η^k (k = 1..6),
    /// at most 1,000 FPC steps per μ stage, C ∈ {10^-8, …, 10^8}. `quick`: 3 folds,
    /// λ ∈ {0.1, 1}, C ∈ {10^-2, 1, 10^2}.
    /// FPC runs with monotone-FISTA acceleration (same steps, continuation and stopping rule;
    /// about 4x fewer steps on these problems) and, as by default, the secant start of every μ
    /// stage after the second (15–45 % fewer again).
    pub fn paper(trials: usize, methods: Vec<Method>, quick: bool) -> Self {
        let cv = if quick {
            TransductionCvParams::default()
                .with_folds(3)
                .with_lambdas(vec![0.1, 1.0])
                .with_mu_count(6)
        } else {
            TransductionCvParams::default().with_mu_count(6)
        };
        let fpc = TransductionParams::default()
            .with_max_stage_iters(1000)
            .with_accelerate(true);
        let fpc_impute = FpcImputeParams::default()
            .with_folds(cv.folds)
            .with_mu_count(6)
            .with_max_stage_iters(1000)
            .with_accelerate(true);
        let mut svm = SvmCvParams::default();
        if quick {
            svm.cs = vec![1e-2, 1.0, 1e2];
            svm.folds = 3;
        }
        Self {
            trials,
            methods,
            cv,
            fpc,
            fpc_impute,
            svm,
            em: EmParams::default(),
        }
    }
}

/// One trial's data: true features (d × n), true ±1 labels (t × n) and the observed entries.
#[derive(Debug, Clone)]
pub struct TrialData {
    /// Features X (d × n); the entries outside `observed_x` are hidden from the methods.
    pub x: Mat<f64>,
    /// Labels ±1 (t × n); the entries outside `observed_y` are hidden from the methods.
    pub y: Mat<f64>,
    /// Observed feature entries (feature, item).
    pub observed_x: Vec<(usize, usize)>,
    /// Observed label entries (label, item).
    pub observed_y: Vec<(usize, usize)>,
}

/// A method's scores in one trial.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodScore {
    /// The method.
    pub method: Method,
    /// Transductive label error (%).
    pub label_error: f64,
    /// Relative imputation error (None for methods that do not impute).
    pub imputation_error: Option<f64>,
    /// Chosen hyper-parameters, e.g. "λ = 0.1, μ = 2.3e-3".
    pub chosen: String,
}

/// The entries of `m` at `entries`, as an observed matrix.
pub(crate) fn observed(
    m: &Mat<f64>,
    entries: &[(usize, usize)],
) -> Result<Observed, ExperimentError> {
    let rows: Vec<usize> = entries.iter().map(|e| e.0).collect();
    let cols: Vec<usize> = entries.iter().map(|e| e.1).collect();
    let vals: Vec<f64> = entries.iter().map(|&(i, j)| m[(i, j)]).collect();
    Ok(Observed::from_triplets(
        m.nrows(),
        m.ncols(),
        &rows,
        &cols,
        &vals,
    )?)
}

/// Row-major flattening and the observed mask of a matrix.
fn flat(m: &Mat<f64>) -> Vec<f64> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

fn mask(nrows: usize, ncols: usize, entries: &[(usize, usize)]) -> Vec<bool> {
    let mut m = vec![false; nrows * ncols];
    for &(i, j) in entries {
        if let Some(b) = m.get_mut(i * ncols + j) {
            *b = true;
        }
    }
    m
}

/// Runs every method of `config` on one trial.
pub fn run_trial(
    data: &TrialData,
    config: &Mc1Config,
    rng: &GimcRng,
) -> Result<Vec<MethodScore>, ExperimentError> {
    let (d, n) = data.x.shape();
    let t = data.y.nrows();
    let ox = observed(&data.x, &data.observed_x)?;
    let oy = observed(&data.y, &data.observed_y)?;
    let problem = TransductionProblem::new(oy.clone(), ox.clone())?;
    let cv = config.cv.check()?;
    let svm = config.svm.check()?;
    let fpc_impute = config.fpc_impute.check()?;
    let em = config.em.check()?;
    let x_flat = flat(&data.x);
    let y_flat = flat(&data.y);
    let x_mask = mask(d, n, &data.observed_x);
    let y_mask = mask(t, n, &data.observed_y);
    let label_error = |scores: &Mat<f64>| -> Result<f64, ExperimentError> {
        Ok(gimc_metrics::transductive_label_error(
            &flat(scores),
            &y_flat,
            &y_mask,
        )?)
    };
    let imputation_error = |est: &Mat<f64>| -> Result<f64, ExperimentError> {
        Ok(gimc_metrics::relative_imputation_error(
            &x_flat,
            &flat(est),
            &x_mask,
        )?)
    };
    let svm_then_score =
        |imputed: &Mat<f64>, stream: u64| -> Result<(f64, String), ExperimentError> {
            let mut r = child(rng, stream);
            let svms = svm_per_label_cv(imputed.as_ref(), &oy, &svm, &mut r)?;
            let cs: Vec<String> = svms.c.iter().map(|c| format!("{:.0e}", c)).collect();
            Ok((label_error(&svms.scores)?, format!("C = {}", cs.join("/"))))
        };
    config
        .methods
        .par_iter()
        .enumerate()
        .map(|(k, &method)| -> Result<MethodScore, ExperimentError> {
            let stream = METHOD_STREAM_BASE + k as u64;
            match method {
                Method::McB | Method::Mc1 => {
                    let variant = if method == Method::Mc1 {
                        TransductionVariant::Mc1
                    } else {
                        TransductionVariant::McB
                    };
                    let params = config.fpc.with_variant(variant).check()?;
                    let mut r = child(rng, stream);
                    let (sol, cv) = fit_transduction_cv(&problem, &params, &cv, &mut r)?;
                    Ok(MethodScore {
                        method,
                        label_error: label_error(&sol.label_scores())?,
                        imputation_error: Some(imputation_error(&sol.imputed_features())?),
                        chosen: format!("λ = {}, μ = {:.2e}", cv.lambda, cv.mu),
                    })
                }
                Method::FpcSvm => {
                    let mut r = child(rng, stream);
                    let imp = impute_fpc_cv(&ox, &fpc_impute, &mut r)?;
                    let (err, c) = svm_then_score(&imp.x, stream + 1000)?;
                    Ok(MethodScore {
                        method,
                        label_error: err,
                        imputation_error: Some(imputation_error(&imp.x)?),
                        chosen: format!("μ = {:.2e}, {c}", imp.mu),
                    })
                }
                Method::Em1Svm => {
                    let imp = impute_em_gaussian(&ox, &em)?;
                    let (err, c) = svm_then_score(&imp.x, stream + 1000)?;
                    Ok(MethodScore {
                        method,
                        label_error: err,
                        imputation_error: Some(imputation_error(&imp.x)?),
                        chosen: c,
                    })
                }
                Method::MeanSvm | Method::ZeroSvm => {
                    let imp = if method == Method::MeanSvm {
                        impute_mean(&ox)
                    } else {
                        impute_zero(&ox)
                    };
                    let (err, c) = svm_then_score(&imp, stream + 1000)?;
                    Ok(MethodScore {
                        method,
                        label_error: err,
                        imputation_error: Some(imputation_error(&imp)?),
                        chosen: c,
                    })
                }
            }
        })
        .collect()
}

/// Runs `config.trials` trials in parallel; `make(k, rng)` builds trial k's data from its own
/// stream `child(master, k)` (the methods then use further child streams of it).
///
/// The trials, methods, folds and labels already fill every core through rayon, so faer's own
/// parallelism is switched off for the duration ([`SequentialFaer`]): nested inside those tasks
/// it only added synchronisation (measured: a third of the CPU time of `--quick` mc1-yeast on
/// two cores). Every result is unchanged: faer splits work, not sums, across threads.
pub fn run_trials(
    config: &Mc1Config,
    master: &GimcRng,
    make: impl Fn(usize, &mut GimcRng) -> Result<TrialData, ExperimentError> + Sync,
) -> Result<Vec<Vec<MethodScore>>, ExperimentError> {
    let mut groups = run_trial_groups(config, std::slice::from_ref(master), |_, k, r| make(k, r))?;
    Ok(groups.pop().unwrap_or_default())
}

/// [`run_trials`] for several groups of trials (the ω of a real set, the settings of the
/// synthetic tables) as one parallel loop: group g's trial k builds its data with
/// `make(g, k, rng)` from `child(masters[g], k)`, exactly as `run_trials(config, &masters[g],
/// …)` would, so every score is the same. One loop instead of one per group keeps both cores
/// busy across the groups' ends, where each group's last trials (a serial refit after the
/// parallel cross-validation) would leave a core idle. Scores come back per group, in trial
/// order.
pub fn run_trial_groups(
    config: &Mc1Config,
    masters: &[GimcRng],
    make: impl Fn(usize, usize, &mut GimcRng) -> Result<TrialData, ExperimentError> + Sync,
) -> Result<Vec<Vec<Vec<MethodScore>>>, ExperimentError> {
    let _seq = SequentialFaer::new();
    let trials = config.trials;
    let flat: Vec<Vec<MethodScore>> = (0..masters.len() * trials)
        .into_par_iter()
        .map(|task| {
            let (g, k) = (task / trials, task % trials);
            let mut r = child(&masters[g], k as u64);
            let data = make(g, k, &mut r)?;
            run_trial(&data, config, &child(&r, METHODS_STREAM))
        })
        .collect::<Result<_, _>>()?;
    let mut flat = flat.into_iter();
    Ok(masters
        .iter()
        .map(|_| flat.by_ref().take(trials).collect())
        .collect())
}

/// The stream under a trial's generator from which its methods draw (`run_trial`'s `rng`).
pub const METHODS_STREAM: u64 = 0x7472_6961;

/// The stream of the `k`-th method of [`Mc1Config::methods`] under the trial's methods
/// generator: MC-1 / MC-b fit with `fit_transduction_cv` on `child(methods, METHOD_STREAM_BASE
/// + k)`.
pub const METHOD_STREAM_BASE: u64 = 100;

/// Per method (in `methods` order): the label errors and imputation errors over trials.
pub fn collect(trials: &[Vec<MethodScore>], method: Method) -> (Vec<f64>, Vec<f64>, Vec<String>) {
    let mut le = Vec::new();
    let mut ie = Vec::new();
    let mut chosen = Vec::new();
    for t in trials {
        for s in t.iter().filter(|s| s.method == method) {
            le.push(s.label_error);
            if let Some(e) = s.imputation_error {
                ie.push(e);
            }
            chosen.push(s.chosen.clone());
        }
    }
    (le, ie, chosen)
}

/// "mean (std)" with `decimals` digits.
pub fn mean_std_cell(values: &[f64], decimals: usize) -> String {
    if values.is_empty() {
        return crate::report::MISSING.to_owned();
    }
    let (m, s) = mean_std(values);
    format!("{m:.decimals$} ({s:.decimals$})")
}

/// Standardises every feature row of a d × n matrix to zero mean and unit variance over the n
/// items (a constant feature becomes 0).
pub fn standardize_rows(x: &mut Mat<f64>) {
    let (d, n) = x.shape();
    for i in 0..d {
        let mean = (0..n).map(|j| x[(i, j)]).sum::<f64>() / n.max(1) as f64;
        let var = (0..n).map(|j| (x[(i, j)] - mean).powi(2)).sum::<f64>() / n.max(1) as f64;
        let inv = if var > 0.0 { var.sqrt().recip() } else { 0.0 };
        for j in 0..n {
            x[(i, j)] = (x[(i, j)] - mean) * inv;
        }
    }
}

/// A real multi-label set of the paper's Tables 4–5.
#[derive(Debug, Clone, PartialEq)]
pub struct RealSpec {
    /// Experiment name.
    pub experiment: &'static str,
    /// Report title.
    pub title: &'static str,
    /// Manifest name of the set.
    pub set: &'static str,
    /// Parts stacked to form the data (the paper uses every row).
    pub parts: &'static [&'static str],
    /// Observed fractions ω.
    pub omegas: Vec<f64>,
    /// Published label error (%) per method, one value per ω of the full form ({40, 60, 80} %).
    pub published_label: Vec<(Method, [f64; 3])>,
    /// Published imputation error per method.
    pub published_imputation: Vec<(Method, [f64; 3])>,
    /// Standardise every feature over all rows before masking (`false`: the features as
    /// distributed, which is what the paper's emotions figures were evidently computed on —
    /// its Zero+SVM row is reproduced only without standardisation).
    pub standardize: bool,
}

impl RealSpec {
    /// The data in a report's words: the set, its parts, n rows, d features and t labels, the
    /// standardisation, and how the observed entries are drawn.
    fn data_note(&self, n: usize, d: usize, t: usize) -> String {
        let features = if self.standardize {
            "every feature standardised to zero mean and unit variance over all rows before masking"
        } else {
            "features as distributed (not standardised: the paper's Zero+SVM row is reproduced only so)"
        };
        format!(
            "{}: all {n} rows ({}), d = {d} features, t = {t} labels; {features}; ω of the feature entries and ω of the label entries observed, each drawn uniformly at random without replacement, independently per trial",
            self.set,
            self.parts.join(" + "),
        )
    }
}

/// The ω values of the paper's Tables 4–5.
pub const REAL_OMEGAS: [f64; 3] = [0.4, 0.6, 0.8];

/// "ω = 40%".
pub fn omega_label(omega: f64) -> String {
    format!("ω = {:.0}%", 100.0 * omega)
}

fn published_at(table: &[(Method, [f64; 3])], method: Method, omega: f64) -> Option<f64> {
    let k = REAL_OMEGAS.iter().position(|&w| (w - omega).abs() < 1e-9)?;
    table.iter().find(|(m, _)| *m == method).map(|(_, v)| v[k])
}

/// Loads the set as X (d × n; with `standardize`, each feature scaled to zero mean and unit
/// variance over all n items) and Y (t × n, +1 where the label is present, −1 elsewhere).
pub fn load_real(
    data_dir: &std::path::Path,
    set: &str,
    parts: &[&str],
    standardize: bool,
) -> Result<(Mat<f64>, Mat<f64>), ExperimentError> {
    let named = gimc_data::load_named(data_dir, set)?;
    let ds = named.concat(parts)?;
    let labels = ds
        .labels()
        .ok_or_else(|| ExperimentError::Failed(format!("{set}: not a multi-label set")))?;
    let feats = ds.features.to_dense();
    let (n, d) = feats.shape();
    let mut x = Mat::from_fn(d, n, |i, j| feats[(j, i)]);
    if standardize {
        standardize_rows(&mut x);
    }
    let t = labels.cols();
    let mut y = Mat::from_fn(t, n, |_, _| -1.0);
    for (v, (row, col)) in labels.iter() {
        if *v != 0.0 {
            y[(col, row)] = 1.0;
        }
    }
    Ok((x, y))
}

/// One trial of a real set: ω of the feature entries and ω of the label entries observed,
/// drawn uniformly at random without replacement from the trial's generator.
fn real_trial_data(
    x: &Mat<f64>,
    y: &Mat<f64>,
    omega: f64,
    r: &mut GimcRng,
) -> Result<TrialData, ExperimentError> {
    let (d, n) = x.shape();
    let observed_x = gimc_data::synth::sample_entries(d, n, omega, r)?;
    let observed_y = gimc_data::synth::sample_entries(y.nrows(), n, omega, r)?;
    Ok(TrialData {
        x: x.clone(),
        y: y.clone(),
        observed_x,
        observed_y,
    })
}

/// Trial `trial` at ω = `spec.omegas[omega_index]` of a real-set experiment, exactly as
/// [`run_real`] draws it under `ctx.seed`, and the child streams under `seeded(ctx.seed)` of
/// that trial's methods generator: method k of the experiment's configuration then fits from
/// `child(methods, METHOD_STREAM_BASE + k)`, which `gimc transduce --seed SEED --stream
/// S1,…,S3,STREAM` rebuilds.
pub fn real_trial(
    spec: &RealSpec,
    ctx: &crate::Context,
    omega_index: usize,
    trial: usize,
) -> Result<(TrialData, Vec<u64>), ExperimentError> {
    let &omega = spec.omegas.get(omega_index).ok_or_else(|| {
        ExperimentError::Failed(format!(
            "{}: no ω number {omega_index} (it has {})",
            spec.experiment,
            spec.omegas.len()
        ))
    })?;
    let (x, y) = load_real(&ctx.data_dir, spec.set, spec.parts, spec.standardize)?;
    let master = gimc_linalg::rng::seeded(ctx.seed);
    let mut r = child(&child(&master, omega_index as u64), trial as u64);
    let data = real_trial_data(&x, &y, omega, &mut r)?;
    Ok((data, vec![omega_index as u64, trial as u64, METHODS_STREAM]))
}

/// Writes a trial's data as Mulan files for `gimc transduce`: `<stem>.arff` with every hidden
/// feature and label cell `?`, `<stem>-truth.arff` complete, and the label list of each
/// (`<stem>.xml`, `<stem>-truth.xml`). Rows are the n items; features are written with
/// Rust's shortest round-trip formatting, so they read back bit for bit. Returns the paths
/// of the masked and the complete ARFF file.
pub fn write_trial_mulan(
    data: &TrialData,
    dir: &std::path::Path,
    stem: &str,
) -> Result<(std::path::PathBuf, std::path::PathBuf), ExperimentError> {
    use std::fmt::Write;
    let (d, n) = data.x.shape();
    let t = data.y.nrows();
    let x_seen = mask(d, n, &data.observed_x);
    let y_seen = mask(t, n, &data.observed_y);
    let write = |path: std::path::PathBuf, text: &str| -> Result<_, ExperimentError> {
        gimc_data::output::write_file(&path, text.as_bytes(), &[])?;
        Ok(path)
    };
    std::fs::create_dir_all(dir).map_err(ExperimentError::io(dir))?;
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n",
    );
    for l in 0..t {
        let _ = writeln!(xml, "<label name=\"label{l}\"></label>");
    }
    xml.push_str("</labels>\n");
    let mut paths = Vec::new();
    for (suffix, masked) in [("", true), ("-truth", false)] {
        write(dir.join(format!("{stem}{suffix}.xml")), &xml)?;
        let mut f = format!("@relation {stem}{suffix}\n");
        for j in 0..d {
            let _ = writeln!(f, "@attribute f{j} numeric");
        }
        for l in 0..t {
            let _ = writeln!(f, "@attribute label{l} {{0,1}}");
        }
        f.push_str("@data\n");
        for i in 0..n {
            for j in 0..d {
                if masked && !x_seen[j * n + i] {
                    f.push('?');
                } else {
                    let _ = write!(f, "{:?}", data.x[(j, i)]);
                }
                f.push(',');
            }
            for l in 0..t {
                if masked && !y_seen[l * n + i] {
                    f.push('?');
                } else {
                    f.push(if data.y[(l, i)] > 0.0 { '1' } else { '0' });
                }
                f.push(if l + 1 < t { ',' } else { '\n' });
            }
        }
        paths.push(write(dir.join(format!("{stem}{suffix}.arff")), &f)?);
    }
    Ok((paths[0].clone(), paths[1].clone()))
}

/// Runs a real-set experiment: for every ω, `config.trials` trials with ω of the feature entries
/// and ω of the label entries observed, drawn uniformly at random without replacement.
pub fn run_real(
    spec: &RealSpec,
    ctx: &crate::Context,
    config: &Mc1Config,
) -> Result<crate::Report, ExperimentError> {
    use crate::report::{Report, Table, format_value};
    let (x, y) = load_real(&ctx.data_dir, spec.set, spec.parts, spec.standardize)?;
    let (d, n) = x.shape();
    let t = y.nrows();
    let mut report = Report::new(spec.experiment, spec.title);
    let master = gimc_linalg::rng::seeded(ctx.seed);
    let start = std::time::Instant::now();
    let masters: Vec<GimcRng> = (0..spec.omegas.len())
        .map(|wi| child(&master, wi as u64))
        .collect();
    let groups = run_trial_groups(config, &masters, |wi, _, r| {
        real_trial_data(&x, &y, spec.omegas[wi], r)
    })?;
    report.note(format!(
        "{} ω x {} trials in {:.1} s (one parallel loop)",
        spec.omegas.len(),
        config.trials,
        start.elapsed().as_secs_f64()
    ));
    let results: Vec<(f64, Vec<Vec<MethodScore>>)> =
        spec.omegas.iter().copied().zip(groups).collect();
    let header = |what: &str| {
        let mut h = vec!["method".to_owned()];
        for &(omega, _) in &results {
            h.push(format!("{what} {} ours", omega_label(omega)));
            h.push("paper".to_owned());
        }
        h
    };
    let mut label_table = Table::new(
        format!(
            "{}: transductive label error (%), mean (std) over trials",
            spec.set
        ),
        header("label error"),
    );
    let mut imp_table = Table::new(
        format!(
            "{}: relative feature imputation error, mean (std) over trials",
            spec.set
        ),
        header("imputation"),
    );
    for &method in &config.methods {
        let mut lrow = vec![method.name().to_owned()];
        let mut irow = vec![method.name().to_owned()];
        for (omega, trials) in &results {
            let (le, ie, chosen) = collect(trials, method);
            let pl = published_at(&spec.published_label, method, *omega);
            let pi = published_at(&spec.published_imputation, method, *omega);
            let (lm, _) = mean_std(&le);
            report.record(
                spec.set,
                method.name(),
                omega_label(*omega),
                METRIC_LABEL,
                Some(lm),
                pl,
            );
            lrow.push(mean_std_cell(&le, 1));
            lrow.push(format_value(pl, 1));
            if method != Method::ZeroSvm {
                let (im, _) = mean_std(&ie);
                report.record(
                    spec.set,
                    method.name(),
                    omega_label(*omega),
                    METRIC_IMPUTATION,
                    Some(im),
                    pi,
                );
                irow.push(mean_std_cell(&ie, 2));
            } else {
                irow.push(crate::report::MISSING.to_owned());
            }
            irow.push(format_value(pi, 2));
            report.note(format!(
                "{} at {}: chosen per trial: {}",
                method.name(),
                omega_label(*omega),
                chosen.join("; ")
            ));
        }
        label_table.push_row(lrow);
        imp_table.push_row(irow);
    }
    report.tables.push(label_table);
    report.tables.push(imp_table);
    report.note(spec.data_note(n, d, t));
    report.note(format!(
        "{} {} Zero+SVM imputes 0.",
        config.mc1_note(),
        config.svm_note()
    ));
    Ok(report)
}
