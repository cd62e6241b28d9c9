//! IMC-ALS on row shards of Ω (`fit_imc_sharded`): threads standing in for processes
//! (`ThreadSums`) reproduce the single-process fit on the union of the shards, and what the
//! sharded sums do not cover is refused.

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sums::{RowSums, ThreadSums};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{
    ImcInit, ImcModel, ImcParams, ImcProblem, ImcStart, NoObserver, Side, SolverError, fit_imc,
    fit_imc_sharded,
};

use crate::common::random_pairs;

/// Features and a partial Ω of n rows × m columns, with values from a planted low-rank model
/// plus a little noise.
struct Data {
    x: Mat<f64>,
    y: Mat<f64>,
    rows: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
    n: usize,
    m: usize,
}

fn data(n: usize, m: usize, dx: usize, dy: usize, count: usize, seed: u64) -> Data {
    let mut rng = seeded(seed);
    let x = gaussian_mat(&mut rng, n, dx, 1.0);
    let y = gaussian_mat(&mut rng, m, dy, 1.0);
    let w = gaussian_mat(&mut rng, dx, 3, 1.0);
    let h = gaussian_mat(&mut rng, dy, 3, 1.0);
    let a = &x * &w * h.transpose() * y.transpose();
    let noise = gaussian_mat(&mut rng, n, m, 0.1);
    let pairs = random_pairs(&mut rng, n, m, count);
    Data {
        rows: pairs.iter().map(|p| p.0).collect(),
        cols: pairs.iter().map(|p| p.1).collect(),
        vals: pairs
            .iter()
            .map(|&(i, j)| a[(i, j)] + noise[(i, j)])
            .collect(),
        x,
        y,
        n,
        m,
    }
}

/// Row features as stored: dense, or sparse with about half the entries kept.
fn features(x: &Mat<f64>, sparse: bool) -> FeatureMatrix {
    if !sparse {
        return FeatureMatrix::dense(x.clone()).unwrap();
    }
    let mut t = gimc_linalg::sprs::TriMat::new((x.nrows(), x.ncols()));
    for i in 0..x.nrows() {
        for j in 0..x.ncols() {
            if (i * 31 + j * 17) % 7 < 4 {
                t.add_triplet(i, j, x[(i, j)]);
            }
        }
    }
    FeatureMatrix::sparse(t.to_csr()).unwrap()
}

/// The observed entries of rows r0..r1, with row indices local to the block.
fn shard_omega(d: &Data, r0: usize, r1: usize) -> Observed {
    let keep: Vec<usize> = (0..d.rows.len())
        .filter(|&e| (r0..r1).contains(&d.rows[e]))
        .collect();
    let rows: Vec<usize> = keep.iter().map(|&e| d.rows[e] - r0).collect();
    let cols: Vec<usize> = keep.iter().map(|&e| d.cols[e]).collect();
    let vals: Vec<f64> = keep.iter().map(|&e| d.vals[e]).collect();
    Observed::from_triplets(r1 - r0, d.m, &rows, &cols, &vals).unwrap()
}

/// The fit on every shard rows bounds[p]..bounds[p + 1], one thread per process.
fn fit_on_shards(
    d: &Data,
    x: &FeatureMatrix,
    psi: Option<&FeatureMatrix>,
    params: &ImcParams,
    bounds: &[usize],
) -> Vec<Result<ImcModel, SolverError>> {
    let params = params.check().unwrap();
    ThreadSums::on_threads(bounds.len() - 1, |sums| {
        let p = sums.rank();
        let rows: Vec<usize> = (bounds[p]..bounds[p + 1]).collect();
        let phi = x.select_rows(&rows).unwrap();
        let omega = shard_omega(d, bounds[p], bounds[p + 1]);
        let psi_side = psi.map_or(Side::Identity(d.m), Side::Features);
        let problem = ImcProblem::partial_shard(Side::Features(&phi), psi_side, &omega)?;
        fit_imc_sharded(
            &problem,
            &params,
            ImcStart::Draw(&mut seeded(3)),
            &mut NoObserver,
            sums,
        )
    })
}

fn rel(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2()
}

