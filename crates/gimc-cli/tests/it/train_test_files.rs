//! A training file and a separate test file, as a user brings them: a row-number column that
//! new rows continue, a test file that holds fewer classes than the training file, and one
//! whose numbered labels stop below the model's.

use std::path::Path;

use crate::commands::p;
use crate::{gimc_ok, stderr, stdout, temp_file};

/// `gimc -q predict DATA --label-column class -m MODEL -o PRED FLAGS…`, asserting success;
/// returns the prediction file.
fn predict_classes(data: &Path, model: &Path, pred: &Path, flags: &[&str]) -> String {
    let args = ["-q", "predict", p(data), "--label-column", "class"];
    gimc_ok(&[&args[..], &["-m", p(model), "-o", p(pred)], flags].concat());
    std::fs::read_to_string(pred).unwrap()
}

#[test]
fn fit_drops_a_numeric_row_number_and_new_rows_ids_do_not_move_predictions() {
    // 60 rows: a row number `Id`, two features and a class that the first feature decides
    let csv = |first_id: usize| {
        let mut s = String::from("Id,a,b,class\n");
        for i in 0..60 {
            let a = ((i * 7) % 11) as f64 - 5.0;
            let b = ((i * 5) % 13) as f64 * 0.5;
            let class = if a > 0.0 { "pos" } else { "neg" };
            s.push_str(&format!("{},{a},{b},{class}\n", first_id + i));
        }
        s
    };
    let train = temp_file("with-id.csv", csv(1).as_bytes());
    let later = temp_file("with-later-id.csv", csv(90_001).as_bytes());
    let model = temp_file("with-id.gimc", b"");
    let o = gimc_ok(&["fit", p(&train), "--label-column", "class", "-o", p(&model)]);
    let err = stderr(&o);
    assert!(
        err.contains("dropped 1 identifier column (one value per row): Id"),
        "{err}"
    );
    // the same rows under ids far outside the training range get the same predictions
    let preds: Vec<String> = [&train, &later]
        .iter()
        .map(|data| predict_classes(data, &model, &temp_file("with-id.pred", b""), &[]))
        .collect();
    assert_eq!(preds[0], preds[1]);
}

#[test]
fn eval_matches_classes_by_name_when_the_test_file_holds_fewer_classes() {
    // class a below 0, b in [0, 10), c from 10: the test file holds only b and c (a CSV
    // numbers only the classes it holds) and one row of a class d the model never saw
    let row = |x: f64, class: &str| format!("{x},{},{class}\n", (x * 0.37).sin());
    let class = |x: f64| match x {
        x if x < 0.0 => "a",
        x if x < 10.0 => "b",
        _ => "c",
    };
    let mut train = String::from("x,y,class\n");
    for i in 0..90 {
        let x = -15.0 + i as f64 * 0.4;
        train.push_str(&row(x, class(x)));
    }
    let mut test = String::from("x,y,class\n");
    for i in 0..20 {
        let x = 1.1 + i as f64 * 0.8;
        test.push_str(&row(x, class(x)));
    }
    test.push_str(&row(5.0, "d"));
    let train = temp_file("by-name-train.csv", train.as_bytes());
    let test = temp_file("by-name-test.csv", test.as_bytes());
    let model = temp_file("by-name.gimc", b"");
    let pred = temp_file("by-name.pred", b"");
    gimc_ok(&[
        "-q",
        "fit",
        p(&train),
        "--label-column",
        "class",
        "-o",
        p(&model),
    ]);
    for csv in [false, true] {
        let text = predict_classes(&test, &model, &pred, if csv { &["--csv"] } else { &[] });
        assert!(
            text.lines().nth(1) == Some(r#"# gimc classes: ["a","b","c"]"#),
            "{text}"
        );
        let o = gimc_ok(&[
            "--json",
            "eval",
            p(&pred),
            p(&test),
            "--label-column",
            "class",
        ]);
        assert!(
            stderr(&o).contains("1 rows of by-name-test hold a class the model does not know"),
            "{}",
            stderr(&o)
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let acc = v["metrics"]["accuracy"].as_f64().unwrap();
        // 18 to 20 of the 20 rows of known classes right, out of 21 (by index, the b and c
        // rows would be compared with the model's a and b)
        assert!(acc > 17.5 / 21.0 && acc < 20.5 / 21.0, "csv {csv}: {v}");
    }
}

#[test]
fn eval_counts_numbered_labels_the_test_file_never_holds_as_misses() {
    // LIBSVM labels 0..5 in training, only 0..2 in the test file (whose truth is then 3
    // labels wide): predicted labels 3 to 5 are misses, not an error
    let row = |i: usize, labels: &str| {
        let a = ((i * 7) % 11) as f64 / 11.0;
        let b = ((i * 5) % 13) as f64 / 13.0;
        format!("{labels} 1:{a} 2:{b} 3:{}\n", a * b)
    };
    let train: String = (0..80)
        .map(|i| row(i, &format!("{},{}", i % 6, (i % 6 + 1 + (i / 6) % 5) % 6)))
        .collect();
    let test: String = (0..20).map(|i| row(i, &format!("{}", i % 3))).collect();
    let train = temp_file("numbered-train.svm", train.as_bytes());
    let test = temp_file("numbered-test.svm", test.as_bytes());
    let model = temp_file("numbered.gimc", b"");
    let pred = temp_file("numbered.pred", b"");
    gimc_ok(&["-q", "fit", p(&train), "--iters", "0", "-o", p(&model)]);
    gimc_ok(&[
        "-q",
        "predict",
        p(&test),
        "-m",
        p(&model),
        "--top-k",
        "3",
        "-o",
        p(&pred),
    ]);
    let text = std::fs::read_to_string(&pred).unwrap();
    let firsts: Vec<usize> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(
        firsts.iter().any(|&j| j >= 3),
        "no prediction above the test's labels: {text}"
    );
    let o = gimc_ok(&[
        "-q",
        "--json",
        "eval",
        p(&pred),
        p(&test),
        "--multi-label",
        "--k",
        "1",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let hits = firsts
        .iter()
        .enumerate()
        .filter(|&(i, &j)| j == i % 3)
        .count();
    assert_eq!(
        v["metrics"]["P@1"].as_f64().unwrap(),
        hits as f64 / 20.0,
        "{v}"
    );
}
