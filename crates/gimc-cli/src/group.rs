//! The processes a subcommand runs on ([`Group`]): this process alone, or, with `--mpi` (cargo
//! feature `mpi`), every process of an `mpirun` job. `gimc fit`, `gimc cluster` and `gimc
//! complete` take the group and run the same code on either; on a distributed group:
//!
//! - **Shards.** [`load_rows`]: an XC-format file (`gimc data synth xmc`, the Extreme
//!   Classification Repository's text files) is cut into N byte ranges and each process parses
//!   only its own ([`gimc_data::read_xmc_shard`]). A path containing `{rank}` names one file
//!   per process. Any other input (a named set, ARFF, LIBSVM, …) is read whole by every
//!   process, which keeps its contiguous N-th of the rows (the computation is sharded, the
//!   reading is not).
//! - **Sums.** Every row sum of a fit is summed across the group ([`gimc::RowSums::sum`]):
//!   reduced to process 0 and broadcast back, so every process holds bitwise the same sums and
//!   takes the same decisions. For one process a sum is the local value.
//! - **Lead.** Process 0 writes the outputs and prints the summary ([`Group::lead`]).
//! - **Errors.** A process that fails aborts the whole job (`MPI_Abort`) after printing its
//!   error, so no process waits forever in a collective call.

use std::path::Path;

use anyhow::{Result, bail};
use gimc::labels::{OneProcess, RowSums};
use gimc_data::Dataset;
use gimc_linalg::{RowNorm, Standardizer};

use crate::common::{Normalize, Standardize, load_target, normalize, standardize};
use crate::globals::Globals;

/// The processes a subcommand runs on; [`RowSums::sum`] sums across them.
pub trait Group: RowSums {
    /// Whether the command runs data-parallel (`--mpi`, even on one MPI process): every
    /// process holds a shard of the rows, and process 0 writes the outputs.
    fn distributed(&self) -> bool;

    /// Whether this process writes the outputs and the summary (process 0).
    fn lead(&self) -> bool {
        self.rank() == 0
    }
}

impl Group for OneProcess {
    fn distributed(&self) -> bool {
        false
    }
}

#[cfg(feature = "mpi")]
pub use world::run as run_mpi;

/// Every process of `MPI_COMM_WORLD`.
#[cfg(feature = "mpi")]
mod world {
    use anyhow::{Context, Result};
    use mpi::collective::SystemOperation;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;

    use super::Group;

    /// Sums across the processes of `MPI_COMM_WORLD`: reduce to process 0, then broadcast, so
    /// every process receives the same bits (an all-reduce need not guarantee that).
    struct World<'c> {
        world: &'c SimpleCommunicator,
    }

    impl std::fmt::Debug for World<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "World({} processes)", self.world.size())
        }
    }

    impl gimc::labels::RowSums for World<'_> {
        fn sum(&self, buf: &mut [f64]) {
            let root = self.world.process_at_rank(0);
            if self.world.rank() == 0 {
                let mut total = vec![0.0; buf.len()];
                root.reduce_into_root(buf, &mut total[..], SystemOperation::sum());
                buf.copy_from_slice(&total);
            } else {
                root.reduce_into(buf, SystemOperation::sum());
            }
            root.broadcast_into(buf);
        }

        fn processes(&self) -> usize {
            self.world.size() as usize
        }

        fn rank(&self) -> usize {
            self.world.rank() as usize
        }

        /// A non-blocking barrier tested every few milliseconds: an MPI library's blocking
        /// wait would spin a core that the working process needs.
        fn wait_for_all(&self) {
            let mut request = self.world.immediate_barrier();
            loop {
                match request.test() {
                    Ok(_) => return,
                    Err(pending) => {
                        request = pending;
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
            }
        }
    }

    impl Group for World<'_> {
        fn distributed(&self) -> bool {
            true
        }
    }

    /// Initialises MPI and runs `job` on `MPI_COMM_WORLD`; an error is printed and aborts
    /// every process, so no process waits forever in a collective call.
    pub fn run(job: impl FnOnce(&dyn Group) -> Result<()>) -> Result<()> {
        let universe = mpi::initialize().context("MPI could not be initialised")?;
        let world = universe.world();
        match job(&World { world: &world }) {
            Ok(()) => Ok(()),
            #[allow(clippy::print_stderr)]
            Err(e) => {
                // the error must be seen before MPI_Abort ends every process
                eprintln!(
                    "gimc (process {} of {}): error: {e:#}",
                    world.rank(),
                    world.size()
                );
                world.abort(1)
            }
        }
    }
}

/// This process's rows of the data argument `target` (a file or a set name) and, when the
/// source says, the row count of the whole. One process loads it whole ([`load_target`]); on
/// a distributed group each process reads a byte range of an XC-format file, the file named
/// with `{rank}` replaced, or else the contiguous `rank`-th of `size` blocks of the whole set.
pub fn load_rows(
    target: Option<&str>,
    part: &str,
    g: &Globals,
    group: &dyn Group,
) -> Result<(Dataset, Option<usize>)> {
    if !group.distributed() {
        return Ok((load_target(target, part, g)?, None));
    }
    let target = target.ok_or_else(|| anyhow::anyhow!("missing the data argument"))?;
    let (rank, size) = (group.rank(), group.processes());
    let (ds, header_rows) = if target.contains("{rank}") {
        let path = target.replace("{rank}", &rank.to_string());
        (load_target(Some(&path), part, g)?, None)
    } else if Path::new(target).is_file()
        && !target.ends_with(".gz")
        && matches!(
            gimc_data::guess_format(Path::new(target)),
            Ok(gimc_data::Format::Xmc)
        )
    {
        let (ds, n) = gimc_data::read_xmc_shard(Path::new(target), rank, size)?;
        (ds, Some(n))
    } else {
        let whole = load_target(Some(target), part, g)?;
        let n = whole.nrows();
        let rows: Vec<usize> = (n * rank / size..n * (rank + 1) / size).collect();
        if rows.is_empty() {
            bail!("{n} rows cannot be shared by {size} processes");
        }
        (whole.select_rows(&rows)?, Some(n))
    };
    if ds.nrows() == 0 {
        bail!("process {rank} received no rows (fewer rows than processes?)");
    }
    Ok((ds, header_rows))
}

