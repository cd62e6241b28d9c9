//! Experiment `okmf-scaling`: the OKMF paper's Figure 1 (DESIGN §4) — fit time against the
//! number of rows n (OKMF is linear in n, kernel k-means quadratic) and the OKMF loss against
//! the epochs.
//!
//! Data: rows drawn uniformly with replacement from the covtype stratified sample (54 features;
//! blobs from `gimc_data::synth::blobs`, 7 centres in 54 dimensions, when covtype is absent), the
//! same pool for every n (the first n rows of one draw of the largest size). OKMF-R-RBF,
//! γ = 1/d, budget p = 500, r = 7, 3 epochs; the time of a fit (budget, initialisation, SGD; no
//! label pass) is the minimum over repetitions (3, quick: 2). n = 10k … 160k (quick: 10k …
//! 40k). Kernel k-means (RBF, same γ, one restart) at n = 1k … 4k (quick: 1k, 2k) shows the
//! quadratic contrast. The loss curves are the progressive OKMF loss of every epoch of two
//! 10-epoch fits at n = 20k: W initialised from kernel k-means on the budget (the default) and
//! uniformly at random (the authors' code). The figures, drawn from the records
//! ([`OkmfScaling::figures`]): `okmf-scaling-time.svg` (time against n on log–log axes) and one
//! loss curve per initialisation, `okmf-scaling-loss-kmeans-init.svg` and
//! `okmf-scaling-loss-random-init.svg`, each on its own y range (the two start far apart and
//! move by very different amounts, so on one axis the smaller movement would look flat).

use gimc_linalg::observe::NoObserver;
use std::path::Path;
use std::time::Instant;

use gimc_cluster::{KernelKMeansParams, OkmfInit, OkmfParams, fit_kernel_kmeans, fit_okmf};
use gimc_linalg::observe::{FnObserver, IterationRecord, ObserverAction};
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};
use rand::Rng;

use super::okmf_table2::{BUDGET, load_covtype, rbf_gamma};
use crate::report::{Record, Report, Table};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `okmf-scaling` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct OkmfScaling;

/// Row counts of the OKMF timing, full form.
pub const SIZES_FULL: [usize; 5] = [10_000, 20_000, 40_000, 80_000, 160_000];
/// Row counts of the OKMF timing, quick form.
pub const SIZES_QUICK: [usize; 3] = [10_000, 20_000, 40_000];
/// Row counts of the kernel k-means timing, full form.
pub const KERNEL_SIZES_FULL: [usize; 3] = [1_000, 2_000, 4_000];
/// Row counts of the kernel k-means timing, quick form.
pub const KERNEL_SIZES_QUICK: [usize; 2] = [1_000, 2_000];
/// Epochs of the timed OKMF fits.
pub const TIMED_EPOCHS: usize = 3;
/// Epochs of the loss curve.
pub const LOSS_EPOCHS: usize = 10;
/// Rows of the loss-curve fit.
pub const LOSS_ROWS: usize = 20_000;
/// Clusters (covtype's 7 classes).
pub const K: usize = 7;

/// `n` rows drawn uniformly with replacement from covtype's stratified sample, or blobs when it
/// is missing; returns the rows and the source's description.
fn pool(
    data_dir: &Path,
    n: usize,
    rng: &mut GimcRng,
) -> Result<(FeatureMatrix, String), ExperimentError> {
    if let Some(cov) = load_covtype(data_dir, None, rng)? {
        let m = cov.x.nrows();
        let rows: Vec<usize> = (0..n).map(|_| rng.random_range(0..m)).collect();
        return Ok((
            cov.x.select_rows(&rows)?,
            format!(
                "rows drawn uniformly with replacement from the covtype stratified sample ({m} × 54)"
            ),
        ));
    }
    let shape = gimc_data::synth::BlobsParams::new(n, 54, K, 1.0).check()?;
    let d = gimc_data::synth::blobs(&shape, rng)?;
    Ok((
        d.features,
        "blobs (covtype missing): 7 centres uniform in [−10, 10]^54, noise std 1".to_owned(),
    ))
}

fn first_rows(x: &FeatureMatrix, n: usize) -> Result<FeatureMatrix, ExperimentError> {
    let rows: Vec<usize> = (0..n.min(x.nrows())).collect();
    Ok(x.select_rows(&rows)?)
}

/// Dataset field of every record.
const DATASET: &str = "covtype rows";
/// Metric of the timing records.
const METRIC_TIME: &str = "fit time (s)";
/// Metric of the loss records.
const METRIC_LOSS: &str = "loss";
/// Method of the OKMF timing records.
const METHOD_OKMF: &str = "OKMF-R-RBF";
/// Method of the kernel k-means timing records.
const METHOD_KKM: &str = "kernel k-means RBF";
/// Methods of the loss records, with the suffix of their figure.
const LOSS_CURVES: [(&str, &str); 2] = [
    ("OKMF-R-RBF (kernel k-means init)", "loss-kmeans-init"),
    ("OKMF-R-RBF (random init)", "loss-random-init"),
];

