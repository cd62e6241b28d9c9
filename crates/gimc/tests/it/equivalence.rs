//! The fast path equals the general path on a small fully observed problem (DESIGN §3.3): with
//! Ω = every entry, Ψ = I (a linear Nyström map with the identity as landmarks on Y = I) and
//! H = I, the general objective is the fast one plus (λ/2)‖I‖², the general W half-step (CG)
//! gives the closed-form W, and the gradients w.r.t. U agree.

use gimc::labels::LabelProblem;
use gimc::{AnyMap, BoxedMap, CompletionData, CompletionModel, CompletionParts, MapRegistry};
use gimc_featmap::{FeatureMap, LearnableMap, MapFamily, Nystrom, NystromFamily};
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
    let registry = MapRegistry::builtin();
    for (name, m, seed) in [("lff", 3, 1), ("lnys", 5, 2)] {
        let map = registry
            .family(name)
            .unwrap()
            .build(data.features(), m, 0.5, &mut seeded(seed))
            .unwrap();
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
        let eye_map =
            Nystrom::from_parts(Kernel::Linear, Mat::<f64>::identity(l, l), None).unwrap();
        assert_eq!(
            eye_map.forward(&y).unwrap(),
            Mat::<f64>::identity(l, l),
            "ψ(Y) must be the identity"
        );
        let cdata = CompletionData::new(&omega, data.features(), &y).unwrap();
        let mut model = CompletionModel::new(CompletionParts {
            row_map: map,
            col_map: eye_map,
            w: w0.clone(),
            h: Mat::<f64>::identity(l, l),
            lambda,
        })
        .unwrap();
        let f_general = model.objective(&cdata).unwrap();
        let offset = 0.5 * lambda * l as f64;
        assert!(
            (f_general - offset - f_fast).abs() < 1e-9 * f_fast.max(1.0),
            "objective: general {f_general} − {offset} vs fast {f_fast}"
        );
        let (g_general, _) = model.gradients(&cdata).unwrap();
        assert!((&g_general - &g_fast).norm_l2() < 1e-9 * g_fast.norm_l2().max(1.0));
        let cg = CgParams::default()
            .with_tol(1e-14)
            .with_max_iter(2000)
            .check()
            .unwrap();
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
    // Normalised Nyström: Φ = C·M; the fast path builds ΦᵀΦ = Mᵀ(CᵀC)M and AᵀΦ = (AᵀC)M
    // without forming Φ, and forms Φ only when asked.
    let data = common::multilabel(40, 5, 6, 41);
    let map = NystromFamily::uniform_whitened()
        .build(data.features(), 12, 0.4, &mut seeded(4))
        .unwrap();
    let prob = LabelProblem::new(&data, 0.5).unwrap();
    let factored = prob.features(std::slice::from_ref(&map)).unwrap();
    assert!(factored.is_factored());
    let formed = prob
        .features_from(map.forward(data.features()).unwrap())
        .unwrap();
    let close = |a: gimc_linalg::faer::MatRef<'_, f64>, b: gimc_linalg::faer::MatRef<'_, f64>| {
        (a.to_owned() - b.to_owned()).norm_max() <= 1e-10 * b.norm_max().max(1.0)
    };
    assert_eq!(factored.dim(), formed.dim());
    assert!(close(factored.gram(), formed.gram()));
    assert!(close(factored.cross(), formed.cross()));
    assert!(close(factored.phi().unwrap(), formed.phi().unwrap()));
    let (wf, wd) = (
        prob.w_step(&factored).unwrap(),
        prob.w_step(&formed).unwrap(),
    );
    assert!(close(wf.as_ref(), wd.as_ref()));
}

/// The blanket impls forward `forward_factored`: a borrowed, boxed or type-erased Nyström map
/// takes the fast path's ΦᵀΦ = Mᵀ(CᵀC)M route exactly like the map itself (same products), and
/// a map without factors never does.
#[test]
fn borrowed_and_boxed_nystrom_maps_take_the_factored_path() {
    let data = common::multilabel(40, 5, 6, 42);
    let build = || {
        NystromFamily::uniform_whitened()
            .build(data.features(), 12, 0.4, &mut seeded(5))
            .unwrap()
    };
    let prob = LabelProblem::new(&data, 0.5).unwrap();
    let own = prob.features(&[build()]).unwrap();
    assert!(own.is_factored());
    let map = build();
    let mut mutable = build();
    let boxed: Box<Nystrom> = Box::new(build());
    let erased: BoxedMap = Box::new(build());
    let learnable: Box<dyn LearnableMap> = Box::new(build());
    let feature: Box<dyn FeatureMap> = Box::new(build());
    let via: [(&str, gimc::labels::LabelFeatures); 6] = [
        ("&Nystrom", prob.features(&[&map]).unwrap()),
        ("&mut Nystrom", prob.features(&[&mut mutable]).unwrap()),
        (
            "Box<Nystrom>",
            prob.features(std::slice::from_ref(&boxed)).unwrap(),
        ),
        (
            "Box<dyn AnyMap>",
            prob.features(std::slice::from_ref(&erased)).unwrap(),
        ),
        (
            "Box<dyn LearnableMap>",
            prob.features(std::slice::from_ref(&learnable)).unwrap(),
        ),
        (
            "Box<dyn FeatureMap>",
            prob.features(std::slice::from_ref(&feature)).unwrap(),
        ),
    ];
    for (what, f) in &via {
        assert!(f.is_factored(), "{what} lost the factored forward pass");
        assert_eq!(f.gram(), own.gram(), "{what}");
        assert_eq!(f.cross(), own.cross(), "{what}");
    }
    assert_eq!(erased.kind(), "nystrom");
    // a Fourier map has no factors: its features are formed directly
    let lff = MapRegistry::builtin()
        .family("lff")
        .unwrap()
        .build(data.features(), 6, 0.4, &mut seeded(6))
        .unwrap();
    assert!(!prob.features(&[&lff]).unwrap().is_factored());
}
