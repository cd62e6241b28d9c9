//! `gimc fit` with its defaults against the strongest multi-label peers a user would otherwise
//! pick, each tuned on validation rows only (`../shared/peers/multilabel_peers.py`): Ridge,
//! RBFSampler / Nystroem + Ridge and PECOS XR-Linear, on the Mulan sets bibtex, delicious,
//! emotions, yeast, birds, genbase and flags.
//!
//! Our side runs the `gimc` binary as a new user would: `gimc fit TRAIN.arff -o M.gimc` with no
//! other flag than `--json` (to read what it chose), timed as the wall seconds of the whole
//! process (start, reading, model selection, writing the model); then `gimc predict TEST.arff
//! -m M.gimc --top-k 5 -o P` and `gimc eval P TEST.arff`. The peers' fit seconds are what the
//! script reports: each peer's whole grid selection and refit, from data already read.
//!
//! P@k has one definition on both sides: the mean over every test row of (true labels among the
//! first k predicted) / k, so a row without a label scores 0 (birds has many). The bench
//! computes it itself from the prediction file and the test labels read through `gimc_data`,
//! and checks it against `gimc eval` (which uses the same convention); should the two ever
//! differ, both are reported.
//!
//! Environment: `GIMC_BENCH_SETS` (comma list, e.g. `emotions,flags`) limits the sets
//! (`--quick`: emotions and flags); `GIMC_PEERS_PYTHON` is the peers' interpreter (default
//! `python3`); `GIMC_PEERS` the folder of the peer scripts; `GIMC_BIN` the `gimc` binary
//! (default: the one beside this executable). A set whose files are missing is a row naming
//! `cargo xtask datasets fetch --only NAME`; without numpy, scipy and scikit-learn only our side
//! runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use gimc_data::{Manifest, NamedOptions, Targets, load_named_part};
use gimc_linalg::sprs::CsMat;
use serde_json::Value;

use super::{Benchmark, Measurement, peer_script};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// `gimc fit` with its defaults against tuned multi-label peers.
pub struct MultilabelPeers;

/// The bench's name.
const NAME: &str = "multilabel-peers";
/// Every set, in the order they run.
const SETS: [&str; 7] = [
    "bibtex",
    "delicious",
    "emotions",
    "yeast",
    "birds",
    "genbase",
    "flags",
];
/// The sets of `--quick`.
const QUICK_SETS: [&str; 2] = ["emotions", "flags"];
/// The ks of P@k.
const KS: [usize; 3] = [1, 3, 5];
/// Our method's name in the cases (`<set> gimc`).
const GIMC: &str = "gimc";
/// Metric of our fit time divided by a peer's: `fit ÷ <peer> fit`.
const RATIO_PREFIX: &str = "fit ÷ ";
/// Metric of a peer that did not run: `skipped: <reason>`.
const SKIPPED_PREFIX: &str = "skipped: ";
/// Metric of a step that failed: `failed: <what>`.
const FAILED_PREFIX: &str = "failed: ";

/// One fitted peer as the script reports it (P@k in percent).
#[derive(Debug, Clone, PartialEq)]
struct PeerFit {
    peer: String,
    /// The chosen setting, as compact JSON.
    chosen: String,
    val_p1: f64,
    p: [f64; 3],
    fit_s: f64,
}

/// One peer line: fitted, or skipped (e.g. PECOS not installed).
#[derive(Debug, Clone, PartialEq)]
enum PeerOutcome {
    Ran(PeerFit),
    Skipped { peer: String, reason: String },
}

/// The best test P@k over the peers: (`P@k`, value in percent, peer).
#[derive(Debug, Clone, PartialEq)]
struct Best {
    metric: String,
    value: f64,
    peer: String,
}

/// Everything the peer script printed.
#[derive(Debug, Clone, Default, PartialEq)]
struct PeerReport {
    peers: Vec<PeerOutcome>,
    best: Vec<Best>,
}

impl PeerReport {
    /// The best peer's P@k (percent) and name, when the script reported one.
    fn best_at(&self, k: usize) -> Option<&Best> {
        let metric = format!("P@{k}");
        self.best.iter().find(|b| b.metric == metric)
    }
}

