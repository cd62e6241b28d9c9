//! `mpirun -np N gimc fit DATA --mpi …` (cargo feature `mpi`): one GIMC fit of the multi-label
//! fast path, data-parallel over N processes (issue 18, item 3);
//! `mpirun -np N gimc cluster DATA -k K --mpi`: k-means on the same shards; and
//! `mpirun -np N gimc complete TRIPLETS --method imc --row-features X [--col-features Y] --mpi`:
//! IMC-ALS on a partial Ω, sharded by rows of A (the row features' shards as above; every
//! process reads the whole triplets file and keeps its rows' entries).
//!
//! - **Shards.** An XC-format file (`gimc data synth xmc`, the Extreme Classification
//!   Repository's text files) is cut into N byte ranges and each process parses only its own
//!   ([`gimc_data::read_xmc_shard`]). A path containing `{rank}` names one file per process.
//!   Any other input (a named set, ARFF, LIBSVM, …) is read whole by every process, which keeps
//!   its contiguous N-th of the rows (the computation is sharded, the reading is not).
//! - **Sums.** Every row sum of the fit (‖A‖², ΦᵀΦ, AᵀΦ, the map gradient; γ's scale rule from
//!   the value moments) is reduced to process 0 and broadcast back ([`MpiSums`]), so every
//!   process holds bitwise the same sums and takes the same line-search and stopping
//!   decisions ([`gimc::fit_labels_sharded`]).
//! - **Map.** Its parameters must be drawn from the seed alone, not from the rows: the Fourier
//!   families (`gimc-lff`, `imc-rff`, `*-lff-phase`). Nyström landmarks come from the rows and
//!   are refused.
//! - **Fixed setting.** One m, γ and λ, and `--iters` outer iterations (no validation split:
//!   evaluate the model with `gimc predict` and `gimc eval`). Process 0 writes the model and
//!   prints the summary.
//! - **Errors.** A process that fails aborts the whole job (`MPI_Abort`) after printing its
//!   error, so no process waits forever in a collective call.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gimc::{
    Gamma, IterationRecord, LabelParams, NoObserver, Observer, ObserverAction, Precision, Storage,
    estimate_fit_labels, fit_labels_sharded,
};
use gimc_linalg::{Preprocess, gamma_scale_from_moments};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde_json::json;

use crate::cluster::{ClusterArgs, report};
use crate::common::{
    Globals, Standardize, label_data, load_input, load_target, map_method, normalize,
};
use crate::complete::{CompleteArgs, read_pairs, write_predictions};
use crate::fit::{FitArgs, Stream};
use gimc_cluster::{KMeansParams, fit_kmeans_sharded};
use gimc_data::{Targets, TripletOptions, read_triplets};
use gimc_linalg::Observed;
use gimc_linalg::rng::seeded;
use gimc_solvers::{ImcParams, ImcProblem, Side, fit_imc_sharded};

/// Sums across the processes of `MPI_COMM_WORLD`: reduce to process 0, then broadcast, so every
/// process receives the same bits (an all-reduce need not guarantee that).
struct MpiSums<'c> {
    world: &'c SimpleCommunicator,
}

impl std::fmt::Debug for MpiSums<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MpiSums({} processes)", self.world.size())
    }
}

impl gimc::RowSums for MpiSums<'_> {
    fn sum(&self, buf: &mut [f64]) {
        let root = self.world.process_at_rank(0);
        if self.world.rank() == 0 {
            let mut total = vec![0.0; buf.len()];
            root.reduce_into_root(buf, &mut total[..], SystemOperation::sum());
            buf.copy_from_slice(&total);
        } else {
            root.reduce_into(buf, SystemOperation::sum());
        }
        root.broadcast_into(buf);
    }

    fn processes(&self) -> usize {
        self.world.size() as usize
    }

    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
}

/// Prints each outer iteration on process 0 (stderr, unless `--quiet`).
struct IterationLog<'g> {
    g: &'g Globals,
}

impl Observer for IterationLog<'_> {
    fn observe(&mut self, r: &IterationRecord) -> ObserverAction {
        let extras: String = r
            .extras
            .iter()
            .map(|(name, v)| format!(", {name} {v}"))
            .collect();
        self.g.info(&format!(
            "iteration {}: objective {:.6e}, {:.1} s{extras}",
            r.iteration, r.objective, r.elapsed_secs
        ));
        ObserverAction::Continue
    }
}

