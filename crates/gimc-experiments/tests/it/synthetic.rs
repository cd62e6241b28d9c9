//! The synthetic experiments (`gimc-fig1`, `imc-sample-complexity`, `pu-imc`) in their quick
//! form show the shapes the papers report, with every published value null.

use gimc_experiments::experiments::gimc_fig1::{self, GimcFig1};
use gimc_experiments::experiments::imc_sample_complexity::{
    self, ImcSampleComplexity, PhaseConfig, PhaseSolver, Sweep, run_phase,
};
use gimc_experiments::experiments::pu_imc::{self, PuImc};
use gimc_experiments::{Context, Experiment, Report};

use crate::common::{ours, quick_context};

fn ctx(tag: &str) -> Context {
    quick_context(&format!("gimc-exp-{tag}"), 2016, None)
}

/// Our value of the record (dataset, method, setting, metric).
fn ours_on(report: &Report, dataset: &str, method: &str, setting: &str, metric: &str) -> f64 {
    report
        .records
        .iter()
        .find(|r| {
            r.dataset == dataset && r.method == method && r.setting == setting && r.metric == metric
        })
        .and_then(|r| r.ours)
        .unwrap_or_else(|| panic!("no record {dataset} / {method} / {setting} / {metric}"))
}

#[test]
fn gimc_fig1_quick_shapes_on_both_panels() {
    let report = GimcFig1.run(&ctx("fig1")).unwrap();
    assert!(report.records.iter().all(|r| r.published.is_none()));
    let (bilinear, tanh) = (gimc_fig1::DATASET, gimc_fig1::DATASET_TANH);
    for &f in &gimc_fig1::FRACTIONS {
        let s = gimc_fig1::fraction_label(f);
        let err = |set: &str, m: &str| ours_on(&report, set, m, &s, gimc_fig1::METRIC);
        let (mc, imc) = (err(bilinear, "MC"), err(bilinear, "IMC"));
        // (a): the raw features are the true model, so IMC beats MC everywhere
        assert!(imc < mc, "(a) {s}: IMC {imc} not below MC {mc}");
        assert!(imc < 0.9 && mc <= 1.05, "(a) {s}: {mc} {imc}");
        // learning the Fourier maps lowers the error of the IMC-RFF start once a tenth of the
        // entries is observed (at 5 % validation may keep the start), on both panels
        if f >= 0.1 {
            for set in [bilinear, tanh] {
                let (rff, lff) = (err(set, "IMC-RFF"), err(set, "GIMC-LFF"));
                assert!(
                    lff < rff,
                    "{set} {s}: GIMC-LFF {lff} not below IMC-RFF {rff}"
                );
            }
        }
        // GIMC-LFF's iteration 0 is IMC-RFF's fit, and validation only moves away from it
        // when the held-out error drops: it is never far above IMC-RFF
        for set in [bilinear, tanh] {
            let (rff, lff) = (err(set, "IMC-RFF"), err(set, "GIMC-LFF"));
            assert!(
                lff < rff + 0.02,
                "{set} {s}: GIMC-LFF {lff} vs IMC-RFF {rff}"
            );
        }
    }
    // more observations help IMC; on (b) A has rank 20 exactly, so a rank-20 fit can reach the
    // noise level (relative error ≈ √(0.1/50) ≈ 0.045), yet the linear model stalls ten times
    // higher because A is not bilinear in X, Y
    let first = gimc_fig1::fraction_label(gimc_fig1::FRACTIONS[0]);
    let last = gimc_fig1::fraction_label(gimc_fig1::FRACTIONS[5]);
    let imc = |set: &str, s: &str| ours_on(&report, set, "IMC", s, gimc_fig1::METRIC);
    assert!(imc(bilinear, &last) < imc(bilinear, &first));
    assert!(imc(tanh, &last) > 0.45, "(b) IMC {}", imc(tanh, &last));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("Shape checks (a): IMC below MC at every observed fraction: yes"))
    );
    // the figures redrawn from the records (as `gimc-experiments render` does from the saved
    // JSON, here after a round trip through it) are byte for byte those of the run
    assert_eq!(
        report
            .figures
            .iter()
            .map(|f| f.0.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    let saved: Vec<gimc_experiments::Record> =
        serde_json::from_str(&report.to_json().unwrap()).unwrap();
    let out = ctx("fig1-render").out_dir;
    let paths = gimc_experiments::render(&saved, &out).unwrap();
    assert_eq!(paths.len(), 2);
    for ((suffix, svg), path) in report.figures.iter().zip(&paths) {
        assert!(
            path.ends_with(format!("gimc-fig1-{suffix}.svg")),
            "{path:?}"
        );
        assert_eq!(&std::fs::read_to_string(path).unwrap(), svg);
        assert!(svg.contains("GIMC-LFF") && svg.contains("IMC-RFF"));
    }
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn render_redraws_gimc_fig2_from_records_and_refuses_what_it_cannot_draw() {
    use gimc_experiments::Record;
    let rec = |set: &str, method: &str, setting: &str, p: f64| Record {
        experiment: "gimc-fig2".into(),
        dataset: set.into(),
        method: method.into(),
        setting: setting.into(),
        metric: "P@3".into(),
        ours: Some(p),
        published: None,
    };
    let mut records = Vec::new();
    for (set, base) in [("Bibtex", 20.0), ("Delicious", 50.0)] {
        for (k, m) in [50, 100, 200, 500, 1000].into_iter().enumerate() {
            for (j, method) in ["IMC-RFF", "GIMC-LFF"].into_iter().enumerate() {
                let p = base + 2.0 * k as f64 + 5.0 * j as f64;
                records.push(rec(
                    set,
                    method,
                    &format!("m={m} γ=0.002 λ=1 iterations=0"),
                    p,
                ));
            }
        }
        records.push(rec(set, "linear ridge", "λ=10", base + 9.0));
    }
    let out = ctx("fig2-render").out_dir;
    let paths = gimc_experiments::render(&records, &out).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["gimc-fig2-bibtex.svg", "gimc-fig2-delicious.svg"]);
    let svg = std::fs::read_to_string(&paths[0]).unwrap();
    assert!(svg.contains("Bibtex: P@3 against m") && svg.contains("linear ridge"));
    // the m axis is logarithmic, ticked at 50, 100, 200, 500, 1000
    for label in [">50<", ">100<", ">200<", ">500<", ">1000<"] {
        assert!(svg.contains(label), "no tick {label}");
    }
    assert!(!svg.contains("1e3"));
    // the flat line spans the curves' m range: two vertices, at the first and last m
    let flat = svg
        .lines()
        .filter(|l| l.starts_with("<polyline"))
        .nth(2)
        .unwrap();
    assert_eq!(flat.matches(',').count(), 2, "{flat}");
    // an experiment that draws nothing from records, or an unknown one, is an error
    let mut table = records[0].clone();
    table.experiment = "gimc-table2".into();
    assert!(gimc_experiments::render(&[table.clone()], &out).is_err());
    table.experiment = "no-such-experiment".into();
    assert!(gimc_experiments::render(&[table], &out).is_err());
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn imc_sample_complexity_quick_grows_with_d_and_is_flat_in_n() {
    let report = ImcSampleComplexity.run(&ctx("phase")).unwrap();
    assert!(report.records.iter().all(|r| r.published.is_none()));
    let needed = |n: usize, d: usize| {
        ours(
            &report,
            PhaseSolver::Als.name(),
            &format!("n = {n}, d = {d}"),
            imc_sample_complexity::METRIC_NEEDED,
        )
    };
    let config = PhaseConfig::new(true);
    let by_d: Vec<f64> = config
        .d_sweep
        .iter()
        .map(|&d| needed(config.n_fixed, d))
        .collect();
    assert!(by_d.windows(2).all(|w| w[0] <= w[1]), "{by_d:?}");
    assert!(by_d[by_d.len() - 1] > by_d[0], "{by_d:?}");
    let by_n: Vec<f64> = config
        .n_sweep
        .iter()
        .map(|&n| needed(n, config.d_fixed))
        .collect();
    let (lo, hi) = by_n
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(hi / lo <= 1.5, "{by_n:?}");
    // below the degrees of freedom k(2d − k) recovery is impossible: every trial fails
    let d = config.d_fixed;
    let dof = imc_sample_complexity::degrees_of_freedom(d, config.rank);
    for &s in config.samples.iter().filter(|&&s| s < dof) {
        let rate = ours(
            &report,
            PhaseSolver::Als.name(),
            &format!("n = {}, d = {d}, |Ω| = {s}", config.n_fixed),
            imc_sample_complexity::METRIC_FAILURES,
        );
        assert_eq!(rate, 1.0, "|Ω| = {s} < dof = {dof}");
    }
}

#[test]
fn imc_sample_complexity_rows_share_data_across_sweeps() {
    // the cell (n = 1000, d = 50) appears in both sweeps and must give identical failures
    let config = PhaseConfig {
        d_sweep: vec![50],
        n_sweep: vec![1000],
        samples: vec![300, 900],
        trials: 1,
        ..PhaseConfig::new(true)
    };
    let rows = run_phase(&config, 7).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].sweep, Sweep::Dim);
    assert_eq!(rows[1].sweep, Sweep::Rows);
    assert_eq!(rows[0].failures, rows[1].failures);
    assert_eq!(rows[0].median_error, rows[1].median_error);
    // 300 < k(2d − k) = 475 fails; 900 ≈ 1.9 dof recovers
    assert_eq!(rows[0].failures, vec![1, 0]);
}

