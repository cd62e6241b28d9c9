//! Data-parallel fits: every process holds a shard of the rows, and every quantity the fast path
//! needs from the rows is a sum (ΦᵀΦ, AᵀΦ, ‖A‖², the map gradient, the validation hits; see
//! [`crate::Storage`]), so a fit on shards is the fit on their union once those sums are summed
//! across the processes. What comes after the sums (the W-step, the objective, the line-search
//! and stopping decisions, the best-iterate choice) is small dense work that every process
//! repeats on identical numbers, so every process takes the same decisions.
//!
//! The library defines the one operation it needs, [`RowSums::sum`]; the command line
//! implements it with MPI (`gimc-cli`'s `mpi` feature), and [`OneProcess`] is the identity.

use std::fmt;

use gimc_linalg::faer::Mat;

/// Sums across the processes of a data-parallel fit.
pub trait RowSums: fmt::Debug {
    /// Replaces `buf` on every process by the elementwise sum of every process's `buf`. Every
    /// process must call it in the same order with the same length, and must receive bitwise
    /// the same result (e.g. reduce to one process, then broadcast), so that decisions taken on
    /// the sums agree.
    fn sum(&self, buf: &mut [f64]);

    /// Number of processes (1: the sums are the local values).
    fn processes(&self) -> usize;
}

/// A single process: every sum is the local value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OneProcess;

impl RowSums for OneProcess {
    fn sum(&self, _buf: &mut [f64]) {}

    fn processes(&self) -> usize {
        1
    }
}

/// The [`OneProcess`] every single-process fit uses.
pub(crate) static ONE_PROCESS: OneProcess = OneProcess;

/// Entries summed per call when a matrix is summed (bounds the copy buffer).
const SUM_CHUNK: usize = 1 << 22;

/// Sums a matrix across the processes in place, in chunks of whole columns (faer's columns may
/// be padded, so each chunk goes through a contiguous buffer). Nothing happens for one process.
pub(crate) fn sum_mat(sums: &dyn RowSums, m: &mut Mat<f64>) {
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
            buf.extend(m.col(j).iter().copied());
        }
        sums.sum(&mut buf);
        for (k, j) in (c0..c1).enumerate() {
            for (i, v) in m.col_mut(j).iter_mut().enumerate() {
                *v = buf[k * rows + i];
            }
        }
        c0 = c1;
    }
}

/// Sums a scalar across the processes.
pub(crate) fn sum_scalar(sums: &dyn RowSums, x: f64) -> f64 {
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
