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
//! uniformly at random (the authors' code). Besides the report files, the run writes `<out>/okmf-scaling.svg`
//! (time against n on log–log axes, and loss against epoch).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use gimc_cluster::{
    KernelKMeansParams, OkmfEpoch, OkmfInit, OkmfParams, fit_kernel_kmeans, fit_okmf,
    fit_okmf_observed,
};
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};
use rand::Rng;

use super::okmf_table2::{BUDGET, load_covtype, rbf_gamma};
use crate::report::{Report, Table};
use crate::{Context, Experiment, ExperimentError};

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
    let d = gimc_data::synth::blobs(n, 54, K, 1.0, rng)?;
    Ok((
        d.features,
        "blobs (covtype missing): 7 centres uniform in [−10, 10]^54, noise std 1".to_owned(),
    ))
}

fn first_rows(x: &FeatureMatrix, n: usize) -> Result<FeatureMatrix, ExperimentError> {
    let rows: Vec<usize> = (0..n.min(x.nrows())).collect();
    Ok(x.select_rows(&rows)?)
}

impl Experiment for OkmfScaling {
    fn name(&self) -> &'static str {
        "okmf-scaling"
    }

    fn description(&self) -> &'static str {
        "OKMF paper Figure 1: fit time against n (linear for OKMF) and loss against epochs"
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
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
        let kernel = Kernel::Rbf {
            gamma: rbf_gamma(&x_all),
        };
        let mut report = Report::new(
            self.name(),
            "OKMF Figure 1: fit time against n, loss against epochs",
        );

        // OKMF timing
        let params = OkmfParams::new(K, kernel)
            .with_budget_size(BUDGET)
            .with_epochs(TIMED_EPOCHS);
        let timed = params.check()?;
        let mut okmf_times = Vec::new();
        // warm-up (page faults, thread pool)
        let warm = first_rows(&x_all, sizes.first().copied().unwrap_or(1000))?;
        fit_okmf(&warm, &timed, &mut child(&base, 2))?;
        for (si, &n) in sizes.iter().enumerate() {
            let x = first_rows(&x_all, n)?;
            let mut best = f64::INFINITY;
            for rep in 0..reps {
                let mut rng = child(&base, 100 + (si * 10 + rep) as u64);
                let start = Instant::now();
                fit_okmf(&x, &timed, &mut rng)?;
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
        // loss curve
        let x_loss = first_rows(&x_all, LOSS_ROWS)?;
        let mut epochs: Vec<OkmfEpoch> = Vec::new();
        fit_okmf_observed(
            &x_loss,
            &params.clone().with_epochs(LOSS_EPOCHS).check()?,
            &mut child(&base, 900),
            &mut |e| epochs.push(*e),
        )?;
        let mut epochs_random: Vec<OkmfEpoch> = Vec::new();
        fit_okmf_observed(
            &x_loss,
            &params
                .clone()
                .with_epochs(LOSS_EPOCHS)
                .with_init(OkmfInit::Random)
                .check()?,
            &mut child(&base, 901),
            &mut |e| epochs_random.push(*e),
        )?;

        // tables and records
        let (n0, t0) = okmf_times.first().copied().unwrap_or((1, 1.0));
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
        for &(n, t) in &okmf_times {
            let rel = (t / n as f64) / per_row0;
            time_table.push_row(vec![
                n.to_string(),
                format!("{t:.3}"),
                format!("{:.4}", t / n as f64 * 1e4),
                format!("{rel:.3}"),
            ]);
            report.record(
                "covtype rows",
                "OKMF-R-RBF",
                format!("n = {n}"),
                "fit time (s)",
                Some(t),
                None,
            );
            report.record(
                "covtype rows",
                "OKMF-R-RBF",
                format!("n = {n}"),
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
        let (kn0, kt0) = kkm_times.first().copied().unwrap_or((1, 1.0));
        for &(n, t) in &kkm_times {
            let rel = (t / (n as f64).powi(2)) / (kt0 / (kn0 as f64).powi(2));
            kkm_table.push_row(vec![n.to_string(), format!("{t:.3}"), format!("{rel:.3}")]);
            report.record(
                "covtype rows",
                "kernel k-means RBF",
                format!("n = {n}"),
                "fit time (s)",
                Some(t),
                None,
            );
        }
        let mut loss_table = Table::new(
            format!("OKMF-R-RBF progressive loss per epoch (n = {LOSS_ROWS})"),
            vec![
                "epoch".into(),
                "loss (W from kernel k-means on the budget)".into(),
                "loss (random W)".into(),
                "seconds since start".into(),
            ],
        );
        for (e, er) in epochs.iter().zip(&epochs_random) {
            loss_table.push_row(vec![
                e.epoch.to_string(),
                format!("{:.5}", e.loss),
                format!("{:.5}", er.loss),
                format!("{:.2}", e.seconds),
            ]);
            for (method, v) in [
                ("OKMF-R-RBF (kernel k-means init)", e.loss),
                ("OKMF-R-RBF (random init)", er.loss),
            ] {
                report.record(
                    "covtype rows",
                    method,
                    format!("epoch {}", e.epoch),
                    "loss",
                    Some(v),
                    None,
                );
            }
        }
        report.tables = vec![time_table, kkm_table, loss_table];
        let spread = okmf_times
            .last()
            .map(|&(n, t)| (t / n as f64) / per_row0)
            .unwrap_or(1.0);
        report.note(format!(
            "data: {source}; RBF γ = 1/d = {:.4}",
            rbf_gamma(&x_all)
        ));
        report.note(format!(
            "OKMF: budget {BUDGET} random rows, r = {K}, {TIMED_EPOCHS} epochs per timed fit, other \
             settings the OkmfParams defaults; time/n at the largest n is {spread:.2}× that at the \
             smallest (linear scaling gives 1; the fixed cost of budget, K_B and initialisation \
             weighs most at small n)"
        ));
        report.note(
            "the paper's Figure 1 plots time and loss curves; it prints no numbers to compare",
        );
        let svg = render_svg(&okmf_times, &kkm_times, &epochs, &epochs_random);
        std::fs::create_dir_all(&ctx.out_dir).map_err(ExperimentError::io(&ctx.out_dir))?;
        let path = ctx.out_dir.join("okmf-scaling.svg");
        gimc_data::output::write_file(&path, svg.as_bytes(), &[])?;
        report.note(format!("figure: {}", path.display()));
        Ok(report)
    }
}

/// One data series of a plot: name, colour, points.
type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

/// A panel of a line plot at (`ox`, `oy`) of size `w` × `h`, optional log axes.
#[allow(clippy::too_many_arguments)]
fn panel(
    out: &mut String,
    (ox, oy, w, h): (f64, f64, f64, f64),
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series<'_>],
    log_x: bool,
    log_y: bool,
) {
    let tx = |v: f64| if log_x { v.max(1e-300).log10() } else { v };
    let ty = |v: f64| if log_y { v.max(1e-300).log10() } else { v };
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.2.iter().map(|&(x, y)| (tx(x), ty(y))))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if pts.is_empty() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.08).max(1e-9);
    (y0, y1) = (y0 - pad, y1 + pad);
    let (l, r, t, b) = (ox + 60.0, ox + w - 10.0, oy + 30.0, oy + h - 45.0);
    let px = |x: f64| l + (x - x0) / (x1 - x0) * (r - l);
    let py = |y: f64| b - (y - y0) / (y1 - y0) * (b - t);
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="14">{title}</text>"#,
        (l + r) / 2.0,
        oy + 18.0
    );
    let _ = writeln!(
        out,
        r#"<rect x="{l:.1}" y="{t:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="black"/>"#,
        r - l,
        b - t
    );
    let fmt_tick = |v: f64, log: bool| {
        let v = if log { 10f64.powf(v) } else { v };
        if v.abs() >= 1000.0 {
            format!("{:.0}k", v / 1000.0)
        } else if v.abs() >= 10.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.3}")
        }
    };
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let (xv, yv) = (x0 + f * (x1 - x0), y0 + f * (y1 - y0));
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"#,
            px(xv),
            b + 15.0,
            fmt_tick(xv, log_x)
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"#,
            l - 4.0,
            py(yv) + 4.0,
            fmt_tick(yv, log_y)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{xlabel}</text>"#,
        (l + r) / 2.0,
        b + 35.0
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12" transform="rotate(-90 {:.1} {:.1})">{ylabel}</text>"#,
        ox + 14.0,
        (t + b) / 2.0,
        ox + 14.0,
        (t + b) / 2.0
    );
    for (si, (name, colour, data)) in series.iter().enumerate() {
        let coords: Vec<String> = data
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(tx(x)), py(ty(y))))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            coords.join(" ")
        );
        for c in &coords {
            let (cx, cy) = c.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(
                out,
                r#"<circle cx="{cx}" cy="{cy}" r="3" fill="{colour}"/>"#
            );
        }
        let ly = t + 14.0 + 14.0 * si as f64;
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{ly:.1}" font-size="11" fill="{colour}">{name}</text>"#,
            l + 8.0
        );
    }
}

