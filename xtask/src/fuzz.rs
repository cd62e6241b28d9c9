//! `cargo xtask fuzz`: builds `gimc-fuzz` with SanitizerCoverage (stable rustc flags) in its
//! own target directory, runs each target for `--seconds`, restarts a target after a crash
//! (saving the input that killed it) and prints one table of executions and findings.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cargo;

/// Instrumentation for edge coverage, with the checks a debug build has (overflow, debug
/// assertions), on an optimised build.
const RUSTFLAGS: &str = "-C passes=sancov-module -C llvm-args=-sanitizer-coverage-level=3 \
     -C llvm-args=-sanitizer-coverage-trace-pc-guard -C debug-assertions -C overflow-checks";

/// What one target's runs added up to.
struct Outcome {
    name: String,
    seconds: f64,
    execs: u64,
    corpus: u64,
    edges: u64,
    runs: usize,
    findings: Vec<String>,
}

/// Builds the instrumented fuzzer and runs `targets` (every target when empty) for `seconds`
/// each; the corpus and findings go to `target/fuzz-out/TARGET/`.
pub fn run(root: &Path, targets: &[String], seconds: u64, seed: u64) -> Result<()> {
    let host = host_triple()?;
    let target_dir = root.join("target/fuzz");
    let status = cargo()
        .current_dir(root)
        .env("RUSTFLAGS", RUSTFLAGS)
        .args(["build", "--quiet", "--release", "--package", "gimc-fuzz"])
        .args(["--target", &host])
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("building the instrumented gimc-fuzz failed");
    }
    let bin = target_dir.join(&host).join("release/gimc-fuzz");
    let names = if targets.is_empty() {
        list_targets(&bin)?
    } else {
        targets.to_vec()
    };
    let mut outcomes = Vec::new();
    for name in &names {
        outcomes.push(run_target(root, &bin, name, seconds, seed)?);
    }
    print_table(&outcomes)
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("could not start rustc")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("rustc -vV printed no host triple")
}

fn list_targets(bin: &Path) -> Result<Vec<String>> {
    let out = Command::new(bin).arg("--list").output()?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect())
}

/// Runs one target until its time is up, restarting it after each death.
fn run_target(root: &Path, bin: &Path, name: &str, seconds: u64, seed: u64) -> Result<Outcome> {
    let out = root.join("target/fuzz-out").join(name);
    let start = Instant::now();
    let budget = Duration::from_secs(seconds);
    let mut outcome = Outcome {
        name: name.to_string(),
        seconds: 0.0,
        execs: 0,
        corpus: 0,
        edges: 0,
        runs: 0,
        findings: Vec::new(),
    };
    // a restart with less than a second left would only pay the startup again
    while budget.saturating_sub(start.elapsed()) >= Duration::from_secs(1) {
        let left = (budget - start.elapsed()).as_secs();
        let run = Command::new(bin)
            .current_dir(root)
            .args(["--target", name, "--seconds", &left.to_string()])
            .args(["--seed", &(seed + outcome.runs as u64).to_string()])
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("could not start {}", bin.display()))?;
        outcome.runs += 1;
        let stats = std::fs::read_to_string(out.join("stats")).unwrap_or_default();
        let fields: Vec<u64> = stats
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        if let [execs, corpus, edges, ..] = fields[..] {
            outcome.execs += execs;
            outcome.corpus = corpus;
            outcome.edges = outcome.edges.max(edges);
        }
        if !run.status.success() {
            let input = std::fs::read(out.join("crash-input")).unwrap_or_default();
            let saved = out
                .join("findings")
                .join(format!("crash-{}", input_hash(&input)));
            std::fs::write(&saved, &input)?;
            let why = String::from_utf8_lossy(&run.stderr)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("died")
                .to_string();
            outcome
                .findings
                .push(format!("{} ({why}; {})", saved.display(), run.status));
        }
        // a run that died at once would otherwise spin
        if start.elapsed() < budget && !run.status.success() && outcome.runs > 50 {
            bail!("{name}: the fuzzer died 50 times; see {}", out.display());
        }
    }
    outcome.seconds = start.elapsed().as_secs_f64();
    for entry in std::fs::read_dir(out.join("findings"))? {
        let p = entry?.path();
        if p.extension().is_some_and(|e| e == "txt") {
            let msg = std::fs::read_to_string(&p).unwrap_or_default();
            outcome
                .findings
                .push(format!("{} (panic: {msg})", p.with_extension("").display()));
        }
    }
    Ok(outcome)
}

fn input_hash(data: &[u8]) -> String {
    let h = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

#[allow(clippy::print_stdout)]
fn print_table(outcomes: &[Outcome]) -> Result<()> {
    let mut s = String::from(
        "| target | seconds | executions | per second | corpus | edges | runs | findings |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for o in outcomes {
        writeln!(
            s,
            "| {} | {:.0} | {} | {:.0} | {} | {} | {} | {} |",
            o.name,
            o.seconds,
            o.execs,
            o.execs as f64 / o.seconds.max(1e-9),
            o.corpus,
            o.edges,
            o.runs,
            o.findings.len()
        )?;
    }
    for o in outcomes {
        for f in &o.findings {
            writeln!(s, "- {}: {f}", o.name)?;
        }
    }
    print!("{s}");
    Ok(())
}
