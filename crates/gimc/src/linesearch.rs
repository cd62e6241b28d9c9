//! Armijo backtracking on the feature-map parameters (DESIGN §3.3, Algorithm 1 steps 2–3):
//! accept η when f(U − ηg) ≤ f(U) − σ η ‖g‖², trying η = 2·(last accepted step) first and
//! halving, with a bounded number of halvings; when none is accepted the iterate is kept (the
//! caller keeps the last good iterate, DESIGN §7).

use crate::error::Result;
use crate::error::{check_pos, param_err};

gimc_linalg::params! {
    /// Parameters of the Armijo line search. Build with [`LineSearchParams::default`] and the
    /// `with_*` methods; [`LineSearchParams::check`] validates them into a
    /// [`ValidLineSearchParams`]. The fits check them as part of their own parameters
    /// ([`LabelParams`](crate::LabelParams), [`SelectionParams`](crate::SelectionParams),
    /// [`CompletionParams`](crate::CompletionParams)).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct LineSearchParams => ValidLineSearchParams {
        /// Sufficient-decrease constant σ ∈ (0, 1). Default 1e-4.
        pub sigma: f64 = 1e-4 => with_sigma,
        /// The first trial step η₀ of the first outer iteration. `None` (the default) uses
        /// η₀ = min(‖U‖_F / ‖g‖_F, 0.1·|f| / ‖g‖²_F): no longer than the parameters themselves and
        /// predicting (to first order) at most a 10 % decrease of f; both terms scale correctly
        /// when f or U is rescaled. 1 when neither is defined.
        pub initial_step: Option<f64> = None => with_initial_step,
        /// Factor applied to the last accepted step to get the next first trial. Default 2.
        pub growth: f64 = 2.0 => with_growth,
        /// Maximum number of halvings per search (so at most `max_halvings + 1` trials).
        /// Default 30.
        pub max_halvings: usize = 30 => with_max_halvings,
        /// Step control on the map update: every first trial is capped so that the move
        /// ‖η g‖_F is at most this fraction ρ of ‖U‖_F (a trust region relative to the map's own
        /// size). `None` (the default) caps only the first search, at ρ = 1.
        pub max_relative_step: Option<f64> = None => with_max_relative_step,
    }
    /// Checks σ ∈ (0, 1), growth ≥ 1, and a positive finite initial step and relative step
    /// when given.
    check |this| -> crate::GimcError {
        if !(this.sigma > 0.0 && this.sigma < 1.0) {
            return Err(param_err(
                "line_search.sigma",
                format!("must be in (0, 1), got {}", this.sigma),
            ));
        }
        if !(this.growth.is_finite() && this.growth >= 1.0) {
            return Err(param_err(
                "line_search.growth",
                format!("must be finite and >= 1, got {}", this.growth),
            ));
        }
        if let Some(s) = this.initial_step {
            check_pos("line_search.initial_step", s)?;
        }
        if let Some(r) = this.max_relative_step {
            check_pos("line_search.max_relative_step", r)?;
        }
    }
}

/// What one search found.
#[derive(Debug)]
pub(crate) struct Accepted<T> {
    /// The accepted step η.
    pub eta: f64,
    /// The objective at the accepted point.
    pub objective: f64,
    /// Whatever the trial computed at the accepted point (features, Gram matrix, W, …).
    pub payload: T,
}

/// The outcome of a search: an accepted step, or none after `trials` trials.
#[derive(Debug)]
pub(crate) enum Search<T> {
    /// A step satisfying the Armijo condition.
    Accepted(Accepted<T>, usize),
    /// No step was accepted within the halving budget.
    Failed(usize),
}

/// Runs the search from `eta0`. `trial(η)` evaluates the objective at U − ηg and returns it
/// with a payload; a trial whose objective is not finite, or that fails in a way the caller
/// maps to `Ok(None)` (e.g. a kernel matrix that stopped being positive definite), counts as a
/// rejected step.
pub(crate) fn armijo<T>(
    f0: f64,
    grad_sq: f64,
    eta0: f64,
    params: &LineSearchParams,
    mut trial: impl FnMut(f64) -> Result<Option<(f64, T)>>,
) -> Result<Search<T>> {
    let mut eta = eta0;
    let mut trials = 0;
    for _ in 0..=params.max_halvings {
        trials += 1;
        if let Some((f, payload)) = trial(eta)?
            && f.is_finite()
            && f <= f0 - params.sigma * eta * grad_sq
        {
            return Ok(Search::Accepted(
                Accepted {
                    eta,
                    objective: f,
                    payload,
                },
                trials,
            ));
        }
        eta *= 0.5;
    }
    Ok(Search::Failed(trials))
}

