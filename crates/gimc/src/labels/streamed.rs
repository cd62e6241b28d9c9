//! The streamed fast path: every quantity of GIMC eq. 12 that the fit needs is a sum over rows,
//! so Φ = φ_U(X) (n × D) is formed one row block at a time and never held whole.
//!
//! - ΦᵀΦ = Σ_B Φ_BᵀΦ_B (one triangle per block) and AᵀΦ = Σ_B A_BᵀΦ_B (sparse A_B, never
//!   densified): 2nD²/2 + 2·nnz(A)·D flops, as in memory. For a factored map (Nyström,
//!   Φ = C·M) the sums run in C's space and M is applied once at the end.
//! - ∂f/∂U = Σ_B backward(X_B, G_B) with G_B = Φ_B(WWᵀ) − A_BWᵀ (or (Φ_BW − A_B)Wᵀ when
//!   2L < D): the gradient of ⟨G, φ_U(X)⟩ is a sum over rows for any map that acts row by row
//!   (the [`FeatureMap`] contract), so the block sums are the whole-matrix gradient. The
//!   forward pass is recomputed in the gradient pass (one extra φ per outer iteration).
//! - The objective and the W-step need only ΦᵀΦ and ΦᵀA, so they are unchanged.
//! - Training and validation scores are formed block by block as in prediction.
//!
//! Memory: O(D² + D·L + b·D) besides X and the sparse A, for b rows per block.
//!
//! With [`Precision::F32`], the block products (Φ_BᵀΦ_B and Φ_B(WWᵀ)) run in f32 (twice the
//! GEMM rate, half the bytes) while every sum over blocks, the objective, the Cholesky W-step
//! and the line search stay in f64. The line search then works on a slightly perturbed
//! problem, consistently: every objective it compares is computed from the same sums.

use std::borrow::Cow;

use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::{check_finite, gram_nt, matmul, par, symmetrize, zeros_padded};
use gimc_linalg::faer::linalg::matmul::matmul as gemm;
use gimc_linalg::faer::linalg::matmul::triangular::{self, BlockStructure};
use gimc_linalg::faer::{Accum, Mat, MatRef};
use gimc_linalg::sparse::{csr_mul_dense, csr_tr_mul_dense};
use gimc_linalg::sprs::CsMat;

use crate::error::{GimcError, Result};
use crate::error::{dim_err, param_err};
use crate::maps::concat_features;

/// Entries of Φ in one block by default (8 Mi entries: 64 MiB in f64).
pub const DEFAULT_BLOCK_ENTRIES: usize = 1 << 23;

/// The arithmetic of the block products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// Everything in f64.
    #[default]
    F64,
    /// Block products in f32, sums over blocks and every solve in f64.
    F32,
}

impl Precision {
    /// `f64` or `f32`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = GimcError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f64" => Ok(Precision::F64),
            "f32" => Ok(Precision::F32),
            other => Err(param_err(
                "precision",
                format!("must be f64 or f32, got {other:?}"),
            )),
        }
    }
}

