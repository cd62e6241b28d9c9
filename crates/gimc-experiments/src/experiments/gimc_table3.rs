//! Experiment `gimc-table3`: the GIMC paper's Table 3, semi-supervised clustering (DESIGN §4,
//! §3.3 Algorithm 2).
//!
//! Pairwise clustering error (`gimc_metrics::pairwise_clustering_error`, the fraction of item
//! pairs on which the clustering and the classes disagree about "same cluster") with |Ω| =
//! c·n random constraint pairs, c ∈ {1, 5, 10, 15, 20}, drawn without replacement from the
//! true classes (`gimc_data::split::sample_pairs`). Methods:
//! - k-means on the features (k-means++, 10 restarts; it ignores the constraints);
//! - MCCC (`gimc::fit_mccc`: linear IMC of rank k on X, top-k singular vectors,
//!   k-means), λ chosen like the others;
//! - IMC-RFF: Algorithm 2 with the random Fourier map left as drawn (`gimc::fit_semisupervised`
//!   with `learn = false`);
//! - GIMC-LFF: the same draw, both maps learned (the IMC-RFF solution is its iteration 0);
//! - GIMC-LNYS: learned Nyström (uniform landmarks, M = I), both maps learned.
//!
//! λ ∈ {0.1, 0.5, 1, 5, 10} is chosen for every method and run by the constraint error of the
//! clustering on 20 % of Ω held out (the GIMC fits also choose their iteration count there),
//! then refitted on all of Ω. The full form uses m = 250 (D = 500 Fourier features), 2 runs and
//! 5 outer iterations and leaves GIMC-LNYS out, for compute ([`Table3Config::full`]; the paper's
//! m = 500 is [`Table3Config::paper`]); rank k, RBF γ = 2/d (fixed rule, no labels involved; 0.105 on segment, the prototype's 0.1).
//! Features standardised (zero mean, unit variance). Data: mushrooms (8,124 × 112, k = 2),
//! segment (train + test = 2,310 × 19, k = 7), covtype-sub (a seeded balanced subsample of
//! 1,711 rows, 7 classes × 244–245, of the covtype `stratified` part; 54 features).

use gimc_linalg::observe::NoObserver;
use std::path::Path;
use std::time::Instant;

use gimc::{MccParams, SemiSupInputs, SemiSupParams, fit_mccc, fit_semisupervised};
use gimc_cluster::{KMeansParams, fit_kmeans};
use gimc_data::split::{sample_pairs, split_pairs};
use gimc_data::{DataError, NamedOptions, load_named, load_named_part};
use gimc_featmap::{FourierFamily, MapFamily, NystromFamily};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_metrics::{constraint_error, pairwise_clustering_error};

use rayon::prelude::*;

use super::mc1_common::SequentialFaer;
use super::support::{mean_pm_std_cell, mean_std};
use crate::report::{MISSING, Report, Table, format_value};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `gimc-table3` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct GimcTable3;

/// Metric name of the mean pairwise clustering error.
pub const METRIC_ERROR: &str = "pairwise clustering error";
/// Metric name of its standard deviation over runs.
pub const METRIC_ERROR_STD: &str = "pairwise clustering error (std over runs)";
/// Metric name of the mean wall time of one fit (λ selection included).
pub const METRIC_TIME: &str = "fit time incl. λ selection (s)";

/// Rows of covtype-sub (GIMC paper).
pub const COVTYPE_SUB_ROWS: usize = 1711;

/// The data sets, in the paper's order.
pub const DATASETS: [&str; 3] = ["Mushroom", "Segment", "Covtype-sub"];

/// The constraint multiples c (|Ω| = c·n).
pub const MULTIPLES: [usize; 5] = [1, 5, 10, 15, 20];

/// A method of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// k-means on the features.
    KMeans,
    /// MCCC (linear IMC).
    Mccc,
    /// IMC with the unlearned random Fourier map.
    ImcRff,
    /// GIMC with learned random Fourier features.
    GimcLff,
    /// GIMC with learned Nyström features.
    GimcLnys,
}

