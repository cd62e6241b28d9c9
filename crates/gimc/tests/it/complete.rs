//! General completion through the one entry point, `gimc::complete`: method names, the sides
//! each method takes, and PU-IMC's selection of λ and ρ by held-out AUC.

use gimc::{
    Completed, CompletionMethod, CompletionSelectionParams, FactorSelection, GimcError,
    MapRegistry, ObservedMatrix, complete,
};
use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{NoObserver, Side};

use crate::planted_pu::{features, planted_pu};

#[test]
fn method_names_parse_and_print_back() {
    let registry = MapRegistry::builtin();
    for name in [
        "mc-als",
        "imc",
        "mc-nuclear",
        "imc-nuclear",
        "pu-imc",
        "bilinear",
        "gimc-lff",
        "imc-lnys",
    ] {
        let m = CompletionMethod::parse(name, &registry).unwrap();
        assert_eq!(m.name(), name);
    }
    // the paper's names are the fixed-map methods
    let rff = CompletionMethod::parse("imc-rff", &registry).unwrap();
    assert_eq!(
        rff,
        CompletionMethod::Maps {
            family: "lff".into(),
            learn: false
        }
    );
    let err = CompletionMethod::parse("svd", &registry)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown method `svd`") && err.contains("mc-als") && err.contains("gimc-lff"),
        "{err}"
    );
}

#[test]
fn each_method_refuses_the_sides_it_does_not_take() {
    let registry = MapRegistry::builtin();
    let x = features(&mut seeded(1), 6);
    let omega = Observed::from_triplets(6, 6, &[0, 1, 2], &[0, 1, 2], &[1.0, 2.0, 3.0]).unwrap();
    let params = CompletionSelectionParams::default().check().unwrap();
    let run = |name: &str, phi, psi| {
        let m = CompletionMethod::parse(name, &registry).unwrap();
        complete(
            &m,
            ObservedMatrix {
                phi,
                psi,
                omega: &omega,
            },
            &params,
            &registry,
            &mut NoObserver,
        )
        .err()
        .map(|e| e.to_string())
    };
    let (id, feat) = (Side::Identity(6), Side::Features(&x));
    assert!(
        run("mc-als", feat, id)
            .unwrap()
            .contains("takes no features; use imc")
    );
    assert!(
        run("mc-nuclear", id, feat)
            .unwrap()
            .contains("use imc-nuclear")
    );
    assert!(
        run("imc-nuclear", id, id)
            .unwrap()
            .contains("needs row and/or column features")
    );
    assert!(
        run("gimc-lff", feat, id)
            .unwrap()
            .contains("needs row and column features")
    );
    assert!(
        run("bilinear", id, feat)
            .unwrap()
            .contains("needs row and column features")
    );
}

/// Bilinear regression recovers a planted rank-2 Z from every entry of T = X Z Yᵀ, and its
/// factors predict T; a λ grid is refused (it has no λ).
#[test]
fn bilinear_regression_recovers_a_fully_observed_low_rank_matrix() {
    let registry = MapRegistry::builtin();
    let (n, m, d) = (30, 20, 5);
    let x = gaussian_mat(&mut seeded(2), n, d, 1.0);
    let y = gaussian_mat(&mut seeded(3), m, d, 1.0);
    let z = &gaussian_mat(&mut seeded(4), d, 2, 1.0)
        * gaussian_mat(&mut seeded(5), d, 2, 1.0).transpose();
    let t = &x * &z * y.transpose();
    let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
    for i in 0..n {
        for j in 0..m {
            r.push(i);
            c.push(j);
            v.push(t[(i, j)]);
        }
    }
    let omega = Observed::from_triplets(n, m, &r, &c, &v).unwrap();
    let (fx, fy) = (
        FeatureMatrix::dense(x).unwrap(),
        FeatureMatrix::dense(y).unwrap(),
    );
    let method = CompletionMethod::parse("bilinear", &registry).unwrap();
    let matrix = ObservedMatrix {
        phi: Side::Features(&fx),
        psi: Side::Features(&fy),
        omega: &omega,
    };
    let params = CompletionSelectionParams::default()
        .with_rank(2)
        .check()
        .unwrap();
    let Completed::Factors(fit) =
        complete(&method, matrix, &params, &registry, &mut NoObserver).unwrap()
    else {
        panic!("bilinear is a factor method")
    };
    assert_eq!(fit.model.rank(), 2);
    let entries: Vec<(usize, usize)> = r.iter().copied().zip(c.iter().copied()).collect();
    let pred = fit
        .model
        .predict_entries(matrix.phi, matrix.psi, &entries)
        .unwrap();
    let worst = pred
        .iter()
        .zip(&v)
        .map(|(p, t)| (p - t).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-8, "largest error {worst}");
    let grid = CompletionSelectionParams::default()
        .with_rank(2)
        .with_lambdas(vec![0.1, 1.0])
        .check()
        .unwrap();
    let err = complete(&method, matrix, &grid, &registry, &mut NoObserver).unwrap_err();
    assert!(err.to_string().contains("no λ"), "{err}");
    // the densified sides are sized before they are formed
    let small = CompletionSelectionParams::default()
        .with_rank(2)
        .with_memory(MemoryBudget::Bytes(10_000))
        .check()
        .unwrap();
    assert!(matches!(
        complete(&method, matrix, &small, &registry, &mut NoObserver),
        Err(GimcError::InsufficientMemory(_))
    ));
}

