//! End-to-end tests of the `gimc` binary: real data summaries and clear errors on bad input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod commands;
mod completion;
mod inputs;
mod linear;
mod memory;
#[cfg(feature = "mpi")]
mod mpi;
mod outputs;
mod train_test_files;
mod transduce_cmd;
mod transform;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gimc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gimc"))
        .args(args)
        .env_remove("GIMC_DATA")
        .output()
        .expect("the gimc binary runs")
}

/// [`gimc`], asserting that the run succeeded (its stderr in the failure message).
#[track_caller]
fn gimc_ok(args: &[&str]) -> Output {
    let o = gimc(args);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON report a run printed on stdout, asserting that the run succeeded.
fn json_of(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

/// The shared data directory, or None (test skipped) unless GIMC_REQUIRE_DATA=1 demands it.
fn data_dir(set: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("GIMC_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets"));
    if dir.join(set).is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("GIMC_REQUIRE_DATA").as_deref() != Ok("1"),
        "GIMC_REQUIRE_DATA=1 but {set} is not in {}",
        dir.display()
    );
    eprintln!("skipped: {set} not found in {}", dir.display());
    None
}

/// `gimc predict SET -m MODEL -o PRED` then `gimc --json eval PRED SET` on the test part of a
/// named set in `dir`: the evaluation's JSON.
fn predict_eval_set(dir: &str, set: &str, model: &Path, pred: &Path) -> serde_json::Value {
    let (model, pred) = (model.to_str().unwrap(), pred.to_str().unwrap());
    gimc_ok(&[
        "-q",
        "--data-dir",
        dir,
        "predict",
        set,
        "-m",
        model,
        "-o",
        pred,
    ]);
    json_of(&gimc(&["--json", "--data-dir", dir, "eval", pred, set]))
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gimc-cli-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    // write then rename: tests running in parallel that rewrite the same file (same contents)
    // never see it truncated
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!("{name}.{n}.tmp"));
    std::fs::write(&tmp, contents).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    path
}

#[test]
fn data_info_bibtex_prints_the_published_shape() {
    let Some(dir) = data_dir("bibtex") else {
        return;
    };
    let o = gimc_ok(&[
        "data",
        "info",
        "bibtex",
        "--data-dir",
        dir.to_str().unwrap(),
    ]);
    let s = stdout(&o);
    assert!(s.contains("bibtex/train: 4880 rows x 1836 features"), "{s}");
    assert!(s.contains("bibtex/test: 2515 rows x 1836 features"), "{s}");
    assert_eq!(s.matches("159 labels").count(), 2, "{s}");
}

#[test]
fn data_info_json_is_parseable() {
    let Some(dir) = data_dir("mushrooms") else {
        return;
    };
    let o = gimc_ok(&[
        "data",
        "info",
        "mushrooms",
        "--json",
        "--data-dir",
        dir.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v[0]["rows"], 8124);
    assert_eq!(v[0]["features"], 112);
    assert_eq!(v[0]["labels_or_classes"], 2);
}

#[test]
fn bad_inputs_give_one_line_errors_not_panics() {
    let cases: Vec<(PathBuf, &str)> = vec![
        (temp_file("bad.svm", b"1 1:0.5\n1 2:x\n"), "bad.svm:2"),
        (temp_file("empty.csv", b""), "empty.csv:1: empty file"),
        (temp_file("nan.svm", b"1 1:NaN\n"), "nan.svm:1: non-finite"),
        (
            temp_file(
                "junk.arff",
                b"@relation r\n@attribute a numeric\n@data\n1,2,3\n",
            ),
            "junk.arff:4",
        ),
    ];
    for (path, needle) in cases {
        let o = gimc(&["data", "info", path.to_str().unwrap()]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{} accepted", path.display());
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.starts_with("gimc: error:"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err} lacks {needle}");
    }
    let o = gimc(&["data", "info", "no-such-set"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("neither a file nor a named set"));
    let o = gimc(&[
        "data",
        "info",
        "bibtex",
        "--data-dir",
        "/nonexistent-gimc-dir",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("file missing"), "{}", stderr(&o));
}

/// A small separable multi-class LIBSVM text: 3 classes, 4 features (every row uses feature 4),
/// 60 rows.
fn small_multiclass_text() -> String {
    let mut s = String::new();
    for i in 0..60 {
        let (c, t) = (i % 3, i as f64 * 0.01);
        let x1 = if c == 0 { 1.0 + t } else { -t };
        let x2 = if c == 1 { 1.0 + t } else { t };
        let x3 = if c == 2 { 1.0 - t } else { 0.1 * t };
        s.push_str(&format!("{} 1:{x1} 2:{x2} 3:{x3} 4:0.5\n", c + 1));
    }
    s
}

/// Fits a small model (m 20, γ 0.5, λ 0.1, 2 iterations, and `extra` flags) on `data` into
/// `model`, asserting that it succeeds.
fn fit_small_model(data: &Path, model: &Path, extra: &[&str]) {
    let (data, model) = (data.to_str().unwrap(), model.to_str().unwrap());
    let mut args = vec!["-q", "fit", data];
    args.extend_from_slice(extra);
    args.extend([
        "--m", "20", "--gamma", "0.5", "--lambda", "0.1", "--iters", "2", "-o", model,
    ]);
    gimc_ok(&args);
}
