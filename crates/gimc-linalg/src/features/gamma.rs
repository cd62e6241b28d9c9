//! The RBF width: the data-adaptive scale rule γ = 1 / (d · Var X) and [`Gamma`], a fixed
//! value or a multiple of that rule.

use super::FeatureMatrix;
use crate::{LinalgError, Result};

impl FeatureMatrix {
    /// The data-adaptive RBF width γ = 1 / (d · Var X) (scikit-learn's `gamma = "scale"`), with
    /// Var X the variance of all n·d entries (implicit zeros of sparse storage included): the
    /// kernel exp(−γ‖x − y‖²) then sees squared distances in units of their typical size
    /// 2·d·Var X. Computed on the features as the map sees them (after any standardisation or
    /// row normalisation). A constant matrix (Var X = 0) gives γ = 1, as scikit-learn does.
    ///
    /// ```
    /// use gimc_linalg::{FeatureMatrix, faer::Mat};
    /// // entries 0, 1, 2, 3: variance 1.25 over d = 2 columns
    /// let x = FeatureMatrix::dense(Mat::from_fn(2, 2, |i, j| (2 * i + j) as f64)).unwrap();
    /// assert!((x.gamma_scale() - 1.0 / (2.0 * 1.25)).abs() < 1e-12);
    /// ```
    pub fn gamma_scale(&self) -> f64 {
        gamma_scale_from_moments(self.value_moments(), self.ncols())
    }

    /// (Σ x, Σ x², number of cells n·d) over every cell, zeros included: the sums behind
    /// [`gamma_scale`](Self::gamma_scale), which shards of the rows can add up.
    pub fn value_moments(&self) -> (f64, f64, f64) {
        let cells = self.nrows() as f64 * self.ncols() as f64;
        let (sum, sumsq) = match self {
            Self::Dense(m) => (0..m.ncols()).fold((0.0, 0.0), |(s, q), j| {
                let col = m.col_as_slice(j);
                (
                    s + col.iter().sum::<f64>(),
                    q + col.iter().map(|v| v * v).sum::<f64>(),
                )
            }),
            Self::Sparse(m) => (m.data().iter().sum(), m.data().iter().map(|v| v * v).sum()),
        };
        (sum, sumsq, cells)
    }
}

/// The scale rule γ = 1 / (d · Var X) from [`FeatureMatrix::value_moments`] (summed over
/// shards of the rows, for a data-parallel fit) and the column count d; 1 when the variance is
/// zero or not finite.
pub fn gamma_scale_from_moments((sum, sumsq, cells): (f64, f64, f64), ncols: usize) -> f64 {
    if cells == 0.0 {
        return 1.0;
    }
    let mean = sum / cells;
    let var = (sumsq / cells - mean * mean).max(0.0);
    if var > 0.0 && var.is_finite() {
        1.0 / (ncols as f64 * var)
    } else {
        1.0
    }
}

/// An RBF width γ: a fixed value, or a multiple of the data-adaptive scale rule
/// ([`FeatureMatrix::gamma_scale`], scikit-learn's `gamma = "scale"`), resolved on the features
/// as the map sees them (after any standardisation or row normalisation). The default is the
/// rule itself, so a width tuned on one data set is never silently reused on another.
///
/// Written and parsed as on the command line: a number (`0.002`), `scale`, or `F*scale`.
///
/// ```
/// use gimc_linalg::{FeatureMatrix, Gamma, faer::Mat};
/// let x = FeatureMatrix::dense(Mat::from_fn(2, 2, |i, j| (2 * i + j) as f64)).unwrap();
/// assert_eq!(Gamma::default(), Gamma::SCALE);
/// assert_eq!(Gamma::SCALE.resolve(&x), x.gamma_scale());
/// let g: Gamma = "0.5*scale".parse().unwrap();
/// assert_eq!(g.resolve(&x), 0.5 * x.gamma_scale());
/// assert_eq!(Gamma::from(0.002).resolve(&x), 0.002);
/// assert_eq!(g.to_string(), "0.5*scale");
/// assert!("-1".parse::<Gamma>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gamma {
    /// A fixed γ > 0.
    Value(f64),
    /// F · 1 / (d · Var X) for the factor F > 0.
    Scale(f64),
}

impl Gamma {
    /// The scale rule itself, γ = 1 / (d · Var X).
    pub const SCALE: Self = Self::Scale(1.0);

    /// γ for the features `x` the map will see.
    pub fn resolve(self, x: &FeatureMatrix) -> f64 {
        match self {
            Self::Value(g) => g,
            Self::Scale(f) => f * x.gamma_scale(),
        }
    }

    /// Checks that the value or factor is finite and positive.
    pub fn check(self) -> Result<Self> {
        let (v, what) = match self {
            Self::Value(g) => (g, "must be finite and > 0"),
            Self::Scale(f) => (f, "scale factor must be finite and > 0"),
        };
        if v > 0.0 && v.is_finite() {
            Ok(self)
        } else {
            Err(LinalgError::InvalidParameter {
                name: "gamma",
                reason: format!("{what}, got {self}"),
            })
        }
    }
}

impl Default for Gamma {
    fn default() -> Self {
        Self::SCALE
    }
}

impl From<f64> for Gamma {
    fn from(g: f64) -> Self {
        Self::Value(g)
    }
}

impl std::str::FromStr for Gamma {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let positive = |v: &str| -> std::result::Result<f64, String> {
            match v.trim().parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err(format!(
                    "{s:?} is not a positive number, `scale` or `F*scale` (e.g. 0.5*scale)"
                )),
            }
        };
        let s = s.trim();
        if s == "scale" {
            return Ok(Self::SCALE);
        }
        if let Some(f) = s.strip_suffix("*scale") {
            return positive(f).map(Self::Scale);
        }
        positive(s).map(Self::Value)
    }
}

impl std::fmt::Display for Gamma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Value(g) => write!(f, "{g}"),
            Self::Scale(k) if *k == 1.0 => write!(f, "scale"),
            Self::Scale(k) => write!(f, "{k}*scale"),
        }
    }
}