/// Runs `gimc fit --mpi`. Any error aborts every process.
pub fn run(a: &FitArgs, g: &Globals) -> Result<()> {
    in_world(|world| fit(a, g, world))
}

/// Runs `gimc cluster --mpi`. Any error aborts every process.
pub fn run_cluster(a: &ClusterArgs, g: &Globals) -> Result<()> {
    in_world(|world| cluster(a, g, world))
}

/// Initialises MPI and runs `job` on `MPI_COMM_WORLD`; an error is printed and aborts every
/// process, so no process waits forever in a collective call.
fn in_world(job: impl FnOnce(&SimpleCommunicator) -> Result<()>) -> Result<()> {
    let universe = mpi::initialize().context("MPI could not be initialised")?;
    let world = universe.world();
    match job(&world) {
        Ok(()) => Ok(()),
        #[allow(clippy::print_stderr)]
        Err(e) => {
            // the error must be seen before MPI_Abort ends every process
            eprintln!(
                "gimc (process {} of {}): error: {e:#}",
                world.rank(),
                world.size()
            );
            world.abort(1)
        }
    }
}

/// This process's rows of `target`: a byte range of an XC-format file, the file named with
/// `{rank}` replaced, or else the contiguous `rank`-th of `size` blocks of the whole set.
/// Returns the rows and, when the source says, the total row count.
fn load_shard(
    target: &str,
    part: &str,
    g: &Globals,
    rank: usize,
    size: usize,
) -> Result<(gimc_data::Dataset, Option<usize>)> {
    let (ds, header_rows) = if target.contains("{rank}") {
        let path = target.replace("{rank}", &rank.to_string());
        (load_target(Some(&path), part, g)?, None)
    } else if Path::new(target).is_file()
        && !target.ends_with(".gz")
        && matches!(
            gimc_data::guess_format(Path::new(target)),
            Ok(gimc_data::Format::Xmc)
        )
    {
        let (ds, n) = gimc_data::read_xmc_shard(Path::new(target), rank, size)?;
        (ds, Some(n))
    } else {
        let whole = load_target(Some(target), part, g)?;
        let n = whole.nrows();
        let rows: Vec<usize> = (n * rank / size..n * (rank + 1) / size).collect();
        if rows.is_empty() {
            bail!("{n} rows cannot be shared by {size} processes");
        }
        (whole.select_rows(&rows)?, Some(n))
    };
    if ds.nrows() == 0 {
        bail!("process {rank} received no rows (fewer rows than processes?)");
    }
    Ok((ds, header_rows))
}

