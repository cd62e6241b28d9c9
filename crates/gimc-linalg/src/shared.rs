//! Read-only buffers that are either owned or borrowed from memory another owner keeps alive
//! (a NumPy array behind the Python package), and the CSR type built on them.
//!
//! [`FeatureMatrix::Sparse`](crate::FeatureMatrix::Sparse) holds a [`Csr`], so sparse features
//! handed over by a foreign owner are used where they lie, without a copy: the Python bindings
//! wrap SciPy's `indptr` / `indices` / `data` arrays as [`ExternalSlice`]s. Matrices read from
//! files or built in Rust own their buffers ([`shared_csr`] moves an sprs `CsMat` in, without a
//! copy either).
//!
//! ```
//! use std::sync::Arc;
//! use gimc_linalg::shared::{ExternalSlice, SharedSlice, csr_from_parts};
//! use gimc_linalg::FeatureMatrix;
//!
//! // memory owned elsewhere (here a boxed slice; in the Python package, a NumPy array)
//! struct Foreign(Box<[f64]>);
//! impl ExternalSlice<f64> for Foreign {
//!     fn as_slice(&self) -> &[f64] {
//!         &self.0
//!     }
//! }
//! let data = SharedSlice::external(Arc::new(Foreign(vec![1.0, 2.0, 3.0].into())));
//! let ptr = data.as_ptr();
//! // the 2 × 3 matrix [[1, 0, 2], [0, 3, 0]]
//! let csr = csr_from_parts((2, 3), vec![0, 2, 3].into(), vec![0, 2, 1].into(), data)?;
//! let x = FeatureMatrix::sparse_shared(csr)?;
//! let FeatureMatrix::Sparse(m) = &x else { unreachable!() };
//! assert_eq!(m.data().as_ptr(), ptr); // the foreign buffer itself, not a copy
//! assert_eq!(x.row_sq_norms(), vec![5.0, 9.0]);
//! # Ok::<(), gimc_linalg::LinalgError>(())
//! ```

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use sprs::{CsMat, CsMatBase};

use crate::{LinalgError, Result};

/// Memory owned outside this crate, readable as a slice for as long as the value lives.
///
/// Implementors guarantee that `as_slice` returns the same, unchanging slice on every call.
pub trait ExternalSlice<T>: Send + Sync {
    /// The borrowed elements.
    fn as_slice(&self) -> &[T];
}

/// A read-only buffer: an owned `Vec`, or an [`ExternalSlice`] shared by reference count.
/// Cloning an external buffer shares it; cloning an owned one copies it.
pub struct SharedSlice<T>(Repr<T>);

enum Repr<T> {
    Owned(Vec<T>),
    External(Arc<dyn ExternalSlice<T>>),
}

impl<T> SharedSlice<T> {
    /// Wraps memory owned elsewhere, without copying it.
    pub fn external(buf: Arc<dyn ExternalSlice<T>>) -> Self {
        Self(Repr::External(buf))
    }

    /// Whether the elements live in memory owned elsewhere.
    pub fn is_external(&self) -> bool {
        matches!(self.0, Repr::External(_))
    }
}

impl<T> Deref for SharedSlice<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.0 {
            Repr::Owned(v) => v,
            Repr::External(e) => e.as_slice(),
        }
    }
}

impl<T> From<Vec<T>> for SharedSlice<T> {
    fn from(v: Vec<T>) -> Self {
        Self(Repr::Owned(v))
    }
}

