//! `auto` on a data-parallel group ([`auto_fit_sharded`]): the search selects on a sample of
//! the rows that every process holds, and the refit runs on every shard with its row sums
//! summed across the processes.

use super::Prepared;
use super::params::ValidAutoParams;
use super::report::{AutoSelection, AutoStage, AutoTrial, BlockChoice};
use super::transform::RowTransform;
use std::time::Instant;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::memory::{MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::{child, seeded};
use gimc_linalg::sparse::AsSparseView;
use gimc_linalg::sprs::CsMat;
use gimc_linalg::sums::sum_slice;

use crate::error::{GimcError, Result, dim_err, input_err};
use crate::labels::auto::estimate_auto;
use crate::labels::data::{LabelData, Task};
use crate::labels::select::SelectionObserver;
use crate::labels::shard::RowSums;
use crate::memory::{PROCESS_BASE_BYTES, feature_bytes};
use crate::registry::MapRegistry;

/// The stages in the order [`encode`] numbers them.
const STAGES: [AutoStage; 3] = [AutoStage::Fixed, AutoStage::Combined, AutoStage::Learned];

/// The generator stream of the sample's draw (apart from the split's and the maps').
const SAMPLE_STREAM: u64 = 1 << 32;

/// [`auto_fit`](crate::auto_fit) on a data-parallel group: `shard` is this process's rows, and
/// `sums` sums across the processes ([`RowSums`]).
///
/// - **Sample.** [`AutoParams::sample_rows`](crate::AutoParams::sample_rows) rows are drawn at
///   random from the whole (every row when there are no more) and gathered on every process,
///   in the order of the whole. The draw depends on the seed and the row count alone, not on
///   how the rows are shared, and a whole of at most that many rows is the sample itself.
/// - **Selection.** Process 0 runs the search on the sample (stages 1 to 3 of
///   [`auto_fit`](crate::auto_fit)) on its thread pool while the others wait
///   ([`RowSums::wait_for_all`]), and hands the chosen setting to them; its
///   [`AutoSelection::trials`] are every setting scored (empty on the other processes).
/// - **Refit.** On every shard: the transform is fitted, the columns kept and the maps drawn on
///   the sample, and the maps' learning, ΦᵀΦ, ΦᵀA and the blocks' penalty scales are sums over
///   every shard. Every process returns the same model.
///
/// A whole of at most `sample_rows` rows thus chooses what [`auto_fit`](crate::auto_fit) on it
/// chooses, and refits the same model up to the order of the sums. Every process must call
/// this with the same parameters; the shards must agree on the feature and label counts and
/// the task.
///
/// ```
/// use gimc::labels::OneProcess;
/// use gimc::{AutoParams, LabelData, MapRegistry, NoObserver, auto_fit, auto_fit_sharded};
/// use gimc_linalg::FeatureMatrix;
/// use gimc_linalg::faer::Mat;
/// use gimc_linalg::sprs::TriMat;
///
/// let x = Mat::from_fn(60, 3, |i, j| ((i * 7 + j * 5) % 11) as f64 - 5.0);
/// let mut y = TriMat::new((60, 2));
/// for i in 0..60 {
///     y.add_triplet(i, usize::from(x[(i, 0)] <= 0.0), 1.0);
/// }
/// let data = LabelData::multi_label(FeatureMatrix::dense(x).unwrap(), y.to_csr()).unwrap();
/// let params = AutoParams::default().with_m(8).with_max_iter(2).check().unwrap();
/// let registry = MapRegistry::builtin();
/// // one process holding every row: the sample is the whole, and the fit is auto_fit's
/// let one = auto_fit_sharded(&data, &registry, &params, &mut NoObserver, &OneProcess).unwrap();
/// let whole = auto_fit(&data, &registry, &params, &mut NoObserver).unwrap();
/// assert_eq!(one.chosen, whole.chosen);
/// assert_eq!(one.model.w(), whole.model.w());
/// ```
pub fn auto_fit_sharded<S: SelectionObserver + ?Sized>(
    shard: &LabelData,
    registry: &MapRegistry,
    params: &ValidAutoParams,
    observer: &mut S,
    sums: &dyn RowSums,
) -> Result<AutoSelection> {
    let started = Instant::now();
    let sample = gather_sample(shard, params, sums)?;
    let mut prepared = Prepared::new(&sample, registry, params)?;
    let outcome = if sums.rank() == 0 {
        check_fits(&estimate_auto(&sample, params)?, params.memory)
            .map_err(GimcError::from)
            .and_then(|()| prepared.select(observer))
    } else {
        Err(GimcError::Empty("chosen setting"))
    };
    // the other processes wait for process 0's search without keeping a core busy
    sums.wait_for_all();
    let outcome = share_choice(outcome, &prepared, sums)?;
    check_everywhere(
        &estimate_refit(shard, &outcome.0, &prepared),
        params,
        sums,
        "the refit of its shard (use more processes)",
    )?;
    let local = match &prepared.columns {
        Some(kept) => shard.with_features(shard.features().select_columns(kept)?)?,
        None => shard.clone(),
    };
    prepared.finish(Some(&local), outcome, started, observer, sums)
}

/// Checks `estimate` against this process's memory, and stops every process with an error when
/// any process's check fails (every process must call it; `what` words the others' error).
fn check_everywhere(
    estimate: &MemoryEstimate,
    params: &ValidAutoParams,
    sums: &dyn RowSums,
    what: &str,
) -> Result<()> {
    let fits = check_fits(estimate, params.memory);
    let mut over = [f64::from(u8::from(fits.is_err()))];
    sums.sum(&mut over);
    if over[0] == 0.0 {
        return Ok(());
    }
    Err(match fits {
        Err(e) => e.into(),
        Ok(()) => input_err(
            "shards",
            format!("another process's memory would not hold {what}"),
        ),
    })
}

/// The refit's peak memory on this process's `shard`: the rows and their transformed and
/// narrowed copies, the chosen blocks' features on the rows (2m columns counted for every map),
/// the union's Gram matrix, its factor and its sum's copy, ΦᵀA and W.
fn estimate_refit(
    shard: &LabelData,
    chosen: &AutoTrial,
    prepared: &Prepared<'_>,
) -> MemoryEstimate {
    let (n, d) = (shard.nrows(), shard.features().ncols());
    let search = &prepared.search;
    let width: usize = 1 + chosen
        .blocks
        .iter()
        .map(
            |b| match search.families.iter().position(|f| f.name() == b.name) {
                Some(f) => 2 * search.sizes[f],
                None => d,
            },
        )
        .sum::<usize>();
    let mut t = Tally::new("auto refit on this process's rows", "rows per process");
    t.bytes("process", PROCESS_BASE_BYTES)
        .bytes(
            "the rows and their transformed and narrowed copies",
            feature_bytes(shard.features()).saturating_mul(3),
        )
        .f64s("the chosen blocks' features", n, width)
        .f64s(
            "Gram matrix, factor and sum",
            width,
            width.saturating_mul(3),
        )
        .f64s(
            "block cross products and W",
            width,
            shard.n_labels().saturating_mul(2),
        );
    t.finish()
}

/// The search's sample on every process: `params.sample_rows` rows of the whole drawn at random
/// (every row when there are no more), gathered in the order of the whole.
fn gather_sample(
    shard: &LabelData,
    params: &ValidAutoParams,
    sums: &dyn RowSums,
) -> Result<LabelData> {
    let (p, rank) = (sums.processes(), sums.rank());
    let task = shard.task();
    // every process's rows, then the widths and task every process must share
    let mut head = vec![0.0; p + 4];
    head[rank] = shard.nrows() as f64;
    let shape = [
        shard.features().ncols() as f64,
        shard.n_labels() as f64,
        f64::from(u8::from(task == Task::MultiClass)),
        f64::from(u8::from(shard.features().is_sparse())),
    ];
    head[p..].copy_from_slice(&shape);
    sums.sum(&mut head);
    if head[p..]
        .iter()
        .zip(&shape)
        .any(|(&s, &v)| s != v * p as f64)
    {
        return Err(dim_err(
            "shards",
            "the same features, labels, task and storage on every process".to_string(),
            format!(
                "{} features and {} labels ({}, {}) on process {rank}",
                shape[0],
                shape[1],
                task.name(),
                if shape[3] > 0.0 { "sparse" } else { "dense" }
            ),
        ));
    }
    let total = head[..p].iter().sum::<f64>() as usize;
    let offset = head[..rank].iter().sum::<f64>() as usize;
    let mut picks: Vec<usize> = if total <= params.sample_rows {
        (0..total).collect()
    } else {
        let mut rng = child(&seeded(params.seed), SAMPLE_STREAM);
        rand::seq::index::sample(&mut rng, total, params.sample_rows).into_vec()
    };
    picks.sort_unstable();
    let local: Vec<usize> = picks
        .iter()
        .filter(|&&i| i >= offset && i < offset + shard.nrows())
        .map(|&i| i - offset)
        .collect();
    gather(shard, &local, params, sums)
}

/// The rows `rows` of every process's `shard` stacked in rank order, on every process (each
/// process writes its rows at their offset in zeroed buffers, and the buffers are summed),
/// once every process has checked that it holds them ([`AutoParams::sample_rows`](crate::AutoParams::sample_rows) bounds them).
fn gather(
    shard: &LabelData,
    rows: &[usize],
    params: &ValidAutoParams,
    sums: &dyn RowSums,
) -> Result<LabelData> {
    let (p, rank) = (sums.processes(), sums.rank());
    let features = shard.features();
    let labels = shard.labels().view();
    let d = features.ncols();
    // rows, feature entries and label entries of every process
    let mut sizes = vec![0.0; 3 * p];
    sizes[3 * rank] = rows.len() as f64;
    sizes[3 * rank + 1] = match features {
        FeatureMatrix::Dense(_) => 0.0,
        FeatureMatrix::Sparse(m) => {
            let m = m.sparse_view();
            rows.iter()
                .map(|&i| m.outer_view(i).map_or(0, |r| r.nnz()))
                .sum::<usize>() as f64
        }
    };
    sizes[3 * rank + 2] = rows
        .iter()
        .map(|&i| labels.outer_view(i).map_or(0, |r| r.nnz()))
        .sum::<usize>() as f64;
    sums.sum(&mut sizes);
    let before = |k: usize| -> usize { (0..rank).map(|r| sizes[3 * r + k] as usize).sum() };
    let all = |k: usize| -> usize { (0..p).map(|r| sizes[3 * r + k] as usize).sum() };
    let (row0, n) = (before(0), all(0));
    // the buffers and the sample itself (twice each, while one becomes the other)
    let entries = match features {
        FeatureMatrix::Dense(_) => n.saturating_mul(d),
        FeatureMatrix::Sparse(_) => n.saturating_add(all(1).saturating_mul(2)),
    };
    let mut t = Tally::new("auto's sample on every process", "sample_rows");
    t.f64s("the sample's features", entries, 2).f64s(
        "the sample's labels",
        n.saturating_add(all(2).saturating_mul(2)),
        2,
    );
    check_everywhere(&t.finish(), params, sums, "the search's sample")?;
    let gathered = match features {
        FeatureMatrix::Dense(m) => {
            let mut buf = vec![0.0; n * d];
            for (k, &i) in rows.iter().enumerate() {
                for j in 0..d {
                    buf[(row0 + k) * d + j] = m[(i, j)];
                }
            }
            sum_slice(sums, &mut buf);
            FeatureMatrix::dense(Mat::from_fn(n, d, |i, j| buf[i * d + j]))?
        }
        FeatureMatrix::Sparse(m) => {
            let at = (row0, n, before(1), all(1));
            let (indptr, indices, data) = gather_csr(m.sparse_view(), rows, at, sums);
            FeatureMatrix::sparse(CsMat::new((n, d), indptr, indices, data))?
        }
    };
    let out = match shard.classes() {
        Some(classes) => {
            let mut buf = vec![0.0; n];
            for (k, &i) in rows.iter().enumerate() {
                buf[row0 + k] = classes[i] as f64;
            }
            sum_slice(sums, &mut buf);
            let classes: Vec<usize> = buf.iter().map(|&c| c as usize).collect();
            LabelData::multi_class(gathered, &classes, shard.n_labels())?
        }
        None => {
            let at = (row0, n, before(2), all(2));
            let (indptr, indices, data) = gather_csr(labels, rows, at, sums);
            let a = CsMat::new((n, shard.n_labels()), indptr, indices, data);
            LabelData::multi_label(gathered, a)?
        }
    };
    out.with_label_names(shard.label_names().to_vec())
}

/// The rows `rows` of every process's CSR matrix `m` stacked in rank order; `at`: this
/// process's first row and entry in the whole, and the whole's rows and entries.
fn gather_csr(
    m: gimc_linalg::sprs::CsMatView<'_, f64>,
    rows: &[usize],
    (row0, n, nnz0, nnz): (usize, usize, usize, usize),
    sums: &dyn RowSums,
) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let mut lengths = vec![0.0; n];
    let mut indices = vec![0.0; nnz];
    let mut values = vec![0.0; nnz];
    let mut at = nnz0;
    for (k, &i) in rows.iter().enumerate() {
        let Some(row) = m.outer_view(i) else { continue };
        lengths[row0 + k] = row.nnz() as f64;
        for (j, &v) in row.iter() {
            indices[at] = j as f64;
            values[at] = v;
            at += 1;
        }
    }
    sum_slice(sums, &mut lengths);
    sum_slice(sums, &mut indices);
    sum_slice(sums, &mut values);
    let mut indptr = Vec::with_capacity(n + 1);
    indptr.push(0);
    for len in lengths {
        indptr.push(indptr[indptr.len() - 1] + len as usize);
    }
    (
        indptr,
        indices.into_iter().map(|j| j as usize).collect(),
        values,
    )
}

