use super::*;
use crate::DataError;
use gimc_linalg::faer::Mat;

fn parse(text: &str, target: ArffTarget) -> Result<Dataset> {
    parse_arff(
        text.as_bytes(),
        Path::new("inline.arff"),
        &ArffOptions {
            target,
            missing: MissingPolicy::Error,
        },
    )
}

const MULAN_SPARSE: &str = "% comment\n@relation 'test rel'\n\n@attribute w0 {0,1}\n@ATTRIBUTE 'w 1' numeric\n@attribute w2 real\n@attribute TAG_m\\'usica {0,1}\n@attribute TAG_b {0,1}\n@data\n{0 1,2 2.5,3 1}\n{1 -1}\n%c\n{}\n{0 1,3 1,4 1}\n";

#[test]
fn mulan_sparse_with_escaped_label() {
    let names = vec!["TAG_m\\'usica".to_string(), "TAG_b".to_string()];
    let ds = parse(MULAN_SPARSE, ArffTarget::Labels(names)).unwrap();
    assert_eq!(ds.nrows(), 4);
    assert_eq!(ds.ncols(), 3);
    assert_eq!(ds.feature_names, vec!["w0", "w 1", "w2"]);
    let FeatureMatrix::Sparse(x) = &ds.features else {
        panic!("sparse expected")
    };
    assert_eq!(x.get(0, 2), Some(&2.5));
    assert_eq!(x.get(1, 1), Some(&-1.0));
    assert_eq!(x.nnz(), 4);
    let Targets::Labels { matrix, names } = &ds.targets else {
        panic!()
    };
    assert_eq!(names, &vec!["TAG_m'usica".to_string(), "TAG_b".to_string()]);
    assert_eq!(matrix.nnz(), 3);
    assert_eq!(matrix.get(3, 1), Some(&1.0));
    let s = ds.summary();
    assert_eq!(s.rows_without_label, Some(2));
    assert!((s.label_cardinality.unwrap() - 0.75).abs() < 1e-12);
    // the unescaped name matches too, and the labels can be given in another order
    let ds2 = parse(
        MULAN_SPARSE,
        ArffTarget::Labels(vec!["TAG_b".into(), "TAG_m'usica".into()]),
    )
    .unwrap();
    let Targets::Labels { matrix, .. } = &ds2.targets else {
        panic!()
    };
    assert_eq!(matrix.get(0, 1), Some(&1.0));
    assert_eq!(matrix.get(0, 0), None);
}

#[test]
fn weka_dense_nominal_class_and_features() {
    let text = "@relation seg\n@attribute a numeric\n@attribute colour {red,'dark blue'}\n@attribute class {sky,grass}\n@data\n1.5,red,grass\n-2,'dark blue',sky\n";
    let ds = parse(text, ArffTarget::Auto).unwrap();
    let FeatureMatrix::Dense(x) = &ds.features else {
        panic!("dense expected")
    };
    assert_eq!(
        x,
        &Mat::from_fn(2, 2, |i, j| [[1.5, 0.0], [-2.0, 1.0]][i][j])
    );
    assert_eq!(
        ds.targets,
        Targets::Classes {
            classes: vec![1, 0],
            names: vec!["sky".into(), "grass".into()]
        }
    );
    let none = parse(text, ArffTarget::None).unwrap();
    assert_eq!(none.ncols(), 3);
    assert_eq!(none.targets, Targets::None);
    let reg = parse(text, ArffTarget::Class(Some("a".into()))).unwrap();
    assert_eq!(reg.targets, Targets::Values(vec![1.5, -2.0]));
}

#[test]
fn mulan_dense_labels() {
    let text = "@relation r\n@attribute f1 numeric\n@attribute f2 numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n0.1,0.2,1,0\n0.3,0.4,1,1\n";
    let ds = parse(text, ArffTarget::Labels(vec!["l1".into(), "l2".into()])).unwrap();
    assert!(!ds.features.is_sparse());
    assert_eq!(ds.labels().unwrap().nnz(), 3);
}

#[test]
fn missing_values_error_or_mask() {
    let text = "@relation r\n@attribute f1 numeric\n@attribute f2 numeric\n@data\n1,?\n?,4\n";
    let err = parse(text, ArffTarget::None).unwrap_err();
    assert_eq!(err.line(), Some(5));
    let ds = parse_arff(
        text.as_bytes(),
        Path::new("m"),
        &ArffOptions {
            target: ArffTarget::None,
            missing: MissingPolicy::Mask,
        },
    )
    .unwrap();
    assert_eq!(ds.missing, vec![(0, 1), (1, 0)]);
}

