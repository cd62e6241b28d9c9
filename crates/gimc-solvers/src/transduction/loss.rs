//! The smooth loss f(Z, b) of MC-1 / MC-b (logistic on Ω_Y, squared on Ω_X), its gradient, the
//! FPC step sizes, and the column-by-column layouts of the observed entries the gradient step
//! reads.

use gimc_linalg::faer::{Mat, MatRef};

use crate::SolverError;
use crate::error::{check_pos, dim_err};

use super::{TransductionProblem, TransductionVariant, ValidTransductionParams};

/// λ/|Ω_Y| and 1/|Ω_X| (0 for an empty set).
pub(super) fn loss_weights(problem: &TransductionProblem, lambda: f64) -> (f64, f64) {
    let ny = problem.labels.len();
    let nx = problem.features.len();
    let wy = if ny == 0 { 0.0 } else { lambda / ny as f64 };
    let wx = if nx == 0 { 0.0 } else { 1.0 / nx as f64 };
    (wy, wx)
}

/// τ_Z = min(3.8|Ω_Y|/λ, |Ω_X|) and τ_b = 3.8|Ω_Y|/(λ n), over the non-empty sets.
pub fn step_sizes(problem: &TransductionProblem, lambda: f64) -> (f64, f64) {
    let ny = problem.labels.len() as f64;
    let nx = problem.features.len() as f64;
    let n = problem.n_items() as f64;
    let ty = if ny > 0.0 {
        3.8 * ny / lambda
    } else {
        f64::INFINITY
    };
    let tx = if nx > 0.0 { nx } else { f64::INFINITY };
    let tau_b = if ny > 0.0 {
        3.8 * ny / (lambda * n)
    } else {
        0.0
    };
    (ty.min(tx), tau_b)
}

/// log(1 + exp(−m)) without overflow.
pub(super) fn softplus_neg(m: f64) -> f64 {
    if m > 0.0 {
        (-m).exp().ln_1p()
    } else {
        -m + m.exp().ln_1p()
    }
}

/// 1 / (1 + exp(m)), the derivative of −log(1 + exp(−m)) with respect to m, without overflow.
pub(super) fn sigmoid_neg(m: f64) -> f64 {
    if m > 0.0 {
        let e = (-m).exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + m.exp())
    }
}