/// Parses the peer script's output: one JSON object per peer (fitted or skipped), then one
/// `{"best": {"P@k": [value, peer], ...}}` line. Lines that are not JSON objects are ignored.
fn parse_peer_output(text: &str) -> Result<PeerReport, ExperimentError> {
    let mut report = PeerReport::default();
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let at = |msg: String| fail(format!("peer output line {}: {msg}: {line}", no + 1));
        let v: Value = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        if let Some(best) = v.get("best") {
            let obj = best
                .as_object()
                .ok_or_else(|| at("`best` is not an object".into()))?;
            for (metric, pair) in obj {
                match pair.as_array().map(Vec::as_slice) {
                    Some([value, peer]) => report.best.push(Best {
                        metric: metric.clone(),
                        value: value
                            .as_f64()
                            .ok_or_else(|| at(format!("best {metric}: value not a number")))?,
                        peer: peer
                            .as_str()
                            .ok_or_else(|| at(format!("best {metric}: peer not a string")))?
                            .to_string(),
                    }),
                    _ => return Err(at(format!("best {metric}: expected [value, peer]"))),
                }
            }
            continue;
        }
        let peer = v
            .get("peer")
            .and_then(Value::as_str)
            .ok_or_else(|| at("neither `peer` nor `best`".into()))?
            .to_string();
        if let Some(reason) = v.get("skipped") {
            let reason = reason
                .as_str()
                .map_or_else(|| reason.to_string(), str::to_string);
            report.peers.push(PeerOutcome::Skipped { peer, reason });
            continue;
        }
        let num = |key: &str| {
            v.get(key)
                .and_then(Value::as_f64)
                .ok_or_else(|| at(format!("peer {peer}: `{key}` missing or not a number")))
        };
        report.peers.push(PeerOutcome::Ran(PeerFit {
            chosen: v.get("chosen").map(Value::to_string).unwrap_or_default(),
            val_p1: num("val_P@1")?,
            p: [num("P@1")?, num("P@3")?, num("P@5")?],
            fit_s: num("fit_s")?,
            peer,
        }));
    }
    if report.peers.is_empty() {
        return Err(fail(format!(
            "the peer script printed no peer line: {text}"
        )));
    }
    Ok(report)
}

/// P@k in percent: the mean over every row of (true labels among the first k predicted) / k.
/// A row without a true label scores 0 and counts in the mean; a list shorter than k counts
/// its missing ranks as misses.
fn precision_at_k(
    topk: &[Vec<usize>],
    truth: &CsMat<f64>,
    k: usize,
) -> Result<f64, ExperimentError> {
    if k == 0 {
        return Err(fail("P@k needs k ≥ 1"));
    }
    let truth = truth.to_csr();
    if topk.len() != truth.rows() || topk.is_empty() {
        return Err(fail(format!(
            "{} prediction rows for {} truth rows",
            topk.len(),
            truth.rows()
        )));
    }
    let mut total = 0.0;
    for (i, (list, row)) in topk.iter().zip(truth.outer_iterator()).enumerate() {
        let take = &list[..list.len().min(k)];
        for (p, lab) in take.iter().enumerate() {
            if take[..p].contains(lab) {
                return Err(fail(format!("row {i}: label {lab} predicted twice")));
            }
        }
        let hits = take
            .iter()
            .filter(|&&lab| row.get(lab).is_some_and(|&v| v != 0.0))
            .count();
        total += hits as f64 / k as f64;
    }
    Ok(100.0 * total / topk.len() as f64)
}

/// A `gimc predict` text file: per row, the predicted label indices (`j` or `j:score`); lines
/// starting with `#` (the `# gimc predictions: kind=labels` header) are not rows.
fn parse_topk(text: &str, n_labels: usize) -> Result<Vec<Vec<usize>>, ExperimentError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#'))
        .map(|(no, line)| {
            line.split_whitespace()
                .map(|tok| {
                    let head = tok.split(':').next().unwrap_or(tok);
                    match head.parse::<usize>() {
                        Ok(j) if j < n_labels => Ok(j),
                        _ => Err(fail(format!(
                            "predictions line {}: `{tok}` is not a label below {n_labels}",
                            no + 1
                        ))),
                    }
                })
                .collect()
        })
        .collect()
}