/// How a fit holds the features Φ (n × D).
///
/// ```
/// use gimc::{LabelData, LabelParams, NoObserver, Precision, Storage, fit_labels};
/// use gimc_featmap::{FourierFamily, MapFamily};
/// use gimc_linalg::FeatureMatrix;
/// use gimc_linalg::rng::{gaussian_mat, seeded};
/// use gimc_linalg::sprs::TriMat;
///
/// let n = 300;
/// let x = gaussian_mat(&mut seeded(1), n, 4, 1.0);
/// let mut labels = TriMat::new((n, 3));
/// for i in 0..n {
///     labels.add_triplet(i, if x[(i, 0)] * x[(i, 1)] > 0.0 { 0 } else { 1 }, 1.0);
///     if x[(i, 2)] > 0.5 {
///         labels.add_triplet(i, 2, 1.0);
///     }
/// }
/// let data = LabelData::multi_label(FeatureMatrix::dense(x)?, labels.to_csr())?;
/// let map = FourierFamily.build(data.features(), 40, 0.5, &mut seeded(2))?;
/// let whole = LabelParams::default().with_max_iter(3);
/// // Φ formed 64 rows at a time, never held whole, block products in f32
/// let blocks = whole
///     .clone()
///     .with_storage(Storage::Streamed { block_rows: 64, precision: Precision::F32 });
/// let a = fit_labels(&data, map.clone(), &whole.check()?, None, &mut NoObserver)?;
/// let b = fit_labels(&data, map, &blocks.check()?, None, &mut NoObserver)?;
/// let (fa, fb) = (a.history.last().unwrap().objective, b.history.last().unwrap().objective);
/// assert!((fa - fb).abs() < 1e-4 * fa);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Storage {
    /// Φ whole in memory, in f64: the fastest path when n·D·8 bytes fit.
    #[default]
    Whole,
    /// Φ formed `block_rows` rows at a time (0: chosen by [`Storage::block_rows`]) and never
    /// held whole; block products in `precision`.
    Streamed {
        /// Rows per block (0: chosen by [`Storage::block_rows`]).
        block_rows: usize,
        /// Arithmetic of the block products.
        precision: Precision,
    },
}

impl Storage {
    /// Streamed, with the block size chosen from D and f64 block products.
    pub const STREAMED: Storage = Storage::Streamed {
        block_rows: 0,
        precision: Precision::F64,
    };

    /// Whether Φ is streamed.
    pub fn is_streamed(self) -> bool {
        matches!(self, Storage::Streamed { .. })
    }

    /// The rows of one block of n, for a map from `input_dim` to `dim` features (n when
    /// whole). The default block holds max([`DEFAULT_BLOCK_ENTRIES`], input_dim · dim / 4)
    /// entries of Φ, half the size of the map's parameters: every block's pass also costs
    /// about that size (d·m = d·D/2 for random Fourier features, read by the forward pass and
    /// added to by the gradient), so blocks much smaller than the map would be dominated by
    /// it, and much larger ones would only add memory.
    pub fn block_rows(self, n: usize, input_dim: usize, dim: usize) -> usize {
        match self {
            Storage::Whole => n.max(1),
            Storage::Streamed { block_rows: 0, .. } => {
                let entries = DEFAULT_BLOCK_ENTRIES.max(input_dim.saturating_mul(dim) / 4);
                (entries / dim.max(1)).clamp(1, n.max(1))
            }
            Storage::Streamed { block_rows, .. } => block_rows.clamp(1, n.max(1)),
        }
    }

    /// The arithmetic of the block products (f64 when whole).
    pub fn precision(self) -> Precision {
        match self {
            Storage::Whole => Precision::F64,
            Storage::Streamed { precision, .. } => precision,
        }
    }
}

/// The row blocks [lo, lo + b) of n rows, b = `block` except the last.
pub(crate) fn blocks(n: usize, block: usize) -> impl Iterator<Item = (usize, usize)> {
    let block = block.max(1);
    (0..n.div_ceil(block)).map(move |k| {
        let lo = k * block;
        (lo, block.min(n - lo))
    })
}

/// Rows [lo, lo + b) of X, in X's representation (X itself when that is all of it).
pub(crate) fn row_block(x: &FeatureMatrix, lo: usize, b: usize) -> Result<Cow<'_, FeatureMatrix>> {
    if lo == 0 && b == x.nrows() {
        return Ok(Cow::Borrowed(x));
    }
    let rows: Vec<usize> = (lo..lo + b).collect();
    Ok(Cow::Owned(x.select_rows(&rows)?))
}

/// Rows [lo, lo + b) of the sparse labels, as CSR.
fn label_block(a: &CsMat<f64>, lo: usize, b: usize) -> CsMat<f64> {
    a.slice_outer(lo..lo + b).to_owned()
}

