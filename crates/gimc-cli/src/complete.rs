//! `gimc complete`: matrix completion of a triplets file (`i j value` per observed entry) by
//! MC-ALS, IMC by ALS + CG (row and/or column feature files), nuclear-norm MC or IMC by FPC,
//! or PU-IMC (the observed entries are positives, the rest unlabelled), writing predictions for
//! the requested entries. A λ grid is chosen by the RMSE on a held-out part of Ω, then the
//! chosen λ is refitted on all of Ω. GIMC with kernel feature maps on both feature files
//! (`--method gimc-NAME|imc-NAME`) chooses m, γ, λ and the iteration count the same way
//! and saves a completion model for `gimc predict --pairs`. `mpirun -np N gimc complete
//! TRIPLETS --method imc --row-features X [--col-features Y] --mpi` runs IMC-ALS
//! data-parallel on the process group ([`crate::group`]), sharded by rows of A.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc::labels::OneProcess;
use gimc::{Completed, CompletionMethod, FactorSelection, ValidCompletionSelectionParams};
use gimc_data::{TripletOptions, read_triplets};
use gimc_linalg::memory::{Tally, mat_bytes};
use gimc_linalg::rng::seeded;
use gimc_linalg::sums::{sum_scalar, sum_slice};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{ImcModel, ImcParams, ImcProblem, ImcStart, NoObserver, Side, fit_imc_sharded};
use serde_json::json;

use crate::common::{
    PredictionKind, check_memory, check_outputs, load_input, memory_budget, write_output,
};
use crate::globals::Globals;
use crate::group::{Group, Layout, LocalShard, layout, load_rows};
use crate::progress::IterationLog;

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
    /// other entry an unlabelled 0, weighted by --rho), bilinear (bilinear regression: the
    /// rank --rank Z minimising ‖X Z Yᵀ − T‖² over every entry, T zero outside the observed
    /// ones, in closed form; both feature files, λ unused), or GIMC with kernel feature maps on
    /// both feature files (Algorithm 1): gimc-NAME learns the maps of any registered family
    /// NAME (gimc-lff, gimc-lnys, …), imc-NAME keeps their random draw (imc-rff and imc-nys are
    /// the paper's names of imc-lff and imc-lnys); m, γ, λ and the iteration count are chosen
    /// on --holdout of Ω.
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
    /// assumed fraction of positives hidden among them. A comma list is a grid, chosen with
    /// the λ grid by the AUC of held-out positives against entries outside Ω.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.5",
        allow_negative_numbers = true
    )]
    pub rho: Vec<f64>,
    /// GIMC methods: random directions / landmarks m (a comma list is a grid).
    #[arg(long, value_delimiter = ',', default_value = "200")]
    pub m: Vec<usize>,
    /// GIMC methods: RBF γ (a number, `scale`, or `F*scale`, resolved on each side's
    /// features; a comma list is a grid).
    #[arg(long, value_delimiter = ',', default_value = "scale")]
    pub gamma: Vec<gimc::Gamma>,
    /// GIMC methods: which maps are learned.
    #[arg(long, value_enum, default_value_t = LearnSides::Both)]
    pub learn: LearnSides,
    /// GIMC methods: save the fitted model (apply it with `gimc predict --pairs`, also to new
    /// rows or columns given their features).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Outer ALS iterations.
    #[arg(long, default_value_t = 20)]
    pub iters: usize,
    /// GIMC methods: stop each grid point's map learning once its held-out error has not beaten
    /// its best for this many outer iterations (≥ 1); default: run every grid point to --iters.
    #[arg(long, value_name = "N")]
    pub patience: Option<usize>,
    /// Indices in the files start at 1.
    #[arg(long)]
    pub one_based: bool,
    /// Output file (default stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Run as one process of a data-parallel IMC-ALS fit under `mpirun` (--method imc with
    /// --row-features, one λ, no held-out grid): each process fits on its block of rows.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
}

/// The `i j` pairs of a file (0-based unless `one_based`; blank lines and `#` / `%` comments
/// skipped; fields separated by spaces, tabs or commas).
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
    rowf: Option<&FeatureMatrix>,
    colf: Option<&FeatureMatrix>,
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