#[test]
fn errors_name_the_line() {
    let cases = [
        ("@relation r\n@attribute a numeric\n@data\n1\nx\n", 5),
        ("@relation r\n@attribute a numeric\n@data\n1,2\n", 4),
        ("@relation r\n@attribute a numeric\n@data\nnan\n", 4),
        ("@relation r\n@attribute a numeric\n@data\n{1 2}\n", 4),
        ("@relation r\n@attribute a string\n@data\n", 2),
        ("@relation r\n@attribute a numeric\n", 2),
        ("hello\n", 1),
        ("", 1),
        ("@relation r\n@attribute a {x,y}\n@data\nz\n", 4),
    ];
    for (text, line) in cases {
        let err = parse(text, ArffTarget::None).unwrap_err();
        assert_eq!(err.line(), Some(line), "{text:?}: {err}");
        assert_eq!(err.path(), Some(Path::new("inline.arff")));
    }
    let err = parse(
        "@relation r\n@attribute a numeric\n@data\ninf\n",
        ArffTarget::None,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            DataError::NonFinite {
                row: 0,
                col: 0,
                line: 4,
                ..
            }
        ),
        "{err}"
    );
    let err = parse(
        "@relation r\n@attribute a numeric\n@attribute l {0,1}\n@data\n1,2\n",
        ArffTarget::Labels(vec!["l".into()]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("expected 0 or 1"), "{err}");
    let err = parse(
        "@relation r\n@attribute a numeric\n@data\n1\n",
        ArffTarget::Labels(vec!["zz".into()]),
    )
    .unwrap_err();
    assert_eq!(err.line(), Some(3));
}

/// An ARFF text of `rows` rows: a nominal `id` (value `r<i>` in row i, or `ids[i]` when
/// given), a nominal `colour` (two values), a numeric `x` (i), a numeric `flat` (3) and a
/// nominal class; dense rows, or sparse ones (omitted entries are value index 0 / 0).
fn coded(rows: usize, ids: Option<&[usize]>, sparse: bool) -> String {
    let id = |i: usize| ids.map_or(i, |v| v[i]);
    let decl: Vec<String> = (0..rows.max(12)).map(|i| format!("r{i}")).collect();
    let mut t = format!(
        "@relation r\n@attribute id {{{}}}\n@attribute colour {{red,blue}}\n\
         @attribute x numeric\n@attribute flat numeric\n@attribute class {{p,q}}\n@data\n",
        decl.join(",")
    );
    for i in 0..rows {
        let colour = ["red", "blue"][i % 2];
        if sparse {
            let mut e = Vec::new();
            if id(i) != 0 {
                e.push(format!("0 r{}", id(i)));
            }
            if i % 2 == 1 {
                e.push(format!("1 {colour}"));
            }
            if i != 0 {
                e.push(format!("2 {i}"));
            }
            e.push("3 3".into());
            e.push("4 q".into());
            t.push_str(&format!("{{{}}}\n", e.join(",")));
        } else {
            t.push_str(&format!("r{},{colour},{i},3,q\n", id(i)));
        }
    }
    t
}

