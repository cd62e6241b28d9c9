//! The open extension points (DESIGN §2 conventions, §3.1): [`FeatureMap`] (forward pass,
//! dimensions) and [`LearnableMap`] (parameters and the backward pass, i.e. the vector–Jacobian
//! product GIMC needs, DESIGN §3.3), with blanket impls for `&M`, `&mut M` and `Box<M>` so that
//! `Box<dyn FeatureMap>` / `Box<dyn LearnableMap>` work. The blanket impls forward every
//! method, provided ones included, so a borrowed or boxed map keeps its own fast paths (a
//! Nyström map's factored forward pass). Also the input checks shared by the
//! built-in maps.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::{self, check_finite};
use gimc_linalg::faer::{Mat, MatMut, MatRef};
use gimc_linalg::sparse::csr_check_finite;

use crate::Result;
use crate::error::dim_err;

/// A feature map φ: R^d → R^D applied to every row of a feature matrix: Φ = φ(X) (n × D).
///
/// Required: [`input_dim`](FeatureMap::input_dim), [`output_dim`](FeatureMap::output_dim) and
/// [`forward`](FeatureMap::forward). Implementations must accept dense and sparse input (keeping
/// sparse input sparse in their products), give the same Φ for both up to rounding, reject a
/// wrong number of columns with an error rather than a panic, and be deterministic. The
/// [`crate::conformance`] suite checks all of this.
pub trait FeatureMap {
    /// Dimension d of the input rows.
    fn input_dim(&self) -> usize;

    /// Dimension D of the output rows.
    fn output_dim(&self) -> usize;

    /// Φ = φ(X), n × [`output_dim`](FeatureMap::output_dim), for X with
    /// [`input_dim`](FeatureMap::input_dim) columns.
    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>>;

    /// Φ = φ(X) as a product C·M when the map has that structure (Nyström: C = k(X, U) and M
    /// the fixed normalisation), so that a caller needing only ΦᵀΦ = Mᵀ(CᵀC)M and ΦᵀA = Mᵀ(CᵀA)
    /// can skip the n × m × m product forming Φ. Default: `(forward(x), None)`, i.e. M = I.
    fn forward_factored(&self, x: &FeatureMatrix) -> Result<(Mat<f64>, Option<Mat<f64>>)> {
        Ok((self.forward(x)?, None))
    }

    /// φ of the rows `rows` of `x` (in that order), e.g. to process a large X in blocks.
    fn forward_rows(&self, x: &FeatureMatrix, rows: &[usize]) -> Result<Mat<f64>> {
        self.forward(&x.select_rows(rows)?)
    }

    /// The approximate kernel matrix φ(X) φ(Y)ᵀ (n_x × n_y).
    fn approx_kernel(&self, x: &FeatureMatrix, y: &FeatureMatrix) -> Result<Mat<f64>> {
        let px = self.forward(x)?;
        let py = self.forward(y)?;
        Ok(dense::matmul_nt(px.as_ref(), py.as_ref())?)
    }
}

/// A feature map with parameters U that GIMC learns (DESIGN §3.3, Algorithm 1): it exposes the
/// current parameters, lets them be replaced (the Armijo line search tries U − ηg), and computes
/// the vector–Jacobian product ∂f/∂U from G = ∂f/∂Φ without forming any per-row Jacobian.
pub trait LearnableMap: FeatureMap {
    /// The current parameters U (shape fixed for the map's lifetime).
    fn params(&self) -> MatRef<'_, f64>;

    /// Replaces the parameters; errors (leaving the map unchanged) if `params` has the wrong
    /// shape or a non-finite entry.
    fn set_params(&mut self, params: Mat<f64>) -> Result<()>;

    /// ∂f/∂U (the shape of [`params`](LearnableMap::params)) for G = ∂f/∂Φ (n × D) at input
    /// X, i.e. the gradient of ⟨G, φ_U(X)⟩ with respect to U.
    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>>;

    /// [`backward`](LearnableMap::backward) when the caller also holds `features` =
    /// [`forward(x)`](FeatureMap::forward) at the current parameters (GIMC's alternation
    /// always does): a map whose backward pass re-evaluates its forward nonlinearity may reuse
    /// them (random Fourier features skip n·m sin/cos). Same value up to rounding; by default
    /// `features` is ignored. Passing features of other parameters gives a wrong gradient.
    ///
    /// Errors: as [`backward`](LearnableMap::backward); a map that reads `features` checks
    /// their shape (n × D).
    fn backward_at(
        &self,
        x: &FeatureMatrix,
        features: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
    ) -> Result<Mat<f64>> {
        let _ = features;
        self.backward(x, g)
    }

