//! Verification: sha256 and shape per file, on a tiny synthetic manifest and on a copy of a real
//! set (ok, missing, altered), and the data-directory resolution.

use std::path::Path;

use gimc_data::{
    DataError, FileStatus, Manifest, NamedOptions, load_named, load_named_part, resolve_data_dir,
    sha256_file, verify, verify_all,
};

use crate::{require_set, temp_dir};

const TINY: &str = "1 1:0.5 3:1\n2 2:1\n1 1:1\n";
const TINY_SHA: &str = "abe81457fad4b6e51cbafa5f85a720b8de8860dcec43e1caa19b04d6e9d8a540";

fn tiny_manifest(rows: usize) -> Manifest {
    let text = format!(
        "version = 1\n[[set]]\nname = 'tiny'\ndescription = 'd'\ntask = 'binary'\nsource = 'https://example.org/tiny'\npreprocessing = 'none'\n\
         [[set.file]]\npath = 'tiny/t.svm'\nbytes = 24\nsha256 = '{TINY_SHA}'\nmirror = 'https://example.org/t.svm'\n\
         [[set.part]]\nname = 'all'\nfile = 'tiny/t.svm'\nformat = 'libsvm'\nrows = {rows}\nfeatures = 3\nclasses = 2\nclass_counts = [2, 1]\n"
    );
    Manifest::parse(&text).unwrap()
}