/// Writes the predictions of `pairs`: the line `# gimc predictions: kind=values`, then `i j
/// value` lines, or with `--json` the object `meta` with `"predictions": [[i, j, value], …]`
/// added (indices 1-based with --one-based).
fn write_predictions(
    a: &CompleteArgs,
    g: &Globals,
    pairs: &[(usize, usize)],
    pred: &[f64],
    mut meta: serde_json::Value,
) -> Result<()> {
    let off = usize::from(a.one_based);
    let s = if g.json {
        let v: Vec<_> = pairs
            .iter()
            .zip(pred)
            .map(|(&(i, j), &v)| json!([i + off, j + off, v]))
            .collect();
        meta["predictions"] = json!(v);
        format!("{}\n", serde_json::to_string(&meta)?)
    } else {
        let mut s = PredictionKind::Values.header();
        for (&(i, j), v) in pairs.iter().zip(pred) {
            s.push_str(&format!("{} {} {v}\n", i + off, j + off));
        }
        s
    };
    write_output(a.out.as_deref(), &s)
}

/// Saves W and H on the raw features: identity maps in the completion model file (their
/// widths are the factors' rows); plain completion's features are the indices themselves
/// (identity maps as wide as the matrix, applied by `gimc predict --pairs` without feature
/// files).
fn save_factors(a: &CompleteArgs, path: &Path, model: &ImcModel, lambda: f64) -> Result<()> {
    let mut saved = gimc::CompletionModel::new(gimc::CompletionParts {
        row_map: Box::new(gimc_featmap::Identity::new(model.w.nrows())) as gimc::BoxedMap,
        col_map: Box::new(gimc_featmap::Identity::new(model.h.nrows())) as gimc::BoxedMap,
        w: model.w.clone(),
        h: model.h.clone(),
        lambda,
    })?;
    saved.set_method(a.method.clone());
    gimc::persist::save_completion_model(&saved, path)
        .with_context(|| format!("saving the model to {}", path.display()))
}

/// Which maps a GIMC completion learns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LearnSides {
    /// Both maps.
    Both,
    /// The row map only.
    Rows,
    /// The column map only.
    Cols,
}

/// The grid and settings of every method, from the flags: λ (and PU-IMC's ρ) for all, m, γ,
/// the learned sides and the patience for the map methods.
fn selection_params(a: &CompleteArgs, g: &Globals) -> Result<ValidCompletionSelectionParams> {
    Ok(gimc::CompletionSelectionParams::default()
        .with_ms(a.m.clone())
        .with_gammas(a.gamma.clone())
        .with_lambdas(a.lambda.clone())
        .with_rhos(a.rho.clone())
        .with_rank(a.rank)
        .with_max_iter(a.iters)
        .with_learn(a.learn != LearnSides::Cols, a.learn != LearnSides::Rows)
        .with_holdout(a.holdout)
        .with_patience(a.patience)
        .with_seed(g.seed)
        .with_memory(crate::common::memory_budget()?)
        .check()?)
}

/// `gimc complete --method gimc-*|imc-*`: the grid chosen on held-out entries and refitted
/// ([`gimc::complete`], which Python's `MatrixCompletion` also runs), with every grid point
/// logged.
fn run_gimc(
    a: &CompleteArgs,
    g: &Globals,
    method: &CompletionMethod,
    x: &FeatureMatrix,
    y: &FeatureMatrix,
    omega: &Observed,
) -> Result<(gimc::CompletionModel, Vec<serde_json::Value>, String)> {
    let params = selection_params(a, g)?;
    let (phi, psi) = (Side::Features(x), Side::Features(y));
    let Completed::Maps(sel) = gimc::complete(
        method,
        gimc::ObservedMatrix { phi, psi, omega },
        &params,
        &g.registry,
        &mut NoObserver,
    )?
    else {
        bail!("--method {}: not a map method", a.method);
    };
    let scores = sel
        .scores
        .iter()
        .map(|s| {
            g.info(&format!(
                "m {}, γ {}, λ {}: held-out relative error {:.4} at iteration {}",
                s.m, s.gamma, s.lambda, s.holdout_relative_error, s.iterations
            ));
            json!({"m": s.m, "gamma": s.gamma.to_string(), "lambda": s.lambda,
                "iterations": s.iterations, "holdout_relative_error": s.holdout_relative_error})
        })
        .collect();
    let c = sel.chosen;
    let chosen = format!(
        "m {}, γ {} ({:.4} rows, {:.4} columns), λ {}, {} iterations (held-out relative error {:.4})",
        c.m,
        c.gamma,
        sel.gamma_resolved.0,
        sel.gamma_resolved.1,
        c.lambda,
        c.iterations,
        c.holdout_relative_error
    );
    Ok((sel.model, scores, chosen))
}

