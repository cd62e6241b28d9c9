//! Small synthetic problems shared by the tests.

use gimc::{LabelData, LabelFit, LabelParams, NoObserver, fit_labels};
use gimc_featmap::LearnableMap;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sprs::TriMat;
use gimc_linalg::{FeatureMatrix, Observed};
use rand::Rng;

/// Multi-label data with a nonlinear rule: label j is on when sin(x·v_j) > 0.3 (and row i always
/// has label i mod L, so no row is empty).
pub fn multilabel(n: usize, d: usize, l: usize, seed: u64) -> LabelData {
    let x = gaussian_mat(&mut seeded(seed), n, d, 1.0);
    let v = gaussian_mat(&mut seeded(seed + 1000), d, l, 1.0);
    let s = &x * &v;
    let mut t = TriMat::new((n, l));
    for i in 0..n {
        for j in 0..l {
            if s[(i, j)].sin() > 0.3 || j == i % l {
                t.add_triplet(i, j, 1.0);
            }
        }
    }
    LabelData::multi_label(FeatureMatrix::dense(x).unwrap(), t.to_csr()).unwrap()
}

/// The same rule with sparse features (about half the entries zeroed).
pub fn multilabel_sparse(n: usize, d: usize, l: usize, seed: u64) -> LabelData {
    let dense = multilabel(n, d, l, seed);
    let mut rng = seeded(seed + 7);
    let x = dense.features().to_dense();
    let mut t = TriMat::new((n, d));
    for i in 0..n {
        for j in 0..d {
            if rng.random_bool(0.5) {
                t.add_triplet(i, j, x[(i, j)]);
            }
        }
    }
    LabelData::multi_label(
        FeatureMatrix::sparse(t.to_csr()).unwrap(),
        dense.labels().clone(),
    )
    .unwrap()
}

/// Multi-class data: the class is the arg max of a nonlinear score.
pub fn multiclass(n: usize, d: usize, c: usize, seed: u64) -> LabelData {
    let x = gaussian_mat(&mut seeded(seed), n, d, 1.0);
    let v = gaussian_mat(&mut seeded(seed + 1000), d, c, 1.5);
    let s = &x * &v;
    let classes: Vec<usize> = (0..n)
        .map(|i| {
            (0..c)
                .max_by(|&a, &b| s[(i, a)].cos().total_cmp(&s[(i, b)].cos()))
                .unwrap()
        })
        .collect();
    LabelData::multi_class(FeatureMatrix::dense(x).unwrap(), &classes, c).unwrap()
}

/// A completion problem A = tanh(X M Yᵀ) on a random fraction `frac` of the entries.
pub fn completion(
    nx: usize,
    ny: usize,
    d: usize,
    frac: f64,
    seed: u64,
) -> (Observed, FeatureMatrix, FeatureMatrix, Mat<f64>) {
    let x = gaussian_mat(&mut seeded(seed), nx, d, 1.0);
    let y = gaussian_mat(&mut seeded(seed + 1), ny, d, 1.0);
    let m = gaussian_mat(&mut seeded(seed + 2), d, d, 0.5);
    let full = Mat::from_fn(nx, ny, |i, j| {
        let mut s = 0.0;
        for a in 0..d {
            for b in 0..d {
                s += x[(i, a)] * m[(a, b)] * y[(j, b)];
            }
        }
        s.tanh()
    });
    let mut rng = seeded(seed + 3);
    let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
    for i in 0..nx {
        for j in 0..ny {
            if rng.random_bool(frac) {
                r.push(i);
                c.push(j);
                v.push(full[(i, j)]);
            }
        }
    }
    let omega = Observed::from_triplets(nx, ny, &r, &c, &v).unwrap();
    (
        omega,
        FeatureMatrix::dense(x).unwrap(),
        FeatureMatrix::dense(y).unwrap(),
        full,
    )
}

/// [`fit_labels`] with `params` checked and no observer.
pub fn fit_checked<M: LearnableMap>(
    data: &LabelData,
    map: M,
    params: &LabelParams,
    validation: Option<&LabelData>,
) -> gimc::Result<LabelFit<M>> {
    fit_labels(
        data,
        map,
        &params.check().unwrap(),
        validation,
        &mut NoObserver,
    )
}
