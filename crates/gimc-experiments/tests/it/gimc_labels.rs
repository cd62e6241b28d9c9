//! `gimc-table2`: registration, the published cells, and the quick form on Bibtex (m = 100,
//! ≤ 4 outer iterations, with a γ × λ grid and a patience on GIMC-LFF): learned LFF above its
//! IMC-RFF start on test P@1, every setting's curve reported, precisions in range and ordered
//! P@1 ≥ P@3 ≥ P@5, the validation pick one of the three GIMC variants.

use std::path::PathBuf;

use gimc_experiments::experiment_names;
use gimc_experiments::experiments::gimc_table2::{
    GimcGrid, RowGrid, SetConfig, load_train_test, published_rows, run_set,
};

/// Training rows the Bibtex tests keep (the first ones), to stay within the test-time budget.
const QUICK_ROWS: usize = 1500;

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(
        std::env::var_os("GIMC_DATA").unwrap_or_else(|| "/work/shared/datasets".into()),
    );
    if dir.join("bibtex").exists() {
        Some(dir)
    } else {
        assert!(
            std::env::var_os("GIMC_REQUIRE_DATA").is_none(),
            "GIMC_REQUIRE_DATA set but bibtex is missing"
        );
        None
    }
}

#[test]
fn table2_is_registered_with_published_rows() {
    assert!(experiment_names().contains(&"gimc-table2"));
    let b = published_rows("Bibtex");
    assert_eq!(b[0], ("GIMC (paper)", [65.85, 41.17, 30.01]));
    assert_eq!(
        published_rows("Delicious")[1],
        ("SLEEC", [67.59, 61.38, 56.56])
    );
    assert!(published_rows("Nothing").is_empty());
}

#[test]
fn quick_table2_learning_beats_its_start_on_bibtex() {
    let Some(dir) = data_dir() else { return };
    // the quick form with raw and L2 rows, a γ × λ grid and a patience on GIMC-LFF, as the
    // full table runs
    let mut cfg = SetConfig::quick(7);
    cfg.gimc_lff = GimcGrid {
        ms: vec![100],
        rows: vec![RowGrid::raw(&[0.002, 0.008]), RowGrid::l2(&[0.14])],
        lambdas: vec![0.3, 1.0],
    };
    assert_eq!(cfg.gimc_lff.len(), 6);
    assert_eq!(
        cfg.gimc_lff.describe(),
        "m {100} × (raw rows γ {0.002, 0.008}; L2 rows γ {0.14}) × λ {0.3, 1}"
    );
    cfg.patience = Some(2);
    let (train, test) = load_train_test(&dir, cfg.set.key).unwrap();
    let train = train
        .select_rows(&(0..QUICK_ROWS).collect::<Vec<_>>())
        .unwrap();
    let rows = run_set(&cfg, &train, &test).unwrap();
    let get = |name: &str| rows.iter().find(|r| r.method == name).unwrap();
    for r in &rows {
        let [p1, p3, p5] = r.precision;
        assert!((0.0..=100.0).contains(&p1), "{}: {p1}", r.method);
        assert!(p1 >= p3 && p3 >= p5, "{}: {:?}", r.method, r.precision);
        assert!(p5 > 5.0, "{}: P@5 {p5} no better than chance", r.method);
    }
    let (rff, lff) = (get("IMC-RFF"), get("GIMC-LFF"));
    assert!(
        lff.precision[0] > rff.precision[0] + 1.0,
        "learned {:?} vs start {:?}",
        lff.precision,
        rff.precision
    );
    // every setting's validation curve is reported, named by rows, γ and λ, and the chosen
    // setting is one of the grid's
    assert_eq!(lff.setting.matches(" | ").count(), 5, "{}", lff.setting);
    for name in [
        "rows=raw m=100 γ=0.002 λ=0.3:",
        "rows=raw m=100 γ=0.008 λ=1:",
        "rows=L2 m=100 γ=0.14 λ=1:",
    ] {
        assert!(lff.setting.contains(name), "{}", lff.setting);
    }
    assert!(
        [
            "rows=raw m=100 γ=0.002 λ=",
            "rows=raw m=100 γ=0.008 λ=",
            "rows=L2 m=100 γ=0.14 λ="
        ]
        .iter()
        .any(|g| lff.setting.starts_with(g)),
        "{}",
        lff.setting
    );
    // GIMC-LNYS searches raw rows only, so the combined model is the raw rows' pair
    assert!(get("GIMC-LNYS").setting.starts_with("m=100 "));
    assert!(
        get("combined LFF+LNYS")
            .setting
            .starts_with("rows=raw LFF(m=100, "),
        "{}",
        get("combined LFF+LNYS").setting
    );
    let pick = get("GIMC (validation pick)");
    let variants = ["GIMC-LFF", "GIMC-LNYS", "combined LFF+LNYS"];
    assert!(variants.iter().any(|v| pick.setting.starts_with(v)));
    let best_val = variants
        .iter()
        .map(|v| get(v).validation)
        .fold(f64::MIN, f64::max);
    assert_eq!(pick.validation, best_val);
    assert!(get("linear ridge").precision[0] > 40.0);
}