fn fit(a: &FitArgs, g: &Globals, world: &SimpleCommunicator) -> Result<()> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let sums = MpiSums { world };
    let lead = rank == 0;
    let say = |msg: &str| {
        if lead {
            g.info(msg);
        }
    };
    if a.triplets.is_some() {
        bail!("--mpi runs the multi-label / multi-class fast path, not --triplets completion");
    }
    // the default search runs on one process; --mpi fits GIMC-LFF unless --method names another
    let method = if a.method == "auto" {
        "gimc-lff"
    } else {
        a.method.as_str()
    };
    let (family, learn) = map_method(method, &g.registry)?;
    if !matches!(family.name(), "lff" | "lff-phase") {
        bail!(
            "--mpi needs a map drawn from the seed alone (gimc-lff, imc-rff, gimc-lff-phase, \
             imc-rff-phase); `{}` draws from the rows, which differ between processes",
            a.method
        );
    }
    let (m, gamma, lambda) = match (a.m.as_slice(), a.gamma.as_slice(), a.lambda.as_slice()) {
        (m @ ([] | [_]), g @ ([] | [_]), l @ ([] | [_])) => (
            m.first().copied().unwrap_or(500),
            g.first().copied().unwrap_or(Gamma::SCALE),
            l.first().copied().unwrap_or(1.0),
        ),
        _ => bail!("--mpi fits one setting: give one --m, one --gamma and one --lambda"),
    };
    let target = a.target.as_deref().context("missing the data argument")?;
    let t0 = Instant::now();
    let (mut ds, header_rows) = load_shard(target, &a.part, g, rank, size)?;
    let dense = !ds.features.is_sparse();
    if a.standardize == Standardize::On || (dense && a.standardize == Standardize::Auto) {
        bail!(
            "--mpi does not standardise dense features (the column statistics would be a \
             shard's): pass --standardize off, or standardise the data beforehand"
        );
    }
    let row_norm = normalize(
        &mut ds,
        a.normalize.unwrap_or(crate::common::Normalize::None),
    );
    let data = label_data(ds)?;
    // every process must agree on the shapes before any fit sum
    let local = [
        data.nrows() as f64,
        data.features().ncols() as f64,
        data.n_labels() as f64,
    ];
    let mut shape = local;
    gimc::RowSums::sum(&sums, &mut shape);
    if shape[1] != local[1] * size as f64 || shape[2] != local[2] * size as f64 {
        bail!(
            "the shards disagree on the number of features or labels (classes): process \
             {rank} has {} and {}",
            local[1],
            local[2]
        );
    }
    let rows = shape[0] as usize;
    if let Some(n) = header_rows
        && n != rows
    {
        bail!("the shards hold {rows} rows, the file announces {n}");
    }
    say(&format!(
        "{size} processes: {rows} rows, {} features, {} labels; process 0 holds {} rows (read in {:.1} s)",
        data.features().ncols(),
        data.n_labels(),
        data.nrows(),
        t0.elapsed().as_secs_f64()
    ));
    // γ: the scale rule from the value moments of every shard
    let gamma = match gamma {
        Gamma::Value(v) => v,
        Gamma::Scale(f) => {
            let (s, q, c) = data.features().value_moments();
            let mut moments = [s, q, c];
            gimc::RowSums::sum(&sums, &mut moments);
            f * gamma_scale_from_moments(
                (moments[0], moments[1], moments[2]),
                data.features().ncols(),
            )
        }
    };
    let map = family.build(
        data.features(),
        m,
        gamma,
        &mut gimc_linalg::rng::seeded(g.seed),
    )?;
    let streamed = Storage::Streamed {
        block_rows: a.block_rows,
        precision: a.precision,
    };
    let mut params = LabelParams::default()
        .with_lambda(lambda)
        .with_max_iter(if learn { a.iters } else { 0 })
        .with_eval_train(false);
    let asked = a.precision == Precision::F32 || a.block_rows > 0;
    params.storage = match a.stream {
        Stream::Off if asked => bail!("--precision f32 and --block-rows need --stream on or auto"),
        Stream::On => streamed,
        Stream::Auto if asked => streamed,
        Stream::Off => Storage::Whole,
        Stream::Auto => {
            // stream when any process's whole Φ would not fit (the decision must agree)
            let budget = crate::common::memory_budget()?;
            let whole = estimate_fit_labels(&data, &map, &params, None);
            let mut over = [f64::from(u8::from(
                gimc_linalg::memory::check_fits(&whole, budget).is_err(),
            ))];
            gimc::RowSums::sum(&sums, &mut over);
            if over[0] > 0.0 {
                streamed
            } else {
                Storage::Whole
            }
        }
    };
    crate::common::check_memory(
        &estimate_fit_labels(&data, &map, &params, None),
        crate::common::memory_budget()?,
        "--m (or use more processes)",
    )?;
    say(&format!(
        "fitting {} (m = {m}, γ = {gamma}, λ = {lambda}, {} iterations, Φ {})",
        method,
        params.max_iter,
        if params.storage.is_streamed() {
            format!(
                "streamed, {} block products",
                params.storage.precision().name()
            )
        } else {
            "whole".to_string()
        }
    ));
    let params = params.check()?;
    let t = Instant::now();
    let fit = if lead {
        fit_labels_sharded(&data, map, &params, None, &mut IterationLog { g }, &sums)?
    } else {
        fit_labels_sharded(&data, map, &params, None, &mut NoObserver, &sums)?
    };
    let seconds = t.elapsed().as_secs_f64();
    // every process's peak resident set (MiB), one slot each
    let mut rss = vec![0.0; size];
    rss[rank] = gimc_linalg::memory::peak_rss_bytes().map_or(f64::NAN, |b| b as f64 / 1048576.0);
    gimc::RowSums::sum(&sums, &mut rss);
    if !lead {
        return Ok(());
    }
    let iterations = fit.history.len().saturating_sub(1);
    let objective = fit.history.last().map_or(f64::NAN, |h| h.objective);
    let mut model = fit.model;
    model.set_method(method);
    let hp = model.hyper_parameters_mut();
    hp.insert("m".into(), m as f64);
    hp.insert("gamma".into(), gamma);
    hp.insert("lambda".into(), lambda);
    hp.insert("iterations".into(), iterations as f64);
    hp.insert("processes".into(), size as f64);
    let preprocess = Preprocess {
        standardizer: None,
        row_norm,
        ..Preprocess::default()
    };
    gimc::persist::save_label_model_with_preprocess(&model, &preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    if g.json {
        let v = json!({
            "model": a.out.display().to_string(),
            "method": method,
            "processes": size,
            "rows": rows,
            "features": model.input_dim(),
            "labels": model.n_labels(),
            "m": m,
            "gamma": gamma,
            "lambda": lambda,
            "iterations": iterations,
            "objective": objective,
            "streamed": params.storage.is_streamed(),
            "precision": params.storage.precision().name(),
            "fit_seconds": seconds,
            "peak_rss_mib": rss,
            "seconds_per_iteration": fit.history.windows(2).map(|w| w[1].seconds - w[0].seconds).collect::<Vec<_>>(),
            "line_search_trials": fit.history.iter().skip(1).map(|h| h.trials).collect::<Vec<_>>(),
        });
        crate::common::write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        crate::common::write_output(
            None,
            &format!(
                "fitted {} on {rows} rows with {size} processes: {iterations} iterations in {seconds:.1} s, objective {objective:.6e}\nmodel: {}\n",
                method,
                a.out.display()
            ),
        )?;
    }
    Ok(())
}

