//! Matrix-completion and transduction errors: relative Frobenius error (DESIGN §4 `gimc-fig1`),
//! transductive label error and relative feature-imputation error (DESIGN §3.5, §4 `mc1-*`).
//!
//! The transduction metrics take the matrices flattened to slices (any order, as long as the
//! values, predictions and mask use the same one) and a mask `observed` whose `true` entries
//! were seen in training; only the unobserved (`false`) entries are scored.

use gimc_linalg::faer::MatRef;

use crate::error::{MetricsError, Position, Result};

/// Relative Frobenius error ‖A − Â‖_F / ‖A‖_F of an estimate `est` of `truth`.
///
/// Errors: shape mismatch, a non-finite entry in either matrix (with its position),
/// ‖A‖_F = 0 (including an empty matrix).
pub fn relative_frobenius_error(truth: MatRef<'_, f64>, est: MatRef<'_, f64>) -> Result<f64> {
    let expected = (truth.nrows(), truth.ncols());
    let found = (est.nrows(), est.ncols());
    if expected != found {
        return Err(MetricsError::ShapeMismatch {
            what: "estimate (must match the truth)",
            expected,
            found,
        });
    }
    let (mut num, mut den) = (0.0, 0.0);
    for j in 0..truth.ncols() {
        for i in 0..truth.nrows() {
            let (a, b) = (truth[(i, j)], est[(i, j)]);
            for (what, v) in [("truth", a), ("estimate", b)] {
                if !v.is_finite() {
                    return Err(MetricsError::NonFinite {
                        what,
                        position: Position::Entry(i, j),
                        value: v,
                    });
                }
            }
            num += (a - b) * (a - b);
            den += a * a;
        }
    }
    if den == 0.0 {
        return Err(MetricsError::ZeroDenominator {
            what: "relative Frobenius error (‖A‖_F = 0)",
        });
    }
    Ok((num / den).sqrt())
}

/// Checks that `other` has the length of `truth`.
fn same_len(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected != found {
        return Err(MetricsError::LengthMismatch {
            what,
            expected,
            found,
        });
    }
    Ok(())
}

/// Transductive label error in percent: 100 × (unobserved labels whose sign is wrong) /
/// (unobserved labels), DESIGN §3.5.
///
/// `pred` holds predicted scores or signs (e.g. z_ij + b_i, or ±1 as `i8`), `truth` the true
/// ±1 labels (any non-zero value; only its sign is used), `observed[p]` is `true` for labels
/// seen in training (not scored). A prediction counts as right when `pred × truth > 0`, so a
/// prediction of exactly 0 is counted wrong.
///
/// Errors: length mismatch, a NaN prediction, a zero or non-finite true label, no unobserved
/// label.
pub fn transductive_label_error<P, T>(pred: &[P], truth: &[T], observed: &[bool]) -> Result<f64>
where
    P: Copy + Into<f64>,
    T: Copy + Into<f64>,
{
    same_len("predicted labels", truth.len(), pred.len())?;
    same_len("observed mask", truth.len(), observed.len())?;
    let (mut wrong, mut scored) = (0usize, 0usize);
    for (p, ((&y_hat, &y), &seen)) in pred.iter().zip(truth).zip(observed).enumerate() {
        if seen {
            continue;
        }
        let (y_hat, y): (f64, f64) = (y_hat.into(), y.into());
        if y_hat.is_nan() {
            return Err(MetricsError::NonFinite {
                what: "predicted labels",
                position: Position::Index(p),
                value: y_hat,
            });
        }
        if y == 0.0 || !y.is_finite() {
            return Err(MetricsError::InvalidValue {
                what: "true labels",
                position: Position::Index(p),
                value: y,
                expected: "a non-zero finite sign (±1)",
            });
        }
        scored += 1;
        if y_hat * y <= 0.0 {
            wrong += 1;
        }
    }
    if scored == 0 {
        return Err(MetricsError::ZeroDenominator {
            what: "transductive label error (no unobserved label)",
        });
    }
    Ok(100.0 * wrong as f64 / scored as f64)
}

