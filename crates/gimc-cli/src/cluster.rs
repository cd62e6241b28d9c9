//! `gimc cluster`: k-means, mini-batch k-means, kernel k-means, OKMF, and constraint-based
//! clustering (GIMC Algorithm 2 semi-supervised, or MCCC) from `--constraints FILE`. Writes the
//! line `# gimc predictions: kind=clusters`, then one cluster index per row; prints inertia,
//! and clustering accuracy when the data has classes. `gimc constraints` samples a constraint
//! file from a labelled set.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc::{
    Gamma, MccParams, SemiSupParams, estimate_mccc, estimate_semisupervised, fit_mccc,
    fit_semisupervised,
};
use gimc_cluster::{
    KMeansParams, KernelKMeansParams, MiniBatchKMeansParams, OkmfParams, fit_kernel_kmeans,
    fit_kmeans, fit_minibatch_kmeans, fit_okmf,
};
use gimc_data::Targets;
use gimc_linalg::rng::seeded;
use gimc_linalg::{FeatureMatrix, Kernel};
use serde_json::json;

use crate::common::{
    Globals, Normalize, PredictionKind, Standardize, check_outputs, load_input, memory_budget,
    normalize, preflight, standardize, write_output,
};

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
        return crate::mpi_fit::run_cluster(a, g);
    }
    let mut ds = load_input(&a.target, &a.part, g)?;
    if standardize(&mut ds, a.standardize)?.is_some() {
        g.info(&format!("{}: features standardised", ds.name));
    }
    if normalize(&mut ds, a.normalize) != gimc_linalg::RowNorm::None {
        g.info(&format!("{}: rows normalised to unit norm", ds.name));
    }
    let x = &ds.features;
    let n = x.nrows();
    let gamma = a.gamma.resolve(x);
    if matches!(a.gamma, Gamma::Scale(_)) {
        g.info(&format!("{}: γ = {gamma:.6} ({})", ds.name, a.gamma));
    }
    let mut rng = seeded(g.seed);
    let method = a.method.clone().unwrap_or_else(|| {
        if a.constraints.is_some() {
            "gimc-lff"
        } else {
            "kmeans"
        }
        .to_string()
    });
    let spinner = crate::progress::spinner(g, &format!("clustering with {method}"));
    let mut extra: Vec<(String, f64)> = Vec::new();
    let budget = memory_budget()?;
    let result: Result<Vec<usize>> = (|| {
        if let Some(cf) = &a.constraints {
            let c = gimc_data::read_constraints(cf, Some(n), false)
                .with_context(|| format!("constraints for {} rows of {}", n, ds.name))?;
            let pairs = c.pairs;
            match method.as_str() {
                "mccc" => {
                    let mut p = MccParams::new(a.k);
                    p.imc.max_outer = a.iters.max(1);
                    p.memory = budget;
                    preflight(g, &estimate_mccc(x, pairs.len(), &p), budget, "--k")?;
                    let r = fit_mccc(x, &pairs, &p.check()?, &mut rng)?;
                    extra.push((
                        "constraint_error".into(),
                        gimc_metrics::constraint_error(&pairs, &r.labels)?,
                    ));
                    Ok(r.labels)
                }
                m => {
                    let (family, learn) = crate::common::map_method(m, &g.registry)
                        .with_context(|| "with --constraints (or mccc)".to_string())?;
                    let mut p =
                        SemiSupParams::new(a.k, a.m.unwrap_or(200), gamma).with_learn(learn);
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
                    let r = fit_semisupervised(x, &pairs, family, &p.check()?, &mut rng)?;
                    extra.push(("lambda".into(), r.lambda));
                    extra.push(("iterations".into(), r.iterations as f64));
                    extra.push(("constraint_error".into(), r.train_constraint_error));
                    Ok(r.labels)
                }
            }
        } else {
            if let Some(est) = kmeans_estimate(&method, x, a.k) {
                preflight(g, &est, budget, "-k")?;
            }
            match method.as_str() {
                "kmeans" => {
                    let p = KMeansParams::new(a.k).with_n_init(10).check()?;
                    let r = fit_kmeans(x, &p, &mut rng)?;
                    extra.push(("inertia".into(), r.inertia));
                    Ok(r.labels)
                }
                "minibatch" => {
                    let p = MiniBatchKMeansParams::new(a.k).check()?;
                    let r = fit_minibatch_kmeans(x, &p, &mut rng)?;
                    extra.push(("inertia".into(), r.inertia));
                    Ok(r.labels)
                }
                "kernel-kmeans" => {
                    let p = KernelKMeansParams::new(a.k, Kernel::Rbf { gamma }).check()?;
                    let r = fit_kernel_kmeans(x, &p, &mut rng)?;
                    extra.push(("inertia".into(), r.inertia));
                    Ok(r.labels)
                }
                "okmf" => {
                    let mut p = OkmfParams::new(a.k, Kernel::Rbf { gamma });
                    if let Some(m) = a.m {
                        p.budget_size = m;
                    }
                    let r = fit_okmf(x, &p.check()?, &mut rng)?;
                    Ok(r.predict(x)?)
                }
                other => bail!(
                    "unknown method `{other}` (choose kmeans, minibatch, kernel-kmeans, okmf; with --constraints gimc-lff, gimc-lnys, imc-rff, imc-nys, mccc)"
                ),
            }
        }
    })();
    spinner.finish();
    let labels = result?;
    let classes = match &ds.targets {
        Targets::Classes { classes, .. } => Some(classes.as_slice()),
        _ => None,
    };
    report(a, g, &ds.name, &method, &labels, classes, extra)
}

/// Writes the assignments (to --out or stdout) and the summary: the method's own figures in
/// `extra`, plus clustering accuracy and pairwise error when the rows have classes.
pub(crate) fn report(
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