/// The Python interpreter of the peers: `$GIMC_PEERS_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("GIMC_PEERS_PYTHON")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Whether `python` imports numpy, scipy and scikit-learn.
fn peers_runnable(python: &str) -> bool {
    Command::new(python)
        .args(["-c", "import numpy, scipy, sklearn"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The sets to run: `$GIMC_BENCH_SETS` (comma list), else the quick or full list.
fn selected_sets(quick: bool) -> Result<Vec<&'static str>, ExperimentError> {
    let list = std::env::var("GIMC_BENCH_SETS").unwrap_or_default();
    if list.trim().is_empty() {
        return Ok(if quick {
            QUICK_SETS.to_vec()
        } else {
            SETS.to_vec()
        });
    }
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            SETS.iter().copied().find(|&k| k == s).ok_or_else(|| {
                fail(format!(
                    "GIMC_BENCH_SETS: unknown set {s:?}; known: {}",
                    SETS.join(", ")
                ))
            })
        })
        .collect()
}

/// A progress line on stderr (the benchmark runner shows a child's stderr as it comes).
#[allow(clippy::print_stderr)]
fn note(msg: &str) {
    eprintln!("    [{NAME}] {msg}");
}

/// The last non-empty line of a child's stderr, for a failure row.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The files of one set: train, test and the XML label list.
struct SetFiles {
    train: PathBuf,
    test: PathBuf,
    xml: PathBuf,
}

/// The set's files from the manifest, or the manifest paths that are missing.
fn set_files(data_dir: &Path, set: &str) -> Result<Result<SetFiles, Vec<String>>, ExperimentError> {
    let manifest = Manifest::embedded()?;
    let entry = manifest.require(set)?;
    let missing: Vec<String> = entry
        .files
        .iter()
        .filter(|f| !data_dir.join(&f.path).is_file())
        .map(|f| f.path.clone())
        .collect();
    if !missing.is_empty() {
        return Ok(Err(missing));
    }
    let part = |name: &str| {
        entry
            .part(name)
            .ok_or_else(|| fail(format!("{set}: no `{name}` part in the manifest")))
    };
    let (train, test) = (part("train")?, part("test")?);
    let xml = test
        .labels_file
        .as_ref()
        .ok_or_else(|| fail(format!("{set}: the test part has no labels file")))?;
    Ok(Ok(SetFiles {
        train: data_dir.join(&train.file),
        test: data_dir.join(&test.file),
        xml: data_dir.join(xml),
    }))
}

/// Runs the peer script on one set. `Err` is a failure to report (the message), not a bench
/// error.
fn run_peers(python: &str, script: &Path, files: &SetFiles) -> Result<PeerReport, String> {
    let out = super::peer_command(python)
        .arg(script)
        .arg(&files.train)
        .arg(&files.test)
        .arg(&files.xml)
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "peer script {}: {}",
            out.status,
            last_line(&out.stderr)
        ));
    }
    parse_peer_output(&String::from_utf8_lossy(&out.stdout)).map_err(|e| e.to_string())
}

/// Our side on one set.
struct Ours {
    fit_s: f64,
    chosen: String,
    /// Our P@k (percent), computed here.
    p: [f64; 3],
    /// `gimc eval`'s P@k (percent).
    eval_p: [f64; 3],
}

/// Runs `gimc` (a subcommand with its arguments); its stdout, or the failure's message.
fn run_gimc(gimc: &Path, args: &[&std::ffi::OsStr]) -> Result<(Vec<u8>, f64), String> {
    let t0 = Instant::now();
    let out = Command::new(gimc)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", gimc.display()))?;
    let secs = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        let what = args
            .first()
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Err(format!(
            "gimc {what} {}: {}",
            out.status,
            last_line(&out.stderr)
        ));
    }
    Ok((out.stdout, secs))
}

