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

    /// Returns once every process has called it. A process may wait here long while another
    /// works alone (process 0's search in `auto`), so an implementation should wait without
    /// keeping a core busy. The default returns at once: the next [`RowSums::sum`] waits
    /// anyway.
    fn wait_for_all(&self) {}
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
/// let got = ThreadSums::on_threads(2, |member| {
///     let mut buf = [member.rank() as f64 + 1.0];
///     member.sum(&mut buf);
///     buf[0]
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

    /// Runs `f` on each member of a group of `p`, every member on its own thread, and returns
    /// the results in rank order (a member's panic is raised again here).
    pub fn on_threads<T: Send>(p: usize, f: impl Fn(&ThreadSums) -> T + Sync) -> Vec<T> {
        let group = Self::group(p);
        std::thread::scope(|s| {
            let f = &f;
            let handles: Vec<_> = group
                .iter()
                .map(|member| s.spawn(move || f(member)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
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

/// Σ_i f(i) over `0..len` as `N` running sums, in parallel with the same bits on every run
/// and thread count: `0..len` is cut into fixed chunks of `chunk` indices, each chunk summed in
/// index order (`chunk_sum` gets its range and returns its `N` sums), and the chunks' sums then
/// added in chunk order. A rayon `sum` or `reduce` associates the terms by how the work
/// happened to be split and stolen, so its last bits vary from run to run. With
/// `len <= chunk` this is the plain sequential sum.
///
/// ```
/// use gimc_linalg::sums::fixed_order_sum;
/// let v: Vec<f64> = (0..10_000).map(|i| 1.0 / (1.0 + i as f64)).collect();
/// let [s, sq] = fixed_order_sum(v.len(), 1000, |r| {
///     v[r].iter().fold([0.0, 0.0], |[a, b], x| [a + x, b + x * x])
/// });
/// assert!((s - v.iter().sum::<f64>()).abs() < 1e-12);
/// assert!(sq > 1.64 && sq < 1.65);
/// ```
pub fn fixed_order_sum<const N: usize>(
    len: usize,
    chunk: usize,
    chunk_sum: impl Fn(std::ops::Range<usize>) -> [f64; N] + Sync,
) -> [f64; N] {
    use rayon::prelude::*;
    let chunk = chunk.max(1);
    let partials: Vec<[f64; N]> = (0..len.div_ceil(chunk))
        .into_par_iter()
        .map(|c| chunk_sum(c * chunk..((c + 1) * chunk).min(len)))
        .collect();
    partials.iter().fold([0.0; N], |mut acc, part| {
        for (a, p) in acc.iter_mut().zip(part) {
            *a += p;
        }
        acc
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn fixed_order_sums_do_not_depend_on_the_threads() {
        // terms of mixed magnitude, so that another association would change the last bits
        let v: Vec<f64> = (0..100_003_usize)
            .map(|i| ((i * 7919) % 1000) as f64 * 10f64.powi((i % 17) as i32 - 8))
            .collect();
        let sum = |threads: usize| {
            crate::dense::in_pool(threads, || {
                fixed_order_sum(v.len(), 4096, |r| [v[r].iter().sum::<f64>(), 1.0])
            })
            .unwrap()
        };
        let one = sum(1);
        for threads in [2, 3, 8] {
            for _ in 0..5 {
                assert_eq!(sum(threads).map(f64::to_bits), one.map(f64::to_bits));
            }
        }
        // the chunks' sums in chunk order, each from 0.0 in index order
        let by_hand = v
            .chunks(4096)
            .map(|c| c.iter().sum::<f64>())
            .fold(0.0, |a, b| a + b);
        assert_eq!(one[0].to_bits(), by_hand.to_bits());
        // another association of the same terms does change the last bits
        let other = fixed_order_sum(v.len(), 1000, |r| [v[r].iter().sum::<f64>()]);
        assert_ne!(other[0].to_bits(), one[0].to_bits());
        assert_eq!(one[1], 100_003usize.div_ceil(4096) as f64);
        // one chunk: the sequential sum; nothing: zeros
        let short = &v[..1000];
        assert_eq!(
            fixed_order_sum(short.len(), 4096, |r| [short[r].iter().sum::<f64>()])[0].to_bits(),
            short.iter().sum::<f64>().to_bits()
        );
        assert_eq!(fixed_order_sum(0, 4096, |_| [1.0, 1.0]), [0.0, 0.0]);
    }

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
