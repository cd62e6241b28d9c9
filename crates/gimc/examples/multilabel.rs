//! Real-data check of the multi-label fast path (DESIGN §3.3, §4 `gimc-table2`): chooses the
//! iteration count (and any grid given) on a validation split of the training rows, refits on
//! all training rows, and prints test P@1/3/5 with the chosen values and timings.
//!
//! ```text
//! cargo run --release -p gimc --example multilabel -- bibtex lff 500 0.002 1 10
//! cargo run --release -p gimc --example multilabel -- delicious lnys 500 0.05 1 15
//! cargo run --release -p gimc --example multilabel -- delicious combined 500 0.02,0.05 1 10
//! ```
//! Dense feature sets are standardised with the training statistics.
//! Arguments: set, kind (lff | lnys | combined | lff-varpro | lnys-varpro), m, γ (comma list;
//! for `combined`: γ_lff,γ_lnys), λ (comma list), max iterations, [seed], [data dir].
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use gimc::NoObserver;
use std::path::PathBuf;
use std::time::Instant;

use gimc::{
    BoxedMap, LabelData, LabelModel, MapRegistry, Scheme, Selection, SelectionParams,
    select_and_fit, select_combined,
};
use gimc_data::Targets;

fn to_label_data(d: &gimc_data::Dataset) -> LabelData {
    match &d.targets {
        Targets::Labels { matrix, names } => {
            LabelData::multi_label(d.features.clone(), matrix.clone())
                .unwrap()
                .with_label_names(names.clone())
                .unwrap()
        }
        Targets::Classes { classes, names } => {
            LabelData::multi_class(d.features.clone(), classes, names.len())
                .unwrap()
                .with_label_names(names.clone())
                .unwrap()
        }
        _ => panic!("no labels"),
    }
}

fn list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',').filter_map(|v| v.parse().ok()).collect()
}

fn report(name: &str, model: &LabelModel, test: &LabelData, secs: f64) {
    let e = model.evaluate(test, &[1, 3, 5]).unwrap();
    match e.accuracy {
        Some(a) => println!("{name}: test accuracy {:.2}  ({secs:.1} s)", 100.0 * a),
        None => println!(
            "{name}: test P@1/3/5 {:.2} / {:.2} / {:.2}  ({secs:.1} s)",
            100.0 * e.precision_at(1).unwrap(),
            100.0 * e.precision_at(3).unwrap(),
            100.0 * e.precision_at(5).unwrap()
        ),
    }
}

fn run(train: &LabelData, family: &str, params: &SelectionParams) -> (Selection<BoxedMap>, f64) {
    let t = Instant::now();
    let registry = MapRegistry::builtin();
    let sel = select_and_fit(
        train,
        registry.family(family).unwrap(),
        &params.check().unwrap(),
        &mut NoObserver,
    )
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    for c in &sel.candidates {
        let s: Vec<String> = c
            .scores
            .iter()
            .map(|v| format!("{:.2}", 100.0 * v))
            .collect();
        println!(
            "  candidate {} m={} gamma={} lambda={}: validation by iteration [{}] ({:.1} s)",
            sel.chosen.family,
            c.m,
            c.gamma,
            c.lambda,
            s.join(" "),
            c.seconds
        );
    }
    let refit = sel.history.last().map_or(0.0, |h| h.seconds);
    let n = sel.history.len().saturating_sub(1).max(1);
    println!(
        "  chosen: {}; refit {:.1} s ({:.2} s per iteration)",
        sel.chosen.describe(),
        refit,
        refit / n as f64
    );
    (sel, secs)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let set = a.get(1).map_or("bibtex", String::as_str);
    let kind = a.get(2).map_or("lff", String::as_str);
    let m: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(500);
    let gammas: Vec<gimc::Gamma> = list(a.get(4).map_or("0.002", String::as_str));
    let lambdas: Vec<f64> = list(a.get(5).map_or("1", String::as_str));
    let iters: usize = a.get(6).and_then(|s| s.parse().ok()).unwrap_or(10);
    let seed: u64 = a.get(7).and_then(|s| s.parse().ok()).unwrap_or(0);
    let dir = PathBuf::from(a.get(8).map_or("/work/shared/datasets", String::as_str));
    let t = Instant::now();
    let named = gimc_data::load_named(&dir, set).unwrap();
    let (mut tr_d, mut te_d) = (
        named.part("train").unwrap().clone(),
        named.part("test").unwrap().clone(),
    );
    if !tr_d.features.is_sparse() {
        // dense sets (segment, ...): standardise with the training statistics
        let st = gimc_linalg::Standardizer::fit(&tr_d.features, true).unwrap();
        tr_d.features = st.transform(&tr_d.features).unwrap();
        te_d.features = st.transform(&te_d.features).unwrap();
    }
    let train = to_label_data(&tr_d);
    let test = to_label_data(&te_d);
    println!(
        "{set}: train {} x {}, test {}, {} labels (loaded in {:.1} s)",
        train.nrows(),
        train.features().ncols(),
        test.nrows(),
        train.n_labels(),
        t.elapsed().as_secs_f64()
    );
    let base = SelectionParams::default()
        .with_ms(vec![m])
        .with_lambdas(lambdas.clone())
        .with_max_iter(iters)
        .with_seed(seed);
    let (scheme, kind) = match kind.strip_suffix("-varpro") {
        Some(k) => (Scheme::VariableProjection, k),
        None => (Scheme::Alternating, kind),
    };
    match kind {
        "combined" => {
            let lff = base
                .clone()
                .with_gammas(vec![gammas[0]])
                .with_scheme(scheme);
            let lnys = base
                .clone()
                .with_gammas(vec![*gammas.get(1).unwrap_or(&gammas[0])])
                .with_scheme(scheme);
            let (s1, t1) = run(&train, "lff", &lff);
            report("GIMC-LFF", &s1.model, &test, t1);
            let (s2, t2) = run(&train, "lnys", &lnys);
            report("GIMC-LNYS", &s2.model, &test, t2);
            let t = Instant::now();
            let comb = select_combined(&train, vec![s1, s2], &lambdas, 1).unwrap();
            println!(
                "  combined: lambda by validation {:?} -> chosen {}",
                comb.scores, comb.lambda
            );
            report(
                "combined LFF+LNYS",
                &comb.model,
                &test,
                t.elapsed().as_secs_f64() + t1 + t2,
            );
        }
        k => {
            let family = if k == "lnys" { "lnys" } else { "lff" };
            let p = base.with_gammas(gammas).with_scheme(scheme);
            let (sel, secs) = run(&train, family, &p);
            report(
                &format!("GIMC-{} ({})", k.to_uppercase(), scheme.name()),
                &sel.model,
                &test,
                secs,
            );
        }
    }
}
