//! The output side of every command: an output that is an input (or a directory, or another
//! output) is refused before any work and the input left as it was; outputs are written
//! through the one writer (no temporary file left, a link at an old temporary name never
//! followed); prediction files record their kind and `gimc eval` follows it; sparse inputs
//! narrower than the model are widened; `--threads` is bounded.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::{fit_small_model, gimc, gimc_ok, small_multiclass_text, stderr, stdout};

/// A fresh empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("gimc-cli-outputs-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Asserts a failure with exit status 1 whose stderr ends with one `gimc: error:` line (after
/// any informational lines) containing every needle.
fn assert_refused(o: &Output, needles: &[&str], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(err.matches("gimc: error:").count(), 1, "{what}: {err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(last.starts_with("gimc: error:"), "{what}: {err}");
    for needle in needles {
        assert!(last.contains(needle), "{what}: `{last}` lacks `{needle}`");
    }
}

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// [`small_multiclass_text`] written to `dir/name`.
fn multiclass(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, small_multiclass_text()).unwrap();
    path
}

/// Fits a small GIMC-LFF model (no column selection) on `data` into `model`.
fn fit(data: &Path, model: &Path) {
    fit_small_model(data, model, &["--method", "gimc-lff"]);
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("same-file");
    let data = multiclass(&dir, "data.svm");
    let model = dir.join("model.gimc");
    fit(&data, &model);
    let triplets = dir.join("omega.txt");
    std::fs::write(&triplets, "0 0 1\n0 1 2\n1 0 3\n1 1 4\n2 0 5\n2 1 6\n").unwrap();
    let trace = dir.join("trace.csv");
    std::fs::write(&trace, "iteration,objective\n0,2\n1,1\n").unwrap();
    let before = |f: &Path| std::fs::read(f).unwrap();
    let (data0, model0, triplets0, trace0) = (
        before(&data),
        before(&model),
        before(&triplets),
        before(&trace),
    );
    // the same file under another spelling counts too
    let dotted = dir.join(".").join("data.svm");
    let cases: Vec<(Vec<&str>, &Path, &str)> = vec![
        (vec!["fit", p(&data), "-o", p(&data)], &data, "fit X -o X"),
        (
            vec!["fit", p(&data), "-o", p(&dotted)],
            &data,
            "fit X -o ./X",
        ),
        (
            vec!["predict", p(&data), "-m", p(&model), "-o", p(&model)],
            &model,
            "predict -o the model",
        ),
        (
            vec!["predict", p(&data), "-m", p(&model), "-o", p(&data)],
            &data,
            "predict -o the data",
        ),
        (
            vec!["cluster", p(&data), "-k", "3", "-o", p(&data)],
            &data,
            "cluster X -o X",
        ),
        (
            vec!["constraints", p(&data), "-o", p(&data)],
            &data,
            "constraints X -o X",
        ),
        (
            vec!["complete", p(&triplets), "--save", p(&triplets)],
            &triplets,
            "complete T --save T",
        ),
        (
            vec!["complete", p(&triplets), "-o", p(&triplets)],
            &triplets,
            "complete T -o T",
        ),
        (
            vec!["plot", p(&trace), "-o", p(&trace)],
            &trace,
            "plot trace -o trace",
        ),
        (
            vec!["transduce", p(&data), "-o", p(&data)],
            &data,
            "transduce X -o X",
        ),
    ];
    for (args, input, what) in cases {
        let o = gimc(&args);
        let name = input.file_name().unwrap().to_str().unwrap();
        assert_refused(&o, &["the output is the same file as the input"], what);
        assert!(
            stderr(&o).matches(name).count() >= 2,
            "{what}: {}",
            stderr(&o)
        );
    }
    assert_eq!(before(&data), data0);
    assert_eq!(before(&model), model0);
    assert_eq!(before(&triplets), triplets0);
    assert_eq!(before(&trace), trace0);
    // nothing else was created
    assert_eq!(
        entries(&dir),
        ["data.svm", "model.gimc", "omega.txt", "trace.csv"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_mulan_label_file_a_directory_and_two_equal_outputs_are_refused() {
    let dir = scratch("refusals");
    let arff = dir.join("tiny.arff");
    std::fs::write(
        &arff,
        "@relation tiny\n@attribute f numeric\n@attribute l0 {0,1}\n@attribute l1 {0,1}\n\
         @data\n0.5,1,0\n1.5,0,1\n",
    )
    .unwrap();
    let xml = dir.join("tiny.xml");
    let labels = "<?xml version=\"1.0\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\
                  <label name=\"l0\"></label><label name=\"l1\"></label></labels>\n";
    std::fs::write(&xml, labels).unwrap();
    // the XML label file is read with the ARFF file: it is an input too
    let o = gimc(&["fit", p(&arff), "-o", p(&xml)]);
    assert_refused(
        &o,
        &["tiny.xml", "the same file as the input"],
        "fit -o the XML",
    );
    assert_eq!(std::fs::read_to_string(&xml).unwrap(), labels);
    // a directory
    let o = gimc(&["constraints", p(&arff), "-o", p(&dir)]);
    assert_refused(&o, &["is a directory"], "constraints -o DIR");
    // the model and the trace at one path
    let out = dir.join("m.gimc");
    let o = gimc(&["fit", p(&arff), "-o", p(&out), "--trace", p(&out)]);
    assert_refused(&o, &["m.gimc", "name the same file"], "fit -o F --trace F");
    assert_eq!(entries(&dir), ["tiny.arff", "tiny.xml"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn outputs_leave_no_temporary_file_and_follow_no_link_at_the_old_temporary_name() {
    let dir = scratch("temp-files");
    let data = multiclass(&dir, "data.svm");
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    // the fixed temporary name model saves once used: a link there is never written through
    let model = dir.join("out.gimc");
    std::os::unix::fs::symlink(&victim, dir.join("out.gimc.tmp")).unwrap();
    fit(&data, &model);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    let pred = dir.join("pred.txt");
    let clusters = dir.join("clusters.txt");
    let cons = dir.join("cons.txt");
    for args in [
        vec!["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)],
        vec!["-q", "cluster", p(&data), "-k", "3", "-o", p(&clusters)],
        vec!["-q", "constraints", p(&data), "-n", "50", "-o", p(&cons)],
        // again over the existing files: replaced whole
        vec!["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)],
        vec!["-q", "constraints", p(&data), "-n", "40", "-o", p(&cons)],
    ] {
        let o = gimc(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    // the header, the class names and 60 rows
    assert_eq!(std::fs::read_to_string(&pred).unwrap().lines().count(), 62);
    assert_eq!(std::fs::read_to_string(&cons).unwrap().lines().count(), 41);
    assert_eq!(
        entries(&dir),
        [
            "clusters.txt",
            "cons.txt",
            "data.svm",
            "out.gimc",
            "out.gimc.tmp",
            "pred.txt",
            "victim.txt"
        ]
    );
    assert!(
        std::fs::symlink_metadata(dir.join("out.gimc.tmp"))
            .unwrap()
            .is_symlink()
    );
    // a failed write (no such directory) creates nothing
    let o = gimc(&[
        "predict",
        p(&data),
        "-m",
        p(&model),
        "-o",
        p(&dir.join("missing").join("p.txt")),
    ]);
    assert_refused(
        &o,
        &["cannot write", "p.txt"],
        "-o into a missing directory",
    );
    assert_eq!(entries(&dir).len(), 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The JSON metrics of `gimc eval PRED TRUTH extra…`.
fn eval_json(pred: &Path, truth: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--json", "eval", p(pred), p(truth)];
    args.extend_from_slice(extra);
    let o = gimc(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["metrics"].clone()
}

#[test]
fn eval_follows_the_kind_a_prediction_file_records() {
    let dir = scratch("kinds");
    let data = multiclass(&dir, "data.svm");
    // a perfect clustering whose cluster numbers are not the class numbers: plain accuracy 0
    let rows: String = (0..60).map(|i| format!("{}\n", (i % 3 + 1) % 3)).collect();
    let clusters = dir.join("c.txt");
    std::fs::write(
        &clusters,
        format!("# gimc predictions: kind=clusters\n{rows}"),
    )
    .unwrap();
    let m = eval_json(&clusters, &data, &[]);
    assert_eq!(m["clustering_accuracy"], 1.0, "{m}");
    assert_eq!(m["pairwise_error"], 0.0, "{m}");
    assert!(m.get("accuracy").is_none(), "{m}");
    let o = gimc(&["eval", p(&clusters), p(&data)]);
    assert!(
        stdout(&o).contains("clustering_accuracy: 100.00 %"),
        "{}",
        stdout(&o)
    );
    // the same rows without the line: the old guess (classes → accuracy)
    let bare = dir.join("bare.txt");
    std::fs::write(&bare, &rows).unwrap();
    assert_eq!(eval_json(&bare, &data, &[])["accuracy"], 0.0);
    assert_eq!(
        eval_json(&bare, &data, &["--clusters"])["clustering_accuracy"],
        1.0
    );
    // a real `gimc cluster` output starts with the line and is scored as a clustering
    let out = dir.join("kmeans.txt");
    gimc_ok(&["-q", "cluster", p(&data), "-k", "3", "-o", p(&out)]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("# gimc predictions: kind=clusters\n"),
        "{text}"
    );
    let m = eval_json(&out, &data, &[]);
    assert!(m["clustering_accuracy"].as_f64().unwrap() > 0.9, "{m}");
    // `gimc predict` records classes (multi-class) or labels (multi-label)
    let model = dir.join("m.gimc");
    fit(&data, &model);
    let pred = dir.join("pred.txt");
    gimc_ok(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    let text = std::fs::read_to_string(&pred).unwrap();
    assert!(
        text.starts_with("# gimc predictions: kind=classes\n"),
        "{text}"
    );
    assert!(eval_json(&pred, &data, &[])["accuracy"].as_f64().unwrap() > 0.9);
    // the CSV form carries the line too, before its own header
    let csv = dir.join("pred.csv");
    gimc_ok(&[
        "-q",
        "predict",
        p(&data),
        "-m",
        p(&model),
        "--csv",
        "-o",
        p(&csv),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let head: Vec<&str> = text.lines().take(3).collect();
    assert_eq!(head[0], "# gimc predictions: kind=classes", "{text}");
    assert!(head[1].starts_with("# gimc classes: ["), "{text}");
    assert_eq!(head[2], "row,rank,label,score", "{text}");
    assert!(eval_json(&csv, &data, &[])["accuracy"].as_f64().unwrap() > 0.9);

    // mismatches are refused, naming the kind and the truth's task
    let multilabel = dir.join("ml.svm");
    let ml: String = (0..60)
        .map(|i| format!("{},{} 1:{} 2:1\n", i % 3, (i + 1) % 3, i as f64 * 0.1))
        .collect();
    std::fs::write(&multilabel, ml).unwrap();
    let o = gimc(&["eval", p(&pred), p(&multilabel)]);
    assert_refused(
        &o,
        &[
            "classes of a multi-class model",
            "kind=classes",
            "labels (multi-label)",
        ],
        "classes against multi-label truth",
    );
    let o = gimc(&["eval", p(&clusters), p(&multilabel)]);
    assert_refused(
        &o,
        &["cluster assignments", "labels (multi-label)"],
        "clusters vs labels",
    );
    let o = gimc(&["eval", "--clusters", p(&pred), p(&data)]);
    assert_refused(&o, &["--clusters", "kind=classes"], "--clusters on classes");
    let labels = dir.join("labels.txt");
    let top: String = (0..60)
        .map(|i| format!("{} {}\n", i % 3, (i + 1) % 3))
        .collect();
    std::fs::write(&labels, format!("# gimc predictions: kind=labels\n{top}")).unwrap();
    let o = gimc(&["eval", p(&labels), p(&data)]);
    assert_refused(
        &o,
        &["top labels", "classes (multi-class)"],
        "labels vs classes",
    );
    assert_eq!(eval_json(&labels, &multilabel, &["--k", "1"])["P@1"], 1.0);
    // `gimc complete` records matrix entries: not compared row by row with a data set
    let omega = dir.join("omega.txt");
    std::fs::write(&omega, "0 0 1\n0 1 2\n1 0 2\n1 1 4\n2 0 3\n2 1 6\n").unwrap();
    let entries_out = dir.join("entries.txt");
    gimc_ok(&[
        "-q",
        "complete",
        p(&omega),
        "--rank",
        "1",
        "-o",
        p(&entries_out),
    ]);
    let text = std::fs::read_to_string(&entries_out).unwrap();
    assert!(
        text.starts_with("# gimc predictions: kind=values\n"),
        "{text}"
    );
    let o = gimc(&["eval", p(&entries_out), p(&data)]);
    assert_refused(
        &o,
        &["predicted matrix entries", "not one prediction per row"],
        "values vs classes",
    );
    // an unknown kind is an error on line 1
    let odd = dir.join("odd.txt");
    std::fs::write(&odd, format!("# gimc predictions: kind=rankings\n{rows}")).unwrap();
    let o = gimc(&["eval", p(&odd), p(&data)]);
    assert_refused(
        &o,
        &["odd.txt:1", "unknown prediction kind `rankings`"],
        "odd kind",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sparse_rows_that_never_use_the_last_features_are_widened() {
    let dir = scratch("widen");
    let data = multiclass(&dir, "data.svm");
    let model = dir.join("m.gimc");
    fit(&data, &model);
    // the same rows without feature 4 (every value of it dropped): 3 columns read
    let narrow = dir.join("narrow.svm");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&narrow, text.replace(" 4:0.5", "")).unwrap();
    let o = gimc_ok(&["-q", "predict", p(&narrow), "-m", p(&model)]);
    // the header, the class names and 60 rows
    assert_eq!(stdout(&o).lines().count(), 62);
    // dense input narrower than the model, and sparse input wider, stay errors
    let dense = dir.join("narrow.csv");
    let csv: String = (0..6).map(|i| format!("{i},1,2\n")).collect();
    std::fs::write(&dense, csv).unwrap();
    let o = gimc(&["predict", p(&dense), "-m", p(&model)]);
    assert_refused(&o, &["3 feature columns, but the model"], "dense narrower");
    let wide = dir.join("wide.svm");
    std::fs::write(&wide, "1 1:1 7:2\n2 2:1\n").unwrap();
    let o = gimc(&["predict", p(&wide), "-m", p(&model)]);
    assert_refused(&o, &["7 feature columns, but the model"], "sparse wider");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_thread_count_is_bounded_by_the_machine() {
    let o = gimc(&["--threads", "100000", "data", "list"]);
    assert_refused(
        &o,
        &["--threads: 100000 is more than the", "per core of the"],
        "--threads 100000",
    );
    let o = gimc(&["--threads", "0", "data", "list"]);
    assert_refused(&o, &["--threads: must be at least 1"], "--threads 0");
    gimc_ok(&["--threads", "2", "data", "list"]);
}

#[test]
fn a_model_path_that_is_not_a_regular_file_is_refused_before_reading() {
    // /dev/zero would otherwise be read until memory runs out; a directory cannot be a model
    let dir = scratch("model-not-a-file");
    let data = multiclass(&dir, "small.svm");
    for model in ["/dev/zero", p(&dir)] {
        let o = gimc(&["-q", "predict", p(&data), "-m", model]);
        assert_refused(&o, &["not a regular file"], model);
    }
}