/// out (lower triangle) += BᵀB, with the block product in `precision`.
fn add_gram_lower(out: &mut Mat<f64>, b: MatRef<'_, f64>, precision: Precision) {
    match precision {
        Precision::F64 => triangular::matmul(
            out.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            b.transpose(),
            BlockStructure::Rectangular,
            b,
            BlockStructure::Rectangular,
            1.0,
            par(),
        ),
        Precision::F32 => {
            let b32 = to_f32(b);
            let d = b.ncols();
            let mut g32 = Mat::<f32>::zeros(d, d);
            triangular::matmul(
                g32.as_mut(),
                BlockStructure::TriangularLower,
                Accum::Replace,
                b32.transpose(),
                BlockStructure::Rectangular,
                b32.as_ref(),
                BlockStructure::Rectangular,
                1.0f32,
                par(),
            );
            for j in 0..d {
                for i in j..d {
                    out[(i, j)] += f64::from(g32[(i, j)]);
                }
            }
        }
    }
}

/// The f32 copy of a matrix, with zero padding to 16 rows (faer's AVX-512 f32 kernels read a
/// column-major left operand's padding, see `gimc_linalg::dense::zeros_padded`).
fn to_f32(a: MatRef<'_, f64>) -> Mat<f32> {
    let mut out = Mat::<f32>::zeros(a.nrows().next_multiple_of(16), a.ncols());
    out.truncate(a.nrows(), a.ncols());
    for j in 0..a.ncols() {
        for (i, v) in out.col_mut(j).iter_mut().enumerate() {
            *v = a[(i, j)] as f32;
        }
    }
    out
}

/// A·B with the product in `precision` (f64 result).
fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>, precision: Precision) -> Mat<f64> {
    // a GEMM left operand in the next step (the blocked gradient form): zero padding
    let mut out = zeros_padded(a.nrows(), b.ncols());
    match precision {
        Precision::F64 => gemm(out.as_mut(), Accum::Replace, a, b, 1.0, par()),
        Precision::F32 => {
            let (a32, b32) = (to_f32(a), to_f32(b));
            let mut o32 = Mat::<f32>::zeros(a.nrows(), b.ncols());
            gemm(
                o32.as_mut(),
                Accum::Replace,
                a32.as_ref(),
                b32.as_ref(),
                1.0f32,
                par(),
            );
            for j in 0..out.ncols() {
                for i in 0..out.nrows() {
                    out[(i, j)] = f64::from(o32[(i, j)]);
                }
            }
        }
    }
    out
}

/// The two sums every objective and W-step needs, ΦᵀΦ (D × D, exactly symmetric) and AᵀΦ
/// (L × D), accumulated over row blocks of X without holding Φ.
pub(crate) fn streamed_products<M: FeatureMap>(
    maps: &[M],
    x: &FeatureMatrix,
    a: &CsMat<f64>,
    storage: Storage,
) -> Result<(Mat<f64>, Mat<f64>)> {
    let n = x.nrows();
    let dim: usize = maps.iter().map(FeatureMap::output_dim).sum();
    let block = storage.block_rows(n, x.ncols(), dim);
    let precision = storage.precision();
    // (Φ_B or C_B, M) of one block
    let forward = |xb: &FeatureMatrix| -> Result<(Mat<f64>, Option<Mat<f64>>)> {
        match maps {
            [one] => Ok(one.forward_factored(xb)?),
            many => Ok((concat_features(many, xb)?, None)),
        }
    };
    // Σ CᵀC (lower triangle) and Σ AᵀC in the space of the first factor, and its M
    let mut sums: Option<BlockSums> = None;
    for (lo, b) in blocks(n, block) {
        let xb = row_block(x, lo, b)?;
        let (c, m) = forward(&xb)?;
        check_finite(c.as_ref())?;
        let sums = sums.get_or_insert_with(|| BlockSums {
            gram: Mat::zeros(c.ncols(), c.ncols()),
            at_c: Mat::zeros(a.cols(), c.ncols()),
            m: m.clone(),
        });
        if c.ncols() != sums.gram.ncols()
            || m.as_ref().map(Mat::shape) != sums.m.as_ref().map(Mat::shape)
        {
            return Err(dim_err(
                "streamed features",
                format!("every block with {} columns", sums.gram.ncols()),
                format!("{} columns in the block at row {lo}", c.ncols()),
            ));
        }
        if m != sums.m {
            return Err(param_err(
                "feature map",
                "its factored forward pass must give the same M for every block of rows",
            ));
        }
        add_gram_lower(&mut sums.gram, c.as_ref(), precision);
        sums.at_c += csr_tr_mul_dense(&label_block(a, lo, b), c.as_ref())?;
    }
    let BlockSums { mut gram, at_c, m } = sums.unwrap_or_else(|| BlockSums {
        gram: Mat::zeros(dim, dim),
        at_c: Mat::zeros(a.cols(), dim),
        m: None,
    });
    mirror_lower(&mut gram);
    Ok(match m {
        Some(m) => {
            let mgm = matmul(m.transpose(), matmul(gram.as_ref(), m.as_ref())?.as_ref())?;
            (
                symmetrize(mgm.as_ref())?,
                matmul(at_c.as_ref(), m.as_ref())?,
            )
        }
        None => (gram, at_c),
    })
}