/// `gimc cluster --mpi`: k-means on row shards ([`gimc_cluster::fit_kmeans_sharded`], the
/// settings of the single-process `gimc cluster --method kmeans`). Process 0 gathers every
/// row's assignment (and class, for the accuracy) by one sum of n-vectors and reports.
fn cluster(a: &ClusterArgs, g: &Globals, world: &SimpleCommunicator) -> Result<()> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let sums = MpiSums { world };
    let method = a.method.as_deref().unwrap_or("kmeans");
    if method != "kmeans" || a.constraints.is_some() {
        bail!("--mpi runs k-means (--method kmeans) without constraints, not `{method}`");
    }
    let t0 = Instant::now();
    let (mut ds, header_rows) = load_shard(&a.target, &a.part, g, rank, size)?;
    if a.standardize == Standardize::On
        || (!ds.features.is_sparse() && a.standardize == Standardize::Auto)
    {
        bail!(
            "--mpi does not standardise dense features (the column statistics would be a \
             shard's): pass --standardize off, or standardise the data beforehand"
        );
    }
    normalize(&mut ds, a.normalize);
    // the shards' row counts (in rank order) and column counts
    let mut layout = vec![0.0; size + 1];
    layout[rank] = ds.nrows() as f64;
    layout[size] = ds.features.ncols() as f64;
    gimc::RowSums::sum(&sums, &mut layout);
    if layout[size] != ds.features.ncols() as f64 * size as f64 {
        bail!(
            "the shards disagree on the number of features: process {rank} has {}",
            ds.features.ncols()
        );
    }
    let rows = layout[..size].iter().sum::<f64>() as usize;
    let offset = layout[..rank].iter().sum::<f64>() as usize;
    if let Some(n) = header_rows
        && n != rows
    {
        bail!("the shards hold {rows} rows, the file announces {n}");
    }
    if rank == 0 {
        g.info(&format!(
            "{size} processes: {rows} rows, {} features; process 0 holds {} rows (read in {:.1} s)",
            ds.features.ncols(),
            ds.nrows(),
            t0.elapsed().as_secs_f64()
        ));
    }
    let t = Instant::now();
    let params = KMeansParams::new(a.k).with_n_init(10).check()?;
    let r = fit_kmeans_sharded(&ds.features, &params, &mut seeded(g.seed), &sums)?;
    let seconds = t.elapsed().as_secs_f64();
    // every row's assignment, and its class when every shard has classes
    let classes = match &ds.targets {
        Targets::Classes { classes, .. } => Some(classes.as_slice()),
        _ => None,
    };
    let mut all = vec![0.0; 2 * rows + 1];
    for (i, &l) in r.labels.iter().enumerate() {
        all[offset + i] = l as f64;
    }
    if let Some(c) = classes {
        for (i, &y) in c.iter().enumerate() {
            all[rows + offset + i] = y as f64;
        }
        all[2 * rows] = 1.0;
    }
    gimc::RowSums::sum(&sums, &mut all);
    if rank != 0 {
        return Ok(());
    }
    let labels: Vec<usize> = all[..rows].iter().map(|&l| l as usize).collect();
    let classes: Option<Vec<usize>> = (all[2 * rows] == size as f64)
        .then(|| all[rows..2 * rows].iter().map(|&c| c as usize).collect());
    let extra = vec![
        ("inertia".to_string(), r.inertia),
        ("iterations".to_string(), r.n_iter as f64),
        ("processes".to_string(), size as f64),
        ("fit_seconds".to_string(), seconds),
    ];
    report(a, g, &ds.name, method, &labels, classes.as_deref(), extra)
}