/// Logs every grid point's held-out score of a factor method and returns the chosen λ, the
/// model, and the selection's JSON fields with whether a grid was searched: λ by held-out
/// RMSE, or PU-IMC's λ and ρ by held-out AUC.
fn report_factors(fit: FactorSelection, g: &Globals) -> (f64, ImcModel, (serde_json::Value, bool)) {
    let searched = !fit.scores.is_empty();
    let fields = match fit.rho {
        None => {
            for s in &fit.scores {
                g.info(&format!("λ {}: held-out RMSE {:.4}", s.lambda, s.score));
            }
            let scores: Vec<_> = fit
                .scores
                .iter()
                .map(|s| json!({"lambda": s.lambda, "rmse": s.score}))
                .collect();
            json!({"holdout_rmse": scores})
        }
        Some(rho) => {
            for s in &fit.scores {
                let r = s.rho.unwrap_or(rho);
                g.info(&format!(
                    "λ {}, ρ {r}: held-out AUC {:.4}",
                    s.lambda, s.score
                ));
            }
            let scores: Vec<_> = fit
                .scores
                .iter()
                .map(|s| json!({"lambda": s.lambda, "rho": s.rho, "auc": s.score}))
                .collect();
            json!({"rho": rho, "holdout_auc": scores})
        }
    };
    (fit.lambda, fit.model, (fields, searched))
}

/// Runs `gimc complete`.
pub fn run(a: &CompleteArgs, g: &Globals) -> Result<()> {
    let inputs: Vec<&Path> = [
        Some(a.triplets.as_path()),
        a.entries.as_deref(),
        a.row_features.as_deref().map(Path::new),
        a.col_features.as_deref().map(Path::new),
    ]
    .into_iter()
    .flatten()
    .collect();
    check_outputs(g, &[a.out.as_deref(), a.save.as_deref()], &inputs)?;
    #[cfg(feature = "mpi")]
    if a.mpi {
        return crate::group::run_mpi(|group| complete(a, g, group));
    }
    complete(a, g, &OneProcess)
}

/// Completes the matrix on `group`. One process runs any method; a distributed group runs
/// IMC-ALS on Ω sharded by rows of A ([`gimc_solvers::fit_imc_sharded`], the settings of the
/// single-process command with one λ): each process holds its block of rows of the row
/// features ([`load_rows`]) and the whole column features, and keeps the observed entries of
/// its rows. The training RMSE and the predictions are sums of every process's own rows'
/// parts, written by process 0.
fn complete(a: &CompleteArgs, g: &Globals, group: &dyn Group) -> Result<()> {
    if group.distributed() {
        refuse_off_group(a)?;
    }
    let t0 = Instant::now();
    let method = CompletionMethod::parse(&a.method, &g.registry)?;
    let sides = load_sides(a, g, group)?;
    let obs = observe(a, &sides)?;
    if matches!(method, CompletionMethod::Maps { .. }) {
        return complete_gimc(a, g, &method, &sides, &obs);
    }
    if a.patience.is_some() && !group.distributed() {
        bail!("--patience stops the map learning of --method gimc-lff / gimc-lnys only");
    }
    let (rowf, colf) = (sides.rowf.as_ref(), sides.colf.as_ref());
    let local = &obs.local;
    check_memory(
        &estimate(
            obs.block.len(),
            obs.ncols,
            local.vals.len(),
            rowf,
            colf,
            a.rank,
        ),
        memory_budget()?,
        if group.distributed() {
            "--rank (or use more processes)"
        } else {
            "--rank"
        },
    )?;
    if group.distributed() && group.lead() {
        g.info(&format!(
            "{} processes: {} × {} with {} observed entries; process 0 holds {} rows and {} entries (read in {:.1} s)",
            group.processes(),
            obs.nrows,
            obs.ncols,
            obs.observed.len(),
            obs.block.len(),
            local.vals.len(),
            t0.elapsed().as_secs_f64()
        ));
    }
    let problem = Problem {
        phi: rowf.map_or(Side::Identity(obs.block.len()), Side::Features),
        psi: colf.map_or(Side::Identity(obs.ncols), Side::Features),
        obs: &obs,
    };
    let fitted = if group.distributed() {
        fit_on_group(a, g, group, &problem)?
    } else {
        select(a, g, &method, &problem, rowf.is_some(), colf.is_some())?
    };
    if let Some(path) = a.save.as_ref().filter(|_| group.lead()) {
        save_factors(a, path, &fitted.model, fitted.lambda)?;
    }
    write_completion(a, g, group, &problem, fitted)
}

