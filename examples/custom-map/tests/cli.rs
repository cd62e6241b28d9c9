//! The `gimc-laplace` binary: every `gimc` subcommand with the user's map selectable by name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gimc-laplace"))
        .args(args)
        .env_remove("GIMC_DATA")
        .output()
        .expect("the gimc-laplace binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("custom-map-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Three classes in LIBSVM format, separated along the first three of four features.
fn small_multiclass(dir: &std::path::Path) -> PathBuf {
    let mut s = String::new();
    for i in 0..90 {
        let c = i % 3;
        let t = (i as f64) * 0.005;
        let v = |j: usize| if j == c { 1.0 + t } else { 0.1 - t };
        s.push_str(&format!(
            "{} 1:{} 2:{} 3:{} 4:0.5\n",
            c + 1,
            v(0),
            v(1),
            v(2)
        ));
    }
    let path = dir.join("three.svm");
    std::fs::write(&path, s).unwrap();
    path
}

#[test]
fn fit_predict_eval_with_the_users_map_and_a_clear_error_for_unknown_names() {
    let dir = temp_dir();
    let data = small_multiclass(&dir);
    let model = dir.join("three.gimc");
    let pred = dir.join("three.pred");
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    let o = run(&[
        "fit",
        &p(&data),
        "--method",
        "gimc-llff",
        "--m",
        "20",
        "--gamma",
        "0.5,2",
        "--lambda",
        "0.1",
        "--iters",
        "3",
        "-o",
        &p(&model),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(out.contains("chosen: llff m=20"), "{out}");

    let o = run(&["predict", &p(&data), "-m", &p(&model), "-o", &p(&pred)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(&["--json", "eval", &p(&pred), &p(&data)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let acc: f64 = out
        .split("\"accuracy\":")
        .nth(1)
        .and_then(|s| s.split([',', '}']).next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no accuracy in {out}"));
    assert!(acc > 0.9, "training-set accuracy {acc}");

    // the bare family name and the unlearned form work too
    let o = run(&[
        "-q",
        "fit",
        &p(&data),
        "--method",
        "imc-llff",
        "--m",
        "10",
        "-o",
        &p(&model),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    // an unknown method names the user's family among the choices, on one line
    let o = run(&["fit", &p(&data), "--method", "gimc-nope", "-o", &p(&model)]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.starts_with("gimc: error: unknown method `gimc-nope`"),
        "{err}"
    );
    assert!(
        err.contains("gimc-llff") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}