/// What the run measures.
struct Measurements {
    /// Where the rows come from.
    source: String,
    /// RBF γ = 1/d.
    gamma: f64,
    /// (n, seconds) of the OKMF fits.
    okmf_times: Vec<(usize, f64)>,
    /// (n, seconds) of the kernel k-means fits.
    kkm_times: Vec<(usize, f64)>,
    /// The epochs of the 10-epoch fits, W from kernel k-means and random.
    epochs: [Vec<OkmfEpoch>; 2],
}

/// One epoch of an OKMF fit as its observer saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OkmfEpoch {
    /// Epoch number, from 1.
    epoch: usize,
    /// The epoch's mean loss plus (λ/2)‖W‖².
    loss: f64,
    /// Seconds since the fit started.
    seconds: f64,
}

impl OkmfEpoch {
    fn of(record: &IterationRecord) -> Self {
        Self {
            epoch: record.iteration,
            loss: record.objective,
            seconds: record.elapsed_secs,
        }
    }
}

/// Runs the timings and the two loss-curve fits.
fn measure(ctx: &Context) -> Result<Measurements, ExperimentError> {
    let sizes: &[usize] = if ctx.quick { &SIZES_QUICK } else { &SIZES_FULL };
    let kernel_sizes: &[usize] = if ctx.quick {
        &KERNEL_SIZES_QUICK
    } else {
        &KERNEL_SIZES_FULL
    };
    let reps = if ctx.quick { 2 } else { 3 };
    let base = seeded(ctx.seed);
    let largest = sizes.iter().copied().max().unwrap_or(0).max(LOSS_ROWS);
    let (x_all, source) = pool(&ctx.data_dir, largest, &mut child(&base, 1))?;
    let gamma = rbf_gamma(&x_all);
    let kernel = Kernel::Rbf { gamma };
    let params = OkmfParams::new(K, kernel)
        .with_budget_size(BUDGET)
        .with_epochs(TIMED_EPOCHS);

    // OKMF timing
    let timed = params.check()?;
    let mut okmf_times = Vec::new();
    // warm-up (page faults, thread pool)
    let warm = first_rows(&x_all, sizes.first().copied().unwrap_or(1000))?;
    fit_okmf(&warm, &timed, &mut child(&base, 2), &mut NoObserver)?;
    for (si, &n) in sizes.iter().enumerate() {
        let x = first_rows(&x_all, n)?;
        let mut best = f64::INFINITY;
        for rep in 0..reps {
            let mut rng = child(&base, 100 + (si * 10 + rep) as u64);
            let start = Instant::now();
            fit_okmf(&x, &timed, &mut rng, &mut NoObserver)?;
            best = best.min(start.elapsed().as_secs_f64());
        }
        okmf_times.push((n, best));
    }
    // kernel k-means timing
    let kkm_params = KernelKMeansParams::new(K, kernel).with_n_init(1).check()?;
    let mut kkm_times = Vec::new();
    for (si, &n) in kernel_sizes.iter().enumerate() {
        let x = first_rows(&x_all, n)?;
        let mut rng = child(&base, 500 + si as u64);
        let start = Instant::now();
        fit_kernel_kmeans(&x, &kkm_params, &mut rng)?;
        kkm_times.push((n, start.elapsed().as_secs_f64()));
    }
    // loss curves
    let x_loss = first_rows(&x_all, LOSS_ROWS)?;
    let mut epochs: [Vec<OkmfEpoch>; 2] = [Vec::new(), Vec::new()];
    for ((init, stream), curve) in [(OkmfInit::KernelKMeans, 900), (OkmfInit::Random, 901)]
        .into_iter()
        .zip(&mut epochs)
    {
        let loss_params = params.clone().with_epochs(LOSS_EPOCHS).with_init(init);
        let mut record = FnObserver(|r: &IterationRecord| {
            curve.push(OkmfEpoch::of(r));
            ObserverAction::Continue
        });
        fit_okmf(
            &x_loss,
            &loss_params.check()?,
            &mut child(&base, stream),
            &mut record,
        )?;
    }
    Ok(Measurements {
        source,
        gamma,
        okmf_times,
        kkm_times,
        epochs,
    })
}