/// This process's part of the completion problem: the row and column sides (features, or
/// identity) and the observed entries.
struct Problem<'p> {
    phi: Side<'p>,
    psi: Side<'p>,
    obs: &'p Observations,
}

/// The features of the matrix's rows (this process's block of them) and columns, with the
/// layout of the row blocks (`None` without row features).
struct Sides {
    rowf: Option<FeatureMatrix>,
    colf: Option<FeatureMatrix>,
    whole: Option<Layout>,
}

/// Loads `--row-features` (this process's rows) and `--col-features` (whole).
fn load_sides(a: &CompleteArgs, g: &Globals, group: &dyn Group) -> Result<Sides> {
    let (rowf, announced) = match &a.row_features {
        Some(t) => {
            let (ds, announced) = load_rows(Some(t), "train", g, group)?;
            (Some(ds.features), announced)
        }
        None => (None, None),
    };
    let colf = match &a.col_features {
        Some(t) => Some(load_input(t, "train", g)?.features),
        None => None,
    };
    let whole = match &rowf {
        Some(x) => Some(layout(
            group,
            LocalShard {
                rows: x.nrows(),
                widths: &[x.ncols()],
                announced,
            },
            || {
                format!(
                    "the shards disagree on the number of row features: process {} has {}",
                    group.rank(),
                    x.ncols()
                )
            },
        )?),
        None => None,
    };
    Ok(Sides { rowf, colf, whole })
}

/// The observed entries of this process's rows: their rows counted from the block's first.
struct Local {
    rows: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
    omega: Observed,
}

/// The observed entries of the triplets file.
struct Observations {
    /// Rows and columns of the whole matrix.
    nrows: usize,
    ncols: usize,
    /// Every observed (row, column) pair, in the file's order.
    observed: Vec<(usize, usize)>,
    /// The whole's rows this process holds.
    block: std::ops::Range<usize>,
    /// The observed entries of those rows.
    local: Local,
}

/// Reads the triplets file (every process reads it whole) and keeps the entries of this
/// process's rows.
fn observe(a: &CompleteArgs, sides: &Sides) -> Result<Observations> {
    let t = read_triplets(
        &a.triplets,
        &TripletOptions {
            one_based: a.one_based,
            nrows: sides.whole.map(|l| l.rows),
            ncols: sides.colf.as_ref().map(|f| f.nrows()),
            ..TripletOptions::default()
        },
    )?;
    if t.entries.is_empty() {
        bail!("{}: no observed entries", a.triplets.display());
    }
    let nrows = sides.whole.map_or(t.nrows, |l| l.rows);
    let ncols = sides.colf.as_ref().map_or(t.ncols, |f| f.nrows());
    let block = match (&sides.whole, &sides.rowf) {
        (Some(l), Some(x)) => l.block(x.nrows()),
        _ => 0..nrows,
    };
    let mine: Vec<&(usize, usize, f64)> =
        t.entries.iter().filter(|e| block.contains(&e.0)).collect();
    let rows: Vec<usize> = mine.iter().map(|e| e.0 - block.start).collect();
    let cols: Vec<usize> = mine.iter().map(|e| e.1).collect();
    let vals: Vec<f64> = mine.iter().map(|e| e.2).collect();
    let omega = Observed::from_triplets(block.len(), ncols, &rows, &cols, &vals)
        .with_context(|| a.triplets.display().to_string())?;
    Ok(Observations {
        nrows,
        ncols,
        observed: t.entries.iter().map(|e| (e.0, e.1)).collect(),
        block,
        local: Local {
            rows,
            cols,
            vals,
            omega,
        },
    })
}

/// The fit of `gimc complete`, for its outputs.
struct Fitted {
    lambda: f64,
    model: ImcModel,
    /// JSON fields of how it was fitted (the selection's scores; the processes).
    fields: serde_json::Value,
    /// What the summary line says of the processes (empty for one process), and after λ.
    processes: String,
    detail: String,
}

/// Refuses on a distributed group what it does not run: anything but IMC-ALS with row
/// features and one λ.
fn refuse_off_group(a: &CompleteArgs) -> Result<()> {
    if a.method != "imc" {
        bail!(
            "--mpi runs IMC-ALS on a partial Ω (--method imc), not `{}`",
            a.method
        );
    }
    if a.lambda.len() != 1 {
        bail!("--mpi fits one setting: give one --lambda (there is no held-out grid)");
    }
    if a.row_features.is_none() {
        bail!(
            "--mpi needs --row-features: the processes share the rows of A, and with identity \
             row features W would be split with them"
        );
    }
    if a.save.is_some() && a.col_features.is_none() {
        bail!("--save: a model file needs both --row-features and --col-features");
    }
    Ok(())
}

