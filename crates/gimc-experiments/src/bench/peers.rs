//! IMC with fixed kernel features against the scikit-learn pipelines a user would otherwise
//! build (DESIGN §3.1, §3.3, §5): IMC-RFF = random Fourier features + ridge
//! (scikit-learn: `RBFSampler(n_components = 2m)` + `Ridge`), IMC-NYS = normalised Nyström +
//! ridge (`Nystroem(n_components = m)` + `Ridge`), m = 500, on Bibtex and Delicious with the
//! same γ and λ. Both sides time the whole fit from loaded data (map drawn, features computed,
//! ridge solved) and are scored by P@1/3/5 on the test part.
//!
//! The peer runs `../shared/peers/multilabel_sklearn.py` (or `$GIMC_PEERS/…`) in a child
//! Python process when `python3` with scikit-learn is available; otherwise only our figures are
//! reported and a `peer available = 0` row says why the ratios are missing.

use std::path::Path;

use gimc::{LabelData, LabelParams, NoObserver, fit_labels};
use gimc_data::{Dataset, Targets, load_named};
use gimc_featmap::{FourierFamily, MapFamily, NystromFamily};
use gimc_featmap::{LearnableMap, RandomCosine};
use gimc_linalg::rng::seeded;
use serde::Deserialize;

use super::{Benchmark, Measurement, median_secs, peer_script, sklearn_available};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// Fixed-map IMC on Bibtex and Delicious against scikit-learn.
pub struct KernelRidgePeers;

/// One compared setting: set, method (`rff` | `nys`, the peer script's names), γ, λ.
struct Case {
    set: &'static str,
    method: &'static str,
    gamma: f64,
    lambda: f64,
}

/// Number of Fourier directions / Nyström landmarks of every case.
const M: usize = 500;

/// The settings of ../shared/peers/README.md (γ and λ as the peer figures were taken).
const CASES: [Case; 4] = [
    Case {
        set: "bibtex",
        method: "rff",
        gamma: 0.002,
        lambda: 0.1,
    },
    Case {
        set: "bibtex",
        method: "nys",
        gamma: 0.005,
        lambda: 0.1,
    },
    Case {
        set: "delicious",
        method: "rff",
        gamma: 0.056,
        lambda: 1.0,
    },
    Case {
        set: "delicious",
        method: "nys",
        gamma: 0.056,
        lambda: 1.0,
    },
];

/// One JSON line of the peer script (plus the peak RSS our wrapper appends).
#[derive(Debug, Deserialize)]
struct PeerLine {
    #[serde(rename = "P@1")]
    p1: f64,
    #[serde(rename = "P@3")]
    p3: f64,
    #[serde(rename = "P@5")]
    p5: f64,
    fit_s: f64,
    peak_rss_kib: Option<f64>,
}

/// The peer's figures over several seeds: mean P@k, median fit seconds, largest peak RSS.
#[derive(Debug)]
struct PeerSummary {
    p: [f64; 3],
    fit_s: f64,
    peak_rss_kib: Option<f64>,
}

impl PeerSummary {
    fn of(lines: &[PeerLine]) -> Self {
        let n = lines.len().max(1) as f64;
        let mut p = [0.0; 3];
        for l in lines {
            for (acc, v) in p.iter_mut().zip([l.p1, l.p3, l.p5]) {
                *acc += v / n;
            }
        }
        let mut times: Vec<f64> = lines.iter().map(|l| l.fit_s).collect();
        Self {
            p,
            fit_s: median(&mut times),
            peak_rss_kib: lines.iter().filter_map(|l| l.peak_rss_kib).reduce(f64::max),
        }
    }
}

/// The median of `v` (sorted in place; 0 when empty).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn label_data(d: &Dataset) -> Result<LabelData, ExperimentError> {
    match &d.targets {
        Targets::Labels { matrix, .. } => {
            LabelData::multi_label(d.features.clone(), matrix.clone())
                .map_err(ExperimentError::from)
        }
        _ => Err(fail("expected a multi-label set")),
    }
}