/// The first trial step: `growth`·(last accepted) when there is one, else the configured
/// initial step or min(‖U‖/‖g‖, 0.1·|f|/‖g‖²); with `max_relative_step` ρ, at most ρ‖U‖/‖g‖.
pub(crate) fn first_step(
    params: &LineSearchParams,
    last: Option<f64>,
    f: f64,
    u_norm: f64,
    g_norm: f64,
) -> f64 {
    let eta = match (last, params.initial_step) {
        (Some(l), _) => params.growth * l,
        (None, Some(s)) => s,
        (None, None) => {
            let by_size = u_norm / g_norm;
            let by_decrease = 0.1 * f.abs() / (g_norm * g_norm);
            let eta = [by_size, by_decrease]
                .into_iter()
                .filter(|v| v.is_finite() && *v > 0.0)
                .fold(f64::INFINITY, f64::min);
            if eta.is_finite() { eta } else { 1.0 }
        }
    };
    match params.max_relative_step {
        Some(rho) => {
            let cap = rho * u_norm / g_norm;
            if cap.is_finite() && cap > 0.0 {
                eta.min(cap)
            } else {
                eta
            }
        }
        None => eta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armijo_accepts_the_first_sufficient_decrease_and_fails_cleanly() {
        // f(u) = u², at u = 1, g = 2: f(1 − 2η) ≤ 1 − σ·η·4
        let p = LineSearchParams::default();
        let s = armijo(1.0, 4.0, 8.0, &p, |eta| {
            let u = 1.0 - 2.0 * eta;
            Ok(Some((u * u, u)))
        })
        .unwrap();
        match s {
            Search::Accepted(a, trials) => {
                // 8, 4, 2, 1 fail (f ≥ 1); 0.5 gives u = 0
                assert_eq!(trials, 5);
                assert_eq!(a.eta, 0.5);
                assert_eq!(a.payload, 0.0);
            }
            Search::Failed(_) => panic!("must accept"),
        }
        // an ascent direction never satisfies the condition
        let s = armijo(1.0, 4.0, 1.0, &p, |eta| Ok(Some((1.0 + eta, ())))).unwrap();
        assert!(matches!(s, Search::Failed(31)));
        // rejected trials (None, NaN) just halve
        let s = armijo(1.0, 1.0, 1.0, &p, |eta| {
            Ok(if eta > 0.6 {
                None
            } else if eta > 0.3 {
                Some((f64::NAN, ()))
            } else {
                Some((0.0, ()))
            })
        })
        .unwrap();
        assert!(matches!(s, Search::Accepted(_, 3)));
        assert_eq!(first_step(&p, Some(0.25), 1.0, 1.0, 1.0), 0.5);
        assert_eq!(first_step(&p, None, 100.0, 3.0, 1.5), 2.0);
        assert_eq!(first_step(&p, None, 2.25, 3.0, 1.5), 0.1);
        assert_eq!(first_step(&p, None, 100.0, 0.0, 1.5), 0.1 * 100.0 / 2.25);
        assert_eq!(first_step(&p, None, 0.0, 0.0, 1.5), 1.0);
        let q = LineSearchParams {
            initial_step: Some(0.1),
            ..p
        };
        assert_eq!(first_step(&q, None, 1.0, 3.0, 1.5), 0.1);
        // the relative cap bounds every first trial, the grown one included: ρ‖U‖/‖g‖ = 0.2
        let capped = LineSearchParams {
            max_relative_step: Some(0.1),
            ..p
        };
        let near = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(near(first_step(&capped, Some(0.25), 1.0, 3.0, 1.5), 0.2));
        assert_eq!(first_step(&capped, Some(0.05), 1.0, 3.0, 1.5), 0.1);
        assert!(near(first_step(&capped, None, 100.0, 3.0, 1.5), 0.2));
        assert!(near(
            first_step(&capped, None, 100.0, 0.0, 1.5),
            0.1 * 100.0 / 2.25
        ));
        assert!(
            LineSearchParams {
                max_relative_step: Some(-1.0),
                ..p
            }
            .check()
            .is_err()
        );
        assert!(LineSearchParams { sigma: 1.0, ..p }.check().is_err());
        assert!(LineSearchParams { growth: 0.5, ..p }.check().is_err());
        assert!(
            LineSearchParams {
                initial_step: Some(0.0),
                ..p
            }
            .check()
            .is_err()
        );
    }
}
