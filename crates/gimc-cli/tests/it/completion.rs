//! End-to-end tests of `gimc complete` and `gimc predict --pairs`: every method, side
//! features, learned maps, held-out selection and saved models.

use crate::commands::{assert_one_line_error, p};
use std::path::Path;
use std::process::Output;

use crate::{gimc, gimc_ok, stderr, stdout, temp_file};

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

/// The values (third field) of the entry lines of a successful `gimc complete` or
/// `gimc predict --pairs` text output.
fn printed_values(o: &Output) -> Vec<f64> {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect()
}

/// The values (third field) of the `predictions` triplets of a `--json` output.
fn json_predictions(v: &serde_json::Value) -> Vec<f64> {
    v["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[2].as_f64().unwrap())
        .collect()
}

/// `gimc [lead] predict --pairs ask --row-features x --col-features y -m model`, asserting
/// success: the predicted values.
fn predict_pairs_with_features(
    lead: &[&str],
    ask: &Path,
    x: &Path,
    y: &Path,
    model: &Path,
) -> Vec<f64> {
    let mut args = lead.to_vec();
    args.extend([
        "predict",
        "--pairs",
        p(ask),
        "--row-features",
        p(x),
        "--col-features",
        p(y),
        "-m",
        p(model),
    ]);
    printed_values(&gimc(&args))
}

/// `gimc -q --json complete obs [--entries ask] --method method [--row-features x
/// --col-features y] rest…`, asserting success: its report.
fn complete_json(
    obs: &Path,
    ask: Option<&Path>,
    method: &str,
    features: Option<(&Path, &Path)>,
    rest: &[&str],
) -> serde_json::Value {
    let mut args = vec!["-q", "--json", "complete", p(obs)];
    if let Some(ask) = ask {
        args.extend(["--entries", p(ask)]);
    }
    args.extend(["--method", method]);
    if let Some((x, y)) = features {
        args.extend(["--row-features", p(x), "--col-features", p(y)]);
    }
    args.extend_from_slice(rest);
    let o = gimc_ok(&args);
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The sum of the squared differences of `pred` and `truth`, asserting equal lengths.
fn squared_error(pred: &[f64], truth: &[f64]) -> f64 {
    assert_eq!(pred.len(), truth.len());
    pred.iter().zip(truth).map(|(a, b)| (a - b).powi(2)).sum()
}

/// Asserts that `again` repeats `first` to 1e-12 relative (the same model in another process).
fn assert_same_values(again: &[f64], first: &[f64]) {
    assert_eq!(again.len(), first.len());
    for (a, b) in again.iter().zip(first) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
    }
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
    let pred = printed_values(&o);
    let rmse = (squared_error(&pred, &truth) / truth.len() as f64).sqrt();
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
    let rmse_of = |v: &serde_json::Value| {
        (squared_error(&json_predictions(v), &truth) / truth.len() as f64).sqrt()
    };
    let scale = (truth.iter().map(|t| t * t).sum::<f64>() / truth.len() as f64).sqrt();
    // mc-nuclear: the grid's smallest μ fits best here; the held-out RMSE of each is reported
    let v = complete_json(
        &obs,
        Some(&ask),
        "mc-nuclear",
        None,
        &["--lambda", "1,0.01,0.0001", "--save", p(&mc_model)],
    );
    let rmse = rmse_of(&v);
    // plain completion's model file: `predict --pairs` without features, the same values
    let o = gimc(&["predict", "--pairs", p(&ask), "-m", p(&mc_model)]);
    assert_same_values(&printed_values(&o), &json_predictions(&v));
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
    let v = complete_json(
        &obs,
        Some(&ask),
        "imc-nuclear",
        Some((&x, &y)),
        &["--lambda", "0.0001", "--save", p(&nuc_model)],
    );
    let rmse = rmse_of(&v);
    assert!(
        rmse < 0.05 * scale,
        "imc-nuclear held-out RMSE {rmse} (scale {scale})"
    );
    // the saved model (identity maps, W and H) predicts the same entries in a later process
    let again = predict_pairs_with_features(&[], &ask, &x, &y, &nuc_model);
    assert_same_values(&again, &json_predictions(&v));
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
    complete_json(
        &obs,
        Some(&ask),
        "pu-imc",
        Some((&x, &y)),
        &["--rank", "2", "--rho", "0.3"],
    );
    // PU-IMC's grids: (λ, ρ) chosen by held-out AUC, every pair reported
    let v = complete_json(
        &obs,
        None,
        "pu-imc",
        Some((&x, &y)),
        &["--rank", "2", "--lambda", "0.1,1", "--rho", "0.2,0.6"],
    );
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
    gimc_ok(&args);
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
    let pred = predict_pairs_with_features(&["-q"], &ask, &x, &y, &model);
    let mse = squared_error(&pred, &truth);
    let var = truth.iter().map(|b| b * b).sum::<f64>();
    assert!(mse < 0.2 * var, "held-out relative error {}", mse / var);
    let o = gimc(&["predict", p(&x), "-m", p(&model)]);
    assert_one_line_error(
        &o,
        "holds a \"completion\" model",
        "label predict with a completion model",
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
    let v = complete_json(
        &obs,
        Some(&ask),
        "gimc-lff",
        Some((&x, &y)),
        &[
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
        ],
    );
    assert_eq!(v["holdout"].as_array().unwrap().len(), 4);
    let pred = json_predictions(&v);
    let se = squared_error(&pred, &truth);
    let ss: f64 = truth.iter().map(|t| t * t).sum();
    assert!(
        (se / ss).sqrt() < 0.3,
        "held-out relative error {}",
        (se / ss).sqrt()
    );
    let again = predict_pairs_with_features(&[], &ask, &x, &y, &model);
    // the same model, up to the last bit of the re-formed features
    assert_same_values(&again, &pred);
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
        let mut rest = vec![
            "--rank",
            "4",
            "--m",
            "80,160",
            "--lambda",
            "0.00001,0.001",
            "--iters",
            "20",
        ];
        rest.extend_from_slice(extra);
        let v = complete_json(&obs, None, "gimc-lff", Some((&x, &y)), &rest);
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
