//! IMC with fixed kernel features against the scikit-learn pipelines a user would otherwise
//! build (issue 7, DESIGN §3.1, §3.3, §5): IMC-RFF = random Fourier features + ridge
//! (scikit-learn: `RBFSampler(n_components = 2m)` + `Ridge`), IMC-NYS = normalised Nyström +
//! ridge (`Nystroem(n_components = m)` + `Ridge`), m = 500, on Bibtex and Delicious with the
//! same γ and λ. Both sides time the whole fit from loaded data (map drawn, features computed,
//! ridge solved) and are scored by P@1/3/5 on the test part.
//!
//! The peer runs `../shared/peers/multilabel_sklearn.py` (or `$GIMC_PEERS/…`) in a child
//! Python process when `python3` with scikit-learn is available; otherwise only our figures are
//! reported and a `peer available = 0` row says why the ratios are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use gimc::{LabelData, LabelParams, Landmarks, MapKind, MapSpec, fit_labels};
use gimc_data::{Dataset, Targets, load_named};
use gimc_linalg::rng::seeded;
use serde::Deserialize;

use super::{Benchmark, Measurement, median_secs};
use crate::{Context, ExperimentError};

fn fail(e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError::Failed(e.to_string())
}

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

fn label_data(d: &Dataset) -> Result<LabelData, ExperimentError> {
    match &d.targets {
        Targets::Labels { matrix, .. } => {
            LabelData::multi_label(d.features.clone(), matrix.clone()).map_err(fail)
        }
        _ => Err(fail("expected a multi-label set")),
    }
}

/// The peer script directory: `$GIMC_PEERS`, else `../shared/peers` from the working
/// directory, else next to the data directory (`<data>/../peers`).
fn peers_dir(data_dir: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("GIMC_PEERS") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(PathBuf::from("../shared/peers"));
    if let Some(parent) = data_dir.parent() {
        candidates.push(parent.join("peers"));
    }
    candidates
        .into_iter()
        .find(|d| d.join("multilabel_sklearn.py").is_file())
}

/// Whether `python3` can import scikit-learn.
fn sklearn_available() -> bool {
    Command::new("python3")
        .args(["-c", "import sklearn"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
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
    let out = Command::new("python3")
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
        let v: serde_json::Value = serde_json::from_str(l).map_err(fail)?;
        if let Some(r) = v.get("peak_rss_kib").and_then(serde_json::Value::as_f64) {
            rss = Some(r);
        } else {
            line = Some(serde_json::from_value(v).map_err(fail)?);
        }
    }
    let mut line = line.ok_or_else(|| fail(format!("no result line from the peer: {text}")))?;
    line.peak_rss_kib = rss;
    Ok(line)
}

/// Our fit of one case: (median fit seconds, [P@1, P@3, P@5] in %).
fn run_ours(
    train: &LabelData,
    test: &LabelData,
    case: &Case,
    runs: usize,
    seed: u64,
) -> Result<(f64, [f64; 3]), ExperimentError> {
    let spec = MapSpec {
        kind: match case.method {
            "rff" => MapKind::Fourier,
            _ => MapKind::Nystrom {
                landmarks: Landmarks::Uniform,
                normalized: true,
            },
        },
        m: M,
        gamma: case.gamma,
    };
    let params = LabelParams {
        lambda: case.lambda,
        max_iter: 0,
        eval_train: false,
        ..LabelParams::default()
    };
    let (secs, fit) = median_secs(runs, || {
        // Timed: the map drawn from the training rows, Φ, ΦᵀΦ, AᵀΦ and the ridge solve.
        let map = spec
            .build(train.features(), &mut seeded(seed))
            .map_err(fail)?;
        fit_labels(train, map, &params, None, &mut gimc::NoObserver).map_err(fail)
    })?;
    let eval = fit.model.evaluate(test, &[1, 3, 5]).map_err(fail)?;
    let mut p = [0.0; 3];
    for (slot, k) in p.iter_mut().zip([1, 3, 5]) {
        *slot = 100.0 * eval.precision_at(k).ok_or_else(|| fail("no P@k"))?;
    }
    Ok((secs, p))
}

impl Benchmark for KernelRidgePeers {
    fn name(&self) -> &'static str {
        "kernel-ridge-peers"
    }

    fn description(&self) -> &'static str {
        "IMC-RFF and IMC-NYS (m = 500, fixed maps, closed-form ridge W) on Bibtex and Delicious \
         against scikit-learn's RBFSampler(2m) + Ridge and Nystroem(m) + Ridge with the same γ \
         and λ, run side by side in this benchmark (../shared/peers/multilabel_sklearn.py, 2 \
         BLAS threads). Fit seconds from loaded data (median of 3 for ours, one peer run); P@k \
         on the test part; the peer's reference column is its own figure; `speed-up` = peer fit \
         s / our fit s. Peak RSS of the peer is its whole Python process."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let runs = if ctx.quick { 1 } else { 3 };
        let peer_script = peers_dir(&ctx.data_dir)
            .map(|d| d.join("multilabel_sklearn.py"))
            .filter(|_| sklearn_available());
        let mut out = Vec::new();
        if peer_script.is_none() {
            out.push(Measurement::new(
                self.name(),
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
                let label = format!(
                    "{set} IMC-{} m={M} γ={} λ={}",
                    if case.method == "rff" { "RFF" } else { "NYS" },
                    case.gamma,
                    case.lambda
                );
                let (secs, p) = run_ours(&train, &test, case, runs, ctx.seed)?;
                let peer = match &peer_script {
                    Some(script) => Some(run_peer(script, &ctx.data_dir, case, ctx.seed)?),
                    None => None,
                };
                let src = "scikit-learn, same run";
                let mut fit = Measurement::new(self.name(), &label, "fit", secs, "s");
                let mut ps: Vec<Measurement> = [1, 3, 5]
                    .iter()
                    .zip(p)
                    .map(|(k, v)| Measurement::new(self.name(), &label, &format!("P@{k}"), v, "%"))
                    .collect();
                if let Some(peer) = &peer {
                    fit = fit.with_reference(peer.fit_s, src);
                    for (m, v) in ps.iter_mut().zip([peer.p1, peer.p3, peer.p5]) {
                        *m = m.clone().with_reference(v, src);
                    }
                }
                out.push(fit);
                out.extend(ps);
                if let Some(peer) = peer {
                    out.push(Measurement::new(
                        self.name(),
                        &label,
                        "speed-up (peer s / ours)",
                        peer.fit_s / secs.max(1e-9),
                        "×",
                    ));
                    if let Some(kib) = peer.peak_rss_kib {
                        out.push(Measurement::new(
                            self.name(),
                            &label,
                            "peer peak RSS",
                            kib / 1024.0,
                            "MiB",
                        ));
                    }
                }
            }
        }
        Ok(out)
    }
}
