//! The IMC problem (DESIGN §3.2): the side information Φ, Ψ, the observed matrix and how its
//! entries are observed (partial, fully observed, positive-unlabeled), as the weighted loss
//! terms the workspace and the solvers evaluate.

use gimc_linalg::Observed;

use crate::error::{dim_err, param_err};
use crate::{ScreenedFeatures, Side, SolverError};

use super::preconditioner::PreconditionerBasis;

/// One quadratic loss term: the matrix A (as the observed set / the non-zeros) and its weight.
#[derive(Debug, Clone, Copy)]
pub(super) struct Term<'a> {
    pub(super) a: &'a Observed,
    pub(super) weight: f64,
}

/// How the entries of A are observed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ObservationModel {
    /// Only the entries in Ω are observed (GIMC eq. 3).
    Partial,
    /// Every entry is observed; A is given by its non-zeros (multi-label / multi-class).
    FullyObserved,
    /// Positive-unlabeled: Ω holds observed positives, everything else is unlabeled (target 0)
    /// with weight 1 − α, observed entries weight α (DESIGN §3.2, PU / biased IMC).
    PositiveUnlabeled {
        /// The weight α ∈ (0, 1] of the observed positives.
        alpha: f64,
    },
}

/// Whether [`ImcProblem::build`] screens the features for NaN / Inf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Screen {
    /// Screen both sides.
    Yes,
    /// Both sides are [`ScreenedFeatures`]: screened when they were built.
    Done,
}

/// `omega`, or an error if it is empty.
fn non_empty(omega: &Observed) -> Result<&Observed, SolverError> {
    if omega.is_empty() {
        return Err(SolverError::Empty("observed set Ω"));
    }
    Ok(omega)
}

/// An IMC problem: side information Φ, Ψ and the observed matrix (DESIGN §3.2).
#[derive(Debug, Clone, Copy)]
pub struct ImcProblem<'a> {
    pub(super) phi: Side<'a>,
    pub(super) psi: Side<'a>,
    a: &'a Observed,
    pub(super) sampled: Option<Term<'a>>,
    pub(super) full: Option<Term<'a>>,
    model: ObservationModel,
    pub(super) basis_phi: Option<&'a PreconditionerBasis>,
    pub(super) basis_psi: Option<&'a PreconditionerBasis>,
}

impl<'a> ImcProblem<'a> {
    /// Partially observed A: `omega` holds Ω and the observed values. Errors: empty Ω, row /
    /// column counts of Φ, Ψ not matching Ω's shape, a zero feature dimension, NaN / Inf in
    /// the features.
    pub fn partial(phi: Side<'a>, psi: Side<'a>, omega: &'a Observed) -> Result<Self, SolverError> {
        Self::partial_with(phi, psi, non_empty(omega)?, Screen::Yes)
    }

    /// As [`ImcProblem::partial`], with features already screened for NaN / Inf (a
    /// [`ScreenedFeatures`] carries the proof), so they are not screened again: for loops that
    /// build many problems from the same features (GIMC's outer iterations and line-search
    /// trials).
    pub fn partial_screened(
        phi: &'a ScreenedFeatures,
        psi: &'a ScreenedFeatures,
        omega: &'a Observed,
    ) -> Result<Self, SolverError> {
        Self::partial_with(phi.side(), psi.side(), non_empty(omega)?, Screen::Done)
    }

    /// The partially observed problem of `omega` (which may be empty) with the screen as given.
    fn partial_with(
        phi: Side<'a>,
        psi: Side<'a>,
        omega: &'a Observed,
        screen: Screen,
    ) -> Result<Self, SolverError> {
        Self::build(
            phi,
            psi,
            omega,
            Some(Term {
                a: omega,
                weight: 1.0,
            }),
            None,
            ObservationModel::Partial,
            screen,
        )
    }

    /// One process's row shard of a partially observed A, for
    /// [`fit_imc_sharded`](super::fit_imc_sharded): `omega` holds the observed entries of this
    /// process's block of rows (row indices local to the block), `phi` the same rows of the row
    /// features, `psi` the whole column features. As [`ImcProblem::partial`], except that Ω may
    /// be empty here (a process with no rows or no entries); the fit refuses an empty union.
    pub fn partial_shard(
        phi: Side<'a>,
        psi: Side<'a>,
        omega: &'a Observed,
    ) -> Result<Self, SolverError> {
        Self::partial_with(phi, psi, omega, Screen::Yes)
    }

    /// Fully observed A (every entry observed), given by its non-zeros `nonzeros` (explicit
    /// zeros allowed). The fast path of DESIGN §3.2: products go through ΦᵀΦ and ΨᵀΨ.
    pub fn fully_observed(
        phi: Side<'a>,
        psi: Side<'a>,
        nonzeros: &'a Observed,
    ) -> Result<Self, SolverError> {
        if nonzeros.nrows() == 0 || nonzeros.ncols() == 0 {
            return Err(SolverError::Empty(
                "fully observed matrix with no rows or columns",
            ));
        }
        Self::build(
            phi,
            psi,
            nonzeros,
            None,
            Some(Term {
                a: nonzeros,
                weight: 1.0,
            }),
            ObservationModel::FullyObserved,
            Screen::Yes,
        )
    }

