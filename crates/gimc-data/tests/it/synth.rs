//! Synthetic generators: shapes, planted rank, unit variance, noise level, label probabilities,
//! observed fractions, determinism.

use gimc_data::synth::{
    BlobsParams, Fig1Params, Fig1Target, GaussianImcParams, Mc1Params, blobs, gaussian_imc,
    gimc_fig1_toy, mc1_synthetic, observe, sample_count, sample_entries, two_class_2d,
};
use gimc_data::{DataError, FeatureMatrix, Targets};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;

fn rank(m: &Mat<f64>) -> usize {
    let s = gimc_linalg::svd::singular_values(m.as_ref()).unwrap();
    let top = s.iter().cloned().fold(0.0, f64::max);
    s.iter().filter(|&&v| v > 1e-9 * top).count()
}

fn mean_var(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = vals.collect();
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (
        m,
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64,
    )
}

#[test]
fn fig1_tanh_toy_has_the_hidden_rank_the_bilinear_mean_square_and_is_not_bilinear() {
    let p = Fig1Params::default().with_target(Fig1Target::Tanh {
        hidden: 20,
        scale: 2.0,
    });
    let t = gimc_fig1_toy(&p.check().unwrap(), &mut seeded(1)).unwrap();
    assert_eq!(rank(&t.clean), 20);
    let n = (t.clean.nrows() * t.clean.ncols()) as f64;
    let mean_sq = t.clean.squared_norm_l2() / n;
    assert!((mean_sq - 50.0).abs() < 1e-9, "mean square {mean_sq}");
    // the same X, Y draws as the bilinear toy from the same seed (draw order X, Y first)
    let b = gimc_fig1_toy(&Fig1Params::default().check().unwrap(), &mut seeded(1)).unwrap();
    assert_eq!((&t.x, &t.y), (&b.x, &b.y));
    // not bilinear: the best fit A ≈ X Z Yᵀ (least squares, Z = X⁺ A Y⁺ᵀ) leaves a large part
    let px = projector(&t.x);
    let py = projector(&t.y);
    let fitted = &px * &t.clean * &py;
    let resid = (&t.clean - &fitted).squared_norm_l2() / t.clean.squared_norm_l2();
    assert!(resid > 0.2, "bilinear part explains all but {resid}");
    let fitted_b = &px * &b.clean * &py;
    assert!((&b.clean - &fitted_b).squared_norm_l2() / b.clean.squared_norm_l2() < 1e-20);
    assert_eq!(
        t,
        gimc_fig1_toy(&p.check().unwrap(), &mut seeded(1)).unwrap()
    );
    let bad = Fig1Params::default().with_target(Fig1Target::Tanh {
        hidden: 20,
        scale: f64::NAN,
    });
    assert!(bad.check().is_err());
}

/// The orthogonal projector onto the column space of `m` (full column rank), m (mᵀm)⁻¹ mᵀ.
fn projector(m: &Mat<f64>) -> Mat<f64> {
    let gram = m.transpose() * m;
    let coef = gimc_linalg::solve::cholesky_solve(gram.as_ref(), m.transpose()).unwrap();
    m * &coef
}

