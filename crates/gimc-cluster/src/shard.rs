//! Row shards of a k-means fit ([`crate::fit_kmeans_sharded`]): each process holds a contiguous
//! block of the rows, in the order of the processes' ranks, and everything k-means needs from
//! the other processes' rows is a sum ([`RowSums`]): the row count, the column moments, the
//! seeding's potentials and D² totals, the cluster sums and counts, the inertia. Where the
//! single-process algorithm picks one row (a seeding candidate, the farthest point for an empty
//! cluster), every process proposes from its shard, the proposals are summed into one vector
//! with one slot per process, and every process applies the same rule to it.
//!
//! With one process every sum is the local value, so the sharded code is the single-process
//! algorithm, operation for operation.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::sums::{RowSums, sum_mat};

use crate::{ClusterError, Result};

/// Where this process's rows sit among everyone's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shard<'s> {
    pub(crate) sums: &'s dyn RowSums,
    /// Global index of this process's first row.
    pub(crate) offset: usize,
    /// Rows held here.
    pub(crate) local: usize,
    /// Rows over all processes.
    pub(crate) total: usize,
}

impl<'s> Shard<'s> {
    /// The layout of `local` rows on this process: the row counts of every process, summed.
    pub(crate) fn layout(sums: &'s dyn RowSums, local: usize) -> Result<Self> {
        let p = sums.processes();
        let rank = sums.rank();
        if rank >= p {
            return Err(ClusterError::InvalidParameter {
                name: "sums",
                reason: format!("rank {rank} is not below the {p} processes"),
            });
        }
        let mut counts = vec![0.0; p];
        counts[rank] = local as f64;
        sums.sum(&mut counts);
        let offset = counts[..rank].iter().sum::<f64>() as usize;
        let total = counts.iter().sum::<f64>() as usize;
        Ok(Self {
            sums,
            offset,
            local,
            total,
        })
    }

    /// The whole of one process's rows.
    pub(crate) fn single(sums: &'s dyn RowSums, rows: usize) -> Self {
        Self {
            sums,
            offset: 0,
            local: rows,
            total: rows,
        }
    }

    fn alone(&self) -> bool {
        self.sums.processes() <= 1
    }

    /// Sums one value across the processes.
    pub(crate) fn sum(&self, x: f64) -> f64 {
        let mut buf = [x];
        self.sums.sum(&mut buf);
        buf[0]
    }

    /// Sums a vector across the processes in place.
    pub(crate) fn sum_vec(&self, buf: &mut [f64]) {
        self.sums.sum(buf);
    }

    /// Sums a matrix across the processes in place.
    pub(crate) fn sum_mat(&self, m: &mut Mat<f64>) {
        sum_mat(self.sums, m);
    }

    /// One value per process (this one's at its rank), known to every process.
    pub(crate) fn per_process(&self, mine: &[f64]) -> Vec<Vec<f64>> {
        let (p, w) = (self.sums.processes(), mine.len());
        let mut buf = vec![0.0; p * w];
        buf[self.sums.rank() * w..][..w].copy_from_slice(mine);
        self.sums.sum(&mut buf);
        buf.chunks(w.max(1)).map(<[f64]>::to_vec).collect()
    }

    /// The rows with global indices `rows` (dense, in that order): each process fills the rows
    /// it holds and the copies are summed (exact: every entry has one non-zero term).
    pub(crate) fn gather_rows(&self, x: &FeatureMatrix, rows: &[usize]) -> Result<Mat<f64>> {
        if self.alone() {
            return Ok(x.select_rows(rows)?.to_dense());
        }
        let here: Vec<(usize, usize)> = rows
            .iter()
            .enumerate()
            .filter(|&(_, &g)| g >= self.offset && g < self.offset + self.local)
            .map(|(k, &g)| (k, g - self.offset))
            .collect();
        let local: Vec<usize> = here.iter().map(|&(_, i)| i).collect();
        let picked = x.select_rows(&local)?.to_dense();
        let mut out = Mat::<f64>::zeros(rows.len(), x.ncols());
        for (r, &(k, _)) in here.iter().enumerate() {
            for j in 0..x.ncols() {
                out[(k, j)] = picked[(r, j)];
            }
        }
        self.sum_mat(&mut out);
        Ok(out)
    }

    /// The global index of the last row whose value is positive, over every process.
    pub(crate) fn last_positive(&self, values: &[f64]) -> Option<usize> {
        let mine = values.iter().rposition(|&v| v > 0.0);
        if self.alone() {
            return mine;
        }
        let slot = mine.map_or(0.0, |i| (self.offset + i + 1) as f64);
        let all = self.per_process(&[slot]);
        all.iter()
            .map(|v| v[0] as usize)
            .max()
            .and_then(|m| m.checked_sub(1))
    }

    /// D² sampling on the global cumulative sum: the global index of the first row whose
    /// cumulative weight exceeds `u` (the total if none does), given this process's cumulative
    /// sums `cumsum` (starting from 0 at its first row) and every process's total `totals`.
    /// With one process: `cumsum.partition_point(|&c| c <= u)`.
    pub(crate) fn locate(&self, cumsum: &[f64], totals: &[f64], u: f64) -> usize {
        if self.alone() {
            return cumsum.partition_point(|&c| c <= u);
        }
        let mut before = 0.0;
        let mut owner = None;
        for (p, &t) in totals.iter().enumerate() {
            if before + t > u {
                owner = Some((p, before));
                break;
            }
            before += t;
        }
        let Some((p, before)) = owner else {
            return self.total;
        };
        let mut slot = [0.0];
        if p == self.sums.rank() {
            let i = cumsum.partition_point(|&c| c <= u - before);
            slot[0] = (self.offset + i) as f64;
        }
        self.sums.sum(&mut slot);
        slot[0] as usize
    }
}