/// Every method, in table order.
pub const METHODS: [Method; 5] = [
    Method::KMeans,
    Method::Mccc,
    Method::ImcRff,
    Method::GimcLff,
    Method::GimcLnys,
];

impl Method {
    /// The column name.
    pub fn name(self) -> &'static str {
        match self {
            Method::KMeans => "k-means",
            Method::Mccc => "MCCC",
            Method::ImcRff => "IMC-RFF",
            Method::GimcLff => "GIMC-LFF",
            Method::GimcLnys => "GIMC-LNYS",
        }
    }

    /// The paper's error for data set `dataset` (index into [`DATASETS`]) at multiple index
    /// `mi` (index into [`MULTIPLES`]); the paper has no GIMC-LNYS column.
    pub fn published(self, dataset: usize, mi: usize) -> Option<f64> {
        let col = match self {
            Method::KMeans => 0,
            Method::Mccc => 1,
            Method::ImcRff => 2,
            Method::GimcLff => 3,
            Method::GimcLnys => return None,
        };
        PUBLISHED.get(dataset)?.get(mi).map(|row| row[col])
    }
}

/// Published Table 3 (k-means / MCCC / IMC-RFF / GIMC-LFF) per data set and multiple (DESIGN §4).
const PUBLISHED: [[[f64; 4]; 5]; 3] = [
    [
        [0.1897, 0.0007, 0.0034, 0.0002],
        [0.1897, 0.0010, 0.0005, 0.0000],
        [0.1897, 0.0007, 0.0000, 0.0000],
        [0.1897, 0.0007, 0.0002, 0.0000],
        [0.1897, 0.0007, 0.0002, 0.0000],
    ],
    [
        [0.1433, 0.0891, 0.0683, 0.0724],
        [0.1347, 0.0800, 0.0580, 0.0570],
        [0.1363, 0.0809, 0.0650, 0.0446],
        [0.1362, 0.0872, 0.0678, 0.0402],
        [0.1330, 0.0837, 0.0564, 0.0380],
    ],
    [
        [0.2523, 0.2498, 0.1840, 0.1898],
        [0.2112, 0.1772, 0.1930, 0.1592],
        [0.2068, 0.1708, 0.1722, 0.1388],
        [0.2203, 0.1677, 0.1687, 0.1262],
        [0.2124, 0.1607, 0.1561, 0.1078],
    ],
];

/// Settings of one run of the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Table3Config {
    /// Fourier directions / Nyström landmarks m.
    pub m: usize,
    /// Constraint multiples c.
    pub multiples: Vec<usize>,
    /// Runs (seeds) per cell.
    pub runs: usize,
    /// The λ grid.
    pub lambdas: Vec<f64>,
    /// Outer iterations of the GIMC fits.
    pub max_iter: usize,
    /// IMC alternations of the start (and of IMC-RFF).
    pub start_iters: usize,
    /// Cap on the rows of every data set (a seeded uniform subsample), for the quick form.
    pub max_rows: Option<usize>,
    /// Methods to run.
    pub methods: Vec<Method>,
    /// Indices into [`DATASETS`] of the sets to run (default: all three).
    pub sets: Vec<usize>,
}

impl Table3Config {
    /// The full form as run on the 2-core development machine: m = 250 (the paper's 500 was
    /// beyond the compute budget: one GIMC-LFF fit at |Ω| = 20n on segment took about 4 minutes
    /// at m = 500 under load), all multiples, 2 runs, the paper's λ grid, 5 outer iterations, 15
    /// IMC alternations for the start; GIMC-LNYS left out for the same reason ([`Self::paper`]
    /// is the paper-sized form).
    pub fn full() -> Self {
        Self {
            m: 250,
            multiples: MULTIPLES.to_vec(),
            runs: 2,
            lambdas: gimc::clustering::DEFAULT_LAMBDAS.to_vec(),
            max_iter: 5,
            start_iters: 15,
            max_rows: None,
            methods: vec![
                Method::KMeans,
                Method::Mccc,
                Method::ImcRff,
                Method::GimcLff,
            ],
            sets: vec![0, 1, 2],
        }
    }

