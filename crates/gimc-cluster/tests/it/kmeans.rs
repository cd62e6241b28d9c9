//! k-means: invariants, planted blobs, dense = sparse, determinism, errors.

use gimc_cluster::{
    ClusterError, KMeans, KMeansInit, KMeansParams, ValidKMeansParams, fit_kmeans,
    fit_kmeans_sharded, nearest_centers,
};
use gimc_linalg::dense::in_pool;
use gimc_linalg::faer::Mat;
use gimc_linalg::observe::{FnObserver, IterationRecord, NoObserver, ObserverAction, Trace};
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sums::{RowSums, ThreadSums};
use gimc_linalg::{FeatureMatrix, LinalgError};
use proptest::prelude::*;

use crate::common::{blobs, same_partition, sparse_pair};

/// Σ_i ‖x_i − c_{l_i}‖² computed directly.
fn direct_inertia(x: &Mat<f64>, c: &Mat<f64>, labels: &[usize]) -> f64 {
    (0..x.nrows())
        .map(|i| {
            (0..x.ncols())
                .map(|j| (x[(i, j)] - c[(labels[i], j)]).powi(2))
                .sum::<f64>()
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Lloyd never increases Σ_i min_r ‖x_i − c_r‖², including across empty-cluster re-seeding,
    /// for both seedings, and the result is consistent (labels nearest, inertia direct).
    #[test]
    fn inertia_never_increases(
        n in 2usize..60, d in 1usize..5, k_raw in 1usize..8, seed in 0u64..1000, random in any::<bool>()
    ) {
        let k = k_raw.min(n);
        // few distinct values so that ties and empty clusters happen
        let x = Mat::from_fn(n, d, |i, j| ((i * 7 + j * 13 + seed as usize) % 5) as f64
            + 0.01 * ((i * j) % 3) as f64);
        let fx = FeatureMatrix::dense(x.clone()).unwrap();
        let init = if random { KMeansInit::Random } else { KMeansInit::PlusPlus };
        let params = KMeansParams::new(k).with_n_init(2).with_tol(0.0).with_init(init).check().unwrap();
        let mut trace = Trace::new();
        let km = fit_kmeans(&fx, &params, &mut seeded(seed), &mut trace).unwrap();
        let steps = &trace.records;
        for w in steps.windows(2) {
            if w[0].extra("restart") == w[1].extra("restart") {
                prop_assert!(w[1].objective <= w[0].objective + 1e-9 * (1.0 + w[0].objective),
                    "inertia rose {} -> {}", w[0].objective, w[1].objective);
            }
        }
        prop_assert_eq!(km.labels.len(), n);
        prop_assert!(km.labels.iter().all(|&l| l < k));
        let direct = direct_inertia(&x, &km.centers, &km.labels);
        prop_assert!((direct - km.inertia).abs() <= 1e-9 * (1.0 + direct));
        // the kept restart is the best one
        let finals: Vec<f64> = (0..2)
            .map(|r| steps.iter().rev().find(|s| s.extra("restart") == Some(r as f64)).unwrap().objective)
            .collect();
        prop_assert!(km.inertia <= finals[0].min(finals[1]) + 1e-12);
    }
}

#[test]
fn an_observer_stopping_interrupts_the_fit() {
    let centres = Mat::from_fn(3, 2, |r, j| 10.0 * ((r + j) % 3) as f64);
    let (x, _) = blobs(&centres, 30, 1.0, 5);
    let fx = FeatureMatrix::dense(x).unwrap();
    let params = KMeansParams::new(3).with_n_init(2).check().unwrap();
    let mut seen = Vec::new();
    let mut stop_at_first_lloyd = FnObserver(|r: &IterationRecord| {
        seen.push((r.extra("restart"), r.iteration, r.extra("n_changed")));
        if r.iteration < 1 {
            ObserverAction::Continue
        } else {
            ObserverAction::Stop
        }
    });
    let err = fit_kmeans(&fx, &params, &mut seeded(2), &mut stop_at_first_lloyd).unwrap_err();
    assert!(
        matches!(err, ClusterError::Interrupted { iteration: 1 }),
        "{err}"
    );
    // seeding of restart 0 (every one of the 90 points newly labelled), then its first Lloyd
    // iteration, and nothing after the stop
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], (Some(0.0), 0, Some(90.0)));
    assert_eq!((seen[1].0, seen[1].1), (Some(0.0), 1));
}