/// `gimc fit` (timed), `gimc predict` and `gimc eval` on one set, and P@k computed here
/// against the test labels. `Err(message)` is a failure to report.
fn run_ours(
    gimc: &Path,
    data_dir: &Path,
    set: &str,
    files: &SetFiles,
    work: &Path,
) -> Result<Ours, String> {
    let model = work.join(format!("{set}.gimc"));
    let pred = work.join(format!("{set}-pred.txt"));
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let (fit_out, fit_s) = run_gimc(
        gimc,
        &[
            os("fit"),
            files.train.as_os_str(),
            os("-o"),
            model.as_os_str(),
            os("--json"),
        ],
    )?;
    // what the fit chose (a string or an object, as `gimc fit --json` words it), for the log
    let chosen = serde_json::from_slice::<Value>(&fit_out)
        .map(|v| {
            let method = v.get("method").and_then(Value::as_str).unwrap_or("?");
            match v.get("chosen") {
                Some(Value::String(s)) => format!("{method}: {s}"),
                Some(other) => format!("{method}: {other}"),
                None => method.to_string(),
            }
        })
        .unwrap_or_default();
    run_gimc(
        gimc,
        &[
            os("predict"),
            files.test.as_os_str(),
            os("-m"),
            model.as_os_str(),
            os("--top-k"),
            os("5"),
            os("-o"),
            pred.as_os_str(),
        ],
    )?;
    let (eval_out, _) = run_gimc(
        gimc,
        &[
            os("eval"),
            pred.as_os_str(),
            files.test.as_os_str(),
            os("--json"),
        ],
    )?;
    let eval: Value = serde_json::from_slice(&eval_out).map_err(|e| format!("gimc eval: {e}"))?;
    let mut eval_p = [0.0; 3];
    for (slot, k) in eval_p.iter_mut().zip(KS) {
        *slot = 100.0
            * eval["metrics"][format!("P@{k}")]
                .as_f64()
                .ok_or_else(|| format!("gimc eval printed no P@{k}: {eval}"))?;
    }
    // P@k here, from the predictions and the test labels
    let test = load_named_part(data_dir, set, "test", &NamedOptions::default())
        .map_err(|e| e.to_string())?;
    let Targets::Labels { matrix, .. } = &test.targets else {
        return Err(format!("{set}: the test part has no labels"));
    };
    let text = std::fs::read_to_string(&pred).map_err(|e| format!("{}: {e}", pred.display()))?;
    let topk = parse_topk(&text, matrix.cols()).map_err(|e| e.to_string())?;
    let mut p = [0.0; 3];
    for (slot, k) in p.iter_mut().zip(KS) {
        *slot = precision_at_k(&topk, matrix, k).map_err(|e| e.to_string())?;
    }
    Ok(Ours {
        fit_s,
        chosen,
        p,
        eval_p,
    })
}

/// The number of test rows without a label.
fn rows_without_label(data_dir: &Path, set: &str) -> Result<usize, ExperimentError> {
    let test = load_named_part(data_dir, set, "test", &NamedOptions::default())?;
    match &test.targets {
        Targets::Labels { matrix, .. } => Ok(matrix
            .to_csr()
            .outer_iterator()
            .filter(|r| r.data().iter().all(|&v| v == 0.0))
            .count()),
        _ => Err(fail(format!("{set}: the test part has no labels"))),
    }
}

/// The measurements of one set's peers.
fn peer_rows(set: &str, report: &PeerReport) -> Vec<Measurement> {
    let mut out = Vec::new();
    for outcome in &report.peers {
        match outcome {
            PeerOutcome::Ran(f) => {
                let case = format!("{set} {}", f.peer);
                for (k, v) in KS.iter().zip(f.p) {
                    out.push(Measurement::new(&case, &format!("P@{k}"), v, "%"));
                }
                out.push(Measurement::new(&case, "fit", f.fit_s, "s"));
                out.push(Measurement::new(&case, "validation P@1", f.val_p1, "%"));
            }
            PeerOutcome::Skipped { peer, reason } => out.push(Measurement::new(
                &format!("{set} {peer}"),
                &format!("{SKIPPED_PREFIX}{reason}"),
                0.0,
                "",
            )),
        }
    }
    out
}