/// The timing tables, with their records.
fn timing_tables(report: &mut Report, m: &Measurements) -> [Table; 2] {
    let (n0, t0) = m.okmf_times.first().copied().unwrap_or((1, 1.0));
    let per_row0 = t0 / n0 as f64;
    let mut time_table = Table::new(
        "OKMF-R-RBF fit time against n (min over repetitions)",
        vec![
            "n".into(),
            "fit time (s)".into(),
            "time per 10k rows (s)".into(),
            "time/n relative to smallest n".into(),
        ],
    );
    for &(n, t) in &m.okmf_times {
        let rel = (t / n as f64) / per_row0;
        time_table.push_row(vec![
            n.to_string(),
            format!("{t:.3}"),
            format!("{:.4}", t / n as f64 * 1e4),
            format!("{rel:.3}"),
        ]);
        let setting = format!("n = {n}");
        report.record(DATASET, METHOD_OKMF, &setting, METRIC_TIME, Some(t), None);
        report.record(
            DATASET,
            METHOD_OKMF,
            setting,
            "time/n relative to smallest n",
            Some(rel),
            None,
        );
    }
    let mut kkm_table = Table::new(
        "Kernel k-means (RBF, 1 restart) fit time against n",
        vec![
            "n".into(),
            "fit time (s)".into(),
            "time / n² relative to smallest n".into(),
        ],
    );
    let (kn0, kt0) = m.kkm_times.first().copied().unwrap_or((1, 1.0));
    for &(n, t) in &m.kkm_times {
        let rel = (t / (n as f64).powi(2)) / (kt0 / (kn0 as f64).powi(2));
        kkm_table.push_row(vec![n.to_string(), format!("{t:.3}"), format!("{rel:.3}")]);
        report.record(
            DATASET,
            METHOD_KKM,
            format!("n = {n}"),
            METRIC_TIME,
            Some(t),
            None,
        );
    }
    [time_table, kkm_table]
}

/// The loss table, with its records.
fn loss_table(report: &mut Report, m: &Measurements) -> Table {
    let mut table = Table::new(
        format!("OKMF-R-RBF progressive loss per epoch (n = {LOSS_ROWS})"),
        vec![
            "epoch".into(),
            "loss (W from kernel k-means on the budget)".into(),
            "loss (random W)".into(),
            "seconds since start".into(),
        ],
    );
    let [kmeans, random] = &m.epochs;
    for (e, er) in kmeans.iter().zip(random) {
        table.push_row(vec![
            e.epoch.to_string(),
            format!("{:.5}", e.loss),
            format!("{:.5}", er.loss),
            format!("{:.2}", e.seconds),
        ]);
        for ((method, _), v) in LOSS_CURVES.iter().zip([e.loss, er.loss]) {
            report.record(
                DATASET,
                *method,
                format!("epoch {}", e.epoch),
                METRIC_LOSS,
                Some(v),
                None,
            );
        }
    }
    table
}

/// The number after `prefix` in a record's setting (`n = 20000`, `epoch 3`).
fn setting_number(r: &Record, prefix: &str) -> Result<f64, ExperimentError> {
    r.setting
        .strip_prefix(prefix)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| {
            ExperimentError::Failed(format!(
                "okmf-scaling record {:?}: setting {:?} is not `{prefix}N`",
                r.method, r.setting
            ))
        })
}

/// The (x, ours) points of the records of `method` and `metric`, x read from the setting.
fn curve(
    records: &[Record],
    method: &str,
    metric: &str,
    prefix: &str,
) -> Result<Vec<(f64, f64)>, ExperimentError> {
    let mut points = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.method == method && r.metric == metric)
    {
        if let Some(v) = r.ours {
            points.push((setting_number(r, prefix)?, v));
        }
    }
    Ok(points)
}

