//! `gimc complete`: matrix completion of a triplets file (`i j value` per observed entry) by
//! MC-ALS, IMC by ALS + CG (row and/or column feature files), nuclear-norm MC or IMC by FPC,
//! or PU-IMC (the observed entries are positives, the rest unlabelled), writing predictions for
//! the requested entries. A λ grid is chosen by the RMSE on a held-out part of Ω, then the
//! chosen λ is refitted on all of Ω.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc_data::{TripletOptions, read_triplets};
use gimc_linalg::memory::{Tally, mat_bytes};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::completion::{CompletionMethod, SelectedCompletion, fit_selected};
use gimc_solvers::{NoObserver, Side};
use serde_json::json;

use crate::common::{Globals, check_memory, load_input, memory_budget, write_output};

/// Arguments of `gimc complete`.
#[derive(Args, Debug)]
pub struct CompleteArgs {
    /// The observed entries: one `i j value` line each (0-based unless --one-based).
    pub triplets: PathBuf,
    /// Entries to predict: one `i j` line each (default: the observed entries).
    #[arg(long, value_name = "FILE")]
    pub entries: Option<PathBuf>,
    /// Method: mc-als (no features), imc (ALS + CG, with --row-features / --col-features),
    /// mc-nuclear / imc-nuclear (nuclear-norm MC / IMC by FPC; λ is the nuclear-norm weight μ
    /// and --rank is not used), pu-imc (PU IMC: the observed entries are positives, every
    /// other entry an unlabelled 0, weighted by --rho).
    #[arg(long, default_value = "mc-als")]
    pub method: String,
    /// Row features (a data file: one row per matrix row); identity when absent.
    #[arg(long, value_name = "FILE")]
    pub row_features: Option<String>,
    /// Column features (one row per matrix column); identity when absent.
    #[arg(long, value_name = "FILE")]
    pub col_features: Option<String>,
    /// Rank of the factorisation.
    #[arg(long, default_value_t = 10)]
    pub rank: usize,
    /// Penalty λ (ridge for ALS and PU-IMC, nuclear-norm weight for FPC); a comma list is a
    /// grid chosen by the RMSE on --holdout of Ω.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.1",
        allow_negative_numbers = true
    )]
    pub lambda: Vec<f64>,
    /// Fraction of Ω held out to choose λ from a grid (seeded by --seed).
    #[arg(long, default_value_t = 0.1)]
    pub holdout: f64,
    /// PU-IMC: the unlabelled entries' weight is 1 − α with α = (1 + ρ)/2, ρ ∈ [0, 1) the
    /// assumed fraction of positives hidden among them.
    #[arg(long, default_value_t = 0.5)]
    pub rho: f64,
    /// Outer ALS iterations.
    #[arg(long, default_value_t = 20)]
    pub iters: usize,
    /// Indices in the files start at 1.
    #[arg(long)]
    pub one_based: bool,
    /// Output file (default stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

pub fn read_pairs(path: &Path, one_based: bool) -> Result<Vec<(usize, usize)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut pairs = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let s = line.trim();
        if s.is_empty() || s.starts_with('#') || s.starts_with('%') {
            continue;
        }
        let f: Vec<&str> = s
            .split([' ', '\t', ','])
            .filter(|t| !t.is_empty())
            .collect();
        if f.len() < 2 {
            bail!("{}:{}: expected `i j`", path.display(), no + 1);
        }
        let mut ij = [0usize; 2];
        for (k, t) in f[..2].iter().enumerate() {
            let v: usize = t.parse().map_err(|_| {
                anyhow::anyhow!("{}:{}: `{t}` is not an index", path.display(), no + 1)
            })?;
            ij[k] = if one_based {
                v.checked_sub(1).ok_or_else(|| {
                    anyhow::anyhow!("{}:{}: index 0 in a 1-based file", path.display(), no + 1)
                })?
            } else {
                v
            };
        }
        pairs.push((ij[0], ij[1]));
    }
    if pairs.is_empty() {
        bail!("{}: no entries", path.display());
    }
    Ok(pairs)
}

/// The peak memory of MC-ALS / IMC (shapes only): Ω (32 bytes an entry) and the residual on it,
/// the side features, and per side the factor with its gradient and CG vectors (8 × D × r,
/// D = n for an identity side, d for features) and the n × r products.
fn estimate(
    nrows: usize,
    ncols: usize,
    nnz: usize,
    rowf: &Option<FeatureMatrix>,
    colf: &Option<FeatureMatrix>,
    rank: usize,
) -> gimc::MemoryEstimate {
    let mut t = Tally::new("completion", "rank");
    t.bytes("process", gimc::memory::PROCESS_BASE_BYTES)
        .bytes("Ω", mat_bytes(nnz, 4))
        .bytes("residual on Ω", mat_bytes(nnz, 2));
    for (n, f, name) in [(nrows, rowf, "rows"), (ncols, colf, "columns")] {
        let dim = match f {
            Some(x) => {
                t.bytes(
                    format!("{name} features"),
                    mat_bytes(x.nrows(), x.ncols()).min(mat_bytes(x.nnz(), 2)),
                );
                x.ncols()
            }
            None => n,
        };
        t.bytes(
            format!("{name} factor {dim} × {rank} and CG vectors"),
            mat_bytes(dim, rank.saturating_mul(8)),
        )
        .bytes(
            format!("{name} products {n} × {rank}"),
            mat_bytes(n, rank.saturating_mul(2)),
        );
    }
    t.finish()
}

