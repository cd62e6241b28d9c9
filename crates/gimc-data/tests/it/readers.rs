//! Reader robustness: arbitrary bytes and mutations of valid files never panic and give either
//! a data set or an error naming the file and a line; gzip is read transparently; formats are
//! guessed from files.

use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use gimc_data::{
    ArffOptions, ArffTarget, ColumnRef, CsvOptions, DataError, Format, LibsvmOptions, LibsvmTarget,
    MissingPolicy, Result, Targets, TripletOptions, guess_format, load_path, parse_arff,
    parse_constraints, parse_csv, parse_libsvm, parse_mulan_labels, parse_triplets, parse_xmc,
    read_arff, read_libsvm, read_triplets,
};
use proptest::prelude::*;

use crate::temp_dir;

const ARFF: &str = "% c\n@relation r\n@attribute 'a b' numeric\n@attribute c {x,'y z'}\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n1.5,x,0,1\n{0 2,1 'y z',3 1}\n-1,?,1,1\n";
const LIBSVM: &str = "1 1:0.5 3:1 \r\n2 2:1\n1,2 1:1\n 4:2\n";
const XMC: &str = "3 4 3\n0,2 0:1 3:0.5\n 1:1\n1 2:2\n";
const CSV: &str = "\"s\";\"v\";\"t\"\nM;0.5;15\nF;1e-3;7\n";
const TRIPLETS: &str = "# i j v\n0 0 1\n1,2,3.5\n";
const XML: &str =
    "<labels xmlns=\"x\">\n<label name=\"l1\"></label>\n<label name=\"l2\"></label>\n</labels>\n";

