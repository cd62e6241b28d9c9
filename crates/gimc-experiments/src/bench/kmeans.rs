//! k-means against scikit-learn's `KMeans` (DESIGN §3.4, §5): the same points, k,
//! n_init, max_iter and tolerance; fit time and inertia side by side.
//!
//! Cases: mushrooms (8,124 × 112, dense as scikit-learn loads it, k = 2) and a generated set of
//! 200,000 × 20 points around 8 centres (k = 8). The generated points come from the peer script
//! (`kmeans_sklearn.py --blobs 200000 20 8 --write FILE`, scikit-learn's `make_blobs`) so both
//! sides cluster exactly the same rows; without python3 + scikit-learn we cluster our own
//! `gimc_data::synth::blobs` of the same shape and report no peer figures. The peer runs in a
//! child process with as many threads as this machine has; its time is its `fit` call alone, ours
//! the median of 3 `fit_kmeans` calls on data already in memory.

use gimc_linalg::observe::NoObserver;
use std::path::Path;

use gimc_cluster::{KMeansParams, fit_kmeans};
use gimc_data::{LibsvmOptions, read_libsvm};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::rng::seeded;

use super::{Benchmark, Measurement, median_secs, peer_script, sklearn_available};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// k-means against scikit-learn.
pub struct KMeansPeer;

/// Restarts, iteration cap and tolerance of both sides (scikit-learn's defaults except n_init,
/// which its newer versions set to 1 or "auto").
const N_INIT: usize = 10;
const MAX_ITER: usize = 300;
const TOL: f64 = 1e-4;
/// Shape of the generated set.
const BLOBS: (usize, usize, usize) = (200_000, 20, 8);
/// Quick form: a smaller generated set.
const BLOBS_QUICK: (usize, usize, usize) = (20_000, 20, 8);

/// One JSON line of the peer script.
#[derive(Debug, Clone, Copy)]
struct PeerFit {
    inertia: f64,
    iterations: f64,
    fit_s: f64,
}

