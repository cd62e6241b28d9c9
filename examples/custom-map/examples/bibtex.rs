//! The Laplacian random-feature map on Bibtex through gimc's open API, end to end: model
//! selection on a validation split of the training rows (γ, λ and the iteration count), the
//! refit on all training rows, test P@1/3/5, then a save / load / predict round trip of the
//! model file.
//!
//! ```text
//! cargo run --release -p custom-map --example bibtex -- [m] [gammas] [lambdas] [max_iter] [seed]
//! cargo run --release -p custom-map --example bibtex -- 500 0.0005,0.001,0.002,0.003 0.1,1 10 0
//! ```
//! The data directory is `GIMC_DATA`, else `datasets/`.
#![allow(clippy::print_stdout)]

use gimc::NoObserver;
use std::error::Error;
use std::time::Instant;

use custom_map::LaplaceFamily;
use gimc::persist::{label_model_from_bytes, label_model_to_bytes};
use gimc::{AnyMap, LabelData, SelectionParams, select_and_fit};
use gimc_data::{Targets, load_named, resolve_data_dir};
use gimc_featmap::FeatureMap;

fn label_data(d: &gimc_data::Dataset) -> Result<LabelData, Box<dyn Error>> {
    let Targets::Labels { matrix, names } = &d.targets else {
        return Err("bibtex is not a multi-label set".into());
    };
    Ok(LabelData::multi_label(d.features.clone(), matrix.clone())?
        .with_label_names(names.clone())?)
}

fn list<T: std::str::FromStr>(
    arg: Option<&String>,
    default: &str,
) -> Result<Vec<T>, Box<dyn Error>> {
    arg.map_or(default, String::as_str)
        .split(',')
        .map(|v| v.parse().map_err(|_| format!("bad value {v:?}").into()))
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let params = SelectionParams::default()
        .with_ms(list(args.first(), "500")?)
        .with_gammas(list(args.get(1), "0.0005,0.001,0.002,0.003")?)
        .with_lambdas(list(args.get(2), "0.1,1")?)
        .with_max_iter(list(args.get(3), "10")?[0])
        .with_seed(list(args.get(4), "0")?[0])
        .check()?;
    let named = load_named(&resolve_data_dir(None), "bibtex")?;
    let (Some(train), Some(test)) = (named.part("train"), named.part("test")) else {
        return Err("bibtex lacks a train or test part".into());
    };
    let (train, test) = (label_data(train)?, label_data(test)?);

    // selection through the open API: any MapFamily, here the user's LaplaceFamily
    let t = Instant::now();
    let sel = select_and_fit(&train, &LaplaceFamily, &params, &mut NoObserver)?;
    let fit_secs = t.elapsed().as_secs_f64();
    for c in &sel.candidates {
        let curve: Vec<String> = c
            .scores
            .iter()
            .map(|s| format!("{:.2}", 100.0 * s))
            .collect();
        println!(
            "candidate m={} gamma={} lambda={}: validation P@1 by iteration [{}] ({:.1} s)",
            c.m,
            c.gamma,
            c.lambda,
            curve.join(" "),
            c.seconds
        );
    }
    println!("chosen: {}", sel.chosen.describe());
    let e = sel.model.evaluate(&test, &[1, 3, 5])?;
    let p = |k| e.precision_at(k).map_or(f64::NAN, |v| 100.0 * v);
    println!(
        "test P@1/3/5 (GIMC-LLFF, refit on all training rows): {:.2} / {:.2} / {:.2} \
         (selection and refit {fit_secs:.1} s)",
        p(1),
        p(3),
        p(5)
    );

    // save, load with the registry that knows the map's codec, predict
    let registry = custom_map::registry()?;
    let bytes = label_model_to_bytes(&sel.model)?;
    let loaded = label_model_from_bytes(&bytes, &registry)?;
    let before = sel.model.scores(test.features())?;
    let after = loaded.scores(test.features())?;
    let max_diff = (0..before.nrows())
        .flat_map(|i| (0..before.ncols()).map(move |j| (i, j)))
        .map(|(i, j)| (before[(i, j)] - after[(i, j)]).abs())
        .fold(0.0, f64::max);
    println!(
        "model file: {} bytes, map kind {}, {} -> {} features; reloaded scores differ by at most {max_diff:e}",
        bytes.len(),
        loaded.maps()[0].kind(),
        loaded.maps()[0].input_dim(),
        loaded.maps()[0].output_dim()
    );
    // without the codec the file is refused with a clear error
    match label_model_from_bytes(&bytes, &gimc::MapRegistry::builtin()) {
        Ok(_) => return Err("a registry without laplace-fourier loaded the file".into()),
        Err(e) => println!("built-in registry only: {e}"),
    }
    Ok(())
}
