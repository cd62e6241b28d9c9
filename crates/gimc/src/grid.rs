//! The grid both selections search ([`SelectionParams`](crate::SelectionParams) for labels,
//! [`CompletionSelectionParams`](crate::CompletionSelectionParams) for completion): map sizes
//! m, RBF widths γ and ridge weights λ, each point fitted for at most `max_iter` outer
//! iterations (the count itself chosen on validation).

use gimc_linalg::Gamma;

use crate::error::{GimcError, Result, check_nonneg, param_err};

/// The m × γ × λ grid of a selection and the iteration cap of each of its fits. The points are
/// visited m outermost, then γ, then λ.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Map sizes m (random directions / landmarks), each ≥ 1.
    pub ms: Vec<usize>,
    /// RBF widths γ: values > 0 or multiples of the `scale` rule, resolved on the features the
    /// map sees ([`Gamma`]).
    pub gammas: Vec<Gamma>,
    /// Ridge weights λ, each finite and ≥ 0.
    pub lambdas: Vec<f64>,
    /// Most outer iterations of every fit (the count used is chosen on validation, ≤ this).
    pub max_iter: usize,
}

impl Grid {
    /// The grid of the given values.
    pub fn new(ms: Vec<usize>, gammas: Vec<Gamma>, lambdas: Vec<f64>, max_iter: usize) -> Self {
        Self {
            ms,
            gammas,
            lambdas,
            max_iter,
        }
    }

    /// The number of (m, γ, λ) points.
    pub fn len(&self) -> usize {
        self.ms.len() * self.gammas.len() * self.lambdas.len()
    }

    /// Whether the grid has no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks a point at least, every m ≥ 1, every γ valid and every λ finite and ≥ 0.
    pub fn check(&self) -> Result<()> {
        if self.is_empty() {
            return Err(GimcError::Empty("selection grid (gammas, lambdas, ms)"));
        }
        if self.ms.contains(&0) {
            return Err(param_err("m", "must be at least 1"));
        }
        for &g in &self.gammas {
            g.check()?;
        }
        for &l in &self.lambdas {
            check_nonneg("lambda", l)?;
        }
        Ok(())
    }
}

/// Writes the `with_ms`, `with_gammas`, `with_lambdas` and `with_max_iter` setters of a params
/// struct whose `grid` field is a [`Grid`].
macro_rules! grid_setters {
    () => {
        /// Sets the m of the grid.
        #[must_use]
        pub fn with_ms(mut self, ms: Vec<usize>) -> Self {
            self.grid.ms = ms;
            self
        }

        /// Sets the γ of the grid.
        #[must_use]
        pub fn with_gammas(mut self, gammas: Vec<gimc_linalg::Gamma>) -> Self {
            self.grid.gammas = gammas;
            self
        }

        /// Sets the λ of the grid.
        #[must_use]
        pub fn with_lambdas(mut self, lambdas: Vec<f64>) -> Self {
            self.grid.lambdas = lambdas;
            self
        }

        /// Sets the iteration cap of every fit.
        #[must_use]
        pub fn with_max_iter(mut self, max_iter: usize) -> Self {
            self.grid.max_iter = max_iter;
            self
        }
    };
}
pub(crate) use grid_setters;
