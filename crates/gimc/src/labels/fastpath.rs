//! The multi-label / multi-class objective and its pieces (DESIGN §3.3, GIMC eq. 12): Ψ = I,
//! Ω = all n × L entries, A sparse, W (D × L),
//!
//! f(W, U) = (λ/2)‖W‖² + ½‖A − ΦW‖²,  Φ = φ_U(X).
//!
//! Nothing here forms an n × L dense matrix:
//! - ΦᵀΦ is one triangular GEMM (O(nD²)), ΦᵀA = (AᵀΦ)ᵀ one sparse product (O(nnz(A)·D));
//! - ‖A − ΦW‖² = ⟨W, (ΦᵀΦ)W⟩ + ‖A‖² − 2⟨ΦᵀA, W⟩ (O(D²L)); at the W-step's W, where
//!   ⟨W, (ΦᵀΦ + λI)W⟩ = ⟨ΦᵀA, W⟩, f = ½(‖A‖² − ⟨ΦᵀA, W⟩) (O(DL),
//!   [`LabelProblem::w_step_with_objective`]; the reduced objective g(U) and every
//!   variable-projection trial use it);
//! - W-step W = (ΦᵀΦ + λI)⁻¹ΦᵀA by Cholesky (the paper prints λΦᵀΦ; the ridge solution has
//!   ΦᵀΦ, DESIGN §3.3);
//! - ∂f/∂Φ = Φ(WWᵀ) − AWᵀ = (ΦW − A)Wᵀ, computed as (Φ_B W − A_B)Wᵀ over row blocks B when
//!   2L < D (4nDL flops, only a block × L buffer), else as Φ(WWᵀ) − AWᵀ (2nD² + 2D²L flops);
//!   then the map's
//!   backward pass gives ∂f/∂U.
//!
//! The reduced objective g(U) = min_W f(W, U) (variable projection) has, by the envelope
//! theorem, the gradient ∂f/∂U at W = W*(U).

use std::sync::OnceLock;

use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::dense::{check_finite, frob_dot, gram_nt, gram_tn, matmul, par, symmetrize};
use gimc_linalg::faer::linalg::matmul::matmul as gemm;
use gimc_linalg::faer::reborrow::{Reborrow, ReborrowMut};
use gimc_linalg::faer::{Accum, Mat, MatRef};
use gimc_linalg::solve::ridge_solve;
use gimc_linalg::sparse::{csr_frob_sq, csr_mul_dense, csr_to_dense, csr_tr_mul_dense};
use gimc_linalg::sprs::CsMat;

use crate::error::{GimcError, Result};
use crate::error::{check_nonneg, dim_err};
use crate::labels::data::LabelData;
use crate::labels::shard::{ONE_PROCESS, RowSums, sum_mat, sum_scalar};
use crate::labels::streamed::{Storage, streamed_gradient, streamed_products};
use crate::maps::concat_features;

/// Entries of the largest row-block buffer (block rows × L) used by the blocked products.
pub(crate) const BLOCK_ENTRIES: usize = 1 << 20;

/// Φ and the two products every objective, W-step and gradient needs: ΦᵀΦ (D × D) and AᵀΦ
/// (L × D, the transpose of ΦᵀA).
///
/// For a map with Φ = C·M (Nyström with its normalisation, [`FeatureMap::forward_factored`])
/// the products are formed as Mᵀ(CᵀC)M and (AᵀC)M and Φ itself only when first asked for (the
/// gradient or training metrics need it; a fixed-map fit never does), which saves the n × m × m
/// product.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelFeatures {
    phi: OnceLock<Mat<f64>>,
    /// Φ was streamed ([`Storage::Streamed`]): only the sums are held.
    streamed: bool,
    factors: Option<(Mat<f64>, Mat<f64>)>,
    dim: usize,
    /// ΦᵀΦ; formed on first use when Φ is held, wider than it is tall and on one process
    /// (the W-step is then solved in the dual form and never needs it).
    gram: OnceLock<Mat<f64>>,
    at_phi: Mat<f64>,
}

