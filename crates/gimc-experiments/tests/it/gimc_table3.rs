//! `gimc-table3`: registration, the published numbers, a missing data directory, every method
//! on planted data, and the quick form on the real sets where `GIMC_DATA` holds them. (The full
//! form takes long; it runs through `reproduce`, not here.)

use std::path::PathBuf;

use gimc_experiments::Context;
use gimc_experiments::experiment_names;
use gimc_experiments::experiments::gimc_table3::{
    ClusterSet, ConstrainedSet, DATASETS, METHODS, METRIC_ERROR, Method, Table3Config, load_set,
    run_method, run_table3,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;
use gimc_metrics::pairwise_clustering_error;

#[test]
fn registered() {
    assert!(experiment_names().contains(&"gimc-table3"));
}

#[test]
fn published_numbers_sit_in_the_right_cells() {
    assert_eq!(DATASETS, ["Mushroom", "Segment", "Covtype-sub"]);
    // rows: 1n, 5n, 10n, 15n, 20n
    assert_eq!(Method::KMeans.published(0, 0), Some(0.1897));
    assert_eq!(Method::Mccc.published(0, 1), Some(0.0010));
    assert_eq!(Method::ImcRff.published(0, 0), Some(0.0034));
    assert_eq!(Method::GimcLff.published(1, 4), Some(0.0380));
    assert_eq!(Method::Mccc.published(1, 4), Some(0.0837));
    assert_eq!(Method::ImcRff.published(1, 2), Some(0.0650));
    assert_eq!(Method::GimcLff.published(1, 0), Some(0.0724));
    assert_eq!(Method::KMeans.published(2, 3), Some(0.2203));
    assert_eq!(Method::GimcLff.published(2, 4), Some(0.1078));
    assert_eq!(Method::GimcLnys.published(1, 4), None);
    assert_eq!(Method::GimcLff.published(3, 0), None);
    assert_eq!(Method::GimcLff.published(1, 5), None);
    assert_eq!(METHODS.len(), 5);
}

#[test]
fn missing_data_gives_empty_cells_and_a_note() {
    let dir = PathBuf::from("/nonexistent-gimc-data-dir");
    assert!(load_set(&dir, 0, &mut seeded(1)).unwrap().is_none());
    assert!(load_set(&dir, 2, &mut seeded(1)).unwrap().is_none());
    let ctx = Context {
        data_dir: dir,
        out_dir: std::env::temp_dir(),
        quick: true,
        seed: 1,
    };
    let report = run_table3(&ctx, &Table3Config::quick()).unwrap();
    assert!(report.records.iter().all(|r| r.ours.is_none()));
    let lff20 = report
        .records
        .iter()
        .find(|r| r.dataset == "Segment" && r.method == "GIMC-LFF" && r.setting == "1n")
        .unwrap();
    assert_eq!(lff20.published, Some(0.0724));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("Covtype-sub: missing"))
    );
    assert!(
        report
            .to_markdown()
            .contains("missing from the data directory")
    );
}

/// Three Gaussian blobs in 5-D, well separated, with planted classes.
fn blobs() -> ClusterSet {
    let n = 150;
    let classes: Vec<usize> = (0..n).map(|i| i % 3).collect();
    let noise = gimc_linalg::rng::gaussian_mat(&mut seeded(4), n, 5, 0.4);
    let x = Mat::from_fn(n, 5, |i, j| {
        (if classes[i] == j { 3.0 } else { 0.0 }) + noise[(i, j)]
    });
    ClusterSet {
        x: FeatureMatrix::dense(x).unwrap(),
        classes,
        k: 3,
        description: "blobs".into(),
    }
}

#[test]
fn every_method_clusters_planted_blobs() {
    let set = blobs();
    let pairs = gimc_data::split::sample_pairs(&set.classes, 5 * 150, &mut seeded(6)).unwrap();
    let config = Table3Config {
        m: 30,
        ..Table3Config::quick()
    };
    for m in METHODS {
        let data = ConstrainedSet {
            set: &set,
            pairs: &pairs,
        };
        let r = run_method(m, data, &config, &mut seeded(8)).unwrap();
        let e = pairwise_clustering_error(&r.labels, &set.classes).unwrap();
        assert!(e < 0.1, "{}: error {e}", m.name());
        assert_eq!(r.lambda.is_some(), m != Method::KMeans);
        assert_eq!(
            r.iterations.is_some(),
            matches!(m, Method::ImcRff | Method::GimcLff | Method::GimcLnys)
        );
    }
}

#[test]
fn quick_form_on_real_data() {
    let Some(dir) = std::env::var_os("GIMC_DATA").map(PathBuf::from) else {
        eprintln!("GIMC_DATA not set: skipped");
        return;
    };
    if !dir.join("segment").exists() {
        assert!(
            std::env::var_os("GIMC_REQUIRE_DATA").is_none(),
            "GIMC_REQUIRE_DATA set but segment is missing"
        );
        return;
    }
    let ctx = Context {
        data_dir: dir,
        out_dir: std::env::temp_dir(),
        quick: true,
        seed: 2016,
    };
    let config = Table3Config {
        multiples: vec![5],
        max_rows: Some(200),
        methods: vec![Method::KMeans, Method::GimcLff],
        ..Table3Config::quick()
    };
    let report = run_table3(&ctx, &config).unwrap();
    let get = |m: &str| {
        report
            .records
            .iter()
            .find(|r| r.dataset == "Segment" && r.method == m && r.metric == METRIC_ERROR)
            .and_then(|r| r.ours)
            .unwrap()
    };
    let (km, lff) = (get("k-means"), get("GIMC-LFF"));
    // constraints help: the semi-supervised clustering beats plain k-means on 200 segment rows
    assert!(lff < km, "GIMC-LFF {lff} vs k-means {km}");
    assert!(lff < 0.1, "GIMC-LFF {lff}");
}
