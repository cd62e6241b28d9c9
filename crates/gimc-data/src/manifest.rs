//! The dataset manifest (DESIGN §6): `datasets/manifest.toml`, embedded in the crate, lists every
//! named set with its files (size, sha256, public source and the copy it came from), its parts
//! with the reader options and the expected shapes, the preprocessing conventions, and the sets
//! that were not obtained with where to get them.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;

use crate::{DataError, Result};

/// The manifest text. The canonical file is the workspace's `datasets/manifest.toml`; the crate
/// embeds its copy `crates/gimc-data/manifest.toml` so the packaged crate is self-contained (a
/// test checks that the two are identical).
const EMBEDDED: &str = include_str!("../manifest.toml");

/// The parsed manifest.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Manifest format version (1).
    pub version: u32,
    /// The named sets present in gimc's data collection.
    #[serde(rename = "set", default)]
    pub sets: Vec<SetEntry>,
    /// Sets the experiments would use but that were not obtained.
    #[serde(rename = "not_obtained", default)]
    pub not_obtained: Vec<NotObtained>,
}

/// One named set.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetEntry {
    /// Name, also the folder under the data directory.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// `multi-label`, `multi-class`, `binary`, `regression`.
    pub task: String,
    /// Public source (the data's home page).
    pub source: String,
    /// Reference to cite.
    #[serde(default)]
    pub citation: Option<String>,
    /// How `load_named` turns the files into data sets.
    pub preprocessing: String,
    /// Further remarks (quirks, overlaps).
    #[serde(default)]
    pub notes: Option<String>,
    /// Optional binning of a real-valued target into classes (abalone, wine quality).
    #[serde(default)]
    pub bins: Option<Bins>,
    /// The files.
    #[serde(rename = "file")]
    pub files: Vec<FileEntry>,
    /// The parts (train / test, red / white, …).
    #[serde(rename = "part")]
    pub parts: Vec<PartEntry>,
}

/// One file of a set.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// Path relative to the data directory, e.g. `bibtex/bibtex-train.arff`.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Lower-case hex sha256 of the file as stored.
    pub sha256: String,
    /// Direct download URL of the exact copy used (a pinned repository commit).
    #[serde(default)]
    pub mirror: Option<String>,
}

/// Reader of a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartFormat {
    /// Mulan ARFF with the labels of `labels_file`.
    MulanArff,
    /// Weka ARFF with a class attribute.
    WekaArff,
    /// LIBSVM / SVMlight.
    Libsvm,
    /// CSV.
    Csv,
    /// Extreme Classification Repository text.
    Xmc,
}

/// Binning of real-valued targets into classes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bins {
    /// Strictly increasing edges; class c holds values above exactly c edges.
    pub edges: Vec<f64>,
    /// Class names (one more than edges).
    pub names: Vec<String>,
}

/// One part of a set: a file read with given options, and its expected shape.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartEntry {
    /// Part name (`train`, `test`, `red`, `white`, `stratified`, `balanced`, `all`, `full`).
    pub name: String,
    /// The data file (a path listed in the set's files).
    pub file: String,
    /// Its format.
    pub format: PartFormat,
    /// Mulan: the XML label file.
    #[serde(default)]
    pub labels_file: Option<String>,
    /// Weka ARFF: the class attribute (default the last one).
    #[serde(default)]
    pub class: Option<String>,
    /// CSV: the target column by name.
    #[serde(default)]
    pub target: Option<String>,
    /// CSV / LIBSVM: `classes` or `values`.
    #[serde(default)]
    pub target_kind: Option<String>,
    /// CSV separator (default `,`).
    #[serde(default)]
    pub separator: Option<String>,
    /// CSV has a header line (default true).
    #[serde(default)]
    pub header: Option<bool>,
    /// CSV columns to drop, by name.
    #[serde(default)]
    pub drop: Vec<String>,
    /// CSV nominal encoding: `one-hot` (default) or `code`.
    #[serde(default)]
    pub nominal: Option<String>,
    /// LIBSVM: indices are 0-based.
    #[serde(default)]
    pub zero_based: bool,
    /// LIBSVM: number of feature columns.
    #[serde(default)]
    pub n_features: Option<usize>,
    /// Min-max scaling applied after reading: column name → [min, max].
    #[serde(default)]
    pub scale: BTreeMap<String, [f64; 2]>,
    /// Expected rows.
    pub rows: usize,
    /// Expected feature columns (after encoding and dropping).
    pub features: usize,
    /// Expected labels (multi-label).
    #[serde(default)]
    pub labels: Option<usize>,
    /// Expected classes (multi-class, unbinned).
    #[serde(default)]
    pub classes: Option<usize>,
    /// Expected stored feature entries (sparse parts).
    #[serde(default)]
    pub nnz: Option<usize>,
    /// Expected rows with no label (multi-label).
    #[serde(default)]
    pub rows_without_label: Option<usize>,
    /// Expected rows per class, in class order.
    #[serde(default)]
    pub class_counts: Option<Vec<usize>>,
}