#[test]
fn pu_imc_quick_beats_plain_imc() {
    let report = PuImc.run(&ctx("pu")).unwrap();
    assert!(report.records.iter().all(|r| r.published.is_none()));
    for &rho in &pu_imc::PuConfig::new(true).rhos {
        let s = pu_imc::rho_label(rho);
        for metric in [pu_imc::METRIC_THRESHOLDED, pu_imc::METRIC_REAL] {
            let imc = ours(&report, "IMC", &s, metric);
            let pu = ours(&report, "PU-IMC", &s, metric);
            assert!(pu < imc, "{s} {metric}: PU-IMC {pu} vs IMC {imc}");
        }
        let imc = ours(&report, "IMC", &s, pu_imc::METRIC_AUC);
        let pu = ours(&report, "PU-IMC", &s, pu_imc::METRIC_AUC);
        assert!(pu > imc && pu > 0.95, "{s} AUC: PU-IMC {pu} vs IMC {imc}");
        // PU-IMC recovers T: fewer wrong entries than there are positives
        assert!(ours(&report, "PU-IMC", &s, pu_imc::METRIC_THRESHOLDED) < 1.0);
    }
}

#[test]
fn synthetic_experiments_are_registered_in_order() {
    let names = gimc_experiments::experiment_names();
    let pos = |n: &str| names.iter().position(|&x| x == n).unwrap();
    assert!(pos("gimc-fig1") < pos("imc-sample-complexity"));
    assert!(pos("imc-sample-complexity") < pos("pu-imc"));
}