#[test]
fn quick_fig2_curves_and_svg_on_bibtex() {
    use gimc_experiments::experiments::gimc_fig2::{CURVES, Fig2Config, render_svg, run_set};
    let Some(dir) = data_dir() else { return };
    assert!(experiment_names().contains(&"gimc-fig2"));
    let cfg = Fig2Config::quick(3);
    let (train, test) = load_train_test(&dir, cfg.set.key).unwrap();
    let train = train
        .select_rows(&(0..QUICK_ROWS).collect::<Vec<_>>())
        .unwrap();
    let r = run_set(&cfg, &train, &test).unwrap();
    assert_eq!(r.curves.len(), CURVES.len());
    for c in &r.curves {
        assert_eq!(c.len(), cfg.ms.len());
        assert!(c.iter().all(|p| (1.0..=100.0).contains(&p.1)), "{c:?}");
    }
    // GIMC-LFF (index 2) above its IMC-RFF start (index 0) at every m.
    for (rff, lff) in r.curves[0].iter().zip(&r.curves[2]) {
        assert_eq!(rff.0, lff.0);
        assert_eq!(rff.2, 0, "the IMC points are unlearned");
        assert!(lff.1 > rff.1, "m={}: LFF {} vs RFF {}", lff.0, lff.1, rff.1);
    }
    assert!(
        r.ridge.0 > 20.0 && r.linear_imc.0 > 10.0,
        "{:?} {:?}",
        r.ridge,
        r.linear_imc
    );
    let svg = render_svg(&cfg, &r).unwrap();
    assert!(svg.trim_start().starts_with("<svg") || svg.trim_start().starts_with("<?xml"));
    assert!(svg.trim_end().ends_with("</svg>"));
    for name in CURVES.iter().chain(&["linear ridge", "linear IMC"]) {
        assert!(svg.contains(name), "legend lacks {name}");
    }
}

#[test]
fn quick_multiclass_on_segment() {
    use gimc_experiments::experiments::gimc_multiclass::{MulticlassConfig, load_set, run_set};
    let Some(dir) = data_dir() else { return };
    if !dir.join("segment").exists() {
        return;
    }
    assert!(experiment_names().contains(&"gimc-multiclass"));
    let (train, test, _) = load_set(&dir, "segment", 1).unwrap();
    assert_eq!((train.nrows(), test.nrows()), (1500, 810));
    let rows = run_set(&MulticlassConfig::quick(1), &train, &test).unwrap();
    assert_eq!(rows.len(), 5);
    for r in &rows {
        // 7 balanced classes: chance is about 14 %.
        assert!(
            r.accuracy > 75.0 && r.accuracy <= 100.0,
            "{}: {}",
            r.method,
            r.accuracy
        );
    }
}

#[test]
fn quick_test_oracle_walks_every_row_form() {
    use gimc_experiments::experiments::gimc_table2_extended::{TrainTest, test_oracle};
    let Some(dir) = data_dir() else { return };
    let mut cfg = SetConfig::quick(5);
    cfg.max_iter = 2;
    let (train, test) = load_train_test(&dir, cfg.set.key).unwrap();
    let train = train.select_rows(&(0..800).collect::<Vec<_>>()).unwrap();
    let grid = |rows: Vec<RowGrid>| GimcGrid {
        ms: vec![50],
        rows,
        lambdas: vec![1.0],
    };
    let raw = grid(vec![RowGrid::raw(&[0.002])]);
    let l2 = grid(vec![RowGrid::l2(&[0.14])]);
    let both = grid(vec![RowGrid::raw(&[0.002]), RowGrid::l2(&[0.14])]);
    let sets = TrainTest {
        train: &train,
        test: &test,
    };
    let oracle = |g: &GimcGrid| test_oracle(&cfg, sets, "lff", g).unwrap();
    let (o_raw, o_l2, o_both) = (oracle(&raw), oracle(&l2), oracle(&both));
    assert!(
        o_raw.setting.starts_with("rows=raw m=50 γ=0.002"),
        "{}",
        o_raw.setting
    );
    assert!(
        o_l2.setting.starts_with("rows=L2 m=50 γ=0.14"),
        "{}",
        o_l2.setting
    );
    // the oracle over both row forms is the better of the two, setting and numbers alike
    let best = if o_l2.precision[0] > o_raw.precision[0] {
        &o_l2
    } else {
        &o_raw
    };
    assert_eq!(o_both.precision, best.precision);
    assert_eq!(o_both.setting, best.setting);
    assert_ne!(o_raw.precision, o_l2.precision, "the row forms must differ");
}