/// Applies `--standardize` and then `--normalize` to the rows in place and returns the
/// transforms. A distributed group refuses to standardise dense features: the column
/// statistics would be a shard's.
pub fn prepare_rows(
    group: &dyn Group,
    ds: &mut Dataset,
    standardize_mode: Standardize,
    normalize_mode: Normalize,
) -> Result<(Option<Standardizer>, RowNorm)> {
    let standardizer = if group.distributed() {
        if standardize_mode == Standardize::On
            || (!ds.features.is_sparse() && standardize_mode == Standardize::Auto)
        {
            bail!(
                "--mpi does not standardise dense features (the column statistics would be a \
                 shard's): pass --standardize off, or standardise the data beforehand"
            );
        }
        None
    } else {
        standardize(ds, standardize_mode)?
    };
    Ok((standardizer, normalize(ds, normalize_mode)))
}

/// Where this process's rows stand in the whole, in rank order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Rows of every process together.
    pub rows: usize,
    /// The index in the whole of this process's first row.
    pub offset: usize,
}

impl Layout {
    /// The whole's row indices this process holds.
    pub fn block(&self, local_rows: usize) -> std::ops::Range<usize> {
        self.offset..self.offset + local_rows
    }
}

/// This process's shard as [`layout`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct LocalShard<'a> {
    /// The rows this process holds.
    pub rows: usize,
    /// Its widths (feature and label counts), which every process must share.
    pub widths: &'a [usize],
    /// The whole's row count, when the source announced one.
    pub announced: Option<usize>,
}

/// The layout of the group's shards from every process's row count (`shard.rows` here),
/// checking that every process has this process's `shard.widths` (`disagree` words the error)
/// and, when the source announced one, the whole's row count.
pub fn layout(
    group: &dyn Group,
    shard: LocalShard<'_>,
    disagree: impl FnOnce() -> String,
) -> Result<Layout> {
    let LocalShard {
        rows,
        widths,
        announced,
    } = shard;
    let (rank, size) = (group.rank(), group.processes());
    let mut counts = vec![0.0; size + widths.len()];
    counts[rank] = rows as f64;
    for (slot, &w) in counts[size..].iter_mut().zip(widths) {
        *slot = w as f64;
    }
    group.sum(&mut counts);
    if counts[size..]
        .iter()
        .zip(widths)
        .any(|(&sum, &w)| sum != w as f64 * size as f64)
    {
        bail!("{}", disagree());
    }
    let total = counts[..size].iter().sum::<f64>() as usize;
    let offset = counts[..rank].iter().sum::<f64>() as usize;
    if let Some(n) = announced
        && n != total
    {
        bail!("the shards hold {total} rows, the file announces {n}");
    }
    Ok(Layout {
        rows: total,
        offset,
    })
}

#[cfg(test)]
mod tests {
    use gimc_linalg::sums::ThreadSums;

    use super::*;

    /// Threads standing in for processes, as a distributed group.
    #[derive(Debug)]
    struct Threads<'a>(&'a ThreadSums);

    impl RowSums for Threads<'_> {
        fn sum(&self, buf: &mut [f64]) {
            self.0.sum(buf);
        }
        fn processes(&self) -> usize {
            self.0.processes()
        }
        fn rank(&self) -> usize {
            self.0.rank()
        }
    }

    impl Group for Threads<'_> {
        fn distributed(&self) -> bool {
            true
        }
    }

    /// Runs `f` on each member of a group of `p` threads, returning the results in rank order.
    fn on_threads<T: Send>(p: usize, f: impl Fn(&dyn Group) -> T + Sync) -> Vec<T> {
        ThreadSums::on_threads(p, |member| f(&Threads(member)))
    }

    #[test]
    fn layout_places_each_shard_after_the_lower_ranks() {
        let got = on_threads(3, |group| {
            let rows = [4, 0, 7][group.rank()];
            layout(
                group,
                LocalShard {
                    rows,
                    widths: &[5, 2],
                    announced: Some(11),
                },
                String::new,
            )
            .unwrap()
        });
        let offsets: Vec<usize> = got.iter().map(|l| l.offset).collect();
        assert_eq!(offsets, vec![0, 4, 4]);
        assert!(got.iter().all(|l| l.rows == 11));
        assert_eq!(got[2].block(7), 4..11);
    }

    #[test]
    fn layout_refuses_disagreeing_widths_and_a_wrong_announced_count() {
        let got = on_threads(2, |group| {
            let width = 3 + group.rank();
            layout(
                group,
                LocalShard {
                    rows: 2,
                    widths: &[width],
                    announced: None,
                },
                || format!("width {width}"),
            )
            .unwrap_err()
            .to_string()
        });
        assert_eq!(got, vec!["width 3".to_string(), "width 4".to_string()]);
        let err = layout(
            &OneProcess,
            LocalShard {
                rows: 5,
                widths: &[1],
                announced: Some(6),
            },
            String::new,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the shards hold 5 rows, the file announces 6"
        );
        let one = layout(
            &OneProcess,
            LocalShard {
                rows: 5,
                widths: &[1],
                announced: Some(5),
            },
            String::new,
        )
        .unwrap();
        assert_eq!(one, Layout { rows: 5, offset: 0 });
    }
}