pub(super) fn check_iterate(
    problem: &TransductionProblem,
    variant: TransductionVariant,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> Result<(), SolverError> {
    let m = problem.z_rows(variant);
    if z.nrows() != m || z.ncols() != problem.n_items() {
        return Err(dim_err(
            "Z",
            format!("{m} x {}", problem.n_items()),
            format!("{} x {}", z.nrows(), z.ncols()),
        ));
    }
    if bias.len() != problem.n_labels() {
        return Err(dim_err(
            "bias",
            format!("{} entries", problem.n_labels()),
            format!("{}", bias.len()),
        ));
    }
    crate::error::check_finite_mat("Z", z)?;
    if let Some((i, b)) = bias.iter().enumerate().find(|(_, b)| !b.is_finite()) {
        return Err(SolverError::InvalidInput {
            what: "bias",
            reason: format!("non-finite value {b} at {i}"),
        });
    }
    Ok(())
}

/// The smooth loss f(Z, b) (DESIGN §3.5) for an iterate of the variant of `params`, with its λ
/// (the ones row of MC-1 and the bias are used as given; MC-1 ignores `bias` when it is all
/// zeros).
pub fn transduction_loss(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> Result<f64, SolverError> {
    let (variant, lambda) = (params.variant, params.lambda);
    check_pos("lambda", lambda)?;
    check_iterate(problem, variant, z, bias)?;
    Ok(smooth_loss(problem, lambda, z, bias))
}

fn smooth_loss(
    problem: &TransductionProblem,
    lambda: f64,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> f64 {
    let t = problem.n_labels();
    let (wy, wx) = loss_weights(problem, lambda);
    let ly: f64 = problem
        .labels
        .iter()
        .map(|(i, j, y)| softplus_neg(y * (z[(i, j)] + bias[i])))
        .sum();
    let lx: f64 = problem
        .features
        .iter()
        .map(|(i, j, x)| {
            let r = z[(t + i, j)] - x;
            0.5 * r * r
        })
        .sum();
    wy * ly + wx * lx
}

/// The gradient of the smooth loss ([`transduction_loss`]): ∇_Z f (same shape as Z, non-zero
/// on Ω only) and ∇_b f.
pub fn transduction_gradient(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> Result<(Mat<f64>, Vec<f64>), SolverError> {
    let (variant, lambda) = (params.variant, params.lambda);
    check_pos("lambda", lambda)?;
    check_iterate(problem, variant, z, bias)?;
    let mut g = Mat::<f64>::zeros(z.nrows(), z.ncols());
    let mut gb = vec![0.0; bias.len()];
    for_each_gradient(
        problem,
        lambda,
        z,
        bias,
        |i, j, v| {
            g[(i, j)] = v;
        },
        &mut gb,
    );
    Ok((g, gb))
}

/// Calls `visit(row of Z, column, ∂f/∂z)` for every observed entry and accumulates ∂f/∂b.
fn for_each_gradient(
    problem: &TransductionProblem,
    lambda: f64,
    z: MatRef<'_, f64>,
    bias: &[f64],
    mut visit: impl FnMut(usize, usize, f64),
    gb: &mut [f64],
) {
    let t = problem.n_labels();
    let (wy, wx) = loss_weights(problem, lambda);
    for (i, j, y) in problem.labels.iter() {
        // d/dz log(1 + exp(−y z)) = −y / (1 + exp(y z))
        let g = -wy * y * sigmoid_neg(y * (z[(i, j)] + bias[i]));
        gb[i] += g;
        visit(i, j, g);
    }
    for (i, j, x) in problem.features.iter() {
        visit(t + i, j, wx * (z[(t + i, j)] - x));
    }
}

/// Ω_Y then Ω_X as (row of Z, column, value), each sorted by (column, row).
pub(super) fn column_major_entries(problem: &TransductionProblem) -> Vec<(usize, usize, f64)> {
    let mut labels: Vec<(usize, usize, f64)> = problem.labels.iter().collect();
    let t = problem.n_labels();
    let mut features: Vec<(usize, usize, f64)> = problem
        .features
        .iter()
        .map(|(i, j, x)| (t + i, j, x))
        .collect();
    labels.sort_by_key(|e| (e.1, e.0));
    features.sort_by_key(|e| (e.1, e.0));
    labels.extend(features);
    labels
}

/// Observed entries stored column by column (CSC-like): the label entries of column j are
/// `label_ptr[j]..label_ptr[j + 1]` and its feature entries `feature_ptr[j]..feature_ptr[j + 1]`
/// (positions into `rows` / `vals`, rows of Z, labels first then features), in the order of
/// [`column_major_entries`].
#[derive(Debug)]
pub(super) struct ColumnEntries {
    pub(super) label_ptr: Vec<usize>,
    pub(super) feature_ptr: Vec<usize>,
    pub(super) rows: Vec<usize>,
    pub(super) vals: Vec<f64>,
}

impl ColumnEntries {
    /// From [`column_major_entries`] (the first `split` of them labels) for n columns.
    pub(super) fn new(entries: &[(usize, usize, f64)], split: usize, n: usize) -> Self {
        let ptr = |part: &[(usize, usize, f64)], offset: usize| {
            let mut p = vec![0usize; n + 1];
            for e in part {
                p[e.1 + 1] += 1;
            }
            for j in 0..n {
                p[j + 1] += p[j];
            }
            p.iter_mut().for_each(|x| *x += offset);
            p
        };
        let (labels, features) = entries.split_at(split);
        Self {
            label_ptr: ptr(labels, 0),
            feature_ptr: ptr(features, split),
            rows: entries.iter().map(|e| e.0).collect(),
            vals: entries.iter().map(|e| e.2).collect(),
        }
    }
}

/// Smallest fraction of the feature block observed for [`DenseFeatures`].
const DENSE_FEATURES: f64 = 0.25;

/// The observed features as dense column-major d × n arrays: values (0 off Ω_X), a 0/1 mask
/// and the gradient ∂f/∂z of the feature rows (0 off Ω_X).
#[derive(Debug)]
pub(super) struct DenseFeatures {
    pub(super) t: usize,
    pub(super) d: usize,
    pub(super) x: Vec<f64>,
    pub(super) mask: Vec<f64>,
    pub(super) grad: Vec<f64>,
}

impl DenseFeatures {
    pub(super) fn new(problem: &TransductionProblem) -> Option<Self> {
        let (t, d, n) = (problem.n_labels(), problem.n_features(), problem.n_items());
        let size = d.checked_mul(n)?;
        if size == 0 || (problem.features.len() as f64) < DENSE_FEATURES * size as f64 {
            return None;
        }
        let mut x = vec![0.0; size];
        let mut mask = vec![0.0; size];
        for (i, j, v) in problem.features.iter() {
            x[j * d + i] = v;
            mask[j * d + i] = 1.0;
        }
        Some(Self {
            t,
            d,
            x,
            mask,
            grad: vec![0.0; size],
        })
    }
}

/// The columns of a matrix with unit row stride as slices.
pub(super) fn col_slices(z: MatRef<'_, f64>) -> Vec<&[f64]> {
    (0..z.ncols())
        .map(|j| {
            z.col(j)
                .try_as_col_major()
                .map_or(&[][..], |c| c.as_slice())
        })
        .collect()
}
