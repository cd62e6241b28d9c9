//! `gimc fit / predict / eval / cluster / constraints / plot`: one-line errors with a non-zero
//! exit on bad input, and end-to-end runs on small real sets.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::{data_dir, fit_small_model, gimc, small_multiclass_text, stderr, stdout, temp_file};

/// Asserts a failure with exit status 1 and a single `gimc: error:` line containing `needle`,
/// the last line on stderr (informational lines, such as where the targets came from, may
/// come before it).
fn assert_one_line_error(o: &Output, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(last.starts_with("gimc: error:"), "{what}: {err}");
    assert_eq!(err.matches("gimc: error:").count(), 1, "{what}: {err}");
    assert!(last.contains(needle), "{what}: `{err}` lacks `{needle}`");
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A small separable multi-class LIBSVM set (3 classes, 4 features, 60 rows).
fn small_multiclass() -> PathBuf {
    temp_file("small3.svm", small_multiclass_text().as_bytes())
}

fn fit_small(model: &Path) {
    fit_small_model(&small_multiclass(), model, &[]);
}

#[test]
fn fit_predict_eval_on_a_small_libsvm_file_with_bad_models_and_inputs() {
    let model = temp_file("small.gimc", b"");
    fit_small(&model);
    let data = small_multiclass();
    // predict + eval: a separable set is learned almost perfectly
    let pred = temp_file("small.pred", b"");
    let o = gimc(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gimc(&["--json", "eval", p(&pred), p(&data)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let acc = v["metrics"]["accuracy"].as_f64().unwrap();
    assert!(acc >= 0.9, "training accuracy {acc}");
    // JSON and CSV predictions
    let o = gimc(&[
        "--json",
        "predict",
        p(&data),
        "-m",
        p(&model),
        "--scores",
        "--top-k",
        "2",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 60);
    assert_eq!(v[0].as_array().unwrap().len(), 2);
    let o = gimc(&["predict", p(&data), "-m", p(&model), "--csv", "-q"]);
    assert!(
        stdout(&o).starts_with("# gimc predictions: kind=classes\nrow,rank,label,score\n0,1,"),
        "{}",
        stdout(&o)
    );

    // a model from another version, a corrupted model, a NaN weight, a missing model
    let bytes = std::fs::read(&model).unwrap();
    // the version digit after `\"version\":` in the JSON metadata (1 or 2; 5 when the
    // default search dropped a constant column and the model keeps the others)
    let needle = b"\\\"version\\\":";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("version field in the header");
    let mut v2 = bytes.clone();
    assert!(matches!(v2[at + needle.len()], b'1' | b'2' | b'5'));
    v2[at + needle.len()] = b'7';
    let v2 = temp_file("v7.gimc", &v2);
    let trunc = temp_file("trunc.gimc", &bytes[..bytes.len() / 2]);
    let junk = temp_file("junk.gimc", b"not a model");
    let mut nanw = bytes.clone();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    nanw[8 + n..8 + n + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    let nanw = temp_file("nanw.gimc", &nanw);
    let wrong_dim = temp_file("wide.svm", b"1 1:1 7:2\n2 2:1\n");
    let missing = PathBuf::from("/nonexistent-gimc/model.gimc");
    // (an edited version or weight is a checksum mismatch: the file is not what was saved)
    for (m, d, needle) in [
        (
            &v2,
            &data,
            "v7.gimc: checksum mismatch: the file is damaged or was edited",
        ),
        (&trunc, &data, "trunc.gimc"),
        (&junk, &data, "not a readable safetensors file"),
        (&nanw, &data, "nanw.gimc: checksum mismatch"),
        (&missing, &data, "model.gimc"),
        (&model, &wrong_dim, "7 feature columns, but the model"),
    ] {
        let o = gimc(&["predict", p(d), "-m", p(m)]);
        assert_one_line_error(
            &o,
            needle,
            &format!("predict {} with {}", d.display(), m.display()),
        );
    }
}

#[test]
fn bad_training_files_and_arguments_give_one_line_errors() {
    let empty = temp_file("empty.svm", b"");
    let nan = temp_file("nan2.svm", b"1 1:0.5 2:0.3\n2 1:nan 2:0.1\n");
    let bad = temp_file("bad2.svm", b"1 1:0.5 2:0.3\n2 1:abc 2:0.1\n");
    let short = temp_file("short.csv", b"a,b,label\n1,2,x\n3,4,y\n5,6\n");
    let nolabel = temp_file("nolabel.csv", b"a,b,c\n1,2,3\n4,5,6\n");
    let data = small_multiclass();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["fit", p(&empty)], "empty.svm: no data rows"),
        (vec!["fit", p(&nan)], "nan2.svm:2: non-finite value"),
        (
            vec!["fit", p(&bad)],
            "bad2.svm:2: cannot parse feature value",
        ),
        (
            vec!["fit", p(&short), "--label-column", "label"],
            "short.csv:4: 2 fields, expected 3",
        ),
        (vec!["fit", p(&nolabel)], "no labels or classes found"),
        (
            vec!["fit", p(&nolabel), "--label-column", "zz"],
            "nolabel.csv:1: no column named",
        ),
        (
            vec!["fit", p(&data), "--label-column", "3"],
            "applies to CSV files only",
        ),
        (
            vec!["fit", "/nonexistent/x.arff"],
            "no such file, and not a data set name",
        ),
        (
            vec!["fit", p(&data), "--method", "svm-magic"],
            "unknown method `svm-magic`",
        ),
        (vec!["fit", p(&data), "--m", "0"], "invalid parameter m"),
        (
            vec!["fit", p(&data), "--patience", "0"],
            "invalid parameter patience",
        ),
        (
            vec!["fit", p(&data), "--gamma", "-1"],
            "is not a positive number, `scale` or `F*scale`",
        ),
        (
            vec!["fit", p(&data), "--validation", "1.5"],
            "validation_fraction",
        ),
        (
            vec!["cluster", p(&data), "-k", "100"],
            "cannot form 100 clusters",
        ),
        (
            vec!["cluster", p(&data), "-k", "3", "--method", "foo"],
            "unknown method `foo`",
        ),
        (
            vec!["cluster", p(&data), "-k", "3", "--constraints", p(&bad)],
            "bad2.svm:1",
        ),
        (
            vec!["--threads", "0", "data", "list"],
            "--threads: must be at least 1",
        ),
        (
            vec!["plot", p(&data), "-o", "/nonexistent-gimc/x.svg"],
            "no `iteration` column",
        ),
        (
            vec!["eval", p(&empty), p(&data)],
            "no predictions in the file",
        ),
        (
            vec!["eval", p(&short), p(&data)],
            "short.csv:1: `a` is not a number",
        ),
        (
            vec!["constraints", p(&nolabel), "-o", "/nonexistent-gimc/c.txt"],
            "constraints are sampled from classes",
        ),
    ];
    for (args, needle) in cases {
        let mut full = vec!["-q"];
        full.extend(args.iter());
        let o = gimc(&full);
        assert_one_line_error(&o, needle, &args.join(" "));
    }
    // eval with the wrong number of rows
    let pred = temp_file("three.pred", b"0\n1\n2\n");
    let o = gimc(&["eval", p(&pred), p(&data)]);
    assert_one_line_error(&o, "3 prediction rows, but the truth", "eval rows");
}

#[test]
fn trace_then_plot_writes_an_svg() {
    let data = small_multiclass();
    let model = temp_file("traced.gimc", b"");
    let trace = temp_file("trace.csv", b"");
    let o = gimc(&[
        "-q",
        "fit",
        "--method",
        "gimc-lff",
        p(&data),
        "--m",
        "10",
        "--gamma",
        "0.5",
        "--iters",
        "2",
        "-o",
        p(&model),
        "--trace",
        p(&trace),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(
        t.starts_with("iteration,objective,step,seconds,train_metric,validation_metric\n0,"),
        "{t}"
    );
    let svg = temp_file("trace.svg", b"");
    let o = gimc(&["-q", "plot", p(&trace), "-o", p(&svg)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.contains("<polyline") && s.contains("objective"));
    // JSON trace too
    let jtrace = temp_file("trace.json", b"");
    let o = gimc(&[
        "-q",
        "fit",
        "--method",
        "gimc-lff",
        p(&data),
        "--m",
        "10",
        "--gamma",
        "0.5",
        "--iters",
        "2",
        "-o",
        p(&model),
        "--trace",
        p(&jtrace),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&jtrace).unwrap()).unwrap();
    assert!(v[0]["objective"].as_f64().unwrap().is_finite());
    let o = gimc(&[
        "-q",
        "plot",
        p(&jtrace),
        "-o",
        p(&svg),
        "--y",
        "validation_metric",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn constraints_then_semisupervised_and_kmeans_clustering() {
    let data = small_multiclass();
    let cons = temp_file("small.cons", b"");
    let o = gimc(&[
        "-q",
        "--seed",
        "3",
        "constraints",
        p(&data),
        "-n",
        "300",
        "-o",
        p(&cons),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&cons).unwrap();
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 300);
    let out = temp_file("small.clusters", b"");
    let o = gimc(&[
        "--json",
        "cluster",
        p(&data),
        "-k",
        "3",
        "--constraints",
        p(&cons),
        "--m",
        "20",
        "--gamma",
        "0.5",
        "--iters",
        "2",
        "--lambda",
        "0.1",
        "-o",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let acc = v["metrics"]["clustering_accuracy"].as_f64().unwrap();
    assert!(acc >= 0.8, "semi-supervised clustering accuracy {acc}");
    let o = gimc(&["--json", "eval", "--clusters", p(&out), p(&data)]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["metrics"]["clustering_accuracy"].as_f64().unwrap(), acc);
    let o = gimc(&[
        "--json",
        "cluster",
        p(&data),
        "-k",
        "3",
        "--method",
        "kmeans",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["assignments"].as_array().unwrap().len(), 60);
    assert!(v["metrics"]["inertia"].as_f64().unwrap() >= 0.0);
}

/// End to end on emotions (a multi-label ARFF pair): P@1 of GIMC-LFF with small m above 0.55
/// (a random ranking of its 6 labels gives about 0.31; the full run reaches 0.67).
#[test]
fn emotions_fit_predict_eval_reaches_a_p_at_1_floor() {
    let Some(dir) = data_dir("emotions") else {
        return;
    };
    let dir = p(&dir).to_string();
    let model = temp_file("emotions.gimc", b"");
    let pred = temp_file("emotions.pred", b"");
    let o = gimc(&[
        "-q",
        "--data-dir",
        &dir,
        "fit",
        "emotions",
        "--m",
        "50",
        "--gamma",
        "0.001,0.01",
        "--lambda",
        "0.1",
        "--iters",
        "2",
        "-o",
        p(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gimc(&[
        "-q",
        "--data-dir",
        &dir,
        "predict",
        "emotions",
        "-m",
        p(&model),
        "-o",
        p(&pred),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gimc(&["--json", "--data-dir", &dir, "eval", p(&pred), "emotions"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p1 = v["metrics"]["P@1"].as_f64().unwrap();
    let p5 = v["metrics"]["P@5"].as_f64().unwrap();
    assert!(p1 > 0.55, "P@1 = {p1}");
    assert!(p5 < p1, "P@5 = {p5}, P@1 = {p1}");
}

/// Feature row i of side s (3 deterministic values in [−1, 1]) for the side-information tests.
fn side_feature(i: usize, s: usize) -> [f64; 3] {
    let h = |k: usize| (((i * (7 + 2 * k) + s * 13 + k * 5) % 17) as f64) / 8.5 - 1.0;
    [h(0), h(1), h(2)]
}

/// A CSV of `count` rows of [`side_feature`] for side `s`.
fn side_features(name: &str, count: usize, s: usize) -> std::path::PathBuf {
    let text: String = (0..count)
        .map(|i| {
            let f = side_feature(i, s);
            format!("{},{},{}\n", f[0], f[1], f[2])
        })
        .collect();
    temp_file(name, text.as_bytes())
}

/// The bilinear matrix a₀b₀ + a₁b₁ of [`side_feature`] rows: `tenths`/10 of its entries
/// observed (`i j value` lines), a fixed part of the rest asked for (`i j` lines), and the
/// asked entries' true values.
fn side_entries(n: usize, m: usize, tenths: usize) -> (String, String, Vec<f64>) {
    let value = |i: usize, j: usize| {
        let (a, b) = (side_feature(i, 0), side_feature(j, 1));
        a[0] * b[0] + a[1] * b[1]
    };
    let (mut obs, mut ask, mut truth) = (String::new(), String::new(), Vec::new());
    for i in 0..n {
        for j in 0..m {
            if (i * 13 + j * 7) % 10 < tenths {
                obs.push_str(&format!("{i} {j} {}\n", value(i, j)));
            } else if (i + 2 * j) % 5 == 0 {
                ask.push_str(&format!("{i} {j}\n"));
                truth.push(value(i, j));
            }
        }
    }
    (obs, ask, truth)
}

/// MC-ALS recovers held-out entries of an exactly rank-2 matrix; bad entry files fail cleanly.
#[test]
fn complete_recovers_a_low_rank_matrix() {
    let (n, m) = (30usize, 25usize);
    let u = |i: usize| {
        [
            ((i * 7) % 11) as f64 / 11.0 - 0.5,
            ((i * 3) % 5) as f64 / 5.0,
        ]
    };
    let v = |j: usize| [((j * 5) % 7) as f64 / 7.0, ((j * 2) % 9) as f64 / 9.0 - 0.3];
    let value = |i: usize, j: usize| u(i)[0] * v(j)[0] + u(i)[1] * v(j)[1];
    let (mut obs, mut ask, mut truth) = (String::new(), String::new(), Vec::new());
    for i in 0..n {
        for j in 0..m {
            if (i * 31 + j * 17) % 10 < 6 {
                obs.push_str(&format!("{i} {j} {}\n", value(i, j)));
            } else if (i + j) % 3 == 0 {
                ask.push_str(&format!("{i} {j}\n"));
                truth.push(value(i, j));
            }
        }
    }
    let obs = temp_file("lr.triplets", obs.as_bytes());
    let ask = temp_file("lr.entries", ask.as_bytes());
    let o = gimc(&[
        "-q",
        "complete",
        p(&obs),
        "--entries",
        p(&ask),
        "--rank",
        "2",
        "--lambda",
        "0.001",
        "--iters",
        "50",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let pred: Vec<f64> = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(pred.len(), truth.len());
    let rmse = (pred
        .iter()
        .zip(&truth)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        / truth.len() as f64)
        .sqrt();
    assert!(rmse < 0.05, "held-out RMSE {rmse}");
    let bad = temp_file("bad.entries", b"1 x\n");
    let o = gimc(&["complete", p(&obs), "--entries", p(&bad)]);
    assert_one_line_error(
        &o,
        "bad.entries:1: `x` is not an index",
        "complete bad entries",
    );
    let o = gimc(&["complete", p(&obs), "--method", "nuclear"]);
    assert_one_line_error(&o, "unknown method `nuclear`", "complete method");
}

/// Nuclear-norm MC by FPC with a λ grid chosen on held-out entries, nuclear-norm IMC with side
/// features (both recover held-out entries of a low-rank matrix), PU-IMC end to end;
/// unsupported combinations fail with one line.
#[test]
fn complete_nuclear_and_pu_methods() {
    let (n, m) = (40usize, 30usize);
    let (x, y) = (side_features("nx.csv", n, 0), side_features("ny.csv", m, 1));
    let (obs, ask, truth) = side_entries(n, m, 5);
    let obs = temp_file("nuc.triplets", obs.as_bytes());
    let nuc_model = temp_file("nuc.gimc", b"");
    let mc_model = temp_file("mc.gimc", b"");
    let ask = temp_file("nuc.entries", ask.as_bytes());
    let rmse_of = |o: &std::process::Output| -> (f64, serde_json::Value) {
        assert!(o.status.success(), "{}", stderr(o));
        let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
        let pred: Vec<f64> = v["predictions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t[2].as_f64().unwrap())
            .collect();
        assert_eq!(pred.len(), truth.len());
        let se: f64 = pred.iter().zip(&truth).map(|(a, b)| (a - b).powi(2)).sum();
        ((se / truth.len() as f64).sqrt(), v)
    };
    let scale = (truth.iter().map(|t| t * t).sum::<f64>() / truth.len() as f64).sqrt();
    // mc-nuclear: the grid's smallest μ fits best here; the held-out RMSE of each is reported
    let o = gimc(&[
        "-q",
        "--json",
        "complete",
        p(&obs),
        "--entries",
        p(&ask),
        "--method",
        "mc-nuclear",
        "--lambda",
        "1,0.01,0.0001",
        "--save",
        p(&mc_model),
    ]);
    let (rmse, v) = rmse_of(&o);
    // plain completion's model file: `predict --pairs` without features, the same values
    let o = gimc(&["predict", "--pairs", p(&ask), "-m", p(&mc_model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let by_index: Vec<f64> = stdout(&o)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    let fitted = v["predictions"].as_array().unwrap();
    assert_eq!(by_index.len(), fitted.len());
    for (a, t) in by_index.iter().zip(fitted) {
        let b = t[2].as_f64().unwrap();
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
    }
    assert_eq!(v["holdout_rmse"].as_array().unwrap().len(), 3);
    let chosen = v["lambda"].as_f64().unwrap();
    let best = v["holdout_rmse"]
        .as_array()
        .unwrap()
        .iter()
        .min_by(|a, b| {
            a["rmse"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["rmse"].as_f64().unwrap())
        })
        .unwrap()["lambda"]
        .as_f64()
        .unwrap();
    assert_eq!(chosen, best);
    assert!(
        rmse < 0.5 * scale,
        "mc-nuclear held-out RMSE {rmse} (scale {scale})"
    );
    // imc-nuclear with both feature files: exact low-rank bilinear model, near-exact recovery
    let o = gimc(&[
        "-q",
        "--json",
        "complete",
        p(&obs),
        "--entries",
        p(&ask),
        "--method",
        "imc-nuclear",
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "--lambda",
        "0.0001",
        "--save",
        p(&nuc_model),
    ]);
    let (rmse, v) = rmse_of(&o);
    assert!(
        rmse < 0.05 * scale,
        "imc-nuclear held-out RMSE {rmse} (scale {scale})"
    );
    // the saved model (identity maps, W and H) predicts the same entries in a later process
    let o = gimc(&[
        "predict",
        "--pairs",
        p(&ask),
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "-m",
        p(&nuc_model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again: Vec<f64> = stdout(&o)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    for (a, t) in again.iter().zip(v["predictions"].as_array().unwrap()) {
        let b = t[2].as_f64().unwrap();
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
    }
    // a feature model without feature files, and a model file with one side's features only
    let o = gimc(&["predict", "--pairs", p(&ask), "-m", p(&nuc_model)]);
    assert_one_line_error(&o, "maps feature rows", "feature model without features");
    let o = gimc(&[
        "complete",
        p(&obs),
        "--method",
        "imc",
        "--row-features",
        p(&x),
        "--save",
        p(&nuc_model),
    ]);
    assert_one_line_error(&o, "--save: a model file needs both", "save with one side");
    // PU-IMC runs and reports; the same features
    let o = gimc(&[
        "-q",
        "--json",
        "complete",
        p(&obs),
        "--entries",
        p(&ask),
        "--method",
        "pu-imc",
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "--rank",
        "2",
        "--rho",
        "0.3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // PU-IMC's grids: (λ, ρ) chosen by held-out AUC, every pair reported
    let o = gimc(&[
        "-q",
        "--json",
        "complete",
        p(&obs),
        "--method",
        "pu-imc",
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "--rank",
        "2",
        "--lambda",
        "0.1,1",
        "--rho",
        "0.2,0.6",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let scores = v["holdout_auc"].as_array().unwrap();
    assert_eq!(scores.len(), 4);
    let best = scores
        .iter()
        .max_by(|a, b| {
            a["auc"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["auc"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(v["rho"].as_f64(), best["rho"].as_f64());
    assert_eq!(v["lambda"].as_f64(), best["lambda"].as_f64());
    let o = gimc(&["complete", p(&obs), "--method", "imc", "--rho", "0.2,0.6"]);
    assert_one_line_error(&o, "--rho is a grid of pu-imc only", "rho grid elsewhere");
    let o = gimc(&["complete", p(&obs), "--method", "imc-nuclear"]);
    assert_one_line_error(&o, "needs --row-features", "imc-nuclear without features");
    let o = gimc(&[
        "complete",
        p(&obs),
        "--method",
        "mc-nuclear",
        "--row-features",
        p(&x),
    ]);
    assert_one_line_error(&o, "use --method imc-nuclear", "mc-nuclear with features");
    let o = gimc(&["complete", p(&obs), "--method", "pu-imc", "--rho", "1"]);
    assert_one_line_error(&o, "--rho must be in [0, 1)", "pu-imc rho");
}

/// General completion with features on both sides: `gimc complete` fits and saves, and a
/// later process predicts held-out pairs; a label model is refused for pairs and vice versa.
/// `gimc fit --triplets` is refused, naming the `gimc complete` command.
#[test]
fn completion_with_side_features_fit_then_predict_pairs() {
    let (n, m) = (40usize, 30usize);
    let (x, y) = (side_features("X.csv", n, 0), side_features("Y.csv", m, 1));
    let (obs, ask, truth) = side_entries(n, m, 5);
    let obs = temp_file("side.triplets", obs.as_bytes());
    let ask = temp_file("side.pairs", ask.as_bytes());
    let model = temp_file("side.gimc", b"");
    let fitted = temp_file("side.fitted", b"");
    let setting = [
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "--method",
        "imc-rff",
        "--m",
        "60",
        "--gamma",
        "0.2",
        "--lambda",
        "0.001",
        "--rank",
        "4",
    ];
    let mut args = vec!["-q", "complete", p(&obs)];
    args.extend_from_slice(&setting);
    args.extend_from_slice(&["--save", p(&model), "-o", p(&fitted)]);
    let o = gimc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut args = vec!["fit", "--triplets", p(&obs)];
    args.extend_from_slice(&setting);
    args.extend_from_slice(&["-o", p(&model)]);
    let o = gimc(&args);
    assert_one_line_error(
        &o,
        &format!(
            "--triplets: general completion is `gimc complete`: run `gimc complete {} \
             --row-features {} --col-features {} --method imc-rff --m 60 --gamma 0.2 \
             --lambda 0.001 --rank 4 --iters 10 --save {}`",
            p(&obs),
            p(&x),
            p(&y),
            p(&model)
        ),
        "fit --triplets",
    );
    let o = gimc(&["fit", p(&obs), "--row-features", p(&x), "-o", p(&model)]);
    assert_one_line_error(
        &o,
        "--row-features: general completion is `gimc complete`",
        "fit --row-features",
    );
    let o = gimc(&[
        "-q",
        "predict",
        "--pairs",
        p(&ask),
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "-m",
        p(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pred: Vec<f64> = stdout(&o)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(pred.len(), truth.len());
    let mse = pred
        .iter()
        .zip(&truth)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>();
    let var = truth.iter().map(|b| b * b).sum::<f64>();
    assert!(mse < 0.2 * var, "held-out relative error {}", mse / var);
    let o = gimc(&["predict", p(&x), "-m", p(&model)]);
    assert_one_line_error(
        &o,
        "holds a \"completion\" model",
        "label predict with a completion model",
    );
}

/// A multi-class LIBSVM set whose two informative features live on very different scales
/// (feature 1 around 1000, feature 2 around 0.001) next to a noise feature of scale 100:
/// separable after standardisation, hopeless for an RBF map with γ = 1 on the raw values.
fn badly_scaled_multiclass() -> PathBuf {
    let mut s = String::new();
    for i in 0..90 {
        let c = i % 3;
        let jitter = ((i * 37) % 11) as f64 / 11.0 - 0.5;
        let f1 = 1000.0 * (1.0 + (c as f64) + 0.2 * jitter);
        let f2 = 0.001 * (if c == 1 { 2.0 } else { 1.0 } + 0.1 * jitter);
        let f3 = 100.0 * (((i * 53) % 17) as f64 / 17.0);
        s.push_str(&format!("{} 1:{f1} 2:{f2} 3:{f3}\n", c + 1));
    }
    temp_file("scaled3.svm", s.as_bytes())
}

/// `gimc --json fit DATA ARGS… -o MODEL`, then `predict` on DATA and `eval` against it: the
/// training accuracy, the JSON that `fit` printed and the model file (named after `tag`).
fn fit_predict_eval(data: &Path, tag: &str, args: &[&str]) -> (f64, serde_json::Value, PathBuf) {
    let model = temp_file(&format!("{tag}.gimc"), b"");
    let pred = temp_file(&format!("{tag}.pred"), b"");
    let mut all = vec!["--json", "fit", p(data)];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", p(&model)]);
    let o = gimc(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let fit: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let o = gimc(&["-q", "predict", p(data), "-m", p(&model), "-o", p(&pred)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gimc(&["--json", "eval", "--pred", p(&pred), "--truth", p(data)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    (v["metrics"]["accuracy"].as_f64().unwrap(), fit, model)
}

/// Fits the badly scaled set with `--standardize mode`, predicts it and returns the training
/// accuracy from `gimc eval` and the `standardized` field of `fit --json`.
fn fit_predict_accuracy(mode: &str, method: &str) -> (f64, serde_json::Value) {
    let args = [
        "--method",
        method,
        "--m",
        "30",
        "--gamma",
        "1",
        "--lambda",
        "0.01",
        "--iters",
        "2",
        "--standardize",
        mode,
    ];
    let (acc, fit, _) = fit_predict_eval(
        &badly_scaled_multiclass(),
        &format!("scaled-{mode}-{method}"),
        &args,
    );
    (acc, fit["standardized"].clone())
}

#[test]
fn standardisation_is_stored_in_the_model_and_applied_by_predict() {
    let (on, st_on) = fit_predict_accuracy("on", "gimc-lff");
    let (auto, st_auto) = fit_predict_accuracy("auto", "gimc-lff");
    let (off, st_off) = fit_predict_accuracy("off", "gimc-lff");
    // a LIBSVM file with every entry stored counts as dense: auto = on, centred and scaled
    assert_eq!(st_on, "center-scale");
    assert_eq!(st_auto, "center-scale");
    assert!(st_off.is_null());
    assert_eq!(on, auto);
    // predict applies the stored transform: without it the standardised model would score
    // the raw rows (values ~1000) at chance level
    assert!(on >= 0.95, "standardised training accuracy {on}");
    assert!(off < on, "raw {off} vs standardised {on}");
    // a genuinely sparse file: auto leaves it alone, on only scales it
    let sparse = temp_file(
        "sparse3.svm",
        (0..60)
            .map(|i| format!("{} {}:{}\n", i % 3 + 1, i % 3 + 1 + 3 * (i % 2), 1 + i % 5))
            .collect::<String>()
            .as_bytes(),
    );
    let model = temp_file("sparse3.gimc", b"");
    for (mode, want) in [("auto", serde_json::Value::Null), ("on", "scale".into())] {
        let o = gimc(&[
            "--json",
            "fit",
            "--method",
            "gimc-lff",
            p(&sparse),
            "--m",
            "10",
            "--gamma",
            "0.5",
            "--iters",
            "1",
            "--standardize",
            mode,
            "-o",
            p(&model),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["standardized"], want, "--standardize {mode}");
        let o = gimc(&["-q", "predict", p(&sparse), "-m", p(&model)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stdout(&o).lines().filter(|l| !l.starts_with('#')).count(),
            60
        );
    }
    // a bad mode is a one-line clap error
    let o = gimc(&[
        "fit",
        "--method",
        "gimc-lff",
        p(&sparse),
        "--standardize",
        "maybe",
    ]);
    assert_one_line_error(&o, "--standardize", "bad --standardize");
}

/// A multi-class LIBSVM set whose class is the direction of a row and whose norm varies from
/// 1 to 1,000 at random: separable for an RBF map on unit rows, not on the raw rows.
fn direction_classes() -> PathBuf {
    let mut s = String::new();
    for i in 0..90 {
        let c = i % 3;
        let scale = 1.0 + 999.0 * (((i * 41) % 29) as f64 / 28.0);
        let mut x = [0.2, 0.2, 0.2];
        x[c] = 1.0;
        x[(c + 1) % 3] += 0.1 * (((i * 13) % 7) as f64 / 7.0 - 0.5);
        s.push_str(&format!(
            "{} 1:{} 2:{} 3:{}\n",
            c + 1,
            scale * x[0],
            scale * x[1],
            scale * x[2]
        ));
    }
    temp_file("directions3.svm", s.as_bytes())
}

#[test]
fn row_normalisation_is_stored_in_the_model_and_applied_by_predict() {
    let data = direction_classes();
    let accuracy = |normalize: &str| {
        let args = [
            "--method",
            "gimc-lff",
            "--m",
            "30",
            "--gamma",
            "2",
            "--lambda",
            "0.01",
            "--iters",
            "2",
            "--standardize",
            "off",
            "--normalize",
            normalize,
        ];
        let (acc, fit, model) = fit_predict_eval(&data, &format!("dir-{normalize}"), &args);
        let meta = gimc::persist::read_model_meta(&model).unwrap();
        (acc, fit["normalized"].clone(), meta)
    };
    let (l2, field, meta) = accuracy("l2");
    assert_eq!(field, "l2");
    assert_eq!((meta.normalize.as_deref(), meta.version), (Some("l2"), 4));
    // predict normalises the raw rows as fit did: without it, rows of norm up to 1,000 would
    // sit far outside every random feature's range
    assert!(l2 >= 0.95, "training accuracy on unit rows {l2}");
    let (raw, field, meta) = accuracy("none");
    assert!(field.is_null() && meta.normalize.is_none() && meta.version == 1);
    assert!(raw < l2, "raw {raw} vs unit rows {l2}");
    let o = gimc(&["fit", "--method", "gimc-lff", p(&data), "--normalize", "l1"]);
    assert_one_line_error(&o, "--normalize", "bad --normalize");
}

#[test]
fn gamma_scale_is_computed_on_the_rows_the_map_sees() {
    // 6 rows, d = 2: entries 1..=12 (variance 143/12 over all entries)
    let rows: String = (0..6)
        .map(|i| format!("{} 1:{} 2:{}\n", i % 2 + 1, 2 * i + 1, 2 * i + 2))
        .collect();
    let data = temp_file("gscale.svm", rows.as_bytes());
    let gamma_of = |args: &[&str]| {
        let model = temp_file("gscale.gimc", b"");
        let mut all = vec![
            "-q",
            "fit",
            "--method",
            "gimc-lff",
            p(&data),
            "--m",
            "8",
            "--iters",
            "0",
            "-o",
            p(&model),
        ];
        all.extend_from_slice(args);
        let o = gimc(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        gimc::persist::read_model_meta(&model)
            .unwrap()
            .hyper_parameters["gamma"]
    };
    let raw = 1.0 / (2.0 * 143.0 / 12.0);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12 * b;
    // the default is the scale rule, on the raw rows when nothing transforms them
    assert!(close(gamma_of(&["--standardize", "off"]), raw));
    assert!(close(
        gamma_of(&["--standardize", "off", "--gamma", "0.5*scale"]),
        raw / 2.0
    ));
    // standardised columns have mean 0 and variance 1, so the rule gives 1 / d
    assert!(close(gamma_of(&["--standardize", "on"]), 0.5));
    assert_eq!(gamma_of(&["--gamma", "0.25"]), 0.25);
    let o = gimc(&["fit", "--method", "gimc-lff", p(&data), "--gamma", "scales"]);
    assert_one_line_error(&o, "--gamma", "bad --gamma");
}

#[test]
fn random_phase_fourier_methods_fit_and_predict() {
    for method in ["imc-rff-phase", "gimc-lff-phase"] {
        let (acc, _) = fit_predict_accuracy("auto", method);
        assert!(acc >= 0.9, "{method}: training accuracy {acc}");
    }
    let data = small_multiclass();
    let model = temp_file("phase.gimc", b"");
    let o = gimc(&[
        "fit",
        p(&data),
        "--method",
        "gimc-lff-phase",
        "--m",
        "10",
        "--gamma",
        "0.5",
        "--iters",
        "2",
        "-o",
        p(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("chosen: lff-phase m=10"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn predict_top_k_zero_and_eval_argument_forms() {
    let model = temp_file("topk.gimc", b"");
    fit_small(&model);
    let data = small_multiclass();
    for bad in ["0", "-1", "x"] {
        let o = gimc(&["predict", p(&data), "-m", p(&model), "--top-k", bad]);
        assert_one_line_error(&o, "--top-k", &format!("--top-k {bad}"));
    }
    let o = gimc(&["predict", p(&data), "-m", p(&model), "--top-k", "0"]);
    assert!(stderr(&o).contains("must be at least 1"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    // the same evaluation by positional arguments, named flags, or a mix of both
    let pred = temp_file("topk.pred", b"");
    let o = gimc(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs: Vec<Vec<&str>> = vec![
        vec!["eval", p(&pred), p(&data)],
        vec!["eval", "--pred", p(&pred), "--truth", p(&data)],
        vec!["eval", "--truth", p(&data), "--pred", p(&pred)],
        vec!["eval", "--pred", p(&pred), p(&data)],
        vec!["eval", p(&pred), "--truth", p(&data)],
    ];
    let outs: Vec<String> = runs
        .iter()
        .map(|args| {
            let o = gimc(args);
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            stdout(&o)
        })
        .collect();
    assert!(outs[0].contains("accuracy: "), "{}", outs[0]);
    assert!(outs.iter().all(|o| *o == outs[0]), "{outs:?}");
    // missing or surplus files, and clap errors, are one line with exit status 1
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["eval"], "missing the prediction file"),
        (vec!["eval", p(&pred)], "missing the truth"),
        (vec!["eval", "--pred", p(&pred)], "missing the truth"),
        (
            vec!["eval", "--pred", p(&pred), "--truth", p(&data), p(&data)],
            "unexpected argument",
        ),
        (
            vec!["eval", p(&pred), p(&data), p(&data)],
            "unexpected value",
        ),
        (
            vec!["predict", p(&data), "--no-such-flag"],
            "--no-such-flag",
        ),
    ];
    for (args, needle) in cases {
        let o = gimc(&args);
        assert_one_line_error(&o, needle, &args.join(" "));
    }
}

#[test]
fn progress_never_reaches_stdout_or_a_non_terminal_stderr() {
    // stderr is a pipe here: no bar or spinner frames, only the informational lines
    let data = small_multiclass();
    let model = temp_file("progress.gimc", b"");
    let o = gimc(&[
        "fit",
        "--method",
        "gimc-lff",
        p(&data),
        "--m",
        "10",
        "--gamma",
        "0.5",
        "--lambda",
        "0.1,1",
        "--iters",
        "3",
        "-o",
        p(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    for s in [&out, &err] {
        assert!(!s.contains('\r') && !s.contains('\u{1b}'), "{s:?}");
    }
    assert!(
        err.starts_with(
            "small3.svm: 3 classes from the first token of each row\nfitting gimc-lff on small3"
        ),
        "{err}"
    );
    assert!(out.starts_with("fitted gimc-lff (multi-class)"), "{out}");
    let o = gimc(&[
        "-q",
        "fit",
        "--method",
        "gimc-lff",
        p(&data),
        "--m",
        "10",
        "--gamma",
        "0.5",
        "--iters",
        "1",
        "-o",
        p(&model),
    ]);
    assert!(o.status.success());
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn cluster_standardises_dense_features_by_default() {
    // Two classes told apart only by a feature of scale 1e-3, beside a uniform noise feature of
    // scale 1e3: on the raw scales k-means splits the noise (accuracy near 0.5); standardised,
    // it finds the classes.
    let mut s = String::new();
    for i in 0..200 {
        let c = i % 2;
        let jitter = ((i * 37) % 11) as f64 / 11.0 - 0.5;
        let f1 = 0.001 * (10.0 * c as f64 + jitter);
        let f2 = 1000.0 * (((i * 53) % 97) as f64 / 97.0);
        s.push_str(&format!("{} 1:{f1} 2:{f2}\n", c + 1));
    }
    let data = temp_file("cluster-scaled.svm", s.as_bytes());
    let accuracy = |mode: &str| -> (f64, String) {
        let o = gimc(&[
            "--json",
            "cluster",
            p(&data),
            "-k",
            "2",
            "--method",
            "kmeans",
            "--standardize",
            mode,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        (
            v["metrics"]["clustering_accuracy"].as_f64().unwrap(),
            stderr(&o),
        )
    };
    let (auto, auto_err) = accuracy("auto");
    let (off, off_err) = accuracy("off");
    assert!(auto >= 0.99, "standardised k-means accuracy {auto}");
    assert!(off < 0.8, "raw k-means accuracy {off}");
    assert!(auto_err.contains("features standardised"));
    assert!(!off_err.contains("features standardised"));
}

/// `gimc transduce` on a CSV with missing feature cells and unlabelled rows: the unlabelled
/// rows of two well-separated classes are predicted (low-rank features: the class shifts every
/// feature), the imputed matrix keeps the observed cells, and a file without unlabelled rows
/// is refused with one line.
#[test]
fn transduce_predicts_unlabelled_rows_and_imputes_missing_cells() {
    let (n, d) = (120usize, 8usize);
    let value = |i: usize, j: usize| {
        let class = (i % 2) as f64 * 2.0 - 1.0;
        let wobble = (((i * 7 + j * 5) % 11) as f64 / 11.0 - 0.5) * 0.2;
        class * (1.0 + 0.1 * j as f64) + wobble
    };
    let mut csv = (0..d).map(|j| format!("f{j},")).collect::<String>() + "class\n";
    let mut hidden = Vec::new();
    for i in 0..n {
        for j in 0..d {
            if (i * 13 + j * 7) % 5 == 0 {
                csv.push(','); // a missing cell
            } else {
                csv.push_str(&format!("{},", value(i, j)));
            }
        }
        if i % 4 == 1 {
            hidden.push(i); // unlabelled
        } else {
            csv.push_str(if i % 2 == 0 { "neg" } else { "pos" });
        }
        csv.push('\n');
    }
    let data = temp_file("td.csv", csv.as_bytes());
    let imputed = temp_file("td-imputed.csv", b"");
    let o = gimc(&[
        "-q",
        "--json",
        "--label-column",
        "last",
        "transduce",
        p(&data),
        "--folds",
        "3",
        "--lambda",
        "0.1,1",
        "--mu-count",
        "4",
        "--impute-out",
        p(&imputed),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows: Vec<usize> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(rows, hidden);
    let wrong = rows
        .iter()
        .zip(v["predicted"].as_array().unwrap())
        .filter(|(i, p)| p[0].as_str().unwrap() != if *i % 2 == 0 { "neg" } else { "pos" })
        .count();
    assert!(
        wrong <= 1,
        "{wrong} of {} unlabelled rows wrong",
        rows.len()
    );
    let text = std::fs::read_to_string(&imputed).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), n + 1);
    for (i, line) in lines[1..].iter().enumerate() {
        let cells: Vec<f64> = line.split(',').map(|c| c.parse().unwrap()).collect();
        assert_eq!(cells.len(), d);
        for (j, &c) in cells.iter().enumerate() {
            if (i * 13 + j * 7) % 5 != 0 {
                assert_eq!(c, value(i, j), "observed cell ({i}, {j}) changed");
            } else {
                // a missing cell is imputed on the right side of zero (its class's sign)
                assert!(c * value(i, j) > 0.0, "cell ({i}, {j}) imputed as {c}");
            }
        }
    }
    // the imputation + SVM baselines run on the same file and predict the same rows
    for method in ["mean-svm", "zero-svm", "fpc-svm"] {
        let o = gimc(&[
            "-q",
            "--json",
            "--label-column",
            "last",
            "transduce",
            p(&data),
            "--method",
            method,
            "--folds",
            "3",
            "--mu-count",
            "4",
        ]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["method"], method);
        let wrong = hidden
            .iter()
            .zip(v["predicted"].as_array().unwrap())
            .filter(|(i, p)| p[0].as_str().unwrap() != if *i % 2 == 0 { "neg" } else { "pos" })
            .count();
        assert!(wrong <= 2, "{method}: {wrong} of {} wrong", hidden.len());
        assert_eq!(v["svm_c"].as_array().unwrap().len(), 2);
    }
    // `gimc eval --transduction` against the complete table
    let mut truth_csv = (0..d).map(|j| format!("f{j},")).collect::<String>() + "class\n";
    for i in 0..n {
        for j in 0..d {
            truth_csv.push_str(&format!("{},", value(i, j)));
        }
        truth_csv.push_str(if i % 2 == 0 { "neg\n" } else { "pos\n" });
    }
    let truth = temp_file("td-truth.csv", truth_csv.as_bytes());
    let pred = temp_file("td-pred.csv", b"");
    let o = gimc(&[
        "-q",
        "--label-column",
        "last",
        "transduce",
        p(&data),
        "--folds",
        "3",
        "--lambda",
        "0.1,1",
        "--mu-count",
        "4",
        "--impute-out",
        p(&imputed),
        "-o",
        p(&pred),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gimc(&[
        "--json",
        "--label-column",
        "last",
        "eval",
        "--transduction",
        p(&pred),
        p(&truth),
        "--input",
        p(&data),
        "--imputed",
        p(&imputed),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let err = v["label_error"].as_f64().unwrap();
    assert!(
        err <= 100.0 / hidden.len() as f64 + 1e-9,
        "label error {err} %"
    );
    let imp = v["relative_imputation_error"].as_f64().unwrap();
    assert!(imp > 0.0 && imp < 0.1, "relative imputation error {imp}");
    // a user's own missing-value token (`--missing`): the same table with -999 for the cells
    let with_token = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let (feats, class) = cells.split_at(d);
            let feats: Vec<&str> = feats
                .iter()
                .map(|c| if c.is_empty() { "-999" } else { c })
                .collect();
            format!("{},{}\n", feats.join(","), class.join(","))
        })
        .collect::<String>();
    let token_file = temp_file("td-token.csv", with_token.as_bytes());
    let token_imputed = temp_file("td-token-imputed.csv", b"");
    let o = gimc(&[
        "-q",
        "--json",
        "--label-column",
        "last",
        "transduce",
        p(&token_file),
        "--folds",
        "3",
        "--lambda",
        "0.1,1",
        "--mu-count",
        "4",
        "--missing",
        "-999",
        "--impute-out",
        p(&token_imputed),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&token_imputed).unwrap(),
        std::fs::read_to_string(&imputed).unwrap(),
        "the -999 cells are imputed as the empty ones are"
    );
    // the memory pre-flight refuses before any work, naming both figures and what to lower
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_gimc"))
        .args(["--label-column", "last", "transduce", p(&data)])
        .env("GIMC_MEMORY_LIMIT", "1M")
        .output()
        .unwrap();
    assert_one_line_error(
        &o,
        "lower --folds or the λ grid",
        "transduce memory pre-flight",
    );
    assert!(stderr(&o).contains("1.0 MiB available"), "{}", stderr(&o));
    let full = temp_file("td-full.csv", b"a,class\n1,x\n2,y\n");
    let o = gimc(&["--label-column", "last", "transduce", p(&full)]);
    assert_one_line_error(
        &o,
        "nothing to predict",
        "transduce without unlabelled rows",
    );
}

/// `gimc transduce` on a multi-label ARFF whose missing labels are single `?` cells: the
/// partly labelled rows learn from their known cells, every row with a `?` is reported with
/// its label set completed at the missing cells only, and `gimc eval --transduction --input`
/// scores exactly those cells.
#[test]
fn transduce_predicts_single_missing_label_cells() {
    let (n, d) = (90usize, 6usize);
    // label 0 follows the sign of feature 0, label 1 that of feature 1 (low-rank features)
    let value = |i: usize, j: usize| {
        let s0 = if i.is_multiple_of(2) { 1.0 } else { -1.0 };
        let s1 = if i.is_multiple_of(3) { 1.0 } else { -1.0 };
        let wobble = (((i * 7 + j * 5) % 11) as f64 / 11.0 - 0.5) * 0.1;
        match j % 2 {
            0 => s0 * (1.0 + 0.1 * j as f64) + wobble,
            _ => s1 * (1.0 + 0.1 * j as f64) + wobble,
        }
    };
    let label = |i: usize, l: usize| {
        usize::from(if l == 0 {
            i.is_multiple_of(2)
        } else {
            i.is_multiple_of(3)
        })
    };
    let header = |name: &str| {
        let mut h = format!("@relation {name}\n");
        for j in 0..d {
            h.push_str(&format!("@attribute f{j} numeric\n"));
        }
        h + "@attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n"
    };
    let (mut masked, mut truth) = (header("ml"), header("ml"));
    let mut hidden: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        let feats: Vec<String> = (0..d).map(|j| format!("{}", value(i, j))).collect();
        let mut cells = Vec::new();
        for l in 0..2 {
            // every 5th row misses label 0, every 7th label 1 (row 0 and 35, 70: both)
            if (l == 0 && i.is_multiple_of(5)) || (l == 1 && i.is_multiple_of(7)) {
                hidden.push((i, l));
                cells.push("?".to_string());
            } else {
                cells.push(label(i, l).to_string());
            }
        }
        masked.push_str(&format!("{},{}\n", feats.join(","), cells.join(",")));
        truth.push_str(&format!(
            "{},{},{}\n",
            feats.join(","),
            label(i, 0),
            label(i, 1)
        ));
    }
    let xml = "<?xml version=\"1.0\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n<label name=\"l0\"></label>\n<label name=\"l1\"></label>\n</labels>\n";
    let data = temp_file("tdc.arff", masked.as_bytes());
    let _xml = temp_file("tdc.xml", xml.as_bytes());
    let truth_file = temp_file("tdc-truth.arff", truth.as_bytes());
    let _truth_xml = temp_file("tdc-truth.xml", xml.as_bytes());
    let pred = temp_file("tdc-pred.csv", b"");
    let args = [
        "transduce",
        p(&data),
        "--standardize",
        "false",
        "--folds",
        "3",
        "--lambda",
        "0.1,1",
        "--mu-count",
        "4",
    ];
    let o = gimc(&[&["-q", "--json"][..], &args[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows: Vec<usize> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap() as usize)
        .collect();
    let mut want: Vec<usize> = hidden.iter().map(|&(i, _)| i).collect();
    want.dedup();
    assert_eq!(rows, want, "every row with a `?` label, once");
    let (mut wrong, mut known_kept) = (0, 0);
    for (&i, predicted) in rows.iter().zip(v["predicted"].as_array().unwrap()) {
        let names: Vec<&str> = predicted
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        for l in 0..2 {
            let has = names.contains(&["l0", "l1"][l]);
            if hidden.contains(&(i, l)) {
                wrong += usize::from(has != (label(i, l) == 1));
            } else {
                // a known cell is reported as given
                assert_eq!(has, label(i, l) == 1, "row {i}, known label {l}");
                known_kept += 1;
            }
        }
    }
    assert!(known_kept > 0, "some rows are partly labelled");
    assert!(wrong <= 1, "{wrong} of {} hidden cells wrong", hidden.len());
    let o = gimc(&[&["-q"][..], &args[..], &["-o", p(&pred)][..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    // eval over the hidden cells only (with --input), or every label of the rows (without)
    let eval = |with_input: bool| -> f64 {
        let mut a = vec!["--json", "eval", "--transduction", p(&pred), p(&truth_file)];
        if with_input {
            a.extend(["--input", p(&data)]);
        }
        let o = gimc(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["label_error"].as_f64().unwrap()
    };
    let cells = eval(true);
    assert!(
        (cells - 100.0 * wrong as f64 / hidden.len() as f64).abs() < 1e-9,
        "eval --input counts the {} hidden cells: {cells} %",
        hidden.len()
    );
    // known cells are reported as given, so counting them too only dilutes the error
    let all = eval(false);
    assert!(
        (all - 100.0 * wrong as f64 / (2 * rows.len()) as f64).abs() < 1e-9,
        "{all} %"
    );
}

/// `gimc complete --method gimc-lff` with features on both sides: a (m, γ, λ) grid and the
/// iteration count are chosen on held-out entries, the saved model predicts the same values
/// through `gimc predict --pairs`, and held-out entries are recovered.
#[test]
fn complete_with_learned_maps_selects_on_held_out_entries_and_saves_the_model() {
    let (n, m) = (40usize, 30usize);
    let (x, y) = (side_features("gx.csv", n, 0), side_features("gy.csv", m, 1));
    let (obs, ask, truth) = side_entries(n, m, 6);
    let obs = temp_file("g.triplets", obs.as_bytes());
    let ask = temp_file("g.entries", ask.as_bytes());
    let model = temp_file("g.gimc", b"");
    let o = gimc(&[
        "-q",
        "--json",
        "complete",
        p(&obs),
        "--entries",
        p(&ask),
        "--method",
        "gimc-lff",
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "--rank",
        "2",
        "--m",
        "20,40",
        "--gamma",
        "0.5*scale,scale",
        "--lambda",
        "0.001",
        "--iters",
        "5",
        "--save",
        p(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["holdout"].as_array().unwrap().len(), 4);
    let pred: Vec<f64> = v["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[2].as_f64().unwrap())
        .collect();
    let se: f64 = pred.iter().zip(&truth).map(|(a, b)| (a - b).powi(2)).sum();
    let ss: f64 = truth.iter().map(|t| t * t).sum();
    assert!(
        (se / ss).sqrt() < 0.3,
        "held-out relative error {}",
        (se / ss).sqrt()
    );
    let o = gimc(&[
        "predict",
        "--pairs",
        p(&ask),
        "--row-features",
        p(&x),
        "--col-features",
        p(&y),
        "-m",
        p(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again: Vec<f64> = stdout(&o)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    // the same model, up to the last bit of the re-formed features
    assert_eq!(again.len(), pred.len());
    for (a, b) in again.iter().zip(&pred) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
    }
    let o = gimc(&[
        "complete",
        p(&obs),
        "--method",
        "gimc-lff",
        "--row-features",
        p(&x),
    ]);
    assert_one_line_error(
        &o,
        "needs --row-features and --col-features",
        "gimc without Y",
    );
}

/// `gimc complete --patience N` stops each grid point's map learning N iterations without a
/// better held-out error: every grid point's held-out error is the minimum over a prefix of
/// the trajectory the run without it follows (the same split and draws), so it is never lower
/// and its iteration count never later. It is refused for methods that learn no map.
#[test]
fn complete_patience_cuts_each_grid_points_trajectory() {
    let (n, m) = (40usize, 30usize);
    let (x, y) = (side_features("px.csv", n, 0), side_features("py.csv", m, 1));
    let (obs, _, _) = side_entries(n, m, 2);
    let obs = temp_file("p.triplets", obs.as_bytes());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "-q",
            "--json",
            "complete",
            p(&obs),
            "--method",
            "gimc-lff",
            "--row-features",
            p(&x),
            "--col-features",
            p(&y),
            "--rank",
            "4",
            "--m",
            "80,160",
            "--lambda",
            "0.00001,0.001",
            "--iters",
            "20",
        ];
        args.extend_from_slice(extra);
        let o = gimc(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["holdout"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["iterations"].as_u64().unwrap(),
                    s["holdout_relative_error"].as_f64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let whole = run(&[]);
    let cut = run(&["--patience", "1"]);
    assert_eq!(whole.len(), 4);
    assert_eq!(cut.len(), 4);
    // the fixture's trajectories wait for a new best somewhere, so the patience acts
    assert_ne!(whole, cut);
    for ((wi, we), (ci, ce)) in whole.iter().zip(&cut) {
        assert!(ci <= wi && ce >= we, "{whole:?} vs {cut:?}");
        // the best before the first iteration without a gain is kept exactly
        if ci == wi {
            assert_eq!(ce.to_bits(), we.to_bits());
        }
    }
    for (args, expect) in [
        (vec!["--patience", "0"], "patience"),
        (vec!["--method", "imc", "--patience", "2"], "--patience"),
    ] {
        let mut all = vec![
            "complete",
            p(&obs),
            "--row-features",
            p(&x),
            "--col-features",
            p(&y),
        ];
        if args[0] != "--method" {
            all.extend_from_slice(&["--method", "gimc-lff"]);
        }
        all.extend_from_slice(&args);
        let o = gimc(&all);
        assert_one_line_error(&o, expect, "bad --patience");
    }
}

#[test]
fn data_synth_xmc_writes_a_file_data_info_reads() {
    let out = temp_file("synth-eurlex.txt", b"");
    let o = gimc(&[
        "data",
        "synth",
        "xmc",
        "--preset",
        "eurlex-4k",
        "--rows",
        "2000",
        "-o",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains("2000 rows × 5000 features, 3993 labels"),
        "{line}"
    );
    // the file is an XMC text file of the declared shape
    let o = gimc(&["--json", "data", "info", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let s = &v[0];
    assert_eq!(s["rows"], 2000);
    assert_eq!(s["features"], 5000);
    assert_eq!(s["labels_or_classes"], 3993);
    assert_eq!(s["rows_without_label"], 0);
    let card = s["label_cardinality"].as_f64().unwrap();
    assert!((card / 5.31 - 1.0).abs() < 0.1, "label cardinality {card}");

    // JSON summary; the subcommand's --seed is the global one, flags override the preset
    let a = temp_file("synth-a.txt", b"");
    let b = temp_file("synth-b.txt", b"");
    let args = ["--preset", "eurlex-4k", "--rows", "50", "--labels", "100"];
    let o = gimc(
        &[
            &["--json", "--seed", "3", "data", "synth", "xmc"],
            &args[..],
            &["-o", p(&a)],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["rows"].as_u64(), v["labels"].as_u64()),
        (Some(50), Some(100))
    );
    assert_eq!(v["seed"], 3);
    assert_eq!(
        v["bytes"].as_u64(),
        Some(std::fs::metadata(&a).unwrap().len())
    );
    let o = gimc(
        &[
            &["data", "synth", "xmc", "--seed", "3"],
            &args[..],
            &["-o", p(&b)],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());

    // bad input: one-line errors naming the flag, and no file created
    let bad = std::env::temp_dir().join(format!("gimc-cli-it-{}-never.txt", std::process::id()));
    for (args, needle) in [
        (vec!["--preset", "amazon"], "--preset"),
        (vec!["--nnz-per-row", "0.5"], "--nnz-per-row"),
        (vec!["--labels-per-row", "2000"], "--labels-per-row"),
        (vec!["--rows", "0"], "--rows"),
        (vec!["--rows", "many"], "--rows"),
        (vec!["--feature-exponent", "-1"], "--feature-exponent"),
    ] {
        let o = gimc(&[&["data", "synth", "xmc"], &args[..], &["-o", p(&bad)]].concat());
        assert_one_line_error(&o, needle, &args.join(" "));
        assert!(!bad.exists(), "{args:?} created the output");
    }
    let o = gimc(&[
        "data",
        "synth",
        "xmc",
        "--rows",
        "10",
        "-o",
        "/nonexistent-dir/x.txt",
    ]);
    assert_one_line_error(&o, "/nonexistent-dir/x.txt", "unwritable output");
}

#[test]
fn fit_with_no_flags_runs_the_auto_search_and_reports_it() {
    let data = small_multiclass();
    let model = temp_file("auto.gimc", b"");
    let o = gimc(&["fit", p(&data), "-o", p(&model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.starts_with("fitted auto (multi-class)"), "{out}");
    assert!(
        out.contains("\nchosen: ") && out.contains("settings tried"),
        "{out}"
    );
    // column 4 holds 0.5 in every row
    assert!(err.contains("dropped 1 constant column"), "{err}");
    let o = gimc(&["--json", "fit", p(&data), "-o", p(&model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["method"], "auto");
    assert_eq!(v["dropped_constant_columns"], serde_json::json!([3]));
    let tried = v["tried"].as_array().unwrap();
    let best = tried
        .iter()
        .map(|t| t["validation_score"].as_f64().unwrap())
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(v["validation_score"].as_f64().unwrap(), best);
    // the model predicts the training file through its stored transform
    let pred = temp_file("auto.pred", b"");
    let o = gimc(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gimc(&["--json", "eval", p(&pred), p(&data)]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["metrics"]["accuracy"].as_f64().unwrap() > 0.9, "{v}");
    // flags of one family's fit are refused rather than ignored
    let trace = temp_file("auto-trace.csv", b"");
    let o = gimc(&["fit", p(&data), "-o", p(&model), "--trace", p(&trace)]);
    assert_one_line_error(
        &o,
        "--trace applies to one map family's fit",
        "auto --trace",
    );
    let o = gimc(&["fit", p(&data), "-o", p(&model), "--m", "5,6"]);
    assert_one_line_error(&o, "takes one value", "auto --m grid");
}

#[test]
fn fit_drops_genbase_identifier_column_and_says_so() {
    let Some(dir) = data_dir("genbase") else {
        return;
    };
    let train = dir.join("genbase").join("genbase-train.arff");
    let model = temp_file("genbase-auto.gimc", b"");
    let o = gimc(&["fit", p(&train), "-o", p(&model), "--iters", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("dropped 1 identifier column (one value per row): protein"),
        "{err}"
    );
    assert!(err.contains("constant columns"), "{err}");
}
