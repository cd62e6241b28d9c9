//! A fitted completion model ([`CompletionModel`]): maps on both sides and the factors W, H.

use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::dense::check_finite;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::{FeatureMatrix, Observed, ValidCgParams};
use gimc_solvers::{FeatureSides, ImcProblem, ImcWorkspace, Side};

use super::data::CompletionData;
use crate::error::Result;
use crate::error::{dim_err, input_err};
use crate::registry::BoxedMap;

/// A fitted completion model Â = φ_U(X) W Hᵀ ψ_V(Y)ᵀ, inductive on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionModel<MR = BoxedMap, MC = BoxedMap> {
    pub(crate) row_map: MR,
    pub(crate) col_map: MC,
    pub(crate) w: Mat<f64>,
    pub(crate) h: Mat<f64>,
    pub(crate) lambda: f64,
    pub(crate) method: String,
}

/// The parts of a [`CompletionModel`], for [`CompletionModel::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionParts<MR = BoxedMap, MC = BoxedMap> {
    /// The row map φ_U.
    pub row_map: MR,
    /// The column map ψ_V.
    pub col_map: MC,
    /// W (D_x × k).
    pub w: Mat<f64>,
    /// H (D_y × k).
    pub h: Mat<f64>,
    /// The λ the factors were fitted with.
    pub lambda: f64,
}

impl<MR: FeatureMap, MC: FeatureMap> CompletionModel<MR, MC> {
    /// A model from its parts. Errors: W not D_x × k, H not D_y × k, non-finite factors.
    pub fn new(parts: CompletionParts<MR, MC>) -> Result<Self> {
        let CompletionParts {
            row_map,
            col_map,
            w,
            h,
            lambda,
        } = parts;
        if w.nrows() != row_map.output_dim() || h.nrows() != col_map.output_dim() {
            return Err(dim_err(
                "factors (W, H)",
                format!(
                    "{} and {} rows (the maps' output dimensions)",
                    row_map.output_dim(),
                    col_map.output_dim()
                ),
                format!("{} and {}", w.nrows(), h.nrows()),
            ));
        }
        if w.ncols() != h.ncols() || w.ncols() == 0 {
            return Err(dim_err(
                "factors (W, H)",
                "the same number (>= 1) of columns".to_string(),
                format!("{} and {}", w.ncols(), h.ncols()),
            ));
        }
        check_finite(w.as_ref())?;
        check_finite(h.as_ref())?;
        Ok(Self {
            row_map,
            col_map,
            w,
            h,
            lambda,
            method: String::from("gimc"),
        })
    }

    /// The row map φ_U.
    pub fn row_map(&self) -> &MR {
        &self.row_map
    }

    /// The column map ψ_V.
    pub fn col_map(&self) -> &MC {
        &self.col_map
    }

    /// Consumes the model, returning its row and column maps.
    pub fn into_maps(self) -> (MR, MC) {
        (self.row_map, self.col_map)
    }