/// The running sums of [`streamed_products`].
struct BlockSums {
    gram: Mat<f64>,
    at_c: Mat<f64>,
    m: Option<Mat<f64>>,
}

fn mirror_lower(g: &mut Mat<f64>) {
    let d = g.nrows();
    for j in 0..d {
        for i in (j + 1)..d {
            g[(j, i)] = g[(i, j)];
        }
    }
}

/// ∂f/∂U = Σ_B backward(X_B, Φ_B, G_B) over row blocks, G_B = ∂f/∂Φ_B at W (see the module
/// documentation).
pub(crate) fn streamed_gradient<M: LearnableMap>(
    map: &M,
    x: &FeatureMatrix,
    a: &CsMat<f64>,
    w: MatRef<'_, f64>,
    storage: Storage,
) -> Result<Mat<f64>> {
    let n = x.nrows();
    let (d, l) = w.shape();
    let block = storage.block_rows(n, x.ncols(), d);
    let precision = storage.precision();
    // the Gram form 2bD² + sparse AWᵀ per block when 2L ≥ D, else (Φ_BW − A_B)Wᵀ
    let wwt = (2 * l >= d).then(|| gram_nt(w));
    let mut total = Mat::<f64>::zeros(map.params().nrows(), map.params().ncols());
    for (lo, b) in blocks(n, block) {
        let xb = row_block(x, lo, b)?;
        let phi = map.forward(&xb)?;
        check_finite(phi.as_ref())?;
        let ab = label_block(a, lo, b);
        let g = match &wwt {
            Some(wwt) => {
                let mut g = product(phi.as_ref(), wwt.as_ref(), precision);
                g -= csr_mul_dense(&ab, w.transpose())?;
                g
            }
            None => {
                let mut p = product(phi.as_ref(), w, precision);
                let ptr = ab.proper_indptr();
                for r in 0..b {
                    let range = ptr[r]..ptr[r + 1];
                    for (&j, &v) in ab.indices()[range.clone()].iter().zip(&ab.data()[range]) {
                        p[(r, j)] -= v;
                    }
                }
                product(p.as_ref(), w.transpose(), precision)
            }
        };
        map.backward_add_at(&xb, phi.as_ref(), g.as_ref(), total.as_mut())?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_rows_once() {
        let got: Vec<_> = blocks(10, 4).collect();
        assert_eq!(got, vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(blocks(0, 4).count(), 0);
        assert_eq!(blocks(3, 0).count(), 3);
        assert_eq!(Storage::STREAMED.block_rows(100, 1, 1 << 22), 2);
        assert_eq!(Storage::Whole.block_rows(100, 5, 7), 100);
        assert_eq!(Storage::STREAMED.block_rows(1000, 1 << 8, 1 << 20), 64);
        assert_eq!("f32".parse::<Precision>().unwrap(), Precision::F32);
        assert!("f16".parse::<Precision>().is_err());
    }
}