/// IMC-ALS with the one λ on the group's shards of Ω.
fn fit_on_group(
    a: &CompleteArgs,
    g: &Globals,
    group: &dyn Group,
    problem: &Problem<'_>,
) -> Result<Fitted> {
    let lambda = a.lambda[0];
    // the single-process command's settings (the IMC fit of `gimc::complete`)
    let params = ImcParams::default()
        .with_rank(a.rank)
        .with_lambda(lambda)
        .with_max_outer(a.iters)
        .check()?;
    let shard = ImcProblem::partial_shard(problem.phi, problem.psi, &problem.obs.local.omega)?;
    let t = Instant::now();
    let mut log = IterationLog::new(g, group.lead());
    let model = fit_imc_sharded(
        &shard,
        &params,
        ImcStart::Draw(&mut seeded(g.seed)),
        &mut log,
        group,
    )?;
    let seconds = t.elapsed().as_secs_f64();
    Ok(Fitted {
        lambda,
        fields: json!({
            "holdout_rmse": [],
            "processes": group.processes(),
            "iterations": model.iterations,
            "fit_seconds": seconds,
        }),
        processes: format!(", {} processes", group.processes()),
        detail: format!(", {} iterations in {seconds:.2} s", model.iterations),
        model,
    })
}

/// A solver's method on one process ([`gimc::complete`]), λ (and PU-IMC's ρ) chosen on
/// held-out entries of Ω.
fn select(
    a: &CompleteArgs,
    g: &Globals,
    method: &CompletionMethod,
    problem: &Problem<'_>,
    row_features: bool,
    col_features: bool,
) -> Result<Fitted> {
    check_method(a, method, row_features, col_features)?;
    let params = selection_params(a, g)?;
    let (phi, psi, omega) = (problem.phi, problem.psi, &problem.obs.local.omega);
    let spinner = crate::progress::spinner(g, &format!("completing with {}", a.method));
    let fit = gimc::complete(
        method,
        gimc::ObservedMatrix { phi, psi, omega },
        &params,
        &g.registry,
        &mut NoObserver,
    );
    spinner.finish();
    let Completed::Factors(fit) = fit? else {
        bail!("--method {}: not a factor method", a.method);
    };
    let (lambda, model, (fields, searched)) = report_factors(fit, g);
    Ok(Fitted {
        lambda,
        model,
        fields,
        processes: String::new(),
        detail: if searched {
            " (chosen on the held-out entries)".to_string()
        } else {
            String::new()
        },
    })
}

/// Refuses what `method` does not take, in messages that name the flags (the library checks
/// these too): feature files, `--rho` outside PU-IMC or outside [0, 1), `--lambda` without a
/// value, and `--save` with features on one side only.
fn check_method(
    a: &CompleteArgs,
    method: &CompletionMethod,
    row_features: bool,
    col_features: bool,
) -> Result<()> {
    let features = row_features || col_features;
    if a.rho.is_empty() {
        bail!("--rho: give at least one value");
    }
    match method {
        CompletionMethod::McAls | CompletionMethod::McNuclear if features => bail!(
            "--method {} takes no feature files; use --method {}",
            a.method,
            if *method == CompletionMethod::McAls {
                "imc"
            } else {
                "imc-nuclear"
            }
        ),
        CompletionMethod::ImcNuclear if !features => {
            bail!("--method imc-nuclear needs --row-features and/or --col-features")
        }
        CompletionMethod::PuImc => {
            if let Some(rho) = a.rho.iter().find(|r| !(0.0..1.0).contains(*r)) {
                bail!("--rho must be in [0, 1), got {rho}")
            }
        }
        _ if a.rho.len() > 1 => bail!("--rho is a grid of pu-imc only"),
        _ => {}
    }
    if a.lambda.is_empty() {
        bail!("--lambda: give at least one value");
    }
    if a.save.is_some() && row_features != col_features {
        bail!(
            "--save: a model file needs both --row-features and --col-features, or neither \
             (plain completion)"
        );
    }
    Ok(())
}