impl LabelFeatures {
    /// Φ (n × D), formed on first use when the features were built from factors.
    ///
    /// Errors: [`GimcError::Streamed`] when Φ was streamed and so is not held.
    pub fn phi(&self) -> Result<MatRef<'_, f64>> {
        if self.streamed {
            return Err(GimcError::Streamed("the features Φ"));
        }
        Ok(self
            .phi
            .get_or_init(|| match &self.factors {
                Some((c, m)) => c * m,
                None => Mat::zeros(0, self.dim),
            })
            .as_ref())
    }

    /// Whether Φ was streamed ([`Storage::Streamed`]): only ΦᵀΦ and AᵀΦ are held.
    pub fn is_streamed(&self) -> bool {
        self.streamed
    }

    /// ΦᵀΦ (D × D, exactly symmetric), formed on first use when it was deferred.
    pub fn gram(&self) -> MatRef<'_, f64> {
        self.gram
            .get_or_init(|| match self.phi.get() {
                Some(phi) => gram_tn(phi.as_ref()),
                // every constructor that defers ΦᵀΦ holds Φ
                None => unreachable!("ΦᵀΦ deferred without Φ"),
            })
            .as_ref()
    }

    /// Whether ΦᵀΦ has not been formed (deferred, see [`LabelProblem::w_step`]).
    fn gram_deferred(&self) -> bool {
        self.gram.get().is_none()
    }

    /// ΦᵀA (D × L), a transposed view of AᵀΦ.
    pub fn cross(&self) -> MatRef<'_, f64> {
        self.at_phi.as_ref().transpose()
    }

    /// Feature dimension D.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether the features were built from factors Φ = C·M (a map with a factored forward
    /// pass, [`FeatureMap::forward_factored`]), so that Φ itself is formed only on demand.
    pub fn is_factored(&self) -> bool {
        self.factors.is_some()
    }
}

/// The fast-path problem: the data, λ and ‖A‖².
#[derive(Debug, Clone, Copy)]
pub struct LabelProblem<'a> {
    data: &'a LabelData,
    lambda: f64,
    a_sq: f64,
    storage: Storage,
    sums: &'a dyn RowSums,
}

impl<'a> LabelProblem<'a> {
    /// The problem of fitting `data` with ridge weight λ ≥ 0 (λ = 0 needs ΦᵀΦ non-singular).
    pub fn new(data: &'a LabelData, lambda: f64) -> Result<Self> {
        check_nonneg("lambda", lambda)?;
        Ok(Self {
            data,
            lambda,
            a_sq: csr_frob_sq(data.labels()),
            storage: Storage::Whole,
            sums: &ONE_PROCESS,
        })
    }

    /// The same problem on a shard of the rows of a data-parallel fit: every sum over rows
    /// (‖A‖², ΦᵀΦ, AᵀΦ, the map gradient) is summed across the processes by `sums`, so the
    /// objective, W-step and gradient are those of the union of the shards (see
    /// [`crate::labels::RowSums`]). Every process must make the same calls in the same order.
    pub fn with_sums(mut self, sums: &'a dyn RowSums) -> Self {
        self.a_sq = sum_scalar(sums, csr_frob_sq(self.data.labels()));
        self.sums = sums;
        self
    }

