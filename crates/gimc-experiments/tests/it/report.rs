//! The three report files round-trip: JSON parses back, CSV has 7 fields per line, Markdown
//! tables have aligned column counts.

use gimc_experiments::report::csv_field;
use gimc_experiments::{Record, Report, Table, experiment_names, pivot_table, write_report};
use proptest::prelude::*;

/// Splits RFC 4180 CSV text into records of fields (quotes may span commas, quotes, newlines).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
        } else {
            match c {
                '"' => quoted = true,
                ',' => row.push(std::mem::take(&mut field)),
                '\n' => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                _ => field.push(c),
            }
        }
    }
    assert!(!quoted, "unterminated quote");
    assert!(field.is_empty() && row.is_empty(), "missing final newline");
    rows
}

/// Counts the cells of a Markdown table line, honouring `\|` escapes.
fn md_cells(line: &str) -> usize {
    let mut count = 0;
    let mut prev = ' ';
    for c in line.chars() {
        if c == '|' && prev != '\\' {
            count += 1;
        }
        prev = c;
    }
    count - 1
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * x.abs().max(1.0),
        (None, None) => true,
        _ => false,
    }
}

fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z ,\"|\n\\\\λ%@-]{0,12}").unwrap()
}

fn value() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![Just(None), (-1e6f64..1e6).prop_map(Some)]
}

fn record() -> impl Strategy<Value = Record> {
    (text(), text(), text(), text(), text(), value(), value()).prop_map(
        |(experiment, dataset, method, setting, metric, ours, published)| Record {
            experiment,
            dataset,
            method,
            setting,
            metric,
            ours,
            published,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn files_round_trip(records in proptest::collection::vec(record(), 0..8), note in text()) {
        let report = Report {
            name: "roundtrip".into(),
            title: "Round | trip".into(),
            records: records.clone(),
            notes: vec![note],
            tables: Vec::new(),
            figures: Vec::new(),
            banner: None,
        };
        let dir = std::env::temp_dir().join(format!("gimc-exp-it-{}", std::process::id()));
        let paths = write_report(&report, &dir).unwrap();
        prop_assert_eq!(paths.len(), 3);

        let json = std::fs::read_to_string(dir.join("roundtrip.json")).unwrap();
        let back: Vec<Record> = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back.len(), records.len());
        for (b, r) in back.iter().zip(&records) {
            prop_assert_eq!(
                (&b.experiment, &b.dataset, &b.method, &b.setting, &b.metric),
                (&r.experiment, &r.dataset, &r.method, &r.setting, &r.metric)
            );
            // serde_json's default parser may be 1 ulp off; the writer itself is exact.
            prop_assert!(close(b.ours, r.ours) && close(b.published, r.published));
        }
        let raw: serde_json::Value = serde_json::from_str(&json).unwrap();
        for rec in raw.as_array().unwrap() {
            let keys: Vec<&String> = rec.as_object().unwrap().keys().collect();
            prop_assert_eq!(keys.len(), 7);
        }

        let csv = std::fs::read_to_string(dir.join("roundtrip.csv")).unwrap();
        let rows = parse_csv(&csv);
        prop_assert_eq!(rows.len(), records.len() + 1);
        prop_assert!(rows.iter().all(|r| r.len() == 7));
        for (row, rec) in rows[1..].iter().zip(&records) {
            prop_assert_eq!(&row[1], &rec.dataset);
            prop_assert_eq!(&row[4], &rec.metric);
            prop_assert_eq!(row[5].parse::<f64>().ok(), rec.ours);
        }

        let md = std::fs::read_to_string(dir.join("roundtrip.md")).unwrap();
        let table_lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        if let Some(first) = table_lines.first() {
            let n = md_cells(first);
            prop_assert!(table_lines.iter().all(|l| md_cells(l) == n), "{md}");
            prop_assert_eq!(table_lines.len(), pivot_table("", &records, 4).rows.len() + 2);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn csv_field_parses_back(s in text()) {
        let rows = parse_csv(&format!("{},x\n", csv_field(&s)));
        prop_assert_eq!(rows, vec![vec![s, "x".to_owned()]]);
    }

    #[test]
    fn table_lines_have_header_cell_count(
        header in proptest::collection::vec(text(), 1..5),
        rows in proptest::collection::vec(proptest::collection::vec(text(), 0..7), 0..5),
    ) {
        let t = Table { title: "t".into(), header: header.clone(), rows };
        let md = t.to_markdown();
        for line in md.lines().filter(|l| l.starts_with('|')) {
            prop_assert_eq!(md_cells(line), header.len(), "{}", line);
        }
    }
}

#[test]
fn registry_names_are_unique_and_plain() {
    let names = experiment_names();
    assert!(names.contains(&"datasets"));
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        names.len(),
        "duplicate experiment names: {names:?}"
    );
    for n in names {
        assert!(
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        );
    }
}