/// Runs every reader on `bytes`; panics (failing the property) if a reader errs without naming
/// the file and a line.
fn run_all(bytes: &[u8]) {
    let p = Path::new("input.txt");
    let mut results: Vec<Result<()>> = Vec::new();
    for target in [
        ArffTarget::Auto,
        ArffTarget::Labels(vec!["l1".into(), "l2".into()]),
        ArffTarget::Class(None),
    ] {
        for missing in [MissingPolicy::Error, MissingPolicy::Mask] {
            results.push(
                parse_arff(
                    bytes,
                    p,
                    &ArffOptions {
                        target: target.clone(),
                        missing,
                    },
                )
                .map(|d| d.check().unwrap()),
            );
        }
    }
    for target in [
        LibsvmTarget::Auto,
        LibsvmTarget::Classes,
        LibsvmTarget::Values,
        LibsvmTarget::MultiLabel,
    ] {
        for zero_based in [false, true] {
            results.push(
                parse_libsvm(
                    bytes,
                    p,
                    &LibsvmOptions {
                        target,
                        zero_based,
                        ..LibsvmOptions::default()
                    },
                )
                .map(|d| d.check().unwrap()),
            );
        }
    }
    results.push(parse_xmc(bytes, p).map(|d| d.check().unwrap()));
    for separator in [',', ';'] {
        let o = CsvOptions {
            separator,
            target: Some(ColumnRef::Last),
            missing: MissingPolicy::Mask,
            ..CsvOptions::default()
        };
        results.push(parse_csv(bytes, p, &o).map(|d| d.check().unwrap()));
        let o = CsvOptions {
            separator,
            header: false,
            ..CsvOptions::default()
        };
        results.push(parse_csv(bytes, p, &o).map(|d| d.check().unwrap()));
    }
    results.push(parse_triplets(bytes, p, &TripletOptions::default()).map(|_| ()));
    results.push(parse_mulan_labels(bytes, p).map(|_| ()));
    if let Ok(text) = std::str::from_utf8(bytes) {
        for one_based in [false, true] {
            // an empty file is refused as a whole (line 0 is not a line): skip that case
            match parse_constraints(text, p, None, one_based) {
                Err(e) if e.to_string().contains("no constraints") => {}
                r => results.push(r.map(|_| ())),
            }
        }
    }
    for r in results {
        if let Err(e) = r {
            assert_eq!(e.path(), Some(p), "error without the file: {e}");
            assert!(
                e.line().is_some_and(|l| l >= 1),
                "error without a line: {e}"
            );
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let interesting = prop_oneof![
        Just(b','),
        Just(b' '),
        Just(b'\n'),
        Just(b'{'),
        Just(b'}'),
        Just(b':'),
        Just(b'\''),
        Just(b'"'),
        Just(b'?'),
        Just(b'@'),
        Just(b'9'),
        any::<u8>()
    ];
    prop_oneof![
        (any::<usize>(), interesting.clone()).prop_map(|(i, b)| Edit::Replace(i, b)),
        (any::<usize>(), interesting).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for e in edits {
        let n = b.len();
        match *e {
            Edit::Replace(i, v) if n > 0 => b[i % n] = v,
            Edit::Insert(i, v) => b.insert(i % (n + 1), v),
            Edit::Delete(i) if n > 0 => {
                b.remove(i % n);
            }
            _ => {}
        }
    }
    b
}

/// Inputs on which `cargo xtask fuzz` found a panic, each run through every reader.
#[test]
fn fuzz_findings_stay_fixed() {
    // a label list beside a label index of usize::MAX: the label count overflowed
    run_all(b"0,2 1:0.5 3:1.0\n1 2:2.0\n\n18446744073709551615 1:1.5 2:-10\n");
    // constraint files naming items near 10^18 and 10^9: the contradiction check sized its
    // union-find by the largest item (a capacity overflow, or gigabytes for two pairs)
    run_all(b"0 1 1\n1000000000000000000 2 0\n");
    run_all(b"1 \t 854775807 0\n\n");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        run_all(&bytes);
    }

    #[test]
    fn mutated_valid_files_never_panic(which in 0usize..6, edits in proptest::collection::vec(edit_strategy(), 1..6)) {
        let base = [ARFF, LIBSVM, XMC, CSV, TRIPLETS, XML][which];
        run_all(&apply(base, &edits));
    }

    #[test]
    fn files_and_gzip_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), gz in any::<bool>(), cut in any::<usize>()) {
        let dir = temp_dir("prop");
        let path = dir.join("data.gz");
        let content = if gz {
            let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
            enc.write_all(&bytes).unwrap();
            let mut c = enc.finish().unwrap();
            c.truncate(cut % (c.len() + 1));
            c
        } else {
            let mut c = vec![0x1f, 0x8b];
            c.extend_from_slice(&bytes);
            c
        };
        std::fs::write(&path, &content).unwrap();
        for r in [
            read_arff(&path, &ArffOptions::default()).map(|_| ()),
            read_libsvm(&path, &LibsvmOptions::default()).map(|_| ()),
            read_triplets(&path, &TripletOptions::default()).map(|_| ()),
            load_path(&path, None).map(|_| ()),
        ] {
            if let Err(e) = r {
                prop_assert_eq!(e.path(), Some(path.as_path()));
                prop_assert!(e.line().is_some(), "{}", e);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn valid_samples_parse() {
    let p = Path::new("s");
    let ds = parse_arff(
        ARFF.as_bytes(),
        p,
        &ArffOptions {
            target: ArffTarget::Labels(vec!["l1".into(), "l2".into()]),
            missing: MissingPolicy::Mask,
        },
    )
    .unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (3, 2));
    assert_eq!(ds.missing, vec![(2, 1)]);
    assert_eq!(ds.feature_names, vec!["a b", "c"]);
    let ds = parse_libsvm(
        LIBSVM.as_bytes(),
        p,
        &LibsvmOptions {
            target: LibsvmTarget::MultiLabel,
            ..LibsvmOptions::default()
        },
    )
    .unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (4, 4));
    assert_eq!(parse_xmc(XMC.as_bytes(), p).unwrap().nrows(), 3);
    let ds = parse_csv(
        CSV.as_bytes(),
        p,
        &CsvOptions {
            separator: ';',
            target: Some(ColumnRef::Name("t".into())),
            ..CsvOptions::default()
        },
    )
    .unwrap();
    assert_eq!(ds.feature_names, vec!["s=F", "s=M", "v"]);
    assert_eq!(
        parse_triplets(TRIPLETS.as_bytes(), p, &TripletOptions::default())
            .unwrap()
            .entries
            .len(),
        2
    );
}

#[test]
fn gzip_is_transparent_and_formats_are_guessed() {
    let dir = temp_dir("gz");
    let write_gz = |name: &str, text: &str| {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        path
    };
    // Mulan: the XML next to `<stem>-train.arff` is found by name
    std::fs::write(dir.join("toy.xml"), XML).unwrap();
    let arff = write_gz("toy-train.arff.gz", ARFF.replace("-1,?", "-1,x").as_str());
    let f = guess_format(&arff).unwrap();
    assert!(matches!(f, Format::Mulan { .. }), "{f:?}");
    let ds = load_path(&arff, None).unwrap();
    assert_eq!(ds.labels().unwrap().nnz(), 4);
    // gzip without the .gz extension still works (magic bytes)
    let svm = write_gz("train.svm", "1 1:1\n2 3:1\n");
    let ds = load_path(&svm, None).unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (2, 3));
    // the task is decided from every row: the second row's list makes it multi-label
    let multi = write_gz("m.txt", "2 3:1\n0,3 1:1\n");
    assert!(matches!(
        guess_format(&multi).unwrap(),
        Format::Libsvm(LibsvmOptions {
            target: LibsvmTarget::Auto,
            ..
        })
    ));
    assert_eq!(load_path(&multi, None).unwrap().labels().unwrap().cols(), 4);
    let xmc = write_gz("Bibtex_data.txt", XMC);
    assert!(matches!(guess_format(&xmc).unwrap(), Format::Xmc));
    assert!(matches!(
        load_path(&xmc, None).unwrap().targets,
        Targets::Labels { .. }
    ));
    std::fs::write(dir.join("w.csv"), CSV).unwrap();
    let Format::Csv(o) = guess_format(&dir.join("w.csv")).unwrap() else {
        panic!()
    };
    assert_eq!((o.separator, o.header), (';', true));
    // explicit format overrides the guess
    let o = CsvOptions {
        separator: ';',
        target: Some(ColumnRef::Last),
        target_kind: gimc_data::TargetKind::Values,
        ..CsvOptions::default()
    };
    let ds = load_path(&dir.join("w.csv"), Some(&Format::Csv(o))).unwrap();
    assert_eq!(ds.targets, Targets::Values(vec![15.0, 7.0]));
    // a missing file is an Io error naming it
    let e = load_path(&dir.join("nope.csv"), None).unwrap_err();
    assert!(matches!(e, DataError::Io { .. }) && e.path().is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_targets_mark_cells_and_rows_unlabelled_under_mask_and_fail_otherwise() {
    let p = Path::new("u");
    let arff = "@relation r\n@attribute a numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n1,1,0\n2,?,1\n3,0,1\n4,?,?\n";
    let labels = ArffTarget::Labels(vec!["l1".into(), "l2".into()]);
    let ds = parse_arff(
        arff.as_bytes(),
        p,
        &ArffOptions {
            target: labels.clone(),
            missing: MissingPolicy::Mask,
        },
    )
    .unwrap();
    // row 1 is partly labelled (l1 missing, l2 known); row 3 has every label missing
    assert_eq!(ds.unlabeled, vec![3]);
    assert_eq!(ds.missing_labels, vec![(1, 0), (3, 0), (3, 1)]);
    let Targets::Labels { matrix, .. } = &ds.targets else {
        panic!("labels expected")
    };
    assert_eq!(matrix.get(1, 1), Some(&1.0));
    assert_eq!(matrix.get(1, 0), None);
    // row selection and stacking keep the cells with their rows
    let sub = ds.select_rows(&[3, 1]).unwrap();
    assert_eq!(sub.unlabeled, vec![0]);
    assert_eq!(sub.missing_labels, vec![(0, 0), (0, 1), (1, 0)]);
    let both = gimc_data::Dataset::vstack("both", &[&ds, &sub]).unwrap();
    assert_eq!(both.unlabeled, vec![3, 4]);
    assert_eq!(
        both.missing_labels,
        vec![(1, 0), (3, 0), (3, 1), (4, 0), (4, 1), (5, 0)]
    );
    let err = parse_arff(
        arff.as_bytes(),
        p,
        &ArffOptions {
            target: labels,
            missing: MissingPolicy::Error,
        },
    )
    .unwrap_err();
    assert_eq!(err.line(), Some(7), "{err}");
    // a multi-class CSV with empty / `?` class cells
    let csv = "x,y,class\n1,2,a\n3,4,\n5,6,b\n7,8,?\n";
    let o = CsvOptions {
        target: Some(ColumnRef::Last),
        missing: MissingPolicy::Mask,
        ..CsvOptions::default()
    };
    let ds = parse_csv(csv.as_bytes(), p, &o).unwrap();
    assert_eq!(ds.unlabeled, vec![1, 3]);
    let Targets::Classes { classes, names } = &ds.targets else {
        panic!("classes expected")
    };
    assert_eq!(names, &vec!["a".to_string(), "b".to_string()]);
    assert_eq!((classes[0], classes[2]), (0, 1));
    // selecting rows and stacking parts keep the unlabelled rows
    let sel = ds.select_rows(&[3, 0, 1]).unwrap();
    assert_eq!(sel.unlabeled, vec![0, 2]);
    let both = gimc_data::Dataset::vstack("b", &[&ds, &ds]).unwrap();
    assert_eq!(both.unlabeled, vec![1, 3, 5, 7]);
    let strict = CsvOptions {
        missing: MissingPolicy::Error,
        ..o
    };
    assert!(parse_csv(csv.as_bytes(), p, &strict).is_err());
    // every class missing: refused at the last row (once read as class 0 of no class names,
    // a dataset that failed its own check; found by `arbitrary_bytes_never_panic`)
    let none = "x,class\n1,\n2,?\n";
    let mask = CsvOptions {
        missing: MissingPolicy::Mask,
        ..strict
    };
    let err = parse_csv(none.as_bytes(), p, &mask).unwrap_err();
    assert_eq!(err.line(), Some(3), "{err}");
    assert!(
        err.to_string().contains("every row's class is missing"),
        "{err}"
    );
}

#[test]
fn extra_missing_tokens_mark_cells_missing() {
    let csv = "a,b,class\n1,-999,x\nNULL,2,y\n3,4,x\n";
    let o = CsvOptions {
        target: Some(ColumnRef::Last),
        missing: MissingPolicy::Mask,
        missing_tokens: vec!["-999".into(), " NULL ".into()],
        ..CsvOptions::default()
    };
    let ds = parse_csv(csv.as_bytes(), Path::new("t"), &o).unwrap();
    assert_eq!(ds.missing, vec![(0, 1), (1, 0)]);
    // without the tokens, -999 is a number and NULL a stray word in a numeric column
    let plain = CsvOptions {
        missing_tokens: Vec::new(),
        ..o
    };
    let e = parse_csv(csv.as_bytes(), Path::new("t"), &plain).unwrap_err();
    assert!(
        e.to_string()
            .contains("t:3: column `a` is numeric in 2 rows but `NULL` here"),
        "{e}"
    );
}