/// The training RMSE and the predictions of the requested entries (each process fills in
/// the pairs of its rows, the sum holds them all), written by the lead process with the
/// summary line.
fn write_completion(
    a: &CompleteArgs,
    g: &Globals,
    group: &dyn Group,
    problem: &Problem<'_>,
    fitted: Fitted,
) -> Result<()> {
    let (phi, psi, obs) = (problem.phi, problem.psi, problem.obs);
    let (model, lambda, local) = (&fitted.model, fitted.lambda, &obs.local);
    // training RMSE: squared errors of this process's entries, summed
    let local_pairs: Vec<(usize, usize)> = local
        .rows
        .iter()
        .copied()
        .zip(local.cols.iter().copied())
        .collect();
    let fitted_values = model.predict_entries(phi, psi, &local_pairs)?;
    let se: f64 = fitted_values
        .iter()
        .zip(&local.vals)
        .map(|(f, v)| (f - v).powi(2))
        .sum();
    let rmse = (sum_scalar(group, se) / obs.observed.len() as f64).sqrt();
    let pairs: Vec<(usize, usize)> = match &a.entries {
        Some(p) => read_pairs(p, a.one_based)?,
        None => obs.observed.clone(),
    };
    let (nrows, ncols) = (obs.nrows, obs.ncols);
    if group.distributed()
        && let Some(&(i, j)) = pairs.iter().find(|&&(i, j)| i >= nrows || j >= ncols)
    {
        bail!("pair ({i}, {j}) out of range for {nrows} rows and {ncols} columns");
    }
    // one process predicts every pair (the model refuses one out of range)
    let owned: Vec<usize> = (0..pairs.len())
        .filter(|&e| !group.distributed() || obs.block.contains(&pairs[e].0))
        .collect();
    let mine: Vec<(usize, usize)> = owned
        .iter()
        .map(|&e| (pairs[e].0 - obs.block.start, pairs[e].1))
        .collect();
    let mut pred = vec![0.0; pairs.len()];
    for (&e, v) in owned.iter().zip(model.predict_entries(phi, psi, &mine)?) {
        pred[e] = v;
    }
    sum_slice(group, &mut pred);
    if !group.lead() {
        return Ok(());
    }
    let mut meta = json!({
        "method": a.method,
        "lambda": lambda,
        "rank": model.rank(),
        "train_rmse": rmse,
    });
    if let (Some(v), Some(fields)) = (meta.as_object_mut(), fitted.fields.as_object()) {
        v.extend(fields.clone());
    }
    write_predictions(a, g, &pairs, &pred, meta)?;
    g.info(&format!(
        "{} on {nrows} × {ncols} with {} observed entries{}: rank {}, λ {lambda}{}, training RMSE {rmse:.4}",
        a.method,
        obs.observed.len(),
        fitted.processes,
        model.rank(),
        fitted.detail,
    ));
    Ok(())
}

/// `gimc complete --method gimc-*|imc-rff|imc-nys` on one process: [`run_gimc`]'s model
/// saved on request, its predictions written.
fn complete_gimc(
    a: &CompleteArgs,
    g: &Globals,
    method: &CompletionMethod,
    sides: &Sides,
    obs: &Observations,
) -> Result<()> {
    let (Some(x), Some(y)) = (&sides.rowf, &sides.colf) else {
        bail!(
            "--method {} needs --row-features and --col-features",
            a.method
        );
    };
    let spinner = crate::progress::spinner(g, &format!("completing with {}", a.method));
    let out = run_gimc(a, g, method, x, y, &obs.local.omega);
    spinner.finish();
    let (model, scores, chosen) = out?;
    if let Some(path) = &a.save {
        gimc::persist::save_completion_model(&model, path)
            .with_context(|| format!("saving the model to {}", path.display()))?;
    }
    let rmse = crate::common::rmse(
        &model.predict_entries(x, y, &obs.observed)?,
        &obs.local.vals,
    );
    let pairs = match &a.entries {
        Some(p) => read_pairs(p, a.one_based)?,
        None => obs.observed.clone(),
    };
    let pred = model.predict_entries(x, y, &pairs)?;
    write_predictions(
        a,
        g,
        &pairs,
        &pred,
        json!({
            "method": a.method, "chosen": chosen, "holdout": scores, "train_rmse": rmse,
            "model": a.save.as_ref().map(|p| p.display().to_string()),
        }),
    )?;
    g.info(&format!(
        "{} on {} × {}: {chosen}; training RMSE {rmse:.4}",
        a.method, obs.nrows, obs.ncols
    ));
    Ok(())
}