    /// The same problem with Φ held as `storage` says (default [`Storage::Whole`]): streamed,
    /// [`features`](Self::features) and [`gradient`](Self::gradient) form Φ one row block at a
    /// time.
    pub fn with_storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self
    }

    /// How Φ is held.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// The data.
    pub fn data(&self) -> &'a LabelData {
        self.data
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// Φ = [φ_1(X), …] for the maps (one map normally; several for combined features), with
    /// ΦᵀΦ and AᵀΦ.
    pub fn features<M: FeatureMap>(&self, maps: &[M]) -> Result<LabelFeatures> {
        let mut feats = self.local_features(maps)?;
        if self.sums.processes() > 1 {
            feats.gram();
            if let Some(gram) = feats.gram.get_mut() {
                sum_mat(self.sums, gram);
            }
            sum_mat(self.sums, &mut feats.at_phi);
        }
        Ok(feats)
    }

    /// [`features`](Self::features) of this process's rows only.
    fn local_features<M: FeatureMap>(&self, maps: &[M]) -> Result<LabelFeatures> {
        if self.storage.is_streamed() {
            let (gram, at_phi) =
                streamed_products(maps, self.data.features(), self.data.labels(), self.storage)?;
            return Ok(LabelFeatures {
                phi: OnceLock::new(),
                streamed: true,
                dim: gram.ncols(),
                factors: None,
                gram: OnceLock::from(gram),
                at_phi,
            });
        }
        if let [one] = maps {
            let (c, m) = one.forward_factored(self.data.features())?;
            return match m {
                Some(m) => self.features_factored(c, m),
                None => self.features_from(c),
            };
        }
        let phi = concat_features(maps, self.data.features())?;
        self.features_from(phi)
    }

    /// [`LabelFeatures`] for Φ = C·M (C n × m finite, M m × D) without forming Φ:
    /// ΦᵀΦ = Mᵀ(CᵀC)M, AᵀΦ = (AᵀC)M.
    pub fn features_factored(&self, c: Mat<f64>, m: Mat<f64>) -> Result<LabelFeatures> {
        if c.nrows() != self.data.nrows() || m.nrows() != c.ncols() {
            return Err(dim_err(
                "features C·M",
                format!(
                    "{} rows and M with C's {} columns as rows",
                    self.data.nrows(),
                    c.ncols()
                ),
                format!("{} rows and M with {} rows", c.nrows(), m.nrows()),
            ));
        }
        check_finite(c.as_ref())?;
        check_finite(m.as_ref())?;
        let cc = gram_tn(c.as_ref());
        let gram =
            symmetrize(matmul(m.transpose(), matmul(cc.as_ref(), m.as_ref())?.as_ref())?.as_ref())?;
        let at_c = csr_tr_mul_dense(self.data.labels(), c.as_ref())?;
        let at_phi = matmul(at_c.as_ref(), m.as_ref())?;
        Ok(LabelFeatures {
            phi: OnceLock::new(),
            streamed: false,
            dim: m.ncols(),
            factors: Some((c, m)),
            gram: OnceLock::from(gram),
            at_phi,
        })
    }

    /// [`LabelFeatures`] for a given Φ (n × D, finite).
    pub fn features_from(&self, phi: Mat<f64>) -> Result<LabelFeatures> {
        if phi.nrows() != self.data.nrows() {
            return Err(dim_err(
                "features Φ",
                format!("{} rows", self.data.nrows()),
                format!("{} rows", phi.nrows()),
            ));
        }
        check_finite(phi.as_ref())?;
        // wider than tall on one process: the W-step is dual and ΦᵀΦ waits to be asked for
        let gram = if phi.ncols() > phi.nrows() && self.sums.processes() == 1 {
            OnceLock::new()
        } else {
            OnceLock::from(gram_tn(phi.as_ref()))
        };
        let at_phi = csr_tr_mul_dense(self.data.labels(), phi.as_ref())?;
        Ok(LabelFeatures {
            dim: phi.ncols(),
            phi: OnceLock::from(phi),
            streamed: false,
            factors: None,
            gram,
            at_phi,
        })
    }

    fn check_w(&self, feats: &LabelFeatures, w: MatRef<'_, f64>) -> Result<()> {
        let want = (feats.dim(), self.data.n_labels());
        if w.shape() != want {
            return Err(dim_err(
                "W",
                format!("{} x {}", want.0, want.1),
                format!("{} x {}", w.nrows(), w.ncols()),
            ));
        }
        Ok(())
    }

    /// f(W, U) = (λ/2)‖W‖² + ½(⟨W, ΦᵀΦ W⟩ + ‖A‖² − 2⟨ΦᵀA, W⟩) at the Φ of `feats`
    /// (⟨W, ΦᵀΦ W⟩ as ‖ΦW‖² when ΦᵀΦ is deferred).
    pub fn objective(&self, feats: &LabelFeatures, w: MatRef<'_, f64>) -> Result<f64> {
        self.check_w(feats, w)?;
        let cross = frob_dot(feats.at_phi.as_ref(), w.transpose())?;
        let quad = if feats.gram_deferred() {
            // D > n: ‖ΦW‖² from the n × L product (no larger than W), not from ΦᵀΦ
            matmul(feats.phi()?, w)?.squared_norm_l2()
        } else {
            frob_dot(w, matmul(feats.gram(), w)?.as_ref())?
        };
        Ok(0.5 * self.lambda * w.squared_norm_l2() + 0.5 * (quad + self.a_sq - 2.0 * cross))
    }

    /// f at the W-step's W = (ΦᵀΦ + λI)⁻¹ΦᵀA (from [`Self::w_step`] at the same `feats`):
    /// there ⟨W, (ΦᵀΦ + λI) W⟩ = ⟨ΦᵀA, W⟩, so f = ½(‖A‖² − ⟨ΦᵀA, W⟩), in O(DL) without the
    /// D × D × L product ΦᵀΦ W of [`Self::objective`]. Equal to `objective(feats, w)` up to
    /// the solve's rounding, but to first order in the solve's error (about κ(ΦᵀΦ + λI)·ε
    /// relative) where `objective` at an inexact W is off by its square: with λ far below
    /// ΦᵀΦ's scale, the two can differ visibly. For any W but the W-step's it is not f, so it
    /// is reached only through [`Self::w_step_with_objective`].
    fn objective_at_w_step(&self, feats: &LabelFeatures, w: MatRef<'_, f64>) -> Result<f64> {
        self.check_w(feats, w)?;
        let cross = frob_dot(feats.at_phi.as_ref(), w.transpose())?;
        Ok(0.5 * (self.a_sq - cross))
    }

    /// The W-step ([`Self::w_step`]) and f there, without the D × D × L product of
    /// [`Self::objective`] (see `objective_at_w_step`): what the fit's start, every
    /// variable-projection trial and [`Self::reduced`] need.
    pub fn w_step_with_objective(&self, feats: &LabelFeatures) -> Result<(Mat<f64>, f64)> {
        let w = self.w_step(feats)?;
        let f = self.objective_at_w_step(feats, w.as_ref())?;
        Ok((w, f))
    }

    /// The W-step: W = (ΦᵀΦ + λI)⁻¹ΦᵀA (D × L), the exact minimiser of f over W. When Φ is
    /// wider than tall (D > n, one process) it is solved in the dual form W = Φᵀ(ΦΦᵀ + λI)⁻¹A
    /// (the push-through identity): O(n²D + n³) instead of O(nD² + D³), and the n × L dense A
    /// it needs is smaller than W.
    pub fn w_step(&self, feats: &LabelFeatures) -> Result<Mat<f64>> {
        if feats.gram_deferred() {
            let phi = feats.phi()?;
            let a = csr_to_dense(self.data.labels());
            let z = ridge_solve(gram_nt(phi).as_ref(), a.as_ref(), self.lambda)?;
            return Ok(matmul(phi.transpose(), z.as_ref())?);
        }
        Ok(ridge_solve(feats.gram(), feats.cross(), self.lambda)?)
    }

    /// ∂f/∂Φ = Φ(WWᵀ) − AWᵀ (n × D) at W.
    pub fn phi_gradient(&self, feats: &LabelFeatures, w: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check_w(feats, w)?;
        Ok(phi_gradient(feats.phi()?, self.data.labels(), w)?)
    }

    /// ∂f/∂U at W for a single map (the one `feats` was computed with): the backward pass of
    /// ∂f/∂Φ, summed over row blocks when Φ is streamed.
    pub fn gradient<M: LearnableMap>(
        &self,
        map: &M,
        feats: &LabelFeatures,
        w: MatRef<'_, f64>,
    ) -> Result<Mat<f64>> {
        if map.output_dim() != feats.dim() {
            return Err(dim_err(
                "map for the gradient",
                format!("output dimension {} (that of the features)", feats.dim()),
                format!("{}", map.output_dim()),
            ));
        }
        let mut g = if feats.is_streamed() {
            self.check_w(feats, w)?;
            streamed_gradient(
                map,
                self.data.features(),
                self.data.labels(),
                w,
                self.storage,
            )?
        } else {
            let g = self.phi_gradient(feats, w)?;
            map.backward(self.data.features(), g.as_ref())?
        };
        sum_mat(self.sums, &mut g);
        Ok(g)
    }

    /// The reduced objective g(U) = min_W f(W, U) (variable projection), with W*(U) and the
    /// features.
    pub fn reduced<M: FeatureMap>(&self, map: &M) -> Result<(f64, Mat<f64>, LabelFeatures)> {
        let feats = self.features(std::slice::from_ref(map))?;
        let (w, f) = self.w_step_with_objective(&feats)?;
        if !f.is_finite() {
            return Err(GimcError::NonFinite {
                what: "objective",
                iteration: 0,
            });
        }
        Ok((f, w, feats))
    }
}

