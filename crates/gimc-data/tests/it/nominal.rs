//! Nominal columns of the shared real data sets: genbase's `protein` accession is the one
//! identifier column (skipped without the data unless `GIMC_REQUIRE_DATA=1`).

use gimc_data::load_named;

use crate::require_set;

#[test]
fn genbase_protein_is_the_only_identifier_column() {
    let Some(dir) = require_set("genbase") else {
        return;
    };
    let set = load_named(&dir, "genbase").unwrap();
    let train = set.part("train").unwrap();
    assert_eq!((train.nrows(), train.ncols()), (463, 1186));
    // every feature is nominal: `protein` and the {YES,NO} motifs
    assert_eq!(train.nominal_columns, (0..1186).collect::<Vec<_>>());
    assert_eq!(train.feature_names[0], "protein");
    assert_eq!(train.identifier_columns(), vec![0]);
    // the motifs no training row has (or every row has) are constant; protein is not
    let constant = train.constant_columns();
    assert!(!constant.contains(&0));
    assert!(!constant.is_empty() && constant.len() < 1186);
    let x = train.features.to_dense();
    for j in 0..1186 {
        let one_value = (0..463).all(|i| x[(i, j)] == x[(0, j)]);
        assert_eq!(constant.contains(&j), one_value, "column {j}");
    }
    // the test part has protein as its identifier too; stacking both parts keeps it nominal
    // (one accession occurs in both files, so the stack has no identifier)
    let test = set.part("test").unwrap();
    assert_eq!(test.identifier_columns(), vec![0]);
    let both = gimc_data::Dataset::vstack("genbase", &[train, test]).unwrap();
    assert_eq!(both.nominal_columns.len(), 1186);
    assert!(both.identifier_columns().is_empty());
}
