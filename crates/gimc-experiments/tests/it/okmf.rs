//! `okmf-table2` and `okmf-scaling`: registration, the published numbers, data loading with a
//! missing data directory, the one-cluster reference and every method on small planted data.
//! (The full experiments take minutes; they run through `reproduce`, not here.)

use std::path::PathBuf;

use gimc_experiments::experiment_names;
use gimc_experiments::experiments::okmf_table2::{
    ClusterData, DATASETS, METHODS, Method, largest_class_share, load_abalone, load_covtype,
    load_wine_white, rbf_gamma, run_method,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;
use gimc_metrics::clustering_accuracy;

#[test]
fn both_experiments_are_registered() {
    let names = experiment_names();
    assert!(names.contains(&"okmf-table2"));
    assert!(names.contains(&"okmf-scaling"));
}

#[test]
fn published_numbers_sit_in_the_right_cells() {
    let col = |name: &str| DATASETS.iter().position(|d| *d == name).unwrap();
    let okmf_r_rbf = Method::Okmf {
        kmeans_budget: false,
        rbf: true,
    };
    assert_eq!(okmf_r_rbf.name(), "OKMF-R-RBF");
    assert_eq!(okmf_r_rbf.published(col("Abalone")), Some(0.5331));
    assert_eq!(okmf_r_rbf.published(col("WineQ")), Some(0.4410));
    assert_eq!(okmf_r_rbf.published(col("Synthetic")), Some(0.6925));
    assert_eq!(okmf_r_rbf.published(col("Seismic")), Some(0.5000));
    assert_eq!(okmf_r_rbf.published(col("Covtype")), Some(0.4876));
    assert_eq!(Method::MiniBatch.published(col("Seismic")), Some(0.4007));
    assert_eq!(Method::MiniBatch.published(col("Covtype")), Some(0.4276));
    assert_eq!(Method::KernelRbf.published(col("Synthetic")), Some(1.0));
    assert_eq!(Method::KernelRbf.published(col("Covtype")), None);
    assert_eq!(Method::KernelLinear.published(col("WineQ")), Some(0.3962));
    assert_eq!(Method::KMeans.published(col("Abalone")), None);
    assert_eq!(METHODS.len(), 8);
    assert_eq!(Method::KMeans.published(99), None);
}

#[test]
fn missing_data_loads_as_none() {
    let dir = PathBuf::from("/nonexistent-gimc-data-dir");
    assert!(load_abalone(&dir).unwrap().is_none());
    assert!(load_wine_white(&dir).unwrap().is_none());
    assert!(
        load_covtype(&dir, Some(100), &mut seeded(1))
            .unwrap()
            .is_none()
    );
}

#[test]
fn one_cluster_reference_and_gamma_rule() {
    assert_eq!(largest_class_share(&[0, 1, 1, 2, 1]), 0.6);
    let x = FeatureMatrix::dense(Mat::zeros(3, 8)).unwrap();
    assert_eq!(rbf_gamma(&x), 0.125);
}

#[test]
fn every_method_clusters_planted_blobs() {
    let n = 300;
    let classes: Vec<usize> = (0..n).map(|i| i % 3).collect();
    // centres 6·e_c in R⁴: linearly independent, so the linear-kernel OKMF can separate them
    let noise = gimc_linalg::rng::gaussian_mat(&mut seeded(2), n, 4, 0.3);
    let x = Mat::from_fn(
        n,
        4,
        |i, j| { if classes[i] == j { 6.0 } else { 0.0 } } + noise[(i, j)],
    );
    let data = ClusterData {
        x: FeatureMatrix::dense(x).unwrap(),
        classes: classes.clone(),
        k: 3,
        description: "blobs".into(),
    };
    for method in METHODS {
        let (labels, secs) = run_method(method, &data, &mut seeded(3)).unwrap();
        assert_eq!(labels.len(), n);
        assert!(secs >= 0.0);
        let acc = clustering_accuracy(&labels, &classes).unwrap();
        assert!(acc > 0.95, "{}: {acc}", method.name());
    }
}
