//! Backward passes against central finite differences of ⟨G, φ_U(X)⟩ for every learnable map,
//! on dense and sparse input, every parameter checked.

use gimc_featmap::conformance::{BackwardConfig, check_backward};
use gimc_featmap::{
    FeatureMap, LearnableMap, Nystrom, NystromNorm, NystromParams, RandomFourier,
    RandomFourierParams,
};
use gimc_linalg::dense::frob_dot;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{child, gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};
use proptest::prelude::*;

use crate::common::{GAMMA, data_pair, learnable_maps};

fn all_params() -> BackwardConfig {
    BackwardConfig {
        max_params: usize::MAX,
        ..BackwardConfig::default()
    }
}

#[test]
fn every_learnable_map_matches_finite_differences_dense_and_sparse() {
    let (dense, sparse) = data_pair(31, 25, 5, 0.5);
    let base = seeded(32);
    for (s, x) in [&dense, &sparse].into_iter().enumerate() {
        for (name, mut map) in learnable_maps(&dense, 4, &mut seeded(33)) {
            let rep =
                check_backward(&mut map, x, &mut child(&base, s as u64), &all_params()).unwrap();
            let fd = rep.get("backward matches finite differences").unwrap();
            println!(
                "{name} ({}): {}",
                if s == 0 { "dense" } else { "sparse" },
                fd.detail
            );
            assert!(rep.passed(), "{name}\n{rep}");
            assert!(fd.value < 1e-7, "{name}: {}", fd.value);
        }
    }
}

/// DESIGN §3.1's learned-Nyström gradient written out literally, for M = I:
/// ∂f/∂u_r = 2γ (Σ_i H_ir x_i − u_r Σ_i H_ir), H = G ∘ C.
#[test]
fn learned_nystrom_gradient_is_the_design_formula() {
    let (dense, sparse) = data_pair(34, 15, 4, 0.6);
    let x = dense.to_dense();
    let gamma = 0.9;
    let u = gaussian_mat(&mut seeded(35), 3, 4, 0.5);
    let map =
        Nystrom::from_landmarks(Kernel::Rbf { gamma }, u.clone(), NystromNorm::Identity).unwrap();
    let g = gaussian_mat(&mut seeded(36), 15, 3, 1.0);
    let c = map.forward(&dense).unwrap();
    let h = Mat::from_fn(15, 3, |i, r| g[(i, r)] * c[(i, r)]);
    let expect = Mat::from_fn(3, 4, |r, j| {
        let hx: f64 = (0..15).map(|i| h[(i, r)] * x[(i, j)]).sum();
        let hs: f64 = (0..15).map(|i| h[(i, r)]).sum();
        2.0 * gamma * (hx - u[(r, j)] * hs)
    });
    for xx in [&dense, &sparse] {
        let got = map.backward(xx, g.as_ref()).unwrap();
        assert!((&got - &expect).norm_max() < 1e-12);
    }
}

/// f(U) = ⟨G, φ_U(X)⟩.
fn objective(map: &dyn LearnableMap, x: &FeatureMatrix, g: &Mat<f64>) -> f64 {
    frob_dot(g.as_ref(), map.forward(x).unwrap().as_ref()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A gradient step along −backward decreases ⟨G, φ⟩ for a small enough step, as the Armijo
    /// search of GIMC relies on: f(U − ηg) ≤ f(U) − σ η ‖g‖² for some η in a halving sequence.
    #[test]
    fn armijo_step_along_backward_decreases(seed in 0u64..500, n in 3usize..20, d in 1usize..6, m in 1usize..5) {
        let (dense, _) = data_pair(seed, n, d, 0.5);
        let g = gaussian_mat(&mut seeded(seed + 1), n, 2 * m, 1.0);
        let mut rff = RandomFourier::new(d, &RandomFourierParams::new(m, GAMMA).check().unwrap(), &mut seeded(seed + 2)).unwrap();
        let grad = rff.backward(&dense, g.as_ref()).unwrap();
        let gn2 = grad.squared_norm_l2();
        prop_assume!(gn2 > 1e-12);
        let f0 = objective(&rff, &dense, &g);
        let u0 = rff.params().to_owned();
        let mut accepted = false;
        let mut eta = 1.0;
        for _ in 0..40 {
            rff.set_params(u0.clone()).unwrap();
            rff.step(grad.as_ref(), eta).unwrap();
            if objective(&rff, &dense, &g) <= f0 - 1e-4 * eta * gn2 {
                accepted = true;
                break;
            }
            eta *= 0.5;
        }
        prop_assert!(accepted);
    }

    /// Nyström backward matches finite differences on random shapes (RBF, non-identity M).
    #[test]
    fn nystrom_backward_random_shapes(seed in 0u64..500, n in 4usize..20, d in 1usize..6, m in 1usize..4) {
        let (dense, sparse) = data_pair(seed, n, d, 0.5);
        let params = NystromParams::new(m, Kernel::Rbf { gamma: GAMMA }).check().unwrap();
        let mut map = Nystrom::fit(&sparse, &params, &mut seeded(seed + 3)).unwrap();
        for x in [&dense, &sparse] {
            let rep = check_backward(&mut map, x, &mut seeded(seed + 4), &all_params()).unwrap();
            prop_assert!(rep.passed(), "{}", rep);
        }
    }
}
