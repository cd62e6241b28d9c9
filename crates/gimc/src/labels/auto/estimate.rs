//! The memory estimate of the search ([`estimate_auto`]).

use super::params::{AutoParams, LinearPart};

use gimc_linalg::memory::{MemoryEstimate, Tally};

use crate::error::Result;
use crate::labels::data::LabelData;
use crate::memory::PROCESS_BASE_BYTES;

/// The estimated peak memory of [`auto_fit`](crate::auto_fit): the data and its transformed
/// copies, the blocks of every transform's widest union on every fold (training and validation
/// features) with the block that stage 1 scores beside them, the widest Gram matrix (or dual
/// kernel, when a union is wider than the rows) and its factor on every fold of every transform
/// searched at once (as many as the thread pool runs side by side), and the gradient buffers of
/// the map learning's runs at once (one per thread).
pub fn estimate_auto(data: &LabelData, params: &AutoParams) -> Result<MemoryEstimate> {
    let n = data.nrows();
    let d = data.features().ncols();
    let l = data.n_labels();
    let n_val = ((n as f64) * params.validation_fraction).round() as usize;
    let map_dim = params
        .families
        .len()
        .saturating_mul(params.m.saturating_mul(2));
    let lin = if params.linear == LinearPart::Auto && d <= params.linear_max_dim {
        d
    } else {
        0
    };
    let width = map_dim.saturating_add(lin);
    // stage 1 holds the best block of each kind and the one it scores (at most 2m wide)
    let held = width.saturating_add(params.m.saturating_mul(2));
    let x = crate::memory::feature_bytes(data.features());
    // every fold keeps its blocks (n rows: its training and validation parts) and their Grams
    let folds = if n <= params.cv_max_rows {
        params.cv_folds.max(1)
    } else {
        1
    };
    // a union wider than the rows is solved in the dual form (n × n)
    let side = width.min(n);
    let threads = rayon::current_num_threads().max(1);
    let concurrent = params.transforms.len().clamp(1, threads);
    let mut t = Tally::new("fit", "m");
    t.bytes("process", PROCESS_BASE_BYTES)
        .bytes("X, its transformed and split copies", x.saturating_mul(4))
        // the constant-column scan (count, first value, flag) and the column lists it returns
        .bytes(
            format!("per-column statistics of {d} columns"),
            (d as u64).saturating_mul(COLUMN_STAT_BYTES),
        )
        .lowered_by("the number of feature columns")
        .f64s(
            "map parameters (Fourier directions, Nyström landmarks)",
            d,
            map_dim,
        )
        .f64s(
            "block features of every transform and fold (train, validation)",
            n.saturating_mul(folds),
            held.saturating_mul(params.transforms.len().max(1)),
        )
        // the transforms are searched side by side, each with its own Gram matrix and factor
        .f64s(
            &format!("Gram matrices and factors, {concurrent} transform(s) at once"),
            side,
            side.saturating_mul(3)
                .saturating_mul(concurrent)
                .saturating_mul(folds),
        )
        .f64s("block cross products and W", width, l.saturating_mul(3))
        // the learning runs of a round go side by side, one per thread
        .f64s(
            &format!("map gradient buffers, {threads} learning run(s) at once"),
            n.saturating_sub(n_val),
            params.m.saturating_mul(4).saturating_mul(threads),
        );
    Ok(t.finish())
}

/// Bytes per input column of the column analysis of [`auto_fit`]: a count, a first value and a
/// flag per column (`FeatureMatrix::constant_columns`), the constant and kept column lists,
/// and the tf-idf weights.
pub(super) const COLUMN_STAT_BYTES: u64 = 8 + 8 + 1 + 8 + 8 + 8;