/// Runs the peer script with `args` (data selection and, for blobs, `--write`), same k,
/// n_init, max_iter, tol.
fn run_peer(script: &Path, args: &[String], k: usize) -> Result<PeerFit, ExperimentError> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let out = super::peer_command("python3")
        .arg(script)
        .args(args)
        .args(["--k", &k.to_string()])
        .args(["--n-init", &N_INIT.to_string()])
        .args(["--max-iter", &MAX_ITER.to_string()])
        .args(["--tol", &TOL.to_string()])
        .args(["--threads", &threads.to_string()])
        .output()
        .map_err(|e| fail(format!("cannot run python3: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "peer script failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| fail("peer script printed no JSON line"))?;
    let v: serde_json::Value = serde_json::from_str(line)?;
    let num = |key: &str| {
        v.get(key)
            .and_then(serde_json::Value::as_f64)
            .ok_or_else(|| fail(format!("peer JSON lacks {key}")))
    };
    Ok(PeerFit {
        inertia: num("inertia")?,
        iterations: num("iterations")?,
        fit_s: num("fit_s")?,
    })
}

/// Our fit: (median seconds over `runs`, inertia, iterations of the kept restart).
fn ours(x: &FeatureMatrix, k: usize, runs: usize) -> Result<(f64, f64, usize), ExperimentError> {
    let params = KMeansParams::new(k)
        .with_n_init(N_INIT)
        .with_max_iter(MAX_ITER)
        .with_tol(TOL)
        .check()
        .map_err(|e| fail(format!("k-means: {e}")))?;
    let (secs, model) = median_secs(runs, || {
        fit_kmeans(x, &params, &mut seeded(0), &mut NoObserver)
    })
    .map_err(|e| fail(format!("k-means: {e}")))?;
    Ok((secs, model.inertia, model.n_iter))
}

fn measurements(case: &str, ours: (f64, f64, usize), peer: Option<PeerFit>) -> Vec<Measurement> {
    let src = "scikit-learn KMeans, same points / k / n_init / max_iter / tol";
    let (secs, inertia, iters) = ours;
    let mut fit = Measurement::new(case, "fit", secs, "s");
    let mut ine = Measurement::new(case, "inertia", inertia, "");
    let mut it = Measurement::new(case, "Lloyd iterations (kept restart)", iters as f64, "");
    let mut out = Vec::new();
    if let Some(p) = peer {
        fit = fit.with_reference(p.fit_s, src);
        ine = ine.with_reference(p.inertia, src);
        it = it.with_reference(p.iterations, src);
        out.push(fit);
        out.push(Measurement::new(
            case,
            "time ratio ours / scikit-learn",
            secs / p.fit_s.max(1e-9),
            "×",
        ));
        out.push(ine);
        out.push(Measurement::new(
            case,
            "inertia ratio ours / scikit-learn",
            inertia / p.inertia.max(f64::MIN_POSITIVE),
            "×",
        ));
        out.push(it);
    } else {
        out.extend([fit, ine, it]);
    }
    out
}

impl Benchmark for KMeansPeer {
    fn name(&self) -> &'static str {
        "kmeans"
    }

    fn description(&self) -> &'static str {
        "k-means (k-means++, 10 restarts, at most 300 Lloyd iterations, tol 1e-4 relative to the \
         mean column variance) against scikit-learn's KMeans with the same settings on the same \
         points: mushrooms (8,124 × 112 dense, k = 2) and make_blobs 200,000 × 20 with 8 centres \
         (k = 8). Ours: median of 3 fits; scikit-learn: one fit in a child process with the same \
         thread count."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let runs = if ctx.quick { 1 } else { 3 };
        let peer = match peer_script(&ctx.data_dir, "kmeans_sklearn.py") {
            Some(s) if sklearn_available() => Some(s),
            _ => None,
        };
        let mut out = Vec::new();
        // mushrooms, dense (scikit-learn densifies it too)
        let mush = ctx.data_dir.join("mushrooms").join("mushrooms.txt");
        if mush.is_file() {
            let d = read_libsvm(&mush, &LibsvmOptions::default())?;
            let x = FeatureMatrix::dense(d.features.to_dense())?;
            let o = ours(&x, 2, runs)?;
            let p = match &peer {
                Some(s) => Some(run_peer(
                    s,
                    &["--libsvm".into(), mush.display().to_string()],
                    2,
                )?),
                None => None,
            };
            out.extend(measurements(
                &format!("mushrooms {} × {}, k = 2", x.nrows(), x.ncols()),
                o,
                p,
            ));
        }
        // generated blobs
        let (n, d, c) = if ctx.quick { BLOBS_QUICK } else { BLOBS };
        let case = format!("blobs {n} × {d}, {c} centres, k = {c}");
        match &peer {
            Some(s) => {
                let file = std::env::temp_dir().join(format!(
                    "gimc-kmeans-blobs-{n}x{d}-{c}-{}.svm",
                    std::process::id()
                ));
                let args = vec![
                    "--blobs".to_string(),
                    n.to_string(),
                    d.to_string(),
                    c.to_string(),
                    "--write".to_string(),
                    file.display().to_string(),
                ];
                let p = run_peer(s, &args, c)?;
                let data = read_libsvm(
                    &file,
                    &LibsvmOptions {
                        n_features: Some(d),
                        ..LibsvmOptions::default()
                    },
                );
                let _ = std::fs::remove_file(&file);
                let x = FeatureMatrix::dense(data?.features.to_dense())?;
                let o = ours(&x, c, runs)?;
                out.extend(measurements(&case, o, Some(p)));
            }
            None => {
                let shape = gimc_data::synth::BlobsParams::new(n, d, c, 1.0).check()?;
                let data = gimc_data::synth::blobs(&shape, &mut seeded(ctx.seed))?;
                let o = ours(&data.features, c, runs)?;
                out.extend(measurements(
                    &format!("{case} (ours only: no python3 + scikit-learn)"),
                    o,
                    None,
                ));
            }
        }
        Ok(out)
    }
}