#[test]
fn nominal_identifier_and_constant_columns() {
    for sparse in [false, true] {
        let ds = parse(&coded(12, None, sparse), ArffTarget::Auto).unwrap();
        assert_eq!(ds.features.is_sparse(), sparse);
        assert_eq!(ds.ncols(), 4);
        // id and colour are nominal; the class is a target, not a feature
        assert_eq!(ds.nominal_columns, vec![0, 1]);
        // the id is coded by its declaration index, distinct in every row; colour repeats;
        // x is distinct too but numeric, so it is a measurement, not an identifier
        assert_eq!(ds.identifier_columns(), vec![0], "sparse {sparse}");
        assert_eq!(ds.constant_columns(), vec![3], "sparse {sparse}");
        // one repeated id (row 7 has row 3's), or fewer than 10 rows: no identifier
        let mut ids: Vec<usize> = (0..12).collect();
        ids[7] = 3;
        let dup = parse(&coded(12, Some(&ids), sparse), ArffTarget::Auto).unwrap();
        assert_eq!(dup.nominal_columns, vec![0, 1]);
        assert!(dup.identifier_columns().is_empty());
        let few = parse(&coded(9, None, sparse), ArffTarget::Auto).unwrap();
        assert!(few.identifier_columns().is_empty());
        assert_eq!(few.constant_columns(), vec![3]);
        // every feature, the class included, under ArffTarget::None
        let all = parse(&coded(12, None, sparse), ArffTarget::None).unwrap();
        assert_eq!(all.nominal_columns, vec![0, 1, 4]);
        assert_eq!(all.identifier_columns(), vec![0]);
        assert_eq!(all.constant_columns(), vec![3, 4]);
    }
    // sparse rows: the id's value index 0 is an implicit zero; two rows with it repeat it
    let mut ids: Vec<usize> = (0..12).collect();
    ids[5] = 0;
    let two_zeros = parse(&coded(12, Some(&ids), true), ArffTarget::Auto).unwrap();
    assert!(two_zeros.identifier_columns().is_empty());
    // an id missing in one row is not one value per row
    let text = coded(12, None, false).replace("r5,blue", "?,blue");
    assert!(text.contains("?,blue"));
    let masked = parse_arff(
        text.as_bytes(),
        Path::new("m.arff"),
        &ArffOptions {
            target: ArffTarget::Auto,
            missing: MissingPolicy::Mask,
        },
    )
    .unwrap();
    assert_eq!(masked.missing, vec![(5, 0)]);
    assert!(masked.identifier_columns().is_empty());
    // row selection keeps the nominal columns; a selection of rows judges its own rows
    let ds = parse(&coded(12, None, false), ArffTarget::Auto).unwrap();
    let rows: Vec<usize> = (0..11).chain([2]).collect();
    let sel = ds.select_rows(&rows).unwrap();
    assert_eq!(sel.nominal_columns, vec![0, 1]);
    assert!(sel.identifier_columns().is_empty());
    assert_eq!(
        ds.select_rows(&[0, 2, 4, 6, 8, 10, 1, 3, 5, 7])
            .unwrap()
            .identifier_columns(),
        vec![0]
    );
}

#[test]
fn xml_labels() {
    let xml = "<?xml version=\"1.0\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n<label name=\"TAG_m\\'usica\"></label>\n<label name='a&amp;b'><label name=\"c\"/></label>\n</labels>\n";
    let names = parse_mulan_labels(xml.as_bytes(), Path::new("x.xml")).unwrap();
    assert_eq!(names, vec!["TAG_m\\'usica", "a&b", "c"]);
    let err = parse_mulan_labels(
        "<labels>\n<label name=\"a\">\n<label name=\"a\">\n".as_bytes(),
        Path::new("x.xml"),
    )
    .unwrap_err();
    assert_eq!(err.line(), Some(3));
    assert!(parse_mulan_labels("<labels></labels>".as_bytes(), Path::new("x.xml")).is_err());
}

#[test]
fn xml_cut_short_is_an_error_not_a_partial_list() {
    let whole = "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- a > comment -->\n\
                 <labels xmlns=\"http://mulan.sourceforge.net/labels\">\n\
                 <label name=\"a\"></label>\n<label name=\"b\"></label>\n</labels>\n";
    let names = parse_mulan_labels(whole.as_bytes(), Path::new("e.xml")).unwrap();
    assert_eq!(names, vec!["a", "b"]);
    // cut before </labels>, inside a tag, inside an end tag
    for (cut, line) in [
        (whole.find("</labels>").unwrap(), 5),
        (whole.find("name=\"b\"").unwrap(), 5),
        (whole.find("</label>\n<label name=\"b").unwrap() + 4, 4),
    ] {
        let err = parse_mulan_labels(&whole.as_bytes()[..cut], Path::new("e.xml")).unwrap_err();
        assert_eq!(err.path(), Some(Path::new("e.xml")), "{err}");
        assert_eq!(err.line(), Some(line), "cut at {cut}: {err}");
        assert!(
            err.to_string().contains("not closed") || err.to_string().contains("ends before"),
            "{err}"
        );
    }
    let err = parse_mulan_labels(
        &whole.as_bytes()[..whole.find("</labels>").unwrap()],
        Path::new("e.xml"),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("the file ends before `</labels>`"),
        "{err}"
    );
    // mismatched and foreign documents
    for bad in [
        "<labels><label name=\"a\"></labels>",
        "<project><label name=\"a\"/></project>",
        "<labels><label name=\"a\"/></labels><labels/>",
        "</labels>",
    ] {
        assert!(
            parse_mulan_labels(bad.as_bytes(), Path::new("x.xml")).is_err(),
            "{bad}"
        );
    }
}