/// (ΦW − A)Wᵀ without an n × L matrix: blocked when 2L < D, else Φ(WWᵀ) − AWᵀ.
pub(crate) fn phi_gradient(
    phi: MatRef<'_, f64>,
    a: &CsMat<f64>,
    w: MatRef<'_, f64>,
) -> gimc_linalg::Result<Mat<f64>> {
    let (n, d) = phi.shape();
    let l = w.ncols();
    // blocked: 4nDL flops; Gram form: 2nD² + 2D²L flops
    if 2 * l >= d {
        let wwt = gram_nt(w);
        let mut g = matmul(phi, wwt.as_ref())?;
        let awt = csr_mul_dense(a, w.transpose())?;
        g -= awt;
        return Ok(g);
    }
    let mut g = Mat::<f64>::zeros(n, d);
    let block = (BLOCK_ENTRIES / l.max(1)).clamp(1, n.max(1));
    let ptr = a.proper_indptr();
    let (idx, val) = (a.indices(), a.data());
    let mut p = Mat::<f64>::zeros(block, l);
    let mut lo = 0;
    while lo < n {
        let b = block.min(n - lo);
        let mut pb = p.as_mut().subrows_mut(0, b);
        gemm(
            pb.rb_mut(),
            Accum::Replace,
            phi.subrows(lo, b),
            w,
            1.0,
            par(),
        );
        for r in 0..b {
            let range = ptr[lo + r]..ptr[lo + r + 1];
            for (&j, &v) in idx[range.clone()].iter().zip(&val[range]) {
                pb[(r, j)] -= v;
            }
        }
        gemm(
            g.as_mut().subrows_mut(lo, b),
            Accum::Replace,
            pb.rb(),
            w.transpose(),
            1.0,
            par(),
        );
        lo += b;
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::FeatureMatrix;
    use gimc_linalg::rng::{gaussian_mat, seeded};
    use gimc_linalg::sparse::csr_to_dense;
    use gimc_linalg::sprs::TriMat;

    fn labels(n: usize, l: usize) -> CsMat<f64> {
        let mut t = TriMat::new((n, l));
        for i in 0..n {
            t.add_triplet(i, (3 * i) % l, 1.0);
            if i % 2 == 0 {
                t.add_triplet(i, (5 * i + 1) % l, 1.0);
            }
        }
        t.to_csr()
    }

    #[test]
    fn objective_and_gradient_match_dense_formulas() {
        // (15, 4): wider than the 11 rows, so the W-step is dual and ΦᵀΦ deferred
        for (d, l) in [(6, 4), (3, 5), (15, 4)] {
            let n = 11;
            let phi = gaussian_mat(&mut seeded(1), n, d, 1.0);
            let a = labels(n, l);
            let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(2), n, 2, 1.0)).unwrap();
            let data = LabelData::multi_label(x, a.clone()).unwrap();
            let prob = LabelProblem::new(&data, 0.3).unwrap();
            let feats = prob.features_from(phi.clone()).unwrap();
            let w = gaussian_mat(&mut seeded(3), d, l, 1.0);
            let ad = csr_to_dense(&a);
            let r = &phi * &w - &ad;
            let direct = 0.15 * w.squared_norm_l2() + 0.5 * r.squared_norm_l2();
            let f = prob.objective(&feats, w.as_ref()).unwrap();
            assert!(
                (f - direct).abs() < 1e-10 * direct.max(1.0),
                "{f} vs {direct}"
            );
            let g = prob.phi_gradient(&feats, w.as_ref()).unwrap();
            let gd = &r * w.transpose();
            assert!((&g - &gd).norm_l2() < 1e-10);
            // the W-step zeroes ∂f/∂W = Φᵀ(ΦW − A) + λW
            let ws = prob.w_step(&feats).unwrap();
            let gw = phi.transpose() * (&phi * &ws - &ad) + &ws * gimc_linalg::faer::Scale(0.3);
            assert!(gw.norm_l2() < 1e-9);
            let at_step = prob.objective(&feats, ws.as_ref()).unwrap();
            assert!(at_step <= f);
            // at the W-step's W, f = ½(‖A‖² − ⟨ΦᵀA, W⟩) without the D²L product; at another W
            // that expression is not f
            let (w_again, short) = prob.w_step_with_objective(&feats).unwrap();
            assert_eq!(w_again, ws);
            assert!(
                (short - at_step).abs() < 1e-12 * at_step,
                "{short} vs {at_step}"
            );
            let elsewhere = prob.objective_at_w_step(&feats, w.as_ref()).unwrap();
            assert!((elsewhere - f).abs() > 1e-3 * f, "{elsewhere} vs {f}");
            assert!(prob.objective(&feats, w.as_ref().subcols(0, 1)).is_err());
            assert!(
                prob.objective_at_w_step(&feats, w.as_ref().subcols(0, 1))
                    .is_err()
            );
            assert_eq!(feats.gram_deferred(), d > n);
            assert!((feats.gram() - phi.transpose() * &phi).norm_l2() < 1e-10);
        }
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(2), 4, 2, 1.0)).unwrap();
        let data = LabelData::multi_label(x, labels(4, 3)).unwrap();
        assert!(LabelProblem::new(&data, -1.0).is_err());
        let prob = LabelProblem::new(&data, 1.0).unwrap();
        assert!(prob.features_from(Mat::zeros(3, 2)).is_err());
    }
}
