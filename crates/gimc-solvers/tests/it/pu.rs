//! PU (biased) IMC against plain IMC on a planted positive-unlabeled problem (DESIGN §4,
//! `pu-imc`): hide a fraction ρ of the positives, observe only the rest (all 1s), and compare
//! how well each model recovers the true 0/1 matrix T.

use gimc_linalg::rng::seeded;
use gimc_solvers::{
    ImcInit, ImcParams, ImcProblem, ImcStart, NoObserver, PuImcInputs, PuImcParams, Side, fit_imc,
    fit_pu_imc,
};

use crate::planted_pu::{PlantedPu, planted_pu};

/// Area under the ROC curve of `scores` against 0/1 `truth` (ties count one half).
fn auc(scores: &[f64], truth: &[bool]) -> f64 {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let (mut rank_sum, mut i) = (0.0, 0);
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && scores[idx[j + 1]] == scores[idx[i]] {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        rank_sum += (i..=j).filter(|&t| truth[idx[t]]).count() as f64 * mid;
        i = j + 1;
    }
    let pos = truth.iter().filter(|&&t| t).count() as f64;
    let neg = truth.len() as f64 - pos;
    (rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg)
}

#[test]
fn pu_imc_beats_plain_imc_on_planted_pu_problem() {
    let n = 120;
    let rho = 0.5;
    let planted = planted_pu(&mut seeded(21), n, rho);
    let PlantedPu {
        x,
        y,
        truth,
        positives,
    } = &planted;
    let imc = ImcParams::default()
        .with_rank(4)
        .with_lambda(0.1)
        .with_max_outer(30)
        .with_tol(1e-8)
        .with_init(ImcInit::Spectral);
    let pu_params = PuImcParams::default()
        .with_imc(imc)
        .with_alpha((1.0 + rho) / 2.0)
        .check()
        .unwrap();
    let (phi, psi) = (Side::Features(x), Side::Features(y));
    let pu = fit_pu_imc(
        PuImcInputs {
            phi,
            psi,
            positives,
        },
        &pu_params,
        ImcStart::Draw(&mut seeded(1)),
        &mut NoObserver,
    )
    .unwrap();
    let plain_problem = ImcProblem::partial(phi, psi, positives).unwrap();
    let plain = fit_imc(
        &plain_problem,
        &imc.check().unwrap(),
        ImcStart::Draw(&mut seeded(1)),
        &mut NoObserver,
    )
    .unwrap();
    let score = |m: &gimc_solvers::ImcModel| -> Vec<f64> {
        let s = m.scores_for_rows(phi, psi).unwrap();
        (0..n * n).map(|t| s[(t / n, t % n)]).collect()
    };
    let (s_pu, s_plain) = (score(&pu), score(&plain));
    let error = |s: &[f64]| {
        s.iter()
            .zip(truth)
            .filter(|&(&v, &t)| (v > 0.5) != t)
            .count() as f64
            / s.len() as f64
    };
    let (e_pu, e_plain) = (error(&s_pu), error(&s_plain));
    let (a_pu, a_plain) = (auc(&s_pu, truth), auc(&s_plain, truth));
    eprintln!("PU error {e_pu} auc {a_pu}; plain error {e_plain} auc {a_plain}");
    assert!(e_pu < 0.02, "PU-IMC error {e_pu}");
    assert!(e_plain > 0.3, "plain IMC error {e_plain}");
    assert!(
        a_pu > 0.99 && a_pu > a_plain,
        "AUC PU {a_pu} vs plain {a_plain}"
    );
    // the hidden positives in particular are recovered by PU-IMC
    let hidden: Vec<usize> = (0..n * n)
        .filter(|&t| planted.hidden(t / n, t % n))
        .collect();
    let found = hidden.iter().filter(|&&t| s_pu[t] > 0.5).count() as f64 / hidden.len() as f64;
    assert!(found > 0.95, "hidden positives found {found}");
}
