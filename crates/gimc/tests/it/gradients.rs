//! Gradients against central finite differences (DESIGN §3.3): the multi-label objective and
//! the reduced (variable-projection) objective w.r.t. U for learned Fourier and Nyström maps,
//! and the general objective w.r.t. U and V.

use gimc::labels::LabelProblem;
use gimc::{
    AnyMap, BoxedMap, CompletionData, CompletionModel, CompletionParts, LabelData, MapRegistry,
};
use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::frob_dot;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};

use crate::common;

const H: f64 = 1e-5;

/// Checks ⟨∇f, E⟩ against (f(U + hE) − f(U − hE)) / 2h for a few random directions E and a
/// few coordinate directions. The map is moved to U ± hE and restored (maps are not `Clone`).
fn check_directional(
    map: &mut BoxedMap,
    grad: &Mat<f64>,
    f: impl Fn(&BoxedMap) -> f64,
    what: &str,
) {
    let u = map.params().to_owned();
    let shape = u.shape();
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
        map.step(e.as_ref(), -H).unwrap();
        let f_plus = f(map);
        map.set_params(u.clone()).unwrap();
        map.step(e.as_ref(), H).unwrap();
        let f_minus = f(map);
        map.set_params(u.clone()).unwrap();
        let fd = (f_plus - f_minus) / (2.0 * H);
        let an = frob_dot(grad.as_ref(), e.as_ref()).unwrap();
        let tol = 1e-6 * an.abs().max(1.0);
        assert!(
            (fd - an).abs() <= tol,
            "{what}: finite difference {fd} vs analytic {an}"
        );
    }
}

/// A map of the registered family `name`.
fn build(name: &str, x: &FeatureMatrix, m: usize, gamma: f64, seed: u64) -> BoxedMap {
    MapRegistry::builtin()
        .family(name)
        .unwrap()
        .build(x, m, gamma, &mut seeded(seed))
        .unwrap()
}

fn maps_for(data: &LabelData) -> Vec<(&'static str, BoxedMap)> {
    let x = data.features();
    vec![
        ("lff", build("lff", x, 4, 0.3, 1)),
        ("lnys (M = I)", build("lnys", x, 5, 0.3, 2)),
        (
            "nystrom (M fixed, normalised)",
            build("nys-whiten", x, 5, 0.3, 3),
        ),
        ("lff-phase", build("lff-phase", x, 4, 0.3, 4)),
    ]
}

#[test]
fn multilabel_objective_gradient_matches_finite_differences() {
    for data in [
        common::multilabel(25, 3, 4, 1),
        common::multilabel_sparse(25, 3, 4, 2),
    ] {
        let prob = LabelProblem::new(&data, 0.7).unwrap();
        for (name, mut map) in maps_for(&data) {
            let feats = prob.features(std::slice::from_ref(&map)).unwrap();
            let w = gaussian_mat(&mut seeded(9), feats.dim(), data.n_labels(), 0.5);
            let grad = prob.gradient(&map, &feats, w.as_ref()).unwrap();
            assert!(grad.norm_l2() > 1e-6, "{name}: trivial gradient");
            let f = |m: &BoxedMap| {
                let fe = prob.features(std::slice::from_ref(m)).unwrap();
                prob.objective(&fe, w.as_ref()).unwrap()
            };
            check_directional(&mut map, &grad, f, name);
        }
    }
}

#[test]
fn reduced_objective_gradient_is_the_envelope_gradient() {
    let data = common::multilabel(30, 3, 5, 3);
    let prob = LabelProblem::new(&data, 0.5).unwrap();
    for (name, mut map) in maps_for(&data) {
        let (_, w, feats) = prob.reduced(&map).unwrap();
        let grad = prob.gradient(&map, &feats, w.as_ref()).unwrap();
        let g = |m: &BoxedMap| prob.reduced(m).unwrap().0;
        check_directional(&mut map, &grad, g, name);
    }
}

#[test]
fn general_objective_gradients_match_finite_differences() {
    let (omega, x, y, _) = common::completion(14, 11, 3, 0.5, 4);
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let row_maps = [build("lff", &x, 4, 0.4, 5), build("lnys", &x, 6, 0.4, 6)];
    let col_maps = [build("lnys", &y, 5, 0.3, 7), build("lff", &y, 3, 0.3, 8)];
    for (rm, cm) in row_maps.into_iter().zip(col_maps) {
        let k = 2;
        let w = gaussian_mat(&mut seeded(10), rm.output_dim(), k, 0.5);
        let h = gaussian_mat(&mut seeded(11), cm.output_dim(), k, 0.5);
        let model = CompletionModel::new(CompletionParts {
            row_map: rm,
            col_map: cm,
            w: w.clone(),
            h: h.clone(),
            lambda: 0.3,
        })
        .unwrap();
        let (du, dv) = model.gradients(&data).unwrap();
        let (mut rm, mut cm) = model.into_maps();
        assert!(du.norm_l2() > 1e-6 && dv.norm_l2() > 1e-6);
        let (rkind, ckind) = (rm.kind().to_string(), cm.kind().to_string());
        // the objective with W and H held, as a function of the maps
        let objective = |row_map: &BoxedMap, col_map: &BoxedMap| {
            CompletionModel::new(CompletionParts {
                row_map,
                col_map,
                w: w.clone(),
                h: h.clone(),
                lambda: 0.3,
            })
            .unwrap()
            .objective(&data)
            .unwrap()
        };
        check_directional(&mut rm, &du, |m: &BoxedMap| objective(m, &cm), &rkind);
        check_directional(&mut cm, &dv, |m: &BoxedMap| objective(&rm, m), &ckind);
    }
}