/// The figure: time against n (log–log) and loss against epoch.
fn render_svg(
    okmf: &[(usize, f64)],
    kkm: &[(usize, f64)],
    epochs: &[OkmfEpoch],
    epochs_random: &[OkmfEpoch],
) -> String {
    let mut out = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="840" height="340" font-family="sans-serif">
<rect width="840" height="340" fill="white"/>
"#,
    );
    let to_f = |v: &[(usize, f64)]| v.iter().map(|&(n, t)| (n as f64, t)).collect::<Vec<_>>();
    panel(
        &mut out,
        (0.0, 0.0, 420.0, 340.0),
        "Fit time against n",
        "n (rows, log scale)",
        "seconds (log scale)",
        &[
            ("OKMF-R-RBF (3 epochs)", "#1f77b4", to_f(okmf)),
            ("kernel k-means RBF", "#d62728", to_f(kkm)),
        ],
        true,
        true,
    );
    let curve = |v: &[OkmfEpoch]| v.iter().map(|e| (e.epoch as f64, e.loss)).collect();
    panel(
        &mut out,
        (420.0, 0.0, 420.0, 340.0),
        "OKMF loss against epochs",
        "epoch",
        "progressive loss",
        &[
            ("W from kernel k-means on B", "#1f77b4", curve(epochs)),
            ("random W", "#2ca02c", curve(epochs_random)),
        ],
        false,
        false,
    );
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_well_formed_enough() {
        let e = |epoch, loss| OkmfEpoch {
            epoch,
            loss,
            step_size: 0.1,
            seconds: 1.0,
        };
        let svg = render_svg(
            &[(10_000, 1.0), (20_000, 2.1)],
            &[(1000, 0.1), (2000, 0.4)],
            &[e(1, 0.5), e(2, 0.4)],
            &[e(1, 0.9), e(2, 0.6)],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert_eq!(svg.matches("<circle").count(), 8);
    }
}