/// Process 0's outcome of the selection on every process: the chosen setting (every process)
/// and the trials (process 0's; empty elsewhere). A failure of process 0 is an error on every
/// process.
fn share_choice(
    outcome: Result<(AutoTrial, Vec<AutoTrial>)>,
    prepared: &Prepared<'_>,
    sums: &dyn RowSums,
) -> Result<(AutoTrial, Vec<AutoTrial>)> {
    let lead = sums.rank() == 0;
    let blocks = match (&outcome, lead) {
        (Ok((chosen, _)), true) => chosen.blocks.len() as f64,
        _ => 0.0,
    };
    // whether process 0 has a choice, and its number of blocks
    let ok = f64::from(u8::from(lead && outcome.is_ok()));
    let head = {
        let mut h = [ok, blocks];
        sums.sum(&mut h);
        h
    };
    if head[0] == 0.0 {
        return match outcome {
            Err(e) if lead => Err(e),
            _ => Err(GimcError::Empty(
                "chosen setting (the search failed on process 0)",
            )),
        };
    }
    let nb = head[1] as usize;
    let mut buf = vec![0.0; 4 + 4 * nb];
    if lead && let Ok((chosen, _)) = &outcome {
        encode(chosen, prepared, &mut buf)?;
    }
    sum_slice(sums, &mut buf);
    let chosen = decode(&buf, prepared)?;
    let trials = match outcome {
        Ok((_, trials)) if lead => trials,
        _ => Vec::new(),
    };
    Ok((chosen, trials))
}