#[test]
fn fig1_toy_shapes_and_noise_variance() {
    let p = Fig1Params::default();
    let t = gimc_fig1_toy(&p.check().unwrap(), &mut seeded(1)).unwrap();
    assert_eq!(
        (
            t.x.nrows(),
            t.x.ncols(),
            t.y.nrows(),
            t.a.nrows(),
            t.a.ncols()
        ),
        (200, 50, 200, 200, 200)
    );
    assert_eq!(rank(&t.clean), 50);
    let (m, v) = mean_var(
        (0..200)
            .flat_map(|i| (0..200).map(move |j| (i, j)))
            .map(|(i, j)| t.a[(i, j)] - t.clean[(i, j)]),
    );
    assert!(
        m.abs() < 0.01 && (v - 0.1).abs() < 0.005,
        "noise mean {m} variance {v}"
    );
    assert_eq!(
        t,
        gimc_fig1_toy(&p.check().unwrap(), &mut seeded(1)).unwrap()
    );
    let obs = observe(t.a.as_ref(), 0.05, &mut seeded(2)).unwrap();
    assert_eq!(obs.len(), 2000);
    assert!(obs.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    assert!(obs.iter().all(|&(i, j, v)| v == t.a[(i, j)]));
    assert!(sample_entries(3, 3, 1.5, &mut seeded(0)).is_err());
    assert_eq!(sample_entries(3, 3, 1.0, &mut seeded(0)).unwrap().len(), 9);
}

#[test]
fn mc1_rank_variance_masks_and_label_probability() {
    let p = Mc1Params::default()
        .with_n(400)
        .with_rank(2)
        .with_noise_variance(0.1)
        .with_observed_fraction(0.2);
    let d = mc1_synthetic(&p.check().unwrap(), &mut seeded(7)).unwrap();
    assert_eq!(
        (
            d.x0.nrows(),
            d.x0.ncols(),
            d.y.nrows(),
            d.y.ncols(),
            d.w.ncols(),
            d.b.len()
        ),
        (20, 400, 10, 400, 20, 10)
    );
    assert_eq!(rank(&d.x0), 2);
    let (_, v) = mean_var(
        (0..20)
            .flat_map(|i| (0..400).map(move |j| (i, j)))
            .map(|(i, j)| d.x0[(i, j)]),
    );
    assert!((v - 1.0).abs() < 1e-12, "X0 variance {v}");
    let (_, nv) = mean_var(
        (0..20)
            .flat_map(|i| (0..400).map(move |j| (i, j)))
            .map(|(i, j)| d.x[(i, j)] - d.x0[(i, j)]),
    );
    assert!((nv - 0.1).abs() < 0.01, "noise variance {nv}");
    assert_eq!(d.observed_x.len(), 1600);
    assert_eq!(d.observed_y.len(), 800);
    // y0 = W X0 + b
    let i = 3;
    let j = 17;
    let y0: f64 = (0..20).map(|k| d.w[(i, k)] * d.x0[(k, j)]).sum::<f64>() + d.b[i];
    assert!((y0 - d.y0[(i, j)]).abs() < 1e-9);
    // W, b ~ N(0, 10)
    let (_, wv) = mean_var(
        (0..10)
            .flat_map(|i| (0..20).map(move |k| (i, k)))
            .map(|(i, k)| d.w[(i, k)]),
    );
    assert!((wv - 10.0).abs() < 2.5, "W variance {wv}");
    // labels: sum of (1[y = +1] − σ(y0)) is within a few standard deviations of 0
    let mut dev = 0.0;
    let mut var = 0.0;
    for i in 0..10 {
        for j in 0..400 {
            let s = 1.0 / (1.0 + (-d.y0[(i, j)]).exp());
            dev += if d.y[(i, j)] == 1.0 { 1.0 } else { 0.0 } - s;
            var += s * (1.0 - s);
            assert!(d.y[(i, j)] == 1.0 || d.y[(i, j)] == -1.0);
        }
    }
    assert!(
        dev.abs() < 4.0 * var.sqrt() + 1.0,
        "deviation {dev}, sd {}",
        var.sqrt()
    );
    assert_eq!(
        d,
        mc1_synthetic(&p.check().unwrap(), &mut seeded(7)).unwrap()
    );
    assert!(p.with_rank(25).check().is_err());
}

#[test]
fn mc1_label_probability_with_small_weights() {
    // with small W and b, y0 is O(1) and the labels are genuinely random: check calibration
    let p = Mc1Params::default().with_n(2000).with_wb_variance(0.05);
    let d = mc1_synthetic(&p.check().unwrap(), &mut seeded(11)).unwrap();
    let (mut hits, mut expected, mut var) = (0.0, 0.0, 0.0);
    for i in 0..10 {
        for j in 0..2000 {
            let s = 1.0 / (1.0 + (-d.y0[(i, j)]).exp());
            if d.y[(i, j)] == 1.0 {
                hits += 1.0;
            }
            expected += s;
            var += s * (1.0 - s);
        }
    }
    assert!(var > 1000.0, "labels should be uncertain");
    assert!(
        (hits - expected).abs() < 4.0 * var.sqrt(),
        "hits {hits} expected {expected}"
    );
}

#[test]
fn gaussian_imc_planted_rank_and_entries() {
    let p = GaussianImcParams::new(60, 50, 12, 10, 3, 500);
    let g = gaussian_imc(&p.check().unwrap(), &mut seeded(3)).unwrap();
    assert_eq!(rank(&g.z), 3);
    assert_eq!(g.observed.len(), 500);
    let a = g.full();
    // A = X Z Yᵀ directly
    let xz = &g.x * &g.z;
    let direct = &xz * g.y.transpose();
    for &(i, j, v) in &g.observed {
        assert!((a[(i, j)] - v).abs() < 1e-9);
        assert!((direct[(i, j)] - v).abs() < 1e-9);
    }
    assert_eq!(rank(&a), 3);
    assert!(g.entry(60, 0).is_none());
    assert!(p.with_samples(3001).check().is_err());
    assert!(p.with_rank(11).check().is_err());
}

#[test]
fn rings_are_not_linearly_separable_but_radially() {
    let ds = two_class_2d(5000, 0.1, &mut seeded(5)).unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (5000, 2));
    assert_eq!(ds.summary().class_counts, Some(vec![2500, 2500]));
    let FeatureMatrix::Dense(x) = &ds.features else {
        panic!()
    };
    let Targets::Classes { classes, .. } = &ds.targets else {
        panic!()
    };
    for c in 0..2 {
        let rows: Vec<usize> = (0..5000).filter(|&i| classes[i] == c).collect();
        let mx = rows.iter().map(|&i| x[(i, 0)]).sum::<f64>() / rows.len() as f64;
        let my = rows.iter().map(|&i| x[(i, 1)]).sum::<f64>() / rows.len() as f64;
        assert!(
            mx.abs() < 0.15 && my.abs() < 0.15,
            "class {c} centred at the origin"
        );
    }
    // the outer class surrounds the inner one in every direction: no half-plane separates them
    for k in 0..16 {
        let t = k as f64 * std::f64::consts::PI / 8.0;
        let proj = |i: usize| x[(i, 0)] * t.cos() + x[(i, 1)] * t.sin();
        let inner_max = (0..5000)
            .filter(|&i| classes[i] == 0)
            .map(proj)
            .fold(f64::MIN, f64::max);
        let outer_max = (0..5000)
            .filter(|&i| classes[i] == 1)
            .map(proj)
            .fold(f64::MIN, f64::max);
        let outer_min = (0..5000)
            .filter(|&i| classes[i] == 1)
            .map(proj)
            .fold(f64::MAX, f64::min);
        assert!(outer_max > inner_max && outer_min < -inner_max);
    }
    let radial_ok = (0..5000).all(|i| ((x[(i, 0)].hypot(x[(i, 1)]) > 2.0) as usize) == classes[i]);
    assert!(radial_ok);
}