    /// The paper-sized form: m = 500, 3 runs, 10 outer iterations, 30 start alternations, every
    /// method including GIMC-LNYS (hours on two cores).
    pub fn paper() -> Self {
        Self {
            m: 500,
            multiples: MULTIPLES.to_vec(),
            runs: 3,
            lambdas: gimc::clustering::DEFAULT_LAMBDAS.to_vec(),
            max_iter: 10,
            start_iters: 30,
            max_rows: None,
            methods: METHODS.to_vec(),
            sets: vec![0, 1, 2],
        }
    }

    /// The quick form: 300 rows per set, m = 40, multiples 1 and 5, one run, λ ∈ {0.1, 1},
    /// 3 outer iterations.
    pub fn quick() -> Self {
        Self {
            m: 40,
            multiples: vec![1, 5],
            runs: 1,
            lambdas: vec![0.1, 1.0],
            max_iter: 3,
            start_iters: 10,
            max_rows: Some(300),
            methods: METHODS.to_vec(),
            sets: vec![0, 1, 2],
        }
    }
}

/// A loaded data set: standardised features, classes, k and a description.
#[derive(Debug, Clone)]
pub struct ClusterSet {
    /// Features (standardised).
    pub x: FeatureMatrix,
    /// Class of every row.
    pub classes: Vec<usize>,
    /// Number of classes = clusters.
    pub k: usize,
    /// How the set was prepared.
    pub description: String,
}

