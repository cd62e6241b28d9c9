//! `gimc fit / predict / eval / cluster / constraints / plot`: one-line errors with a non-zero
//! exit on bad input, and end-to-end runs on small real sets.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::{
    data_dir, fit_small_model, gimc, gimc_ok, json_of, predict_eval_set, small_multiclass_text,
    stderr, stdout, temp_file,
};

/// Asserts a failure with exit status 1 and a single `gimc: error:` line containing `needle`,
/// the last line on stderr (informational lines, such as where the targets came from, may
/// come before it).
pub(crate) fn assert_one_line_error(o: &Output, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(last.starts_with("gimc: error:"), "{what}: {err}");
    assert_eq!(err.matches("gimc: error:").count(), 1, "{what}: {err}");
    assert!(last.contains(needle), "{what}: `{err}` lacks `{needle}`");
}

pub(crate) fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A small separable multi-class LIBSVM set (3 classes, 4 features, 60 rows).
fn small_multiclass() -> PathBuf {
    temp_file("small3.svm", small_multiclass_text().as_bytes())
}

/// Fits the small model into `{tag}.gimc` and writes its predictions of the small set into
/// `{tag}.pred`: the set, the model and the predictions.
fn fit_predict_small(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let data = small_multiclass();
    let model = temp_file(&format!("{tag}.gimc"), b"");
    fit_small_model(&data, &model, &[]);
    let pred = temp_file(&format!("{tag}.pred"), b"");
    gimc_ok(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    (data, model, pred)
}

/// `gimc [lead…] fit --method gimc-lff data -o model --m m --iters iters rest…`.
fn fit_lff(
    lead: &[&str],
    data: &Path,
    model: &Path,
    m: &str,
    iters: &str,
    rest: &[&str],
) -> Output {
    let mut args = lead.to_vec();
    args.extend(["fit", "--method", "gimc-lff", p(data), "-o", p(model)]);
    args.extend(["--m", m, "--iters", iters]);
    args.extend_from_slice(rest);
    gimc(&args)
}

#[test]
fn fit_predict_eval_on_a_small_libsvm_file_with_bad_models_and_inputs() {
    // predict + eval: a separable set is learned almost perfectly
    let (data, model, pred) = fit_predict_small("small");
    let o = gimc_ok(&["--json", "eval", p(&pred), p(&data)]);
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
    let out = stdout(&o);
    let head: Vec<&str> = out.lines().take(4).collect();
    assert_eq!(
        head[..3],
        [
            "# gimc predictions: kind=classes",
            r#"# gimc classes: ["1","2","3"]"#,
            "row,rank,label,score"
        ],
        "{out}"
    );
    assert!(head[3].starts_with("0,1,"), "{out}");

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
    let fit_traced = |trace: &Path| {
        let o = fit_lff(
            &["-q"],
            &data,
            &model,
            "10",
            "2",
            &["--gamma", "0.5", "--trace", p(trace)],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    };
    fit_traced(&trace);
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(
        t.starts_with("iteration,objective,step,seconds,train_metric,validation_metric\n0,"),
        "{t}"
    );
    let svg = temp_file("trace.svg", b"");
    gimc_ok(&["-q", "plot", p(&trace), "-o", p(&svg)]);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.contains("<polyline") && s.contains("objective"));
    // JSON trace too
    let jtrace = temp_file("trace.json", b"");
    fit_traced(&jtrace);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&jtrace).unwrap()).unwrap();
    assert!(v[0]["objective"].as_f64().unwrap().is_finite());
    gimc_ok(&[
        "-q",
        "plot",
        p(&jtrace),
        "-o",
        p(&svg),
        "--y",
        "validation_metric",
    ]);
}

