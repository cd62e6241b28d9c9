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
    // the default selection is the registry without the experiments skipped by default
    let skipped = gimc_experiments::skipped_by_default();
    assert!(skipped.iter().any(|(n, _)| *n == "gimc-table2-extended"));
    let default: Vec<&str> = select(&[]).unwrap().iter().map(|e| e.name()).collect();
    assert_eq!(
        default.len() + skipped.len(),
        gimc_experiments::registry().len()
    );
    assert!(!default.contains(&"gimc-table2-extended"));
    // named, it runs
    let named = select(&["gimc-table2-extended".into()]).unwrap();
    assert_eq!(named[0].name(), "gimc-table2-extended");
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
    // the experiments a plain run skips are marked, with how to run them
    let marked = text
        .lines()
        .filter(|l| l.contains("skipped by default"))
        .collect::<Vec<_>>();
    assert_eq!(
        marked.len(),
        gimc_experiments::skipped_by_default().len(),
        "{text}"
    );
    assert!(
        marked
            .iter()
            .all(|l| l.contains("--only gimc-table2-extended or --all"))
    );
    // --all and --only exclude each other
    let out = bin()
        .args(["reproduce", "--all", "--only", "datasets"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