/// Runs `gimc complete --mpi`. Any error aborts every process.
pub fn run_complete(a: &CompleteArgs, g: &Globals) -> Result<()> {
    in_world(|world| complete(a, g, world))
}

/// `gimc complete --method imc --mpi`: IMC-ALS on a partial Ω sharded by rows of A
/// ([`gimc_solvers::fit_imc_sharded`], the settings of the single-process command with one λ).
/// Each process holds its block of rows of the row features ([`load_shard`]) and the whole
/// column features; it reads the whole triplets file and keeps the entries of its rows (simple
/// and exact; the reading is repeated on every process, the fit is not). The training RMSE
/// and the predictions are sums of every process's own rows' parts, written by process 0.
fn complete(a: &CompleteArgs, g: &Globals, world: &SimpleCommunicator) -> Result<()> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let sums = MpiSums { world };
    let lead = rank == 0;
    if a.method != "imc" {
        bail!(
            "--mpi runs IMC-ALS on a partial Ω (--method imc), not `{}`",
            a.method
        );
    }
    let &[lambda] = a.lambda.as_slice() else {
        bail!("--mpi fits one setting: give one --lambda (there is no held-out grid)");
    };
    let Some(row_features) = &a.row_features else {
        bail!(
            "--mpi needs --row-features: the processes share the rows of A, and with identity \
             row features W would be split with them"
        );
    };
    if a.save.is_some() && a.col_features.is_none() {
        bail!("--save: a model file needs both --row-features and --col-features");
    }
    let t0 = Instant::now();
    let (ds, header_rows) = load_shard(row_features, "train", g, rank, size)?;
    let x = ds.features;
    let colf = match &a.col_features {
        Some(t) => Some(load_input(t, "train", g)?.features),
        None => None,
    };
    // the shards' row counts (in rank order) and feature counts
    let mut layout = vec![0.0; size + 1];
    layout[rank] = x.nrows() as f64;
    layout[size] = x.ncols() as f64;
    gimc::RowSums::sum(&sums, &mut layout);
    if layout[size] != x.ncols() as f64 * size as f64 {
        bail!(
            "the shards disagree on the number of row features: process {rank} has {}",
            x.ncols()
        );
    }
    let nrows = layout[..size].iter().sum::<f64>() as usize;
    let offset = layout[..rank].iter().sum::<f64>() as usize;
    if let Some(n) = header_rows
        && n != nrows
    {
        bail!("the shards hold {nrows} rows, the file announces {n}");
    }
    // every process reads the whole triplets file and keeps its rows' entries
    let t = read_triplets(
        &a.triplets,
        &TripletOptions {
            one_based: a.one_based,
            nrows: Some(nrows),
            ncols: colf.as_ref().map(|f| f.nrows()),
            ..TripletOptions::default()
        },
    )?;
    if t.entries.is_empty() {
        bail!("{}: no observed entries", a.triplets.display());
    }
    let ncols = colf.as_ref().map_or(t.ncols, |f| f.nrows());
    let block = offset..offset + x.nrows();
    let mine: Vec<&(usize, usize, f64)> =
        t.entries.iter().filter(|e| block.contains(&e.0)).collect();
    let rows: Vec<usize> = mine.iter().map(|e| e.0 - offset).collect();
    let cols: Vec<usize> = mine.iter().map(|e| e.1).collect();
    let vals: Vec<f64> = mine.iter().map(|e| e.2).collect();
    let omega = Observed::from_triplets(x.nrows(), ncols, &rows, &cols, &vals)
        .with_context(|| a.triplets.display().to_string())?;
    crate::common::check_memory(
        &crate::complete::estimate(
            x.nrows(),
            ncols,
            vals.len(),
            Some(&x),
            colf.as_ref(),
            a.rank,
        ),
        crate::common::memory_budget()?,
        "--rank (or use more processes)",
    )?;
    if lead {
        g.info(&format!(
            "{size} processes: {nrows} × {ncols} with {} observed entries; process 0 holds {} rows and {} entries (read in {:.1} s)",
            t.entries.len(),
            x.nrows(),
            vals.len(),
            t0.elapsed().as_secs_f64()
        ));
    }
    let phi = Side::Features(&x);
    let psi = colf.as_ref().map_or(Side::Identity(ncols), Side::Features);
    // the single-process command's settings (gimc_solvers::completion::fit_method)
    let params = ImcParams::default()
        .with_rank(a.rank)
        .with_lambda(lambda)
        .with_max_outer(a.iters)
        .check()?;
    let problem = ImcProblem::partial_shard(phi, psi, &omega)?;
    let t1 = Instant::now();
    let mut rng = seeded(g.seed);
    let model = if lead {
        fit_imc_sharded(
            &problem,
            &params,
            None,
            &mut rng,
            &mut IterationLog { g },
            &sums,
        )?
    } else {
        fit_imc_sharded(&problem, &params, None, &mut rng, &mut NoObserver, &sums)?
    };
    let seconds = t1.elapsed().as_secs_f64();
    // training RMSE: squared errors of this process's entries, summed
    let local_pairs: Vec<(usize, usize)> = rows.iter().copied().zip(cols.iter().copied()).collect();
    let fitted = model.predict_entries(phi, psi, &local_pairs)?;
    let se: f64 = fitted.iter().zip(&vals).map(|(f, v)| (f - v).powi(2)).sum();
    let rmse = (gimc_linalg::sums::sum_scalar(&sums, se) / t.entries.len() as f64).sqrt();
    // predictions: each process fills in the pairs of its rows, the sum holds them all
    let pairs: Vec<(usize, usize)> = match &a.entries {
        Some(p) => read_pairs(p, a.one_based)?,
        None => t.entries.iter().map(|e| (e.0, e.1)).collect(),
    };
    if let Some(&(i, j)) = pairs.iter().find(|&&(i, j)| i >= nrows || j >= ncols) {
        bail!("pair ({i}, {j}) out of range for {nrows} rows and {ncols} columns");
    }
    let owned: Vec<usize> = (0..pairs.len())
        .filter(|&e| block.contains(&pairs[e].0))
        .collect();
    let local: Vec<(usize, usize)> = owned
        .iter()
        .map(|&e| (pairs[e].0 - offset, pairs[e].1))
        .collect();
    let mut pred = vec![0.0; pairs.len()];
    for (&e, v) in owned.iter().zip(model.predict_entries(phi, psi, &local)?) {
        pred[e] = v;
    }
    gimc_linalg::sums::sum_slice(&sums, &mut pred);
    if !lead {
        return Ok(());
    }
    if let Some(path) = &a.save {
        crate::complete::save_factors(a, path, &model, lambda)?;
    }
    let meta = json!({
        "method": a.method,
        "lambda": lambda,
        "rank": model.rank(),
        "train_rmse": rmse,
        "holdout_rmse": [],
        "processes": size,
        "iterations": model.iterations,
        "fit_seconds": seconds,
    });
    write_predictions(a, g, &pairs, &pred, meta)?;
    g.info(&format!(
        "{} on {nrows} × {ncols} with {} observed entries, {size} processes: rank {}, λ {lambda}, {} iterations in {seconds:.2} s, training RMSE {rmse:.4}",
        a.method,
        t.entries.len(),
        model.rank(),
        model.iterations,
    ));
    Ok(())
}