    /// W (D_x × k).
    pub fn w(&self) -> MatRef<'_, f64> {
        self.w.as_ref()
    }

    /// H (D_y × k).
    pub fn h(&self) -> MatRef<'_, f64> {
        self.h.as_ref()
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The rank k.
    pub fn rank(&self) -> usize {
        self.w.ncols()
    }

    /// The method name stored in model files.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Sets the method name.
    pub fn set_method(&mut self, method: impl Into<String>) {
        self.method = method.into();
    }

    /// P = φ_U(X) W (n_x × k): the row embedding (semi-supervised clustering takes the top
    /// left singular vectors of it, DESIGN §3.3).
    pub fn row_factors(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        let phi = self.row_map.forward(x)?;
        Ok(gimc_linalg::dense::matmul(phi.as_ref(), self.w.as_ref())?)
    }

    /// Q = ψ_V(Y) H (n_y × k).
    pub fn col_factors(&self, y: &FeatureMatrix) -> Result<Mat<f64>> {
        let psi = self.col_map.forward(y)?;
        Ok(gimc_linalg::dense::matmul(psi.as_ref(), self.h.as_ref())?)
    }

    /// Â_ij for the pairs (i, j), i a row of `x`, j a row of `y` (new rows are fine).
    pub fn predict_entries(
        &self,
        x: &FeatureMatrix,
        y: &FeatureMatrix,
        pairs: &[(usize, usize)],
    ) -> Result<Vec<f64>> {
        let (p, q) = (self.row_factors(x)?, self.col_factors(y)?);
        Ok(gimc_linalg::dense::row_pair_dots(
            p.as_ref(),
            q.as_ref(),
            pairs,
        )?)
    }

    /// Â_ij = W_i · H_j for the pairs (i, j) of the training matrix, for a model whose row and
    /// column features are the indicators of the indices themselves (plain matrix completion,
    /// `gimc complete --method mc-als | mc-nuclear`: identity maps as wide as the matrix), so
    /// no feature rows are needed. Errors when a map is not of that shape (D ≠ its input
    /// dimension, or W / H not one row per index) or a pair is out of range.
    pub fn predict_by_index(&self, pairs: &[(usize, usize)]) -> Result<Vec<f64>> {
        let indexed = |input: usize, output: usize, rows: usize| input == output && output == rows;
        if !indexed(
            self.row_map.input_dim(),
            self.row_map.output_dim(),
            self.w.nrows(),
        ) || !indexed(
            self.col_map.input_dim(),
            self.col_map.output_dim(),
            self.h.nrows(),
        ) {
            return Err(input_err(
                "model",
                format!(
                    "a {} model maps feature rows: give the row and column features",
                    self.method
                ),
            ));
        }
        let (w, h) = (self.w.as_ref(), self.h.as_ref());
        if let Some(&(i, j)) = pairs
            .iter()
            .find(|&&(i, j)| i >= w.nrows() || j >= h.nrows())
        {
            return Err(input_err(
                "pairs",
                format!(
                    "pair ({i}, {j}) out of range for {} rows and {} columns",
                    w.nrows(),
                    h.nrows()
                ),
            ));
        }
        Ok(pairs
            .iter()
            .map(|&(i, j)| (0..w.ncols()).map(|c| w[(i, c)] * h[(j, c)]).sum())
            .collect())
    }

    /// The dense Â (n_x × n_y) for small problems (e.g. the toy of `gimc-fig1`).
    pub fn predict_dense(&self, x: &FeatureMatrix, y: &FeatureMatrix) -> Result<Mat<f64>> {
        let p = self.row_factors(x)?;
        let q = self.col_factors(y)?;
        Ok(gimc_linalg::dense::matmul_nt(p.as_ref(), q.as_ref())?)
    }

    /// f(W, H, U, V) on `data`.
    pub fn objective(&self, data: &CompletionData<'_>) -> Result<f64> {
        let (phi, psi) = self.features(data)?;
        let problem = problem(&phi, &psi, data.omega)?;
        Ok(ImcWorkspace::new(&problem).objective(self.lambda, self.w.as_ref(), self.h.as_ref())?)
    }

    pub(crate) fn features(
        &self,
        data: &CompletionData<'_>,
    ) -> Result<(FeatureMatrix, FeatureMatrix)> {
        Ok((
            FeatureMatrix::Dense(self.row_map.forward(data.x)?),
            FeatureMatrix::Dense(self.col_map.forward(data.y)?),
        ))
    }

    /// The W half-step (ridge in W with H and the maps fixed, solved by CG warm-started from
    /// the current W), as in step (1) of Algorithm 1.
    pub fn w_step(&mut self, data: &CompletionData<'_>, cg: &ValidCgParams) -> Result<()> {
        let (phi, psi) = self.features(data)?;
        let problem = problem(&phi, &psi, data.omega)?;
        ImcWorkspace::new(&problem).w_step(self.lambda, self.h.as_ref(), self.w.as_mut(), cg)?;
        Ok(())
    }
}

impl<MR: LearnableMap, MC: LearnableMap> CompletionModel<MR, MC> {
    /// (∂f/∂U, ∂f/∂V) at the current (W, H, U, V): the backward passes of ∂f/∂Φ = (RQ)Wᵀ and
    /// ∂f/∂Ψ = (RᵀP)Hᵀ.
    pub fn gradients(&self, data: &CompletionData<'_>) -> Result<(Mat<f64>, Mat<f64>)> {
        let (phi, psi) = self.features(data)?;
        let problem = problem(&phi, &psi, data.omega)?;
        let fg = ImcWorkspace::new(&problem).feature_gradients(
            self.w.as_ref(),
            self.h.as_ref(),
            FeatureSides::Both,
        )?;
        let (Some(d_phi), Some(d_psi)) = (fg.d_phi, fg.d_psi) else {
            return Err(input_err("features", "both sides must have features"));
        };
        Ok((
            self.row_map.backward(data.x, d_phi.as_ref())?,
            self.col_map.backward(data.y, d_psi.as_ref())?,
        ))
    }
}

pub(crate) fn problem<'a>(
    phi: &'a FeatureMatrix,
    psi: &'a FeatureMatrix,
    omega: &'a Observed,
) -> Result<ImcProblem<'a>> {
    Ok(ImcProblem::partial(
        Side::Features(phi),
        Side::Features(psi),
        omega,
    )?)
}