#[test]
fn pu_selection_chooses_lambda_and_rho_by_held_out_auc() {
    let n = 80;
    let planted = planted_pu(&mut seeded(22), n, 0.5);
    let (phi, psi) = (Side::Features(&planted.x), Side::Features(&planted.y));
    let (lambdas, rhos) = ([0.01, 1.0], [0.1, 0.5, 0.9]);
    let registry = MapRegistry::builtin();
    let pu = CompletionMethod::parse("pu-imc", &registry).unwrap();
    let select = |lambdas: &[f64], rhos: &[f64]| -> gimc::Result<FactorSelection> {
        let params = CompletionSelectionParams::default()
            .with_lambdas(lambdas.to_vec())
            .with_rhos(rhos.to_vec())
            .with_holdout(0.2)
            .with_rank(4)
            .with_max_iter(20)
            .with_seed(5)
            .check()?;
        match complete(
            &pu,
            ObservedMatrix {
                phi,
                psi,
                omega: &planted.positives,
            },
            &params,
            &registry,
            &mut NoObserver,
        )? {
            Completed::Factors(f) => Ok(f),
            Completed::Maps(_) => panic!("pu-imc is a factor method"),
        }
    };
    let sel = select(&lambdas, &rhos).unwrap();
    // every pair scored, λ fastest; the chosen pair is the first best
    assert_eq!(sel.scores.len(), 6);
    assert_eq!((sel.scores[1].lambda, sel.scores[1].rho), (1.0, Some(0.1)));
    let best = sel
        .scores
        .iter()
        .map(|s| (s.lambda, s.rho.unwrap(), s.score))
        .fold(None::<(f64, f64, f64)>, |b, p| match b {
            Some(b) if b.2 >= p.2 => Some(b),
            _ => Some(p),
        })
        .unwrap();
    assert_eq!((sel.lambda, sel.rho), (best.0, Some(best.1)));
    assert!(best.2 > 0.8, "held-out AUC {}", best.2);
    // the refit ranks the positives never observed above the true negatives
    let s = sel.model.scores_for_rows(phi, psi).unwrap();
    let (mut hidden, mut negatives) = (vec![], vec![]);
    for i in 0..n {
        for j in 0..n {
            if !planted.truth[i * n + j] {
                negatives.push(s[(i, j)]);
            } else if planted.hidden(i, j) {
                hidden.push(s[(i, j)]);
            }
        }
    }
    let test_auc = gimc_metrics::roc_auc(&hidden, &negatives).unwrap();
    assert!(test_auc > 0.8, "test AUC {test_auc}");
    // one pair: fitted directly, nothing scored
    let one = select(&[0.1], &[0.3]).unwrap();
    assert!(one.scores.is_empty());
    assert_eq!((one.lambda, one.rho), (0.1, Some(0.3)));
    // bad grids are errors
    assert!(select(&[0.1], &[]).is_err());
    assert!(select(&[0.1, 1.0], &[1.0]).is_err());
}
