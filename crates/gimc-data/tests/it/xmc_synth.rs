//! The XMC-scale generator (`gimc_data::synth_xmc`): the written file parses back with the
//! declared shape, per-row means match the request, feature and label frequencies are
//! heavy-tailed, labels depend on the features (a property independent labels would fail),
//! seeds are reproducible and bad parameters are errors.

use std::path::Path;

use gimc_data::synth_xmc::{PRESET_NAMES, XmcSynthParams, XmcSynthSummary, write_xmc_synth};
use gimc_data::{DataError, Dataset, FeatureMatrix, parse_xmc};
use gimc_linalg::rng::{GimcRng, seeded};
use gimc_linalg::sparse::AsSparseView;
use gimc_linalg::sprs::{CsMat, CsMatView};
use rand::Rng;

fn generate(params: &XmcSynthParams, seed: u64) -> (Vec<u8>, XmcSynthSummary) {
    let mut text = Vec::new();
    let summary = write_xmc_synth(&params.check().unwrap(), &mut seeded(seed), &mut text).unwrap();
    (text, summary)
}

fn parse(text: &[u8]) -> Dataset {
    parse_xmc(text, Path::new("synth.txt")).unwrap()
}

fn csr(ds: &Dataset) -> (CsMatView<'_, f64>, CsMatView<'_, f64>) {
    let FeatureMatrix::Sparse(x) = &ds.features else {
        panic!("XMC features are sparse")
    };
    (x.sparse_view(), ds.labels().unwrap().view())
}

/// eurlex-4k's shape and per-row means on `rows` rows.
fn eurlex(rows: usize) -> XmcSynthParams {
    XmcSynthParams::preset("eurlex-4k").unwrap().with_rows(rows)
}

