//! The transduction FPC's continuation paths (MC-1 and MC-b, DESIGN §3.5), the hot path of
//! `mc1-yeast` and `mc1-synthetic`: steps and seconds of one trial's four λ paths over the
//! paper's 6-point μ grid, with the secant start of the μ stages and, as the reference, without
//! it. On the `mc1-synthetic` setting ω = 40 %, n = 400, r = 2, σ² = 0.01, and on yeast at
//! ω = 80 % when its files are present (full run only).

use std::time::Instant;

use gimc_linalg::rng::{child, seeded};
use gimc_solvers::NoObserver;
use gimc_solvers::transduction::{
    TransductionParams, TransductionProblem, TransductionVariant, fit_transduction_path, mu_grid,
};

use super::{Benchmark, Measurement};
use crate::experiments::mc1_common::{load_real, observed};
use crate::{Context, ExperimentError};

/// The λ of the four paths of one trial.
const LAMBDAS: [f64; 4] = [1e-3, 1e-2, 1e-1, 1.0];

/// Steps and seconds of the FPC paths.
pub struct FpcPath;

/// One trial of the `mc1-synthetic` setting ω = 40 %, n = 400, r = 2, σ² = 0.01.
fn synthetic(seed: u64) -> Result<TransductionProblem, ExperimentError> {
    let params = gimc_data::synth::Mc1Params::default()
        .with_n(400)
        .with_d(20)
        .with_t(10)
        .with_rank(2)
        .with_noise_variance(0.01)
        .with_observed_fraction(0.4)
        .with_wb_variance(10.0)
        .check()?;
    let data = gimc_data::synth::mc1_synthetic(&params, &mut child(&seeded(seed), 0))?;
    Ok(TransductionProblem::new(
        observed(&data.y, &data.observed_y)?,
        observed(&data.x, &data.observed_x)?,
    )?)
}

/// Yeast (train and test, standardised) with 80 % of its entries observed.
fn yeast(ctx: &Context) -> Result<TransductionProblem, ExperimentError> {
    let (x, y) = load_real(&ctx.data_dir, "yeast", &["train", "test"], true)?;
    let mut rng = child(&seeded(ctx.seed), 0);
    let ox = gimc_data::synth::sample_entries(x.nrows(), x.ncols(), 0.8, &mut rng)?;
    let oy = gimc_data::synth::sample_entries(y.nrows(), y.ncols(), 0.8, &mut rng)?;
    Ok(TransductionProblem::new(
        observed(&y, &oy)?,
        observed(&x, &ox)?,
    )?)
}

/// Total steps and seconds of the four λ paths.
fn paths(
    problem: &TransductionProblem,
    variant: TransductionVariant,
    secant_start: bool,
) -> Result<(usize, f64), ExperimentError> {
    let (mut steps, mut secs) = (0, 0.0);
    for lambda in LAMBDAS {
        let params = TransductionParams::default()
            .with_variant(variant)
            .with_lambda(lambda)
            .with_max_stage_iters(1000)
            .with_tol(1e-5)
            .with_secant_start(secant_start)
            .check()?;
        let grid = mu_grid(problem, &params, 6)?;
        let start = Instant::now();
        let path = fit_transduction_path(problem, &params, &grid, &mut seeded(7), &mut NoObserver)?;
        secs += start.elapsed().as_secs_f64();
        steps += path.iterations;
    }
    Ok((steps, secs))
}

impl Benchmark for FpcPath {
    fn name(&self) -> &'static str {
        "fpc-path"
    }

    fn description(&self) -> &'static str {
        "Steps and seconds of one trial's four λ continuation paths (6-point μ grid) of the \
         transduction FPC, MC-1 and MC-b, with the secant start of the μ stages and without it \
         (the reference): the mc1-synthetic setting ω = 40 %, n = 400, r = 2, σ² = 0.01, and \
         yeast at ω = 80 % (full run, when present). One run each; the step counts are exact, \
         the seconds indicative."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let mut sets = vec![("synthetic n = 400, r = 2", synthetic(ctx.seed)?)];
        if !ctx.quick {
            match yeast(ctx) {
                Ok(problem) => sets.push(("yeast ω = 80 %", problem)),
                Err(e) => {
                    #[allow(clippy::print_stderr)]
                    {
                        eprintln!("fpc-path: yeast skipped: {e}");
                    }
                }
            }
        }
        let mut out = Vec::new();
        for (set, problem) in &sets {
            for (variant, label) in [
                (TransductionVariant::Mc1, "MC-1"),
                (TransductionVariant::McB, "MC-b"),
            ] {
                let case = format!("{set}, {label}");
                let (plain_steps, plain_secs) = paths(problem, variant, false)?;
                let (steps, secs) = paths(problem, variant, true)?;
                let reference = "no secant start, same run";
                out.push(
                    Measurement::new(&case, "steps", steps as f64, "steps")
                        .with_reference(plain_steps as f64, reference),
                );
                out.push(
                    Measurement::new(&case, "paths", secs, "s")
                        .with_reference(plain_secs, reference),
                );
                out.push(Measurement::new(
                    &case,
                    "per step",
                    1e3 * secs / steps.max(1) as f64,
                    "ms",
                ));
            }
        }
        Ok(out)
    }
}