#[test]
fn constraints_then_semisupervised_and_kmeans_clustering() {
    let data = small_multiclass();
    let cons = temp_file("small.cons", b"");
    gimc_ok(&[
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
    let text = std::fs::read_to_string(&cons).unwrap();
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 300);
    let out = temp_file("small.clusters", b"");
    // `gimc --json cluster DATA -k 3 FLAGS…`, asserting success: the report
    let cluster = |flags: &[&str]| {
        let mut args = vec!["--json", "cluster", p(&data), "-k", "3"];
        args.extend_from_slice(flags);
        json_of(&gimc(&args))
    };
    let v = cluster(&[
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
    let acc = v["metrics"]["clustering_accuracy"].as_f64().unwrap();
    assert!(acc >= 0.8, "semi-supervised clustering accuracy {acc}");
    let o = gimc(&["--json", "eval", "--clusters", p(&out), p(&data)]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["metrics"]["clustering_accuracy"].as_f64().unwrap(), acc);
    let v = cluster(&["--method", "kmeans"]);
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
    gimc_ok(&[
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
    let v = predict_eval_set(&dir, "emotions", &model, &pred);
    let p1 = v["metrics"]["P@1"].as_f64().unwrap();
    let p5 = v["metrics"]["P@5"].as_f64().unwrap();
    assert!(p1 > 0.55, "P@1 = {p1}");
    assert!(p5 < p1, "P@5 = {p5}, P@1 = {p1}");
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
    let o = gimc_ok(&all);
    let fit: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    gimc_ok(&["-q", "predict", p(data), "-m", p(&model), "-o", p(&pred)]);
    let o = gimc_ok(&["--json", "eval", "--pred", p(&pred), "--truth", p(data)]);
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
        let rest = ["--gamma", "0.5", "--standardize", mode];
        let o = fit_lff(&["--json"], &sparse, &model, "10", "1", &rest);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["standardized"], want, "--standardize {mode}");
        let o = gimc_ok(&["-q", "predict", p(&sparse), "-m", p(&model)]);
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
        let o = fit_lff(&["-q"], &data, &model, "8", "0", args);
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
    let o = gimc_ok(&[
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
    assert!(
        stdout(&o).contains("chosen: lff-phase m=10"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn predict_top_k_zero_and_eval_argument_forms() {
    let (data, model, pred) = fit_predict_small("topk");
    for bad in ["0", "-1", "x"] {
        let o = gimc(&["predict", p(&data), "-m", p(&model), "--top-k", bad]);
        assert_one_line_error(&o, "--top-k", &format!("--top-k {bad}"));
    }
    let o = gimc(&["predict", p(&data), "-m", p(&model), "--top-k", "0"]);
    assert!(stderr(&o).contains("must be at least 1"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    // the same evaluation by positional arguments, named flags, or a mix of both
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
    let rest = ["--gamma", "0.5", "--lambda", "0.1,1"];
    let o = fit_lff(&[], &data, &model, "10", "3", &rest);
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
    let o = fit_lff(&["-q"], &data, &model, "10", "1", &["--gamma", "0.5"]);
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
        let o = gimc_ok(&[
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

#[test]
fn data_synth_xmc_writes_a_file_data_info_reads() {
    let out = temp_file("synth-eurlex.txt", b"");
    let o = gimc_ok(&[
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
    let line = stdout(&o);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains("2000 rows × 5000 features, 3993 labels"),
        "{line}"
    );
    // the file is an XMC text file of the declared shape
    let o = gimc_ok(&["--json", "data", "info", p(&out)]);
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
    let o = gimc_ok(
        &[
            &["--json", "--seed", "3", "data", "synth", "xmc"],
            &args[..],
            &["-o", p(&a)],
        ]
        .concat(),
    );
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
    gimc_ok(
        &[
            &["data", "synth", "xmc", "--seed", "3"],
            &args[..],
            &["-o", p(&b)],
        ]
        .concat(),
    );
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
    let o = gimc_ok(&["fit", p(&data), "-o", p(&model)]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.starts_with("fitted auto (multi-class)"), "{out}");
    assert!(
        out.contains("\nchosen: ") && out.contains("settings tried"),
        "{out}"
    );
    // column 4 holds 0.5 in every row
    assert!(err.contains("dropped 1 constant column"), "{err}");
    let o = gimc_ok(&["--json", "fit", p(&data), "-o", p(&model)]);
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
    gimc_ok(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
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
    let o = gimc_ok(&["fit", p(&train), "-o", p(&model), "--iters", "0"]);
    let err = stderr(&o);
    assert!(
        err.contains("dropped 1 identifier column (one value per row): protein"),
        "{err}"
    );
    assert!(err.contains("constant columns"), "{err}");
}