/// Share of all non-zeros held by the most frequent `frac` of the columns.
fn top_share(m: CsMatView<'_, f64>, frac: f64) -> f64 {
    let mut counts = vec![0usize; m.cols()];
    for &j in m.indices() {
        counts[j] += 1;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let top = ((m.cols() as f64 * frac).ceil() as usize).max(1);
    counts[..top].iter().sum::<usize>() as f64 / m.nnz() as f64
}

/// Cosine similarity of rows `a` and `b` of a CSR matrix with sorted indices.
fn cosine(x: CsMatView<'_, f64>, a: usize, b: usize) -> f64 {
    let (ra, rb) = (x.outer_view(a).unwrap(), x.outer_view(b).unwrap());
    let (ia, va) = (ra.indices(), ra.data());
    let (ib, vb) = (rb.indices(), rb.data());
    let (mut p, mut q, mut d) = (0, 0, 0.0);
    while p < ia.len() && q < ib.len() {
        match ia[p].cmp(&ib[q]) {
            std::cmp::Ordering::Less => p += 1,
            std::cmp::Ordering::Greater => q += 1,
            std::cmp::Ordering::Equal => {
                d += va[p] * vb[q];
                p += 1;
                q += 1;
            }
        }
    }
    let na: f64 = va.iter().map(|v| v * v).sum::<f64>().sqrt();
    let nb: f64 = vb.iter().map(|v| v * v).sum::<f64>().sqrt();
    d / (na * nb)
}

/// Mean cosine of `pairs` random pairs of rows sharing a label, and of `pairs` random pairs.
fn pair_cosines(
    x: CsMatView<'_, f64>,
    y: CsMatView<'_, f64>,
    pairs: usize,
    rng: &mut GimcRng,
) -> (f64, f64) {
    // rows of each label (CSC of y)
    let yc = y.to_csc();
    let n = x.rows();
    let (mut shared, mut random) = (0.0, 0.0);
    let mut done = 0;
    while done < pairs {
        let i = rng.random_range(0..n);
        let labels = y.outer_view(i).unwrap();
        let l = labels.indices()[rng.random_range(0..labels.nnz())];
        let rows = yc.outer_view(l).unwrap();
        if rows.nnz() < 2 {
            continue;
        }
        let k = rows.indices()[rng.random_range(0..rows.nnz())];
        if k == i {
            continue;
        }
        shared += cosine(x, i, k);
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        random += cosine(x, a, b);
        done += 1;
    }
    (shared / pairs as f64, random / pairs as f64)
}

/// P@1 of nearest-centroid prediction (label centroids of the first `train` rows, cosine
/// scores) on the remaining rows, and of always predicting the most frequent training label.
fn centroid_p1(x: CsMatView<'_, f64>, y: CsMatView<'_, f64>, train: usize) -> (f64, f64) {
    let (d, l) = (x.cols(), y.cols());
    let mut centroids = vec![0.0; l * d];
    let mut freq = vec![0usize; l];
    for i in 0..train {
        let row = x.outer_view(i).unwrap();
        for &lab in y.outer_view(i).unwrap().indices() {
            freq[lab] += 1;
            for (&j, &v) in row.indices().iter().zip(row.data()) {
                centroids[lab * d + j] += v;
            }
        }
    }
    for c in centroids.chunks_mut(d) {
        let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm > 0.0 {
            c.iter_mut().for_each(|v| *v /= norm);
        }
    }
    let top = (0..l).max_by_key(|&k| freq[k]).unwrap();
    let (mut hits, mut base) = (0usize, 0usize);
    for i in train..x.rows() {
        let row = x.outer_view(i).unwrap();
        let score = |k: usize| -> f64 {
            let c = &centroids[k * d..][..d];
            row.indices()
                .iter()
                .zip(row.data())
                .map(|(&j, &v)| v * c[j])
                .sum()
        };
        let best = (0..l)
            .filter(|&k| freq[k] > 0)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap();
        let truth = y.outer_view(i).unwrap();
        hits += usize::from(truth.get(best).is_some());
        base += usize::from(truth.get(top).is_some());
    }
    let test = (x.rows() - train) as f64;
    (hits as f64 / test, base as f64 / test)
}

/// `ds` with its label rows shuffled across rows: the same label marginals, independent of
/// the features.
fn shuffle_labels(y: CsMatView<'_, f64>, rng: &mut GimcRng) -> CsMat<f64> {
    let mut order: Vec<usize> = (0..y.rows()).collect();
    rand::seq::SliceRandom::shuffle(order.as_mut_slice(), rng);
    let mut tri = gimc_linalg::sprs::TriMat::new((y.rows(), y.cols()));
    for (i, &src) in order.iter().enumerate() {
        for &l in y.outer_view(src).unwrap().indices() {
            tri.add_triplet(i, l, 1.0);
        }
    }
    tri.to_csr()
}

/// A small problem where 6,000 rows show the planted structure: 2,000 features, 200 labels.
fn small(rows: usize) -> XmcSynthParams {
    XmcSynthParams::default()
        .with_rows(rows)
        .with_features(2_000)
        .with_labels(200)
        .with_nnz_per_row(40.0)
        .with_labels_per_row(4.0)
}

/// The name of the parameter an error rejects.
fn rejected(e: DataError) -> &'static str {
    match e {
        DataError::InvalidParameter { name, .. } => name,
        other => panic!("expected an invalid parameter, got {other}"),
    }
}

#[test]
fn written_file_parses_back_with_the_declared_shape() {
    let params = eurlex(2_000);
    let (text, summary) = generate(&params, 1);
    assert!(text.starts_with(b"2000 5000 3993\n"));
    assert_eq!(summary.bytes, text.len() as u64);
    assert_eq!(
        (summary.rows, summary.features, summary.labels),
        (2_000, 5_000, 3_993)
    );
    let ds = parse(&text);
    let (x, y) = csr(&ds);
    assert_eq!((x.rows(), x.cols(), y.cols()), (2_000, 5_000, 3_993));
    assert_eq!((x.nnz(), y.nnz()), (summary.nnz, summary.label_nnz));
    assert_eq!(ds.summary().rows_without_label, Some(0));
    // positive tf-idf values, rows of unit norm (up to the 6 written decimals)
    assert!(x.data().iter().all(|&v| v > 0.0 && v <= 1.0));
    for row in x.outer_iterator() {
        assert!(row.nnz() >= 1);
        let norm = row.data().iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-5 * (row.nnz() as f64).sqrt(),
            "{norm}"
        );
    }
    assert_eq!(
        summary.mean_nnz_per_row,
        summary.nnz as f64 / summary.rows as f64
    );
}