/// The measurements of our side on one set: P@k (with the best peer's as reference), fit
/// seconds, and our fit time over each peer's.
fn our_rows(set: &str, ours: &Ours, peers: Option<&PeerReport>) -> Vec<Measurement> {
    let case = format!("{set} {GIMC}");
    let mut out = Vec::new();
    for (i, k) in KS.iter().enumerate() {
        let m = Measurement::new(&case, &format!("P@{k}"), ours.p[i], "%");
        out.push(match peers.and_then(|r| r.best_at(*k)) {
            Some(b) => m.with_reference(b.value, &format!("best peer ({}), same run", b.peer)),
            None => m,
        });
    }
    // gimc eval uses the same P@k convention; a difference beyond rounding is shown
    if ours
        .p
        .iter()
        .zip(ours.eval_p)
        .any(|(a, b)| (a - b).abs() > 1e-9)
    {
        for (k, v) in KS.iter().zip(ours.eval_p) {
            out.push(Measurement::new(
                &case,
                &format!("P@{k} (gimc eval)"),
                v,
                "%",
            ));
        }
    }
    out.push(Measurement::new(&case, "fit", ours.fit_s, "s"));
    for outcome in peers.map(|r| r.peers.as_slice()).unwrap_or_default() {
        if let PeerOutcome::Ran(f) = outcome {
            out.push(Measurement::new(
                &case,
                &format!("{RATIO_PREFIX}{} fit", f.peer),
                ours.fit_s / f.fit_s.max(1e-9),
                "×",
            ));
        }
    }
    out
}

/// One line of the compact table.
#[derive(Default)]
struct TableRow {
    set: String,
    method: String,
    p: [Option<f64>; 3],
    fit_s: Option<f64>,
    status: Option<String>,
}

/// The compact table: one line per set and method with P@1/3/5, fit seconds and our fit time
/// over that method's.
fn compact_table(ms: &[Measurement]) -> Option<String> {
    let mut rows: Vec<TableRow> = Vec::new();
    for m in ms {
        let (set, method) = m.case.split_once(' ').unwrap_or((m.case.as_str(), "—"));
        let i = match rows.iter().position(|r| r.set == set && r.method == method) {
            Some(i) => i,
            None => {
                rows.push(TableRow {
                    set: set.to_string(),
                    method: method.to_string(),
                    ..TableRow::default()
                });
                rows.len() - 1
            }
        };
        let row = &mut rows[i];
        match m.metric.as_str() {
            "P@1" => row.p[0] = Some(m.value),
            "P@3" => row.p[1] = Some(m.value),
            "P@5" => row.p[2] = Some(m.value),
            "fit" => row.fit_s = Some(m.value),
            other if other.starts_with(SKIPPED_PREFIX) || other.starts_with(FAILED_PREFIX) => {
                row.status = Some(other.to_string());
            }
            _ => {}
        }
    }
    let rows: Vec<&TableRow> = rows
        .iter()
        .filter(|r| r.status.is_some() || r.p.iter().any(Option::is_some) || r.fit_s.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let ratio = |set: &str, method: &str| {
        let metric = format!("{RATIO_PREFIX}{method} fit");
        ms.iter()
            .find(|m| m.case == format!("{set} {GIMC}") && m.metric == metric)
            .map(|m| m.value)
    };
    let dash = || "—".to_string();
    let mut s = String::from(
        "| set | method | P@1 % | P@3 % | P@5 % | fit s | gimc fit ÷ this fit |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let cells: Vec<String> =
            r.p.iter()
                .map(|v| v.map_or_else(dash, |v| format!("{v:.2}")))
                .collect();
        let fit = r.fit_s.map_or_else(dash, |v| {
            if v < 10.0 {
                format!("{v:.2}")
            } else {
                format!("{v:.1}")
            }
        });
        let rel = if r.method == GIMC {
            dash()
        } else {
            ratio(&r.set, &r.method).map_or_else(dash, |v| format!("{v:.2}"))
        };
        match &r.status {
            Some(status) if cells.iter().all(|c| c == "—") => s.push_str(&format!(
                "| {} | {} | {status} | | | | |\n",
                r.set, r.method
            )),
            _ => s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {fit} | {rel} |\n",
                r.set, r.method, cells[0], cells[1], cells[2]
            )),
        }
    }
    Some(s)
}

/// What every set of a run shares.
struct Setup {
    data_dir: PathBuf,
    gimc: PathBuf,
    python: String,
    /// The peer script, when it and its Python packages are there.
    script: Option<PathBuf>,
    /// Where models and predictions are written.
    work: PathBuf,
}