    /// `out += ∂⟨G, φ_U(X)⟩/∂U`: [`backward_at`](LearnableMap::backward_at) added into `out`
    /// (the shape of [`params`](LearnableMap::params)). A fit streamed over row blocks sums
    /// one block's gradient at a time here; a map whose last step is a product XᵀH (random
    /// Fourier features) accumulates it in place instead of allocating a d × m matrix per block.
    /// By default the result of `backward_at` is added.
    ///
    /// Errors: as [`backward_at`](LearnableMap::backward_at), and when `out` has another shape
    /// than the parameters.
    fn backward_add_at(
        &self,
        x: &FeatureMatrix,
        features: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
        mut out: MatMut<'_, f64>,
    ) -> Result<()> {
        let p = self.params();
        if out.shape() != p.shape() {
            return Err(dim_err(
                "LearnableMap::backward_add_at",
                format!("out of shape {} x {}", p.nrows(), p.ncols()),
                format!("{} x {}", out.nrows(), out.ncols()),
            ));
        }
        let grad = self.backward_at(x, features, g)?;
        out += grad;
        Ok(())
    }

    /// Number of scalar parameters.
    fn n_params(&self) -> usize {
        let p = self.params();
        p.nrows() * p.ncols()
    }

    /// U ← U − η·direction (the gradient step of DESIGN §3.3).
    fn step(&mut self, direction: MatRef<'_, f64>, eta: f64) -> Result<()> {
        let p = self.params();
        if direction.shape() != p.shape() {
            return Err(dim_err(
                "LearnableMap::step",
                format!("direction of shape {} x {}", p.nrows(), p.ncols()),
                format!("{} x {}", direction.nrows(), direction.ncols()),
            ));
        }
        let next = Mat::from_fn(p.nrows(), p.ncols(), |i, j| {
            p[(i, j)] - eta * direction[(i, j)]
        });
        self.set_params(next)
    }
}

macro_rules! forward_feature_map {
    ($($ty:ty),*) => {$(
        impl<M: FeatureMap + ?Sized> FeatureMap for $ty {
            fn input_dim(&self) -> usize {
                (**self).input_dim()
            }
            fn output_dim(&self) -> usize {
                (**self).output_dim()
            }
            fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
                (**self).forward(x)
            }
            fn forward_factored(
                &self,
                x: &FeatureMatrix,
            ) -> Result<(Mat<f64>, Option<Mat<f64>>)> {
                (**self).forward_factored(x)
            }
            fn forward_rows(&self, x: &FeatureMatrix, rows: &[usize]) -> Result<Mat<f64>> {
                (**self).forward_rows(x, rows)
            }
            fn approx_kernel(&self, x: &FeatureMatrix, y: &FeatureMatrix) -> Result<Mat<f64>> {
                (**self).approx_kernel(x, y)
            }
        }
    )*};
}

forward_feature_map!(&M, &mut M, Box<M>);

macro_rules! forward_learnable_map {
    ($($ty:ty),*) => {$(
        impl<M: LearnableMap + ?Sized> LearnableMap for $ty {
            fn params(&self) -> MatRef<'_, f64> {
                (**self).params()
            }
            fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
                (**self).set_params(params)
            }
            fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
                (**self).backward(x, g)
            }
            fn backward_at(
                &self,
                x: &FeatureMatrix,
                features: MatRef<'_, f64>,
                g: MatRef<'_, f64>,
            ) -> Result<Mat<f64>> {
                (**self).backward_at(x, features, g)
            }
            fn backward_add_at(
                &self,
                x: &FeatureMatrix,
                features: MatRef<'_, f64>,
                g: MatRef<'_, f64>,
                out: MatMut<'_, f64>,
            ) -> Result<()> {
                (**self).backward_add_at(x, features, g, out)
            }
            fn n_params(&self) -> usize {
                (**self).n_params()
            }
            fn step(&mut self, direction: MatRef<'_, f64>, eta: f64) -> Result<()> {
                (**self).step(direction, eta)
            }
        }
    )*};
}

forward_learnable_map!(&mut M, Box<M>);

/// Checks that `x` has `d` columns and only finite entries (the variants of [`FeatureMatrix`]
/// are public, so a matrix may bypass the checking constructors).
pub fn check_input(op: &'static str, x: &FeatureMatrix, d: usize) -> Result<()> {
    if x.ncols() != d {
        return Err(dim_err(
            op,
            format!("input with {d} columns"),
            format!("{} columns", x.ncols()),
        ));
    }
    match x {
        FeatureMatrix::Dense(m) => check_finite(m.as_ref())?,
        FeatureMatrix::Sparse(m) => csr_check_finite(m)?,
    }
    Ok(())
}

/// Checks that the gradient `g` is `n × big_d` and finite.
pub fn check_grad(op: &'static str, g: MatRef<'_, f64>, n: usize, big_d: usize) -> Result<()> {
    if g.shape() != (n, big_d) {
        return Err(dim_err(
            op,
            format!("G of shape {n} x {big_d}"),
            format!("{} x {}", g.nrows(), g.ncols()),
        ));
    }
    check_finite(g)?;
    Ok(())
}

/// Checks that new parameters have the shape `shape` and only finite entries.
pub fn check_params(op: &'static str, p: MatRef<'_, f64>, shape: (usize, usize)) -> Result<()> {
    if p.shape() != shape {
        return Err(dim_err(
            op,
            format!("parameters of shape {} x {}", shape.0, shape.1),
            format!("{} x {}", p.nrows(), p.ncols()),
        ));
    }
    check_finite(p)?;
    Ok(())
}