#[test]
fn sha256_known_answer() {
    let dir = temp_dir("sha");
    std::fs::write(dir.join("abc"), "abc").unwrap();
    assert_eq!(
        sha256_file(&dir.join("abc")).unwrap(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(matches!(
        sha256_file(&dir.join("none")),
        Err(DataError::Io { .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tiny_set_ok_shape_parse_altered_missing() {
    let dir = temp_dir("tiny");
    std::fs::create_dir_all(dir.join("tiny")).unwrap();
    let file = dir.join("tiny/t.svm");
    std::fs::write(&file, TINY).unwrap();
    let m = tiny_manifest(3);
    let entry = m.entry("tiny").unwrap();
    let r = verify(&dir, entry);
    assert!(r.is_ok(), "{r}");
    assert!(
        matches!(&r.files[0].status, FileStatus::Ok { detail } if detail.contains("3 rows x 3 features"))
    );

    // right checksum, wrong expectations in the manifest
    let wrong = tiny_manifest(4);
    let r = verify(&dir, wrong.entry("tiny").unwrap());
    assert!(
        matches!(&r.files[0].status, FileStatus::ShapeMismatch { problems } if problems[0].contains("rows: expected 4, got 3")),
        "{r}"
    );

    // flip a byte: checksum mismatch
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[4] ^= 0x01;
    std::fs::write(&file, &bytes).unwrap();
    let r = verify(&dir, entry);
    assert!(
        matches!(&r.files[0].status, FileStatus::ChecksumMismatch { expected, actual } if expected == TINY_SHA && actual != TINY_SHA),
        "{r}"
    );
    assert!(!r.is_ok());
    assert!(r.to_string().contains("checksum mismatch"));

    // removed: missing with the public source and mirror
    std::fs::remove_file(&file).unwrap();
    let r = verify(&dir, entry);
    assert!(
        matches!(&r.files[0].status, FileStatus::Missing { source, mirror } if source == "https://example.org/tiny" && mirror.as_deref() == Some("https://example.org/t.svm")),
        "{r}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tiny_set_parse_error_with_matching_checksum() {
    // a manifest whose checksum is that of a malformed file
    let bad = "1 1:0.5 3:1\n2 2:1\n1 1:x\n";
    let text = "version = 1\n[[set]]\nname = 'bad'\ndescription = 'd'\ntask = 'binary'\nsource = 's'\npreprocessing = 'none'\n\
                [[set.file]]\npath = 'bad/t.svm'\nbytes = 24\nsha256 = 'a03d756a342f28a8737216b3f27242204e21493e58a5eb66f97597ddcb1c8e0e'\n\
                [[set.part]]\nname = 'all'\nfile = 'bad/t.svm'\nformat = 'libsvm'\nrows = 3\nfeatures = 3\n";
    let m = Manifest::parse(text).unwrap();
    let dir = temp_dir("bad");
    std::fs::create_dir_all(dir.join("bad")).unwrap();
    std::fs::write(dir.join("bad/t.svm"), bad).unwrap();
    let r = verify(&dir, m.entry("bad").unwrap());
    assert!(
        matches!(&r.files[0].status, FileStatus::ParseError { message } if message.contains(":3:")),
        "{r}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn copy_set(src: &Path, dst: &Path, files: &[&str]) {
    for f in files {
        let to = dst.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(f), &to).unwrap();
    }
}

#[test]
fn real_copy_ok_then_altered_then_missing() {
    let Some(src) = require_set("emotions") else {
        return;
    };
    let m = Manifest::embedded().unwrap();
    let entry = m.entry("emotions").unwrap();
    let dir = temp_dir("emotions");
    let files: Vec<&str> = entry.files.iter().map(|f| f.path.as_str()).collect();
    copy_set(&src, &dir, &files);
    let r = verify(&dir, entry);
    assert!(r.is_ok(), "{r}");

    // alter the label list: its checksum fails and the ARFF shapes cannot be checked
    let xml = dir.join("emotions/emotions.xml");
    let mut bytes = std::fs::read(&xml).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x20;
    std::fs::write(&xml, &bytes).unwrap();
    let r = verify(&dir, entry);
    let status = |p: &str| r.files.iter().find(|f| f.path == p).unwrap().status.clone();
    assert!(
        matches!(
            status("emotions/emotions.xml"),
            FileStatus::ChecksumMismatch { .. }
        ),
        "{r}"
    );
    assert!(
        matches!(
            status("emotions/emotions-train.arff"),
            FileStatus::NotChecked { .. }
        ),
        "{r}"
    );
    // loading with the altered list (`</labelS>`) is an error naming it; then it is restored
    let e = load_named(&dir, "emotions").unwrap_err();
    assert!(e.to_string().contains("emotions.xml:9"), "{e}");
    bytes[last] ^= 0x20;
    std::fs::write(&xml, &bytes).unwrap();

    // remove a data file: missing with its mirror; loading reports it without panicking
    std::fs::remove_file(dir.join("emotions/emotions-test.arff")).unwrap();
    let r = verify(&dir, entry);
    let st = r
        .files
        .iter()
        .find(|f| f.path == "emotions/emotions-test.arff")
        .unwrap();
    assert!(
        matches!(&st.status, FileStatus::Missing { mirror: Some(m), .. } if m.ends_with("emotions-test.arff")),
        "{r}"
    );
    let e = load_named(&dir, "emotions").unwrap_err();
    assert!(matches!(e, DataError::MissingFile { .. }), "{e}");
    assert!(e.to_string().contains("mulan.sourceforge.net"), "{e}");
    // a truncated data file loads as a shape error, never a panic
    let train = dir.join("emotions/emotions-train.arff");
    let text = std::fs::read_to_string(&train).unwrap();
    let cut: String = text
        .lines()
        .take(text.lines().count() - 5)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&train, cut).unwrap();
    let e = load_named_part(&dir, "emotions", "train", &NamedOptions::default()).unwrap_err();
    assert!(
        matches!(&e, DataError::ShapeMismatch { problems, .. } if problems[0].contains("rows: expected 391, got 386")),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_present_set_verifies() {
    let dir = crate::data_dir();
    let reports = verify_all(&dir).unwrap();
    let m = Manifest::embedded().unwrap();
    assert_eq!(reports.len(), m.sets.len());
    for r in reports {
        if r.files
            .iter()
            .all(|f| matches!(f.status, FileStatus::Missing { .. }))
            && require_set(&r.set).is_none()
        {
            continue;
        }
        assert!(r.is_ok(), "{r}");
    }
}

#[test]
fn names_not_obtained_and_unknown() {
    let dir = temp_dir("names");
    assert!(
        matches!(load_named(&dir, "seismic"), Err(DataError::NotObtained { sources, .. }) if sources[0].contains("libsvmtools"))
    );
    assert!(matches!(
        load_named(&dir, "no-such-set"),
        Err(DataError::UnknownSet { .. })
    ));
    assert!(matches!(
        load_named_part(&dir, "segment", "validation", &NamedOptions::default()),
        Err(DataError::UnknownPart { .. })
    ));
    assert!(matches!(
        load_named(&dir, "segment"),
        Err(DataError::MissingFile { .. })
    ));
    assert_eq!(resolve_data_dir(Some(Path::new("/x/y"))), Path::new("/x/y"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn manifest_checksums_match_the_shared_provenance() {
    // the sha256 in the manifest equal the ones recorded in each set's PROVENANCE.md
    let m = Manifest::embedded().unwrap();
    let dir = crate::data_dir();
    for s in &m.sets {
        let prov = dir.join(&s.name).join("PROVENANCE.md");
        let Ok(text) = std::fs::read_to_string(&prov) else {
            continue;
        };
        for f in &s.files {
            assert!(
                text.contains(&f.sha256),
                "{}: sha256 not in {}",
                f.path,
                prov.display()
            );
            let bytes = f.bytes.to_string();
            let with_commas: String = {
                let mut out = String::new();
                for (i, c) in bytes.chars().enumerate() {
                    if i > 0 && (bytes.len() - i) % 3 == 0 {
                        out.push(',');
                    }
                    out.push(c);
                }
                out
            };
            assert!(
                contains_number(&text, &with_commas) || contains_number(&text, &bytes),
                "{}: size {bytes} (or {with_commas}) not in PROVENANCE",
                f.path
            );
        }
    }
}

/// Whether `text` holds `number` as a whole token: not inside a longer number, word or hash.
fn contains_number(text: &str, number: &str) -> bool {
    let is_part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == ',');
    text.match_indices(number).any(|(i, _)| {
        !is_part(text[..i].chars().next_back()) && !is_part(text[i + number.len()..].chars().next())
    })
}

#[test]
fn sizes_are_matched_as_whole_numbers() {
    let table = "| a.arff | 539367 | 8f2159 |\n| b.xml | 7,707 | c889d |\n";
    assert!(contains_number(table, "539367"));
    assert!(contains_number(table, "7,707"));
    assert!(!contains_number(table, "889"), "inside a hash");
    assert!(!contains_number(table, "39367"), "inside a longer number");
    assert!(!contains_number(table, "707"), "part of 7,707");
}

/// The crate embeds its own copy of the manifest (so the packaged crate is self-contained); the
/// canonical file is the workspace's `datasets/manifest.toml`, and the two must not drift. In a
/// packaged copy of the crate (no workspace around it) there is nothing to compare.
#[test]
fn embedded_manifest_is_the_workspace_manifest() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let canonical = crate_dir.join("../../datasets/manifest.toml");
    if !crate_dir.join("../../Cargo.toml").is_file() {
        eprintln!("skipping: no workspace around {}", crate_dir.display());
        return;
    }
    let text = std::fs::read_to_string(&canonical).unwrap();
    assert!(
        text == Manifest::embedded_text(),
        "crates/gimc-data/manifest.toml differs from datasets/manifest.toml (the canonical one); \
         after editing datasets/manifest.toml run: cp datasets/manifest.toml crates/gimc-data/"
    );
}