impl<T: Clone> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        match &self.0 {
            Repr::Owned(v) => Self(Repr::Owned(v.clone())),
            Repr::External(e) => Self(Repr::External(Arc::clone(e))),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for SharedSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for SharedSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// The CSR storage of sparse features: an sprs matrix over [`SharedSlice`] buffers.
pub type Csr = CsMatBase<f64, usize, SharedSlice<usize>, SharedSlice<usize>, SharedSlice<f64>>;

/// An sprs matrix as a [`Csr`] (converted to CSR if it is CSC), moving its buffers in.
pub fn shared_csr(m: CsMat<f64>) -> Csr {
    let m = if m.is_csr() { m } else { m.to_csr() };
    let shape = m.shape();
    let (indptr, indices, data) = m.into_raw_storage();
    // the buffers of a valid CSR matrix: no check needed, none can fail
    Csr::new(shape, indptr.into(), indices.into(), data.into())
}

/// A [`Csr`] of `shape` (rows, columns) from its three buffers, checking the structure: `indptr`
/// of length rows + 1, non-decreasing from 0 to nnz; column indices below `shape.1`, sorted
/// and without duplicates within each row; as many values as indices.
pub fn csr_from_parts(
    shape: (usize, usize),
    indptr: SharedSlice<usize>,
    indices: SharedSlice<usize>,
    data: SharedSlice<f64>,
) -> Result<Csr> {
    Csr::try_new(shape, indptr, indices, data).map_err(|(_, _, _, e)| {
        LinalgError::InvalidParameter {
            name: "CSR matrix",
            reason: format!("{} x {}: {e}", shape.0, shape.1),
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::FeatureMatrix;
    use crate::rng::{gaussian_mat, seeded};
    use crate::sparse::dense_to_csr;

    struct Foreign<T>(Vec<T>);
    impl<T: Send + Sync> ExternalSlice<T> for Foreign<T> {
        fn as_slice(&self) -> &[T] {
            &self.0
        }
    }

    fn external<T: Send + Sync + 'static>(v: Vec<T>) -> SharedSlice<T> {
        SharedSlice::external(Arc::new(Foreign(v)))
    }

    #[test]
    fn external_buffers_give_the_owned_matrix_bit_for_bit_and_clones_share_them() {
        let mut rng = seeded(3);
        let mut x = gaussian_mat(&mut rng, 40, 12, 1.0);
        for i in 0..40 {
            for j in 0..12 {
                if (i * 7 + j * 3) % 4 != 0 {
                    x[(i, j)] = 0.0;
                }
            }
        }
        let owned = dense_to_csr(x.as_ref()).unwrap();
        let (ip, ix, d) = (
            owned.indptr().raw_storage().to_vec(),
            owned.indices().to_vec(),
            owned.data().to_vec(),
        );
        let data = external(d.clone());
        let foreign = data.as_ptr();
        let shared = csr_from_parts((40, 12), external(ip), external(ix), data).unwrap();
        let a = FeatureMatrix::sparse(owned).unwrap();
        let b = FeatureMatrix::sparse_shared(shared).unwrap();
        assert_eq!(a, b);
        let u = gaussian_mat(&mut rng, 12, 5, 1.0);
        assert_eq!(
            a.mul_dense(u.as_ref()).unwrap(),
            b.mul_dense(u.as_ref()).unwrap()
        );
        assert_eq!(a.gram(), b.gram());
        let FeatureMatrix::Sparse(m) = &b else {
            unreachable!()
        };
        assert_eq!(m.data().as_ptr(), foreign);
        let (_, _, cloned) = m.clone().into_raw_storage();
        assert!(cloned.is_external());
        assert_eq!(cloned.as_ptr(), foreign);
        // an owned buffer's clone is a copy
        let o: SharedSlice<f64> = d.into();
        assert!(!o.is_external());
        assert_ne!(o.clone().as_ptr(), o.as_ptr());
    }

    #[test]
    fn broken_structure_and_non_finite_values_are_errors() {
        let parts = |ip: Vec<usize>, ix: Vec<usize>, d: Vec<f64>, cols| {
            csr_from_parts((2, cols), external(ip), external(ix), external(d))
        };
        // column 2 of a 2-column matrix, unsorted row, indptr not ending at nnz
        assert!(parts(vec![0, 1, 2], vec![0, 2], vec![1.0, 1.0], 2).is_err());
        assert!(parts(vec![0, 2, 2], vec![1, 0], vec![1.0, 1.0], 2).is_err());
        assert!(parts(vec![0, 1, 3], vec![0, 1], vec![1.0, 1.0], 2).is_err());
        let ok = parts(vec![0, 1, 2], vec![0, 1], vec![1.0, f64::NAN], 2).unwrap();
        let err = FeatureMatrix::sparse_shared(ok).unwrap_err();
        assert!(matches!(err, LinalgError::NonFinite { row: 1, col: 1, .. }));
    }
}