fn missing_ok<T>(r: Result<T, DataError>) -> Result<Option<T>, ExperimentError> {
    match r {
        Ok(d) => Ok(Some(d)),
        Err(DataError::MissingFile { .. } | DataError::NotObtained { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn finish(d: &gimc_data::Dataset, description: String) -> Result<ClusterSet, ExperimentError> {
    let classes = d
        .classes()
        .map(<[usize]>::to_vec)
        .ok_or_else(|| ExperimentError::Failed(format!("{}: no class targets", d.name)))?;
    let k = classes.iter().max().map_or(0, |m| m + 1);
    let dense = FeatureMatrix::dense(d.features.to_dense())?;
    let (x, _) = dense.standardize()?;
    Ok(ClusterSet {
        x,
        classes,
        k,
        description,
    })
}

/// Loads data set `index` of [`DATASETS`] (standardised), or `None` when its files are absent.
/// Covtype-sub is a balanced subsample drawn from `rng`.
pub fn load_set(
    data_dir: &Path,
    index: usize,
    rng: &mut GimcRng,
) -> Result<Option<ClusterSet>, ExperimentError> {
    let opts = NamedOptions { bin_targets: true };
    match index {
        0 => {
            let Some(d) = missing_ok(load_named_part(data_dir, "mushrooms", "all", &opts))? else {
                return Ok(None);
            };
            let desc = format!("mushrooms: {} × {}, standardised", d.nrows(), d.ncols());
            Ok(Some(finish(&d, desc)?))
        }
        1 => {
            let Some(set) = missing_ok(load_named(data_dir, "segment"))? else {
                return Ok(None);
            };
            let d = set.concat(&["train", "test"])?;
            let desc = format!(
                "segment: train + test, {} × {} (the paper states 2,319 rows), standardised",
                d.nrows(),
                d.ncols()
            );
            Ok(Some(finish(&d, desc)?))
        }
        2 => {
            let Some(d) = missing_ok(load_named_part(data_dir, "covtype", "stratified", &opts))?
            else {
                return Ok(None);
            };
            let sub = d.balanced_subsample(COVTYPE_SUB_ROWS, rng)?;
            let desc = format!(
                "covtype-sub: a balanced subsample of {} × {} (7 classes × 244–245) of the \
                 covtype stratified sample, standardised",
                sub.nrows(),
                sub.ncols()
            );
            Ok(Some(finish(&sub, desc)?))
        }
        _ => Ok(None),
    }
}

/// A uniform subsample of at most `max_rows` rows (sorted), or the set itself.
fn cap_rows(
    set: ClusterSet,
    max_rows: Option<usize>,
    rng: &mut GimcRng,
) -> Result<ClusterSet, ExperimentError> {
    let n = set.classes.len();
    match max_rows {
        Some(m) if m < n => {
            let mut rows = rand::seq::index::sample(rng, n, m).into_vec();
            rows.sort_unstable();
            let classes: Vec<usize> = rows.iter().map(|&r| set.classes[r]).collect();
            // re-standardise the subsample
            let x = FeatureMatrix::dense(set.x.select_rows(&rows)?.to_dense())?;
            let (x, _) = x.standardize()?;
            Ok(ClusterSet {
                x,
                k: set.k,
                classes,
                description: format!("{} (quick: {m} rows)", set.description),
            })
        }
        _ => Ok(set),
    }
}

/// RBF width rule of this experiment: γ = 2/d.
pub fn rbf_gamma(x: &FeatureMatrix) -> f64 {
    2.0 / x.ncols().max(1) as f64
}

/// The outcome of one method on one constraint set.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodRun {
    /// Cluster of every item.
    pub labels: Vec<usize>,
    /// The chosen λ (None for k-means).
    pub lambda: Option<f64>,
    /// The chosen outer-iteration count (GIMC methods).
    pub iterations: Option<usize>,
    /// Wall time (s), λ selection included.
    pub seconds: f64,
}

/// A set with pairwise constraints on its points.
#[derive(Debug, Clone, Copy)]
pub struct ConstrainedSet<'a> {
    /// The set.
    pub set: &'a ClusterSet,
    /// The constraints (i, j, s) on its points.
    pub pairs: &'a [(usize, usize, f64)],
}

impl<'a> ConstrainedSet<'a> {
    /// The set's points and constraints as the inputs of a kernel method with `family`'s maps.
    pub fn inputs<F: ?Sized>(self, family: &'a F) -> SemiSupInputs<'a, F> {
        SemiSupInputs {
            x: &self.set.x,
            pairs: self.pairs,
            family,
        }
    }
}

/// Runs `method` on `data` (a set and its constraints); `rng` drives every random choice (the
/// same generator state gives IMC-RFF and GIMC-LFF the same map draw and held-out split).
pub fn run_method(
    method: Method,
    data: ConstrainedSet<'_>,
    config: &Table3Config,
    rng: &mut GimcRng,
) -> Result<MethodRun, ExperimentError> {
    let ConstrainedSet { set, pairs } = data;
    let start = Instant::now();
    let (labels, lambda, iterations) = match method {
        Method::KMeans => {
            let params = KMeansParams::new(set.k).with_n_init(10).check()?;
            let km = fit_kmeans(&set.x, &params, rng, &mut NoObserver)?;
            (km.labels, None, None)
        }
        Method::Mccc => {
            let (train, val) = split_pairs(pairs, 0.2, &mut child(rng, 1))?;
            let mut best: Option<(f64, f64)> = None;
            if !val.is_empty() && !train.is_empty() && config.lambdas.len() > 1 {
                for &l in &config.lambdas {
                    let p = MccParams::new(set.k).with_lambda(l).check()?;
                    let fit = fit_mccc(&set.x, &train, &p, &mut child(rng, 2))?;
                    let e = constraint_error(&val, &fit.labels)?;
                    if best.is_none_or(|(_, be)| e < be) {
                        best = Some((l, e));
                    }
                }
            }
            let l = best.map_or(config.lambdas.first().copied().unwrap_or(0.1), |b| b.0);
            let p = MccParams::new(set.k).with_lambda(l).check()?;
            let fit = fit_mccc(&set.x, pairs, &p, &mut child(rng, 3))?;
            (fit.labels, Some(l), None)
        }
        Method::ImcRff | Method::GimcLff | Method::GimcLnys => {
            let p = semisup_params(set, config, method != Method::ImcRff)?;
            let (labels, lambda, iterations) = if method == Method::GimcLnys {
                semisup_run(data.inputs(&NystromFamily::default()), &p, rng)
            } else {
                semisup_run(data.inputs(&FourierFamily), &p, rng)
            }?;
            (labels, Some(lambda), Some(iterations))
        }
    };
    Ok(MethodRun {
        labels,
        lambda,
        iterations,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The clustering, chosen λ and chosen outer-iteration count of the kernel method (learned or
/// not, per `p`) on `inputs`.
fn semisup_run<F: MapFamily + ?Sized>(
    inputs: SemiSupInputs<'_, F>,
    p: &gimc::ValidSemiSupParams,
    rng: &mut GimcRng,
) -> Result<(Vec<usize>, f64, usize), ExperimentError> {
    let fit = fit_semisupervised(inputs, p, rng, &mut NoObserver)?;
    Ok((fit.labels, fit.lambda, fit.iterations))
}

/// The settings of the kernel methods (learned or not) on `set`.
fn semisup_params(
    set: &ClusterSet,
    config: &Table3Config,
    learn: bool,
) -> Result<gimc::ValidSemiSupParams, ExperimentError> {
    let mut p = SemiSupParams::new(set.k, config.m, rbf_gamma(&set.x))
        .with_learn(learn)
        .with_lambdas(config.lambdas.clone());
    p.completion.max_iter = config.max_iter;
    p.completion.start_iters = config.start_iters;
    Ok(p.check()?)
}

/// IMC-RFF and GIMC-LFF from one pass ([`gimc::fit_semisupervised_with_start`]): the same
/// results as [`run_method`] gives each from the same `rng` state, with every λ's IMC start
/// (GIMC-LFF's iteration 0, which is IMC-RFF's fit) solved once. IMC-RFF's time is its own
/// share of the pass (its starts, embeddings and refit), GIMC-LFF's the whole pass.
pub fn run_rff_and_lff(
    set: &ClusterSet,
    pairs: &[(usize, usize, f64)],
    config: &Table3Config,
    rng: &mut GimcRng,
) -> Result<(MethodRun, MethodRun), ExperimentError> {
    let start = Instant::now();
    let p = semisup_params(set, config, true)?;
    let pair = gimc::fit_semisupervised_with_start(
        ConstrainedSet { set, pairs }.inputs(&FourierFamily),
        &p,
        rng,
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let run = |fit: gimc::SemiSupFit<_>, seconds| MethodRun {
        labels: fit.labels,
        lambda: Some(fit.lambda),
        iterations: Some(fit.iterations),
        seconds,
    };
    Ok((
        run(pair.start, pair.start_seconds),
        run(pair.learned, seconds),
    ))
}

/// Every (multiple, run) of data set `di`, in the order multiple-major, then run: the
/// results of `config.methods` in order for each. Run r at multiple index ci draws everything
/// from its own stream (`1_000_000 (di + 1) + 1000 ci + r` of the master), so the runs are
/// independent and execute in parallel, two at a time on two cores, each with faer sequential
/// ([`SequentialFaer`]): one fit alone kept only 1.2 of the 2 cores busy (12 min 10 s wall for
/// 808 s of CPU). Every result is the same as running them one after the other.
fn run_cells(
    set: &ClusterSet,
    di: usize,
    config: &Table3Config,
    base: &GimcRng,
) -> Result<Vec<Vec<MethodRun>>, ExperimentError> {
    let _seq = SequentialFaer::new();
    let n = set.classes.len();
    let jobs: Vec<(usize, usize, usize)> = config
        .multiples
        .iter()
        .enumerate()
        .flat_map(|(ci, &c)| (0..config.runs).map(move |run| (ci, c, run)))
        .collect();
    jobs.into_par_iter()
        .map(|(ci, c, run)| {
            let stream = 1_000_000 * (di as u64 + 1) + 1000 * ci as u64 + run as u64;
            let run_rng = child(base, stream);
            let pairs = sample_pairs(&set.classes, c * n, &mut child(&run_rng, 0))?;
            // GIMC-LFF's result when it came out of IMC-RFF's pass
            let mut lff = None;
            config
                .methods
                .iter()
                .map(|&method| {
                    // IMC-RFF and GIMC-LFF share this stream: same map draw and held-out split
                    let mut rng = child(&run_rng, 1);
                    match method {
                        Method::ImcRff if config.methods.contains(&Method::GimcLff) => {
                            let (rff, learned) = run_rff_and_lff(set, &pairs, config, &mut rng)?;
                            lff = Some(learned);
                            Ok(rff)
                        }
                        Method::GimcLff => match lff.take() {
                            Some(learned) => Ok(learned),
                            None => run_method(
                                method,
                                ConstrainedSet { set, pairs: &pairs },
                                config,
                                &mut rng,
                            ),
                        },
                        _ => run_method(
                            method,
                            ConstrainedSet { set, pairs: &pairs },
                            config,
                            &mut rng,
                        ),
                    }
                })
                .collect()
        })
        .collect()
}

/// Per-cell results: errors, chosen λ, iteration counts and times over the runs.
#[derive(Debug, Clone, Default)]
struct Cell {
    errors: Vec<f64>,
    lambdas: Vec<f64>,
    iterations: Vec<usize>,
    seconds: Vec<f64>,
}

impl Experiment for GimcTable3 {
    fn name(&self) -> &'static str {
        "gimc-table3"
    }

    fn description(&self) -> &'static str {
        "GIMC paper Table 3: semi-supervised clustering error with pairwise constraints"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(249, 1)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let config = if ctx.quick {
            Table3Config::quick()
        } else {
            Table3Config::full()
        };
        run_table3(ctx, &config)
    }
}

/// Runs the experiment with explicit settings (the `run` of [`GimcTable3`] picks the quick or
/// full form).
pub fn run_table3(ctx: &Context, config: &Table3Config) -> Result<Report, ExperimentError> {
    let base = seeded(ctx.seed);
    let mut report = Report::new(
        "gimc-table3",
        "GIMC Table 3: semi-supervised clustering, pairwise clustering error",
    );
    let mut pass_checks: Vec<String> = Vec::new();
    for (di, name) in DATASETS.iter().enumerate() {
        if !config.sets.contains(&di) {
            continue;
        }
        let set = load_set(&ctx.data_dir, di, &mut child(&base, 10 + di as u64))?;
        let set = match set {
            Some(s) => Some(cap_rows(
                s,
                config.max_rows,
                &mut child(&base, 20 + di as u64),
            )?),
            None => None,
        };
        let mut header = vec!["|Ω|".to_owned()];
        for m in &config.methods {
            header.push(format!("{} ours", m.name()));
            header.push(format!("{} paper", m.name()));
        }
        let title = match &set {
            Some(s) => format!(
                "{name} (n = {}, d = {}, k = {}): pairwise clustering error, mean ± std over {} runs",
                s.classes.len(),
                s.x.ncols(),
                s.k,
                config.runs
            ),
            None => format!("{name}: missing from the data directory"),
        };
        let table = Table::new(title, header);
        match set {
            None => report_missing_set(&mut report, table, di, config, ctx),
            Some(set) => {
                let mean_err = report_set(&mut report, table, di, &set, config, &base)?;
                pass_checks.extend(set_checks(di, config, &mean_err));
            }
        }
    }
    for c in pass_checks {
        report.note(format!("check: {c}"));
    }
    settings_notes(&mut report, config, ctx);
    Ok(report)
}

/// The published value of `method` on set `di` at `c`·n constraints, if the paper has one.
fn published_at(method: Method, di: usize, c: usize) -> Option<f64> {
    let pi = MULTIPLES.iter().position(|&x| x == c).unwrap_or(usize::MAX);
    method.published(di, pi)
}

/// The rows, records and note of a set missing from the data directory: our cells empty, the
/// paper's beside them.
fn report_missing_set(
    report: &mut Report,
    mut table: Table,
    di: usize,
    config: &Table3Config,
    ctx: &Context,
) {
    let name = DATASETS[di];
    for &c in &config.multiples {
        let setting = format!("{c}n");
        let mut row = vec![setting.clone()];
        for &m in &config.methods {
            let published = published_at(m, di, c);
            report.record(name, m.name(), &setting, METRIC_ERROR, None, published);
            row.push(MISSING.to_owned());
            row.push(format_value(published, 4));
        }
        table.push_row(row);
    }
    report.tables.push(table);
    report.note(format!(
        "{name}: missing from the data directory {}; our cells are empty; run `cargo \
         xtask datasets fetch --only {}`",
        ctx.data_dir.display(),
        ["mushrooms", "segment", "covtype"][di.min(2)]
    ));
}

/// The per-cell results of one |Ω| = c·n: each method's cell over the runs.
fn collect_cells(
    runs: &mut impl Iterator<Item = Vec<MethodRun>>,
    set: &ClusterSet,
    config: &Table3Config,
) -> Result<Vec<Cell>, ExperimentError> {
    let mut cells = vec![Cell::default(); config.methods.len()];
    for _ in 0..config.runs {
        let Some(methods) = runs.next() else {
            break;
        };
        for (mi, r) in methods.into_iter().enumerate() {
            cells[mi]
                .errors
                .push(pairwise_clustering_error(&r.labels, &set.classes)?);
            if let Some(l) = r.lambda {
                cells[mi].lambdas.push(l);
            }
            if let Some(it) = r.iterations {
                cells[mi].iterations.push(it);
            }
            cells[mi].seconds.push(r.seconds);
        }
    }
    Ok(cells)
}

/// The detail row of one method's cell: chosen λ per run, mean iterations, mean fit time.
fn detail_row(setting: &str, method: Method, cell: &Cell, mean_seconds: f64) -> Vec<String> {
    let lambdas = if cell.lambdas.is_empty() {
        MISSING.to_owned()
    } else {
        cell.lambdas
            .iter()
            .map(|l| format!("{l}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let iters = if cell.iterations.is_empty() {
        MISSING.to_owned()
    } else {
        format!(
            "{:.1}",
            cell.iterations.iter().sum::<usize>() as f64 / cell.iterations.len() as f64
        )
    };
    vec![
        setting.to_owned(),
        method.name().to_owned(),
        lambdas,
        iters,
        format!("{mean_seconds:.2}"),
    ]
}

/// Runs every cell of a present set and adds its tables, records and note; returns the mean
/// error per (multiple, method).
fn report_set(
    report: &mut Report,
    mut table: Table,
    di: usize,
    set: &ClusterSet,
    config: &Table3Config,
    base: &GimcRng,
) -> Result<Vec<Vec<f64>>, ExperimentError> {
    let name = DATASETS[di];
    let mut detail = Table::new(
        format!("{name}: chosen λ (per run), mean chosen GIMC iterations, mean fit time (s)"),
        vec![
            "|Ω|".into(),
            "method".into(),
            "λ".into(),
            "iterations".into(),
            "time (s)".into(),
        ],
    );
    let mut mean_err = vec![vec![f64::NAN; config.methods.len()]; config.multiples.len()];
    let mut runs = run_cells(set, di, config, base)?.into_iter();
    for (ci, &c) in config.multiples.iter().enumerate() {
        let setting = format!("{c}n");
        let cells = collect_cells(&mut runs, set, config)?;
        let mut row = vec![setting.clone()];
        for (mi, &method) in config.methods.iter().enumerate() {
            let cell = &cells[mi];
            let (mean, std) = mean_std(&cell.errors);
            mean_err[ci][mi] = mean;
            let published = published_at(method, di, c);
            report.record(
                name,
                method.name(),
                &setting,
                METRIC_ERROR,
                Some(mean),
                published,
            );
            report.record(
                name,
                method.name(),
                &setting,
                METRIC_ERROR_STD,
                Some(std),
                None,
            );
            let (t, _) = mean_std(&cell.seconds);
            report.record(name, method.name(), &setting, METRIC_TIME, Some(t), None);
            row.push(mean_pm_std_cell(&cell.errors));
            row.push(format_value(published, 4));
            detail.push_row(detail_row(&setting, method, cell, t));
        }
        table.push_row(row);
    }
    report.tables.push(table);
    report.tables.push(detail);
    report.note(format!(
        "{name}: {}; k = {}; γ = 2/d = {:.4}",
        set.description,
        set.k,
        rbf_gamma(&set.x)
    ));
    Ok(mean_err)
}

/// The pass checks of one set, stated on the mean errors: GIMC-LFF's error at 20n (segment:
/// at most 0.03 and below MCCC; mushrooms: at most 0.001), and on segment GIMC-LFF at or
/// below IMC-RFF at 5n, 10n, 15n and 20n.
fn set_checks(di: usize, config: &Table3Config, mean_err: &[Vec<f64>]) -> Vec<String> {
    let mut checks = Vec::new();
    let col = |m: Method| config.methods.iter().position(|&x| x == m);
    let row_of = |c: usize| config.multiples.iter().position(|&x| x == c);
    if let (Some(r20), Some(lff)) = (row_of(20), col(Method::GimcLff)) {
        let e = mean_err[r20][lff];
        if di == 1 {
            let mccc = col(Method::Mccc).map_or(f64::NAN, |m| mean_err[r20][m]);
            checks.push(format!(
                "segment 20n: GIMC-LFF {e:.4} ≤ 0.03: {}; below our MCCC {mccc:.4}: {}",
                yes(e <= 0.03),
                yes(e < mccc)
            ));
        }
        if di == 0 {
            checks.push(format!(
                "mushrooms 20n: GIMC-LFF {e:.4} ≤ 0.001: {}",
                yes(e <= 0.001)
            ));
        }
    }
    if di == 1
        && let (Some(lff), Some(rff)) = (col(Method::GimcLff), col(Method::ImcRff))
    {
        for c in [5, 10, 15, 20] {
            if let Some(r) = row_of(c) {
                let (a, b) = (mean_err[r][lff], mean_err[r][rff]);
                checks.push(format!(
                    "segment {c}n: GIMC-LFF {a:.4} ≤ IMC-RFF {b:.4}: {}",
                    yes(a <= b)
                ));
            }
        }
    }
    checks
}

/// The notes on the settings, the runs and the quick form.
fn settings_notes(report: &mut Report, config: &Table3Config, ctx: &Context) {
    report.note(format!(
        "settings: m = {} (GIMC-LFF / IMC-RFF: D = {} Fourier features; GIMC-LNYS: {} landmarks, \
         M = I), IMC rank = k, λ ∈ {:?} chosen per run and method by the constraint error of the \
         clustering on 20 % of Ω held out, then refitted on all of Ω; GIMC: {} outer iterations \
         (the count chosen on the held-out pairs, 0 = the IMC-RFF start), {} IMC alternations for \
         the start, 3 warm-started ones per outer iteration, Armijo steps on both maps U and V \
         (same initial draw); T = top-k left singular vectors of ΦW, k-means (10 restarts) on its \
         rows; MCCC: linear IMC of rank k on X, same λ selection; k-means: 10 restarts",
        config.m,
        2 * config.m,
        config.m,
        config.lambdas,
        config.max_iter,
        config.start_iters
    ));
    report.note(format!(
        "{} run(s) per cell, each with its own constraint draw (|Ω| = c·n distinct unordered \
         pairs, labelled from the classes) from the master seed {}; IMC-RFF and GIMC-LFF of a run \
         share the map draw and the held-out split, and come from one pass (IMC-RFF's fit for \
         each λ is GIMC-LFF's iteration 0, solved once): IMC-RFF's time is its own share of the \
         pass, GIMC-LFF's the whole pass; runs execute two at a time on two cores (faer \
         sequential inside each), and a fit's time is its wall-clock time while sharing the \
         machine with another",
        config.runs, ctx.seed
    ));
    if let Some(r) = config.max_rows {
        report.note(format!(
            "quick form: {r} rows per set, m = {}, multiples {:?}, λ ∈ {:?}",
            config.m, config.multiples, config.lambdas
        ));
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "NO" }
}