#[test]
fn per_row_means_are_within_ten_percent_of_the_request() {
    let custom = XmcSynthParams::default()
        .with_rows(20_000)
        .with_features(30_000)
        .with_labels(3_000)
        .with_nnz_per_row(120.0)
        .with_labels_per_row(12.0);
    let amazon = XmcSynthParams::preset("amazoncat-13k")
        .unwrap()
        .with_rows(20_000);
    for params in [amazon, custom] {
        let (text, summary) = generate(&params, 2);
        let ds = parse(&text);
        let (x, y) = csr(&ds);
        let rows = params.rows as f64;
        for (what, got, parsed, want) in [
            (
                "nnz",
                summary.mean_nnz_per_row,
                x.nnz() as f64 / rows,
                params.nnz_per_row,
            ),
            (
                "labels",
                summary.mean_labels_per_row,
                y.nnz() as f64 / rows,
                params.labels_per_row,
            ),
        ] {
            assert_eq!(got, parsed, "{what}");
            assert!(
                (got / want - 1.0).abs() < 0.1,
                "{what} per row: {got} for {want} requested"
            );
        }
        // counts vary from row to row (Gamma-mixed), at least one of each
        let counts: Vec<usize> = x.outer_iterator().map(|r| r.nnz()).collect();
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(
            *lo >= 1 && *hi > 2 * params.nnz_per_row as usize,
            "{lo}..{hi}"
        );
        assert!(y.outer_iterator().all(|r| r.nnz() >= 1));
    }
}

#[test]
fn feature_and_label_frequencies_are_heavy_tailed() {
    let (text, _) = generate(&eurlex(4_000), 3);
    let ds = parse(&text);
    let (x, y) = csr(&ds);
    // the most frequent 1 % of the columns carry over ten times their uniform share
    let (f, l) = (top_share(x, 0.01), top_share(y, 0.01));
    assert!(
        f > 0.1 && l > 0.1,
        "top 1 %: features {f:.3}, labels {l:.3}"
    );
    // and a smaller Zipf exponent flattens them
    let flat = eurlex(4_000)
        .with_feature_exponent(0.3)
        .with_label_exponent(0.3);
    let (text, _) = generate(&flat, 3);
    let ds = parse(&text);
    let (xf, yf) = csr(&ds);
    let (f0, l0) = (top_share(xf, 0.01), top_share(yf, 0.01));
    assert!(f0 < f && l0 < l, "exponent 0.3: {f0:.3}, {l0:.3}");
}

#[test]
fn labels_depend_on_the_features() {
    let params = small(6_000);
    let (text, _) = generate(&params, 4);
    let ds = parse(&text);
    let (x, y) = csr(&ds);
    let mut rng = seeded(5);
    // the same label marginals, drawn independently of the features: the control
    let independent = shuffle_labels(y, &mut rng);
    let train = params.rows * 4 / 5;
    // nearest-centroid P@1 beats predicting the most frequent label, which independent
    // labels cannot do
    let (p1, base) = centroid_p1(x, y, train);
    let (p1_ind, base_ind) = centroid_p1(x, independent.view(), train);
    assert!(
        p1 > 1.3 * base,
        "P@1 {p1:.3}, most frequent label {base:.3}"
    );
    assert!(
        p1_ind < base_ind,
        "independent labels: P@1 {p1_ind:.3}, {base_ind:.3}"
    );
    // rows sharing a label share more features than random pairs of rows
    let (shared, random) = pair_cosines(x, y, 4_000, &mut rng);
    let (shared_ind, random_ind) = pair_cosines(x, independent.view(), 4_000, &mut rng);
    eprintln!();
    assert!(
        shared > 1.25 * random,
        "cosine: sharing a label {shared:.4}, random {random:.4}"
    );
    assert!(
        shared_ind < 1.1 * random_ind,
        "independent labels: {shared_ind:.4}, {random_ind:.4}"
    );
}

#[test]
fn a_seed_gives_byte_identical_output() {
    let params = small(500);
    let (a, sa) = generate(&params, 9);
    let (b, sb) = generate(&params, 9);
    assert!(a == b && sa == sb);
    let (c, _) = generate(&params, 10);
    assert_ne!(a, c);
    // the first rows do not depend on the requested row count
    let (longer, _) = generate(&params.with_rows(800), 9);
    let body = |t: &[u8]| t[t.iter().position(|&c| c == b'\n').unwrap() + 1..].to_vec();
    assert!(body(&longer).starts_with(&body(&a)));
}

