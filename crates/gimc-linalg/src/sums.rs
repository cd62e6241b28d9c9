//! Sums across the processes of a data-parallel computation. Every row-parallel method of the
//! workspace (the GIMC fast path, k-means) needs from its rows only sums (Gram matrices, cluster
//! sums, gradients, counts), so a fit on row shards is the fit on their union once those sums
//! are summed across the processes, and what follows (small dense solves, decisions) is
//! repeated by every process on identical numbers.
//!
//! This module defines the one operation they need, [`RowSums::sum`]; the command line
//! implements it with MPI (`gimc-cli`'s `mpi` feature), and [`OneProcess`] is the identity.

use std::fmt;

use faer::{Mat, MatMut};

/// Sums across the processes of a data-parallel fit.
pub trait RowSums: fmt::Debug {
    /// Replaces `buf` on every process by the elementwise sum of every process's `buf`. Every
    /// process must call it in the same order with the same length, and must receive bitwise
    /// the same result (e.g. reduce to one process, then broadcast), so that decisions taken on
    /// the sums agree.
    fn sum(&self, buf: &mut [f64]);

    /// Number of processes (1: the sums are the local values).
    fn processes(&self) -> usize;

    /// This process's index in 0..processes(); shards are in the order of these indices.
    fn rank(&self) -> usize;
}

/// A single process: every sum is the local value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OneProcess;

impl RowSums for OneProcess {
    fn sum(&self, _buf: &mut [f64]) {}

    fn processes(&self) -> usize {
        1
    }

    fn rank(&self) -> usize {
        0
    }
}

/// The [`OneProcess`] every single-process fit uses.
pub static ONE_PROCESS: OneProcess = OneProcess;

/// Threads standing in for processes: a group of `p` [`RowSums`], one per thread, whose
/// [`RowSums::sum`] waits for every member and returns the sum of their buffers in rank order
/// (so every member receives the same bits, as an MPI reduce-then-broadcast would). For
/// testing sharded code without MPI.
///
/// ```
/// use gimc_linalg::sums::{RowSums, ThreadSums};
/// let group = ThreadSums::group(2);
/// let got: Vec<f64> = std::thread::scope(|s| {
///     let handles: Vec<_> = group
///         .iter()
///         .map(|member| {
///             s.spawn(move || {
///                 let mut buf = [member.rank() as f64 + 1.0];
///                 member.sum(&mut buf);
///                 buf[0]
///             })
///         })
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(got, vec![3.0, 3.0]);
/// ```
#[derive(Debug)]
pub struct ThreadSums {
    rank: usize,
    shared: std::sync::Arc<ThreadGroup>,
}

#[derive(Debug)]
struct ThreadGroup {
    slots: std::sync::Mutex<Vec<Vec<f64>>>,
    barrier: std::sync::Barrier,
}

impl ThreadSums {
    /// The `p` members of one group (ranks 0..p); give each to its own thread.
    pub fn group(p: usize) -> Vec<ThreadSums> {
        let shared = std::sync::Arc::new(ThreadGroup {
            slots: std::sync::Mutex::new(vec![Vec::new(); p]),
            barrier: std::sync::Barrier::new(p),
        });
        (0..p)
            .map(|rank| ThreadSums {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Vec<f64>>> {
        // a member that panicked holding the lock leaves the data intact
        self.shared
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl RowSums for ThreadSums {
    fn sum(&self, buf: &mut [f64]) {
        self.slots()[self.rank] = buf.to_vec();
        self.shared.barrier.wait();
        {
            let slots = self.slots();
            for (i, v) in buf.iter_mut().enumerate() {
                *v = slots.iter().map(|s| s[i]).sum();
            }
        }
        // nobody overwrites a slot before every member has read them all
        self.shared.barrier.wait();
    }

    fn processes(&self) -> usize {
        self.slots().len()
    }

    fn rank(&self) -> usize {
        self.rank
    }
}

/// Entries summed per call when a matrix or a long slice is summed (bounds the copy buffer).
pub const SUM_CHUNK: usize = 1 << 22;

/// Sums a matrix across the processes in place, in chunks of whole columns (faer's columns may
/// be padded, so each chunk goes through a contiguous buffer). Nothing happens for one process.
pub fn sum_mat(sums: &dyn RowSums, m: &mut Mat<f64>) {
    sum_mat_mut(sums, m.as_mut());
}

/// [`sum_mat`] on a mutable view (e.g. the output of a linear operator).
pub fn sum_mat_mut(sums: &dyn RowSums, mut m: MatMut<'_, f64>) {
    if sums.processes() <= 1 || m.nrows() == 0 {
        return;
    }
    let rows = m.nrows();
    let cols_per_chunk = (SUM_CHUNK / rows).max(1);
    let mut buf = Vec::with_capacity(rows * cols_per_chunk.min(m.ncols()));
    let mut c0 = 0;
    while c0 < m.ncols() {
        let c1 = (c0 + cols_per_chunk).min(m.ncols());
        buf.clear();
        for j in c0..c1 {
            buf.extend(m.as_ref().col(j).iter().copied());
        }
        sums.sum(&mut buf);
        for (k, j) in (c0..c1).enumerate() {
            for (i, v) in m.as_mut().col_mut(j).iter_mut().enumerate() {
                *v = buf[k * rows + i];
            }
        }
        c0 = c1;
    }
}

/// Sums a slice across the processes in place, in chunks of at most [`SUM_CHUNK`] entries (so a
/// long vector never needs one message of its whole length). Nothing happens for one process.
pub fn sum_slice(sums: &dyn RowSums, v: &mut [f64]) {
    if sums.processes() <= 1 {
        return;
    }
    for chunk in v.chunks_mut(SUM_CHUNK) {
        sums.sum(chunk);
    }
}

/// Sums a scalar across the processes.
pub fn sum_scalar(sums: &dyn RowSums, x: f64) -> f64 {
    let mut buf = [x];
    sums.sum(&mut buf);
    buf[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Two pretend processes holding the same shard: every sum is twice the local value.
    #[derive(Debug, Default)]
    struct Doubling;

    impl RowSums for Doubling {
        fn sum(&self, buf: &mut [f64]) {
            for v in buf.iter_mut() {
                *v *= 2.0;
            }
        }
        fn processes(&self) -> usize {
            2
        }
        fn rank(&self) -> usize {
            0
        }
    }

    #[derive(Debug, Default)]
    struct Calls(RefCell<Vec<usize>>);

    impl RowSums for Calls {
        fn sum(&self, buf: &mut [f64]) {
            self.0.borrow_mut().push(buf.len());
        }
        fn processes(&self) -> usize {
            3
        }
        fn rank(&self) -> usize {
            0
        }
    }

    #[test]
    fn matrices_are_summed_in_column_chunks() {
        let mut m = Mat::from_fn(5, 3, |i, j| (i + 10 * j) as f64);
        let want = Mat::from_fn(5, 3, |i, j| 2.0 * (i + 10 * j) as f64);
        sum_mat(&Doubling, &mut m);
        assert_eq!(m, want);
        let calls = Calls::default();
        let mut big = Mat::<f64>::zeros(SUM_CHUNK / 2 + 1, 3);
        sum_mat(&calls, &mut big);
        // one column per call (two would exceed the chunk)
        assert_eq!(*calls.0.borrow(), vec![SUM_CHUNK / 2 + 1; 3]);
        assert_eq!(sum_scalar(&Doubling, 1.5), 3.0);
        let before = m.clone();
        sum_mat(&ONE_PROCESS, &mut m);
        assert_eq!(m, before);
    }
}
