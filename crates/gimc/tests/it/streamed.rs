//! The streamed fast path (Φ in row blocks, never whole) gives the whole-Φ sums, gradient and
//! fit up to rounding, for every built-in map family (a factored Nyström map included), dense
//! and sparse X, and f32 block products stay close to f64.

use gimc::labels::LabelProblem;
use gimc::{LabelParams, MapRegistry, NoObserver, Precision, Storage};
use gimc_featmap::{FeatureMap, FourierFamily, MapFamily};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};

use crate::common;

fn rel(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2().max(1e-300)
}

fn streamed(block_rows: usize, precision: Precision) -> Storage {
    Storage::Streamed {
        block_rows,
        precision,
    }
}

#[test]
fn streamed_sums_and_gradient_equal_the_whole_ones() {
    let registry = MapRegistry::builtin();
    for sparse in [false, true] {
        let data = if sparse {
            common::multilabel_sparse(53, 9, 6, 5)
        } else {
            common::multilabel(53, 4, 6, 5)
        };
        // lff learns Fourier directions; lnys is factored (Φ = C·M, sums in C's space)
        for (name, m) in [("lff", 7), ("lnys", 8), ("nys-whiten", 6), ("lff-phase", 5)] {
            let map = registry
                .family(name)
                .unwrap()
                .build(data.features(), m, 0.4, &mut seeded(9))
                .unwrap();
            let whole = LabelProblem::new(&data, 0.5).unwrap();
            let fw = whole.features(std::slice::from_ref(&map)).unwrap();
            let w = gaussian_mat(&mut seeded(3), map.output_dim(), data.n_labels(), 0.5);
            let gw = whole.gradient(&map, &fw, w.as_ref()).unwrap();
            // blocks of 1, 7 (last one short) and more rows than there are
            for block in [1, 7, 500] {
                let prob = LabelProblem::new(&data, 0.5)
                    .unwrap()
                    .with_storage(streamed(block, Precision::F64));
                let fs = prob.features(std::slice::from_ref(&map)).unwrap();
                assert!(fs.is_streamed() && fs.phi().is_err());
                let what = format!("{name}, sparse {sparse}, block {block}");
                assert!(
                    rel(&fs.gram().to_owned(), &fw.gram().to_owned()) < 1e-12,
                    "{what}"
                );
                assert!(
                    rel(&fs.cross().to_owned(), &fw.cross().to_owned()) < 1e-12,
                    "{what}"
                );
                let fo = prob.objective(&fs, w.as_ref()).unwrap();
                let wo = whole.objective(&fw, w.as_ref()).unwrap();
                assert!((fo - wo).abs() < 1e-10 * wo.abs(), "{what}: {fo} vs {wo}");
                let gs = prob.gradient(&map, &fs, w.as_ref()).unwrap();
                assert!(rel(&gs, &gw) < 1e-10, "{what}: gradient {}", rel(&gs, &gw));
            }
        }
    }
}

#[test]
fn streamed_gradient_in_the_blocked_form_when_labels_are_few() {
    // 2L < D: G_B = (Φ_BW − A_B)Wᵀ instead of the Gram form
    let data = common::multilabel_sparse(37, 6, 2, 8);
    let map = FourierFamily
        .build(data.features(), 20, 0.4, &mut seeded(1))
        .unwrap();
    assert!(2 * data.n_labels() < map.output_dim());
    let w = gaussian_mat(&mut seeded(5), map.output_dim(), 2, 0.5);
    let whole = LabelProblem::new(&data, 0.2).unwrap();
    let gw = whole
        .gradient(
            &map,
            &whole.features(std::slice::from_ref(&map)).unwrap(),
            w.as_ref(),
        )
        .unwrap();
    for precision in [Precision::F64, Precision::F32] {
        let prob = LabelProblem::new(&data, 0.2)
            .unwrap()
            .with_storage(streamed(5, precision));
        let fs = prob.features(std::slice::from_ref(&map)).unwrap();
        let gs = prob.gradient(&map, &fs, w.as_ref()).unwrap();
        let tol = if precision == Precision::F64 {
            1e-10
        } else {
            1e-5
        };
        assert!(rel(&gs, &gw) < tol, "{precision:?}: {}", rel(&gs, &gw));
    }
}