/// One set: its peers (when they can run) and our side, appended to `out`. A set whose files
/// are missing is a row saying which fetch to run; a peer or gimc step that fails is a row
/// with its message.
fn run_set(s: &Setup, set: &str, out: &mut Vec<Measurement>) -> Result<(), ExperimentError> {
    let files = match set_files(&s.data_dir, set)? {
        Ok(files) => files,
        Err(missing) => {
            note(&format!(
                "{set}: files missing from {} ({}); run `cargo xtask datasets fetch \
                     --only {set}`",
                s.data_dir.display(),
                missing.join(", ")
            ));
            out.push(Measurement::new(
                &format!("{set} —"),
                &format!(
                    "{SKIPPED_PREFIX}files missing (cargo xtask datasets fetch --only \
                         {set})"
                ),
                0.0,
                "",
            ));
            return Ok(());
        }
    };
    out.push(Measurement::new(
        set,
        "test rows without a label",
        rows_without_label(&s.data_dir, set)? as f64,
        "",
    ));
    let peers = match &s.script {
        Some(script) => {
            note(&format!("{set}: peers"));
            match run_peers(&s.python, script, &files) {
                Ok(report) => {
                    for p in &report.peers {
                        match p {
                            PeerOutcome::Ran(f) => note(&format!(
                                "{set} {}: chose {}, P@1 {:.2}, fit {:.2} s",
                                f.peer, f.chosen, f.p[0], f.fit_s
                            )),
                            PeerOutcome::Skipped { peer, reason } => {
                                note(&format!("{set} {peer}: skipped ({reason})"));
                            }
                        }
                    }
                    out.extend(peer_rows(set, &report));
                    Some(report)
                }
                Err(msg) => {
                    note(&format!("{set}: peers failed: {msg}"));
                    out.push(Measurement::new(
                        &format!("{set} peers"),
                        &format!("{FAILED_PREFIX}{msg}"),
                        0.0,
                        "",
                    ));
                    None
                }
            }
        }
        None => None,
    };
    note(&format!("{set}: gimc fit"));
    match run_ours(&s.gimc, &s.data_dir, set, &files, &s.work) {
        Ok(ours) => {
            note(&format!(
                "{set} gimc: chose {}, P@1 {:.2}, fit {:.2} s",
                ours.chosen, ours.p[0], ours.fit_s
            ));
            out.extend(our_rows(set, &ours, peers.as_ref()));
        }
        Err(msg) => {
            note(&format!("{set} gimc failed: {msg}"));
            out.push(Measurement::new(
                &format!("{set} {GIMC}"),
                &format!("{FAILED_PREFIX}{msg}"),
                0.0,
                "",
            ));
        }
    }
    Ok(())
}