/// Runs the peer script for one case in a child process (2 BLAS threads, like ours) and
/// parses its JSON line, with the child's peak RSS.
fn run_peer(
    script: &Path,
    data_dir: &Path,
    case: &Case,
    seed: u64,
) -> Result<PeerLine, ExperimentError> {
    // A tiny wrapper runs the script as __main__ and prints the process's peak RSS afterwards.
    let wrapper = "import json, resource, runpy, sys\n\
                   script = sys.argv[1]\n\
                   sys.argv = sys.argv[1:]\n\
                   runpy.run_path(script, run_name='__main__')\n\
                   print(json.dumps({'peak_rss_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))\n";
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let out = super::peer_command("python3")
        .arg("-c")
        .arg(wrapper)
        .arg(script)
        .arg(data_dir)
        .arg(case.set)
        .args(["--m", &M.to_string()])
        .args(["--gamma", &case.gamma.to_string()])
        .args(["--lam", &case.lambda.to_string()])
        .args(["--seed", &seed.to_string()])
        .args(["--methods", case.method])
        .args(["--threads", &threads.to_string()])
        .output()
        .map_err(|e| fail(format!("cannot run python3: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "peer script failed on {} {}: {}",
            case.set,
            case.method,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut line: Option<PeerLine> = None;
    let mut rss = None;
    for l in text.lines().filter(|l| l.trim_start().starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(l)?;
        if let Some(r) = v.get("peak_rss_kib").and_then(serde_json::Value::as_f64) {
            rss = Some(r);
        } else {
            line = Some(serde_json::from_value(v)?);
        }
    }
    let mut line = line.ok_or_else(|| fail(format!("no result line from the peer: {text}")))?;
    line.peak_rss_kib = rss;
    Ok(line)
}

/// Which of our maps a row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ours {
    /// Paired random Fourier features of GIMC eq. 6: m directions, D = 2m ([cos, sin]).
    Paired,
    /// Random-phase Fourier features (`RandomCosine`), D = 2m directions: RBFSampler's form.
    Phase,
    /// Normalised Nyström, m uniform landmarks.
    Nystrom,
}

impl Ours {
    fn label(self) -> &'static str {
        match self {
            Ours::Paired => "IMC-RFF (paired, eq. 6)",
            Ours::Phase => "IMC-RFF (random phase)",
            Ours::Nystrom => "IMC-NYS",
        }
    }
}

/// Times `fit` (median of `runs`) and scores its model on `test`: (seconds, [P@1, P@3, P@5]).
fn timed_fit<M: LearnableMap + Clone>(
    train: &LabelData,
    test: &LabelData,
    lambda: f64,
    runs: usize,
    build: impl Fn() -> Result<M, ExperimentError>,
) -> Result<(f64, [f64; 3]), ExperimentError> {
    let params = LabelParams::default()
        .with_lambda(lambda)
        .with_max_iter(0)
        .with_eval_train(false)
        .check()?;
    let (secs, fit) = median_secs(runs, || {
        // Timed: the map drawn from the training rows, Φ (or its factors), ΦᵀΦ, AᵀΦ and the
        // ridge solve.
        let map = build()?;
        fit_labels(train, map, &params, None, &mut NoObserver).map_err(ExperimentError::from)
    })?;
    let eval = fit.model.evaluate(test, &[1, 3, 5])?;
    let mut p = [0.0; 3];
    for (slot, k) in p.iter_mut().zip([1, 3, 5]) {
        *slot = 100.0 * eval.precision_at(k).ok_or_else(|| fail("no P@k"))?;
    }
    Ok((secs, p))
}

/// Our fit of one case with one of our maps.
fn run_ours(
    train: &LabelData,
    test: &LabelData,
    case: &Case,
    ours: Ours,
    runs: usize,
    seed: u64,
) -> Result<(f64, [f64; 3]), ExperimentError> {
    let x = train.features();
    match ours {
        Ours::Paired => timed_fit(train, test, case.lambda, runs, || {
            FourierFamily
                .build(x, M, case.gamma, &mut seeded(seed))
                .map_err(ExperimentError::from)
        }),
        Ours::Phase => timed_fit(train, test, case.lambda, runs, || {
            RandomCosine::new(x.ncols(), 2 * M, case.gamma, &mut seeded(seed))
                .map_err(ExperimentError::from)
        }),
        Ours::Nystrom => timed_fit(train, test, case.lambda, runs, || {
            NystromFamily::uniform_whitened()
                .build(x, M, case.gamma, &mut seeded(seed))
                .map_err(ExperimentError::from)
        }),
    }
}

impl Benchmark for KernelRidgePeers {
    fn name(&self) -> &'static str {
        "kernel-ridge-peers"
    }

    fn description(&self) -> &'static str {
        "IMC-RFF and IMC-NYS (m = 500, fixed maps, closed-form ridge W) on Bibtex and Delicious \
         against scikit-learn's RBFSampler(2m) + Ridge and Nystroem(m) + Ridge with the same γ \
         and λ, run side by side in this benchmark (../shared/peers/multilabel_sklearn.py, as \
         many BLAS threads as cores). IMC-RFF in two forms at the same D = 2m: random phases \
         (RBFSampler's construction) and the paired [cos, sin] of GIMC eq. 6. Fit seconds from \
         loaded data, median over 10 seeds on each side; P@k on the test part, mean over the same 10 seeds (one \
         draw moves P@1 by up to ±0.5 on either side); the reference \
         column is the peer's figure; `speed-up` = peer fit s / our fit s. The peer's peak RSS \
         is its whole Python process."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let seeds: u64 = if ctx.quick { 1 } else { 10 };
        let peer_script =
            peer_script(&ctx.data_dir, "multilabel_sklearn.py").filter(|_| sklearn_available());
        let mut out = Vec::new();
        if peer_script.is_none() {
            out.push(Measurement::new(
                "python3 + scikit-learn + ../shared/peers",
                "peer available",
                0.0,
                "bool",
            ));
        }
        let sets: &[&str] = if ctx.quick {
            &["bibtex"]
        } else {
            &["bibtex", "delicious"]
        };
        for &set in sets {
            let named = load_named(&ctx.data_dir, set)?;
            let (train, test) = match (named.part("train"), named.part("test")) {
                (Some(a), Some(b)) => (label_data(a)?, label_data(b)?),
                _ => return Err(fail(format!("{set} lacks a train or test part"))),
            };
            for case in CASES.iter().filter(|c| c.set == set) {
                // Accuracy is the mean over `seeds` independent draws on both sides (one draw
                // moves P@1 by up to a point); time is the median over the same runs.
                let peer = match &peer_script {
                    Some(script) => {
                        let lines = (0..seeds)
                            .map(|s| run_peer(script, &ctx.data_dir, case, ctx.seed + s))
                            .collect::<Result<Vec<_>, _>>()?;
                        Some(PeerSummary::of(&lines))
                    }
                    None => None,
                };
                let variants: &[Ours] = if case.method == "rff" {
                    &[Ours::Phase, Ours::Paired]
                } else {
                    &[Ours::Nystrom]
                };
                for &ours in variants {
                    let label = format!(
                        "{set} {} m={M} γ={} λ={}",
                        ours.label(),
                        case.gamma,
                        case.lambda
                    );
                    let mut times = Vec::new();
                    let mut p = [0.0; 3];
                    for s in 0..seeds {
                        let (secs, ps) = run_ours(&train, &test, case, ours, 1, ctx.seed + s)?;
                        times.push(secs);
                        for (acc, v) in p.iter_mut().zip(ps) {
                            *acc += v / seeds as f64;
                        }
                    }
                    out.extend(rows(&label, median(&mut times), p, peer.as_ref()));
                }
            }
        }
        Ok(out)
    }
}

/// The measurements of one of our rows, with the peer's figures as references.
fn rows(label: &str, secs: f64, p: [f64; 3], peer: Option<&PeerSummary>) -> Vec<Measurement> {
    let src = "scikit-learn, same run";
    let mut out = Vec::new();
    let fit = Measurement::new(label, "fit", secs, "s");
    out.push(match peer {
        Some(peer) => fit.with_reference(peer.fit_s, src),
        None => fit,
    });
    for (i, (k, v)) in [1, 3, 5].iter().zip(p).enumerate() {
        let m = Measurement::new(label, &format!("P@{k}"), v, "%");
        out.push(match peer {
            Some(peer) => m.with_reference(peer.p[i], src),
            None => m,
        });
    }
    if let Some(peer) = peer {
        out.push(Measurement::new(
            label,
            "speed-up (peer s / ours)",
            peer.fit_s / secs.max(1e-9),
            "×",
        ));
        if let Some(kib) = peer.peak_rss_kib {
            out.push(Measurement::new(
                label,
                "peer peak RSS",
                kib / 1024.0,
                "MiB",
            ));
        }
    }
    out
}