#[test]
fn blobs_cluster_around_centres() {
    let params = BlobsParams::new(300, 4, 3, 0.5).check().unwrap();
    let ds = blobs(&params, &mut seeded(9)).unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (300, 4));
    assert_eq!(ds.summary().class_counts, Some(vec![100; 3]));
    let FeatureMatrix::Dense(x) = &ds.features else {
        panic!()
    };
    let c = ds.classes().unwrap();
    for k in 0..3 {
        let rows: Vec<usize> = (0..300).filter(|&i| c[i] == k).collect();
        for j in 0..4 {
            let (_, v) = mean_var(rows.iter().map(|&i| x[(i, j)]));
            assert!((v - 0.25).abs() < 0.12, "within-blob variance {v}");
        }
    }
    assert_eq!(ds, blobs(&params, &mut seeded(9)).unwrap());
    assert!(BlobsParams::new(10, 2, 0, 1.0).check().is_err());
}

/// The name of the parameter a `check()` refused.
fn refused<T: std::fmt::Debug>(r: Result<T, DataError>) -> &'static str {
    match r {
        Err(DataError::InvalidParameter { name, .. }) => name,
        other => panic!("expected a parameter error, got {other:?}"),
    }
}

#[test]
fn fig1_check_refuses_each_bad_field() {
    let p = Fig1Params::default();
    assert!(p.check().is_ok());
    assert_eq!(refused(p.with_n_rows(0).check()), "n_rows");
    assert_eq!(refused(p.with_n_cols(0).check()), "n_cols");
    assert_eq!(refused(p.with_dim(0).check()), "dim");
    assert_eq!(
        refused(p.with_noise_variance(-0.1).check()),
        "noise_variance"
    );
    assert_eq!(
        refused(p.with_noise_variance(f64::NAN).check()),
        "noise_variance"
    );
    let tanh = |hidden, scale| p.with_target(Fig1Target::Tanh { hidden, scale });
    assert!(tanh(3, 1.0).check().is_ok());
    assert_eq!(refused(tanh(0, 1.0).check()), "hidden");
    assert_eq!(refused(tanh(3, 0.0).check()), "scale");
    assert_eq!(refused(tanh(3, f64::INFINITY).check()), "scale");
}

#[test]
fn mc1_check_refuses_each_bad_field() {
    let p = Mc1Params::default();
    assert!(p.check().is_ok());
    assert_eq!(refused(p.with_n(0).check()), "n");
    assert_eq!(refused(p.with_d(0).check()), "d");
    assert_eq!(refused(p.with_t(0).check()), "t");
    assert_eq!(refused(p.with_rank(0).check()), "rank");
    assert_eq!(refused(p.with_rank(21).check()), "rank");
    assert_eq!(
        refused(p.with_noise_variance(-1.0).check()),
        "noise_variance"
    );
    assert_eq!(refused(p.with_wb_variance(f64::NAN).check()), "wb_variance");
    assert_eq!(
        refused(p.with_observed_fraction(1.5).check()),
        "observed_fraction"
    );
}

#[test]
fn gaussian_imc_check_refuses_each_bad_field() {
    let p = GaussianImcParams::new(6, 5, 4, 3, 2, 30);
    assert!(p.check().is_ok());
    assert_eq!(refused(p.with_n_rows(0).check()), "n_rows");
    assert_eq!(refused(p.with_n_cols(0).check()), "n_cols");
    assert_eq!(refused(p.with_d_rows(0).check()), "d_rows");
    assert_eq!(refused(p.with_d_cols(0).check()), "d_cols");
    assert_eq!(refused(p.with_rank(0).check()), "rank");
    assert_eq!(refused(p.with_rank(4).check()), "rank");
    // the name and message `sample_count` gives
    let e = p.with_samples(31).check().unwrap_err();
    assert_eq!(
        e.to_string(),
        sample_count(6, 5, 31, &mut seeded(0))
            .unwrap_err()
            .to_string()
    );
    assert_eq!(refused(p.with_samples(31).check()), "count");
    assert_eq!(
        refused(p.with_n_rows(usize::MAX).with_n_cols(2).check()),
        "nrows"
    );
}
