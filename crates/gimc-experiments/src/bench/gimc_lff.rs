//! One GIMC-LFF fit on Bibtex (DESIGN §3.3, §5): m = 500 Fourier directions (D =
//! 2m = 1,000 features), γ = 0.002, λ = 1, the fast path of GIMC eq. 12 with a fixed number of
//! outer iterations (the count validation picks in `gimc-table2`), from loaded data to the
//! final model. Reported: whole fit seconds, seconds per outer iteration, line-search trials per
//! iteration, test P@1/3/5, and the achieved GFLOP/s of the fit's two dense n × D products —
//! ΦᵀΦ (triangular, n·D² flops) and Φ(WWᵀ) (2·n·D² flops) at the learned Φ — beside a general
//! GEMM of the same shape measured in the same process.

use std::time::Instant;

use gimc::{LabelData, LabelParams, NoObserver, concat_features, fit_labels};
use gimc_data::{Targets, load_named};
use gimc_featmap::{FourierFamily, MapFamily};
use gimc_linalg::dense::{gram_tn, matmul};
use gimc_linalg::rng::seeded;

use super::{Benchmark, Measurement, gemm_gflops, median_secs};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// GIMC-LFF on Bibtex at m = 500.
pub struct GimcLffBibtex;

/// Fourier directions (D = 2m).
const M: usize = 500;
/// RBF width of the Bibtex runs (DESIGN §3.3 prototype figures).
const GAMMA: f64 = 0.002;
/// Ridge weight.
const LAMBDA: f64 = 1.0;
/// Outer iterations: the count validation chose for this setting in `gimc-table2`.
const ITERATIONS: usize = 10;

/// The multi-label data of a set's part.
pub(super) fn label_data(d: &gimc_data::Dataset) -> Result<LabelData, ExperimentError> {
    match &d.targets {
        Targets::Labels { matrix, .. } => {
            LabelData::multi_label(d.features.clone(), matrix.clone())
                .map_err(ExperimentError::from)
        }
        _ => Err(fail("expected a multi-label set")),
    }
}

impl Benchmark for GimcLffBibtex {
    fn name(&self) -> &'static str {
        "gimc-lff-bibtex"
    }

    fn description(&self) -> &'static str {
        "One GIMC-LFF fit on Bibtex train (4,880 rows, 1,836 sparse features, 159 labels): m = \
         500 (D = 1,000), γ = 0.002, λ = 1, 10 outer iterations of the eq. 12 fast path \
         (alternating, Armijo), timed from loaded data; P@k on the test part. GFLOP/s of the \
         fit's dense products ΦᵀΦ (triangular) and Φ(WWᵀ), timed on the learned Φ, beside a \
         GEMM of the same shape in the same process. Target: the fit under 60 s."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let named = load_named(&ctx.data_dir, "bibtex")?;
        let (train, test) = match (named.part("train"), named.part("test")) {
            (Some(a), Some(b)) => (label_data(a)?, label_data(b)?),
            _ => return Err(fail("bibtex lacks a train or test part")),
        };
        let iterations = if ctx.quick { 2 } else { ITERATIONS };
        let params = LabelParams::default()
            .with_lambda(LAMBDA)
            .with_max_iter(iterations)
            .with_eval_train(false)
            .check()?;
        let t0 = Instant::now();
        let map = FourierFamily.build(train.features(), M, GAMMA, &mut seeded(ctx.seed))?;
        let fit = fit_labels(&train, map, &params, None, &mut NoObserver)?;
        let total = t0.elapsed().as_secs_f64();
        let done = fit.history.len().saturating_sub(1);
        let start_secs = fit.history.first().map_or(0.0, |h| h.seconds);
        let last_secs = fit.history.last().map_or(0.0, |h| h.seconds);
        let per_iter = (last_secs - start_secs) / done.max(1) as f64;
        let trials: usize = fit.history.iter().skip(1).map(|h| h.trials).sum();
        let eval = fit.model.evaluate(&test, &[1, 3, 5])?;

        // The fit's dense products at the learned Φ (n × D) and W (D × L).
        let phi = concat_features(fit.model.maps(), train.features())?;
        let (n, d) = (phi.nrows(), phi.ncols());
        let w = fit.model.w();
        let wwt = matmul(w, w.transpose())?;
        let runs = if ctx.quick { 1 } else { 5 };
        let (t_gram, _) = median_secs::<_, ExperimentError>(runs, || Ok(gram_tn(phi.as_ref())))?;
        let (t_grad, _) = median_secs(runs, || matmul(phi.as_ref(), wwt.as_ref()))?;
        let (nf, df) = (n as f64, d as f64);
        let gram_rate = nf * df * df / t_gram / 1e9;
        let grad_rate = 2.0 * nf * df * df / t_grad / 1e9;
        let gemm_rate = gemm_gflops(n, d, d, runs)?;

        let case = format!("bibtex m={M} γ={GAMMA} λ={LAMBDA}, {done} iterations");
        let mut out = vec![
            Measurement::new(&case, "fit", total, "s").with_reference(60.0, "target ceiling"),
            Measurement::new(&case, "per iteration", per_iter, "s"),
            Measurement::new(
                &case,
                "line-search trials per iteration",
                trials as f64 / done.max(1) as f64,
                "",
            ),
        ];
        for k in [1, 3, 5] {
            let p = eval.precision_at(k).ok_or_else(|| fail("no P@k"))?;
            out.push(Measurement::new(&case, &format!("P@{k}"), 100.0 * p, "%"));
        }
        let shape = format!("{n}x{d}");
        out.push(
            Measurement::new(&format!("ΦᵀΦ, Φ {shape}"), "rate", gram_rate, "GFLOP/s")
                .with_reference(gemm_rate, "GEMM of the same shape, same run"),
        );
        out.push(
            Measurement::new(&format!("Φ(WWᵀ), Φ {shape}"), "rate", grad_rate, "GFLOP/s")
                .with_reference(gemm_rate, "GEMM of the same shape, same run"),
        );
        Ok(out)
    }
}
