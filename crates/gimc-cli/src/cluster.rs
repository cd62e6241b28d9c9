//! `gimc cluster`: k-means, mini-batch k-means, kernel k-means, OKMF, and constraint-based
//! clustering (GIMC Algorithm 2 semi-supervised, or MCCC) from `--constraints FILE`. Writes the
//! line `# gimc predictions: kind=clusters`, then one cluster index per row; prints inertia,
//! and clustering accuracy when the data has classes. `mpirun -np N gimc cluster DATA -k K
//! --mpi` runs k-means data-parallel on the process group ([`crate::group`]). `gimc
//! constraints` samples a constraint file from a labelled set.

use gimc::NoObserver;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc::labels::OneProcess;
use gimc::{
    Gamma, MccParams, SemiSupInputs, SemiSupParams, estimate_mccc, estimate_semisupervised,
    fit_mccc, fit_semisupervised,
};
use gimc_cluster::{
    KMeans, KMeansParams, KernelKMeansParams, MiniBatchKMeansParams, OkmfParams, fit_kernel_kmeans,
    fit_kmeans_sharded, fit_minibatch_kmeans, fit_okmf,
};
use gimc_data::{Dataset, Targets};
use gimc_linalg::rng::{GimcRng, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};
use serde_json::json;

use crate::common::{
    Normalize, PredictionKind, Standardize, check_outputs, load_input, memory_budget, preflight,
    write_output,
};
use crate::globals::Globals;
use crate::group::{Group, Layout, LocalShard, layout, load_rows, prepare_rows};

/// Arguments of `gimc cluster`.
#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// The data: a file or a set name (its `train` part unless --part).
    pub target: String,
    /// Part of a named set.
    #[arg(long, default_value = "train")]
    pub part: String,
    /// Number of clusters.
    #[arg(long, short = 'k')]
    pub k: usize,
    /// kmeans, minibatch, kernel-kmeans, okmf; with --constraints: gimc-lff, gimc-lnys,
    /// imc-rff, imc-nys (Algorithm 2) or mccc.
    #[arg(long)]
    pub method: Option<String>,
    /// Pairwise constraints: one `i j s` line per pair (0-based rows, s = 1 same / 0 different).
    #[arg(long, value_name = "FILE")]
    pub constraints: Option<PathBuf>,
    /// RBF γ of the kernel / feature map: a number, `scale` = 1 / (d · Var X) on the features
    /// as the map sees them (after --standardize and --normalize), or `F*scale`.
    #[arg(long, default_value = "scale", allow_negative_numbers = true)]
    pub gamma: Gamma,
    /// Random features / landmarks m (Algorithm 2; default 200) or budget size (OKMF; default
    /// 500, the paper's).
    #[arg(long)]
    pub m: Option<usize>,
    /// λ of Algorithm 2 (comma list = grid chosen on held-out constraints; default the paper's).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub lambda: Vec<f64>,
    /// Outer iterations of Algorithm 2 / IMC iterations of MCCC.
    #[arg(long, default_value_t = 10)]
    pub iters: usize,
    /// Standardise the feature columns first (mean and standard deviation of the data
    /// clustered): auto = for dense features only, as `gimc fit`.
    #[arg(long, value_enum, default_value_t = Standardize::Auto)]
    pub standardize: Standardize,
    /// Normalise every row to unit norm after any standardisation.
    #[arg(long, value_enum, default_value_t = Normalize::None)]
    pub normalize: Normalize,
    /// Output file of the assignments (default stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Run as one process of a data-parallel k-means under `mpirun` (method kmeans, no
    /// standardisation of dense features). Each process reads its shard of an XC-format file,
    /// or the file with `{rank}` replaced by its rank; process 0 writes every assignment.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
}

/// Arguments of `gimc constraints`.
#[derive(Args, Debug)]
pub struct ConstraintArgs {
    /// A labelled multi-class set (file or name).
    pub target: String,
    /// Part of a named set.
    #[arg(long, default_value = "train")]
    pub part: String,
    /// Number of pairs to sample.
    #[arg(long, short = 'n', default_value_t = 1000, value_parser = crate::common::at_least_one)]
    pub count: usize,
    /// Output file.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
}

