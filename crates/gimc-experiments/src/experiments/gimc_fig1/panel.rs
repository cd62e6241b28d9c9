//! The two panels: their tables, shape checks and figures.

use gimc_data::synth::Fig1Target;

use super::run::{Fig1Cell, Fig1Config};
use super::{DATASET, METRIC, METRIC_STD, RANK};
use crate::ExperimentError;
use crate::experiments::support::mean_std;
use crate::report::{Record, Report, Table};

/// Label of an observed fraction, e.g. `observed 5%`.
pub fn fraction_label(f: f64) -> String {
    format!("observed {:.0}%", 100.0 * f)
}

/// One panel of the figure: a toy target and how it is labelled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fig1Panel {
    /// Suffix of the panel's SVG (`gimc-fig1-<key>.svg`) and its label, `a` or `b`.
    pub key: &'static str,
    /// Dataset name in the records.
    pub dataset: &'static str,
    /// The toy target.
    pub target: Fig1Target,
}

/// Panel (b)'s hidden layer: the clean matrix has rank k = 20 (hidden = k) and every
/// pre-activation is N(0, 2²), so tanh is well into its saturating range.
pub const TANH_TARGET: Fig1Target = Fig1Target::Tanh {
    hidden: RANK,
    scale: 2.0,
};

/// The panels, in order: (a) DESIGN §4's toy as written, (b) the same sizes with the features
/// reaching A through a hidden tanh layer.
pub const PANELS: [Fig1Panel; 2] = [
    Fig1Panel {
        key: "a",
        dataset: DATASET,
        target: Fig1Target::Bilinear,
    },
    Fig1Panel {
        key: "b",
        dataset: DATASET_TANH,
        target: TANH_TARGET,
    },
];

/// Dataset name of panel (b).
pub const DATASET_TANH: &str = "toy A = c·tanh(XB)tanh(YC)ᵀ + N (200 × 200, d = 50, rank 20)";

/// Shape checks of one panel at one observed fraction.
#[derive(Debug, Clone, Copy)]
pub(super) struct ShapeCheck {
    pub(super) fraction: f64,
    pub(super) imc_below_mc: bool,
    /// GIMC-LFF's mean error against IMC-RFF's (`Equal` when validation kept the start).
    pub(super) lff_vs_rff: Option<std::cmp::Ordering>,
    pub(super) lff_lowest: bool,
}

/// Adds one panel's table, records and figure to `report`; returns its shape checks.
pub(super) fn report_panel(
    report: &mut Report,
    panel: &Fig1Panel,
    config: &Fig1Config,
    cells: &[Fig1Cell],
    methods: &[&'static str],
) -> Result<Vec<ShapeCheck>, ExperimentError> {
    let mut header = vec!["observed".to_owned()];
    header.extend(methods.iter().map(|m| format!("{m} (mean ± std)")));
    let mut table = Table::new(
        format!(
            "({}) {}: relative error over all entries, k = {RANK}, mean ± std over {} seeds",
            panel.key, panel.dataset, config.seeds
        ),
        header,
    );
    let mut checks = Vec::new();
    for &f in &config.fractions {
        let mut row = vec![format!("{:.0}%", 100.0 * f)];
        let mut means = Vec::new();
        for &m in methods {
            let errs: Vec<f64> = cells
                .iter()
                .filter(|c| c.method == m && c.fraction == f)
                .map(|c| c.test_error)
                .collect();
            let (mean, std) = mean_std(&errs);
            means.push(mean);
            row.push(format!("{mean:.4} ± {std:.4}"));
            report.record(
                panel.dataset,
                m,
                fraction_label(f),
                METRIC,
                Some(mean),
                None,
            );
            report.record(
                panel.dataset,
                m,
                fraction_label(f),
                METRIC_STD,
                Some(std),
                None,
            );
        }
        let of = |name: &str| methods.iter().position(|&m| m == name).map(|i| means[i]);
        let imc_below_mc = matches!((of("IMC"), of("MC")), (Some(a), Some(b)) if a < b);
        let lff = of("GIMC-LFF");
        checks.push(ShapeCheck {
            fraction: f,
            imc_below_mc,
            lff_vs_rff: lff.zip(of("IMC-RFF")).and_then(|(l, r)| l.partial_cmp(&r)),
            lff_lowest: lff.is_some_and(|l| means.iter().all(|&v| l <= v)),
        });
        table.push_row(row);
    }
    report.tables.push(table);
    // drawn from the records, as `gimc-experiments render` redraws it from the saved JSON
    report.figure(panel.key, &panel_chart(panel, &report.records)?)?;
    Ok(checks)
}

/// The figure of one panel from its records: per method (in order of appearance) the mean
/// relative error ([`METRIC`]) against the observed percentage, read back from
/// [`fraction_label`].
///
/// Errors: a record of the panel whose setting is not a fraction label.
pub fn panel_chart(
    panel: &Fig1Panel,
    records: &[Record],
) -> Result<gimc_plot::LineChart, ExperimentError> {
    let mut curves: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.dataset == panel.dataset && r.metric == METRIC)
    {
        let percent = r
            .setting
            .strip_prefix("observed ")
            .and_then(|s| s.strip_suffix('%'))
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| {
                ExperimentError::Failed(format!(
                    "gimc-fig1 record {:?}: setting {:?} is not `observed N%`",
                    r.method, r.setting
                ))
            })?;
        let i = match curves.iter().position(|(m, _)| *m == r.method) {
            Some(i) => i,
            None => {
                curves.push((&r.method, Vec::new()));
                curves.len() - 1
            }
        };
        if let Some(mean) = r.ours {
            curves[i].1.push((percent, mean));
        }
    }
    let mut chart = gimc_plot::LineChart::new(
        format!("GIMC Figure 1 ({}): {}", panel.key, panel.dataset),
        "observed entries (%)",
        "relative error ‖A − Â‖_{F} / ‖A‖_{F}",
    );
    for (m, curve) in curves {
        chart = chart.with_series(m, curve);
    }
    Ok(chart)
}

/// The fractions of `checks` where `pick` holds, as "5%, 10%".
pub(super) fn fractions_where(checks: &[ShapeCheck], pick: impl Fn(&ShapeCheck) -> bool) -> String {
    let list: Vec<String> = checks
        .iter()
        .filter(|c| pick(c))
        .map(|c| format!("{:.0}%", 100.0 * c.fraction))
        .collect();
    list.join(", ")
}

/// "yes", or the fractions where a check fails.
pub(super) fn check_summary(checks: &[ShapeCheck], pick: impl Fn(&ShapeCheck) -> bool) -> String {
    let failed = fractions_where(checks, |c| !pick(c));
    if failed.is_empty() {
        "yes".to_owned()
    } else {
        format!("NO (fails at {failed})")
    }
}

/// "yes", or where GIMC-LFF is level with IMC-RFF (validation kept the start) and where above.
pub(super) fn lff_summary(checks: &[ShapeCheck]) -> String {
    use std::cmp::Ordering::{Equal, Less};
    if checks.iter().all(|c| c.lff_vs_rff == Some(Less)) {
        return "yes".to_owned();
    }
    let equal = fractions_where(checks, |c| c.lff_vs_rff == Some(Equal));
    let above = fractions_where(checks, |c| !matches!(c.lff_vs_rff, Some(Less | Equal)));
    let mut parts = Vec::new();
    if !equal.is_empty() {
        parts.push(format!(
            "level at {equal}, where validation kept the IMC-RFF start"
        ));
    }
    if !above.is_empty() {
        parts.push(format!("above at {above}"));
    }
    format!("NO ({})", parts.join("; "))
}
