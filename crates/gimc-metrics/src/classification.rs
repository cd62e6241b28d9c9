//! Classification accuracy for multi-class prediction (DESIGN §4 `gimc-fig2`, `gimc-multiclass`).

use crate::error::{MetricsError, Result};

/// Fraction of items whose predicted class equals the true class, in [0, 1].
///
/// Errors: length mismatch, empty input.
pub fn accuracy(pred: &[usize], truth: &[usize]) -> Result<f64> {
    if pred.len() != truth.len() {
        return Err(MetricsError::LengthMismatch {
            what: "predicted classes (must match truth)",
            expected: truth.len(),
            found: pred.len(),
        });
    }
    if pred.is_empty() {
        return Err(MetricsError::Empty { what: "labels" });
    }
    let right = pred.iter().zip(truth).filter(|(p, t)| p == t).count();
    Ok(right as f64 / pred.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        assert_eq!(accuracy(&[0, 1, 2, 2], &[0, 1, 1, 2]).unwrap(), 0.75);
        assert_eq!(accuracy(&[3], &[3]).unwrap(), 1.0);
        assert!(matches!(
            accuracy(&[], &[]),
            Err(MetricsError::Empty { .. })
        ));
        assert!(matches!(
            accuracy(&[0], &[0, 1]),
            Err(MetricsError::LengthMismatch {
                expected: 2,
                found: 1,
                ..
            })
        ));
    }
}