/// Relative feature-imputation error Σ_{∉Ω}(x − x̂)² / Σ_{∉Ω} x² over the entries not in the
/// observed set Ω (DESIGN §3.5; the NIPS 2010 paper's Tables 1–5 print this ratio, not its
/// square root). `observed[p]` is `true` for entries in Ω.
///
/// Errors: length mismatch, a non-finite unobserved value or estimate, a zero denominator
/// (no unobserved entry, or all of them zero).
pub fn relative_imputation_error(truth: &[f64], est: &[f64], observed: &[bool]) -> Result<f64> {
    same_len("imputed values", truth.len(), est.len())?;
    same_len("observed mask", truth.len(), observed.len())?;
    let (mut num, mut den) = (0.0, 0.0);
    for (p, ((&x, &x_hat), &seen)) in truth.iter().zip(est).zip(observed).enumerate() {
        if seen {
            continue;
        }
        for (what, v) in [("true values", x), ("imputed values", x_hat)] {
            if !v.is_finite() {
                return Err(MetricsError::NonFinite {
                    what,
                    position: Position::Index(p),
                    value: v,
                });
            }
        }
        num += (x - x_hat) * (x - x_hat);
        den += x * x;
    }
    if den == 0.0 {
        return Err(MetricsError::ZeroDenominator {
            what: "relative imputation error (Σ x² over unobserved entries)",
        });
    }
    Ok(num / den)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::faer::Mat;

    #[test]
    fn hand_computed_frobenius() {
        let a = Mat::from_fn(2, 2, |i, j| [[3.0, 0.0], [0.0, 4.0]][i][j]);
        let b = Mat::from_fn(2, 2, |i, j| [[3.0, 1.0], [0.0, 4.0]][i][j]);
        // ‖A − B‖ = 1, ‖A‖ = 5.
        assert!((relative_frobenius_error(a.as_ref(), b.as_ref()).unwrap() - 0.2).abs() < 1e-15);
        assert_eq!(
            relative_frobenius_error(a.as_ref(), a.as_ref()).unwrap(),
            0.0
        );
        let z = Mat::<f64>::zeros(2, 2);
        assert!(matches!(
            relative_frobenius_error(z.as_ref(), a.as_ref()),
            Err(MetricsError::ZeroDenominator { .. })
        ));
        let c = Mat::<f64>::zeros(2, 3);
        assert!(matches!(
            relative_frobenius_error(a.as_ref(), c.as_ref()),
            Err(MetricsError::ShapeMismatch { .. })
        ));
        let mut n = a.clone();
        n[(1, 0)] = f64::INFINITY;
        assert_eq!(
            relative_frobenius_error(a.as_ref(), n.as_ref()),
            Err(MetricsError::NonFinite {
                what: "estimate",
                position: Position::Entry(1, 0),
                value: f64::INFINITY
            })
        );
    }

    #[test]
    fn hand_computed_label_error() {
        let truth = [1i8, -1, 1, -1, 1];
        let pred = [0.3, 0.2, -0.1, -5.0, 0.0];
        let observed = [true, false, false, false, false];
        // scored 4: (0.2,-1) wrong, (-0.1,1) wrong, (-5,-1) right, (0,1) wrong → 75 %.
        assert_eq!(
            transductive_label_error(&pred, &truth, &observed).unwrap(),
            75.0
        );
        let signs = [1i8, 1, -1, -1, 1];
        assert_eq!(
            transductive_label_error(&signs, &truth, &observed).unwrap(),
            50.0
        );
        assert!(matches!(
            transductive_label_error(&pred, &truth, &[true; 5]),
            Err(MetricsError::ZeroDenominator { .. })
        ));
        assert!(matches!(
            transductive_label_error(&pred, &[1.0, 0.0, 1.0, 1.0, 1.0], &observed),
            Err(MetricsError::InvalidValue {
                position: Position::Index(1),
                ..
            })
        ));
        assert!(matches!(
            transductive_label_error(&[f64::NAN], &[1.0], &[false]),
            Err(MetricsError::NonFinite { .. })
        ));
        assert!(matches!(
            transductive_label_error(&pred, &truth, &observed[..3]),
            Err(MetricsError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn hand_computed_imputation_error() {
        let x = [1.0, 2.0, -2.0, 5.0];
        let x_hat = [0.0, 1.0, -2.0, 100.0];
        let observed = [false, false, false, true];
        // (1 + 1 + 0) / (1 + 4 + 4) = 2/9; the observed entry is ignored.
        let e = relative_imputation_error(&x, &x_hat, &observed).unwrap();
        assert!((e - 2.0 / 9.0).abs() < 1e-15);
        assert!(matches!(
            relative_imputation_error(&x, &x_hat, &[true; 4]),
            Err(MetricsError::ZeroDenominator { .. })
        ));
        assert!(matches!(
            relative_imputation_error(&x, &[0.0, f64::NAN, 0.0, 0.0], &observed),
            Err(MetricsError::NonFinite {
                position: Position::Index(1),
                ..
            })
        ));
        assert!(matches!(
            relative_imputation_error(&x, &x_hat[..2], &observed),
            Err(MetricsError::LengthMismatch { .. })
        ));
    }
}