#[test]
fn degenerate_sizes_fill_rows_exactly() {
    // one feature, one label: every row is `0 0:1.000000`
    let one = XmcSynthParams::default()
        .with_rows(3)
        .with_features(1)
        .with_labels(1)
        .with_nnz_per_row(1.0)
        .with_labels_per_row(1.0);
    let (text, _) = generate(&one, 0);
    assert_eq!(text, b"3 1 1\n0 0:1.000000\n0 0:1.000000\n0 0:1.000000\n");
    // rows asking for every feature and label (the counts are capped there), with priors so
    // steep that redraws run out: completed by exact sampling without replacement
    let all = XmcSynthParams::default()
        .with_rows(50)
        .with_features(40)
        .with_labels(30)
        .with_nnz_per_row(40.0)
        .with_labels_per_row(30.0)
        .with_feature_exponent(60.0)
        .with_label_exponent(60.0)
        .with_latent(4);
    let (text, summary) = generate(&all, 0);
    // the reader rejects repeated indices, so every row's features and labels are distinct
    let ds = parse(&text);
    let (x, y) = csr(&ds);
    assert_eq!((x.nnz(), y.nnz()), (summary.nnz, summary.label_nnz));
    let full =
        |m: CsMatView<'_, f64>, n: usize| m.outer_iterator().filter(|r| r.nnz() == n).count();
    assert!(full(x, 40) > 10 && full(y, 30) > 10);
}

#[test]
fn presets_and_bad_parameters_give_errors_not_panics() {
    for name in PRESET_NAMES {
        let p = XmcSynthParams::preset(name).unwrap();
        p.check().unwrap();
        assert_eq!(XmcSynthParams::preset(&name.to_uppercase()).unwrap(), p);
    }
    let wiki = XmcSynthParams::preset("wiki10-31k").unwrap();
    assert_eq!(
        (
            wiki.rows,
            wiki.features,
            wiki.labels,
            wiki.nnz_per_row,
            wiki.labels_per_row
        ),
        (14_146, 101_938, 30_938, 673.4, 18.64)
    );
    let e = XmcSynthParams::preset("amazon-670k").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("amazon-670k") && PRESET_NAMES.iter().all(|n| msg.contains(n)));
    assert_eq!(rejected(e), "preset");

    let ok = small(10);
    type Edit = fn(&mut XmcSynthParams);
    let cases: [(Edit, &str); 16] = [
        (|p| p.rows = 0, "rows"),
        (|p| p.features = 0, "features"),
        (|p| p.labels = 0, "labels"),
        (|p| p.latent = 0, "latent"),
        (|p| p.nnz_per_row = 0.5, "nnz_per_row"),
        (|p| p.nnz_per_row = 2_001.0, "nnz_per_row"),
        (|p| p.nnz_per_row = f64::NAN, "nnz_per_row"),
        (|p| p.labels_per_row = 0.0, "labels_per_row"),
        (|p| p.labels_per_row = 201.0, "labels_per_row"),
        (|p| p.labels_per_row = f64::INFINITY, "labels_per_row"),
        (|p| p.feature_exponent = 0.0, "feature_exponent"),
        (|p| p.feature_exponent = f64::NAN, "feature_exponent"),
        (|p| p.label_exponent = -1.0, "label_exponent"),
        (|p| p.label_exponent = f64::INFINITY, "label_exponent"),
        (|p| p.latent = usize::MAX / 2, "latent"),
        (
            |p| {
                p.features = usize::MAX;
                p.nnz_per_row = 1.0;
            },
            "latent",
        ),
    ];
    for (edit, name) in cases {
        let mut bad = ok;
        edit(&mut bad);
        // write_xmc_synth takes only checked parameters: nothing can be written for these
        assert_eq!(rejected(bad.check().unwrap_err()), name, "{bad:?}");
    }

    // a failing writer is an I/O error, not a panic
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let e = write_xmc_synth(&ok.check().unwrap(), &mut seeded(0), Full).unwrap_err();
    assert!(
        matches!(e, DataError::Io { .. }) && e.to_string().contains("disk full"),
        "{e}"
    );
}
