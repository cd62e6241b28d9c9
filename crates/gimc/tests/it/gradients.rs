//! Gradients against central finite differences (DESIGN §3.3): the multi-label objective and
//! the reduced (variable-projection) objective w.r.t. U for learned Fourier and Nyström maps,
//! and the general objective w.r.t. U and V.

use gimc::{
    CompletionData, CompletionModel, KnownMap, LabelData, LabelProblem, Landmarks, MapKind, MapSpec,
};
use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::dense::frob_dot;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};

use crate::common;

const H: f64 = 1e-5;

/// Checks ⟨∇f, E⟩ against (f(U + hE) − f(U − hE)) / 2h for a few random directions E and a
/// few coordinate directions.
fn check_directional(map: &KnownMap, grad: &Mat<f64>, f: impl Fn(&KnownMap) -> f64, what: &str) {
    let shape = map.params().shape();
    let mut dirs: Vec<Mat<f64>> = (0..3)
        .map(|s| gaussian_mat(&mut seeded(100 + s), shape.0, shape.1, 1.0))
        .collect();
    for (i, j) in [
        (0, 0),
        (shape.0 - 1, shape.1 - 1),
        (shape.0 / 2, shape.1 / 2),
    ] {
        let mut e = Mat::<f64>::zeros(shape.0, shape.1);
        e[(i, j)] = 1.0;
        dirs.push(e);
    }
    for e in dirs {
        let mut plus = map.clone();
        plus.step(e.as_ref(), -H).unwrap();
        let mut minus = map.clone();
        minus.step(e.as_ref(), H).unwrap();
        let fd = (f(&plus) - f(&minus)) / (2.0 * H);
        let an = frob_dot(grad.as_ref(), e.as_ref()).unwrap();
        let tol = 1e-6 * an.abs().max(1.0);
        assert!(
            (fd - an).abs() <= tol,
            "{what}: finite difference {fd} vs analytic {an}"
        );
    }
}

fn maps_for(data: &LabelData) -> Vec<(&'static str, KnownMap)> {
    let x = data.features();
    vec![
        (
            "lff",
            MapSpec::fourier(4, 0.3).build(x, &mut seeded(1)).unwrap(),
        ),
        (
            "lnys (M = I)",
            MapSpec::nystrom(5, 0.3).build(x, &mut seeded(2)).unwrap(),
        ),
        (
            "nystrom (M fixed, normalised)",
            MapSpec {
                kind: MapKind::Nystrom {
                    landmarks: Landmarks::Uniform,
                    normalized: true,
                },
                m: 5,
                gamma: 0.3,
            }
            .build(x, &mut seeded(3))
            .unwrap(),
        ),
    ]
}

#[test]
fn multilabel_objective_gradient_matches_finite_differences() {
    for data in [
        common::multilabel(25, 3, 4, 1),
        common::multilabel_sparse(25, 3, 4, 2),
    ] {
        let prob = LabelProblem::new(&data, 0.7).unwrap();
        for (name, map) in maps_for(&data) {
            let feats = prob.features(std::slice::from_ref(&map)).unwrap();
            let w = gaussian_mat(&mut seeded(9), feats.dim(), data.n_labels(), 0.5);
            let grad = prob.gradient(&map, &feats, w.as_ref()).unwrap();
            assert!(grad.norm_l2() > 1e-6, "{name}: trivial gradient");
            let f = |m: &KnownMap| {
                let fe = prob.features(std::slice::from_ref(m)).unwrap();
                prob.objective(&fe, w.as_ref()).unwrap()
            };
            check_directional(&map, &grad, f, name);
        }
    }
}

#[test]
fn reduced_objective_gradient_is_the_envelope_gradient() {
    let data = common::multilabel(30, 3, 5, 3);
    let prob = LabelProblem::new(&data, 0.5).unwrap();
    for (name, map) in maps_for(&data) {
        let (_, w, feats) = prob.reduced(&map).unwrap();
        let grad = prob.gradient(&map, &feats, w.as_ref()).unwrap();
        let g = |m: &KnownMap| prob.reduced(m).unwrap().0;
        check_directional(&map, &grad, g, name);
    }
}

#[test]
fn general_objective_gradients_match_finite_differences() {
    let (omega, x, y, _) = common::completion(14, 11, 3, 0.5, 4);
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let row_maps = [
        MapSpec::fourier(4, 0.4).build(&x, &mut seeded(5)).unwrap(),
        MapSpec::nystrom(6, 0.4).build(&x, &mut seeded(6)).unwrap(),
    ];
    let col_maps = [
        MapSpec::nystrom(5, 0.3).build(&y, &mut seeded(7)).unwrap(),
        MapSpec::fourier(3, 0.3).build(&y, &mut seeded(8)).unwrap(),
    ];
    for (rm, cm) in row_maps.iter().zip(&col_maps) {
        let k = 2;
        let w = gaussian_mat(&mut seeded(10), rm.output_dim(), k, 0.5);
        let h = gaussian_mat(&mut seeded(11), cm.output_dim(), k, 0.5);
        let model =
            CompletionModel::new(rm.clone(), cm.clone(), w.clone(), h.clone(), 0.3).unwrap();
        let (du, dv) = model.gradients(&data).unwrap();
        assert!(du.norm_l2() > 1e-6 && dv.norm_l2() > 1e-6);
        let f_rows = |m: &KnownMap| {
            CompletionModel::new(m.clone(), cm.clone(), w.clone(), h.clone(), 0.3)
                .unwrap()
                .objective(&data)
                .unwrap()
        };
        check_directional(rm, &du, f_rows, rm.kind_name());
        let f_cols = |m: &KnownMap| {
            CompletionModel::new(rm.clone(), m.clone(), w.clone(), h.clone(), 0.3)
                .unwrap()
                .objective(&data)
                .unwrap()
        };
        check_directional(cm, &dv, f_cols, cm.kind_name());
    }
}
