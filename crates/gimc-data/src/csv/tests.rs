use super::*;
use crate::DataError;

fn parse(text: &str, opts: &CsvOptions) -> Result<Dataset> {
    parse_csv(text.as_bytes(), Path::new("inline.csv"), opts)
}

#[test]
fn abalone_like_one_hot_and_values() {
    let text = "Sex,Length,Rings\nM,0.455,15\nF,0.35,7\nI,0.53,9\nM,0.44,10\n";
    let opts = CsvOptions {
        target: Some(ColumnRef::Name("Rings".into())),
        target_kind: TargetKind::Values,
        ..CsvOptions::default()
    };
    let ds = parse(text, &opts).unwrap();
    assert_eq!(ds.feature_names, vec!["Sex=F", "Sex=I", "Sex=M", "Length"]);
    let FeatureMatrix::Dense(x) = &ds.features else {
        panic!()
    };
    assert_eq!(x.nrows(), 4);
    assert_eq!(
        (x[(0, 2)], x[(1, 0)], x[(2, 1)], x[(2, 3)]),
        (1.0, 1.0, 1.0, 0.53)
    );
    assert_eq!(x[(0, 0)] + x[(0, 1)], 0.0);
    assert_eq!(ds.targets, Targets::Values(vec![15.0, 7.0, 9.0, 10.0]));
    let coded = parse(
        text,
        &CsvOptions {
            nominal: NominalEncoding::Code,
            ..opts
        },
    )
    .unwrap();
    let FeatureMatrix::Dense(x) = &coded.features else {
        panic!()
    };
    assert_eq!((x[(0, 0)], x[(1, 0)], x[(2, 0)]), (2.0, 0.0, 1.0));
    // the coded column is nominal; one-hot columns are plain 0/1 features
    assert_eq!(coded.nominal_columns, vec![0]);
    assert!(ds.nominal_columns.is_empty());
    // a nominal column after a numeric one, behind a dropped column
    let text = "Id,Length,Sex,Rings\n1,0.4,M,3\n2,0.5,F,4\n";
    let later = parse(
        text,
        &CsvOptions {
            nominal: NominalEncoding::Code,
            drop: vec![ColumnRef::Name("Id".into())],
            ..CsvOptions::default()
        },
    )
    .unwrap();
    assert_eq!(later.feature_names, vec!["Length", "Sex", "Rings"]);
    assert_eq!(later.nominal_columns, vec![1]);
}

#[test]
fn wine_like_semicolon_quoted_header_classes() {
    let text = "\"fixed acidity\";\"pH\";\"quality\"\n7.4;3.51;5\n7.8;3.2;6\n7.8;3.26;5\n";
    let opts = CsvOptions {
        separator: ';',
        target: Some(ColumnRef::Last),
        ..CsvOptions::default()
    };
    let ds = parse(text, &opts).unwrap();
    assert_eq!(ds.feature_names, vec!["fixed acidity", "pH"]);
    assert_eq!(
        ds.targets,
        Targets::Classes {
            classes: vec![0, 1, 0],
            names: vec!["5".into(), "6".into()]
        }
    );
}

#[test]
fn drop_no_header_and_missing() {
    let text = "1,2,3\n4,,6\n";
    let opts = CsvOptions {
        header: false,
        drop: vec![ColumnRef::Index(0)],
        missing: MissingPolicy::Mask,
        ..CsvOptions::default()
    };
    let ds = parse(text, &opts).unwrap();
    assert_eq!(ds.feature_names, vec!["c1", "c2"]);
    assert_eq!(ds.missing, vec![(1, 0)]);
    let e = parse(
        text,
        &CsvOptions {
            missing: MissingPolicy::Error,
            ..opts
        },
    )
    .unwrap_err();
    assert_eq!(e.line(), Some(2));
}