/// Runs `gimc complete`.
pub fn run(a: &CompleteArgs, g: &Globals) -> Result<()> {
    let rowf = match &a.row_features {
        Some(t) => Some(load_input(t, "train", g)?.features),
        None => None,
    };
    let colf = match &a.col_features {
        Some(t) => Some(load_input(t, "train", g)?.features),
        None => None,
    };
    let t = read_triplets(
        &a.triplets,
        &TripletOptions {
            one_based: a.one_based,
            nrows: rowf.as_ref().map(|f| f.nrows()),
            ncols: colf.as_ref().map(|f| f.nrows()),
            ..TripletOptions::default()
        },
    )?;
    if t.entries.is_empty() {
        bail!("{}: no observed entries", a.triplets.display());
    }
    let (nrows, ncols) = (
        rowf.as_ref().map_or(t.nrows, |f| f.nrows()),
        colf.as_ref().map_or(t.ncols, |f| f.nrows()),
    );
    let rows: Vec<usize> = t.entries.iter().map(|e| e.0).collect();
    let cols: Vec<usize> = t.entries.iter().map(|e| e.1).collect();
    let vals: Vec<f64> = t.entries.iter().map(|e| e.2).collect();
    let omega = Observed::from_triplets(nrows, ncols, &rows, &cols, &vals)
        .with_context(|| a.triplets.display().to_string())?;
    check_memory(
        &estimate(nrows, ncols, vals.len(), &rowf, &colf, a.rank),
        memory_budget()?,
        "--rank",
    )?;
    let phi = rowf.as_ref().map_or(Side::Identity(nrows), Side::Features);
    let psi = colf.as_ref().map_or(Side::Identity(ncols), Side::Features);
    let features = rowf.is_some() || colf.is_some();
    // the library checks these too; here the messages name the flags
    let method = CompletionMethod::from_name(&a.method, a.rho)?;
    match method {
        CompletionMethod::McAls | CompletionMethod::McNuclear if features => bail!(
            "--method {} takes no feature files; use --method {}",
            a.method,
            if method == CompletionMethod::McAls {
                "imc"
            } else {
                "imc-nuclear"
            }
        ),
        CompletionMethod::ImcNuclear if !features => {
            bail!("--method imc-nuclear needs --row-features and/or --col-features")
        }
        CompletionMethod::PuImc { rho } if !(0.0..1.0).contains(&rho) => {
            bail!("--rho must be in [0, 1), got {rho}")
        }
        _ => {}
    }
    if a.lambda.is_empty() {
        bail!("--lambda: give at least one value");
    }
    let spinner = crate::progress::spinner(g, &format!("completing with {}", a.method));
    let fit = fit_selected(
        method,
        phi,
        psi,
        &omega,
        &a.lambda,
        a.holdout,
        a.rank,
        a.iters,
        g.seed,
        &mut NoObserver,
    );
    spinner.finish();
    let SelectedCompletion {
        lambda,
        holdout_rmse: scores,
        model,
    } = fit?;
    let observed: Vec<(usize, usize)> = rows.iter().copied().zip(cols.iter().copied()).collect();
    let fitted = model.predict_entries(phi, psi, &observed)?;
    let rmse = crate::common::rmse(&fitted, &vals);
    let pairs = match &a.entries {
        Some(p) => read_pairs(p, a.one_based)?,
        None => observed,
    };
    let pred = model.predict_entries(phi, psi, &pairs)?;
    let off = usize::from(a.one_based);
    let s = if g.json {
        let v: Vec<_> = pairs
            .iter()
            .zip(&pred)
            .map(|(&(i, j), &v)| json!([i + off, j + off, v]))
            .collect();
        format!(
            "{}\n",
            serde_json::to_string(&json!({
                "method": a.method,
                "lambda": lambda,
                "holdout_rmse": scores
                    .iter()
                    .map(|&(l, r)| json!({"lambda": l, "rmse": r}))
                    .collect::<Vec<_>>(),
                "rank": model.rank(),
                "train_rmse": rmse,
                "predictions": v
            }))?
        )
    } else {
        let mut s = String::new();
        for (&(i, j), v) in pairs.iter().zip(&pred) {
            s.push_str(&format!("{} {} {v}\n", i + off, j + off));
        }
        s
    };
    write_output(a.out.as_deref(), &s)?;
    for (l, r) in &scores {
        g.info(&format!("λ {l}: held-out RMSE {r:.4}"));
    }
    g.info(&format!(
        "{} on {nrows} × {ncols} with {} observed entries: rank {}, λ {lambda}{}, training RMSE {rmse:.4}",
        a.method,
        vals.len(),
        model.rank(),
        if scores.is_empty() { "" } else { " (chosen on the held-out entries)" },
    ));
    Ok(())
}
