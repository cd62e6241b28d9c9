//! The one entry point of general completion: [`complete`] runs any [`CompletionMethod`] with
//! its settings chosen on held-out entries of Ω.

use gimc_linalg::Observed;
use gimc_solvers::{Observer, Side};

use crate::completion::data::CompletionData;
use crate::completion::factors::{FactorSelection, select_factors};
use crate::completion::method::CompletionMethod;
use crate::completion::select::{
    CompletionSelection, ValidCompletionSelectionParams, select_completion,
};
use crate::error::Result;
use crate::registry::MapRegistry;

/// What [`complete`] returns: the factors of a solver's method, or GIMC's model with its maps.
#[derive(Debug)]
pub enum Completed {
    /// MC-ALS, IMC, nuclear-norm MC / IMC or PU-IMC: factors W, H and the chosen λ (and ρ).
    Factors(FactorSelection),
    /// GIMC (or IMC with random maps): the chosen (m, γ, λ, iterations) and the model.
    Maps(CompletionSelection),
}

/// A matrix observed on Ω, with what describes its rows and columns: what [`complete`]
/// completes.
#[derive(Debug, Clone, Copy)]
pub struct ObservedMatrix<'a> {
    /// The rows' features Φ, or [`Side::Identity`] for none.
    pub phi: Side<'a>,
    /// The columns' features Ψ, or [`Side::Identity`] for none.
    pub psi: Side<'a>,
    /// Ω with the observed values.
    pub omega: &'a Observed,
}

/// Completes `matrix` with `method`, its rows and columns described by its `phi` and `psi`
/// (features, or [`Side::Identity`] for none): the grid of `params` is scored on a
/// seeded held-out part of Ω (`params.holdout`, the same split for every method) and the best
/// point refitted on all of Ω.
///
/// - The solvers' methods search λ (PU-IMC: λ and ρ, by the held-out AUC; the others by the
///   held-out RMSE) at `params.rank` and `params.max_iter`; `observer` sees every fit's
///   iterations and may stop them.
/// - The map methods ([`CompletionMethod::Maps`]) search m, γ, λ and the iteration count with
///   the family's maps on both sides ([`select_completion`]); they need features on both sides.
///
/// ```
/// use gimc::{
///     CompletionMethod, CompletionSelectionParams, Completed, MapRegistry, ObservedMatrix, complete,
/// };
/// use gimc_linalg::Observed;
/// use gimc_solvers::{NoObserver, Side};
///
/// // a rank-1 10 × 8 matrix, 60 % of it observed
/// let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
/// for i in 0..10 {
///     for j in 0..8 {
///         if (i * 7 + j * 3) % 5 < 3 {
///             r.push(i);
///             c.push(j);
///             v.push((i as f64 + 1.0) * (j as f64 - 3.5));
///         }
///     }
/// }
/// let omega = Observed::from_triplets(10, 8, &r, &c, &v)?;
/// let registry = MapRegistry::builtin();
/// let method = CompletionMethod::parse("mc-nuclear", &registry)?;
/// let params = CompletionSelectionParams::default()
///     .with_lambdas(vec![1.0, 0.01])
///     .with_holdout(0.2)
///     .with_rank(2)
///     .with_max_iter(50)
///     .with_seed(7)
///     .check()?;
/// let (rows, cols) = (Side::Identity(10), Side::Identity(8));
/// let matrix = ObservedMatrix { phi: rows, psi: cols, omega: &omega };
/// let Completed::Factors(fit) = complete(&method, matrix, &params, &registry, &mut NoObserver)?
/// else {
///     unreachable!("mc-nuclear is a factor method")
/// };
/// assert_eq!(fit.scores.len(), 2);
/// let z = fit.model.predict_entries(rows, cols, &[(1, 2)])?;
/// assert!((z[0] - 2.0 * -1.5).abs() < 0.5, "{z:?}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn complete(
    method: &CompletionMethod,
    matrix: ObservedMatrix<'_>,
    params: &ValidCompletionSelectionParams,
    registry: &MapRegistry,
    observer: &mut (impl Observer + ?Sized),
) -> Result<Completed> {
    let ObservedMatrix { phi, psi, omega } = matrix;
    method.check_sides(phi, psi)?;
    match (method, phi, psi) {
        (CompletionMethod::Maps { family, learn }, Side::Features(x), Side::Features(y)) => {
            let family = registry.family(family)?;
            let data = CompletionData::new(omega, x, y)?;
            Ok(Completed::Maps(select_completion(
                &data, family, *learn, params,
            )?))
        }
        _ => Ok(Completed::Factors(select_factors(
            method,
            (phi, psi),
            omega,
            params,
            observer,
        )?)),
    }
}
