//! Investigation probe (not part of the reproduction): OKMF-R-RBF on white wine and abalone
//! under the authors' protocol as far as it can be reconstructed (uniform random W, inverse-
//! scaling step), under label-free RBF widths, and under our defaults; prints accuracy, cluster
//! sizes and the OKMF objective of every setting. Nothing is chosen on the labels: every setting
//! is reported.
//!
//! `GIMC_DATA=/work/shared/datasets cargo run --release -p gimc-experiments --example
//! okmf_wine_probe -- [--runs=10] [--sets=wine,abalone] [SECTION ...]`
//!
//! Sections: `widths`, `ours`, `authors`, `authors-widths`, `variants`, `init`, `kkm`,
//! `polish` (full-batch projected gradient descent on the exact objective from several W's on
//! the same budget: is a setting's W a local optimum, and which optimum has the lower objective).
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]
use std::path::PathBuf;
use std::time::Instant;

use gimc_cluster::{
    KernelKMeansParams, Okmf, OkmfInit, OkmfParams, OkmfStep, fit_kernel_kmeans, fit_okmf,
};
use gimc_experiments::experiments::okmf_table2::{
    BUDGET, ClusterData, largest_class_share, load_abalone, load_wine_white, rbf_gamma,
};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{child, seeded};
use gimc_linalg::solve::Cholesky;
use gimc_linalg::{FeatureMatrix, Kernel};
use gimc_linalg::{kernel_block, sym_eig};
use gimc_metrics::clustering_accuracy;
use rand::Rng;

const MASTER_SEED: u64 = 2015;

/// γ = 1/median ‖x − y‖² over 20,000 seeded random pairs (label-free).
fn median_gamma(x: &FeatureMatrix) -> f64 {
    let xd = x.to_dense();
    let (n, d) = (xd.nrows(), xd.ncols());
    let mut rng = seeded(7);
    let mut dists: Vec<f64> = (0..20_000)
        .map(|_| {
            let i = rng.random_range(0..n);
            let mut j = rng.random_range(0..n);
            while j == i {
                j = rng.random_range(0..n);
            }
            (0..d)
                .map(|c| (xd[(i, c)] - xd[(j, c)]).powi(2))
                .sum::<f64>()
        })
        .collect();
    dists.sort_by(f64::total_cmp);
    1.0 / dists[dists.len() / 2]
}

/// scikit-learn's `gamma='scale'`: 1/(d · X.var()), the variance of all entries together.
fn sklearn_scale_gamma(x: &FeatureMatrix) -> f64 {
    let xd = x.to_dense();
    let m = (xd.nrows() * xd.ncols()) as f64;
    let mut s = 0.0;
    let mut s2 = 0.0;
    for j in 0..xd.ncols() {
        for i in 0..xd.nrows() {
            s += xd[(i, j)];
            s2 += xd[(i, j)] * xd[(i, j)];
        }
    }
    let var = s2 / m - (s / m).powi(2);
    1.0 / (xd.ncols() as f64 * var)
}

/// 1/(d · mean per-feature variance) = 2/E‖x − y‖².
fn mean_var_gamma(x: &FeatureMatrix) -> f64 {
    let xd = x.to_dense();
    let n = xd.nrows() as f64;
    let mut total = 0.0;
    for j in 0..xd.ncols() {
        let mean = (0..xd.nrows()).map(|i| xd[(i, j)]).sum::<f64>() / n;
        total += (0..xd.nrows())
            .map(|i| (xd[(i, j)] - mean).powi(2))
            .sum::<f64>()
            / n;
    }
    1.0 / total
}

fn widths(x: &FeatureMatrix) -> Vec<(&'static str, f64)> {
    vec![
        ("1/d", rbf_gamma(x)),
        ("median", median_gamma(x)),
        ("1/(d·meanvar)", mean_var_gamma(x)),
        ("sk-scale", sklearn_scale_gamma(x)),
    ]
}

fn sizes(labels: &[usize], k: usize) -> Vec<usize> {
    let mut c = vec![0usize; k];
    for &l in labels {
        c[l] += 1;
    }
    c.sort_unstable_by(|a, b| b.cmp(a));
    c
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let s = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt();
    (m, s)
}

struct Outcome {
    acc: Vec<f64>,
    obj: Vec<f64>,
    top: Vec<f64>,
    sizes: Vec<Vec<usize>>,
    first_loss: Vec<f64>,
    last_loss: Vec<f64>,
    secs: f64,
}