#[test]
fn recovers_well_separated_blobs() {
    let centres = Mat::from_fn(5, 3, |r, j| 20.0 * ((r * 3 + j * 5) % 7) as f64 + r as f64);
    let (x, truth) = blobs(&centres, 40, 0.5, 3);
    let fx = FeatureMatrix::dense(x).unwrap();
    for init in [KMeansInit::PlusPlus, KMeansInit::Random] {
        let params = KMeansParams::new(5)
            .with_n_init(8)
            .with_init(init)
            .check()
            .unwrap();
        let km = fit_kmeans(&fx, &params, &mut seeded(4), &mut NoObserver).unwrap();
        assert!(same_partition(&km.labels, &truth), "{init:?}");
        assert!(km.converged);
        // each fitted centre is within noise of a true centre
        for r in 0..5 {
            let t = truth[km.labels.iter().position(|&l| l == r).unwrap()];
            for j in 0..3 {
                assert!((km.centers[(r, j)] - centres[(t, j)]).abs() < 0.3);
            }
        }
        assert_eq!(km.predict(&fx).unwrap(), km.labels);
    }
}

#[test]
fn dense_and_sparse_give_the_same_clustering() {
    let mut rng = seeded(10);
    let (dense, sparse) = sparse_pair(&mut rng, 300, 25, 0.15);
    for init in [KMeansInit::PlusPlus, KMeansInit::Random] {
        let params = KMeansParams::new(6).with_init(init).check().unwrap();
        let a = fit_kmeans(&dense, &params, &mut seeded(11), &mut NoObserver).unwrap();
        let b = fit_kmeans(&sparse, &params, &mut seeded(11), &mut NoObserver).unwrap();
        assert_eq!(a.labels, b.labels);
        assert_eq!(a.n_iter, b.n_iter);
        assert!((&a.centers - &b.centers).norm_max() < 1e-10);
        assert!((a.inertia - b.inertia).abs() < 1e-9 * a.inertia);
        let (la, da) = nearest_centers(&sparse, a.centers.as_ref()).unwrap();
        assert_eq!(la, a.labels);
        assert!((da.iter().sum::<f64>() - a.inertia).abs() < 1e-9 * a.inertia);
    }
}