#[test]
fn csv_errors() {
    let d = CsvOptions::default();
    assert_eq!(parse("a,b\n1,2\n3\n", &d).unwrap_err().line(), Some(3));
    assert_eq!(parse("a,b\n1,\"2\n", &d).unwrap_err().line(), Some(2));
    let e = parse("a,b\n1,2\n1,inf\n", &d).unwrap_err();
    assert!(
        matches!(
            e,
            DataError::NonFinite {
                row: 1,
                col: 1,
                line: 3,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        parse(
            "a,b\n1,2\n",
            &CsvOptions {
                target: Some(ColumnRef::Name("zz".into())),
                ..d.clone()
            }
        )
        .is_err()
    );
    assert_eq!(parse("", &d).unwrap_err().line(), Some(1));
}

#[test]
fn a_column_is_nominal_only_when_most_cells_are_not_numbers() {
    // three text cells, two numbers: nominal; `1.0` (read before the switch) and `1`
    // (after it) are the same category
    let ds = parse("a\n1.0\nx\ny\n1\nz\n", &CsvOptions::default()).unwrap();
    assert_eq!(ds.feature_names, vec!["a=1", "a=x", "a=y", "a=z"]);
    let FeatureMatrix::Dense(x) = &ds.features else {
        panic!()
    };
    assert_eq!(
        (x[(0, 0)], x[(3, 0)], x[(1, 1)], x[(4, 3)]),
        (1.0, 1.0, 1.0, 1.0)
    );
    // a typo in a numeric column names the file, line, column and cell
    let text = "x,b\n1,2\n3,4\nabc,5\n6,7\n";
    let e = parse(text, &CsvOptions::default()).unwrap_err();
    assert_eq!(e.line(), Some(4), "{e}");
    assert!(
        e.to_string()
            .contains("inline.csv:4: column `x` is numeric in 3 rows but `abc` here"),
        "{e}"
    );
    let e = parse("x\n1\nabc\n2\nq\n3\n", &CsvOptions::default()).unwrap_err();
    assert!(
        e.to_string().ends_with("`abc` here (and in 1 other row)"),
        "{e}"
    );
    // as many numbers as other cells is not "most"
    let e = parse("x\nabc\n1\n", &CsvOptions::default()).unwrap_err();
    assert_eq!(e.line(), Some(2), "{e}");
    // missing cells count for neither side
    let masked = CsvOptions {
        missing: MissingPolicy::Mask,
        ..CsvOptions::default()
    };
    let ds = parse("x\nabc\n?\n\"\"\n1\nq\n", &masked).unwrap();
    assert_eq!(ds.feature_names, vec!["x=1", "x=abc", "x=q"]);
    assert_eq!(
        ds.missing,
        vec![(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
    );
}

#[test]
fn label_columns_give_multi_label_targets() {
    let text = "f,l0,l1,l2,g\n0.5,1,0,true,2\n1.5,0,0,FALSE,3\n2.5,0,2,0,4\n";
    let opts = |spec: &str| CsvOptions {
        label_columns: ColumnRange::parse_list(spec),
        ..CsvOptions::default()
    };
    for spec in ["l0,l1,l2", "1..3", "l0..l2", "l0, 2..l2"] {
        let ds = parse(text, &opts(spec)).unwrap();
        assert_eq!(ds.feature_names, vec!["f", "g"], "{spec}");
        let Targets::Labels { matrix, names } = &ds.targets else {
            panic!("{spec}: labels expected")
        };
        assert_eq!(names, &["l0", "l1", "l2"], "{spec}");
        assert_eq!(matrix.nnz(), 3, "{spec}");
        assert_eq!(
            (matrix.get(0, 0), matrix.get(0, 2), matrix.get(2, 1)),
            (Some(&1.0), Some(&1.0), Some(&1.0))
        );
        assert_eq!(matrix.outer_view(1).unwrap().nnz(), 0);
    }
    // label order follows the list
    let ds = parse(text, &opts("l2,l0")).unwrap();
    assert_eq!(ds.labels().unwrap().get(0, 0), Some(&1.0));
    assert_eq!(ds.feature_names, vec!["f", "l1", "g"]);
    // header-less files name their columns c0, c1, …
    let ds = parse(
        "0.5,1,0\n1.5,0,1\n",
        &CsvOptions {
            header: false,
            ..opts("c1..c2")
        },
    )
    .unwrap();
    assert_eq!(ds.feature_names, vec!["c0"]);
    assert_eq!(ds.labels().unwrap().nnz(), 2);
    for (spec, needle) in [
        ("l0,zz", "no column named \"zz\""),
        ("l2..l0", "column range ends"),
        ("l0,l0", "label column `l0` is already a label column"),
    ] {
        let e = parse(text, &opts(spec)).unwrap_err();
        assert!(e.to_string().contains(needle), "{spec}: {e}");
    }
    let e = parse("f,l\n1,yes\n", &opts("l")).unwrap_err();
    assert_eq!(e.line(), Some(2));
    assert!(
        e.to_string().contains("label column `l` holds `yes`"),
        "{e}"
    );
    let e = parse("f,l\n1,\n", &opts("l")).unwrap_err();
    assert!(
        e.to_string().contains("missing value in label column `l`"),
        "{e}"
    );
    let both = CsvOptions {
        target: Some(ColumnRef::Name("g".into())),
        ..opts("l0")
    };
    assert!(parse(text, &both).is_err());
    // masked label cells: a row with every label missing is unlabelled
    let masked = CsvOptions {
        missing: MissingPolicy::Mask,
        ..opts("l0,l1")
    };
    let ds = parse("f,l0,l1\n1,1,?\n2,?,?\n", &masked).unwrap();
    assert_eq!(ds.missing_labels, vec![(0, 1), (1, 0), (1, 1)]);
    assert_eq!(ds.unlabeled, vec![1]);
}

#[test]
fn class_like_columns_are_refused_unless_kept_or_named_as_the_target() {
    let mut iris = String::from("sepal,petal,species\n");
    for i in 0..12 {
        iris.push_str(&format!(
            "{}.5,{i},{}\n",
            i % 4,
            ["setosa", "virginica"][i % 2]
        ));
    }
    let refuse = CsvOptions {
        refuse_class_like: true,
        ..CsvOptions::default()
    };
    let e = parse(&iris, &refuse).unwrap_err();
    assert!(
        matches!(&e, DataError::ClassLikeColumn { column, values: 2, .. } if column == "species"),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "inline.csv: column `species` looks like a class (2 values)"
    );
    // kept as features, or named as the target: read
    let kept = CsvOptions {
        keep: vec![ColumnRef::Name("species".into())],
        ..refuse.clone()
    };
    assert_eq!(parse(&iris, &kept).unwrap().ncols(), 4);
    let target = CsvOptions {
        target: Some(ColumnRef::Last),
        ..refuse.clone()
    };
    assert_eq!(parse(&iris, &target).unwrap().ncols(), 2);
    // not refused unless asked (library default)
    assert_eq!(parse(&iris, &CsvOptions::default()).unwrap().ncols(), 4);
    // many distinct values: a categorical feature, not a class; a class-like name is
    // refused whatever its count
    let mut ids = String::from("x,name\n");
    for i in 0..12 {
        ids.push_str(&format!("{i},n{i}\n"));
    }
    assert_eq!(parse(&ids, &refuse).unwrap().ncols(), 13);
    let named = ids.replace("x,name", "x,Label");
    let e = parse(&named, &refuse).unwrap_err();
    assert!(
        e.to_string()
            .contains("column `Label` looks like a class (12 values)"),
        "{e}"
    );
    // a kept column must exist and must not be the target
    let bad = CsvOptions {
        keep: vec![ColumnRef::Name("zz".into())],
        ..refuse.clone()
    };
    assert!(parse(&iris, &bad).is_err());
    let clash = CsvOptions {
        keep: vec![ColumnRef::Last],
        ..target
    };
    let e = parse(&iris, &clash).unwrap_err();
    assert!(e.to_string().contains("cannot be kept as features"), "{e}");
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_column_name() {
    let ds = parse(
        "\u{feff}label,x\na,1\nb,2\n",
        &CsvOptions {
            target: Some(ColumnRef::Name("label".into())),
            ..CsvOptions::default()
        },
    )
    .unwrap();
    assert_eq!(ds.feature_names, vec!["x"]);
    let c = parse_constraints(
        "\u{feff}# i j s\n0 1 1\n2 3 0.5\n",
        Path::new("c"),
        None,
        false,
    )
    .unwrap_err();
    assert_eq!(c.line(), Some(3), "{c}");
}

#[test]
fn the_columns_of_a_file_are_its_header_or_positions() {
    let path = std::env::temp_dir().join(format!("gimc-csv-cols-{}.csv", std::process::id()));
    std::fs::write(&path, "\u{feff}\n\"a b\";c\n1;2\n").unwrap();
    let semi = CsvOptions {
        separator: ';',
        ..CsvOptions::default()
    };
    assert_eq!(read_csv_columns(&path, &semi).unwrap(), ["a b", "c"]);
    let plain = CsvOptions {
        header: false,
        ..semi
    };
    assert_eq!(read_csv_columns(&path, &plain).unwrap(), ["c0", "c1"]);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn column_refs_and_ranges_parse() {
    assert_eq!(ColumnRef::parse(" last "), ColumnRef::Last);
    assert_eq!(ColumnRef::parse("3"), ColumnRef::Index(3));
    assert_eq!(ColumnRef::parse("l3"), ColumnRef::Name("l3".into()));
    assert_eq!(
        ColumnRange::parse_list("a, 3..7,,l0..last"),
        vec![
            ColumnRange::one(ColumnRef::Name("a".into())),
            ColumnRange {
                first: ColumnRef::Index(3),
                last: ColumnRef::Index(7)
            },
            ColumnRange {
                first: ColumnRef::Name("l0".into()),
                last: ColumnRef::Last
            },
        ]
    );
}

#[test]
fn triplets() {
    let text = "# r c v\n0 1 2.5\n2,0,-1\n\n1;1;3\n";
    let t = parse_triplets(
        text.as_bytes(),
        Path::new("t.txt"),
        &TripletOptions::default(),
    )
    .unwrap();
    assert_eq!((t.nrows, t.ncols), (3, 2));
    assert_eq!(t.entries, vec![(0, 1, 2.5), (2, 0, -1.0), (1, 1, 3.0)]);
    let one = parse_triplets(
        "i j v\n1 1 1\n".as_bytes(),
        Path::new("t"),
        &TripletOptions {
            one_based: true,
            header: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(one.entries, vec![(0, 0, 1.0)]);
    for (text, line) in [
        ("0 0 1\n0 0 2\n", 2),
        ("0 0\n", 1),
        ("0 0 nan\n", 1),
        ("a 0 1\n", 1),
    ] {
        let e = parse_triplets(text.as_bytes(), Path::new("t"), &TripletOptions::default())
            .unwrap_err();
        assert_eq!(e.line(), Some(line), "{text:?}");
    }
    let e = parse_triplets(
        "0 0 1\n".as_bytes(),
        Path::new("t"),
        &TripletOptions {
            one_based: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.line(), Some(1));
}

#[test]
fn constraints_read_and_validate() {
    let p = Path::new("c.txt");
    let c = parse_constraints("# i j s\n0 1 1\n2 3 0\n", p, None, false).unwrap();
    assert_eq!(c.n, 4);
    assert_eq!(c.pairs, vec![(0, 1, 1.0), (2, 3, 0.0)]);
    let c = parse_constraints("1 2 1\n", p, Some(5), true).unwrap();
    assert_eq!((c.n, c.pairs.clone()), (5, vec![(0, 1, 1.0)]));
    match parse_constraints("0 1 1\n\n# c\n2 3 0.5\n", p, None, false) {
        Err(crate::DataError::Parse { line, msg, .. }) => {
            assert_eq!(line, 4);
            assert!(msg.contains("0.5"), "{msg}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(parse_constraints("0 9 1\n", p, Some(4), false).is_err());
    // contradictions name their line: a self cannot-link, a pair with both labels, a chain
    let line = |text: &str| match parse_constraints(text, p, None, false) {
        Err(DataError::Parse { line, msg, .. }) => (line, msg),
        other => panic!("expected a parse error, got {other:?}"),
    };
    assert_eq!(line("0 1 1\n4 4 0\n").0, 2);
    assert_eq!(line("0 1 0\n1 0 1\n").0, 1);
    let (l, msg) = line("0 1 1\n# c\n1 2 1\n5 6 0\n2 0 0\n");
    assert_eq!(l, 5, "{msg}");
    assert!(msg.contains("must-links"), "{msg}");
    // must-links alone, or cannot-links across components, are consistent
    assert!(parse_constraints("0 1 1\n1 2 1\n2 3 0\n3 4 1\n", p, None, false).is_ok());
    assert!(parse_constraints("2 2 1\n", p, None, false).is_ok());
    assert!(parse_constraints("# nothing\n", p, None, false).is_err());
    assert!(parse_constraints("0 1\n", p, None, false).is_err());
}
