//! `gimc fit --method ridge|rrr|logistic|svm`: the linear toolbox end to end (fit, predict,
//! eval) on real multi-label data and on a small multi-class set, and its refusals.

use crate::commands::{assert_one_line_error, p};
use crate::{data_dir, gimc, gimc_ok, json_of, predict_eval_set, small_multiclass_text, temp_file};

/// Every linear method on emotions (6 labels): fit with its grid chosen on validation, then
/// predict and eval. A random ranking of 6 labels gives P@1 ≈ 0.31; each method's test P@1 is
/// above 0.55 (0.65–0.72 on this split).
#[test]
fn each_linear_method_fits_predicts_and_evaluates_emotions() {
    let Some(dir) = data_dir("emotions") else {
        return;
    };
    let dir = p(&dir).to_string();
    for method in ["ridge", "rrr", "logistic", "svm"] {
        let model = temp_file(&format!("emotions-{method}.gimc"), b"");
        let pred = temp_file(&format!("emotions-{method}.pred"), b"");
        let fit = json_of(&gimc(&[
            "--json",
            "--data-dir",
            &dir,
            "fit",
            "emotions",
            "--method",
            method,
            "-o",
            p(&model),
        ]));
        assert_eq!(fit["method"], method);
        let tried = fit["tried"].as_array().unwrap();
        // five λ, or the ranks capped at the 6 labels (one setting, no split)
        let expected = if method == "rrr" { 1 } else { 5 };
        assert_eq!(tried.len(), expected, "{fit}");
        if method != "rrr" {
            assert!(fit["validation_score"].as_f64().unwrap() > 0.5, "{fit}");
        }
        let v = predict_eval_set(&dir, "emotions", &model, &pred);
        let p1 = v["metrics"]["P@1"].as_f64().unwrap();
        assert!(p1 > 0.55, "{method}: P@1 = {p1}");
    }
}

/// Logistic regression and the SVM on a small separable 3-class set: the one-vs-rest models,
/// stored over [X, 1], classify the training rows.
#[test]
fn logistic_and_svm_classify_a_separable_multi_class_set() {
    let data = temp_file("linear3.svm", small_multiclass_text().as_bytes());
    for method in ["logistic", "svm"] {
        let model = temp_file(&format!("linear3-{method}.gimc"), b"");
        let pred = temp_file(&format!("linear3-{method}.pred"), b"");
        gimc_ok(&[
            "-q",
            "fit",
            p(&data),
            "--method",
            method,
            "--lambda",
            "0.1",
            "-o",
            p(&model),
        ]);
        gimc_ok(&["-q", "predict", p(&data), "-m", p(&model), "-o", p(&pred)]);
        let v = json_of(&gimc(&[
            "--json",
            "eval",
            "--pred",
            p(&pred),
            "--truth",
            p(&data),
        ]));
        let acc = v["metrics"]["accuracy"].as_f64().unwrap();
        assert!(acc >= 0.95, "{method}: accuracy {acc}");
    }
}

#[test]
fn flags_that_do_not_apply_to_a_linear_model_are_refused() {
    let data = temp_file("linear3-refuse.svm", small_multiclass_text().as_bytes());
    let cases: [(&[&str], &str); 5] = [
        (
            &["--method", "ridge", "--gamma", "1"],
            "--gamma does not apply to --method ridge",
        ),
        (
            &["--method", "svm", "--m", "10"],
            "--m does not apply to --method svm",
        ),
        (
            &["--method", "logistic", "--rank", "2"],
            "--rank does not apply",
        ),
        (
            &["--method", "rrr", "--lambda", "1"],
            "--lambda does not apply to --method rrr",
        ),
        (&["--method", "ridge", "--lambda", "0"], "lambda"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["fit", p(&data)];
        all.extend_from_slice(args);
        assert_one_line_error(&gimc(&all), needle, &args.join(" "));
    }
    // --rank belongs to completion for every other method
    assert_one_line_error(
        &gimc(&["fit", p(&data), "--rank", "2"]),
        "gimc complete",
        "--rank without rrr",
    );
}