impl Benchmark for MultilabelPeers {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "`gimc fit TRAIN.arff -o M.gimc` with its defaults (then `gimc predict --top-k 5` and \
         `gimc eval`) against the tuned peers of ../shared/peers/multilabel_peers.py (Ridge, \
         RBFSampler / Nystroem + Ridge, PECOS XR-Linear; each chooses its setting on a 20 % \
         validation split of the training rows) on bibtex, delicious, emotions, yeast, birds, \
         genbase and flags. P@k on the test part, one definition on both sides: the mean over \
         every test row of hits in the top k / k, a row without a label scoring 0. Our fit \
         seconds are the wall time of the whole `gimc fit` process (start, reading, model \
         selection, writing); a peer's are its grid selection and refit from data in memory. \
         `fit ÷ PEER fit` is our fit time over that peer's; the reference of our P@k is the best \
         peer's. A peer that is not installed is shown as skipped. The peers' Python is \
         $GIMC_PEERS_PYTHON, else python3; without numpy / scipy / scikit-learn only our side \
         runs. GIMC_BENCH_SETS=emotions,flags limits the sets (--quick: emotions and flags)."
    }

    fn summary_table(&self, ms: &[Measurement]) -> Option<String> {
        compact_table(ms)
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let sets = selected_sets(ctx.quick)?;
        let gimc = super::gimc_binary("cargo build --release -p gimc-cli")?;
        let python = python();
        let script = peer_script(&ctx.data_dir, "multilabel_peers.py");
        let mut out = Vec::new();
        let script = match script {
            None => {
                note("multilabel_peers.py not found ($GIMC_PEERS, ../shared/peers); gimc only");
                out.push(Measurement::new(
                    "peers",
                    &format!("{SKIPPED_PREFIX}multilabel_peers.py not found"),
                    0.0,
                    "",
                ));
                None
            }
            Some(_) if !peers_runnable(&python) => {
                note(&format!(
                    "{python} cannot import numpy, scipy and scikit-learn (pip install \
                     scikit-learn, or set GIMC_PEERS_PYTHON); gimc only"
                ));
                out.push(Measurement::new(
                    "peers",
                    &format!("{SKIPPED_PREFIX}{python} lacks numpy / scipy / scikit-learn"),
                    0.0,
                    "",
                ));
                None
            }
            found => found,
        };
        let work = std::env::temp_dir().join(format!("gimc-{NAME}-{}", std::process::id()));
        std::fs::create_dir_all(&work).map_err(ExperimentError::io(&work))?;
        let setup = Setup {
            data_dir: ctx.data_dir.clone(),
            gimc,
            python,
            script,
            work,
        };
        let ran = sets
            .iter()
            .try_for_each(|set| run_set(&setup, set, &mut out));
        // the work directory goes whether or not a set failed
        let removed =
            std::fs::remove_dir_all(&setup.work).map_err(ExperimentError::io(&setup.work));
        ran?;
        removed?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::sprs::TriMat;

    fn labels(rows: usize, cols: usize, ones: &[(usize, usize)]) -> CsMat<f64> {
        let mut t = TriMat::new((rows, cols));
        for &(i, j) in ones {
            t.add_triplet(i, j, 1.0);
        }
        t.to_csr()
    }

    const OUTPUT: &str = r#"some warning printed on stdout
{"peer": "ridge", "chosen": {"alpha": 1}, "val_P@1": 60.5, "P@1": 62.25, "P@3": 40.0, "P@5": 30.1, "fit_s": 1.5}
{"peer": "pecos", "skipped": "No module named 'pecos'"}
{"peer": "nys", "chosen": {"rows": "l2", "gamma_x_scale": 0.25, "alpha": 0.1}, "val_P@1": 61.0, "P@1": 63.5, "P@3": 41.0, "P@5": 29.0, "fit_s": 4.0}
{"best": {"P@1": [63.5, "nys"], "P@3": [41.0, "nys"], "P@5": [30.1, "ridge"]}}
"#;

    #[test]
    fn peer_lines_fitted_skipped_and_best() {
        let r = parse_peer_output(OUTPUT).unwrap();
        assert_eq!(r.peers.len(), 3);
        assert_eq!(
            r.peers[0],
            PeerOutcome::Ran(PeerFit {
                peer: "ridge".into(),
                chosen: r#"{"alpha":1}"#.into(),
                val_p1: 60.5,
                p: [62.25, 40.0, 30.1],
                fit_s: 1.5,
            })
        );
        assert_eq!(
            r.peers[1],
            PeerOutcome::Skipped {
                peer: "pecos".into(),
                reason: "No module named 'pecos'".into()
            }
        );
        assert!(matches!(&r.peers[2], PeerOutcome::Ran(f) if f.peer == "nys" && f.p[2] == 29.0));
        let b5 = r.best_at(5).unwrap();
        assert_eq!((b5.value, b5.peer.as_str()), (30.1, "ridge"));
        assert_eq!(r.best_at(1).unwrap().peer, "nys");
        assert!(r.best_at(2).is_none());

        // the rows: a skipped peer is a row saying so, not an error; ratios only for peers that ran
        let ms = peer_rows("emotions", &r);
        assert!(
            ms.iter()
                .any(|m| m.case == "emotions pecos"
                    && m.metric == "skipped: No module named 'pecos'")
        );
        let ours = Ours {
            fit_s: 3.0,
            chosen: String::new(),
            p: [70.0, 50.0, 40.0],
            eval_p: [70.0, 50.0, 40.0],
        };
        let mine = our_rows("emotions", &ours, Some(&r));
        let ratio = |peer: &str| {
            mine.iter()
                .find(|m| m.metric == format!("fit ÷ {peer} fit"))
                .map(|m| m.value)
        };
        assert_eq!(ratio("ridge"), Some(2.0));
        assert_eq!(ratio("nys"), Some(0.75));
        assert_eq!(ratio("pecos"), None);
        let p1 = mine.iter().find(|m| m.metric == "P@1").unwrap();
        assert_eq!(p1.reference, Some(63.5));
        assert!(!mine.iter().any(|m| m.metric.contains("gimc eval")));

        let table = compact_table(&[ms, mine].concat()).unwrap();
        assert!(
            table.contains("| emotions | pecos | skipped: No module named 'pecos' |"),
            "{table}"
        );
        assert!(
            table.contains("| emotions | ridge | 62.25 | 40.00 | 30.10 | 1.50 | 2.00 |"),
            "{table}"
        );
        assert!(
            table.contains("| emotions | gimc | 70.00 | 50.00 | 40.00 | 3.00 | — |"),
            "{table}"
        );
    }

    #[test]
    fn bad_peer_output_is_an_error() {
        assert!(parse_peer_output("").is_err(), "no peer line");
        assert!(parse_peer_output("{\"best\": {}}\n").is_err(), "only best");
        assert!(parse_peer_output("{\"peer\": \"ridge\", \"P@1\": 1}\n").is_err());
        assert!(parse_peer_output("{\"peer\": \"ridge\", \"P@1\": \"x\"}\n").is_err());
        assert!(parse_peer_output("{not json}\n").is_err());
        let bad_best = format!("{OUTPUT}{{\"best\": {{\"P@1\": [1.0]}}}}\n");
        assert!(parse_peer_output(&bad_best).is_err());
    }

    #[test]
    fn precision_counts_rows_without_labels_as_zero() {
        // row 0: labels {0, 2}; row 1: none; row 2: {1}
        let y = labels(3, 4, &[(0, 0), (0, 2), (2, 1)]);
        let topk = vec![vec![0, 1, 2], vec![0, 1, 2], vec![3, 1, 0]];
        // P@1: row 0 hits, row 1 scores 0 (no label), row 2 misses: 1/3 (leaving row 1 out of
        // the mean would give 1/2)
        assert!((precision_at_k(&topk, &y, 1).unwrap() - 100.0 / 3.0).abs() < 1e-12);
        // P@3: (2/3 + 0 + 1/3) / 3 rows
        assert!((precision_at_k(&topk, &y, 3).unwrap() - 100.0 / 3.0).abs() < 1e-12);
        // P@5 with 3 predictions: missing ranks are misses, (2/5 + 0 + 1/5) / 3
        assert!((precision_at_k(&topk, &y, 5).unwrap() - 20.0).abs() < 1e-12);
        // every row without a label: 0, not an error and not NaN
        let none = labels(2, 4, &[]);
        assert_eq!(precision_at_k(&[vec![0], vec![1]], &none, 1).unwrap(), 0.0);
    }

    #[test]
    fn precision_rejects_bad_lists() {
        let y = labels(2, 3, &[(0, 0), (1, 1)]);
        assert!(precision_at_k(&[vec![0]], &y, 1).is_err(), "row count");
        assert!(precision_at_k(&[vec![0], vec![1]], &y, 0).is_err(), "k = 0");
        assert!(
            precision_at_k(&[vec![0, 0], vec![1]], &y, 2).is_err(),
            "repeated label"
        );
    }

    #[test]
    fn predictions_parse_plain_and_scored() {
        assert_eq!(
            parse_topk("0 2 1\n1:0.5 0:0.25\n", 3).unwrap(),
            vec![vec![0, 2, 1], vec![1, 0]]
        );
        // the kind header `gimc predict` writes first is not a row
        assert_eq!(
            parse_topk("# gimc predictions: kind=labels\n0 2\n", 3).unwrap(),
            vec![vec![0, 2]]
        );
        assert!(parse_topk("0 3\n", 3).is_err(), "label out of range");
        assert!(parse_topk("a\n", 3).is_err());
    }
}
