//! The memory estimates of every fit: what they count and that they refuse a budget too small.

use gimc::NoObserver;
use gimc_featmap::{FourierFamily, NystromFamily};
use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sprs::TriMat;
use gimc_linalg::{FeatureMatrix, Observed};

use gimc::{
    CompletionData, CompletionInputs, CompletionParams, GimcError, LabelData, MccParams,
    SelectionParams, SemiSupInputs, SemiSupParams, estimate_completion_family, estimate_mccc,
    estimate_selection, estimate_semisupervised, fit_completion, fit_mccc, fit_semisupervised,
    select_and_fit,
};

fn x(n: usize, d: usize) -> FeatureMatrix {
    FeatureMatrix::dense(gaussian_mat(&mut seeded(1), n, d, 1.0)).unwrap()
}

fn labels(n: usize, d: usize, l: usize) -> LabelData {
    let mut t = TriMat::new((n, l));
    for i in 0..n {
        t.add_triplet(i, (3 * i) % l, 1.0);
    }
    LabelData::multi_label(x(n, d), t.to_csr()).unwrap()
}

fn refused(e: GimcError, parameter: &str) {
    match e {
        GimcError::InsufficientMemory(m) => {
            assert_eq!(m.parameter, parameter);
            assert_eq!(m.available, 1000);
            assert!(m.needed > 1000);
            let msg = m.to_string();
            assert!(
                msg.contains("1000 B available") && msg.contains(parameter),
                "{msg}"
            );
        }
        other => panic!("expected InsufficientMemory, got {other:?}"),
    }
}

#[test]
fn selection_estimate_is_monotone_and_refuses() {
    let est = |n: usize, m: usize, fam: &dyn Fn(&SelectionParams, &LabelData) -> u64| {
        let p = SelectionParams::default().with_ms(vec![m]);
        fam(&p, &labels(n, 5, 4))
    };
    let fourier = |p: &SelectionParams, d: &LabelData| {
        estimate_selection(d, &FourierFamily, p).unwrap().bytes
    };
    let nystrom = |p: &SelectionParams, d: &LabelData| {
        estimate_selection(d, &NystromFamily::default(), p)
            .unwrap()
            .bytes
    };
    for f in [&fourier as &dyn Fn(&_, &_) -> u64, &nystrom] {
        assert!(est(100, 20, f) < est(100, 40, f));
        assert!(est(100, 20, f) < est(200, 20, f));
    }
    // the grid's largest m decides; Fourier (D = 2m) needs more than Nyström (D = m)
    let data = labels(100, 5, 4);
    let grid = SelectionParams::default().with_ms(vec![10, 80, 20]);
    let one = SelectionParams::default().with_ms(vec![80]);
    assert_eq!(
        estimate_selection(&data, &FourierFamily, &grid)
            .unwrap()
            .bytes,
        estimate_selection(&data, &FourierFamily, &one)
            .unwrap()
            .bytes
    );
    assert!(est(100, 40, &fourier) > est(100, 40, &nystrom));
    // 1211 rows at m = 3e6 (D = 6e6): Φ is 54.1 GiB, but ΦᵀΦ (D × D) alone is 288 TB
    let big = SelectionParams::default().with_ms(vec![3_000_000]);
    let b = estimate_selection(&labels(1211, 5, 4), &FourierFamily, &big)
        .unwrap()
        .bytes;
    assert!(
        b > 2 * 288_000_000_000_000 && b < 1_000_000_000_000_000,
        "{b}"
    );
    let p = SelectionParams::default().with_memory(MemoryBudget::Bytes(1000));
    refused(
        select_and_fit(&data, &FourierFamily, &p.check().unwrap(), &mut NoObserver).unwrap_err(),
        "m",
    );
    let p = SelectionParams::default()
        .with_ms(vec![5])
        .with_memory(MemoryBudget::Bytes(1 << 40))
        .with_max_iter(1);
    assert!(select_and_fit(&data, &FourierFamily, &p.check().unwrap(), &mut NoObserver).is_ok());
}

fn omega(n: usize, per_row: usize) -> Observed {
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for k in 0..per_row {
            r.push(i);
            c.push((i + 7 * k) % n);
            v.push(((i + k) % 3) as f64);
        }
    }
    Observed::from_triplets(n, n, &r, &c, &v).unwrap()
}

#[test]
fn completion_estimate_is_monotone_and_refuses() {
    let est = |n: usize, m: usize| {
        let (x, om) = (x(n, 4), omega(n, 3));
        let data = CompletionData::new(&om, &x, &x).unwrap();
        estimate_completion_family(&data, &FourierFamily, m, &CompletionParams::default())
            .unwrap()
            .bytes
    };
    assert!(est(50, 20) < est(50, 40));
    assert!(est(50, 20) < est(100, 20));
    let (xx, om) = (x(30, 4), omega(30, 3));
    let data = CompletionData::new(&om, &xx, &xx).unwrap();
    let map = || {
        use gimc_featmap::MapFamily;
        FourierFamily.build(&xx, 10, 0.5, &mut seeded(2)).unwrap()
    };
    let p = CompletionParams::default()
        .with_rank(2)
        .with_memory(MemoryBudget::Bytes(1000));
    let e = fit_completion(
        CompletionInputs {
            data,
            row_map: map(),
            col_map: map(),
        },
        &p.check().unwrap(),
        &mut seeded(3),
        &mut gimc::NoObserver,
    )
    .unwrap_err();
    refused(e, "m");
}

fn pairs(n: usize) -> Vec<(usize, usize, f64)> {
    (0..n)
        .map(|i| (i, (i + 1) % n, f64::from(u8::from(i % 2 == 0))))
        .collect()
}

#[test]
fn clustering_estimates_are_monotone_and_refuse() {
    let semi = |n: usize, m: usize| {
        estimate_semisupervised(&x(n, 4), n, &FourierFamily, &SemiSupParams::new(3, m, 0.5))
            .unwrap()
            .bytes
    };
    assert!(semi(60, 20) < semi(60, 40));
    assert!(semi(60, 20) < semi(120, 20));
    let mut p = SemiSupParams::new(3, 20, 0.5);
    p.completion.memory = MemoryBudget::Bytes(1000);
    let e = fit_semisupervised(
        SemiSupInputs {
            x: &x(60, 4),
            pairs: &pairs(60),
            family: &FourierFamily,
        },
        &p.check().unwrap(),
        &mut seeded(1),
        &mut NoObserver,
    )
    .unwrap_err();
    refused(e, "m");
    let mccc = |n: usize, k: usize| estimate_mccc(&x(n, 8), n, &MccParams::new(k)).bytes;
    assert!(mccc(60, 2) < mccc(60, 4));
    assert!(mccc(60, 2) < mccc(120, 2));
    let mut p = MccParams::new(2);
    p.memory = MemoryBudget::Bytes(1000);
    let e = fit_mccc(&x(60, 8), &pairs(60), &p.check().unwrap(), &mut seeded(1)).unwrap_err();
    refused(e, "rank");
}