impl Experiment for OkmfScaling {
    fn name(&self) -> &'static str {
        "okmf-scaling"
    }

    fn description(&self) -> &'static str {
        "OKMF paper Figure 1: fit time against n (linear for OKMF) and loss against epochs"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(19, 6)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let m = measure(ctx)?;
        let mut report = Report::new(
            self.name(),
            "OKMF Figure 1: fit time against n, loss against epochs",
        );
        let [time_table, kkm_table] = timing_tables(&mut report, &m);
        let loss = loss_table(&mut report, &m);
        report.tables = vec![time_table, kkm_table, loss];
        let spread = match (m.okmf_times.first(), m.okmf_times.last()) {
            (Some(&(n0, t0)), Some(&(n, t))) => (t / n as f64) / (t0 / n0 as f64),
            _ => 1.0,
        };
        report.note(format!("data: {}; RBF γ = 1/d = {:.4}", m.source, m.gamma));
        report.note(format!(
            "OKMF: budget {BUDGET} random rows, r = {K}, {TIMED_EPOCHS} epochs per timed fit, other \
             settings the OkmfParams defaults; time/n at the largest n is {spread:.2}× that at the \
             smallest (linear scaling gives 1; the fixed cost of budget, K_B and initialisation \
             weighs most at small n)"
        ));
        report.note(
            "the paper's Figure 1 plots time and loss curves; it prints no numbers to compare",
        );
        for (suffix, chart) in self.figures(&report.records)? {
            report.figure(suffix, &chart)?;
        }
        Ok(report)
    }

    /// `time`: fit time against n, log–log, OKMF and kernel k-means; `loss-kmeans-init` and
    /// `loss-random-init`: the progressive loss against the epoch, one chart per
    /// initialisation so that each has its own y range. A chart whose records are absent is
    /// left out.
    fn figures(
        &self,
        records: &[Record],
    ) -> Result<Vec<(String, gimc_plot::LineChart)>, ExperimentError> {
        let mut charts = Vec::new();
        let mut time = gimc_plot::LineChart::new(
            "OKMF Figure 1: fit time against n",
            "n (rows)",
            "fit time (s)",
        );
        (time.log_x, time.log_y) = (true, true);
        for (method, name) in [
            (
                METHOD_OKMF,
                format!("{METHOD_OKMF} ({TIMED_EPOCHS} epochs)"),
            ),
            (METHOD_KKM, format!("{METHOD_KKM} (1 restart)")),
        ] {
            let points = curve(records, method, METRIC_TIME, "n = ")?;
            if !points.is_empty() {
                time = time.with_series(name, points);
            }
        }
        if !time.series.is_empty() {
            charts.push(("time".to_owned(), time));
        }
        for (method, suffix) in LOSS_CURVES {
            let points = curve(records, method, METRIC_LOSS, "epoch ")?;
            if points.is_empty() {
                continue;
            }
            let title = format!("OKMF loss against epochs (n = {LOSS_ROWS}): {method}");
            let chart = gimc_plot::LineChart::new(title, "epoch", "progressive loss")
                .with_series(method, points);
            charts.push((suffix.to_owned(), chart));
        }
        Ok(charts)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn measurements() -> Measurements {
        let e = |epoch, loss| OkmfEpoch {
            epoch,
            loss,
            seconds: 1.0,
        };
        Measurements {
            source: "test".into(),
            gamma: 0.02,
            okmf_times: vec![(10_000, 1.0), (20_000, 2.1)],
            kkm_times: vec![(1000, 0.1), (2000, 0.4)],
            epochs: [
                vec![e(1, 0.43084), e(2, 0.43071), e(3, 0.43064)],
                vec![e(1, 0.50224), e(2, 0.48300), e(3, 0.47661)],
            ],
        }
    }

    #[test]
    fn figures_are_drawn_from_the_records() {
        let m = measurements();
        let mut report = Report::new("okmf-scaling", "t");
        timing_tables(&mut report, &m);
        loss_table(&mut report, &m);
        let charts = OkmfScaling.figures(&report.records).unwrap();
        let suffixes: Vec<&str> = charts.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(suffixes, ["time", "loss-kmeans-init", "loss-random-init"]);
        let time = &charts[0].1;
        assert!(time.log_x && time.log_y);
        assert_eq!(time.series[0].points, [(10_000.0, 1.0), (20_000.0, 2.1)]);
        assert_eq!(time.series[1].points, [(1000.0, 0.1), (2000.0, 0.4)]);
        // each loss curve alone on its chart, so its own movement fills the y range
        assert_eq!(
            charts[1].1.series[0].points,
            [(1.0, 0.43084), (2.0, 0.43071), (3.0, 0.43064)]
        );
        assert_eq!(charts[2].1.series.len(), 1);
        // drawn, each loss curve spans most of its plot's height (the plot area is 324 px
        // high), however small its movement against the other's level
        for (suffix, chart) in &charts[1..] {
            let svg = chart.to_svg().unwrap();
            let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
            let ys: Vec<f64> = line
                .split("points=\"")
                .nth(1)
                .unwrap()
                .trim_end_matches("\"/>")
                .split(' ')
                .map(|p| p.split_once(',').unwrap().1.parse().unwrap())
                .collect();
            let span = ys.iter().fold(f64::MIN, |a, &b| a.max(b))
                - ys.iter().fold(f64::MAX, |a, &b| a.min(b));
            assert!(span > 0.8 * 324.0, "{suffix}: the curve spans {span} px");
        }
        // no records, no charts; a malformed setting is an error
        assert!(OkmfScaling.figures(&[]).unwrap().is_empty());
        report.records[0].setting = "n is ten thousand".into();
        assert!(OkmfScaling.figures(&report.records).is_err());
    }
}