/// Runs `gimc constraints`: samples pairs uniformly and labels them from the classes.
pub fn run_constraints(a: &ConstraintArgs, g: &Globals) -> Result<()> {
    check_outputs(g, &[Some(&a.out)], &[Path::new(&a.target)])?;
    let ds = load_input(&a.target, &a.part, g)?;
    let Targets::Classes { classes, .. } = &ds.targets else {
        bail!(
            "{}: constraints are sampled from classes, and this set has none",
            ds.name
        );
    };
    let mut rng = seeded(g.seed);
    let pairs = gimc_data::split::sample_pairs(classes, a.count, &mut rng)?;
    let mut s = String::from("# i j s (0-based rows; s = 1 same class, 0 different)\n");
    for (i, j, v) in &pairs {
        s.push_str(&format!("{i} {j} {v}\n"));
    }
    write_output(Some(&a.out), &s)?;
    let same = pairs.iter().filter(|p| p.2 > 0.5).count();
    g.info(&format!(
        "wrote {} constraints ({same} must-link) over {} rows of {} to {}",
        pairs.len(),
        classes.len(),
        ds.name,
        a.out.display()
    ));
    Ok(())
}

/// The peak memory of the k-means family beyond the loaded data (shapes only): the n × k
/// distances and assignments and the k × d centres of each restart, and for kernel k-means
/// the n × n kernel matrix with its n × k product. `None` for OKMF (memory independent of n).
fn kmeans_estimate(method: &str, x: &FeatureMatrix, k: usize) -> Option<gimc::MemoryEstimate> {
    use gimc_linalg::memory::{Tally, mat_bytes};
    let (n, d) = (x.nrows(), x.ncols());
    let mut t = Tally::new(
        if method == "kernel-kmeans" {
            "kernel k-means"
        } else {
            "k-means"
        },
        "k",
    );
    t.bytes("process", gimc::memory::PROCESS_BASE_BYTES)
        .bytes("X", mat_bytes(n, d).min(mat_bytes(x.nnz(), 2)))
        .bytes("distances", mat_bytes(n, k.saturating_mul(2)))
        .bytes("centres", mat_bytes(k, d.saturating_mul(4)));
    match method {
        "kmeans" | "minibatch" => {}
        "kernel-kmeans" => {
            t.f64s("kernel matrix", n, n);
        }
        _ => return None,
    }
    Some(t.finish())
}

