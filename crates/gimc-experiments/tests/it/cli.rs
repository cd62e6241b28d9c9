//! The `gimc-experiments` binary: selection errors, listing, exit codes.

use std::process::Command;

use gimc_experiments::{ExperimentError, select};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gimc-experiments"))
}

#[test]
fn unknown_experiment_is_an_error_listing_known_ones() {
    let out = bin()
        .args(["reproduce", "--only", "nonexistent", "--out"])
        .arg(std::env::temp_dir().join("gimc-exp-cli-unused"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nonexistent"), "{err}");
    assert!(err.contains("datasets"), "known names not listed: {err}");

    let e = select(&["datasets".into(), "nonexistent".into()])
        .err()
        .unwrap();
    assert!(
        matches!(e, ExperimentError::UnknownExperiment { ref name, .. } if name == "nonexistent")
    );
}

#[test]
fn select_keeps_order_and_drops_duplicates() {
    let s = select(&["datasets".into(), "datasets".into()]).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(
        select(&[]).unwrap().len(),
        gimc_experiments::registry().len()
    );
}

#[test]
fn list_prints_every_experiment() {
    let out = bin().args(["reproduce", "--list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in gimc_experiments::experiment_names() {
        assert!(
            text.lines().any(|l| l.starts_with(name)),
            "{name} missing from {text}"
        );
    }
}
