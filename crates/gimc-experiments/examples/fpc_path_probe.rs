//! Steps and time of one MC-1 / MC-b continuation path per λ on a real set at ω = 80 %
//! (one trial's masks, the paper's μ grid of 6 points), and the held-out label error of every
//! grid point on the unobserved labels: a profiling aid for the FPC of `mc1-yeast`.
//!
//! `cargo run --release -p gimc-experiments --example fpc_path_probe -- [yeast|emotions|synth] [mc1|mcb]`
//! (`synth`: one trial of the `mc1-synthetic` setting ω = 40 %, n = 400, r = 2, σ² = 0.01).
//! `FPC_PLAIN=1`: no acceleration; `FPC_NO_SECANT=1`: no secant start of the μ stages;
//! `FPC_TOL=x`: the stage tolerance (default 1e-5); `FPC_LAMBDA=x`: one λ only.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc_experiments::experiments::mc1_common::load_real;
use gimc_linalg::Observed;
use gimc_linalg::rng::{child, seeded};
use gimc_solvers::iter::{IterationRecord, Observer, ObserverAction};
use gimc_solvers::transduction::{
    TransductionParams, TransductionProblem, TransductionVariant, fit_transduction_path, mu_grid,
};

struct Steps(Vec<usize>, usize);

impl Observer for Steps {
    fn observe(&mut self, r: &IterationRecord) -> ObserverAction {
        if r.iteration > 0 {
            let stage = r.extra("stage").unwrap_or(0.0) as usize;
            if self.0.len() <= stage {
                self.0.resize(stage + 1, 0);
            }
            self.0[stage] += 1;
            self.1 += r.extra("restart").unwrap_or(0.0) as usize;
        }
        ObserverAction::Continue
    }
}

fn main() {
    let set = std::env::args().nth(1).unwrap_or_else(|| "yeast".into());
    let variant = match std::env::args().nth(2).as_deref() {
        Some("mcb") => TransductionVariant::McB,
        _ => TransductionVariant::Mc1,
    };
    let mut r = child(&seeded(1), 0);
    let (x, y, ox, oy) = if set == "synth" {
        // one trial of the mc1-synthetic setting ω = 40 %, n = 400, r = 2, σ² = 0.01
        let params = gimc_data::synth::Mc1Params::default()
            .with_n(400)
            .with_d(20)
            .with_t(10)
            .with_rank(2)
            .with_noise_variance(0.01)
            .with_observed_fraction(0.4)
            .with_wb_variance(10.0)
            .check()
            .unwrap();
        let data = gimc_data::synth::mc1_synthetic(&params, &mut r).unwrap();
        (data.x, data.y, data.observed_x, data.observed_y)
    } else {
        let data_dir = gimc_data::resolve_data_dir(None);
        let (x, y) = load_real(&data_dir, &set, &["train", "test"], set == "yeast").unwrap();
        let ox = gimc_data::synth::sample_entries(x.nrows(), x.ncols(), 0.8, &mut r).unwrap();
        let oy = gimc_data::synth::sample_entries(y.nrows(), y.ncols(), 0.8, &mut r).unwrap();
        (x, y, ox, oy)
    };
    let (t, n) = y.shape();
    let obs = |m: &gimc_linalg::faer::Mat<f64>, e: &[(usize, usize)]| {
        let rows: Vec<usize> = e.iter().map(|e| e.0).collect();
        let cols: Vec<usize> = e.iter().map(|e| e.1).collect();
        let vals: Vec<f64> = e.iter().map(|&(i, j)| m[(i, j)]).collect();
        Observed::from_triplets(m.nrows(), m.ncols(), &rows, &cols, &vals).unwrap()
    };
    let problem = TransductionProblem::new(obs(&y, &oy), obs(&x, &ox)).unwrap();
    let mut seen = vec![false; t * n];
    for &(i, j) in &oy {
        seen[i * n + j] = true;
    }
    let accelerate = std::env::var("FPC_PLAIN").is_err();
    // FPC_LAMBDA=x runs one λ only (for profiling one path)
    let lambdas: Vec<f64> = match std::env::var("FPC_LAMBDA") {
        Ok(v) => vec![v.parse().unwrap()],
        Err(_) => vec![1e-3, 1e-2, 1e-1, 1.0],
    };
    for lambda in lambdas {
        let params = TransductionParams::default()
            .with_variant(variant)
            .with_lambda(lambda)
            .with_max_stage_iters(1000)
            .with_tol(std::env::var("FPC_TOL").map_or(1e-5, |v| v.parse().unwrap()))
            .with_accelerate(accelerate)
            .with_secant_start(std::env::var("FPC_NO_SECANT").is_err())
            .check()
            .unwrap();
        let grid = mu_grid(&problem, &params, 6).unwrap();
        let mut steps = Steps(Vec::new(), 0);
        let start = Instant::now();
        let path =
            fit_transduction_path(&problem, &params, &grid, &mut seeded(7), &mut steps).unwrap();
        let secs = start.elapsed().as_secs_f64();
        let errs: Vec<String> = path
            .solutions
            .iter()
            .map(|s| {
                let (mut wrong, mut all) = (0, 0);
                for i in 0..t {
                    for j in 0..n {
                        if !seen[i * n + j] {
                            all += 1;
                            if y[(i, j)] * (s.z[(i, j)] + s.bias[i]) <= 0.0 {
                                wrong += 1;
                            }
                        }
                    }
                }
                format!("{:.2}", 100.0 * wrong as f64 / all as f64)
            })
            .collect();
        let ranks: Vec<usize> = path.solutions.iter().map(|s| s.rank).collect();
        let objectives: Vec<String> = path
            .solutions
            .iter()
            .map(|s| format!("{:e}", s.objective))
            .collect();
        println!(
            "λ = {lambda:>6}: {:>5} steps in {secs:6.2} s; steps per stage {:?} ({} restarts); ranks {ranks:?}; \
             label error {}; objectives {}",
            path.iterations,
            steps.0,
            steps.1,
            errs.join(" "),
            objectives.join(" ")
        );
    }
}