/// Stage, transform, λ and score, then each block's family (−1: the linear part), γ factor,
/// γ (NaN: none) and iterations.
fn encode(t: &AutoTrial, prepared: &Prepared<'_>, buf: &mut [f64]) -> Result<()> {
    let stage = STAGES.iter().position(|&s| s == t.stage).unwrap_or(0);
    let transform = RowTransform::ALL
        .iter()
        .position(|&x| x == t.transform)
        .unwrap_or(0);
    buf[..4].copy_from_slice(&[stage as f64, transform as f64, t.lambda, t.score]);
    for (b, slot) in t.blocks.iter().zip(buf[4..].chunks_mut(4)) {
        let family = if b.name == "linear" {
            -1.0
        } else {
            prepared
                .search
                .families
                .iter()
                .position(|f| f.name() == b.name)
                .ok_or(GimcError::Empty("the chosen block's family"))? as f64
        };
        slot.copy_from_slice(&[
            family,
            b.gamma_factor.unwrap_or(f64::NAN),
            b.gamma.unwrap_or(f64::NAN),
            b.iterations as f64,
        ]);
    }
    Ok(())
}

/// The setting [`encode`] wrote.
fn decode(buf: &[f64], prepared: &Prepared<'_>) -> Result<AutoTrial> {
    let stage = STAGES
        .get(buf[0] as usize)
        .copied()
        .unwrap_or(AutoStage::Fixed);
    let transform = RowTransform::ALL
        .get(buf[1] as usize)
        .copied()
        .unwrap_or(RowTransform::Raw);
    let some = |v: f64| (!v.is_nan()).then_some(v);
    let blocks = buf[4..]
        .chunks(4)
        .map(|b| {
            let name = if b[0] < 0.0 {
                "linear".to_string()
            } else {
                prepared
                    .search
                    .families
                    .get(b[0] as usize)
                    .ok_or(GimcError::Empty("the chosen block's family"))?
                    .name()
                    .to_string()
            };
            Ok(BlockChoice {
                name,
                gamma_factor: some(b[1]),
                gamma: some(b[2]),
                iterations: b[3] as usize,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(AutoTrial {
        stage,
        transform,
        blocks,
        lambda: buf[2],
        score: buf[3],
    })
}