/// A set listed as not obtained, with where to get it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotObtained {
    /// Name the tool accepts.
    pub name: String,
    /// What it is and why it matters.
    pub description: String,
    /// Public source URLs.
    pub sources: Vec<String>,
}

impl Manifest {
    /// The manifest embedded from `datasets/manifest.toml`.
    pub fn embedded() -> Result<Self> {
        Self::parse(EMBEDDED)
    }

    /// The text of the embedded manifest.
    pub fn embedded_text() -> &'static str {
        EMBEDDED
    }

    /// Parses and checks a manifest (every part's files are listed, names are unique).
    pub fn parse(text: &str) -> Result<Self> {
        let m: Self = toml::from_str(text).map_err(|e| DataError::Manifest(e.to_string()))?;
        m.check()?;
        Ok(m)
    }

    fn check(&self) -> Result<()> {
        let mut names = HashSet::new();
        for n in self
            .sets
            .iter()
            .map(|s| &s.name)
            .chain(self.not_obtained.iter().map(|s| &s.name))
        {
            if !names.insert(n.as_str()) {
                return Err(DataError::Manifest(format!("name {n:?} appears twice")));
            }
        }
        for s in &self.sets {
            let files: HashSet<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
            for f in &s.files {
                if f.sha256.len() != 64
                    || !f
                        .sha256
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                {
                    return Err(DataError::Manifest(format!("{}: bad sha256", f.path)));
                }
            }
            let mut parts = HashSet::new();
            for p in &s.parts {
                if !parts.insert(p.name.as_str()) {
                    return Err(DataError::Manifest(format!(
                        "{}: part {:?} twice",
                        s.name, p.name
                    )));
                }
                for f in std::iter::once(&p.file).chain(p.labels_file.iter()) {
                    if !files.contains(f.as_str()) {
                        return Err(DataError::Manifest(format!(
                            "{}/{}: file {f:?} is not listed",
                            s.name, p.name
                        )));
                    }
                }
                if p.format == PartFormat::MulanArff && p.labels_file.is_none() {
                    return Err(DataError::Manifest(format!(
                        "{}/{}: mulan-arff needs labels_file",
                        s.name, p.name
                    )));
                }
            }
            if let Some(b) = &s.bins
                && b.names.len() != b.edges.len() + 1
            {
                return Err(DataError::Manifest(format!(
                    "{}: bins need one more name than edges",
                    s.name
                )));
            }
        }
        Ok(())
    }

    /// The named set `name`, if present in the collection.
    pub fn entry(&self, name: &str) -> Option<&SetEntry> {
        self.sets.iter().find(|s| s.name == name)
    }

    /// The not-obtained set `name`, if listed.
    pub fn not_obtained(&self, name: &str) -> Option<&NotObtained> {
        self.not_obtained.iter().find(|s| s.name == name)
    }

    /// Names of the sets present in the collection.
    pub fn names(&self) -> Vec<&str> {
        self.sets.iter().map(|s| s.name.as_str()).collect()
    }

    /// The set `name`, or an error saying it is unknown or where to get it.
    pub fn require(&self, name: &str) -> Result<&SetEntry> {
        if let Some(e) = self.entry(name) {
            return Ok(e);
        }
        if let Some(n) = self.not_obtained(name) {
            return Err(DataError::NotObtained {
                name: name.to_string(),
                sources: n.sources.clone(),
            });
        }
        Err(DataError::UnknownSet {
            name: name.to_string(),
            known: self.names().iter().map(|s| s.to_string()).collect(),
        })
    }
}

impl SetEntry {
    /// The part `name`.
    pub fn part(&self, name: &str) -> Option<&PartEntry> {
        self.parts.iter().find(|p| p.name == name)
    }

    /// The file entry with path `path`.
    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.files.iter().find(|f| f.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_parses_and_lists_every_set() {
        let m = Manifest::embedded().unwrap();
        for name in [
            "bibtex",
            "delicious",
            "yeast",
            "emotions",
            "birds",
            "genbase",
            "flags",
            "mushrooms",
            "segment",
            "abalone",
            "winequality",
            "covtype",
            "abalone_scale",
        ] {
            assert!(m.entry(name).is_some(), "{name}");
        }
        for name in [
            "bibtex-xc",
            "delicious-xc",
            "covtype-full",
            "seismic",
            "segment-scale",
            "mediamill",
        ] {
            assert!(m.not_obtained(name).is_some(), "{name}");
            assert!(matches!(
                m.require(name),
                Err(DataError::NotObtained { .. })
            ));
        }
        assert!(matches!(
            m.require("nope"),
            Err(DataError::UnknownSet { .. })
        ));
    }

    #[test]
    fn rejects_bad_manifests() {
        assert!(Manifest::parse("version = 1\nbogus = 2\n").is_err());
        let dup = "version = 1\n[[not_obtained]]\nname='a'\ndescription=''\nsources=[]\n[[not_obtained]]\nname='a'\ndescription=''\nsources=[]\n";
        assert!(Manifest::parse(dup).is_err());
    }
}