    /// Positive-unlabeled A (DESIGN §3.2): `positives` holds the observed positive entries with
    /// their targets (normally 1); every other entry is unlabeled with target 0. The loss is
    /// α·ℓ on observed entries and (1 − α)·ℓ on all others, computed as
    /// (1 − α)·(loss over all entries) + (2α − 1)·(loss over Ω). α ∈ (0, 1]; α ≈ (1 + ρ)/2 when a
    /// fraction ρ of the positives is hidden.
    pub fn pu(
        phi: Side<'a>,
        psi: Side<'a>,
        positives: &'a Observed,
        alpha: f64,
    ) -> Result<Self, SolverError> {
        if !(alpha.is_finite() && alpha > 0.0 && alpha <= 1.0) {
            return Err(param_err(
                "alpha",
                format!("must be in (0, 1], got {alpha}"),
            ));
        }
        if positives.is_empty() {
            return Err(SolverError::Empty("observed positives"));
        }
        let sampled = (2.0 * alpha - 1.0 != 0.0).then_some(Term {
            a: positives,
            weight: 2.0 * alpha - 1.0,
        });
        let full = (alpha < 1.0).then_some(Term {
            a: positives,
            weight: 1.0 - alpha,
        });
        Self::build(
            phi,
            psi,
            positives,
            sampled,
            full,
            ObservationModel::PositiveUnlabeled { alpha },
            Screen::Yes,
        )
    }

    fn build(
        phi: Side<'a>,
        psi: Side<'a>,
        a: &'a Observed,
        sampled: Option<Term<'a>>,
        full: Option<Term<'a>>,
        model: ObservationModel,
        screen: Screen,
    ) -> Result<Self, SolverError> {
        if phi.nrows() != a.nrows() {
            return Err(dim_err(
                "row features Φ",
                format!("{} rows (rows of A)", a.nrows()),
                format!("{} rows", phi.nrows()),
            ));
        }
        if psi.nrows() != a.ncols() {
            return Err(dim_err(
                "column features Ψ",
                format!("{} rows (columns of A)", a.ncols()),
                format!("{} rows", psi.nrows()),
            ));
        }
        if phi.dim() == 0 || psi.dim() == 0 {
            return Err(param_err("features", "feature dimension must be >= 1"));
        }
        if screen == Screen::Yes {
            phi.check_finite("row features Φ")?;
            psi.check_finite("column features Ψ")?;
        }
        Ok(Self {
            phi,
            psi,
            a,
            sampled,
            full,
            model,
            basis_phi: None,
            basis_psi: None,
        })
    }

    /// Uses `phi` / `psi` (from [`preconditioner_bases`](super::preconditioner_bases), possibly of an earlier problem with
    /// other features of the same dimension, e.g. before a GIMC map step) as the Kronecker
    /// preconditioner bases of the CG half-steps instead of computing them for this problem.
    /// Any basis gives a valid preconditioner, so a stale one only costs CG iterations; the
    /// half-steps still stop on their own residual. Errors when a basis does not match the
    /// side's feature dimension.
    pub fn with_preconditioner_bases(
        mut self,
        phi: Option<&'a PreconditionerBasis>,
        psi: Option<&'a PreconditionerBasis>,
    ) -> Result<Self, SolverError> {
        for (name, basis, side) in [("Φ", phi, self.phi), ("Ψ", psi, self.psi)] {
            if let Some(b) = basis
                && b.dim() != side.dim()
            {
                return Err(dim_err(
                    "preconditioner basis",
                    format!("dimension {} (features of {name})", side.dim()),
                    format!("dimension {}", b.dim()),
                ));
            }
        }
        self.basis_phi = phi;
        self.basis_psi = psi;
        Ok(self)
    }

    /// The same problem on other features of the same rows (the row-space reduction of an ALS
    /// fit, [`Reduced`](super::hessian::Reduced)), with the preconditioner bases given for them.
    /// The new sides were screened when they were built.
    pub(super) fn on_features<'b>(
        &self,
        phi: Side<'b>,
        psi: Side<'b>,
        basis_phi: Option<&'b PreconditionerBasis>,
        basis_psi: Option<&'b PreconditionerBasis>,
    ) -> ImcProblem<'b>
    where
        'a: 'b,
    {
        debug_assert_eq!((phi.nrows(), psi.nrows()), self.shape());
        ImcProblem {
            phi,
            psi,
            a: self.a,
            sampled: self.sampled,
            full: self.full,
            model: self.model,
            basis_phi,
            basis_psi,
        }
    }

    /// Row features Φ.
    pub fn phi(&self) -> Side<'a> {
        self.phi
    }

    /// Column features Ψ.
    pub fn psi(&self) -> Side<'a> {
        self.psi
    }

    /// (n_x, n_y).
    pub fn shape(&self) -> (usize, usize) {
        (self.phi.nrows(), self.psi.nrows())
    }

    /// (D_x, D_y): the shapes of W and H have these many rows.
    pub fn dims(&self) -> (usize, usize) {
        (self.phi.dim(), self.psi.dim())
    }

    /// How A is observed.
    pub fn model(&self) -> ObservationModel {
        self.model
    }

    /// The observed set / non-zeros of A.
    pub fn observed(&self) -> &'a Observed {
        self.a
    }
}