#[test]
fn deterministic_by_seed_and_thread_count() {
    let x = gaussian_mat(&mut seeded(20), 2500, 8, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let (_, sparse) = sparse_pair(&mut seeded(21), 2500, 30, 0.1);
    let params = KMeansParams::new(7).with_n_init(2);
    let valid = params.check().unwrap();
    for data in [&fx, &sparse] {
        let one = in_pool(1, || {
            fit_kmeans(data, &valid, &mut seeded(5), &mut NoObserver).unwrap()
        })
        .unwrap();
        let two = in_pool(2, || {
            fit_kmeans(data, &valid, &mut seeded(5), &mut NoObserver).unwrap()
        })
        .unwrap();
        let again = fit_kmeans(data, &valid, &mut seeded(5), &mut NoObserver).unwrap();
        assert_eq!(one, two);
        assert_eq!(one, again);
    }
    // the generator advances: a second call from the same generator is a new draw
    let mut rng = seeded(6);
    let params = params.with_n_init(1).check().unwrap();
    let a = fit_kmeans(&fx, &params, &mut rng, &mut NoObserver).unwrap();
    let b = fit_kmeans(&fx, &params, &mut rng, &mut NoObserver).unwrap();
    assert_ne!(a.centers, b.centers);
}

#[test]
fn more_restarts_never_hurt() {
    let x = gaussian_mat(&mut seeded(30), 400, 4, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let one = fit_kmeans(
        &fx,
        &KMeansParams::new(9).with_n_init(1).check().unwrap(),
        &mut seeded(7),
        &mut NoObserver,
    )
    .unwrap();
    let many = fit_kmeans(
        &fx,
        &KMeansParams::new(9).with_n_init(6).check().unwrap(),
        &mut seeded(7),
        &mut NoObserver,
    )
    .unwrap();
    // restart 0 is the same stream in both runs, so the best of six is at least as good
    assert!(many.inertia <= one.inertia);
}

#[test]
fn every_point_its_own_cluster() {
    let x = gaussian_mat(&mut seeded(31), 12, 3, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let km = fit_kmeans(
        &fx,
        &KMeansParams::new(12).check().unwrap(),
        &mut seeded(8),
        &mut NoObserver,
    )
    .unwrap();
    assert!(km.inertia < 1e-12); // rounding of the expansion ‖x‖² − 2x·c + ‖c‖²
    let mut l = km.labels.clone();
    l.sort_unstable();
    assert_eq!(l, (0..12).collect::<Vec<_>>());
}

#[test]
fn error_cases() {
    let x = gaussian_mat(&mut seeded(40), 5, 2, 1.0);
    let fx = FeatureMatrix::dense(x.clone()).unwrap();
    let mut rng = seeded(1);
    assert_eq!(
        fit_kmeans(
            &fx,
            &KMeansParams::new(6).check().unwrap(),
            &mut rng,
            &mut NoObserver
        ),
        Err(ClusterError::TooFewPoints { k: 6, n: 5 })
    );
    assert!(matches!(
        KMeansParams::new(0).check(),
        Err(ClusterError::InvalidParameter { name: "k", .. })
    ));
    let mut bad = x.clone();
    bad[(3, 1)] = f64::NAN;
    let fbad = FeatureMatrix::Dense(bad);
    assert!(matches!(
        fit_kmeans(
            &fbad,
            &KMeansParams::new(2).check().unwrap(),
            &mut rng,
            &mut NoObserver
        ),
        Err(ClusterError::Linalg(LinalgError::NonFinite {
            row: 3,
            col: 1,
            ..
        }))
    ));
    let km = fit_kmeans(
        &fx,
        &KMeansParams::new(2).check().unwrap(),
        &mut rng,
        &mut NoObserver,
    )
    .unwrap();
    let wide = FeatureMatrix::dense(Mat::zeros(3, 4)).unwrap();
    assert!(matches!(
        km.predict(&wide),
        Err(ClusterError::DimensionMismatch { .. })
    ));
    assert!(nearest_centers(&fx, Mat::<f64>::zeros(0, 2).as_ref()).is_err());
    let empty = FeatureMatrix::dense(Mat::zeros(0, 2)).unwrap();
    assert!(matches!(
        fit_kmeans(
            &empty,
            &KMeansParams::new(1).check().unwrap(),
            &mut rng,
            &mut NoObserver
        ),
        Err(ClusterError::TooFewPoints { k: 1, n: 0 })
    ));
}

/// Fits on `bounds`-delimited row shards, one thread per shard standing in for a process.
fn fit_on_shards(
    x: &FeatureMatrix,
    bounds: &[usize],
    params: &ValidKMeansParams,
    seed: u64,
) -> Vec<KMeans> {
    ThreadSums::on_threads(bounds.len() - 1, |sums| {
        let p = sums.rank();
        let rows: Vec<usize> = (bounds[p]..bounds[p + 1]).collect();
        let shard = x.select_rows(&rows).unwrap();
        fit_kmeans_sharded(&shard, params, &mut seeded(seed), sums).unwrap()
    })
}

#[test]
fn sharded_fit_is_the_fit_on_the_union() {
    let centres = Mat::from_fn(4, 3, |i, j| 6.0 * ((i * 3 + j) as f64).sin());
    let (x, _) = blobs(&centres, 50, 1.0, 40);
    let dense = FeatureMatrix::dense(x).unwrap();
    let (_, sparse) = sparse_pair(&mut seeded(41), 150, 12, 0.3);
    // 30 points with 4 distinct values and k = 6: coinciding centres leave clusters empty
    let dup = FeatureMatrix::dense(Mat::from_fn(30, 2, |i, j| ((i % 4) * (j + 1)) as f64)).unwrap();
    let cases = [
        (&dense, KMeansParams::new(4), vec![0, 90, 117, 200]),
        (
            &dense,
            KMeansParams::new(7).with_init(KMeansInit::Random),
            vec![0, 1, 120, 200],
        ),
        (&sparse, KMeansParams::new(5), vec![0, 75, 150]),
        (
            &dup,
            KMeansParams::new(6).with_n_init(2),
            vec![0, 11, 12, 30],
        ),
    ];
    for (x, params, bounds) in cases {
        let params = params.check().unwrap();
        let whole = fit_kmeans(x, &params, &mut seeded(9), &mut NoObserver).unwrap();
        let parts = fit_on_shards(x, &bounds, &params, 9);
        let labels: Vec<usize> = parts.iter().flat_map(|p| p.labels.clone()).collect();
        assert_eq!(labels, whole.labels, "bounds {bounds:?}");
        for p in &parts {
            assert_eq!(p.n_iter, whole.n_iter);
            assert_eq!(p.converged, whole.converged);
            assert!((p.inertia - whole.inertia).abs() <= 1e-10 * whole.inertia.max(1.0));
            let diff = (&p.centers - &whole.centers).norm_max();
            assert!(diff <= 1e-10, "centres differ by {diff}");
            // every process receives the same bits
            assert_eq!(p.centers, parts[0].centers);
        }
    }
}
