//! The fuzz targets: every reader of `gimc-data` on in-memory bytes, and the model loader.
//! A target returns normally whether the input parses or not; a panic, a hang or an abort
//! (an allocation too large) is a finding.

use std::io::Cursor;
use std::path::Path;

use gimc::{LabelData, MapRegistry};
use gimc_data::{
    ArffOptions, ArffTarget, ColumnRef, CsvOptions, LibsvmOptions, LibsvmTarget, TripletOptions,
    parse_arff, parse_constraints, parse_csv, parse_libsvm, parse_mulan_labels, parse_triplets,
    parse_xmc,
};

/// One fuzz target.
pub struct Target {
    /// Its name (`cargo xtask fuzz --target NAME`, and the seed folder `fuzz/seeds/NAME/`).
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// Runs the input; the result of parsing is ignored.
    pub run: fn(&[u8]),
}

/// Every target, in the order `cargo xtask fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "arff",
        about: "parse_arff (Weka class, or Mulan labels named by the first two attributes)",
        run: arff,
    },
    Target {
        name: "mulan-xml",
        about: "parse_mulan_labels (the Mulan XML label list)",
        run: mulan_xml,
    },
    Target {
        name: "csv",
        about: "parse_csv (guessed header, last column as target, or no target)",
        run: csv,
    },
    Target {
        name: "libsvm",
        about: "parse_libsvm (task decided from the rows, classes, multi-label, values)",
        run: libsvm,
    },
    Target {
        name: "xmc",
        about: "parse_xmc (the Extreme Classification Repository text format)",
        run: xmc,
    },
    Target {
        name: "triplets",
        about: "parse_triplets and parse_constraints",
        run: triplets,
    },
    Target {
        name: "model",
        about: "label_model_with_preprocess_from_bytes and completion_model_from_bytes",
        run: model,
    },
];

/// The target named `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

fn path() -> &'static Path {
    Path::new("fuzz-input")
}

/// The first byte selects among a target's option sets; the rest is the file.
fn split(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&b, rest)) => (b, rest),
        None => (0, data),
    }
}

fn arff(data: &[u8]) {
    let (mode, text) = split(data);
    let target = match mode % 3 {
        0 => ArffTarget::Auto,
        1 => ArffTarget::Class(None),
        _ => ArffTarget::Labels(arff_first_attributes(text, 2)),
    };
    let opts = ArffOptions {
        target,
        ..ArffOptions::default()
    };
    let _ = parse_arff(Cursor::new(text), path(), &opts);
}

/// The names of the first `k` `@attribute` lines of `text` (labels for the Mulan mode).
fn arff_first_attributes(text: &[u8], k: usize) -> Vec<String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.get(..10)
                .filter(|h| h.eq_ignore_ascii_case("@attribute"))
                .and_then(|_| l[10..].split_whitespace().next())
                .map(str::to_string)
        })
        .take(k)
        .collect()
}

fn mulan_xml(data: &[u8]) {
    let _ = parse_mulan_labels(Cursor::new(data), path());
}

fn csv(data: &[u8]) {
    let (mode, text) = split(data);
    let opts = CsvOptions {
        header: mode & 1 == 1,
        target: (mode & 2 == 2).then_some(ColumnRef::Last),
        separator: if mode & 4 == 4 { ';' } else { ',' },
        ..CsvOptions::default()
    };
    let _ = parse_csv(Cursor::new(text), path(), &opts);
}

fn libsvm(data: &[u8]) {
    let (mode, text) = split(data);
    let target = match mode % 4 {
        0 => LibsvmTarget::Auto,
        1 => LibsvmTarget::Classes,
        2 => LibsvmTarget::MultiLabel,
        _ => LibsvmTarget::Values,
    };
    let opts = LibsvmOptions {
        target,
        zero_based: mode & 4 == 4,
        ..LibsvmOptions::default()
    };
    let _ = parse_libsvm(Cursor::new(text), path(), &opts);
}

fn xmc(data: &[u8]) {
    let _ = parse_xmc(Cursor::new(data), path());
}

fn triplets(data: &[u8]) {
    let (mode, text) = split(data);
    let opts = TripletOptions {
        one_based: mode & 1 == 1,
        header: mode & 2 == 2,
        ..TripletOptions::default()
    };
    let _ = parse_triplets(Cursor::new(text), path(), &opts);
    if let Ok(s) = std::str::from_utf8(text) {
        let _ = parse_constraints(s, path(), None, mode & 1 == 1);
    }
}

fn model(data: &[u8]) {
    let registry = MapRegistry::builtin();
    if let Ok((model, pre)) = gimc::persist::label_model_with_preprocess_from_bytes(data, &registry)
    {
        // a model that loads must also predict on rows of its input width
        let d = pre.input_dim.unwrap_or(model.input_dim());
        let x = gimc_linalg::FeatureMatrix::dense(gimc_linalg::faer::Mat::from_fn(2, d, |i, j| {
            (i + j) as f64 * 0.25
        }));
        if let Ok(x) = x
            && let Ok(rows) = pre.apply(&x)
        {
            let _ = model.top_k(&rows, 1);
        }
    }
    let _ = gimc::persist::completion_model_from_bytes(data, &registry);
}

/// Model files to start from: a small label model fitted with the default search (so it holds
/// a row transform and a map), fitted on synthetic rows at startup; no binary file is kept in
/// the repository.
pub fn model_seeds() -> anyhow::Result<Vec<Vec<u8>>> {
    use gimc::{AutoParams, NoObserver, auto_fit};
    use gimc_linalg::faer::Mat;
    use gimc_linalg::sprs::TriMat;
    let x = Mat::from_fn(40, 3, |i, j| ((i * 7 + j * 5) % 11) as f64 - 5.0);
    let mut y = TriMat::new((40, 2));
    for i in 0..40 {
        y.add_triplet(i, usize::from(x[(i, 0)] <= 0.0), 1.0);
    }
    let data = LabelData::multi_label(gimc_linalg::FeatureMatrix::dense(x)?, y.to_csr())?;
    let params = AutoParams::default().with_m(4).with_max_iter(1).check()?;
    let sel = auto_fit(&data, &MapRegistry::builtin(), &params, &mut NoObserver)?;
    Ok(vec![
        gimc::persist::label_model_to_bytes_with_preprocess(&sel.model, &sel.preprocess)?,
        gimc::persist::label_model_to_bytes(&sel.model)?,
    ])
}
