//! The general path (Algorithm 1) on the toy of GIMC Fig. 1 (DESIGN §4 `gimc-fig1`):
//! A = XYᵀ + N, X, Y 200 × 50 Gaussian, N entries N(0, 0.1), k = 20, a fraction of the entries
//! observed (a tenth of them held out for validation); prints the relative error ‖A − Â‖_F/‖A‖_F
//! of IMC-RFF (the start) and GIMC-LFF (last iterate and the iterate chosen on validation).
//!
//! `cargo run --release -p gimc --example toy_completion -- 0.2 100 0.01 0.1 10`
//! (fraction observed, m, γ, λ, outer iterations)
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use gimc::{CompletionData, CompletionInputs, CompletionParams, NoObserver, fit_completion};
use gimc_data::synth::{Fig1Params, gimc_fig1_toy, observe};
use gimc_featmap::{FourierFamily, MapFamily};
use gimc_linalg::rng::seeded;
use gimc_linalg::{FeatureMatrix, Observed};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: f64| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (frac, m, gamma, lambda, iters) = (
        arg(1, 0.2),
        arg(2, 100.0) as usize,
        arg(3, 0.01),
        arg(4, 0.1),
        arg(5, 10.0) as usize,
    );
    let toy = gimc_fig1_toy(&Fig1Params::default().check().unwrap(), &mut seeded(1)).unwrap();
    let obs = observe(toy.a.as_ref(), frac, &mut seeded(2)).unwrap();
    let (r, c, v): (Vec<_>, Vec<_>, Vec<_>) = obs.iter().fold(
        (vec![], vec![], vec![]),
        |(mut r, mut c, mut v), &(i, j, x)| {
            r.push(i);
            c.push(j);
            v.push(x);
            (r, c, v)
        },
    );
    // hold out every 10th observed entry for validation (choosing the iteration count)
    let keep = |k: &usize| !k.is_multiple_of(10);
    let pick = |x: &[usize], f: &dyn Fn(&usize) -> bool| -> Vec<usize> {
        x.iter()
            .enumerate()
            .filter(|(k, _)| f(k))
            .map(|(_, &v)| v)
            .collect()
    };
    let pickv = |x: &[f64], f: &dyn Fn(&usize) -> bool| -> Vec<f64> {
        x.iter()
            .enumerate()
            .filter(|(k, _)| f(k))
            .map(|(_, &v)| v)
            .collect()
    };
    let held = |k: &usize| k.is_multiple_of(10);
    let omega = Observed::from_triplets(
        200,
        200,
        &pick(&r, &keep),
        &pick(&c, &keep),
        &pickv(&v, &keep),
    )
    .unwrap();
    let val = Observed::from_triplets(
        200,
        200,
        &pick(&r, &held),
        &pick(&c, &held),
        &pickv(&v, &held),
    )
    .unwrap();
    let x = FeatureMatrix::dense(toy.x.clone()).unwrap();
    let y = FeatureMatrix::dense(toy.y.clone()).unwrap();
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let rm = FourierFamily.build(&x, m, gamma, &mut seeded(3)).unwrap();
    let cm = FourierFamily.build(&y, m, gamma, &mut seeded(4)).unwrap();
    let params = CompletionParams::default()
        .with_rank(20)
        .with_lambda(lambda)
        .with_max_iter(iters);
    let err = |ahat: &gimc_linalg::faer::Mat<f64>| (ahat - &toy.a).norm_l2() / toy.a.norm_l2();
    let start = std::time::Instant::now();
    let imc = fit_completion(
        CompletionInputs {
            data,
            row_map: rm.clone(),
            col_map: cm.clone(),
        },
        &params.with_max_iter(0).check().unwrap(),
        &mut seeded(5),
        &mut NoObserver,
    )
    .unwrap();
    let fit = fit_completion(
        CompletionInputs {
            data: data.with_validation(Some(&val)),
            row_map: rm,
            col_map: cm,
        },
        &params.check().unwrap(),
        &mut seeded(5),
        &mut NoObserver,
    )
    .unwrap();
    for h in &fit.history {
        println!(
            "it {:2} f {:.4} (after IMC {:.4}) steps {:?} {:?} trials {} {:.2}s validation error {:.4}",
            h.iteration,
            h.objective,
            h.objective_after_imc,
            h.step_rows,
            h.step_cols,
            h.trials,
            h.seconds,
            h.validation_error.unwrap_or(f64::NAN)
        );
    }
    let last_err = err(&fit.model.predict_dense(&x, &y).unwrap());
    let chosen_iteration = fit.chosen_iteration();
    let chosen = fit.into_chosen().unwrap();
    println!(
        "observed {:.0}%: IMC-RFF relative error {:.4}, GIMC-LFF {:.4} (last), {:.4} (iteration {} chosen on validation) ({:.1} s)",
        100.0 * frac,
        err(&imc.model.predict_dense(&x, &y).unwrap()),
        last_err,
        err(&chosen.predict_dense(&x, &y).unwrap()),
        chosen_iteration,
        start.elapsed().as_secs_f64()
    );
}
