//! `mpirun -np 2 gimc fit --mpi` (feature `mpi`): two processes, each reading its byte range of
//! an XC file, fit the same model as one process: W within 1e-8 relative, the same test P@k,
//! also streamed; a process that fails ends the job with an error instead of a hang. The
//! default search (`auto`) chooses on the group what it chooses on one process. The same for
//! `gimc cluster --mpi` (k-means) and `gimc complete --method imc --mpi` (IMC-ALS on a partial
//! Ω).

use std::path::Path;
use std::process::{Command, Output};

use gimc::MapRegistry;

use crate::{gimc, gimc_ok, stderr, stdout};

fn mpirun(np: usize, args: &[&str]) -> Output {
    Command::new("mpirun")
        .args([
            "-np",
            &np.to_string(),
            "--oversubscribe",
            "--bind-to",
            "none",
        ])
        .arg(env!("CARGO_BIN_EXE_gimc"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("mpirun runs (install openmpi-bin)")
}

/// Writes rows [lo, hi) of an XC file (header line first) to `out`.
fn xc_rows(src: &Path, lo: usize, hi: usize, out: &Path) {
    let text = std::fs::read_to_string(src).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let body: Vec<&str> = lines.skip(lo).take(hi - lo).collect();
    let mut s = format!("{} {} {}\n", body.len(), header[1], header[2]);
    for l in body {
        s.push_str(l);
        s.push('\n');
    }
    std::fs::write(out, s).unwrap();
}

/// Synthetic XC data in `dir` (`gimc data synth xmc` with `seed` and [rows, features,
/// labels]): the first `train_rows` rows in `train.txt`, the rest in `test.txt`.
fn synth_split(
    dir: &Path,
    seed: u64,
    [rows, features, labels]: [usize; 3],
    train_rows: usize,
) -> (std::path::PathBuf, std::path::PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let all = dir.join("all.txt");
    gimc_ok(&[
        "-q",
        "--seed",
        &seed.to_string(),
        "data",
        "synth",
        "xmc",
        "--rows",
        &rows.to_string(),
        "--features",
        &features.to_string(),
        "--labels",
        &labels.to_string(),
        "-o",
        all.to_str().unwrap(),
    ]);
    let (train, test) = (dir.join("train.txt"), dir.join("test.txt"));
    xc_rows(&all, 0, train_rows, &train);
    xc_rows(&all, train_rows, rows, &test);
    (train, test)
}

fn w_of(path: &Path) -> gimc_linalg::faer::Mat<f64> {
    let model = gimc::persist::load_label_model(path, &MapRegistry::builtin()).unwrap();
    model.w().to_owned()
}

fn p_at(model: &Path, test: &Path, pred: &Path) -> String {
    gimc_ok(&[
        "-q",
        "predict",
        test.to_str().unwrap(),
        "-m",
        model.to_str().unwrap(),
        "--top-k",
        "5",
        "-o",
        pred.to_str().unwrap(),
    ]);
    let o = gimc_ok(&[
        "eval",
        "--pred",
        pred.to_str().unwrap(),
        "--truth",
        test.to_str().unwrap(),
    ]);
    stdout(&o)
}

#[test]
fn two_processes_fit_the_single_process_model() {
    let dir = std::env::temp_dir().join(format!("gimc-mpi-{}", std::process::id()));
    let (train, test) = synth_split(&dir, 3, [2500, 1500, 80], 2000);
    let fit = |np: usize, seed: &str, name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let mut args = vec![
            "--seed",
            seed,
            "fit",
            train.to_str().unwrap(),
            "--mpi",
            "--method",
            "gimc-lff",
            "--m",
            "40",
            "--lambda",
            "1",
            "--iters",
            "3",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = mpirun(np, &args);
        assert!(
            o.status.success(),
            "np {np}: {}\n{}",
            stdout(&o),
            stderr(&o)
        );
        out
    };
    let one = fit(1, "5", "one.gimc", &[]);
    let two = fit(2, "5", "two.gimc", &[]);
    let two_streamed = fit(
        2,
        "5",
        "two-s.gimc",
        &["--stream", "on", "--block-rows", "150"],
    );
    let w1 = w_of(&one);
    for other in [&two, &two_streamed] {
        let w = w_of(other);
        let rel = (&w - &w1).norm_l2() / w1.norm_l2();
        assert!(rel < 1e-8, "{}: W differs by {rel:e}", other.display());
        assert_eq!(
            p_at(other, &test, &dir.join("p.pred")),
            p_at(&one, &test, &dir.join("q.pred"))
        );
    }
    // a different seed draws another map: another model (the comparison can fail)
    let seed6 = fit(2, "6", "seed6.gimc", &[]);
    let w6 = w_of(&seed6);
    assert!((&w6 - &w1).norm_l2() > 1e-3 * w1.norm_l2());
    // one process's shard is malformed: the job ends with the error, it does not hang
    let bad = dir.join("bad.txt");
    let mut text = std::fs::read_to_string(&train).unwrap();
    text.push_str("0 1:oops\n");
    std::fs::write(&bad, text.replacen("2000 1500 80", "2001 1500 80", 1)).unwrap();
    let o = mpirun(
        2,
        &[
            "fit",
            bad.to_str().unwrap(),
            "--mpi",
            "--method",
            "gimc-lff",
            "--iters",
            "1",
            "-o",
            dir.join("bad.gimc").to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("oops"), "{}", stderr(&o));
    // a map drawn from the rows is refused
    let o = mpirun(
        1,
        &[
            "fit",
            train.to_str().unwrap(),
            "--mpi",
            "--method",
            "gimc-lnys",
            "-o",
            dir.join("n.gimc").to_str().unwrap(),
        ],
    );
    assert!(
        !o.status.success() && stderr(&o).contains("drawn from the seed"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `chosen` and `tried` settings of `gimc --json fit` (the default search).
fn search_of(o: &Output) -> (serde_json::Value, serde_json::Value) {
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).expect("fit --json");
    (v["chosen"].clone(), v["tried"].clone())
}

#[test]
fn the_default_search_on_processes_chooses_what_one_process_chooses() {
    let dir = std::env::temp_dir().join(format!("gimc-mpi-auto-{}", std::process::id()));
    let (train, test) = synth_split(&dir, 2, [700, 200, 12], 600);
    let t = train.to_str().unwrap();
    let search = ["--m", "16", "--iters", "2", "--lambda", "0.1,1"];
    let one_model = dir.join("one.gimc");
    let mut args = vec!["--json", "fit", t, "-o", one_model.to_str().unwrap()];
    args.extend_from_slice(&search);
    let one = gimc(&args);
    assert!(one.status.success(), "{}", stderr(&one));
    // every row in the sample: the same search, the same choice, the same predictions
    let two_model = dir.join("two.gimc");
    let mut args = vec![
        "--json",
        "fit",
        t,
        "--mpi",
        "-o",
        two_model.to_str().unwrap(),
    ];
    args.extend_from_slice(&search);
    let two = mpirun(2, &args);
    assert!(two.status.success(), "{}\n{}", stdout(&two), stderr(&two));
    assert_eq!(search_of(&two), search_of(&one));
    let rel = (&w_of(&two_model) - &w_of(&one_model)).norm_l2() / w_of(&one_model).norm_l2();
    assert!(rel < 1e-8, "W differs by {rel:e}");
    assert_eq!(
        p_at(&two_model, &test, &dir.join("p.pred")),
        p_at(&one_model, &test, &dir.join("q.pred"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The assignments and inertia of `gimc cluster … --json` (single process or under mpirun).
fn clustering(o: &Output) -> (Vec<u64>, f64, Option<f64>) {
    assert!(o.status.success(), "{}\n{}", stdout(o), stderr(o));
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    let labels = v["assignments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_u64().unwrap())
        .collect();
    let metrics = &v["metrics"];
    (
        labels,
        metrics["inertia"].as_f64().unwrap(),
        metrics["clustering_accuracy"].as_f64(),
    )
}

#[test]
fn processes_cluster_like_one() {
    let dir = std::env::temp_dir().join(format!("gimc-mpi-km-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // sparse rows of an XC file (byte-range shards), and a LIBSVM file with classes (each
    // process keeps its block of the rows)
    let xc = dir.join("xc.txt");
    gimc_ok(&[
        "-q",
        "--seed",
        "4",
        "data",
        "synth",
        "xmc",
        "--rows",
        "900",
        "--features",
        "300",
        "--labels",
        "20",
        "-o",
        xc.to_str().unwrap(),
    ]);
    let blobs = dir.join("blobs.libsvm");
    let mut text = String::new();
    for i in 0..301 {
        let c = i % 3;
        let wobble = |j: usize| ((i * 7 + j * 13) % 17) as f64 / 17.0;
        text.push_str(&format!(
            "{} 1:{} 2:{} 3:{}\n",
            c + 1,
            4.0 * c as f64 + wobble(1),
            -3.0 * c as f64 + wobble(2),
            wobble(3)
        ));
    }
    std::fs::write(&blobs, text).unwrap();
    for (file, k, np) in [(&xc, "6", 3), (&blobs, "3", 2)] {
        let args = [
            "--json",
            "--seed",
            "8",
            "cluster",
            file.to_str().unwrap(),
            "-k",
            k,
            "--standardize",
            "off",
        ];
        let one = clustering(&gimc(&args));
        let mut mpi_args = args.to_vec();
        mpi_args.push("--mpi");
        let many = clustering(&mpirun(np, &mpi_args));
        assert_eq!(many.0, one.0, "{}: assignments differ", file.display());
        assert!(
            (many.1 - one.1).abs() <= 1e-10 * one.1,
            "inertia {} vs {}",
            many.1,
            one.1
        );
        assert_eq!(many.2, one.2);
    }
    // the blobs are found, so the comparison above is of a real clustering
    let acc = clustering(&gimc(&[
        "--json",
        "cluster",
        blobs.to_str().unwrap(),
        "-k",
        "3",
        "--standardize",
        "off",
    ]))
    .2;
    assert_eq!(acc, Some(1.0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The training RMSE and the predictions of `gimc complete … --json`.
fn completion(o: &Output) -> (f64, Vec<f64>) {
    assert!(o.status.success(), "{}\n{}", stdout(o), stderr(o));
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    let pred = v["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[2].as_f64().unwrap())
        .collect();
    (v["train_rmse"].as_f64().unwrap(), pred)
}

/// `mpirun -np 2 gimc complete --method imc --mpi`: each process fits on its block of rows of
/// A and the result is the single-process command's: the same training RMSE and predictions
/// to 1e-8 relative, with column features and with identity columns, and the saved W and H;
/// what the MPI path does not run fails on every process instead of hanging.
#[test]
fn processes_complete_like_one() {
    let dir = std::env::temp_dir().join(format!("gimc-mpi-imc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (n, m) = (61usize, 23usize);
    // hashed values in (−0.5, 0.5): full-rank features (sinusoids would be rank 2, leaving the
    // spectral start's third singular pair to rounding)
    let feature = |i: usize, j: usize, s: f64| {
        let t = ((i as f64) * 12.9898 + (j as f64) * 78.233 + s).sin() * 43_758.545_3;
        t - t.floor() - 0.5
    };
    let csv = |count: usize, dim: usize, s: f64| -> String {
        (0..count)
            .map(|i| {
                let row: Vec<String> = (0..dim).map(|j| feature(i, j, s).to_string()).collect();
                format!("{}\n", row.join(","))
            })
            .collect()
    };
    let (x, y) = (dir.join("x.csv"), dir.join("y.csv"));
    std::fs::write(&x, csv(n, 6, 0.0)).unwrap();
    std::fs::write(&y, csv(m, 4, 1.0)).unwrap();
    let (mut obs, mut ask) = (String::new(), String::new());
    // column by column: the file is not sorted by rows, so each process's entries are spread
    for j in 0..m {
        for i in 0..n {
            let v = feature(i, 0, 0.0) * feature(j, 1, 1.0) + 0.5 * feature(i, 2, 0.0)
                - 0.1 * ((i * j) % 5) as f64;
            if (i * 13 + j * 7) % 10 < 4 {
                obs.push_str(&format!("{i} {j} {v}\n"));
            } else if (i + 2 * j) % 5 == 0 {
                ask.push_str(&format!("{i} {j}\n"));
            }
        }
    }
    let (obs_file, ask_file, saved_one, saved_two) = (
        dir.join("obs.triplets"),
        dir.join("ask.pairs"),
        dir.join("one.gimc"),
        dir.join("two.gimc"),
    );
    std::fs::write(&obs_file, obs).unwrap();
    std::fs::write(&ask_file, ask).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for (features, entries) in [(true, false), (false, true)] {
        let mut args = vec![
            "-q".to_string(),
            "--json".into(),
            "complete".into(),
            s(&obs_file),
            "--method".into(),
            "imc".into(),
            "--row-features".into(),
            s(&x),
            "--rank".into(),
            "3".into(),
            "--lambda".into(),
            "0.05".into(),
            "--iters".into(),
            "12".into(),
        ];
        if features {
            args.extend(["--col-features".into(), s(&y)]);
        }
        if entries {
            args.extend(["--entries".into(), s(&ask_file)]);
        }
        let mut one_args = args.clone();
        let mut mpi_args = args.clone();
        if features {
            one_args.extend(["--save".into(), s(&saved_one)]);
            mpi_args.extend(["--save".into(), s(&saved_two)]);
        }
        mpi_args.push("--mpi".into());
        let one_args: Vec<&str> = one_args.iter().map(String::as_str).collect();
        let mpi_args: Vec<&str> = mpi_args.iter().map(String::as_str).collect();
        let one = completion(&gimc(&one_args));
        let two = completion(&mpirun(2, &mpi_args));
        let case = format!("column features {features}, entries {entries}");
        assert!(
            (two.0 - one.0).abs() <= 1e-8 * one.0,
            "{case}: training RMSE {} vs {}",
            two.0,
            one.0
        );
        assert_eq!(two.1.len(), one.1.len(), "{case}");
        let scale = one.1.iter().map(|v| v * v).sum::<f64>().sqrt();
        let diff = two
            .1
            .iter()
            .zip(&one.1)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(
            diff <= 1e-8 * scale,
            "{case}: predictions differ by {diff} (scale {scale})"
        );
        if features {
            let load = |p: &Path| {
                gimc::persist::load_completion_model(p, &MapRegistry::builtin()).unwrap()
            };
            let (a, b) = (load(&saved_one), load(&saved_two));
            let rel = (a.w() - b.w()).norm_l2() / a.w().norm_l2();
            assert!(rel <= 1e-8, "{case}: W differs by {rel:e}");
        }
    }
    // not IMC-ALS, or a grid: every process fails with the message, none hangs
    let o = mpirun(
        2,
        &["complete", &s(&obs_file), "--method", "mc-als", "--mpi"],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--method imc"), "{}", stderr(&o));
    let o = mpirun(
        2,
        &[
            "complete",
            &s(&obs_file),
            "--method",
            "imc",
            "--row-features",
            &s(&x),
            "--lambda",
            "0.1,1",
            "--mpi",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("one --lambda"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}