/// Fits OKMF `runs` times (run r uses stream r of the master seed: same budget across settings
/// for the same run) and collects accuracy, objective and cluster sizes.
fn run_okmf(data: &ClusterData, params: &OkmfParams, runs: usize) -> Outcome {
    let base = seeded(MASTER_SEED);
    let mut out = Outcome {
        acc: vec![],
        obj: vec![],
        top: vec![],
        sizes: vec![],
        first_loss: vec![],
        last_loss: vec![],
        secs: 0.0,
    };
    let params = match params.check() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("  invalid parameters: {e}");
            return out;
        }
    };
    let start = Instant::now();
    for r in 0..runs {
        let mut rng = child(&base, r as u64);
        let model = match fit_okmf(&data.x, &params, &mut rng) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("  run {r}: fit failed: {e}");
                continue;
            }
        };
        let labels = model.predict(&data.x).expect("predict");
        out.acc
            .push(clustering_accuracy(&labels, &data.classes).expect("acc"));
        out.obj.push(model.objective(&data.x).expect("objective"));
        let s = sizes(&labels, data.k);
        out.top.push(s[0] as f64 / labels.len() as f64);
        out.sizes.push(s);
        out.first_loss.push(model.loss_trace[0]);
        out.last_loss
            .push(model.loss_trace.last().copied().unwrap_or(f64::NAN));
    }
    out.secs = start.elapsed().as_secs_f64() / runs.max(1) as f64;
    out
}

