//! The fast path equals the general path on a small fully observed problem (DESIGN §3.3): with
//! Ω = every entry, Ψ = I (a linear Nyström map with the identity as landmarks on Y = I) and
//! H = I, the general objective is the fast one plus (λ/2)‖I‖², the general W half-step (CG)
//! gives the closed-form W, and the gradients w.r.t. U agree.

use gimc::{CompletionData, CompletionModel, KnownMap, LabelProblem, MapSpec};
use gimc_featmap::{FeatureMap, Nystrom};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sparse::csr_to_dense;
use gimc_linalg::{CgParams, FeatureMatrix, Kernel, Observed};

use crate::common;

#[test]
fn fast_path_equals_general_path_when_fully_observed() {
    let data = common::multilabel(20, 3, 4, 21);
    let l = data.n_labels();
    let lambda = 0.8;
    for map in [
        MapSpec::fourier(3, 0.5)
            .build(data.features(), &mut seeded(1))
            .unwrap(),
        MapSpec::nystrom(5, 0.5)
            .build(data.features(), &mut seeded(2))
            .unwrap(),
    ] {
        // fast path
        let prob = LabelProblem::new(&data, lambda).unwrap();
        let feats = prob.features(std::slice::from_ref(&map)).unwrap();
        let w0 = gaussian_mat(&mut seeded(3), map.output_dim(), l, 0.4);
        let f_fast = prob.objective(&feats, w0.as_ref()).unwrap();
        let w_fast = prob.w_step(&feats).unwrap();
        let g_fast = prob.gradient(&map, &feats, w0.as_ref()).unwrap();

        // general path: Ω = all n × L entries (zeros included), ψ(Y) = I, H = I
        let a = csr_to_dense(data.labels());
        let omega = Observed::full_from_dense(a.as_ref()).unwrap();
        let y = FeatureMatrix::dense(Mat::<f64>::identity(l, l)).unwrap();
        let eye_map = KnownMap::Nystrom(
            Nystrom::from_parts(Kernel::Linear, Mat::<f64>::identity(l, l), None).unwrap(),
        );
        assert_eq!(
            eye_map.forward(&y).unwrap(),
            Mat::<f64>::identity(l, l),
            "ψ(Y) must be the identity"
        );
        let cdata = CompletionData::new(&omega, data.features(), &y).unwrap();
        let mut model = CompletionModel::new(
            map.clone(),
            eye_map,
            w0.clone(),
            Mat::<f64>::identity(l, l),
            lambda,
        )
        .unwrap();
        let f_general = model.objective(&cdata).unwrap();
        let offset = 0.5 * lambda * l as f64;
        assert!(
            (f_general - offset - f_fast).abs() < 1e-9 * f_fast.max(1.0),
            "objective: general {f_general} − {offset} vs fast {f_fast}"
        );
        let (g_general, _) = model.gradients(&cdata).unwrap();
        assert!((&g_general - &g_fast).norm_l2() < 1e-9 * g_fast.norm_l2().max(1.0));
        let cg = CgParams {
            tol: 1e-14,
            max_iter: 2000,
        };
        model.w_step(&cdata, &cg).unwrap();
        let diff = (model.w().to_owned() - &w_fast).norm_l2();
        assert!(
            diff < 1e-7 * w_fast.norm_l2().max(1.0),
            "W after a W-step differs by {diff}"
        );
        let f_fast_after = prob.objective(&feats, w_fast.as_ref()).unwrap();
        let f_general_after = model.objective(&cdata).unwrap();
        assert!((f_general_after - offset - f_fast_after).abs() < 1e-8 * f_fast_after.max(1.0));
        assert!(f_fast_after <= f_fast);
    }
}

#[test]
fn factored_nystrom_features_equal_the_formed_ones() {
    // Normalised Nyström: Φ = C·M; the fast path builds ΦᵀΦ = M(CᵀC)M and AᵀΦ = (AᵀC)M
    // without forming Φ, and forms Φ only when asked.
    let data = common::multilabel(40, 5, 6, 41);
    let spec = MapSpec {
        kind: gimc::MapKind::Nystrom {
            landmarks: gimc::Landmarks::Uniform,
            normalized: true,
        },
        m: 12,
        gamma: 0.4,
    };
    let map = spec.build(data.features(), &mut seeded(4)).unwrap();
    let prob = LabelProblem::new(&data, 0.5).unwrap();
    let factored = prob.features(std::slice::from_ref(&map)).unwrap();
    let formed = prob
        .features_from(map.forward(data.features()).unwrap())
        .unwrap();
    let close = |a: gimc_linalg::faer::MatRef<'_, f64>, b: gimc_linalg::faer::MatRef<'_, f64>| {
        (a.to_owned() - b.to_owned()).norm_max() <= 1e-10 * b.norm_max().max(1.0)
    };
    assert_eq!(factored.dim(), formed.dim());
    assert!(close(factored.gram(), formed.gram()));
    assert!(close(factored.cross(), formed.cross()));
    assert!(close(factored.phi(), formed.phi()));
    let (wf, wd) = (
        prob.w_step(&factored).unwrap(),
        prob.w_step(&formed).unwrap(),
    );
    assert!(close(wf.as_ref(), wd.as_ref()));
}