/// Runs `gimc cluster`.
pub fn run(a: &ClusterArgs, g: &Globals) -> Result<()> {
    let inputs: Vec<&Path> = [Some(Path::new(&a.target)), a.constraints.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    check_outputs(g, &[a.out.as_deref()], &inputs)?;
    #[cfg(feature = "mpi")]
    if a.mpi {
        return crate::group::run_mpi(|group| cluster(a, g, group));
    }
    cluster(a, g, &OneProcess)
}

/// Clusters the rows on `group`: one process runs any method; a distributed group runs
/// k-means on its shards ([`gimc_cluster::fit_kmeans_sharded`], the settings of the
/// single-process `--method kmeans`), and process 0 gathers every row's assignment (and class,
/// for the accuracy) by one sum of n-vectors and reports.
fn cluster(a: &ClusterArgs, g: &Globals, group: &dyn Group) -> Result<()> {
    let method = method_name(a, group)?;
    let t0 = Instant::now();
    let (mut ds, announced) = load_rows(Some(&a.target), &a.part, g, group)?;
    let (standardizer, row_norm) = prepare_rows(group, &mut ds, a.standardize, a.normalize)?;
    if standardizer.is_some() {
        g.info(&format!("{}: features standardised", ds.name));
    }
    if row_norm != gimc_linalg::RowNorm::None && !group.distributed() {
        g.info(&format!("{}: rows normalised to unit norm", ds.name));
    }
    let ncols = ds.features.ncols();
    let whole = layout(
        group,
        LocalShard {
            rows: ds.nrows(),
            widths: &[ncols],
            announced,
        },
        || {
            format!(
                "the shards disagree on the number of features: process {} has {ncols}",
                group.rank()
            )
        },
    )?;
    let (labels, extra) = if group.distributed() {
        if group.lead() {
            g.info(&format!(
                "{} processes: {} rows, {ncols} features; process 0 holds {} rows (read in {:.1} s)",
                group.processes(),
                whole.rows,
                ds.nrows(),
                t0.elapsed().as_secs_f64()
            ));
        }
        kmeans_on_group(a, g, group, &ds.features)?
    } else {
        one_process(a, g, &ds, &method)?
    };
    let classes = match &ds.targets {
        Targets::Classes { classes, .. } => Some(classes.as_slice()),
        _ => None,
    };
    let (labels, classes) = gather(group, whole, &labels, classes);
    if !group.lead() {
        return Ok(());
    }
    report(a, g, &ds.name, &method, &labels, classes.as_deref(), extra)
}

/// The method: `--method`, else `gimc-lff` with `--constraints` and `kmeans` without. A
/// distributed group runs k-means only.
fn method_name(a: &ClusterArgs, group: &dyn Group) -> Result<String> {
    if group.distributed() {
        let method = a.method.as_deref().unwrap_or("kmeans");
        if method != "kmeans" || a.constraints.is_some() {
            bail!("--mpi runs k-means (--method kmeans) without constraints, not `{method}`");
        }
    }
    Ok(a.method.clone().unwrap_or_else(|| {
        if a.constraints.is_some() {
            "gimc-lff"
        } else {
            "kmeans"
        }
        .to_string()
    }))
}

/// The assignments and the method's own figures of a clustering on one process.
type Assigned = (Vec<usize>, Vec<(String, f64)>);

/// Clusters the rows of `ds` on this process alone by `method`, under a spinner.
fn one_process(a: &ClusterArgs, g: &Globals, ds: &Dataset, method: &str) -> Result<Assigned> {
    let x = &ds.features;
    let gamma = a.gamma.resolve(x);
    if matches!(a.gamma, Gamma::Scale(_)) {
        g.info(&format!("{}: γ = {gamma:.6} ({})", ds.name, a.gamma));
    }
    let mut rng = seeded(g.seed);
    let spinner = crate::progress::spinner(g, &format!("clustering with {method}"));
    let result = match &a.constraints {
        Some(cf) => with_constraints(a, g, ds, cf, method, gamma, &mut rng),
        None => kmeans_family(a, g, x, method, gamma, &mut rng),
    };
    spinner.finish();
    result
}

/// Clustering from the pairwise constraints in the file `cf`: MCCC, or GIMC Algorithm 2 with
/// the map of `method`.
fn with_constraints(
    a: &ClusterArgs,
    g: &Globals,
    ds: &Dataset,
    cf: &Path,
    method: &str,
    gamma: f64,
    rng: &mut GimcRng,
) -> Result<Assigned> {
    let (x, n) = (&ds.features, ds.nrows());
    let budget = memory_budget()?;
    let c = gimc_data::read_constraints(cf, Some(n), false)
        .with_context(|| format!("constraints for {} rows of {}", n, ds.name))?;
    let pairs = c.pairs;
    if method == "mccc" {
        let mut p = MccParams::new(a.k);
        p.imc.max_outer = a.iters.max(1);
        p.memory = budget;
        preflight(g, &estimate_mccc(x, pairs.len(), &p), budget, "--k")?;
        let r = fit_mccc(x, &pairs, &p.check()?, rng)?;
        let error = gimc_metrics::constraint_error(&pairs, &r.labels)?;
        return Ok((r.labels, vec![("constraint_error".into(), error)]));
    }
    let (family, learn) = g
        .registry
        .map_method(method)
        .with_context(|| "with --constraints (or mccc)".to_string())?;
    let mut p = SemiSupParams::new(a.k, a.m.unwrap_or(200), gamma).with_learn(learn);
    if !a.lambda.is_empty() {
        p = p.with_lambdas(a.lambda.clone());
    }
    p.completion.max_iter = a.iters;
    p.completion.memory = budget;
    preflight(
        g,
        &estimate_semisupervised(x, pairs.len(), family, &p)?,
        budget,
        "--m",
    )?;
    let r = fit_semisupervised(
        SemiSupInputs {
            x,
            pairs: &pairs,
            family,
        },
        &p.check()?,
        rng,
        &mut NoObserver,
    )?;
    let extra = vec![
        ("lambda".into(), r.lambda),
        ("iterations".into(), r.iterations as f64),
        ("constraint_error".into(), r.train_constraint_error),
    ];
    Ok((r.labels, extra))
}

/// The k-means family without constraints: k-means, mini-batch, kernel k-means or OKMF.
fn kmeans_family(
    a: &ClusterArgs,
    g: &Globals,
    x: &FeatureMatrix,
    method: &str,
    gamma: f64,
    rng: &mut GimcRng,
) -> Result<Assigned> {
    let budget = memory_budget()?;
    if let Some(est) = kmeans_estimate(method, x, a.k) {
        preflight(g, &est, budget, "-k")?;
    }
    let inertia = |labels: Vec<usize>, inertia: f64| (labels, vec![("inertia".into(), inertia)]);
    match method {
        "kmeans" => {
            let r = kmeans(a, x, rng, &OneProcess)?;
            Ok(inertia(r.labels, r.inertia))
        }
        "minibatch" => {
            let p = MiniBatchKMeansParams::new(a.k).check()?;
            let r = fit_minibatch_kmeans(x, &p, rng)?;
            Ok(inertia(r.labels, r.inertia))
        }
        "kernel-kmeans" => {
            let p = KernelKMeansParams::new(a.k, Kernel::Rbf { gamma }).check()?;
            let r = fit_kernel_kmeans(x, &p, rng)?;
            Ok(inertia(r.labels, r.inertia))
        }
        "okmf" => {
            let mut p = OkmfParams::new(a.k, Kernel::Rbf { gamma });
            if let Some(m) = a.m {
                p.budget_size = m;
            }
            let r = fit_okmf(x, &p.check()?, rng, &mut NoObserver)?;
            Ok((r.predict(x)?, Vec::new()))
        }
        other => bail!(
            "unknown method `{other}` (choose kmeans, minibatch, kernel-kmeans, okmf; with --constraints gimc-lff, gimc-lnys, imc-rff, imc-nys, mccc)"
        ),
    }
}

/// k-means with 10 restarts on the rows of `group` (this process's `x`).
fn kmeans(
    a: &ClusterArgs,
    x: &FeatureMatrix,
    rng: &mut GimcRng,
    group: &dyn Group,
) -> Result<KMeans> {
    let params = KMeansParams::new(a.k).with_n_init(10).check()?;
    Ok(fit_kmeans_sharded(x, &params, rng, group)?)
}

/// k-means on a distributed group, with its iterations, the processes and the fit's seconds.
fn kmeans_on_group(
    a: &ClusterArgs,
    g: &Globals,
    group: &dyn Group,
    x: &FeatureMatrix,
) -> Result<Assigned> {
    let t = Instant::now();
    let r = kmeans(a, x, &mut seeded(g.seed), group)?;
    let extra = vec![
        ("inertia".to_string(), r.inertia),
        ("iterations".to_string(), r.n_iter as f64),
        ("processes".to_string(), group.processes() as f64),
        ("fit_seconds".to_string(), t.elapsed().as_secs_f64()),
    ];
    Ok((r.labels, extra))
}

/// Every row's assignment, and its class when every shard has classes, gathered from the
/// group's shards into whole-length vectors (by one sum; for one process the vectors
/// themselves).
fn gather(
    group: &dyn Group,
    whole: Layout,
    labels: &[usize],
    classes: Option<&[usize]>,
) -> (Vec<usize>, Option<Vec<usize>>) {
    let rows = whole.rows;
    let mut all = vec![0.0; 2 * rows + 1];
    for (i, &l) in labels.iter().enumerate() {
        all[whole.offset + i] = l as f64;
    }
    if let Some(c) = classes {
        for (i, &y) in c.iter().enumerate() {
            all[rows + whole.offset + i] = y as f64;
        }
        all[2 * rows] = 1.0;
    }
    group.sum(&mut all);
    let labels = all[..rows].iter().map(|&l| l as usize).collect();
    let classes = (all[2 * rows] == group.processes() as f64)
        .then(|| all[rows..2 * rows].iter().map(|&c| c as usize).collect());
    (labels, classes)
}

/// Writes the assignments (to --out or stdout) and the summary: the method's own figures in
/// `extra`, plus clustering accuracy and pairwise error when the rows have classes.
fn report(
    a: &ClusterArgs,
    g: &Globals,
    name: &str,
    method: &str,
    labels: &[usize],
    classes: Option<&[usize]>,
    mut extra: Vec<(String, f64)>,
) -> Result<()> {
    let n = labels.len();
    if let Some(classes) = classes {
        extra.push((
            "clustering_accuracy".into(),
            gimc_metrics::clustering_accuracy(labels, classes)?,
        ));
        extra.push((
            "pairwise_error".into(),
            gimc_metrics::pairwise_clustering_error(labels, classes)?,
        ));
    }
    let mut s = PredictionKind::Clusters.header();
    for l in labels {
        s.push_str(&format!("{l}\n"));
    }
    if a.out.is_some() || !g.json {
        write_output(a.out.as_deref(), &s)?;
    }
    if g.json {
        let obj: serde_json::Map<String, serde_json::Value> =
            extra.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let mut v = json!({"method": method, "rows": n, "k": a.k, "metrics": obj});
        if a.out.is_none() {
            v["assignments"] = json!(labels);
        }
        write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        let summary: Vec<String> = extra
            .iter()
            .map(|(k, v)| {
                if k.contains("accuracy") || k.contains("error") {
                    format!("{k}: {:.2} %", 100.0 * v)
                } else {
                    format!("{k}: {v}")
                }
            })
            .collect();
        #[allow(clippy::print_stderr)]
        if a.out.is_some() || !g.quiet {
            // metrics go to stderr when the assignments fill stdout, else to stdout
            let line = format!(
                "{method} on {name} ({n} rows, k = {}): {}\n",
                a.k,
                summary.join(", ")
            );
            if a.out.is_some() {
                write_output(None, &line)?;
            } else {
                eprint!("{line}");
            }
        }
    }
    Ok(())
}
