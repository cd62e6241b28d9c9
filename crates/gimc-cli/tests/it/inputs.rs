//! Reading inputs as a careful user expects: the Mulan label file found (or named with
//! `--label-file`) and the source of the targets said on stderr, broken label files and label-less
//! training files refused, a byte-order mark skipped, silent type changes refused, the task of a
//! LIBSVM file decided from every row, multi-label CSV label columns remembered by the model,
//! class columns kept out of the features, and `data info` honouring `--label-column`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::{data_dir, gimc, stderr, stdout, temp_file};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A fresh folder of its own for a test's files (label files are found by folder).
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gimc-cli-inputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `gimc: error:` line of a failed run (exit status 1, no panic, one error line).
fn error_line(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("gimc: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

/// Asserts success and returns stderr.
fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stderr(o)
}

/// Fit flags of a quick single fit.
const QUICK: [&str; 10] = [
    "--method", "gimc-lff", "--m", "10", "--gamma", "0.5", "--lambda", "1", "--iters", "1",
];

/// A small Mulan set: features f0..f3, labels a, b, c (each row has one or two).
fn mulan_arff(rows: usize) -> String {
    let mut s = String::from("@relation toy\n");
    for j in 0..4 {
        s.push_str(&format!("@attribute f{j} numeric\n"));
    }
    for l in ["a", "b", "c"] {
        s.push_str(&format!("@attribute {l} {{0,1}}\n"));
    }
    s.push_str("@data\n");
    for i in 0..rows {
        let x: Vec<f64> = (0..4)
            .map(|j| ((i * 7 + j * 3) % 11) as f64 / 10.0)
            .collect();
        let l = [i % 3 == 0, i % 3 == 1 || i % 5 == 0, i % 3 == 2];
        let lab: Vec<&str> = l.iter().map(|&b| if b { "1" } else { "0" }).collect();
        let feats: Vec<String> = x.iter().map(|v| v.to_string()).collect();
        s.push_str(&format!("{},{}\n", feats.join(","), lab.join(",")));
    }
    s
}

const MULAN_XML: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n<label name=\"a\"></label>\n<label name=\"b\"></label>\n<label name=\"c\"></label>\n</labels>\n";

#[test]
fn mulan_label_files_are_found_named_and_reported() {
    let dir = folder("mulan");
    let arff = dir.join("toy-train-sparse.arff");
    std::fs::write(&arff, mulan_arff(40)).unwrap();
    // no label file: a Weka ARFF whose last attribute is the class, and the command says so
    let err = ok(&gimc(&["data", "info", p(&arff)]));
    assert!(
        err.contains("3 classes") || err.contains("2 classes"),
        "{err}"
    );
    assert!(
        err.contains(
            "from the last attribute `c` (no Mulan label file found, though the attributes \
             before it are 0/1 too)"
        ),
        "{err}"
    );
    // `toy.xml` beside `toy-train-sparse.arff`: multi-label, and said so by every command
    std::fs::write(dir.join("toy.xml"), MULAN_XML).unwrap();
    let o = gimc(&["data", "info", p(&arff)]);
    assert!(ok(&o).contains("toy-train-sparse.arff: 3 labels from toy.xml"));
    assert!(stdout(&o).contains("3 labels"), "{}", stdout(&o));
    let model = dir.join("toy.gimc");
    let mut fit = vec!["fit", p(&arff), "-o", p(&model)];
    fit.extend(QUICK);
    let err = ok(&gimc(&fit));
    assert!(
        err.contains("toy-train-sparse.arff: 3 labels from toy.xml"),
        "{err}"
    );
    let err = ok(&gimc(&["predict", p(&arff), "-m", p(&model)]));
    assert!(err.contains("3 labels from toy.xml"), "{err}");
    // under another name: the one XML file whose labels are all attributes of the ARFF file
    std::fs::rename(dir.join("toy.xml"), dir.join("label-list.xml")).unwrap();
    assert!(ok(&gimc(&["data", "info", p(&arff)])).contains("3 labels from label-list.xml"));
    // elsewhere: named with --label-file, before or after the subcommand
    let other = folder("mulan-labels");
    let xml = other.join("mine.xml");
    std::fs::rename(dir.join("label-list.xml"), &xml).unwrap();
    for args in [
        vec!["--label-file", p(&xml), "data", "info", p(&arff)],
        vec!["data", "info", p(&arff), "--label-file", p(&xml)],
    ] {
        let err = ok(&gimc(&args));
        assert!(
            err.contains(&format!("3 labels from {}", xml.display())),
            "{err}"
        );
    }
    // --label-file on a file that is not ARFF, or on a named set
    let svm = temp_file("labels-on.svm", b"1 1:1\n2 2:1\n");
    let line = error_line(&gimc(&["--label-file", p(&xml), "data", "info", p(&svm)]));
    assert!(
        line.contains("--label-file:") && line.contains("read as LIBSVM"),
        "{line}"
    );
    let line = error_line(&gimc(&["--label-file", p(&xml), "fit", "emotions"]));
    assert!(
        line.contains("--label-file applies to data files"),
        "{line}"
    );
    // --multi-label on a Weka ARFF without a label file asks for one
    std::fs::remove_file(&xml).unwrap();
    let line = error_line(&gimc(&["--multi-label", "data", "info", p(&arff)]));
    assert!(
        line.contains("name it with --label-file FILE.xml"),
        "{line}"
    );
}

#[test]
fn mulan_sets_as_mulan_ships_them_are_read_with_their_labels() {
    let Some(data) = data_dir("emotions") else {
        return;
    };
    let dir = folder("emotions");
    let arff = dir.join("emotions-train-sparse.arff");
    std::fs::copy(data.join("emotions/emotions-train.arff"), &arff).unwrap();
    std::fs::copy(data.join("emotions/emotions.xml"), dir.join("emotions.xml")).unwrap();
    let o = gimc(&["data", "info", p(&arff)]);
    assert!(ok(&o).contains("emotions-train-sparse.arff: 6 labels from emotions.xml"));
    assert!(
        stdout(&o).contains("391 rows x 72 features"),
        "{}",
        stdout(&o)
    );
    // the label file cut before `</labels>`: an error naming it, not 5 labels
    let text = std::fs::read_to_string(dir.join("emotions.xml")).unwrap();
    let cut = &text[..text.find("</labels>").unwrap()];
    std::fs::write(dir.join("emotions.xml"), cut).unwrap();
    let line = error_line(&gimc(&["data", "info", p(&arff)]));
    assert!(
        line.contains("emotions.xml:8: the file ends before `</labels>`"),
        "{line}"
    );
    let line = error_line(&gimc(&["fit", p(&arff)]));
    assert!(line.contains("emotions.xml:8"), "{line}");
}

#[test]
fn a_label_file_cut_short_is_an_error_naming_it() {
    let dir = folder("cut");
    let arff = dir.join("toy-train.arff");
    std::fs::write(&arff, mulan_arff(20)).unwrap();
    let cut = &MULAN_XML[..MULAN_XML.find("</labels>").unwrap()];
    std::fs::write(dir.join("toy.xml"), cut).unwrap();
    for args in [
        vec!["data", "info", p(&arff)],
        vec!["fit", p(&arff)],
        vec!["cluster", p(&arff), "-k", "2"],
    ] {
        let line = error_line(&gimc(&args));
        assert!(
            line.contains("toy.xml:5: the file ends before `</labels>`"),
            "{args:?}: {line}"
        );
    }
    // cut inside a tag
    std::fs::write(
        dir.join("toy.xml"),
        &MULAN_XML[..MULAN_XML.find("\"b\"").unwrap()],
    )
    .unwrap();
    let line = error_line(&gimc(&["data", "info", p(&arff)]));
    assert!(
        line.contains("toy.xml:4: tag `<label name=") && line.contains("not closed"),
        "{line}"
    );
}

#[test]
fn training_files_without_any_label_are_refused() {
    let dir = folder("nolabel");
    let xmc = dir.join("nolabel.txt");
    std::fs::write(&xmc, "3 4 2\n 0:1 2:0.5\n 1:1\n 3:2\n").unwrap();
    let line = error_line(&gimc(&["fit", p(&xmc)]));
    assert!(
        line.contains("none of its 3 rows has one of the 2 labels"),
        "{line}"
    );
    let arff = dir.join("none-train.arff");
    let text = mulan_arff(20);
    let (head, body) = text.split_at(text.find("@data\n").unwrap() + 6);
    let zeroed: String = body
        .lines()
        .map(|l| format!("{},0,0,0\n", l.rsplitn(4, ',').last().unwrap()))
        .collect();
    std::fs::write(&arff, format!("{head}{zeroed}")).unwrap();
    std::fs::write(dir.join("none.xml"), MULAN_XML).unwrap();
    let line = error_line(&gimc(&["fit", p(&arff)]));
    assert!(
        line.contains("none of its 20 rows has one of the 3 labels"),
        "{line}"
    );
    let svm = dir.join("nolabel.svm");
    std::fs::write(&svm, " 1:1\n 2:1\n").unwrap();
    let line = error_line(&gimc(&["--multi-label", "fit", p(&svm)]));
    assert!(line.contains("no row has a label"), "{line}");
}

#[test]
fn a_byte_order_mark_is_skipped_by_every_reader() {
    let bom = |name: &str, text: &str| {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend_from_slice(text.as_bytes());
        temp_file(name, &bytes)
    };
    let svm = bom("bom.svm", "1 1:1 2:0.5\n2 1:0.5\n1 2:1\n");
    let arff = bom(
        "bom.arff",
        "@relation r\n@attribute x numeric\n@attribute class {p,q}\n@data\n1,p\n2,q\n",
    );
    let xmc = bom("bom_xmc.txt", "3 4 3\n0,1 0:1 2:0.5\n2 1:1\n1 3:2\n");
    let csv = bom("bom.csv", "kind,x,y\na,1,2\nb,2,3\na,3,1\nb,1,1\n");
    for (file, extra, want_out, want_err) in [
        (
            &svm,
            None,
            "2 classes, counts 2 / 1",
            "2 classes from the first token",
        ),
        (
            &arff,
            None,
            "2 classes",
            "2 classes from the last attribute `class`",
        ),
        (
            &xmc,
            None,
            "3 labels",
            "3 labels from the label lists of the rows",
        ),
        (
            &csv,
            Some("kind"),
            "2 classes",
            "2 classes from column `kind`",
        ),
    ] {
        let mut args = vec!["data", "info", p(file)];
        if let Some(c) = extra {
            args.extend(["--label-column", c]);
        }
        let o = gimc(&args);
        let err = ok(&o);
        assert!(err.contains(want_err), "{}: {err}", file.display());
        assert!(
            stdout(&o).contains(want_out),
            "{}: {}",
            file.display(),
            stdout(&o)
        );
    }
}

#[test]
fn a_stray_word_in_a_numeric_column_is_an_error_not_one_hot_features() {
    let mut text = String::from("x,y,z\n");
    for i in 0..60 {
        let x = if i == 55 {
            "abc".to_string()
        } else {
            format!("{}.5", i % 7)
        };
        text.push_str(&format!("{x},{},{}\n", i % 5, (i * 3) % 11));
    }
    let data = temp_file("typo.csv", text.as_bytes());
    for cmd in [vec!["data", "info"], vec!["cluster", "-k", "2"]] {
        let mut args = cmd.clone();
        args.insert(if cmd[0] == "data" { 2 } else { 1 }, p(&data));
        let line = error_line(&gimc(&args));
        assert!(
            line.contains("typo.csv:57: column `x` is numeric in 59 rows but `abc` here"),
            "{args:?}: {line}"
        );
    }
    // a column of words with a few numbers among them stays nominal
    let mut words = String::from("x,colour\n");
    for i in 0..30 {
        let c = if i % 10 == 0 {
            "7"
        } else {
            ["red", "green", "blue"][i % 3]
        };
        words.push_str(&format!("{i},{c}\n"));
    }
    let words = temp_file("words.csv", words.as_bytes());
    let o = gimc(&["data", "info", p(&words), "--keep-column", "colour"]);
    ok(&o);
    assert!(
        stdout(&o).contains("30 rows x 5 features"),
        "{}",
        stdout(&o)
    );
    // `nan` / `inf` are not LIBSVM class names
    let svm = temp_file("nanclass.svm", b"1 1:1\nnan 2:1\n2 1:2\n");
    let line = error_line(&gimc(&["data", "info", p(&svm)]));
    assert!(
        line.contains("nanclass.svm:2: class \"nan\" is not a finite number"),
        "{line}"
    );
    let svm = temp_file("infclass.svm", b"1 1:1\n-inf 2:1\n");
    let line = error_line(&gimc(&["fit", p(&svm)]));
    assert!(line.contains("infclass.svm:2: class \"-inf\""), "{line}");
}

/// A multi-label LIBSVM file whose first row has a single label.
fn multilabel_svm() -> PathBuf {
    let mut s = String::new();
    for i in 0..60 {
        let labels = match i {
            0 => "3".to_string(),
            _ if i % 4 == 0 => format!("{}", i % 4),
            _ => format!("{},{}", i % 2, 2 + i % 2),
        };
        s.push_str(&format!(
            "{labels} 1:{} 2:{} 3:{}\n",
            (i % 2) as f64 + 0.1,
            (i % 3) as f64 * 0.5,
            ((i * 7) % 10) as f64 / 10.0
        ));
    }
    temp_file("first-row-single.svm", s.as_bytes())
}

#[test]
fn the_task_of_a_libsvm_file_is_decided_from_every_row() {
    let data = multilabel_svm();
    let o = gimc(&["data", "info", p(&data)]);
    let err = ok(&o);
    assert!(stdout(&o).contains("4 labels"), "{}", stdout(&o));
    assert!(
        err.contains("4 labels from the comma-separated label lists"),
        "{err}"
    );
    // fit, predict and eval agree on multi-label
    let model = temp_file("first-row-single.gimc", b"");
    let pred = temp_file("first-row-single.pred", b"");
    let mut fit = vec!["-q", "fit", p(&data), "-o", p(&model)];
    fit.extend(QUICK);
    let o = gimc(&fit);
    ok(&o);
    assert!(stdout(&o).contains("(multi-label)"), "{}", stdout(&o));
    let o = gimc(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    ok(&o);
    let o = gimc(&["-q", "eval", p(&pred), p(&data)]);
    ok(&o);
    assert!(stdout(&o).contains("P@1"), "{}", stdout(&o));
    // one label per row everywhere: classes, unless --multi-label says otherwise
    let single = temp_file("single-labels.svm", b"3 1:1\n0 2:1\n2 1:0.5\n0 3:1\n");
    let o = gimc(&["data", "info", p(&single)]);
    assert!(stdout(&o).contains("3 classes"), "{}", stdout(&o));
    let o = gimc(&["data", "info", p(&single), "--multi-label"]);
    assert!(stdout(&o).contains("4 labels"), "{}", stdout(&o));
    assert!(ok(&o).contains("4 labels"));
}

#[test]
fn csv_label_columns_are_stored_in_the_model_for_predict_and_eval() {
    let mut s = String::from("a,b,l0,l1,l2,c\n");
    for i in 0..60 {
        let (a, b, c) = ((i % 5) as f64, ((i * 3) % 7) as f64, ((i * 5) % 4) as f64);
        let l = [a > 2.0, b > 3.0, c >= 2.0 || (a <= 2.0 && b <= 3.0)];
        let l: Vec<&str> = l.iter().map(|&x| if x { "1" } else { "0" }).collect();
        s.push_str(&format!("{a},{b},{},{c}\n", l.join(",")));
    }
    let data = temp_file("mlc.csv", s.as_bytes());
    let model = temp_file("mlc.gimc", b"");
    let pred = temp_file("mlc.pred", b"");
    for spec in ["l0,l1,l2", "l0..l2", "2..4"] {
        let o = gimc(&["data", "info", p(&data), "--label-columns", spec]);
        assert!(
            ok(&o).contains("3 labels from columns l0, l1, l2"),
            "{spec}"
        );
        assert!(
            stdout(&o).contains("60 rows x 3 features"),
            "{}",
            stdout(&o)
        );
    }
    let mut fit = vec![
        "fit",
        p(&data),
        "--label-columns",
        "l0..l2",
        "-o",
        p(&model),
    ];
    fit.extend(QUICK);
    let o = gimc(&fit);
    ok(&o);
    assert!(stdout(&o).contains("3 labels"), "{}", stdout(&o));
    // predict finds the label columns in the model: no width mismatch, no flag
    let o = gimc(&["predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
    let err = ok(&o);
    assert!(
        err.contains("mlc.csv: 3 labels from columns l0, l1, l2"),
        "{err}"
    );
    // eval with the model, or with the flag
    for extra in [vec!["-m", p(&model)], vec!["--label-columns", "l0..l2"]] {
        let mut args = vec!["--json", "eval", p(&pred), p(&data)];
        args.extend(extra.iter());
        let o = gimc(&args);
        ok(&o);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert!(v["metrics"]["P@1"].as_f64().unwrap() > 0.5, "{v}");
    }
    // new rows without the label columns: read as features only
    let new_rows = temp_file("mlc-new.csv", b"a,b,c\n1,2,3\n4,0,1\n");
    let o = gimc(&["predict", p(&new_rows), "-m", p(&model)]);
    assert!(ok(&o).contains("mlc-new.csv: no target"), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
    let bad = temp_file("mlc-bad.csv", b"a,l0\n1,2\n2,maybe\n");
    let svm = temp_file("labelcols.svm", b"1 1:1\n");
    fn info<'a>(file: &'a Path, flags: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["data", "info", p(file)];
        args.extend_from_slice(flags);
        args
    }
    for (args, needle) in [
        // without either, the truth has no labels, and the message says how to name them
        (
            vec!["eval", p(&pred), p(&data)],
            "--label-columns or -m MODEL",
        ),
        // a label cell that is neither a number nor true / false
        (
            info(&bad, &["--label-columns", "l0"]),
            "mlc-bad.csv:3: label column `l0` holds `maybe`",
        ),
        (
            info(&data, &["--label-columns", "l0", "--label-column", "c"]),
            "give one",
        ),
        (
            info(&svm, &["--label-columns", "1"]),
            "--label-columns applies to CSV files only",
        ),
    ] {
        let line = error_line(&gimc(&args));
        assert!(line.contains(needle), "{line}");
    }
}

/// An iris-like file: four measurements and the species.
fn iris() -> PathBuf {
    let mut s = String::from("sepal_length,sepal_width,petal_length,petal_width,species\n");
    for i in 0..90 {
        let c = i % 3;
        let t = (i / 3) as f64 * 0.01;
        s.push_str(&format!(
            "{},{},{},{},{}\n",
            5.0 + c as f64 + t,
            3.0 + t,
            1.0 + 2.0 * c as f64 + t,
            0.2 + c as f64,
            ["setosa", "versicolor", "virginica"][c]
        ));
    }
    temp_file("iris.csv", s.as_bytes())
}

#[test]
fn a_class_column_is_not_silently_clustered_as_features() {
    let data = iris();
    let expected = "iris.csv: column `species` looks like a class (3 values); name it with \
                    --label-column species, or keep it as features with --keep-column species";
    for args in [
        vec!["cluster", p(&data), "-k", "3"],
        vec!["fit", p(&data)],
        vec!["data", "info", p(&data)],
    ] {
        let line = error_line(&gimc(&args));
        assert!(line.ends_with(expected), "{args:?}: {line}");
    }
    // as the class: clustering accuracy against it; kept: 4 + 3 one-hot features
    let o = gimc(&["cluster", p(&data), "-k", "3", "--label-column", "species"]);
    let err = ok(&o);
    assert!(
        err.contains("iris.csv: 3 classes from column `species`"),
        "{err}"
    );
    assert!(err.contains("clustering_accuracy"), "{err}");
    let o = gimc(&["--keep-column", "species", "data", "info", p(&data)]);
    assert!(ok(&o).contains("no target: every column is a feature"));
    assert!(
        stdout(&o).contains("90 rows x 7 features"),
        "{}",
        stdout(&o)
    );
    // the kept column must exist
    let line = error_line(&gimc(&[
        "data",
        "info",
        p(&data),
        "--keep-column",
        "colour",
    ]));
    assert!(line.contains("no column named \"colour\""), "{line}");
}

#[test]
fn data_info_honours_the_label_column_before_or_after_the_subcommand() {
    let data = iris();
    for args in [
        vec!["data", "info", p(&data), "--label-column", "last"],
        vec!["--label-column", "last", "data", "info", p(&data)],
        vec!["data", "--label-column", "species", "info", p(&data)],
    ] {
        let o = gimc(&args);
        let err = ok(&o);
        assert!(
            stdout(&o).contains("90 rows x 4 features") && stdout(&o).contains("3 classes"),
            "{args:?}: {}",
            stdout(&o)
        );
        assert!(
            err.contains("3 classes from column `species`"),
            "{args:?}: {err}"
        );
    }
    // as the other commands do: a label column on a LIBSVM file is an error
    let svm = temp_file("info-label.svm", b"1 1:1\n");
    let line = error_line(&gimc(&["data", "info", p(&svm), "--label-column", "last"]));
    assert!(
        line.contains("--label-column applies to CSV files only"),
        "{line}"
    );
}