#[test]
fn sharded_fit_is_the_fit_on_the_union() {
    let d = data(180, 35, 14, 6, 1800, 21);
    let y = FeatureMatrix::dense(d.y.clone()).unwrap();
    let omega = Observed::from_triplets(d.n, d.m, &d.rows, &d.cols, &d.vals).unwrap();
    let base = ImcParams::default()
        .with_rank(3)
        .with_lambda(0.1)
        .with_max_outer(10)
        .with_tol(1e-9);
    let random = base.with_init(ImcInit::Random);
    // (sparse Φ, identity Ψ, params, shard bounds): 2 and 3 processes, uneven, one empty
    let cases = [
        (false, false, base, vec![0, 90, 180]),
        (false, false, random, vec![0, 17, 17, 180]),
        (true, false, base, vec![0, 120, 150, 180]),
        (true, false, random, vec![0, 180, 180]),
        (false, true, base, vec![0, 60, 180]),
        (true, true, random, vec![0, 5, 100, 180]),
    ];
    for (sparse, identity, params, bounds) in cases {
        let x = features(&d.x, sparse);
        let psi = (!identity).then_some(&y);
        let psi_side = psi.map_or(Side::Identity(d.m), Side::Features);
        let whole = ImcProblem::partial(Side::Features(&x), psi_side, &omega).unwrap();
        let want = fit_imc(
            &whole,
            &params.check().unwrap(),
            ImcStart::Draw(&mut seeded(3)),
            &mut NoObserver,
        )
        .unwrap();
        let got = fit_on_shards(&d, &x, psi, &params, &bounds);
        let first = got[0].as_ref().unwrap();
        for (p, g) in got.iter().enumerate() {
            let g = g.as_ref().unwrap();
            let case =
                format!("sparse {sparse}, identity Ψ {identity}, shards {bounds:?}, process {p}");
            // every process holds the same factors, bit for bit
            assert_eq!(g.w, first.w, "{case}");
            assert_eq!(g.h, first.h, "{case}");
            assert_eq!(g.iterations, want.iterations, "{case}");
            let (ew, eh) = (rel(&g.w, &want.w), rel(&g.h, &want.h));
            assert!(
                ew < 1e-8 && eh < 1e-8,
                "{case}: W off by {ew:e}, H by {eh:e}"
            );
            let f = g.objective_trace.last().unwrap();
            let fw = want.objective_trace.last().unwrap();
            assert!(
                (f - fw).abs() <= 1e-10 * fw.abs(),
                "{case}: objective {f} vs {fw}"
            );
        }
    }
}

#[test]
fn sharded_fit_refuses_what_it_does_not_sum() {
    let d = data(40, 12, 5, 4, 200, 22);
    let x = FeatureMatrix::dense(d.x.clone()).unwrap();
    let y = FeatureMatrix::dense(d.y.clone()).unwrap();
    let omega = Observed::from_triplets(d.n, d.m, &d.rows, &d.cols, &d.vals).unwrap();
    let params = ImcParams::default().with_rank(2).check().unwrap();
    // the refusal comes before any sum, so one member of a group of two can be asked alone
    let group = ThreadSums::group(2);
    let refused = |problem: ImcProblem<'_>| {
        fit_imc_sharded(
            &problem,
            &params,
            ImcStart::Draw(&mut seeded(1)),
            &mut NoObserver,
            &group[0],
        )
    };
    let (fx, fy) = (Side::Features(&x), Side::Features(&y));
    for problem in [
        ImcProblem::fully_observed(fx, fy, &omega).unwrap(),
        ImcProblem::pu(fx, fy, &omega, 0.8).unwrap(),
        ImcProblem::partial(Side::Identity(d.n), fy, &omega).unwrap(),
    ] {
        let err = refused(problem).unwrap_err();
        assert!(
            matches!(err, SolverError::Unsupported { .. }) && err.is_parameter_error(),
            "{err}"
        );
    }
    let err = refused(ImcProblem::fully_observed(fx, fy, &omega).unwrap()).unwrap_err();
    assert!(err.to_string().contains("partially observed"), "{err}");
    // an empty union of shards is an error on every process, not a hang or a panic
    let empty = Observed::from_triplets(d.n, d.m, &[], &[], &[]).unwrap();
    let results = ThreadSums::on_threads(2, |sums| {
        let problem =
            ImcProblem::partial_shard(Side::Features(&x), Side::Features(&y), &empty).unwrap();
        fit_imc_sharded(
            &problem,
            &params,
            ImcStart::Draw(&mut seeded(1)),
            &mut NoObserver,
            sums,
        )
    });
    for r in results {
        assert!(matches!(r, Err(SolverError::Empty(_))), "{r:?}");
    }
}