fn print_outcome(set: &str, gamma_name: &str, setting: &str, o: &Outcome) {
    if o.acc.is_empty() {
        println!("| {set} | {gamma_name} | {setting} | all runs failed | | | | | |");
        return;
    }
    let (a, sa) = mean_std(&o.acc);
    let (j, sj) = mean_std(&o.obj);
    let (t, _) = mean_std(&o.top);
    let (l1, _) = mean_std(&o.first_loss);
    let (ll, _) = mean_std(&o.last_loss);
    let near_one = o.top.iter().filter(|&&t| t > 0.9).count();
    let sz: Vec<String> = o
        .sizes
        .iter()
        .take(3)
        .map(|s| {
            s.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    println!(
        "| {set} | {gamma_name} | {setting} | {a:.4} ± {sa:.4} (n={}) | {t:.3} ({near_one} >.9) | {} | {j:.6} ± {sj:.6} | {l1:.5} → {ll:.5} | {:.2} |",
        o.acc.len(),
        sz.join(", "),
        o.secs
    );
}

fn header() {
    println!(
        "| set | RBF γ rule | setting | accuracy mean ± std | largest cluster share (runs >.9) | sizes runs 0,1,2 | objective mean ± std | progressive loss ep1 → last | s/fit |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
}

const LAMBDA: f64 = 1e-4;
const ALPHA: f64 = 1e-3;

/// Exact mean objective of W on rows with kernel rows `kxb` (n × p), RBF (k(x, x) = 1), and the
/// latent codes H.
fn exact_objective(kb: &Mat<f64>, kxb: &Mat<f64>, w: &Mat<f64>) -> (f64, Mat<f64>, Mat<f64>) {
    let m = kb * w;
    let mut g = w.transpose() * &m;
    for c in 0..g.nrows() {
        g[(c, c)] += ALPHA;
    }
    let chol = Cholesky::new(g.as_ref()).expect("chol");
    let c = kxb * w;
    let h = chol
        .solve(c.transpose())
        .expect("solve")
        .transpose()
        .to_owned();
    let n = kxb.nrows();
    let mut total = 0.0;
    for i in 0..n {
        let ch: f64 = (0..w.ncols()).map(|j| c[(i, j)] * h[(i, j)]).sum();
        total += 0.5 * (1.0 - ch);
    }
    (total / n as f64 + 0.5 * LAMBDA * w.squared_norm_l2(), h, m)
}

fn labels_of(h: &Mat<f64>) -> Vec<usize> {
    (0..h.nrows())
        .map(|i| {
            let mut best = (0usize, f64::NEG_INFINITY);
            for j in 0..h.ncols() {
                if h[(i, j)] > best.1 {
                    best = (j, h[(i, j)]);
                }
            }
            best.0
        })
        .collect()
}

/// Full-batch projected (W ≥ 0) gradient descent with Armijo backtracking on the exact objective.
fn polish_w(
    kb: &Mat<f64>,
    kxb: &Mat<f64>,
    lmax: f64,
    w0: &Mat<f64>,
    iters: usize,
) -> (Mat<f64>, f64, usize) {
    let n = kxb.nrows() as f64;
    let mut w = w0.clone();
    let (mut obj, mut h, mut m) = exact_objective(kb, kxb, &w);
    let hth = h.transpose() * &h;
    let (ev, _) = sym_eig(hth.as_ref()).expect("eig");
    let mut step = 1.0 / (lmax * ev.last().copied().unwrap_or(1.0).max(1e-12) / n + LAMBDA);
    let mut done = 0;
    for _ in 0..iters {
        let hth = h.transpose() * &h;
        let mut grad = &m * &hth - kxb.transpose() * &h;
        for j in 0..grad.ncols() {
            for i in 0..grad.nrows() {
                grad[(i, j)] = grad[(i, j)] / n + LAMBDA * w[(i, j)];
            }
        }
        step *= 2.0;
        let mut accepted = false;
        for _ in 0..40 {
            let wn = Mat::from_fn(w.nrows(), w.ncols(), |i, j| {
                (w[(i, j)] - step * grad[(i, j)]).max(0.0)
            });
            let mut dec = 0.0;
            for j in 0..w.ncols() {
                for i in 0..w.nrows() {
                    dec += grad[(i, j)] * (w[(i, j)] - wn[(i, j)]);
                }
            }
            let (o, hn, mn) = exact_objective(kb, kxb, &wn);
            if o <= obj - 1e-4 * dec && o.is_finite() {
                w = wn;
                obj = o;
                h = hn;
                m = mn;
                accepted = true;
                break;
            }
            step *= 0.5;
        }
        if !accepted {
            break;
        }
        done += 1;
    }
    (w, obj, done)
}

fn polish_section(name: &str, wname: &str, d: &ClusterData, gamma: f64, runs: usize) {
    let kernel = Kernel::Rbf { gamma };
    let base_p = OkmfParams::new(d.k, kernel).with_budget_size(BUDGET);
    let starts: Vec<(&str, OkmfParams)> = vec![
        ("ours (defaults)", base_p.clone()),
        (
            "authors γ₀=0.1 b1 10ep",
            base_p
                .clone()
                .with_init(OkmfInit::Random)
                .with_step(OkmfStep::InverseScaling { gamma0: 0.1 })
                .with_batch_size(1),
        ),
        (
            "authors γ₀=1 b1 10ep",
            base_p
                .clone()
                .with_init(OkmfInit::Random)
                .with_step(OkmfStep::InverseScaling { gamma0: 1.0 })
                .with_batch_size(1),
        ),
    ];
    let base = seeded(MASTER_SEED);
    for r in 0..runs {
        let mut models: Vec<(String, Okmf)> = vec![];
        for (sname, p) in &starts {
            let mut rng = child(&base, r as u64);
            models.push((
                (*sname).to_owned(),
                fit_okmf(&d.x, &p.check().expect("valid parameters"), &mut rng).expect("fit"),
            ));
        }
        let m0 = &models[0].1;
        let kb = m0.kernel_budget.clone();
        let kxb = kernel_block(&kernel, &d.x, m0.budget.as_ref()).expect("kxb");
        if r == 0 {
            let mut mx: Vec<f64> = (0..kxb.nrows())
                .map(|i| (0..kxb.ncols()).map(|j| kxb[(i, j)]).fold(0.0, f64::max))
                .collect();
            mx.sort_by(f64::total_cmp);
            let q = |f: f64| mx[((mx.len() - 1) as f64 * f) as usize];
            let offd: Vec<f64> = (0..kb.nrows())
                .flat_map(|i| {
                    (0..kb.ncols())
                        .filter(move |&j| j != i)
                        .map(move |j| (i, j))
                })
                .map(|(i, j)| kb[(i, j)])
                .collect();
            let offd_mean = offd.iter().sum::<f64>() / offd.len() as f64;
            println!(
                "<!-- {name} {wname}: max_j k(x, b_j) over rows: q10 {:.3e}, q25 {:.3e}, median {:.3e}, q75 {:.3e}; rows with max < 1e-3: {:.3}; mean off-diagonal K_B {:.3e} -->",
                q(0.1),
                q(0.25),
                q(0.5),
                q(0.75),
                mx.iter().filter(|&&v| v < 1e-3).count() as f64 / mx.len() as f64,
                offd_mean
            );
        }
        let (ev, _) = sym_eig(kb.as_ref()).expect("eig");
        let lmax = ev.last().copied().unwrap_or(1.0);
        let p = kb.nrows();
        let mut inits: Vec<(String, Mat<f64>)> = models
            .iter()
            .map(|(s, m)| (s.clone(), m.w.clone()))
            .collect();
        let one = Mat::from_fn(p, d.k, |_, j| if j == 0 { 1.0 / p as f64 } else { 0.0 });
        inits.push(("one-cluster W (col 0 = 1/p, rest 0)".into(), one));
        let mut prng = child(&base, 50_000 + r as u64);
        let near = Mat::from_fn(p, d.k, |_, j| {
            let e: f64 = prng.random();
            if j == 0 {
                1.0 / p as f64
            } else {
                1e-2 * e / p as f64
            }
        });
        inits.push(("near-one-cluster W (+1% noise)".into(), near));
        for (sname, w0) in inits {
            let (o0, h0, _) = exact_objective(&kb, &kxb, &w0);
            let l0 = labels_of(&h0);
            let a0 = clustering_accuracy(&l0, &d.classes).expect("one label per row");
            let (w1, o1, it) = polish_w(&kb, &kxb, lmax, &w0, 300);
            let (_, h1, _) = exact_objective(&kb, &kxb, &w1);
            let l1 = labels_of(&h1);
            let a1 = clustering_accuracy(&l1, &d.classes).expect("one label per row");
            let fmt = |l: &[usize]| {
                sizes(l, d.k)
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            };
            println!(
                "| {name} | {wname} | run {r}: {sname} | {a0:.4} → {a1:.4} | {} → {} | {o0:.6} → {o1:.6} ({it} GD steps) |",
                fmt(&l0),
                fmt(&l1)
            );
        }
    }
}

/// The loaded set, or exit with the reason (a probe, not a library: stop on missing data).
fn require<E: std::fmt::Display>(
    loaded: Result<Option<ClusterData>, E>,
    name: &str,
) -> ClusterData {
    match loaded {
        Ok(Some(d)) => d,
        Ok(None) => {
            eprintln!("okmf_wine_probe: {name} is not in the data directory (GIMC_DATA)");
            std::process::exit(2)
        }
        Err(e) => {
            eprintln!("okmf_wine_probe: cannot load {name}: {e}");
            std::process::exit(2)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("--runs="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let sets_arg = args
        .iter()
        .find_map(|a| a.strip_prefix("--sets="))
        .unwrap_or("wine,abalone")
        .to_owned();
    let epochs_arg: Vec<usize> = args
        .iter()
        .find_map(|a| a.strip_prefix("--epochs="))
        .unwrap_or("1,10")
        .split(',')
        .filter_map(|v| v.parse().ok())
        .collect();
    let batches_arg: Vec<usize> = args
        .iter()
        .find_map(|a| a.strip_prefix("--batches="))
        .unwrap_or("1,10")
        .split(',')
        .filter_map(|v| v.parse().ok())
        .collect();
    let gamma0s: Vec<f64> = args
        .iter()
        .find_map(|a| a.strip_prefix("--gamma0="))
        .unwrap_or("0.001,0.01,0.1,1")
        .split(',')
        .filter_map(|v| v.parse().ok())
        .collect();
    let sections: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    let data_dir =
        std::env::var("GIMC_DATA").map_or_else(|_| PathBuf::from("datasets"), PathBuf::from);
    let mut sets: Vec<(&str, ClusterData)> = vec![];
    for s in sets_arg.split(',') {
        match s {
            "wine" => sets.push(("wine", require(load_wine_white(&data_dir), "winequality"))),
            "abalone" => sets.push(("abalone", require(load_abalone(&data_dir), "abalone"))),
            _ => {}
        }
    }
    println!("runs = {runs}, budget = {BUDGET}, master seed {MASTER_SEED}");
    for (name, d) in &sets {
        println!(
            "{name}: {} × {}, k = {}, one-cluster share {:.4}; widths: {}",
            d.x.nrows(),
            d.x.ncols(),
            d.k,
            largest_class_share(&d.classes),
            widths(&d.x)
                .iter()
                .map(|(n, g)| format!("{n} = {g:.4e}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if sections.contains(&"widths") {
        return;
    }
    if sections.contains(&"polish") {
        println!(
            "| set | RBF γ rule | start W | accuracy start → after GD | sizes start → after | objective start → after GD |"
        );
        println!("|---|---|---|---|---|---|");
        let wsel: Vec<String> = args
            .iter()
            .find_map(|a| a.strip_prefix("--polish-widths="))
            .unwrap_or("1/d,sk-scale")
            .split(',')
            .map(str::to_owned)
            .collect();
        for (name, d) in &sets {
            for (wname, g) in widths(&d.x) {
                if wsel.iter().any(|w| w == wname) {
                    polish_section(name, wname, d, g, runs);
                }
            }
        }
        return;
    }
    header();
    for (name, d) in &sets {
        let all_widths = widths(&d.x);
        let one_over_d = all_widths[..1].to_vec();
        for sec in &sections {
            let mut ws = match *sec {
                "authors" | "variants" | "init" => one_over_d.clone(),
                _ => all_widths.clone(),
            };
            if let Some(list) = args.iter().find_map(|a| a.strip_prefix("--widths=")) {
                let keep: Vec<&str> = list.split(',').collect();
                ws = all_widths
                    .iter()
                    .filter(|(n, _)| keep.contains(n))
                    .cloned()
                    .collect();
            }
            for (wname, g) in &ws {
                let kernel = Kernel::Rbf { gamma: *g };
                let base = OkmfParams::new(d.k, kernel).with_budget_size(BUDGET);
                match *sec {
                    "ours" => {
                        let o = run_okmf(d, &base, runs);
                        print_outcome(name, wname, "ours (defaults)", &o);
                    }
                    "init" => {
                        // the objective of the two initial W's: a vanishing step, one epoch
                        let tiny = OkmfStep::InverseScaling { gamma0: 1e-15 };
                        let p = base.clone().with_step(tiny).with_epochs(1);
                        let o = run_okmf(d, &p, runs);
                        print_outcome(name, wname, "W = kernel-k-means init (no SGD)", &o);
                        let p = p.with_init(OkmfInit::Random);
                        let o = run_okmf(d, &p, runs);
                        print_outcome(name, wname, "W = uniform random init (no SGD)", &o);
                    }
                    "authors" | "authors-widths" => {
                        let (eps, bs, g0s): (Vec<usize>, Vec<usize>, Vec<f64>) =
                            if *sec == "authors" {
                                (epochs_arg.clone(), batches_arg.clone(), gamma0s.clone())
                            } else {
                                (vec![10], vec![10], gamma0s.clone())
                            };
                        for &e in &eps {
                            for &b in &bs {
                                for &g0 in &g0s {
                                    let p = base
                                        .clone()
                                        .with_init(OkmfInit::Random)
                                        .with_step(OkmfStep::InverseScaling { gamma0: g0 })
                                        .with_batch_size(b)
                                        .with_epochs(e);
                                    let o = run_okmf(d, &p, runs);
                                    print_outcome(
                                        name,
                                        wname,
                                        &format!(
                                            "random W, inv-scaling γ₀={g0}, batch {b}, {e} ep"
                                        ),
                                        &o,
                                    );
                                }
                            }
                        }
                    }
                    "variants" => {
                        let mut list: Vec<(String, OkmfParams)> = vec![];
                        list.push((
                            "ours but random W".into(),
                            base.clone().with_init(OkmfInit::Random),
                        ));
                        for eta in [0.5, 1.0, 1.9] {
                            list.push((
                                format!("ours, η₀={eta}"),
                                base.clone().with_step(OkmfStep::Normalized { eta0: eta }),
                            ));
                            list.push((
                                format!("ours, η₀={eta}, random W"),
                                base.clone()
                                    .with_step(OkmfStep::Normalized { eta0: eta })
                                    .with_init(OkmfInit::Random),
                            ));
                        }
                        list.push((
                            "ours, batch 1, 1 ep".into(),
                            base.clone().with_batch_size(1).with_epochs(1),
                        ));
                        list.push(("ours, 50 ep".into(), base.clone().with_epochs(50)));
                        list.push(("ours, no W≥0".into(), base.clone().with_nonnegative(false)));
                        for (s, p) in list {
                            let o = run_okmf(d, &p, runs);
                            print_outcome(name, wname, &s, &o);
                        }
                    }
                    "kkm" => {
                        let bsz = 3.min(runs);
                        let mut accs = vec![];
                        let mut szs = vec![];
                        for r in 0..bsz {
                            let mut rng = child(&seeded(MASTER_SEED), 10_000 + r as u64);
                            let m = fit_kernel_kmeans(
                                &d.x,
                                &KernelKMeansParams::new(d.k, kernel)
                                    .check()
                                    .expect("valid parameters"),
                                &mut rng,
                            )
                            .expect("kkm");
                            accs.push(
                                clustering_accuracy(&m.labels, &d.classes)
                                    .expect("one label per row"),
                            );
                            szs.push(
                                sizes(&m.labels, d.k)
                                    .iter()
                                    .map(|v| v.to_string())
                                    .collect::<Vec<_>>()
                                    .join("/"),
                            );
                        }
                        let (a, s) = mean_std(&accs);
                        println!(
                            "| {name} | {wname} | kernel k-means ({bsz} runs) | {a:.4} ± {s:.4} | | {} | | | |",
                            szs.join(", ")
                        );
                    }
                    _ => {}
                }
            }
        }
    }
}