#[test]
fn streamed_fit_is_the_whole_fit_and_f32_stays_close() {
    let data = common::multilabel(120, 5, 7, 17);
    let valid = common::multilabel(40, 5, 7, 18);
    let map = FourierFamily
        .build(data.features(), 12, 0.3, &mut seeded(2))
        .unwrap();
    let base = LabelParams::default().with_max_iter(5);
    let whole = common::fit_checked(&data, map.clone(), &base, Some(&valid)).unwrap();
    let params = base.clone().with_storage(streamed(16, Precision::F64));
    let st = common::fit_checked(&data, map.clone(), &params, Some(&valid)).unwrap();
    assert_eq!(st.history.len(), whole.history.len());
    for (a, b) in st.history.iter().zip(&whole.history) {
        assert!((a.objective - b.objective).abs() < 1e-9 * b.objective.abs());
        assert_eq!(a.validation, b.validation, "iteration {}", a.iteration);
        assert_eq!(a.train, b.train, "iteration {}", a.iteration);
    }
    assert!(rel(&st.model.w().to_owned(), &whole.model.w().to_owned()) < 1e-8);
    // f32 block products: a slightly perturbed problem, solved consistently
    let params = base.with_storage(streamed(16, Precision::F32));
    let s32 = common::fit_checked(&data, map, &params, Some(&valid)).unwrap();
    let (f32_last, f64_last) = (
        s32.history.last().unwrap().objective,
        whole.history.last().unwrap().objective,
    );
    assert!(
        (f32_last - f64_last).abs() < 1e-3 * f64_last.abs(),
        "{f32_last} vs {f64_last}"
    );
    let objs: Vec<f64> = s32.history.iter().map(|h| h.objective).collect();
    assert!(objs.windows(2).all(|p| p[1] <= p[0]), "{objs:?}");
}

/// Two pretend processes holding the same shard: every sum is twice the local value, so a
/// sharded fit with these sums must be the single-process fit of the shard stacked twice.
#[derive(Debug)]
struct TwoEqualShards;

impl gimc::labels::RowSums for TwoEqualShards {
    fn sum(&self, buf: &mut [f64]) {
        for v in buf.iter_mut() {
            *v *= 2.0;
        }
    }
    fn processes(&self) -> usize {
        2
    }

    fn rank(&self) -> usize {
        0
    }
}

#[test]
fn sharded_fit_is_the_fit_of_the_union_of_the_shards() {
    let data = common::multilabel(60, 5, 7, 21);
    let valid = common::multilabel(30, 5, 7, 22);
    let twice = |d: &gimc::LabelData| {
        let rows: Vec<usize> = (0..d.nrows()).chain(0..d.nrows()).collect();
        d.select_rows(&rows).unwrap()
    };
    let map = FourierFamily
        .build(data.features(), 9, 0.3, &mut seeded(4))
        .unwrap();
    for storage in [Storage::Whole, streamed(13, Precision::F64)] {
        let params = LabelParams::default()
            .with_max_iter(4)
            .with_storage(storage);
        let union =
            common::fit_checked(&twice(&data), map.clone(), &params, Some(&twice(&valid))).unwrap();
        let sharded = gimc::fit_labels_sharded(
            &data,
            map.clone(),
            &params.check().unwrap(),
            Some(&valid),
            &mut NoObserver,
            &TwoEqualShards,
        )
        .unwrap();
        assert_eq!(sharded.history.len(), union.history.len());
        // pooled means agree to rounding ((P@k · rows) summed, then divided)
        let close = |a: &Option<gimc::labels::Evaluation>, b: &Option<gimc::labels::Evaluation>| {
            let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
            a.precision.len() == b.precision.len()
                && a.precision
                    .iter()
                    .zip(&b.precision)
                    .all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() < 1e-12)
        };
        for (a, b) in sharded.history.iter().zip(&union.history) {
            assert!((a.objective - b.objective).abs() < 1e-9 * b.objective.abs());
            assert!(
                close(&a.validation, &b.validation),
                "iteration {}",
                a.iteration
            );
            assert!(close(&a.train, &b.train), "iteration {}", a.iteration);
        }
        assert_eq!(
            sharded.best.as_ref().map(|b| b.iteration),
            union.best.as_ref().map(|b| b.iteration)
        );
        assert!(rel(&sharded.model.w().to_owned(), &union.model.w().to_owned()) < 1e-8);
        // with the local sums only, the fit is another one (the test can fail)
        let alone = common::fit_checked(&data, map.clone(), &params, Some(&valid)).unwrap();
        assert!(rel(&alone.model.w().to_owned(), &union.model.w().to_owned()) > 1e-6);
    }
}
