//! A boxed map costs nothing (DESIGN §2.1): learned Nyström on Bibtex fitted with the map itself
//! and with the same map as a `Box<dyn AnyMap>` (what a `MapRegistry` family builds), m = 500,
//! γ = 0.002, λ = 1, 10 outer iterations. With whitening (`nys-whiten`) Φ = C·M and the blanket
//! impls forward `forward_factored`, so both forms take the ΦᵀΦ = Mᵀ(CᵀC)M fast path; with M = I
//! (`lnys`, the paper's GIMC-LNYS) there is nothing to factor. Reported per family and form:
//! the median fit seconds over alternating runs, test P@1, whether the fast path is factored,
//! the boxed / own time ratio and whether the learned parameters are bitwise equal in every run.

use std::time::Instant;

use gimc::labels::LabelProblem;
use gimc::{BoxedMap, LabelData, LabelParams, NoObserver, fit_labels};
use gimc_data::load_named;
use gimc_featmap::{LearnableMap, MapFamily, NystromFamily};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;

use super::gimc_lff::label_data;
use super::{Benchmark, Measurement};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// Learned Nyström on Bibtex, the map itself against the boxed map.
pub struct BoxedMapCost;

/// Landmarks.
const M: usize = 500;
/// RBF width.
const GAMMA: f64 = 0.002;
/// Outer iterations.
const ITERATIONS: usize = 10;

/// One fit: (seconds, test P@1 in %, the learned parameters).
fn fit<M: LearnableMap>(
    map: M,
    train: &LabelData,
    test: &LabelData,
) -> Result<(f64, f64, Mat<f64>), ExperimentError> {
    let params = LabelParams::default()
        .with_lambda(1.0)
        .with_max_iter(ITERATIONS)
        .with_eval_train(false)
        .check()?;
    let t = Instant::now();
    let fit = fit_labels(train, map, &params, None, &mut NoObserver)?;
    let secs = t.elapsed().as_secs_f64();
    let p1 = fit
        .model
        .evaluate(test, &[1])?
        .precision_at(1)
        .unwrap_or(0.0);
    let u = fit
        .model
        .maps()
        .first()
        .map(|m| m.params().to_owned())
        .ok_or_else(|| fail("a fit without a map"))?;
    Ok((secs, 100.0 * p1, u))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

impl Benchmark for BoxedMapCost {
    fn name(&self) -> &'static str {
        "boxed-map"
    }

    fn description(&self) -> &'static str {
        "Learned Nyström on Bibtex (m = 500, γ = 0.002, λ = 1, 10 iterations) fitted with the map \
         itself and as a Box<dyn AnyMap>, alternating runs: median fit seconds, test P@1, whether \
         the fast path is factored, the boxed / own time ratio, bitwise-equal parameters."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let named = load_named(&ctx.data_dir, "bibtex")?;
        let (train, test) = match (named.part("train"), named.part("test")) {
            (Some(a), Some(b)) => (label_data(a)?, label_data(b)?),
            _ => return Err(fail("bibtex lacks a train or test part")),
        };
        let runs = if ctx.quick { 1 } else { 5 };
        let mut out = Vec::new();
        for (name, family) in [
            ("nys-whiten", NystromFamily::uniform_whitened()),
            ("lnys", NystromFamily::default()),
        ] {
            let build = || family.build(train.features(), M, GAMMA, &mut seeded(1));
            let problem = LabelProblem::new(&train, 1.0)?;
            let own = build()?;
            let boxed: BoxedMap = Box::new(build()?);
            let factored = [
                problem.features(std::slice::from_ref(&own))?.is_factored(),
                problem
                    .features(std::slice::from_ref(&boxed))?
                    .is_factored(),
            ];
            let (mut t_own, mut t_box) = (Vec::new(), Vec::new());
            let (mut p_own, mut p_box) = (0.0, 0.0);
            let mut same = true;
            for run in 0..runs {
                // alternate which form goes first, so drift on a shared machine hits both alike
                let mut learned = Vec::new();
                for boxed_first in [run % 2 == 1, run % 2 == 0] {
                    if boxed_first {
                        let map: BoxedMap = Box::new(build()?);
                        let (s, p1, u) = fit(map, &train, &test)?;
                        t_box.push(s);
                        p_box = p1;
                        learned.push(u);
                    } else {
                        let (s, p1, u) = fit(build()?, &train, &test)?;
                        t_own.push(s);
                        p_own = p1;
                        learned.push(u);
                    }
                }
                same &= learned.first() == learned.get(1);
            }
            let (mo, mb) = (median(&mut t_own), median(&mut t_box));
            for (form, secs, p1, f) in [
                ("map itself", mo, p_own, factored[0]),
                ("boxed", mb, p_box, factored[1]),
            ] {
                let case = format!("{name}, {form}");
                out.push(Measurement::new(&case, "fit", secs, "s"));
                out.push(Measurement::new(&case, "P@1", p1, "%"));
                let f = if f { 1.0 } else { 0.0 };
                out.push(Measurement::new(&case, "factored path", f, "yes = 1"));
            }
            out.push(Measurement::new(name, "boxed / own time", mb / mo, "×"));
            let same = if same { 1.0 } else { 0.0 };
            out.push(Measurement::new(name, "parameters equal", same, "yes = 1"));
        }
        Ok(out)
    }
}
