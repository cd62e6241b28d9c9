//! End-to-end tests of `gimc transduce`: MC-1 / MC-b on files with missing feature cells and
//! unlabelled rows.

use crate::commands::{assert_one_line_error, p};
use std::path::Path;
use std::process::Output;

use crate::{gimc, gimc_ok, json_of, stderr, temp_file};

/// `gimc -q [--json] --label-column last transduce data --folds 3 --mu-count 4 extra…`.
fn transduce(json: bool, data: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["-q"];
    if json {
        args.push("--json");
    }
    args.extend([
        "--label-column",
        "last",
        "transduce",
        p(data),
        "--folds",
        "3",
        "--mu-count",
        "4",
    ]);
    args.extend_from_slice(extra);
    gimc(&args)
}

/// The row indices of a `gimc transduce --json` report.
fn reported_rows(v: &serde_json::Value) -> Vec<usize> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap() as usize)
        .collect()
}

/// How many of `rows`' first predicted labels differ from the class of the fixture of two
/// classes (`neg` on even rows, `pos` on odd ones).
fn wrong_classes(rows: &[usize], v: &serde_json::Value) -> usize {
    rows.iter()
        .zip(v["predicted"].as_array().unwrap())
        .filter(|(i, p)| p[0].as_str().unwrap() != if *i % 2 == 0 { "neg" } else { "pos" })
        .count()
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
    // MC-1 over the λ grid, the imputed matrix written to `out`
    let impute = |json: bool, data: &Path, out: &Path, extra: &[&str]| {
        let mut args = vec!["--lambda", "0.1,1", "--impute-out", p(out)];
        args.extend_from_slice(extra);
        transduce(json, data, &args)
    };
    let v = json_of(&impute(true, &data, &imputed, &[]));
    let rows = reported_rows(&v);
    assert_eq!(rows, hidden);
    let wrong = wrong_classes(&rows, &v);
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
        let o = transduce(true, &data, &["--method", method]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let v = json_of(&o);
        assert_eq!(v["method"], method);
        let wrong = wrong_classes(&hidden, &v);
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
    let o = impute(false, &data, &imputed, &["-o", p(&pred)]);
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
    let v = json_of(&o);
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
    let o = impute(true, &token_file, &token_imputed, &["--missing", "-999"]);
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
    let v = json_of(&gimc(&[&["-q", "--json"][..], &args[..]].concat()));
    let rows = reported_rows(&v);
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
    gimc_ok(&[&["-q"][..], &args[..], &["-o", p(&pred)][..]].concat());
    // eval over the hidden cells only (with --input), or every label of the rows (without)
    let eval = |with_input: bool| -> f64 {
        let mut a = vec!["--json", "eval", "--transduction", p(&pred), p(&truth_file)];
        if with_input {
            a.extend(["--input", p(&data)]);
        }
        json_of(&gimc(&a))["label_error"].as_f64().unwrap()
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
