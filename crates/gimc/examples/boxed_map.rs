//! A boxed map costs nothing: learned Nyström on Bibtex fitted with the map itself and with the
//! same map as a `Box<dyn AnyMap>` (what a `MapRegistry` family builds). With the whitening
//! normalisation (`nys-whiten`, the default here) Φ = C·M, and the blanket impls forward
//! `forward_factored`, so both forms take the ΦᵀΦ = Mᵀ(CᵀC)M fast path; with M = I (`lnys`, the
//! paper's GIMC-LNYS) there is nothing to factor. P@k must be equal and the fit times within
//! noise. Runs alternate between the two forms; medians are reported.
//!
//! ```text
//! cargo run --release -p gimc --example boxed_map -- [nys-whiten|lnys] [m] [gamma] [iterations] [runs]
//! cargo run --release -p gimc --example boxed_map -- nys-whiten 500 0.002 10 5
//! ```
//! The data directory is `GIMC_DATA`, else `datasets/`.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc::{BoxedMap, LabelData, LabelParams, LabelProblem, NoObserver, fit_labels};
use gimc_data::Targets;
use gimc_featmap::{LearnableMap, MapFamily, NystromFamily};
use gimc_linalg::rng::seeded;

fn label_data(d: &gimc_data::Dataset) -> LabelData {
    let Targets::Labels { matrix, .. } = &d.targets else {
        panic!("bibtex is multi-label")
    };
    LabelData::multi_label(d.features.clone(), matrix.clone()).unwrap()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One fit; returns (seconds, test P@1/3/5, learned parameters).
fn fit<M: LearnableMap>(
    map: M,
    train: &LabelData,
    test: &LabelData,
    p: &LabelParams,
) -> (f64, [f64; 3], gimc_linalg::faer::Mat<f64>) {
    let t = Instant::now();
    let fit = fit_labels(train, map, &p.check().unwrap(), None, &mut NoObserver).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let e = fit.model.evaluate(test, &[1, 3, 5]).unwrap();
    let pk = [1, 3, 5].map(|k| 100.0 * e.precision_at(k).unwrap());
    (secs, pk, fit.model.maps()[0].params().to_owned())
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let name = a.first().map_or("nys-whiten", String::as_str);
    let m: usize = a.get(1).map_or(500, |s| s.parse().unwrap());
    let gamma: f64 = a.get(2).map_or(0.002, |s| s.parse().unwrap());
    let iters: usize = a.get(3).map_or(10, |s| s.parse().unwrap());
    let runs: usize = a.get(4).map_or(5, |s| s.parse().unwrap());
    let named = gimc_data::load_named(&gimc_data::resolve_data_dir(None), "bibtex").unwrap();
    let train = label_data(named.part("train").unwrap());
    let test = label_data(named.part("test").unwrap());
    let p = LabelParams::default()
        .with_lambda(1.0)
        .with_max_iter(iters)
        .with_eval_train(false);
    let family = match name {
        "lnys" => NystromFamily::default(),
        "nys-whiten" => NystromFamily::uniform_whitened(),
        other => panic!("family {other}: choose nys-whiten or lnys"),
    };
    let build = || {
        family
            .build(train.features(), m, gamma, &mut seeded(1))
            .unwrap()
    };
    let map = build();
    let boxed: BoxedMap = Box::new(build());
    let prob = LabelProblem::new(&train, 1.0).unwrap();
    println!(
        "factored fast path: map itself {}, boxed {}, borrowed {}",
        prob.features(std::slice::from_ref(&map))
            .unwrap()
            .is_factored(),
        prob.features(std::slice::from_ref(&boxed))
            .unwrap()
            .is_factored(),
        prob.features(&[&map]).unwrap().is_factored()
    );
    let (mut t_own, mut t_box) = (Vec::new(), Vec::new());
    let (mut pk_own, mut pk_box) = ([0.0; 3], [0.0; 3]);
    let mut same_params = true;
    for run in 0..runs {
        // alternate which form goes first so drift on a shared machine hits both alike
        let order = if run % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        let mut params = Vec::new();
        for boxed in order {
            if boxed {
                let map: BoxedMap = Box::new(build());
                let (s, pk, u) = fit(map, &train, &test, &p);
                t_box.push(s);
                pk_box = pk;
                params.push(u);
            } else {
                let (s, pk, u) = fit(build(), &train, &test, &p);
                t_own.push(s);
                pk_own = pk;
                params.push(u);
            }
        }
        same_params &= params[0] == params[1];
    }
    let (mo, mb) = (median(&mut t_own), median(&mut t_box));
    println!(
        "learned Nyström ({name}) on bibtex, m = {m}, gamma = {gamma}, lambda = 1, {iters} iterations, {runs} runs each"
    );
    println!(
        "map itself: P@1/3/5 {:.2} / {:.2} / {:.2}, median fit {mo:.2} s (all: {t_own:.2?})",
        pk_own[0], pk_own[1], pk_own[2]
    );
    println!(
        "boxed:      P@1/3/5 {:.2} / {:.2} / {:.2}, median fit {mb:.2} s (all: {t_box:.2?})",
        pk_box[0], pk_box[1], pk_box[2]
    );
    println!(
        "learned parameters bitwise equal in every run: {same_params}; boxed / own time {:.3}",
        mb / mo
    );
}
